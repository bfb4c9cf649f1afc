/*
 * AVX-512 (F, BW, VL, DQ) kernels: the bodies of kernels_body.h over
 * simd_avx512.h's mapping (16 lanes, masked tails). AVX-512's own code, where
 * the algorithm differs: the candidate records (compress and permutes), and
 * f16/bf16 rows filtered in the 16-bit domain (compact_ge, compact_blocks'
 * blocks, block_max), which needs 16-bit compares into 32-lane masks that
 * AVX2 has no cheap form of.
 */
#include "simd_avx512.h"

/* Candidates, 16 at a time: both lists compressed in registers and
 * interleaved into {id, v, 0} records by three two-source permutes; masked
 * stores write exactly the 3 * count words. */
AI size_t cands_emit(const int32_t *ids, vf v, vm m, struct nextok_token_data *out, size_t k)
{
    /* output word w = 3 j + f of record j: f = 0 the id (source a, lane j),
     * f = 1 the value (source b: 16 + j), f = 2 zero (masked off) */
    const __m512i p0 = _mm512_setr_epi32(0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
    const __m512i p1 = _mm512_setr_epi32(21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
    const __m512i p2 = _mm512_setr_epi32(0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
    const __mmask16 z0 = 0xB6DB, z1 = 0xDB6D, z2 = 0x6DB6; /* words with f != 2 */
    const __m512i ci = _mm512_maskz_compress_epi32(m, _mm512_maskz_loadu_epi32(m, ids));
    const __m512i cv = _mm512_castps_si512(_mm512_maskz_compress_ps(m, v));
    const unsigned cnt = vm_count(m), words = 3 * cnt;
    const __mmask16 w0 = (__mmask16)(words >= 16 ? 0xffff : (1u << words) - 1u);
    const __mmask16 w1 = (__mmask16)(words >= 32 ? 0xffff : words <= 16 ? 0 : (1u << (words - 16)) - 1u);
    const __mmask16 w2 = (__mmask16)(words <= 32 ? 0 : (1u << (words - 32)) - 1u);
    int32_t *d = (int32_t *)out + 3 * k;
    _mm512_mask_storeu_epi32(d, w0, _mm512_maskz_permutex2var_epi32(z0, ci, p0, cv));
    _mm512_mask_storeu_epi32(d + 16, w1, _mm512_maskz_permutex2var_epi32(z1, ci, p1, cv));
    _mm512_mask_storeu_epi32(d + 32, w2, _mm512_maskz_permutex2var_epi32(z2, ci, p2, cv));
    return k + cnt;
}

#define CMP_U 4         /* compact_ge's sparse loop: 64 elements a branch */

#include "kernels_body.h"

/* ---- f16/bf16 rows in the 16-bit domain ------------------------------------
 *
 * A filter in the 16-bit domain, 32 lanes a vector, and the exact f32 test
 * only on the 16-lane halves it lets through (in index order, so the output
 * is compact_impl's). Both formats are sign-magnitude, so the key h ^ ((h
 * >>a 15) & 0x7fff), compared as signed 16-bit integers, orders the non-NaN
 * values as their floats do (-0 keys just below +0). With hlo the largest
 * 16-bit value <= thr (+0 taken as -0, which is equal), every x >= thr has
 * key(x) >= key(hlo): the filter keeps a superset (hlo itself when it is
 * below thr, NaNs above +inf), and the f32 compare decides. When key(hlo) >
 * 0 the negative values cannot pass and the raw bits of the positive ones
 * are their keys: no key transform is needed.
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

AI size_t emit32(enum nextok_dtype dt, __m512i v, __mmask32 m, __m512 t, int32_t first, int32_t *ids, float *vals,
                 size_t cap, size_t c)
{
    if ((uint16_t)m) {
        const __m512 x = widen16(dt, v, 0);
        const __mmask16 e = _mm512_cmp_ps_mask(x, t, _CMP_GE_OQ);
        if (e) c = vf_compress_emit(x, e, first, ids, vals, cap, c);
    }
    if (m >> 16) {
        const __m512 x = widen16(dt, v, 1);
        const __mmask16 e = _mm512_cmp_ps_mask(x, t, _CMP_GE_OQ);
        if (e) c = vf_compress_emit(x, e, first + 16, ids, vals, cap, c);
    }
    return c;
}

/* compact_impl's spans (dense and sparse, kernels_body.h) on 32-lane
 * vectors of the row's 16-bit values. */
AI size_t compact16_impl(enum nextok_dtype dt, int raw, const uint16_t *row, size_t n, float thr, int16_t kt,
                         int32_t base, int32_t *ids, float *vals, size_t cap, int *nonfinite)
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
                c = vf_compress_store(x0, e0, base + (int32_t)i, ids, vals, c);
                c = vf_compress_store(x1, e1, base + (int32_t)(i + 16), ids, vals, c);
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
    return c + compact_impl(dt, 0, row + i, n - i, thr, thr, base + (int32_t)i, ids + (c < cap ? c : cap),
                            vals + (c < cap ? c : cap), c < cap ? cap - c : 0, nonfinite);
}

static size_t avx512_compact_ge(const void *row, enum nextok_dtype dt, size_t n, float thr, int32_t base,
                                int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    if (dt == NEXTOK_DTYPE_F32 || n < 128)
        return BY_DTYPE(compact_impl, dt, 0, row, n, thr, thr, base, ids, vals, cap, nonfinite);
    const int16_t kt = half_floor_key(dt, thr);
    if (dt == NEXTOK_DTYPE_F16)
        return kt > 0 ? compact16_impl(NEXTOK_DTYPE_F16, 1, row, n, thr, kt, base, ids, vals, cap, nonfinite)
                      : compact16_impl(NEXTOK_DTYPE_F16, 0, row, n, thr, kt, base, ids, vals, cap, nonfinite);
    return kt > 0 ? compact16_impl(NEXTOK_DTYPE_BF16, 1, row, n, thr, kt, base, ids, vals, cap, nonfinite)
                  : compact16_impl(NEXTOK_DTYPE_BF16, 0, row, n, thr, kt, base, ids, vals, cap, nonfinite);
}

/* block_impl's word per 64 lanes from 16-bit compares: two 32-lane masks. */
AI size_t block16_impl(enum nextok_dtype dt, int raw, const uint16_t *row, size_t i0, float thr, __m512i k,
                       int32_t *ids, float *vals, size_t cap, size_t c)
{
    uint64_t word[NEXTOK__BLK / 64];
    for (unsigned g = 0; g < NEXTOK__BLK / 64; g++) {
        __m512i h0 = _mm512_loadu_si512((const void *)(row + i0 + 64 * g));
        __m512i h1 = _mm512_loadu_si512((const void *)(row + i0 + 64 * g + 32));
        V_PIN(h0);
        V_PIN(h1);
        const __mmask32 m0 = _mm512_cmpge_epi16_mask(raw ? h0 : hkey32(h0), k);
        const __mmask32 m1 = _mm512_cmpge_epi16_mask(raw ? h1 : hkey32(h1), k);
        word[g] = _cvtmask64_u64(_mm512_kunpackd(m1, m0));
    }
    return sparse_emit(dt, row, i0, word, thr, ids, vals, cap, c);
}

/* nextok__compact_blocks_by's block: the f16/bf16 filter's key computed
 * per block (about k blocks a row). */
static size_t avx512_block(const void *row, enum nextok_dtype dt, size_t i0, float thr, int32_t *ids, float *vals,
                           size_t cap, size_t c)
{
    if (dt == NEXTOK_DTYPE_F32) return block_impl(NEXTOK_DTYPE_F32, row, i0, thr, ids, vals, cap, c);
    const int16_t kt = half_floor_key(dt, thr);
    const __m512i k = _mm512_set1_epi16(kt);
    if (dt == NEXTOK_DTYPE_F16)
        return kt > 0 ? block16_impl(NEXTOK_DTYPE_F16, 1, row, i0, thr, k, ids, vals, cap, c)
                      : block16_impl(NEXTOK_DTYPE_F16, 0, row, i0, thr, k, ids, vals, cap, c);
    return kt > 0 ? block16_impl(NEXTOK_DTYPE_BF16, 1, row, i0, thr, k, ids, vals, cap, c)
                  : block16_impl(NEXTOK_DTYPE_BF16, 0, row, i0, thr, k, ids, vals, cap, c);
}

static size_t avx512_compact_blocks(const void *row, enum nextok_dtype dt, size_t n, float thr, const float *bmax,
                                    int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    return nextok__compact_blocks_by(avx512_compact_ge, avx512_block, row, dt, n, thr, bmax, ids, vals, cap,
                                     nonfinite);
}

/* f16/bf16 block maxima: the maximum of the 16-bit keys (hkey32: they order
 * the finite values as their floats do), turned back into the value; 64
 * elements a vector, half the loads of block_max1 on widened values. */
AI float block_max16(enum nextok_dtype dt, const uint16_t *x, __m512i *ex)
{
    const __m512i em = _mm512_set1_epi16(dt == NEXTOK_DTYPE_F16 ? 0x7c00 : 0x7f80);
    __m512i a0 = _mm512_loadu_si512((const void *)x), a1 = _mm512_loadu_si512((const void *)(x + 32));
    __m512i a2 = _mm512_loadu_si512((const void *)(x + 64)), a3 = _mm512_loadu_si512((const void *)(x + 96));
    V_PIN(a0);
    V_PIN(a1);
    V_PIN(a2);
    V_PIN(a3);
    __m512i e0 = _mm512_max_epu16(_mm512_and_si512(a0, em), _mm512_and_si512(a1, em));
    __m512i e1 = _mm512_max_epu16(_mm512_and_si512(a2, em), _mm512_and_si512(a3, em));
    a0 = hkey32(a0), a1 = hkey32(a1), a2 = hkey32(a2), a3 = hkey32(a3);
    for (size_t j = 128; j < NEXTOK__BLK; j += 128) {
        __m512i b0 = _mm512_loadu_si512((const void *)(x + j)), b1 = _mm512_loadu_si512((const void *)(x + j + 32));
        __m512i b2 = _mm512_loadu_si512((const void *)(x + j + 64)), b3 = _mm512_loadu_si512((const void *)(x + j + 96));
        V_PIN(b0);
        V_PIN(b1);
        V_PIN(b2);
        V_PIN(b3);
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

AI size_t block_max16_impl(enum nextok_dtype dt, const uint16_t *row, size_t n, float *bmax, int *nonfinite)
{
    const size_t full = n / NEXTOK__BLK;
    __m512i ex = _mm512_setzero_si512();
    for (size_t b = 0; b < full; b++) bmax[b] = block_max16(dt, row + b * NEXTOK__BLK, &ex);
    /* the exponent fields reached all ones in some lane: a NaN or ±inf */
    *nonfinite |= _mm512_cmpeq_epi16_mask(ex, _mm512_set1_epi16(dt == NEXTOK_DTYPE_F16 ? 0x7c00 : 0x7f80)) != 0;
    if (full * NEXTOK__BLK == n) return full;
    bmax[full] = max_impl(dt, row + full * NEXTOK__BLK, n - full * NEXTOK__BLK, nonfinite);
    return full + 1;
}

static size_t avx512_block_max(const void *row, enum nextok_dtype dt, size_t n, float *bmax, int *nonfinite)
{
    if (dt == NEXTOK_DTYPE_F16) return block_max16_impl(NEXTOK_DTYPE_F16, row, n, bmax, nonfinite);
    if (dt == NEXTOK_DTYPE_BF16) return block_max16_impl(NEXTOK_DTYPE_BF16, row, n, bmax, nonfinite);
    return block_max_impl(NEXTOK_DTYPE_F32, row, n, bmax, nonfinite);
}

static const struct nextok__kernels avx512_table = {
    .name = "avx512",
    .max = simd_max,
    .block_max = avx512_block_max,
    .compact_ge = avx512_compact_ge,
    .compact_blocks = avx512_compact_blocks,
    .cands_ge = simd_cands_ge,
    .widen = simd_widen,
    .expw = simd_expw,
    .probs = simd_probs,
};

const struct nextok__kernels *nextok__kernels_avx512(void) { return &avx512_table; }
const struct nextok__fused_kernels *nextok__fused_kernels_avx512(void) { return &simd_fused_table; }
