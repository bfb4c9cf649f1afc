/*
 * The canonical weights' arithmetic that every engine shares (the chain's
 * samplers and the fused path): sets of weights in id order and the
 * categorical walk over them, top-p's integer masses, Mirostat v2's
 * threshold. Plain sequential double arithmetic; the per-element weight and
 * block sum are the inline definitions in kernels.h. docs/semantics.md,
 * "Probabilities", defines all of it.
 */
#ifndef NEXTOK_ARCH_CANONICAL_H
#define NEXTOK_ARCH_CANONICAL_H

#include "kernels.h"

/* Saturate to ±FLT_MAX so processed logits stay finite (the temperature
 * stage's rule). */
static inline float nextok__sat(float x)
{
    if (x > 3.40282347e38f) return 3.40282347e38f;
    if (x < -3.40282347e38f) return -3.40282347e38f;
    return x;
}

/* Canonical weights of a candidate set in id order and the categorical draw
 * over them (docs/semantics.md; canonical.c). Sparse sets (the chain) have
 * bstart; a dense row indexed by token id (the fused path) has bstart NULL
 * and block k = ids 64k .. 64k+63. */
struct nextok__wset {
    const float *w;       /* weights, ids ascending                */
    size_t n;
    const double *cum;    /* running sums of the block sums        */
    const size_t *bstart; /* first index of each block; NULL: 64 k */
    size_t nb;
    double z;             /* cum[nb - 1]                           */
    const double *bsum;   /* dense sets (bstart NULL): block sums; a block
                           * of sum 0 may hold unwritten weights (fused
                           * top-p skips the groups it proves empty), so
                           * readers of every weight skip it. NULL: every
                           * weight is valid. */
};
size_t nextok__wset_sparse(const int32_t *ids, const float *w, size_t n, double *cum,
                           size_t *bstart);
double nextok__wset_cum(const double *bsum, size_t from, size_t nb, double *cum);
size_t nextok__wset_draw(const struct nextok__wset *s, double u);

/* Top-p mass (docs/semantics.md, top-p): candidate i of a set of n weighs
 * q_i = floor(w_i 2^s) with w_i its canonical weight and s =
 * nextok__mass_shift(n), an integer; sums of q are exact (n 2^s <= 2^62), so
 * they do not depend on the order of the additions. */
unsigned nextok__mass_shift(size_t n);
static inline uint64_t nextok__mass_q(float w, float scale /* 2^s */)
{
    /* w scale (a canonical weight, below 2, times 2^s; scale may also hold
     * the fused path's 2^-N) is exact and below 2^62: truncation = floor.
     * The clamp only tames values a caller subtracts again (NaN included). */
    const float x = w * scale;
    return (uint64_t)(int64_t)(x < 0x1p62f ? x : 0x1p62f);
}
/* ceil(p Q) exactly (p in (0, 1)). */
uint64_t nextok__mass_target(float p, uint64_t q);

/* Mirostat v2 (docs/semantics.md): keep candidates with (double)l >= this
 * (ref the canonical reference of the set's maximum, z the canonical Z
 * relative to it, mu the state). */
double nextok__miro2_threshold(const struct nextok__wref *ref, double z, float mu);
#endif
