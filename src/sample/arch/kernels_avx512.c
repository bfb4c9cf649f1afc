/*
 * AVX-512 (F, BW, VL, DQ) kernels, 16 lanes; the tail is one masked load, so
 * there is no scalar remainder loop. Compaction uses the register form of
 * vcompressps followed by a plain store (the memory form is microcoded and
 * slow on AMD Zen 4).
 */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <math.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

/* 16 elements from i (lanes at or past n read as -inf, never counted). */
AI __m512 load16(const void *row, enum nextok_dtype dt, size_t i, __mmask16 k)
{
    if (dt == NEXTOK_DTYPE_F32)
        return _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, (const float *)row + i);
    __m256i h = _mm256_maskz_loadu_epi16(k, (const uint16_t *)row + i);
    __m512 x;
    if (dt == NEXTOK_DTYPE_F16) x = _mm512_cvtph_ps(h);
    else x = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_mask_blend_ps(k, _mm512_set1_ps(-INFINITY), x);
}

AI __mmask16 tail_mask(size_t left) { return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1u); }

#define BY_DTYPE(fn, dt, ...)                                          \
    (dt == NEXTOK_DTYPE_F16    ? fn(NEXTOK_DTYPE_F16, __VA_ARGS__)     \
     : dt == NEXTOK_DTYPE_BF16 ? fn(NEXTOK_DTYPE_BF16, __VA_ARGS__)    \
                               : fn(NEXTOK_DTYPE_F32, __VA_ARGS__))

/* non-finite lanes: exponent all ones (the -inf padding of a tail is masked out) */
AI __mmask16 nonfinite16(__m512 x, __mmask16 k)
{
    const __m512i em = _mm512_set1_epi32(0x7f800000);
    return _mm512_mask_cmpeq_epi32_mask(k, _mm512_and_si512(_mm512_castps_si512(x), em), em);
}

/* ---- max ------------------------------------------------------------------ */

AI float max_impl(enum nextok_dtype dt, const void *row, size_t n, int *nonfinite, float *amax)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    const __m512i absm = _mm512_set1_epi32(0x7fffffff);
    __m512 a0 = ninf, a1 = ninf;
    __m512i b0 = _mm512_setzero_si512(), b1 = b0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 x0 = load16(row, dt, i, 0xffff), x1 = load16(row, dt, i + 16, 0xffff);
        a0 = _mm512_max_ps(x0, a0);
        a1 = _mm512_max_ps(x1, a1);
        b0 = _mm512_max_epu32(b0, _mm512_and_si512(_mm512_castps_si512(x0), absm));
        b1 = _mm512_max_epu32(b1, _mm512_and_si512(_mm512_castps_si512(x1), absm));
    }
    int nf = 0;
    for (; i < n; i += 16) {
        __mmask16 k = tail_mask(n - i);
        __m512 x = load16(row, dt, i, k);
        a0 = _mm512_max_ps(x, a0);
        nf |= nonfinite16(x, k) != 0;
        /* |bits| of the real lanes only (the -inf padding is not the row's) */
        b0 = _mm512_mask_max_epu32(b0, k, b0, _mm512_and_si512(_mm512_castps_si512(x), absm));
    }
    const uint32_t ab = _mm512_reduce_max_epu32(_mm512_max_epu32(b0, b1));
    nf |= ab >= 0x7f800000u;
    if (amax) memcpy(amax, &ab, sizeof *amax); /* |x| bits order as |x| does */
    *nonfinite |= nf;
    return _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
}

static float avx512_max(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite)
{
    return BY_DTYPE(max_impl, dt, row, n, nonfinite, NULL);
}

static float avx512_max_abs(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite,
                            float *amax)
{
    return BY_DTYPE(max_impl, dt, row, n, nonfinite, amax);
}

/* ---- count / compact ------------------------------------------------------ */

AI size_t count_impl(enum nextok_dtype dt, const void *row, size_t n, float thr)
{
    const __m512 t = _mm512_set1_ps(thr);
    size_t c = 0;
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 k = tail_mask(n - i);
        c += (size_t)__builtin_popcount(
            (unsigned)_mm512_mask_cmp_ps_mask(k, load16(row, dt, i, k), t, _CMP_GE_OQ));
    }
    return c;
}

static size_t avx512_count_ge(const void *row, enum nextok_dtype dt, size_t n, float thr)
{
    return BY_DTYPE(count_impl, dt, row, n, thr);
}

AI size_t emit16(__m512 x, __mmask16 m, int32_t first, int32_t *ids, float *vals, size_t cap,
                 size_t c)
{
    const unsigned cnt = (unsigned)__builtin_popcount(m);
    const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(first),
                                         _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                           12, 13, 14, 15));
    __m512 cv = _mm512_maskz_compress_ps(m, x);
    __m512i ci = _mm512_maskz_compress_epi32(m, idx);
    if (c + 16 <= cap) {
        _mm512_storeu_ps(vals + c, cv);
        _mm512_storeu_si512((void *)(ids + c), ci);
    } else if (c < cap) {
        float vb[16];
        int32_t ib[16];
        _mm512_storeu_ps(vb, cv);
        _mm512_storeu_si512((void *)ib, ci);
        for (unsigned j = 0; j < cnt && c + j < cap; j++) {
            vals[c + j] = vb[j];
            ids[c + j] = ib[j];
        }
    }
    return c + cnt;
}

AI size_t compact_impl(enum nextok_dtype dt, const void *row, size_t n, float thr, int32_t base,
                       int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    const __m512 t = _mm512_set1_ps(thr);
    const __m512i em = _mm512_set1_epi32(0x7f800000);
    __mmask16 nf = 0;
    size_t c = 0, i = 0;
    /* 64 elements behind one rarely-taken branch: on peaked rows almost no
     * chunk has a survivor; on flat rows (hundreds of survivors) the outer
     * branch is taken less often than four per-vector ones would be
     * (measured: 2.9x -> 2.7x the read pass on the flat top-k chain) */
    for (; i + 64 <= n; i += 64) {
        __m512 x0 = load16(row, dt, i, 0xffff), x1 = load16(row, dt, i + 16, 0xffff);
        __m512 x2 = load16(row, dt, i + 32, 0xffff), x3 = load16(row, dt, i + 48, 0xffff);
        nf |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(x0), em), em);
        nf |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(x1), em), em);
        nf |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(x2), em), em);
        nf |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(x3), em), em);
        __mmask16 m0 = _mm512_cmp_ps_mask(x0, t, _CMP_GE_OQ);
        __mmask16 m1 = _mm512_cmp_ps_mask(x1, t, _CMP_GE_OQ);
        __mmask16 m2 = _mm512_cmp_ps_mask(x2, t, _CMP_GE_OQ);
        __mmask16 m3 = _mm512_cmp_ps_mask(x3, t, _CMP_GE_OQ);
        if (__builtin_expect((m0 | m1 | m2 | m3) != 0, 0)) {
            if (m0) c = emit16(x0, m0, base + (int32_t)i, ids, vals, cap, c);
            if (m1) c = emit16(x1, m1, base + (int32_t)(i + 16), ids, vals, cap, c);
            if (m2) c = emit16(x2, m2, base + (int32_t)(i + 32), ids, vals, cap, c);
            if (m3) c = emit16(x3, m3, base + (int32_t)(i + 48), ids, vals, cap, c);
        }
    }
    for (; i < n; i += 16) {
        __mmask16 k = tail_mask(n - i);
        __m512 x = load16(row, dt, i, k);
        nf |= nonfinite16(x, k);
        __mmask16 m = _mm512_mask_cmp_ps_mask(k, x, t, _CMP_GE_OQ);
        if (m) c = emit16(x, m, base + (int32_t)i, ids, vals, cap, c);
    }
    *nonfinite |= nf != 0;
    return c;
}

static size_t avx512_compact_ge(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                int32_t base, int32_t *ids, float *vals, size_t cap,
                                int *nonfinite)
{
    return BY_DTYPE(compact_impl, dt, row, n, thr, base, ids, vals, cap, nonfinite);
}

/* ---- histogram -------------------------------------------------------------- */

AI int hist_impl(enum nextok_dtype dt, const void *row, size_t n, float lo, unsigned shift,
                 uint32_t *bins, unsigned nbins)
{
    const __m512 l = _mm512_set1_ps(lo);
    uint32_t ulo;
    memcpy(&ulo, &lo, sizeof ulo);
    const __m512i klo = _mm512_set1_epi32((int)nextok__fkey_bits(ulo));
    const __m512i top = _mm512_set1_epi32((int)(nbins - 1));
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 k = tail_mask(n - i);
        __m512 x = load16(row, dt, i, k);
        __mmask16 m = _mm512_mask_cmp_ps_mask(k, x, l, _CMP_GE_OQ);
        if (!m) continue;
        __m512i u = _mm512_castps_si512(x);
        __m512i s = _mm512_srai_epi32(u, 31);
        __m512i key = _mm512_xor_si512(u, _mm512_or_si512(s, _mm512_set1_epi32((int)0x80000000u)));
        __m512i b = _mm512_srl_epi32(_mm512_sub_epi32(key, klo), _mm_cvtsi32_si128((int)shift));
        b = _mm512_min_epu32(b, top);
        uint32_t kb[16];
        _mm512_storeu_si512((void *)kb, b);
        unsigned mm = m;
        while (mm) {
            bins[kb[__builtin_ctz(mm)]]++;
            mm &= mm - 1;
        }
    }
    return 0;
}

static void avx512_histogram(const void *row, enum nextok_dtype dt, size_t n, float lo,
                             unsigned shift, uint32_t *bins, unsigned nbins)
{
    (void)BY_DTYPE(hist_impl, dt, row, n, lo, shift, bins, nbins);
}

/* ---- sum / sum of squares (estimate) ---------------------------------------- */

AI int sumsq_impl(enum nextok_dtype dt, const void *row, size_t n, float div, double center,
                  double *sum, double *sumsq)
{
    const __m512 dv = _mm512_set1_ps(div);
    const __m512d c = _mm512_set1_pd(center);
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
    size_t i = 0;
    /* an estimate (order free): two 16-element groups per iteration on their
     * own accumulators keep four add chains in flight; x / 1 == x, so no
     * division without a temperature */
    __m512d s2 = s0, s3 = s0, q2 = s0, q3 = s0;
    for (; i + 32 <= n; i += 32) {
        __m512 va = load16(row, dt, i, 0xffff), vb = load16(row, dt, i + 16, 0xffff);
        if (div != 1.0f) {
            va = _mm512_div_ps(va, dv);
            vb = _mm512_div_ps(vb, dv);
        }
        const __m512d a0 = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(va)), c);
        const __m512d a1 = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(va, 1)), c);
        const __m512d b0 = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(vb)), c);
        const __m512d b1 = _mm512_sub_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(vb, 1)), c);
        s0 = _mm512_add_pd(s0, a0);
        s1 = _mm512_add_pd(s1, a1);
        s2 = _mm512_add_pd(s2, b0);
        s3 = _mm512_add_pd(s3, b1);
        q0 = _mm512_fmadd_pd(a0, a0, q0);
        q1 = _mm512_fmadd_pd(a1, a1, q1);
        q2 = _mm512_fmadd_pd(b0, b0, q2);
        q3 = _mm512_fmadd_pd(b1, b1, q3);
    }
    s0 = _mm512_add_pd(s0, s2);
    s1 = _mm512_add_pd(s1, s3);
    q0 = _mm512_add_pd(q0, q2);
    q1 = _mm512_add_pd(q1, q3);
    for (; i < n; i += 16) {
        __mmask16 k = tail_mask(n - i);
        __m512 v = load16(row, dt, i, k);
        if (div != 1.0f) v = _mm512_div_ps(v, dv);
        __m512d d0 = _mm512_maskz_sub_pd((__mmask8)k, _mm512_cvtps_pd(_mm512_castps512_ps256(v)), c);
        __m512d d1 = _mm512_maskz_sub_pd((__mmask8)(k >> 8),
                                         _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)), c);
        s0 = _mm512_add_pd(s0, d0);
        s1 = _mm512_add_pd(s1, d1);
        q0 = _mm512_fmadd_pd(d0, d0, q0);
        q1 = _mm512_fmadd_pd(d1, d1, q1);
    }
    *sum = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    *sumsq = _mm512_reduce_add_pd(_mm512_add_pd(q0, q1));
    return 0;
}

static void avx512_sum_sq(const void *row, enum nextok_dtype dt, size_t n, float div,
                          double center, double *sum, double *sumsq)
{
    (void)BY_DTYPE(sumsq_impl, dt, row, n, div, center, sum, sumsq);
}

/* ---- exp sum (estimate): same polynomial as the AVX2 kernel ------------------ */

AI __m512 exp16(__m512 d)
{
    const __m512 lo = _mm512_set1_ps(-87.0f);
    __mmask16 keep = _mm512_cmp_ps_mask(d, lo, _CMP_GE_OQ);
    d = _mm512_max_ps(d, lo);
    __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(d, _mm512_set1_ps(1.44269504f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145752f), d);
    f = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.42860677e-6f), f);
    __m512 p = _mm512_set1_ps(1.0f / 720.0f);
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(keep, p, k);
}

static double avx512_exp_sum(const float *x, size_t n, float m)
{
    const __m512 mv = _mm512_set1_ps(m);
    __m512d a0 = _mm512_setzero_pd(), a1 = a0;
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 k = tail_mask(n - i);
        __m512 e = _mm512_maskz_mov_ps(k, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), mv)));
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
        a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

/* ---- canonical weights (kernels.h: nextok__expw, nextok__wblock) ------------ */

/* The table of nextok__expw with the scale folded in: tab[j] - (N << 23)
 * (mod 2^32, as the reference's sum). */
AI __m512i wtab16_of(const struct nextok__wref *ref)
{
    return _mm512_sub_epi32(_mm512_loadu_si512((const void *)nextok__expw_tab),
                            _mm512_set1_epi32((int32_t)((uint32_t)ref->n << 23)));
}

/* nextok__expw on 16 lanes of x = l - c: the same IEEE and integer
 * operations in the same order. vpermd takes the index from the low 4 bits
 * of each lane of bits(t), as the reference's tb & 15. cut = 0: the caller
 * has no cut-off (nextok__wref_unscaled); else the x < cut lanes are zeroed by
 * the last fma's mask, whatever they computed. */
AI __m512 expw16c(__m512 x, __m512i tab, __m512 cutv, int cut)
{
    const __m512 mg = _mm512_set1_ps(NEXTOK__EXPW_MAGIC);
    const __m512 t = _mm512_fmadd_ps(x, _mm512_set1_ps(NEXTOK__EXPW_LOG2E16), mg);
    const __m512 r = _mm512_fnmadd_ps(_mm512_sub_ps(t, mg), _mm512_set1_ps(NEXTOK__EXPW_LN2_16), x); /* = fmaf(-k, ln2/16, x) */
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(NEXTOK__EXPW_C3), r, _mm512_set1_ps(NEXTOK__EXPW_C2));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
    const __m512i tb = _mm512_castps_si512(t);
    const __m512 s = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_permutexvar_epi32(tb, tab), _mm512_slli_epi32(tb, 19)));
    if (!cut)
        return _mm512_fmadd_ps(_mm512_mul_ps(s, r), q, s);
    const __mmask16 keep = _mm512_cmp_ps_mask(x, cutv, _CMP_NLT_UQ); /* !(x < cut) */
    return _mm512_maskz_fmadd_ps(keep, _mm512_mul_ps(s, r), q, s);
}

/* v = x or sat(x / div), as temp.c */
AI __m512 temp16s(__m512 x, float div, int sat)
{
    if (div == 1.0f) return x;
    if (!sat) return _mm512_div_ps(x, _mm512_set1_ps(div)); /* unscaled: an overflow shows in vmax */
    const __m512 fm = _mm512_set1_ps(3.40282347e38f);
    x = _mm512_div_ps(x, _mm512_set1_ps(div));
    return _mm512_max_ps(_mm512_min_ps(x, fm), _mm512_sub_ps(_mm512_setzero_ps(), fm));
}

/* The tree of nextok__wblock over 16 double lanes (a0: lanes 0-7, a1: 8-15). */
AI double tree16(__m512d a0, __m512d a1)
{
    const __m512d h = _mm512_add_pd(a0, a1);
    const __m256d q = _mm256_add_pd(_mm512_castpd512_pd256(h), _mm512_extractf64x4_pd(h, 1));
    const __m128d d = _mm_add_pd(_mm256_castpd256_pd128(q), _mm256_extractf128_pd(q, 1));
    return _mm_cvtsd_f64(_mm_add_sd(d, _mm_unpackhi_pd(d, d)));
}

/* full = 0: ref is nextok__wref_unscaled (no subtraction, no cut-off test,
 * no saturation: an overflowing quotient is inf, which vmax reports) */
AI void weights_impl(enum nextok_dtype dt, const void *row, size_t n, float div,
                     const struct nextok__wref *ref, int full, float *w, double *bsum, double *cum,
                     float *vmin, float *vmax)
{
    const __m512 cv = _mm512_set1_ps(ref->c), cutv = _mm512_set1_ps(ref->cut);
    const __m512i tab = wtab16_of(ref);
    __m512 lo = _mm512_set1_ps(INFINITY), hi = _mm512_set1_ps(-INFINITY);
    size_t b = 0;
    double acc = 0.0; /* the running sum: its latency hides behind the exps */
    for (; (b + 1) * 64 <= n; b++) {
        __m512 a = _mm512_setzero_ps();
        for (size_t j = 0; j < 4; j++) { /* lane sums in float, in order */
            const size_t i = b * 64 + j * 16;
            const __m512 v = temp16s(load16(row, dt, i, 0xffff), div, full);
            lo = _mm512_min_ps(v, lo); /* NaN v: lo kept */
            hi = _mm512_max_ps(v, hi);
            const __m512 e = expw16c(full ? _mm512_sub_ps(v, cv) : v, tab, cutv, full);
            _mm512_storeu_ps(w + i, e);
            a = _mm512_add_ps(a, e);
        }
        bsum[b] = tree16(_mm512_cvtps_pd(_mm512_castps512_ps256(a)), _mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1)));
        cum[b] = acc += bsum[b];
    }
    for (size_t i = b * 64; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 v = temp16s(load16(row, dt, i, k), div, full);
        lo = _mm512_mask_min_ps(lo, k, v, lo);
        hi = _mm512_mask_max_ps(hi, k, v, hi);
        const __m512 e = expw16c(full ? _mm512_sub_ps(v, cv) : v, tab, cutv, full);
        _mm512_mask_storeu_ps(w + i, k, e);
    }
    if (b * 64 < n) { /* the partial block */
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
        cum[b] = acc + bsum[b];
    }
    *vmin = _mm512_reduce_min_ps(lo);
    *vmax = _mm512_reduce_max_ps(hi);
}

static void avx512_weights(const void *row, enum nextok_dtype dt, size_t n, float div,
                           const struct nextok__wref *ref, float *w, double *bsum, double *cum,
                           float *vmin, float *vmax)
{
    /* div == 1 and the tests as constants: four loops without per-vector
     * branches */
    const int full = !nextok__wref_is_unscaled(ref);
    if (div == 1.0f && !full) BY_DTYPE(weights_impl, dt, row, n, 1.0f, ref, 0, w, bsum, cum, vmin, vmax);
    else if (div == 1.0f) BY_DTYPE(weights_impl, dt, row, n, 1.0f, ref, 1, w, bsum, cum, vmin, vmax);
    else if (!full) BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, w, bsum, cum, vmin, vmax);
    else BY_DTYPE(weights_impl, dt, row, n, div, ref, 1, w, bsum, cum, vmin, vmax);
}

static void avx512_expw(const float *x, size_t n, const struct nextok__wref *ref, float *w)
{
    const __m512 cv = _mm512_set1_ps(ref->c), cutv = _mm512_set1_ps(ref->cut);
    const __m512i tab = wtab16_of(ref);
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
        _mm512_mask_storeu_ps(w + i, k, expw16c(_mm512_sub_ps(v, cv), tab, cutv, 1));
    }
}

/* ---- typical-p's S (kernels.h: nextok__wvblock) ------------------------------ */

/* Lanes 0-7 (a0) and 8-15 (a1) of one block: 16 elements at i, the products
 * widened to double (exact), added in order; masked-off lanes add nothing. */
AI void wv16(enum nextok_dtype dt, const void *row, const float *w, size_t i, float div,
             __mmask16 k, __m512d *a0, __m512d *a1)
{
    const __m512 v = temp16s(load16(row, dt, i, k), div, 1);
    const __m512 e = _mm512_maskz_loadu_ps(k, w + i);
    const __m512d p0 = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(e)),
                                     _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    const __m512d p1 = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)),
                                     _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
    *a0 = _mm512_mask_add_pd(*a0, (__mmask8)k, *a0, p0);
    *a1 = _mm512_mask_add_pd(*a1, (__mmask8)(k >> 8), *a1, p1);
}

AI void wvsum_impl(enum nextok_dtype dt, const void *row, size_t n, float div, const float *w,
                   double *bs)
{
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        __m512d a0 = _mm512_setzero_pd(), a1 = a0;
        for (size_t j = 0; j < 64; j += 16) wv16(dt, row, w, b * 64 + j, div, 0xffff, &a0, &a1);
        bs[b] = tree16(a0, a1);
    }
    if (b * 64 < n) { /* the partial block: masked tails */
        __m512d a0 = _mm512_setzero_pd(), a1 = a0;
        for (size_t i = b * 64; i < n; i += 16) wv16(dt, row, w, i, div, tail_mask(n - i), &a0, &a1);
        bs[b] = tree16(a0, a1);
    }
}

static void avx512_wvsum(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                         double *bs)
{
    if (div == 1.0f) BY_DTYPE(wvsum_impl, dt, row, n, 1.0f, w, bs);
    else BY_DTYPE(wvsum_impl, dt, row, n, div, w, bs);
}

/* ---- typical-p's scan (kernels.h: nextok__typscan_scalar) ------------------ */

/* 16 lanes: scores, masses (vcvttps2qq: the C cast's truncation), the
 * below/inside masks on the score bits; the inside lanes compressed in
 * registers and stored whole (the buffers have 16 entries of slack). */
AI size_t typscan_impl(enum nextok_dtype dt, const void *row, size_t n, float div, const float *w,
                       struct nextok__typscan *ts, float *sc, int32_t *ids, float *vals)
{
    const __m512 cv = _mm512_set1_ps(ts->center), scl = _mm512_set1_ps(ts->scale);
    const __m512 cap = _mm512_set1_ps(0x1p62f);
    const __m512i klo = _mm512_set1_epi32((int32_t)ts->klo), khi = _mm512_set1_epi32((int32_t)ts->khi);
    const __m512i step = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i qt0 = _mm512_setzero_si512(), qt1 = qt0, qb0 = qt0, qb1 = qt0;
    size_t m = 0, nb = 0;
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 v = temp16s(load16(row, dt, i, k), div, 1);
        const __m512 s = _mm512_abs_ps(_mm512_sub_ps(v, cv));
        _mm512_mask_storeu_ps(sc + i, k, s);
        const __m512 x = _mm512_min_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, w + i), scl), cap);
        const __m512i q0 = _mm512_cvttps_epi64(_mm512_castps512_ps256(x));
        const __m512i q1 = _mm512_cvttps_epi64(_mm512_extractf32x8_ps(x, 1));
        qt0 = _mm512_add_epi64(qt0, q0);
        qt1 = _mm512_add_epi64(qt1, q1);
        const __m512i key = _mm512_castps_si512(s);
        const __mmask16 below = _mm512_mask_cmplt_epu32_mask(k, key, klo);
        const __mmask16 in = _mm512_mask_cmple_epu32_mask(k & (__mmask16)~below, key, khi);
        qb0 = _mm512_mask_add_epi64(qb0, (__mmask8)below, qb0, q0);
        qb1 = _mm512_mask_add_epi64(qb1, (__mmask8)(below >> 8), qb1, q1);
        nb += (size_t)__builtin_popcount(below);
        /* no branch: a bracket holding a few percent of the row has inside
         * lanes in most vectors, and a mispredicted branch costs more than
         * the two stores */
        const __m512i id = _mm512_add_epi32(_mm512_set1_epi32((int32_t)i), step);
        _mm512_storeu_si512((void *)(ids + m), _mm512_maskz_compress_epi32(in, id));
        _mm512_storeu_ps(vals + m, _mm512_maskz_compress_ps(in, s));
        m += (size_t)__builtin_popcount(in);
    }
    ts->q_total += (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(qt0, qt1));
    ts->q_below += (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(qb0, qb1));
    ts->n_below += nb;
    return m;
}

static size_t avx512_typscan(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                             struct nextok__typscan *ts, float *sc, int32_t *ids, float *vals)
{
    if (div == 1.0f) return BY_DTYPE(typscan_impl, dt, row, n, 1.0f, w, ts, sc, ids, vals);
    return BY_DTYPE(typscan_impl, dt, row, n, div, w, ts, sc, ids, vals);
}

/* ---- widening --------------------------------------------------------------- */

static void avx512_widen(const uint16_t *src, enum nextok_dtype dt, size_t n, float *dst)
{
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 k = tail_mask(n - i);
        __m512 x = dt == NEXTOK_DTYPE_F16 ? load16(src, NEXTOK_DTYPE_F16, i, k)
                                          : load16(src, NEXTOK_DTYPE_BF16, i, k);
        _mm512_mask_storeu_ps(dst + i, k, x);
    }
}

static const struct nextok__kernels avx512_table = {
    .name = "avx512",
    .max = avx512_max,
    .max_abs = avx512_max_abs,
    .count_ge = avx512_count_ge,
    .compact_ge = avx512_compact_ge,
    .histogram = avx512_histogram,
    .sum_sq = avx512_sum_sq,
    .exp_sum = avx512_exp_sum,
    .widen = avx512_widen,
    .weights = avx512_weights,
    .expw = avx512_expw,
    .wvsum = avx512_wvsum,
    .typscan = avx512_typscan,
};

const struct nextok__kernels *nextok__kernels_avx512(void) { return &avx512_table; }

#else
const struct nextok__kernels *nextok__kernels_avx512(void) { return NULL; }
#endif
