/*
 * The dense canonical weights of the whole row (docs/semantics.md,
 * "Canonical weights"): one SIMD pass computes every candidate's weight,
 * indexed by id, with block sums and running sums, so that the categorical
 * walk, top-p's masses, typical's centre and Mirostat v2's Z read the very
 * numbers the chain computes over its sparse set (zeros for non-candidates
 * change no sum). The weights live in the distribution object (dist.c).
 */
#include "internal.h"

bool nextok__fz_dense_reserve(struct nextok__fused *f)
{
    const size_t v = (size_t)f->n_vocab;
    const struct nextok__mem *m = &f->mem;
    if (!f->dist.w) f->dist.w = nextok__alloc_array(m, v, sizeof *f->dist.w);
    if (!f->dist.bsum) f->dist.bsum = nextok__alloc_array(m, (v + 63) / 64, sizeof *f->dist.bsum);
    if (!f->dist.cum) f->dist.cum = nextok__alloc_array(m, (v + 63) / 64, sizeof *f->dist.cum);
    if (!f->dist.gmax) f->dist.gmax = nextok__alloc_array(m, (v + 63) / 64, sizeof *f->dist.gmax);
    return f->dist.w && f->dist.bsum && f->dist.cum && f->dist.gmax;
}

/* The chain's m, the largest processed candidate value, given hi = the
 * largest processed value of the row (P is monotone, so max P = P(max)):
 * hi and the overrides, unless a touched id holds the row's maximum (its
 * override may be lower, or it may be removed): then the collect-the-top
 * route. false: a non-finite value is in the row. */
static bool cand_max(struct nextok__fz_run *r, float hi, float *m)
{
    const struct nextok__fused *f = r->f;
    bool touched_max = false;
    for (size_t j = 0; j < r->n_touched && !touched_max; j++)
        touched_max = fz_P(nextok__row_get(r->row, r->dt, (size_t)f->ovr.touched[j]), r->t) == hi;
    if (touched_max) {
        if (!nextok__fz_collect_top(r, 1)) return false;
        *m = nextok__fz_processed_max(r);
        return true;
    }
    float v = hi;
    for (size_t j = 0; j < f->ovr.n_ov; j++) v = fmaxf(v, fz_P(f->ovr.ov[j].logit, r->t));
    *m = v;
    return true;
}

/* The chain's m by one SIMD max pass. false: a non-finite value is in the row. */
static bool dense_max(struct nextok__fz_run *r, float *m)
{
    int nf = 0;
    const float mx = r->mask ? r->fk->max_masked(r->row, r->dt, r->V, r->mask, &nf)
                             : r->k->max(r->row, r->dt, r->V, &nf);
    return !nf && cand_max(r, fz_P(mx, r->t), m);
}

/* Block sums of the blocks holding touched ids again, from dist.w (each block
 * once: the touched ids ascend). Returns the first such block (the number of
 * blocks when none). */
size_t nextok__fz_resum_touched(const struct nextok__fz_run *r)
{
    struct nextok__fused *f = r->f;
    const size_t V = r->V, nb = (V + 63) / 64;
    size_t first = nb, last = nb;
    for (size_t j = 0; j < r->n_touched; j++) {
        const size_t b = (size_t)f->ovr.touched[j] >> 6;
        if (b == last) continue;
        f->dist.bsum[b] = nextok__wblock(f->dist.w + 64 * b, V - 64 * b < 64 ? V - 64 * b : 64);
        if (b < first) first = b;
        last = b;
    }
    return first;
}

/* Whether the overrides' values keep the unscaled pass exact (their weights
 * are computed with the same reference): [lo, hi] widened by them. */
static bool ov_unscaled_ok(const struct nextok__fz_run *r, float lo, float hi)
{
    const struct nextok__fused *f = r->f;
    for (size_t j = 0; j < f->ovr.n_ov; j++) {
        const float v = fz_P(f->ovr.ov[j].logit, r->t);
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
    }
    return nextok__wref_unscaled_ok(lo, hi);
}

/* The weights pass (with the token bitmask, when there is one). */
static void weights(struct nextok__fz_run *r, const struct nextok__wref *ref, float *gm, float *lo, float *hi)
{
    struct nextok__dist *d = &r->f->dist;
    if (r->mask)
        r->fk->weights_masked(r->row, r->dt, r->V, r->t, ref, r->mask, d->w, d->bsum, d->cum, gm, lo, hi);
    else
        r->fk->weights(r->row, r->dt, r->V, r->t, ref, d->w, d->bsum, d->cum, gm, lo, hi);
}

/*
 * The canonical weights of every candidate into dist.w, up to the exact
 * factor 2^N, with block sums, running sums and dist.z = Z (times 2^N); the
 * touched ids get their override's weight (0 when removed) and their blocks
 * are summed again. One SIMD pass computes them unscaled
 * (nextok__wref_unscaled) and reports the row's smallest and largest
 * processed values; when those (and the overrides') lie where unscaled
 * weights are the canonical ones times 2^N exactly
 * (nextok__wref_unscaled_ok: the usual case), that pass is the result and
 * the maximum only fixes N. Otherwise the exact maximum and a second pass
 * with the canonical reference. mass: the weights will become top-p's
 * masses, floor(w 2^(s - N)) (mass_shift's s): 2^(s - N) must be a float,
 * which it is not for N below s - 127 (rows whose maximum is below about
 * -51), so those take the canonical pass. gmax: fill dist.gmax (for
 * dense_compact). false: a non-finite value is in the row.
 */
bool nextok__fz_dense_prepare(struct nextok__fz_run *r, bool mass, bool gmax)
{
    struct nextok__fused *f = r->f;
    struct nextok__dist *d = &f->dist;
    nextok__fz_mark_touched(r); /* the dense paths test ids against the mask */
    const size_t V = r->V, nb = (V + 63) / 64;
    if (!nextok__fz_dense_reserve(f)) return false;
    float lo, hi, m = 0.0f;
    float *gm = gmax ? d->gmax : NULL;
    weights(r, &nextok__wref_unscaled, gm, &lo, &hi);
    bool unscaled = nextok__wref_unscaled_ok(lo, hi) && ov_unscaled_ok(r, lo, hi);
    if (unscaled) {
        if (!isfinite(d->cum[nb - 1])) return false; /* in range, so a NaN */
        if (!cand_max(r, hi, &m)) return false;
        d->cref = nextok__wref_of(m);
        unscaled = !mass || (int)nextok__mass_shift(nextok__fz_n_set(r)) - d->cref.n <= 127;
    } else if (!dense_max(r, &m)) {
        return false;
    }
    if (unscaled) {
        d->ref = nextok__wref_unscaled;
        d->N = d->cref.n;
    } else {
        d->cref = d->ref = nextok__wref_of(m);
        d->N = 0;
        weights(r, &d->ref, gm, &lo, &hi);
    }
    d->z = d->cum[nb - 1];
    d->max = m;
    d->n = V;
    for (size_t j = 0; j < r->n_touched; j++) d->w[f->ovr.touched[j]] = 0.0f;
    for (size_t j = 0; j < f->ovr.n_ov; j++)
        d->w[f->ovr.ov[j].id] = nextok__expw(fz_P(f->ovr.ov[j].logit, r->t), &d->ref);
    const size_t dirty = nextok__fz_resum_touched(r);
    if (dirty < nb) d->z = nextok__wset_cum(d->bsum, dirty, nb, d->cum);
    return true;
}

/* The next run of consecutive 256-id groups, from group *g on, whose largest
 * processed row value (dist.gmax, from dense_prepare) reaches v: ids [*lo,
 * *hi). false when none is left. Every row element with P(x) >= v lies in
 * such a run (P is monotone). */
bool nextok__fz_active_run(const struct nextok__fz_run *r, float v, size_t *g, size_t *lo, size_t *hi)
{
    const float *bm = r->f->dist.gmax;
    const size_t G = NEXTOK__BMAX_IDS, ng = (r->V + G - 1) / G;
    while (*g < ng && !(bm[*g] >= v)) (*g)++;
    if (*g == ng) return false;
    size_t e = *g;
    while (e < ng && bm[e] >= v) e++;
    *lo = *g * G;
    *hi = e * G < r->V ? e * G : r->V;
    *g = e;
    return true;
}

/* compact() for a threshold thr on processed values after dense_prepare:
 * only the 256-id groups whose maximum (dist.gmax) reaches it are scanned, so
 * a high threshold costs a few groups instead of a pass over the row. Same
 * result: the untouched x with P(x) >= float_ceil(thr), in id order. */
void nextok__fz_dense_compact(struct nextok__fz_run *r, double thr)
{
    struct nextok__fused *f = r->f;
    const float th = nextok__fz_float_ceil(thr), tau = nextok__fz_preimage(th, r->t);
    const size_t esz = nextok_dtype_size(r->dt);
    size_t n = 0, g = 0, lo, hi;
    while (nextok__fz_active_run(r, th, &g, &lo, &hi)) {
        int nf = 0; /* the row is finite (dense_prepare) */
        const void *at = (const char *)r->row + lo * esz;
        n += r->mask ? r->fk->compact_masked(at, r->dt, hi - lo, tau, (int32_t)lo, r->mask, f->cids + n,
                                             f->cvals + n, hi - lo, &nf)
                     : r->k->compact_ge(at, r->dt, hi - lo, tau, (int32_t)lo, f->cids + n, f->cvals + n, hi - lo,
                                        &nf);
    }
    r->nc = nextok__fz_drop_touched(f->cids, f->cvals, n, f->ovr.touched, r->n_touched);
    r->tau = tau;
}
