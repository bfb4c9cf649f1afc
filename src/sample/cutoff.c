/*
 * Truncation sampling by absolute probability (Hewitt et al. 2022,
 * "Truncation Sampling as Language Model Desmoothing"), as in HF
 * transformers' EpsilonLogitsWarper and EtaLogitsWarper:
 *   epsilon: keep p_i >= ε;
 *   eta:     keep p_i >= min(η, √η · exp(-H)), H the entropy of the distribution.
 * Both keep at least min_keep candidates, the first in sorted order.
 */
#include "builtin.h"

static double sum_exp(const struct nextok_token_data_array *cur, double m)
{
    double z = 0.0;
    for (size_t i = 0; i < cur->size; i++) z += exp((double)cur->data[i].logit - m);
    return z;
}

/* Keep p_i = exp(l_i - m) / z >= eps (double), at least min_keep. */
static void keep_above(struct nextok_token_data_array *cur, double m, double z, double eps,
                       size_t min_keep)
{
    size_t kept = 0;
    for (size_t i = 0; i < cur->size; i++)
        kept += exp((double)cur->data[i].logit - m) / z >= eps;
    if (kept == cur->size) return;
    size_t mk = min_keep ? min_keep : 1;
    if (mk > cur->size) mk = cur->size;
    if (kept < mk) {
        /* {p >= eps} is a sorted prefix, so the top min_keep contain it */
        nextok__cand_partial_sort(cur, mk);
        cur->size = mk;
        cur->sorted = true;
    } else {
        size_t j = 0; /* stable compaction keeps `sorted` truthful */
        for (size_t i = 0; i < cur->size; i++)
            if (exp((double)cur->data[i].logit - m) / z >= eps) cur->data[j++] = cur->data[i];
        cur->size = j;
    }
    cur->selected = -1;
}

static nextok_status epsilon_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                   uint64_t step)
{
    (void)step;
    const struct nextok__p_cutoff *c = s->ctx;
    if (c->value <= 0.0f || cur->size <= 1) return NEXTOK_OK;
    const double m = nextok__cand_max_logit(cur);
    keep_above(cur, m, sum_exp(cur, m), (double)c->value, c->min_keep);
    return NEXTOK_OK;
}

static nextok_status eta_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                               uint64_t step)
{
    (void)step;
    const struct nextok__p_cutoff *c = s->ctx;
    if (c->value <= 0.0f || cur->size <= 1) return NEXTOK_OK;
    double m, z;
    const double h = nextok__cand_entropy(cur, &m, &z);
    const double eta = c->value;
    const double adaptive = sqrt(eta) * exp(-h);
    keep_above(cur, m, z, eta < adaptive ? eta : adaptive, c->min_keep);
    return NEXTOK_OK;
}

static const char *epsilon_name(const struct nextok_sampler *s)
{
    (void)s;
    return "epsilon";
}

static const char *eta_name(const struct nextok_sampler *s)
{
    (void)s;
    return "eta";
}

static nextok_status cutoff_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_cutoff), out);
}

const struct nextok_sampler_i nextok__iface_epsilon = {
    .name = epsilon_name,
    .apply = epsilon_apply,
    .clone = cutoff_clone,
    .free = nextok__free_ctx,
};

const struct nextok_sampler_i nextok__iface_eta = {
    .name = eta_name,
    .apply = eta_apply,
    .clone = cutoff_clone,
    .free = nextok__free_ctx,
};

static nextok_status cutoff_init(struct nextok_sampler **out, const struct nextok__mem *mem,
                                 const struct nextok_sampler_i *iface, const char *what,
                                 float value, size_t min_keep, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!(value >= 0.0f && value < 1.0f), err, NEXTOK_ERR_INVALID_ARG,
                     "%s: must be in [0, 1), got %g", what, (double)value);
    struct nextok__p_cutoff *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "%s: out of memory", what);
    *c = (struct nextok__p_cutoff){value, min_keep};
    const enum nextok__kind kind = iface == &nextok__iface_eta ? NEXTOK__K_ETA : NEXTOK__K_EPSILON;
    return nextok__builtin_new(out, mem, iface, kind, NULL, c, err);
}

nextok_status nextok__init_epsilon(struct nextok_sampler **out, const struct nextok__mem *mem,
                                   float epsilon, size_t min_keep, struct nextok_error *err)
{
    return cutoff_init(out, mem, &nextok__iface_epsilon, "epsilon", epsilon, min_keep, err);
}

nextok_status nextok__init_eta(struct nextok_sampler **out, const struct nextok__mem *mem,
                               float eta, size_t min_keep, struct nextok_error *err)
{
    return cutoff_init(out, mem, &nextok__iface_eta, "eta", eta, min_keep, err);
}

nextok_status nextok_sampler_init_epsilon(struct nextok_sampler **out, float epsilon,
                                          size_t min_keep, struct nextok_error *err)
{
    return nextok__init_epsilon(out, &nextok__mem_libc, epsilon, min_keep, err);
}

nextok_status nextok_sampler_init_eta(struct nextok_sampler **out, float eta, size_t min_keep,
                                      struct nextok_error *err)
{
    return nextok__init_eta(out, &nextok__mem_libc, eta, min_keep, err);
}
