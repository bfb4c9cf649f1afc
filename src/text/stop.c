/*
 * Stop criteria: end-of-generation and stop token ids, stop token sequences,
 * max/min tokens, stop strings (one Aho–Corasick DFA) and a stop regex
 * (stop_regex.c). The matcher owns a holdback buffer
 * sized at init; a push copies held bytes + new text into the caller's output
 * buffer, decides there, and commits its state only once nothing can fail.
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
/* Aho–Corasick                                                              */
/* ------------------------------------------------------------------------ */

#define AC_NONE UINT32_MAX

void nextok__ac_free(const struct nextok__mem *mem, struct nextok__ac *ac)
{
    nextok__free(mem, ac->next);
    nextok__free(mem, ac->depth);
    nextok__free(mem, ac->match);
    nextok__free(mem, ac->match_len);
    memset(ac, 0, sizeof *ac);
}

/* Byte classes: each byte that occurs in a stop string gets its own class,
 * all others share class 0. The class count is rounded up to a power of two
 * so that a row offset turns back into a state with a shift. */
static void ac_classes(struct nextok__ac *ac, const char *const *strs, const size_t *lens, size_t n)
{
    uint32_t n_cls = 1;
    memset(ac->cls, 0, sizeof ac->cls);
    for (size_t i = 0; i < n && n_cls <= 255; i++)
        for (size_t j = 0; j < lens[i] && n_cls <= 255; j++) {
            unsigned char b = (unsigned char)strs[i][j];
            if (!ac->cls[b]) ac->cls[b] = (uint8_t)n_cls++;
        }
    if (n_cls > 255) /* (almost) every byte occurs: one class per byte */
        for (int b = 0; b < 256; b++) ac->cls[b] = (uint8_t)b;
    ac->shift = 0;
    while ((1u << ac->shift) < n_cls) ac->shift++;
    ac->n_cls = 1u << ac->shift;
}

/* Trie with state indices in next[] (AC_NONE: no edge). Returns the state count. */
static uint32_t ac_trie(struct nextok__ac *ac, const char *const *strs, const size_t *lens,
                        size_t n)
{
    uint32_t n_states = 1;
    ac->depth[0] = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = 0;
        for (size_t j = 0; j < lens[i]; j++) {
            uint32_t *e = &ac->next[(size_t)u * ac->n_cls + ac->cls[(unsigned char)strs[i][j]]];
            if (*e == AC_NONE) {
                ac->depth[n_states] = ac->depth[u] + 1;
                *e = n_states++;
            }
            u = *e;
        }
        if (ac->match[u] < 0) { /* duplicates: the first index names the match */
            ac->match[u] = (int32_t)i;
            ac->match_len[u] = (uint32_t)lens[i];
        }
    }
    return n_states;
}

/* Breadth-first: failure links, missing edges filled from the failure state
 * (making a full DFA), and each state's longest stop-string suffix. */
static void ac_links(struct nextok__ac *ac, uint32_t *fail, uint32_t *queue)
{
    const uint32_t nc = ac->n_cls;
    size_t head = 0, tail = 0;
    fail[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t c = 0; c < nc; c++) {
            uint32_t *e = &ac->next[(size_t)u * nc + c];
            uint32_t via_fail = u == 0 ? 0 : ac->next[(size_t)fail[u] * nc + c];
            if (*e == AC_NONE) {
                *e = via_fail;
                continue;
            }
            uint32_t v = *e;
            fail[v] = via_fail;
            if (ac->match[v] < 0) {
                ac->match[v] = ac->match[fail[v]];
                ac->match_len[v] = ac->match_len[fail[v]];
            }
            queue[tail++] = v;
        }
    }
}

/* State indices -> row offsets, with the "ends a stop string" bit. */
static void ac_encode(struct nextok__ac *ac)
{
    const size_t cells = (size_t)ac->n_states * ac->n_cls;
    for (size_t i = 0; i < cells; i++) {
        uint32_t v = ac->next[i];
        ac->next[i] = ((v << ac->shift) << 1) | (ac->match[v] >= 0 ? 1u : 0u);
    }
}

nextok_status nextok__ac_build(const struct nextok__mem *mem, struct nextok__ac *ac,
                               const char *const *strs, const size_t *lens, size_t n,
                               struct nextok_error *err)
{
    memset(ac, 0, sizeof *ac);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += lens[i];
    ac_classes(ac, strs, lens, n);
    size_t max_states = total + 1;
    ac->next = nextok__alloc_array(mem, max_states * ac->n_cls, sizeof *ac->next);
    ac->depth = nextok__alloc_array(mem, max_states, sizeof *ac->depth);
    ac->match = nextok__alloc_array(mem, max_states, sizeof *ac->match);
    ac->match_len = nextok__calloc(mem, max_states, sizeof *ac->match_len);
    uint32_t *fail = nextok__alloc_array(mem, max_states, sizeof *fail);
    uint32_t *queue = nextok__alloc_array(mem, max_states, sizeof *queue);
    if (!ac->next || !ac->depth || !ac->match || !ac->match_len || !fail || !queue) {
        nextok__free(mem, fail);
        nextok__free(mem, queue);
        nextok__ac_free(mem, ac);
        return nextok__err(err, NEXTOK_ERR_NOMEM,
                           "out of memory building the stop-string automaton");
    }
    memset(ac->next, 0xff, max_states * ac->n_cls * sizeof *ac->next);
    for (size_t i = 0; i < max_states; i++) ac->match[i] = -1;
    ac->n_states = ac_trie(ac, strs, lens, n);
    ac_links(ac, fail, queue);
    ac_encode(ac);
    nextok__free(mem, fail);
    nextok__free(mem, queue);
    return NEXTOK_OK;
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
    NEXTOK_RETURN_IF(nextok__mem_resolve(&mem, params->allocator) != NEXTOK_OK, err,
                     NEXTOK_ERR_INVALID_ARG,
                     "allocator: alloc, realloc and free must be all set or all NULL");
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
        snprintf(m->errmsg, sizeof m->errmsg, "clone: %s", e.msg);
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
