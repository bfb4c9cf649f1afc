/*
 * A push to the stop matcher: the token criteria (eos, stop ids, stop
 * sequences, max/min tokens), then the text criteria (stop strings and the
 * stop regex) on the held bytes + the new text. A push copies that window
 * into the caller's output buffer, decides there, and commits its state only
 * once nothing can fail.
 */
#include "stop_internal.h"

#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* Token criteria                                                            */
/* ------------------------------------------------------------------------ */

static int32_t index_of(const int32_t *v, size_t n, int32_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x) return (int32_t)i;
    return -1;
}

/* Do the last k tokens of (ring, then `token` unless NEXTOK_NO_TOKEN) equal seq[0..k)? */
static bool ring_ends_with(const struct nextok_stop *s, int32_t token, const int32_t *seq, size_t k)
{
    size_t from_ring = k;
    if (token != NEXTOK_NO_TOKEN) {
        if (seq[k - 1] != token) return false;
        from_ring = k - 1;
    }
    if (from_ring > s->st.ring_n) return false;
    const int32_t *tail = s->st.ring_ids + s->st.ring_n - from_ring;
    return memcmp(tail, seq, from_ring * sizeof *seq) == 0;
}

/* Longest stop sequence that ends with `token`; -1 if none. */
static int32_t seq_match(const struct nextok_stop *s, int32_t token, size_t *len)
{
    int32_t best = -1;
    *len = 0;
    for (size_t j = 0; j < s->n_seqs; j++) {
        size_t lj = s->seq_off[j + 1] - s->seq_off[j];
        if (lj > *len && ring_ends_with(s, token, s->seq_ids + s->seq_off[j], lj)) {
            best = (int32_t)j;
            *len = lj;
        }
    }
    return best;
}

/* Longest token suffix that is a proper prefix of a stop sequence. */
static size_t seq_partial(const struct nextok_stop *s, int32_t token)
{
    size_t best = 0;
    for (size_t j = 0; j < s->n_seqs; j++) {
        size_t lj = s->seq_off[j + 1] - s->seq_off[j];
        for (size_t k = lj - 1; k > best; k--)
            if (ring_ends_with(s, token, s->seq_ids + s->seq_off[j], k)) {
                best = k;
                break;
            }
    }
    return best;
}

/* Absolute offset where the text of the k-th last token (of ring + token) starts. */
static uint64_t seq_text_start(const struct nextok_stop *s, int32_t token, size_t k)
{
    if (token != NEXTOK_NO_TOKEN) {
        if (k == 1) return s->st.total;
        k--;
    }
    return s->st.ring_start[s->st.ring_n - k];
}

static bool is_gated(const struct nextok_stop *s, int32_t n_tok)
{
    return s->min_tokens > 0 && n_tok <= s->min_tokens;
}

/* One push being decided; written to the matcher only at commit. */
struct stop_step {
    int32_t  token;
    int32_t  n_tok;
    bool     gated, final;
    uint32_t row;
    enum nextok_finish finish;
    int32_t  which;
    uint64_t seq_start;  /* STOP_SEQUENCE: where its text starts (absolute) */
    size_t   release;    /* bytes of the window released                    */
    size_t   hold;       /* bytes of the window held (0 once finished)      */
};

/* Does token t stop by itself (eos, stop id, stop sequence)? Sets sp->which. */
static enum nextok_finish token_stop(const struct nextok_stop *s, int32_t t, struct stop_step *sp)
{
    size_t len = 0;
    sp->which = s->ignore_eos ? -1 : index_of(s->eog, s->n_eog, t);
    if (sp->which >= 0) return NEXTOK_FINISH_EOS;
    sp->which = index_of(s->stop_ids, s->n_stop_ids, t);
    if (sp->which >= 0) return NEXTOK_FINISH_STOP_TOKEN;
    sp->which = seq_match(s, t, &len);
    if (sp->which < 0) return NEXTOK_FINISH_NONE;
    sp->seq_start = seq_text_start(s, t, len);
    return NEXTOK_FINISH_STOP_SEQUENCE;
}

/* Token criteria in their order; gated tokens can only end by max_tokens. */
static void token_criteria(const struct nextok_stop *s, struct stop_step *sp)
{
    sp->finish = NEXTOK_FINISH_NONE;
    sp->which = -1;
    if (sp->token == NEXTOK_NO_TOKEN) return;
    if (!sp->gated) sp->finish = token_stop(s, sp->token, sp);
    if (sp->finish == NEXTOK_FINISH_NONE && s->max_tokens > 0 && sp->n_tok >= s->max_tokens) {
        sp->finish = NEXTOK_FINISH_LENGTH;
        sp->which = -1;
    }
}

enum nextok_finish nextok__stop_token_finish(const struct nextok_stop *s, int32_t token)
{
    if (!s || s->st.ended || token < 0) return NEXTOK_FINISH_NONE;
    struct stop_step sp = {.token = token, .n_tok = s->st.n_tokens + 1};
    sp.gated = is_gated(s, sp.n_tok);
    token_criteria(s, &sp);
    return sp.finish;
}

/* ------------------------------------------------------------------------ */
/* Text criteria                                                             */
/* ------------------------------------------------------------------------ */

struct text_match {
    enum nextok_finish kind; /* NONE, STOP_STRING or STOP_REGEX */
    int32_t which;
    size_t  start, end;      /* window offsets                  */
    size_t  rx_hold;         /* bytes a partial regex match needs */
};

static void string_match(const struct nextok_stop *s, struct stop_step *sp, const char *w,
                         size_t held, size_t len, struct text_match *m)
{
    if (!s->has_ac) return;
    size_t e = nextok__ac_scan(&s->ac, &sp->row, (const unsigned char *)w + held, len);
    if (e == SIZE_MAX) return;
    uint32_t state = sp->row >> s->ac.shift;
    m->kind = NEXTOK_FINISH_STOP_STRING;
    m->which = s->ac.match[state];
    m->end = held + e;
    m->start = m->end - s->ac.match_len[state];
}

static nextok_status regex_match(struct nextok_stop *s, const struct stop_step *sp, const char *w,
                                 size_t n, struct text_match *m)
{
    if (!s->rx) return NEXTOK_OK;
    bool have_string = m->kind == NEXTOK_FINISH_STOP_STRING;
    size_t limit = have_string ? m->end : n;
    bool partial = !have_string && !sp->final;
    enum nextok__rx_outcome o;
    size_t rs = 0, re = 0;
    char msg[160];
    nextok_status rc = nextok__rx_search(s->rx, w, limit, partial, &o, &rs, &re, msg, sizeof msg);
    if (rc != NEXTOK_OK) {
        snprintf(s->errmsg, sizeof s->errmsg, "stop regex: %s", msg);
        return rc;
    }
    /* the match that ends first wins; a tie goes to the stop string */
    if (o == NEXTOK__RX_MATCH && (!have_string || re < m->end)) {
        m->kind = NEXTOK_FINISH_STOP_REGEX;
        m->which = -1;
        m->start = rs;
        m->end = re;
    } else if (o == NEXTOK__RX_PARTIAL) {
        m->rx_hold = n - rs;
    }
    return NEXTOK_OK;
}

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

/* Bytes to hold after an unfinished push of window size n. */
static size_t hold_after(const struct nextok_stop *s, const struct stop_step *sp, size_t n,
                         const struct text_match *m)
{
    size_t h = s->has_ac ? s->ac.depth[sp->row >> s->ac.shift] : 0;
    size_t capped = min_sz(m->rx_hold, s->max_hold);
    size_t k = s->n_seqs ? seq_partial(s, sp->token) : 0;
    if (k) {
        size_t seq_bytes = (size_t)(s->st.emitted + n - seq_text_start(s, sp->token, k));
        capped = max_sz(capped, min_sz(seq_bytes, s->max_hold));
    }
    return min_sz(min_sz(max_sz(h, capped), s->hold_cap), n);
}

/* Decide what of the window w[0..n) is released (held = s->st.held bytes of it are old). */
static void decide(const struct nextok_stop *s, struct stop_step *sp, size_t n,
                   const struct text_match *m)
{
    sp->hold = 0;
    if (m->kind != NEXTOK_FINISH_NONE) {
        sp->finish = m->kind;
        sp->which = m->which;
        sp->release = s->include_stop ? m->end : m->start;
        return;
    }
    switch (sp->finish) {
    case NEXTOK_FINISH_EOS:
    case NEXTOK_FINISH_STOP_TOKEN:
        sp->release = s->include_stop ? n : s->st.held;
        return;
    case NEXTOK_FINISH_STOP_SEQUENCE:
        sp->release = s->include_stop ? n
                    : sp->seq_start > s->st.emitted ? (size_t)(sp->seq_start - s->st.emitted) : 0;
        return;
    default:
        break;
    }
    sp->hold = sp->final || sp->gated ? 0 : hold_after(s, sp, n, m);
    sp->release = n - sp->hold;
}

/* ------------------------------------------------------------------------ */
/* Push                                                                      */
/* ------------------------------------------------------------------------ */

static void ring_push(struct nextok_stop *s, int32_t token, uint64_t start)
{
    if (s->seq_max == 0) return;
    if (s->st.ring_n == s->seq_max) {
        size_t keep = s->st.ring_n - 1;
        memmove(s->st.ring_ids, s->st.ring_ids + 1, keep * sizeof *s->st.ring_ids);
        memmove(s->st.ring_start, s->st.ring_start + 1, keep * sizeof *s->st.ring_start);
        s->st.ring_n--;
    }
    s->st.ring_ids[s->st.ring_n] = token;
    s->st.ring_start[s->st.ring_n] = start;
    s->st.ring_n++;
}

static void commit(struct nextok_stop *s, const struct stop_step *sp, const char *w, size_t n,
                   size_t len)
{
    if (sp->token != NEXTOK_NO_TOKEN && !sp->gated) ring_push(s, sp->token, s->st.total);
    s->st.n_tokens = sp->n_tok;
    s->st.row = sp->row;
    s->st.total += len;
    s->st.emitted = s->st.total - sp->hold;
    s->st.held = sp->hold;
    if (sp->hold) memcpy(s->st.hold, w + n - sp->hold, sp->hold);
    if (sp->finish != NEXTOK_FINISH_NONE || sp->final) {
        s->st.ended = true;
        s->st.finish = sp->finish;
        s->st.which = sp->which;
    }
}

static nextok_status push_check(struct nextok_stop *s, int32_t token, const char *text, size_t len,
                                enum nextok_stop_directive directive,
                                const struct nextok_text_out *out)
{
    if (!s) return NEXTOK_ERR_INVALID_ARG;
    const char *bad = NULL;
    if (!text && len) bad = "text: NULL with len > 0";
    else if (!out || (!out->dst && out->size)) bad = "out: NULL";
    else if (token < NEXTOK_NO_TOKEN)
        bad = "token: negative id (use NEXTOK_NO_TOKEN for text alone)";
    else if (directive != NEXTOK_STOP_CONTINUE && directive != NEXTOK_STOP_END)
        bad = "directive: unknown value";
    if (bad) {
        snprintf(s->errmsg, sizeof s->errmsg, "%s", bad);
        return NEXTOK_ERR_INVALID_ARG;
    }
    if (s->st.ended) {
        snprintf(s->errmsg, sizeof s->errmsg, "push after the end (finish: %s); reset first",
                 nextok_finish_name(s->st.finish));
        return NEXTOK_ERR_STATE;
    }
    if (out->pos > out->size || out->size - out->pos < s->st.held + len) {
        snprintf(s->errmsg, sizeof s->errmsg, "out: %zu bytes free, %zu needed",
                 out->pos > out->size ? (size_t)0 : out->size - out->pos, s->st.held + len);
        return NEXTOK_ERR_BUFFER_TOO_SMALL;
    }
    return NEXTOK_OK;
}

nextok_status nextok_stop_push(struct nextok_stop *s, int32_t token, const char *text, size_t len,
                               enum nextok_stop_directive directive, struct nextok_text_out *out,
                               struct nextok_stop_result *res)
{
    NEXTOK_FORWARD(push_check(s, token, text, len, directive, out));
    /* the window: held bytes, then the new text, decided in place */
    char *w = out->dst + out->pos;
    size_t n = s->st.held + len;
    if (len) memmove(w + s->st.held, text, len);
    if (s->st.held) memcpy(w, s->st.hold, s->st.held);

    struct stop_step sp = {.token = token, .row = s->st.row};
    sp.n_tok = s->st.n_tokens + (token != NEXTOK_NO_TOKEN);
    sp.gated = is_gated(s, sp.n_tok);
    token_criteria(s, &sp);
    sp.final = sp.finish != NEXTOK_FINISH_NONE || directive == NEXTOK_STOP_END;

    struct text_match m = {.kind = NEXTOK_FINISH_NONE, .which = -1};
    if (!sp.gated) {
        string_match(s, &sp, w, s->st.held, len, &m);
        NEXTOK_FORWARD(regex_match(s, &sp, w, n, &m));
    }
    decide(s, &sp, n, &m);
    commit(s, &sp, w, n, len);
    out->pos += sp.release;
    if (res) *res = (struct nextok_stop_result){s->st.finish, s->st.which, s->st.held};
    return NEXTOK_OK;
}
