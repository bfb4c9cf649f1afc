/*
 * Row kernels of the fused path: one scalar reference (kernels_ref.c, kept
 * forever as the definition), AVX2 and AVX-512 versions, and a dispatch table
 * filled once by cpuid (dispatch.c).
 *
 * Every kernel reads a row of n elements of dtype "as it is": f16/bf16 are
 * widened exactly in registers, never converted into a buffer. Every kernel
 * gives bit-identical results to the reference (tests/test_simd.c), except
 * sum_sq and exp_sum, whose results are sums in a different order and are
 * only used with an error bound (they never decide a token on their own).
 *
 * "Non-finite" means NaN or ±inf; kernels that scan a row report whether they
 * saw one so the caller can hand such rows to the plain chain.
 *
 * NEON: a kernels_neon.c filling the same table would slot in next to these
 * (dispatch.c picks it on aarch64); until then other ISAs use the reference.
 */
#ifndef NEXTOK_ARCH_KERNELS_H
#define NEXTOK_ARCH_KERNELS_H

#include "nextok.h"

#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

struct nextok__kernels {
    const char *name; /* "ref", "avx2", "avx512" */

    /* Largest element (NaN ignored; -inf if none or n == 0). *nonfinite |= a
     * NaN or ±inf was seen. */
    float (*max)(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite);

    /* Number of elements x with x >= thr (NaN never counts). */
    size_t (*count_ge)(const void *row, enum nextok_dtype dt, size_t n, float thr);

    /* Elements x >= thr in index order: ids[j] = base + i and vals[j] = x for
     * the first cap of them; returns how many there are in all (may exceed
     * cap). *nonfinite |= a NaN or ±inf was seen anywhere in the row. */
    size_t (*compact_ge)(const void *row, enum nextok_dtype dt, size_t n, float thr,
                         int32_t base, int32_t *ids, float *vals, size_t cap, int *nonfinite);

    /* Histogram of the order-preserving key (nextok__fkey) of elements x >= lo:
     * bin min((key(x) - key(lo)) >> shift, nbins - 1) += 1. bins not cleared. */
    void (*histogram)(const void *row, enum nextok_dtype dt, size_t n, float lo,
                      unsigned shift, uint32_t *bins, unsigned nbins);

    /* With v = x / div in float (div > 0; as the temperature stage computes
     * it): sum of (v - center) and of (v - center)^2 in double (order
     * unspecified: an estimate, used with an error bound). */
    void (*sum_sq)(const void *row, enum nextok_dtype dt, size_t n, float div, double center,
                   double *sum, double *sumsq);

    /* Approximate sum of exp(x_i - m) over f32 x, x_i <= m (relative error of
     * each term below 2^-20; order unspecified). For estimates only. */
    double (*exp_sum)(const float *x, size_t n, float m);

    /* dst[i] = exact f32 value of the f16/bf16 src[i]. */
    void (*widen)(const uint16_t *src, enum nextok_dtype dt, size_t n, float *dst);

    /* Canonical weights (docs/semantics.md, Probabilities) of a dense row,
     * index = token id: v_i = x_i (div == 1) or sat(x_i / div) in float, then
     * w[i] = nextok__expw(v_i - m) (float subtraction) and bsum[b] =
     * nextok__wblock(w + 64 b, len) for every block b < ceil(n / 64), and the
     * running sums cum[b] = cum[b-1] + bsum[b] (cum[-1] = 0; cum[last] = Z).
     * Bit-identical in every ISA (tests/test_simd.c checks with memcmp). */
    void (*weights)(const void *row, enum nextok_dtype dt, size_t n, float div, float m,
                    float *w, double *bsum, double *cum);

    /* w[i] = nextok__expw(x[i] - m) for i < n. Bit-identical in every ISA. */
    void (*expw)(const float *x, size_t n, float m, float *w);
};

/* The table for this CPU (NEXTOK_FORCE_REF=1 in the environment forces the
 * reference). Initialised once (pthread_once), then read-only. */
const struct nextok__kernels *nextok__kernels(void);
/* Individual tables (the AVX ones are NULL where not compiled/supported). */
const struct nextok__kernels *nextok__kernels_ref(void);
const struct nextok__kernels *nextok__kernels_avx2(void);
const struct nextok__kernels *nextok__kernels_avx512(void);

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
 * same ones in the same order in kernels_ref.c, kernels_avx2.c and
 * kernels_avx512.c, so all give the same bits. (Arch files are compiled with
 * -ffp-contract=off as a second guard.)
 */
#define NEXTOK__EXPW_XMIN (-86.0f)          /* below: weight 0 (exp < 4.5e-38)  */
#define NEXTOK__EXPW_MAGIC 12582912.0f      /* 1.5 * 2^23: fma rounds to integer */
#define NEXTOK__EXPW_LOG2E 1.44269504088896341f
#define NEXTOK__EXPW_LN2 0.693147182464599609375f /* float(ln 2), 1.9e-9 high */
/* exp(r) = 1 + r (1 + r g(r)), g a degree-4 Chebyshev interpolant of
 * (e^r - 1 - r) / r^2 on |r| <= ln2/2: evaluated in float with fmas, relative
 * error below 7e-8 (plus |n| 1.9e-9 from the one-constant reduction). */
#define NEXTOK__EXPW_G0 5.000000000e-01f
#define NEXTOK__EXPW_G1 1.666657776e-01f
#define NEXTOK__EXPW_G2 4.166655615e-02f
#define NEXTOK__EXPW_G3 8.363173343e-03f
#define NEXTOK__EXPW_G4 1.392617589e-03f

/* The canonical weight exp(x) for x <= 0 (docs/semantics.md): 0 below -86;
 * else t = fma(x, log2 e, 1.5 * 2^23) rounds x log2 e to the nearest integer n
 * (ties to even) held in t's low mantissa bits; r = fma(-n, ln2, x); p(r) by
 * Horner in fmas; 2^n applied by adding n << 23 (= bits(t) << 23 mod 2^32)
 * to p's bits: exact, as n >= -124 and p in [0.7, 1.42] keep it normal. */
static inline float nextok__expw(float x)
{
    if (!(x >= NEXTOK__EXPW_XMIN)) return 0.0f;
    const float t = fmaf(x, NEXTOK__EXPW_LOG2E, NEXTOK__EXPW_MAGIC);
    const float r = fmaf(-(t - NEXTOK__EXPW_MAGIC), NEXTOK__EXPW_LN2, x);
    float p = NEXTOK__EXPW_G4;
    p = fmaf(p, r, NEXTOK__EXPW_G3);
    p = fmaf(p, r, NEXTOK__EXPW_G2);
    p = fmaf(p, r, NEXTOK__EXPW_G1);
    p = fmaf(p, r, NEXTOK__EXPW_G0);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    uint32_t tb, pb;
    memcpy(&tb, &t, sizeof tb);
    memcpy(&pb, &p, sizeof pb);
    pb += tb << 23;
    memcpy(&p, &pb, sizeof p);
    return p;
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

#endif
