/*
 * Decoder steps, applied once per token at load time.
 *
 * HF tokenizers decode a list of token strings by running each decoder's
 * decode_chain over the whole list and joining the result. Every decoder we
 * support is either per token (Replace, ByteFallback, Metaspace, Strip and
 * WordPiece before the list is fused, ByteLevel's character map) or acts on
 * the fused text (Strip after Fuse). The per-token part depends only on the
 * token and on whether it is the first one, so we precompute two pieces per
 * token and the detokenizer is left with a concatenation, a UTF-8 assembler
 * and an optional strip: O(1) state, no re-decoding.
 */
#include "../common/utf8.h"
#include "vocab_internal.h"

/* Decoded pieces longer than this come from a pathological Replace chain. */
#define NEXTOK__PIECE_MAX (1u << 20)

nextok_status nextok__dec_push(struct nextok__decoder *d, const struct nextok__dec_step *s,
                               struct nextok_error *err)
{
    NEXTOK_RETURN_IF(d->n >= NEXTOK__DEC_MAX_STEPS, err, NEXTOK_ERR_UNSUPPORTED,
                     "decoder: more than %d steps", NEXTOK__DEC_MAX_STEPS);
    d->steps[d->n++] = *s;
    return NEXTOK_OK;
}

int nextok__byte_token(const char *s, size_t len)
{
    /* HF ByteFallback: len 6, "<0x", '>', and u8::from_str_radix on the two
     * characters in between (which also takes a leading '+'). */
    if (len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        char c = s[i];
        int d = (c >= '0' && c <= '9') ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (d < 0 && !(i == 3 && c == '+')) return -1;
        v = d < 0 ? 0 : v * 16 + d;
    }
    return v;
}

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves,
 * the other 68 move to U+0100.. in byte order (the encoder's first symbols). */
uint32_t nextok__byte_level_cp(unsigned b)
{
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) return b;
    if (b <= 0x20) return 0x100 + b;
    if (b <= 0xA0) return 0x100 + 33 + (b - 0x7F);
    return 0x100 + 67; /* 0xAD */
}

/* The same, inverted: printable Latin-1 bytes stand for
 * themselves, the other 68 bytes were moved to U+0100.. in byte order. */
static int byte_level_byte(uint32_t cp)
{
    if ((cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
        return (int)cp;
    if (cp < 0x100 || cp > 0x143) return -1;
    uint32_t n = cp - 0x100;
    if (n <= 32) return (int)n;            /* 0x00..0x20 */
    if (n <= 66) return (int)(0x7F + n - 33); /* 0x7F..0xA0 */
    return 0xAD;
}

/* HF ByteLevel: map every character; a token with a character outside the
 * map is taken as its raw UTF-8 bytes. */
static size_t op_byte_level(const char *in, size_t len, char *out)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = nextok__utf8_decode(s + i, len - i, &cp);
        int b = k ? byte_level_byte(cp) : -1;
        if (b < 0) {
            memcpy(out, in, len);
            return len;
        }
        out[n++] = (char)b;
        i += k;
    }
    return n;
}

static size_t op_replace(const char *in, size_t len, const char *pat, size_t pat_len,
                         const char *rep, size_t rep_len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        if (pat_len && i + pat_len <= len && memcmp(in + i, pat, pat_len) == 0) {
            memcpy(out + n, rep, rep_len);
            n += rep_len;
            i += pat_len;
        } else {
            out[n++] = in[i++];
        }
    }
    return n;
}

/* HF Strip on one string: up to `start` leading and `stop` trailing copies of
 * the content character. */
static size_t op_strip(const char *in, size_t len, const char *c, size_t clen, uint32_t start,
                       uint32_t stop, char *out)
{
    size_t a = 0, b = len;
    for (uint32_t i = 0; i < start && clen && b - a >= clen && memcmp(in + a, c, clen) == 0; i++)
        a += clen;
    for (uint32_t i = 0; i < stop && clen && b - a >= clen && memcmp(in + b - clen, c, clen) == 0; i++)
        b -= clen;
    memcpy(out, in + a, b - a);
    return b - a;
}

static size_t op_wordpiece(const struct nextok__dec_step *s, const char *in, size_t len,
                           bool first, char *out, char *tmp)
{
    static const char *const cleanup[][2] = {
        {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
        {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
    };
    size_t n = 0;
    if (!first && len >= s->a_len && memcmp(in, s->a, s->a_len) == 0) {
        in += s->a_len;
        len -= s->a_len;
    } else if (!first) {
        out[n++] = ' ';
    }
    memcpy(out + n, in, len);
    n += len;
    if (!s->flag) return n;
    for (size_t k = 0; k < sizeof cleanup / sizeof cleanup[0]; k++) {
        memcpy(tmp, out, n);
        n = op_replace(tmp, n, cleanup[k][0], strlen(cleanup[k][0]), cleanup[k][1],
                       strlen(cleanup[k][1]), out);
    }
    return n;
}

static bool is_terminal(enum nextok__dec_op op)
{
    return op == NEXTOK__DEC_FUSE || op == NEXTOK__DEC_BYTE_LEVEL || op == NEXTOK__DEC_JOIN_SPACE;
}

/* Upper bound of one step's output for an input of len bytes. */
static size_t step_bound(const struct nextok__dec_step *s, size_t len)
{
    size_t grow = s->op == NEXTOK__DEC_REPLACE && s->b_len > 1 ? s->b_len : 1;
    return len * grow + NEXTOK__DEC_STR_MAX + 8;
}

static size_t step_apply(const struct nextok__dec_step *s, const char *in, size_t len, bool first,
                         char *out, char *tmp)
{
    switch (s->op) {
    case NEXTOK__DEC_REPLACE:
        return op_replace(in, len, s->a, s->a_len, s->b, s->b_len, out);
    case NEXTOK__DEC_BYTE_FALLBACK: {
        int b = nextok__byte_token(in, len);
        if (b < 0) break;
        out[0] = (char)b;
        return 1;
    }
    case NEXTOK__DEC_METASPACE:
        /* HF Metaspace: on the first token every replacement char is removed
         * (not only the leading one) unless prepend_scheme is "never". */
        return op_replace(in, len, s->a, s->a_len, " ", first && s->flag ? 0 : 1, out);
    case NEXTOK__DEC_STRIP:
        return op_strip(in, len, s->a, s->a_len, s->n1, s->n2, out);
    case NEXTOK__DEC_WORDPIECE:
        return op_wordpiece(s, in, len, first, out, tmp);
    case NEXTOK__DEC_BYTE_LEVEL:
        return op_byte_level(in, len, out);
    case NEXTOK__DEC_JOIN_SPACE:
        if (first) break;
        out[0] = ' ';
        memcpy(out + 1, in, len);
        return len + 1;
    case NEXTOK__DEC_FUSE:
        break;
    }
    memcpy(out, in, len);
    return len;
}

nextok_status nextok__dec_apply(const struct nextok__decoder *dec, const char *text, size_t len,
                                bool first, struct nextok__buf *out, struct nextok__buf *tmp,
                                struct nextok_error *err)
{
    out->len = 0;
    NEXTOK_FORWARD(nextok__buf_append(out, text, len));
    for (int i = 0; i < dec->n; i++) {
        const struct nextok__dec_step *s = &dec->steps[i];
        size_t need = step_bound(s, out->len);
        NEXTOK_RETURN_IF(need > NEXTOK__PIECE_MAX, err, NEXTOK_ERR_UNSUPPORTED,
                         "decoder: a token's decoded text would exceed %u bytes",
                         NEXTOK__PIECE_MAX);
        /* The input moves to tmp[0, need); tmp[need, 2 need) is WordPiece's
         * scratch; the result goes to out. */
        tmp->len = 0;
        NEXTOK_FORWARD(nextok__buf_reserve(tmp, 2 * need));
        NEXTOK_FORWARD(nextok__buf_reserve(out, need - out->len));
        memcpy(tmp->data, out->data, out->len);
        size_t in_len = out->len;
        out->len = step_apply(s, tmp->data, in_len, first, out->data, tmp->data + need);
        if (is_terminal(s->op)) break;
    }
    return NEXTOK_OK;
}

nextok_status nextok__dec_global(const struct nextok__decoder *dec, struct nextok__strip *strip,
                                 struct nextok_error *err)
{
    static const char *const names[] = {"Replace", "ByteFallback", "Metaspace", "Strip",
                                        "WordPiece", "ByteLevel", "Fuse", "(none)"};
    memset(strip, 0, sizeof *strip);
    int i = 0;
    while (i < dec->n && !is_terminal(dec->steps[i].op)) i++;
    for (i++; i < dec->n; i++) {
        const struct nextok__dec_step *s = &dec->steps[i];
        if (s->op == NEXTOK__DEC_FUSE) continue;
        NEXTOK_RETURN_IF(s->op != NEXTOK__DEC_STRIP || strip->content_len != 0, err,
                         NEXTOK_ERR_UNSUPPORTED,
                         "decoder: %s after the tokens were fused is not supported",
                         names[s->op]);
        memcpy(strip->content, s->a, s->a_len);
        strip->content_len = s->a_len;
        strip->start = s->n1;
        strip->stop = s->n2;
    }
    return NEXTOK_OK;
}

bool nextok__dec_first_matters(const struct nextok__decoder *dec)
{
    for (int i = 0; i < dec->n; i++) {
        enum nextok__dec_op op = dec->steps[i].op;
        if (op == NEXTOK__DEC_WORDPIECE || op == NEXTOK__DEC_JOIN_SPACE) return true;
        if (op == NEXTOK__DEC_METASPACE && dec->steps[i].flag) return true;
        if (is_terminal(op)) return false;
    }
    return false;
}
