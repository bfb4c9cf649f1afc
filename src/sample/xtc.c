/*
 * XTC, "exclude top choices" (p-e-w, text-generation-webui; llama.cpp's
 * port): with probability `probability`, remove every token whose p reaches
 * `threshold` except the least likely of them, steering away from the most
 * predictable continuations while keeping one viable choice.
 */
#include "builtin.h"

static nextok_status xtc_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                               uint64_t step)
{
    const struct nextok__p_xtc *c = s->ctx;
    if (c->probability <= 0.0f || c->threshold > 0.5f || cur->size < 2) return NEXTOK_OK;
    if (nextok_rng_uniform(c->seed, step, NEXTOK_RNG_XTC, 0) >= (double)c->probability)
        return NEXTOK_OK;
    nextok__cand_sort(cur);
    const double m = cur->data[0].logit;
    double z = 0.0;
    for (size_t i = 0; i < cur->size; i++) z += exp((double)cur->data[i].logit - m);
    /* j: last sorted index with p >= threshold; p falls along the order */
    size_t above = 0;
    while (above < cur->size &&
           exp((double)cur->data[above].logit - m) / z >= (double)c->threshold)
        above++;
    const size_t mk = c->min_keep ? c->min_keep : 1;
    if (above < 2 || cur->size - (above - 1) < mk) return NEXTOK_OK;
    const size_t j = above - 1;
    memmove(cur->data, cur->data + j, (cur->size - j) * sizeof *cur->data);
    cur->size -= j;
    cur->selected = -1;
    return NEXTOK_OK;
}

static const char *xtc_name(const struct nextok_sampler *s)
{
    (void)s;
    return "xtc";
}

static nextok_status xtc_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_xtc), out);
}

const struct nextok_sampler_i nextok__iface_xtc = {
    .name = xtc_name,
    .apply = xtc_apply,
    .clone = xtc_clone,
    .free = nextok__free_ctx,
};

nextok_status nextok__init_xtc(struct nextok_sampler **out, const struct nextok__mem *mem,
                               float probability, float threshold, size_t min_keep, uint64_t seed,
                               struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!(probability >= 0.0f && probability <= 1.0f), err, NEXTOK_ERR_INVALID_ARG,
                     "xtc_probability: must be in [0, 1], got %g", (double)probability);
    NEXTOK_RETURN_IF(!(threshold >= 0.0f && threshold <= 1.0f), err, NEXTOK_ERR_INVALID_ARG,
                     "xtc_threshold: must be in [0, 1], got %g", (double)threshold);
    struct nextok__p_xtc *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "xtc: out of memory");
    *c = (struct nextok__p_xtc){probability, threshold, min_keep, nextok__resolve_seed(seed)};
    return nextok__builtin_new(out, mem, &nextok__iface_xtc, NEXTOK__K_XTC, NULL, c, err);
}

nextok_status nextok_sampler_init_xtc(struct nextok_sampler **out, float probability,
                                      float threshold, size_t min_keep, uint64_t seed,
                                      struct nextok_error *err)
{
    return nextok__init_xtc(out, &nextok__mem_libc, probability, threshold, min_keep, seed, err);
}
