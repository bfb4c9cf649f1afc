/*
 * Candidate collection: the threshold passes that stand in for sorting the
 * vocabulary. The first reducing stage (top-k, min-p, top-n-sigma, top-1)
 * needs a few candidates of a large row: a raw threshold tau chosen so the
 * set {x >= tau} provably holds every survivor (the k-th largest of the
 * 512-id blocks' maxima, or a sampled guess), one SIMD compaction of it,
 * then the stage's exact rule on that small set. The survivors are written
 * to the chain's work array in exactly the order the plain chain leaves
 * them (id order after a stable filter, sorted order after a sorting one),
 * so the stages after them see the very array the plain chain gives them.
 *
 * A temperature t > 0 before the stage is the monotone map P(x) = sat(x / t)
 * in float, exactly as temp.c computes it; any threshold on P maps back to
 * an exact raw threshold, the smallest float x with P(x) >= th (preimage).
 */
#include "internal.h"

/* ---- the temperature map P and its inverse ------------------------------- */

/* Smallest float x with P(x) >= th (-inf: every x; +inf: none). P is monotone
 * non-decreasing, so {x : P(x) >= th} is [preimage, +inf). */
float nextok__fz_preimage(float th, float t)
{
    if (isnan(th)) return INFINITY; /* no x has P(x) >= NaN */
    if (t == 1.0f || isinf(th)) return th;
    if (th <= -FLT_MAX) return -INFINITY;
    if (th > FLT_MAX) return INFINITY;
    double g = (double)th * (double)t;
    float x = g > FLT_MAX ? FLT_MAX : g < -FLT_MAX ? -FLT_MAX : (float)g;
    while (fz_P(x, t) < th) {
        if (x == FLT_MAX) return INFINITY;
        x = nextafterf(x, INFINITY);
    }
    for (;;) {
        if (x == -FLT_MAX) return -INFINITY;
        float y = nextafterf(x, -INFINITY);
        if (fz_P(y, t) < th) return x;
        x = y;
    }
}

/* Smallest float f with (double)f >= d. */
float nextok__fz_float_ceil(double d)
{
    if (d > FLT_MAX) return INFINITY;
    if (d < -FLT_MAX) return -FLT_MAX;
    float f = (float)d;
    if ((double)f < d) f = nextafterf(f, INFINITY);
    while (f > -FLT_MAX && (double)nextafterf(f, -INFINITY) >= d) f = nextafterf(f, -INFINITY);
    return f;
}

/* ---- candidate collection ---------------------------------------------------------- */

/* drop_touched for a few compacted ids (top-k's): one merge of both sorted
 * lists without a branch on the data (each step moves past the smaller id,
 * or both when equal, and keeps ids[i] only when it is the smaller), in
 * place. In a batch each galloping search's compares mispredict. */
static size_t drop_merge(int32_t *ids, float *vals, size_t n, const int32_t *touched, size_t nt)
{
    size_t i = 0, t = 0, o = 0;
    while (i < n && t < nt) {
        const int32_t a = ids[i], b = touched[t];
        const float v = vals[i];
        ids[o] = a;
        vals[o] = v;
        o += a < b;
        i += a <= b;
        t += b <= a;
    }
    for (; i < n; i++, o++) {
        ids[o] = ids[i];
        vals[o] = vals[i];
    }
    return o;
}

/* Drop the ids listed in touched[0..nt) (ascending; they come from the
 * overrides) from ids/vals[0..n) (ascending). Few ids: drop_merge. Many
 * (flat rows compact thousands of candidates): per touched id, a galloping
 * search in the compacted ids and one block move of the run before it,
 * O(nt log n) compares and no per-candidate branch or mask lookup. Returns
 * the new count. */
size_t nextok__fz_drop_touched(int32_t *ids, float *vals, size_t n, const int32_t *touched, size_t nt)
{
    if (n <= 4 * nt) return drop_merge(ids, vals, n, touched, nt);
    size_t j = 0, i = 0;
    for (size_t t = 0; t < nt && i < n; t++) {
        const int32_t id = touched[t];
        if (ids[n - 1] < id) break;
        size_t lo = i, step = 1;
        while (lo + step < n && ids[lo + step] < id) {
            lo += step;
            step *= 2;
        }
        size_t hi = lo + step < n ? lo + step : n; /* ids[hi] >= id or hi == n */
        if (ids[lo] >= id) hi = lo;
        else
            while (hi - lo > 1) {
                const size_t mid = lo + (hi - lo) / 2;
                if (ids[mid] < id) lo = mid;
                else hi = mid;
            }
        /* [i, hi) < id; hi == n or ids[hi] >= id */
        if (hi == n || ids[hi] != id) continue;
        if (j != i) {
            memmove(ids + j, ids + i, (hi - i) * sizeof *ids);
            memmove(vals + j, vals + i, (hi - i) * sizeof *vals);
        }
        j += hi - i;
        i = hi + 1;
    }
    if (j != i) {
        memmove(ids + j, ids + i, (n - i) * sizeof *ids);
        memmove(vals + j, vals + i, (n - i) * sizeof *vals);
    }
    return j + (n - i);
}

/* Compact raw >= tau, drop touched ids (they come from the overrides).
 * false: a non-finite value is in the row. */
bool nextok__fz_compact(struct nextok__fz_run *r, float tau)
{
    struct nextok__fused *f = r->f;
    int nf = 0;
    /* with the block maxima of this row, only the blocks that reach tau */
    size_t n;
    if (r->mask)
        n = r->nblk ? r->fk->compact_blocks_masked(r->row, r->dt, r->V, tau, f->blkmax, r->mask, f->cids,
                                                   f->cvals, r->V, &nf)
                    : r->fk->compact_masked(r->row, r->dt, r->V, tau, 0, r->mask, f->cids, f->cvals, r->V, &nf);
    else
        n = r->nblk ? r->k->compact_blocks(r->row, r->dt, r->V, tau, f->blkmax, f->cids, f->cvals, r->V, &nf)
                    : r->k->compact_ge(r->row, r->dt, r->V, tau, 0, f->cids, f->cvals, r->V, &nf);
    if (nf) return false;
    r->nc = nextok__fz_drop_touched(f->cids, f->cvals, n, f->ovr.touched, r->n_touched);
    r->tau = tau;
    return true;
}

/* The r-th largest (1-based) of n floats, r <= n (quickselect, in place). */
float nextok__fz_kth_largest(float *a, size_t n, size_t rank)
{
    size_t lo = 0, hi = n - 1, want = rank - 1;
    while (lo < hi) {
        float pv = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pv) i++;
            while (a[j] < pv) j--;
            if (i <= j) {
                float t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else break;
    }
    return a[want];
}

/*
 * A threshold with at least rank (1 <= rank <= n) of the n finite floats a
 * at or above it, at most 2^-12 of the keys' spread below the rank-th
 * largest (that value itself when the keys agree below those 12 bits): the
 * largest key K, built bit by bit from the highest bit in which the keys
 * differ, with at least rank keys >= K. Up to twelve counting passes over
 * the keys (key: scratch of n), vectorised by the compiler, cost no
 * mispredicted branch per element, where a quickselect's partition
 * mispredicts about every other compare; a slightly lower threshold only
 * keeps a few more candidates. The keys are fkey's with the top bit flipped,
 * as int32: signed compares and 32-bit counts are what SSE2 does in one
 * instruction each. Once exactly rank keys reach K, the passes stop: a
 * higher K keeps the same keys, so only elements below the rank-th largest
 * in their blocks could still be left out, and the caller's compaction
 * meets those few anyway.
 */
static float rank_threshold(const float *a, size_t n, size_t rank, int32_t *key)
{
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        key[i] = (int32_t)(fz_fkey(a[i]) ^ 0x80000000u);
        lo = key[i] < lo ? key[i] : lo;
        hi = key[i] > hi ? key[i] : hi;
    }
    const uint32_t ulo = (uint32_t)lo ^ 0x80000000u, uhi = (uint32_t)hi ^ 0x80000000u;
    uint32_t k = uhi; /* as fkey */
    int bit = -1;
    if (ulo != uhi) { /* the bits above the highest differing one are hi's */
        bit = 31 - __builtin_clz(ulo ^ uhi);
        k = bit == 31 ? 0 : uhi & ~((UINT32_C(2) << bit) - 1);
    }
    for (int stop = bit - 12; bit >= 0 && bit > stop; bit--) {
        const uint32_t t = k | UINT32_C(1) << bit;
        const int32_t st = (int32_t)(t ^ 0x80000000u);
        uint32_t c = 0;
        for (size_t i = 0; i < n; i++) c += key[i] >= st;
        if (c < rank) continue;
        k = t;
        if (c == rank) break;
    }
    const uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Ask for the lines guess_tau reads all at once: a row not in cache then
 * costs about one memory latency, not sixteen in a row. */
static void prefetch_sample(const void *row, enum nextok_dtype dt, size_t V)
{
    const size_t runs = NEXTOK__FZ_SAMPLE_N / 32, gap = V / runs, esz = nextok_dtype_size(dt);
    for (size_t b = 0; b < runs; b++)
        for (size_t o = 0; o < 32 * esz; o += 64) __builtin_prefetch((const char *)row + b * gap * esz + o);
}

/* The row's strided sample into f->sample (V > NEXTOK__FZ_SAMPLE_N): 16 runs of 32
 * contiguous elements spread over the row, a few cache lines each, so a row
 * that is not in cache costs 16 misses, not 512; widened by the SIMD kernel
 * (exact values: the same sample as element-wise nextok__row_get, without a
 * conversion call per element). */
float *nextok__fz_load_sample(const struct nextok__fz_run *r)
{
    const size_t runs = NEXTOK__FZ_SAMPLE_N / 32, gap = r->V / runs;
    prefetch_sample(r->row, r->dt, r->V);
    float *const sm = r->f->sample;
    for (size_t b = 0; b < runs; b++) {
        if (r->dt == NEXTOK_DTYPE_F32) memcpy(sm + 32 * b, (const float *)r->row + b * gap, 32 * sizeof *sm);
        else r->k->widen((const uint16_t *)r->row + b * gap, r->dt, 32, sm + 32 * b);
    }
    if (r->mask) /* a disallowed element is no candidate: NaN, which every reader skips */
        for (size_t b = 0; b < runs; b++)
            for (size_t j = 0; j < 32; j++) {
                const size_t id = b * gap + j;
                if (!((r->mask[id >> 5] >> (id & 31)) & 1u)) sm[32 * b + j] = NAN;
            }
    return sm;
}

/* A raw threshold expected to leave about 2 * need + 32 elements above it,
 * from a strided sample of the row (NaN skipped); -inf for small rows. */
static float guess_tau(struct nextok__fz_run *r, size_t need, unsigned widen)
{
    if (r->V <= NEXTOK__FZ_SAMPLE_N) return -INFINITY;
    /* the sample's NaNs are dropped below in order, without a branch */
    float *const sm = nextok__fz_load_sample(r);
    /* the rank sought among ns sampled values is per * ns + 1 */
    const double per = (double)(2 * need + 32) / (double)r->V * (double)(1u << widen);
    if (per * NEXTOK__FZ_SAMPLE_N < 1.0) {
        /* rank 1 (a few candidates of a large row, off the block route):
         * the largest non-NaN value, by the kernel; NaNs only lower the
         * count, so the rank stays 1 */
        int nf = 0;
        return r->k->max(sm, NEXTOK_DTYPE_F32, NEXTOK__FZ_SAMPLE_N, &nf);
    }
    size_t ns = 0;
    for (size_t i = 0; i < NEXTOK__FZ_SAMPLE_N; i++) {
        const float x = sm[i];
        sm[ns] = x;
        ns += !isnan(x);
    }
    double want = per * (double)ns + 1.0;
    if (ns == 0 || want >= (double)ns) return -INFINITY;
    const size_t rank = (size_t)want;
    if (rank <= 8) {
        /* a small rank (the usual case: top-k 40 of a large row): the rank
         * largest by one scan with a sorted top list, cheaper than a
         * quickselect over the whole sample; the same value */
        float top[8];
        size_t nt = 0;
        for (size_t i = 0; i < ns; i++) {
            const float x = r->f->sample[i];
            if (nt == rank && !(x > top[rank - 1])) continue;
            size_t p = nt < rank ? nt++ : rank - 1;
            while (p > 0 && top[p - 1] < x) {
                top[p] = top[p - 1];
                p--;
            }
            top[p] = x;
        }
        return top[rank - 1];
    }
    return nextok__fz_kth_largest(r->f->sample, ns, rank);
}

/*
 * The block route of collect_top, for a few candidates of a large row: the
 * maximum of every block of NEXTOK__BLK ids (one branch-free pass, which
 * also finds a non-finite row), then a tau with at least need block maxima
 * >= tau (rank_threshold: the need-th largest or a little below). Those
 * maxima are distinct elements, so the need-th largest element is >= tau
 * and {x >= tau} is a valid compacted set; it is read from the blocks whose
 * maximum reaches tau only (about need of them), and it holds about need
 * elements, not the hundreds a sampled guess keeps.
 * On a row the branch predictors have not seen, each of those costs a
 * mispredicted branch or two (nextok bench --rows). Returns 1 with the set
 * complete, 0 when touched ids among those maxima leave fewer than need
 * untouched (the caller goes on with a guess; the maxima stay, so its
 * compactions skip blocks), -1 to hand the row over (not finite).
 */
static int collect_by_blocks(struct nextok__fz_run *r, size_t need)
{
    struct nextok__fused *f = r->f;
    int nf = 0;
    const size_t nb = r->mask ? r->fk->block_max_masked(r->row, r->dt, r->V, r->mask, f->blkmax, &nf)
                              : r->k->block_max(r->row, r->dt, r->V, f->blkmax, &nf);
    if (nf) return -1;
    r->nblk = nb;
    if (!nextok__fz_compact(r, rank_threshold(f->blkmax, nb, need, f->cids))) return -1;
    return r->nc >= need;
}

/* Compacted set holding at least `need` untouched elements (or all of them):
 * every untouched element outside it is <= each of those in raw value. */
bool nextok__fz_collect_top(struct nextok__fz_run *r, size_t need)
{
    const size_t n_ov = r->f->ovr.n_ov; /* n_set - n_ov: the untouched candidates */
    if (need > 0 && !nextok__fz_n_set_gt(r, need - 1 + n_ov)) need = nextok__fz_n_set(r) - n_ov;
    /* a few candidates from many blocks (top-k 40 or a maximum of a
     * 128256-id row: 251 blocks) */
    if (need > 0 && r->V >= 8 * NEXTOK__BLK && need <= r->V / NEXTOK__BLK / 4) {
        const int got = collect_by_blocks(r, need);
        if (got != 0) return got > 0;
    }
    for (unsigned w = 0;; w += 3) {
        float tau = guess_tau(r, need, w);
        if (!nextok__fz_compact(r, tau)) return false;
        if (r->nc >= need || tau == -INFINITY) return true;
    }
}

/* Largest processed value over the compacted set and the overrides: P of
 * the largest pre-temperature value, as P is monotone (one division). */
float nextok__fz_processed_max(const struct nextok__fz_run *r)
{
    /* the compacted values are finite; the kernel's independent lanes, not
     * one chain of compares (a low threshold guess keeps a thousand) */
    int nf = 0;
    float m = r->nc ? r->k->max(r->f->cvals, NEXTOK_DTYPE_F32, r->nc, &nf) : -INFINITY;
    for (size_t i = 0; i < r->f->ovr.n_ov; i++) m = r->f->ovr.ov[i].logit > m ? r->f->ovr.ov[i].logit : m;
    return fz_P(m, r->t);
}

/* ---- building r->work ---------------------------------------------------------------- */

/* Candidates with processed value >= th (double compare) from the compacted
 * set and the overrides, merged in id order into r->work. Returns the count. */
size_t nextok__fz_emit_ge(struct nextok__fz_run *r, double th)
{
    const struct nextok__fused *f = r->f;
    struct nextok_token_data *w = r->work;
    /* for a float v: (double)v >= th iff v >= float_ceil(th). The compacted
     * set's survivors by the SIMD kernel (same P, same test), in id order */
    const float thf = nextok__fz_float_ceil(th);
    const size_t n = r->k->cands_ge(f->cids, f->cvals, r->nc, r->t, thf, w);
    size_t m = 0; /* the overrides' survivors, merged in from the back */
    for (size_t j = 0; j < f->ovr.n_ov; j++) m += fz_P(f->ovr.ov[j].logit, r->t) >= thf;
    size_t a = n, k = n + m;
    for (size_t j = f->ovr.n_ov; j-- > 0 && k > a;) {
        const float v = fz_P(f->ovr.ov[j].logit, r->t);
        if (!(v >= thf)) continue;
        while (a > 0 && w[a - 1].id > f->ovr.ov[j].id) w[--k] = w[--a];
        w[--k] = (struct nextok_token_data){f->ovr.ov[j].id, v, 0.0f};
    }
    return n + m;
}

static int cmp_sorted(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    if (a->logit != b->logit) return a->logit > b->logit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* a[0..n) in cmp_sorted's order (processed value descending, -0 equal to
 * +0, then id ascending). A few (top-k's 40): 64-bit keys (the value's
 * order key inverted, then the id) sorted by insertion with their indices,
 * then the records permuted; no comparator call per compare and no
 * 12-byte moves. More: nextok__sort. */
#define SORT_FEW 64
void nextok__fz_sort(struct nextok_token_data *a, size_t n)
{
    if (n > SORT_FEW) {
        nextok__sort(a, n, sizeof *a, cmp_sorted);
        return;
    }
    uint64_t k[SORT_FEW];
    uint8_t at[SORT_FEW];
    for (size_t i = 0; i < n; i++) {
        const uint64_t key = (uint64_t)~fz_vkey(a[i].logit) << 32 | (uint32_t)a[i].id;
        size_t j = i;
        for (; j > 0 && k[j - 1] > key; j--) {
            k[j] = k[j - 1];
            at[j] = at[j - 1];
        }
        k[j] = key;
        at[j] = (uint8_t)i;
    }
    struct nextok_token_data t[SORT_FEW];
    memcpy(t, a, n * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = t[at[i]];
}

/* emit_top's selection set in f->sel: the compacted values and the
 * overrides' logits (raw), those below r->tau left out when floored. */
static void sel_fill(const struct nextok__fz_run *r, bool floored)
{
    const struct nextok__fused *f = r->f;
    memcpy(f->sel, f->cvals, r->nc * sizeof *f->sel);
    size_t m = r->nc;
    for (size_t j = 0; j < f->ovr.n_ov; j++) {
        f->sel[m] = f->ovr.ov[j].logit;
        m += !floored || f->ovr.ov[j].logit >= r->tau;
    }
}

/*
 * r->work = the first `need` candidates (of the compacted set and the
 * overrides) in sorted order, followed by every candidate tied with the
 * need-th processed value, and possibly a few more; returns the count.
 * Exact: P is monotone, so the need-th largest processed value is L = P(the
 * need-th largest pre-temperature value) (quickselect on a copy), and
 * emit_ge keeps {P(x) >= L}; a candidate outside it comes after all of them
 * in sorted order, so the sorted prefix of the kept set is the sorted prefix
 * of the whole set, ties with L included. Only ~need candidates get written
 * and sorted.
 */
size_t nextok__fz_emit_top(struct nextok__fz_run *r, size_t need)
{
    const struct nextok__fused *f = r->f;
    /* With at least `need` compacted values (every one >= r->tau, raw), the
     * need-th largest candidate is >= r->tau too: an override below r->tau
     * is not among the top need, so it is left out of the selection, and
     * P(r->tau) is a floor for emit_ge. On flat rows the 64 penalised ids of
     * a history, which lie far below, then no longer more than double the
     * selected set (flat V 128256 top-k chain with penalties, one row, 9.64
     * -> 9.23 us/row, nine processes each). collect_top leaves at least
     * `need` compacted values; the test keeps this function exact without
     * it. */
    const bool floored = r->nc >= need;
    size_t m = r->nc;
    for (size_t j = 0; j < f->ovr.n_ov; j++) m += !floored || f->ovr.ov[j].logit >= r->tau;
    double th = floored ? (double)fz_P(r->tau, r->t) : -INFINITY; /* processed */
    if (need < m && m > 2 * need + 16) {
        sel_fill(r, floored);
        size_t ms = m;
        const size_t want = 2 * need + 16;
        if (m >= 8 * want && m / 4 <= NEXTOK__FZ_SAMPLE_N) {
            /* many candidates (flat rows): a quarter-sample's order statistic
             * expected to leave ~want above it; keep only those >= it (one
             * branch-free pass) and select among them. Exact when at least
             * `need` remain (the need-th largest is then >= the cut);
             * otherwise the whole set, as before. */
            const size_t ns = m / 4;
            for (size_t i = 0; i < ns; i++) f->sample[i] = f->sel[4 * i];
            const size_t rk = want / 4 > 0 ? want / 4 : 1;
            const float cut = nextok__fz_kth_largest(f->sample, ns, rk);
            size_t n2 = 0;
            for (size_t i = 0; i < m; i++) {
                const float x = f->sel[i];
                f->sel[n2] = x;
                n2 += x >= cut;
            }
            if (n2 >= need) ms = n2;
            else sel_fill(r, floored);
        }
        th = fz_P(nextok__fz_kth_largest(f->sel, ms, need), r->t);
    }
    const size_t n = nextok__fz_emit_ge(r, th);
    nextok__fz_sort(r->work, n);
    return n;
}

/* One LSD pass of 11 bits at `shift` from src into dst; false (nothing
 * moved) when every key has the same digit there. */
static bool radix_pass(const uint64_t *src, uint64_t *dst, size_t n, unsigned shift)
{
    size_t count[2048] = {0};
    for (size_t i = 0; i < n; i++) count[(src[i] >> shift) & 2047]++;
    if (count[(src[0] >> shift) & 2047] == n) return false;
    size_t off = 0;
    for (size_t b = 0; b < 2048; b++) {
        const size_t c = count[b];
        count[b] = off;
        off += c;
    }
    for (size_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 2047]++] = src[i];
    return true;
}

/*
 * nextok__fz_sort for many candidates (top-p's survivors when a stage
 * follows it: most of a flat row): 64-bit keys (the value's order key
 * inverted, then the index) sorted by an LSD radix sort of the value half,
 * 11 bits a pass, passes over a constant digit skipped, then the records
 * permuted through
 * the workspace's id, value and scratch arrays. The same order as the
 * comparison sort (index ascending is id ascending for an array in id
 * order, and a tie of values is broken by the index either way only when
 * the ids ascend: the caller's case), in linear time: flat V 128256 top-p
 * 0.9 followed by min-p sorted 78k candidates in about 17 ms by comparison.
 */
void nextok__fz_sort_many(struct nextok__fused *f, struct nextok_token_data *a, size_t n)
{
    if (n <= 4096 || !f->cq) {
        nextok__fz_sort(a, n);
        return;
    }
    if (!f->cq2) f->cq2 = nextok__alloc(&f->mem, ((size_t)f->n_vocab + NEXTOK__FZ_SLACK) * sizeof *f->cq2);
    if (!f->cq2) {
        nextok__fz_sort(a, n);
        return;
    }
    uint64_t *k = f->cq, *t = f->cq2;
    for (size_t i = 0; i < n; i++) {
        k[i] = (uint64_t)~fz_vkey(a[i].logit) << 32 | (uint32_t)i;
        f->cids[i] = a[i].id;
        f->cvals[i] = a[i].logit;
        f->sel[i] = a[i].p;
    }
    /* the index half needs no pass: the keys start in index order, and
     * every pass keeps the order of equal digits */
    for (unsigned shift = 32; shift < 64; shift += 11)
        if (radix_pass(k, t, n, shift)) {
            uint64_t *x = k;
            k = t;
            t = x;
        }
    for (size_t j = 0; j < n; j++) {
        const uint32_t i = (uint32_t)k[j];
        a[j] = (struct nextok_token_data){f->cids[i], f->cvals[i], f->sel[i]};
    }
}

void nextok__fz_set_out(struct nextok__fz_run *r, size_t n, bool sorted)
{
    if (sorted) nextok__fz_sort(r->work, n);
    r->out = (struct nextok_token_data_array){r->work, n, -1, sorted};
}

