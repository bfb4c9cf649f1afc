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

struct fuzz_band_probe {
    bool hit;
};

/* All finite candidates in -66 .. -44 (and more than one of them). */
static bool fuzz_in_band(const struct nextok_token_data *d, size_t n)
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

static void fuzz_band_observer(size_t i, const char *name, const struct nextok_token_data_array *cur,
                               void *user)
{
    (void)i;
    (void)name;
    struct fuzz_band_probe *h = user;
    if (fuzz_in_band(cur->data, cur->size)) h->hit = true;
}

/* Known defects of the fused path on rows whose logits all sit near -48 ..
 * -60 (issue 14 item 10 and the fuzz findings in fuzz/crashers/README.md):
 * typical-p never returns; top-p keeps tokens it should cut, drops a tied
 * one, or reads before its stack array. True if the row, or the
 * candidates any stage leaves, lie wholly inside -66 .. -44. Decided on a
 * copy of c with an observer (which runs the plain chain, never the fused
 * one). */
static bool fuzz_known_minus60_band(const struct nextok_chain *c, const void *row,
                                    enum nextok_dtype dt, size_t V)
{
    struct nextok_token_data *d = malloc((V ? V : 1) * sizeof *d);
    if (!d) return true; /* cannot tell: skip */
    for (size_t k = 0; k < V; k++) {
        float x = dt == NEXTOK_DTYPE_F32 ? ((const float *)row)[k]
                : dt == NEXTOK_DTYPE_F16 ? nextok_f16_to_f32(((const uint16_t *)row)[k])
                                         : nextok_bf16_to_f32(((const uint16_t *)row)[k]);
        d[k] = (struct nextok_token_data){(int32_t)k, x, 0.0f};
    }
    struct fuzz_band_probe h = {fuzz_in_band(d, V)};
    free(d);
    struct nextok_chain *probe = NULL;
    if (h.hit || nextok_chain_clone(c, &probe) != NEXTOK_OK) return true;
    nextok_chain_set_observer(probe, fuzz_band_observer, &h);
    int32_t tok;
    (void)nextok_chain_sample(probe, row, dt, &tok);
    nextok_chain_free(probe);
    return h.hit;
}

#endif
