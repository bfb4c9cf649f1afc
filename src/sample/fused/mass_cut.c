/*
 * top-p's exact-mass cut (docs/semantics.md: integer masses q = floor(w
 * 2^s), exact in any order) once an interval of values is known to hold
 * the crossing: its candidates are gathered (one range compaction of the
 * 256-id groups that reach it), narrowed, then refined by histograms over
 * their own keys down to the one value L where the mass from the top
 * crosses the target; the candidates of L in id order complete the walk.
 * Also what top-p and typical-p share: the histograms' buffers and the
 * pass that writes a cut's survivors in id order (emit_kept).
 */
#include "internal.h"

bool nextok__fz_mass_reserve(struct nextok__fused *f)
{
    if (!nextok__fz_dense_reserve(f)) return false;
    const struct nextok__mem *m = &f->mem;
    if (!f->cq)
        f->cq = nextok__alloc_array(m, (size_t)f->n_vocab + NEXTOK__FZ_SLACK, sizeof *f->cq);
    if (!f->hq) f->hq = nextok__alloc_array(m, 2, sizeof *f->hq); /* typical interleaves two */
    if (!f->tpw) /* tp_window keeps it zero */
        f->tpw = nextok__calloc(m, 2 * NEXTOK__FZ_HBINS, sizeof *f->tpw);
    if (!f->hn) f->hn = nextok__alloc_array(m, 2, sizeof *f->hn);
    return f->cq && f->hq && f->hn && f->tpw;
}

/* The crossing bucket: from the top, the first bucket b with above + hq[b] >=
 * target; *above and *n_above get the mass and count of the buckets over it. */
static unsigned tp_cross(const uint64_t *hq, const uint32_t *hn, unsigned nbins, uint64_t target,
                         uint64_t *above, size_t *n_above)
{
    for (unsigned b = nbins; b-- > 0;) {
        if (*above + hq[b] >= target) return b;
        *above += hq[b];
        *n_above += hn[b];
    }
    return 0; /* not reached: the total mass is >= target */
}

/* Largest raw value whose processed value is < v (v > -inf). */
static float tp_raw_below(float v, float t)
{
    const float p = nextok__fz_preimage(v, t); /* smallest raw with P(raw) >= v */
    return nextafterf(p, -INFINITY);
}

size_t nextok__fz_gather(struct nextok__fz_run *r, float vlo, float vhi, float scale)
{
    struct nextok__fused *f = r->f;
    const float rlo = nextok__fz_preimage(vlo, r->t), rhi = vhi == INFINITY ? INFINITY : tp_raw_below(vhi, r->t);
    /* only the groups that reach vlo: on peaked rows the crossing is among
     * a few high values, held by a few groups */
    const size_t esz = nextok_dtype_size(r->dt);
    size_t nc = 0, g = 0, lo, hi;
    while (nextok__fz_active_run(r, vlo, &g, &lo, &hi))
        nc += r->fk->compact_range((const char *)r->row + lo * esz, r->dt, hi - lo, rlo, rhi, (int32_t)lo,
                                  f->cids + nc, f->cvals + nc, r->V - nc);
    return nextok__fz_take_interval(r, nc, vlo, vhi, scale);
}

/* The overrides with processed values in [vlo, vhi) merged, in id order
 * from the back, into the n gathered candidates (cids, cvals, cq). Returns
 * the count. */
static size_t tp_merge_overrides(struct nextok__fz_run *r, size_t n, float vlo, float vhi, float scale)
{
    struct nextok__fused *f = r->f;
    size_t extra = 0;
    for (size_t j = 0; j < f->ovr.n_ov; j++) {
        const float x = fz_P(f->ovr.ov[j].logit, r->t);
        extra += x >= vlo && x < vhi;
    }
    const size_t total = n + extra;
    size_t i = n, k = total;
    for (size_t j = f->ovr.n_ov; j-- > 0 && extra > 0;) {
        const float x = fz_P(f->ovr.ov[j].logit, r->t);
        if (!(x >= vlo && x < vhi)) continue;
        for (; i > 0 && f->cids[i - 1] > f->ovr.ov[j].id; k--, i--) {
            f->cids[k - 1] = f->cids[i - 1];
            f->cvals[k - 1] = f->cvals[i - 1];
            f->cq[k - 1] = f->cq[i - 1];
        }
        k--;
        f->cids[k] = f->ovr.ov[j].id;
        f->cvals[k] = x;
        f->cq[k] = nextok__mass_q(nextok__expw(x, &f->dist.ref), scale);
        extra--;
    }
    return total;
}

/* The n compacted candidates of [vlo, vhi) (cids, raw cvals) as the
 * refinement takes them: touched ids dropped, processed values, masses
 * (independent iterations), the overrides in the interval merged. Returns
 * the count. */
size_t nextok__fz_take_interval(struct nextok__fz_run *r, size_t n, float vlo, float vhi, float scale)
{
    struct nextok__fused *f = r->f;
    n = nextok__fz_drop_touched(f->cids, f->cvals, n, f->ovr.touched, r->n_touched);
    for (size_t i = 0; i < n; i++) {
        f->cvals[i] = fz_P(f->cvals[i], r->t);
        f->cq[i] = nextok__mass_q(f->dist.w[f->cids[i]], scale);
    }
    return tp_merge_overrides(r, n, vlo, vhi, scale);
}

/* Refine the gathered candidates by bucket (key - *base) >> shift, nb <=
 * NEXTOK__FZ_HBINS of them (every key is below *base + (nb << shift)): keep only the
 * crossing bucket's candidates (in place, order kept) and move *base to
 * that bucket's first key. Returns the count. */
static size_t tp_refine(struct nextok__fused *f, size_t n, uint32_t *base, unsigned shift,
                        unsigned nb, uint64_t target, uint64_t *above, size_t *n_above)
{
    uint64_t *hq = f->hq[0];
    uint32_t *hn = f->hn[0];
    const uint32_t b0 = *base;
    memset(hq, 0, nb * sizeof *hq);
    memset(hn, 0, nb * sizeof *hn);
    for (size_t i = 0; i < n; i++) {
        const uint32_t k = (fz_vkey(f->cvals[i]) - b0) >> shift;
        hq[k] += f->cq[i];
        hn[k]++;
    }
    const unsigned B = tp_cross(hq, hn, nb, target, above, n_above);
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if ((fz_vkey(f->cvals[i]) - b0) >> shift != B) continue;
        f->cids[j] = f->cids[i];
        f->cvals[j] = f->cvals[i];
        f->cq[j++] = f->cq[i];
    }
    *base = b0 + ((uint32_t)B << shift);
    return j;
}

#define TP_SMALL 32 /* candidates few enough to order directly */

/* tp_refine_all's end for n <= TP_SMALL candidates: their keys ordered
 * (insertion), the walk by value from the top to L, then L's candidates
 * kept in place (id order). */
static size_t tp_refine_small(struct nextok__fused *f, size_t n, uint64_t target, uint64_t *above,
                              size_t *n_above)
{
    uint64_t ord[TP_SMALL]; /* key << 32 | index, descending */
    for (size_t i = 0; i < n; i++) {
        const uint64_t o = (uint64_t)fz_vkey(f->cvals[i]) << 32 | i;
        size_t j = i;
        for (; j > 0 && ord[j - 1] < o; j--) ord[j] = ord[j - 1];
        ord[j] = o;
    }
    uint32_t lk = (uint32_t)(ord[n - 1] >> 32); /* not reached: the mass reaches the target */
    for (size_t i = 0; i < n;) {
        const uint32_t k = (uint32_t)(ord[i] >> 32);
        uint64_t m = 0;
        size_t e = i;
        for (; e < n && (uint32_t)(ord[e] >> 32) == k; e++) m += f->cq[(uint32_t)ord[e]];
        if (*above + m >= target) {
            lk = k;
            break;
        }
        *above += m;
        *n_above += e - i;
        i = e;
    }
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (fz_vkey(f->cvals[i]) != lk) continue;
        f->cids[j] = f->cids[i];
        f->cvals[j] = f->cvals[i];
        f->cq[j++] = f->cq[i];
    }
    return j;
}

/* Refine the gathered candidates (n >= 1) down to the one value L where the
 * mass from the top crosses target: buckets over the keys' own range, about
 * one per four candidates (at most 11 key bits a level), until few enough
 * are left to order directly. */
static size_t tp_refine_all(struct nextok__fused *f, size_t n, uint64_t target, uint64_t *above,
                            size_t *n_above)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t k = fz_vkey(f->cvals[i]);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    unsigned bits = 0; /* bit length of the keys' range */
    while (bits < 32 && ((hi - lo) >> bits) != 0) bits++;
    uint32_t span = hi - lo; /* the keys lie in [lo, lo + span] */
    for (;;) {
        if (n <= TP_SMALL) return tp_refine_small(f, n, target, above, n_above);
        unsigned b = 4; /* bits of this level: 2^b buckets, about n / 4 */
        while (b < 11 && ((size_t)1 << (b + 2)) < n) b++;
        const unsigned shift = bits > b ? bits - b : 0;
        n = tp_refine(f, n, &lo, shift, (span >> shift) + 1, target, above, n_above);
        if (shift == 0) return n;
        span = ((uint32_t)1 << shift) - 1;
        bits = shift;
    }
}

/* Whether the cut keeps candidate id of processed value x. */
static inline bool kept(const struct nextok__fz_kept *k, float x, int32_t id)
{
    return k->typical ? fz_typ_keep(x, id, k->center, k->ls, k->lv, k->id) : fz_cut_keep(x, id, k->L, k->id);
}

/* The kept candidates of ids [lo, hi) (lo a multiple of 64) appended at n:
 * 64 values at a time; the cut's kind is the same for every value, so its
 * branch always predicts. *o: the first override not yet passed. */
static size_t emit_range(struct nextok__fz_run *r, const struct nextok__fz_kept *k, size_t lo, size_t hi,
                         size_t *o, size_t n)
{
    const struct nextok__fz_ov *ov = &r->f->ovr;
    float vb[64];
    for (size_t b = lo; b < hi; b += 64) {
        const size_t len = hi - b < 64 ? hi - b : 64;
        const float *v = fz_vals(r, b, len, vb);
        for (size_t i = 0; i < len; i++) {
            const int32_t id = (int32_t)(b + i);
            float x = v[i];
            if (ov->tmask[id]) {
                while (*o < ov->n_ov && ov->ov[*o].id < id) ++*o;
                if (*o == ov->n_ov || ov->ov[*o].id != id) continue;
                x = fz_P(ov->ov[*o].logit, r->t);
            }
            if (kept(k, x, id)) r->work[n++] = (struct nextok_token_data){id, x, 0.0f};
        }
    }
    return n;
}

/* The overrides of ids in [lo, hi) that the cut keeps, appended at n (in
 * the groups the row's maxima rule out, only an override can survive; those
 * below lo were emitted with their range). */
static size_t emit_overrides(struct nextok__fz_run *r, const struct nextok__fz_kept *k, size_t lo,
                             size_t hi, size_t *o, size_t n)
{
    const struct nextok__fz_ov *ov = &r->f->ovr;
    while (*o < ov->n_ov && (size_t)ov->ov[*o].id < lo) ++*o;
    for (; *o < ov->n_ov && (size_t)ov->ov[*o].id < hi; ++*o) {
        const float x = fz_P(ov->ov[*o].logit, r->t);
        if (kept(k, x, ov->ov[*o].id)) r->work[n++] = (struct nextok_token_data){ov->ov[*o].id, x, 0.0f};
    }
    return n;
}

/* The candidates (row values and overrides, processed, in id order) that
 * the cut keeps, into r->work; returns the count. A top-p cut after
 * dense_prepare with group maxima (by_groups) reads only the 256-id groups
 * whose maximum reaches L: on peaked rows, a few. */
size_t nextok__fz_emit_kept(struct nextok__fz_run *r, const struct nextok__fz_kept *k, bool by_groups)
{
    size_t o = 0;
    if (!by_groups) return emit_range(r, k, 0, r->V, &o, 0);
    size_t n = 0, g = 0, lo, hi, done = 0;
    while (nextok__fz_active_run(r, k->L, &g, &lo, &hi)) {
        n = emit_overrides(r, k, done, lo, &o, n);
        n = emit_range(r, k, lo, hi, &o, n);
        done = hi;
    }
    return emit_overrides(r, k, done, r->V, &o, n);
}

#define TP_NARROW_MIN 256 /* fewer gathered candidates: straight to the buckets */

/*
 * One interpolation step before the buckets: the crossing's place in the
 * gathered interval [lo, hi) (mass: its candidates' masses), taken as if
 * that mass were spread evenly over the values, and a window of 6 % of the
 * range around it. One branch-free pass sums the masses above the window and copies the window's
 * candidates behind the list (which stays whole); when the crossing is
 * inside, the window becomes the list (a few % of it, with above / n_above
 * moved past what lies over it), else the list is kept. Only speed depends
 * on the guess.
 */
static size_t tp_narrow(struct nextok__fused *f, size_t n, const struct nextok__fz_interval *iv,
                        uint64_t target, uint64_t *above, size_t *n_above)
{
    const float lo = iv->lo, hi = iv->hi;
    const uint64_t mass = iv->mass;
    if (n < TP_NARROW_MIN || n > (size_t)f->n_vocab / 2) return n; /* the copies need room behind */
    if (!(hi > lo && lo > -INFINITY && hi < INFINITY) || mass == 0 || target <= *above) return n;
    const double phi = (double)(target - *above) / (double)mass; /* in (0, 1] */
    const double at = (double)hi - phi * ((double)hi - (double)lo), half = 0.03 * ((double)hi - (double)lo);
    const float whi = (float)(at + half), wlo = (float)(at - half);
    uint64_t m_over = 0, m_in = 0;
    size_t c_over = 0, m = n;
    for (size_t i = 0; i < n; i++) {
        const float v = f->cvals[i];
        const uint64_t q = f->cq[i];
        const bool over = v >= whi, in = !over && v >= wlo;
        m_over += over ? q : 0;
        c_over += over;
        m_in += in ? q : 0;
        f->cids[m] = f->cids[i];
        f->cvals[m] = v;
        f->cq[m] = q;
        m += in;
    }
    if (!(*above + m_over < target && *above + m_over + m_in >= target)) return n;
    memmove(f->cids, f->cids + n, (m - n) * sizeof *f->cids);
    memmove(f->cvals, f->cvals + n, (m - n) * sizeof *f->cvals);
    memmove(f->cq, f->cq + n, (m - n) * sizeof *f->cq);
    *above += m_over;
    *n_above += c_over;
    return m - n;
}

/* The gathered candidates of the crossing's interval (n >= 1; `above` /
 * `n_above`: the mass and count over it) refined to the value L, and the
 * walk through L's candidates (ids ascending, equal masses). A cut that
 * keeps every id of L is INT32_MAX (the same set), so only a cut that
 * really splits L's ids needs a pass that tests ids. */
void nextok__fz_mass_finish(struct nextok__fused *f, size_t n, const struct nextok__fz_interval *iv,
                      uint64_t target, uint64_t above, size_t n_above, bool keep_ties, float *L,
                      int32_t *cut, size_t *n_keep)
{
    n = tp_narrow(f, n, iv, target, &above, &n_above);
    n = tp_refine_all(f, n, target, &above, &n_above);
    *L = f->cvals[0];
    *cut = INT32_MAX;
    *n_keep = n_above + n;
    if (!keep_ties) {
        size_t j = 0;
        while (above + f->cq[j] < target) above += f->cq[j++];
        *cut = j + 1 < n ? f->cids[j] : INT32_MAX;
        *n_keep = n_above + j + 1;
    }
}
