/*
 * Row kernels: one scalar reference (kernels_ref.c, kept forever as the
 * definition), SIMD versions written once in a mapping layer (simd.h; the
 * bodies in kernels_body.h, compiled for AVX2 in kernels_avx2.c and for
 * AVX-512 in kernels_avx512.c), and a dispatch that picks one ISA once by
 * cpuid (dispatch.c). NEXTOK_SIMD=OFF builds the reference alone.
 *
 * The kernels come in two tables of the same ISA:
 *   struct nextok__kernels        generic row primitives (maxima, compaction,
 *                                 widening, canonical weights of an array,
 *                                 probabilities): any sampler may use them;
 *   struct nextok__fused_kernels  the fused path's steps (fused*.c): passes
 *                                 over a dense row specific to one filter
 *                                 (top-n-sigma's sums, min-p's and top-p's
 *                                 weights and masses, typical-p's scan).
 *
 * Every kernel reads a row of n elements of dtype "as it is": f16/bf16 are
 * widened exactly in registers, never converted into a buffer. Every kernel
 * gives bit-identical results to the reference (tests/test_simd.c), except
 * the sums of sum_sq and sum_sq_dbl, which are added in a different
 * order and are only used with an error bound (they never decide a token on
 * their own; sum_sq's maximum and non-finite flag are exact).
 *
 * "Non-finite" means NaN or ±inf; kernels that scan a row report whether they
 * saw one so the caller can hand such rows to the plain chain.
 *
 * NEON: a simd_neon.h implementing simd.h's vocabulary and a kernels_neon.c
 * including it and kernels_body.h would fill both tables (dispatch.c picks
 * it on aarch64); until then other ISAs use the reference.
 */
#ifndef NEXTOK_ARCH_KERNELS_H
#define NEXTOK_ARCH_KERNELS_H

#include "nextok.h"

#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

struct nextok__wref;
struct nextok__typscan;

/* Generic row primitives. */
struct nextok__kernels {
    const char *name; /* "ref", "avx2", "avx512" */

    /* Largest element (NaN ignored; -inf if none or n == 0). *nonfinite |= a
     * NaN or ±inf was seen. */
    float (*max)(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite);

    /* The largest element of every block of NEXTOK__BLK elements: bmax[b]
     * for b < ceil(n / NEXTOK__BLK) (the last block may be short); returns
     * that count. *nonfinite |= a NaN or ±inf was seen. Defined for finite
     * rows: when *nonfinite is set, bmax is unspecified (callers hand such
     * rows over). ±0 may come back as either zero. */
    size_t (*block_max)(const void *row, enum nextok_dtype dt, size_t n, float *bmax, int *nonfinite);

    /* Elements x >= thr in index order: ids[j] = base + i and vals[j] = x for
     * the first cap of them; returns how many there are in all (may exceed
     * cap). *nonfinite |= a NaN or ±inf was seen anywhere in the row. */
    size_t (*compact_ge)(const void *row, enum nextok_dtype dt, size_t n, float thr,
                         int32_t base, int32_t *ids, float *vals, size_t cap, int *nonfinite);

    /* compact_ge(row, dt, n, thr, 0, ...) for a finite row, reading only the
     * blocks whose bmax[b] (block_max of the same row) is >= thr: the others
     * hold no element >= thr. *nonfinite may report a NaN or ±inf in the
     * blocks read but need not (block_max reported them). */
    size_t (*compact_blocks)(const void *row, enum nextok_dtype dt, size_t n, float thr,
                             const float *bmax, int32_t *ids, float *vals, size_t cap, int *nonfinite);

    /* Candidates from a compacted set: for i < n, v = vals[i] (div == 1) or
     * sat(vals[i] / div) in float (the temperature stage's value: one IEEE
     * division, then ±inf clamped to ±FLT_MAX); those with v >= thr (float
     * compare) are written in order as out[k++] = {ids[i], v, 0}. Returns k.
     * Bit-identical in every ISA. */
    size_t (*cands_ge)(const int32_t *ids, const float *vals, size_t n, float div, float thr,
                       struct nextok_token_data *out);

    /* dst[i] = exact f32 value of the f16/bf16 src[i]. */
    void (*widen)(const uint16_t *src, enum nextok_dtype dt, size_t n, float *dst);

    /* w[i] = nextok__expw(x[i], ref) for i < n. Bit-identical in every ISA. */
    void (*expw)(const float *x, size_t n, const struct nextok__wref *ref, float *w);

    /* p[i] = (float)((double)w[i] / z) for i < n (one IEEE double division,
     * then one rounding to float: bit-identical in every ISA). */
    void (*probs)(const float *w, size_t n, double z, float *p);
};

/* The fused path's steps (src/sample/fused/). */
struct nextok__fused_kernels {
    const char *name; /* as its struct nextok__kernels' */

    /* ---- a token bitmask (nextok_sampler_init_token_bitmask): element i of
     * a row is allowed iff bit i % 32 of mask[i / 32] is set (i counted from
     * the row's id 0: a kernel given base reads bit base + i, base a
     * multiple of 32). Non-finite values are reported wherever they are,
     * allowed or not (the plain chain's input rules see the whole row). */

    /* How many of the ids 0 .. n-1 the mask allows. */
    size_t (*count_allowed)(const uint32_t *mask, size_t n);
    /* max over the allowed elements (-inf if none). */
    float (*max_masked)(const void *row, enum nextok_dtype dt, size_t n, const uint32_t *mask,
                        int *nonfinite);
    /* block_max over the allowed elements (a block without one: -inf). */
    size_t (*block_max_masked)(const void *row, enum nextok_dtype dt, size_t n, const uint32_t *mask,
                               float *bmax, int *nonfinite);
    /* compact_ge of the allowed elements (ids base + i). */
    size_t (*compact_masked)(const void *row, enum nextok_dtype dt, size_t n, float thr, int32_t base,
                             const uint32_t *mask, int32_t *ids, float *vals, size_t cap, int *nonfinite);
    /* compact_blocks of the allowed elements (bmax: block_max_masked's). */
    size_t (*compact_blocks_masked)(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                    const float *bmax, const uint32_t *mask, int32_t *ids, float *vals,
                                    size_t cap, int *nonfinite);
    /* weights with w[i] = 0 for a disallowed element, which vmin, vmax and
     * bmax leave out (+inf, -inf and -inf when no element is allowed).
     * Bit-identical in every ISA. */
    void (*weights_masked)(const void *row, enum nextok_dtype dt, size_t n, float div,
                           const struct nextok__wref *ref, const uint32_t *mask, float *w, double *bsum,
                           double *cum, float *bmax, float *vmin, float *vmax);

    /* One pass for top-n-sigma: returns the largest element and sets
     * *nonfinite exactly as max does; and, with v = x / div in float (div >
     * 0; x itself when div == 1; not saturated) and d = v - center in float
     * (one rounding), the sums of d and of d * d (an estimate: order
     * unspecified, used with an error bound). Every version adds d and d * d
     * (fma: one rounding) into float partial sums of at most
     * NEXTOK__SUMSQ_BLOCK terms each, widens those to double and adds them in
     * double; so each computed sum is within ((B + 2) 2^-24 + (n + 8)
     * 2^-53) of the sum of its terms' magnitudes (B = NEXTOK__SUMSQ_BLOCK),
     * Σ|v - center| and Σ(v - center)² (fused.c, sigma_bounds), plus n
     * 2^-149 for the sum of squares (a square or partial that underflows to
     * a float subnormal is off by up to 2^-150 per rounding; sums and
     * differences that are subnormal are exact). A non-finite
     * element makes *sumsq non-finite (inf or NaN); so can a finite row
     * whose quotients or squares overflow. */
    float (*sum_sq)(const void *row, enum nextok_dtype dt, size_t n, float div, float center,
                    int *nonfinite, double *sum, double *sumsq);

    /* The same sums with every term in double (top-n-sigma's tight second
     * try): d = (double)v - center (one rounding), d and d * d added in
     * double lanes (order unspecified); each sum within (n + 8) 2^-53 of
     * the sum of its terms' magnitudes (plus n 2^-1074 for underflowing
     * squares). No max, no non-finite flag: sum_sq gave those. */
    void (*sum_sq_dbl)(const void *row, enum nextok_dtype dt, size_t n, float div, double center,
                       double *sum, double *sumsq);

    /* Canonical weights (docs/semantics.md, Probabilities) of a dense row,
     * index = token id: v_i = x_i (div == 1) or sat(x_i / div) in float, then
     * w[i] = nextok__expw(v_i, ref) and bsum[b] = nextok__wblock(w + 64 b,
     * len) for every block b < ceil(n / 64), and the running sums cum[b] =
     * cum[b-1] + bsum[b] (cum[-1] = 0; cum[last] = Z). *vmin / *vmax: the
     * smallest / largest v_i (NaN ignored; +inf / -inf when none); bmax (if
     * not NULL): bmax[g] = the largest v_i of ids 256 g .. 256 g + 255 (NaN
     * ignored; one horizontal reduction per four blocks keeps it cheap).
     * Bit-identical in every ISA (tests/test_simd.c checks with memcmp).
     * With ref = &nextok__wref_unscaled (c = 0, no cut-off, N = 0) there is
     * no saturation either (an overflowing quotient is ±inf, which vmin/vmax
     * report) and the SIMD loops drop the subtraction and the tests: the
     * one-pass path (docs/design.md), valid when nextok__wref_unscaled_ok
     * (vmin, vmax) holds. */
    void (*weights)(const void *row, enum nextok_dtype dt, size_t n, float div,
                    const struct nextok__wref *ref, float *w, double *bsum, double *cum,
                    float *bmax, float *vmin, float *vmax);

    /* min-p's dense set (fused.c): as weights, but w[i] = 0 unless the raw
     * x_i >= ge (NaN: 0), and neither extremes nor maxima: w, bsum and cum
     * only. The kept v_i must lie where ref is valid (the caller's
     * nextok__wref_unscaled_ok or the set's canonical reference); the other
     * lanes are zeroed whatever they computed. Bit-identical in every ISA. */
    void (*weights_ge)(const void *row, enum nextok_dtype dt, size_t n, float div,
                       const struct nextok__wref *ref, float ge, float *w, double *bsum, double *cum);

    /* Elements lo <= x <= hi (NaN never) in index order: ids[j] = base + i and
     * vals[j] = x for the first cap of them; returns how many there are. */
    size_t (*compact_range)(const void *row, enum nextok_dtype dt, size_t n, float lo, float hi,
                            int32_t base, int32_t *ids, float *vals, size_t cap);

    /* top-p's cut on a dense row of weights (fused.c): w[i] = 0 unless x_i >=
     * gt, or x_i >= eq and i <= cut (raw values: the caller maps the
     * processed cut back); then bsum[b] = nextok__wblock(w + 64 b, len) for
     * every block. Bit-identical in every ISA. */
    void (*cut_weights)(const void *row, enum nextok_dtype dt, size_t n, float gt, float eq,
                        int32_t cut, float *w, double *bsum);

    /* top-p's masses above four raw thresholds (fused.c): with q_i =
     * nextok__mass_q(w[i], scale), q[0] = the sum of every q_i and q[1 + j]
     * = the sum over x_i >= thr[j]; cnt (if not NULL) likewise counts
     * elements (NaN x_i: only in q[0] / cnt[0]). Integer sums: exact in any
     * order. gmax (may be NULL) is a hint the caller vouches for: a group of
     * 256 elements g (ids 256 g ..) with !(gmax[g] >= gth) holds no x_i >=
     * any thr[j], so its elements only add to q[0] / cnt[0] (on peaked rows
     * top-p's thresholds are high and most groups take that short loop).
     * The result is the same with or without it. */
    void (*mass_above)(const void *row, enum nextok_dtype dt, size_t n, const float *w, float scale,
                       const float thr[4], const float *gmax, float gth, uint64_t q[5], uint64_t cnt[5]);

    /* top-p's masses around one band (fused_top_p.c), with q_i as
     * mass_above's: q[0] = the sum of every q_i, q[1] = the sum over x_i >=
     * hi, q[2] = the sum over x_i >= lo (lo <= hi); cnt (if not NULL)
     * likewise counts (NaN x_i: only in q[0] / cnt[0]). The band's elements,
     * x_i >= lo and not x_i >= hi (lo <= x_i < hi), in index order: ids[j]
     * = base + i and vals[j] = x_i for the first cap of them; returns how
     * many there are.
     * gmax/gth: mass_above's hint (a group below gth holds no x_i >= lo).
     * Integer sums: the same in every ISA. */
    size_t (*mass_band)(const void *row, enum nextok_dtype dt, size_t n, const float *w, float scale,
                        float hi, float lo, const float *gmax, float gth, uint64_t q[3],
                        uint64_t cnt[3], int32_t base, int32_t *ids, float *vals, size_t cap);

    /* typical-p's S (docs/semantics.md) per block: bs[b] = nextok__wvblock
     * of block b (b < ceil(n / 64)) with the given weights w and v_i = x_i
     * (div == 1) or sat(x_i / div), as weights computes them with a
     * canonical reference. Bit-identical in every ISA (every product is
     * exact in double, the additions are in one fixed order). */
    void (*wvsum)(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                  double *bs);

    /* typical-p's scan (fused.c, fuse_typical), defined by
     * nextok__typscan_scalar below. ids/vals need room for n + 16; the
     * masses must sum below 2^62 (w < 2 and n scale <= 2^61, as top-p's).
     * Bit-identical in every ISA (integer sums, no rounding differences). */
    size_t (*typscan)(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                      struct nextok__typscan *ts, float *sc, int32_t *ids, float *vals);

    /* typical-p's cut on a dense row of weights (fused_typical.c): w[i] = 0
     * unless bits(sc[i]) < klo (scores are >= +0 or NaN: as unsigned
     * integers their bits order as they do, NaN above everything), then
     * bsum[b] = nextok__wblock(w + 64 b, len) for every block. Bit-identical
     * in every ISA. */
    void (*cut_keys)(float *w, const float *sc, size_t n, uint32_t klo, double *bsum);
};

/* compact_blocks by calls of a compact_ge per run of blocks that reach thr
 * (every table's; the blocks are listed without a branch on the data, 256
 * at a time). block (may be NULL) takes the full
 * blocks of runs shorter than NEXTOK__SPARSE_RUN one at a time: it appends
 * the elements >= thr of the NEXTOK__BLK ids from i0 at count c (stored
 * while c < cap) and returns the new count; it need not look for non-finite
 * values (block_max did). */
#define NEXTOK__SPARSE_RUN 4
typedef size_t (*nextok__block_fn)(const void *row, enum nextok_dtype dt, size_t i0, float thr, int32_t *ids,
                                   float *vals, size_t cap, size_t c);
size_t nextok__compact_blocks_by(size_t (*compact_ge)(const void *, enum nextok_dtype, size_t, float,
                                                      int32_t, int32_t *, float *, size_t, int *),
                                 nextok__block_fn block, const void *row, enum nextok_dtype dt, size_t n,
                                 float thr, const float *bmax, int32_t *ids, float *vals, size_t cap,
                                 int *nonfinite);

/* compact_blocks_masked by calls of a compact_masked per run of blocks that
 * reach thr (every table's). */
typedef size_t (*nextok__compact_masked_fn)(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                            int32_t base, const uint32_t *mask, int32_t *ids, float *vals,
                                            size_t cap, int *nonfinite);
size_t nextok__compact_blocks_masked_by(nextok__compact_masked_fn compact, const void *row, enum nextok_dtype dt,
                                        size_t n, float thr, const float *bmax, const uint32_t *mask, int32_t *ids,
                                        float *vals, size_t cap, int *nonfinite);

/* The tables for this CPU, of one ISA (NEXTOK_FORCE_REF=1 in the
 * environment forces the reference, NEXTOK_FORCE_AVX2=1 AVX2 on an AVX-512
 * CPU). Chosen once (pthread_once), then read-only. */
const struct nextok__kernels *nextok__kernels(void);
const struct nextok__fused_kernels *nextok__fused_kernels(void);
/* Individual tables: NULL where not compiled (NEXTOK_SIMD=OFF, other ISAs);
 * compiled tables are usable only where the CPU has the ISA. */
const struct nextok__kernels *nextok__kernels_ref(void);
const struct nextok__kernels *nextok__kernels_avx2(void);
const struct nextok__kernels *nextok__kernels_avx512(void);
const struct nextok__fused_kernels *nextok__fused_kernels_ref(void);
const struct nextok__fused_kernels *nextok__fused_kernels_avx2(void);
const struct nextok__fused_kernels *nextok__fused_kernels_avx512(void);

/* Most terms in one float partial sum of the sum_sq kernel. */
#define NEXTOK__SUMSQ_BLOCK 16

/* block_max's block: 512 elements (a 128256-id row has 251 blocks). */
#define NEXTOK__BLK 512

/* The temperature stage's value of x, as temp.c computes it: x itself when
 * div == 1, else x / div in float (one IEEE division) saturated to
 * ±FLT_MAX (nextok__sat) when sat; NaN stays NaN. The scalar form every
 * kernel uses for single elements. */
static inline float nextok__tempv(float x, float div, int sat)
{
    if (div == 1.0f) return x;
    x = x / div;
    if (sat && x > 3.40282347e38f) x = 3.40282347e38f;
    if (sat && x < -3.40282347e38f) x = -3.40282347e38f;
    return x;
}

/* Order-preserving key of a float: a < b (as floats, not NaN) iff key(a) < key(b);
 * -0 and +0 get adjacent keys (key(-0) + 1 == key(+0)). */
static inline uint32_t nextok__fkey_bits(uint32_t u)
{
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/* ---- the canonical exponential and block sums --------------------------------
 *
 * One arithmetic for every engine and ISA: each step below is a single IEEE
 * operation (fmaf is one rounding; so are the SIMD fused multiply-adds), the
 * same ones in the same order in kernels_ref.c and kernels_body.h (every
 * ISA), so all give the same bits. (Arch files are compiled with
 * -ffp-contract=off as a second guard.)
 */
#define NEXTOK__EXPW_MAGIC 12582912.0f      /* 1.5 * 2^23: fma rounds to integer */
#define NEXTOK__EXPW_LOG2E 1.44269504088896341f
#define NEXTOK__EXPW_LN2 0.693147182464599609375f /* float(ln 2), 1.9e-9 high */
/* 16 log2 e and ln2 / 16 as floats: the floats above times 2^4 and 2^-4
 * (scaling by a power of two is exact), so the reduction has the same
 * constant error as a one-constant reduction with float(ln 2). */
#define NEXTOK__EXPW_LOG2E16 23.0831203460693359375f /* 16 * float(log2 e) exactly */
#define NEXTOK__EXPW_LN2_16 0.0433216989040374755859375f /* float(ln 2) / 16 exactly */
/* exp(r) on |r| <= ln2/32 (+ 2^-30) by Taylor to degree 3: 1 + r (1 + r (1/2
 * + r / 6)); truncation r^4/24 <= 9.2e-9 relative. */
#define NEXTOK__EXPW_C2 0.5f
#define NEXTOK__EXPW_C3 0.166666671633720398f /* float(1/6) */

/* Table of 2^(j/16), j = 0..15, each the float nearest to it (relative error
 * below 4.8e-8), stored as bits(float(2^(j/16))) - (j << 19): adding the
 * reduced integer k's bits shifted left by 19 (j = k mod 16 lands in
 * mantissa bits 19..22, floor(k/16) in the exponent field) gives exactly
 * bits(float(2^(j/16))) + (floor(k/16) << 23), i.e. the float 2^(j/16) 2^n. */
static const uint32_t nextok__expw_tab[16] = {
    0x3f800000u, 0x3f7daac3u, 0x3f7b95c2u, 0x3f79c3d3u, 0x3f7837f0u, 0x3f76f532u,
    0x3f75fed7u, 0x3f75583fu, 0x3f7504f3u, 0x3f7508a4u, 0x3f75672au, 0x3f76248cu,
    0x3f7744fdu, 0x3f78ccdfu, 0x3f7ac0c7u, 0x3f7d257du,
};

/* The reference of a candidate set's canonical weights (docs/semantics.md,
 * Canonical weights), a function of its largest logit M only:
 *   c   = 0 when |M| <= 2^15, else M: subtracted from every logit (x = l - c);
 *   cut = fl(xM - 60) with xM = M - c: a weight is 0 below it;
 *   n   = N = floor(K / 16), K = round(16 log2e xM) (the k of xM below):
 *         every weight is scaled by 2^-N, so the largest is in [0.97, 2).
 * Scaling by 2^-N is exact; weights computed with n = 0 (and no cut-off)
 * are the canonical ones times 2^N exactly whenever nothing falls under the
 * cut-off and nothing overflows (nextok__wref_unscaled_ok), which lets the
 * fused path compute them before it knows M. */
struct nextok__wref {
    float c;
    float cut;
    int32_t n;
};

/* The canonical weight of logit l (docs/semantics.md): x = l - c (float);
 * 0 if !(x >= cut) (also NaN); else
 *   t = fma(x, 16 log2 e, 1.5 * 2^23): rounds 16 x log2 e to the nearest
 *       integer k (ties to even), held in t's low mantissa bits (|k| < 2^22,
 *       so bits(t) = 0x4B400000 + k exactly);
 *   r = fma(-(t - 1.5 * 2^23), ln2/16, x): t - 1.5 * 2^23 = k exactly
 *       (Sterbenz), the fma rounds once: |r| <= ln2/32 + 2^-30;
 *   q = fma(fma(1/6, r, 1/2), r, 1)          (two roundings, near 1);
 *   s = the float with bits tab[bits(t) & 15] + (bits(t) << 19) - (N << 23)
 *       (mod 2^32) = 2^(j/16) 2^(n - N) with j = k mod 16, n = floor(k / 16):
 *       integer arithmetic, exact; x >= cut keeps n - N >= -89, s normal;
 *   w = fma(s * r, q, s) = s (1 + r q) (one rounding for s r, one for w).
 * Relative error against exp(x) 2^-N: table 4.8e-8, truncation 9.2e-9, the
 * last rounding 6e-8, the s r / q roundings 2e-9, r's rounding 1e-9, and the
 * constant ln2/16's error, k 1.2e-10 = |x| 2.7e-9: below 1.3e-7 + 3e-9 |x|
 * (every float in [-86, 0] checked: at most 1.11e-7 + 3e-9 |x|).
 * SIMD versions (kernels_body.h, expw_v): the same operations (fnmadd(a,
 * b, c) = fma(-a, b, c), a 16-entry table lookup (N folded into it) by the
 * low 4 bits of bits(t), the same 32-bit integer shift and add), so every
 * ISA gives the same bits for any input. */
static inline float nextok__expw(float l, const struct nextok__wref *ref)
{
    const float x = l - ref->c;
    if (x < ref->cut) return 0.0f;
    const float t = fmaf(x, NEXTOK__EXPW_LOG2E16, NEXTOK__EXPW_MAGIC);
    const float r = fmaf(-(t - NEXTOK__EXPW_MAGIC), NEXTOK__EXPW_LN2_16, x);
    float q = fmaf(NEXTOK__EXPW_C3, r, NEXTOK__EXPW_C2);
    q = fmaf(q, r, 1.0f);
    uint32_t tb, sb;
    memcpy(&tb, &t, sizeof tb);
    sb = nextok__expw_tab[tb & 15u] + (tb << 19) - ((uint32_t)ref->n << 23);
    float s;
    memcpy(&s, &sb, sizeof s);
    const float u = s * r;
    return fmaf(u, q, s);
}

/* K = round(16 log2e x) as nextok__expw rounds it (|x| <= 2^15). */
static inline int32_t nextok__expw_k(float x)
{
    const float t = fmaf(x, NEXTOK__EXPW_LOG2E16, NEXTOK__EXPW_MAGIC);
    uint32_t tb;
    memcpy(&tb, &t, sizeof tb);
    return (int32_t)(tb - 0x4B400000u);
}

/* The reference of a set whose largest logit is M (finite). */
static inline struct nextok__wref nextok__wref_of(float M)
{
    struct nextok__wref r;
    r.c = fabsf(M) <= 32768.0f ? 0.0f : M;
    const float xm = M - r.c;
    r.cut = xm - 60.0f;
    const int32_t k = nextok__expw_k(xm);
    r.n = k >= 0 ? k / 16 : -((15 - k) / 16); /* floor(k / 16) */
    return r;
}

/* c = 0, no cut-off, N = 0: the weights before the scale is known. */
static const struct nextok__wref nextok__wref_unscaled = {0.0f, -INFINITY, 0};

/* Whether ref is nextok__wref_unscaled (the one reference without a cut-off). */
static inline int nextok__wref_is_unscaled(const struct nextok__wref *ref)
{
    return ref->cut == -INFINITY;
}

/*
 * When weights computed with nextok__wref_unscaled over values in [lo, hi]
 * equal the canonical weights of a set with maximum M (lo <= M <= hi) times
 * 2^N exactly, N = nextok__wref_of(M).n: lo >= -60, hi <= 80, lo >= fl(hi -
 * 60). Then c = 0 (|M| <= 80), no value is under the cut-off (fl(M - 60) <=
 * fl(hi - 60) <= lo), and only s differs, by the exact factor 2^N: both s
 * (2^-87 .. 2^116 unscaled, 2^-89 .. 2 scaled) are normal, so s r is
 * normal in both unless |r| < 2^-33, and then w rounds to s in both (s r q
 * is below 2^-32 s, far from s's rounding boundaries). Sums of such weights
 * (float lanes of four: below 2^119; doubles) scale exactly too.
 */
static inline int nextok__wref_unscaled_ok(float lo, float hi)
{
    return lo >= -60.0f && hi <= 80.0f && lo >= hi - 60.0f;
}

/* The weights kernels' group maxima (256 ids), element by element (NaN
 * ignored). */
#define NEXTOK__BMAX_IDS 256
static inline void nextok__bmax_put(float *bmax, size_t i, float v)
{
    float *m = bmax + i / NEXTOK__BMAX_IDS;
    if (i % NEXTOK__BMAX_IDS == 0) *m = -INFINITY;
    if (v > *m) *m = v;
}

/* Combine 16 lane sums by the fixed tree: h[l] = a[l] + a[l+8], q[l] = h[l] +
 * h[l+4], d[l] = q[l] + q[l+2], d[0] + d[1] (the SIMD reductions' order). */
static inline double nextok__wtree(const double a[16])
{
    double h[8], q[4];
    for (int l = 0; l < 8; l++) h[l] = a[l] + a[l + 8];
    for (int l = 0; l < 4; l++) q[l] = h[l] + h[l + 4];
    return (q[0] + q[2]) + (q[1] + q[3]);
}

/* Canonical sum of one block (len <= 64 weights of ids 64b .. 64b+len-1):
 * lane l adds w[l], w[l+16], w[l+32], w[l+48] in float, in that order, from
 * +0 (four terms: relative error below 2e-7); the 16 lane sums are widened to
 * double and combined by the tree. Absent elements count as +0, which leaves
 * every sum unchanged, so a sparse set gives the same bits as a dense row. */
static inline double nextok__wblock(const float *w, size_t len)
{
    float a[16] = {0};
    if (len == 64) /* the same additions, in a shape compilers vectorise */
        for (size_t j = 0; j < 64; j += 16)
            for (size_t l = 0; l < 16; l++) a[l] += w[j + l];
    else
        for (size_t i = 0; i < len; i++) a[i & 15] += w[i];
    double d[16];
    for (int l = 0; l < 16; l++) d[l] = (double)a[l];
    return nextok__wtree(d);
}

/* typical-p's S of one block (len <= 64 ids 64b .. 64b+len-1): lane l adds
 * the products (double)w[i] (double)v[i] of i = l, l+16, l+32, l+48 in that
 * order from +0 (each product is exact: 24 x 24 bits, in range), the lanes
 * combined by the tree. An absent id (w = 0, v finite) adds a zero, which
 * changes no sum: lanes start at +0 and never become -0. A contracted fma
 * gives the same bits, the product being exact. */
static inline double nextok__wvblock(const float *w, const float *v, size_t len)
{
    double a[16] = {0};
    for (size_t i = 0; i < len; i++) a[i & 15] += (double)w[i] * (double)v[i];
    return nextok__wtree(a);
}

/* In/out of the typical scan: the centre c, the mass scale, and a bracket of
 * score bits [klo, khi]; the sums it adds to. */
struct nextok__typscan {
    float center, scale;
    uint32_t klo, khi;
    uint64_t q_total, q_below; /* added to */
    size_t n_below;            /* added to */
};

/* The typical scan's definition: with v_i as wvsum's and s_i = |v_i - c|
 * (float; >= +0, so bits(s_i) orders as s_i does), sc[i] = s_i; the mass
 * q_i = floor(min(w_i scale, 2^62)) (as nextok__mass_q) of every i is added
 * to q_total, of those with bits(s_i) < klo to q_below (counted in n_below);
 * those with klo <= bits(s_i) <= khi are compacted in index order (ids[j] =
 * i, vals[j] = s_i). Returns their count. */
static inline size_t nextok__typscan_scalar(const float *v, size_t n, size_t base, const float *w,
                                            struct nextok__typscan *ts, float *sc, int32_t *ids,
                                            float *vals)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const float s = fabsf(v[i] - ts->center);
        uint32_t k;
        memcpy(&k, &s, sizeof k);
        const float x = w[i] * ts->scale;
        const uint64_t q = (uint64_t)(int64_t)(x < 0x1p62f ? x : 0x1p62f);
        sc[i] = s;
        ts->q_total += q;
        if (k < ts->klo) {
            ts->q_below += q;
            ts->n_below++;
        } else if (k <= ts->khi) {
            ids[m] = (int32_t)(base + i);
            vals[m++] = s;
        }
    }
    return m;
}

#if defined(__F16C__)
#include <immintrin.h>

/* Element i of a row, exactly widened (F16C for f16): the x86 mappings' scalar
 * steps (compiled with F16C), without a call per element. */
static inline float nextok__elem(enum nextok_dtype dt, const void *row, size_t i)
{
    if (dt == NEXTOK_DTYPE_F32) return ((const float *)row)[i];
    const uint16_t h = ((const uint16_t *)row)[i];
    if (dt == NEXTOK_DTYPE_F16) return _cvtsh_ss(h);
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
#endif

#endif
