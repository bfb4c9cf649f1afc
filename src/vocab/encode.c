/*
 * Text to ids: the encoder object and its pipeline.
 *
 *   text -> added-token split -> per segment: normalizer -> pre-tokenizer
 *        -> per word: BPE (bpe.c) -> ids in the caller's buffer.
 *
 * The vocabulary's description (enc_build.c) is shared read-only; the
 * encoder holds what one call needs (normalizer buffers, the merge loop's
 * arrays, PCRE2 match data), so one encoder per thread and a warm encoder
 * allocates nothing.
 */
#include "vocab_internal.h"

#include "../common/utf8.h"

#include <stdio.h>

struct nextok_encoder {
    const struct nextok_vocab *v;
    struct nextok__mem mem;
    bool parse_special;
    int32_t bos, eos; /* added at the ends, -1: not */
    struct nextok__pre_rx_state *rx;
    struct nextok__buf norm[3];
    struct nextok__bpe_scratch bpe;
    struct nextok__ids out;
    char errmsg[NEXTOK_ERRMSG_MAX];
};

/* ---- errors ---------------------------------------------------------------------- */

static nextok_status fail(struct nextok_encoder *e, nextok_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static nextok_status fail(struct nextok_encoder *e, nextok_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nextok__vfmt(e->errmsg, sizeof e->errmsg, fmt, ap);
    va_end(ap);
    return st;
}

/* Offset of the first byte that is not valid UTF-8, or len. */
static size_t utf8_check(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = nextok__utf8_decode(s + i, len - i, &cp);
        if (!k) return i;
        i += k;
    }
    return len;
}

/* ---- pre-tokenizer: splits, applied in order ---------------------------------------- */

static nextok_status split(struct nextok_encoder *e, int k, const char *s, size_t n);

/* The next match of step p in s[from, n): 1, 0 (none), -1 (matcher error). */
static int next_match(struct nextok_encoder *e, const struct nextok__pre_step *p, const char *s,
                      size_t n, size_t from, size_t *ms, size_t *me)
{
    if (p->op == NEXTOK__PRE_REGEX) return nextok__pre_rx_next(e->rx, p->regex, s, n, from, ms, me);
    const char *hit = nextok__memfind(s + from, n - from, p->a, p->a_len);
    if (!hit) return 0;
    *ms = (size_t)(hit - s);
    *me = *ms + p->a_len;
    if (p->op == NEXTOK__PRE_SPACE_RUNS) /* the whole run is one match */
        while (*me + p->a_len <= n && memcmp(s + *me, p->a, p->a_len) == 0) *me += p->a_len;
    return 1;
}

/* Hand the non-empty piece s[a, b) to the next step. */
static nextok_status piece(struct nextok_encoder *e, int k, const char *s, size_t a, size_t b)
{
    return b > a ? split(e, k + 1, s + a, b - a) : NEXTOK_OK;
}

static nextok_status split_step(struct nextok_encoder *e, int k, const char *s, size_t n)
{
    const struct nextok__pre_step *p = &e->v->enc.pre[k];
    size_t pos = 0, from = 0, ms = 0, me = 0;
    while (from < n) {
        int r = next_match(e, p, s, n, from, &ms, &me);
        if (r < 0)
            return fail(
                e, NEXTOK_ERR_UNSUPPORTED,
                "pre-tokenizer regex: the matcher failed (a resource limit) in a %zu-byte word", n);
        if (r == 0) break;
        if (me == ms) { /* an empty match splits nothing; go on after its character */
            from = ms + nextok__utf8_lead_len((unsigned char)s[ms]);
            continue;
        }
        switch (p->how) {
        case NEXTOK__SPLIT_ISOLATED:
            NEXTOK_FORWARD(piece(e, k, s, pos, ms));
            NEXTOK_FORWARD(piece(e, k, s, ms, me));
            pos = me;
            break;
        case NEXTOK__SPLIT_REMOVED:
            NEXTOK_FORWARD(piece(e, k, s, pos, ms));
            pos = me;
            break;
        case NEXTOK__SPLIT_MERGED_PREV:
            NEXTOK_FORWARD(piece(e, k, s, pos, me));
            pos = me;
            break;
        case NEXTOK__SPLIT_MERGED_NEXT:
            NEXTOK_FORWARD(piece(e, k, s, pos, ms));
            pos = ms;
            break;
        }
        from = me;
    }
    return piece(e, k, s, pos, n);
}

static nextok_status split(struct nextok_encoder *e, int k, const char *s, size_t n)
{
    if (k < e->v->enc.n_pre) return split_step(e, k, s, n);
    enum nextok__merge_by m = e->v->enc.merge_by;
    nextok_status rc =
        m == NEXTOK__MODEL_UNIGRAM     ? nextok__unigram_word(e->v, &e->bpe, s, n, &e->out)
        : m == NEXTOK__MODEL_WORDPIECE ? nextok__wordpiece_word(e->v, &e->bpe, s, n, &e->out)
                                       : nextok__bpe_word(e->v, &e->bpe, s, n, &e->out);
    if (rc == NEXTOK_OK) return rc;
    if (rc == NEXTOK_ERR_NOMEM) return fail(e, rc, "out of memory");
    if (rc == NEXTOK_ERR_INVALID_ARG)
        return fail(e, rc, "text: a word of %zu bytes is too long", n);
    return fail(e, rc,
                "text: a character has no token, no byte token and the vocabulary has no "
                "unknown token");
}

/* One stretch of text between added tokens. */
static nextok_status segment(struct nextok_encoder *e, const char *s, size_t n, bool at_start)
{
    if (n == 0) return NEXTOK_OK;
    const char *t;
    size_t tn;
    nextok_status rc = nextok__normalize(&e->v->enc, s, n, at_start, e->norm, &t, &tn);
    if (rc == NEXTOK_ERR_NOMEM) return fail(e, rc, "out of memory");
    if (rc != NEXTOK_OK) return fail(e, rc, "normalizer: utf8proc refused the text");
    return split(e, 0, t, tn);
}

/* ---- added tokens: leftmost-longest ------------------------------------------------------ */

static bool is_special(const struct nextok_vocab *v, int32_t id)
{
    const struct nextok__tok *t = &v->toks[id];
    return (t->attrs & NEXTOK_TOKEN_ATTR_SPECIAL) || t->type == NEXTOK_TOKEN_TYPE_CONTROL ||
           t->type == NEXTOK_TOKEN_TYPE_UNKNOWN;
}

/* The longest added token that may be split out at s (-1: none). */
static int32_t added_at(const struct nextok_encoder *e, const char *s, size_t n, size_t *len)
{
    const struct nextok__enc *x = &e->v->enc;
    int32_t node = 0, best = -1;
    for (size_t i = 0; i < n; i++) {
        int32_t c = x->trie[node].first;
        while (c >= 0 && x->trie[c].byte != (uint8_t)s[i]) c = x->trie[c].next;
        if (c < 0) break;
        node = c;
        int32_t id = x->trie[c].id;
        if (id >= 0 && (e->parse_special || !is_special(e->v, id))) {
            best = id;
            *len = i + 1;
        }
    }
    return best;
}

static nextok_status encode_text(struct nextok_encoder *e, const char *text, size_t len)
{
    const struct nextok__enc *x = &e->v->enc;
    size_t seg = 0;
    for (size_t i = 0; i < len;) {
        unsigned char b = (unsigned char)text[i];
        size_t m = 0;
        int32_t id =
            (x->trie_first[b >> 3] >> (b & 7)) & 1 ? added_at(e, text + i, len - i, &m) : -1;
        if (id < 0) {
            i++;
            continue;
        }
        NEXTOK_FORWARD(segment(e, text + seg, i - seg, seg == 0));
        nextok__ids_push(&e->out, id);
        i += m;
        seg = i;
    }
    return segment(e, text + seg, len - seg, seg == 0);
}

/* ---- public ----------------------------------------------------------------------------------- */

struct nextok_encode_params nextok_encode_default_params(void)
{
    struct nextok_encode_params p;
    memset(&p, 0, sizeof p);
    p.add_bos = -1;
    p.add_eos = -1;
    return p;
}

/* The id added at one end: -1 for none. INVALID_ARG when asked for one the
 * vocabulary does not have. */
static nextok_status end_id(const struct nextok_vocab *v, int want, bool file_says,
                            enum nextok_vocab_special role, const char *name, int32_t *id,
                            struct nextok_error *err)
{
    NEXTOK_RETURN_IF(want < -1 || want > 1, err, NEXTOK_ERR_INVALID_ARG,
                     "params->add_%s: must be -1 (as the vocabulary says), 0 or 1, got %d", name,
                     want);
    bool add = want < 0 ? file_says : want == 1;
    *id = add ? v->special[role] : -1;
    /* The file asking for a token it does not define adds nothing; the caller asking is an error. */
    NEXTOK_RETURN_IF(want == 1 && *id < 0, err, NEXTOK_ERR_INVALID_ARG,
                     "params->add_%s: the vocabulary has no %s token", name, name);
    return NEXTOK_OK;
}

nextok_status nextok_encoder_init(struct nextok_encoder **out, const struct nextok_vocab *v,
                                  const struct nextok_encode_params *params,
                                  struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!v, err, NEXTOK_ERR_INVALID_ARG, "v: must not be NULL");
    struct nextok_encode_params p = params ? *params : nextok_encode_default_params();
    NEXTOK_RETURN_IF(v->enc.merge_by == NEXTOK__MERGE_NONE, err, NEXTOK_ERR_UNSUPPORTED,
                     "encoding: %s", v->enc.unsupported);
    int32_t bos = -1, eos = -1;
    NEXTOK_FORWARD(end_id(v, p.add_bos, v->add_bos, NEXTOK_VOCAB_BOS, "bos", &bos, err));
    NEXTOK_FORWARD(end_id(v, p.add_eos, v->add_eos, NEXTOK_VOCAB_EOS, "eos", &eos, err));
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, p.allocator, err));
    struct nextok_encoder *e = nextok__calloc(&mem, 1, sizeof *e);
    NEXTOK_RETURN_IF(!e, err, NEXTOK_ERR_NOMEM, "out of memory for the encoder");
    e->mem = mem;
    e->v = v;
    e->parse_special = p.parse_special;
    e->bos = bos;
    e->eos = eos;
    e->norm[0] = nextok__buf_of(&e->mem);
    e->norm[1] = nextok__buf_of(&e->mem);
    e->norm[2] = nextok__buf_of(&e->mem);
    e->bpe.mem = &e->mem;
    e->bpe.mapped = nextok__buf_of(&e->mem);
    if (nextok__pre_rx_state_new(&e->rx, &e->mem, v->enc.rx) != NEXTOK_OK) {
        nextok_encoder_free(e);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory for the encoder");
    }
    *out = e;
    return NEXTOK_OK;
}

void nextok_encoder_free(struct nextok_encoder *e)
{
    if (!e) return;
    const struct nextok__mem mem = e->mem;
    nextok__pre_rx_state_free(&mem, e->rx);
    nextok__buf_free(&e->norm[0]);
    nextok__buf_free(&e->norm[1]);
    nextok__buf_free(&e->norm[2]);
    nextok__bpe_scratch_free(&e->bpe);
    nextok__free(&mem, e);
}

const char *nextok_encoder_errmsg(const struct nextok_encoder *e) { return e ? e->errmsg : ""; }

nextok_status nextok_encoder_encode(struct nextok_encoder *e, const char *text, size_t len,
                                    int32_t *ids, size_t cap, size_t *n_out)
{
    if (!e) return NEXTOK_ERR_INVALID_ARG;
    e->errmsg[0] = '\0';
    if (!text && len) return fail(e, NEXTOK_ERR_INVALID_ARG, "text: NULL with len %zu", len);
    if (!ids && cap) return fail(e, NEXTOK_ERR_INVALID_ARG, "ids: NULL with cap %zu", cap);
    if (!n_out) return fail(e, NEXTOK_ERR_INVALID_ARG, "n_out: must not be NULL");
    size_t bad = utf8_check(text, len);
    if (bad < len) return fail(e, NEXTOK_ERR_INVALID_ARG, "text: invalid UTF-8 at byte %zu", bad);
    e->out = (struct nextok__ids){ids, cap, 0, 0, -1};
    if (e->bos >= 0) nextok__ids_push(&e->out, e->bos);
    NEXTOK_FORWARD(encode_text(e, text ? text : "", len));
    if (e->eos >= 0) nextok__ids_push(&e->out, e->eos);
    *n_out = e->out.n;
    if (e->out.n > cap)
        return fail(e, NEXTOK_ERR_BUFFER_TOO_SMALL, "ids: %zu ids, room for %zu", e->out.n, cap);
    return NEXTOK_OK;
}

nextok_status nextok_vocab_encode(const struct nextok_vocab *v, const char *text, size_t len,
                                  const struct nextok_encode_params *params, int32_t *ids,
                                  size_t cap, size_t *n_out, struct nextok_error *err)
{
    struct nextok_encoder *e;
    NEXTOK_FORWARD(nextok_encoder_init(&e, v, params, err));
    nextok_status rc = nextok_encoder_encode(e, text, len, ids, cap, n_out);
    if (rc != NEXTOK_OK) nextok__err(err, rc, "%s", e->errmsg);
    nextok_encoder_free(e);
    return rc;
}
