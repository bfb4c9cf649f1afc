/*
 * Logprobs: top-n of the raw row's log-softmax or of the final distribution,
 * plus one token's logprob and 1-based rank. The caller's `top` array doubles
 * as the selection heap, so nothing is allocated.
 */
#include "chain_internal.h"
#include "builtin.h"

/* a ranks before b: logprob descending, then id ascending */
static inline bool lp_before(const struct nextok_logprob *a, const struct nextok_logprob *b)
{
    if (a->logprob != b->logprob) return a->logprob > b->logprob;
    return a->id < b->id;
}

/* Min-heap by "before": the root is the worst entry kept so far. */
static void sift_down(struct nextok_logprob *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && lp_before(&h[m], &h[l])) m = l;
        if (r < n && lp_before(&h[m], &h[r])) m = r;
        if (m == i) return;
        struct nextok_logprob t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void sift_up(struct nextok_logprob *h, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!lp_before(&h[parent], &h[i])) return;
        struct nextok_logprob t = h[i];
        h[i] = h[parent];
        h[parent] = t;
        i = parent;
    }
}

struct topn {
    struct nextok_logprob *h;
    size_t cap, n;
};

static void topn_push(struct topn *t, int32_t id, float lp)
{
    struct nextok_logprob e = {id, lp};
    if (t->cap == 0) return;
    if (t->n < t->cap) {
        t->h[t->n] = e;
        sift_up(t->h, t->n++);
    } else if (lp_before(&e, &t->h[0])) {
        t->h[0] = e;
        sift_down(t->h, t->n, 0);
    }
}

/* Heap-sort the kept entries into descending order. */
static void topn_finish(struct topn *t)
{
    for (size_t end = t->n; end > 1; end--) {
        struct nextok_logprob x = t->h[0];
        t->h[0] = t->h[end - 1];
        t->h[end - 1] = x;
        sift_down(t->h, end - 1, 0);
    }
}

/* Classify a raw logit under the chain's NaN policy and the +inf rule. */
struct raw_stats {
    double max, logz;
    size_t n_pos_inf;
};

static nextok_status raw_stats(struct nextok_chain *c, const void *row, enum nextok_dtype dt,
                               struct raw_stats *st)
{
    const size_t n = (size_t)c->params.n_vocab;
    double m = -INFINITY;
    size_t n_inf = 0;
    for (size_t i = 0; i < n; i++) {
        float l = nextok__row_get(row, dt, i);
        if (isnan(l) && c->params.nan_policy == NEXTOK_NAN_ERROR)
            return nextok__chain_fail(c, NEXTOK_ERR_NAN, "logits[%zu]: NaN", i);
        if (isinf(l) && l > 0) n_inf++;
        else if (isfinite(l) && l > m) m = l;
    }
    if (n_inf == 0 && m == -INFINITY)
        return nextok__chain_fail(c, NEXTOK_ERR_NO_CANDIDATES, "logits: no finite candidate");
    double z = 0.0;
    for (size_t i = 0; i < n && n_inf == 0; i++) {
        float l = nextok__row_get(row, dt, i);
        if (isfinite(l)) z += exp((double)l - m);
    }
    st->max = m;
    st->n_pos_inf = n_inf;
    st->logz = n_inf ? log((double)n_inf) : log(z);
    return NEXTOK_OK;
}

static float raw_logprob(const struct raw_stats *st, float l)
{
    if (isnan(l)) return -INFINITY;
    if (st->n_pos_inf) return (isinf(l) && l > 0) ? (float)-st->logz : -INFINITY;
    if (!isfinite(l)) return -INFINITY;
    return (float)((double)l - st->max - st->logz);
}

static nextok_status logprobs_raw(struct nextok_chain *c, const void *row, enum nextok_dtype dt,
                                  int32_t token, struct topn *t, float *tok_lp, int32_t *tok_rank)
{
    struct raw_stats st = {0.0, 0.0, 0};
    NEXTOK_FORWARD(raw_stats(c, row, dt, &st));
    const size_t n = (size_t)c->params.n_vocab;
    const float lt = raw_logprob(&st, nextok__row_get(row, dt, (size_t)token));
    int64_t rank = 1;
    for (size_t i = 0; i < n; i++) {
        float lp = raw_logprob(&st, nextok__row_get(row, dt, i));
        if (lp == -INFINITY) continue;
        topn_push(t, (int32_t)i, lp);
        rank += lp > lt || (lp == lt && (int32_t)i < token);
    }
    if (tok_lp) *tok_lp = lt;
    if (tok_rank) *tok_rank = lt == -INFINITY ? 0 : (int32_t)rank;
    return NEXTOK_OK;
}

/* Weight of id i in a dense set: 0 past its end and in blocks of sum 0
 * (whose weights may be unwritten: struct nextok__wset). */
static float dense_weight(const struct nextok__wset *d, size_t i)
{
    if (i >= d->n || (d->bsum && d->bsum[i / 64] == 0.0)) return 0.0f;
    return d->w[i];
}

/* The same over a dense fused distribution (index = id, p = w / Z; ids that
 * are not candidates weigh 0, so they are skipped as p = 0 candidates are,
 * and so are whole blocks of sum 0). */
static void logprobs_dense(const struct nextok__wset *d, int32_t token, struct topn *t,
                           float *tok_lp, int32_t *tok_rank)
{
    const float pt = (float)((double)dense_weight(d, (size_t)token) / d->z);
    const float lt = pt > 0 ? logf(pt) : -INFINITY;
    int64_t rank = 1;
    for (size_t b = 0; b * 64 < d->n; b++) {
        if (d->bsum && d->bsum[b] == 0.0) continue; /* an empty block: no candidate */
        const size_t e = d->n - b * 64 < 64 ? d->n : b * 64 + 64;
        for (size_t i = b * 64; i < e; i++) {
            const float p = (float)((double)d->w[i] / d->z);
            if (!(p > 0)) continue;
            const float lp = logf(p);
            topn_push(t, (int32_t)i, lp);
            rank += lp > lt || (lp == lt && (int32_t)i < token);
        }
    }
    if (tok_lp) *tok_lp = lt;
    if (tok_rank) *tok_rank = lt == -INFINITY ? 0 : (int32_t)rank;
}

static void logprobs_processed(const struct nextok_chain *c, int32_t token, struct topn *t,
                               float *tok_lp, int32_t *tok_rank)
{
    const struct nextok__dist *d = nextok__chain_dist(c);
    if (d) {
        struct nextok__wset dense;
        nextok__dist_wset(d, &dense);
        logprobs_dense(&dense, token, t, tok_lp, tok_rank);
        return;
    }
    const struct nextok_token_data_array *cur = &c->last;
    float lt = -INFINITY;
    for (size_t i = 0; i < cur->size; i++)
        if (cur->data[i].id == token) lt = cur->data[i].p > 0 ? logf(cur->data[i].p) : -INFINITY;
    int64_t rank = 1;
    for (size_t i = 0; i < cur->size; i++) {
        float lp = cur->data[i].p > 0 ? logf(cur->data[i].p) : -INFINITY;
        if (lp == -INFINITY) continue;
        topn_push(t, cur->data[i].id, lp);
        rank += lp > lt || (lp == lt && cur->data[i].id < token);
    }
    if (tok_lp) *tok_lp = lt;
    if (tok_rank) *tok_rank = lt == -INFINITY ? 0 : (int32_t)rank;
}

nextok_status nextok_chain_logprobs(struct nextok_chain *c, enum nextok_logprobs_source source,
                                    const void *logits, enum nextok_dtype dtype, int32_t token,
                                    size_t top_n, struct nextok_logprob *top, size_t *n_top,
                                    float *token_logprob, int32_t *token_rank)
{
    if (!c || (!top && top_n > 0)) return NEXTOK_ERR_INVALID_ARG;
    if (token < 0 || token >= c->params.n_vocab)
        return nextok__chain_fail(c, NEXTOK_ERR_TOKEN_RANGE, "token: %d outside [0, %d)", (int)token,
                                  (int)c->params.n_vocab);
    struct topn t = {top, top_n, 0};
    if (source == NEXTOK_LOGPROBS_RAW) {
        if (!logits || nextok_dtype_size(dtype) == 0)
            return nextok__chain_fail(c, NEXTOK_ERR_INVALID_ARG, "logits: NULL row or unknown dtype");
        NEXTOK_FORWARD(logprobs_raw(c, logits, dtype, token, &t, token_logprob, token_rank));
    } else if (source == NEXTOK_LOGPROBS_PROCESSED) {
        if (!c->last_valid)
            return nextok__chain_fail(c, NEXTOK_ERR_STATE,
                                      "processed logprobs need a successful sample or probs call first");
        logprobs_processed(c, token, &t, token_logprob, token_rank);
    } else {
        return nextok__chain_fail(c, NEXTOK_ERR_INVALID_ARG, "source: unknown value %d", (int)source);
    }
    topn_finish(&t);
    if (n_top) *n_top = t.n;
    return NEXTOK_OK;
}
