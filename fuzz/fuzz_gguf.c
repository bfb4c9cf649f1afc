/* Fuzz target: arbitrary bytes as a GGUF file. A file that loads must answer
 * every query and decode the same whole and streamed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"

/* Decode ids 0..n-1 whole and one at a time; they must agree. */
static void exercise(const struct nextok_vocab *v)
{
    int32_t n = nextok_vocab_n_tokens(v), ids[512];
    size_t k = 0, len;
    for (int32_t i = 0; i < n && k < 512; i++, k++) {
        ids[k] = i;
        (void)nextok_vocab_token_text(v, i, &len);
        (void)nextok_vocab_token_bytes(v, i, &len);
        (void)nextok_vocab_token_type(v, i);
    }
    size_t need = 0, got = 0, pos = 0;
    (void)nextok_vocab_decode(v, ids, k, NULL, NULL, 0, &need);
    char *whole = malloc(need + 1);
    struct nextok_detok *d = NULL;
    if (!whole || nextok_detok_init(&d, v, NULL, NULL) != NEXTOK_OK) {
        free(whole);
        return;
    }
    if (nextok_vocab_decode(v, ids, k, NULL, whole, need, &need) != NEXTOK_OK) abort();
    size_t cap = nextok_detok_bound(d, 1);
    char *buf = malloc(cap);
    for (size_t i = 0; buf && i <= k; i++) {
        nextok_status rc = i < k ? nextok_detok_feed(d, &ids[i], 1, buf, cap, &got)
                                 : nextok_detok_flush(d, buf, cap, &got);
        if (rc != NEXTOK_OK || pos + got > need || memcmp(whole + pos, buf, got) != 0) abort();
        pos += got;
    }
    if (buf && pos != need) abort();
    free(buf);
    free(whole);
    nextok_detok_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct nextok_vocab *v = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status rc = nextok_vocab_load_gguf_mem(&v, data, size, &err);
    if (rc != NEXTOK_OK) {
        if (v || err.msg[0] == '\0') abort(); /* failures carry a message */
        return 0;
    }
    exercise(v);
    nextok_vocab_free(v);
    return 0;
}
