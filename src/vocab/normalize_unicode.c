/*
 * The normalizer steps that need Unicode's tables, through utf8proc (no
 * Unicode tables in this tree): the normalization forms, Lowercase, and
 * the parts of HF's BertNormalizer and StripAccents. Builds without
 * utf8proc refuse vocabularies that use them when they load (hf_encoder.c),
 * so the stub below is never reached there.
 */
#include "vocab_internal.h"

#include "../common/utf8.h"

#if defined(NEXTOK_HAVE_UTF8PROC)

#include <utf8proc.h>

/* The code point at s[*i] (the text is valid UTF-8), and *i moved past it. */
static bool next_cp(const unsigned char *s, size_t len, size_t *i, uint32_t *cp)
{
    size_t k = 1;
    *cp = s[*i];
    if (*cp >= 0x80 && !(k = nextok__utf8_decode(s + *i, len - *i, cp))) return false;
    *i += k;
    return true;
}

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
        uint32_t cp;
        if (!next_cp(s, len, &i, &cp)) return NEXTOK_ERR_INVALID_ARG;
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

/* in[0, len) as code points in cps (decomposed as opt says), growing cps
 * until they fit; *got receives their count. */
static nextok_status decompose(const char *in, size_t len, utf8proc_option_t opt,
                               struct nextok__buf *cps, utf8proc_ssize_t *got)
{
    utf8proc_ssize_t want = (utf8proc_ssize_t)len + 16;
    for (;;) {
        cps->len = 0;
        NEXTOK_FORWARD(nextok__buf_reserve(cps, (size_t)want * sizeof(utf8proc_int32_t)));
        *got = utf8proc_decompose((const utf8proc_uint8_t *)in, (utf8proc_ssize_t)len,
                                  (utf8proc_int32_t *)(void *)cps->data, want, opt);
        if (*got < 0) return NEXTOK_ERR_INVALID_ARG; /* the encoder checked UTF-8 already */
        if (*got <= want) return NEXTOK_OK;
        want = *got;
    }
}

/* NFC, NFD, NFKC or NFKD: decompose to code points in cps, then recompose
 * and re-encode there (utf8proc_reencode writes UTF-8 over the code points). */
static nextok_status form(const struct nextok__norm_step *s, const char *in, size_t len,
                          struct nextok__buf *out, struct nextok__buf *cps)
{
    static const utf8proc_option_t forms[] = {
        [NEXTOK__NORM_NFC] = UTF8PROC_STABLE | UTF8PROC_COMPOSE,
        [NEXTOK__NORM_NFD] = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE,
        [NEXTOK__NORM_NFKC] = UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT,
        [NEXTOK__NORM_NFKD] = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT,
    };
    utf8proc_option_t opt = forms[s->op];
    utf8proc_ssize_t got;
    NEXTOK_FORWARD(decompose(in, len, opt, cps, &got));
    utf8proc_ssize_t n = utf8proc_reencode((utf8proc_int32_t *)(void *)cps->data, got, opt);
    if (n < 0) return NEXTOK_ERR_INVALID_ARG;
    out->len = 0;
    return nextok__buf_append(out, cps->data, (size_t)n);
}

/* ---- BertNormalizer ------------------------------------------------------------ */

/* Rust's char::is_whitespace (White_Space), as HF's BertNormalizer uses it
 * (with \t, \n and \r, which it counts as whitespace before control). */
static bool white_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

/* HF's is_control: Cc, Cf and Co as Unicode 8.0 had them (not Cn, whatever
 * its comment says), but \t \n \r. */
static bool control(uint32_t c)
{
    if (c == '\t' || c == '\n' || c == '\r') return false;
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    if (k == UTF8PROC_CATEGORY_CF) return !nextok__hf8_new_format(c);
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CO;
}

/* The CJK ideograph blocks BERT pads with spaces (HF's is_chinese_char). */
static bool chinese(uint32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* clean_text (drop NUL, U+FFFD and controls; whitespace to ' ') and
 * handle_chinese_chars (a space each side of an ideograph), in one pass. */
static nextok_status bert_clean(const struct nextok__norm_step *st, const char *in, size_t len,
                                struct nextok__buf *out)
{
    bool clean = st->a_len & 1, cjk = st->a_len & 2;
    out->len = 0;
    NEXTOK_FORWARD(nextok__buf_reserve(out, len + len / 2 + 8));
    const unsigned char *s = (const unsigned char *)in;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        if (!next_cp(s, len, &i, &c)) return NEXTOK_ERR_INVALID_ARG;
        if (clean && (c == 0 || c == 0xFFFD || control(c))) continue;
        if (clean && white_space(c)) c = ' ';
        char u[4];
        size_t n = nextok__utf8_encode(c, u);
        NEXTOK_FORWARD(nextok__buf_reserve(out, n + 2));
        bool pad = cjk && chinese(c);
        if (pad) nextok__buf_append(out, " ", 1);
        nextok__buf_append(out, u, n);
        if (pad) nextok__buf_append(out, " ", 1);
    }
    return NEXTOK_OK;
}

/* Decode (nfd: and decompose) in[0, len) and append it to out without the
 * marks the step strips. */
static nextok_status strip_part(bool nfd, const char *in, size_t len, struct nextok__buf *out,
                                struct nextok__buf *cps)
{
    utf8proc_option_t opt = nfd ? UTF8PROC_STABLE | UTF8PROC_DECOMPOSE : 0;
    utf8proc_ssize_t got;
    NEXTOK_FORWARD(decompose(in, len, opt, cps, &got));
    const utf8proc_int32_t *cp = (const utf8proc_int32_t *)(const void *)cps->data;
    NEXTOK_FORWARD(nextok__buf_reserve(out, (size_t)got * 4));
    for (utf8proc_ssize_t j = 0; j < got; j++) {
        utf8proc_category_t k = utf8proc_category(cp[j]);
        bool mn = k == UTF8PROC_CATEGORY_MN;
        if (nfd ? nextok__hf8_nonspacing((uint32_t)cp[j], mn)
                : mn || k == UTF8PROC_CATEGORY_MC || k == UTF8PROC_CATEGORY_ME)
            continue;
        char u[4];
        nextok__buf_append(out, u, nextok__utf8_encode((uint32_t)cp[j], u));
    }
    return NEXTOK_OK;
}

/* Strip accents: BertNormalizer's (NFD, then drop nonspacing marks, Mn) or
 * the StripAccents normalizer's (drop every combining mark, no NFD). The
 * one character HF's NFD leaves whole (U+11938, a starter, so cutting the
 * text there changes no reordering) is passed through as it is. */
static nextok_status strip_marks(const struct nextok__norm_step *st, const char *in, size_t len,
                                 struct nextok__buf *out, struct nextok__buf *cps)
{
    static const char whole[] = "\xf0\x91\xa4\xb8"; /* U+11938 */
    bool nfd = st->a_len & 1;
    out->len = 0;
    for (size_t at = 0;;) {
        const char *hit = nfd ? nextok__memfind(in + at, len - at, whole, 4) : NULL;
        size_t end = hit ? (size_t)(hit - in) : len;
        NEXTOK_FORWARD(strip_part(nfd, in + at, end - at, out, cps));
        if (!hit) return NEXTOK_OK;
        NEXTOK_FORWARD(nextok__buf_append(out, whole, 4));
        at = end + 4;
    }
}

nextok_status nextok__norm_unicode(const struct nextok__norm_step *s, const char *in, size_t len,
                                   struct nextok__buf *out, struct nextok__buf *cps)
{
    switch (s->op) {
    case NEXTOK__NORM_LOWERCASE: return lowercase(in, len, out);
    case NEXTOK__NORM_BERT_CLEAN: return bert_clean(s, in, len, out);
    case NEXTOK__NORM_STRIP_MARKS: return strip_marks(s, in, len, out, cps);
    default: return form(s, in, len, out, cps);
    }
}

#else /* !NEXTOK_HAVE_UTF8PROC */

nextok_status nextok__norm_unicode(const struct nextok__norm_step *s, const char *in, size_t len,
                                   struct nextok__buf *out, struct nextok__buf *cps)
{
    (void)s, (void)in, (void)len, (void)out, (void)cps;
    return NEXTOK_ERR_UNSUPPORTED;
}

#endif
