/*
 * Mirostat v1 and v2 (Basu et al. 2021, "Mirostat: A Neural Text Decoding
 * Algorithm that Directly Controls Perplexity"), as in llama.cpp, with one
 * deliberate difference: μ is updated in accept(), not in apply(). apply()
 * leaves the distribution it sampled from (ids and p) in a cache; accept(t)
 * reads t's surprise from it. Repeated draws at one step thus see the same μ.
 */
#include "builtin.h"
#include "arch/kernels.h"

#include <float.h>

/* The fused path's Mirostat v2 route truncates and calls the draw. */
static const struct nextok__stage_ops mirostat_ops = {.draw = nextok__mirostat_draw};

struct miro_ctx {
    struct nextok__p_mirostat p;   /* p.mu is the live state */
    struct nextok__catdraw *draw;  /* scratch of the draw */
    int32_t *ids;                  /* last distribution: ids ...           */
    double *prob;                  /* ... and their p, n entries of cap    */
    size_t n, cap;
};

static bool is_mirostat(const struct nextok_sampler *s)
{
    return s && (s->iface == &nextok__iface_mirostat || s->iface == &nextok__iface_mirostat_v2);
}

/* ---- cache of the last distribution -------------------------------------- */

/* Room for cap entries; the cached distribution (what accept reads) is kept:
 * a draw that fails after growing the cache must not lose it. */
static bool cache_alloc(const struct nextok__mem *mem, struct miro_ctx *c, size_t cap)
{
    int32_t *ids = nextok__alloc_array(mem, cap, sizeof *ids);
    double *prob = nextok__alloc_array(mem, cap, sizeof *prob);
    if (!ids || !prob) {
        nextok__free(mem, ids);
        nextok__free(mem, prob);
        return false;
    }
    if (c->n) {
        memcpy(ids, c->ids, c->n * sizeof *ids);
        memcpy(prob, c->prob, c->n * sizeof *prob);
    }
    nextok__free(mem, c->ids);
    nextok__free(mem, c->prob);
    c->ids = ids;
    c->prob = prob;
    c->cap = cap;
    return true;
}

static bool cache_reserve(const struct nextok__mem *mem, struct miro_ctx *c, size_t n)
{
    if (n <= c->cap) return true;
    size_t cap = c->cap ? c->cap : 64;
    while (cap < n) cap *= 2;
    if (cap > SIZE_MAX / sizeof(double)) return false;
    return cache_alloc(mem, c, cap);
}

/* Draw as dist does and remember the distribution; nothing changes on failure. */
static nextok_status draw_and_cache(struct nextok_sampler *s, struct miro_ctx *c,
                                    struct nextok_token_data_array *cur, uint64_t step)
{
    if (!cache_reserve(&s->mem, c, cur->size))
        return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM, "%s: out of memory for %zu candidates",
                                        s->iface->name(s), cur->size);
    /* the draw's own p = w / Z (double) go straight into the cache; it fails
     * (no candidates, no memory) before writing any */
    const nextok_status rc = nextok__catdraw_run(c->draw, cur, c->p.seed, step, c->prob);
    if (rc != NEXTOK_OK)
        return nextok_sampler_set_error(s, rc, "%s: draw failed: %s", s->iface->name(s),
                                        nextok_strerror(rc));
    for (size_t i = 0; i < cur->size; i++) c->ids[i] = cur->data[i].id;
    c->n = cur->size;
    return NEXTOK_OK;
}

/* ---- v1 --------------------------------------------------------------------- */

/* Zipf exponent from the first `pairs` adjacent sorted pairs (least squares
 * through the origin). b_i = ln(p_i / p_{i+1}) is taken as l_i - l_{i+1}:
 * the same value, without 0/0 when a p underflows. NaN when pairs == 0. */
static double zipf_exponent(const struct nextok_token_data_array *cur, size_t pairs)
{
    double sum_tb = 0.0, sum_tt = 0.0;
    for (size_t i = 0; i < pairs; i++) {
        const double t = log((double)(i + 2) / (double)(i + 1));
        const double b = (double)cur->data[i].logit - (double)cur->data[i + 1].logit;
        sum_tb += t * b;
        sum_tt += t * t;
    }
    return sum_tb / sum_tt;
}

/* k = ((ε̂ · 2^μ) / (1 - n^-ε̂))^(1/ŝ). At ε̂ = 0 the ratio ε̂ / (1 - n^-ε̂)
 * is 0/0; its limit 1/ln n is used instead. */
static double mirostat_k(double s_hat, double mu, double n_vocab)
{
    const double eps = s_hat - 1.0;
    const double ratio = eps == 0.0 ? 1.0 / log(n_vocab) : eps / (1.0 - pow(n_vocab, -eps));
    return pow(ratio * exp2(mu), 1.0 / s_hat);
}

/* Truncate to an integer and clamp to [1, size] as llama.cpp; a k that is not
 * a number (no pair to estimate from: m = 1) becomes 1, as (int)NaN does there
 * on x86 before max(k, 1). */
static size_t clamp_k(double k, size_t size)
{
    if (!(k >= 1.0)) return 1;
    if (k >= (double)size) return size;
    return (size_t)k;
}

static nextok_status v1_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                              uint64_t step)
{
    struct miro_ctx *c = s->ctx;
    const size_t m1 = (size_t)c->p.m - 1, size1 = cur->size - 1;
    const size_t pairs = m1 < size1 ? m1 : size1;
    nextok__cand_partial_sort(cur, pairs + 1);
    size_t k = 1;
    if (cur->size > 1) {
        const double s_hat = zipf_exponent(cur, pairs);
        k = clamp_k(mirostat_k(s_hat, (double)c->p.mu, (double)c->p.n_vocab), cur->size);
    }
    nextok__cand_partial_sort(cur, k);
    cur->size = k;
    cur->sorted = true;
    return draw_and_cache(s, c, cur, step);
}

/* ---- v2 --------------------------------------------------------------------- */

/* Remove candidates with surprise -log2 p > μ, evaluated as l >= m + ln Z -
 * μ ln 2 (nextok__miro2_threshold, with the canonical Z of the draw's
 * weights), so the fused path (src/sample/fused/miro2.c) computes the very same
 * threshold from its dense weights. The kept set is a sorted prefix; the top
 * candidate always stays. */
static bool v2_truncate(struct miro_ctx *c, struct nextok_token_data_array *cur)
{
    struct nextok__wset set;
    if (!nextok__catdraw_weights(c->draw, cur, &set, NULL)) return false;
    const struct nextok__wref ref = nextok__wref_of((float)nextok__cand_max_logit(cur));
    const double thr = nextok__miro2_threshold(&ref, set.z, c->p.mu);
    size_t j = 0;
    for (size_t i = 0; i < cur->size; i++)
        if ((double)cur->data[i].logit >= thr) cur->data[j++] = cur->data[i];
    if (j == 0) {
        cur->data[0] = cur->data[nextok__cand_argmax(cur)];
        cur->sorted = true;
        j = 1;
    }
    cur->size = j;
    return true;
}

nextok_status nextok__mirostat_draw(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                    uint64_t step)
{
    return draw_and_cache(s, s->ctx, cur, step);
}

static nextok_status v2_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                              uint64_t step)
{
    struct miro_ctx *c = s->ctx;
    if (!v2_truncate(c, cur))
        return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM, "%s: out of memory for %zu candidates",
                                        s->iface->name(s), cur->size);
    return draw_and_cache(s, c, cur, step);
}

/* ---- state ------------------------------------------------------------------ */

/* μ ← μ - η (s - τ), s = -log2 p of the token in the last distribution.
 * Left alone if the token was not in it, or had p = 0 there (s = inf would
 * make μ -inf for good). */
static nextok_status miro_accept(struct nextok_sampler *s, int32_t token)
{
    struct miro_ctx *c = s->ctx;
    for (size_t i = 0; i < c->n; i++) {
        if (c->ids[i] != token) continue;
        if (c->prob[i] > 0.0) {
            const double surprise = -log2(c->prob[i]);
            double mu = (double)c->p.mu - (double)c->p.eta * (surprise - (double)c->p.tau);
            /* clamp so the float conversion is defined even for extreme tau / eta */
            if (mu > FLT_MAX) mu = FLT_MAX;
            if (mu < -FLT_MAX) mu = -FLT_MAX;
            c->p.mu = (float)mu;
        }
        break;
    }
    return NEXTOK_OK;
}

static void miro_reset(struct nextok_sampler *s)
{
    struct miro_ctx *c = s->ctx;
    c->p.mu = 2.0f * c->p.tau;
    c->n = 0;
}

static void miro_free(struct nextok_sampler *s)
{
    struct miro_ctx *c = s->ctx;
    if (!c) return;
    nextok__catdraw_free(c->draw);
    nextok__free(&s->mem, c->ids);
    nextok__free(&s->mem, c->prob);
    nextok__free(&s->mem, c);
}

/* A ctx with parameters p; the cache and the draw's scratch get room for
 * cap candidates (0: grown on first use). */
static struct miro_ctx *miro_new(const struct nextok__mem *mem, const struct nextok__p_mirostat *p,
                                 size_t cap)
{
    struct miro_ctx *c = nextok__calloc(mem, 1, sizeof *c);
    if (!c) return NULL;
    c->p = *p;
    c->draw = nextok__catdraw_new(mem, cap);
    if (!c->draw || (cap && !cache_alloc(mem, c, cap))) {
        struct nextok_sampler tmp = {NULL, c, 0, NULL, *mem, {0}};
        miro_free(&tmp);
        return NULL;
    }
    return c;
}

static nextok_status miro_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    const struct miro_ctx *src = s->ctx;
    struct miro_ctx *c = miro_new(&s->mem, &src->p, src->cap);
    if (!c) return NEXTOK_ERR_NOMEM;
    if (src->n) {
        memcpy(c->ids, src->ids, src->n * sizeof *c->ids);
        memcpy(c->prob, src->prob, src->n * sizeof *c->prob);
    }
    c->n = src->n;
    return nextok__builtin_new(out, &s->mem, s->iface, (enum nextok__kind)s->kind, s->ops, c, NULL);
}

static const char *v1_name(const struct nextok_sampler *s)
{
    (void)s;
    return "mirostat";
}

static const char *v2_name(const struct nextok_sampler *s)
{
    (void)s;
    return "mirostat-v2";
}

const struct nextok_sampler_i nextok__iface_mirostat = {
    .name = v1_name,
    .accept = miro_accept,
    .apply = v1_apply,
    .reset = miro_reset,
    .clone = miro_clone,
    .free = miro_free,
};

const struct nextok_sampler_i nextok__iface_mirostat_v2 = {
    .name = v2_name,
    .accept = miro_accept,
    .apply = v2_apply,
    .reset = miro_reset,
    .clone = miro_clone,
    .free = miro_free,
};

/* ---- constructors ----------------------------------------------------------- */

static nextok_status check_tau_eta(float tau, float eta, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!(tau >= 0.0f && isfinite(tau)), err, NEXTOK_ERR_INVALID_ARG,
                     "mirostat_tau: must be finite and >= 0, got %g", (double)tau);
    NEXTOK_RETURN_IF(!(eta >= 0.0f && isfinite(eta)), err, NEXTOK_ERR_INVALID_ARG,
                     "mirostat_eta: must be finite and >= 0, got %g", (double)eta);
    return NEXTOK_OK;
}

nextok_status nextok__init_mirostat(struct nextok_sampler **out, const struct nextok__mem *mem,
                                    int32_t n_vocab, uint64_t seed, float tau, float eta, int32_t m,
                                    struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(nextok__check_vocab(n_vocab, err));
    NEXTOK_FORWARD(check_tau_eta(tau, eta, err));
    NEXTOK_RETURN_IF(m < 1, err, NEXTOK_ERR_INVALID_ARG, "mirostat_m: must be >= 1, got %d",
                     (int)m);
    const struct nextok__p_mirostat p = {n_vocab, nextok__resolve_seed(seed), tau, eta, m,
                                         2.0f * tau};
    /* the cache holds at most n_vocab candidates: allocate it once, here */
    struct miro_ctx *c = miro_new(mem, &p, (size_t)n_vocab);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "mirostat: out of memory for %d tokens",
                     (int)n_vocab);
    return nextok__builtin_new(out, mem, &nextok__iface_mirostat, NEXTOK__K_MIROSTAT, &mirostat_ops,
                               c, err);
}

nextok_status nextok_sampler_init_mirostat(struct nextok_sampler **out, int32_t n_vocab,
                                           uint64_t seed, float tau, float eta, int32_t m,
                                           struct nextok_error *err)
{
    return nextok__init_mirostat(out, &nextok__mem_libc, n_vocab, seed, tau, eta, m, err);
}

nextok_status nextok__init_mirostat_v2(struct nextok_sampler **out, const struct nextok__mem *mem,
                                       uint64_t seed, float tau, float eta,
                                       struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(check_tau_eta(tau, eta, err));
    const struct nextok__p_mirostat p = {0, nextok__resolve_seed(seed), tau, eta, 0, 2.0f * tau};
    struct miro_ctx *c = miro_new(mem, &p, 0);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "mirostat_v2: out of memory");
    return nextok__builtin_new(out, mem, &nextok__iface_mirostat_v2, NEXTOK__K_MIROSTAT_V2,
                               &mirostat_ops, c, err);
}

nextok_status nextok_sampler_init_mirostat_v2(struct nextok_sampler **out, uint64_t seed, float tau,
                                              float eta, struct nextok_error *err)
{
    return nextok__init_mirostat_v2(out, &nextok__mem_libc, seed, tau, eta, err);
}

float nextok_sampler_mirostat_mu(const struct nextok_sampler *s)
{
    if (!is_mirostat(s)) return NAN;
    return ((const struct miro_ctx *)s->ctx)->p.mu;
}
