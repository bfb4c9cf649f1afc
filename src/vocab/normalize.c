/*
 * The normalizer steps: Prepend and Replace with a string pattern
 * (SentencePiece's "▁" for spaces, the dummy prefix), and the Unicode
 * normalization forms through utf8proc (no Unicode tables in this tree).
 * Each step reads one buffer and writes the other; the buffers belong to the
 * encoder and only grow, so a warm encoder allocates nothing here. The
 * Unicode steps are normalize_unicode.c.
 */
#include "vocab_internal.h"

#include "../common/utf8.h"

static nextok_status prepend(const struct nextok__norm_step *s, const char *in, size_t len,
                             bool at_start, struct nextok__buf *out)
{
    bool skip = len == 0 || (s->first_only && !at_start) ||
                (s->unless_present && len >= s->a_len && memcmp(in, s->a, s->a_len) == 0);
    out->len = 0;
    NEXTOK_FORWARD(nextok__buf_reserve(out, len + s->a_len));
    if (!skip) nextok__buf_append(out, s->a, s->a_len);
    nextok__buf_append(out, in, len);
    return NEXTOK_OK;
}

static nextok_status replace(const struct nextok__norm_step *s, const char *in, size_t len,
                             struct nextok__buf *out)
{
    /* The output is at most len / a_len * b_len + len bytes long. */
    size_t grow = s->b_len > s->a_len ? (len / s->a_len) * (s->b_len - s->a_len) : 0;
    out->len = 0;
    NEXTOK_FORWARD(nextok__buf_reserve(out, len + grow));
    size_t i = 0;
    while (i < len) {
        const char *hit = nextok__memfind(in + i, len - i, s->a, s->a_len);
        size_t end = hit ? (size_t)(hit - in) : len;
        nextok__buf_append(out, in + i, end - i);
        if (!hit) break;
        nextok__buf_append(out, s->b, s->b_len);
        i = end + s->a_len;
    }
    return NEXTOK_OK;
}

static bool ascii(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80) return false;
    return true;
}

nextok_status nextok__normalize(const struct nextok__enc *e, const char *text, size_t len,
                                bool at_start, struct nextok__buf bufs[3], const char **out,
                                size_t *out_len)
{
    const char *cur = text;
    size_t n = len;
    for (int k = 0; k < e->n_norm; k++) {
        const struct nextok__norm_step *s = &e->norm[k];
        struct nextok__buf *dst = cur == bufs[0].data ? &bufs[1] : &bufs[0];
        nextok_status rc;
        if (s->op == NEXTOK__NORM_PREPEND)
            rc = prepend(s, cur, n, at_start, dst);
        else if (s->op == NEXTOK__NORM_REPLACE)
            rc = replace(s, cur, n, dst);
        else if (s->op >= NEXTOK__NORM_NFC && s->op <= NEXTOK__NORM_NFKD && ascii(cur, n))
            continue; /* the normalization forms leave ASCII as it is */
        else
            rc = nextok__norm_unicode(s, cur, n, dst, &bufs[2]);
        if (rc != NEXTOK_OK) return rc;
        cur = dst->data;
        n = dst->len;
    }
    *out = cur;
    *out_len = n;
    return NEXTOK_OK;
}
