/*
 * The distribution object: the dense result of a fused run that ended in a
 * dist (the whole set, or a top-p, min-p or typical cut of it). It holds the
 * canonical weights of every candidate by id (0 for the rest) with their
 * block sums, running sums and Z, and the rule that says which ids are
 * candidates. Readers (probs, processed logprobs, sample_n, batches) go
 * through the functions here instead of a candidate array, which would cost
 * a pass and a sort per row that most callers never look at.
 */
#include "internal.h"

const struct nextok__dist *nextok__fused_dist(const struct nextok__fused *f)
{
    return f && f->dist.valid ? &f->dist : NULL;
}

void nextok__fused_drop_dist(struct nextok__fused *f)
{
    if (f) f->dist.valid = false;
}

void nextok__dist_wset(const struct nextok__dist *d, struct nextok__wset *set)
{
    *set = (struct nextok__wset){d->w, d->n, d->cum, NULL, (d->n + 63) / 64, d->z, d->bsum};
}

int32_t nextok__dist_token(const struct nextok__dist *d) { return d->token; }

/* The override of touched id i, or NULL when a processor removed it (o->ov
 * ascends by id: a binary search). */
static const struct nextok_token_data *override_of(const struct nextok__fz_ov *o, int32_t i)
{
    size_t lo = 0, hi = o->n_ov;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (o->ov[mid].id < i) lo = mid + 1;
        else hi = mid;
    }
    return lo < o->n_ov && o->ov[lo].id == i ? &o->ov[lo] : NULL;
}

float nextok__dist_value(const struct nextok__dist *d, const void *row, enum nextok_dtype dt, size_t i)
{
    const struct nextok_token_data *o = override_of(d->ov, (int32_t)i);
    return fz_P(o ? o->logit : nextok__row_get(row, dt, i), d->t);
}

/* Whether candidate id is in the set by the rule; v: its value as the cut
 * saw it (before a temperature that comes after the cut). */
static bool rule_keeps(const struct nextok__dist *d, int32_t id, float v)
{
    switch (d->rule) {
    case NEXTOK__DIST_CUT: return fz_cut_keep(v, id, d->cut_v, d->cut_id);
    case NEXTOK__DIST_TYPICAL: return fz_typ_keep(v, id, d->typ_c, d->typ_s, d->cut_v, d->cut_id);
    default: return true;
    }
}

/* The touched ids and the overrides ascend, so one merge walk tells each id's
 * fate: its row value, its override, or removed. */
size_t nextok__dist_materialize(const struct nextok__dist *d, const void *row, enum nextok_dtype dt,
                                struct nextok_token_data *out, int64_t *selected)
{
    const struct nextok__fz_ov *o = d->ov;
    size_t n = 0, oj = 0, tj = 0, pick = 0;
    for (size_t i = 0; i < d->n_vocab; i++) {
        float x;
        if (tj < d->n_touched && o->touched[tj] == (int32_t)i) {
            tj++;
            if (oj == o->n_ov || o->ov[oj].id != (int32_t)i) continue; /* removed by a processor */
            x = o->ov[oj++].logit;
        } else if (d->mask && !((d->mask[i >> 5] >> (i & 31)) & 1u)) {
            continue; /* a token bitmask's disallowed id */
        } else {
            x = nextok__row_get(row, dt, i);
        }
        if (!rule_keeps(d, (int32_t)i, fz_P(x, d->cut_t))) continue;
        const float v = fz_P(x, d->t);
        if ((int32_t)i == d->token) pick = n;
        out[n++] = (struct nextok_token_data){(int32_t)i, v, (float)((double)d->w[i] / d->z)};
    }
    *selected = (int64_t)pick;
    return n;
}
