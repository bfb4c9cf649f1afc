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

#endif
