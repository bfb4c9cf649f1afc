/*
 * Locally typical sampling (Meister et al. 2022, "Locally Typical Sampling"):
 * keep the tokens whose surprise -ln p is closest to the entropy H, the
 * shortest such prefix with cumulative probability >= p.
 *
 * Exact on the canonical weights (docs/semantics.md, typical-p): since
 * -ln p_i - H = c - v_i with c = sum p_i v_i, the order is |v_i - c| with c
 * from blocked sums, and the mass is top-p's integer one, so the fused path
 * (src/sample/fused/mass_typical.c) reaches the same cut without sorting.
 *
 * Also home of nextok__cand_entropy(), shared with temp.c (dynamic
 * temperature) and cutoff.c (eta).
 */
#include "builtin.h"
#include "arch/kernels.h"


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

/* One candidate: its typical-order key, canonical weight and place. */
struct typ_entry {
    float score; /* |v - c| */
    float logit; /* v */
    int32_t id;
    float w;     /* canonical weight */
    size_t idx;  /* position in cur->data */
};

struct typ_ctx {
    struct nextok__p_typical p;
    struct typ_entry *ws; /* scratch, grown geometrically, never shrunk */
    size_t cap;
};

/* Typical order (docs/semantics.md): score ascending, then larger logit,
 * then lower id. */
static int cmp_typical(const void *pa, const void *pb)
{
    const struct typ_entry *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? -1 : 1;
    if (a->logit != b->logit) return a->logit > b->logit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_id(const void *pa, const void *pb)
{
    const struct typ_entry *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_idx(const void *pa, const void *pb)
{
    const struct typ_entry *a = pa, *b = pb;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static bool typ_reserve(const struct nextok__mem *mem, struct typ_ctx *c, size_t n)
{
    if (n <= c->cap) return true;
    size_t cap = c->cap ? c->cap : 64;
    while (cap < n) cap *= 2;
    if (cap > SIZE_MAX / sizeof *c->ws) return false;
    struct typ_entry *ws = nextok__realloc(mem, c->ws, cap * sizeof *ws);
    if (!ws) return false;
    c->ws = ws;
    c->cap = cap;
    return true;
}

/* ws = the candidates in id order with their canonical weights (the
 * reference of the largest logit, as every canonical-weight user). */
static void typ_weights(const struct nextok_token_data_array *cur, struct typ_entry *ws)
{
    const size_t n = cur->size;
    bool asc = true;
    float m = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const struct nextok_token_data *d = &cur->data[i];
        ws[i] = (struct typ_entry){0.0f, d->logit, d->id, 0.0f, i};
        asc &= i == 0 || d->id > cur->data[i - 1].id;
        m = d->logit > m ? d->logit : m;
    }
    if (!asc) nextok__sort(ws, n, sizeof *ws, cmp_id);
    const struct nextok__wref ref = nextok__wref_of(m);
    float x[64], w[64]; /* the SIMD kernel, 64 at a time (bit-identical to nextok__expw) */
    for (size_t b = 0; b < n; b += 64) {
        const size_t len = n - b < 64 ? n - b : 64;
        for (size_t i = 0; i < len; i++) x[i] = ws[b + i].logit;
        nextok__kernels()->expw(x, len, &ref, w);
        for (size_t i = 0; i < len; i++) ws[b + i].w = w[i];
    }
}

/*
 * Z and S = sum w_i v_i, both blocked (docs/semantics.md, typical-p): per
 * block of 64 ids, 16 lanes by id mod 16 added in id order from +0 (float
 * lanes of w for Z, double lanes of the exact products for S), the fixed
 * tree, then the running double sum of block sums. Absent ids add nothing,
 * so this sparse walk equals the fused path's dense one bit for bit.
 */
static void typ_sums(const struct typ_entry *ws, size_t n, double *z, double *s)
{
    double az = 0.0, as = 0.0;
    for (size_t i = 0; i < n;) {
        const int32_t blk = ws[i].id >> 6;
        float a[16] = {0};
        double p[16] = {0}, d[16];
        for (; i < n && ws[i].id >> 6 == blk; i++) {
            a[ws[i].id & 15] += ws[i].w;
            p[ws[i].id & 15] += (double)ws[i].w * (double)ws[i].logit;
        }
        for (int l = 0; l < 16; l++) d[l] = (double)a[l];
        az += nextok__wtree(d);
        as += nextok__wtree(p);
    }
    *z = az;
    *s = as;
}

/* Shortest prefix of ws (typical order) whose integer mass reaches
 * ceil(p Q), at least mk (<= n) long. */
static size_t typ_prefix(const struct typ_entry *ws, size_t n, float p, size_t mk)
{
    const float scale = ldexpf(1.0f, (int)nextok__mass_shift(n));
    uint64_t q = 0;
    for (size_t i = 0; i < n; i++) q += nextok__mass_q(ws[i].w, scale);
    const uint64_t target = nextok__mass_target(p, q);
    uint64_t cum = 0;
    for (size_t i = 0; i < n; i++) {
        cum += nextok__mass_q(ws[i].w, scale);
        if (cum >= target && i + 1 >= mk) return i + 1;
    }
    return n;
}

static nextok_status typical_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                   uint64_t step)
{
    (void)step;
    struct typ_ctx *c = s->ctx;
    if (c->p.p >= 1.0f || cur->size <= 1) return NEXTOK_OK;
    const size_t mk = c->p.min_keep ? c->p.min_keep : 1;
    if (mk >= cur->size) return NEXTOK_OK;
    if (!typ_reserve(&s->mem, c, cur->size))
        return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM,
                                        "typical: out of memory for %zu candidates", cur->size);
    typ_weights(cur, c->ws);
    double z, sum;
    typ_sums(c->ws, cur->size, &z, &sum);
    /* c = sum p_i v_i, so |v_i - c| = |-ln p_i - H| */
    const float center = (float)(sum / z);
    for (size_t i = 0; i < cur->size; i++) c->ws[i].score = fabsf(c->ws[i].logit - center);
    nextok__sort(c->ws, cur->size, sizeof *c->ws, cmp_typical);
    const size_t n = typ_prefix(c->ws, cur->size, c->p.p, mk);
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
    nextok__free(&s->mem, c->ws);
    nextok__free(&s->mem, c);
}

static nextok_status typical_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    const struct typ_ctx *src = s->ctx;
    struct typ_ctx *c = nextok__calloc(&s->mem, 1, sizeof *c);
    if (!c) return NEXTOK_ERR_NOMEM;
    c->p = src->p; /* the scratch is not state: the clone grows its own */
    return nextok__builtin_new(out, &s->mem, &nextok__iface_typical, NEXTOK__K_TYPICAL, NULL, c,
                               NULL);
}

const struct nextok_sampler_i nextok__iface_typical = {
    .name = typical_name,
    .apply = typical_apply,
    .clone = typical_clone,
    .free = typical_free,
};

nextok_status nextok__init_typical(struct nextok_sampler **out, const struct nextok__mem *mem,
                                   float p, size_t min_keep, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!(p > 0.0f && p <= 1.0f), err, NEXTOK_ERR_INVALID_ARG,
                     "typical_p: must be in (0, 1], got %g", (double)p);
    struct typ_ctx *c = nextok__calloc(mem, 1, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "typical: out of memory");
    c->p = (struct nextok__p_typical){p, min_keep};
    return nextok__builtin_new(out, mem, &nextok__iface_typical, NEXTOK__K_TYPICAL, NULL, c, err);
}

nextok_status nextok_sampler_init_typical(struct nextok_sampler **out, float p, size_t min_keep,
                                          struct nextok_error *err)
{
    return nextok__init_typical(out, &nextok__mem_libc, p, min_keep, err);
}
