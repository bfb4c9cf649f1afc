/*
 * Batched sampling and parallel sampling (n tokens from one distribution).
 * A batch is B independent single-row calls spread over a thread pool: each
 * row uses only its own chain (its own fused workspace, state and step), so
 * its token cannot depend on B, the thread count or its position.
 */
#include "chain_internal.h"
#include "threadpool.h"

#include <stdatomic.h>

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

/*
 * Draws j >= 1 by the categorical rule (docs/semantics.md) with u_j =
 * uniform(seed, step, NEXTOK_RNG_DIST, j): the canonical weights of the final
 * distribution (the fused path's dense ones, or computed here from c->last in
 * id order), each draw walking the block sums and then one block.
 */
static bool draw_rest(struct nextok_chain *c, struct nextok__catdraw *d, uint64_t seed, size_t n,
                      int32_t *tokens)
{
    struct nextok__wset set;
    const int32_t *ids = NULL; /* NULL: dense, index = id */
    const struct nextok__dist *dense = nextok__chain_dist(c);
    if (dense) nextok__dist_wset(dense, &set);
    else if (!nextok__catdraw_weights(d, &c->last, &set, &ids)) return false;
    for (size_t j = 1; j < n; j++) {
        const size_t i = nextok__wset_draw(&set, nextok_rng_uniform(seed, c->step, NEXTOK_RNG_DIST, (uint32_t)j));
        tokens[j] = ids ? ids[i] : (int32_t)i;
    }
    return true;
}

/* The chain's draw scratch for sample_n (allocated on first use). */
static struct nextok__catdraw *chain_draw(struct nextok_chain *c)
{
    if (!c->draw) c->draw = nextok__catdraw_new(&c->mem, (size_t)c->params.n_vocab);
    return c->draw;
}

nextok_status nextok_chain_sample_n(struct nextok_chain *c, const void *logits,
                                    enum nextok_dtype dtype, size_t n, int32_t *tokens)
{
    if (!c || (!tokens && n > 0) || n > UINT32_MAX) return NEXTOK_ERR_INVALID_ARG;
    if (n == 0) return NEXTOK_OK;
    uint64_t seed = 0;
    const enum nextok__kind k = selector_of(c, &seed);
    const bool more = n > 1 && k != NEXTOK__K_GREEDY;
    struct nextok__catdraw *d = more && k != NEXTOK__K_USER ? chain_draw(c) : NULL;
    if (more && k != NEXTOK__K_USER && !d)
        return nextok__chain_fail(c, NEXTOK_ERR_NOMEM, "sample_n: out of memory");
    /* the sample itself reports a chain without a selector (NEXTOK_ERR_STATE) */
    NEXTOK_FORWARD(nextok_chain_sample(c, logits, dtype, &tokens[0]));
    if (more && k == NEXTOK__K_USER)
        return nextok__chain_fail(c, NEXTOK_ERR_UNSUPPORTED,
                                  "sample_n: n > 1 needs a built-in selector (greedy, dist, gumbel "
                                  "or mirostat) to know the distribution; the chain ends with %s",
                                  nextok_sampler_name(c->samplers[c->n - 1]));
    if (k == NEXTOK__K_GREEDY) {
        for (size_t j = 1; j < n; j++) tokens[j] = tokens[0];
        return NEXTOK_OK;
    }
    if (n > 1 && !draw_rest(c, d, seed, n, tokens))
        return nextok__chain_fail(c, NEXTOK_ERR_NOMEM, "sample_n: out of memory");
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
    size_t n_rows;
    const int32_t *mask; /* NULL, or a token bitmask per row */
    size_t mask_stride;  /* words                          */
    atomic_size_t next;  /* the next unclaimed row         */
};

static void batch_row(const struct batch_job *j, size_t r)
{
    int32_t *out = j->tokens + r * j->n;
    struct nextok_chain *c = j->chains[r];
    nextok_status rc = NEXTOK_OK;
    if (j->mask) rc = nextok_chain_set_token_bitmask(c, j->mask + r * j->mask_stride, j->mask_stride);
    if (rc == NEXTOK_OK) rc = nextok_chain_sample_n(c, j->logits + r * j->stride_bytes, j->dtype, j->n, out);
    if (rc != NEXTOK_OK)
        for (size_t i = 0; i < j->n; i++) out[i] = -1;
    j->status[r] = rc;
}

/* The fused path's prefetch of the row a thread samples next. */
static void prefetch_row(struct nextok_chain *c, const void *row, enum nextok_dtype dt)
{
    const struct nextok__fz_chain fc = {c->samplers,       c->n,    c->step,
                                        c->params.n_vocab, c->work, &c->mem};
    nextok__fused_prefetch(c->fused, &fc, row, dt);
}

/*
 * One pool item per thread: each claims rows one at a time and always holds
 * the claim on its next row while it samples the current one, so it can
 * request what that row's call reads first (its touched logits, its chain's
 * state: in a batch they come from DRAM, and the loads would stall the
 * call's start one after another). Only the claiming thread touches a
 * claimed row's chain. At the end a thread waits at most one row for the
 * others. Which thread takes which row never changes a token.
 */
static void batch_worker(void *ctx, size_t item)
{
    (void)item;
    struct batch_job *j = ctx;
    size_t r = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    while (r < j->n_rows) {
        const size_t q = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (q < j->n_rows) prefetch_row(j->chains[q], j->logits + q * j->stride_bytes, j->dtype);
        batch_row(j, r);
        r = q;
    }
}

/* Rows [0, j->n_rows) of j on the pool. */
static void batch_run(struct nextok_threadpool *pool, struct batch_job *j)
{
    const size_t T = pool ? nextok_threadpool_size(pool) : 1;
    atomic_init(&j->next, 0);
    nextok__pool_run(pool, batch_worker, j, T < j->n_rows ? T : j->n_rows);
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

/* Every row of job on the pool; the first failed row's status (or OK). */
static nextok_status batch_rows(struct nextok_threadpool *pool, struct batch_job *job)
{
    nextok_status first = NEXTOK_OK;
    if (job->status) {
        batch_run(pool, job);
        for (size_t r = 0; r < job->n_rows && first == NEXTOK_OK; r++) first = job->status[r];
        return first;
    }
    /* no status array: chunks of 64 rows with a local one (every row still runs) */
    nextok_status local[64];
    for (size_t r0 = 0; r0 < job->n_rows; r0 += 64) {
        const size_t m = job->n_rows - r0 < 64 ? job->n_rows - r0 : 64;
        struct batch_job sub = {.chains = job->chains + r0, .logits = job->logits + r0 * job->stride_bytes,
                                .dtype = job->dtype, .stride_bytes = job->stride_bytes, .n = job->n,
                                .tokens = job->tokens + r0 * job->n, .status = local, .n_rows = m,
                                .mask = job->mask ? job->mask + r0 * job->mask_stride : NULL,
                                .mask_stride = job->mask_stride};
        batch_run(pool, &sub);
        for (size_t r = 0; r < m && first == NEXTOK_OK; r++) first = local[r];
    }
    return first;
}

nextok_status nextok_batch_sample_n(struct nextok_threadpool *pool,
                                    struct nextok_chain *const *chains, const void *logits,
                                    enum nextok_dtype dtype, size_t n_rows, size_t row_stride,
                                    size_t n, int32_t *tokens, nextok_status *row_status)
{
    NEXTOK_FORWARD(batch_check(chains, logits, dtype, n_rows, row_stride, tokens));
    if (n_rows == 0) return NEXTOK_OK;
    struct batch_job job = {.chains = chains, .logits = logits, .dtype = dtype,
                            .stride_bytes = row_stride * nextok_dtype_size(dtype), .n = n,
                            .tokens = tokens, .status = row_status, .n_rows = n_rows};
    return batch_rows(pool, &job);
}

nextok_status nextok_batch_sample(struct nextok_threadpool *pool, struct nextok_chain *const *chains,
                                  const void *logits, enum nextok_dtype dtype, size_t n_rows,
                                  size_t row_stride, int32_t *tokens, nextok_status *row_status)
{
    return nextok_batch_sample_n(pool, chains, logits, dtype, n_rows, row_stride, 1, tokens,
                                 row_status);
}

nextok_status nextok_batch_sample_bitmask(struct nextok_threadpool *pool,
                                          struct nextok_chain *const *chains, const void *logits,
                                          enum nextok_dtype dtype, size_t n_rows, size_t row_stride,
                                          const int32_t *bitmask, size_t mask_stride, int32_t *tokens,
                                          nextok_status *row_status)
{
    NEXTOK_FORWARD(batch_check(chains, logits, dtype, n_rows, row_stride, tokens));
    if (n_rows == 0) return NEXTOK_OK;
    if (!bitmask) return NEXTOK_ERR_INVALID_ARG;
    /* each row's mask is set by the thread that samples it: a row whose
     * mask cannot be set fails alone, with its own status */
    struct batch_job job = {.chains = chains, .logits = logits, .dtype = dtype,
                            .stride_bytes = row_stride * nextok_dtype_size(dtype), .n = 1,
                            .tokens = tokens, .status = row_status, .n_rows = n_rows,
                            .mask = bitmask, .mask_stride = mask_stride};
    return batch_rows(pool, &job);
}
