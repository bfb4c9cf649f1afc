/*
 * The SIMD mapping (simd.h) for AVX2 + FMA + F16C: 8 f32 lanes. Masks are
 * vectors of all-ones lanes; tails are vmaskmov loads and stores (f32) or a
 * copy through a small buffer (16-bit rows: AVX2 has no 16-bit masked load).
 * AVX2 has no compress instruction, no unsigned compares and no float to
 * 64-bit conversion: compaction permutes by a table of packings, unsigned
 * compares flip the sign bits, and the masses' truncation is done on the
 * bits (vq_trunc_lo).
 */
#ifndef NEXTOK_ARCH_SIMD_AVX2_H
#define NEXTOK_ARCH_SIMD_AVX2_H

#include "kernels.h"
#include "simd.h"

#include <immintrin.h>

#define VL 8
#define SIMD_NAME "avx2" /* the tables' name */

typedef __m256 vf;
typedef __m256i vi;
typedef __m256d vd;
typedef __m256i vq;
typedef __m256 vm;
typedef __m256i vmd;
typedef struct {
    __m256i lo, hi; /* entries 0-7 and 8-15 */
} vtab;

/* As simd_avx512.h's: keeps a loaded vector in a register. */
#define V_PIN(v) __asm__("" : "+v"(v))

AI float elem(enum nextok_dtype dt, const void *row, size_t i) { return nextok__elem(dt, row, i); }

/* ---- masks ---------------------------------------------------------------- */

AI vm vm_first(size_t left)
{
    const int k = left >= 8 ? 8 : (int)left;
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}
/* lane l set iff bit l of bits (a token bitmask's 8 bits: a broadcast, an
 * and with each lane's bit, a compare) */
AI vm vm_of_bits(uint32_t bits)
{
    const __m256i sel = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i b = _mm256_and_si256(_mm256_set1_epi32((int)bits), sel);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(b, sel));
}
AI vm vm_and(vm a, vm b) { return _mm256_and_ps(a, b); }
AI vm vm_or(vm a, vm b) { return _mm256_or_ps(a, b); }
AI vm vm_andnot(vm a, vm b) { return _mm256_andnot_ps(b, a); }
AI bool vm_any(vm m) { return _mm256_movemask_ps(m) != 0; } /* vmovmskps + a fused test-and-branch */
AI bool vm_any2(vm a, vm b) { return vm_any(_mm256_or_ps(a, b)); }
AI unsigned vm_bits(vm m) { return (unsigned)_mm256_movemask_ps(m); }
AI unsigned vm_count(vm m) { return (unsigned)__builtin_popcount(vm_bits(m)); }
AI vmd vm_lo(vm m) { return _mm256_cvtepi32_epi64(_mm_castps_si128(_mm256_castps256_ps128(m))); }
AI vmd vm_hi(vm m) { return _mm256_cvtepi32_epi64(_mm_castps_si128(_mm256_extractf128_ps(m, 1))); }

AI uint64_t vm_word64(const vm m[8])
{
    uint64_t w = 0;
    _Pragma("GCC unroll 8") for (unsigned j = 0; j < 8; j++) w |= (uint64_t)vm_bits(m[j]) << (8 * j);
    return w;
}

/* ---- f32 ------------------------------------------------------------------ */

AI vf vf_set1(float x) { return _mm256_set1_ps(x); }
AI vf vf_zero(void) { return _mm256_setzero_ps(); }
AI vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
AI vf vf_load_tail(const float *p, size_t left, float fill)
{
    const vm k = vm_first(left);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, _mm256_castps_si256(k)), k);
}
AI void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
AI void vf_store_tail(float *p, vf v, size_t left)
{
    _mm256_maskstore_ps(p, _mm256_castps_si256(vm_first(left)), v);
}

AI vf widen8(enum nextok_dtype dt, __m128i h)
{
    if (dt == NEXTOK_DTYPE_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

AI vf vf_load_dt(const void *row, enum nextok_dtype dt, size_t i)
{
    if (dt == NEXTOK_DTYPE_F32) return _mm256_loadu_ps((const float *)row + i);
    return widen8(dt, _mm_loadu_si128((const __m128i *)((const uint16_t *)row + i)));
}

AI vf vf_load_dt_tail(const void *row, enum nextok_dtype dt, size_t i, size_t left, float fill)
{
    if (dt == NEXTOK_DTYPE_F32) return vf_load_tail((const float *)row + i, left, fill);
    uint16_t b[8] = {0};
    memcpy(b, (const uint16_t *)row + i, (left >= 8 ? 8 : left) * sizeof *b);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), widen8(dt, _mm_loadu_si128((const __m128i *)b)), vm_first(left));
}

AI vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
AI vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
AI vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
AI vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
AI vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }
AI vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
AI vf vf_max_where(vm m, vf x, vf acc) { return _mm256_max_ps(_mm256_blendv_ps(_mm256_set1_ps(-INFINITY), x, m), acc); }
AI vf vf_min_where(vm m, vf x, vf acc) { return _mm256_min_ps(_mm256_blendv_ps(_mm256_set1_ps(INFINITY), x, m), acc); }
AI vf vf_abs(vf a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
AI vf vf_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
AI vf vf_fnmadd(vf a, vf b, vf c) { return _mm256_fnmadd_ps(a, b, c); }

AI vm vf_cmp_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
AI vm vf_cmp_le(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
AI vm vf_cmp_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
AI vm vf_cmp_nlt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_NLT_UQ); }
AI vf vf_maskz(vm m, vf v) { return _mm256_and_ps(m, v); }
AI vf vf_select(vm m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }

AI float vf_hmax(vf v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

AI float vf_hmin(vf v)
{
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_min_ss(m, _mm_shuffle_ps(m, m, 1)));
}

/* ---- 32-bit integers -------------------------------------------------------- */

AI vi vi_set1(int32_t x) { return _mm256_set1_epi32(x); }
AI vi vi_zero(void) { return _mm256_setzero_si256(); }
AI vi vi_load(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
AI vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
AI vi vi_sub(vi a, vi b) { return _mm256_sub_epi32(a, b); }
AI vi vi_and(vi a, vi b) { return _mm256_and_si256(a, b); }
AI vi vi_or(vi a, vi b) { return _mm256_or_si256(a, b); }
AI vi vi_xor(vi a, vi b) { return _mm256_xor_si256(a, b); }
AI vi vi_max_u32(vi a, vi b) { return _mm256_max_epu32(a, b); }
#define vi_slli(v, n) _mm256_slli_epi32((v), (n))
#define vi_srli(v, n) _mm256_srli_epi32((v), (n))
AI vi vi_iota(int32_t first)
{
    return _mm256_add_epi32(_mm256_set1_epi32(first), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
AI vi vf_as_vi(vf v) { return _mm256_castps_si256(v); }
AI vf vi_as_vf(vi v) { return _mm256_castsi256_ps(v); }
AI vm vi_cmpeq(vi a, vi b) { return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b)); }
AI vm vi_cmpgt_i32(vi a, vi b) { return _mm256_castsi256_ps(_mm256_cmpgt_epi32(a, b)); }
/* unsigned as signed compares after flipping the sign bits (a constant
 * operand's flip is hoisted out of the loops) */
AI vm vi_cmpgt_u32(vi a, vi b)
{
    const __m256i f = _mm256_set1_epi32(INT32_MIN);
    return vi_cmpgt_i32(_mm256_xor_si256(a, f), _mm256_xor_si256(b, f));
}
AI vm vi_cmplt_u32(vi a, vi b) { return vi_cmpgt_u32(b, a); }
AI vm vi_cmple_u32(vi a, vi b) { return _mm256_xor_ps(vi_cmpgt_u32(a, b), _mm256_castsi256_ps(_mm256_set1_epi32(-1))); }
AI vi vi_maskz(vm m, vi v) { return _mm256_and_si256(_mm256_castps_si256(m), v); }

/* The table as two 8-entry halves: vpermd on each takes the low 3 bits of
 * the index, bit 3 (moved to the sign bit) picks the half. */
AI vtab vtab_load(const uint32_t t[16], uint32_t sub)
{
    const __m256i s = _mm256_set1_epi32((int32_t)sub);
    vtab r;
    r.lo = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)t), s);
    r.hi = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(t + 8)), s);
    return r;
}
AI vi vi_lut16(vtab t, vi idx)
{
    const __m256i lo = _mm256_permutevar8x32_epi32(t.lo, idx), hi = _mm256_permutevar8x32_epi32(t.hi, idx);
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi),
                                                _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28))));
}

/* ---- doubles and 64-bit integers ---------------------------------------------- */

AI vd vd_zero(void) { return _mm256_setzero_pd(); }
AI vd vd_set1(double x) { return _mm256_set1_pd(x); }
AI vd vd_add(vd a, vd b) { return _mm256_add_pd(a, b); }
AI vd vd_sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
AI vd vd_mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
AI vd vd_div(vd a, vd b) { return _mm256_div_pd(a, b); }
AI vd vd_fmadd(vd a, vd b, vd c) { return _mm256_fmadd_pd(a, b, c); }
AI vd vd_maskz(vmd m, vd d) { return _mm256_and_pd(_mm256_castsi256_pd(m), d); }
AI vd vd_lo(vf v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
AI vd vd_hi(vf v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }

AI __m128i first4(size_t left)
{
    const int k = left >= 4 ? 4 : (int)left;
    return _mm_cmpgt_epi32(_mm_set1_epi32(k), _mm_setr_epi32(0, 1, 2, 3));
}
AI vd vd_load_f32(const float *p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
AI vd vd_load_f32_tail(const float *p, size_t left) { return _mm256_cvtps_pd(_mm_maskload_ps(p, first4(left))); }
AI void vd_store_f32(float *p, vd d) { _mm_storeu_ps(p, _mm256_cvtpd_ps(d)); }
AI void vd_store_f32_tail(float *p, vd d, size_t left) { _mm_maskstore_ps(p, first4(left), _mm256_cvtpd_ps(d)); }

AI double vd_hsum(vd d)
{
    double b[4];
    _mm256_storeu_pd(b, d);
    return (b[0] + b[1]) + (b[2] + b[3]);
}

/* The tree of nextok__wtree over 16 double lanes, a[k] holding lanes 4k ..
 * 4k+3: h = (a0 + a2, a1 + a3), q = h_lo + h_hi, d = q's halves, d0 + d1. */
AI double vd_tree16(const vd a[4])
{
    const __m256d q = _mm256_add_pd(_mm256_add_pd(a[0], a[2]), _mm256_add_pd(a[1], a[3]));
    const __m128d d = _mm_add_pd(_mm256_castpd256_pd128(q), _mm256_extractf128_pd(q, 1));
    return _mm_cvtsd_f64(_mm_add_sd(d, _mm_unpackhi_pd(d, d)));
}

AI double vf_tree16(const vf a[2])
{
    const vd d[4] = {vd_lo(a[0]), vd_hi(a[0]), vd_lo(a[1]), vd_hi(a[1])};
    return vd_tree16(d);
}

AI vq vq_zero(void) { return _mm256_setzero_si256(); }
AI vq vq_add(vq a, vq b) { return _mm256_add_epi64(a, b); }
AI vq vq_add_mask(vq acc, vmd m, vq q) { return _mm256_add_epi64(acc, _mm256_and_si256(m, q)); }

/* Truncation of 4 lanes 0 <= x <= 2^62 without an int64 conversion (AVX2
 * has none): the mantissa shifted by exponent - 150, either way (variable
 * shifts give 0 for counts >= 64: exactly trunc(x) for x < 1); x = 0 or
 * subnormal (exponent field 0): 0. */
AI vq trunc4(__m128 x)
{
    const __m256i b = _mm256_cvtepu32_epi64(_mm_castps_si128(x));
    const __m256i man = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi64x(0x7fffff)), _mm256_set1_epi64x(0x800000));
    const __m256i ex = _mm256_srli_epi64(b, 23); /* x >= 0: no sign bit */
    const __m256i up = _mm256_sub_epi64(ex, _mm256_set1_epi64x(150)), dn = _mm256_sub_epi64(_mm256_set1_epi64x(150), ex);
    const __m256i q = _mm256_or_si256(_mm256_sllv_epi64(man, up), _mm256_srlv_epi64(man, dn));
    return _mm256_andnot_si256(_mm256_cmpeq_epi64(ex, _mm256_setzero_si256()), q);
}
AI vq vq_trunc_lo(vf v) { return trunc4(_mm256_castps256_ps128(v)); }
AI vq vq_trunc_hi(vf v) { return trunc4(_mm256_extractf128_ps(v, 1)); }

AI uint64_t vq_hsum(vq v)
{
    uint64_t l[4];
    _mm256_storeu_si256((__m256i *)l, v);
    return l[0] + l[1] + l[2] + l[3];
}

/* ---- compaction ---------------------------------------------------------------- */

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

AI size_t vf_compress_store(vf x, vm m, int32_t first, int32_t *ids, float *vals, size_t c)
{
    const unsigned b = vm_bits(m);
    const __m256i p = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)pack8[b]));
    _mm256_storeu_ps(vals + c, _mm256_permutevar8x32_ps(x, p));
    _mm256_storeu_si256((__m256i *)(ids + c), _mm256_permutevar8x32_epi32(vi_iota(first), p));
    return c + (size_t)__builtin_popcount(b);
}

/* Packed and stored whole while 8 entries fit below cap, else one entry
 * per set bit. */
AI size_t vf_compress_emit(vf x, vm m, int32_t first, int32_t *ids, float *vals, size_t cap, size_t c)
{
    if (c + 8 <= cap) return vf_compress_store(x, m, first, ids, vals, c);
    float xb[8];
    _mm256_storeu_ps(xb, x);
    for (unsigned b = vm_bits(m); b; b &= b - 1) {
        const unsigned j = (unsigned)__builtin_ctz(b);
        if (c < cap) {
            ids[c] = first + (int32_t)j;
            vals[c] = xb[j];
        }
        c++;
    }
    return c;
}

#endif
