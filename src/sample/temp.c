/*
 * Temperature (logit / t) and llama.cpp's dynamic temperature "temp_ext"
 * (entropy-scaled temperature, kalomaze's DynaTemp as merged in llama.cpp).
 * t <= 0 means greedy: only the top candidate stays, its logit unchanged.
 */
#include "builtin.h"

#include <float.h>

/* Greedy limit of the temperature: keep the top candidate only. */
static void keep_top(struct nextok_token_data_array *cur)
{
    cur->data[0] = cur->data[nextok__cand_argmax(cur)];
    cur->size = 1;
    cur->sorted = true;
    cur->selected = -1;
}

/*
 * Dividing by a positive factor keeps the logit order, but rounding or
 * saturation can turn two distinct logits into a tie whose ids are in the
 * wrong order for "sorted"; check instead of assuming.
 */
static bool still_sorted(const struct nextok_token_data_array *cur)
{
    for (size_t i = 1; i < cur->size; i++)
        if (nextok__cand_before(&cur->data[i], &cur->data[i - 1])) return false;
    return true;
}

/* logit / t in float (as llama.cpp, vLLM, HF), saturated to ±FLT_MAX. */
static void scale_f(struct nextok_token_data_array *cur, float t)
{
    for (size_t i = 0; i < cur->size; i++) cur->data[i].logit = nextok__sat(cur->data[i].logit / t);
    if (cur->sorted) cur->sorted = still_sorted(cur);
}

/* logit / T with a double T; clamped in double so the float conversion
 * never overflows. */
static void scale_d(struct nextok_token_data_array *cur, double t)
{
    for (size_t i = 0; i < cur->size; i++) {
        double x = (double)cur->data[i].logit / t;
        if (x > FLT_MAX) x = FLT_MAX;
        if (x < -FLT_MAX) x = -FLT_MAX;
        cur->data[i].logit = (float)x;
    }
    if (cur->sorted) cur->sorted = still_sorted(cur);
}

static void apply_plain(struct nextok_token_data_array *cur, float t)
{
    if (t <= 0.0f) keep_top(cur);
    else if (t != 1.0f) scale_f(cur, t);
}

/* ---- temp ---------------------------------------------------------------- */

static nextok_status temp_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                uint64_t step)
{
    (void)step;
    apply_plain(cur, ((const struct nextok__p_temp *)s->ctx)->t);
    return NEXTOK_OK;
}

static const char *temp_name(const struct nextok_sampler *s)
{
    (void)s;
    return "temp";
}

static nextok_status temp_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_temp), out);
}

const struct nextok_sampler_i nextok__iface_temp = {
    .name = temp_name,
    .apply = temp_apply,
    .clone = temp_clone,
    .free = nextok__free_ctx,
};

nextok_status nextok__init_temp(struct nextok_sampler **out, const struct nextok__mem *mem, float t,
                                struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(nextok__check_finite(t, "temperature", err));
    struct nextok__p_temp *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "temp: out of memory");
    c->t = t;
    return nextok__builtin_new(out, mem, &nextok__iface_temp, NEXTOK__K_TEMP, NULL, c, err);
}

nextok_status nextok_sampler_init_temp(struct nextok_sampler **out, float t,
                                       struct nextok_error *err)
{
    return nextok__init_temp(out, &nextok__mem_libc, t, err);
}

/* ---- temp_ext -------------------------------------------------------------- */

/* T = min_t + (max_t - min_t) * (H / ln n)^e, all in double. */
static double dynamic_temp(const struct nextok__p_temp_ext *c,
                           const struct nextok_token_data_array *cur)
{
    const double t = c->t, range = c->range;
    const double min_t = t - range > 0.0 ? t - range : 0.0;
    const double max_t = t + range;
    double hn = nextok__cand_entropy(cur, NULL, NULL) / log((double)cur->size);
    if (hn > 1.0) hn = 1.0; /* rounding only: H <= ln n */
    return min_t + (max_t - min_t) * pow(hn, (double)c->exponent);
}

static nextok_status temp_ext_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                    uint64_t step)
{
    (void)step;
    const struct nextok__p_temp_ext *c = s->ctx;
    if (c->range <= 0.0f) {
        apply_plain(cur, c->t);
        return NEXTOK_OK;
    }
    if (cur->size < 2) return NEXTOK_OK; /* llama.cpp: nothing to scale */
    const double t = dynamic_temp(c, cur);
    if (t <= 0.0) keep_top(cur);
    else if (t != 1.0) scale_d(cur, t);
    return NEXTOK_OK;
}

static const char *temp_ext_name(const struct nextok_sampler *s)
{
    (void)s;
    return "temp-ext";
}

static nextok_status temp_ext_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_temp_ext), out);
}

const struct nextok_sampler_i nextok__iface_temp_ext = {
    .name = temp_ext_name,
    .apply = temp_ext_apply,
    .clone = temp_ext_clone,
    .free = nextok__free_ctx,
};

nextok_status nextok__init_temp_ext(struct nextok_sampler **out, const struct nextok__mem *mem,
                                    float t, float range, float exponent, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(nextok__check_finite(t, "temperature", err));
    NEXTOK_RETURN_IF(!(range >= 0.0f && isfinite(range)), err, NEXTOK_ERR_INVALID_ARG,
                     "dynatemp_range: must be finite and >= 0, got %g", (double)range);
    NEXTOK_RETURN_IF(!(exponent >= 0.0f && isfinite(exponent)), err, NEXTOK_ERR_INVALID_ARG,
                     "dynatemp_exponent: must be finite and >= 0, got %g", (double)exponent);
    struct nextok__p_temp_ext *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "temp_ext: out of memory");
    *c = (struct nextok__p_temp_ext){t, range, exponent};
    return nextok__builtin_new(out, mem, &nextok__iface_temp_ext, NEXTOK__K_TEMP_EXT, NULL, c, err);
}

nextok_status nextok_sampler_init_temp_ext(struct nextok_sampler **out, float t, float range,
                                           float exponent, struct nextok_error *err)
{
    return nextok__init_temp_ext(out, &nextok__mem_libc, t, range, exponent, err);
}
