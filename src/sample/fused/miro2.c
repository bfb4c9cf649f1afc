/*
 * Fused Mirostat v2 (docs/semantics.md): keep (double)l >= m + ln Z - μ ln 2
 * with the canonical Z, which one SIMD weights pass gives (dense.c); the
 * kept set {l >= thr} is then one threshold compaction (the raw preimage of
 * the float ceiling of thr), in id order as the chain leaves it; none kept:
 * the top candidate. Mirostat's own draw (its ops.draw) runs on it and
 * remembers it for accept.
 */
#include "internal.h"

static bool miro2(struct nextok__fz_run *r, struct nextok_sampler *s)
{
    struct nextok__fused *f = r->f;
    if (!nextok__fz_dense_prepare(r, false, true)) return false;
    const float mu = ((const struct nextok__p_mirostat *)s->ctx)->mu;
    const double thr = nextok__miro2_threshold(&f->dist.cref, ldexp(f->dist.z, -f->dist.N), mu);
    nextok__fz_dense_compact(r, thr);
    const size_t n = nextok__fz_emit_ge(r, thr);
    if (n == 0) { /* the top candidate: the maximum's ids, the lowest first */
        nextok__fz_dense_compact(r, (double)f->dist.max);
        if (!nextok__fz_top_k_finish(r, nextok__fz_emit_top(r, 1), 1, false)) return false;
    } else {
        nextok__fz_set_out(r, n, false);
    }
    r->out.selected = -1;
    return s->ops && s->ops->draw && s->ops->draw(s, &r->out, r->step) == NEXTOK_OK;
}

size_t nextok__fz_route_miro2(struct nextok__fz_run *r, size_t i)
{
    return miro2(r, r->stages[i]) ? i + 1 : NEXTOK__FZ_HANDBACK;
}
