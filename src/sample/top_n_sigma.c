/*
 * Top-nσ (Tang et al. 2024, "Top-nσ: Not All Logits Are You Need"): keep the
 * tokens whose logit is within n population standard deviations of the
 * maximum, l_i >= max - n·σ. Works on raw logits, so it is independent of
 * temperature; the maximum always survives, so no min_keep.
 */
#include "builtin.h"

/* Population standard deviation of the logits, two-pass in double. */
static double logit_sigma(const struct nextok_token_data_array *cur)
{
    double mean = 0.0;
    for (size_t i = 0; i < cur->size; i++) mean += cur->data[i].logit;
    mean /= (double)cur->size;
    double var = 0.0;
    for (size_t i = 0; i < cur->size; i++) {
        const double d = (double)cur->data[i].logit - mean;
        var += d * d;
    }
    return sqrt(var / (double)cur->size);
}

static nextok_status sigma_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                 uint64_t step)
{
    (void)step;
    const struct nextok__p_sigma *c = s->ctx;
    if (c->n <= 0.0f || cur->size <= 1) return NEXTOK_OK;
    const double thr = (double)nextok__cand_max_logit(cur) - (double)c->n * logit_sigma(cur);
    size_t j = 0; /* stable compaction keeps `sorted` truthful */
    for (size_t i = 0; i < cur->size; i++)
        if ((double)cur->data[i].logit >= thr) cur->data[j++] = cur->data[i];
    if (j < cur->size) cur->selected = -1;
    cur->size = j;
    return NEXTOK_OK;
}

static const char *sigma_name(const struct nextok_sampler *s)
{
    (void)s;
    return "top-n-sigma";
}

static nextok_status sigma_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_sigma), out);
}

const struct nextok_sampler_i nextok__iface_top_n_sigma = {
    .name = sigma_name,
    .apply = sigma_apply,
    .clone = sigma_clone,
    .free = nextok__free_ctx,
};

nextok_status nextok__init_top_n_sigma(struct nextok_sampler **out, const struct nextok__mem *mem,
                                       float n, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(nextok__check_finite(n, "top_n_sigma", err));
    struct nextok__p_sigma *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "top_n_sigma: out of memory");
    c->n = n;
    return nextok__builtin_new(out, mem, &nextok__iface_top_n_sigma, NEXTOK__K_TOP_N_SIGMA, NULL, c,
                               err);
}

nextok_status nextok_sampler_init_top_n_sigma(struct nextok_sampler **out, float n,
                                              struct nextok_error *err)
{
    return nextok__init_top_n_sigma(out, &nextok__mem_libc, n, err);
}
