/*
 * The encoder's API and properties (the reference ids are test_encode.c):
 *   - llama.cpp's tokenizer test pairs for both shipped GGUF vocabularies;
 *   - GGUF gpt-2 gives HF gpt2's ids;
 *   - special tokens as text or parsed, BOS/EOS as the file says or forced;
 *   - no byte-fallback token for a character the vocabulary has;
 *   - words of 200 000 bytes encode and decode back;
 *   - every bad input: a status, a message, the caller's buffer as promised;
 *   - a warm encoder allocates nothing.
 */
#include "harness.h"

#include "common/file.h"
#include "nextok.h"

#include <stdlib.h>

static struct nextok_vocab *load(const char *rel)
{
    char path[1024];
    struct nextok_vocab *v = NULL;
    struct nextok_error err;
    nextok_status st = nextok_vocab_load_file(&v, fixture_path(path, sizeof path, rel), &err);
    CHECK_MSG(st == NEXTOK_OK, "%s: %s", path, err.msg);
    return st == NEXTOK_OK ? v : NULL;
}

static struct nextok_encoder *encoder(const struct nextok_vocab *v, bool special, int bos, int eos)
{
    struct nextok_encode_params p = nextok_encode_default_params();
    p.parse_special = special;
    p.add_bos = bos;
    p.add_eos = eos;
    struct nextok_encoder *e = NULL;
    struct nextok_error err;
    nextok_status st = v ? nextok_encoder_init(&e, v, &p, &err) : NEXTOK_ERR_INVALID_ARG;
    CHECK_MSG(st == NEXTOK_OK, "encoder_init: %s", v ? err.msg : "no vocabulary");
    return st == NEXTOK_OK ? e : NULL;
}

#define MAX_IDS 400000
static int32_t ids[MAX_IDS];

static size_t enc(struct nextok_encoder *e, const char *t, size_t n)
{
    size_t got = 0;
    nextok_status st = nextok_encoder_encode(e, t, n, ids, MAX_IDS, &got);
    CHECK_MSG(st == NEXTOK_OK, "encode: %s (%s)", nextok_status_name(st), nextok_encoder_errmsg(e));
    return st == NEXTOK_OK ? got : 0;
}

static bool ids_are(size_t n, const int32_t *want, size_t nw)
{
    return n == nw && (n == 0 || memcmp(ids, want, n * sizeof *want) == 0);
}
#define IDS_ARE(n, ...)                          \
    ids_are((n), (const int32_t[]){__VA_ARGS__}, \
            sizeof((const int32_t[]){__VA_ARGS__}) / sizeof(int32_t))

/* ---- llama.cpp's pairs ------------------------------------------------------------- */

static void pairs(const char *vocab_rel, const char *name)
{
    char rel[256], path[1024];
    struct nextok_vocab *v = load(vocab_rel);
    struct nextok_encoder *e = encoder(v, false, 0, 0);
    snprintf(rel, sizeof rel, "llama.cpp/%s.inp", name);
    char *inp = NULL, *out = NULL;
    size_t ni = 0, no = 0;
    struct nextok_error err;
    CHECK_OK(nextok__read_file(&nextok__mem_libc, fixture_path(path, sizeof path, rel), &inp, &ni,
                               &err));
    snprintf(rel, sizeof rel, "llama.cpp/%s.out", name);
    CHECK_OK(nextok__read_file(&nextok__mem_libc, fixture_path(path, sizeof path, rel), &out, &no,
                               &err));
    static const char sep[] = "\n__ggml_vocab_test__\n";
    size_t n_tests = 0, bad = 0;
    char *line = out;
    for (char *p = inp; e && inp && out && p < inp + ni; n_tests++) {
        char *end = strstr(p, sep);
        if (!end) break;
        size_t n = enc(e, p, (size_t)(end - p)), k = 0;
        char *nl = strchr(line, '\n');
        bool ok = nl != NULL;
        for (char *q = line; ok && q < nl;) {
            long id = strtol(q, &q, 10);
            ok = k < n && ids[k++] == id;
            while (q < nl && *q == ' ') q++;
        }
        if (!(ok && k == n) && bad++ < 3) printf("  %s test %zu differs\n", name, n_tests);
        line = nl ? nl + 1 : line;
        p = end + sizeof sep - 1;
    }
    CHECK_MSG(n_tests >= 46 && bad == 0, "%s: %zu of %zu tests differ", name, bad, n_tests);
    free(inp);
    free(out);
    nextok_encoder_free(e);
    nextok_vocab_free(v);
}

TEST(llama_cpp_pairs)
{
    pairs("vocab/gguf/ggml-vocab-gpt-2.gguf", "ggml-vocab-gpt-2.gguf");
    pairs("vocab/gguf/ggml-vocab-phi-3.gguf", "ggml-vocab-phi-3.gguf");
#if defined(NEXTOK_HAVE_UTF8PROC)
    pairs("vocab/gguf/ggml-vocab-bert-bge.gguf", "ggml-vocab-bert-bge.gguf");
#endif
}

/* GGUF gpt-2 (llama.cpp's rules) and tokenizer.json gpt2 (HF's) agree on a corpus. */
TEST(gguf_gpt2_is_hf_gpt2)
{
    char path[1024];
    struct nextok_vocab *a = load("vocab/gguf/ggml-vocab-gpt-2.gguf"),
                        *b = load("vocab/hf/gpt2/tokenizer.json");
    struct nextok_encoder *ea = encoder(a, true, 0, 0), *eb = encoder(b, true, 0, 0);
    char *text = NULL;
    size_t size = 0;
    struct nextok_error err;
    CHECK_OK(nextok__read_file(&nextok__mem_libc,
                               fixture_path(path, sizeof path, "corpus/spa-rv1909-nt.txt"), &text,
                               &size, &err));
    static int32_t other[MAX_IDS];
    size_t na = 0, nb = 0;
    if (ea && eb && text) {
        CHECK_OK(nextok_encoder_encode(ea, text, size, other, MAX_IDS, &na));
        nb = enc(eb, text, size);
    }
    CHECK(nb > 100000 && na == nb && memcmp(other, ids, na * sizeof *ids) == 0);
    free(text);
    nextok_encoder_free(ea);
    nextok_encoder_free(eb);
    nextok_vocab_free(a);
    nextok_vocab_free(b);
}

/* ---- special tokens, BOS and EOS ------------------------------------------------------------ */

TEST(special_tokens)
{
    struct nextok_vocab *g = load("vocab/hf/gpt2/tokenizer.json");
    struct nextok_encoder *plain = encoder(g, false, 0, 0), *parsed = encoder(g, true, 0, 0);
    const char *t = "a<|endoftext|>b";
    if (plain && parsed) {
        size_t n = enc(parsed, t, strlen(t));
        CHECK(IDS_ARE(n, 64, 50256, 65));
        n = enc(plain, t, strlen(t));
        CHECK(n > 3);
        for (size_t k = 0; k < n; k++) CHECK(ids[k] != 50256);
    }
    nextok_encoder_free(plain);
    nextok_encoder_free(parsed);
    nextok_vocab_free(g);

    struct nextok_vocab *o = load("vocab/tiktoken/o200k_base.tiktoken");
    struct nextok_encoder *oe = encoder(o, true, 0, 0);
    if (oe) CHECK(IDS_ARE(enc(oe, "<|endoftext|>", 13), 199999));
    nextok_encoder_free(oe);
    nextok_vocab_free(o);
}

TEST(bos_eos)
{
    struct nextok_vocab *m = load("vocab/hf/mistral-7b-v0.1/tokenizer.json");
    struct nextok_encoder *dflt = encoder(m, false, -1, -1), *none = encoder(m, false, 0, 0),
                          *both = encoder(m, false, 1, 1);
    if (dflt && none && both) {
        CHECK(IDS_ARE(enc(dflt, "Hello", 5), 1, 22557)); /* the file adds <s> */
        CHECK(IDS_ARE(enc(none, "Hello", 5), 22557));
        CHECK(IDS_ARE(enc(both, "Hello", 5), 1, 22557, 2));
        CHECK(IDS_ARE(enc(dflt, "", 0), 1));
    }
    nextok_encoder_free(dflt);
    nextok_encoder_free(none);
    nextok_encoder_free(both);
    /* Asking for a BOS the vocabulary does not have is an error at init. */
    struct nextok_vocab *o = load("vocab/tiktoken/o200k_base.tiktoken");
    struct nextok_encode_params p = nextok_encode_default_params();
    p.add_bos = 1;
    struct nextok_encoder *e = NULL;
    struct nextok_error err;
    if (o) {
        CHECK_EQ_INT(nextok_encoder_init(&e, o, &p, &err), NEXTOK_ERR_INVALID_ARG);
        CHECK(e == NULL && strstr(err.msg, "add_bos") != NULL);
        p.add_bos = 7;
        CHECK_EQ_INT(nextok_encoder_init(&e, o, &p, &err), NEXTOK_ERR_INVALID_ARG);
    }
    nextok_vocab_free(o);
    nextok_vocab_free(m);
}

/* ---- properties ----------------------------------------------------------------------------- */

/* SentencePiece vocabularies: a byte token only for a character that has no token. */
static void bytes_only_when_needed(const char *vocab_rel, const char *corpus_rel)
{
    char path[1024];
    struct nextok_vocab *v = load(vocab_rel);
    struct nextok_encoder *e = encoder(v, false, 0, 0);
    char *text = NULL;
    size_t size = 0;
    struct nextok_error err;
    CHECK_OK(nextok__read_file(&nextok__mem_libc, fixture_path(path, sizeof path, corpus_rel),
                               &text, &size, &err));
    size_t n = e && text ? enc(e, text, size < 300000 ? size : 300000) : 0, n_bytes = 0, bad = 0;
    for (size_t k = 0; k < n;) {
        if (nextok_vocab_token_type(v, ids[k]) != NEXTOK_TOKEN_TYPE_BYTE) {
            k++;
            continue;
        }
        char ch[8]; /* the character these byte tokens spell */
        size_t len = 0, blen;
        for (; k < n && len < 4 && nextok_vocab_token_type(v, ids[k]) == NEXTOK_TOKEN_TYPE_BYTE;
             k++) {
            const char *b = nextok_vocab_token_bytes(v, ids[k], &blen);
            if (len && ((unsigned char)b[0] & 0xC0) != 0x80) break; /* the next character starts */
            ch[len++] = b[0];
        }
        n_bytes++;
        if (nextok_vocab_find(v, ch, len) >= 0 && bad++ < 3)
            printf("  %s: a character with a token came out as %zu byte tokens\n", vocab_rel, len);
    }
    CHECK_MSG(bad == 0, "%s: %zu of %zu byte-token characters have a token", vocab_rel, bad,
              n_bytes);
    CHECK(n_bytes > 0); /* the emoji file has characters these vocabularies lack */
    free(text);
    nextok_encoder_free(e);
    nextok_vocab_free(v);
}

TEST(byte_fallback_only_when_needed)
{
    bytes_only_when_needed("vocab/hf/mistral-7b-v0.1/tokenizer.json", "corpus/emoji-test.txt");
    bytes_only_when_needed("vocab/gguf/ggml-vocab-phi-3.gguf", "corpus/emoji-test.txt");
}

/* Words far longer than any real one: the merge loop is O(n log n) and
 * decoding gives the text back. */
static void long_word(const char *vocab_rel, char fill, size_t len, bool exact_back)
{
    struct nextok_vocab *v = load(vocab_rel);
    struct nextok_encoder *e = encoder(v, false, 0, 0);
    char *t = malloc(len), *back = malloc(len + 8);
    memset(t, fill, len);
    size_t n = e ? enc(e, t, len) : 0, bn = 0;
    CHECK(n > 0 && n < len);
    if (exact_back && n) {
        CHECK_OK(nextok_vocab_decode(v, ids, n, NULL, back, len + 8, &bn));
        CHECK(bn == len && memcmp(back, t, len) == 0);
    }
    free(t);
    free(back);
    nextok_encoder_free(e);
    nextok_vocab_free(v);
}

TEST(long_words)
{
    long_word("vocab/hf/gpt2/tokenizer.json", 'a', 200000, true);
    long_word("vocab/tiktoken/o200k_base.tiktoken", '7', 200000, true);
    long_word("vocab/hf/mistral-7b-v0.1/tokenizer.json", 'a', 200000, false); /* dummy prefix */
    long_word("vocab/gguf/ggml-vocab-phi-3.gguf", 'x', 200000, false);
}

/* ---- bad input ---------------------------------------------------------------------------- */

TEST(bad_input)
{
    struct nextok_vocab *g = load("vocab/hf/gpt2/tokenizer.json");
    struct nextok_encoder *e = encoder(g, false, 0, 0);
    if (!e) {
        nextok_vocab_free(g);
        return;
    }
    static const struct {
        const char *s;
        size_t at;
    } bad[] = {{"ab\x80", 2},
               {"\xC0\xAF", 0},
               {"x\xED\xA0\x80", 1},
               {"ok\xE2\x82", 2},
               {"\xF5\x80\x80\x80", 0}};
    size_t n = 99;
    int32_t keep[4] = {7, 7, 7, 7};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[64];
        CHECK_EQ_INT(nextok_encoder_encode(e, bad[i].s, strlen(bad[i].s), keep, 4, &n),
                     NEXTOK_ERR_INVALID_ARG);
        snprintf(want, sizeof want, "invalid UTF-8 at byte %zu", bad[i].at);
        CHECK_MSG(strstr(nextok_encoder_errmsg(e), want), "%s", nextok_encoder_errmsg(e));
    }
    CHECK(n == 99 && keep[0] == 7); /* nothing written on failure */
    CHECK_EQ_INT(nextok_encoder_encode(e, NULL, 3, keep, 4, &n), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_encoder_encode(e, "a", 1, NULL, 4, &n), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_encoder_encode(e, "a", 1, keep, 4, NULL), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_encoder_encode(NULL, "a", 1, keep, 4, &n), NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_encoder_errmsg(e)[0] != '\0');
    /* Too small: the size needed, and the first cap ids. */
    const char *t = "Hello world! It's 2024.";
    CHECK_EQ_INT(nextok_encoder_encode(e, t, strlen(t), keep, 2, &n), NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 7 && keep[0] == 15496 && keep[1] == 995 && keep[2] == 7);
    CHECK(strstr(nextok_encoder_errmsg(e), "7 ids") != NULL);
    CHECK_EQ_INT(nextok_encoder_encode(e, t, strlen(t), NULL, 0, &n), NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK_EQ_INT(n, 7);
    CHECK_OK(nextok_encoder_encode(e, "", 0, NULL, 0, &n));
    CHECK_EQ_INT(n, 0);
    CHECK(nextok_encoder_errmsg(e)[0] == '\0');
    /* The one-call form carries the message. */
    struct nextok_error err;
    CHECK_EQ_INT(nextok_vocab_encode(g, "\xff", 1, NULL, keep, 4, &n, &err),
                 NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "invalid UTF-8 at byte 0") != NULL);
    nextok_encoder_free(e);
    nextok_vocab_free(g);
}

static struct nextok_vocab *load_json(const char *json)
{
    struct nextok_hf_json_mem m = {json, strlen(json), NULL, 0, NULL, 0};
    struct nextok_vocab *v = NULL;
    struct nextok_error err;
    nextok_status st = nextok_vocab_load_hf_json_mem(&v, &m, &err);
    CHECK_MSG(st == NEXTOK_OK, "%s", err.msg);
    return v;
}

/* Small hand-worked Unigram and WordPiece cases (the corpora are test_encode's). */
TEST(unigram_and_wordpiece_by_hand)
{
    /* Viterbi: "abc" as a+bc (-1 + -1.5) beats ab+c (-2 + -1) and a+b+c. */
    struct nextok_vocab *u = load_json(
        "{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0.0], "
        "[\"a\", -1.0], [\"b\", -1.0], [\"c\", -1.0], [\"ab\", -2.0], [\"bc\", -1.5]]}}");
    struct nextok_encoder *ue = encoder(u, false, 0, 0);
    if (ue) {
        CHECK(IDS_ARE(enc(ue, "abc", 3), 1, 5));
        CHECK(IDS_ARE(enc(ue, "cab", 3), 3, 4)); /* ab (-2) ties a+b (-2): the first path found */
        CHECK(IDS_ARE(enc(ue, "axyb", 4), 1, 0, 2)); /* unknowns fuse into one */
    }
    nextok_encoder_free(ue);
    nextok_vocab_free(u);
    struct nextok_vocab *w = load_json(
        "{\"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"model\": {\"type\": "
        "\"WordPiece\", "
        "\"unk_token\": \"[UNK]\", \"max_input_chars_per_word\": 9, \"vocab\": {\"[UNK]\": 0, "
        "\"un\": 1, \"##aff\": 2, \"##able\": 3, \"!\": 4, \"x\": 5}}}");
    struct nextok_encoder *we = encoder(w, false, 0, 0);
    if (we) {
        const char *t = "unaffable! x unx xxxxxxxxxx";
        CHECK(
            IDS_ARE(enc(we, t, strlen(t)), 1, 2, 3, 4, 5, 0, 0)); /* "unx": no ##x; 10 chars > 9 */
    }
    nextok_encoder_free(we);
    nextok_vocab_free(w);
}

TEST(vocabularies_that_cannot_encode)
{
    struct nextok_encoder *e = NULL;
    struct nextok_error err;
    /* A Unigram model needs its unknown token (HF refuses to encode without). */
    struct nextok_vocab *u =
        load_json("{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", -1.0]]}}");
    struct nextok_encoder *ue = encoder(u, false, 0, 0);
    if (ue) {
        size_t n = 0;
        CHECK_EQ_INT(nextok_encoder_encode(ue, "a", 1, ids, MAX_IDS, &n), NEXTOK_ERR_UNSUPPORTED);
    }
    nextok_encoder_free(ue);
    nextok_vocab_free(u);
    /* BPE without merges: every character is its own token; one without a
     * token, no byte fallback and no unknown token is an error. */
    struct nextok_vocab *b =
        load_json("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, "
                  "\"merges\": []}}");
    struct nextok_encoder *be = encoder(b, false, 0, 0);
    if (be) {
        CHECK(IDS_ARE(enc(be, "abba", 4), 0, 1, 1, 0));
        size_t n = 0;
        CHECK_EQ_INT(nextok_encoder_encode(be, "abc", 3, ids, MAX_IDS, &n), NEXTOK_ERR_UNSUPPORTED);
        CHECK(strstr(nextok_encoder_errmsg(be), "no token") != NULL);
    }
    nextok_encoder_free(be);
    nextok_vocab_free(b);
    /* A normalizer nextok does not run: refused with its name. */
    struct nextok_vocab *l =
        load_json("{\"normalizer\": {\"type\": \"Precompiled\"}, \"model\": {\"type\": "
                  "\"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}");
    if (l) {
        CHECK_EQ_INT(nextok_encoder_init(&e, l, NULL, &err), NEXTOK_ERR_UNSUPPORTED);
        CHECK(strstr(err.msg, "Precompiled") != NULL);
    }
    nextok_vocab_free(l);
    CHECK_EQ_INT(nextok_encoder_init(&e, NULL, NULL, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_encoder_init(NULL, NULL, NULL, &err), NEXTOK_ERR_INVALID_ARG);
}

/* ---- allocation ------------------------------------------------------------------------------ */

static size_t n_allocs;
static void *count_alloc(void *u, size_t n)
{
    (void)u;
    n_allocs++;
    return malloc(n);
}
static void *count_realloc(void *u, void *p, size_t n)
{
    (void)u;
    n_allocs++;
    return realloc(p, n);
}
static void count_free(void *u, void *p)
{
    (void)u;
    free(p);
}

TEST(warm_encoder_allocates_nothing)
{
    static const char *const vocabs[] = {
        "vocab/hf/gpt2/tokenizer.json", "vocab/hf/mistral-7b-v0.1/tokenizer.json",
        "vocab/tiktoken/o200k_base.tiktoken", "vocab/gguf/ggml-vocab-phi-3.gguf"};
    const struct nextok_allocator counting = {count_alloc, count_realloc, count_free, NULL};
    const char *t = "Mr. Darcy's  estate — 12345 ½ naïve 🦙.cpp \t\n end";
    for (size_t i = 0; i < sizeof vocabs / sizeof vocabs[0]; i++) {
        struct nextok_vocab *v = load(vocabs[i]);
        struct nextok_encode_params p = nextok_encode_default_params();
        p.allocator = &counting;
        struct nextok_encoder *e = NULL;
        struct nextok_error err;
        if (!v || nextok_encoder_init(&e, v, &p, &err) != NEXTOK_OK) {
            CHECK_MSG(0, "%s: no encoder", vocabs[i]);
            nextok_vocab_free(v);
            continue;
        }
        size_t n = enc(e, t, strlen(t));
        n_allocs = 0;
        for (int r = 0; r < 10; r++) CHECK_EQ_INT(enc(e, t, strlen(t)), n);
        CHECK_MSG(n_allocs == 0, "%s: %zu allocations in 10 warm calls", vocabs[i], n_allocs);
        nextok_encoder_free(e);
        nextok_vocab_free(v);
    }
}

int main(void)
{
    RUN(llama_cpp_pairs);
    RUN(gguf_gpt2_is_hf_gpt2);
    RUN(special_tokens);
    RUN(bos_eos);
    RUN(byte_fallback_only_when_needed);
    RUN(long_words);
    RUN(bad_input);
    RUN(unigram_and_wordpiece_by_hand);
    RUN(vocabularies_that_cannot_encode);
    RUN(warm_encoder_allocates_nothing);
    return harness_done();
}
