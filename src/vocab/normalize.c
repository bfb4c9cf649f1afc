/*
 * The normalizer steps: Prepend and Replace with a string pattern
 * (SentencePiece's "▁" for spaces, the dummy prefix), and the Unicode
 * normalization forms through utf8proc (no Unicode tables in this tree).
 * Each step reads one buffer and writes the other; the buffers belong to the
 * encoder and only grow, so a warm encoder allocates nothing here.
 */
#include "vocab_internal.h"

#include "../common/utf8.h"

#if defined(NEXTOK_HAVE_UTF8PROC)
#include <utf8proc.h>
#endif

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

#if defined(NEXTOK_HAVE_UTF8PROC)
/* Lowercase each character as Rust's char::to_lowercase does (HF's
 * Lowercase): utf8proc's simple mapping, and the one character whose
 * lowercase is two (U+0130 -> i + U+0307). The text is valid UTF-8. */
static nextok_status lowercase(const char *in, size_t len, struct nextok__buf *out)
{
    out->len = 0;
    NEXTOK_FORWARD(
        nextok__buf_reserve(out, 2 * len)); /* a lowercase is at most 3 bytes longer per 2 */
    const unsigned char *s = (const unsigned char *)in;
    for (size_t i = 0; i < len;) {
        uint32_t cp = s[i];
        size_t k = 1;
        if (cp >= 0x80 && !(k = nextok__utf8_decode(s + i, len - i, &cp)))
            return NEXTOK_ERR_INVALID_ARG;
        i += k;
        if (cp == 0x130) {
            nextok__buf_append(out, "i\xcc\x87", 3);
            continue;
        }
        char u[4];
        uint32_t lc = cp < 0x80 ? (cp >= 'A' && cp <= 'Z' ? cp + 32 : cp)
                                : (uint32_t)utf8proc_tolower((utf8proc_int32_t)cp);
        NEXTOK_FORWARD(nextok__buf_reserve(out, 4));
        nextok__buf_append(out, u, nextok__utf8_encode(lc, u));
    }
    return NEXTOK_OK;
}

/* NFC, NFD, NFKC or NFKD: decompose to code points in cps, then recompose
 * and re-encode there (utf8proc_reencode writes UTF-8 over the code points). */
static nextok_status unicode_form(const struct nextok__norm_step *s, const char *in, size_t len,
                                  struct nextok__buf *out, struct nextok__buf *cps)
{
    if (s->op == NEXTOK__NORM_LOWERCASE) return lowercase(in, len, out);
    static const utf8proc_option_t forms[] = {
        [NEXTOK__NORM_NFC] = UTF8PROC_STABLE | UTF8PROC_COMPOSE,
        [NEXTOK__NORM_NFD] = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE,
        [NEXTOK__NORM_NFKC] = UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT,
        [NEXTOK__NORM_NFKD] = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT,
    };
    utf8proc_option_t opt = forms[s->op];
    utf8proc_ssize_t want = (utf8proc_ssize_t)len + 16, got;
    for (;;) {
        cps->len = 0;
        NEXTOK_FORWARD(nextok__buf_reserve(cps, (size_t)want * sizeof(utf8proc_int32_t)));
        got = utf8proc_decompose((const utf8proc_uint8_t *)in, (utf8proc_ssize_t)len,
                                 (utf8proc_int32_t *)(void *)cps->data, want, opt);
        if (got < 0) return NEXTOK_ERR_INVALID_ARG; /* the encoder checked UTF-8 already */
        if (got <= want) break;
        want = got;
    }
    utf8proc_ssize_t n = utf8proc_reencode((utf8proc_int32_t *)(void *)cps->data, got, opt);
    if (n < 0) return NEXTOK_ERR_INVALID_ARG;
    out->len = 0;
    return nextok__buf_append(out, cps->data, (size_t)n);
}
#else
static nextok_status unicode_form(const struct nextok__norm_step *s, const char *in, size_t len,
                                  struct nextok__buf *out, struct nextok__buf *cps)
{
    (void)s, (void)in, (void)len, (void)out, (void)cps;
    return NEXTOK_ERR_UNSUPPORTED; /* enc_build refuses such vocabularies */
}
#endif

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
        else if (s->op != NEXTOK__NORM_LOWERCASE && ascii(cur, n))
            continue; /* the normalization forms leave ASCII as it is */
        else
            rc = unicode_form(s, cur, n, dst, &bufs[2]);
        if (rc != NEXTOK_OK) return rc;
        cur = dst->data;
        n = dst->len;
    }
    *out = cur;
    *out_len = n;
    return NEXTOK_OK;
}
