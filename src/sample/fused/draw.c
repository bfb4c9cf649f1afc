/*
 * The categorical draw over a dense set (docs/semantics.md, categorical).
 * The chain's dist computes w = expw(l, wref_of(m)) for its candidates in id
 * order, their 64-id block sums, Z and the walk (arch/canonical.c). Here the
 * same weights come from one SIMD pass over the row (dense.c), with
 * non-candidates at weight 0, which changes no sum; the touched ids get
 * their override's weight (0 when a processor removed them) and their
 * blocks are summed again. Same Z, same walk, same token, same p. The
 * distribution stays dense (dist.c) until a reader lists it.
 */
#include "internal.h"

void nextok__fz_dense_draw(struct nextok__fz_run *r, uint64_t seed)
{
    struct nextok__dist *d = &r->f->dist;
    d->t = r->t * r->t_after; /* one of them is 1 */
    d->cut_t = r->t;
    d->ov = &r->f->ovr;
    d->n_touched = r->n_touched;
    d->mask = r->mask;
    struct nextok__wset set;
    nextok__dist_wset(d, &set);
    const size_t id = nextok__wset_draw(&set, nextok_rng_uniform(seed, r->step, NEXTOK_RNG_DIST, 0));
    d->token = (int32_t)id;
    d->valid = true;
    r->work[0] = (struct nextok_token_data){(int32_t)id, nextok__dist_value(d, r->row, r->dt, id),
                                            (float)((double)d->w[id] / d->z)};
    r->out = (struct nextok_token_data_array){r->work, 1, 0, false};
}

/* dist over every candidate (processors, at most a temperature before it). */
size_t nextok__fz_route_dist(struct nextok__fz_run *r, size_t i)
{
    const uint64_t seed = ((const struct nextok__p_seed *)r->stages[i]->ctx)->seed;
    if (!nextok__fz_dense_prepare(r, false, false)) return NEXTOK__FZ_HANDBACK;
    r->f->dist.rule = NEXTOK__DIST_ALL;
    nextok__fz_dense_draw(r, seed);
    return r->n_stages;
}

/*
 * The end of a dense draw after a cut (top-p's, min-p's), the cut's weights
 * and block sums in dist.w / dist.bsum: the touched ids at 0, or at their
 * override's weight when it survives (keep v > L, or v == L and id <= cut,
 * v at the cut's temperature r->t; the weight at the draw's, r->t_after),
 * their blocks summed again, Z, the set ended at its last block with a
 * survivor (a walk that rounds past the end picks a survivor), and the
 * canonical walk. all_written: every block of w was written, with its
 * running sums in dist.cum; else only the 256-id groups whose maximum
 * (dist.gmax) reaches L were, and no running sums (top-p's dense draw).
 */
void nextok__fz_cut_draw(struct nextok__fz_run *r, float L, int32_t cut, bool all_written,
                         uint64_t seed)
{
    struct nextok__fused *f = r->f;
    struct nextok__dist *d = &f->dist;
    const size_t V = r->V, nb = (V + 63) / 64;
    for (size_t j = 0; j < r->n_touched; j++) {
        const size_t id = (size_t)f->ovr.touched[j];
        if (!all_written && !(d->gmax[id / NEXTOK__BMAX_IDS] >= L)) { /* an unwritten block */
            const size_t b0 = id & ~(size_t)63;
            memset(d->w + b0, 0, (V - b0 < 64 ? V - b0 : 64) * sizeof *d->w);
        }
        d->w[id] = 0.0f;
    }
    const float t_all = r->t * r->t_after;
    for (size_t j = 0; j < f->ovr.n_ov; j++) {
        const float x = f->ovr.ov[j].logit;
        if (fz_cut_keep(fz_P(x, r->t), f->ovr.ov[j].id, L, cut))
            d->w[f->ovr.ov[j].id] = nextok__expw(fz_P(x, t_all), &d->ref);
    }
    /* the running sums: from the first re-summed block when the pass gave them */
    const size_t dirty = nextok__fz_resum_touched(r);
    d->z = nextok__wset_cum(d->bsum, all_written ? dirty : 0, nb, d->cum);
    size_t last = nb;
    while (last > 0 && !(d->bsum[last - 1] > 0.0)) last--;
    d->n = last * 64 < V ? last * 64 : V;
    d->rule = NEXTOK__DIST_CUT;
    d->cut_v = L;
    d->cut_id = cut;
    nextok__fz_dense_draw(r, seed);
}
