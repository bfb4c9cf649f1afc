/*
 * The SIMD kernels, written once in the vocabulary of simd.h. A kernels
 * file includes one mapping (simd_avx2.h, simd_avx512.h), defines the hooks
 * below, then includes this file, which defines static simd_<kernel>
 * functions in that translation unit; the file's tables take these and,
 * where its ISA does something else, its own functions (kernels_avx512.c:
 * the 16-bit-domain filter of f16/bf16 rows).
 *
 * Hooks (the ISA file's, where the algorithm differs by ISA):
 *   size_t cands_emit(const int32_t *ids, vf v, vm m, struct nextok_token_data *out, size_t k)
 *     writes out[k++] = {ids[l], lane l of v, 0} for the lanes l of m in
 *     order (ids[l] read only for those lanes); returns k.
 * Tuning (the ISA file's): CMP_U (2 or 4) vectors a step in compact_ge's
 * sparse loop.
 *
 * Exactness (kernels.h): the canonical weights' lane sums are formed in the
 * 16 lanes of nextok__wblock whatever VL is: a 64-element block is 64 / VL
 * vectors, vector j adds to accumulator j % (16 / VL), each accumulator
 * lane in index order, and vf_tree16 / vd_tree16 combine them in the
 * definition's fixed tree. Every other step is one IEEE operation per lane,
 * the reference's, in the reference's order. The estimate kernels (sum_sq,
 * sum_sq_dbl) add in an order of their own.
 */
#ifndef VL
#error "include a SIMD mapping (simd_avx2.h, simd_avx512.h) before kernels_body.h"
#endif

#include <math.h>
#include <string.h>

/* GCC unrolls these short constant loops so that the vector arrays they
 * index stay in registers. */
#define UNROLL _Pragma("GCC unroll 16")

/* A kernel's entry point, for the ISA file's tables (which may take their
 * own version instead, leaving this one unused). */
#define KERNEL static __attribute__((unused))

/* Accumulators of the 16 canonical lanes (floats: vf, doubles: 2 vd each). */
#define NACC (16 / VL)

#define FLT_MAXF 3.40282347e38f

/* m restricted to the lanes k of a partial vector; a whole vector's m as it
 * is (no AND with an all-ones mask the compiler may not drop). */
AI vm live(bool whole, vm k, vm m) { return whole ? m : vm_and(k, m); }

/* ---- max ------------------------------------------------------------------ */

/* vf_max(x, acc) returns acc when x is NaN, so NaN never wins. The largest
 * exponent field seen (an integer maximum) is all ones iff a NaN or ±inf was
 * seen. Steps of 32 elements, 32 / VL independent maxima; the tail is one
 * partial vector (-inf past n, its exponent fields masked). */
#define MAX_U (32 / VL)

AI float max_impl(enum nextok_dtype dt, const void *row, size_t n, int *nonfinite)
{
    const vi em = vi_set1(0x7f800000);
    vf a[MAX_U];
    vi e[2] = {vi_zero(), vi_zero()};
    UNROLL for (int u = 0; u < MAX_U; u++) a[u] = vf_set1(-INFINITY);
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        UNROLL for (int u = 0; u < MAX_U; u++) {
            const vf x = vf_load_dt(row, dt, i + (size_t)u * VL);
            a[u] = vf_max(x, a[u]);
            e[u & 1] = vi_max_u32(e[u & 1], vi_and(vf_as_vi(x), em));
        }
    for (; i + VL <= n; i += VL) {
        const vf x = vf_load_dt(row, dt, i);
        a[0] = vf_max(x, a[0]);
        e[0] = vi_max_u32(e[0], vi_and(vf_as_vi(x), em));
    }
    if (i < n) {
        const vf x = vf_load_dt_tail(row, dt, i, n - i, -INFINITY);
        a[0] = vf_max(x, a[0]);
        e[0] = vi_max_u32(e[0], vi_maskz(vm_first(n - i), vi_and(vf_as_vi(x), em)));
    }
    UNROLL for (int u = 1; u < MAX_U; u++) a[0] = vf_max(a[0], a[u]);
    *nonfinite |= vm_any(vi_cmpeq(vi_max_u32(e[0], e[1]), em));
    return vf_hmax(a[0]);
}

KERNEL float simd_max(const void *row, enum nextok_dtype dt, size_t n, int *nonfinite)
{
    return BY_DTYPE(max_impl, dt, row, n, nonfinite);
}

/* ---- block maxima ------------------------------------------------------------ */

/* One full block: four running maxima and two exponent-field maxima
 * (independent chains), one reduction per block; the exponent fields go on
 * into *ex across blocks. */
AI float block_max1(enum nextok_dtype dt, const void *row, size_t i0, vi *ex)
{
    const vi em = vi_set1(0x7f800000);
    vf a0 = vf_load_dt(row, dt, i0), a1 = vf_load_dt(row, dt, i0 + VL);
    vf a2 = vf_load_dt(row, dt, i0 + 2 * VL), a3 = vf_load_dt(row, dt, i0 + 3 * VL);
    V_PIN(a0);
    V_PIN(a1);
    V_PIN(a2);
    V_PIN(a3);
    vi e0 = vi_max_u32(vi_and(vf_as_vi(a0), em), vi_and(vf_as_vi(a1), em));
    vi e1 = vi_max_u32(vi_and(vf_as_vi(a2), em), vi_and(vf_as_vi(a3), em));
    for (size_t j = 4 * VL; j < NEXTOK__BLK; j += 4 * VL) {
        vf b0 = vf_load_dt(row, dt, i0 + j), b1 = vf_load_dt(row, dt, i0 + j + VL);
        vf b2 = vf_load_dt(row, dt, i0 + j + 2 * VL), b3 = vf_load_dt(row, dt, i0 + j + 3 * VL);
        V_PIN(b0);
        V_PIN(b1);
        V_PIN(b2);
        V_PIN(b3);
        e0 = vi_max_u32(e0, vi_max_u32(vi_and(vf_as_vi(b0), em), vi_and(vf_as_vi(b1), em)));
        e1 = vi_max_u32(e1, vi_max_u32(vi_and(vf_as_vi(b2), em), vi_and(vf_as_vi(b3), em)));
        a0 = vf_max(b0, a0);
        a1 = vf_max(b1, a1);
        a2 = vf_max(b2, a2);
        a3 = vf_max(b3, a3);
    }
    *ex = vi_max_u32(*ex, vi_max_u32(e0, e1));
    return vf_hmax(vf_max(vf_max(a0, a1), vf_max(a2, a3)));
}

/* The full blocks by block_max1, the last partial one by max_impl. */
AI size_t block_max_impl(enum nextok_dtype dt, const void *row, size_t n, float *bmax, int *nonfinite)
{
    const size_t full = n / NEXTOK__BLK;
    vi ex = vi_zero();
    for (size_t b = 0; b < full; b++) bmax[b] = block_max1(dt, row, b * NEXTOK__BLK, &ex);
    *nonfinite |= vm_any(vi_cmpeq(ex, vi_set1(0x7f800000)));
    if (full * NEXTOK__BLK == n) return full;
    const size_t i = full * NEXTOK__BLK;
    bmax[full] = max_impl(dt, (const char *)row + i * nextok_dtype_size(dt), n - i, nonfinite);
    return full + 1;
}

KERNEL size_t simd_block_max(const void *row, enum nextok_dtype dt, size_t n, float *bmax, int *nonfinite)
{
    return BY_DTYPE(block_max_impl, dt, row, n, bmax, nonfinite);
}

/* ---- count / compact ------------------------------------------------------ */

/*
 * Compaction adapts to the survivors' density, one span of SPAN elements at
 * a time. Sparse spans test CMP_U vectors behind one rarely taken branch.
 * Dense spans (min-p's 4 % of a flat row) would mispredict that branch and
 * the per-vector ones about every other vector on a row the predictors have
 * not learnt, so they compress and store every vector unconditionally:
 * nothing to predict, at a fixed cost per vector. A span is dense when the
 * previous one kept more than one element in DENSE_AT; the choice changes
 * only the speed, never the output. Measured (AVX-512) on min-p 0.05 of flat
 * V 128256 rows: 8 distinct rows 68 -> 46 us/row, one repeated row (whose
 * branches the predictors learn) 51 -> 58.
 */
#define SPAN 4096
#define DENSE_AT 64

/* Dense spans store VL entries past the count: they run only where the
 * whole span fits in the room left. */
AI bool dense_fits(size_t c, size_t cap, size_t len) { return c <= cap && cap - c >= len + VL; }

/* Whether a lane of the CMP_U masks is set: ORs as a tree, the last pair
 * tested together (AVX-512: kor, kor, kortest). */
AI bool any_of(const vm m[CMP_U])
{
#if CMP_U == 4
    return vm_any2(vm_or(m[0], m[1]), vm_or(m[2], m[3]));
#elif CMP_U == 2
    return vm_any2(m[0], m[1]);
#else
#error "CMP_U: 2 or 4"
#endif
}

/* The lanes of x that pass: x >= lo (range = 0) or lo <= x <= hi (range = 1). */
AI vm pass_v(vf x, vf l, vf h, int range)
{
    return range ? vm_and(vf_cmp_ge(x, l), vf_cmp_le(x, h)) : vf_cmp_ge(x, l);
}

/* compact_ge (range = 0: x >= lo; nonfinite set) and compact_range (range
 * = 1: lo <= x <= hi; nonfinite NULL, not looked for). */
AI size_t compact_impl(enum nextok_dtype dt, int range, const void *row, size_t n, float lo, float hi, int32_t base,
                       int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    const vf l = vf_set1(lo), h = vf_set1(hi);
    const vi em = vi_set1(0x7f800000);
    const size_t step = (size_t)CMP_U * VL;
    /* the largest exponent field seen, in a vector: equal to em somewhere
     * iff a NaN or inf was seen (no mask traffic per vector) */
    vi ex = vi_zero();
    size_t c = 0, i = 0;
    bool dense = false;
    while (i + step <= n) {
        const size_t end = n - i >= SPAN ? i + SPAN : i + (n - i) / step * step, c0 = c;
        if (dense && dense_fits(c, cap, end - i)) {
            for (; i < end; i += VL) { /* not pinned: 5 % slower so on AVX-512 f32 rows */
                const vf x = vf_load_dt(row, dt, i);
                if (!range) ex = vi_max_u32(ex, vi_and(vf_as_vi(x), em));
                c = vf_compress_store(x, pass_v(x, l, h, range), base + (int32_t)i, ids, vals, c);
            }
        } else {
            for (; i < end; i += step) {
                vf x[CMP_U];
                vm m[CMP_U];
                UNROLL for (int u = 0; u < CMP_U; u++) {
                    x[u] = vf_load_dt(row, dt, i + (size_t)u * VL);
                    V_PIN(x[u]);
                    if (!range) ex = vi_max_u32(ex, vi_and(vf_as_vi(x[u]), em));
                    m[u] = pass_v(x[u], l, h, range);
                }
                if (__builtin_expect(any_of(m), 0))
                    UNROLL for (int u = 0; u < CMP_U; u++)
                        if (vm_any(m[u]))
                            c = vf_compress_emit(x[u], m[u], base + (int32_t)(i + (size_t)u * VL), ids, vals, cap, c);
            }
        }
        dense = (c - c0) * DENSE_AT > SPAN;
    }
    for (; i < n; i += VL) { /* partial vectors: NaN past n (never passes), masked */
        const vm k = vm_first(n - i);
        const vf x = vf_load_dt_tail(row, dt, i, n - i, NAN);
        if (!range) ex = vi_max_u32(ex, vi_maskz(k, vi_and(vf_as_vi(x), em)));
        const vm m = vm_and(k, pass_v(x, l, h, range));
        if (vm_any(m)) c = vf_compress_emit(x, m, base + (int32_t)i, ids, vals, cap, c);
    }
    if (!range) *nonfinite |= vm_any(vi_cmpeq(ex, em));
    return c;
}

KERNEL size_t simd_compact_ge(const void *row, enum nextok_dtype dt, size_t n, float thr, int32_t base,
                              int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    return BY_DTYPE(compact_impl, dt, 0, row, n, thr, thr, base, ids, vals, cap, nonfinite);
}

/*
 * One listed block alone or in a short run (top-k's or a maximum's few
 * blocks; nextok__compact_blocks_by): the compare masks of the whole block
 * first, packed 64 lanes to a word with no branch, then only the set bits,
 * one element each. A block holds one or two candidates here, so the
 * per-vector branches of compact_impl would each mispredict about as often
 * as not on a row the predictors have not seen, and a call per block pays
 * its set-up. The output is compact_impl's over the block: the candidates in
 * index order, the same count past cap. Non-finite values are not looked
 * for: the maxima that listed the block came from block_max, which reported
 * them.
 *
 * sparse_emit: the elements of the block at i0 whose bit is set in word[0 ..
 * NEXTOK__BLK / 64), kept when their value is >= thr (a 16-bit filter lets a
 * few below through).
 */
AI size_t sparse_emit(enum nextok_dtype dt, const void *row, size_t i0, const uint64_t *word, float thr,
                      int32_t *ids, float *vals, size_t cap, size_t c)
{
    for (unsigned g = 0; g < NEXTOK__BLK / 64; g++)
        for (uint64_t w = word[g]; w; w &= w - 1) {
            const size_t i = i0 + 64 * g + (unsigned)__builtin_ctzll(w);
            const float v = elem(dt, row, i);
            if (c < cap) {
                ids[c] = (int32_t)i;
                vals[c] = v;
            }
            c += v >= thr;
        }
    return c;
}

AI size_t block_impl(enum nextok_dtype dt, const void *row, size_t i0, float thr, int32_t *ids, float *vals,
                     size_t cap, size_t c)
{
    const vf t = vf_set1(thr);
    uint64_t word[NEXTOK__BLK / 64];
    for (unsigned g = 0; g < NEXTOK__BLK / 64; g++) {
        vm m[64 / VL];
        UNROLL for (unsigned j = 0; j < 64 / VL; j++) m[j] = vf_cmp_ge(vf_load_dt(row, dt, i0 + 64 * g + VL * j), t);
        word[g] = vm_word64(m);
    }
    return sparse_emit(dt, row, i0, word, thr, ids, vals, cap, c);
}

KERNEL size_t simd_block(const void *row, enum nextok_dtype dt, size_t i0, float thr, int32_t *ids, float *vals,
                         size_t cap, size_t c)
{
    return BY_DTYPE(block_impl, dt, row, i0, thr, ids, vals, cap, c);
}

KERNEL size_t simd_compact_blocks(const void *row, enum nextok_dtype dt, size_t n, float thr, const float *bmax,
                                  int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    return nextok__compact_blocks_by(simd_compact_ge, simd_block, row, dt, n, thr, bmax, ids, vals, cap,
                                     nonfinite);
}

/* Candidates: the quotients (clamped with min/max, which leave finite
 * values alone and map ±inf to ±FLT_MAX) and the compare a vector at a time,
 * the records written by the ISA's cands_emit. */
KERNEL size_t simd_cands_ge(const int32_t *ids, const float *vals, size_t n, float div, float thr,
                            struct nextok_token_data *out)
{
    const vf dv = vf_set1(div), t = vf_set1(thr), hi = vf_set1(FLT_MAXF), lo = vf_set1(-FLT_MAXF);
    size_t k = 0, i = 0;
    for (; i + VL <= n; i += VL) {
        vf v = vf_load(vals + i);
        if (div != 1.0f) v = vf_max(vf_min(vf_div(v, dv), hi), lo);
        const vm m = vf_cmp_ge(v, t);
        if (vm_any(m)) k = cands_emit(ids + i, v, m, out, k);
    }
    if (i < n) {
        vf v = vf_load_tail(vals + i, n - i, 0.0f);
        if (div != 1.0f) v = vf_max(vf_min(vf_div(v, dv), hi), lo);
        const vm m = vm_and(vm_first(n - i), vf_cmp_ge(v, t));
        if (vm_any(m)) k = cands_emit(ids + i, v, m, out, k);
    }
    return k;
}

/* ---- widening --------------------------------------------------------------- */

AI void widen_impl(enum nextok_dtype dt, const uint16_t *src, size_t n, float *dst)
{
    size_t i = 0;
    for (; i + VL <= n; i += VL) vf_store(dst + i, vf_load_dt(src, dt, i));
    if (i < n) vf_store_tail(dst + i, vf_load_dt_tail(src, dt, i, n - i, 0.0f), n - i);
}

KERNEL void simd_widen(const uint16_t *src, enum nextok_dtype dt, size_t n, float *dst)
{
    if (dt == NEXTOK_DTYPE_F16) widen_impl(NEXTOK_DTYPE_F16, src, n, dst);
    else widen_impl(NEXTOK_DTYPE_BF16, src, n, dst);
}

/* ---- probabilities ------------------------------------------------------------ */

KERNEL void simd_probs(const float *w, size_t n, double z, float *p)
{
    const vd zv = vd_set1(z);
    size_t i = 0;
    for (; i + VL / 2 <= n; i += VL / 2) vd_store_f32(p + i, vd_div(vd_load_f32(w + i), zv));
    if (i < n) vd_store_f32_tail(p + i, vd_div(vd_load_f32_tail(w + i, n - i), zv), n - i);
}

/* ---- sum / sum of squares (estimate) ---------------------------------------- */

/* Chunks of 4 x VL x 8 elements: four streams of VL lanes, each lane a
 * float partial of 8 terms; the streams are added as (a + b) + (c + d), so
 * each term sees at most 10 float roundings, within NEXTOK__SUMSQ_BLOCK,
 * then widened to double. Four streams keep four add chains in flight
 * (AVX2 had two: sum_sq with T = 1 on a 128256-id f32 row 9.8 -> 8.6 us,
 * f16 12.9 -> 8.7). The tail: one float term per partial. The non-finite
 * flag costs nothing per element: a NaN or ±inf makes the sum of squares
 * non-finite, and only then is the row scanned again for it. */

/* One stream's step: the maximum of the raw values, then d = v - center
 * into the float partials of d and d * d (one fma); one: div == 1, no
 * division (x / 1 == x). */
AI void sumsq_step(vf x, vf dv, vf c, int one, vf *m, vf *s, vf *q)
{
    *m = vf_max(x, *m);
    if (!one) x = vf_div(x, dv);
    x = vf_sub(x, c);
    *s = vf_add(*s, x);
    *q = vf_fmadd(x, x, *q);
}

/* The four streams' partials added as a tree, written out (a loop over
 * the array left it in memory). */
AI vf streams_sum(const vf a[4]) { return vf_add(vf_add(a[0], a[1]), vf_add(a[2], a[3])); }

/* Two running maxima serve the four streams (a maximum's chain is short;
 * two fewer registers keep AVX2's loop out of the stack at -O2). */
AI float sumsq_impl(enum nextok_dtype dt, int one, const void *row, size_t n, float div, float center,
                    int *nonfinite, double *sum, double *sumsq)
{
    enum { S = 4, CHUNK = 4 * VL * 8 };
    const vf dv = vf_set1(div), c = vf_set1(center);
    vd s0 = vd_zero(), s1 = s0, q0 = s0, q1 = s0;
    vf m[2] = {vf_set1(-INFINITY), vf_set1(-INFINITY)};
    size_t i = 0;
    for (; i + CHUNK <= n; i += CHUNK) {
        vf s[S], q[S];
        UNROLL for (int u = 0; u < S; u++) s[u] = q[u] = vf_zero();
        /* not unrolled: with every load hoisted, AVX2's 16 registers spill */
        _Pragma("GCC unroll 1") for (size_t j = i; j < i + CHUNK; j += (size_t)S * VL)
            UNROLL for (int u = 0; u < S; u++) {
                vf x = vf_load_dt(row, dt, j + (size_t)u * VL);
                V_PIN(x);
                sumsq_step(x, dv, c, one, &m[u & 1], &s[u], &q[u]);
            }
        const vf fs = streams_sum(s), fq = streams_sum(q);
        s0 = vd_add(s0, vd_lo(fs));
        s1 = vd_add(s1, vd_hi(fs));
        q0 = vd_add(q0, vd_lo(fq));
        q1 = vd_add(q1, vd_hi(fq));
    }
    for (; i < n; i += VL) {
        vf v = vf_load_dt_tail(row, dt, i, n - i, -INFINITY);
        m[0] = vf_max(v, m[0]);
        if (!one) v = vf_div(v, dv);
        v = vf_maskz(vm_first(n - i), vf_sub(v, c)); /* the -inf padding counts as 0 */
        const vf fq = vf_mul(v, v);
        s0 = vd_add(s0, vd_lo(v));
        s1 = vd_add(s1, vd_hi(v));
        q0 = vd_add(q0, vd_lo(fq));
        q1 = vd_add(q1, vd_hi(fq));
    }
    *sum = vd_hsum(vd_add(s0, s1));
    *sumsq = vd_hsum(vd_add(q0, q1));
    if (!isfinite(*sumsq)) { /* a NaN or ±inf, or an overflow: which one */
        int nf = 0;
        (void)max_impl(dt, row, n, &nf);
        *nonfinite |= nf;
    }
    return vf_hmax(vf_max(m[0], m[1]));
}

KERNEL float simd_sum_sq(const void *row, enum nextok_dtype dt, size_t n, float div, float center, int *nonfinite,
                         double *sum, double *sumsq)
{
    if (div == 1.0f) return BY_DTYPE(sumsq_impl, dt, 1, row, n, div, center, nonfinite, sum, sumsq);
    return BY_DTYPE(sumsq_impl, dt, 0, row, n, div, center, nonfinite, sum, sumsq);
}

/* The tight fallback (sum_sq_dbl): every term in double. An estimate (order
 * free): two vectors per iteration on their own accumulators keep four add
 * chains in flight; x / 1 == x, so no division without a temperature. */
AI int sumsq_dbl_impl(enum nextok_dtype dt, const void *row, size_t n, float div, double center, double *sum,
                      double *sumsq)
{
    const vf dv = vf_set1(div);
    const vd c = vd_set1(center);
    vd s[4], q[4];
    UNROLL for (int u = 0; u < 4; u++) s[u] = q[u] = vd_zero();
    size_t i = 0;
    for (; i + 2 * VL <= n; i += 2 * VL) {
        vf va = vf_load_dt(row, dt, i), vb = vf_load_dt(row, dt, i + VL);
        if (div != 1.0f) {
            va = vf_div(va, dv);
            vb = vf_div(vb, dv);
        }
        const vd d[4] = {vd_sub(vd_lo(va), c), vd_sub(vd_hi(va), c), vd_sub(vd_lo(vb), c), vd_sub(vd_hi(vb), c)};
        UNROLL for (int u = 0; u < 4; u++) {
            s[u] = vd_add(s[u], d[u]);
            q[u] = vd_fmadd(d[u], d[u], q[u]);
        }
    }
    s[0] = vd_add(s[0], s[2]);
    s[1] = vd_add(s[1], s[3]);
    q[0] = vd_add(q[0], q[2]);
    q[1] = vd_add(q[1], q[3]);
    for (; i < n; i += VL) {
        const vm k = vm_first(n - i);
        vf v = vf_load_dt_tail(row, dt, i, n - i, 0.0f);
        if (div != 1.0f) v = vf_div(v, dv);
        const vd d0 = vd_maskz(vm_lo(k), vd_sub(vd_lo(v), c)), d1 = vd_maskz(vm_hi(k), vd_sub(vd_hi(v), c));
        s[0] = vd_add(s[0], d0);
        s[1] = vd_add(s[1], d1);
        q[0] = vd_fmadd(d0, d0, q[0]);
        q[1] = vd_fmadd(d1, d1, q[1]);
    }
    *sum = vd_hsum(vd_add(s[0], s[1]));
    *sumsq = vd_hsum(vd_add(q[0], q[1]));
    return 0;
}

KERNEL void simd_sum_sq_dbl(const void *row, enum nextok_dtype dt, size_t n, float div, double center,
                            double *sum, double *sumsq)
{
    (void)BY_DTYPE(sumsq_dbl_impl, dt, row, n, div, center, sum, sumsq);
}

/* ---- canonical weights (kernels.h: nextok__expw, nextok__wblock) ------------ */

/* nextok__expw on the lanes of x = l - c: the same IEEE and integer
 * operations in the same order, the table (N folded in: tab[j] - (N << 23),
 * mod 2^32, as the reference's sum) looked up by the low 4 bits of bits(t).
 * cut = 0: the caller has no cut-off (nextok__wref_unscaled); else the x <
 * cut lanes are zeroed at the end, whatever they computed (AVX-512: the
 * last fma's mask). */
AI vf expw_v(vf x, vtab tab, vf cutv, int cut)
{
    const vf mg = vf_set1(NEXTOK__EXPW_MAGIC);
    const vf t = vf_fmadd(x, vf_set1(NEXTOK__EXPW_LOG2E16), mg);
    const vf r = vf_fnmadd(vf_sub(t, mg), vf_set1(NEXTOK__EXPW_LN2_16), x); /* = fmaf(-k, ln2/16, x) */
    vf q = vf_fmadd(vf_set1(NEXTOK__EXPW_C3), r, vf_set1(NEXTOK__EXPW_C2));
    q = vf_fmadd(q, r, vf_set1(1.0f));
    const vi tb = vf_as_vi(t);
    const vf s = vi_as_vf(vi_add(vi_lut16(tab, tb), vi_slli(tb, 19)));
    const vf w = vf_fmadd(vf_mul(s, r), q, s);
    if (!cut) return w;
    return vf_maskz(vf_cmp_nlt(x, cutv), w); /* !(x < cut) */
}

AI vtab wtab_of(const struct nextok__wref *ref) { return vtab_load(nextok__expw_tab, (uint32_t)ref->n << 23); }

/* v = x or sat(x / div), as temp.c */
AI vf temp_v(vf x, float div, int sat)
{
    if (div == 1.0f) return x;
    if (!sat) return vf_div(x, vf_set1(div)); /* unscaled: an overflow shows in vmax */
    const vf fm = vf_set1(FLT_MAXF);
    x = vf_div(x, vf_set1(div));
    /* operands in this order keep NaN (min/max return the second on NaN), as
     * the reference's comparisons do */
    return vf_max(vf_sub(vf_zero(), fm), vf_min(fm, x));
}

/* The weight of raw x (processed v) in the weights pass: full, the
 * subtraction and the cut-off test; ge, zero unless x >= gev (min-p's dense
 * set; AVX-512: folded into the last fma's mask). */
AI vf weight_v(vf x, vf v, vf cv, vtab tab, vf cutv, vf gev, int full, int ge)
{
    const vf e = expw_v(full ? vf_sub(v, cv) : v, tab, cutv, full);
    return ge ? vf_maskz(vf_cmp_ge(x, gev), e) : e;
}

/*
 * full = 0: ref is nextok__wref_unscaled (no subtraction, no cut-off test,
 * no saturation: an overflowing quotient is inf, which vmax reports).
 * xd = 1 (full = 0, 0 < div < inf): the minima and maxima are taken over the
 * raw x and divided once at the end: v = fl(x / div) is non-decreasing in x,
 * so fl(max x / div) = max fl(x / div) (likewise min), the same bits; the
 * comparisons then do not wait for the division.
 * ge: min-p's dense set (kernels.h weights_ge): no extremes, no maxima.
 * The tree of block b's lane sums is taken after block b + 1's lane sums
 * (and once after the loop): by then its input is ready, so its chain of
 * dependent adds does not sit in the scheduler while the current block's
 * work waits for it (flat V 128256 weights pass at T = 0.8: 27.7 -> 25.5 us,
 * docs/performance.md).
 */
/* The lanes of the ids a .. a + VL - 1 a token bitmask allows (a a
 * multiple of VL, so they are VL bits of one word). */
AI vm allowed_v(const uint32_t *mask, size_t a) { return vm_of_bits(mask[a >> 5] >> (a & 31)); }

AI void weights_impl(enum nextok_dtype dt, const void *row, size_t n, float div, const struct nextok__wref *ref,
                     int full, int xd, int ge, float gef, const uint32_t *mask, float *w, double *bsum,
                     double *cum, float *bmax, float *vmin, float *vmax)
{
    /* mask (a token bitmask, or NULL: a constant in every caller): a
     * disallowed lane weighs +0 and is left out of the extremes and maxima */
    const vf gev = vf_set1(gef);
    const vf cv = vf_set1(ref->c), cutv = vf_set1(ref->cut);
    const vtab tab = wtab_of(ref);
    const vf ninf = vf_set1(-INFINITY);
    vf lo = vf_set1(INFINITY), hi = ninf, bm = ninf; /* bm: the open 256-id group */
    size_t b = 0;
    double acc = 0.0; /* the running sum */
    vf pa[NACC];      /* the previous block's lane sums */
    UNROLL for (int k = 0; k < NACC; k++) pa[k] = vf_zero();
    for (; (b + 1) * 64 <= n; b++) {
        vf a[NACC];
        UNROLL for (int k = 0; k < NACC; k++) a[k] = vf_zero();
        UNROLL for (size_t j = 0; j < 64 / VL; j++) { /* lane sums in float, in order */
            const size_t i = b * 64 + j * VL;
            vf x = vf_load_dt(row, dt, i);
            if (mask) V_PIN(x);
            const vf v = temp_v(x, div, full);
            const vm am = mask ? allowed_v(mask, i) : vm_first(VL);
            if (!ge) {
                const vf xv = xd ? x : v;
                lo = mask ? vf_min_where(am, xv, lo) : vf_min(xv, lo); /* NaN: lo kept */
                bm = mask ? vf_max_where(am, xv, bm) : vf_max(xv, bm);
            }
            vf e = weight_v(x, v, cv, tab, cutv, gev, full, ge);
            if (mask) e = vf_maskz(am, e);
            vf_store(w + i, e);
            a[j % NACC] = vf_add(a[j % NACC], e);
        }
        if (!ge && b % 4 == 3) { /* a group closes */
            hi = vf_max(bm, hi);
            if (bmax) bmax[b / 4] = vf_hmax(bm);
            bm = ninf;
        }
        if (b > 0) cum[b - 1] = acc += bsum[b - 1] = vf_tree16(pa);
        UNROLL for (int k = 0; k < NACC; k++) pa[k] = a[k];
    }
    if (b > 0) cum[b - 1] = acc += bsum[b - 1] = vf_tree16(pa);
    for (size_t i = b * 64; i < n; i += VL) { /* the partial block: partial vectors */
        const vm k = mask ? vm_and(vm_first(n - i), allowed_v(mask, i)) : vm_first(n - i);
        const vf x = vf_load_dt_tail(row, dt, i, n - i, -INFINITY), v = temp_v(x, div, full);
        lo = vf_select(k, vf_min(xd ? x : v, lo), lo);
        bm = vf_select(k, vf_max(xd ? x : v, bm), bm);
        vf e = weight_v(x, v, cv, tab, cutv, gev, full, ge);
        if (mask) e = vf_maskz(k, e);
        vf_store_tail(w + i, e, n - i);
    }
    if (b * 64 < n) {
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
        cum[b] = acc + bsum[b];
    }
    if (ge) return;
    if (n % 256 != 0) { /* the last group is still open */
        hi = vf_max(bm, hi);
        if (bmax) bmax[(n - 1) / 256] = vf_hmax(bm);
    }
    *vmin = vf_hmin(lo);
    *vmax = vf_hmax(hi);
    if (xd) { /* the raw extremes to processed values (±inf when none: the same) */
        *vmin /= div;
        *vmax /= div;
        const vf dv = vf_set1(div);
        for (size_t g = 0, ng = (n + 255) / 256; bmax && g < ng; g += VL)
            vf_store_tail(bmax + g, vf_div(vf_load_tail(bmax + g, ng - g, 0.0f), dv), ng - g);
    }
}

KERNEL void simd_weights(const void *row, enum nextok_dtype dt, size_t n, float div, const struct nextok__wref *ref,
                         float *w, double *bsum, double *cum, float *bmax, float *vmin, float *vmax)
{
    /* div == 1 and the tests as constants: loops without per-vector branches */
    const int full = !nextok__wref_is_unscaled(ref);
    if (div == 1.0f && !full)
        BY_DTYPE(weights_impl, dt, row, n, 1.0f, ref, 0, 0, 0, 0.0f, NULL, w, bsum, cum, bmax, vmin, vmax);
    else if (div == 1.0f)
        BY_DTYPE(weights_impl, dt, row, n, 1.0f, ref, 1, 0, 0, 0.0f, NULL, w, bsum, cum, bmax, vmin, vmax);
    else if (!full && div > 0.0f && div < INFINITY)
        BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 1, 0, 0.0f, NULL, w, bsum, cum, bmax, vmin, vmax);
    else if (!full)
        BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 0, 0, 0.0f, NULL, w, bsum, cum, bmax, vmin, vmax);
    else
        BY_DTYPE(weights_impl, dt, row, n, div, ref, 1, 0, 0, 0.0f, NULL, w, bsum, cum, bmax, vmin, vmax);
}

KERNEL void simd_weights_ge(const void *row, enum nextok_dtype dt, size_t n, float div,
                            const struct nextok__wref *ref, float ge, float *w, double *bsum, double *cum)
{
    if (nextok__wref_is_unscaled(ref))
        BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 0, 1, ge, NULL, w, bsum, cum, NULL, NULL, NULL);
    else
        BY_DTYPE(weights_impl, dt, row, n, div, ref, 1, 0, 1, ge, NULL, w, bsum, cum, NULL, NULL, NULL);
}

/* weights over the allowed elements of a token bitmask (the same cases as
 * simd_weights, each with the mask). */
KERNEL void simd_weights_masked(const void *row, enum nextok_dtype dt, size_t n, float div,
                                const struct nextok__wref *ref, const uint32_t *mask, float *w, double *bsum,
                                double *cum, float *bmax, float *vmin, float *vmax)
{
    const int full = !nextok__wref_is_unscaled(ref);
    if (div == 1.0f && !full)
        BY_DTYPE(weights_impl, dt, row, n, 1.0f, ref, 0, 0, 0, 0.0f, mask, w, bsum, cum, bmax, vmin, vmax);
    else if (div == 1.0f)
        BY_DTYPE(weights_impl, dt, row, n, 1.0f, ref, 1, 0, 0, 0.0f, mask, w, bsum, cum, bmax, vmin, vmax);
    else if (!full && div > 0.0f && div < INFINITY)
        BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 1, 0, 0.0f, mask, w, bsum, cum, bmax, vmin, vmax);
    else if (!full)
        BY_DTYPE(weights_impl, dt, row, n, div, ref, 0, 0, 0, 0.0f, mask, w, bsum, cum, bmax, vmin, vmax);
    else
        BY_DTYPE(weights_impl, dt, row, n, div, ref, 1, 0, 0, 0.0f, mask, w, bsum, cum, bmax, vmin, vmax);
}

/* ---- the other passes over a token bitmask's allowed elements ---------------- */

/* The ISA files are built with the popcount instruction (every CPU with
 * AVX2 has it; dispatch.c checks), two words at a time. */
KERNEL size_t simd_count_allowed(const uint32_t *mask, size_t n)
{
    size_t c = 0, k = 0;
    for (; k + 2 <= n / 32; k += 2) c += (size_t)__builtin_popcountll((uint64_t)mask[k] | (uint64_t)mask[k + 1] << 32);
    for (; k < n / 32; k++) c += (size_t)__builtin_popcount(mask[k]);
    if (n % 32) c += (size_t)__builtin_popcount(mask[n / 32] & ((UINT32_C(1) << (n % 32)) - 1));
    return c;
}

/* Into acc (VL running maxima) the allowed elements of row[0..n) (ids base
 * + i, base a multiple of 32); into nf, x 0 + nf for every element, allowed
 * or not: NaN from the first NaN or inf on (the plain chain's test, one fma
 * where an exponent test costs two operations). 64 elements a step: two
 * mask words, each read once, four independent chains; then one vector at
 * a time. */
AI void max_masked_run(enum nextok_dtype dt, const void *row, size_t n, size_t base, const uint32_t *mask,
                       vf acc[4], vf nf[4])
{
    const vf zero = vf_zero();
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const uint32_t w[2] = {mask[(base + i) >> 5], mask[((base + i) >> 5) + 1]};
        UNROLL for (int u = 0; u < 64 / VL; u++) {
            vf x = vf_load_dt(row, dt, i + (size_t)u * VL);
            V_PIN(x);
            nf[u % 4] = vf_fmadd(x, zero, nf[u % 4]);
            acc[u % 4] = vf_max_where(vm_of_bits(w[u * VL / 32] >> (u * VL % 32)), x, acc[u % 4]);
        }
    }
    for (; i < n; i += VL) {
        const vm k = vm_first(n - i);
        const vf x = vf_load_dt_tail(row, dt, i, n - i, -INFINITY);
        nf[0] = vf_fmadd(vf_maskz(k, x), zero, nf[0]);
        acc[0] = vf_max_where(vm_and(k, allowed_v(mask, base + i)), x, acc[0]);
    }
}

AI float max_masked_impl(enum nextok_dtype dt, const void *row, size_t n, size_t base, const uint32_t *mask,
                         vf nf[4])
{
    vf a[4];
    UNROLL for (int u = 0; u < 4; u++) a[u] = vf_set1(-INFINITY);
    max_masked_run(dt, row, n, base, mask, a, nf);
    return vf_hmax(vf_max(vf_max(a[0], a[1]), vf_max(a[2], a[3])));
}

/* Whether a lane of the nf sums is NaN. */
AI bool nf_any(const vf nf[4])
{
    const vf s = vf_add(vf_add(nf[0], nf[1]), vf_add(nf[2], nf[3]));
    return vm_count(vf_cmp_le(s, s)) != VL;
}

AI float max_masked_entry(enum nextok_dtype dt, const void *row, size_t n, const uint32_t *mask, int *nonfinite)
{
    vf nf[4];
    UNROLL for (int u = 0; u < 4; u++) nf[u] = vf_zero();
    const float m = max_masked_impl(dt, row, n, 0, mask, nf);
    *nonfinite |= nf_any(nf);
    return m;
}

KERNEL float simd_max_masked(const void *row, enum nextok_dtype dt, size_t n, const uint32_t *mask,
                             int *nonfinite)
{
    return BY_DTYPE(max_masked_entry, dt, row, n, mask, nonfinite);
}

AI size_t block_max_masked_impl(enum nextok_dtype dt, const void *row, size_t n, const uint32_t *mask,
                                float *bmax, int *nonfinite)
{
    const size_t esz = nextok_dtype_size(dt), nb = (n + NEXTOK__BLK - 1) / NEXTOK__BLK;
    vf nf[4];
    UNROLL for (int u = 0; u < 4; u++) nf[u] = vf_zero();
    for (size_t b = 0; b < nb; b++) {
        const size_t i = b * NEXTOK__BLK, len = n - i < NEXTOK__BLK ? n - i : NEXTOK__BLK;
        bmax[b] = max_masked_impl(dt, (const char *)row + i * esz, len, i, mask, nf);
    }
    *nonfinite |= nf_any(nf);
    return nb;
}

KERNEL size_t simd_block_max_masked(const void *row, enum nextok_dtype dt, size_t n, const uint32_t *mask,
                                    float *bmax, int *nonfinite)
{
    return BY_DTYPE(block_max_masked_impl, dt, row, n, mask, bmax, nonfinite);
}

/* The allowed x >= thr, 32 elements (one mask word) a step: a branch on
 * each step's lanes, which predicts on the few survivors of top-k's and
 * min-p's thresholds. */
AI size_t compact_masked_impl(enum nextok_dtype dt, const void *row, size_t n, float thr, int32_t base,
                              const uint32_t *mask, int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    const vi em = vi_set1(0x7f800000);
    const vf t = vf_set1(thr);
    vi ex = vi_zero();
    size_t c = 0, i = 0;
    for (; i + 32 <= n; i += 32) {
        const uint32_t w = mask[((size_t)base + i) >> 5];
        vf x[32 / VL];
        vm m[32 / VL];
        UNROLL for (int u = 0; u < 32 / VL; u++) {
            x[u] = vf_load_dt(row, dt, i + (size_t)u * VL);
            V_PIN(x[u]);
            ex = vi_max_u32(ex, vi_and(vf_as_vi(x[u]), em));
            m[u] = vm_and(vf_cmp_ge(x[u], t), vm_of_bits(w >> (u * VL)));
        }
        vm any = m[0];
        UNROLL for (int u = 1; u < 32 / VL; u++) any = vm_or(any, m[u]);
        if (!vm_any(any)) continue;
        UNROLL for (int u = 0; u < 32 / VL; u++)
            if (vm_any(m[u])) c = vf_compress_emit(x[u], m[u], base + (int32_t)(i + (size_t)u * VL), ids, vals, cap, c);
    }
    for (; i < n; i += VL) {
        const vm k = vm_first(n - i);
        const vf x = vf_load_dt_tail(row, dt, i, n - i, -INFINITY);
        ex = vi_max_u32(ex, vi_maskz(k, vi_and(vf_as_vi(x), em)));
        const vm m = vm_and(vm_and(k, vf_cmp_ge(x, t)), allowed_v(mask, (size_t)base + i));
        if (vm_any(m)) c = vf_compress_emit(x, m, base + (int32_t)i, ids, vals, cap, c);
    }
    *nonfinite |= vm_any(vi_cmpeq(ex, em));
    return c;
}

KERNEL size_t simd_compact_masked(const void *row, enum nextok_dtype dt, size_t n, float thr, int32_t base,
                                  const uint32_t *mask, int32_t *ids, float *vals, size_t cap, int *nonfinite)
{
    return BY_DTYPE(compact_masked_impl, dt, row, n, thr, base, mask, ids, vals, cap, nonfinite);
}

KERNEL size_t simd_compact_blocks_masked(const void *row, enum nextok_dtype dt, size_t n, float thr,
                                         const float *bmax, const uint32_t *mask, int32_t *ids, float *vals,
                                         size_t cap, int *nonfinite)
{
    return nextok__compact_blocks_masked_by(simd_compact_masked, row, dt, n, thr, bmax, mask, ids, vals, cap,
                                            nonfinite);
}

KERNEL void simd_expw(const float *x, size_t n, const struct nextok__wref *ref, float *w)
{
    const vf cv = vf_set1(ref->c), cutv = vf_set1(ref->cut);
    const vtab tab = wtab_of(ref);
    size_t i = 0;
    for (; i + VL <= n; i += VL) vf_store(w + i, expw_v(vf_sub(vf_load(x + i), cv), tab, cutv, 1));
    if (i < n) vf_store_tail(w + i, expw_v(vf_sub(vf_load_tail(x + i, n - i, 0.0f), cv), tab, cutv, 1), n - i);
}

/* ---- typical-p's S (kernels.h: nextok__wvblock) ------------------------------ */

/* VL elements at i (left of them real) into the double lanes *a0 (the
 * vector's first VL / 2 lanes) and *a1: the products widened (exact), added
 * in order; lanes past left add nothing. */
AI void wv_v(enum nextok_dtype dt, const void *row, const float *w, size_t i, size_t left, float div, vd *a0,
             vd *a1)
{
    const bool whole = left >= VL;
    const vf v = temp_v(whole ? vf_load_dt(row, dt, i) : vf_load_dt_tail(row, dt, i, left, 0.0f), div, 1);
    const vf e = whole ? vf_load(w + i) : vf_load_tail(w + i, left, 0.0f);
    vd p0 = vd_mul(vd_lo(e), vd_lo(v)), p1 = vd_mul(vd_hi(e), vd_hi(v));
    if (!whole) {
        const vm k = vm_first(left);
        p0 = vd_maskz(vm_lo(k), p0);
        p1 = vd_maskz(vm_hi(k), p1);
    }
    *a0 = vd_add(*a0, p0);
    *a1 = vd_add(*a1, p1);
}

/* Vector j of a block adds to lanes group j % NACC (vd accumulators 2 g and
 * 2 g + 1); the tree as in weights_impl, one block late. */
AI void wvsum_impl(enum nextok_dtype dt, const void *row, size_t n, float div, const float *w, double *bs)
{
    vd pa[2 * NACC]; /* the previous block's lanes */
    UNROLL for (int k = 0; k < 2 * NACC; k++) pa[k] = vd_zero();
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        vd a[2 * NACC];
        UNROLL for (int k = 0; k < 2 * NACC; k++) a[k] = vd_zero();
        UNROLL for (size_t j = 0; j < 64 / VL; j++)
            wv_v(dt, row, w, b * 64 + j * VL, VL, div, &a[2 * (j % NACC)], &a[2 * (j % NACC) + 1]);
        if (b > 0) bs[b - 1] = vd_tree16(pa);
        UNROLL for (int k = 0; k < 2 * NACC; k++) pa[k] = a[k];
    }
    if (b > 0) bs[b - 1] = vd_tree16(pa);
    if (b * 64 < n) { /* the partial block: partial vectors */
        vd a[2 * NACC];
        UNROLL for (int k = 0; k < 2 * NACC; k++) a[k] = vd_zero();
        for (size_t j = 0, i = b * 64; i < n; i += VL, j++)
            wv_v(dt, row, w, i, n - i, div, &a[2 * (j % NACC)], &a[2 * (j % NACC) + 1]);
        bs[b] = vd_tree16(a);
    }
}

KERNEL void simd_wvsum(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w, double *bs)
{
    if (div == 1.0f) BY_DTYPE(wvsum_impl, dt, row, n, 1.0f, w, bs);
    else BY_DTYPE(wvsum_impl, dt, row, n, div, w, bs);
}

/* ---- masses (top-p, typical-p: nextok__mass_q) --------------------------------- */

/* The masses of weights i .. i+VL-1 (left of them real; the others 0), as
 * mass_q: times scale, min(x, 2^62) (NaN too: min returns its second operand
 * then), truncated; lanes 0 .. VL/2-1 in *q0, the others in *q1. */
AI void mass_v(const float *w, size_t i, size_t left, vf sc, vq *q0, vq *q1)
{
    const vf x = left >= VL ? vf_load(w + i) : vf_load_tail(w + i, left, 0.0f);
    const vf ws = vf_min(vf_mul(x, sc), vf_set1(0x1p62f));
    *q0 = vq_trunc_lo(ws);
    *q1 = vq_trunc_hi(ws);
}

/* ---- typical-p's scan (kernels.h: nextok__typscan_scalar) ------------------ */

/* A vector: scores, masses, the below/inside masks on the score bits; the
 * inside lanes compressed and stored whole (the buffers have 16 entries of
 * slack). */
struct typ_acc {
    vq qt0, qt1, qb0, qb1; /* masses: every one, below the bracket */
    size_t m, nb;          /* inside lanes stored, below lanes */
};

AI void typ_v(enum nextok_dtype dt, const void *row, size_t i, size_t left, float div, const float *w, vf cv,
              vf scl, vi klo, vi khi, struct typ_acc *s, float *sc, int32_t *ids, float *vals)
{
    const bool whole = left >= VL;
    const vm k = vm_first(left);
    const vf v = temp_v(whole ? vf_load_dt(row, dt, i) : vf_load_dt_tail(row, dt, i, left, 0.0f), div, 1);
    const vf sv = vf_abs(vf_sub(v, cv));
    if (whole) vf_store(sc + i, sv);
    else vf_store_tail(sc + i, sv, left);
    vq q0, q1;
    mass_v(w, i, left, scl, &q0, &q1);
    s->qt0 = vq_add(s->qt0, q0);
    s->qt1 = vq_add(s->qt1, q1);
    const vi key = vf_as_vi(sv);
    const vm below = live(whole, k, vi_cmplt_u32(key, klo));
    const vm in = vm_andnot(live(whole, k, vi_cmple_u32(key, khi)), below);
    s->qb0 = vq_add_mask(s->qb0, vm_lo(below), q0);
    s->qb1 = vq_add_mask(s->qb1, vm_hi(below), q1);
    s->nb += vm_count(below);
    /* no branch: a bracket holding a few percent of the row has inside
     * lanes in most vectors, and a mispredicted branch costs more than
     * the two stores */
    s->m = vf_compress_store(sv, in, (int32_t)i, ids, vals, s->m);
}

AI size_t typscan_impl(enum nextok_dtype dt, const void *row, size_t n, float div, const float *w,
                       struct nextok__typscan *ts, float *sc, int32_t *ids, float *vals)
{
    const vf cv = vf_set1(ts->center), scl = vf_set1(ts->scale);
    const vi klo = vi_set1((int32_t)ts->klo), khi = vi_set1((int32_t)ts->khi);
    struct typ_acc s = {.m = 0, .nb = 0};
    s.qt0 = s.qt1 = s.qb0 = s.qb1 = vq_zero();
    size_t i = 0;
    for (; i + VL <= n; i += VL) typ_v(dt, row, i, VL, div, w, cv, scl, klo, khi, &s, sc, ids, vals);
    if (i < n) typ_v(dt, row, i, n - i, div, w, cv, scl, klo, khi, &s, sc, ids, vals);
    ts->q_total += vq_hsum(vq_add(s.qt0, s.qt1));
    ts->q_below += vq_hsum(vq_add(s.qb0, s.qb1));
    ts->n_below += s.nb;
    return s.m;
}

KERNEL size_t simd_typscan(const void *row, enum nextok_dtype dt, size_t n, float div, const float *w,
                           struct nextok__typscan *ts, float *sc, int32_t *ids, float *vals)
{
    if (div == 1.0f) return BY_DTYPE(typscan_impl, dt, row, n, 1.0f, w, ts, sc, ids, vals);
    return BY_DTYPE(typscan_impl, dt, row, n, div, w, ts, sc, ids, vals);
}

/* typical-p's cut: unsigned key < klo on the score bits, the kept weights'
 * lane sums as weights_impl forms them. */
KERNEL void simd_cut_keys(float *w, const float *sc, size_t n, uint32_t klo, double *bsum)
{
    const vi k = vi_set1((int32_t)klo);
    vf pa[NACC];
    UNROLL for (int g = 0; g < NACC; g++) pa[g] = vf_zero();
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        vf a[NACC];
        UNROLL for (int g = 0; g < NACC; g++) a[g] = vf_zero();
        UNROLL for (size_t j = 0; j < 64 / VL; j++) { /* lane sums in float, in order, as nextok__wblock */
            const size_t i = b * 64 + j * VL;
            const vf x = vf_maskz(vi_cmplt_u32(vi_load(sc + i), k), vf_load(w + i));
            vf_store(w + i, x);
            a[j % NACC] = vf_add(a[j % NACC], x);
        }
        if (b > 0) bsum[b - 1] = vf_tree16(pa);
        UNROLL for (int g = 0; g < NACC; g++) pa[g] = a[g];
    }
    if (b > 0) bsum[b - 1] = vf_tree16(pa);
    if (b * 64 < n) { /* the partial block */
        for (size_t i = b * 64; i < n; i += VL) {
            const vm keep = vi_cmplt_u32(vf_as_vi(vf_load_tail(sc + i, n - i, 0.0f)), k);
            vf_store_tail(w + i, vf_maskz(keep, vf_load_tail(w + i, n - i, 0.0f)), n - i);
        }
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
    }
}

/* ---- top-p: range compaction, the cut, the mass histogram ------------------------ */

KERNEL size_t simd_compact_range(const void *row, enum nextok_dtype dt, size_t n, float lo, float hi,
                                 int32_t base, int32_t *ids, float *vals, size_t cap)
{
    return BY_DTYPE(compact_impl, dt, 1, row, n, lo, hi, base, ids, vals, cap, NULL);
}

/* The cut a vector at a time; ids only matter for lanes between eq and gt
 * (the cut value's ties), which are rare: a lane test then. Returns the
 * kept weights (lanes past left: 0). */
AI vf cut_v(enum nextok_dtype dt, const void *row, size_t i, size_t left, vf g, vf e, int32_t cut, float *w)
{
    const bool whole = left >= VL;
    const vm k = vm_first(left);
    const vf x = whole ? vf_load_dt(row, dt, i) : vf_load_dt_tail(row, dt, i, left, NAN); /* NaN: never kept */
    vm keep = vf_cmp_ge(x, g);
    const vm tie = vm_andnot(vf_cmp_ge(x, e), keep);
    if (vm_any(tie)) keep = vm_or(keep, vm_andnot(tie, vi_cmpgt_i32(vi_iota((int32_t)i), vi_set1(cut))));
    const vf wv = vf_maskz(live(whole, k, keep), whole ? vf_load(w + i) : vf_load_tail(w + i, left, 0.0f));
    if (whole) vf_store(w + i, wv);
    else vf_store_tail(w + i, wv, left);
    return wv;
}

AI void cut_impl(enum nextok_dtype dt, const void *row, size_t n, float gt, float eq, int32_t cut, float *w,
                 double *bsum)
{
    const vf g = vf_set1(gt), e = vf_set1(eq);
    vf pa[NACC]; /* the previous block's lane sums */
    UNROLL for (int k = 0; k < NACC; k++) pa[k] = vf_zero();
    size_t b = 0;
    for (; (b + 1) * 64 <= n; b++) {
        vf a[NACC];
        UNROLL for (int k = 0; k < NACC; k++) a[k] = vf_zero();
        UNROLL for (size_t j = 0; j < 64 / VL; j++)
            a[j % NACC] = vf_add(a[j % NACC], cut_v(dt, row, b * 64 + j * VL, VL, g, e, cut, w));
        if (b > 0) bsum[b - 1] = vf_tree16(pa);
        UNROLL for (int k = 0; k < NACC; k++) pa[k] = a[k];
    }
    if (b > 0) bsum[b - 1] = vf_tree16(pa);
    if (b * 64 < n) { /* the partial block */
        for (size_t i = b * 64; i < n; i += VL) cut_v(dt, row, i, n - i, g, e, cut, w);
        bsum[b] = nextok__wblock(w + b * 64, n - b * 64);
    }
}

KERNEL void simd_cut_weights(const void *row, enum nextok_dtype dt, size_t n, float gt, float eq, int32_t cut,
                             float *w, double *bsum)
{
    BY_DTYPE(cut_impl, dt, row, n, gt, eq, cut, w, bsum);
}

/* A group the hint rules out: its masses only add to the total. */
AI void mass_add_v(const float *w, size_t i, size_t left, vf sc, vq *a0, vq *b0)
{
    vq q0, q1;
    mass_v(w, i, left, sc, &q0, &q1);
    *a0 = vq_add(*a0, q0);
    *b0 = vq_add(*b0, q1);
}

/* (The loops over a 256-id group run whole groups with whole vectors, and
 * only the row's last group with partial ones: top-p 0.9 on flat V 128256
 * rows, mass_band (AVX-512), 16.5 -> 15.6 read passes side by side.) */
AI void mass_total(const float *w, size_t g, size_t e, vf sc, vq *a0, vq *b0)
{
    if (e - g == NEXTOK__BMAX_IDS)
        for (size_t i = g; i < e; i += VL) mass_add_v(w, i, VL, sc, a0, b0);
    else
        for (size_t i = g; i < e; i += VL) mass_add_v(w, i, e - i, sc, a0, b0);
}

/* mass_above's sums (a[0], b[0]: every mass; a[1 + j], b[1 + j]: x >= t[j])
 * and counts for the vector at i (left of its lanes real). */
struct above_acc {
    vq a[5], b[5];
    uint64_t c[4];
};

AI void above_v(enum nextok_dtype dt, const void *row, const float *w, size_t i, size_t left, vf sc,
                const vf t[4], struct above_acc *s, int counts)
{
    const bool whole = left >= VL;
    const vm k = vm_first(left);
    const vf x = whole ? vf_load_dt(row, dt, i) : vf_load_dt_tail(row, dt, i, left, NAN);
    vq q0, q1;
    mass_v(w, i, left, sc, &q0, &q1);
    s->a[0] = vq_add(s->a[0], q0);
    s->b[0] = vq_add(s->b[0], q1);
    UNROLL for (int j = 0; j < 4; j++) {
        const vm m = live(whole, k, vf_cmp_ge(x, t[j]));
        s->a[1 + j] = vq_add_mask(s->a[1 + j], vm_lo(m), q0);
        s->b[1 + j] = vq_add_mask(s->b[1 + j], vm_hi(m), q1);
        if (counts) s->c[j] += vm_count(m);
    }
}

AI void mass_above_impl(enum nextok_dtype dt, const void *row, size_t n, const float *w, float scale,
                        const float thr[4], const float *gmax, float gth, uint64_t q[5], uint64_t cnt[5], int counts)
{
    const vf sc = vf_set1(scale);
    const vf t[4] = {vf_set1(thr[0]), vf_set1(thr[1]), vf_set1(thr[2]), vf_set1(thr[3])};
    struct above_acc s = {.c = {0}};
    for (int j = 0; j < 5; j++) s.a[j] = s.b[j] = vq_zero();
    for (size_t g = 0; g < n; g += NEXTOK__BMAX_IDS) {
        const size_t e = n - g < NEXTOK__BMAX_IDS ? n : g + NEXTOK__BMAX_IDS;
        if (gmax && !(gmax[g / NEXTOK__BMAX_IDS] >= gth)) {
            mass_total(w, g, e, sc, &s.a[0], &s.b[0]);
            continue;
        }
        if (e - g == NEXTOK__BMAX_IDS)
            for (size_t i = g; i < e; i += VL) above_v(dt, row, w, i, VL, sc, t, &s, counts);
        else
            for (size_t i = g; i < e; i += VL) above_v(dt, row, w, i, e - i, sc, t, &s, counts);
    }
    for (int j = 0; j < 5; j++) q[j] = vq_hsum(vq_add(s.a[j], s.b[j]));
    if (counts) cnt[0] = n, cnt[1] = s.c[0], cnt[2] = s.c[1], cnt[3] = s.c[2], cnt[4] = s.c[3];
}

KERNEL void simd_mass_above(const void *row, enum nextok_dtype dt, size_t n, const float *w, float scale,
                            const float thr[4], const float *gmax, float gth, uint64_t q[5], uint64_t cnt[5])
{
    if (cnt) BY_DTYPE(mass_above_impl, dt, row, n, w, scale, thr, gmax, gth, q, cnt, 1);
    else BY_DTYPE(mass_above_impl, dt, row, n, w, scale, thr, gmax, gth, q, cnt, 0);
}

/* mass_band's sums (a[0], b[0]: every mass; a[1], b[1]: x >= hi; a[2],
 * b[2]: x >= lo) and counts for the vector at i; the band's elements stored
 * at c (fits: unconditionally) or emitted. Its first half is above_v's at
 * two thresholds, but one function and one accumulator struct for both
 * (thresholds and masks in arrays) was measured slower (AVX-512): top-p 0.9
 * on flat V 128256 rows 15.6 -> 17.3 read passes, the compiler no longer
 * kept the sums in registers. */
struct band_acc {
    vq a[3], b[3];
    uint64_t c1, c2;
};

AI size_t band_v(enum nextok_dtype dt, const void *row, const float *w, size_t i, size_t left, vf sc, vf th, vf tl,
                 struct band_acc *s, int counts, bool fits, int32_t base, int32_t *ids, float *vals, size_t cap,
                 size_t c)
{
    const bool whole = left >= VL;
    const vm k = vm_first(left);
    const vf x = whole ? vf_load_dt(row, dt, i) : vf_load_dt_tail(row, dt, i, left, NAN);
    vq q0, q1;
    mass_v(w, i, left, sc, &q0, &q1);
    s->a[0] = vq_add(s->a[0], q0);
    s->b[0] = vq_add(s->b[0], q1);
    const vm mh = live(whole, k, vf_cmp_ge(x, th)), ml = live(whole, k, vf_cmp_ge(x, tl));
    s->a[1] = vq_add_mask(s->a[1], vm_lo(mh), q0);
    s->b[1] = vq_add_mask(s->b[1], vm_hi(mh), q1);
    s->a[2] = vq_add_mask(s->a[2], vm_lo(ml), q0);
    s->b[2] = vq_add_mask(s->b[2], vm_hi(ml), q1);
    if (counts) {
        s->c1 += vm_count(mh);
        s->c2 += vm_count(ml);
    }
    const vm band = vm_andnot(ml, mh);
    if (fits) return vf_compress_store(x, band, base + (int32_t)i, ids, vals, c);
    return vm_any(band) ? vf_compress_emit(x, band, base + (int32_t)i, ids, vals, cap, c) : c;
}

/* mass_above's sums for two thresholds, the band's elements compressed
 * (ids and raw values; the caller takes their masses from w). */
AI size_t mass_band_impl(enum nextok_dtype dt, const void *row, size_t n, const float *w, float scale, float hi,
                         float lo, const float *gmax, float gth, uint64_t q[3], uint64_t cnt[3], int counts,
                         int32_t base, int32_t *ids, float *vals, size_t cap)
{
    const vf sc = vf_set1(scale);
    const vf th = vf_set1(hi), tl = vf_set1(lo);
    struct band_acc s = {.c1 = 0, .c2 = 0};
    for (int j = 0; j < 3; j++) s.a[j] = s.b[j] = vq_zero();
    size_t c = 0;
    for (size_t g = 0; g < n; g += NEXTOK__BMAX_IDS) {
        const size_t e = n - g < NEXTOK__BMAX_IDS ? n : g + NEXTOK__BMAX_IDS;
        if (gmax && !(gmax[g / NEXTOK__BMAX_IDS] >= gth)) {
            mass_total(w, g, e, sc, &s.a[0], &s.b[0]);
            continue;
        }
        /* the band's elements stored unconditionally where the group fits
         * (no branch per vector to mispredict), else emitted one by one;
         * whole groups with whole vectors */
        const bool fits = dense_fits(c, cap, e - g);
        if (e - g == NEXTOK__BMAX_IDS)
            for (size_t i = g; i < e; i += VL)
                c = band_v(dt, row, w, i, VL, sc, th, tl, &s, counts, fits, base, ids, vals, cap, c);
        else
            for (size_t i = g; i < e; i += VL)
                c = band_v(dt, row, w, i, e - i, sc, th, tl, &s, counts, fits, base, ids, vals, cap, c);
    }
    q[0] = vq_hsum(vq_add(s.a[0], s.b[0]));
    q[1] = vq_hsum(vq_add(s.a[1], s.b[1]));
    q[2] = vq_hsum(vq_add(s.a[2], s.b[2]));
    if (counts) cnt[0] = n, cnt[1] = s.c1, cnt[2] = s.c2;
    return c;
}

KERNEL size_t simd_mass_band(const void *row, enum nextok_dtype dt, size_t n, const float *w, float scale,
                             float hi, float lo, const float *gmax, float gth, uint64_t q[3], uint64_t cnt[3],
                             int32_t base, int32_t *ids, float *vals, size_t cap)
{
    if (cnt)
        return BY_DTYPE(mass_band_impl, dt, row, n, w, scale, hi, lo, gmax, gth, q, cnt, 1, base, ids, vals, cap);
    return BY_DTYPE(mass_band_impl, dt, row, n, w, scale, hi, lo, gmax, gth, q, cnt, 0, base, ids, vals, cap);
}

/* ---- the fused path's table ----------------------------------------------- */

/* Every fused step has one body for all widths, so the table is the body's;
 * an ISA file returns it (nextok__fused_kernels_avx2, _avx512). */
static const struct nextok__fused_kernels simd_fused_table = {
    .name = SIMD_NAME,
    .count_allowed = simd_count_allowed,
    .max_masked = simd_max_masked,
    .block_max_masked = simd_block_max_masked,
    .compact_masked = simd_compact_masked,
    .compact_blocks_masked = simd_compact_blocks_masked,
    .weights_masked = simd_weights_masked,
    .sum_sq = simd_sum_sq,
    .sum_sq_dbl = simd_sum_sq_dbl,
    .weights = simd_weights,
    .weights_ge = simd_weights_ge,
    .compact_range = simd_compact_range,
    .cut_weights = simd_cut_weights,
    .mass_above = simd_mass_above,
    .mass_band = simd_mass_band,
    .wvsum = simd_wvsum,
    .typscan = simd_typscan,
    .cut_keys = simd_cut_keys,
};
