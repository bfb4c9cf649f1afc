/* Shared by the vocabulary fuzz targets: a vocabulary that loaded must answer
 * every query and decode the same whole and streamed (abort() otherwise). */
#ifndef NEXTOK_FUZZ_VOCAB_H
#define NEXTOK_FUZZ_VOCAB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"

/* Decode ids 0..n-1 whole and one at a time; they must agree. */
static void fuzz_exercise_vocab(const struct nextok_vocab *v)
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

#endif
