/*
 * Batched sampling and parallel sampling (n tokens from one distribution).
 * A batch is B independent single-row calls spread over a thread pool: each
 * row uses only its own chain (its own fused workspace, state and step), so
 * its token cannot depend on B, the thread count or its position.
 */
#include "chain_internal.h"
#include "builtin.h"
#include "threadpool.h"

double *nextok__fused_wbuf(struct nextok_chain *c); /* fused.c */

/* ---- parallel sampling ----------------------------------------------------------- */

/* The chain's selector (the last selector stage) and its seed. */
static enum nextok__kind selector_of(const struct nextok_chain *c, uint64_t *seed)
{
    for (size_t i = c->n; i-- > 0;) {
        const struct nextok_sampler *s = c->samplers[i];
        enum nextok__kind k = nextok__sampler_kind(s);
        if (k == NEXTOK__K_DIST || k == NEXTOK__K_GUMBEL) {
            *seed = ((const struct nextok__p_seed *)nextok_sampler_ctx(s))->seed;
            return k;
        }
        if (k == NEXTOK__K_MIROSTAT || k == NEXTOK__K_MIROSTAT_V2) {
            *seed = ((const struct nextok__p_mirostat *)nextok_sampler_ctx(s))->seed;
            return k;
        }
        if (k == NEXTOK__K_GREEDY) return k;
    }
    return NEXTOK__K_USER;
}

static int cmp_id(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

/* Put c->last in id order (selected follows its token). */
static void last_by_id(struct nextok_chain *c)
{
    struct nextok_token_data_array *a = &c->last;
    bool asc = true;
    for (size_t i = 1; i < a->size && asc; i++) asc = a->data[i - 1].id < a->data[i].id;
    if (asc) return;
    int32_t sel = a->selected >= 0 ? a->data[a->selected].id : -1;
    qsort(a->data, a->size, sizeof *a->data, cmp_id);
    a->sorted = false;
    for (size_t i = 0; i < a->size && sel >= 0; i++)
        if (a->data[i].id == sel) a->selected = (int64_t)i;
}

/*
 * Draws j >= 1 by the categorical rule of select.c: weights exp(l - m) in
 * double in id order, running sums; the first whose sum exceeds u_j * Z
 * (the last if none). The running sums are the walk's own, so a binary search
 * over them finds the walk's token.
 */
static void draw_rest(struct nextok_chain *c, double *cum, uint64_t seed, size_t n, int32_t *tokens)
{
    const struct nextok_token_data_array *a = &c->last;
    const double m = nextok__cand_max_logit(a);
    double acc = 0.0;
    for (size_t i = 0; i < a->size; i++) {
        acc += exp((double)a->data[i].logit - m);
        cum[i] = acc;
    }
    for (size_t j = 1; j < n; j++) {
        const double target = nextok_rng_uniform(seed, c->step, NEXTOK_RNG_DIST, (uint32_t)j) * acc;
        size_t lo = 0, hi = a->size - 1; /* first i with cum[i] > target, else last */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cum[mid] > target) hi = mid;
            else lo = mid + 1;
        }
        tokens[j] = a->data[lo].id;
    }
}

nextok_status nextok_chain_sample_n(struct nextok_chain *c, const void *logits,
                                    enum nextok_dtype dtype, size_t n, int32_t *tokens)
{
    if (!c || (!tokens && n > 0) || n > UINT32_MAX) return NEXTOK_ERR_INVALID_ARG;
    if (n == 0) return NEXTOK_OK;
    uint64_t seed = 0;
    enum nextok__kind k = selector_of(c, &seed);
    if (k == NEXTOK__K_USER && n > 1)
        return nextok__chain_fail(c, NEXTOK_ERR_UNSUPPORTED,
                                  "sample_n: the chain's selector is not a built-in one");
    double *cum = n > 1 && k != NEXTOK__K_GREEDY ? nextok__fused_wbuf(c) : NULL;
    if (n > 1 && k != NEXTOK__K_GREEDY && !cum)
        return nextok__chain_fail(c, NEXTOK_ERR_NOMEM, "sample_n: out of memory");
    NEXTOK_FORWARD(nextok_chain_sample(c, logits, dtype, &tokens[0]));
    if (k == NEXTOK__K_GREEDY) {
        for (size_t j = 1; j < n; j++) tokens[j] = tokens[0];
        return NEXTOK_OK;
    }
    if (n > 1) {
        last_by_id(c);
        draw_rest(c, cum, seed, n, tokens);
    }
    return NEXTOK_OK;
}

/* ---- batches -------------------------------------------------------------------- */

struct batch_job {
    struct nextok_chain *const *chains;
    const unsigned char *logits;
    enum nextok_dtype dtype;
    size_t stride_bytes, n;
    int32_t *tokens;
    nextok_status *status;
};

static void batch_row(void *ctx, size_t r)
{
    const struct batch_job *j = ctx;
    int32_t *out = j->tokens + r * j->n;
    nextok_status rc = nextok_chain_sample_n(j->chains[r], j->logits + r * j->stride_bytes,
                                             j->dtype, j->n, out);
    if (rc != NEXTOK_OK)
        for (size_t i = 0; i < j->n; i++) out[i] = -1;
    j->status[r] = rc;
}

static nextok_status batch_check(struct nextok_chain *const *chains, const void *logits,
                                 enum nextok_dtype dtype, size_t n_rows, size_t row_stride,
                                 const int32_t *tokens)
{
    if (n_rows == 0) return NEXTOK_OK;
    if (!chains || !logits || !tokens || nextok_dtype_size(dtype) == 0) return NEXTOK_ERR_INVALID_ARG;
    for (size_t r = 0; r < n_rows; r++) {
        if (!chains[r]) return NEXTOK_ERR_INVALID_ARG;
        if (n_rows > 1 && (size_t)chains[r]->params.n_vocab > row_stride) return NEXTOK_ERR_INVALID_ARG;
    }
    return NEXTOK_OK;
}

nextok_status nextok_batch_sample_n(struct nextok_threadpool *pool,
                                    struct nextok_chain *const *chains, const void *logits,
                                    enum nextok_dtype dtype, size_t n_rows, size_t row_stride,
                                    size_t n, int32_t *tokens, nextok_status *row_status)
{
    NEXTOK_FORWARD(batch_check(chains, logits, dtype, n_rows, row_stride, tokens));
    if (n_rows == 0) return NEXTOK_OK;
    nextok_status local[64];
    struct batch_job job = {chains, logits, dtype, row_stride * nextok_dtype_size(dtype), n, tokens,
                            row_status};
    nextok_status first = NEXTOK_OK;
    if (row_status) {
        nextok__pool_run(pool, batch_row, &job, n_rows);
        for (size_t r = 0; r < n_rows && first == NEXTOK_OK; r++) first = row_status[r];
        return first;
    }
    /* no status array: chunks of 64 rows with a local one (every row still runs) */
    for (size_t r0 = 0; r0 < n_rows; r0 += 64) {
        size_t m = n_rows - r0 < 64 ? n_rows - r0 : 64;
        struct batch_job sub = job;
        sub.chains = chains + r0;
        sub.logits = job.logits + r0 * job.stride_bytes;
        sub.tokens = tokens + r0 * n;
        sub.status = local;
        nextok__pool_run(pool, batch_row, &sub, m);
        for (size_t r = 0; r < m && first == NEXTOK_OK; r++) first = local[r];
    }
    return first;
}

nextok_status nextok_batch_sample(struct nextok_threadpool *pool, struct nextok_chain *const *chains,
                                  const void *logits, enum nextok_dtype dtype, size_t n_rows,
                                  size_t row_stride, int32_t *tokens, nextok_status *row_status)
{
    return nextok_batch_sample_n(pool, chains, logits, dtype, n_rows, row_stride, 1, tokens,
                                 row_status);
}
