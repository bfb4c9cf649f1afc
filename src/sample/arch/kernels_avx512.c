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

/* Sum of 8 unsigned 64-bit lanes, modulo 2^64 (the intrinsic reduction adds
 * them as signed long long, which is undefined on wrap). */
AI uint64_t hsum_u64(__m512i v)
{
    uint64_t l[8], s = 0;
    _mm512_storeu_si512((void *)l, v);
    for (int i = 0; i < 8; i++) s += l[i];
    return s;
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

AI float max_impl(enum nextok_dtype dt, const void *row, size_t n, int *nonfinite)
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
    *nonfinite |= nf;
    return _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
}

static float avx512_max(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite)
{
    return BY_DTYPE(max_impl, dt, row, n, nonfinite);
}


/* ---- count / compact ------------------------------------------------------ */

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

/*
 * Compaction adapts to the survivors' density, one span of SPAN elements at
 * a time. Sparse spans test 64 (f16/bf16: 128) elements behind one rarely
 * taken branch. Dense spans (min-p's 4 % of a flat row) would mispredict
 * that branch and the per-vector ones about every other vector on a row the
 * predictors have not learnt, so they compress and store every vector
 * unconditionally: nothing to predict, at a fixed cost per vector. A span is
 * dense when the previous one kept more than one element in DENSE_AT; the
 * choice changes only the speed, never the output. Measured on min-p 0.05
 * of flat V 128256 rows: 8 distinct rows 68 -> 46 us/row, one repeated
 * row (whose branches the predictors learn) 51 -> 58.
 */
#define SPAN 4096
#define DENSE_AT 64

/* Dense spans store 16 entries past the count: they run only where the
 * whole span fits in the room left. */
AI bool dense_fits(size_t c, size_t cap, size_t len) { return c <= cap && cap - c >= len + 16; }

/* 16 elements from first: the compressed ids and values stored at c
 * unconditionally (room checked by the caller); returns the new count. */
AI size_t store16(__m512 x, __mmask16 m, int32_t first, int32_t *ids, float *vals, size_t c)
{
    const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32(first),
                                         _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    _mm512_storeu_ps(vals + c, _mm512_maskz_compress_ps(m, x));
    _mm512_storeu_si512((void *)(ids + c), _mm512_maskz_compress_epi32(m, idx));
    return c + (size_t)__builtin_popcount(m);
}

AI size_t compact_impl(enum nextok_dtype dt, const void *row, size_t n, float thr, int32_t base,
                       int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    const __m512 t = _mm512_set1_ps(thr);
    const __m512i em = _mm512_set1_epi32(0x7f800000);
    /* the largest exponent field seen, in a vector: equal to em somewhere
     * iff a NaN or inf was seen (no mask traffic per vector) */
    __m512i ex = _mm512_setzero_si512();
    __mmask16 nf = 0;
    size_t c = 0, i = 0;
    bool dense = false;
    while (i + 64 <= n) {
        const size_t end = n - i >= SPAN ? i + SPAN : i + (n - i) / 64 * 64, c0 = c;
        if (dense && dense_fits(c, cap, end - i)) {
            for (; i < end; i += 16) {
                const __m512 x = load16(row, dt, i, 0xffff);
                ex = _mm512_max_epu32(ex, _mm512_and_si512(_mm512_castps_si512(x), em));
                c = store16(x, _mm512_cmp_ps_mask(x, t, _CMP_GE_OQ), base + (int32_t)i, ids, vals, c);
            }
        } else {
            for (; i < end; i += 64) {
                __m512 x0 = load16(row, dt, i, 0xffff), x1 = load16(row, dt, i + 16, 0xffff);
                __m512 x2 = load16(row, dt, i + 32, 0xffff), x3 = load16(row, dt, i + 48, 0xffff);
                ex = _mm512_max_epu32(ex, _mm512_and_si512(_mm512_castps_si512(x0), em));
                ex = _mm512_max_epu32(ex, _mm512_and_si512(_mm512_castps_si512(x1), em));
                ex = _mm512_max_epu32(ex, _mm512_and_si512(_mm512_castps_si512(x2), em));
                ex = _mm512_max_epu32(ex, _mm512_and_si512(_mm512_castps_si512(x3), em));
                __mmask16 m0 = _mm512_cmp_ps_mask(x0, t, _CMP_GE_OQ);
                __mmask16 m1 = _mm512_cmp_ps_mask(x1, t, _CMP_GE_OQ);
                __mmask16 m2 = _mm512_cmp_ps_mask(x2, t, _CMP_GE_OQ);
                __mmask16 m3 = _mm512_cmp_ps_mask(x3, t, _CMP_GE_OQ);
                if (__builtin_expect(!_kortestz_mask16_u8(_kor_mask16(m0, m1), _kor_mask16(m2, m3)), 0)) {
                    if (m0) c = emit16(x0, m0, base + (int32_t)i, ids, vals, cap, c);
                    if (m1) c = emit16(x1, m1, base + (int32_t)(i + 16), ids, vals, cap, c);
                    if (m2) c = emit16(x2, m2, base + (int32_t)(i + 32), ids, vals, cap, c);
                    if (m3) c = emit16(x3, m3, base + (int32_t)(i + 48), ids, vals, cap, c);
                }
            }
        }
        dense = (c - c0) * DENSE_AT > SPAN;
    }
    nf = _mm512_cmpeq_epi32_mask(ex, em);
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

/*
 * f16/bf16 rows: a filter in the 16-bit domain, 32 lanes a vector, and the
 * exact f32 test only on the 16-lane halves it lets through (in index order,
 * so the output is compact_impl's). Both formats are sign-magnitude, so the
 * key h ^ ((h >>a 15) & 0x7fff), compared as signed 16-bit integers, orders
 * the non-NaN values as their floats do (-0 keys just below +0). With hlo the
 * largest 16-bit value <= thr (+0 taken as -0, which is equal), every x >=
 * thr has key(x) >= key(hlo): the filter keeps a superset (hlo itself when it
 * is below thr, NaNs above +inf), and the f32 compare decides. When
 * key(hlo) > 0 the negative values cannot pass and the raw bits of the
 * positive ones are their keys: no key transform is needed.
 */
AI __m512i hkey32(__m512i h)
{
    return _mm512_xor_si512(h, _mm512_and_si512(_mm512_srai_epi16(h, 15), _mm512_set1_epi16(0x7fff)));
}

static int16_t half_floor_key(enum nextok_dtype dt, float thr)
{
    uint16_t h;
    if (dt == NEXTOK_DTYPE_F16) {
        const __m256i v = _mm512_cvt_roundps_ph(_mm512_set1_ps(thr), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        h = (uint16_t)_mm_cvtsi128_si32(_mm256_castsi256_si128(v));
    } else { /* bf16: truncation rounds toward zero; one step down for a negative inexact thr */
        uint32_t u;
        memcpy(&u, &thr, sizeof u);
        h = (uint16_t)(u >> 16);
        if ((u & 0x80000000u) && (u & 0xffffu)) h++;
    }
    if (h == 0) h = 0x8000;
    return (int16_t)(h ^ ((h & 0x8000) ? 0x7fff : 0));
}

/* The 16 lanes of 16-bit vector v starting at lane 16 * hi, exactly widened. */
AI __m512 widen16(enum nextok_dtype dt, __m512i v, int hi)
{
    const __m256i h = hi ? _mm512_extracti64x4_epi64(v, 1) : _mm512_castsi512_si256(v);
    if (dt == NEXTOK_DTYPE_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

AI size_t emit32(enum nextok_dtype dt, __m512i v, __mmask32 m, __m512 t, int32_t first, int32_t *ids,
                 float *vals, size_t cap, size_t c)
{
    if ((uint16_t)m) {
        const __m512 x = widen16(dt, v, 0);
        const __mmask16 e = _mm512_cmp_ps_mask(x, t, _CMP_GE_OQ);
        if (e) c = emit16(x, e, first, ids, vals, cap, c);
    }
    if (m >> 16) {
        const __m512 x = widen16(dt, v, 1);
        const __mmask16 e = _mm512_cmp_ps_mask(x, t, _CMP_GE_OQ);
        if (e) c = emit16(x, e, first + 16, ids, vals, cap, c);
    }
    return c;
}

AI size_t compact16_impl(enum nextok_dtype dt, int raw, const uint16_t *row, size_t n, float thr,
                         int16_t kt, int32_t base, int32_t *ids, float *vals, size_t cap,
                         int *nonfinite)
{
    const __m512 t = _mm512_set1_ps(thr);
    const __m512i em = _mm512_set1_epi16(dt == NEXTOK_DTYPE_F16 ? 0x7c00 : 0x7f80);
    const __m512i k = _mm512_set1_epi16(kt);
    __m512i ex = _mm512_setzero_si512(); /* as compact_impl: the largest exponent field */
    size_t c = 0, i = 0;
    bool dense = false; /* as compact_impl */
    while (i + 128 <= n) {
        const size_t end = n - i >= SPAN ? i + SPAN : i + (n - i) / 128 * 128, c0 = c;
        if (dense && dense_fits(c, cap, end - i)) {
            for (; i < end; i += 32) {
                const __m512i h = _mm512_loadu_si512((const void *)(row + i));
                ex = _mm512_max_epu16(ex, _mm512_and_si512(h, em));
                const __mmask32 m = _mm512_cmpge_epi16_mask(raw ? h : hkey32(h), k);
                const __m512 x0 = widen16(dt, h, 0), x1 = widen16(dt, h, 1);
                const __mmask16 e0 = _mm512_mask_cmp_ps_mask((__mmask16)m, x0, t, _CMP_GE_OQ);
                const __mmask16 e1 = _mm512_mask_cmp_ps_mask((__mmask16)(m >> 16), x1, t, _CMP_GE_OQ);
                c = store16(x0, e0, base + (int32_t)i, ids, vals, c);
                c = store16(x1, e1, base + (int32_t)(i + 16), ids, vals, c);
            }
        } else {
            for (; i < end; i += 128) {
                const __m512i h0 = _mm512_loadu_si512((const void *)(row + i));
                const __m512i h1 = _mm512_loadu_si512((const void *)(row + i + 32));
                const __m512i h2 = _mm512_loadu_si512((const void *)(row + i + 64));
                const __m512i h3 = _mm512_loadu_si512((const void *)(row + i + 96));
                ex = _mm512_max_epu16(ex, _mm512_and_si512(h0, em));
                ex = _mm512_max_epu16(ex, _mm512_and_si512(h1, em));
                ex = _mm512_max_epu16(ex, _mm512_and_si512(h2, em));
                ex = _mm512_max_epu16(ex, _mm512_and_si512(h3, em));
                const __mmask32 m0 = _mm512_cmpge_epi16_mask(raw ? h0 : hkey32(h0), k);
                const __mmask32 m1 = _mm512_cmpge_epi16_mask(raw ? h1 : hkey32(h1), k);
                const __mmask32 m2 = _mm512_cmpge_epi16_mask(raw ? h2 : hkey32(h2), k);
                const __mmask32 m3 = _mm512_cmpge_epi16_mask(raw ? h3 : hkey32(h3), k);
                if (__builtin_expect(!_kortestz_mask32_u8(_kor_mask32(m0, m1), _kor_mask32(m2, m3)), 0)) {
                    if (m0) c = emit32(dt, h0, m0, t, base + (int32_t)i, ids, vals, cap, c);
                    if (m1) c = emit32(dt, h1, m1, t, base + (int32_t)(i + 32), ids, vals, cap, c);
                    if (m2) c = emit32(dt, h2, m2, t, base + (int32_t)(i + 64), ids, vals, cap, c);
                    if (m3) c = emit32(dt, h3, m3, t, base + (int32_t)(i + 96), ids, vals, cap, c);
                }
            }
        }
        dense = (c - c0) * DENSE_AT > SPAN;
    }
    *nonfinite |= _mm512_cmpeq_epi16_mask(ex, em) != 0;
    /* the last n % 128 elements: the f32 loop (masked 16-lane tail) */
    return c + compact_impl(dt, row + i, n - i, thr, base + (int32_t)i, ids + (c < cap ? c : cap),
                            vals + (c < cap ? c : cap), c < cap ? cap - c : 0, nonfinite);
}

static size_t avx512_compact_ge(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                int32_t base, int32_t *ids, float *vals, size_t cap,
                                int *nonfinite)
{
    if (dt == NEXTOK_DTYPE_F32 || n < 128)
        return BY_DTYPE(compact_impl, dt, row, n, thr, base, ids, vals, cap, nonfinite);
    const int16_t kt = half_floor_key(dt, thr);
    if (dt == NEXTOK_DTYPE_F16)
        return kt > 0 ? compact16_impl(NEXTOK_DTYPE_F16, 1, row, n, thr, kt, base, ids, vals, cap, nonfinite)
                      : compact16_impl(NEXTOK_DTYPE_F16, 0, row, n, thr, kt, base, ids, vals, cap, nonfinite);
    return kt > 0 ? compact16_impl(NEXTOK_DTYPE_BF16, 1, row, n, thr, kt, base, ids, vals, cap, nonfinite)
                  : compact16_impl(NEXTOK_DTYPE_BF16, 0, row, n, thr, kt, base, ids, vals, cap, nonfinite);
}

/* A loaded vector kept in a register: without it the compiler folds the
 * load into each of the two instructions that use the value and reads every
 * line twice (measured: the f32 block maxima took 8 us a 128256-id row, not
 * 5). */
#define ONE_LOAD(v) __asm__("" : "+v"(v))

/*
 * One listed block alone or in a short run (top-k's or a maximum's few
 * blocks): the filter masks of the whole block first, packed 64 lanes to a
 * word with no branch, then only the set bits, one element each. A block
 * holds one or two candidates here, so the per-vector branches of
 * compact_impl would each mispredict about as often as not on a row the
 * predictors have not seen, and a call per block pays its set-up. The
 * output is compact_impl's over the block: the candidates in index order,
 * the same count past cap. Non-finite values are not looked for: the
 * maxima that listed the block came from block_max, which reported them.
 *
 * sparse_emit: the elements of block x (first: its first id) whose bit is set in
 * word[0 .. NEXTOK__BLK/64), kept when their value is >= thr (f16/bf16:
 * the 16-bit filter lets a few below through).
 */
AI size_t sparse_emit(enum nextok_dtype dt, const void *x, const uint64_t *word, int32_t first, float thr,
                      int32_t *ids, float *vals, size_t cap, size_t c)
{
    for (unsigned g = 0; g < NEXTOK__BLK / 64; g++)
        for (uint64_t w = word[g]; w; w &= w - 1) {
            const unsigned i = 64 * g + (unsigned)__builtin_ctzll(w);
            const float v = nextok__elem(dt, x, i);
            if (c < cap) {
                ids[c] = first + (int32_t)i;
                vals[c] = v;
            }
            c += v >= thr;
        }
    return c;
}

AI size_t sparse_block16(enum nextok_dtype dt, int raw, const uint16_t *x, int32_t first, float thr,
                         __m512i k, int32_t *ids, float *vals, size_t cap, size_t c)
{
    uint64_t word[NEXTOK__BLK / 64];
    for (unsigned g = 0; g < NEXTOK__BLK / 64; g++) {
        __m512i h0 = _mm512_loadu_si512((const void *)(x + 64 * g));
        __m512i h1 = _mm512_loadu_si512((const void *)(x + 64 * g + 32));
        ONE_LOAD(h0);
        ONE_LOAD(h1);
        const __mmask32 m0 = _mm512_cmpge_epi16_mask(raw ? h0 : hkey32(h0), k);
        const __mmask32 m1 = _mm512_cmpge_epi16_mask(raw ? h1 : hkey32(h1), k);
        word[g] = _cvtmask64_u64(_mm512_kunpackd(m1, m0));
    }
    return sparse_emit(dt, x, word, first, thr, ids, vals, cap, c);
}

AI size_t sparse_block32(const float *x, int32_t first, float thr, int32_t *ids, float *vals, size_t cap,
                         size_t c)
{
    const __m512 t = _mm512_set1_ps(thr);
    uint64_t word[NEXTOK__BLK / 64];
    for (unsigned g = 0; g < NEXTOK__BLK / 64; g++) {
        const __mmask16 m0 = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + 64 * g), t, _CMP_GE_OQ);
        const __mmask16 m1 = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + 64 * g + 16), t, _CMP_GE_OQ);
        const __mmask16 m2 = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + 64 * g + 32), t, _CMP_GE_OQ);
        const __mmask16 m3 = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + 64 * g + 48), t, _CMP_GE_OQ);
        word[g] = _cvtmask64_u64(_mm512_kunpackd(_mm512_kunpackw(m3, m2), _mm512_kunpackw(m1, m0)));
    }
    return sparse_emit(NEXTOK_DTYPE_F32, x, word, first, thr, ids, vals, cap, c);
}

/* nextok__compact_blocks_by's block: the f16/bf16 filter's key computed
 * per block (about k blocks a row). */
static size_t avx512_block(const void *row, enum nextok_dtype dt, size_t i0, float thr, int32_t *ids,
                           float *vals, size_t cap, size_t c)
{
    if (dt == NEXTOK_DTYPE_F32) return sparse_block32((const float *)row + i0, (int32_t)i0, thr, ids, vals, cap, c);
    const int16_t kt = half_floor_key(dt, thr);
    const __m512i k = _mm512_set1_epi16(kt);
    const uint16_t *x = (const uint16_t *)row + i0;
    if (dt == NEXTOK_DTYPE_F16)
        return kt > 0 ? sparse_block16(NEXTOK_DTYPE_F16, 1, x, (int32_t)i0, thr, k, ids, vals, cap, c)
                      : sparse_block16(NEXTOK_DTYPE_F16, 0, x, (int32_t)i0, thr, k, ids, vals, cap, c);
    return kt > 0 ? sparse_block16(NEXTOK_DTYPE_BF16, 1, x, (int32_t)i0, thr, k, ids, vals, cap, c)
                  : sparse_block16(NEXTOK_DTYPE_BF16, 0, x, (int32_t)i0, thr, k, ids, vals, cap, c);
}

static size_t avx512_compact_blocks(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                    const float *bmax, int32_t *ids, float *vals, size_t cap,
                                    int *nonfinite)
{
    return nextok__compact_blocks_by(avx512_compact_ge, avx512_block, row, dt, n, thr, bmax, ids, vals, cap,
                                     nonfinite);
}

/* block_max. f32: four running maxima and two exponent-field maxima per
 * block (independent chains), one reduction per block. */
AI float block_max32(const float *x, __m512i *ex)
{
    const __m512i em = _mm512_set1_epi32(0x7f800000);
    __m512 a0 = _mm512_loadu_ps(x), a1 = _mm512_loadu_ps(x + 16);
    __m512 a2 = _mm512_loadu_ps(x + 32), a3 = _mm512_loadu_ps(x + 48);
    ONE_LOAD(a0);
    ONE_LOAD(a1);
    ONE_LOAD(a2);
    ONE_LOAD(a3);
    __m512i e0 = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(a0), em), _mm512_and_si512(_mm512_castps_si512(a1), em));
    __m512i e1 = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(a2), em), _mm512_and_si512(_mm512_castps_si512(a3), em));
    for (size_t j = 64; j < NEXTOK__BLK; j += 64) {
        __m512 b0 = _mm512_loadu_ps(x + j), b1 = _mm512_loadu_ps(x + j + 16);
        __m512 b2 = _mm512_loadu_ps(x + j + 32), b3 = _mm512_loadu_ps(x + j + 48);
        ONE_LOAD(b0);
        ONE_LOAD(b1);
        ONE_LOAD(b2);
        ONE_LOAD(b3);
        e0 = _mm512_max_epu32(e0, _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(b0), em),
                                                   _mm512_and_si512(_mm512_castps_si512(b1), em)));
        e1 = _mm512_max_epu32(e1, _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(b2), em),
                                                   _mm512_and_si512(_mm512_castps_si512(b3), em)));
        a0 = _mm512_max_ps(b0, a0);
        a1 = _mm512_max_ps(b1, a1);
        a2 = _mm512_max_ps(b2, a2);
        a3 = _mm512_max_ps(b3, a3);
    }
    *ex = _mm512_max_epu32(*ex, _mm512_max_epu32(e0, e1));
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a0, a1), _mm512_max_ps(a2, a3)));
}

/* f16/bf16: the maximum of the 16-bit keys (hkey32: they order the finite
 * values as their floats do), turned back into the value. */
AI float block_max16(enum nextok_dtype dt, const uint16_t *x, __m512i *ex)
{
    const __m512i em = _mm512_set1_epi16(dt == NEXTOK_DTYPE_F16 ? 0x7c00 : 0x7f80);
    __m512i a0 = _mm512_loadu_si512((const void *)x), a1 = _mm512_loadu_si512((const void *)(x + 32));
    __m512i a2 = _mm512_loadu_si512((const void *)(x + 64)), a3 = _mm512_loadu_si512((const void *)(x + 96));
    ONE_LOAD(a0);
    ONE_LOAD(a1);
    ONE_LOAD(a2);
    ONE_LOAD(a3);
    __m512i e0 = _mm512_max_epu16(_mm512_and_si512(a0, em), _mm512_and_si512(a1, em));
    __m512i e1 = _mm512_max_epu16(_mm512_and_si512(a2, em), _mm512_and_si512(a3, em));
    a0 = hkey32(a0), a1 = hkey32(a1), a2 = hkey32(a2), a3 = hkey32(a3);
    for (size_t j = 128; j < NEXTOK__BLK; j += 128) {
        __m512i b0 = _mm512_loadu_si512((const void *)(x + j)), b1 = _mm512_loadu_si512((const void *)(x + j + 32));
        __m512i b2 = _mm512_loadu_si512((const void *)(x + j + 64)), b3 = _mm512_loadu_si512((const void *)(x + j + 96));
        ONE_LOAD(b0);
        ONE_LOAD(b1);
        ONE_LOAD(b2);
        ONE_LOAD(b3);
        e0 = _mm512_max_epu16(e0, _mm512_max_epu16(_mm512_and_si512(b0, em), _mm512_and_si512(b1, em)));
        e1 = _mm512_max_epu16(e1, _mm512_max_epu16(_mm512_and_si512(b2, em), _mm512_and_si512(b3, em)));
        a0 = _mm512_max_epi16(hkey32(b0), a0);
        a1 = _mm512_max_epi16(hkey32(b1), a1);
        a2 = _mm512_max_epi16(hkey32(b2), a2);
        a3 = _mm512_max_epi16(hkey32(b3), a3);
    }
    *ex = _mm512_max_epu16(*ex, _mm512_max_epu16(e0, e1));
    const __m512i m = _mm512_max_epi16(_mm512_max_epi16(a0, a1), _mm512_max_epi16(a2, a3));
    __m256i h = _mm256_max_epi16(_mm512_castsi512_si256(m), _mm512_extracti64x4_epi64(m, 1));
    __m128i q = _mm_max_epi16(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    q = _mm_max_epi16(q, _mm_shuffle_epi32(q, 0x4e));
    q = _mm_max_epi16(q, _mm_shuffle_epi32(q, 0xb1));
    q = _mm_max_epi16(q, _mm_srli_epi32(q, 16));
    const int16_t key = (int16_t)_mm_cvtsi128_si32(q);
    const uint16_t bits = (uint16_t)(key < 0 ? key ^ 0x7fff : key); /* the key is its own inverse */
    if (dt == NEXTOK_DTYPE_F16) return _cvtsh_ss(bits);
    const uint32_t u = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static size_t avx512_block_max(const void *row, enum nextok_dtype dt, size_t n, float *bmax, int *nonfinite)
{
    const size_t full = n / NEXTOK__BLK, esz = nextok_dtype_size(dt);
    __m512i ex = _mm512_setzero_si512();
    for (size_t b = 0; b < full; b++) {
        const size_t i = b * NEXTOK__BLK;
        bmax[b] = dt == NEXTOK_DTYPE_F32 ? block_max32((const float *)row + i, &ex)
                  : dt == NEXTOK_DTYPE_F16 ? block_max16(NEXTOK_DTYPE_F16, (const uint16_t *)row + i, &ex)
                                           : block_max16(NEXTOK_DTYPE_BF16, (const uint16_t *)row + i, &ex);
    }
    const __m512i em = dt == NEXTOK_DTYPE_F32 ? _mm512_set1_epi32(0x7f800000)
                       : _mm512_set1_epi16(dt == NEXTOK_DTYPE_F16 ? 0x7c00 : 0x7f80);
    /* the exponent fields reached all ones in some lane: a NaN or ±inf */
    *nonfinite |= (dt == NEXTOK_DTYPE_F32 ? _mm512_cmpeq_epi32_mask(ex, em) : _mm512_cmpeq_epi16_mask(ex, em)) != 0;
    if (full * NEXTOK__BLK == n) return full;
    bmax[full] = avx512_max((const char *)row + full * NEXTOK__BLK * esz, dt, n - full * NEXTOK__BLK, nonfinite);
    return full + 1;
}

/* Candidates, 16 at a time: quotients (clamped with min/max, which leave
 * finite values alone and map ±inf to ±FLT_MAX), the compare, both lists
 * compressed in registers and interleaved into {id, v, 0} records by three
 * two-source permutes; masked stores write exactly the 3 * count words. */
static size_t avx512_cands_ge(const int32_t *ids, const float *vals, size_t n, float div, float thr,
                              struct nextok_token_data *out)
{
    const __m512 dv = _mm512_set1_ps(div), t = _mm512_set1_ps(thr);
    const __m512 hi = _mm512_set1_ps(3.40282347e38f), lo = _mm512_set1_ps(-3.40282347e38f);
    /* output word w = 3 j + f of record j: f = 0 the id (source a, lane j),
     * f = 1 the value (source b: 16 + j), f = 2 zero (masked off) */
    const __m512i p0 = _mm512_setr_epi32(0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
    const __m512i p1 = _mm512_setr_epi32(21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
    const __m512i p2 = _mm512_setr_epi32(0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
    const __mmask16 z0 = 0xB6DB, z1 = 0xDB6D, z2 = 0x6DB6; /* words with f != 2 */
    int32_t *o = (int32_t *)out;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 tm = tail_mask(n - i);
        __m512 v = _mm512_maskz_loadu_ps(tm, vals + i);
        if (div != 1.0f) v = _mm512_max_ps(_mm512_min_ps(_mm512_div_ps(v, dv), hi), lo);
        const __mmask16 m = _mm512_mask_cmp_ps_mask(tm, v, t, _CMP_GE_OQ);
        if (!m) continue;
        const __m512i ci = _mm512_maskz_compress_epi32(m, _mm512_maskz_loadu_epi32(tm, ids + i));
        const __m512i cv = _mm512_castps_si512(_mm512_maskz_compress_ps(m, v));
        const unsigned cnt = (unsigned)__builtin_popcount(m), words = 3 * cnt;
        const __mmask16 w0 = (__mmask16)(words >= 16 ? 0xffff : (1u << words) - 1u);
        const __mmask16 w1 = (__mmask16)(words >= 32 ? 0xffff : words <= 16 ? 0 : (1u << (words - 16)) - 1u);
        const __mmask16 w2 = (__mmask16)(words <= 32 ? 0 : (1u << (words - 32)) - 1u);
        int32_t *d = o + 3 * k;
        _mm512_mask_storeu_epi32(d, w0, _mm512_maskz_permutex2var_epi32(z0, ci, p0, cv));
        _mm512_mask_storeu_epi32(d + 16, w1, _mm512_maskz_permutex2var_epi32(z1, ci, p1, cv));
        _mm512_mask_storeu_epi32(d + 32, w2, _mm512_maskz_permutex2var_epi32(z2, ci, p2, cv));
        k += cnt;
    }
    return k;
}

/* ---- sum / sum of squares (estimate) ---------------------------------------- */

/* Chunks of 512 elements: four streams of 16 lanes, each lane a float
 * partial of 8 terms; the streams are added as (a + b) + (c + d) (so each
 * term sees at most 10 float roundings, within NEXTOK__SUMSQ_BLOCK), then
 * widened to double. The tail: one float term per partial. The non-finite
 * flag costs nothing per element: a NaN or ±inf makes the sum of squares
 * non-finite, and only then is the row scanned again for it. */
/* One stream's step: the maximum of the raw values, then d = v - center
 * into the float partials of d and d * d (one fma). */
AI void sumsq16(__m512 x, __m512 dv, __m512 c, float div, __m512 *m, __m512 *s, __m512 *q)
{
    *m = _mm512_max_ps(x, *m);
    if (div != 1.0f) x = _mm512_div_ps(x, dv);
    x = _mm512_sub_ps(x, c);
    *s = _mm512_add_ps(*s, x);
    *q = _mm512_fmadd_ps(x, x, *q);
}

AI float sumsq_impl(enum nextok_dtype dt, const void *row, size_t n, float div, float center,
                    int *nonfinite, double *sum, double *sumsq)
{
    const __m512 dv = _mm512_set1_ps(div), c = _mm512_set1_ps(center);
    const __m512 ninf = _mm512_set1_ps(-INFINITY), zero = _mm512_setzero_ps();
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
    __m512 m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
    size_t i = 0;
    for (; i + 512 <= n; i += 512) {
        __m512 sa = zero, sb = zero, sc = zero, sd = zero, qa = zero, qb = zero, qc = zero, qd = zero;
        for (size_t j = i; j < i + 512; j += 64) {
            sumsq16(load16(row, dt, j, 0xffff), dv, c, div, &m0, &sa, &qa);
            sumsq16(load16(row, dt, j + 16, 0xffff), dv, c, div, &m1, &sb, &qb);
            sumsq16(load16(row, dt, j + 32, 0xffff), dv, c, div, &m2, &sc, &qc);
            sumsq16(load16(row, dt, j + 48, 0xffff), dv, c, div, &m3, &sd, &qd);
        }
        const __m512 fs = _mm512_add_ps(_mm512_add_ps(sa, sb), _mm512_add_ps(sc, sd));
        const __m512 fq = _mm512_add_ps(_mm512_add_ps(qa, qb), _mm512_add_ps(qc, qd));
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(fs)));
        s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(fs, 1)));
        q0 = _mm512_add_pd(q0, _mm512_cvtps_pd(_mm512_castps512_ps256(fq)));
        q1 = _mm512_add_pd(q1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(fq, 1)));
    }
    for (; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        __m512 v = load16(row, dt, i, k);
        m0 = _mm512_max_ps(v, m0);
        if (div != 1.0f) v = _mm512_div_ps(v, dv);
        v = _mm512_maskz_sub_ps(k, v, c); /* the -inf padding counts as 0 */
        const __m512 fq = _mm512_mul_ps(v, v);
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
        q0 = _mm512_add_pd(q0, _mm512_cvtps_pd(_mm512_castps512_ps256(fq)));
        q1 = _mm512_add_pd(q1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(fq, 1)));
    }
    *sum = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
    *sumsq = _mm512_reduce_add_pd(_mm512_add_pd(q0, q1));
    if (!isfinite(*sumsq)) { /* a NaN or ±inf, or an overflow: which one */
        int nf = 0;
        (void)max_impl(dt, row, n, &nf);
        *nonfinite |= nf;
    }
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
}

static float avx512_sum_sq(const void *row, enum nextok_dtype dt, size_t n, float div, float center,
                           int *nonfinite, double *sum, double *sumsq)
{
    return BY_DTYPE(sumsq_impl, dt, row, n, div, center, nonfinite, sum, sumsq);
}

/* The tight fallback (sum_sq_dbl): every term in double, as before the
 * float partials. */
AI int sumsq_dbl_impl(enum nextok_dtype dt, const void *row, size_t n, float div, double center,
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

static void avx512_sum_sq_dbl(const void *row, enum nextok_dtype dt, size_t n, float div,
                          double center, double *sum, double *sumsq)
{
    (void)BY_DTYPE(sumsq_dbl_impl, dt, row, n, div, center, sum, sumsq);
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
    /* operands in this order keep NaN (min/max return the second on NaN), as
     * the reference's comparisons do */
    return _mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), fm), _mm512_min_ps(fm, x));
}

/* The tree of nextok__wblock over 16 double lanes (a0: lanes 0-7, a1: 8-15). */
AI double tree16(__m512d a0, __m512d a1)
{
    const __m512d h = _mm512_add_pd(a0, a1);
    const __m256d q = _mm256_add_pd(_mm512_castpd512_pd256(h), _mm512_extractf64x4_pd(h, 1));
    const __m128d d = _mm_add_pd(_mm256_castpd256_pd128(q), _mm256_extractf128_pd(q, 1));
    return _mm_cvtsd_f64(_mm_add_sd(d, _mm_unpackhi_pd(d, d)));
}

/* The tree of a block's 16 float lane sums. The loops that form lane sums
 * call it for block b - 1 after block b's lane sums (and once after the
 * loop): by then its input is ready, so its chain of dependent adds does not
 * sit in the scheduler while the current block's work waits for it (flat V
 * 128256 weights pass at T = 0.8: 27.7 -> 25.5 us, docs/performance.md). */
AI double treef16(__m512 a)
{
    return tree16(_mm512_cvtps_pd(_mm512_castps512_ps256(a)), _mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1)));
}

/* The weight of raw x (processed v) in the weights pass: full, the
 * subtraction and the cut-off test; ge, zero unless x >= gev (min-p's dense
 * set; GCC folds the zeroing into the last fma's mask). */
AI __m512 weight16(__m512 x, __m512 v, __m512 cv, __m512i tab, __m512 cutv, __m512 gev, int full, int ge)
{
    const __m512 a = full ? _mm512_sub_ps(v, cv) : v;
    const __m512 e = expw16c(a, tab, cutv, full);
    return ge ? _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, gev, _CMP_GE_OQ), e) : e;
}

/* full = 0: ref is nextok__wref_unscaled (no subtraction, no cut-off test,
 * no saturation: an overflowing quotient is inf, which vmax reports).
 * xd = 1 (full = 0, 0 < div < inf): the minima and maxima are taken over the raw
 * x and divided once at the end: v = fl(x / div) is non-decreasing in x, so
 * fl(max x / div) = max fl(x / div) (likewise min), the same bits; the
 * comparisons then do not wait for the division. */
AI void weights_impl(enum nextok_dtype dt, const void *row, size_t n, float div,
                     const struct nextok__wref *ref, int full, int xd, int ge, float gef,
                     float *w, double *bsum, double *cum, float *bmax, float *vmin, float *vmax)
{
    const __m512 gev = _mm512_set1_ps(gef);
    const __m512 cv = _mm512_set1_ps(ref->c), cutv = _mm512_set1_ps(ref->cut);
    const __m512i tab = wtab16_of(ref);
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 lo = _mm512_set1_ps(INFINITY), hi = ninf, bm = ninf; /* bm: the open 256-id group */
    size_t b = 0;
    double acc = 0.0; /* the running sum */
    __m512 pa = _mm512_setzero_ps(); /* the previous block's lane sums (treef16) */
    for (; (b + 1) * 64 <= n; b++) {
        __m512 a = _mm512_setzero_ps();
        for (size_t j = 0; j < 4; j++) { /* lane sums in float, in order */
            const size_t i = b * 64 + j * 16;
            const __m512 x = load16(row, dt, i, 0xffff), v = temp16s(x, div, full);
            if (!ge) {
                lo = _mm512_min_ps(xd ? x : v, lo); /* NaN: lo kept */
                bm = _mm512_max_ps(xd ? x : v, bm);
            }
            const __m512 e = weight16(x, v, cv, tab, cutv, gev, full, ge);
            _mm512_storeu_ps(w + i, e);
            a = _mm512_add_ps(a, e);
        }
        if (!ge && b % 4 == 3) { /* a group closes */
            hi = _mm512_max_ps(bm, hi);
            if (bmax) bmax[b / 4] = _mm512_reduce_max_ps(bm);
            bm = ninf;
        }
        if (b > 0) cum[b - 1] = acc += bsum[b - 1] = treef16(pa);
        pa = a;
    }
    if (b > 0) cum[b - 1] = acc += bsum[b - 1] = treef16(pa);
    for (size_t i = b * 64; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 x = load16(row, dt, i, k), v = temp16s(x, div, full);
        lo = _mm512_mask_min_ps(lo, k, xd ? x : v, lo);
        bm = _mm512_mask_max_ps(bm, k, xd ? x : v, bm);
        _mm512_mask_storeu_ps(w + i, k, weight16(x, v, cv, tab, cutv, gev, full, ge));
    }
    if (b * 64 < n) { /* the partial block */
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
        cum[b] = acc + bsum[b];
    }
    if (ge) return;
    if (n % 256 != 0) { /* the last group is still open */
        hi = _mm512_max_ps(bm, hi);
        if (bmax) bmax[(n - 1) / 256] = _mm512_reduce_max_ps(bm);
    }
    *vmin = _mm512_reduce_min_ps(lo);
    *vmax = _mm512_reduce_max_ps(hi);
    if (xd) { /* the raw extremes to processed values (±inf when none: the same) */
        *vmin /= div;
        *vmax /= div;
        const __m512 dv = _mm512_set1_ps(div);
        for (size_t g = 0, ng = (n + 255) / 256; bmax && g < ng; g += 16) {
            const __mmask16 k = tail_mask(ng - g);
            _mm512_mask_storeu_ps(bmax + g, k, _mm512_div_ps(_mm512_maskz_loadu_ps(k, bmax + g), dv));
        }
    }
}

static void avx512_weights(const void *row, enum nextok_dtype dt, size_t n, float div,
                           const struct nextok__wref *ref, float *w, double *bsum, double *cum,
                           float *bmax, float *vmin, float *vmax)
{
    /* div == 1 and the tests as constants: four loops without per-vector
     * branches */
    const int full = !nextok__wref_is_unscaled(ref);
    if (div == 1.0f && !full) BY_DTYPE(weights_impl, dt, row, n, 1.0f, ref, 0, 0, 0, 0.0f, w, bsum, cum, bmax, vmin, vmax);
    else if (div == 1.0f) BY_DTYPE(weights_impl, dt, row, n, 1.0f, ref, 1, 0, 0, 0.0f, w, bsum, cum, bmax, vmin, vmax);
    else if (!full && div > 0.0f && div < INFINITY) BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 1, 0, 0.0f, w, bsum, cum, bmax, vmin, vmax);
    else if (!full) BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 0, 0, 0.0f, w, bsum, cum, bmax, vmin, vmax);
    else BY_DTYPE(weights_impl, dt, row, n, div, ref, 1, 0, 0, 0.0f, w, bsum, cum, bmax, vmin, vmax);
}

static void avx512_weights_ge(const void *row, enum nextok_dtype dt, size_t n, float div,
                              const struct nextok__wref *ref, float ge, float *w, double *bsum, double *cum)
{
    if (nextok__wref_is_unscaled(ref)) BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 0, 1, ge, w, bsum, cum, NULL, NULL, NULL);
    else BY_DTYPE(weights_impl, dt, row, n, div, ref, 1, 0, 1, ge, w, bsum, cum, NULL, NULL, NULL);
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
    __m512d p0 = _mm512_setzero_pd(), p1 = p0; /* the previous block's lanes (as treef16) */
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        __m512d a0 = _mm512_setzero_pd(), a1 = a0;
        for (size_t j = 0; j < 64; j += 16) wv16(dt, row, w, b * 64 + j, div, 0xffff, &a0, &a1);
        if (b > 0) bs[b - 1] = tree16(p0, p1);
        p0 = a0, p1 = a1;
    }
    if (b > 0) bs[b - 1] = tree16(p0, p1);
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
struct typ_acc {
    __m512i qt0, qt1, qb0, qb1; /* masses: every one, below the bracket */
    size_t m, nb;               /* inside lanes stored, below lanes */
};

AI void typ16(enum nextok_dtype dt, const void *row, size_t i, __mmask16 k, float div, const float *w,
              __m512 cv, __m512 scl, __m512i klo, __m512i khi, struct typ_acc *s, float *sc,
              int32_t *ids, float *vals)
{
    const __m512 cap = _mm512_set1_ps(0x1p62f);
    const __m512i step = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 v = temp16s(load16(row, dt, i, k), div, 1);
    const __m512 sv = _mm512_abs_ps(_mm512_sub_ps(v, cv));
    _mm512_mask_storeu_ps(sc + i, k, sv);
    const __m512 x = _mm512_min_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, w + i), scl), cap);
    const __m512i q0 = _mm512_cvttps_epi64(_mm512_castps512_ps256(x));
    const __m512i q1 = _mm512_cvttps_epi64(_mm512_extractf32x8_ps(x, 1));
    s->qt0 = _mm512_add_epi64(s->qt0, q0);
    s->qt1 = _mm512_add_epi64(s->qt1, q1);
    const __m512i key = _mm512_castps_si512(sv);
    const __mmask16 below = _mm512_mask_cmplt_epu32_mask(k, key, klo);
    const __mmask16 in = _mm512_mask_cmple_epu32_mask(k & (__mmask16)~below, key, khi);
    s->qb0 = _mm512_mask_add_epi64(s->qb0, (__mmask8)below, s->qb0, q0);
    s->qb1 = _mm512_mask_add_epi64(s->qb1, (__mmask8)(below >> 8), s->qb1, q1);
    s->nb += (size_t)__builtin_popcount(below);
    /* no branch: a bracket holding a few percent of the row has inside
     * lanes in most vectors, and a mispredicted branch costs more than
     * the two stores */
    const __m512i id = _mm512_add_epi32(_mm512_set1_epi32((int32_t)i), step);
    _mm512_storeu_si512((void *)(ids + s->m), _mm512_maskz_compress_epi32(in, id));
    _mm512_storeu_ps(vals + s->m, _mm512_maskz_compress_ps(in, sv));
    s->m += (size_t)__builtin_popcount(in);
}

/* Whole vectors with a constant lane mask (which the compiler drops), then
 * the tail's. */
AI size_t typscan_impl(enum nextok_dtype dt, const void *row, size_t n, float div, const float *w,
                       struct nextok__typscan *ts, float *sc, int32_t *ids, float *vals)
{
    const __m512 cv = _mm512_set1_ps(ts->center), scl = _mm512_set1_ps(ts->scale);
    const __m512i klo = _mm512_set1_epi32((int32_t)ts->klo), khi = _mm512_set1_epi32((int32_t)ts->khi);
    struct typ_acc s = {.m = 0, .nb = 0};
    s.qt0 = s.qt1 = s.qb0 = s.qb1 = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) typ16(dt, row, i, 0xffff, div, w, cv, scl, klo, khi, &s, sc, ids, vals);
    if (i < n) typ16(dt, row, i, tail_mask(n - i), div, w, cv, scl, klo, khi, &s, sc, ids, vals);
    ts->q_total += hsum_u64(_mm512_add_epi64(s.qt0, s.qt1));
    ts->q_below += hsum_u64(_mm512_add_epi64(s.qb0, s.qb1));
    ts->n_below += s.nb;
    return s.m;
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

/* ---- top-p: range compaction and the mass histogram ---------------------------- */

static size_t avx512_compact_range(const void *row, enum nextok_dtype dt, size_t n, float lo,
                                   float hi, int32_t base, int32_t *ids, float *vals, size_t cap)
{
    const __m512 l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
    size_t c = 0;
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 x = load16(row, dt, i, k);
        const __mmask16 m = _mm512_mask_cmp_ps_mask(_mm512_mask_cmp_ps_mask(k, x, l, _CMP_GE_OQ), x, h, _CMP_LE_OQ);
        if (m) c = emit16(x, m, base + (int32_t)i, ids, vals, cap, c);
    }
    return c;
}

/* The cut 16 at a time; ids only matter for lanes between eq and gt (the
 * cut value's ties), which are rare: an exact lane test then. Block sums
 * as weights_impl forms them (float lanes in order, the tree). */
AI __m512 cut16(enum nextok_dtype dt, const void *row, size_t i, __mmask16 k, __m512 g, __m512 e,
                int32_t cut, float *w)
{
    const __m512 x = load16(row, dt, i, k); /* lanes past n: -inf, never kept */
    __mmask16 keep = _mm512_cmp_ps_mask(x, g, _CMP_GE_OQ);
    const __mmask16 tie = _mm512_mask_cmp_ps_mask((__mmask16)~keep, x, e, _CMP_GE_OQ);
    if (tie) {
        const __m512i id = _mm512_add_epi32(_mm512_set1_epi32((int32_t)i),
                                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        keep |= _mm512_mask_cmple_epi32_mask(tie, id, _mm512_set1_epi32(cut));
    }
    const __m512 wv = _mm512_maskz_loadu_ps(keep, w + i);
    _mm512_mask_storeu_ps(w + i, k, wv);
    return wv;
}

AI void cut_impl(enum nextok_dtype dt, const void *row, size_t n, float gt, float eq, int32_t cut,
                 float *w, double *bsum)
{
    const __m512 g = _mm512_set1_ps(gt), e = _mm512_set1_ps(eq);
    size_t b = 0;
    __m512 pa = _mm512_setzero_ps(); /* the previous block's lane sums (treef16) */
    for (; (b + 1) * 64 <= n; b++) {
        __m512 a = _mm512_setzero_ps();
        for (size_t j = 0; j < 4; j++) a = _mm512_add_ps(a, cut16(dt, row, b * 64 + j * 16, 0xffff, g, e, cut, w));
        if (b > 0) bsum[b - 1] = treef16(pa);
        pa = a;
    }
    if (b > 0) bsum[b - 1] = treef16(pa);
    if (b * 64 < n) { /* the partial block */
        for (size_t i = b * 64; i < n; i += 16) cut16(dt, row, i, tail_mask(n - i), g, e, cut, w);
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
    }
}

static void avx512_cut_weights(const void *row, enum nextok_dtype dt, size_t n, float gt, float eq,
                               int32_t cut, float *w, double *bsum)
{
    BY_DTYPE(cut_impl, dt, row, n, gt, eq, cut, w, bsum);
}

/* Masses 16 at a time (the same min and truncating conversion as mass_q),
 * summed per threshold with masked 64-bit adds: no scatter. */
#define MA_ADD(acc0, acc1, m, q0, q1)                                      \
    do {                                                                     \
        acc0 = _mm512_mask_add_epi64(acc0, (__mmask8)(m), acc0, q0);         \
        acc1 = _mm512_mask_add_epi64(acc1, (__mmask8)((m) >> 8), acc1, q1);  \
    } while (0)

/* The masses of weights i .. i+15 (lanes k), as mass_q: times scale, the
 * same min, truncation; lanes 0-7 in *q0, 8-15 in *q1. */
AI void mass16(const float *w, size_t i, __mmask16 k, __m512 sc, __m512i *q0, __m512i *q1)
{
    const __m512 ws = _mm512_min_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, w + i), sc),
                                    _mm512_set1_ps(0x1p62f));
    *q0 = _mm512_cvttps_epi64(_mm512_castps512_ps256(ws));
    *q1 = _mm512_cvttps_epi64(_mm512_extractf32x8_ps(ws, 1));
}

/* A group the hint rules out: its masses [g, e) only add to the total. */
AI void mass_add16(const float *w, size_t i, __mmask16 k, __m512 sc, __m512i *a0, __m512i *b0)
{
    __m512i q0, q1;
    mass16(w, i, k, sc, &q0, &q1);
    *a0 = _mm512_add_epi64(*a0, q0);
    *b0 = _mm512_add_epi64(*b0, q1);
}

/* (The loops over a 256-id group run whole groups with a constant lane mask,
 * which the compiler drops, and only the row's last group with the tail's
 * masks: top-p 0.9 on flat V 128256 rows, mass_band, 16.5 -> 15.6 read
 * passes side by side.) */
AI void mass_total(const float *w, size_t g, size_t e, __m512 sc, __m512i *a0, __m512i *b0)
{
    if (e - g == NEXTOK__BMAX_IDS)
        for (size_t i = g; i < e; i += 16) mass_add16(w, i, 0xffff, sc, a0, b0);
    else
        for (size_t i = g; i < e; i += 16) mass_add16(w, i, tail_mask(e - i), sc, a0, b0);
}

/* mass_above's sums (a[0], b[0]: every mass; a[1 + j], b[1 + j]: x >= t[j])
 * and counts for 16 elements at i, lanes k. */
struct above_acc {
    __m512i a[5], b[5];
    uint64_t c[4];
};

AI void above16(enum nextok_dtype dt, const void *row, const float *w, size_t i, __mmask16 k,
                __m512 sc, const __m512 t[4], struct above_acc *s, int counts)
{
    const __m512 x = load16(row, dt, i, k);
    __m512i q0, q1;
    mass16(w, i, k, sc, &q0, &q1);
    s->a[0] = _mm512_add_epi64(s->a[0], q0);
    s->b[0] = _mm512_add_epi64(s->b[0], q1);
    for (int j = 0; j < 4; j++) {
        const __mmask16 m = _mm512_mask_cmp_ps_mask(k, x, t[j], _CMP_GE_OQ);
        MA_ADD(s->a[1 + j], s->b[1 + j], m, q0, q1);
        if (counts) s->c[j] += (uint64_t)__builtin_popcount(m);
    }
}

AI void mass_above_impl(enum nextok_dtype dt, const void *row, size_t n, const float *w, float scale,
                        const float thr[4], const float *gmax, float gth, uint64_t q[5], uint64_t cnt[5],
                        int counts)
{
    const __m512 sc = _mm512_set1_ps(scale);
    const __m512 t[4] = {_mm512_set1_ps(thr[0]), _mm512_set1_ps(thr[1]), _mm512_set1_ps(thr[2]),
                         _mm512_set1_ps(thr[3])};
    struct above_acc s4 = {.c = {0}};
    for (int j = 0; j < 5; j++) s4.a[j] = s4.b[j] = _mm512_setzero_si512();
    for (size_t g = 0; g < n; g += NEXTOK__BMAX_IDS) {
        const size_t e = n - g < NEXTOK__BMAX_IDS ? n : g + NEXTOK__BMAX_IDS;
        if (gmax && !(gmax[g / NEXTOK__BMAX_IDS] >= gth)) {
            mass_total(w, g, e, sc, &s4.a[0], &s4.b[0]);
            continue;
        }
        if (e - g == NEXTOK__BMAX_IDS)
            for (size_t i = g; i < e; i += 16) above16(dt, row, w, i, 0xffff, sc, t, &s4, counts);
        else
            for (size_t i = g; i < e; i += 16) above16(dt, row, w, i, tail_mask(e - i), sc, t, &s4, counts);
    }
    for (int j = 0; j < 5; j++) q[j] = hsum_u64(_mm512_add_epi64(s4.a[j], s4.b[j]));
    if (counts) cnt[0] = n, cnt[1] = s4.c[0], cnt[2] = s4.c[1], cnt[3] = s4.c[2], cnt[4] = s4.c[3];
}

/* mass_band's sums (a[0], b[0]: every mass; a[1], b[1]: x >= hi; a[2],
 * b[2]: x >= lo) and counts for 16 elements at i, lanes k; the band's
 * elements stored at c (fits: unconditionally) or emitted. Its first half is
 * above16's at two thresholds, but one function and one accumulator struct
 * for both (thresholds and masks in arrays) was measured slower: top-p 0.9 on
 * flat V 128256 rows 15.6 -> 17.3 read passes, the compiler no longer kept
 * the sums in registers. */
struct band_acc {
    __m512i a[3], b[3];
    uint64_t c1, c2;
};

AI size_t band16(enum nextok_dtype dt, const void *row, const float *w, size_t i, __mmask16 k,
                 __m512 sc, __m512 th, __m512 tl, struct band_acc *s, int counts, bool fits,
                 int32_t base, int32_t *ids, float *vals, size_t cap, size_t c)
{
    const __m512 x = load16(row, dt, i, k);
    __m512i q0, q1;
    mass16(w, i, k, sc, &q0, &q1);
    s->a[0] = _mm512_add_epi64(s->a[0], q0);
    s->b[0] = _mm512_add_epi64(s->b[0], q1);
    const __mmask16 mh = _mm512_mask_cmp_ps_mask(k, x, th, _CMP_GE_OQ);
    const __mmask16 ml = _mm512_mask_cmp_ps_mask(k, x, tl, _CMP_GE_OQ);
    MA_ADD(s->a[1], s->b[1], mh, q0, q1);
    MA_ADD(s->a[2], s->b[2], ml, q0, q1);
    if (counts) {
        s->c1 += (uint64_t)__builtin_popcount(mh);
        s->c2 += (uint64_t)__builtin_popcount(ml);
    }
    const __mmask16 band = (__mmask16)(ml & ~mh);
    if (fits) return store16(x, band, base + (int32_t)i, ids, vals, c);
    return band ? emit16(x, band, base + (int32_t)i, ids, vals, cap, c) : c;
}

/* mass_above's sums for two thresholds, the band's elements compressed
 * (ids and raw values; the caller takes their masses from w). */
AI size_t mass_band_impl(enum nextok_dtype dt, const void *row, size_t n, const float *w, float scale,
                         float hi, float lo, const float *gmax, float gth, uint64_t q[3], uint64_t cnt[3],
                         int counts, int32_t base, int32_t *ids, float *vals, size_t cap)
{
    const __m512 sc = _mm512_set1_ps(scale);
    const __m512 th = _mm512_set1_ps(hi), tl = _mm512_set1_ps(lo);
    struct band_acc s = {.c1 = 0, .c2 = 0};
    for (int j = 0; j < 3; j++) s.a[j] = s.b[j] = _mm512_setzero_si512();
    size_t c = 0;
    for (size_t g = 0; g < n; g += NEXTOK__BMAX_IDS) {
        const size_t e = n - g < NEXTOK__BMAX_IDS ? n : g + NEXTOK__BMAX_IDS;
        if (gmax && !(gmax[g / NEXTOK__BMAX_IDS] >= gth)) {
            mass_total(w, g, e, sc, &s.a[0], &s.b[0]);
            continue;
        }
        /* the band's elements stored unconditionally where the group fits
         * (no branch per vector to mispredict), else emitted one by one;
         * whole groups without the tail's lane masks */
        const bool fits = dense_fits(c, cap, e - g);
        if (e - g == NEXTOK__BMAX_IDS)
            for (size_t i = g; i < e; i += 16)
                c = band16(dt, row, w, i, 0xffff, sc, th, tl, &s, counts, fits, base, ids, vals, cap, c);
        else
            for (size_t i = g; i < e; i += 16)
                c = band16(dt, row, w, i, tail_mask(e - i), sc, th, tl, &s, counts, fits, base, ids, vals, cap, c);
    }
    q[0] = hsum_u64(_mm512_add_epi64(s.a[0], s.b[0]));
    q[1] = hsum_u64(_mm512_add_epi64(s.a[1], s.b[1]));
    q[2] = hsum_u64(_mm512_add_epi64(s.a[2], s.b[2]));
    if (counts) cnt[0] = n, cnt[1] = s.c1, cnt[2] = s.c2;
    return c;
}

#undef MA_ADD

static size_t avx512_mass_band(const void *row, enum nextok_dtype dt, size_t n, const float *w,
                               float scale, float hi, float lo, const float *gmax, float gth,
                               uint64_t q[3], uint64_t cnt[3], int32_t base, int32_t *ids,
                               float *vals, size_t cap)
{
    if (cnt)
        return BY_DTYPE(mass_band_impl, dt, row, n, w, scale, hi, lo, gmax, gth, q, cnt, 1, base, ids,
                        vals, cap);
    return BY_DTYPE(mass_band_impl, dt, row, n, w, scale, hi, lo, gmax, gth, q, cnt, 0, base, ids, vals,
                    cap);
}

static void avx512_mass_above(const void *row, enum nextok_dtype dt, size_t n, const float *w,
                              float scale, const float thr[4], const float *gmax, float gth,
                              uint64_t q[5], uint64_t cnt[5])
{
    if (cnt) BY_DTYPE(mass_above_impl, dt, row, n, w, scale, thr, gmax, gth, q, cnt, 1);
    else BY_DTYPE(mass_above_impl, dt, row, n, w, scale, thr, gmax, gth, q, cnt, 0);
}

static void avx512_cut_keys(float *w, const float *sc, size_t n, uint32_t klo, double *bsum)
{
    const __m512i k = _mm512_set1_epi32((int32_t)klo);
    __m512 pa = _mm512_setzero_ps(); /* the previous block's lane sums (treef16) */
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        __m512 a = _mm512_setzero_ps();
        for (size_t j = 0; j < 4; j++) { /* lane sums in float, in order, as nextok__wblock */
            const size_t i = b * 64 + j * 16;
            const __mmask16 keep = _mm512_cmplt_epu32_mask(_mm512_loadu_si512((const void *)(sc + i)), k);
            const __m512 x = _mm512_maskz_loadu_ps(keep, w + i);
            _mm512_storeu_ps(w + i, x);
            a = _mm512_add_ps(a, x);
        }
        if (b > 0) bsum[b - 1] = treef16(pa);
        pa = a;
    }
    if (b > 0) bsum[b - 1] = treef16(pa);
    if (b * 64 < n) { /* the partial block */
        for (size_t i = b * 64; i < n; i += 16) {
            const __mmask16 t = tail_mask(n - i);
            const __mmask16 keep = _mm512_mask_cmplt_epu32_mask(t, _mm512_maskz_loadu_epi32(t, sc + i), k);
            _mm512_mask_storeu_ps(w + i, t, _mm512_maskz_loadu_ps(keep, w + i));
        }
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
    }
}

static void avx512_probs(const float *w, size_t n, double z, float *p)
{
    const __m512d zv = _mm512_set1_pd(z);
    for (size_t i = 0; i < n; i += 8) {
        const __mmask8 k = (__mmask8)(n - i >= 8 ? 0xff : (1u << (n - i)) - 1u);
        const __m256 x = _mm256_maskz_loadu_ps(k, w + i);
        _mm256_mask_storeu_ps(p + i, k, _mm512_cvtpd_ps(_mm512_div_pd(_mm512_cvtps_pd(x), zv)));
    }
}

static const struct nextok__kernels avx512_table = {
    .name = "avx512",
    .max = avx512_max,
    .block_max = avx512_block_max,
    .compact_ge = avx512_compact_ge,
    .compact_blocks = avx512_compact_blocks,
    .cands_ge = avx512_cands_ge,
    .sum_sq = avx512_sum_sq,
    .sum_sq_dbl = avx512_sum_sq_dbl,
    .widen = avx512_widen,
    .weights = avx512_weights,
    .weights_ge = avx512_weights_ge,
    .expw = avx512_expw,
    .compact_range = avx512_compact_range,
    .mass_above = avx512_mass_above,
    .mass_band = avx512_mass_band,
    .cut_weights = avx512_cut_weights,
    .wvsum = avx512_wvsum,
    .typscan = avx512_typscan,
    .cut_keys = avx512_cut_keys,
    .probs = avx512_probs,
};

const struct nextok__kernels *nextok__kernels_avx512(void) { return &avx512_table; }

#else
const struct nextok__kernels *nextok__kernels_avx512(void) { return NULL; }
#endif
