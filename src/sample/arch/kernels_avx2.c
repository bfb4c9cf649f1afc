/*
 * AVX2 + FMA + F16C kernels (compiled with -mavx2 -mfma -mf16c; called only
 * after cpuid said so). 8 lanes; the n % 8 tail runs the scalar definition.
 * f16 rows are widened with vcvtph2ps and bf16 rows with a 16-bit shift, both
 * exact, in registers.
 */
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <math.h>
#include <string.h>

#define AI static inline __attribute__((always_inline))

AI __m256 load8(const void *row, enum nextok_dtype dt, size_t i)
{
    if (dt == NEXTOK_DTYPE_F32) return _mm256_loadu_ps((const float *)row + i);
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)row + i));
    if (dt == NEXTOK_DTYPE_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

AI int nonfinite1(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x7f800000u) == 0x7f800000u;
}

AI uint32_t fkey1(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return nextok__fkey_bits(u);
}

/* Dispatch a kernel body on the dtype so each instance sees a constant. */
#define BY_DTYPE(fn, dt, ...)                                          \
    (dt == NEXTOK_DTYPE_F16    ? fn(NEXTOK_DTYPE_F16, __VA_ARGS__)     \
     : dt == NEXTOK_DTYPE_BF16 ? fn(NEXTOK_DTYPE_BF16, __VA_ARGS__)    \
                               : fn(NEXTOK_DTYPE_F32, __VA_ARGS__))

/* ---- max ------------------------------------------------------------------ */

AI float hmax8(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

AI uint32_t hmaxu8(__m256i v)
{
    __m128i m = _mm_max_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4e));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xb1));
    return (uint32_t)_mm_cvtsi128_si32(m);
}

/* max_ps(x, acc) returns acc when x is NaN, so NaN never wins. The largest
 * |bits| (integer max) is >= 0x7f800000 iff a NaN or inf was seen. */
AI float max_impl(enum nextok_dtype dt, const void *row, size_t n, int *nonfinite)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    const __m256i absm = _mm256_set1_epi32(0x7fffffff);
    __m256 a0 = ninf, a1 = ninf, a2 = ninf, a3 = ninf;
    __m256i b0 = _mm256_setzero_si256(), b1 = b0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 x0 = load8(row, dt, i), x1 = load8(row, dt, i + 8);
        __m256 x2 = load8(row, dt, i + 16), x3 = load8(row, dt, i + 24);
        a0 = _mm256_max_ps(x0, a0);
        a1 = _mm256_max_ps(x1, a1);
        a2 = _mm256_max_ps(x2, a2);
        a3 = _mm256_max_ps(x3, a3);
        __m256i u01 = _mm256_max_epu32(_mm256_and_si256(_mm256_castps_si256(x0), absm),
                                       _mm256_and_si256(_mm256_castps_si256(x1), absm));
        __m256i u23 = _mm256_max_epu32(_mm256_and_si256(_mm256_castps_si256(x2), absm),
                                       _mm256_and_si256(_mm256_castps_si256(x3), absm));
        b0 = _mm256_max_epu32(b0, u01);
        b1 = _mm256_max_epu32(b1, u23);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 x = load8(row, dt, i);
        a0 = _mm256_max_ps(x, a0);
        b0 = _mm256_max_epu32(b0, _mm256_and_si256(_mm256_castps_si256(x), absm));
    }
    float m = hmax8(_mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3)));
    uint32_t ab = hmaxu8(_mm256_max_epu32(b0, b1));
    for (; i < n; i++) {
        float x = nextok__elem(dt, row, i);
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        if ((u & 0x7fffffffu) > ab) ab = u & 0x7fffffffu;
        if (x > m) m = x;
    }
    const int nf = ab >= 0x7f800000u;
    *nonfinite |= nf;
    return m;
}

static float avx2_max(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite)
{
    return BY_DTYPE(max_impl, dt, row, n, nonfinite);
}

/* block_max: the max loop per block, inlined (no call per block). */
AI size_t block_max_impl(enum nextok_dtype dt, const void *row, size_t n, float *bmax, int *nonfinite)
{
    const size_t esz = nextok_dtype_size(dt), nb = (n + NEXTOK__BLK - 1) / NEXTOK__BLK;
    for (size_t b = 0; b < nb; b++) {
        const size_t i = b * NEXTOK__BLK, len = n - i < NEXTOK__BLK ? n - i : NEXTOK__BLK;
        bmax[b] = max_impl(dt, (const char *)row + i * esz, len, nonfinite);
    }
    return nb;
}

static size_t avx2_block_max(const void *row, enum nextok_dtype dt, size_t n, float *bmax, int *nonfinite)
{
    return BY_DTYPE(block_max_impl, dt, row, n, bmax, nonfinite);
}

/* ---- count / compact ------------------------------------------------------ */

AI size_t emit(const void *row, enum nextok_dtype dt, size_t i, unsigned m, int32_t base,
               int32_t *ids, float *vals, size_t cap, size_t c)
{
    while (m) {
        unsigned j = (unsigned)__builtin_ctz(m);
        if (c < cap) {
            ids[c] = base + (int32_t)(i + j);
            vals[c] = nextok__elem(dt, row, i + j);
        }
        c++;
        m &= m - 1;
    }
    return c;
}

/* Lane indices of the set bits of an 8-bit mask, in order, one per byte
 * (the rest 0): the permutation that packs those lanes to the front. */
static const uint64_t pack8[256] = {
    0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000001ull, 0x0000000000000100ull,
    0x0000000000000002ull, 0x0000000000000200ull, 0x0000000000000201ull, 0x0000000000020100ull,
    0x0000000000000003ull, 0x0000000000000300ull, 0x0000000000000301ull, 0x0000000000030100ull,
    0x0000000000000302ull, 0x0000000000030200ull, 0x0000000000030201ull, 0x0000000003020100ull,
    0x0000000000000004ull, 0x0000000000000400ull, 0x0000000000000401ull, 0x0000000000040100ull,
    0x0000000000000402ull, 0x0000000000040200ull, 0x0000000000040201ull, 0x0000000004020100ull,
    0x0000000000000403ull, 0x0000000000040300ull, 0x0000000000040301ull, 0x0000000004030100ull,
    0x0000000000040302ull, 0x0000000004030200ull, 0x0000000004030201ull, 0x0000000403020100ull,
    0x0000000000000005ull, 0x0000000000000500ull, 0x0000000000000501ull, 0x0000000000050100ull,
    0x0000000000000502ull, 0x0000000000050200ull, 0x0000000000050201ull, 0x0000000005020100ull,
    0x0000000000000503ull, 0x0000000000050300ull, 0x0000000000050301ull, 0x0000000005030100ull,
    0x0000000000050302ull, 0x0000000005030200ull, 0x0000000005030201ull, 0x0000000503020100ull,
    0x0000000000000504ull, 0x0000000000050400ull, 0x0000000000050401ull, 0x0000000005040100ull,
    0x0000000000050402ull, 0x0000000005040200ull, 0x0000000005040201ull, 0x0000000504020100ull,
    0x0000000000050403ull, 0x0000000005040300ull, 0x0000000005040301ull, 0x0000000504030100ull,
    0x0000000005040302ull, 0x0000000504030200ull, 0x0000000504030201ull, 0x0000050403020100ull,
    0x0000000000000006ull, 0x0000000000000600ull, 0x0000000000000601ull, 0x0000000000060100ull,
    0x0000000000000602ull, 0x0000000000060200ull, 0x0000000000060201ull, 0x0000000006020100ull,
    0x0000000000000603ull, 0x0000000000060300ull, 0x0000000000060301ull, 0x0000000006030100ull,
    0x0000000000060302ull, 0x0000000006030200ull, 0x0000000006030201ull, 0x0000000603020100ull,
    0x0000000000000604ull, 0x0000000000060400ull, 0x0000000000060401ull, 0x0000000006040100ull,
    0x0000000000060402ull, 0x0000000006040200ull, 0x0000000006040201ull, 0x0000000604020100ull,
    0x0000000000060403ull, 0x0000000006040300ull, 0x0000000006040301ull, 0x0000000604030100ull,
    0x0000000006040302ull, 0x0000000604030200ull, 0x0000000604030201ull, 0x0000060403020100ull,
    0x0000000000000605ull, 0x0000000000060500ull, 0x0000000000060501ull, 0x0000000006050100ull,
    0x0000000000060502ull, 0x0000000006050200ull, 0x0000000006050201ull, 0x0000000605020100ull,
    0x0000000000060503ull, 0x0000000006050300ull, 0x0000000006050301ull, 0x0000000605030100ull,
    0x0000000006050302ull, 0x0000000605030200ull, 0x0000000605030201ull, 0x0000060503020100ull,
    0x0000000000060504ull, 0x0000000006050400ull, 0x0000000006050401ull, 0x0000000605040100ull,
    0x0000000006050402ull, 0x0000000605040200ull, 0x0000000605040201ull, 0x0000060504020100ull,
    0x0000000006050403ull, 0x0000000605040300ull, 0x0000000605040301ull, 0x0000060504030100ull,
    0x0000000605040302ull, 0x0000060504030200ull, 0x0000060504030201ull, 0x0006050403020100ull,
    0x0000000000000007ull, 0x0000000000000700ull, 0x0000000000000701ull, 0x0000000000070100ull,
    0x0000000000000702ull, 0x0000000000070200ull, 0x0000000000070201ull, 0x0000000007020100ull,
    0x0000000000000703ull, 0x0000000000070300ull, 0x0000000000070301ull, 0x0000000007030100ull,
    0x0000000000070302ull, 0x0000000007030200ull, 0x0000000007030201ull, 0x0000000703020100ull,
    0x0000000000000704ull, 0x0000000000070400ull, 0x0000000000070401ull, 0x0000000007040100ull,
    0x0000000000070402ull, 0x0000000007040200ull, 0x0000000007040201ull, 0x0000000704020100ull,
    0x0000000000070403ull, 0x0000000007040300ull, 0x0000000007040301ull, 0x0000000704030100ull,
    0x0000000007040302ull, 0x0000000704030200ull, 0x0000000704030201ull, 0x0000070403020100ull,
    0x0000000000000705ull, 0x0000000000070500ull, 0x0000000000070501ull, 0x0000000007050100ull,
    0x0000000000070502ull, 0x0000000007050200ull, 0x0000000007050201ull, 0x0000000705020100ull,
    0x0000000000070503ull, 0x0000000007050300ull, 0x0000000007050301ull, 0x0000000705030100ull,
    0x0000000007050302ull, 0x0000000705030200ull, 0x0000000705030201ull, 0x0000070503020100ull,
    0x0000000000070504ull, 0x0000000007050400ull, 0x0000000007050401ull, 0x0000000705040100ull,
    0x0000000007050402ull, 0x0000000705040200ull, 0x0000000705040201ull, 0x0000070504020100ull,
    0x0000000007050403ull, 0x0000000705040300ull, 0x0000000705040301ull, 0x0000070504030100ull,
    0x0000000705040302ull, 0x0000070504030200ull, 0x0000070504030201ull, 0x0007050403020100ull,
    0x0000000000000706ull, 0x0000000000070600ull, 0x0000000000070601ull, 0x0000000007060100ull,
    0x0000000000070602ull, 0x0000000007060200ull, 0x0000000007060201ull, 0x0000000706020100ull,
    0x0000000000070603ull, 0x0000000007060300ull, 0x0000000007060301ull, 0x0000000706030100ull,
    0x0000000007060302ull, 0x0000000706030200ull, 0x0000000706030201ull, 0x0000070603020100ull,
    0x0000000000070604ull, 0x0000000007060400ull, 0x0000000007060401ull, 0x0000000706040100ull,
    0x0000000007060402ull, 0x0000000706040200ull, 0x0000000706040201ull, 0x0000070604020100ull,
    0x0000000007060403ull, 0x0000000706040300ull, 0x0000000706040301ull, 0x0000070604030100ull,
    0x0000000706040302ull, 0x0000070604030200ull, 0x0000070604030201ull, 0x0007060403020100ull,
    0x0000000000070605ull, 0x0000000007060500ull, 0x0000000007060501ull, 0x0000000706050100ull,
    0x0000000007060502ull, 0x0000000706050200ull, 0x0000000706050201ull, 0x0000070605020100ull,
    0x0000000007060503ull, 0x0000000706050300ull, 0x0000000706050301ull, 0x0000070605030100ull,
    0x0000000706050302ull, 0x0000070605030200ull, 0x0000070605030201ull, 0x0007060503020100ull,
    0x0000000007060504ull, 0x0000000706050400ull, 0x0000000706050401ull, 0x0000070605040100ull,
    0x0000000706050402ull, 0x0000070605040200ull, 0x0000070605040201ull, 0x0007060504020100ull,
    0x0000000706050403ull, 0x0000070605040300ull, 0x0000070605040301ull, 0x0007060504030100ull,
    0x0000070605040302ull, 0x0007060504030200ull, 0x0007060504030201ull, 0x0706050403020100ull,
};

/* 8 elements from first: the lanes of m packed and stored at c
 * unconditionally (room checked by the caller); returns the new count. */
AI size_t store8(__m256 x, unsigned m, int32_t first, int32_t *ids, float *vals, size_t c)
{
    const __m256i p = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)pack8[m]));
    const __m256i id = _mm256_add_epi32(_mm256_set1_epi32(first), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_storeu_ps(vals + c, _mm256_permutevar8x32_ps(x, p));
    _mm256_storeu_si256((__m256i *)(ids + c), _mm256_permutevar8x32_epi32(id, p));
    return c + (size_t)__builtin_popcount(m);
}

/* Dense spans store 8 entries past the count: they run only where the whole
 * span fits in the room left. */
AI bool dense_fits(size_t c, size_t cap, size_t len) { return c <= cap && cap - c >= len + 8; }

/*
 * Sparse spans: compare and test, hits emitted bit by bit. After a span of
 * 4096 that kept more than 1 in 64 (min-p on a flat row), the next span packs
 * and stores every 8 lanes unconditionally, as the AVX-512 table does (no
 * branch to mispredict on rows the predictors have not learnt). Exponent-
 * all-ones lanes are OR-ed into a mask for the non-finite flag.
 */
AI size_t compact_impl(enum nextok_dtype dt, const void *row, size_t n, float thr, int32_t base,
                       int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    const __m256 t = _mm256_set1_ps(thr);
    const __m256i em = _mm256_set1_epi32(0x7f800000);
    __m256i nfacc = _mm256_setzero_si256();
    size_t c = 0, i = 0;
    bool dense = false;
    while (i + 16 <= n) {
        const size_t end = n - i >= 4096 ? i + 4096 : i + (n - i) / 16 * 16, c0 = c;
        const bool packed = dense && dense_fits(c, cap, end - i);
        for (; i < end; i += 16) {
            __m256 x0 = load8(row, dt, i), x1 = load8(row, dt, i + 8);
            __m256i e0 = _mm256_and_si256(_mm256_castps_si256(x0), em);
            __m256i e1 = _mm256_and_si256(_mm256_castps_si256(x1), em);
            nfacc = _mm256_or_si256(nfacc, _mm256_or_si256(_mm256_cmpeq_epi32(e0, em),
                                                           _mm256_cmpeq_epi32(e1, em)));
            unsigned m0 = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(x0, t, _CMP_GE_OQ));
            unsigned m1 = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(x1, t, _CMP_GE_OQ));
            if (packed) {
                c = store8(x0, m0, base + (int32_t)i, ids, vals, c);
                c = store8(x1, m1, base + (int32_t)(i + 8), ids, vals, c);
            } else if (m0 | m1) {
                c = emit(row, dt, i, m0 | (m1 << 8), base, ids, vals, cap, c);
            }
        }
        dense = (c - c0) * 64 > 4096;
    }
    int nf = !_mm256_testz_si256(nfacc, nfacc);
    for (; i < n; i++) {
        float x = nextok__elem(dt, row, i);
        nf |= nonfinite1(x);
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

static size_t avx2_compact_ge(const void *row, enum nextok_dtype dt, size_t n, float thr,
                              int32_t base, int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    return BY_DTYPE(compact_impl, dt, row, n, thr, base, ids, vals, cap, nonfinite);
}

/* Candidates: the quotients and the compare 8 at a time, the records
 * written one per set bit. */
static size_t avx2_cands_ge(const int32_t *ids, const float *vals, size_t n, float div, float thr,
                            struct nextok_token_data *out)
{
    const __m256 dv = _mm256_set1_ps(div), t = _mm256_set1_ps(thr);
    const __m256 hi = _mm256_set1_ps(3.40282347e38f), lo = _mm256_set1_ps(-3.40282347e38f);
    size_t k = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(vals + i);
        if (div != 1.0f) /* finite quotients pass min/max unchanged; ±inf clamp */
            v = _mm256_max_ps(_mm256_min_ps(_mm256_div_ps(v, dv), hi), lo);
        unsigned m = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v, t, _CMP_GE_OQ));
        if (!m) continue;
        float vb[8];
        _mm256_storeu_ps(vb, v);
        while (m) {
            const unsigned j = (unsigned)__builtin_ctz(m);
            out[k++] = (struct nextok_token_data){ids[i + j], vb[j], 0.0f};
            m &= m - 1;
        }
    }
    for (; i < n; i++) {
        float v = nextok__tempv(vals[i], div, 1);
        if (v >= thr) out[k++] = (struct nextok_token_data){ids[i], v, 0.0f};
    }
    return k;
}

/* ---- sum / sum of squares (estimate) ---------------------------------------- */

/* Chunks of 128 elements: two streams of 8 lanes, each lane a float partial
 * of 8 terms, added (at most 9 float roundings per term, within
 * NEXTOK__SUMSQ_BLOCK) and widened to double; the n % 128 tail as the
 * reference does it (partials of 16 consecutive elements). A NaN or ±inf
 * makes the sum of squares non-finite; only then is the row scanned again
 * for the flag. */
/* One stream's step, as the AVX-512 version's sumsq16. */
AI void sumsq8(__m256 x, __m256 dv, __m256 c, float div, __m256 *m, __m256 *s, __m256 *q)
{
    *m = _mm256_max_ps(x, *m);
    if (div != 1.0f) x = _mm256_div_ps(x, dv);
    x = _mm256_sub_ps(x, c);
    *s = _mm256_add_ps(*s, x);
    *q = _mm256_fmadd_ps(x, x, *q);
}

AI float sumsq_impl(enum nextok_dtype dt, const void *row, size_t n, float div, float center,
                    int *nonfinite, double *sum, double *sumsq)
{
    const __m256 dv = _mm256_set1_ps(div), c = _mm256_set1_ps(center), zero = _mm256_setzero_ps();
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0;
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        __m256 sa = zero, sb = zero, qa = zero, qb = zero;
        for (size_t j = i; j < i + 128; j += 16) {
            sumsq8(load8(row, dt, j), dv, c, div, &m0, &sa, &qa);
            sumsq8(load8(row, dt, j + 8), dv, c, div, &m1, &sb, &qb);
        }
        const __m256 fs = _mm256_add_ps(sa, sb), fq = _mm256_add_ps(qa, qb);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(fs)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(fs, 1)));
        q0 = _mm256_add_pd(q0, _mm256_cvtps_pd(_mm256_castps256_ps128(fq)));
        q1 = _mm256_add_pd(q1, _mm256_cvtps_pd(_mm256_extractf128_ps(fq, 1)));
    }
    double sb[4], qb[4];
    _mm256_storeu_pd(sb, _mm256_add_pd(s0, s1));
    _mm256_storeu_pd(qb, _mm256_add_pd(q0, q1));
    double s = (sb[0] + sb[1]) + (sb[2] + sb[3]), q = (qb[0] + qb[1]) + (qb[2] + qb[3]);
    float m = hmax8(_mm256_max_ps(m0, m1));
    for (; i < n; i += NEXTOK__SUMSQ_BLOCK) {
        float fs = 0.0f, fq = 0.0f;
        for (size_t j = i; j < n && j < i + NEXTOK__SUMSQ_BLOCK; j++) {
            const float x = nextok__elem(dt, row, j);
            if (x > m) m = x;
            const float d = x / div - center;
            fs += d;
            fq = fmaf(d, d, fq);
        }
        s += fs;
        q += fq;
    }
    *sum = s;
    *sumsq = q;
    if (!isfinite(q)) { /* a NaN or ±inf, or an overflow: which one */
        int nf = 0;
        (void)max_impl(dt, row, n, &nf);
        *nonfinite |= nf;
    }
    return m;
}

static float avx2_sum_sq(const void *row, enum nextok_dtype dt, size_t n, float div, float center,
                         int *nonfinite, double *sum, double *sumsq)
{
    return BY_DTYPE(sumsq_impl, dt, row, n, div, center, nonfinite, sum, sumsq);
}

/* The tight fallback (sum_sq_dbl): every term in double, as before the
 * float partials. */
AI int sumsq_dbl_impl(enum nextok_dtype dt, const void *row, size_t n, float div, double center,
                  double *sum, double *sumsq)
{
    const __m256 dv = _mm256_set1_ps(div);
    const __m256d c = _mm256_set1_pd(center);
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_div_ps(load8(row, dt, i), dv);
        __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), c);
        __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), c);
        s0 = _mm256_add_pd(s0, d0);
        s1 = _mm256_add_pd(s1, d1);
        q0 = _mm256_fmadd_pd(d0, d0, q0);
        q1 = _mm256_fmadd_pd(d1, d1, q1);
    }
    double sb[4], qb[4];
    _mm256_storeu_pd(sb, _mm256_add_pd(s0, s1));
    _mm256_storeu_pd(qb, _mm256_add_pd(q0, q1));
    double s = (sb[0] + sb[1]) + (sb[2] + sb[3]), q = (qb[0] + qb[1]) + (qb[2] + qb[3]);
    for (; i < n; i++) {
        double d = (double)(nextok__elem(dt, row, i) / div) - center;
        s += d;
        q += d * d;
    }
    *sum = s;
    *sumsq = q;
    return 0;
}

static void avx2_sum_sq_dbl(const void *row, enum nextok_dtype dt, size_t n, float div, double center,
                        double *sum, double *sumsq)
{
    (void)BY_DTYPE(sumsq_dbl_impl, dt, row, n, div, center, sum, sumsq);
}

/* ---- canonical weights (kernels.h: nextok__expw, nextok__wblock) ------------ */

/* The table of nextok__expw with the scale folded in: tab[j] - (N << 23)
 * (mod 2^32, as the reference's sum), as two 8-entry halves. */
struct wtab8 {
    __m256i lo, hi;
};

AI struct wtab8 wtab8_of(const struct nextok__wref *ref)
{
    const __m256i adj = _mm256_set1_epi32((int32_t)((uint32_t)ref->n << 23));
    struct wtab8 t;
    t.lo = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)nextok__expw_tab), adj);
    t.hi = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(nextok__expw_tab + 8)), adj);
    return t;
}

/* nextok__expw on 8 lanes of x = l - c: the same IEEE and integer operations
 * in the same order. The 16-entry table lookup by the low 4 bits of bits(t)
 * (the reference's tb & 15): vpermd on each half of the table takes the low
 * 3 bits, bit 3 (moved to the sign bit) picks the half. cut = 0: the caller
 * has no cut-off (nextok__wref_unscaled); else the x < cut lanes are zeroed
 * at the end, whatever they computed. */
AI __m256 expw8c(__m256 x, struct wtab8 tab, __m256 cutv, int cut)
{
    const __m256 mg = _mm256_set1_ps(NEXTOK__EXPW_MAGIC);
    const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(NEXTOK__EXPW_LOG2E16), mg);
    const __m256 r = _mm256_fnmadd_ps(_mm256_sub_ps(t, mg), _mm256_set1_ps(NEXTOK__EXPW_LN2_16), x); /* = fmaf(-k, ln2/16, x) */
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(NEXTOK__EXPW_C3), r, _mm256_set1_ps(NEXTOK__EXPW_C2));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.0f));
    const __m256i tb = _mm256_castps_si256(t);
    const __m256i lo = _mm256_permutevar8x32_epi32(tab.lo, tb);
    const __m256i hi = _mm256_permutevar8x32_epi32(tab.hi, tb);
    const __m256i tj = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi),
                                                            _mm256_castsi256_ps(_mm256_slli_epi32(tb, 28))));
    const __m256 s = _mm256_castsi256_ps(_mm256_add_epi32(tj, _mm256_slli_epi32(tb, 19)));
    const __m256 w = _mm256_fmadd_ps(_mm256_mul_ps(s, r), q, s);
    if (!cut) return w;
    return _mm256_andnot_ps(_mm256_cmp_ps(x, cutv, _CMP_LT_OQ), w);
}

/* v = x or sat(x / div), as temp.c */
AI __m256 temp8s(__m256 x, float div, int sat)
{
    if (div == 1.0f) return x;
    if (!sat) return _mm256_div_ps(x, _mm256_set1_ps(div)); /* unscaled: an overflow shows in vmax */
    const __m256 fm = _mm256_set1_ps(3.40282347e38f);
    x = _mm256_div_ps(x, _mm256_set1_ps(div));
    /* operands in this order keep NaN (min/max return the second on NaN), as
     * the reference's comparisons do */
    return _mm256_max_ps(_mm256_sub_ps(_mm256_setzero_ps(), fm), _mm256_min_ps(fm, x));
}

/* Lanes as nextok__wblock: a0..a3 hold lanes 0-3, 4-7, 8-11, 12-15; the tree
 * h = (a0 + a2, a1 + a3), q = h_lo + h_hi, d = q_lo + q_hi, d0 + d1. */
AI double tree16(__m256d a0, __m256d a1, __m256d a2, __m256d a3)
{
    const __m256d q = _mm256_add_pd(_mm256_add_pd(a0, a2), _mm256_add_pd(a1, a3));
    const __m128d d = _mm_add_pd(_mm256_castpd256_pd128(q), _mm256_extractf128_pd(q, 1));
    return _mm_cvtsd_f64(_mm_add_sd(d, _mm_unpackhi_pd(d, d)));
}

/* The tree of a block's float lane sums a[0] (lanes 0-7), a[1] (8-15). As
 * in kernels_avx512.c (treef16), the loops call it for block b - 1 after
 * block b's lane sums, when its input is ready. */
AI double treef8x2(const __m256 a[2])
{
    return tree16(_mm256_cvtps_pd(_mm256_castps256_ps128(a[0])), _mm256_cvtps_pd(_mm256_extractf128_ps(a[0], 1)),
                  _mm256_cvtps_pd(_mm256_castps256_ps128(a[1])), _mm256_cvtps_pd(_mm256_extractf128_ps(a[1], 1)));
}

AI float hmin8(__m256 v)
{
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_min_ss(m, _mm_shuffle_ps(m, m, 1)));
}

/* The weight of raw x (processed v) in the weights pass: full, the
 * subtraction and the cut-off test; ge, zero unless x >= gev (min-p's dense
 * set). */
AI __m256 weight8(__m256 x, __m256 v, __m256 cv, struct wtab8 tab, __m256 cutv, __m256 gev, int full, int ge)
{
    const __m256 e = expw8c(full ? _mm256_sub_ps(v, cv) : v, tab, cutv, full);
    return ge ? _mm256_and_ps(_mm256_cmp_ps(x, gev, _CMP_GE_OQ), e) : e;
}

/* full = 0: ref is nextok__wref_unscaled (no subtraction, no cut-off test,
 * no saturation: an overflowing quotient is inf, which vmax reports).
 * ge: min-p's dense set (kernels.h weights_ge): no extremes, no maxima. */
AI void weights_impl(enum nextok_dtype dt, const void *row, size_t n, float div,
                     const struct nextok__wref *ref, int full, int ge, float gef, float *w,
                     double *bsum, double *cum, float *bmax, float *vmin, float *vmax)
{
    const __m256 gev = _mm256_set1_ps(gef);
    const __m256 cv = _mm256_set1_ps(ref->c), cutv = _mm256_set1_ps(ref->cut);
    const struct wtab8 tab = wtab8_of(ref);
    __m256 lo = _mm256_set1_ps(INFINITY), hi = _mm256_set1_ps(-INFINITY), bm = hi;
    size_t b = 0;
    double acc = 0.0; /* the running sum */
    __m256 pa[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()}; /* the previous block's (treef8x2) */
    for (; (b + 1) * 64 <= n; b++) {
        __m256 a[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (size_t j = 0; j < 8; j++) { /* 8 floats: lanes 8 (j & 1) .. +7, in float, in order */
            const size_t i = b * 64 + j * 8;
            const __m256 x = load8(row, dt, i), v = temp8s(x, div, full);
            if (!ge) {
                lo = _mm256_min_ps(v, lo); /* NaN v: lo kept */
                bm = _mm256_max_ps(v, bm);
            }
            const __m256 e = weight8(x, v, cv, tab, cutv, gev, full, ge);
            _mm256_storeu_ps(w + i, e);
            a[j & 1] = _mm256_add_ps(a[j & 1], e);
        }
        if (b > 0) cum[b - 1] = acc += bsum[b - 1] = treef8x2(pa);
        pa[0] = a[0], pa[1] = a[1];
        if (!ge && b % 4 == 3) { /* a group of 256 ids closes */
            hi = _mm256_max_ps(bm, hi);
            if (bmax) bmax[b / 4] = hmax8(bm);
            bm = _mm256_set1_ps(-INFINITY);
        }
    }
    if (b > 0) cum[b - 1] = acc += bsum[b - 1] = treef8x2(pa);
    if (ge) {
        for (size_t i = b * 64; i < n; i++) { /* the partial block, scalar (same operations) */
            const float x = nextok__elem(dt, row, i);
            w[i] = x >= gef ? nextok__expw(nextok__tempv(x, div, full), ref) : 0.0f;
        }
        if (b * 64 < n) cum[b] = acc + (bsum[b] = nextok__wblock(w + b * 64, n - b * 64));
        return;
    }
    hi = _mm256_max_ps(bm, hi);
    if (bmax && b % 4 != 0) bmax[b / 4] = hmax8(bm); /* the open group's SIMD part; the tail joins it */
    float l = hmin8(lo), h = hmax8(hi);
    for (size_t i = b * 64; i < n; i++) { /* the partial block, scalar (same operations) */
        float v = nextok__tempv(nextok__elem(dt, row, i), div, full);
        l = v < l ? v : l;
        h = v > h ? v : h;
        if (bmax) nextok__bmax_put(bmax, i, v);
        w[i] = nextok__expw(v, ref);
    }
    if (b * 64 < n) {
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
        cum[b] = acc + bsum[b];
    }
    *vmin = l;
    *vmax = h;
}

static void avx2_weights(const void *row, enum nextok_dtype dt, size_t n, float div,
                         const struct nextok__wref *ref, float *w, double *bsum, double *cum,
                         float *bmax, float *vmin, float *vmax)
{
    const int full = !nextok__wref_is_unscaled(ref);
    if (full) BY_DTYPE(weights_impl, dt, row, n, div, ref, 1, 0, 0.0f, w, bsum, cum, bmax, vmin, vmax);
    else BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 0, 0.0f, w, bsum, cum, bmax, vmin, vmax);
}

static void avx2_weights_ge(const void *row, enum nextok_dtype dt, size_t n, float div,
                            const struct nextok__wref *ref, float ge, float *w, double *bsum, double *cum)
{
    if (nextok__wref_is_unscaled(ref)) BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 1, ge, w, bsum, cum, NULL, NULL, NULL);
    else BY_DTYPE(weights_impl, dt, row, n, div, ref, 1, 1, ge, w, bsum, cum, NULL, NULL, NULL);
}

static void avx2_expw(const float *x, size_t n, const struct nextok__wref *ref, float *w)
{
    const __m256 cv = _mm256_set1_ps(ref->c), cutv = _mm256_set1_ps(ref->cut);
    const struct wtab8 tab = wtab8_of(ref);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(w + i, expw8c(_mm256_sub_ps(_mm256_loadu_ps(x + i), cv), tab, cutv, 1));
    for (; i < n; i++) w[i] = nextok__expw(x[i], ref);
}

/* ---- typical-p's S (kernels.h: nextok__wvblock) ------------------------------ */

/* 8 elements at i into the double lanes lo (i % 16 = 0-3 or 8-11) and hi
 * (4-7 or 12-15): the products widened (exact), added in order. */
AI void wv8(enum nextok_dtype dt, const void *row, const float *w, size_t i, float div,
            __m256d *lo, __m256d *hi)
{
    const __m256 v = temp8s(load8(row, dt, i), div, 1);
    const __m256 e = _mm256_loadu_ps(w + i);
    *lo = _mm256_add_pd(*lo, _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(e)),
                                           _mm256_cvtps_pd(_mm256_castps256_ps128(v))));
    *hi = _mm256_add_pd(*hi, _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)),
                                           _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))));
}

AI void wvsum_impl(enum nextok_dtype dt, const void *row, size_t n, float div, const float *w,
                   double *bs)
{
    __m256d pa[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    /* pa: the previous block's lanes: its tree after this block's (treef8x2) */
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        __m256d a[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
        for (size_t j = 0; j < 8; j++) /* j even: lanes 0-7, odd: 8-15 */
            wv8(dt, row, w, b * 64 + j * 8, div, &a[2 * (j & 1)], &a[2 * (j & 1) + 1]);
        if (b > 0) bs[b - 1] = tree16(pa[0], pa[1], pa[2], pa[3]);
        memcpy(pa, a, sizeof pa);
    }
    if (b > 0) bs[b - 1] = tree16(pa[0], pa[1], pa[2], pa[3]);
    if (b * 64 < n) { /* the partial block, scalar (same operations) */
        float v[64];
        const size_t len = n - b * 64;
        for (size_t i = 0; i < len; i++) v[i] = nextok__tempv(nextok__elem(dt, row, b * 64 + i), div, 1);
        bs[b] = nextok__wvblock(w + b * 64, v, len);
    }
}

static void avx2_wvsum(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                       double *bs)
{
    if (div == 1.0f) BY_DTYPE(wvsum_impl, dt, row, n, 1.0f, w, bs);
    else BY_DTYPE(wvsum_impl, dt, row, n, div, w, bs);
}

/* ---- widening --------------------------------------------------------------- */

static void avx2_widen(const uint16_t *src, enum nextok_dtype dt, size_t n, float *dst)
{
    size_t i = 0;
    if (dt == NEXTOK_DTYPE_F16)
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8(src, NEXTOK_DTYPE_F16, i));
    else
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8(src, NEXTOK_DTYPE_BF16, i));
    for (; i < n; i++) dst[i] = nextok__elem(dt, src, i);
}

/* ---- top-p: range compaction, the cut, masses above thresholds ------------------ */

static size_t avx2_compact_range(const void *row, enum nextok_dtype dt, size_t n, float lo, float hi,
                                 int32_t base, int32_t *ids, float *vals, size_t cap)
{
    const __m256 l = _mm256_set1_ps(lo), h = _mm256_set1_ps(hi);
    size_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = load8(row, dt, i);
        const __m256 in = _mm256_and_ps(_mm256_cmp_ps(x, l, _CMP_GE_OQ), _mm256_cmp_ps(x, h, _CMP_LE_OQ));
        const unsigned m = (unsigned)_mm256_movemask_ps(in);
        if (m) c = emit(row, dt, i, m, base, ids, vals, cap, c);
    }
    if (i < n) c += nextok__ref_compact_range((const char *)row + i * nextok_dtype_size(dt), dt, n - i, lo, hi,
                                              base + (int32_t)i, ids + (c < cap ? c : cap),
                                              vals + (c < cap ? c : cap), c < cap ? cap - c : 0);
    return c;
}

/* The cut on 8 lanes (ids only matter for the cut value's ties: a lane test
 * then); block sums in the lanes of weights_impl. */
AI __m256 cut8(const void *row, enum nextok_dtype dt, size_t i, __m256 g, __m256 e, int32_t cut, float *w)
{
    const __m256 x = load8(row, dt, i);
    __m256 keep = _mm256_cmp_ps(x, g, _CMP_GE_OQ);
    const __m256 tie = _mm256_andnot_ps(keep, _mm256_cmp_ps(x, e, _CMP_GE_OQ));
    if (!_mm256_testz_ps(tie, tie)) {
        const __m256i id = _mm256_add_epi32(_mm256_set1_epi32((int32_t)i), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        const __m256i le = _mm256_cmpgt_epi32(_mm256_set1_epi32(cut == INT32_MAX ? INT32_MAX : cut + 1), id);
        keep = _mm256_or_ps(keep, _mm256_and_ps(tie, _mm256_castsi256_ps(le)));
    }
    const __m256 wv = _mm256_and_ps(keep, _mm256_loadu_ps(w + i));
    _mm256_storeu_ps(w + i, wv);
    return wv;
}

static void avx2_cut_weights(const void *row, enum nextok_dtype dt, size_t n, float gt, float eq,
                             int32_t cut, float *w, double *bsum)
{
    const __m256 g = _mm256_set1_ps(gt), e = _mm256_set1_ps(eq);
    __m256 pa[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()}; /* the previous block's (treef8x2) */
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        __m256 a[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (size_t j = 0; j < 8; j++) a[j & 1] = _mm256_add_ps(a[j & 1], cut8(row, dt, b * 64 + j * 8, g, e, cut, w));
        if (b > 0) bsum[b - 1] = treef8x2(pa);
        pa[0] = a[0], pa[1] = a[1];
    }
    if (b > 0) bsum[b - 1] = treef8x2(pa);
    if (b * 64 < n) /* the partial block: the reference */
        nextok__ref_cut_weights((const char *)row + b * 64 * nextok_dtype_size(dt), dt, n - b * 64, gt, eq,
                                cut - (int32_t)(b * 64), w + b * 64, bsum + b);
}

/* mass_q of 4 lanes without an int64 conversion (AVX2 has none): x = w
 * scale (float, exact), min(x, 2^62) as mass_q's clamp (NaN too), then
 * floor(x) from the bits: mantissa shifted by exponent - 150 (both ways). */
AI __m256i mass4(__m128 w, __m128 sc)
{
    const __m128 x = _mm_min_ps(_mm_mul_ps(w, sc), _mm_set1_ps(0x1p62f));
    const __m256i b = _mm256_cvtepu32_epi64(_mm_castps_si128(x));
    const __m256i man = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi64x(0x7fffff)), _mm256_set1_epi64x(0x800000));
    const __m256i ex = _mm256_srli_epi64(b, 23); /* x >= 0: no sign bit */
    const __m256i up = _mm256_sub_epi64(ex, _mm256_set1_epi64x(150)), dn = _mm256_sub_epi64(_mm256_set1_epi64x(150), ex);
    /* variable shifts give 0 for counts >= 64: exactly floor(x) for x < 1 */
    const __m256i q = _mm256_or_si256(_mm256_sllv_epi64(man, up), _mm256_srlv_epi64(man, dn));
    return _mm256_andnot_si256(_mm256_cmpeq_epi64(ex, _mm256_setzero_si256()), q); /* x = 0 (or subnormal): 0 */
}

/* ---- typical-p's scan (kernels.h: nextok__typscan_scalar) ------------------ */

/* 8 lanes at a time: scores stored, masses by mass4 (floor exactly, as the
 * reference's conversion), the bracket tests as signed compares of keys
 * with the sign bits flipped; the bracket's few lanes are written one by
 * one. The last n % 8 elements: the reference. */
static size_t avx2_typscan(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                           struct nextok__typscan *ts, float *sc, int32_t *ids, float *vals)
{
    const __m256 cv = _mm256_set1_ps(ts->center);
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m128 scl = _mm_set1_ps(ts->scale);
    const __m256i flip = _mm256_set1_epi32(INT32_MIN);
    const __m256i klo = _mm256_xor_si256(_mm256_set1_epi32((int32_t)ts->klo), flip);
    const __m256i khi = _mm256_xor_si256(_mm256_set1_epi32((int32_t)ts->khi), flip);
    __m256i qt0 = _mm256_setzero_si256(), qt1 = qt0, qb0 = qt0, qb1 = qt0;
    size_t m = 0, nb = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 s = _mm256_and_ps(_mm256_sub_ps(temp8s(load8(row, dt, i), div, 1), cv), absm);
        _mm256_storeu_ps(sc + i, s);
        const __m256 wv = _mm256_loadu_ps(w + i);
        const __m256i q0 = mass4(_mm256_castps256_ps128(wv), scl), q1 = mass4(_mm256_extractf128_ps(wv, 1), scl);
        qt0 = _mm256_add_epi64(qt0, q0);
        qt1 = _mm256_add_epi64(qt1, q1);
        const __m256i key = _mm256_xor_si256(_mm256_castps_si256(s), flip);
        const __m256i below = _mm256_cmpgt_epi32(klo, key); /* key < klo, unsigned */
        qb0 = _mm256_add_epi64(qb0, _mm256_and_si256(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(below)), q0));
        qb1 = _mm256_add_epi64(qb1, _mm256_and_si256(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(below, 1)), q1));
        const unsigned bm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(below));
        const unsigned hm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(key, khi)));
        nb += (size_t)__builtin_popcount(bm);
        m = store8(s, ~(bm | hm) & 0xffu, (int32_t)i, ids, vals, m); /* room: n + 16 */
    }
    uint64_t l[4];
    _mm256_storeu_si256((__m256i *)l, _mm256_add_epi64(qt0, qt1));
    ts->q_total += l[0] + l[1] + l[2] + l[3];
    _mm256_storeu_si256((__m256i *)l, _mm256_add_epi64(qb0, qb1));
    ts->q_below += l[0] + l[1] + l[2] + l[3];
    ts->n_below += nb;
    float v[8];
    for (size_t j = i; j < n; j++) v[j - i] = nextok__tempv(nextok__elem(dt, row, j), div, 1);
    return m + nextok__typscan_scalar(v, n - i, i, w + i, ts, sc + i, ids + m, vals + m);
}

/* a[0..1] += the 64-bit lanes q0 (lanes 0-3 of mask m) and q1 (4-7) */
AI void add_masked64(__m256i a[2], __m256 m, __m256i q0, __m256i q1)
{
    const __m256i m0 = _mm256_cvtepi32_epi64(_mm_castps_si128(_mm256_castps256_ps128(m)));
    const __m256i m1 = _mm256_cvtepi32_epi64(_mm_castps_si128(_mm256_extractf128_ps(m, 1)));
    a[0] = _mm256_add_epi64(a[0], _mm256_and_si256(m0, q0));
    a[1] = _mm256_add_epi64(a[1], _mm256_and_si256(m1, q1));
}

/* tail + the eight 64-bit lanes of a[0..1] */
static uint64_t sum_lanes64(const __m256i a[2], uint64_t tail)
{
    uint64_t l[8];
    _mm256_storeu_si256((__m256i *)l, a[0]);
    _mm256_storeu_si256((__m256i *)(l + 4), a[1]);
    for (int k = 0; k < 8; k++) tail += l[k];
    return tail;
}

/* mass_above's two-threshold sums 8 lanes at a time (mass4's exact floor),
 * the band's lanes packed by store8; the last n % 8 elements: the
 * reference. */
static size_t avx2_mass_band(const void *row, enum nextok_dtype dt, size_t n, const float *w,
                             float scale, float hi, float lo, const float *gmax, float gth,
                             uint64_t q[3], uint64_t cnt[3], int32_t base, int32_t *ids, float *vals,
                             size_t cap)
{
    const __m128 sc = _mm_set1_ps(scale);
    const __m256 th = _mm256_set1_ps(hi), tl = _mm256_set1_ps(lo);
    __m256i a[3][2];
    uint64_t c1 = 0, c2 = 0;
    for (int j = 0; j < 3; j++) a[j][0] = a[j][1] = _mm256_setzero_si256();
    size_t i = 0, c = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 wv = _mm256_loadu_ps(w + i);
        const __m256i q0 = mass4(_mm256_castps256_ps128(wv), sc);
        const __m256i q1 = mass4(_mm256_extractf128_ps(wv, 1), sc);
        a[0][0] = _mm256_add_epi64(a[0][0], q0);
        a[0][1] = _mm256_add_epi64(a[0][1], q1);
        /* 8 elements never straddle two 256-id groups */
        if (gmax && !(gmax[i / NEXTOK__BMAX_IDS] >= gth)) continue;
        const __m256 x = load8(row, dt, i);
        const __m256 mh = _mm256_cmp_ps(x, th, _CMP_GE_OQ), ml = _mm256_cmp_ps(x, tl, _CMP_GE_OQ);
        add_masked64(a[1], mh, q0, q1);
        add_masked64(a[2], ml, q0, q1);
        const unsigned bh = (unsigned)_mm256_movemask_ps(mh), bl = (unsigned)_mm256_movemask_ps(ml);
        c1 += (uint64_t)__builtin_popcount(bh);
        c2 += (uint64_t)__builtin_popcount(bl);
        /* the band's lanes packed and stored without a branch on them while
         * there is room (flat rows put some in most vectors) */
        if (c <= cap && cap - c >= 8) c = store8(x, bl & ~bh, base + (int32_t)i, ids, vals, c);
        else if (bl & ~bh) c = emit(row, dt, i, bl & ~bh, base, ids, vals, cap, c);
    }
    uint64_t tq[3], tc[3];
    c += nextok__ref_mass_band((const char *)row + i * nextok_dtype_size(dt), dt, n - i, w + i, scale, hi, lo,
                               NULL, 0.0f, tq, tc, base + (int32_t)i, ids + (c < cap ? c : cap),
                               vals + (c < cap ? c : cap), c < cap ? cap - c : 0);
    for (int j = 0; j < 3; j++) q[j] = sum_lanes64(a[j], tq[j]);
    if (cnt) cnt[0] = n, cnt[1] = c1 + tc[1], cnt[2] = c2 + tc[2];
    return c;
}

static void avx2_mass_above(const void *row, enum nextok_dtype dt, size_t n, const float *w, float scale,
                            const float thr[4], const float *gmax, float gth, uint64_t q[5], uint64_t cnt[5])
{
    const __m128 sc = _mm_set1_ps(scale);
    __m256i a[5][2];
    uint64_t c[5] = {0, 0, 0, 0, 0};
    for (int j = 0; j < 5; j++) a[j][0] = a[j][1] = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = load8(row, dt, i), wv = _mm256_loadu_ps(w + i);
        const __m256i q0 = mass4(_mm256_castps256_ps128(wv), sc), q1 = mass4(_mm256_extractf128_ps(wv, 1), sc);
        a[0][0] = _mm256_add_epi64(a[0][0], q0);
        a[0][1] = _mm256_add_epi64(a[0][1], q1);
        c[0] += 8;
        /* 8 elements never straddle two 256-id groups; a group the hint
         * rules out adds only to the total */
        if (gmax && !(gmax[i / NEXTOK__BMAX_IDS] >= gth)) continue;
        for (int j = 0; j < 4; j++) {
            const __m256 m = _mm256_cmp_ps(x, _mm256_set1_ps(thr[j]), _CMP_GE_OQ);
            add_masked64(a[j + 1], m, q0, q1);
            c[j + 1] += (uint64_t)__builtin_popcount((unsigned)_mm256_movemask_ps(m));
        }
    }
    uint64_t tq[5], tc[5];
    nextok__ref_mass_above((const char *)row + i * nextok_dtype_size(dt), dt, n - i, w + i, scale, thr, NULL, 0.0f, tq, tc);
    for (int j = 0; j < 5; j++) {
        q[j] = sum_lanes64(a[j], tq[j]);
        if (cnt) cnt[j] = c[j] + tc[j];
    }
}

static void avx2_cut_keys(float *w, const float *sc, size_t n, uint32_t klo, double *bsum)
{
    /* unsigned k < klo as signed compares after flipping the sign bits */
    const __m256i flip = _mm256_set1_epi32(INT32_MIN);
    const __m256i k = _mm256_xor_si256(_mm256_set1_epi32((int32_t)klo), flip);
    __m256 pa[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()}; /* the previous block's (treef8x2) */
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        __m256 a[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
        for (size_t j = 0; j < 8; j++) { /* lanes 0-7 and 8-15 alternate, in order */
            const size_t i = b * 64 + j * 8;
            const __m256i key = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(sc + i)), flip);
            const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(k, key));
            const __m256 x = _mm256_and_ps(_mm256_loadu_ps(w + i), keep);
            _mm256_storeu_ps(w + i, x);
            a[j & 1] = _mm256_add_ps(a[j & 1], x);
        }
        if (b > 0) bsum[b - 1] = treef8x2(pa);
        pa[0] = a[0], pa[1] = a[1];
    }
    if (b > 0) bsum[b - 1] = treef8x2(pa);
    if (b * 64 < n) { /* the partial block */
        for (size_t i = b * 64; i < n; i++) {
            uint32_t kk;
            memcpy(&kk, sc + i, sizeof kk);
            if (!(kk < klo)) w[i] = 0.0f;
        }
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
    }
}

static void avx2_probs(const float *w, size_t n, double z, float *p)
{
    const __m256d zv = _mm256_set1_pd(z);
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm_storeu_ps(p + i, _mm256_cvtpd_ps(_mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(w + i)), zv)));
    for (; i < n; i++) p[i] = (float)((double)w[i] / z);
}

/* compact_blocks' block alone or in a short run (top-k's few blocks): the
 * compare masks of the whole block packed 64 lanes to a word with no branch,
 * then one element per set bit. A block holds one or two candidates there,
 * so compact_impl's branch per 16 elements would mispredict about as often
 * as not on a row the predictors have not seen. */
AI size_t block8_impl(enum nextok_dtype dt, const void *row, size_t i0, float thr, int32_t *ids, float *vals,
                      size_t cap, size_t c)
{
    const __m256 t = _mm256_set1_ps(thr);
    uint64_t word[NEXTOK__BLK / 64];
    for (unsigned g = 0; g < NEXTOK__BLK / 64; g++) {
        uint64_t w = 0;
        for (unsigned j = 0; j < 8; j++) {
            const __m256 x = load8(row, dt, i0 + 64 * g + 8 * j);
            w |= (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_cmp_ps(x, t, _CMP_GE_OQ)) << (8 * j);
        }
        word[g] = w;
    }
    for (unsigned g = 0; g < NEXTOK__BLK / 64; g++)
        for (uint64_t w = word[g]; w; w &= w - 1) {
            const size_t i = i0 + 64 * g + (unsigned)__builtin_ctzll(w);
            if (c < cap) {
                ids[c] = (int32_t)i;
                vals[c] = nextok__elem(dt, row, i);
            }
            c++;
        }
    return c;
}

static size_t avx2_block8(const void *row, enum nextok_dtype dt, size_t i0, float thr, int32_t *ids,
                          float *vals, size_t cap, size_t c)
{
    return BY_DTYPE(block8_impl, dt, row, i0, thr, ids, vals, cap, c);
}

static size_t avx2_compact_blocks(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                  const float *bmax, int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    return nextok__compact_blocks_by(avx2_compact_ge, avx2_block8, row, dt, n, thr, bmax, ids, vals, cap,
                                     nonfinite);
}

static const struct nextok__kernels avx2_table = {
    .name = "avx2",
    .max = avx2_max,
    .block_max = avx2_block_max,
    .compact_ge = avx2_compact_ge,
    .compact_blocks = avx2_compact_blocks,
    .cands_ge = avx2_cands_ge,
    .sum_sq = avx2_sum_sq,
    .sum_sq_dbl = avx2_sum_sq_dbl,
    .widen = avx2_widen,
    .weights = avx2_weights,
    .weights_ge = avx2_weights_ge,
    .expw = avx2_expw,
    .compact_range = avx2_compact_range,
    .mass_above = avx2_mass_above,
    .mass_band = avx2_mass_band,
    .cut_weights = avx2_cut_weights,
    .wvsum = avx2_wvsum,
    .typscan = avx2_typscan,
    .cut_keys = avx2_cut_keys,
    .probs = avx2_probs,
};

const struct nextok__kernels *nextok__kernels_avx2(void) { return &avx2_table; }

#else
const struct nextok__kernels *nextok__kernels_avx2(void) { return NULL; }
#endif
