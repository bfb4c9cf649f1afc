/*
 * Selectors: greedy, categorical (inverse CDF in id order) and Gumbel-max.
 *
 * The categorical draw walks candidates in id order so that the token depends
 * only on (seed, step, the set of candidates and their logits), never on how
 * an earlier stage happened to order the array. Its scratch (id order, weights)
 * lives in a nextok__catdraw, shared with mirostat.c.
 */
#include "builtin.h"
#include "arch/kernels.h"

/* ---- id-order categorical draw (also used by mirostat.c) ----------------- */

struct nextok__catdraw {
    struct nextok__mem mem;
    uint64_t *key; /* (id << 32) | index into cur->data */
    uint64_t *tmp; /* radix-sort buffer */
    int32_t *ids;  /* ids ascending */
    float *x;      /* their logits */
    float *w;      /* their canonical weights */
    double *bsum;  /* running sums of the block sums */
    size_t *bstart;
    size_t cap;    /* grown geometrically, never shrunk */
    const uint64_t *order; /* key or tmp: the id order of the last weights call */
};

static void catdraw_release(struct nextok__catdraw *d)
{
    const struct nextok__mem *m = &d->mem;
    nextok__free(m, d->key);
    nextok__free(m, d->tmp);
    nextok__free(m, d->ids);
    nextok__free(m, d->x);
    nextok__free(m, d->w);
    nextok__free(m, d->bsum);
    nextok__free(m, d->bstart);
}

void nextok__catdraw_free(struct nextok__catdraw *d)
{
    if (!d) return;
    catdraw_release(d);
    const struct nextok__mem mem = d->mem;
    nextok__free(&mem, d);
}

static bool catdraw_reserve(struct nextok__catdraw *d, size_t n)
{
    if (n <= d->cap) return true;
    size_t cap = d->cap ? d->cap : 64;
    while (cap < n) cap *= 2;
    if (cap > SIZE_MAX / sizeof(uint64_t)) return false;
    const struct nextok__mem *m = &d->mem;
    struct nextok__catdraw g = {.mem = *m,
                                .key = nextok__alloc_array(m, cap, sizeof(uint64_t)),
                                .tmp = nextok__alloc_array(m, cap, sizeof(uint64_t)),
                                .ids = nextok__alloc_array(m, cap, sizeof(int32_t)),
                                .x = nextok__alloc_array(m, cap, sizeof(float)),
                                .w = nextok__alloc_array(m, cap, sizeof(float)),
                                .bsum = nextok__alloc_array(m, cap, sizeof(double)),
                                .bstart = nextok__alloc_array(m, cap, sizeof(size_t)),
                                .cap = cap};
    if (!g.key || !g.tmp || !g.ids || !g.x || !g.w || !g.bsum || !g.bstart) {
        catdraw_release(&g);
        return false;
    }
    catdraw_release(d);
    *d = g;
    return true;
}

/* A scratch with room for `reserve` candidates (0: grown on first use),
 * allocated (then and as it grows) with mem. */
struct nextok__catdraw *nextok__catdraw_new(const struct nextok__mem *mem, size_t reserve)
{
    struct nextok__catdraw *d = nextok__calloc(mem, 1, sizeof *d);
    if (!d) return NULL;
    d->mem = *mem;
    if (reserve && !catdraw_reserve(d, reserve)) {
        nextok__free(mem, d);
        return NULL;
    }
    return d;
}

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)

/* One counting-sort pass of src into dst on the digit at `shift`. */
static void radix_pass(const uint64_t *src, uint64_t *dst, size_t n, unsigned shift)
{
    size_t count[RADIX_SIZE] = {0};
    for (size_t i = 0; i < n; i++) count[(src[i] >> shift) & (RADIX_SIZE - 1)]++;
    size_t off = 0;
    for (size_t b = 0; b < RADIX_SIZE; b++) {
        const size_t c = count[b];
        count[b] = off;
        off += c;
    }
    for (size_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & (RADIX_SIZE - 1)]++] = src[i];
}

/*
 * cur (not in id order) as d->key = (id << 32 | index) in id-ascending
 * order: O(n) LSD radix sort on the id bits, only as many 11-bit passes as
 * the largest id needs (ids are unique, so stability across equal ids never
 * matters). Returns the buffer holding the result.
 */
static const uint64_t *id_order(struct nextok__catdraw *d,
                                const struct nextok_token_data_array *cur)
{
    const size_t n = cur->size;
    uint64_t max_id = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t id = (uint32_t)cur->data[i].id;
        d->key[i] = id << 32 | (uint64_t)i;
        if (id > max_id) max_id = id;
    }
    if (n <= 96) { /* few candidates (after top-k/top-p): insertion sort beats radix passes */
        for (size_t i = 1; i < n; i++) {
            const uint64_t k = d->key[i];
            size_t j = i;
            for (; j > 0 && d->key[j - 1] > k; j--) d->key[j] = d->key[j - 1];
            d->key[j] = k;
        }
        return d->key;
    }
    uint64_t *src = d->key, *dst = d->tmp;
    for (unsigned b = 0; b < 32 && (max_id >> b) != 0; b += RADIX_BITS) {
        radix_pass(src, dst, n, 32 + b);
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

/*
 * Canonical weights of cur in id order (docs/semantics.md, Canonical weights):
 * w = nextok__expw(l, nextok__wref_of(m)) with m the maximum logit, block
 * sums, Z. Fills
 * d->ids/x/w, the running block sums d->bsum, d->bstart and *set (*ids,
 * if not NULL, the ids in that order); returns false on NOMEM.
 */
bool nextok__catdraw_weights(struct nextok__catdraw *d, const struct nextok_token_data_array *cur,
                             struct nextok__wset *set, const int32_t **ids)
{
    const size_t n = cur->size;
    if (!catdraw_reserve(d, n)) return false;
    /* The array is usually in id order already (compactions, stable
     * filters): a copying pass, then a test of the copy's order, neither
     * with a branch per candidate (apart, both loops vectorise: min-p 0.05 of
     * flat V 128256 on the sparse route, 6.59 -> 6.48 read passes); otherwise
     * the copy again in id order. */
    const struct nextok_token_data *t = cur->data;
    for (size_t j = 0; j < n; j++) {
        d->ids[j] = t[j].id;
        d->x[j] = t[j].logit;
    }
    unsigned asc = 1;
    for (size_t j = 1; j < n; j++) asc &= d->ids[j] > d->ids[j - 1];
    const uint64_t *order = asc ? NULL : id_order(d, cur);
    d->order = order;
    for (size_t j = 0; order && j < n; j++) {
        d->ids[j] = t[(uint32_t)order[j]].id;
        d->x[j] = t[(uint32_t)order[j]].logit;
    }
    /* finite logits (no NaN to report); the sign of a zero maximum changes
     * no weight. The kernel's independent lanes instead of one max chain. */
    int nf = 0;
    const float m = n ? nextok__kernels()->max(d->x, NEXTOK_DTYPE_F32, n, &nf) : -INFINITY;
    const struct nextok__wref ref = nextok__wref_of(m);
    nextok__kernels()->expw(d->x, n, &ref, d->w); /* bit-identical in every ISA */
    const size_t nb = nextok__wset_sparse(d->ids, d->w, n, d->bsum, d->bstart);
    *set = (struct nextok__wset){d->w, n, d->bsum, d->bstart, nb, nb ? d->bsum[nb - 1] : 0.0, NULL};
    if (ids) *ids = d->ids;
    return true;
}

/*
 * Softmax over cur (p = w / Z set on every candidate) and one categorical
 * draw (nextok__wset_draw) with u = uniform(seed, step, NEXTOK_RNG_DIST, 0).
 * Sets cur->selected; prob_out (may be NULL) receives every candidate's
 * p = w / Z in double, at the candidate's index (Mirostat's surprise).
 */
nextok_status nextok__catdraw_run(struct nextok__catdraw *d, struct nextok_token_data_array *cur,
                                  uint64_t seed, uint64_t step, double *prob_out)
{
    const size_t n = cur->size;
    if (n == 0) return NEXTOK_ERR_NO_CANDIDATES;
    struct nextok__wset set;
    if (!nextok__catdraw_weights(d, cur, &set, NULL)) return NEXTOK_ERR_NOMEM;
    /* index j of the set is candidate (uint32_t)key[j] (j itself: key NULL) */
    const uint64_t *key = d->order;
    if (prob_out) {
        for (size_t j = 0; j < n; j++) {
            const double p = (double)d->w[j] / set.z;
            const size_t at = key ? (uint32_t)key[j] : j;
            cur->data[at].p = (float)p;
            prob_out[at] = p;
        }
    } else {
        float *p = d->x; /* the logits are copied: x is free (same bits as the loop above) */
        nextok__kernels()->probs(d->w, n, set.z, p);
        for (size_t j = 0; j < n; j++) cur->data[key ? (uint32_t)key[j] : j].p = p[j];
    }
    const size_t pick = nextok__wset_draw(&set, nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, 0));
    cur->selected = (int64_t)(key ? (uint32_t)key[pick] : pick);
    return NEXTOK_OK;
}

/* ---- greedy ----------------------------------------------------------------- */

static nextok_status greedy_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                  uint64_t step)
{
    (void)s;
    (void)step;
    cur->data[0] = cur->data[nextok__cand_argmax(cur)];
    cur->data[0].p = 1.0f;
    cur->size = 1;
    cur->sorted = true;
    cur->selected = 0;
    return NEXTOK_OK;
}

static const char *greedy_name(const struct nextok_sampler *s)
{
    (void)s;
    return "greedy";
}

static nextok_status greedy_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__builtin_new(out, &s->mem, &nextok__iface_greedy, NEXTOK__K_GREEDY, NULL, NULL,
                               NULL);
}

const struct nextok_sampler_i nextok__iface_greedy = {
    .name = greedy_name,
    .apply = greedy_apply,
    .clone = greedy_clone,
};

nextok_status nextok__init_greedy(struct nextok_sampler **out, const struct nextok__mem *mem,
                                  struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    return nextok__builtin_new(out, mem, &nextok__iface_greedy, NEXTOK__K_GREEDY, NULL, NULL, err);
}

nextok_status nextok_sampler_init_greedy(struct nextok_sampler **out, struct nextok_error *err)
{
    return nextok__init_greedy(out, &nextok__mem_libc, err);
}

/* ---- dist ------------------------------------------------------------------- */

struct dist_ctx {
    struct nextok__p_seed p;
    struct nextok__catdraw *draw;
};

static nextok_status dist_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                uint64_t step)
{
    struct dist_ctx *c = s->ctx;
    const nextok_status rc = nextok__catdraw_run(c->draw, cur, c->p.seed, step, NULL);
    if (rc == NEXTOK_ERR_NOMEM)
        return nextok_sampler_set_error(s, rc, "dist: out of memory for %zu candidates",
                                        cur->size);
    return rc;
}

static const char *dist_name(const struct nextok_sampler *s)
{
    (void)s;
    return "dist";
}

static void dist_free(struct nextok_sampler *s)
{
    struct dist_ctx *c = s->ctx;
    if (!c) return;
    nextok__catdraw_free(c->draw);
    nextok__free(&s->mem, c);
}

static struct dist_ctx *dist_ctx_new(const struct nextok__mem *mem, uint64_t seed)
{
    struct dist_ctx *c = nextok__alloc(mem, sizeof *c);
    if (!c) return NULL;
    c->p.seed = seed;
    c->draw = nextok__catdraw_new(mem, 0);
    if (!c->draw) {
        nextok__free(mem, c);
        return NULL;
    }
    return c;
}

static nextok_status dist_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    /* the seed is the whole state; the scratch is not copied */
    struct dist_ctx *c = dist_ctx_new(&s->mem, ((const struct dist_ctx *)s->ctx)->p.seed);
    if (!c) return NEXTOK_ERR_NOMEM;
    return nextok__builtin_new(out, &s->mem, &nextok__iface_dist, NEXTOK__K_DIST, NULL, c, NULL);
}

const struct nextok_sampler_i nextok__iface_dist = {
    .name = dist_name,
    .apply = dist_apply,
    .clone = dist_clone,
    .free = dist_free,
};

nextok_status nextok__init_dist(struct nextok_sampler **out, const struct nextok__mem *mem,
                                uint64_t seed, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    struct dist_ctx *c = dist_ctx_new(mem, nextok__resolve_seed(seed));
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "dist: out of memory");
    return nextok__builtin_new(out, mem, &nextok__iface_dist, NEXTOK__K_DIST, NULL, c, err);
}

nextok_status nextok_sampler_init_dist(struct nextok_sampler **out, uint64_t seed,
                                       struct nextok_error *err)
{
    return nextok__init_dist(out, &nextok__mem_libc, seed, err);
}

/* ---- gumbel ----------------------------------------------------------------- */

/*
 * Gumbel-max trick: argmax_i (l_i + g_i), g_i = -ln(-ln u_i), is an exact
 * sample of softmax(l). Noise is keyed by token id, so the result does not
 * depend on the array's order; no sort, no normaliser needed for the choice.
 */
static nextok_status gumbel_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                  uint64_t step)
{
    const uint64_t seed = ((const struct nextok__p_seed *)s->ctx)->seed;
    size_t best = 0;
    double best_v = -INFINITY;
    for (size_t i = 0; i < cur->size; i++) {
        const struct nextok_token_data *d = &cur->data[i];
        const double u = nextok_rng_uniform_open(seed, step, NEXTOK_RNG_GUMBEL, (uint32_t)d->id);
        const double v = (double)d->logit - log(-log(u));
        if (v > best_v || (v == best_v && d->id < cur->data[best].id)) {
            best = i;
            best_v = v;
        }
    }
    nextok__cand_softmax(cur);
    cur->selected = (int64_t)best;
    return NEXTOK_OK;
}

static const char *gumbel_name(const struct nextok_sampler *s)
{
    (void)s;
    return "gumbel";
}


static nextok_status gumbel_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_seed), out);
}

const struct nextok_sampler_i nextok__iface_gumbel = {
    .name = gumbel_name,
    .apply = gumbel_apply,
    .clone = gumbel_clone,
    .free = nextok__free_ctx,
};

nextok_status nextok__init_gumbel(struct nextok_sampler **out, const struct nextok__mem *mem,
                                  uint64_t seed, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    struct nextok__p_seed *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "gumbel: out of memory");
    c->seed = nextok__resolve_seed(seed);
    return nextok__builtin_new(out, mem, &nextok__iface_gumbel, NEXTOK__K_GUMBEL, NULL, c, err);
}

nextok_status nextok_sampler_init_gumbel(struct nextok_sampler **out, uint64_t seed,
                                         struct nextok_error *err)
{
    return nextok__init_gumbel(out, &nextok__mem_libc, seed, err);
}
