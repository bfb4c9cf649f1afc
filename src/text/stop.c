/*
 * Stop criteria: end-of-generation and stop token ids, stop token sequences,
 * max/min tokens, stop strings (one Aho–Corasick DFA, stop_ac.c) and a stop
 * regex (stop_regex.c). This file builds, clones and answers queries on the
 * matcher; stop_push.c decides each push. The matcher owns a holdback buffer
 * sized at init.
 */
#include "stop_internal.h"

#include <stdio.h>

/* Largest max_hold accepted: the holdback buffer is allocated at init. */
#define STOP_MAX_HOLD_LIMIT ((size_t)1 << 20)

const char *nextok_finish_name(enum nextok_finish f)
{
    switch (f) {
    case NEXTOK_FINISH_NONE:          return "none";
    case NEXTOK_FINISH_EOS:           return "eos";
    case NEXTOK_FINISH_STOP_TOKEN:    return "stop_token";
    case NEXTOK_FINISH_STOP_SEQUENCE: return "stop_sequence";
    case NEXTOK_FINISH_STOP_STRING:   return "stop_string";
    case NEXTOK_FINISH_STOP_REGEX:    return "stop_regex";
    case NEXTOK_FINISH_LENGTH:        return "length";
    case NEXTOK_FINISH_GRAMMAR:       return "grammar";
    }
    return "unknown";
}

struct nextok_stop_params nextok_stop_default_params(void)
{
    struct nextok_stop_params p;
    memset(&p, 0, sizeof p);
    p.max_hold = NEXTOK_STOP_DEFAULT_MAX_HOLD;
    return p;
}

/* ------------------------------------------------------------------------ */
/* Construction                                                              */
/* ------------------------------------------------------------------------ */

static nextok_status check_ids(const int32_t *ids, size_t n, const char *name,
                               struct nextok_error *err)
{
    NEXTOK_RETURN_IF(n > 0 && !ids, err, NEXTOK_ERR_INVALID_ARG, "%s: NULL with count %zu", name,
                     n);
    for (size_t i = 0; i < n; i++)
        NEXTOK_RETURN_IF(ids[i] < 0, err, NEXTOK_ERR_TOKEN_RANGE, "%s[%zu]: negative token id %d",
                         name, i, (int)ids[i]);
    return NEXTOK_OK;
}

static nextok_status check_strings(const struct nextok_stop_params *p, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(p->n_strings > 0 && !p->strings, err, NEXTOK_ERR_INVALID_ARG,
                     "strings: NULL with n_strings %zu", p->n_strings);
    size_t total = 0;
    for (size_t i = 0; i < p->n_strings; i++) {
        NEXTOK_RETURN_IF(!p->strings[i], err, NEXTOK_ERR_INVALID_ARG, "strings[%zu]: NULL", i);
        size_t len = p->string_lens ? p->string_lens[i] : strlen(p->strings[i]);
        NEXTOK_RETURN_IF(len == 0, err, NEXTOK_ERR_INVALID_ARG,
                         "strings[%zu]: empty stop string (it would stop at once)", i);
        NEXTOK_RETURN_IF(len > NEXTOK_STOP_MAX_BYTES - total, err, NEXTOK_ERR_INVALID_ARG,
                         "strings: more than NEXTOK_STOP_MAX_BYTES (%d) bytes in all",
                         NEXTOK_STOP_MAX_BYTES);
        total += len;
    }
    return NEXTOK_OK;
}

static nextok_status check_seqs(const struct nextok_stop_params *p, struct nextok_error *err)
{
    if (p->n_seqs == 0) return NEXTOK_OK;
    NEXTOK_RETURN_IF(!p->seq_ids || !p->seq_off, err, NEXTOK_ERR_INVALID_ARG,
                     "seq_ids/seq_off: NULL with n_seqs %zu", p->n_seqs);
    for (size_t i = 0; i < p->n_seqs; i++)
        NEXTOK_RETURN_IF(p->seq_off[i + 1] <= p->seq_off[i], err, NEXTOK_ERR_INVALID_ARG,
                         "seq_off[%zu..%zu]: sequence %zu is empty or offsets decrease", i,
                         i + 1, i);
    size_t n = p->seq_off[p->n_seqs] - p->seq_off[0];
    return check_ids(p->seq_ids + p->seq_off[0], n, "seq_ids", err);
}

static nextok_status check_params(const struct nextok_stop_params *p, struct nextok_error *err)
{
    NEXTOK_FORWARD(check_strings(p, err));
    NEXTOK_FORWARD(check_ids(p->eog_ids, p->n_eog, "eog_ids", err));
    NEXTOK_FORWARD(check_ids(p->stop_ids, p->n_stop_ids, "stop_ids", err));
    NEXTOK_FORWARD(check_seqs(p, err));
    NEXTOK_RETURN_IF(p->max_hold > STOP_MAX_HOLD_LIMIT, err, NEXTOK_ERR_INVALID_ARG,
                     "max_hold: at most %zu, got %zu", STOP_MAX_HOLD_LIMIT, p->max_hold);
    NEXTOK_RETURN_IF(p->max_tokens > 0 && p->min_tokens > p->max_tokens, err,
                     NEXTOK_ERR_INVALID_ARG, "min_tokens: %d is more than max_tokens %d",
                     (int)p->min_tokens, (int)p->max_tokens);
    return NEXTOK_OK;
}

/* Copy the stop strings (so names outlive the caller's arrays). */
static nextok_status copy_strings(struct nextok_stop *s, const struct nextok_stop_params *p)
{
    s->n_strings = p->n_strings;
    s->strings = nextok__calloc(&s->mem, p->n_strings ? p->n_strings : 1, sizeof *s->strings);
    s->string_lens =
        nextok__calloc(&s->mem, p->n_strings ? p->n_strings : 1, sizeof *s->string_lens);
    if (!s->strings || !s->string_lens) return NEXTOK_ERR_NOMEM;
    size_t longest = 0;
    for (size_t i = 0; i < p->n_strings; i++) {
        size_t len = p->string_lens ? p->string_lens[i] : strlen(p->strings[i]);
        s->string_lens[i] = len;
        s->strings[i] = nextok__memdup(&s->mem, p->strings[i], len);
        if (!s->strings[i]) return NEXTOK_ERR_NOMEM;
        if (len > longest) longest = len;
    }
    s->hold_cap = longest ? longest - 1 : 0;
    return NEXTOK_OK;
}

static nextok_status copy_ids(struct nextok_stop *s, const struct nextok_stop_params *p)
{
    s->n_eog = p->n_eog;
    s->n_stop_ids = p->n_stop_ids;
    s->n_seqs = p->n_seqs;
    s->eog = nextok__memdup(&s->mem, p->eog_ids, p->n_eog * sizeof *s->eog);
    s->stop_ids = nextok__memdup(&s->mem, p->stop_ids, p->n_stop_ids * sizeof *s->stop_ids);
    s->seq_off = nextok__calloc(&s->mem, p->n_seqs + 1, sizeof *s->seq_off);
    size_t base = p->n_seqs ? p->seq_off[0] : 0;
    size_t n_ids = p->n_seqs ? p->seq_off[p->n_seqs] - base : 0;
    s->seq_ids =
        nextok__memdup(&s->mem, p->n_seqs ? p->seq_ids + base : NULL, n_ids * sizeof *s->seq_ids);
    if (!s->eog || !s->stop_ids || !s->seq_off || !s->seq_ids) return NEXTOK_ERR_NOMEM;
    for (size_t i = 0; i <= p->n_seqs && p->n_seqs; i++) s->seq_off[i] = p->seq_off[i] - base;
    for (size_t i = 0; i < p->n_seqs; i++) {
        size_t len = s->seq_off[i + 1] - s->seq_off[i];
        if (len > s->seq_max) s->seq_max = len;
    }
    return NEXTOK_OK;
}

/* The state's buffers. The holdback buffer: stop strings need longest - 1
 * bytes; the regex and sequences are capped at max_hold. */
static nextok_status alloc_hold(struct nextok_stop *s, const struct nextok_stop_params *p)
{
    s->max_hold = p->max_hold ? p->max_hold : NEXTOK_STOP_DEFAULT_MAX_HOLD;
    bool needs_cap = p->regex || p->n_seqs;
    if (needs_cap && s->max_hold > s->hold_cap) s->hold_cap = s->max_hold;
    return nextok__stop_state_alloc(s, &s->st);
}

static nextok_status build(struct nextok_stop *s, const struct nextok_stop_params *p,
                           struct nextok_error *err)
{
    s->ignore_eos = p->ignore_eos;
    s->include_stop = p->include_stop;
    s->max_tokens = p->max_tokens > 0 ? p->max_tokens : 0;
    s->min_tokens = p->min_tokens > 0 ? p->min_tokens : 0;
    nextok_status rc = copy_strings(s, p);
    if (rc == NEXTOK_OK) rc = copy_ids(s, p);
    if (rc == NEXTOK_OK) rc = alloc_hold(s, p);
    if (rc != NEXTOK_OK) return nextok__err(err, rc, "out of memory building a stop matcher");
    if (p->n_strings) {
        NEXTOK_FORWARD(nextok__ac_build(&s->mem, &s->ac, (const char *const *)s->strings,
                                        s->string_lens, s->n_strings, err));
        s->has_ac = true;
    }
    if (p->regex) {
        s->regex = nextok__memdup(&s->mem, p->regex, strlen(p->regex) + 1);
        if (!s->regex) return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory copying the regex");
        NEXTOK_FORWARD(nextok__rx_init(&s->rx, &s->mem, p->regex, err));
    }
    return NEXTOK_OK;
}

nextok_status nextok_stop_init(struct nextok_stop **out, const struct nextok_stop_params *params,
                               struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !params, err, NEXTOK_ERR_INVALID_ARG,
                     "out and params must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(check_params(params, err));
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, params->allocator, err));
    struct nextok_stop *s = nextok__calloc(&mem, 1, sizeof *s);
    if (!s) return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory allocating a stop matcher");
    s->mem = mem;
    nextok_status rc = build(s, params, err);
    if (rc != NEXTOK_OK) {
        nextok_stop_free(s);
        return rc;
    }
    nextok_stop_reset(s);
    *out = s;
    return NEXTOK_OK;
}

void nextok_stop_free(struct nextok_stop *s)
{
    if (!s) return;
    const struct nextok__mem mem = s->mem;
    nextok__ac_free(&mem, &s->ac);
    nextok__rx_free(s->rx);
    for (size_t i = 0; s->strings && i < s->n_strings; i++) nextok__free(&mem, s->strings[i]);
    nextok__free(&mem, s->strings);
    nextok__free(&mem, s->string_lens);
    nextok__free(&mem, s->regex);
    nextok__free(&mem, s->eog);
    nextok__free(&mem, s->stop_ids);
    nextok__free(&mem, s->seq_ids);
    nextok__free(&mem, s->seq_off);
    nextok__stop_state_free(s, &s->st);
    nextok__free(&mem, s);
}

const char *nextok_stop_errmsg(const struct nextok_stop *s) { return s ? s->errmsg : ""; }

void nextok_stop_reset(struct nextok_stop *s)
{
    if (!s) return;
    s->st.row = 0;
    s->st.n_tokens = 0;
    s->st.total = s->st.emitted = 0;
    s->st.held = 0;
    s->st.ring_n = 0;
    s->st.ended = false;
    s->st.finish = NEXTOK_FINISH_NONE;
    s->st.which = -1;
    s->errmsg[0] = '\0';
}

/* The parameters s was built from, pointing into s (for clone). */
static struct nextok_stop_params params_of(const struct nextok_stop *s)
{
    struct nextok_stop_params p = nextok_stop_default_params();
    p.strings = (const char *const *)s->strings;
    p.string_lens = s->string_lens;
    p.n_strings = s->n_strings;
    p.include_stop = s->include_stop;
    p.regex = s->regex;
    p.max_hold = s->max_hold;
    p.eog_ids = s->eog;
    p.n_eog = s->n_eog;
    p.ignore_eos = s->ignore_eos;
    p.stop_ids = s->stop_ids;
    p.n_stop_ids = s->n_stop_ids;
    p.seq_ids = s->seq_ids;
    p.seq_off = s->seq_off;
    p.n_seqs = s->n_seqs;
    p.max_tokens = s->max_tokens;
    p.min_tokens = s->min_tokens;
    return p;
}

nextok_status nextok__stop_state_alloc(const struct nextok_stop *s, struct nextok__stop_state *st)
{
    memset(st, 0, sizeof *st);
    st->hold = nextok__alloc(&s->mem, s->hold_cap ? s->hold_cap : 1);
    st->ring_ids = nextok__calloc(&s->mem, s->seq_max ? s->seq_max : 1, sizeof *st->ring_ids);
    st->ring_start = nextok__calloc(&s->mem, s->seq_max ? s->seq_max : 1, sizeof *st->ring_start);
    if (st->hold && st->ring_ids && st->ring_start) return NEXTOK_OK;
    nextok__stop_state_free(s, st);
    return NEXTOK_ERR_NOMEM;
}

void nextok__stop_state_free(const struct nextok_stop *s, struct nextok__stop_state *st)
{
    nextok__free(&s->mem, st->hold);
    nextok__free(&s->mem, st->ring_ids);
    nextok__free(&s->mem, st->ring_start);
    memset(st, 0, sizeof *st);
}

void nextok__stop_state_copy(const struct nextok_stop *s, struct nextok__stop_state *dst,
                             const struct nextok__stop_state *src)
{
    (void)s;
    struct nextok__stop_state keep = *dst; /* dst keeps its own buffers */
    *dst = *src;
    dst->hold = keep.hold;
    dst->ring_ids = keep.ring_ids;
    dst->ring_start = keep.ring_start;
    if (src->held) memcpy(dst->hold, src->hold, src->held);
    if (src->ring_n) {
        memcpy(dst->ring_ids, src->ring_ids, src->ring_n * sizeof *src->ring_ids);
        memcpy(dst->ring_start, src->ring_start, src->ring_n * sizeof *src->ring_start);
    }
}

nextok_status nextok_stop_clone(const struct nextok_stop *s, struct nextok_stop **out)
{
    if (!s || !out) return NEXTOK_ERR_INVALID_ARG;
    struct nextok_stop_params p = params_of(s);
    const struct nextok_allocator a = {s->mem.alloc, s->mem.realloc, s->mem.free, s->mem.user};
    p.allocator = &a;
    struct nextok_error e = {NEXTOK_OK, ""};
    nextok_status rc = nextok_stop_init(out, &p, &e);
    if (rc != NEXTOK_OK) {
        /* the message goes on the original: the caller has no other handle */
        struct nextok_stop *m = (struct nextok_stop *)s;
        /* the prefix and as much of the message as fits (a precision, so
         * that -Wformat-truncation sees the cut is meant) */
        snprintf(m->errmsg, sizeof m->errmsg, "clone: %.*s", (int)(sizeof m->errmsg - sizeof "clone: "), e.msg);
        return rc;
    }
    nextok__stop_state_copy(s, &(*out)->st, &s->st);
    return NEXTOK_OK;
}

size_t nextok_stop_out_bound(const struct nextok_stop *s, size_t len)
{
    return s ? s->st.held + len : len;
}

size_t nextok_stop_held(const struct nextok_stop *s) { return s ? s->st.held : 0; }

int32_t nextok_stop_n_tokens(const struct nextok_stop *s) { return s ? s->st.n_tokens : 0; }

enum nextok_finish nextok_stop_finish(const struct nextok_stop *s, int32_t *which)
{
    if (which) *which = s ? s->st.which : -1;
    return s ? s->st.finish : NEXTOK_FINISH_NONE;
}

const char *nextok_stop_string(const struct nextok_stop *s, size_t i, size_t *len)
{
    if (!s || i >= s->n_strings) return NULL;
    if (len) *len = s->string_lens[i];
    return s->strings[i];
}
