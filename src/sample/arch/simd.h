/*
 * The SIMD mapping layer: a small vocabulary of vector operations that the
 * kernel bodies (kernels_body.h) are written in, so that one body serves
 * every ISA whose algorithm is the same. One header per ISA implements it
 * (simd_avx2.h: 8 f32 lanes, simd_avx512.h: 16); a translation unit includes
 * exactly one of them, then the body. This file holds what they share: the
 * contract of every operation (below) and two macros.
 *
 * A NEON header (4 f32 lanes, uint32x4_t masks) would implement the same
 * list; the bodies assume only that VL is a power of two from 4 to 16, so
 * that a 64-element block is 64 / VL whole vectors and the 16 canonical lanes
 * of the weight sums (kernels.h: nextok__wblock) are 16 / VL vectors. Until
 * one exists, other ISAs use the scalar reference (dispatch.c).
 *
 * SIMD_NAME: the ISA's name for the kernel tables ("avx2", "avx512").
 * Types (VL = f32 lanes per vector, a power of two):
 *   vf    VL floats            vi   VL 32-bit integers (bits of a vf)
 *   vd    VL/2 doubles         vq   VL/2 unsigned 64-bit integers
 *   vm    a mask of VL lanes   vmd  a mask of VL/2 (64-bit) lanes
 *   vtab  a 16-entry table of 32-bit words, held in registers
 *
 * Loads and stores (unaligned; "tail" forms touch only lanes < left, where
 * 1 <= left; left >= VL means every lane):
 *   vf_load(p), vf_load_tail(p, left, fill)   other lanes = fill
 *   vf_load_dt(row, dt, i)                    VL elements of dtype dt from i,
 *   vf_load_dt_tail(row, dt, i, left, fill)   f16/bf16 widened exactly
 *   vf_store(p, v), vf_store_tail(p, v, left)
 *   vi_load(p)                                the bits of VL 32-bit words
 *   vd_load_f32(p), vd_load_f32_tail(p, left) VL/2 floats widened (others 0)
 *   vd_store_f32(p, d), vd_store_f32_tail(p, d, left)  rounded to float
 *   elem(dt, row, i)                          one element, widened exactly
 * Arithmetic (IEEE single operations, lane by lane; fma rounds once):
 *   vf_set1 vf_zero vf_add vf_sub vf_mul vf_div vf_abs
 *   vf_fmadd(a, b, c) = a b + c     vf_fnmadd(a, b, c) = -(a b) + c
 *   vf_min(a, b) = a < b ? a : b    vf_max(a, b) = a > b ? a : b
 *     (x86's rule: b when either is NaN; the bodies rely on it to ignore
 *     NaN with the accumulator as b; NEON's vmaxq propagates NaN, so its
 *     header must build these from a compare and a select)
 *   vf_max_where(m, x, acc) = m ? vf_max(x, acc) : acc   (one masked max)
 *   vf_min_where(m, x, acc) = m ? vf_min(x, acc) : acc
 *   vd_zero vd_set1 vd_add vd_sub vd_mul vd_div vd_fmadd
 *   vd_lo(v), vd_hi(v)     lanes 0 .. VL/2-1, VL/2 .. VL-1 of v widened
 * Compares (to a lane mask) and masks:
 *   vf_cmp_ge, vf_cmp_le, vf_cmp_lt (false on NaN), vf_cmp_nlt (!(a < b))
 *   vi_cmpeq, vi_cmpgt_i32 (signed), vi_cmpgt_u32, vi_cmplt_u32, vi_cmple_u32
 *   (unsigned)
 *   vm_first(left)         lanes < left
 *   vm_of_bits(bits)       lane l = bit l of bits (higher bits ignored)
 *   vm_and vm_or vm_andnot(a, b) = a & ~b, vm_any, vm_any2(a, b) (a lane of
 *   a | b; AVX-512: one kortest), vm_bits (lane l = bit l),
 *   vm_count (popcount), vm_word64(m[64 / VL]): the masks of 64 consecutive
 *   lanes as one word (m[j] lane l = bit VL j + l)
 *   vm_lo(m), vm_hi(m)     the vmd of lanes 0 .. VL/2-1, VL/2 .. VL-1
 *   vf_maskz(m, v)         v where m, +0 elsewhere
 *   vf_select(m, a, b)     a where m, b elsewhere
 *   vi_maskz(m, v), vd_maskz(md, d)
 * Integers:
 *   vi_set1 vi_zero vi_add vi_sub vi_and vi_or vi_xor vi_max_u32
 *   vi_slli(v, n), vi_srli(v, n) (n a constant), vi_iota(first) = first + l
 *   vf_as_vi, vi_as_vf      bit casts
 *   vtab_load(t, sub)       the table t[j] - sub (mod 2^32), j < 16
 *   vi_lut16(tab, idx)      tab[idx & 15] lane by lane
 *   vq_zero vq_add, vq_add_mask(acc, md, q) = acc + q where md
 *   vq_trunc_lo(v), vq_trunc_hi(v)  trunc to uint64 of lanes 0 .. VL/2-1 /
 *     VL/2 .. VL-1; defined for +0 <= v <= 2^62 (the masses' range)
 * Horizontal reductions (order fixed per ISA; only the marked ones must be
 * the same in every ISA):
 *   vf_hmax, vf_hmin        the extreme lane (no NaN lanes: callers keep them out)
 *   vq_hsum                 the lanes' sum modulo 2^64 (exact in any order)
 *   vd_hsum                 an estimate's sum (order is the ISA's own)
 *   vd_tree16(a[32 / VL]), vf_tree16(a[16 / VL])   FIXED: the 16 lanes l
 *     of a block's sums (vector k lane j = lane VL/2 k + j, resp. VL k + j;
 *     floats widened exactly) combined by nextok__wtree's tree: h[l] = a[l]
 *     + a[l + 8], q[l] = h[l] + h[l + 4], (q[0] + q[2]) + (q[1] + q[3]).
 * Compaction (the packing differs by ISA: compress instructions or a
 * permutation table; ids are first + lane, values the lanes of x):
 *   vf_compress_store(x, m, first, ids, vals, c)  the lanes of m packed and
 *     stored at c with VL entries' room (the caller's promise); returns c +
 *     count
 *   vf_compress_emit(x, m, first, ids, vals, cap, c)  the same, but storing
 *     only entries below cap; returns c + count
 * Register pinning:
 *   V_PIN(v)                keeps a loaded vector in a register (so the
 *                           compiler does not fold the load into two uses)
 */
#ifndef NEXTOK_ARCH_SIMD_H
#define NEXTOK_ARCH_SIMD_H

#define AI static inline __attribute__((always_inline))

/* A kernel body instantiated per dtype, so each instance sees a constant. */
#define BY_DTYPE(fn, dt, ...)                                          \
    (dt == NEXTOK_DTYPE_F16    ? fn(NEXTOK_DTYPE_F16, __VA_ARGS__)     \
     : dt == NEXTOK_DTYPE_BF16 ? fn(NEXTOK_DTYPE_BF16, __VA_ARGS__)    \
                               : fn(NEXTOK_DTYPE_F32, __VA_ARGS__))

#endif
