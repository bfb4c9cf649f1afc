/*
 * Top-p / nucleus sampling (Holtzman et al. 2019, "The Curious Case of Neural
 * Text Degeneration"): keep the shortest sorted prefix whose cumulative
 * probability reaches p; the token that crosses p is kept.
 *
 * The nucleus is usually a small prefix of a large vocabulary, so the array is
 * sorted only as far as the walk needs (partial sorts of a growing prefix);
 * the sum is the same as after a full sort.
 */
#include "builtin.h"

/* Sort at least the first `want` candidates (all if want >= size); returns
 * the length of the sorted prefix. */
static size_t sorted_prefix(struct nextok_token_data_array *cur, size_t want)
{
    if (cur->sorted || want >= cur->size) {
        nextok__cand_sort(cur);
        return cur->size;
    }
    nextok__cand_partial_sort(cur, want);
    return cur->sorted ? cur->size : want;
}

/* Next prefix length to sort: start small, then grow geometrically. */
static size_t next_len(size_t have) { return have < 64 ? 64 : have * 4; }

static double sum_exp(const struct nextok_token_data_array *cur, double m)
{
    double z = 0.0;
    for (size_t i = 0; i < cur->size; i++) z += exp((double)cur->data[i].logit - m);
    return z;
}

/* Shortest prefix with cumulative probability >= target (double, sorted
 * order). *have is the sorted prefix length, grown as needed. */
static size_t nucleus(struct nextok_token_data_array *cur, double target, size_t *have)
{
    const double m = nextok__cand_max_logit(cur);
    const double z = sum_exp(cur, m);
    double cum = 0.0;
    for (size_t n = 0; n < cur->size; n++) {
        if (n == *have) *have = sorted_prefix(cur, next_len(*have));
        cum += exp((double)cur->data[n].logit - m) / z;
        if (cum >= target) return n + 1;
    }
    return cur->size;
}

/* KEEP mode: extend n over candidates tied with the last kept logit. */
static size_t extend_ties(struct nextok_token_data_array *cur, size_t n, size_t *have)
{
    while (n < cur->size) {
        if (n == *have) *have = sorted_prefix(cur, next_len(*have));
        if (cur->data[n].logit != cur->data[n - 1].logit) break;
        n++;
    }
    return n;
}

static nextok_status top_p_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                 uint64_t step)
{
    (void)step;
    const struct nextok__p_top_p *c = s->ctx;
    if (c->p >= 1.0f || cur->size <= 1) return NEXTOK_OK;
    size_t have = cur->sorted ? cur->size : 0;
    size_t n = nucleus(cur, (double)c->p, &have);
    const size_t mk = c->min_keep ? c->min_keep : 1;
    if (n < mk) n = mk < cur->size ? mk : cur->size;
    if (n > have) have = sorted_prefix(cur, n);
    if (c->ties == NEXTOK_TIES_KEEP) n = extend_ties(cur, n, &have);
    /* n <= have: the kept prefix is in sorted order */
    cur->size = n;
    cur->sorted = true;
    cur->selected = -1;
    return NEXTOK_OK;
}

static const char *top_p_name(const struct nextok_sampler *s)
{
    (void)s;
    return "top-p";
}

static void top_p_free(struct nextok_sampler *s) { free(s->ctx); }

static nextok_status top_p_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    struct nextok__p_top_p *c = malloc(sizeof *c);
    if (!c) return NEXTOK_ERR_NOMEM;
    *c = *(const struct nextok__p_top_p *)s->ctx;
    return nextok__sampler_new(out, &nextok__iface_top_p, c, NULL);
}

const struct nextok_sampler_i nextok__iface_top_p = {
    .name = top_p_name,
    .apply = top_p_apply,
    .clone = top_p_clone,
    .free = top_p_free,
};

nextok_status nextok_sampler_init_top_p(struct nextok_sampler **out, float p,
                                        enum nextok_ties ties, size_t min_keep,
                                        struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!(p > 0.0f && p <= 1.0f), err, NEXTOK_ERR_INVALID_ARG,
                     "top_p: must be in (0, 1], got %g", (double)p);
    NEXTOK_RETURN_IF(ties != NEXTOK_TIES_KEEP && ties != NEXTOK_TIES_EXACT, err,
                     NEXTOK_ERR_INVALID_ARG, "ties: unknown value %d", (int)ties);
    struct nextok__p_top_p *c = malloc(sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "top_p: out of memory");
    *c = (struct nextok__p_top_p){p, ties, min_keep};
    return nextok__sampler_new(out, &nextok__iface_top_p, c, err);
}
