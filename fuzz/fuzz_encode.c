/* Fuzz target: the encoder on arbitrary text with special tokens placed at
 * random. Byte 0 picks one of the shipped vocabularies (loaded once) and the
 * options; in the rest, 0xFF followed by a byte k inserts the text of the
 * vocabulary's k-th added token. Checks: invalid UTF-8 is refused with a
 * message; otherwise every id is in range, a size query gives the same count,
 * a short buffer holds the same first ids, encoding twice gives the same ids,
 * and byte-level vocabularies decode back to the text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"

#ifndef NEXTOK_FIXTURE_DIR
#define NEXTOK_FIXTURE_DIR "tests/data"
#endif

static const struct {
    const char *rel;
    int byte_level;
} files[] = {
    {"vocab/hf/gpt2/tokenizer.json", 1},           {"vocab/hf/mistral-7b-v0.1/tokenizer.json", 0},
    {"vocab/tiktoken/o200k_base.tiktoken", 1},     {"vocab/gguf/ggml-vocab-gpt-2.gguf", 1},
    {"vocab/gguf/ggml-vocab-phi-3.gguf", 0},
};
#define N_FILES (sizeof files / sizeof files[0])

static struct nextok_vocab *vocab(size_t i)
{
    static struct nextok_vocab *v[N_FILES];
    if (!v[i]) {
        char path[1024];
        struct nextok_error err;
        snprintf(path, sizeof path, "%s/%s", NEXTOK_FIXTURE_DIR, files[i].rel);
        if (nextok_vocab_load_file(&v[i], path, &err) != NEXTOK_OK) abort(); /* a fixture */
    }
    return v[i];
}

/* The k-th token with the added or special attribute (wrapping), or NULL. */
static const char *added_text(const struct nextok_vocab *v, unsigned k, size_t *len)
{
    int32_t n = nextok_vocab_n_tokens(v), seen = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t id = 0; id < n; id++) {
            uint32_t a = nextok_vocab_token_attrs(v, id);
            enum nextok_token_type t = nextok_vocab_token_type(v, id);
            bool added = (a & (NEXTOK_TOKEN_ATTR_ADDED | NEXTOK_TOKEN_ATTR_SPECIAL)) ||
                         t == NEXTOK_TOKEN_TYPE_CONTROL || t == NEXTOK_TOKEN_TYPE_USER_DEFINED;
            if (added && (unsigned)seen++ == k) return nextok_vocab_token_text(v, id, len);
        }
        if (!seen) return NULL;
        k %= (unsigned)seen;
        seen = 0;
    }
    return NULL;
}

static size_t build_text(const struct nextok_vocab *v, const uint8_t *d, size_t n, char *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *t = d[i] == 0xFF && i + 1 < n ? added_text(v, d[i + 1], &len) : NULL;
        if (!t || len > 64) {
            out[m++] = (char)d[i];
            continue;
        }
        memcpy(out + m, t, len);
        m += len;
        i++;
    }
    return m;
}

static void check(struct nextok_encoder *e, const struct nextok_vocab *v, int byte_level,
                  const char *t, size_t n)
{
    size_t cap = n + 8, got = 0, again = 0, q = 0;
    int32_t *ids = malloc(cap * sizeof *ids), *ids2 = malloc(cap * sizeof *ids2);
    if (!ids || !ids2) abort();
    nextok_status rc = nextok_encoder_encode(e, t, n, ids, cap, &got);
    if (rc == NEXTOK_ERR_INVALID_ARG) {
        if (!strstr(nextok_encoder_errmsg(e), "UTF-8")) abort();
        fuzz_reached("invalid");
    } else if (rc == NEXTOK_OK) {
        fuzz_reached("encoded");
        for (size_t k = 0; k < got; k++)
            if (ids[k] < 0 || ids[k] >= nextok_vocab_n_tokens(v)) abort();
        if (nextok_encoder_encode(e, t, n, NULL, 0, &q) != (got ? NEXTOK_ERR_BUFFER_TOO_SMALL : NEXTOK_OK) ||
            q != got)
            abort();
        if (nextok_encoder_encode(e, t, n, ids2, got / 2, &again) != (got / 2 < got ? NEXTOK_ERR_BUFFER_TOO_SMALL : NEXTOK_OK) ||
            again != got || memcmp(ids, ids2, got / 2 * sizeof *ids) != 0)
            abort();
        if (nextok_encoder_encode(e, t, n, ids2, cap, &again) != NEXTOK_OK || again != got ||
            memcmp(ids, ids2, got * sizeof *ids) != 0)
            abort();
        if (byte_level) {
            size_t dn = 0;
            char *back = malloc(n + 64);
            if (!back || nextok_vocab_decode(v, ids, got, NULL, back, n + 64, &dn) != NEXTOK_OK ||
                dn != n || memcmp(back, t, n) != 0)
                abort();
            free(back);
        }
    } else if (rc != NEXTOK_ERR_UNSUPPORTED || !nextok_encoder_errmsg(e)[0]) {
        abort(); /* only a character without any token may be unsupported */
    }
    free(ids);
    free(ids2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 4096) return 0;
    size_t which = data[0] % N_FILES;
    const struct nextok_vocab *v = vocab(which);
    struct nextok_encode_params p = nextok_encode_default_params();
    p.parse_special = (data[0] >> 4) & 1;
    p.add_bos = (data[0] >> 5) & 1 ? -1 : 0;
    p.add_eos = 0;
    struct nextok_encoder *e = NULL;
    struct nextok_error err;
    nextok_status rc = nextok_encoder_init(&e, v, &p, &err);
    if (rc == NEXTOK_ERR_UNSUPPORTED && strstr(err.msg, "PCRE2")) return 0; /* a build without it */
    if (rc != NEXTOK_OK) abort();
    char *text = malloc(size * 64 + 1);
    if (!text) abort();
    size_t n = build_text(v, data + 1, size - 1, text);
    /* Added tokens decode to their text, but BOS would add some. */
    check(e, v, files[which].byte_level && p.add_bos == 0, text, n);
    free(text);
    nextok_encoder_free(e);
    return 0;
}
