/*
 * Fuzz target: the incremental detokenizer against whole-sequence decode.
 * data[0] picks one of a few small vocabularies (tiktoken bytes, a GGUF
 * SentencePiece vocab, tokenizer.json decoder chains), data[1] the decode
 * params, the rest is token ids (2 bytes each) and also drives how the ids are
 * split into stream calls. Any difference, invalid UTF-8 output or broken
 * bound aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"
#include "../tests/base64.h"

/* ---- vocabularies ---------------------------------------------------------- */

static struct nextok_vocab *tiktoken_vocab(void)
{
    static const char *const extra[] = {"\xef\xbf\xbd", "\xf0\x9f", "\x98\x80", "\xc3\xa9",
                                        " hello", "\xe2\x82"};
    static const struct nextok_special_token sp[2] = {{"<|end|>", 300}, {"<|sep|>", 301}};
    char *text = malloc(8192), line[64];
    size_t n = 0;
    for (int i = 0; i < 256 + 6; i++) {
        unsigned char one = (unsigned char)i;
        const unsigned char *s = i < 256 ? &one : (const unsigned char *)extra[i - 256];
        size_t k = h_base64(s, i < 256 ? 1 : strlen(extra[i - 256]), line);
        n += (size_t)snprintf(text + n, 8192 - n, "%.*s %d\n", (int)k, line, i);
    }
    struct nextok_vocab *v = NULL;
    (void)nextok_vocab_load_tiktoken_mem(&v, text, n, sp, 2, NULL);
    free(text);
    return v;
}

struct gw {
    unsigned char *p;
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

/* A SentencePiece GGUF: <unk> <s> </s> <0x00>..<0xFF> and a few pieces. */
static struct nextok_vocab *gguf_vocab(int add_space_prefix)
{
    static const char *const pieces[] = {("\xe2\x96\x81" "a"), "b", "\xe2\x96\x81",
                                         "\xe2\x96\x81\xe2\x96\x81", "\xef\xbf\xbd", "<tool>"};
    const int n_tok = 3 + 256 + 6;
    struct gw g = {malloc(65536), 0};
    memcpy(g.p, "GGUF", 4);
    g.n = 4;
    gw_int(&g, 3, 4);
    gw_int(&g, 0, 8);
    gw_int(&g, 4, 8);
    gw_str(&g, "tokenizer.ggml.model");
    gw_int(&g, 8, 4);
    gw_str(&g, "llama");
    gw_str(&g, "tokenizer.ggml.tokens");
    gw_int(&g, 9, 4);
    gw_int(&g, 8, 4);
    gw_int(&g, (uint64_t)n_tok, 8);
    gw_str(&g, "<unk>");
    gw_str(&g, "<s>");
    gw_str(&g, "</s>");
    for (int b = 0; b < 256; b++) {
        char t[8];
        snprintf(t, sizeof t, "<0x%02X>", b);
        gw_str(&g, t);
    }
    for (int i = 0; i < 6; i++) gw_str(&g, pieces[i]);
    gw_str(&g, "tokenizer.ggml.token_type");
    gw_int(&g, 9, 4);
    gw_int(&g, 5, 4);
    gw_int(&g, (uint64_t)n_tok, 8);
    for (int i = 0; i < n_tok; i++) {
        int t = i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : i == n_tok - 1 ? 4 : 1;
        gw_int(&g, (uint64_t)t, 4);
    }
    gw_str(&g, "tokenizer.ggml.add_space_prefix");
    gw_int(&g, 7, 4);
    gw_int(&g, (uint64_t)add_space_prefix, 1);
    struct nextok_vocab *v = NULL;
    (void)nextok_vocab_load_gguf_mem(&v, g.p, g.n, NULL);
    free(g.p);
    return v;
}

static const char *const json_vocabs[] = {
    /* BPE, byte fallback, Strip at both ends of the whole text. */
    "{\"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"vocab\": {\"<0xE2>\": 0, "
    "\"<0x82>\": 1, \"<0xAC>\": 2, \"<0xFF>\": 3, \"-\": 4, \"a\": 5, \"\\u2581b\": 6}, \"merges\": []}, "
    "\"added_tokens\": [{\"id\": 7, \"content\": \"<s>\", \"special\": true}, "
    "{\"id\": 8, \"content\": \"<t>\", \"special\": false}], \"decoder\": {\"type\": \"Sequence\", "
    "\"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": \"\\u2581\"}, \"content\": \"-\"}, "
    "{\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": \"Strip\", \"content\": \"-\", "
    "\"start\": 2, \"stop\": 3}]}}",
    /* Unigram with Metaspace. */
    "{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0], "
    "[\"\\u2581a\\u2581\", -1], [\"\\u2581\", -2], [\"\\u00e9\", -3], [\"<0xC3>\", -4]]}, "
    "\"added_tokens\": [{\"id\": 5, \"content\": \"</s>\", \"special\": true}], "
    "\"decoder\": {\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"first\"}}",
    /* WordPiece. */
    "{\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"vocab\": {\"[UNK]\": 0, "
    "\"hug\": 1, \"##ging\": 2, \".\": 3, \"do\": 4, \"not\": 5, \"##\\u00e9\": 6}}, "
    "\"added_tokens\": [{\"id\": 7, \"content\": \"[SEP]\", \"special\": true}], "
    "\"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\", \"cleanup\": true}}",
};

static struct nextok_vocab *json_vocab(int k)
{
    struct nextok_hf_json_mem m = {json_vocabs[k], strlen(json_vocabs[k]), NULL, 0, NULL, 0};
    struct nextok_vocab *v = NULL;
    (void)nextok_vocab_load_hf_json_mem(&v, &m, NULL);
    return v; /* NULL only when out of memory */
}

static struct nextok_vocab *pick_vocab(int k)
{
    if (k == 0) return tiktoken_vocab();
    if (k <= 2) return gguf_vocab(k == 1);
    struct nextok_vocab *v = json_vocab(k - 3);
    return v ? v : tiktoken_vocab();
}

/* ---- checks ---------------------------------------------------------------------- */

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (k == 0 || i + k > n) return 0;
        unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
        unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        for (size_t j = 1; j < k; j++) {
            if (s[i + j] < (j == 1 ? lo : 0x80) || s[i + j] > (j == 1 ? hi : 0xBF)) return 0;
        }
        i += k;
    }
    return 1;
}

/* Stream ids through nextok_detok_stream in chunks sized by the input, with
 * room for one id's text per call; append everything to out. */
static size_t stream_all(struct nextok_detok *d, const int32_t *ids, size_t n,
                         const uint8_t *ctl, size_t n_ctl, char *out, size_t cap)
{
    size_t room = nextok_detok_bound(d, 1), o = 0, c = 0, held = 0;
    struct nextok_ids_in in = {ids, 0, 0};
    for (;;) {
        if (in.pos == in.size && in.size < n) {
            size_t step = 1 + (n_ctl ? ctl[c++ % n_ctl] % 7 : 0);
            in.size = in.size + step > n ? n : in.size + step;
        }
        enum nextok_detok_directive dir = in.size == n ? NEXTOK_DETOK_END : NEXTOK_DETOK_CONTINUE;
        struct nextok_text_out to = {out + o, cap - o < room ? cap - o : room, 0};
        if (nextok_detok_stream(d, &in, &to, dir, &held) != NEXTOK_OK) abort();
        o += to.pos;
        if (dir == NEXTOK_DETOK_END && in.pos == n && held == 0) return o;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    struct nextok_vocab *v = pick_vocab(data[0] % 6);
    if (!v) abort();
    struct nextok_decode_params p = nextok_decode_default_params();
    p.skip_special_tokens = data[1] & 1;
    p.spaces_between_special_tokens = (data[1] >> 1) & 1;
    int32_t ids[512], nt = nextok_vocab_n_tokens(v);
    size_t n = 0;
    for (size_t i = 2; i + 1 < size && n < 512; i += 2)
        ids[n++] = (int32_t)((data[i] | (uint32_t)data[i + 1] << 8) % (uint32_t)nt);
    struct nextok_detok *d = NULL;
    if (nextok_detok_init(&d, v, &p, NULL) != NEXTOK_OK) abort();
    size_t cap = nextok_detok_bound(d, n), whole_n = 0, got = 0, pos = 0;
    char *whole = malloc(cap), *streamed = malloc(cap), *one = malloc(nextok_detok_bound(d, 1));
    if (nextok_vocab_decode(v, ids, n, &p, whole, cap, &whole_n) != NEXTOK_OK) abort();
    if (!valid_utf8((const unsigned char *)whole, whole_n)) abort();
    for (size_t i = 0; i <= n; i++) {
        nextok_status rc = i < n ? nextok_detok_feed(d, &ids[i], 1, one, nextok_detok_bound(d, 1), &got)
                                 : nextok_detok_flush(d, one, nextok_detok_bound(d, 1), &got);
        if (rc != NEXTOK_OK || pos + got > whole_n || memcmp(whole + pos, one, got) != 0) abort();
        pos += got;
    }
    if (pos != whole_n || nextok_detok_held(d) != 0) abort();
    nextok_detok_reset(d);
    size_t sn = stream_all(d, ids, n, data + 1, size - 1, streamed, cap);
    if (sn != whole_n || memcmp(streamed, whole, sn) != 0) abort();
    fuzz_reached("decoded");
    free(whole);
    free(streamed);
    free(one);
    nextok_detok_free(d);
    nextok_vocab_free(v);
    return 0;
}
