/*
 * Top-p / nucleus sampling (Holtzman et al. 2019, "The Curious Case of Neural
 * Text Degeneration"): keep the shortest sorted prefix whose cumulative
 * probability reaches p; the token that crosses p is kept.
 *
 * The nucleus is usually a small prefix of a large vocabulary, so the array is
 * sorted only as far as the walk needs (partial sorts of a growing prefix);
 * the sum is the same as after a full sort.
 *
 * The mass is the integer one of docs/semantics.md (canonical weights scaled
 * to 2^s and truncated), so its sums are exact in any order and the fused
 * path (src/sample/fused/mass_top_p.c) reaches the same cut by histogram.
 */
#include "builtin.h"
#include "arch/kernels.h"

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

#define CHUNK 64

/* Canonical weights of cur->data[i0 .. i0+n-1] (n <= CHUNK) into w: the SIMD
 * kernel (bit-identical to nextok__expw). */
static void chunk_weights(const struct nextok_token_data_array *cur, size_t i0, size_t n,
                          const struct nextok__wref *ref, float *w)
{
    float x[CHUNK];
    for (size_t i = 0; i < n; i++) x[i] = cur->data[i0 + i].logit;
    nextok__kernels()->expw(x, n, ref, w);
}

/* Mass of every candidate and the target (docs/semantics.md, top-p): q_i =
 * floor(expw(l_i, ref) 2^s), Q = sum q_i (exact: integers), target ceil(p Q). */
static uint64_t mass_target(const struct nextok_token_data_array *cur, float p,
                            const struct nextok__wref *ref, float scale)
{
    uint64_t q = 0;
    float w[CHUNK];
    for (size_t b = 0; b < cur->size; b += CHUNK) {
        const size_t n = cur->size - b < CHUNK ? cur->size - b : CHUNK;
        chunk_weights(cur, b, n, ref, w);
        for (size_t i = 0; i < n; i++) q += nextok__mass_q(w[i], scale);
    }
    return nextok__mass_target(p, q);
}

/* Shortest sorted prefix whose mass reaches the target. *have is the sorted
 * prefix length, grown as needed; weights are computed a chunk of the sorted
 * prefix at a time. */
static size_t nucleus(struct nextok_token_data_array *cur, float p, size_t *have)
{
    const struct nextok__wref ref = nextok__wref_of(nextok__cand_max_logit(cur));
    const float scale = ldexpf(1.0f, (int)nextok__mass_shift(cur->size));
    const uint64_t target = mass_target(cur, p, &ref, scale);
    uint64_t cum = 0;
    float w[CHUNK];
    size_t w0 = 0, wn = 0; /* w holds the weights of data[w0 .. w0+wn-1] */
    for (size_t n = 0; n < cur->size; n++) {
        if (n == *have) *have = sorted_prefix(cur, next_len(*have));
        if (n == w0 + wn) {
            w0 = n;
            wn = *have - n < CHUNK ? *have - n : CHUNK;
            chunk_weights(cur, w0, wn, &ref, w);
        }
        cum += nextok__mass_q(w[n - w0], scale);
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
    size_t n = nucleus(cur, c->p, &have);
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


static nextok_status top_p_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_top_p), out);
}

const struct nextok_sampler_i nextok__iface_top_p = {
    .name = top_p_name,
    .apply = top_p_apply,
    .clone = top_p_clone,
    .free = nextok__free_ctx,
};

nextok_status nextok__init_top_p(struct nextok_sampler **out, const struct nextok__mem *mem,
                                 float p, enum nextok_ties ties, size_t min_keep,
                                 struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!(p > 0.0f && p <= 1.0f), err, NEXTOK_ERR_INVALID_ARG,
                     "top_p: must be in (0, 1], got %g", (double)p);
    NEXTOK_RETURN_IF(ties != NEXTOK_TIES_KEEP && ties != NEXTOK_TIES_EXACT, err,
                     NEXTOK_ERR_INVALID_ARG, "ties: unknown value %d", (int)ties);
    struct nextok__p_top_p *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "top_p: out of memory");
    *c = (struct nextok__p_top_p){p, ties, min_keep};
    return nextok__builtin_new(out, mem, &nextok__iface_top_p, NEXTOK__K_TOP_P, NULL, c, err);
}

nextok_status nextok_sampler_init_top_p(struct nextok_sampler **out, float p, enum nextok_ties ties,
                                        size_t min_keep, struct nextok_error *err)
{
    return nextok__init_top_p(out, &nextok__mem_libc, p, ties, min_keep, err);
}
