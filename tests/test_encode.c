/*
 * Encoding (text -> ids) against reference tokenizers, byte for byte:
 *   - tests/data/encode/strings.json: hard cases, three columns (special
 *     tokens as text, parsed, and with the post-processor's BOS);
 *   - tests/data/vocab/golden/encodings.json;
 *   - the four shipped corpora, line by line, against digests of the
 *     reference ids (and the full ids of each corpus' first lines, so a
 *     mismatch is shown as ids);
 *   - llama.cpp's own tokenizer test pairs for the GGUF vocabularies.
 * The references were made by tools/refs/make_encode_refs.mjs (HF tokenizers
 * and tiktoken from npm); see tests/data/README.md.
 * And decode(encode(line)) == line on every corpus line for byte-level
 * vocabularies. The API's other properties are test_encode_api.c.
 * Groups: default (shipped vocabularies), "external" (Llama 3, Qwen 3,
 * Gemma 3 from NEXTOK_DATA_DIR).
 */
#include "harness.h"

#include "golden.h"
#include "nextok.h"

#include <stdlib.h>

struct ev {
    const char *name; /* the column in the reference files */
    const char *rel;  /* path under tests/data or the external folder */
    bool external;
    bool byte_level;     /* decode(encode(t)) == t */
    bool regex, nfc;     /* needs PCRE2, utf8proc */
    const char *strings; /* its strings file; NULL: encode/strings.json */
};

static const struct ev vocabs[] = {
    {"gpt2", "vocab/hf/gpt2/tokenizer.json", false, true, true, false, NULL},
    {"mistral-7b-v0.1", "vocab/hf/mistral-7b-v0.1/tokenizer.json", false, false, false, false,
     NULL},
    {"o200k", "vocab/tiktoken/o200k_base.tiktoken", false, true, true, false, NULL},
    {"llama3", "vocab/hf/llama3/tokenizer.json", true, true, true, false, NULL},
    /* NFC: decoding gives the normalised text, not the line */
    {"qwen3", "vocab/hf/qwen3/tokenizer.json", true, false, true, true, NULL},
    {"gemma3", "vocab/hf/gemma3/tokenizer.json", true, false, false, false, NULL},
    /* Made for these tests from shipped vocabularies (tests/data/README.md). */
    {"unigram", "vocab/synthetic/unigram.json", false, false, false, false,
     "encode/strings-synthetic.json"},
    {"wordpiece", "vocab/synthetic/wordpiece.json", false, false, true, true,
     "encode/strings-synthetic.json"},
    {"wordpiece-bert", "vocab/synthetic/wordpiece-bert.json", false, false, true, true,
     "encode/strings-synthetic.json"},
};

#if defined(NEXTOK_HAVE_PCRE2)
#define HAVE_PCRE2 true
#else
#define HAVE_PCRE2 false
#endif
#if defined(NEXTOK_HAVE_UTF8PROC)
#define HAVE_UTF8PROC true
#else
#define HAVE_UTF8PROC false
#endif

/* In a build without what x needs, encoder_init must refuse it, naming the
 * build option; true when that is checked and nothing more can be. */
static bool refused_by_build(const struct ev *x, const struct nextok_vocab *v)
{
    bool pcre2 = x->regex && !HAVE_PCRE2, utf8proc = x->nfc && !HAVE_UTF8PROC;
    if (!pcre2 && !utf8proc) return false;
    struct nextok_encoder *e = NULL;
    struct nextok_error err;
    nextok_status st = nextok_encoder_init(&e, v, NULL, &err);
    CHECK_MSG(st == NEXTOK_ERR_UNSUPPORTED, "%s: init gave %s", x->name, nextok_status_name(st));
    CHECK_MSG(strstr(err.msg, utf8proc ? "UTF8PROC" : "PCRE2") != NULL, "%s: %s", x->name, err.msg);
    nextok_encoder_free(e);
    printf("  %s: refused, as it must be in this build: %s\n", x->name, err.msg);
    return true;
}
#define N_VOCABS (sizeof vocabs / sizeof vocabs[0])

static const char *const corpora[] = {"austen-all", "spa-rv1909-nt", "proverbaro", "emoji-test"};

static bool want_external;

static const char *vocab_path(const struct ev *e, char *buf, size_t cap)
{
    return e->external ? external_path(buf, cap, e->rel) : fixture_path(buf, cap, e->rel);
}

static struct nextok_vocab *load(const struct ev *e)
{
    char path[1024];
    struct nextok_vocab *v = NULL;
    struct nextok_error err;
    nextok_status st = nextok_vocab_load_file(&v, vocab_path(e, path, sizeof path), &err);
    CHECK_MSG(st == NEXTOK_OK, "%s: %s", path, err.msg);
    return st == NEXTOK_OK ? v : NULL;
}

static struct nextok_encoder *encoder(const struct nextok_vocab *v, bool special, int bos)
{
    struct nextok_encode_params p = nextok_encode_default_params();
    p.parse_special = special;
    p.add_bos = bos;
    p.add_eos = bos < 0 ? -1 : 0;
    struct nextok_encoder *e = NULL;
    struct nextok_error err;
    nextok_status st = nextok_encoder_init(&e, v, &p, &err);
    CHECK_MSG(st == NEXTOK_OK, "encoder_init: %s", err.msg);
    return st == NEXTOK_OK ? e : NULL;
}

/* Encode into a growing buffer; the ids stay valid until the next call. */
static const int32_t *enc(struct nextok_encoder *e, const char *t, size_t n, size_t *n_ids)
{
    static int32_t *buf;
    static size_t cap;
    for (;;) {
        nextok_status st = nextok_encoder_encode(e, t, n, buf, cap, n_ids);
        if (st == NEXTOK_OK) return buf;
        if (st != NEXTOK_ERR_BUFFER_TOO_SMALL) {
            CHECK_MSG(0, "encode: %s (%s)", nextok_status_name(st), nextok_encoder_errmsg(e));
            *n_ids = 0;
            return buf;
        }
        cap = *n_ids + 64;
        buf = realloc(buf, cap * sizeof *buf);
        if (!buf) abort();
    }
}

static bool same_ids(const int32_t *a, size_t na, const struct golden *g, uint32_t arr)
{
    if (na != golden_len(g, arr)) return false;
    uint32_t x = nextok__json_first(&g->doc, arr);
    for (size_t k = 0; k < na; k++, x = nextok__json_next(&g->doc, x))
        if (golden_int(g, x) != a[k]) return false;
    return true;
}

static void show_ids(const char *what, const int32_t *ids, size_t n)
{
    printf("    %s:", what);
    for (size_t k = 0; k < n && k < 40; k++) printf(" %ld", (long)ids[k]);
    printf("%s\n", n > 40 ? " ..." : "");
}

/* ---- strings.json ------------------------------------------------------------------ */

static void strings_in(const struct ev *x, const char *file)
{
    char path[1024];
    struct golden g;
    if (!golden_load(&g, fixture_path(path, sizeof path, file))) {
        CHECK_MSG(0, "%s: cannot read", path);
        return;
    }
    struct nextok_vocab *v = load(x);
    static const char *const cols[] = {"ids", "ids_special", "ids_add_special"};
    struct nextok_encoder *e[3] = {NULL, NULL, NULL};
    if (v && !refused_by_build(x, v)) {
        e[0] = encoder(v, false, 0);
        e[1] = encoder(v, true, 0);
        e[2] = encoder(v, true, -1);
    }
    uint32_t cases = golden_get(&g, 0, "cases");
    size_t n_cases = golden_len(&g, cases), bad = 0;
    CHECK(n_cases >= 30);
    uint32_t c = nextok__json_first(&g.doc, cases);
    for (size_t i = 0; v && e[0] && e[1] && e[2] && i < n_cases;
         i++, c = nextok__json_next(&g.doc, c)) {
        size_t tn = 0;
        const char *t = nextok__json_str(&g.doc, golden_get(&g, c, "text"), &tn);
        for (int k = 0; k < 3; k++) {
            uint32_t want = golden_get(&g, golden_get(&g, c, cols[k]), x->name);
            CHECK_MSG(want != NEXTOK__JSON_NO_NODE, "%s: case %zu has no %s column", x->name, i,
                      cols[k]);
            size_t n = 0;
            const int32_t *ids = enc(e[k], t, tn, &n);
            if (want == NEXTOK__JSON_NO_NODE || same_ids(ids, n, &g, want)) continue;
            if (bad++ < 5) {
                char q[64];
                nextok__quote(q, sizeof q, t, tn < 40 ? tn : 40);
                printf("  %s %s case %zu \"%s\"\n", x->name, cols[k], i, q);
                show_ids("got ", ids, n);
            }
        }
    }
    CHECK_MSG(bad == 0, "%s: %zu of %zu strings.json encodings differ", x->name, bad, 3 * n_cases);
    for (int k = 0; k < 3; k++) nextok_encoder_free(e[k]);
    nextok_vocab_free(v);
    golden_free(&g);
}

static void strings_for(const struct ev *x)
{
    strings_in(x, x->strings ? x->strings : "encode/strings.json");
}

/* The probes of the synthetic vocabularies' edge cases (encode/<name>-probes.json). */
static void probes_for(const struct ev *x)
{
    char rel[128];
    if (!x->strings) return;
    snprintf(rel, sizeof rel, "encode/%s-probes.json", x->name);
    strings_in(x, rel);
}

/* ---- golden encodings.json (special tokens parsed, no BOS) ----------------------------- */

static void golden_for(const struct ev *x)
{
    char path[1024];
    struct golden g;
    if (!golden_load(&g, fixture_path(path, sizeof path, "vocab/golden/encodings.json"))) {
        CHECK_MSG(0, "%s: cannot read", path);
        return;
    }
    uint32_t cases = golden_get(&g, golden_get(&g, 0, "vocabs"), x->name);
    struct nextok_vocab *v = cases != NEXTOK__JSON_NO_NODE ? load(x) : NULL;
    struct nextok_encoder *e = v && !refused_by_build(x, v) ? encoder(v, true, 0) : NULL;
    size_t n_cases = golden_len(&g, cases), bad = 0;
    uint32_t c = nextok__json_first(&g.doc, cases);
    for (size_t i = 0; e && i < n_cases; i++, c = nextok__json_next(&g.doc, c)) {
        size_t tn = 0, n = 0;
        const char *t = nextok__json_str(&g.doc, golden_get(&g, c, "text"), &tn);
        const int32_t *ids = enc(e, t, tn, &n);
        if (!same_ids(ids, n, &g, golden_get(&g, c, "ids")) && bad++ < 3) show_ids("got", ids, n);
    }
    if (e) CHECK(n_cases >= 18);
    CHECK_MSG(bad == 0, "%s: %zu of %zu golden encodings differ", x->name, bad, n_cases);
    nextok_encoder_free(e);
    nextok_vocab_free(v);
    golden_free(&g);
}

/* ---- corpora ----------------------------------------------------------------------------- */

static uint64_t fnv_ids(uint64_t h, const int32_t *ids, size_t n)
{
    for (size_t k = 0; k <= n; k++) {
        uint32_t u = k < n ? (uint32_t)ids[k] : 0xffffffffu; /* -1 ends the line */
        for (int b = 0; b < 4; b++) {
            h ^= (u >> (8 * b)) & 0xff;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

static char *read_all(const char *path, size_t *size)
{
    char *data = NULL;
    struct nextok_error err;
    if (nextok__read_file(&nextok__mem_libc, path, &data, size, &err) != NEXTOK_OK) {
        CHECK_MSG(0, "%s: %s", path, err.msg);
        return NULL;
    }
    return data;
}

/* Compare line `line` against the reference's full ids when the .ids file has them. */
static void compare_prefix(FILE *ref, size_t line, const int32_t *ids, size_t n, const char *what,
                           size_t *bad)
{
    static char buf[1 << 16];
    if (!ref || !fgets(buf, sizeof buf, ref)) return;
    size_t k = 0;
    bool ok = true;
    for (char *p = buf; *p && *p != '\n';) {
        long id = strtol(p, &p, 10);
        if (k >= n || ids[k] != id) ok = false;
        k++;
        while (*p == ' ') p++;
    }
    if (k != n) ok = false;
    if (!ok && (*bad)++ < 3) {
        printf("  %s line %zu: want %s", what, line, buf);
        show_ids("got ", ids, n);
    }
}

static FILE *open_ref(const char *name, const char *corpus, const char *ext)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, "encode/%s.%s.%s", name, corpus, ext);
    FILE *f = fopen(fixture_path(path, sizeof path, rel), "r");
    CHECK_MSG(f, "%s: cannot open", path);
    int c;
    while (f && (c = fgetc(f)) == '#') /* header lines */
        while ((c = fgetc(f)) != EOF && c != '\n') {}
    if (f && c != EOF) ungetc(c, f);
    return f;
}

static void corpus_for(const struct ev *x, struct nextok_encoder *e, const struct nextok_vocab *v,
                       const char *corpus)
{
    char rel[256], path[1024], what[128];
    snprintf(rel, sizeof rel, "corpus/%s.txt", corpus);
    snprintf(what, sizeof what, "%s x %s", x->name, corpus);
    size_t size = 0;
    char *text = read_all(fixture_path(path, sizeof path, rel), &size);
    FILE *dig = open_ref(x->name, corpus, "digest"), *ids_ref = open_ref(x->name, corpus, "ids");
    size_t line = 0, block_ids = 0, bad_blocks = 0, bad_lines = 0, bad_trip = 0, blocks = 0;
    uint64_t h = 0xcbf29ce484222325ull;
    char *dec = NULL;
    for (size_t at = 0; text && dig && at < size; line++) {
        const char *nl = memchr(text + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (text + at)) + 1 : size - at;
        size_t n = 0;
        const int32_t *ids = enc(e, text + at, len, &n);
        compare_prefix(ids_ref, line, ids, n, what, &bad_lines);
        if (x->byte_level) { /* decode(encode(line)) == line */
            size_t dn = 0;
            dec = realloc(dec, len + 16);
            nextok_status st = nextok_vocab_decode(v, ids, n, NULL, dec, len + 16, &dn);
            if ((st != NEXTOK_OK || dn != len || memcmp(dec, text + at, len) != 0) &&
                bad_trip++ < 3)
                printf("  %s line %zu: decode(encode(line)) differs\n", what, line);
        }
        h = fnv_ids(h, ids, n);
        block_ids += n;
        at += len;
        if ((line + 1) % 512 != 0 && at < size) continue;
        unsigned long long first, nl_, nid;
        char hex[32];
        blocks++;
        if (fscanf(dig, "%llu %llu %llu %31s", &first, &nl_, &nid, hex) != 4) {
            CHECK_MSG(0, "%s: digest file ends before line %zu", what, line);
            break;
        }
        char mine[32];
        snprintf(mine, sizeof mine, "%016llx", (unsigned long long)h);
        if ((strcmp(mine, hex) != 0 || nid != block_ids) && bad_blocks++ < 3)
            printf("  %s: block at line %llu: %zu ids, hash %s; reference %llu ids, %s\n", what,
                   first, block_ids, mine, nid, hex);
        h = 0xcbf29ce484222325ull;
        block_ids = 0;
    }
    CHECK_MSG(bad_blocks == 0 && bad_lines == 0,
              "%s: %zu of %zu blocks and %zu prefix lines differ", what, bad_blocks, blocks,
              bad_lines);
    CHECK_MSG(bad_trip == 0, "%s: %zu lines do not decode back", what, bad_trip);
    CHECK(blocks > 0);
    free(dec);
    free(text);
    if (dig) fclose(dig);
    if (ids_ref) fclose(ids_ref);
}

static void corpora_for(const struct ev *x)
{
    struct nextok_vocab *v = load(x);
    struct nextok_encoder *e = v && !refused_by_build(x, v) ? encoder(v, false, 0) : NULL;
    for (size_t c = 0; e && c < sizeof corpora / sizeof corpora[0]; c++)
        corpus_for(x, e, v, corpora[c]);
    nextok_encoder_free(e);
    nextok_vocab_free(v);
}

/* ---- the cases ------------------------------------------------------------------------------ */

static void each_vocab(void (*fn)(const struct ev *))
{
    for (size_t i = 0; i < N_VOCABS; i++)
        if (vocabs[i].external == want_external) fn(&vocabs[i]);
}

TEST(strings_json) { each_vocab(strings_for); }
TEST(golden_encodings) { each_vocab(golden_for); }
TEST(probes) { each_vocab(probes_for); }
TEST(corpus_lines) { each_vocab(corpora_for); }

int main(int argc, char **argv)
{
    harness_init(argc, argv);
    if (GROUP("external")) {
        want_external = true;
        if (!need_external("vocab/hf/llama3/tokenizer.json", "vocab/hf/qwen3/tokenizer.json",
                           "vocab/hf/gemma3/tokenizer.json", NULL))
            return harness_done();
    }
    RUN(strings_json);
    RUN(golden_encodings);
    if (!want_external) RUN(probes); /* the synthetic vocabularies are shipped */
    RUN(corpus_lines);
    return harness_done();
}
