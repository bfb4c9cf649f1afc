/*
 * Min-p (Nguyen et al. 2024, "Turning Up the Heat: Min-p Sampling for
 * Creative and Coherent LLM Outputs"): keep tokens with p_i >= p * p_max.
 * Evaluated in logit space, l_i >= max + ln p (double), which needs neither a
 * softmax nor a sort. The boundary is inclusive, so p = 1 keeps every token
 * tied with the maximum.
 */
#include "builtin.h"

static nextok_status min_p_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                 uint64_t step)
{
    (void)step;
    const struct nextok__p_min_p *c = s->ctx;
    if (c->p <= 0.0f || cur->size <= 1) return NEXTOK_OK;
    const double thr = (double)nextok__cand_max_logit(cur) + log((double)c->p);
    size_t kept = 0;
    for (size_t i = 0; i < cur->size; i++) kept += (double)cur->data[i].logit >= thr;
    if (kept == cur->size) return NEXTOK_OK;
    size_t mk = c->min_keep ? c->min_keep : 1;
    if (mk > cur->size) mk = cur->size;
    if (kept < mk) {
        /* the threshold set is a sorted prefix, so the top min_keep contain it */
        nextok__cand_partial_sort(cur, mk);
        cur->size = mk;
        cur->sorted = true;
    } else {
        size_t j = 0; /* stable compaction: relative order (and `sorted`) kept */
        for (size_t i = 0; i < cur->size; i++)
            if ((double)cur->data[i].logit >= thr) cur->data[j++] = cur->data[i];
        cur->size = j;
    }
    cur->selected = -1;
    return NEXTOK_OK;
}

static const char *min_p_name(const struct nextok_sampler *s)
{
    (void)s;
    return "min-p";
}

static nextok_status min_p_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_min_p), out);
}

const struct nextok_sampler_i nextok__iface_min_p = {
    .name = min_p_name,
    .apply = min_p_apply,
    .clone = min_p_clone,
    .free = nextok__free_ctx,
};

nextok_status nextok__init_min_p(struct nextok_sampler **out, const struct nextok__mem *mem,
                                 float p, size_t min_keep, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!(p >= 0.0f && p <= 1.0f), err, NEXTOK_ERR_INVALID_ARG,
                     "min_p: must be in [0, 1], got %g", (double)p);
    struct nextok__p_min_p *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "min_p: out of memory");
    *c = (struct nextok__p_min_p){p, min_keep};
    return nextok__builtin_new(out, mem, &nextok__iface_min_p, NEXTOK__K_MIN_P, NULL, c, err);
}

nextok_status nextok_sampler_init_min_p(struct nextok_sampler **out, float p, size_t min_keep,
                                        struct nextok_error *err)
{
    return nextok__init_min_p(out, &nextok__mem_libc, p, min_keep, err);
}
