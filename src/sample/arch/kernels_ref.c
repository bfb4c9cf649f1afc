/*
 * Scalar reference kernels: the definition every SIMD version is tested
 * against (tests/test_simd.c). Kept forever; also the fallback on CPUs
 * without AVX2 and when NEXTOK_FORCE_REF=1.
 */
#include "kernels.h"

#include <math.h>
#include <string.h>

float nextok_f16_to_f32(uint16_t h);
float nextok_bf16_to_f32(uint16_t h);

static inline float ld(const void *row, enum nextok_dtype dt, size_t i)
{
    if (dt == NEXTOK_DTYPE_F16) return nextok_f16_to_f32(((const uint16_t *)row)[i]);
    if (dt == NEXTOK_DTYPE_BF16) return nextok_bf16_to_f32(((const uint16_t *)row)[i]);
    return ((const float *)row)[i];
}

static inline int nonfinite_f(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x7f800000u) == 0x7f800000u;
}

static inline uint32_t fkey(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return nextok__fkey_bits(u);
}

static float ref_max(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite)
{
    float m = -INFINITY;
    int nf = 0;
    for (size_t i = 0; i < n; i++) {
        float x = ld(row, dt, i);
        nf |= nonfinite_f(x);
        if (x > m) m = x;
    }
    *nonfinite |= nf;
    return m;
}

static float ref_max_abs(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite,
                         float *amax)
{
    float a = 0.0f;
    for (size_t i = 0; i < n; i++) {
        const float x = fabsf(ld(row, dt, i));
        if (x > a) a = x;
    }
    *amax = a;
    return ref_max(row, dt, n, nonfinite);
}

static size_t ref_count_ge(const void *row, enum nextok_dtype dt, size_t n, float thr)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ld(row, dt, i) >= thr;
    return c;
}

static size_t ref_compact_ge(const void *row, enum nextok_dtype dt, size_t n, float thr,
                             int32_t base, int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    size_t c = 0;
    int nf = 0;
    for (size_t i = 0; i < n; i++) {
        float x = ld(row, dt, i);
        nf |= nonfinite_f(x);
        if (x >= thr) {
            if (c < cap) {
                ids[c] = base + (int32_t)i;
                vals[c] = x;
            }
            c++;
        }
    }
    *nonfinite |= nf;
    return c;
}

static void ref_histogram(const void *row, enum nextok_dtype dt, size_t n, float lo,
                          unsigned shift, uint32_t *bins, unsigned nbins)
{
    const uint32_t klo = fkey(lo);
    for (size_t i = 0; i < n; i++) {
        float x = ld(row, dt, i);
        if (!(x >= lo)) continue;
        uint32_t b = (fkey(x) - klo) >> shift;
        bins[b < nbins ? b : nbins - 1]++;
    }
}

static void ref_sum_sq(const void *row, enum nextok_dtype dt, size_t n, float div,
                       double center, double *sum, double *sumsq)
{
    double s = 0.0, q = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)(ld(row, dt, i) / div) - center;
        s += d;
        q += d * d;
    }
    *sum = s;
    *sumsq = q;
}

static double ref_exp_sum(const float *x, size_t n, float m)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += exp((double)x[i] - (double)m);
    return s;
}

static void ref_widen(const uint16_t *src, enum nextok_dtype dt, size_t n, float *dst)
{
    for (size_t i = 0; i < n; i++) dst[i] = ld(src, dt, i);
}

/* The definition of the canonical weights: element by element, block by block. */
static void ref_weights(const void *row, enum nextok_dtype dt, size_t n, float div,
                        const struct nextok__wref *ref, float *w, double *bsum, double *cum,
                        float *vmin, float *vmax)
{
    const int sat = !nextok__wref_is_unscaled(ref);
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        float v = ld(row, dt, i);
        if (div != 1.0f) {
            v = v / div; /* saturate as temp.c does (nextok__sat); unscaled: not */
            if (sat && v > 3.40282347e38f) v = 3.40282347e38f;
            if (sat && v < -3.40282347e38f) v = -3.40282347e38f;
        }
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        w[i] = nextok__expw(v, ref);
    }
    double acc = 0.0;
    for (size_t b = 0; b * 64 < n; b++) {
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64 < 64 ? n - b * 64 : 64);
        cum[b] = acc += bsum[b];
    }
    *vmin = lo;
    *vmax = hi;
}

static void ref_expw(const float *x, size_t n, const struct nextok__wref *ref, float *w)
{
    for (size_t i = 0; i < n; i++) w[i] = nextok__expw(x[i], ref);
}

/* The definition of typical-p's blocked S: the values as ref_weights makes
 * them (saturating), block by block. */
static void ref_wvsum(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                      double *bs)
{
    float v[64];
    for (size_t b = 0; b * 64 < n; b++) {
        const size_t len = n - b * 64 < 64 ? n - b * 64 : 64;
        for (size_t i = 0; i < len; i++) {
            float x = ld(row, dt, b * 64 + i);
            if (div != 1.0f) {
                x = x / div;
                if (x > 3.40282347e38f) x = 3.40282347e38f;
                if (x < -3.40282347e38f) x = -3.40282347e38f;
            }
            v[i] = x;
        }
        bs[b] = nextok__wvblock(w + b * 64, v, len);
    }
}

/* The typical scan 64 values at a time (the values as ref_wvsum's). */
static size_t ref_typscan(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                          struct nextok__typscan *ts, float *sc, int32_t *ids, float *vals)
{
    float v[64];
    size_t m = 0;
    for (size_t b = 0; b < n; b += 64) {
        const size_t len = n - b < 64 ? n - b : 64;
        for (size_t i = 0; i < len; i++) {
            float x = ld(row, dt, b + i);
            if (div != 1.0f) {
                x = x / div;
                if (x > 3.40282347e38f) x = 3.40282347e38f;
                if (x < -3.40282347e38f) x = -3.40282347e38f;
            }
            v[i] = x;
        }
        m += nextok__typscan_scalar(v, len, b, w + b, ts, sc + b, ids + m, vals + m);
    }
    return m;
}

static const struct nextok__kernels ref_table = {
    .name = "ref",
    .max = ref_max,
    .max_abs = ref_max_abs,
    .count_ge = ref_count_ge,
    .compact_ge = ref_compact_ge,
    .histogram = ref_histogram,
    .sum_sq = ref_sum_sq,
    .exp_sum = ref_exp_sum,
    .widen = ref_widen,
    .weights = ref_weights,
    .expw = ref_expw,
    .wvsum = ref_wvsum,
    .typscan = ref_typscan,
};

const struct nextok__kernels *nextok__kernels_ref(void) { return &ref_table; }
