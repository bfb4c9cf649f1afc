/*
 * A session: chain + detokenizer + stop matcher, one step per token.
 *
 * A failed step must change nothing: the detokenizer's state (a small value,
 * nextok__detok_save) and the stop matcher's (nextok__stop_state_copy) are
 * saved before a step and restored if it fails, without allocating.
 */
#include "../text/detok_internal.h"
#include "../text/stop_internal.h"

#include <stdio.h>

struct nextok_session {
    struct nextok__mem mem; /* everything the session makes           */
    const struct nextok_vocab *vocab;
    int32_t n_text_ids;            /* ids with a token in the vocabulary       */
    struct nextok_decode_params decode;
    struct nextok_chain *chain;
    struct nextok_detok *detok;
    struct nextok_stop *stop;
    struct nextok__stop_state saved;

    char  *raw;                    /* detokenizer output of one step          */
    size_t raw_cap;
    char  *text;                   /* released text of one step (+ NUL)       */
    size_t text_cap;

    bool   logprobs;
    size_t top_n;
    enum nextok_logprobs_source lp_source;
    struct nextok_logprob *lp;     /* top_n, from the chain                   */
    struct nextok_top_logprob *top;/* top_n, with token bytes                 */

    bool   started;                /* a step was made since init/reset        */
    bool   grammar_done;           /* ended because the grammar was complete  */
    char   errmsg[NEXTOK_ERRMSG_MAX];
};

struct nextok_session_params nextok_session_default_params(void)
{
    struct nextok_session_params p;
    memset(&p, 0, sizeof p);
    p.logprobs_source = NEXTOK_LOGPROBS_RAW;
    return p;
}

static nextok_status fail(struct nextok_session *s, nextok_status rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static nextok_status fail(struct nextok_session *s, nextok_status rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nextok__vfmt(s->errmsg, sizeof s->errmsg, fmt, ap);
    va_end(ap);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Construction                                                              */
/* ------------------------------------------------------------------------ */

static bool has_id(const int32_t *v, size_t n, int32_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

/* Add ids in [0, n_vocab) not yet in set[0..*n). */
static void add_ids(int32_t *set, size_t *n, const int32_t *ids, size_t k, int32_t n_vocab)
{
    for (size_t i = 0; i < k; i++)
        if (ids[i] >= 0 && ids[i] < n_vocab && !has_id(set, *n, ids[i])) set[(*n)++] = ids[i];
}

/* Everything min_tokens must suppress: end-of-generation ids (unless they do
 * not stop anyway) and stop token ids, within the logits row. */
static int32_t *gated_ids(const struct nextok__mem *mem, const struct nextok_stop_params *sp,
                          const struct nextok_sampling_params *smp, size_t *n)
{
    size_t cap = sp->n_eog + sp->n_stop_ids + smp->n_eog;
    int32_t *set = nextok__alloc_array(mem, cap ? cap : 1, sizeof *set);
    *n = 0;
    if (!set) return NULL;
    if (!sp->ignore_eos) add_ids(set, n, sp->eog_ids, sp->n_eog, smp->n_vocab);
    add_ids(set, n, sp->stop_ids, sp->n_stop_ids, smp->n_vocab);
    if (!sp->ignore_eos) add_ids(set, n, smp->eog_ids, smp->n_eog, smp->n_vocab);
    return set;
}

/* The session's allocator as a hook for the parts it builds. */
static struct nextok_allocator hook_of(const struct nextok__mem *m)
{
    return (struct nextok_allocator){m->alloc, m->realloc, m->free, m->user};
}

static nextok_status build_chain(struct nextok_session *s, const struct nextok_session_params *p,
                                 const struct nextok_stop_params *sp, struct nextok_error *err)
{
    struct nextok_sampling_params smp = *p->sampling;
    size_t n_gated = 0;
    int32_t *ids = gated_ids(&s->mem, sp, p->sampling, &n_gated);
    if (!ids) return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory building a session");
    const struct nextok_allocator a = hook_of(&s->mem);
    smp.min_tokens = sp->min_tokens;
    smp.eog_ids = ids;
    smp.n_eog = n_gated;
    smp.allocator = &a; /* the session's, not the sampling params' */
    smp.token_bitmask |= p->grammar != NULL;
    nextok_status rc = nextok_chain_init_sampling(&s->chain, &smp, err);
    nextok__free(&s->mem, ids);
    if (rc != NEXTOK_OK || !p->grammar) return rc;
    NEXTOK_RETURN_IF(nextok_compiled_grammar_n_vocab(p->grammar) > smp.n_vocab, err,
                     NEXTOK_ERR_VOCAB_SIZE, "grammar: its vocabulary has %d tokens, n_vocab is %d",
                     nextok_compiled_grammar_n_vocab(p->grammar), smp.n_vocab);
    struct nextok_matcher *m = NULL;
    NEXTOK_FORWARD(nextok_matcher_init(&m, p->grammar, err));
    struct nextok_mask_source src;
    nextok_matcher_mask_source(m, &src);
    rc = nextok_chain_set_mask_source(s->chain, &src);
    if (rc != NEXTOK_OK) {
        nextok_matcher_free(m);
        return nextok__err(err, rc, "grammar: %s", nextok_chain_errmsg(s->chain));
    }
    return NEXTOK_OK;
}

static nextok_status alloc_buffers(struct nextok_session *s)
{
    s->raw_cap = nextok_detok_bound(s->detok, 1);
    if (s->raw_cap == SIZE_MAX || s->raw_cap > SIZE_MAX / 2 - s->stop->hold_cap)
        return NEXTOK_ERR_NOMEM;
    s->text_cap = s->stop->hold_cap + s->raw_cap + 1;
    s->raw = nextok__alloc(&s->mem, s->raw_cap ? s->raw_cap : 1);
    s->text = nextok__alloc(&s->mem, s->text_cap);
    s->lp = nextok__calloc(&s->mem, s->top_n ? s->top_n : 1, sizeof *s->lp);
    s->top = nextok__calloc(&s->mem, s->top_n ? s->top_n : 1, sizeof *s->top);
    if (!s->raw || !s->text || !s->lp || !s->top) return NEXTOK_ERR_NOMEM;
    return nextok__stop_state_alloc(s->stop, &s->saved);
}

static nextok_status check_params(const struct nextok_session_params *p, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!p->sampling, err, NEXTOK_ERR_INVALID_ARG, "sampling: NULL");
    NEXTOK_RETURN_IF(!p->vocab, err, NEXTOK_ERR_INVALID_ARG, "vocab: NULL");
    NEXTOK_RETURN_IF(p->logprobs_source != NEXTOK_LOGPROBS_RAW &&
                         p->logprobs_source != NEXTOK_LOGPROBS_PROCESSED,
                     err, NEXTOK_ERR_INVALID_ARG, "logprobs_source: unknown value %d",
                     (int)p->logprobs_source);
    NEXTOK_RETURN_IF(p->sampling->n_vocab > 0 && p->top_logprobs > (size_t)p->sampling->n_vocab,
                     err, NEXTOK_ERR_INVALID_ARG, "top_logprobs: %zu is more than n_vocab %d",
                     p->top_logprobs, (int)p->sampling->n_vocab);
    return NEXTOK_OK;
}

/* The stop params the session uses: the caller's, with the vocabulary's
 * end-of-generation ids when none were given. */
static struct nextok_stop_params stop_params(const struct nextok_session_params *p)
{
    struct nextok_stop_params sp = p->stop ? *p->stop : nextok_stop_default_params();
    if (!sp.eog_ids && sp.n_eog == 0) sp.eog_ids = nextok_vocab_eog_ids(p->vocab, &sp.n_eog);
    if (sp.min_tokens <= 0) sp.min_tokens = p->sampling->min_tokens;
    return sp;
}

static nextok_status build(struct nextok_session *s, const struct nextok_session_params *p,
                           struct nextok_error *err)
{
    const struct nextok_allocator a = hook_of(&s->mem);
    struct nextok_stop_params sp = stop_params(p);
    sp.allocator = &a;
    s->vocab = p->vocab;
    s->n_text_ids = nextok_vocab_n_tokens(p->vocab);
    s->decode = p->decode ? *p->decode : nextok_decode_default_params();
    s->decode.allocator = &a;
    s->logprobs = p->logprobs;
    s->top_n = p->top_logprobs;
    s->lp_source = p->logprobs_source;
    NEXTOK_FORWARD(nextok_stop_init(&s->stop, &sp, err));
    NEXTOK_FORWARD(build_chain(s, p, &sp, err));
    nextok_status rc = nextok_detok_init(&s->detok, p->vocab, &s->decode, err);
    s->decode.allocator = NULL; /* a was this call's */
    NEXTOK_FORWARD(rc);
    if (alloc_buffers(s) != NEXTOK_OK)
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory allocating session buffers");
    return NEXTOK_OK;
}

nextok_status nextok_session_init(struct nextok_session **out,
                                  const struct nextok_session_params *params,
                                  struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !params, err, NEXTOK_ERR_INVALID_ARG,
                     "out and params must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(check_params(params, err));
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, params->allocator, err));
    struct nextok_session *s = nextok__calloc(&mem, 1, sizeof *s);
    if (!s) return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory allocating a session");
    s->mem = mem;
    nextok_status rc = build(s, params, err);
    if (rc != NEXTOK_OK) {
        nextok_session_free(s);
        return rc;
    }
    *out = s;
    return NEXTOK_OK;
}

void nextok_session_free(struct nextok_session *s)
{
    if (!s) return;
    const struct nextok__mem mem = s->mem;
    nextok_chain_free(s->chain);
    nextok_detok_free(s->detok);
    if (s->stop) nextok__stop_state_free(s->stop, &s->saved);
    nextok_stop_free(s->stop);
    nextok__free(&mem, s->raw);
    nextok__free(&mem, s->text);
    nextok__free(&mem, s->lp);
    nextok__free(&mem, s->top);
    nextok__free(&mem, s);
}

const char *nextok_session_errmsg(const struct nextok_session *s) { return s ? s->errmsg : ""; }

int32_t nextok_session_n_tokens(const struct nextok_session *s)
{
    return s ? nextok_stop_n_tokens(s->stop) : 0;
}

struct nextok_chain *nextok_session_chain(const struct nextok_session *s)
{
    return s ? s->chain : NULL;
}

void nextok_session_reset(struct nextok_session *s)
{
    if (!s) return;
    nextok_chain_reset(s->chain);
    nextok_detok_reset(s->detok);
    nextok_stop_reset(s->stop);
    s->started = false;
    s->grammar_done = false;
    s->errmsg[0] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Detokenizer                                                               */
/* ------------------------------------------------------------------------ */

/* Decode token (if it has text) into s->raw; then flush if `last`. */
static nextok_status decode_step(struct nextok_session *s, struct nextok_detok *d, int32_t token,
                                 bool last, size_t *n)
{
    size_t a = 0, b = 0;
    *n = 0;
    if (token >= 0 && token < s->n_text_ids)
        NEXTOK_FORWARD(nextok_detok_feed(d, &token, 1, s->raw, s->raw_cap, &a));
    if (last) NEXTOK_FORWARD(nextok_detok_flush(d, s->raw + a, s->raw_cap - a, &b));
    *n = a + b;
    return NEXTOK_OK;
}

/* ------------------------------------------------------------------------ */
/* Steps                                                                     */
/* ------------------------------------------------------------------------ */

static void result_init(struct nextok_step_result *res, int32_t token)
{
    memset(res, 0, sizeof *res);
    res->token = token;
    res->text = "";
    res->finish = NEXTOK_FINISH_NONE;
    res->which = -1;
    res->logprob = NAN;
}

static nextok_status fill_logprobs(struct nextok_session *s, const void *logits,
                                   enum nextok_dtype dtype, int32_t token,
                                   struct nextok_step_result *res)
{
    if (!s->logprobs && s->top_n == 0) return NEXTOK_OK;
    size_t n_top = 0;
    float lp = NAN;
    int32_t rank = 0;
    nextok_status rc = nextok_chain_logprobs(s->chain, s->lp_source, logits, dtype, token, s->top_n,
                                             s->lp, &n_top, &lp, &rank);
    if (rc != NEXTOK_OK)
        return fail(s, rc, "logprobs: %s", nextok_chain_errmsg(s->chain));
    for (size_t i = 0; i < n_top; i++) {
        struct nextok_top_logprob *t = &s->top[i];
        t->id = s->lp[i].id;
        t->logprob = s->lp[i].logprob;
        t->bytes = nextok_vocab_token_bytes(s->vocab, t->id, &t->len);
        if (!t->bytes) t->bytes = "";
    }
    if (s->logprobs) {
        res->logprob = lp;
        res->rank = rank;
    }
    res->top = s->top;
    res->n_top = n_top;
    return NEXTOK_OK;
}

static nextok_status step_check(struct nextok_session *s)
{
    if (s->stop->st.ended)
        return fail(s, NEXTOK_ERR_STATE, "generation has ended (finish: %s); reset to start again",
                    nextok_finish_name(s->grammar_done ? NEXTOK_FINISH_GRAMMAR
                                                       : nextok_stop_finish(s->stop, NULL)));
    return NEXTOK_OK;
}

/* Decode and run the stop rules for token (NEXTOK_NO_TOKEN: flush only), then
 * commit with accept() if given. Undoes detokenizer and stop on failure. */
static nextok_status advance(struct nextok_session *s, int32_t token, bool last,
                             enum nextok_stop_directive directive, struct nextok_step_result *res)
{
    size_t n_raw;
    struct nextok__dstate dsaved;
    nextok__detok_save(s->detok, &dsaved);
    nextok_status rc = decode_step(s, s->detok, token, last, &n_raw);
    if (rc != NEXTOK_OK) {
        nextok__detok_restore(s->detok, &dsaved);
        return fail(s, rc, "detokenizer: %s", nextok_detok_errmsg(s->detok));
    }
    nextok__stop_state_copy(s->stop, &s->saved, &s->stop->st);
    struct nextok_text_out out = {s->text, s->text_cap - 1, 0};
    struct nextok_stop_result sr;
    rc = nextok_stop_push(s->stop, token, s->raw, n_raw, directive, &out, &sr);
    if (rc == NEXTOK_OK && token != NEXTOK_NO_TOKEN) {
        rc = nextok_chain_accept(s->chain, token);
        if (rc != NEXTOK_OK) {
            fail(s, rc, "accept: %s", nextok_chain_errmsg(s->chain));
            nextok__stop_state_copy(s->stop, &s->stop->st, &s->saved);
        }
    } else if (rc != NEXTOK_OK) {
        fail(s, rc, "stop: %s", nextok_stop_errmsg(s->stop));
    }
    if (rc != NEXTOK_OK) {
        nextok__detok_restore(s->detok, &dsaved);
        return rc;
    }
    s->text[out.pos] = '\0';
    res->text = s->text;
    res->text_len = out.pos;
    res->finish = sr.finish;
    res->which = sr.which;
    return NEXTOK_OK;
}

/* Whether the grammar (if the chain has one) is complete once token is
 * accepted: tried on the matcher and rolled back (the chain accepts it for
 * real in advance()). */
static bool grammar_complete_after(struct nextok_session *s, int32_t token)
{
    struct nextok_matcher *m = nextok_mask_source_matcher(nextok_chain_mask_source(s->chain));
    if (!m || nextok_matcher_accept_token(m, token, NULL) != NEXTOK_OK) return false;
    bool done = nextok_matcher_is_complete(m);
    (void)nextok_matcher_rollback(m, 1, NULL);
    return done;
}

nextok_status nextok_session_step(struct nextok_session *s, const void *logits,
                                  enum nextok_dtype dtype, struct nextok_step_result *res)
{
    if (!s) return NEXTOK_ERR_INVALID_ARG;
    if (!logits || !res) return fail(s, NEXTOK_ERR_INVALID_ARG, "logits and res must be non-NULL");
    NEXTOK_FORWARD(step_check(s));
    struct nextok_step_result r;
    int32_t token = -1;
    nextok_status rc = nextok_chain_sample(s->chain, logits, dtype, &token);
    if (rc != NEXTOK_OK) return fail(s, rc, "sampling: %s", nextok_chain_errmsg(s->chain));
    result_init(&r, token);
    NEXTOK_FORWARD(fill_logprobs(s, logits, dtype, token, &r));
    bool done = grammar_complete_after(s, token);
    bool last = done || nextok__stop_token_finish(s->stop, token) != NEXTOK_FINISH_NONE;
    NEXTOK_FORWARD(advance(s, token, last, done ? NEXTOK_STOP_END : NEXTOK_STOP_CONTINUE, &r));
    if (done && r.finish == NEXTOK_FINISH_NONE) r.finish = NEXTOK_FINISH_GRAMMAR;
    s->grammar_done = r.finish == NEXTOK_FINISH_GRAMMAR;
    s->started = true;
    *res = r;
    return NEXTOK_OK;
}

nextok_status nextok_session_finish(struct nextok_session *s, struct nextok_step_result *res)
{
    if (!s) return NEXTOK_ERR_INVALID_ARG;
    if (!res) return fail(s, NEXTOK_ERR_INVALID_ARG, "res must be non-NULL");
    NEXTOK_FORWARD(step_check(s));
    struct nextok_step_result r;
    result_init(&r, -1);
    NEXTOK_FORWARD(advance(s, NEXTOK_NO_TOKEN, true, NEXTOK_STOP_END, &r));
    s->started = true;
    *res = r;
    return NEXTOK_OK;
}

nextok_status nextok_session_set_token_bitmask(struct nextok_session *s, const int32_t *words,
                                               size_t n_words)
{
    if (!s) return NEXTOK_ERR_INVALID_ARG;
    const nextok_status rc = nextok_chain_set_token_bitmask(s->chain, words, n_words);
    if (rc != NEXTOK_OK) return fail(s, rc, "token bitmask: %s", nextok_chain_errmsg(s->chain));
    return NEXTOK_OK;
}

nextok_status nextok_session_set_prompt(struct nextok_session *s, const int32_t *ids, size_t n)
{
    if (!s) return NEXTOK_ERR_INVALID_ARG;
    if (s->started)
        return fail(s, NEXTOK_ERR_STATE, "set_prompt: only before the first step (reset first)");
    nextok_status rc = nextok_chain_set_prompt(s->chain, ids, n);
    if (rc != NEXTOK_OK) return fail(s, rc, "prompt: %s", nextok_chain_errmsg(s->chain));
    nextok_detok_reset(s->detok);
    if (n == 0) return NEXTOK_OK;
    /* decode the last prompt token and drop its text: the output continues it */
    size_t m;
    if (decode_step(s, s->detok, ids[n - 1], true, &m) != NEXTOK_OK)
        return fail(s, NEXTOK_ERR_INTERNAL, "prompt: %s", nextok_detok_errmsg(s->detok));
    return NEXTOK_OK;
}

/* The parts of a clone; on failure the message is on the original (the
 * caller has no other handle to read it from). */
static nextok_status clone_parts(const struct nextok_session *s, struct nextok_session *d)
{
    struct nextok_session *m = (struct nextok_session *)s;
    nextok_status rc = nextok_chain_clone(s->chain, &d->chain);
    if (rc != NEXTOK_OK) return fail(m, rc, "clone: chain: %s", nextok_chain_errmsg(s->chain));
    rc = nextok_detok_clone(s->detok, &d->detok);
    if (rc != NEXTOK_OK)
        return fail(m, rc, "clone: detokenizer: %s", nextok_detok_errmsg(s->detok));
    rc = nextok_stop_clone(s->stop, &d->stop);
    if (rc != NEXTOK_OK) return fail(m, rc, "clone: stop: %s", nextok_stop_errmsg(s->stop));
    if (alloc_buffers(d) != NEXTOK_OK)
        return fail(m, NEXTOK_ERR_NOMEM, "clone: out of memory allocating session buffers");
    return NEXTOK_OK;
}

nextok_status nextok_session_clone(const struct nextok_session *s, struct nextok_session **out)
{
    if (!s || !out) return NEXTOK_ERR_INVALID_ARG;
    *out = NULL;
    struct nextok_session *d = nextok__calloc(&s->mem, 1, sizeof *d);
    if (!d) return fail((struct nextok_session *)s, NEXTOK_ERR_NOMEM, "clone: out of memory");
    *d = *s;
    d->chain = NULL;
    d->detok = NULL;
    d->stop = NULL;
    d->raw = d->text = NULL;
    d->lp = NULL;
    d->top = NULL;
    memset(&d->saved, 0, sizeof d->saved);
    d->errmsg[0] = '\0';
    nextok_status rc = clone_parts(s, d);
    if (rc != NEXTOK_OK) {
        nextok_session_free(d);
        return rc;
    }
    *out = d;
    return NEXTOK_OK;
}
