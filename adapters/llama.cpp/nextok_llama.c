/*
 * nextok_llama.c - a llama.cpp sampler over a nextok chain (nextok_llama.h
 * is the manual; adapters/llama.cpp/README.md how to build it).
 *
 * Built against the user's llama.h, so everything this file assumes about
 * llama.cpp is checked here at compile time: the interface generation
 * (struct llama_sampler_i), the candidate layout nextok shares, and the
 * members llama.cpp calls without a NULL check (src/llama-sampler.cpp:
 * llama_sampler_name calls name, llama_sampler_apply asserts apply,
 * llama_sampler_clone aborts without clone when ctx is set; accept, reset,
 * free, copy_state and the backend_* group are checked for NULL first).
 */
#include "nextok_llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the llama.h this file knows ------------------------------------------ */

#if !defined(LLAMA_H) || !defined(LLAMA_DEFAULT_SEED) || !defined(LLAMA_TOKEN_NULL)
#error \
    "nextok_llama: this llama.h predates the llama_sampler API (no LLAMA_DEFAULT_SEED or LLAMA_TOKEN_NULL); nextok_llama.c needs the interface of llama.cpp as bundled by node-llama-cpp 3.21.1"
#endif

#ifdef __cplusplus
#define NL_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define NL_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* The generation: name, accept, apply, reset, clone, free, then backend_init,
 * backend_accept, backend_apply, backend_set_input, backend_reset and
 * copy_state. A llama.h with another count (the six-member interface of
 * 2024-2025, or a later one with new members) is one this file was not
 * written for: llama.cpp might call a member that is not set here. */
#define NL_FN sizeof(void (*)(void))
NL_STATIC_ASSERT(sizeof(struct llama_sampler_i) == 12 * NL_FN,
                 "nextok_llama: unknown llama.h: struct llama_sampler_i does not have the 12 "
                 "members (name, accept, apply, reset, clone, free, backend_init, "
                 "backend_accept, backend_apply, backend_set_input, backend_reset, copy_state) "
                 "of the interface this adapter was written for (llama.cpp as bundled by "
                 "node-llama-cpp 3.21.1); update adapters/llama.cpp/nextok_llama.c");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, name) == 0 * NL_FN, "llama_sampler_i.name moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, accept) == 1 * NL_FN,
                 "llama_sampler_i.accept moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, apply) == 2 * NL_FN,
                 "llama_sampler_i.apply moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, reset) == 3 * NL_FN,
                 "llama_sampler_i.reset moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, clone) == 4 * NL_FN,
                 "llama_sampler_i.clone moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, free) == 5 * NL_FN, "llama_sampler_i.free moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, backend_init) == 6 * NL_FN,
                 "llama_sampler_i.backend_init moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, backend_accept) == 7 * NL_FN,
                 "llama_sampler_i.backend_accept moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, backend_apply) == 8 * NL_FN,
                 "llama_sampler_i.backend_apply moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, backend_set_input) == 9 * NL_FN,
                 "llama_sampler_i.backend_set_input moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, backend_reset) == 10 * NL_FN,
                 "llama_sampler_i.backend_reset moved");
NL_STATIC_ASSERT(offsetof(struct llama_sampler_i, copy_state) == 11 * NL_FN,
                 "llama_sampler_i.copy_state moved");

/* nextok's candidate array is llama.cpp's, field for field: apply hands
 * llama.cpp's array to nextok without copying it. */
#define NL_SAME(a, b, f)                                             \
    NL_STATIC_ASSERT(offsetof(a, f) == offsetof(b, f) &&             \
                         sizeof(((a *)0)->f) == sizeof(((b *)0)->f), \
                     "nextok_llama: " #a "." #f " differs from " #b "." #f)
NL_STATIC_ASSERT(sizeof(llama_token_data) == sizeof(struct nextok_token_data),
                 "nextok_llama: llama_token_data and nextok_token_data differ in size");
NL_STATIC_ASSERT(sizeof(llama_token) == sizeof(int32_t),
                 "nextok_llama: llama_token is not 32 bits");
NL_SAME(llama_token_data, struct nextok_token_data, id);
NL_SAME(llama_token_data, struct nextok_token_data, logit);
NL_SAME(llama_token_data, struct nextok_token_data, p);
NL_STATIC_ASSERT(sizeof(llama_token_data_array) == sizeof(struct nextok_token_data_array),
                 "nextok_llama: llama_token_data_array and nextok_token_data_array differ in size");
NL_SAME(llama_token_data_array, struct nextok_token_data_array, data);
NL_SAME(llama_token_data_array, struct nextok_token_data_array, size);
NL_SAME(llama_token_data_array, struct nextok_token_data_array, selected);
NL_SAME(llama_token_data_array, struct nextok_token_data_array, sorted);

/* ---- the sampler's context ---------------------------------------------- */

struct nl_ctx {
    struct nextok_chain *chain; /* owned */
    struct nextok_llama_sampler_params params;
    int32_t n_vocab;
    float *row; /* n_vocab logits: a full llama.cpp array gathered for the fused path */
    bool wide;  /* the last call left > n_vocab / 32 survivors: plain chain next */
    nextok_status status;
    uint64_t n_errors;
    char errmsg[NEXTOK_ERRMSG_MAX];
};

static void nl_apply(struct llama_sampler *smpl, llama_token_data_array *cur);
static struct llama_sampler *wrap(struct nl_ctx *x);

/* A nextok sampler is one whose apply is ours (however its table was made). */
static struct nl_ctx *ctx_of(const struct llama_sampler *smpl)
{
    return smpl && smpl->iface && smpl->iface->apply == nl_apply ? (struct nl_ctx *)smpl->ctx
                                                                 : NULL;
}

static void set_err(struct nextok_error *err, nextok_status rc, const char *msg)
{
    if (!err) return;
    err->status = rc;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
}

/* Record a failure of `what` with the chain's message (or msg if given). */
static void record(struct nl_ctx *x, nextok_status rc, const char *what, const char *msg)
{
    x->status = rc;
    x->n_errors++;
    if (!msg || !msg[0]) msg = nextok_chain_errmsg(x->chain);
    if (!msg || !msg[0]) msg = nextok_strerror(rc);
    snprintf(x->errmsg, sizeof x->errmsg, "%s: %s", what, msg);
}

/* ---- candidates ----------------------------------------------------------- */

/* nextok's `sorted`: logit descending, ties by id ascending (NaN: not sorted). */
static bool nextok_sorted(const llama_token_data_array *cur)
{
    for (size_t i = 1; i < cur->size; i++) {
        const llama_token_data *a = &cur->data[i - 1], *b = &cur->data[i];
        if (!(a->logit > b->logit || (a->logit == b->logit && a->id < b->id))) return false;
    }
    return true;
}

/* Copy llama.cpp's full row (data[i].id == i for all i < n_vocab) into x->row.
 * False, early, for any other array. */
static bool gather_row(struct nl_ctx *x, const llama_token_data_array *cur)
{
    if (cur->size != (size_t)x->n_vocab) return false;
    const llama_token_data *d = cur->data;
    float *row = x->row;
    for (int32_t i = 0; i < x->n_vocab; i++) {
        if (d[i].id != i) return false;
        row[i] = d[i].logit;
    }
    return true;
}

/* p = softmax of the survivors' logits, computed as nextok_chain_probs does. */
static void softmax(llama_token_data_array *cur)
{
    if (cur->size == 0) return;
    float m = cur->data[0].logit;
    for (size_t i = 1; i < cur->size && !cur->sorted; i++)
        if (cur->data[i].logit > m) m = cur->data[i].logit;
    double sum = 0.0;
    for (size_t i = 0; i < cur->size; i++) sum += exp((double)cur->data[i].logit - m);
    for (size_t i = 0; i < cur->size; i++)
        cur->data[i].p = (float)(exp((double)cur->data[i].logit - m) / sum);
}

/* The fallback pick of a failed terminal apply: the highest logit that is
 * not NaN, the first of equals; 0 if all are NaN; -1 if there is none. */
static int64_t fallback_pick(const llama_token_data_array *cur)
{
    int64_t best = cur->size ? 0 : -1;
    float m = NAN;
    for (size_t i = 0; i < cur->size; i++) {
        const float l = cur->data[i].logit;
        if (!isnan(l) && (isnan(m) || l > m)) m = l, best = (int64_t)i;
    }
    return best;
}

/* ---- the two paths ----------------------------------------------------------- */

/* Fused: the gathered row through nextok_chain_probs, whose survivors (sorted
 * by p) are written over the array. Nothing is written on failure. */
static nextok_status run_fused(struct nl_ctx *x, llama_token_data_array *cur)
{
    size_t n = 0;
    int32_t tok = -1;
    struct nextok_token_data *out = (struct nextok_token_data *)cur->data;
    const nextok_status rc =
        nextok_chain_probs(x->chain, x->row, NEXTOK_DTYPE_F32, out, cur->size, &n, &tok);
    if (rc != NEXTOK_OK) return rc;
    cur->size = n;
    cur->selected = -1;
    for (size_t i = 0; i < n && tok >= 0; i++)
        if (cur->data[i].id == tok) cur->selected = (int64_t)i;
    cur->sorted = nextok_sorted(cur);
    return NEXTOK_OK;
}

/* Plain: nextok_chain_apply on the array itself, after dropping a `sorted`
 * that is not nextok's. Unchanged on failure. */
static nextok_status run_plain(struct nl_ctx *x, llama_token_data_array *cur)
{
    struct nextok_token_data_array a = {(struct nextok_token_data *)cur->data, cur->size, -1,
                                        cur->sorted && nextok_sorted(cur)};
    const nextok_status rc = nextok_chain_apply(x->chain, &a);
    if (rc != NEXTOK_OK) return rc;
    cur->size = a.size;
    cur->selected = a.selected;
    cur->sorted = a.sorted;
    if (x->params.mode == NEXTOK_LLAMA_FILTER) softmax(cur);
    return NEXTOK_OK;
}

/* ---- the llama_sampler_i members ---------------------------------------------- */

static const char *nl_name(const struct llama_sampler *smpl)
{
    (void)smpl;
    return "nextok";
}

static void nl_accept(struct llama_sampler *smpl, llama_token token)
{
    struct nl_ctx *x = ctx_of(smpl);
    const nextok_status rc = nextok_chain_accept(x->chain, token);
    if (rc != NEXTOK_OK) record(x, rc, "accept", NULL);
}

static void nl_apply(struct llama_sampler *smpl, llama_token_data_array *cur)
{
    struct nl_ctx *x = ctx_of(smpl);
    nextok_status rc;
    if (!cur->data && cur->size > 0) {
        rc = NEXTOK_ERR_INVALID_ARG;
        record(x, rc, "apply", "cur_p->data is NULL");
    } else {
        const bool fused = !x->wide && gather_row(x, cur);
        rc = fused ? run_fused(x, cur) : run_plain(x, cur);
        if (rc != NEXTOK_OK) record(x, rc, "apply", NULL);
    }
    if (rc == NEXTOK_OK) {
        x->wide = cur->size > (size_t)x->n_vocab / 32;
        if (x->params.mode == NEXTOK_LLAMA_FILTER) {
            cur->selected = -1;
        } else if (cur->selected < 0 || (size_t)cur->selected >= cur->size) {
            /* unreachable with a selector last (checked at init) */
            record(x, NEXTOK_ERR_INTERNAL, "apply", "the chain selected no token");
            cur->selected = fallback_pick(cur);
        }
        return;
    }
    const bool pick = x->params.mode == NEXTOK_LLAMA_TERMINAL &&
                      x->params.on_error == NEXTOK_LLAMA_ON_ERROR_GREEDY;
    cur->selected = pick && cur->data ? fallback_pick(cur) : -1;
}

static void nl_reset(struct llama_sampler *smpl)
{
    struct nl_ctx *x = ctx_of(smpl);
    nextok_chain_reset(x->chain);
    x->status = NEXTOK_OK;
    x->n_errors = 0;
    x->errmsg[0] = '\0';
}

static void ctx_free(struct nl_ctx *x)
{
    if (!x) return;
    nextok_chain_free(x->chain);
    free(x->row);
    free(x);
}

/* A context around chain (owned on success only). */
static struct nl_ctx *ctx_new(struct nextok_chain *chain,
                              const struct nextok_llama_sampler_params *p)
{
    struct nl_ctx *x = (struct nl_ctx *)calloc(1, sizeof *x);
    if (!x) return NULL;
    x->n_vocab = nextok_chain_n_vocab(chain);
    x->row = (float *)malloc((size_t)x->n_vocab * sizeof *x->row);
    if (!x->row) {
        free(x);
        return NULL;
    }
    x->chain = chain;
    x->params = *p;
    x->status = NEXTOK_OK;
    return x;
}

/* A new context with a clone of x's chain and x's settings; NULL (recorded
 * on rec) on failure. */
static struct nl_ctx *ctx_clone(struct nl_ctx *x, struct nl_ctx *rec, const char *what)
{
    struct nextok_chain *c = NULL;
    nextok_status rc = nextok_chain_clone(x->chain, &c);
    if (rc != NEXTOK_OK) {
        record(rec, rc, what, nextok_chain_errmsg(x->chain));
        return NULL;
    }
    struct nl_ctx *y = ctx_new(c, &x->params);
    if (!y) {
        nextok_chain_free(c);
        record(rec, NEXTOK_ERR_NOMEM, what, "out of memory");
        return NULL;
    }
    y->wide = x->wide;
    return y;
}

static struct llama_sampler *nl_clone(const struct llama_sampler *smpl)
{
    struct nl_ctx *x = ctx_of(smpl);
    struct nl_ctx *y = ctx_clone(x, x, "clone");
    if (!y) return NULL;
    struct llama_sampler *s = wrap(y);
    if (!s) {
        ctx_free(y);
        record(x, NEXTOK_ERR_NOMEM, "clone", "out of memory");
    }
    return s;
}

static void nl_free(struct llama_sampler *smpl)
{
    ctx_free(ctx_of(smpl));
    smpl->ctx = NULL;
}

static void nl_copy_state(const struct llama_sampler *src, struct llama_sampler *dst)
{
    struct nl_ctx *d = ctx_of(dst);
    struct nl_ctx *y = ctx_clone(ctx_of(src), d, "copy_state");
    if (!y) return;
    y->status = d->status; /* dst's record of failures is dst's */
    y->n_errors = d->n_errors;
    memcpy(y->errmsg, d->errmsg, sizeof y->errmsg);
    ctx_free(d);
    dst->ctx = y;
}

/* Every member set: what llama.cpp calls without a NULL check (name, apply,
 * clone) and what carries state (accept, reset, free, copy_state); the
 * backend group NULL: this sampler runs on the CPU, after llama.cpp's
 * backend prefix of a chain (llama.cpp checks each backend_* for NULL). */
static struct llama_sampler_i nl_iface = {
    /* .name              = */ nl_name,
    /* .accept            = */ nl_accept,
    /* .apply             = */ nl_apply,
    /* .reset             = */ nl_reset,
    /* .clone             = */ nl_clone,
    /* .free              = */ nl_free,
    /* .backend_init      = */ NULL,
    /* .backend_accept    = */ NULL,
    /* .backend_apply     = */ NULL,
    /* .backend_set_input = */ NULL,
    /* .backend_reset     = */ NULL,
    /* .copy_state        = */ nl_copy_state,
};

static struct llama_sampler *wrap(struct nl_ctx *x) { return llama_sampler_init(&nl_iface, x); }

/* ---- public functions ------------------------------------------------------ */

struct nextok_llama_sampler_params nextok_llama_sampler_default_params(void)
{
    struct nextok_llama_sampler_params p;
    memset(&p, 0, sizeof p);
    p.mode = NEXTOK_LLAMA_TERMINAL;
    p.on_error = NEXTOK_LLAMA_ON_ERROR_GREEDY;
    return p;
}

/* nextok's selectors, by nextok_sampler_name. */
static bool is_selector(const struct nextok_sampler *s)
{
    static const char *const names[] = {"greedy", "dist", "gumbel", "mirostat", "mirostat-v2"};
    const char *n = nextok_sampler_name(s);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(n, names[i]) == 0) return true;
    return false;
}

static nextok_status check_chain(const struct nextok_chain *chain,
                                 const struct nextok_llama_sampler_params *p, char *msg, size_t cap)
{
    if (!chain) return snprintf(msg, cap, "chain: must be non-NULL"), NEXTOK_ERR_INVALID_ARG;
    if ((unsigned)p->mode > NEXTOK_LLAMA_FILTER)
        return snprintf(msg, cap, "mode: unknown value %d", (int)p->mode), NEXTOK_ERR_INVALID_ARG;
    if ((unsigned)p->on_error > NEXTOK_LLAMA_ON_ERROR_NONE)
        return snprintf(msg, cap, "on_error: unknown value %d", (int)p->on_error),
               NEXTOK_ERR_INVALID_ARG;
    const size_t n = nextok_chain_n(chain);
    if (n == 0) return snprintf(msg, cap, "chain: has no samplers"), NEXTOK_ERR_INVALID_ARG;
    if (p->mode == NEXTOK_LLAMA_TERMINAL) {
        const struct nextok_sampler *last = nextok_chain_get(chain, n - 1);
        if (!is_selector(last))
            return snprintf(msg, cap,
                            "chain: terminal mode needs a selector last (greedy, dist, gumbel, "
                            "mirostat, mirostat-v2), got '%s' (use filter mode)",
                            nextok_sampler_name(last)),
                   NEXTOK_ERR_INVALID_ARG;
        return NEXTOK_OK;
    }
    for (size_t i = 0; i < n; i++) {
        const struct nextok_sampler *s = nextok_chain_get(chain, i);
        if (is_selector(s))
            return snprintf(msg, cap,
                            "chain: filter mode takes no selector, got '%s' at %zu (use terminal "
                            "mode, or leave it to a llama.cpp sampler after this one)",
                            nextok_sampler_name(s), i),
                   NEXTOK_ERR_INVALID_ARG;
    }
    return NEXTOK_OK;
}

struct llama_sampler *nextok_llama_sampler_init(struct nextok_chain *chain,
                                                const struct nextok_llama_sampler_params *params,
                                                struct nextok_error *err)
{
    const struct nextok_llama_sampler_params def = nextok_llama_sampler_default_params();
    const struct nextok_llama_sampler_params *p = params ? params : &def;
    char msg[NEXTOK_ERRMSG_MAX];
    const nextok_status rc = check_chain(chain, p, msg, sizeof msg);
    if (rc != NEXTOK_OK) {
        set_err(err, rc, msg);
        return NULL;
    }
    struct nl_ctx *x = ctx_new(chain, p);
    if (!x) {
        set_err(err, NEXTOK_ERR_NOMEM, "out of memory");
        return NULL;
    }
    struct llama_sampler *smpl = wrap(x);
    if (!smpl) {
        x->chain = NULL; /* the caller keeps it */
        ctx_free(x);
        set_err(err, NEXTOK_ERR_NOMEM, "out of memory");
    }
    return smpl;
}

struct llama_sampler *
nextok_llama_sampler_init_sampling(const struct nextok_sampling_params *sp,
                                   const struct nextok_llama_sampler_params *params,
                                   struct nextok_error *err)
{
    const struct nextok_llama_sampler_params def = nextok_llama_sampler_default_params();
    const struct nextok_llama_sampler_params *p = params ? params : &def;
    if (sp && p->mode == NEXTOK_LLAMA_FILTER && sp->mirostat != 0) {
        set_err(err, NEXTOK_ERR_INVALID_ARG,
                "mirostat: a selector with state; filter mode takes no selector");
        return NULL;
    }
    struct nextok_chain *c = NULL;
    if (nextok_chain_init_sampling(&c, sp, err) != NEXTOK_OK) return NULL;
    if (p->mode == NEXTOK_LLAMA_FILTER) { /* the profile's selector is last */
        const size_t n = nextok_chain_n(c);
        if (n > 0 && is_selector(nextok_chain_get(c, n - 1)))
            nextok_sampler_free(nextok_chain_remove(c, n - 1));
        if (nextok_chain_n(c) == 0) { /* nothing left to run: an empty filter */
            nextok_chain_free(c);
            set_err(err, NEXTOK_ERR_INVALID_ARG,
                    "filter mode: these parameters leave no stage besides the selector");
            return NULL;
        }
    }
    struct llama_sampler *smpl = nextok_llama_sampler_init(c, p, err);
    if (!smpl) nextok_chain_free(c);
    return smpl;
}

/* The nextok sampler smpl runs alone (smpl, or a llama.cpp chain of just it). */
static struct nl_ctx *alone(struct llama_sampler *smpl)
{
    struct nl_ctx *x = ctx_of(smpl);
    if (x || !smpl || !llama_sampler_chain_get(smpl, -1) || llama_sampler_chain_n(smpl) != 1)
        return x;
    return ctx_of(llama_sampler_chain_get(smpl, 0));
}

/* The highest logit that is not NaN, the first of equals; 0 if all are NaN. */
static llama_token row_pick(const float *row, int32_t n)
{
    llama_token best = 0;
    float m = NAN;
    for (int32_t i = 0; i < n; i++)
        if (!isnan(row[i]) && (isnan(m) || row[i] > m)) m = row[i], best = i;
    return best;
}

llama_token nextok_llama_sampler_sample(struct llama_sampler *smpl, struct llama_context *ctx,
                                        int32_t idx)
{
    struct nl_ctx *x = alone(smpl);
    /* what llama_sampler_sample looks at first: a backend's token, probs or logits */
    if (!x || x->params.mode != NEXTOK_LLAMA_TERMINAL || !ctx ||
        llama_get_sampled_token_ith(ctx, idx) != LLAMA_TOKEN_NULL ||
        llama_get_sampled_probs_ith(ctx, idx) || llama_get_sampled_logits_ith(ctx, idx) ||
        llama_vocab_n_tokens(llama_model_get_vocab(llama_get_model(ctx))) != x->n_vocab)
        return llama_sampler_sample(smpl, ctx, idx);
    const float *row = llama_get_logits_ith(ctx, idx);
    if (!row) return llama_sampler_sample(smpl, ctx, idx); /* it reports the bad idx */
    llama_token tok = LLAMA_TOKEN_NULL;
    const nextok_status rc = nextok_chain_sample(x->chain, row, NEXTOK_DTYPE_F32, &tok);
    if (rc != NEXTOK_OK) {
        record(x, rc, "apply", NULL);
        if (x->params.on_error == NEXTOK_LLAMA_ON_ERROR_NONE) return LLAMA_TOKEN_NULL;
        tok = row_pick(row, x->n_vocab);
    }
    llama_sampler_accept(smpl, tok);
    return tok;
}

struct llama_sampler *nextok_llama_sampler_find(struct llama_sampler *smpl)
{
    if (!smpl || ctx_of(smpl)) return smpl;
    /* llama_sampler_chain_get returns NULL for a sampler that is not a chain */
    if (!llama_sampler_chain_get(smpl, -1)) return NULL;
    const int n = llama_sampler_chain_n(smpl);
    for (int i = 0; i < n; i++) {
        struct llama_sampler *s = llama_sampler_chain_get(smpl, i);
        if (ctx_of(s)) return s;
    }
    return NULL;
}

struct nextok_chain *nextok_llama_sampler_chain(struct llama_sampler *smpl)
{
    struct nl_ctx *x = ctx_of(smpl);
    return x ? x->chain : NULL;
}

nextok_status nextok_llama_sampler_status(const struct llama_sampler *smpl)
{
    const struct nl_ctx *x = ctx_of(smpl);
    return x ? x->status : NEXTOK_ERR_INVALID_ARG;
}

const char *nextok_llama_sampler_errmsg(const struct llama_sampler *smpl)
{
    const struct nl_ctx *x = ctx_of(smpl);
    return x ? x->errmsg : "not a nextok sampler";
}

uint64_t nextok_llama_sampler_n_errors(const struct llama_sampler *smpl)
{
    const struct nl_ctx *x = ctx_of(smpl);
    return x ? x->n_errors : 0;
}

void nextok_llama_sampler_clear_error(struct llama_sampler *smpl)
{
    struct nl_ctx *x = ctx_of(smpl);
    if (!x) return;
    x->status = NEXTOK_OK;
    x->errmsg[0] = '\0';
}
