/*
 * Locally typical sampling (Meister et al. 2022, "Locally Typical Sampling"):
 * keep the tokens whose surprise -ln p is closest to the entropy H, the
 * shortest such prefix with cumulative probability >= p.
 *
 * Also home of nextok__cand_entropy(), shared with temp.c (dynamic
 * temperature) and cutoff.c (eta).
 */
#include "builtin.h"


/*
 * H = -sum p_i ln p_i of softmax(cur) in double, written as
 * H = ln Z - sum (w_i / Z)(l_i - m) with w_i = exp(l_i - m): the same value,
 * but a weight that underflows to 0 contributes 0 instead of 0 * -inf.
 * Both terms are >= 0, so H >= 0 despite rounding.
 */
double nextok__cand_entropy(const struct nextok_token_data_array *cur, double *max_logit,
                            double *z)
{
    const double m = nextok__cand_max_logit(cur);
    double sum_w = 0.0, sum_wd = 0.0;
    for (size_t i = 0; i < cur->size; i++) {
        const double d = (double)cur->data[i].logit - m;
        const double w = exp(d);
        sum_w += w;
        sum_wd += w * d;
    }
    if (max_logit) *max_logit = m;
    if (z) *z = sum_w;
    return log(sum_w) - sum_wd / sum_w;
}

/* One candidate in typical order: |surprise - H|, then the sorted order. */
struct typ_entry {
    double score;
    float logit;
    int32_t id;
    size_t idx; /* position in cur->data */
};

struct typ_ctx {
    struct nextok__p_typical p;
    struct typ_entry *ws; /* scratch, grown geometrically, never shrunk */
    size_t cap;
};

static int cmp_typical(const void *pa, const void *pb)
{
    const struct typ_entry *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? -1 : 1;
    if (a->logit != b->logit) return a->logit > b->logit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_idx(const void *pa, const void *pb)
{
    const struct typ_entry *a = pa, *b = pb;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static bool typ_reserve(struct typ_ctx *c, size_t n)
{
    if (n <= c->cap) return true;
    size_t cap = c->cap ? c->cap : 64;
    while (cap < n) cap *= 2;
    if (cap > SIZE_MAX / sizeof *c->ws) return false;
    struct typ_entry *ws = realloc(c->ws, cap * sizeof *ws);
    if (!ws) return false;
    c->ws = ws;
    c->cap = cap;
    return true;
}

/* Fill ws with every candidate's distance from the entropy; ln Z and m
 * give -ln p_i = ln Z - (l_i - m) without forming p_i. */
static void typ_scores(const struct nextok_token_data_array *cur, struct typ_entry *ws,
                       double *m, double *z)
{
    const double h = nextok__cand_entropy(cur, m, z);
    const double ln_z = log(*z);
    for (size_t i = 0; i < cur->size; i++) {
        const struct nextok_token_data *d = &cur->data[i];
        const double surprise = ln_z - ((double)d->logit - *m);
        ws[i] = (struct typ_entry){fabs(surprise - h), d->logit, d->id, i};
    }
}

/* Shortest prefix of ws (typical order) with cumulative p >= target. */
static size_t typ_prefix(const struct typ_entry *ws, size_t n, double m, double z, double target)
{
    double cum = 0.0;
    for (size_t i = 0; i < n; i++) {
        cum += exp((double)ws[i].logit - m) / z;
        if (cum >= target) return i + 1;
    }
    return n;
}

static nextok_status typical_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                   uint64_t step)
{
    (void)step;
    struct typ_ctx *c = s->ctx;
    if (c->p.p >= 1.0f || cur->size <= 1) return NEXTOK_OK;
    if (!typ_reserve(c, cur->size))
        return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM,
                                        "typical: out of memory for %zu candidates", cur->size);
    double m, z;
    typ_scores(cur, c->ws, &m, &z);
    nextok__sort(c->ws, cur->size, sizeof *c->ws, cmp_typical);
    size_t n = typ_prefix(c->ws, cur->size, m, z, (double)c->p.p);
    const size_t mk = c->p.min_keep ? c->p.min_keep : 1;
    if (n < mk) n = mk < cur->size ? mk : cur->size;
    if (n == cur->size) return NEXTOK_OK;
    /* Gather the kept ones in their input order: `sorted` stays truthful, and
     * idx ascending means idx_j >= j, so the forward in-place copy is safe. */
    nextok__sort(c->ws, n, sizeof *c->ws, cmp_idx);
    for (size_t j = 0; j < n; j++) cur->data[j] = cur->data[c->ws[j].idx];
    cur->size = n;
    cur->selected = -1;
    return NEXTOK_OK;
}

static const char *typical_name(const struct nextok_sampler *s)
{
    (void)s;
    return "typical";
}

static void typical_free(struct nextok_sampler *s)
{
    struct typ_ctx *c = s->ctx;
    if (!c) return;
    free(c->ws);
    free(c);
}

static nextok_status typical_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    const struct typ_ctx *src = s->ctx;
    struct typ_ctx *c = calloc(1, sizeof *c);
    if (!c) return NEXTOK_ERR_NOMEM;
    c->p = src->p; /* the scratch is not state: the clone grows its own */
    return nextok__sampler_new(out, &nextok__iface_typical, c, NULL);
}

const struct nextok_sampler_i nextok__iface_typical = {
    .name = typical_name,
    .apply = typical_apply,
    .clone = typical_clone,
    .free = typical_free,
};

nextok_status nextok_sampler_init_typical(struct nextok_sampler **out, float p, size_t min_keep,
                                          struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!(p > 0.0f && p <= 1.0f), err, NEXTOK_ERR_INVALID_ARG,
                     "typical_p: must be in (0, 1], got %g", (double)p);
    struct typ_ctx *c = calloc(1, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "typical: out of memory");
    c->p = (struct nextok__p_typical){p, min_keep};
    return nextok__sampler_new(out, &nextok__iface_typical, c, err);
}
