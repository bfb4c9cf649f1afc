/*
 * Fused typical-p (docs/semantics.md: the order |v - c| with c = S / Z on the
 * canonical weights, top-p's integer masses): the cut found without sorting
 * the vocabulary.
 */
#include "internal.h"

/*
 * typical-p (docs/semantics.md): c = S / Z from the blocked sums (the SIMD
 * wvsum over the dense weights: S and Z both carry the exact factor 2^dN, so
 * the quotient is the chain's), score |v - c|, top-p's integer masses. The
 * typical order is score ascending, and scores are >= +0, so their bits
 * order as they do. A bracket [klo, khi] of score bits is guessed from a
 * sample (ty_bracket); one SIMD scan (typscan) gives the exact total mass,
 * the exact mass and count under the bracket and the bracket's candidates;
 * when the cut is outside, the bracket moves to the side that holds it and
 * the scan runs again. Inside, histograms of the key refine down to one
 * score, whose candidates are ordered by (larger v, lower id) exactly. The
 * cut is the triple (score, v, id) of the last kept candidate in typical
 * order: kept = lexicographically <= it.
 */

static inline uint32_t ty_bits(float s)
{
    uint32_t u;
    memcpy(&u, &s, sizeof u);
    return u;
}

/* Processed value of candidate id: its override when touched (ov is sorted
 * by id: a binary search), else the row's. */
static float ty_value(const struct nextok__fz_run *r, int32_t id)
{
    const struct nextok__fused *f = r->f;
    if (f->ovr.tmask[id]) {
        size_t lo = 0, hi = f->ovr.n_ov;
        while (hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            if (f->ovr.ov[mid].id <= id) lo = mid;
            else hi = mid;
        }
        return fz_P(f->ovr.ov[lo].logit, r->t);
    }
    return fz_P(nextok__row_get(r->row, r->dt, (size_t)id), r->t);
}

static bool ty_reserve(struct nextok__fused *f)
{
    if (!f->tys)
        f->tys = nextok__alloc_array(&f->mem, ((size_t)f->n_vocab + 63) / 64, sizeof *f->tys);
    return f->tys != NULL;
}

/* c = (float)(S / Z): S's block sums from the row by the SIMD kernel; the
 * blocks of touched ids again from their overrides (dist.w is already patched:
 * removed ids weigh 0, which adds nothing whatever v is). */
static float ty_center(const struct nextok__fz_run *r)
{
    struct nextok__fused *f = r->f;
    const size_t V = r->V, nb = (V + 63) / 64;
    r->fk->wvsum(r->row, r->dt, V, r->t, f->dist.w, f->tys);
    size_t last = nb; /* the last block redone, to skip repeats */
    for (size_t j = 0; j < r->n_touched; j++) {
        const size_t b = (size_t)f->ovr.touched[j] >> 6;
        if (b == last) continue;
        last = b;
        const size_t len = V - 64 * b < 64 ? V - 64 * b : 64;
        float v[64];
        for (size_t i = 0; i < len; i++)
            v[i] = f->dist.w[64 * b + i] == 0.0f ? 0.0f : ty_value(r, (int32_t)(64 * b + i));
        f->tys[b] = nextok__wvblock(f->dist.w + 64 * b, v, len);
    }
    double s = 0.0;
    for (size_t b = 0; b < nb; b++) s += f->tys[b];
    return (float)(s / f->dist.z);
}

/* From the bottom (most typical first): the first bucket b where the prefix
 * through it has mass >= target and at least kmin candidates; *below and
 * *n_below get the mass and count of the buckets under it. */
static unsigned ty_cross(const uint64_t *hq, const uint32_t *hn, unsigned nbins, uint64_t target,
                         size_t kmin, uint64_t *below, size_t *n_below)
{
    for (unsigned b = 0; b < nbins; b++) {
        if (*below + hq[b] >= target && *n_below + hn[b] >= kmin) return b;
        *below += hq[b];
        *n_below += hn[b];
    }
    return nbins - 1; /* not reached: the whole set satisfies both */
}

#define TY_HEAVY 8 /* heaviest blocks the bracket's sample takes whole */
#define TY_RUNS 32  /* blocks it takes at even strides                 */

/* Add block b's candidates to the sample histogram (hq[0], hn[0]), masses
 * (their high bits) times mul. Returns their sum. */
static uint64_t ty_sample_block(const struct nextok__fz_run *r, size_t b, float center, float scale, uint64_t mul)
{
    /* the arrays in locals: the histograms' stores would make the compiler
     * load every pointer from f again on each element */
    const struct nextok__fused *f = r->f;
    const uint8_t *tmask = f->ovr.tmask;
    const float *w = f->dist.w;
    uint64_t *hq = f->hq[0];
    uint32_t *hn = f->hn[0];
    const void *row = r->row;
    const enum nextok_dtype dt = r->dt;
    const float t = r->t;
    uint64_t tot = 0;
    const size_t e = 64 * b + 64 < r->V ? 64 * b + 64 : r->V;
    for (size_t i = 64 * b; i < e; i++) {
        if (tmask[i]) continue;
        const uint32_t k = ty_bits(fabsf(fz_P(nextok__row_get(row, dt, i), t) - center)) >> 20;
        /* q < 2^62 / n, mul <= n / 64, 2560 of them: >> 8 keeps the sum
         * below 2^62 (a bracket needs no low bits) */
        const uint64_t q = (nextok__mass_q(w[i], scale) >> 8) * mul;
        hq[k] += q;
        hn[k]++;
        tot += q;
    }
    return tot;
}

/*
 * A bracket [*klo, *khi] of score bits expected to hold the cut: the level-0
 * bucket (bits 30..20) where a sample's mass crosses p (and its share of
 * min_keep), widened by a bucket each way. The sample: the TY_HEAVY blocks
 * of largest weight sum (exactly: a peaked row's few heavy tokens decide the
 * cut and a strided sample misses them) and TY_RUNS blocks at even strides
 * standing for the rest (masses times the ratio of the block counts, in
 * integers). Only speed depends on it: fuse_typical moves a bracket that
 * misses. Small rows: everything.
 */
static void ty_bracket(const struct nextok__fz_run *r, float center, float scale, float p, size_t kmin,
                       uint32_t *klo, uint32_t *khi)
{
    struct nextok__fused *f = r->f;
    *klo = 0;
    *khi = UINT32_MAX;
    if (r->V <= 8192) return;
    memset(f->hq[0], 0, sizeof f->hq[0]);
    memset(f->hn[0], 0, sizeof f->hn[0]);
    const size_t nb = (r->V + 63) / 64;
    size_t heavy[TY_HEAVY], nh = 0; /* block ids, by weight sum descending */
    for (size_t b = 0; b < nb; b++) {
        if (nh == TY_HEAVY && !(f->dist.bsum[b] > f->dist.bsum[heavy[nh - 1]])) continue;
        size_t j = nh < TY_HEAVY ? nh++ : nh - 1;
        for (; j > 0 && f->dist.bsum[heavy[j - 1]] < f->dist.bsum[b]; j--) heavy[j] = heavy[j - 1];
        heavy[j] = b;
    }
    /* the strided blocks stand for nb - nh blocks: mass times (nb - nh),
     * the heavy ones times TY_RUNS */
    uint64_t tot = 0;
    for (size_t j = 0; j < nh; j++) tot += ty_sample_block(r, heavy[j], center, scale, TY_RUNS);
    for (size_t k = 0; k < TY_RUNS; k++) {
        const size_t b = k * nb / TY_RUNS;
        bool is_heavy = false;
        for (size_t j = 0; j < nh; j++) is_heavy |= heavy[j] == b;
        if (!is_heavy) tot += ty_sample_block(r, b, center, scale, nb - nh);
    }
    if (tot == 0) return;
    uint64_t below = 0;
    size_t n_below = 0;
    const size_t ns = 64 * (TY_RUNS + nh);
    const size_t ks = kmin ? (size_t)((double)kmin * (double)ns / (double)r->n_set) : 0;
    const unsigned B = ty_cross(f->hq[0], f->hn[0], NEXTOK__FZ_HBINS, nextok__mass_target(p, tot), ks, &below, &n_below);
    *klo = B > 0 ? (uint32_t)(B - 1) << 20 : 0;
    *khi = B + 2 < NEXTOK__FZ_HBINS ? ((uint32_t)(B + 2) << 20) - 1 : UINT32_MAX;
}

/* One SIMD scan (kernels' typscan): every score into f->sel, the total mass
 * and the mass and count under the bracket, its candidates (ids ascending
 * from the row, overrides appended) in cids/cvals (their masses come with
 * the first refinement level, ty_hist from the weights). The
 * touched ids trade the row's terms for their overrides' (dist.w is patched, so
 * the masses are already theirs). Returns the bracket's count. */
static size_t ty_scan(struct nextok__fz_run *r, struct nextok__typscan *ts)
{
    struct nextok__fused *f = r->f;
    size_t m = r->fk->typscan(r->row, r->dt, r->V, r->t, f->dist.w, ts, f->sel, f->cids, f->cvals);
    for (size_t j = 0; j < r->n_touched; j++) {
        const int32_t id = f->ovr.touched[j];
        const uint32_t k = ty_bits(f->sel[id]);
        const uint64_t q = nextok__mass_q(f->dist.w[id], ts->scale);
        ts->q_total -= q;
        if (k < ts->klo) ts->q_below -= q, ts->n_below--;
    }
    m = nextok__fz_drop_touched(f->cids, f->cvals, m, f->ovr.touched, r->n_touched); /* the row's touched entries */
    for (size_t j = 0; j < f->ovr.n_ov; j++) {
        const int32_t id = f->ovr.ov[j].id;
        const float sc = fabsf(fz_P(f->ovr.ov[j].logit, r->t) - ts->center);
        const uint64_t q = nextok__mass_q(f->dist.w[id], ts->scale);
        f->sel[id] = sc;
        ts->q_total += q;
        if (ty_bits(sc) < ts->klo) {
            ts->q_below += q;
            ts->n_below++;
        } else if (ty_bits(sc) <= ts->khi) {
            f->cids[m] = id;
            f->cvals[m++] = sc;
        }
    }
    return m;
}

/* The candidates (cvals, cids) and their masses: cq (a refinement level
 * after the first), or from the weights (the first level: the scan wrote
 * none, and most of its candidates never need theirs again). The arrays are
 * read into locals once per pass (see ty_sample_block). */
struct ty_src {
    const float *vals, *w;
    const int32_t *ids;
    const uint64_t *cq;
};

static inline struct ty_src ty_src_of(const struct nextok__fused *f)
{
    return (struct ty_src){f->cvals, f->dist.w, f->cids, f->cq};
}

static inline uint64_t ty_q_at(const struct ty_src *s, size_t i, float scale, bool from_w)
{
    return from_w ? nextok__mass_q(s->w[s->ids[i]], scale) : s->cq[i];
}

/* Histogram of the set by sub-bucket (key - b0) >> shift (< nb <= NEXTOK__FZ_HBINS):
 * masses into hq[0], counts into hn[0], two interleaved copies so that a
 * run of equal buckets does not wait on its own stores. Returns the set's
 * total mass. */
static inline uint64_t ty_hist(struct nextok__fused *f, size_t n, uint32_t b0, unsigned shift, unsigned nb,
                               float scale, bool from_w)
{
    uint64_t *hq = f->hq[0], *hq1 = f->hq[1];
    uint32_t *hn = f->hn[0], *hn1 = f->hn[1];
    memset(hq, 0, nb * sizeof *hq);
    memset(hn, 0, nb * sizeof *hn);
    memset(hq1, 0, nb * sizeof *hq1);
    memset(hn1, 0, nb * sizeof *hn1);
    const struct ty_src src = ty_src_of(f);
    uint64_t tot = 0;
    size_t i = 0;
    for (; i + 2 <= n; i += 2) {
        const uint32_t k0 = (ty_bits(src.vals[i]) - b0) >> shift, k1 = (ty_bits(src.vals[i + 1]) - b0) >> shift;
        const uint64_t q0 = ty_q_at(&src, i, scale, from_w), q1 = ty_q_at(&src, i + 1, scale, from_w);
        hq[k0] += q0;
        hn[k0]++;
        hq1[k1] += q1;
        hn1[k1]++;
        tot += q0 + q1;
    }
    for (; i < n; i++) {
        const uint32_t k = (ty_bits(src.vals[i]) - b0) >> shift;
        const uint64_t q = ty_q_at(&src, i, scale, from_w);
        hq[k] += q;
        hn[k]++;
        tot += q;
    }
    for (unsigned k = 0; k < nb; k++) {
        hq[k] += hq1[k];
        hn[k] += hn1[k];
    }
    return tot;
}

/* Keep only sub-bucket B of the set (in place, order kept, masses into cq);
 * *base becomes its first key. Returns the count. A branch: one bucket of up
 * to NEXTOK__FZ_HBINS keeps few, so it predicts well (the branch-free copy chains every
 * store on the previous compare). */
static inline size_t ty_keep_bucket(struct nextok__fused *f, size_t n, uint32_t *base, unsigned shift,
                                    unsigned B, float scale, bool from_w)
{
    const uint32_t b0 = *base;
    int32_t *ids = f->cids;
    float *vals = f->cvals;
    uint64_t *cq = f->cq;
    const float *w = f->dist.w;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if ((ty_bits(vals[i]) - b0) >> shift != B) continue;
        const uint64_t q = from_w ? nextok__mass_q(w[ids[i]], scale) : cq[i];
        ids[j] = ids[i];
        vals[j] = vals[i];
        cq[j++] = q;
    }
    *base = b0 + ((uint32_t)B << shift);
    return j;
}

/* Keep only the crossing sub-bucket (key - base) >> shift (< nb <= NEXTOK__FZ_HBINS)
 * of the set (masses in cq). Returns the count; *base becomes the
 * sub-bucket's first key. */
static size_t ty_refine(struct nextok__fused *f, size_t n, uint32_t *base, unsigned shift, unsigned nb,
                        uint64_t target, size_t kmin, uint64_t *below, size_t *n_below)
{
    (void)ty_hist(f, n, *base, shift, nb, 0.0f, false);
    const unsigned B = ty_cross(f->hq[0], f->hn[0], nb, target, kmin, below, n_below);
    return ty_keep_bucket(f, n, base, shift, B, 0.0f, false);
}

/* The shift of a refinement level over keys [base, base + span]: the
 * smallest with at most NEXTOK__FZ_HBINS sub-buckets. */
static unsigned ty_shift(uint32_t span)
{
    unsigned shift = 0;
    while ((span >> shift) >= NEXTOK__FZ_HBINS) shift++;
    return shift;
}

/* Survivors in id order into r->work, unsorted (typical keeps its input
 * order, which is id order here). */
static void ty_emit(struct nextok__fz_run *r, float center, float ls, float lv,
                    int32_t lid)
{
    const struct nextok__fz_kept k = {.typical = true, .center = center, .ls = ls, .lv = lv, .id = lid};
    r->out = (struct nextok_token_data_array){r->work, nextok__fz_emit_kept(r, &k, false), -1, false};
}

/* dist right after the cut: the dense weights with every non-survivor at 0,
 * their block sums and the canonical walk, as tp_dense_draw. f->sel holds
 * every candidate's score (ty_scan; removed ids weigh 0 already), so one
 * pass keeps score < ls; the kept ones of score ls, work[0 .. nt-1] (their
 * weights saved in .p), are put back and their blocks summed again. */
static void ty_dense_draw(struct nextok__fz_run *r, size_t nt, float center,
                          float ls, float lv, int32_t lid, uint64_t seed)
{
    struct nextok__fused *f = r->f;
    const size_t V = r->V, nb = (V + 63) / 64;
    const uint32_t kls = ty_bits(ls);
    for (size_t k = 0; k < nt; k++) r->work[k].p = f->dist.w[r->work[k].id];
    r->fk->cut_keys(f->dist.w, f->sel, V, kls, f->dist.bsum);
    for (size_t k = 0; k < nt; k++) {
        f->dist.w[r->work[k].id] = r->work[k].p;
        f->tys[(size_t)r->work[k].id >> 6] = -1.0; /* tys is free after ty_center: dirty marks */
    }
    for (size_t b = 0; b < nb && nt > 0; b++)
        if (f->tys[b] == -1.0) {
            f->dist.bsum[b] = nextok__wblock(f->dist.w + 64 * b, V - 64 * b < 64 ? V - 64 * b : 64);
            f->tys[b] = 0.0;
        }
    f->dist.z = nextok__wset_cum(f->dist.bsum, 0, nb, f->dist.cum);
    f->dist.rule = NEXTOK__DIST_TYPICAL;
    f->dist.typ_c = center;
    f->dist.typ_s = ls;
    f->dist.cut_v = lv;
    f->dist.cut_id = lid;
    nextok__fz_dense_draw(r, seed);
}

/* typical as the first filter (min_keep < n_set, p < 1); `dist_seed`
 * non-NULL: dist follows and ends the chain (drawn densely). */
static bool typical(struct nextok__fz_run *r, const struct nextok__p_typical *q,
                         const uint64_t *dist_seed, bool *drawn)
{
    struct nextok__fused *f = r->f;
    *drawn = false;
    if (!nextok__fz_mass_reserve(f) || !ty_reserve(f) || !nextok__fz_dense_prepare(r, true, false)) return false;
    const float center = ty_center(r);
    /* masses of the canonical weights: dist.w is them times 2^N */
    const float scale = ldexpf(1.0f, (int)nextok__mass_shift(r->n_set) - (int)f->dist.N);
    const size_t kmin = q->min_keep > 1 ? q->min_keep : 0; /* 1: implied by the mass */
    struct nextok__typscan ts = {center, scale, 0, 0, 0, 0, 0};
    ty_bracket(r, center, scale, q->p, kmin, &ts.klo, &ts.khi);
    size_t n;
    uint64_t target;
    unsigned shift;
    /* A miss moves the bracket to the side known to hold the cut, so the
     * third scan at the latest holds it: the whole key range is [0, klo)
     * or (khi, max] of the first bracket. A move that would leave no key
     * (the sums disagree with themselves, which exact integers cannot) hands
     * the row back rather than loop. */
    for (int scans = 0;; scans++) {
        if (scans == 3) return false;
        ts.q_total = ts.q_below = 0;
        ts.n_below = 0;
        n = ty_scan(r, &ts);
        target = nextok__mass_target(q->p, ts.q_total);
        /* the first level's histogram, which also gives the bracket's mass */
        shift = ty_shift(ts.khi - ts.klo);
        const uint64_t qin = ty_hist(f, n, ts.klo, shift, ((ts.khi - ts.klo) >> shift) + 1, scale, true);
        if (ts.q_below >= target && ts.n_below >= kmin) { /* the cut is under the bracket */
            if (ts.klo == 0) return false;
            ts.khi = ts.klo - 1;
            ts.klo = 0;
        } else if (ts.q_below + qin < target || ts.n_below + n < kmin) { /* over it */
            if (ts.khi == UINT32_MAX) return false;
            ts.klo = ts.khi + 1;
            ts.khi = UINT32_MAX;
        } else {
            break;
        }
    }
    uint64_t below = ts.q_below;
    size_t n_below = ts.n_below;
    /* refine the bracket's keys [klo, khi] 11 bits at a time down to one key;
     * the first level's histogram is there already */
    uint32_t base = ts.klo, span;
    const unsigned B = ty_cross(f->hq[0], f->hn[0], ((ts.khi - ts.klo) >> shift) + 1, target, kmin, &below,
                                &n_below);
    n = ty_keep_bucket(f, n, &base, shift, B, scale, true);
    while (shift > 0) {
        span = (1u << shift) - 1;
        shift = ty_shift(span);
        n = ty_refine(f, n, &base, shift, (span >> shift) + 1, target, kmin, &below, &n_below);
    }
    /* one score left: its candidates in (larger v, lower id) order */
    const float ls = f->cvals[0];
    for (size_t j = 0; j < n; j++)
        r->work[j] = (struct nextok_token_data){f->cids[j], ty_value(r, f->cids[j]), 0.0f};
    nextok__fz_sort(r->work, n);
    size_t j = 0;
    for (;; j++) {
        below += nextok__mass_q(f->dist.w[r->work[j].id], scale);
        if ((below >= target && n_below + j + 1 >= kmin) || j + 1 == n) break;
    }
    const float lv = r->work[j].logit;
    const int32_t lid = r->work[j].id;
    if (!dist_seed) {
        ty_emit(r, center, ls, lv, lid);
        return true;
    }
    ty_dense_draw(r, j + 1, center, ls, lv, lid, *dist_seed);
    *drawn = true;
    return true;
}

size_t nextok__fz_route_typical(struct nextok__fz_run *r, size_t i)
{
    const struct nextok__p_typical *q = r->stages[i]->ctx;
    const size_t n_set = nextok__fz_n_set(r); /* the masses use the count */
    if (n_set <= 1 || q->min_keep >= n_set) return NEXTOK__FZ_NEXT; /* keeps everything */
    const struct nextok__fz_step *st = &r->f->plan.steps[i];
    /* a dense draw right after the cut only: with a temperature between,
     * the survivors' weights would need a second weights pass at it, and
     * the chain's tail (the temperature and dist on the survivors) runs */
    const bool dense = st->draw_after && st->draw_t == 1.0f;
    bool drawn = false;
    if (!typical(r, q, dense ? &st->draw_seed : NULL, &drawn)) return NEXTOK__FZ_HANDBACK;
    return drawn ? r->n_stages : i + 1;
}
