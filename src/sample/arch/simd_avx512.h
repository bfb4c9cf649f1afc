/*
 * The SIMD mapping (simd.h) for AVX-512 F, BW, VL, DQ (+ FMA, F16C): 16 f32
 * lanes, masks in mask registers, so tails are masked loads and stores with
 * no scalar remainder. Compaction uses the register form of vcompressps and
 * a plain store (the memory form is microcoded and slow on AMD Zen 4).
 */
#ifndef NEXTOK_ARCH_SIMD_AVX512_H
#define NEXTOK_ARCH_SIMD_AVX512_H

#include "kernels.h"
#include "simd.h"

#include <immintrin.h>

#define VL 16
#define SIMD_NAME "avx512" /* the tables' name */

typedef __m512 vf;
typedef __m512i vi;
typedef __m512d vd;
typedef __m512i vq;
typedef __mmask16 vm;
typedef __mmask8 vmd;
typedef __m512i vtab;

/* A loaded vector kept in a register: without it the compiler folds the
 * load into each of the two instructions that use the value and reads every
 * line twice (measured: the f32 block maxima took 8 us a 128256-id row, not
 * 5). */
#define V_PIN(v) __asm__("" : "+v"(v))

AI float elem(enum nextok_dtype dt, const void *row, size_t i) { return nextok__elem(dt, row, i); }

/* ---- masks ---------------------------------------------------------------- */

AI vm vm_first(size_t left) { return left >= 16 ? (vm)0xffff : (vm)((1u << left) - 1u); }
AI vm vm_of_bits(uint32_t bits) { return (vm)bits; } /* lane l = bit l */
AI vm vm_and(vm a, vm b) { return (vm)(a & b); }
AI vm vm_or(vm a, vm b) { return (vm)(a | b); }
AI vm vm_andnot(vm a, vm b) { return (vm)(a & ~b); }
AI bool vm_any(vm m) { return !_kortestz_mask16_u8(m, m); }
AI bool vm_any2(vm a, vm b) { return !_kortestz_mask16_u8(a, b); }
AI unsigned vm_bits(vm m) { return m; }
AI unsigned vm_count(vm m) { return (unsigned)__builtin_popcount(m); }
AI vmd vm_lo(vm m) { return (vmd)m; }
AI vmd vm_hi(vm m) { return (vmd)(m >> 8); }

AI uint64_t vm_word64(const vm m[4])
{
    return _cvtmask64_u64(_mm512_kunpackd(_mm512_kunpackw(m[3], m[2]), _mm512_kunpackw(m[1], m[0])));
}

/* ---- f32 ------------------------------------------------------------------ */

AI vf vf_set1(float x) { return _mm512_set1_ps(x); }
AI vf vf_zero(void) { return _mm512_setzero_ps(); }
AI vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
AI vf vf_load_tail(const float *p, size_t left, float fill)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), vm_first(left), p);
}
AI void vf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
AI void vf_store_tail(float *p, vf v, size_t left) { _mm512_mask_storeu_ps(p, vm_first(left), v); }

AI vf vf_load_dt(const void *row, enum nextok_dtype dt, size_t i)
{
    if (dt == NEXTOK_DTYPE_F32) return _mm512_loadu_ps((const float *)row + i);
    const __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + i));
    if (dt == NEXTOK_DTYPE_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

AI vf vf_load_dt_tail(const void *row, enum nextok_dtype dt, size_t i, size_t left, float fill)
{
    const vm k = vm_first(left);
    if (dt == NEXTOK_DTYPE_F32) return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), k, (const float *)row + i);
    const __m256i h = _mm256_maskz_loadu_epi16(k, (const uint16_t *)row + i);
    const vf x = dt == NEXTOK_DTYPE_F16 ? _mm512_cvtph_ps(h)
                                        : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_mask_blend_ps(k, _mm512_set1_ps(fill), x);
}

AI vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
AI vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
AI vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
AI vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
AI vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }
AI vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
AI vf vf_max_where(vm m, vf x, vf acc) { return _mm512_mask_max_ps(acc, m, x, acc); }
AI vf vf_min_where(vm m, vf x, vf acc) { return _mm512_mask_min_ps(acc, m, x, acc); }
AI vf vf_abs(vf a) { return _mm512_abs_ps(a); }
AI vf vf_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
AI vf vf_fnmadd(vf a, vf b, vf c) { return _mm512_fnmadd_ps(a, b, c); }

AI vm vf_cmp_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
AI vm vf_cmp_le(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
AI vm vf_cmp_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
AI vm vf_cmp_nlt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ); }
AI vf vf_maskz(vm m, vf v) { return _mm512_maskz_mov_ps(m, v); }
AI vf vf_select(vm m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }

AI float vf_hmax(vf v) { return _mm512_reduce_max_ps(v); }
AI float vf_hmin(vf v) { return _mm512_reduce_min_ps(v); }

/* ---- 32-bit integers -------------------------------------------------------- */

AI vi vi_set1(int32_t x) { return _mm512_set1_epi32(x); }
AI vi vi_zero(void) { return _mm512_setzero_si512(); }
AI vi vi_load(const void *p) { return _mm512_loadu_si512(p); }
AI vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
AI vi vi_sub(vi a, vi b) { return _mm512_sub_epi32(a, b); }
AI vi vi_and(vi a, vi b) { return _mm512_and_si512(a, b); }
AI vi vi_or(vi a, vi b) { return _mm512_or_si512(a, b); }
AI vi vi_xor(vi a, vi b) { return _mm512_xor_si512(a, b); }
AI vi vi_max_u32(vi a, vi b) { return _mm512_max_epu32(a, b); }
#define vi_slli(v, n) _mm512_slli_epi32((v), (n))
#define vi_srli(v, n) _mm512_srli_epi32((v), (n))
AI vi vi_iota(int32_t first)
{
    return _mm512_add_epi32(_mm512_set1_epi32(first),
                            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}
AI vi vf_as_vi(vf v) { return _mm512_castps_si512(v); }
AI vf vi_as_vf(vi v) { return _mm512_castsi512_ps(v); }
AI vm vi_cmpeq(vi a, vi b) { return _mm512_cmpeq_epi32_mask(a, b); }
AI vm vi_cmpgt_i32(vi a, vi b) { return _mm512_cmpgt_epi32_mask(a, b); }
AI vm vi_cmpgt_u32(vi a, vi b) { return _mm512_cmpgt_epu32_mask(a, b); }
AI vm vi_cmplt_u32(vi a, vi b) { return _mm512_cmplt_epu32_mask(a, b); }
AI vm vi_cmple_u32(vi a, vi b) { return _mm512_cmple_epu32_mask(a, b); }
AI vi vi_maskz(vm m, vi v) { return _mm512_maskz_mov_epi32(m, v); }

/* The whole table in one register: vpermd takes the index from the low 4
 * bits of each lane. */
AI vtab vtab_load(const uint32_t t[16], uint32_t sub)
{
    return _mm512_sub_epi32(_mm512_loadu_si512((const void *)t), _mm512_set1_epi32((int32_t)sub));
}
AI vi vi_lut16(vtab t, vi idx) { return _mm512_permutexvar_epi32(idx, t); }

/* ---- doubles and 64-bit integers ---------------------------------------------- */

AI vd vd_zero(void) { return _mm512_setzero_pd(); }
AI vd vd_set1(double x) { return _mm512_set1_pd(x); }
AI vd vd_add(vd a, vd b) { return _mm512_add_pd(a, b); }
AI vd vd_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
AI vd vd_mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
AI vd vd_div(vd a, vd b) { return _mm512_div_pd(a, b); }
AI vd vd_fmadd(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }
AI vd vd_maskz(vmd m, vd d) { return _mm512_maskz_mov_pd(m, d); }
AI vd vd_lo(vf v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
AI vd vd_hi(vf v) { return _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)); }
AI vd vd_load_f32(const float *p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
AI vd vd_load_f32_tail(const float *p, size_t left)
{
    return _mm512_cvtps_pd(_mm256_maskz_loadu_ps(vm_lo(vm_first(left)), p));
}
AI void vd_store_f32(float *p, vd d) { _mm256_storeu_ps(p, _mm512_cvtpd_ps(d)); }
AI void vd_store_f32_tail(float *p, vd d, size_t left)
{
    _mm256_mask_storeu_ps(p, vm_lo(vm_first(left)), _mm512_cvtpd_ps(d));
}
AI double vd_hsum(vd d) { return _mm512_reduce_add_pd(d); }

/* The tree of nextok__wtree over 16 double lanes (a[0]: lanes 0-7, a[1]:
 * 8-15): h = a0 + a1, q = h's halves added, d = q's halves, d0 + d1. */
AI double vd_tree16(const vd a[2])
{
    const __m512d h = _mm512_add_pd(a[0], a[1]);
    const __m256d q = _mm256_add_pd(_mm512_castpd512_pd256(h), _mm512_extractf64x4_pd(h, 1));
    const __m128d d = _mm_add_pd(_mm256_castpd256_pd128(q), _mm256_extractf128_pd(q, 1));
    return _mm_cvtsd_f64(_mm_add_sd(d, _mm_unpackhi_pd(d, d)));
}

AI double vf_tree16(const vf a[1])
{
    const vd d[2] = {vd_lo(a[0]), vd_hi(a[0])};
    return vd_tree16(d);
}

AI vq vq_zero(void) { return _mm512_setzero_si512(); }
AI vq vq_add(vq a, vq b) { return _mm512_add_epi64(a, b); }
AI vq vq_add_mask(vq acc, vmd m, vq q) { return _mm512_mask_add_epi64(acc, m, acc, q); }
/* vcvttps2qq: the C cast's truncation */
AI vq vq_trunc_lo(vf v) { return _mm512_cvttps_epi64(_mm512_castps512_ps256(v)); }
AI vq vq_trunc_hi(vf v) { return _mm512_cvttps_epi64(_mm512_extractf32x8_ps(v, 1)); }

/* Sum of the 8 lanes modulo 2^64 (the intrinsic reduction adds them as
 * signed long long, which is undefined on wrap). */
AI uint64_t vq_hsum(vq v)
{
    uint64_t l[8], s = 0;
    _mm512_storeu_si512((void *)l, v);
    for (int i = 0; i < 8; i++) s += l[i];
    return s;
}

/* ---- compaction ---------------------------------------------------------------- */

AI size_t vf_compress_store(vf x, vm m, int32_t first, int32_t *ids, float *vals, size_t c)
{
    _mm512_storeu_ps(vals + c, _mm512_maskz_compress_ps(m, x));
    _mm512_storeu_si512((void *)(ids + c), _mm512_maskz_compress_epi32(m, vi_iota(first)));
    return c + vm_count(m);
}

AI size_t vf_compress_emit(vf x, vm m, int32_t first, int32_t *ids, float *vals, size_t cap, size_t c)
{
    const unsigned cnt = vm_count(m);
    const __m512 cv = _mm512_maskz_compress_ps(m, x);
    const __m512i ci = _mm512_maskz_compress_epi32(m, vi_iota(first));
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

#endif
