/*
 * The driver: one row through the plan. The workspace (struct
 * nextok__fused) is allocated once per chain, sized for its vocabulary;
 * only the touched-id buffers grow (geometrically) with a processor's
 * history, so no call allocates in steady state.
 *
 * Rows holding NaN or ±inf are handed back: the plain chain owns those rules
 * (docs/semantics.md, Input rows).
 */
#include "internal.h"

void nextok__fused_free(struct nextok__fused *f)
{
    if (!f) return;
    const struct nextok__mem m = f->mem;
    nextok__free(&m, f->plan.steps);
    nextok__free(&m, f->ovr.tmask);
    nextok__free(&m, f->ovr.touched);
    nextok__free(&m, f->ovr.ov);
    nextok__free(&m, f->cids);
    nextok__free(&m, f->cvals);
    nextok__free(&m, f->sample);
    nextok__free(&m, f->sel);
    nextok__free(&m, f->blkmax);
    nextok__free(&m, f->dist.w);
    nextok__free(&m, f->dist.bsum);
    nextok__free(&m, f->dist.cum);
    nextok__free(&m, f->dist.gmax);
    nextok__free(&m, f->cq);
    nextok__free(&m, f->cq2);
    nextok__free(&m, f->hq);
    nextok__free(&m, f->tpw);
    nextok__free(&m, f->hn);
    nextok__free(&m, f->tys);
    nextok__free(&m, f);
}

static struct nextok__fused *fused_alloc(const struct nextok__mem *m, int32_t n_vocab)
{
    struct nextok__fused *f = nextok__calloc(m, 1, sizeof *f);
    if (!f) return NULL;
    const size_t v = (size_t)n_vocab;
    f->mem = *m;
    f->n_vocab = n_vocab;
    f->dist.n_vocab = v;
    f->ovr.tmask = nextok__calloc(m, v, 1);
    f->cids = nextok__alloc_array(m, v + NEXTOK__FZ_SLACK, sizeof *f->cids);
    f->cvals = nextok__alloc_array(m, v + NEXTOK__FZ_SLACK, sizeof *f->cvals);
    f->sample = nextok__alloc_array(m, NEXTOK__FZ_SAMPLE_N, sizeof *f->sample);
    f->sel = nextok__alloc_array(m, v + NEXTOK__FZ_SLACK, sizeof *f->sel);
    f->blkmax = nextok__alloc_array(m, v / NEXTOK__BLK + 1, sizeof *f->blkmax);
    /* the touched list always exists, so appending to it never adds to NULL */
    const bool ok = nextok__fz_grow(m, (void **)&f->ovr.touched, &f->ovr.touched_cap, 64,
                                    sizeof *f->ovr.touched);
    if (!ok || !f->ovr.tmask || !f->cids || !f->cvals || !f->sample || !f->sel || !f->blkmax) {
        nextok__fused_free(f);
        return NULL;
    }
    return f;
}

void nextok__fused_invalidate(struct nextok__fused *f)
{
    if (f) f->plan.valid = false;
}

/* The ids a token bitmask allows (below V), with their row values, into
 * r->work in id order: a word at a time, one step per set bit. */
static size_t gather_mask(struct nextok__fz_run *r, const uint32_t *words)
{
    size_t n = 0;
    const size_t nw = (r->V + 31) / 32;
    for (size_t k = 0; k < nw; k++) {
        uint32_t w = words[k];
        if (k == nw - 1 && r->V % 32) w &= (UINT32_C(1) << (r->V % 32)) - 1; /* ids past V: ignored */
        for (; w; w &= w - 1) {
            const size_t id = 32 * k + (size_t)__builtin_ctz(w);
            r->work[n++] = (struct nextok_token_data){(int32_t)id, nextok__row_get(r->row, r->dt, id), 0.0f};
        }
    }
    return n;
}

/* Gather mode: a whitelist's ids (or, without one, a token bitmask's) are a
 * superset of the candidates; gather them with their row values (id order,
 * as the chain's stable filters leave them) and let the chain run every
 * stage on them, the processors included. false: a non-finite row (the
 * plain chain's input rules apply) or a bitmask without this step's mask
 * (the plain chain reports it). */
static bool run_gathered(struct nextok__fz_run *r)
{
    int nf = 0;
    (void)r->k->max(r->row, r->dt, r->V, &nf);
    if (nf) return false;
    const struct nextok__fz_plan *pl = &r->f->plan;
    size_t n = 0;
    if (pl->has_allowed) {
        const struct nextok_sampler *al = NULL;
        for (size_t s = 0; s < pl->n_proc; s++)
            if (nextok__sampler_kind(r->stages[s]) == NEXTOK__K_ALLOWED) al = r->stages[s];
        const int32_t *ids = al->ops->allowed(al, &n);
        for (size_t j = 0; j < n; j++)
            r->work[j] = (struct nextok_token_data){ids[j], nextok__row_get(r->row, r->dt, (size_t)ids[j]), 0.0f};
    } else {
        const struct nextok_sampler *bm = r->stages[pl->mask_stage];
        const uint32_t *words = bm->ops->bitmask(bm);
        if (!words) return false;
        n = gather_mask(r, words);
    }
    r->out = (struct nextok_token_data_array){r->work, n, -1, false};
    return true;
}

/* The token bitmask's words for this row (NULL: none set). */
static const uint32_t *mask_words(const struct nextok__fz_run *r)
{
    const struct nextok_sampler *bm = r->stages[r->f->plan.mask_stage];
    return bm->ops->bitmask(bm);
}

/* The touched ids a token bitmask allows. */
static size_t mask_touched(const struct nextok__fz_run *r)
{
    size_t n = 0;
    for (size_t j = 0; j < r->n_touched; j++) {
        const uint32_t id = (uint32_t)r->f->ovr.touched[j];
        n += (r->mask[id >> 5] >> (id & 31)) & 1u;
    }
    return n;
}

/* The plan's steps from the first stage after the processors to the first
 * route that reduced the set. Returns the stage the chain goes on from, or
 * NEXTOK__FZ_HANDBACK. */
static size_t walk(struct nextok__fz_run *r)
{
    const struct nextok__fz_plan *pl = &r->f->plan;
    for (size_t i = pl->n_proc; i < r->n_stages; i++) {
        const struct nextok__fz_step *st = &pl->steps[i];
        switch (st->action) {
        case NEXTOK__FZ_SKIP:
            continue;
        case NEXTOK__FZ_TEMP:
            r->t = st->t;
            continue;
        case NEXTOK__FZ_ROUTE: {
            if (r->mask && !st->masked) /* this route's passes know no bitmask */
                return run_gathered(r) ? 0 : NEXTOK__FZ_HANDBACK;
            const size_t next = st->route(r, i);
            if (next == NEXTOK__FZ_NEXT) continue;
            return next;
        }
        default:
            return NEXTOK__FZ_HANDBACK;
        }
    }
    /* nothing reduced the set: the plain chain loads the row as fast as
     * materialising it here would */
    return NEXTOK__FZ_HANDBACK;
}

bool nextok__fused_run(struct nextok__fused **fp, const struct nextok__fz_chain *c, const void *row,
                       enum nextok_dtype dt, struct nextok_token_data_array *out, size_t *tail)
{
    struct nextok__fused *f = *fp;
    if (!f && !(f = *fp = fused_alloc(c->mem, c->n_vocab))) return false;
    f->dist.valid = false;
    if (!f->plan.valid && !nextok__fz_plan_build(&f->mem, &f->plan, c->stages, c->n_stages))
        return false;
    if (!f->plan.fusable) return false;
    struct nextok__fz_run r = {.f = f, .k = nextok__kernels(), .fk = nextok__fused_kernels(), .row = row, .dt = dt,
                               .V = (size_t)c->n_vocab, .t = 1.0f, .t_after = 1.0f, .stages = c->stages,
                               .n_stages = c->n_stages, .step = c->step, .work = c->work};
    size_t next = 0;
    if (f->plan.has_allowed || (f->plan.has_mask && !f->plan.mask_kernels)) {
        if (!run_gathered(&r)) return false;
    } else {
        if (f->plan.has_mask && !(r.mask = mask_words(&r))) return false; /* the chain reports it */
        if (!nextok__fz_overrides(&r)) return false;
        if (r.mask) {
            r.n_mask_touched = mask_touched(&r);
        } else {
            r.n_set = r.V - r.n_touched + f->ovr.n_ov;
            r.n_set_known = true;
        }
        f->ovr.tmarked = false;
        next = nextok__fz_n_set_gt(&r, 0) ? walk(&r) : NEXTOK__FZ_HANDBACK;
        if (f->ovr.tmarked) nextok__fz_clear_mask(&f->ovr, r.n_touched);
        f->ovr.tmarked = false;
        if (next == NEXTOK__FZ_HANDBACK) {
            f->dist.valid = false;
            return false;
        }
    }
    *out = r.out;
    *tail = next;
    return true;
}
