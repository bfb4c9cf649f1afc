/*
 * Helpers shared by the processor files (bias.c, penalties.c, dry.c, ngram.c,
 * min_tokens.c): id validation for accept/set_prompt, the identity fast path,
 * in-place removal and open-addressing hash arithmetic. Not API.
 */
#ifndef NEXTOK_PROC_COMMON_H
#define NEXTOK_PROC_COMMON_H

#include "builtin.h"

/* Largest number of keys an open-addressing table may hold (2^31 slots). */
#define NEXTOK__TABLE_MAX ((size_t)1 << 30)

/* accept(): the token must be a vocabulary id. */
static inline nextok_status nextok__proc_check_token(struct nextok_sampler *s, int32_t n_vocab,
                                                     int32_t token)
{
    if (token >= 0 && token < n_vocab) return NEXTOK_OK;
    return nextok_sampler_set_error(s, NEXTOK_ERR_TOKEN_RANGE, "token: %d outside [0, %d)",
                                    (int)token, (int)n_vocab);
}

/* set_prompt(): every prompt id must be a vocabulary id (checked before any change). */
static inline nextok_status nextok__proc_check_prompt(struct nextok_sampler *s, int32_t n_vocab,
                                                      const int32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= n_vocab)
            return nextok_sampler_set_error(s, NEXTOK_ERR_TOKEN_RANGE,
                                            "prompt[%zu]: token %d outside [0, %d)", i,
                                            (int)ids[i], (int)n_vocab);
    return NEXTOK_OK;
}

/*
 * The identity fast path: a full row loaded by the chain holds token t at
 * index t, so a processor touching a few ids can reach them directly instead
 * of scanning the vocabulary (llama.cpp scans every entry per step).
 */
static inline bool nextok__at_identity(const struct nextok_token_data_array *cur, int32_t id)
{
    return (size_t)id < cur->size && cur->data[id].id == id;
}

/* Marker for a candidate to remove: ids are never negative otherwise. */
#define NEXTOK__REMOVED (-1)

/*
 * Remove the candidates whose id was set to NEXTOK__REMOVED, keeping the order
 * of the survivors (a sorted array stays sorted). Nothing before `from` is
 * marked, so the pass starts there.
 */
static inline void nextok__compact_marked(struct nextok_token_data_array *cur, size_t from)
{
    size_t w = from;
    for (size_t i = from; i < cur->size; i++)
        if (cur->data[i].id != NEXTOK__REMOVED) cur->data[w++] = cur->data[i];
    cur->size = w;
    cur->selected = -1;
}

/* Fibonacci hashing (Knuth, TAOCP 6.4): top `bits` bits of key * 2^32/phi. */
static inline uint32_t nextok__slot_of(uint32_t key, unsigned bits)
{
    return (uint32_t)(key * 0x9E3779B1u) >> (32u - bits);
}

/* Table size exponent for n keys at load <= 1/2 (at least 8 slots). */
static inline unsigned nextok__table_bits(size_t n)
{
    unsigned bits = 3;
    while (bits < 31 && ((size_t)1 << bits) < 2 * n) bits++;
    return bits;
}

#endif
