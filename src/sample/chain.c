/*
 * The chain: an ordered list of samplers that it owns, a workspace of n_vocab
 * candidates allocated once, and the step counter that keys random draws.
 * sample/probs/apply never allocate; state changes only in accept/set_prompt/reset.
 */
#include "chain_internal.h"

#include <stdio.h>

struct nextok_chain_params nextok_chain_default_params(void)
{
    struct nextok_chain_params p;
    memset(&p, 0, sizeof p);
    p.n_vocab = 0;
    p.nan_policy = NEXTOK_NAN_ERROR;
    return p;
}

nextok_status nextok__chain_fail(struct nextok_chain *c, nextok_status rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nextok__vfmt(c->errmsg, sizeof c->errmsg, fmt, ap);
    va_end(ap);
    nextok__log(c->params.log_fn, c->params.log_user, NEXTOK_LOG_DEBUG, "%s", c->errmsg);
    return rc;
}

nextok_status nextok_chain_init(struct nextok_chain **out, const struct nextok_chain_params *params,
                                struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !params, err, NEXTOK_ERR_INVALID_ARG, "out and params must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(nextok__check_vocab(params->n_vocab, err));
    NEXTOK_RETURN_IF(params->nan_policy != NEXTOK_NAN_ERROR &&
                         params->nan_policy != NEXTOK_NAN_AS_NEG_INF,
                     err, NEXTOK_ERR_INVALID_ARG, "nan_policy: unknown value %d",
                     (int)params->nan_policy);
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, params->allocator, err));
    struct nextok_chain *c = nextok__calloc(&mem, 1, sizeof *c);
    if (!c) goto out_nomem;
    c->params = *params;
    c->params.allocator = NULL; /* the caller's struct need not outlive the call */
    c->mem = mem;
    c->work = nextok__alloc_array(&mem, (size_t)params->n_vocab, sizeof *c->work);
    if (!c->work) goto out_free_chain;
    c->fused = NULL;
    *out = c;
    return NEXTOK_OK;

out_free_chain:
    nextok__free(&mem, c);
out_nomem:
    return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory allocating a chain for %d tokens",
                       (int)params->n_vocab);
}

void nextok_chain_free(struct nextok_chain *c)
{
    if (!c) return;
    const struct nextok__mem mem = c->mem;
    for (size_t i = 0; i < c->n; i++) nextok_sampler_free(c->samplers[i]);
    nextok__free(&mem, c->samplers);
    nextok__free(&mem, c->work);
    nextok__fused_free(c->fused);
    nextok__catdraw_free(c->draw);
    nextok__free(&mem, c);
}

const char *nextok_chain_errmsg(const struct nextok_chain *c) { return c ? c->errmsg : ""; }

nextok_status nextok_chain_add(struct nextok_chain *c, struct nextok_sampler *s)
{
    if (!c || !s) return NEXTOK_ERR_INVALID_ARG;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        struct nextok_sampler **v = nextok__realloc(&c->mem, c->samplers, cap * sizeof *v);
        if (!v) return nextok__chain_fail(c, NEXTOK_ERR_NOMEM, "out of memory adding a sampler");
        c->samplers = v;
        c->cap = cap;
    }
    c->samplers[c->n++] = s;
    nextok__fused_invalidate(c->fused);
    c->last_valid = false;
    return NEXTOK_OK;
}

struct nextok_sampler *nextok_chain_remove(struct nextok_chain *c, size_t i)
{
    if (!c || i >= c->n) return NULL;
    struct nextok_sampler *s = c->samplers[i];
    memmove(&c->samplers[i], &c->samplers[i + 1], (c->n - i - 1) * sizeof *c->samplers);
    c->n--;
    nextok__fused_invalidate(c->fused);
    c->last_valid = false;
    return s;
}

size_t nextok_chain_n(const struct nextok_chain *c) { return c ? c->n : 0; }

struct nextok_sampler *nextok_chain_get(const struct nextok_chain *c, size_t i)
{
    return (c && i < c->n) ? c->samplers[i] : NULL;
}

int32_t nextok_chain_n_vocab(const struct nextok_chain *c) { return c ? c->params.n_vocab : 0; }

static nextok_status check_ids(struct nextok_chain *c, const int32_t *ids, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->params.n_vocab)
            return nextok__chain_fail(c, NEXTOK_ERR_TOKEN_RANGE,
                                      "%s[%zu]: token %d outside [0, %d)", what, i, (int)ids[i],
                                      (int)c->params.n_vocab);
    return NEXTOK_OK;
}

/*
 * accept and set_prompt change every sampler, so a failure part way would
 * leave some changed. They go in three passes: every built-in sampler
 * reserves what the token (prompt) needs, which changes nothing they
 * compute; then the user samplers, which may fail; then the built-ins,
 * which no longer can. Only a user sampler failing after another user
 * sampler changed is left half done (nextok.h, Memory).
 */
static nextok_status stage_fail(struct nextok_chain *c, size_t i, nextok_status rc,
                                const char *what)
{
    return nextok__chain_fail(c, rc, "%s: %s failed: %s", nextok_sampler_name(c->samplers[i]), what,
                              nextok_sampler_errmsg(c->samplers[i]));
}

static bool is_builtin(const struct nextok_sampler *s)
{
    return nextok__sampler_kind(s) != NEXTOK__K_USER;
}

nextok_status nextok_chain_set_prompt(struct nextok_chain *c, const int32_t *ids, size_t n)
{
    if (!c || (!ids && n > 0)) return NEXTOK_ERR_INVALID_ARG;
    NEXTOK_FORWARD(check_ids(c, ids, n, "prompt"));
    for (size_t i = 0; i < c->n; i++) {
        struct nextok_sampler *s = c->samplers[i];
        nextok_status rc =
            s->ops && s->ops->reserve_prompt ? s->ops->reserve_prompt(s, ids, n) : NEXTOK_OK;
        if (rc != NEXTOK_OK) return stage_fail(c, i, rc, "set_prompt");
    }
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < c->n; i++) {
            if (is_builtin(c->samplers[i]) != (pass == 1)) continue;
            nextok_status rc = nextok_sampler_set_prompt(c->samplers[i], ids, n);
            if (rc != NEXTOK_OK) return stage_fail(c, i, rc, "set_prompt");
        }
    }
    c->last_valid = false;
    return NEXTOK_OK;
}

nextok_status nextok_chain_accept(struct nextok_chain *c, int32_t token)
{
    if (!c) return NEXTOK_ERR_INVALID_ARG;
    NEXTOK_FORWARD(check_ids(c, &token, 1, "token"));
    for (size_t i = 0; i < c->n; i++) {
        struct nextok_sampler *s = c->samplers[i];
        nextok_status rc = s->ops && s->ops->reserve ? s->ops->reserve(s, token) : NEXTOK_OK;
        if (rc != NEXTOK_OK) return stage_fail(c, i, rc, "accept");
    }
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < c->n; i++) {
            if (is_builtin(c->samplers[i]) != (pass == 1)) continue;
            nextok_status rc = nextok_sampler_accept(c->samplers[i], token);
            if (rc != NEXTOK_OK) return stage_fail(c, i, rc, "accept");
        }
    }
    c->step++;
    c->last_valid = false;
    return NEXTOK_OK;
}

void nextok_chain_reset(struct nextok_chain *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) nextok_sampler_reset(c->samplers[i]);
    c->step = 0;
    c->last_valid = false;
}

/* A failed clone reports on its original: the message is not state, and
 * the caller has no other handle to read it from. */
static nextok_status clone_fail(const struct nextok_chain *c, nextok_status rc, const char *fmt,
                                ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static nextok_status clone_fail(const struct nextok_chain *c, nextok_status rc, const char *fmt,
                                ...)
{
    struct nextok_chain *m = (struct nextok_chain *)c;
    va_list ap;
    va_start(ap, fmt);
    nextok__vfmt(m->errmsg, sizeof m->errmsg, fmt, ap);
    va_end(ap);
    return rc;
}

nextok_status nextok_chain_clone(const struct nextok_chain *c, struct nextok_chain **out)
{
    if (!c || !out) return NEXTOK_ERR_INVALID_ARG;
    *out = NULL;
    struct nextok_chain *d;
    struct nextok_chain_params p = c->params;
    const struct nextok_allocator a = {c->mem.alloc, c->mem.realloc, c->mem.free, c->mem.user};
    p.allocator = &a;
    struct nextok_error e = {NEXTOK_OK, ""};
    nextok_status rc = nextok_chain_init(&d, &p, &e);
    if (rc != NEXTOK_OK) return clone_fail(c, rc, "clone: %s", e.msg);
    for (size_t i = 0; i < c->n; i++) {
        struct nextok_sampler *s = NULL;
        rc = nextok_sampler_clone(c->samplers[i], &s);
        if (rc != NEXTOK_OK) {
            nextok_chain_free(d);
            return clone_fail(c, rc, "clone: %s: %s", nextok_sampler_name(c->samplers[i]),
                              nextok_strerror(rc));
        }
        rc = nextok_chain_add(d, s);
        if (rc != NEXTOK_OK) {
            nextok_sampler_free(s);
            nextok_chain_free(d);
            return clone_fail(c, rc, "clone: out of memory adding sampler %zu", i);
        }
    }
    d->step = c->step;
    d->observer = c->observer;
    d->observer_user = c->observer_user;
    *out = d;
    return NEXTOK_OK;
}

void nextok_chain_set_step(struct nextok_chain *c, uint64_t step)
{
    if (c) c->step = step;
}

uint64_t nextok_chain_step(const struct nextok_chain *c) { return c ? c->step : 0; }

void nextok_chain_set_observer(struct nextok_chain *c, nextok_stage_fn fn, void *user)
{
    if (!c) return;
    c->observer = fn;
    c->observer_user = user;
}

bool nextok_chain_last_fused(const struct nextok_chain *c) { return c && c->last_fused; }

/* The chain's token-bitmask stage, or NULL. */
static struct nextok_sampler *mask_stage(const struct nextok_chain *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (nextok__sampler_kind(c->samplers[i]) == NEXTOK__K_TOKEN_BITMASK) return c->samplers[i];
    return NULL;
}

nextok_status nextok_chain_set_mask_source(struct nextok_chain *c, const struct nextok_mask_source *src)
{
    if (!c) return NEXTOK_ERR_INVALID_ARG;
    struct nextok_sampler *s = mask_stage(c);
    if (!s)
        return nextok__chain_fail(c, NEXTOK_ERR_STATE,
                                  "set_mask_source: the chain has no token-bitmask stage");
    nextok_status rc = nextok_sampler_set_mask_source(s, src);
    if (rc != NEXTOK_OK) return nextok__chain_fail(c, rc, "%s", nextok_sampler_errmsg(s));
    return NEXTOK_OK;
}

const struct nextok_mask_source *nextok_chain_mask_source(const struct nextok_chain *c)
{
    return c ? nextok_sampler_mask_source(mask_stage(c)) : NULL;
}

nextok_status nextok_chain_set_token_bitmask(struct nextok_chain *c, const int32_t *words, size_t n_words)
{
    if (!c) return NEXTOK_ERR_INVALID_ARG;
    size_t found = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (nextok__sampler_kind(c->samplers[i]) != NEXTOK__K_TOKEN_BITMASK) continue;
        const nextok_status rc = nextok_sampler_set_token_bitmask(c->samplers[i], words, n_words);
        if (rc != NEXTOK_OK) /* every stage has the chain's n_vocab: the first fails or none */
            return nextok__chain_fail(c, rc, "%s", nextok_sampler_errmsg(c->samplers[i]));
        found++;
    }
    if (!found)
        return nextok__chain_fail(c, NEXTOK_ERR_STATE,
                                  "set_token_bitmask: the chain has no token-bitmask stage");
    return NEXTOK_OK;
}

/* Run stages from..n-1 on cur (the chain's work array). */
static nextok_status run_stages(struct nextok_chain *c, struct nextok_token_data_array *cur, size_t from)
{
    for (size_t i = from; i < c->n; i++) {
        struct nextok_sampler *s = c->samplers[i];
        cur->selected = -1;
        nextok_status rc = s->iface->apply(s, cur, c->step);
        if (rc != NEXTOK_OK)
            return nextok__chain_fail(c, rc, "%s: %s", nextok_sampler_name(s),
                                      s->errmsg[0] ? s->errmsg : nextok_strerror(rc));
        if (cur->size == 0)
            return nextok__chain_fail(c, NEXTOK_ERR_NO_CANDIDATES,
                                      "%s: no candidate left (every token masked)",
                                      nextok_sampler_name(s));
        if (c->observer) c->observer(i, nextok_sampler_name(s), cur, c->observer_user);
    }
    return NEXTOK_OK;
}

/* The input rules (docs/semantics.md, Input rows), then every stage. */
static nextok_status run_all(struct nextok_chain *c, struct nextok_token_data_array *cur)
{
    nextok_status rc = nextok_candidates_prepare(cur, c->params.nan_policy);
    if (rc == NEXTOK_ERR_NAN)
        return nextok__chain_fail(c, rc, "logits: NaN in input row");
    if (rc != NEXTOK_OK)
        return nextok__chain_fail(c, rc, "logits: no finite candidate in input row");
    return run_stages(c, cur, 0);
}

static nextok_status check_row(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype)
{
    if (!logits) return nextok__chain_fail(c, NEXTOK_ERR_INVALID_ARG, "logits: NULL row");
    if (nextok_dtype_size(dtype) == 0)
        return nextok__chain_fail(c, NEXTOK_ERR_INVALID_ARG, "dtype: unknown value %d", (int)dtype);
    return NEXTOK_OK;
}

static void load_row(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype,
                     struct nextok_token_data_array *cur)
{
    const size_t n = (size_t)c->params.n_vocab;
    struct nextok_token_data *d = c->work;
    if (dtype == NEXTOK_DTYPE_F32) {
        const float *f = logits;
        for (size_t i = 0; i < n; i++) d[i] = (struct nextok_token_data){(int32_t)i, f[i], 0.0f};
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = (struct nextok_token_data){(int32_t)i, nextok__row_get(logits, dtype, i), 0.0f};
    }
    *cur = (struct nextok_token_data_array){d, n, -1, false};
}

/* The fused prefix, when the chain's stages allow it: then the chain's own
 * tail from where it stopped. Returns false when the row is the plain
 * chain's (nothing ran). */
static bool fused_row(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype,
                      nextok_status *rc)
{
    const struct nextok__fz_chain fc = {c->samplers,       c->n,    c->step,
                                        c->params.n_vocab, c->work, &c->mem};
    size_t tail = 0;
    if (!nextok__fused_run(&c->fused, &fc, logits, dtype, &c->last, &tail)) return false;
    *rc = run_stages(c, &c->last, tail);
    return true;
}

/* Run the chain on a row; leaves the final candidates in c->last (or, after
 * a dense fused result, the token there and the distribution in the fused
 * workspace: nextok__chain_dist). */
static nextok_status chain_run_row(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype)
{
    c->last_valid = false;
    c->last_fused = false;
    NEXTOK_FORWARD(check_row(c, logits, dtype));
    nextok_status rc = NEXTOK_OK;
    if (!c->params.no_fused && !c->observer && fused_row(c, logits, dtype, &rc)) {
        c->last_fused = rc == NEXTOK_OK;
        c->last_valid = rc == NEXTOK_OK;
        return rc;
    }
    load_row(c, logits, dtype, &c->last);
    NEXTOK_FORWARD(run_all(c, &c->last));
    c->last_valid = true;
    return NEXTOK_OK;
}

static struct nextok_sampler *mask_stage(const struct nextok_chain *c);

static nextok_status sample_row(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype,
                                int32_t *token)
{
    NEXTOK_FORWARD(chain_run_row(c, logits, dtype));
    if (c->last.selected < 0 || (size_t)c->last.selected >= c->last.size) {
        c->last_valid = false;
        return nextok__chain_fail(c, NEXTOK_ERR_STATE,
                                  "chain has no selector (end it with greedy, dist, gumbel or mirostat)");
    }
    *token = c->last.data[c->last.selected].id;
    return NEXTOK_OK;
}

/* A mask source's check_first: sample unmasked; keep the token when the
 * source allows it, else redraw with the mask and fresh randomness (the
 * step counter with its top bit flipped: another, independent stream). */
static nextok_status sample_check_first(struct nextok_chain *c, struct nextok_sampler *ms,
                                        const void *logits, enum nextok_dtype dtype,
                                        int32_t *token)
{
    nextok__bitmask_unmasked(ms, true);
    nextok_status rc = sample_row(c, logits, dtype, token);
    nextok__bitmask_unmasked(ms, false);
    bool ok = false;
    if (rc == NEXTOK_OK && (rc = nextok__bitmask_allows(ms, *token, &ok)) != NEXTOK_OK)
        return nextok__chain_fail(c, rc, "%s", nextok_sampler_errmsg(ms));
    if (rc != NEXTOK_OK || ok) return rc;
    const uint64_t step = c->step;
    c->step = step ^ (1ull << 63);
    rc = sample_row(c, logits, dtype, token);
    c->step = step;
    return rc;
}

nextok_status nextok_chain_sample(struct nextok_chain *c, const void *logits,
                                  enum nextok_dtype dtype, int32_t *token)
{
    if (!c || !token) return NEXTOK_ERR_INVALID_ARG;
    struct nextok_sampler *ms = mask_stage(c);
    if (ms && nextok__bitmask_check_first(ms)) return sample_check_first(c, ms, logits, dtype, token);
    return sample_row(c, logits, dtype, token);
}

/* p on the final candidates: the selector's if it set them, else softmax. */
static void ensure_probs(struct nextok_chain *c)
{
    if (c->last.selected < 0) nextok__cand_softmax(&c->last);
}

static int cmp_prob_desc(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    if (a->p != b->p) return a->p > b->p ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

nextok_status nextok_chain_probs(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype,
                                 struct nextok_token_data *out, size_t cap, size_t *n, int32_t *token)
{
    if (!c || !n || (!out && cap > 0)) return NEXTOK_ERR_INVALID_ARG;
    NEXTOK_FORWARD(chain_run_row(c, logits, dtype));
    const struct nextok__dist *d = nextok__chain_dist(c);
    if (d) { /* the dense result as the plain chain's dist leaves it */
        c->last.size = nextok__dist_materialize(d, logits, dtype, c->work, &c->last.selected);
        c->last.data = c->work;
        c->last.sorted = false;
        nextok__fused_drop_dist(c->fused); /* c->last holds the distribution now */
    }
    ensure_probs(c);
    int32_t sel = c->last.selected >= 0 ? c->last.data[c->last.selected].id : -1;
    /* sorting reorders the workspace; `selected` must follow the token */
    nextok__sort(c->last.data, c->last.size, sizeof *c->last.data, cmp_prob_desc);
    c->last.sorted = false;
    c->last.selected = -1;
    for (size_t i = 0; i < c->last.size && sel >= 0; i++)
        if (c->last.data[i].id == sel) c->last.selected = (int64_t)i;
    if (token) *token = sel;
    *n = c->last.size;
    size_t m = c->last.size < cap ? c->last.size : cap;
    if (m) memcpy(out, c->last.data, m * sizeof *out);
    if (cap < c->last.size)
        return nextok__chain_fail(c, NEXTOK_ERR_BUFFER_TOO_SMALL, "out: %zu entries needed, cap %zu",
                                  c->last.size, cap);
    return NEXTOK_OK;
}

nextok_status nextok_chain_apply(struct nextok_chain *c, struct nextok_token_data_array *cur)
{
    if (!c || !cur || (!cur->data && cur->size > 0)) return NEXTOK_ERR_INVALID_ARG;
    if (cur->size > (size_t)c->params.n_vocab)
        return nextok__chain_fail(c, NEXTOK_ERR_INVALID_ARG, "cur: %zu candidates for %d tokens",
                                  cur->size, (int)c->params.n_vocab);
    for (size_t i = 0; i < cur->size; i++)
        if (cur->data[i].id < 0 || cur->data[i].id >= c->params.n_vocab)
            return nextok__chain_fail(c, NEXTOK_ERR_TOKEN_RANGE, "cur->data[%zu].id: %d outside [0, %d)",
                                      i, (int)cur->data[i].id, (int)c->params.n_vocab);
    c->last_valid = false;
    c->last_fused = false;
    if (cur->size) memcpy(c->work, cur->data, cur->size * sizeof *cur->data);
    c->last = (struct nextok_token_data_array){c->work, cur->size, -1, cur->sorted};
    NEXTOK_FORWARD(run_all(c, &c->last));
    c->last_valid = true;
    memcpy(cur->data, c->last.data, c->last.size * sizeof *cur->data);
    cur->size = c->last.size;
    cur->selected = c->last.selected;
    cur->sorted = c->last.sorted;
    return NEXTOK_OK;
}
