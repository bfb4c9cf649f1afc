/*
 * Scalar reference kernels: the definition every SIMD version is tested
 * against (tests/test_simd.c). Kept forever; also the fallback on CPUs
 * without AVX2, on other ISAs, with NEXTOK_SIMD=OFF and when
 * NEXTOK_FORCE_REF=1.
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

static size_t ref_block_max(const void *row, enum nextok_dtype dt, size_t n, float *bmax, int *nonfinite)
{
    const size_t esz = nextok_dtype_size(dt), nb = (n + NEXTOK__BLK - 1) / NEXTOK__BLK;
    for (size_t b = 0; b < nb; b++) {
        const size_t i = b * NEXTOK__BLK, len = n - i < NEXTOK__BLK ? n - i : NEXTOK__BLK;
        bmax[b] = ref_max((const char *)row + i * esz, dt, len, nonfinite);
    }
    return nb;
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

static size_t ref_cands_ge(const int32_t *ids, const float *vals, size_t n, float div, float thr,
                           struct nextok_token_data *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        float v = nextok__tempv(vals[i], div, 1);
        if (v >= thr) out[k++] = (struct nextok_token_data){ids[i], v, 0.0f};
    }
    return k;
}

/* Float partial sums of 16 consecutive elements (NEXTOK__SUMSQ_BLOCK),
 * widened and added in double. */
static float ref_sum_sq(const void *row, enum nextok_dtype dt, size_t n, float div, float center,
                        int *nonfinite, double *sum, double *sumsq)
{
    double s = 0.0, q = 0.0;
    for (size_t i = 0; i < n; i += NEXTOK__SUMSQ_BLOCK) {
        float fs = 0.0f, fq = 0.0f;
        for (size_t j = i; j < n && j < i + NEXTOK__SUMSQ_BLOCK; j++) {
            const float d = ld(row, dt, j) / div - center;
            fs += d;
            fq = fmaf(d, d, fq);
        }
        s += fs;
        q += fq;
    }
    *sum = s;
    *sumsq = q;
    return ref_max(row, dt, n, nonfinite);
}

static void ref_sum_sq_dbl(const void *row, enum nextok_dtype dt, size_t n, float div,
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

static void ref_widen(const uint16_t *src, enum nextok_dtype dt, size_t n, float *dst)
{
    for (size_t i = 0; i < n; i++) dst[i] = ld(src, dt, i);
}

/* bsum[b] = nextok__wblock(w + 64 b, ..) for every block, cum[b] their running sums. */
static void block_sums(const float *w, size_t n, double *bsum, double *cum)
{
    double acc = 0.0;
    for (size_t b = 0; b * 64 < n; b++) {
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64 < 64 ? n - b * 64 : 64);
        cum[b] = acc += bsum[b];
    }
}

/* The definition of the canonical weights: element by element, block by block. */
static void ref_weights(const void *row, enum nextok_dtype dt, size_t n, float div,
                        const struct nextok__wref *ref, float *w, double *bsum, double *cum,
                        float *bmax, float *vmin, float *vmax)
{
    const int sat = !nextok__wref_is_unscaled(ref);
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        float v = nextok__tempv(ld(row, dt, i), div, sat);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        if (bmax) nextok__bmax_put(bmax, i, v);
        w[i] = nextok__expw(v, ref);
    }
    block_sums(w, n, bsum, cum);
    *vmin = lo;
    *vmax = hi;
}

/* ---- a token bitmask: the same, over the allowed elements ---------------- */

static inline int allowed(const uint32_t *mask, size_t id) { return (mask[id >> 5] >> (id & 31)) & 1u; }

/* Bits set in x (the SWAR sum: no popcount instruction in a portable build). */
static inline size_t bits_of(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (size_t)((((x + (x >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24);
}

static size_t ref_count_allowed(const uint32_t *mask, size_t n)
{
    size_t c = 0;
    for (size_t k = 0; k < n / 32; k++) c += bits_of(mask[k]);
    if (n % 32) c += bits_of(mask[n / 32] & ((UINT32_C(1) << (n % 32)) - 1));
    return c;
}

static float max_masked_at(const void *row, enum nextok_dtype dt, size_t n, size_t base, const uint32_t *mask,
                           int *nonfinite)
{
    float m = -INFINITY;
    int nf = 0;
    for (size_t i = 0; i < n; i++) {
        const float x = ld(row, dt, i);
        nf |= nonfinite_f(x);
        if (allowed(mask, base + i) && x > m) m = x;
    }
    *nonfinite |= nf;
    return m;
}

static float ref_max_masked(const void *row, enum nextok_dtype dt, size_t n, const uint32_t *mask,
                            int *nonfinite)
{
    return max_masked_at(row, dt, n, 0, mask, nonfinite);
}

static size_t ref_block_max_masked(const void *row, enum nextok_dtype dt, size_t n, const uint32_t *mask,
                                   float *bmax, int *nonfinite)
{
    const size_t esz = nextok_dtype_size(dt), nb = (n + NEXTOK__BLK - 1) / NEXTOK__BLK;
    for (size_t b = 0; b < nb; b++) {
        const size_t i = b * NEXTOK__BLK, len = n - i < NEXTOK__BLK ? n - i : NEXTOK__BLK;
        bmax[b] = max_masked_at((const char *)row + i * esz, dt, len, i, mask, nonfinite);
    }
    return nb;
}

static size_t ref_compact_masked(const void *row, enum nextok_dtype dt, size_t n, float thr, int32_t base,
                                 const uint32_t *mask, int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    size_t c = 0;
    int nf = 0;
    for (size_t i = 0; i < n; i++) {
        const float x = ld(row, dt, i);
        nf |= nonfinite_f(x);
        if (x >= thr && allowed(mask, (size_t)base + i)) {
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

static void ref_weights_masked(const void *row, enum nextok_dtype dt, size_t n, float div,
                               const struct nextok__wref *ref, const uint32_t *mask, float *w, double *bsum,
                               double *cum, float *bmax, float *vmin, float *vmax)
{
    const int sat = !nextok__wref_is_unscaled(ref);
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const float v = nextok__tempv(ld(row, dt, i), div, sat);
        const int in = allowed(mask, i);
        if (in) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        if (bmax) nextok__bmax_put(bmax, i, in ? v : -INFINITY);
        w[i] = in ? nextok__expw(v, ref) : 0.0f;
    }
    block_sums(w, n, bsum, cum);
    *vmin = lo;
    *vmax = hi;
}

static void ref_weights_ge(const void *row, enum nextok_dtype dt, size_t n, float div,
                           const struct nextok__wref *ref, float ge, float *w, double *bsum, double *cum)
{
    const int sat = !nextok__wref_is_unscaled(ref);
    for (size_t i = 0; i < n; i++) {
        const float x = ld(row, dt, i);
        w[i] = x >= ge ? nextok__expw(nextok__tempv(x, div, sat), ref) : 0.0f;
    }
    block_sums(w, n, bsum, cum);
}

static void ref_expw(const float *x, size_t n, const struct nextok__wref *ref, float *w)
{
    for (size_t i = 0; i < n; i++) w[i] = nextok__expw(x[i], ref);
}

static size_t ref_compact_range(const void *row, enum nextok_dtype dt, size_t n, float lo, float hi,
                                int32_t base, int32_t *ids, float *vals, size_t cap)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        const float x = ld(row, dt, i);
        if (!(x >= lo && x <= hi)) continue;
        if (c < cap) {
            ids[c] = base + (int32_t)i;
            vals[c] = x;
        }
        c++;
    }
    return c;
}

static void ref_cut_weights(const void *row, enum nextok_dtype dt, size_t n, float gt, float eq,
                            int32_t cut, float *w, double *bsum)
{
    for (size_t i = 0; i < n; i++) {
        const float x = ld(row, dt, i);
        if (!(x >= gt || (x >= eq && (int64_t)i <= cut))) w[i] = 0.0f;
    }
    for (size_t b = 0; b * 64 < n; b++) bsum[b] = nextok__wblock(w + b * 64, n - b * 64 < 64 ? n - b * 64 : 64);
}

/* Defined in builtin.h for the library; restated here so the arch layer
 * keeps to kernels.h (the same expression, tested equal in test_simd). */
static inline uint64_t mass_q(float w, float scale)
{
    const float x = w * scale;
    return (uint64_t)(int64_t)(x < 0x1p62f ? x : 0x1p62f);
}

static void ref_mass_above(const void *row, enum nextok_dtype dt, size_t n, const float *w,
                           float scale, const float thr[4], const float *gmax, float gth,
                           uint64_t q[5], uint64_t cnt[5])
{
    (void)gmax; /* a hint: the definition does not need it */
    (void)gth;
    uint64_t c[5] = {0, 0, 0, 0, 0};
    memset(q, 0, 5 * sizeof *q);
    for (size_t i = 0; i < n; i++) {
        const float x = ld(row, dt, i);
        const uint64_t m = mass_q(w[i], scale);
        q[0] += m;
        c[0]++;
        for (int j = 0; j < 4; j++)
            if (x >= thr[j]) q[1 + j] += m, c[1 + j]++;
    }
    if (cnt) memcpy(cnt, c, sizeof c);
}

static size_t ref_mass_band(const void *row, enum nextok_dtype dt, size_t n, const float *w,
                            float scale, float hi, float lo, const float *gmax, float gth,
                            uint64_t q[3], uint64_t cnt[3], int32_t base, int32_t *ids,
                            float *vals, size_t cap)
{
    (void)gmax; /* a hint: the definition does not need it */
    (void)gth;
    uint64_t c[3] = {0, 0, 0};
    size_t nb = 0;
    memset(q, 0, 3 * sizeof *q);
    for (size_t i = 0; i < n; i++) {
        const float x = ld(row, dt, i);
        const uint64_t m = mass_q(w[i], scale);
        q[0] += m;
        c[0]++;
        if (x >= hi) q[1] += m, c[1]++;
        if (x >= lo) q[2] += m, c[2]++;
        if (x >= lo && !(x >= hi)) {
            if (nb < cap) ids[nb] = base + (int32_t)i, vals[nb] = x;
            nb++;
        }
    }
    if (cnt) memcpy(cnt, c, sizeof c);
    return nb;
}

/* The definition of typical-p's blocked S: the values as ref_weights makes
 * them (saturating), block by block. */
static void ref_wvsum(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                      double *bs)
{
    float v[64];
    for (size_t b = 0; b * 64 < n; b++) {
        const size_t len = n - b * 64 < 64 ? n - b * 64 : 64;
        for (size_t i = 0; i < len; i++) v[i] = nextok__tempv(ld(row, dt, b * 64 + i), div, 1);
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
        for (size_t i = 0; i < len; i++) v[i] = nextok__tempv(ld(row, dt, b + i), div, 1);
        m += nextok__typscan_scalar(v, len, b, w + b, ts, sc + b, ids + m, vals + m);
    }
    return m;
}

static void ref_cut_keys(float *w, const float *sc, size_t n, uint32_t klo, double *bsum)
{
    for (size_t b = 0; b * 64 < n; b++) {
        const size_t len = n - b * 64 < 64 ? n - b * 64 : 64;
        for (size_t i = b * 64; i < b * 64 + len; i++) {
            uint32_t k;
            memcpy(&k, sc + i, sizeof k);
            if (!(k < klo)) w[i] = 0.0f;
        }
        bsum[b] = nextok__wblock(w + b * 64, len);
    }
}

static void ref_probs(const float *w, size_t n, double z, float *p)
{
    for (size_t i = 0; i < n; i++) p[i] = (float)((double)w[i] / z);
}

/* Where the run of listed blocks starting at list[j] ends. */
static size_t run_end(const uint32_t *list, size_t m, size_t j)
{
    size_t e = j + 1;
    while (e < m && list[e] == list[e - 1] + 1) e++;
    return e;
}

size_t nextok__compact_blocks_by(size_t (*compact_ge)(const void *, enum nextok_dtype, size_t, float,
                                                      int32_t, int32_t *, float *, size_t, int *),
                                 nextok__block_fn block, const void *row, enum nextok_dtype dt, size_t n,
                                 float thr, const float *bmax, int32_t *ids, float *vals, size_t cap,
                                 int *nonfinite)
{
    const size_t esz = nextok_dtype_size(dt), nb = (n + NEXTOK__BLK - 1) / NEXTOK__BLK, full = n / NEXTOK__BLK;
    uint32_t list[256];
    size_t c = 0;
    for (size_t b0 = 0; b0 < nb; b0 += 256) {
        const size_t e0 = nb - b0 < 256 ? nb : b0 + 256;
        size_t m = 0;
        for (size_t b = b0; b < e0; b++) { /* listed without a branch */
            list[m] = (uint32_t)b;
            m += bmax[b] >= thr;
        }
        /* a run crossing a chunk's end is cut there: only speed depends on it */
        for (size_t j = 0; j < m;) {
            const size_t e = run_end(list, m, j), b = list[j];
            if (block && e - j < NEXTOK__SPARSE_RUN && list[e - 1] < full) {
                for (; j < e; j++) c = block(row, dt, (size_t)list[j] * NEXTOK__BLK, thr, ids, vals, cap, c);
                continue;
            }
            const size_t i = b * NEXTOK__BLK, end = (b + (e - j)) * NEXTOK__BLK < n ? (b + (e - j)) * NEXTOK__BLK : n;
            const size_t at = c < cap ? c : cap;
            c += compact_ge((const char *)row + i * esz, dt, end - i, thr, (int32_t)i, ids + at, vals + at,
                            cap - at, nonfinite);
            j = e;
        }
    }
    return c;
}

static size_t ref_compact_blocks(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                 const float *bmax, int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    return nextok__compact_blocks_by(ref_compact_ge, NULL, row, dt, n, thr, bmax, ids, vals, cap, nonfinite);
}

size_t nextok__compact_blocks_masked_by(nextok__compact_masked_fn compact, const void *row, enum nextok_dtype dt,
                                        size_t n, float thr, const float *bmax, const uint32_t *mask, int32_t *ids,
                                        float *vals, size_t cap, int *nonfinite)
{
    const size_t esz = nextok_dtype_size(dt), nb = (n + NEXTOK__BLK - 1) / NEXTOK__BLK;
    size_t c = 0;
    for (size_t b = 0; b < nb;) {
        if (!(bmax[b] >= thr)) {
            b++;
            continue;
        }
        size_t e = b + 1; /* a run of blocks that reach thr: one call */
        while (e < nb && bmax[e] >= thr) e++;
        const size_t i = b * NEXTOK__BLK, end = e * NEXTOK__BLK < n ? e * NEXTOK__BLK : n;
        const size_t at = c < cap ? c : cap;
        c += compact((const char *)row + i * esz, dt, end - i, thr, (int32_t)i, mask, ids + at, vals + at,
                     cap - at, nonfinite);
        b = e;
    }
    return c;
}

static size_t ref_compact_blocks_masked(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                        const float *bmax, const uint32_t *mask, int32_t *ids, float *vals,
                                        size_t cap, int *nonfinite)
{
    return nextok__compact_blocks_masked_by(ref_compact_masked, row, dt, n, thr, bmax, mask, ids, vals, cap,
                                            nonfinite);
}

static const struct nextok__kernels ref_table = {
    .name = "ref",
    .max = ref_max,
    .block_max = ref_block_max,
    .compact_ge = ref_compact_ge,
    .compact_blocks = ref_compact_blocks,
    .cands_ge = ref_cands_ge,
    .widen = ref_widen,
    .expw = ref_expw,
    .probs = ref_probs,
};

static const struct nextok__fused_kernels ref_fused = {
    .name = "ref",
    .count_allowed = ref_count_allowed,
    .max_masked = ref_max_masked,
    .block_max_masked = ref_block_max_masked,
    .compact_masked = ref_compact_masked,
    .compact_blocks_masked = ref_compact_blocks_masked,
    .weights_masked = ref_weights_masked,
    .sum_sq = ref_sum_sq,
    .sum_sq_dbl = ref_sum_sq_dbl,
    .weights = ref_weights,
    .weights_ge = ref_weights_ge,
    .compact_range = ref_compact_range,
    .cut_weights = ref_cut_weights,
    .mass_above = ref_mass_above,
    .mass_band = ref_mass_band,
    .wvsum = ref_wvsum,
    .typscan = ref_typscan,
    .cut_keys = ref_cut_keys,
};

const struct nextok__kernels *nextok__kernels_ref(void) { return &ref_table; }
const struct nextok__fused_kernels *nextok__fused_kernels_ref(void) { return &ref_fused; }
