/*
 * Incremental detokenizer: streaming == whole decode on every shipped
 * vocabulary (random ids, the golden samples alone and concatenated),
 * adversarial byte sequences, the buffer/stream contracts, and the UTF-8
 * replacement rule against an independent reference. The default group uses
 * the fixtures in tests/data/; the group "external" (`test_detok external`)
 * streams the vocabularies kept outside the repo (Llama 3, Qwen3, Gemma 3
 * under NEXTOK_DATA_DIR).
 */
#include "harness.h"
#include "base64.h"
#include "nextok.h"

#include <stdint.h>

#include "golden.h"

static const char *const files[] = {
    "vocab/hf/gpt2/tokenizer.json",     "vocab/hf/mistral-7b-v0.1/tokenizer.json",
    "vocab/hf/llama3/tokenizer.json",   "vocab/hf/qwen3/tokenizer.json",
    "vocab/hf/gemma3/tokenizer.json",   "vocab/gguf/ggml-vocab-gpt-2.gguf",
    "vocab/gguf/ggml-vocab-phi-3.gguf", "vocab/tiktoken/o200k_base.tiktoken",
};
#define N_FILES (sizeof files / sizeof files[0])
/* Kept outside the repo (licence or size): the group "external" only. */
static const int external[N_FILES] = {0, 0, 1, 1, 1, 0, 0, 0};
static struct nextok_vocab *vocabs[N_FILES];
static int tried[N_FILES], failed[N_FILES];

/* Whether files[i] belongs to this run's group. */
static int in_run(size_t i) { return external[i] == GROUP("external"); }

/* Every external vocabulary is there (else the group is skipped). */
static int need_external_vocabs(void)
{
    for (size_t i = 0; i < N_FILES; i++)
        if (external[i] && !need_external(files[i], NULL)) return 0;
    return 1;
}

/* Load (once) files[i]; NULL when it belongs to the other group. A file that
 * is missing or does not load is a failure. */
static struct nextok_vocab *get_vocab(size_t i)
{
    if (!in_run(i)) return NULL;
    if (tried[i]) {
        CHECK_MSG(!failed[i], "%s did not load (see above)", files[i]);
        return vocabs[i];
    }
    tried[i] = 1;
    char path[1024];
    if (external[i]) external_path(path, sizeof path, files[i]);
    else fixture_path(path, sizeof path, files[i]);
    struct nextok_error e = {NEXTOK_OK, ""};
    failed[i] = nextok_vocab_load_file(&vocabs[i], path, &e) != NEXTOK_OK;
    CHECK_MSG(!failed[i], "%s: %s", path, e.msg);
    return vocabs[i];
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* ---- helpers: decode whole, decode streaming, compare ------------------------------ */

struct text {
    char  *p;
    size_t n, cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
    if (n == 0) return;
    if (t->n + n > t->cap) {
        t->cap = (t->n + n) * 2 + 64;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
}

static void whole(struct nextok_vocab *v, const int32_t *ids, size_t n,
                  const struct nextok_decode_params *p, struct text *out)
{
    size_t need = 0;
    out->n = 0;
    nextok_status rc = nextok_vocab_decode(v, ids, n, p, NULL, 0, &need);
    CHECK(rc == NEXTOK_OK || rc == NEXTOK_ERR_BUFFER_TOO_SMALL);
    if (need + 1 > out->cap) {
        out->cap = need + 1;
        out->p = realloc(out->p, out->cap);
    }
    CHECK_OK(nextok_vocab_decode(v, ids, n, p, out->p, need, &out->n));
}

static int valid_utf8(const unsigned char *s, size_t n);

/* Feed ids one by one; checks the per-id bound, that every output is valid
 * UTF-8 and that held() never exceeds 3 (no Strip tail in shipped vocabs). */
static void streamed(struct nextok_detok *d, const int32_t *ids, size_t n, struct text *out)
{
    size_t cap = nextok_detok_bound(d, 1), got;
    char *buf = malloc(cap);
    out->n = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(nextok_detok_feed(d, &ids[i], 1, buf, cap, &got));
        CHECK(valid_utf8((const unsigned char *)buf, got));
        CHECK(nextok_detok_held(d) <= 3);
        text_add(out, buf, got);
    }
    CHECK_OK(nextok_detok_flush(d, buf, cap, &got));
    CHECK_EQ_INT(nextok_detok_held(d), 0);
    text_add(out, buf, got);
    free(buf);
}

/* The same through nextok_detok_stream with a deliberately small output
 * buffer and random input chunks: it has to loop. */
static void streamed_small(struct nextok_detok *d, const int32_t *ids, size_t n, uint64_t *seed,
                           struct text *out)
{
    size_t room = nextok_detok_bound(d, 1);
    char *buf = malloc(room);
    out->n = 0;
    struct nextok_ids_in in = {ids, 0, 0};
    while (in.size < n) {
        in.size += 1 + rng_next(seed) % 5;
        if (in.size > n) in.size = n;
        enum nextok_detok_directive dir = in.size == n ? NEXTOK_DETOK_END : NEXTOK_DETOK_CONTINUE;
        size_t held = 1;
        int guard = 0;
        while ((in.pos < in.size || (dir == NEXTOK_DETOK_END && held)) && guard++ < 100000) {
            struct nextok_text_out o = {buf, room, 0};
            nextok_status rc = nextok_detok_stream(d, &in, &o, dir, &held);
            CHECK_OK(rc);
            if (rc != NEXTOK_OK) break;
            text_add(out, buf, o.pos);
        }
    }
    free(buf);
}

static int same(const struct text *a, const struct text *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

/* Check streaming == whole for one sequence under one setting. */
static void check_seq(struct nextok_vocab *v, const int32_t *ids, size_t n,
                      const struct nextok_decode_params *p, uint64_t *seed, const char *what)
{
    struct text w = {0}, s = {0}, s2 = {0};
    struct nextok_detok *d = NULL;
    CHECK_OK(nextok_detok_init(&d, v, p, NULL));
    if (!d) return;
    whole(v, ids, n, p, &w);
    streamed(d, ids, n, &s);
    CHECK_MSG(same(&w, &s), "%s: stream (%zu bytes) != decode (%zu bytes)", what, s.n, w.n);
    CHECK(valid_utf8((const unsigned char *)w.p, w.n));
    nextok_detok_reset(d);
    streamed_small(d, ids, n, seed, &s2);
    CHECK_MSG(same(&w, &s2), "%s: stream API (%zu bytes) != decode (%zu bytes)", what, s2.n, w.n);
    nextok_detok_free(d);
    free(w.p);
    free(s.p);
    free(s2.p);
}

static struct nextok_decode_params params_of(int k)
{
    struct nextok_decode_params p = nextok_decode_default_params();
    p.skip_special_tokens = k & 1;
    p.spaces_between_special_tokens = (k >> 1) & 1;
    return p;
}

/* ---- independent reference for the U+FFFD rule --------------------------------------- */

/* Length of the maximal prefix of s that is a valid start of a UTF-8
 * sequence, and whether it is complete. Written from Unicode table 3-7. */
static size_t ref_prefix(const unsigned char *s, size_t n, int *complete)
{
    static const struct { unsigned char lo, hi, lo2, hi2; int len; } rows[] = {
        {0x00, 0x7F, 0, 0, 1},       {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3},
        {0xE1, 0xEC, 0x80, 0xBF, 3}, {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3},
        {0xF0, 0xF0, 0x90, 0xBF, 4}, {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4},
    };
    *complete = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        if (s[0] < rows[r].lo || s[0] > rows[r].hi) continue;
        size_t k = 1;
        for (; k < (size_t)rows[r].len && k < n; k++) {
            unsigned char lo = k == 1 ? rows[r].lo2 : 0x80, hi = k == 1 ? rows[r].hi2 : 0xBF;
            if (s[k] < lo || s[k] > hi) break;
        }
        *complete = k == (size_t)rows[r].len;
        return k;
    }
    return 0;
}

static size_t ref_lossy(const unsigned char *s, size_t n, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        int complete;
        size_t k = ref_prefix(s + i, n - i, &complete);
        if (complete) {
            memcpy(out + o, s + i, k);
            o += k;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
        }
        i += k ? k : 1;
    }
    return o;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        int complete;
        size_t k = ref_prefix(s + i, n - i, &complete);
        if (!complete) return 0;
        i += k;
    }
    return 1;
}

/* ---- small in-memory vocabularies (no shared data needed) ----------------------------- */

/* Ranks 0..255: the single bytes; 256..: a few multi-byte tokens; 300, 301: specials. */
static struct nextok_vocab *tiny_tiktoken(void)
{
    static const char *const extra[] = {"\xef\xbf\xbd", "\xf0\x9f", "\x98\x80", "\xc3\xa9", " hello"};
    static const struct nextok_special_token sp[2] = {{"<|end|>", 300}, {"<|sep|>", 301}};
    char *text = malloc(8192), line[64];
    size_t n = 0;
    for (int i = 0; i < 261; i++) {
        unsigned char one = (unsigned char)i;
        const unsigned char *p = i < 256 ? &one : (const unsigned char *)extra[i - 256];
        size_t k = h_base64(p, i < 256 ? 1 : strlen(extra[i - 256]), line);
        n += (size_t)snprintf(text + n, 8192 - n, "%.*s %d\n", (int)k, line, i);
    }
    struct nextok_vocab *v = NULL;
    struct nextok_error e = {NEXTOK_OK, ""};
    CHECK_MSG(nextok_vocab_load_tiktoken_mem(&v, text, n, sp, 2, &e) == NEXTOK_OK, "%s", e.msg);
    free(text);
    return v;
}

struct gw {
    unsigned char p[16384];
    size_t n;
};

static void gw_int(struct gw *g, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) g->p[g->n++] = (unsigned char)(v >> (8 * i));
}

static void gw_str(struct gw *g, const char *s)
{
    gw_int(g, strlen(s), 8);
    memcpy(g->p + g->n, s, strlen(s));
    g->n += strlen(s);
}

/* SentencePiece GGUF: 0 <unk>, 1 <s>, 2 </s>, 3 + b = <0xbb>, 259 "▁hi", 260 "x",
 * 261 "▁", 262 <tool> (user-defined). */
static struct nextok_vocab *tiny_spm(void)
{
    static const char *const pieces[] = {"\xe2\x96\x81hi", "x", "\xe2\x96\x81", "<tool>"};
    const int n_tok = 3 + 256 + 4;
    struct gw *g = calloc(1, sizeof *g);
    memcpy(g->p, "GGUF", 4);
    g->n = 4;
    gw_int(g, 3, 4);
    gw_int(g, 0, 8);
    gw_int(g, 3, 8);
    gw_str(g, "tokenizer.ggml.model");
    gw_int(g, 8, 4);
    gw_str(g, "llama");
    gw_str(g, "tokenizer.ggml.tokens");
    gw_int(g, 9, 4);
    gw_int(g, 8, 4);
    gw_int(g, (uint64_t)n_tok, 8);
    gw_str(g, "<unk>");
    gw_str(g, "<s>");
    gw_str(g, "</s>");
    for (int b = 0; b < 256; b++) {
        char t[8];
        snprintf(t, sizeof t, "<0x%02X>", b);
        gw_str(g, t);
    }
    for (int i = 0; i < 4; i++) gw_str(g, pieces[i]);
    gw_str(g, "tokenizer.ggml.token_type");
    gw_int(g, 9, 4);
    gw_int(g, 5, 4);
    gw_int(g, (uint64_t)n_tok, 8);
    for (int i = 0; i < n_tok; i++)
        gw_int(g, (uint64_t)(i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : i == n_tok - 1 ? 4 : 1), 4);
    struct nextok_vocab *v = NULL;
    struct nextok_error e = {NEXTOK_OK, ""};
    CHECK_MSG(nextok_vocab_load_gguf_mem(&v, g->p, g->n, &e) == NEXTOK_OK, "%s", e.msg);
    free(g);
    return v;
}

/* ---- tests --------------------------------------------------------------------------- */

TEST(random_sequences_all_vocabs)
{
    int n_vocabs = 0;
    for (size_t f = 0; f < N_FILES; f++) {
        struct nextok_vocab *v = get_vocab(f);
        if (!v) continue;
        n_vocabs++;
        int32_t nt = nextok_vocab_n_tokens(v);
        uint64_t seed = 0x9E3779B97F4A7C15ull + f;
        int32_t ids[96];
        for (int it = 0; it < 48; it++) {
            size_t n = 1 + rng_next(&seed) % 96;
            for (size_t i = 0; i < n; i++) {
                uint64_t r = rng_next(&seed);
                /* Mix uniform ids with the low ids (bytes, specials) where the
                 * interesting cases live, and the top ids (added tokens). */
                int32_t id = (int32_t)(r % (uint64_t)nt);
                if (r % 3 == 0) id = (int32_t)((r >> 20) % 300);
                if (r % 7 == 0) id = nt - 1 - (int32_t)((r >> 20) % 300);
                ids[i] = id;
            }
            char what[160];
            snprintf(what, sizeof what, "%s seq %d", files[f], it);
            struct nextok_decode_params p = params_of(it % 4);
            check_seq(v, ids, n, &p, &seed, what);
        }
    }
    CHECK(n_vocabs > 0);
}

/* The golden file's name for each of files[]. */
static const char *const golden_names[] = {"gpt2", "mistral-7b-v0.1", "llama3", "qwen3", "gemma3",
                                           "gpt2", "llama2", ""};

static struct golden golden_doc;

/* The golden file (a fixture), read once; NULL when it cannot be read. */
static const struct golden *golden(void)
{
    static int done, ok;
    if (done) return ok ? &golden_doc : NULL;
    done = 1;
    char path[1024];
    fixture_path(path, sizeof path, "vocab/golden/encodings.json");
    ok = golden_load(&golden_doc, path);
    CHECK_MSG(ok, "%s: not readable", path);
    return ok ? &golden_doc : NULL;
}

TEST(golden_streaming)
{
    const struct golden *g = golden();
    if (!g) return; /* golden() reported why */
    uint32_t all = golden_get(g, 0, "vocabs");
    for (size_t f = 0; f < N_FILES; f++) {
        struct nextok_vocab *v = get_vocab(f);
        uint32_t list = golden_get(g, all, golden_names[f]);
        if (!v || list == NEXTOK__JSON_NO_NODE) continue;
        int32_t cat[2048];
        size_t n_cat = 0;
        uint64_t seed = 7 + f;
        for (size_t k = 0; k < golden_len(g, list); k++) {
            uint32_t ids = golden_get(g, golden_at(g, list, k), "ids");
            int32_t one[128];
            size_t n = golden_len(g, ids);
            for (size_t i = 0; i < n; i++) {
                one[i] = golden_int(g, golden_at(g, ids, i));
                cat[n_cat++] = one[i];
            }
            for (int pk = 0; pk < 4; pk++) {
                struct nextok_decode_params p = params_of(pk);
                check_seq(v, one, n, &p, &seed, golden_names[f]);
            }
        }
        for (int pk = 0; pk < 4; pk++) {
            struct nextok_decode_params p = params_of(pk);
            check_seq(v, cat, n_cat, &p, &seed, "golden concatenated");
        }
    }
}

/* Feed one id, expect exactly `want` out and `held` bytes held. */
static void step(struct nextok_detok *d, int32_t id, const char *want, size_t want_n, size_t held)
{
    char buf[256];
    size_t got = 0;
    CHECK_OK(nextok_detok_feed(d, &id, 1, buf, sizeof buf, &got));
    CHECK_MSG(got == want_n && memcmp(buf, want, got) == 0, "id %d: got %zu bytes \"%.*s\"", id,
              got, (int)got, buf);
    CHECK_EQ_INT(nextok_detok_held(d), held);
}

#define FFFD "\xef\xbf\xbd"

TEST(adversarial_spm)
{
    struct nextok_vocab *v = get_vocab(1); /* mistral: <0xNN> = 3 + NN */
    if (!v) return; /* get_vocab reported why */
    struct nextok_detok *d;
    CHECK_OK(nextok_detok_init(&d, v, NULL, NULL));
    if (!d) return;
    /* 😀 = F0 9F 98 80 as four byte tokens: nothing until the last. */
    step(d, 3 + 0xF0, "", 0, 1);
    step(d, 3 + 0x9F, "", 0, 2);
    step(d, 3 + 0x98, "", 0, 3);
    step(d, 3 + 0x80, "\xf0\x9f\x98\x80", 4, 0);
    /* A special token between partial bytes: the held bytes become one U+FFFD. */
    step(d, 3 + 0xF0, "", 0, 1);
    step(d, 3 + 0x9F, "", 0, 2);
    step(d, 2, FFFD "</s>", 7, 0);
    step(d, 3 + 0x98, FFFD, 3, 0);
    /* Invalid bytes: never held. */
    step(d, 3 + 0xFF, FFFD, 3, 0);
    step(d, 3 + 0xC0, FFFD, 3, 0);
    /* E0 80: 80 cannot follow E0, so E0 alone is replaced and 80 too. */
    step(d, 3 + 0xE0, "", 0, 1);
    step(d, 3 + 0x80, FFFD FFFD, 6, 0);
    /* A held byte then ASCII text. */
    step(d, 3 + 0xE2, "", 0, 1);
    step(d, 6312, FFFD " hell", 8, 0); /* "▁hell" */
    nextok_detok_free(d);

    /* With skip_special_tokens the special disappears and the emoji joins. */
    struct nextok_decode_params p = nextok_decode_default_params();
    p.skip_special_tokens = true;
    CHECK_OK(nextok_detok_init(&d, v, &p, NULL));
    if (!d) return;
    step(d, 3 + 0xF0, "", 0, 1);
    step(d, 3 + 0x9F, "", 0, 2);
    step(d, 2, "", 0, 2);
    step(d, 3 + 0x98, "", 0, 3);
    step(d, 3 + 0x80, "\xf0\x9f\x98\x80", 4, 0);
    /* First-token rule after reset: the leading space of "▁hell" goes. */
    nextok_detok_reset(d);
    step(d, 6312, "hell", 4, 0);
    step(d, 6312, " hell", 5, 0);
    nextok_detok_free(d);
}

TEST(adversarial_byte_level)
{
    struct nextok_vocab *v = get_vocab(5); /* gpt2 gguf */
    if (!v) return; /* get_vocab reported why */
    int32_t fffd = nextok_vocab_find(v, "\xc3\xaf\xc2\xbf\xc2\xbd", 6); /* "ï¿½" = EF BF BD */
    int32_t e2 = nextok_vocab_find(v, "\xc3\xa2", 2);                  /* "â" = byte E2 */
    int32_t x82 = nextok_vocab_find(v, "\xc4\xa4", 2);                 /* byte 82 */
    int32_t xac = nextok_vocab_find(v, "\xc2\xac", 2);                 /* byte AC */
    CHECK(fffd >= 0 && e2 >= 0 && x82 >= 0 && xac >= 0);
    struct nextok_detok *d;
    CHECK_OK(nextok_detok_init(&d, v, NULL, NULL));
    if (!d || fffd < 0 || e2 < 0 || x82 < 0 || xac < 0) {
        nextok_detok_free(d);
        return;
    }
    /* A real U+FFFD from the model is passed through at once. */
    step(d, fffd, FFFD, 3, 0);
    step(d, e2, "", 0, 1);
    step(d, x82, "", 0, 2);
    step(d, 50256, FFFD "<|endoftext|>", 16, 0);
    step(d, e2, "", 0, 1);
    step(d, x82, "", 0, 2);
    step(d, xac, "\xe2\x82\xac", 3, 0);
    step(d, e2, "", 0, 1);
    char buf[16];
    size_t got;
    CHECK_OK(nextok_detok_flush(d, buf, sizeof buf, &got));
    CHECK(got == 3 && memcmp(buf, FFFD, 3) == 0);
    CHECK_OK(nextok_detok_flush(d, buf, sizeof buf, &got));
    CHECK_EQ_INT(got, 0);
    nextok_detok_free(d);
}

/* Random byte strings through o200k's single-byte tokens: the output must be
 * the reference lossy decoding, however the bytes are split. */
TEST(lossy_matches_reference)
{
    struct nextok_vocab *v = tiny_tiktoken();
    if (!v) return;
    int32_t byte_id[256];
    for (int b = 0; b < 256; b++) {
        char c = (char)b;
        byte_id[b] = nextok_vocab_find(v, &c, 1);
        CHECK(byte_id[b] >= 0);
    }
    static const unsigned char alphabet[] = {'a', ' ', 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0,
                                             0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    uint64_t seed = 42;
    for (int it = 0; it < 400; it++) {
        unsigned char s[24], want[80];
        int32_t ids[24];
        size_t n = 1 + rng_next(&seed) % 24;
        for (size_t i = 0; i < n; i++) {
            s[i] = alphabet[rng_next(&seed) % sizeof alphabet];
            ids[i] = byte_id[s[i]];
        }
        size_t wn = ref_lossy(s, n, want);
        struct text w = {0};
        whole(v, ids, n, NULL, &w);
        CHECK_MSG(w.n == wn && memcmp(w.p, want, wn) == 0, "iteration %d", it);
        struct nextok_decode_params p = nextok_decode_default_params();
        check_seq(v, ids, n, &p, &seed, "random bytes");
        free(w.p);
    }
    nextok_vocab_free(v);
}

/* Random ids over the small vocabularies, every option combination. */
TEST(random_sequences_tiny)
{
    struct nextok_vocab *vs[2] = {tiny_tiktoken(), tiny_spm()};
    uint64_t seed = 99;
    for (int k = 0; k < 2; k++) {
        if (!vs[k]) continue;
        int32_t nt = nextok_vocab_n_tokens(vs[k]), ids[64];
        for (int it = 0; it < 200; it++) {
            size_t n = 1 + rng_next(&seed) % 64;
            for (size_t i = 0; i < n; i++) ids[i] = (int32_t)(rng_next(&seed) % (uint64_t)nt);
            struct nextok_decode_params p = params_of(it % 4);
            check_seq(vs[k], ids, n, &p, &seed, k ? "tiny spm" : "tiny tiktoken");
        }
        nextok_vocab_free(vs[k]);
    }
}

/* The SentencePiece rules on a GGUF vocab: split emoji, specials between
 * partial bytes, first-token space, slow-tokenizer segments. */
TEST(tiny_spm_rules)
{
    struct nextok_vocab *v = tiny_spm();
    if (!v) return;
    struct nextok_detok *d;
    CHECK_OK(nextok_detok_init(&d, v, NULL, NULL));
    step(d, 259, "hi", 2, 0); /* first token: "▁hi" loses its space */
    step(d, 3 + 0xF0, "", 0, 1);
    step(d, 3 + 0x9F, "", 0, 2);
    step(d, 3 + 0x98, "", 0, 3);
    step(d, 3 + 0x80, "\xf0\x9f\x98\x80", 4, 0);
    step(d, 3 + 0xE2, "", 0, 1);
    step(d, 1, FFFD "<s>", 6, 0);
    step(d, 259, " hi", 3, 0);
    nextok_detok_free(d);
    struct nextok_decode_params p = nextok_decode_default_params();
    p.spaces_between_special_tokens = true;
    CHECK_OK(nextok_detok_init(&d, v, &p, NULL));
    step(d, 259, "hi", 2, 0);
    step(d, 262, " <tool>", 7, 0);
    step(d, 259, " hi", 3, 0); /* a new segment: its first space is stripped, then joined */
    step(d, 261, " ", 1, 0);
    step(d, 2, " </s>", 5, 0); /* "hi <tool> hi  </s>", as " ".join(segments) */
    nextok_detok_free(d);
    nextok_vocab_free(v);
}

TEST(buffer_contract)
{
    struct nextok_vocab *v = get_vocab(5);
    if (!v) return; /* get_vocab reported why */
    struct nextok_detok *d, *c;
    CHECK_OK(nextok_detok_init(&d, v, NULL, NULL));
    if (!d) return;
    int32_t ids[3] = {15496, 995, 0}; /* "Hello world!" */
    char buf[64];
    size_t got = 0;
    /* Too small: nothing changes, the size needed comes back. */
    CHECK_EQ_INT(nextok_detok_feed(d, ids, 3, buf, 4, &got), NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK_EQ_INT(got, 12);
    CHECK(nextok_detok_errmsg(d)[0] != '\0');
    CHECK_EQ_INT(nextok_detok_feed(d, ids, 3, NULL, 0, &got), NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK_OK(nextok_detok_feed(d, ids, 1, buf, sizeof buf, &got));
    CHECK(got == 5 && memcmp(buf, "Hello", 5) == 0);
    /* Clone mid-stream: both continue the same way. */
    CHECK_OK(nextok_detok_clone(d, &c));
    CHECK_OK(nextok_detok_feed(c, ids + 1, 2, buf, sizeof buf, &got));
    CHECK(got == 7 && memcmp(buf, " world!", 7) == 0);
    CHECK_OK(nextok_detok_feed(d, ids + 1, 2, buf, sizeof buf, &got));
    CHECK(got == 7 && memcmp(buf, " world!", 7) == 0);
    nextok_detok_free(c);
    /* A bad id: nothing consumed, message names it. */
    int32_t bad[2] = {15496, 50257};
    CHECK_EQ_INT(nextok_detok_feed(d, bad, 2, buf, sizeof buf, &got), NEXTOK_ERR_TOKEN_RANGE);
    CHECK(strstr(nextok_detok_errmsg(d), "50257") != NULL);
    CHECK_EQ_INT(nextok_detok_feed(d, NULL, 1, buf, sizeof buf, &got), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_detok_feed(NULL, ids, 1, buf, sizeof buf, &got), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_detok_init(&c, NULL, NULL, NULL), NEXTOK_ERR_INVALID_ARG);
    CHECK(c == NULL);
    nextok_detok_free(d);
    nextok_detok_free(NULL);
    CHECK_EQ_INT(nextok_detok_held(NULL), 0);
}

TEST(stream_contract)
{
    struct nextok_vocab *v = get_vocab(5);
    if (!v) return; /* get_vocab reported why */
    struct nextok_detok *d;
    CHECK_OK(nextok_detok_init(&d, v, NULL, NULL));
    if (!d) return;
    int32_t e2 = nextok_vocab_find(v, "\xc3\xa2", 2);
    int32_t ids[3] = {15496, 995, e2}; /* "Hello", " world", byte E2 */
    char buf[8];
    struct nextok_ids_in in = {ids, 3, 0};
    struct nextok_text_out out = {buf, 3, 0};
    size_t held = 9;
    /* "Hello" does not fit in 3 bytes: no progress at all. */
    CHECK_EQ_INT(nextok_detok_stream(d, &in, &out, NEXTOK_DETOK_END, &held), NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK(in.pos == 0 && out.pos == 0);
    out.size = 8;
    CHECK_OK(nextok_detok_stream(d, &in, &out, NEXTOK_DETOK_END, &held));
    CHECK(in.pos == 1 && out.pos == 5 && memcmp(buf, "Hello", 5) == 0);
    out.pos = 0;
    CHECK_OK(nextok_detok_stream(d, &in, &out, NEXTOK_DETOK_END, &held));
    /* " world" and E2 (held) are consumed, the flush (3 bytes) does not fit. */
    CHECK(in.pos == 3 && out.pos == 6 && held == 1);
    out.pos = 0;
    CHECK_OK(nextok_detok_stream(d, &in, &out, NEXTOK_DETOK_END, &held));
    CHECK(out.pos == 3 && memcmp(buf, FFFD, 3) == 0 && held == 0);
    CHECK_OK(nextok_detok_stream(d, &in, &out, NEXTOK_DETOK_END, &held));
    int32_t bad = -1;
    struct nextok_ids_in in2 = {&bad, 1, 0};
    CHECK_EQ_INT(nextok_detok_stream(d, &in2, &out, NEXTOK_DETOK_CONTINUE, &held), NEXTOK_ERR_TOKEN_RANGE);
    CHECK_EQ_INT(nextok_detok_stream(d, NULL, &out, NEXTOK_DETOK_CONTINUE, &held), NEXTOK_ERR_INVALID_ARG);
    nextok_detok_free(d);
}

int main(int argc, char **argv)
{
    harness_init(argc, argv);
    if (GROUP("")) {
        RUN(random_sequences_all_vocabs);
        RUN(golden_streaming);
        RUN(adversarial_spm);
        RUN(adversarial_byte_level);
        RUN(lossy_matches_reference);
        RUN(random_sequences_tiny);
        RUN(tiny_spm_rules);
        RUN(buffer_contract);
        RUN(stream_contract);
    }
    /* The same streams on Llama 3, Qwen3 and Gemma 3 (kept outside the repo). */
    if (GROUP("external") && need_external_vocabs()) {
        RUN(random_sequences_all_vocabs);
        RUN(golden_streaming);
    }
    for (size_t i = 0; i < N_FILES; i++) nextok_vocab_free(vocabs[i]);
    golden_free(&golden_doc);
    return harness_done();
}
