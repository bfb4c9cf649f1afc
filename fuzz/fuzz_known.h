/* Inputs that hit a known defect which another change is fixing (issue 14,
 * item 10): the targets skip them (and tag them) so that a fuzz run finds
 * new defects instead of the same one again. Reproducers: fuzz/crashers/.
 * Delete each check once its fix lands. */
#ifndef NEXTOK_FUZZ_KNOWN_H
#define NEXTOK_FUZZ_KNOWN_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"

struct fuzz_hang_probe {
    const struct nextok_chain *c;
    bool hit;
};

/* All finite candidates in -66 .. -44 (and more than one of them). */
static bool fuzz_in_hang_band(const struct nextok_token_data *d, size_t n)
{
    size_t finite = 0;
    for (size_t k = 0; k < n; k++) {
        float x = d[k].logit;
        if (x == -INFINITY) continue;
        if (!(x >= -66.0f && x <= -44.0f)) return false;
        finite++;
    }
    return finite > 1;
}

static bool fuzz_is_typical(const struct nextok_chain *c, size_t i)
{
    return i < nextok_chain_n(c) && strcmp(nextok_sampler_name(nextok_chain_get(c, i)), "typical") == 0;
}

static void fuzz_hang_observer(size_t i, const char *name, const struct nextok_token_data_array *cur,
                               void *user)
{
    (void)name;
    struct fuzz_hang_probe *h = user;
    if (fuzz_is_typical(h->c, i + 1) && fuzz_in_hang_band(cur->data, cur->size)) h->hit = true;
}

/* True if typical-p would see only logits in -66 .. -44, where the fused
 * path's refinement loop (fused_typical.c) may never return. Decided on a
 * copy of c with an observer (which runs the plain chain, never the fused
 * one), so it sees the logits as they reach the typical stage. */
static bool fuzz_known_typical_hang(const struct nextok_chain *c, const void *row,
                                    enum nextok_dtype dt, size_t V)
{
    bool has_typical = false;
    for (size_t i = 0; i < nextok_chain_n(c); i++) has_typical |= fuzz_is_typical(c, i);
    if (!has_typical) return false;
    struct nextok_chain *probe = NULL;
    if (nextok_chain_clone(c, &probe) != NEXTOK_OK) return true; /* cannot tell: skip */
    struct fuzz_hang_probe h = {probe, false};
    if (fuzz_is_typical(probe, 0)) { /* typical first: it sees the row itself */
        struct nextok_token_data *d = malloc((V ? V : 1) * sizeof *d);
        for (size_t k = 0; d && k < V; k++) {
            float x = dt == NEXTOK_DTYPE_F32 ? ((const float *)row)[k]
                    : dt == NEXTOK_DTYPE_F16 ? nextok_f16_to_f32(((const uint16_t *)row)[k])
                                             : nextok_bf16_to_f32(((const uint16_t *)row)[k]);
            d[k] = (struct nextok_token_data){(int32_t)k, x, 0.0f};
        }
        h.hit = !d || fuzz_in_hang_band(d, V);
        free(d);
    }
    nextok_chain_set_observer(probe, fuzz_hang_observer, &h);
    int32_t tok;
    (void)nextok_chain_sample(probe, row, dt, &tok);
    nextok_chain_free(probe);
    return h.hit;
}

#endif
