/*
 * The Unigram model (SentencePiece's, as HF tokenizers runs it): the
 * segmentation of a word into pieces whose scores sum highest, by Viterbi
 * over the end positions. A character no piece starts with is the unknown
 * token at HF's penalty (the lowest score minus 10), so every position is
 * reached. Ties keep the path found first: starts in order, shorter pieces
 * first, a later path only when strictly better (HF's encode_optimized).
 *
 * Then, as HF: consecutive unknowns fuse into one string; each resulting
 * string is looked up again, and one that is not a token becomes its byte
 * tokens (byte fallback) or the unknown token.
 */
#include "vocab_internal.h"

#include "../common/utf8.h"

#include <math.h>

static nextok_status reserve(struct nextok__bpe_scratch *s, size_t n)
{
    if (n + 1 <= s->lat_cap) return NEXTOK_OK;
    size_t cap = n + 1 < 64 ? 64 : n + 1 + n / 2;
    void *p = nextok__realloc(s->mem, s->lat, cap * sizeof *s->lat);
    if (!p) return NEXTOK_ERR_NOMEM;
    s->lat = p;
    s->lat_cap = cap;
    return NEXTOK_OK;
}

static void relax(struct nextok__lattice *to, double score, int32_t start, int32_t id)
{
    if (to->id >= 0 && !(score > to->score)) return;
    to->score = score;
    to->start = start;
    to->id = id;
}

/* Every piece starting at i (up to the longest piece), and the unknown
 * token for the character at i when no piece is exactly that character. */
static void from(const struct nextok_vocab *v, struct nextok__lattice *lat, const char *w, size_t n,
                 size_t i)
{
    const struct nextok__enc *e = &v->enc;
    size_t ch = nextok__utf8_lead_len((unsigned char)w[i]);
    if (ch > n - i) ch = n - i;
    bool single = false;
    for (size_t end = i + ch; end <= n && end - i <= e->max_piece;) {
        int32_t id = nextok__vocab_lookup(v, w + i, end - i);
        if (id >= 0 && !isnan(e->uscore[id])) {
            relax(&lat[end], lat[i].score + e->uscore[id], (int32_t)i, id);
            if (end - i == ch) single = true;
        }
        if (end == n) break;
        size_t k = nextok__utf8_lead_len((unsigned char)w[end]);
        end += k <= n - end ? k : n - end;
    }
    if (!single) relax(&lat[i + ch], lat[i].score + e->unk_score, (int32_t)i, e->unk);
}

/* A string of the best path as HF's tokenize turns it into ids. */
static nextok_status emit(const struct nextok_vocab *v, const char *t, size_t len,
                          struct nextok__ids *out)
{
    const struct nextok__enc *e = &v->enc;
    int32_t id = nextok__vocab_lookup(v, t, len);
    if (id >= 0 && !isnan(e->uscore[id])) {
        nextok__ids_push(out, id);
        return NEXTOK_OK;
    }
    bool bytes = e->byte_fallback;
    for (size_t j = 0; bytes && j < len; j++) bytes = e->byte_tok[(unsigned char)t[j]] >= 0;
    if (bytes) {
        for (size_t j = 0; j < len; j++) nextok__ids_push(out, e->byte_tok[(unsigned char)t[j]]);
        return NEXTOK_OK;
    }
    if (e->unk < 0) return NEXTOK_ERR_UNSUPPORTED;
    nextok__ids_push(out, e->unk);
    return NEXTOK_OK;
}

nextok_status nextok__unigram_word(const struct nextok_vocab *v, struct nextok__bpe_scratch *s,
                                   const char *w, size_t n, struct nextok__ids *out)
{
    const struct nextok__enc *e = &v->enc;
    if (n == 0) return NEXTOK_OK;
    if (n > (size_t)INT32_MAX / 2) return NEXTOK_ERR_INVALID_ARG;
    if (e->unk < 0) return NEXTOK_ERR_UNSUPPORTED; /* HF: a Unigram model needs its unk_id */
    NEXTOK_FORWARD(reserve(s, n));
    struct nextok__lattice *lat = s->lat;
    for (size_t i = 0; i <= n; i++) lat[i] = (struct nextok__lattice){-INFINITY, -1, -1};
    lat[0].score = 0.0;
    lat[0].id = 0; /* reached */
    for (size_t i = 0; i < n; i++)
        if (lat[i].id >= 0 && (i == 0 || lat[i].start >= 0)) from(v, lat, w, n, i);
    /* Walk back: reuse start to link the path forwards (next end), so the
     * strings come out in order without a second buffer. */
    int32_t next = -1;
    for (int32_t at = (int32_t)n; at > 0;) {
        int32_t st = lat[at].start;
        lat[at].start = next;
        next = at;
        at = st;
    }
    for (int32_t from_at = 0, at = next; at > 0;) {
        int32_t to = at;
        /* HF fuses consecutive unknowns into one string */
        while (lat[to].id == e->unk && lat[to].start > 0 && lat[lat[to].start].id == e->unk)
            to = lat[to].start;
        NEXTOK_FORWARD(emit(v, w + from_at, (size_t)(to - from_at), out));
        from_at = to;
        at = lat[to].start;
    }
    return NEXTOK_OK;
}
