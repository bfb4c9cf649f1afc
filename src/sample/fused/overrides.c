/*
 * Processors as overrides. Logit bias, banned ids, min-tokens, penalties,
 * DRY and no-repeat-n-gram change a few ids of the row: each lists them
 * (its ops.touched), the union is gathered from the row into a small array
 * and the processors' own apply runs on it, in chain order. The results are
 * the "overrides"; every other id keeps its row value, and the row is never
 * copied or scanned for them.
 */
#include "internal.h"

bool nextok__fz_grow(const struct nextok__mem *mem, void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    if (n > SIZE_MAX / elem) return false;
    void *q = nextok__realloc(mem, *p, n * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

static int cmp_cand_id(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_i32(const void *pa, const void *pb)
{
    const int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

/* Ascending ids: insertion sort for the usual few (a history of ~64),
 * nextok__sort beyond. */
static void sort_ids(int32_t *ids, size_t n)
{
    if (n > 256) {
        nextok__sort(ids, n, sizeof *ids, cmp_i32);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        const int32_t v = ids[i];
        size_t j = i;
        for (; j > 0 && ids[j - 1] > v; j--) ids[j] = ids[j - 1];
        ids[j] = v;
    }
}

void nextok__fz_clear_mask(struct nextok__fz_ov *o, size_t n_touched)
{
    for (size_t i = 0; i < n_touched; i++) o->tmask[o->touched[i]] = 0;
}

/* The top-k and min-p paths merge with the sorted list instead and never
 * mark: in a batch, each row's mask is cold, and marking costs a cache miss
 * per id. */
void nextok__fz_mark_touched(const struct nextok__fz_run *r)
{
    struct nextok__fz_ov *o = &r->f->ovr;
    if (o->tmarked) return;
    for (size_t i = 0; i < r->n_touched; i++) o->tmask[o->touched[i]] = 1;
    o->tmarked = true;
}

static size_t touched_of(const struct nextok_sampler *s, int32_t *ids, size_t cap)
{
    return s->ops && s->ops->touched ? s->ops->touched(s, ids, cap) : 0;
}

/* The union of the ids every processor touches, ascending (sorted, then
 * duplicates dropped). Returns the count, or (size_t)-1 on NOMEM. The
 * buffer always exists (the workspace reserves it), so `touched + n` is
 * never arithmetic on NULL. */
static size_t collect_touched(struct nextok__fz_run *r)
{
    struct nextok__fz_ov *o = &r->f->ovr;
    const size_t esz = nextok_dtype_size(r->dt);
    const size_t n_proc = r->f->plan.n_proc;
    size_t n = 0;
    for (size_t s = 0; s < n_proc; s++) {
        const struct nextok_sampler *sp = r->stages[s];
        const size_t room = o->touched_cap - n;
        size_t got = touched_of(sp, o->touched + n, room);
        if (got > room) {
            if (!nextok__fz_grow(&r->f->mem, (void **)&o->touched, &o->touched_cap, n + got,
                                 sizeof *o->touched))
                return (size_t)-1;
            got = touched_of(sp, o->touched + n, got);
        }
        const size_t base = n;
        for (size_t j = 0; j < got; j++) {
            const int32_t id = o->touched[base + j];
            if (id < 0 || id >= r->f->n_vocab) continue;
            /* the gather's loads start now, under the sort */
            __builtin_prefetch((const char *)r->row + (size_t)id * esz);
            o->touched[n++] = id;
        }
    }
    sort_ids(o->touched, n);
    size_t u = 0;
    for (size_t j = 0; j < n; j++)
        if (u == 0 || o->touched[j] != o->touched[u - 1]) o->touched[u++] = o->touched[j];
    return u;
}

/* Gather the touched ids and run the processors on them, except a whitelist
 * (the driver's whitelist mode handles that one). */
bool nextok__fz_overrides(struct nextok__fz_run *r)
{
    struct nextok__fz_ov *o = &r->f->ovr;
    const size_t n = collect_touched(r);
    if (n == (size_t)-1) return false;
    r->n_touched = o->n_touched = n;
    if (!nextok__fz_grow(&r->f->mem, (void **)&o->ov, &o->ov_cap, n ? n : 1, sizeof *o->ov))
        return false;
    /* the touched ids ascend: ov is gathered in id order */
    for (size_t j = 0; j < n; j++) {
        const float x = nextok__row_get(r->row, r->dt, (size_t)o->touched[j]);
        if (!isfinite(x)) return false;
        o->ov[j] = (struct nextok_token_data){o->touched[j], x, 0.0f};
    }
    struct nextok_token_data_array a = {o->ov, n, -1, false};
    for (size_t s = 0; s < r->f->plan.n_proc && a.size > 0; s++) {
        struct nextok_sampler *sp = r->stages[s];
        if (nextok__sampler_kind(sp) == NEXTOK__K_ALLOWED) continue;
        a.selected = -1;
        if (sp->iface->apply(sp, &a, r->step) != NEXTOK_OK) return false;
    }
    bool by_id = true; /* processors keep the order; sort only if one did not */
    for (size_t j = 1; j < a.size && by_id; j++) by_id = o->ov[j - 1].id < o->ov[j].id;
    if (!by_id) nextok__sort(o->ov, a.size, sizeof *o->ov, cmp_cand_id);
    o->n_ov = a.size;
    o->n_removed = n - a.size;
    return true;
}

/* Ask for the cache lines of [p, p + bytes). */
static void prefetch_bytes(const void *p, size_t bytes)
{
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch((const char *)p + o);
}

/* In a batch the rows come from DRAM, and the touched ids' loads would
 * otherwise stall the call's start one after another. Writes only the
 * touched buffer, which the call refills; ids beyond its room are not
 * requested (no allocation). */
void nextok__fused_prefetch(struct nextok__fused *f, const struct nextok__fz_chain *c,
                            const void *row, enum nextok_dtype dt)
{
    if (!f || !f->plan.valid || !f->plan.fusable || f->plan.has_allowed || f->plan.has_mask) return;
    struct nextok__fz_ov *o = &f->ovr;
    const size_t esz = nextok_dtype_size(dt), nb = ((size_t)f->n_vocab + NEXTOK__BLK - 1) / NEXTOK__BLK;
    /* the workspace a row's call starts on: each a DRAM miss in a batch,
     * whose rows stream every other line out of the caches */
    prefetch_bytes(f, sizeof *f);
    prefetch_bytes(c->stages, c->n_stages * sizeof *c->stages);
    for (size_t s = 0; s < c->n_stages; s++) {
        prefetch_bytes(c->stages[s], 64);
        prefetch_bytes(c->stages[s]->ctx, 128);
    }
    prefetch_bytes(f->blkmax, nb * sizeof *f->blkmax);
    prefetch_bytes(f->cids, 256);
    prefetch_bytes(f->cvals, 256);
    prefetch_bytes(o->ov, o->ov_cap < 64 ? o->ov_cap * sizeof *o->ov : 64 * sizeof *o->ov);
    prefetch_bytes(c->work, 64 * sizeof *c->work);
    for (size_t s = 0; s < f->plan.n_proc; s++) {
        size_t got = touched_of(c->stages[s], o->touched, o->touched_cap);
        if (got > o->touched_cap) got = o->touched_cap;
        for (size_t j = 0; j < got; j++) {
            const int32_t id = o->touched[j];
            if (id >= 0 && id < f->n_vocab) __builtin_prefetch((const char *)row + (size_t)id * esz);
        }
    }
}

size_t nextok__fz_n_set(struct nextok__fz_run *r)
{
    if (!r->n_set_known) {
        r->n_set = r->fk->count_allowed(r->mask, r->V) - r->n_mask_touched + r->f->ovr.n_ov;
        r->n_set_known = true;
    }
    return r->n_set;
}

/* Mask words a step of nextok__fz_n_set_gt counts (2048 ids). */
#define GT_STEP 2048

bool nextok__fz_n_set_gt(struct nextok__fz_run *r, size_t m)
{
    if (r->n_set_known) return r->n_set > m;
    /* the allowed ids among the first `at` less every allowed touched id,
     * plus the overrides: a lower bound that only grows */
    size_t c = r->f->ovr.n_ov;
    for (size_t at = 0; at < r->V; at += GT_STEP) {
        const size_t len = r->V - at < GT_STEP ? r->V - at : GT_STEP;
        c += r->fk->count_allowed(r->mask + at / 32, len);
        if (c >= r->n_mask_touched && c - r->n_mask_touched > m) return true;
    }
    r->n_set = c - r->n_mask_touched;
    r->n_set_known = true;
    return r->n_set > m;
}
