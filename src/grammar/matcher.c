/*
 * The matcher: one generation's path through a compiled grammar, as the
 * list of parser states after each accept call (so rollback and reset are
 * a length change, and a clone is a copy of the list). A state's mask is
 * made once (masks.c) and kept with the state in the shared cache.
 */
#include "matcher_internal.h"

#define TERMINATED (-3) /* history entry: an end-of-generation token was accepted */

static nextok_status cache_error(struct nextok__pcache *pc, struct nextok_error *err)
{
    nextok_status rc = pc->failed ? pc->failed : NEXTOK_ERR_INTERNAL;
    pc->failed = NEXTOK_OK;
    return nextok__err(err, rc, "%s", pc->errmsg);
}

static int32_t current(const struct nextok_matcher *m) { return m->hist[m->n_hist - 1]; }

nextok_status nextok_matcher_fill_bitmask(struct nextok_matcher *m, int32_t *words, size_t n_words,
                                          size_t *n_allowed, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m || !words, err, NEXTOK_ERR_INVALID_ARG, "m and words: must not be NULL");
    const struct nextok_compiled_grammar *cg = m->cg;
    NEXTOK_RETURN_IF(n_words < cg->n_words, err, NEXTOK_ERR_INVALID_ARG,
                     "n_words: %zu, the vocabulary needs %zu", n_words, cg->n_words);
    int32_t s = current(m);
    NEXTOK_RETURN_IF(s == TERMINATED, err, NEXTOK_ERR_STATE,
                     "matcher: terminated (an end-of-generation token was accepted)");
    struct nextok__pcache *pc = m->pc;
    pthread_mutex_lock(&pc->lock);
    nextok_status rc = NEXTOK_OK;
    if (!pc->st[s].mask && !nextok__compute_mask(pc, s)) rc = cache_error(pc, err);
    if (rc == NEXTOK_OK) {
        memcpy(words, pc->st[s].mask, cg->n_words * sizeof *words);
        memset(words + cg->n_words, 0, (n_words - cg->n_words) * sizeof *words);
        if (n_allowed) *n_allowed = pc->st[s].n_allowed;
    }
    pthread_mutex_unlock(&pc->lock);
    return rc;
}

/* ---- accepting ------------------------------------------------------------------------ */

/* The state after token id from s (under the lock); DEAD when not allowed. */
static int32_t token_next(struct nextok__pcache *pc, int32_t s, int32_t id)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    int32_t a = NEXTOK__ST_DEAD, b = NEXTOK__ST_DEAD;
    if (cg->tt->kind[id] == NEXTOK__TK_TEXT) {
        const unsigned char *p = (const unsigned char *)cg->tt->tok_bytes + cg->tt->tok_off[id];
        a = nextok__walk_bytes(pc, s, p, cg->tt->tok_off[id + 1] - cg->tt->tok_off[id]);
        if (a == NEXTOK__ST_UNKNOWN) return a;
    }
    if (cg->tt->kind[id] && pc->st[s].has_tokref) b = nextok__pcache_token_step(pc, s, id);
    if (b == NEXTOK__ST_UNKNOWN) return b;
    return nextok__pcache_union(pc, a, b);
}

static nextok_status push(struct nextok_matcher *m, int32_t s, struct nextok_error *err)
{
    if (m->n_hist == m->cap_hist) {
        size_t cap = m->cap_hist * 2;
        int32_t *h = nextok__realloc(&m->cg->mem, m->hist, cap * sizeof *h);
        NEXTOK_RETURN_IF(!h, err, NEXTOK_ERR_NOMEM, "matcher: out of memory");
        m->hist = h;
        m->cap_hist = cap;
    }
    m->hist[m->n_hist++] = s;
    return NEXTOK_OK;
}

/* What a call about one token checks: the id, and that m is not done. *s:
 * the current state. */
static nextok_status token_call(const struct nextok_matcher *m, int32_t token, int32_t *s,
                                struct nextok_error *err)
{
    NEXTOK_RETURN_IF(token < 0 || token >= m->cg->n_vocab, err, NEXTOK_ERR_TOKEN_RANGE,
                     "token %d: outside the vocabulary (%d)", token, m->cg->n_vocab);
    *s = current(m);
    NEXTOK_RETURN_IF(*s == TERMINATED, err, NEXTOK_ERR_STATE,
                     "matcher: terminated (an end-of-generation token was accepted)");
    return NEXTOK_OK;
}

nextok_status nextok_matcher_is_allowed(struct nextok_matcher *m, int32_t token, bool *allowed,
                                        struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m || !allowed, err, NEXTOK_ERR_INVALID_ARG,
                     "m and allowed: must not be NULL");
    int32_t s;
    NEXTOK_FORWARD(token_call(m, token, &s, err));
    struct nextok__pcache *pc = m->pc;
    nextok_status rc = NEXTOK_OK;
    pthread_mutex_lock(&pc->lock);
    if (pc->st[s].mask) {
        *allowed = (pc->st[s].mask[(uint32_t)token >> 5] >> ((uint32_t)token & 31)) & 1;
    } else if (m->cg->tt->kind[token] == NEXTOK__TK_EOG && pc->st[s].accept) {
        *allowed = true;
    } else {
        int32_t t = token_next(pc, s, token);
        if (t == NEXTOK__ST_UNKNOWN)
            rc = cache_error(pc, err);
        else
            *allowed = t >= 0;
    }
    pthread_mutex_unlock(&pc->lock);
    return rc;
}

nextok_status nextok_matcher_accept_token(struct nextok_matcher *m, int32_t token,
                                          struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m, err, NEXTOK_ERR_INVALID_ARG, "m: must not be NULL");
    int32_t s;
    NEXTOK_FORWARD(token_call(m, token, &s, err));
    struct nextok__pcache *pc = m->pc;
    pthread_mutex_lock(&pc->lock);
    int32_t t = m->cg->tt->kind[token] == NEXTOK__TK_EOG && pc->st[s].accept
                    ? TERMINATED
                    : token_next(pc, s, token);
    nextok_status rc = NEXTOK_OK;
    if (t == NEXTOK__ST_UNKNOWN) rc = cache_error(pc, err);
    pthread_mutex_unlock(&pc->lock);
    if (rc != NEXTOK_OK) return rc;
    NEXTOK_RETURN_IF(t == NEXTOK__ST_DEAD, err, NEXTOK_ERR_REJECTED,
                     "token %d: not allowed by the grammar here", token);
    return push(m, t, err);
}

nextok_status nextok_matcher_accept_bytes(struct nextok_matcher *m, const void *bytes, size_t len,
                                          struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m || (!bytes && len), err, NEXTOK_ERR_INVALID_ARG,
                     "m and bytes: must not be NULL");
    int32_t s = current(m);
    NEXTOK_RETURN_IF(s == TERMINATED, err, NEXTOK_ERR_STATE,
                     "matcher: terminated (an end-of-generation token was accepted)");
    struct nextok__pcache *pc = m->pc;
    pthread_mutex_lock(&pc->lock);
    const unsigned char *b = bytes;
    size_t i = 0;
    for (; i < len && s >= 0; i++) s = nextok__pcache_next(pc, s, b[i]);
    nextok_status rc = s == NEXTOK__ST_UNKNOWN ? cache_error(pc, err) : NEXTOK_OK;
    pthread_mutex_unlock(&pc->lock);
    if (rc != NEXTOK_OK) return rc;
    NEXTOK_RETURN_IF(s == NEXTOK__ST_DEAD, err, NEXTOK_ERR_REJECTED,
                     "bytes: byte %zu of %zu leaves the grammar", i, len);
    return push(m, s, err);
}

/* ---- life cycle and queries ------------------------------------------------------------- */

static nextok_status new_matcher(struct nextok_matcher **out,
                                 const struct nextok_compiled_grammar *cg,
                                 struct nextok__pcache *pc, size_t cap, struct nextok_error *err)
{
    struct nextok_matcher *m = nextok__calloc(&cg->mem, 1, sizeof *m);
    int32_t *h = nextok__alloc_array(&cg->mem, cap, sizeof *h);
    if (!m || !h) {
        nextok__free(&cg->mem, m);
        nextok__free(&cg->mem, h);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "matcher: out of memory");
    }
    m->cg = cg, m->pc = pc, m->hist = h, m->cap_hist = cap;
    *out = m;
    return NEXTOK_OK;
}

nextok_status nextok_matcher_init(struct nextok_matcher **out,
                                  const struct nextok_compiled_grammar *cg,
                                  struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !cg, err, NEXTOK_ERR_INVALID_ARG, "out and cg: must not be NULL");
    *out = NULL;
    struct nextok__pcache *pc = NULL;
    NEXTOK_FORWARD(nextok__pcache_new(&pc, cg, err));
    struct nextok_matcher *m = NULL;
    nextok_status rc = new_matcher(&m, cg, pc, 64, err);
    if (rc != NEXTOK_OK) {
        nextok__pcache_release(pc);
        return rc;
    }
    m->hist[m->n_hist++] = pc->start;
    *out = m;
    return NEXTOK_OK;
}

void nextok_matcher_free(struct nextok_matcher *m)
{
    if (!m) return;
    nextok__pcache_release(m->pc);
    nextok__free(&m->cg->mem, m->hist);
    nextok__free(&m->cg->mem, m);
}

nextok_status nextok_matcher_clone(struct nextok_matcher **out, const struct nextok_matcher *m,
                                   struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !m, err, NEXTOK_ERR_INVALID_ARG, "out and m: must not be NULL");
    *out = NULL;
    struct nextok_matcher *c = NULL;
    NEXTOK_FORWARD(new_matcher(&c, m->cg, m->pc, m->cap_hist, err));
    memcpy(c->hist, m->hist, m->n_hist * sizeof *m->hist);
    c->n_hist = m->n_hist;
    pthread_mutex_lock(&m->pc->lock);
    m->pc->refs++;
    pthread_mutex_unlock(&m->pc->lock);
    *out = c;
    return NEXTOK_OK;
}

nextok_status nextok_matcher_rollback(struct nextok_matcher *m, size_t n, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m, err, NEXTOK_ERR_INVALID_ARG, "m: must not be NULL");
    NEXTOK_RETURN_IF(n >= m->n_hist, err, NEXTOK_ERR_INVALID_ARG,
                     "rollback %zu: only %zu steps to undo", n, m->n_hist - 1);
    m->n_hist -= n;
    return NEXTOK_OK;
}

void nextok_matcher_reset(struct nextok_matcher *m)
{
    if (m) m->n_hist = 1;
}

size_t nextok_matcher_n_steps(const struct nextok_matcher *m) { return m ? m->n_hist - 1 : 0; }

bool nextok_matcher_is_terminated(const struct nextok_matcher *m)
{
    return m && current(m) == TERMINATED;
}

bool nextok_matcher_is_accepting(const struct nextok_matcher *m)
{
    if (!m) return false;
    int32_t s = current(m);
    if (s == TERMINATED) return true;
    pthread_mutex_lock(&m->pc->lock);
    bool a = m->pc->st[s].accept;
    pthread_mutex_unlock(&m->pc->lock);
    return a;
}

/* The one byte that continues s, or -1 (none, several, or s may end or
 * take a whole token); *next its state. */
static int only_byte(struct nextok__pcache *pc, int32_t s, int32_t *next)
{
    if (pc->st[s].accept || pc->st[s].has_tokref) return -1;
    int found = -1;
    for (unsigned b = 0; b < 256; b++) {
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) return -2;
        if (t < 0) continue;
        if (found >= 0) return -1;
        found = (int)b, *next = t;
    }
    return found;
}

nextok_status nextok_matcher_forced_bytes(struct nextok_matcher *m, char *out, size_t cap,
                                          size_t *len, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m || !len || (!out && cap), err, NEXTOK_ERR_INVALID_ARG,
                     "m, out and len: must not be NULL");
    *len = 0;
    int32_t s = current(m);
    if (s == TERMINATED) return NEXTOK_OK;
    struct nextok__pcache *pc = m->pc;
    nextok_status rc = NEXTOK_OK;
    pthread_mutex_lock(&pc->lock);
    size_t n = 0;
    while (n < cap) {
        int32_t next = s;
        int b = only_byte(pc, s, &next);
        if (b == -2) rc = cache_error(pc, err);
        if (b < 0) break;
        out[n++] = (char)b;
        s = next;
    }
    pthread_mutex_unlock(&pc->lock);
    if (rc == NEXTOK_OK) *len = n;
    return rc;
}

bool nextok_matcher_is_complete(struct nextok_matcher *m)
{
    if (!m) return false;
    int32_t s = current(m);
    if (s == TERMINATED) return true;
    struct nextok__pcache *pc = m->pc;
    pthread_mutex_lock(&pc->lock);
    bool done = pc->st[s].accept && !pc->st[s].has_tokref;
    for (unsigned b = 0; b < 256 && done; b++) {
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) pc->failed = NEXTOK_OK; /* unknown: say "not complete" */
        done = t == NEXTOK__ST_DEAD;
    }
    pthread_mutex_unlock(&pc->lock);
    return done;
}
