/*
 * Whole-sequence decode and the incremental detokenizer: one engine.
 *
 * The vocabulary already ran the per-token decoder steps, so a token's text
 * is its precomputed piece (or its "first" piece when it is the first token
 * decoded). What is left is a pipeline with O(1) state:
 *   piece bytes -> UTF-8 assembler -> characters -> optional Strip -> output
 * The assembler holds at most 3 bytes of a character that may still complete;
 * a byte that cannot continue it turns the held bytes into one U+FFFD (one per
 * maximal invalid subsequence, like Python's errors="replace" and Rust's
 * from_utf8_lossy, which HF's ByteLevel decoder uses). Decode runs the same
 * pipeline over all ids and flushes, so decode == concat(feed) + flush.
 */
#include "../vocab/vocab_internal.h"
#include "detok_internal.h"

static const char fffd[3] = {'\xEF', '\xBF', '\xBD'};

/* Writes while there is room, counts always (so a failed call reports the
 * size it needed). */
struct sink {
    char  *buf;
    size_t cap;
    size_t n;
};


struct run {
    const struct nextok_vocab *v;
    const struct nextok_decode_params *p;
    struct nextok__dstate *st;
    struct sink out;
};

struct nextok_detok {
    const struct nextok_vocab *v;
    struct nextok_decode_params params; /* params.allocator: NULL (see mem) */
    struct nextok__mem mem;
    struct nextok__dstate st;
    char errmsg[NEXTOK_ERRMSG_MAX];
};

/* ---- output ---------------------------------------------------------------- */

static void put(struct sink *k, const char *s, size_t len)
{
    if (k->n < k->cap) memcpy(k->buf + k->n, s, len < k->cap - k->n ? len : k->cap - k->n);
    k->n += len;
}

/* Output of the current segment; under spaces_between_special_tokens a
 * segment's first byte is preceded by a space when an earlier one wrote. */
static void out_seg(struct run *r, const char *s, size_t len)
{
    struct nextok__dstate *st = r->st;
    if (!st->seg_out) {
        if (r->p->spaces_between_special_tokens && st->any_out) put(&r->out, " ", 1);
        st->seg_out = st->any_out = true;
    }
    put(&r->out, s, len);
}

static bool strip_on(const struct run *r)
{
    return r->v->strip.content_len && !r->st->raw;
}

/* One complete character (or U+FFFD) through the Strip step. */
static void emit_char(struct run *r, const char *c, size_t len)
{
    const struct nextok__strip *sp = &r->v->strip;
    struct nextok__dstate *st = r->st;
    if (strip_on(r)) {
        bool is_c = len == sp->content_len && memcmp(c, sp->content, len) == 0;
        if (st->strip_left && is_c) {
            st->strip_left--;
            return;
        }
        st->strip_left = 0;
        if (sp->stop && is_c && st->held < sp->stop) {
            st->held++; /* might be part of the stripped tail */
            return;
        }
        /* A content char past the `stop` held ones releases the oldest; any
         * other char releases them all. */
        for (; st->held && !is_c; st->held--) out_seg(r, sp->content, sp->content_len);
    }
    out_seg(r, c, len);
}

/* ---- UTF-8 assembler (Unicode 15 table 3-7) ------------------------------------ */

static uint8_t lead_len(uint8_t b)
{
    if (b >= 0xC2 && b <= 0xDF) return 2;
    if (b >= 0xE0 && b <= 0xEF) return 3;
    if (b >= 0xF0 && b <= 0xF4) return 4;
    return 0;
}

static bool continues(const struct nextok__dstate *st, uint8_t b)
{
    uint8_t lo = 0x80, hi = 0xBF;
    if (st->n_pend == 1) {
        switch (st->pend[0]) {
        case 0xE0: lo = 0xA0; break;
        case 0xED: hi = 0x9F; break;
        case 0xF0: lo = 0x90; break;
        case 0xF4: hi = 0x8F; break;
        default: break;
        }
    }
    return b >= lo && b <= hi;
}

static void feed_byte(struct run *r, uint8_t b)
{
    struct nextok__dstate *st = r->st;
    if (st->n_pend) {
        if (continues(st, b)) {
            st->pend[st->n_pend++] = b;
            if (st->n_pend < st->need) return;
            st->n_pend = 0;
            emit_char(r, (const char *)st->pend, st->need);
            return;
        }
        st->n_pend = 0;
        emit_char(r, fffd, 3); /* the held prefix can never complete */
    }
    if (b < 0x80) {
        char c = (char)b;
        emit_char(r, &c, 1);
        return;
    }
    st->need = lead_len(b);
    if (st->need == 0) {
        emit_char(r, fffd, 3);
        return;
    }
    st->pend[0] = b;
    st->n_pend = 1;
}

static void feed_bytes(struct run *r, const char *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        /* Fast path: a run of ASCII with nothing held and no Strip. */
        size_t j = i;
        if (r->st->n_pend == 0 && !strip_on(r))
            while (j < len && (unsigned char)p[j] < 0x80) j++;
        if (j > i) {
            out_seg(r, p + i, j - i);
            i = j;
            continue;
        }
        feed_byte(r, (uint8_t)p[i++]);
    }
}

/* ---- tokens and segments ------------------------------------------------------- */

static void begin_segment(struct run *r, bool raw)
{
    struct nextok__dstate *st = r->st;
    st->started = false;
    st->raw = raw;
    st->seg_out = false;
    st->held = 0;
    st->strip_left = raw ? 0 : r->v->strip.start;
}

/* End of text (or of a segment): a held partial character becomes U+FFFD; a
 * held Strip tail is the end of the text and is dropped. */
static void end_text(struct run *r)
{
    if (r->st->n_pend) {
        r->st->n_pend = 0;
        emit_char(r, fffd, 3);
    }
    r->st->held = 0;
}

static void init_state(struct nextok__dstate *st, const struct nextok_vocab *v)
{
    memset(st, 0, sizeof *st);
    st->strip_left = v->strip.start;
}

/* HF slow tokenizers: an added token is a segment of its own, its stored
 * text as is, and the decoding of the tokens around it starts afresh. */
static void added_segment(struct run *r, const struct nextok__tok *t)
{
    end_text(r);
    begin_segment(r, true);
    feed_bytes(r, nextok__tok_text(r->v, t), t->text_len);
    end_text(r);
    begin_segment(r, false);
}

static void feed_id(struct run *r, int32_t id)
{
    const struct nextok__tok *t = &r->v->toks[id];
    if (t->attrs & NEXTOK_TOKEN_ATTR_ABSENT) return;
    if (r->p->skip_special_tokens && (t->attrs & NEXTOK_TOKEN_ATTR_SPECIAL)) return;
    if (r->p->spaces_between_special_tokens && (t->attrs & NEXTOK_TOKEN_ATTR_ADDED)) {
        added_segment(r, t);
        return;
    }
    bool first = !r->st->started;
    r->st->started = true;
    uint32_t off = first ? t->first_off : t->piece_off;
    uint32_t len = first ? t->first_len : t->piece_len;
    feed_bytes(r, r->v->arena.data + off, len);
}

static size_t held_bytes(const struct nextok__dstate *st, const struct nextok_vocab *v)
{
    return st->n_pend + (size_t)st->held * v->strip.content_len;
}

/* ---- whole-sequence decode --------------------------------------------------------- */

static int64_t bad_id(const struct nextok_vocab *v, const int32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= v->n_tokens) return (int64_t)i;
    return -1;
}

struct nextok_decode_params nextok_decode_default_params(void)
{
    struct nextok_decode_params p;
    memset(&p, 0, sizeof p);
    return p;
}

nextok_status nextok_vocab_decode(const struct nextok_vocab *v, const int32_t *ids, size_t n,
                                  const struct nextok_decode_params *params, char *buf, size_t cap,
                                  size_t *n_out)
{
    if (!v || !n_out || (!ids && n) || (!buf && cap)) return NEXTOK_ERR_INVALID_ARG;
    if (bad_id(v, ids, n) >= 0) return NEXTOK_ERR_TOKEN_RANGE;
    struct nextok_decode_params defaults = nextok_decode_default_params();
    struct nextok__dstate st;
    init_state(&st, v);
    struct run r = {v, params ? params : &defaults, &st, {buf, cap, 0}};
    for (size_t i = 0; i < n; i++) feed_id(&r, ids[i]);
    end_text(&r);
    *n_out = r.out.n;
    return r.out.n > cap ? NEXTOK_ERR_BUFFER_TOO_SMALL : NEXTOK_OK;
}

/* ---- the detokenizer object -------------------------------------------------------- */

static nextok_status set_error(struct nextok_detok *d, nextok_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static nextok_status set_error(struct nextok_detok *d, nextok_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nextok__vfmt(d->errmsg, sizeof d->errmsg, fmt, ap);
    va_end(ap);
    return st;
}

nextok_status nextok_detok_init(struct nextok_detok **out, const struct nextok_vocab *v,
                                const struct nextok_decode_params *params, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!v, err, NEXTOK_ERR_INVALID_ARG, "v: must not be NULL");
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, params ? params->allocator : NULL, err));
    struct nextok_detok *d = nextok__calloc(&mem, 1, sizeof *d);
    NEXTOK_RETURN_IF(!d, err, NEXTOK_ERR_NOMEM, "out of memory creating a detokenizer");
    d->v = v;
    d->params = params ? *params : nextok_decode_default_params();
    d->params.allocator = NULL; /* the caller's struct need not outlive the call */
    d->mem = mem;
    init_state(&d->st, v);
    *out = d;
    return NEXTOK_OK;
}

void nextok_detok_free(struct nextok_detok *d)
{
    if (!d) return;
    const struct nextok__mem mem = d->mem;
    nextok__free(&mem, d);
}

void nextok_detok_reset(struct nextok_detok *d)
{
    if (!d) return;
    init_state(&d->st, d->v);
    d->errmsg[0] = '\0';
}

nextok_status nextok_detok_clone(const struct nextok_detok *d, struct nextok_detok **out)
{
    if (!out) return NEXTOK_ERR_INVALID_ARG;
    *out = NULL;
    if (!d) return NEXTOK_ERR_INVALID_ARG;
    struct nextok_detok *c = nextok__alloc(&d->mem, sizeof *c);
    /* the message goes on the original: the caller has no other handle */
    if (!c) return set_error((struct nextok_detok *)d, NEXTOK_ERR_NOMEM, "clone: out of memory");
    *c = *d;
    c->errmsg[0] = '\0';
    *out = c;
    return NEXTOK_OK;
}

const char *nextok_detok_errmsg(const struct nextok_detok *d) { return d ? d->errmsg : ""; }

size_t nextok_detok_held(const struct nextok_detok *d)
{
    return d ? held_bytes(&d->st, d->v) : 0;
}

/* Per id: a U+FFFD for held bytes, up to 3 output bytes per piece byte, a
 * released Strip tail, and the separators and flushes of an added segment. */
size_t nextok_detok_bound(const struct nextok_detok *d, size_t n_ids)
{
    if (!d) return 0;
    size_t tail = (size_t)d->v->strip.stop * 4;
    size_t per = 3 * (size_t)d->v->max_piece + 8 + tail;
    size_t flush = 3 + tail;
    if (n_ids > (SIZE_MAX - flush) / per) return SIZE_MAX;
    return n_ids * per + flush;
}

static nextok_status check_ids(struct nextok_detok *d, const int32_t *ids, size_t n)
{
    int64_t i = bad_id(d->v, ids, n);
    if (i < 0) return NEXTOK_OK;
    return set_error(d, NEXTOK_ERR_TOKEN_RANGE, "ids[%lld] = %ld: out of range [0, %ld)",
                     (long long)i, (long)ids[i], (long)d->v->n_tokens);
}

/* Run ids (NULL: a flush) all or nothing into buf. */
static nextok_status run_all(struct nextok_detok *d, const int32_t *ids, size_t n, bool flush,
                             char *buf, size_t cap, size_t *n_out)
{
    struct nextok__dstate saved = d->st;
    struct run r = {d->v, &d->params, &d->st, {buf, cap, 0}};
    for (size_t i = 0; i < n; i++) feed_id(&r, ids[i]);
    if (flush) end_text(&r);
    *n_out = r.out.n;
    if (r.out.n <= cap) return NEXTOK_OK;
    d->st = saved;
    return set_error(d, NEXTOK_ERR_BUFFER_TOO_SMALL, "output needs %zu bytes, buffer has %zu",
                     r.out.n, cap);
}

nextok_status nextok_detok_feed(struct nextok_detok *d, const int32_t *ids, size_t n, char *buf,
                                size_t cap, size_t *n_out)
{
    if (!d) return NEXTOK_ERR_INVALID_ARG;
    if (!n_out || (!ids && n) || (!buf && cap))
        return set_error(d, NEXTOK_ERR_INVALID_ARG, "feed: NULL ids, buf or n_out");
    NEXTOK_FORWARD(check_ids(d, ids, n));
    return run_all(d, ids, n, false, buf, cap, n_out);
}

nextok_status nextok_detok_flush(struct nextok_detok *d, char *buf, size_t cap, size_t *n_out)
{
    if (!d) return NEXTOK_ERR_INVALID_ARG;
    if (!n_out || (!buf && cap))
        return set_error(d, NEXTOK_ERR_INVALID_ARG, "flush: NULL buf or n_out");
    return run_all(d, NULL, 0, true, buf, cap, n_out);
}

static bool stream_args_ok(const struct nextok_ids_in *in, const struct nextok_text_out *out)
{
    return in && out && in->pos <= in->size && out->pos <= out->size &&
           (in->src || in->pos == in->size) && (out->dst || out->pos == out->size);
}

/* One step of the stream (an id, or the flush) if its text fits. */
static bool stream_step(struct nextok_detok *d, const int32_t *id, struct nextok_text_out *out)
{
    size_t n;
    char *dst = out->dst ? out->dst + out->pos : NULL;
    if (run_all(d, id, id ? 1 : 0, !id, dst, out->size - out->pos, &n) != NEXTOK_OK) return false;
    out->pos += n;
    return true;
}

nextok_status nextok_detok_stream(struct nextok_detok *d, struct nextok_ids_in *in,
                                  struct nextok_text_out *out, enum nextok_detok_directive directive,
                                  size_t *held)
{
    if (!d) return NEXTOK_ERR_INVALID_ARG;
    if (!stream_args_ok(in, out))
        return set_error(d, NEXTOK_ERR_INVALID_ARG, "stream: bad in/out buffers");
    if (in->pos < in->size) NEXTOK_FORWARD(check_ids(d, in->src + in->pos, in->size - in->pos));
    size_t in0 = in->pos;
    bool flushed = false;
    while (in->pos < in->size && stream_step(d, &in->src[in->pos], out)) in->pos++;
    bool want_flush = directive == NEXTOK_DETOK_END && in->pos == in->size && nextok_detok_held(d);
    if (want_flush) flushed = stream_step(d, NULL, out);
    if (held) *held = nextok_detok_held(d);
    bool stuck = in->pos < in->size || (want_flush && !flushed);
    if (stuck && in->pos == in0 && !flushed) return NEXTOK_ERR_BUFFER_TOO_SMALL;
    d->errmsg[0] = '\0';
    return NEXTOK_OK;
}

void nextok__detok_save(const struct nextok_detok *d, struct nextok__dstate *out) { *out = d->st; }

void nextok__detok_restore(struct nextok_detok *d, const struct nextok__dstate *in) { d->st = *in; }
