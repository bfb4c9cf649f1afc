/*
 * tokenizer.json's "decoder" object, read into nextok's decoder steps
 * (vocab_internal.h). Errors name the JSON path: "decoder.decoders[1].type".
 */
#include "../common/utf8.h"
#include "hf_internal.h"

#include <stdio.h>

struct rd {
    const struct nextok__json *d;
    struct nextok__decoder *dec;
    struct nextok_error *err;
};

static nextok_status dec_one(const struct rd *r, uint32_t o, const char *path, int depth);

/* A short string member into dst (at most NEXTOK__DEC_STR_MAX bytes); dflt
 * when the member is absent or null (NULL: it is required). */
static nextok_status small_str(const struct rd *r, uint32_t o, const char *path, const char *dflt,
                               char *dst, uint8_t *len)
{
    const char *s = dflt;
    size_t n = dflt ? strlen(dflt) : 0;
    if (o != NEXTOK__JSON_NO_NODE) {
        s = nextok__json_str(r->d, o, &n);
        NEXTOK_RETURN_IF(!s, r->err, NEXTOK_ERR_FORMAT, "tokenizer.json: %s: expected a string",
                         path);
    }
    NEXTOK_RETURN_IF(!s, r->err, NEXTOK_ERR_FORMAT, "tokenizer.json: %s: missing", path);
    NEXTOK_RETURN_IF(n > NEXTOK__DEC_STR_MAX, r->err, NEXTOK_ERR_UNSUPPORTED,
                     "tokenizer.json: %s: longer than %d bytes", path, NEXTOK__DEC_STR_MAX);
    memcpy(dst, s, n);
    *len = (uint8_t)n;
    return NEXTOK_OK;
}

static nextok_status dec_replace(const struct rd *r, uint32_t o, const char *path,
                                 struct nextok__dec_step *st)
{
    char p[96];
    uint32_t pat = nextok__hf_get(r->d, o, "pattern");
    snprintf(p, sizeof p, "%s.pattern", path);
    NEXTOK_RETURN_IF(nextok__hf_get(r->d, pat, "Regex") != NEXTOK__JSON_NO_NODE, r->err,
                     NEXTOK_ERR_UNSUPPORTED, "tokenizer.json: %s: Regex patterns are not supported",
                     p);
    snprintf(p, sizeof p, "%s.pattern.String", path);
    NEXTOK_FORWARD(small_str(r, nextok__hf_get(r->d, pat, "String"), p, NULL, st->a, &st->a_len));
    NEXTOK_RETURN_IF(st->a_len == 0, r->err, NEXTOK_ERR_FORMAT, "tokenizer.json: %s: empty", p);
    snprintf(p, sizeof p, "%s.content", path);
    return small_str(r, nextok__hf_get(r->d, o, "content"), p, NULL, st->b, &st->b_len);
}

static nextok_status dec_metaspace(const struct rd *r, uint32_t o, const char *path,
                                   struct nextok__dec_step *st)
{
    char p[96];
    snprintf(p, sizeof p, "%s.replacement", path);
    NEXTOK_FORWARD(small_str(r, nextok__hf_get(r->d, o, "replacement"), p, "\xe2\x96\x81", st->a,
                             &st->a_len));
    /* Older files say add_prefix_space: false where newer ones say
     * prepend_scheme: "never"; anything else strips on the first token. */
    uint32_t aps = nextok__hf_get(r->d, o, "add_prefix_space");
    bool never = nextok__hf_is(r->d, nextok__hf_get(r->d, o, "prepend_scheme"), "never");
    st->flag = !never && !(nextok__json_type(r->d, aps) == NEXTOK__JSON_FALSE);
    return NEXTOK_OK;
}

/* An optional count in [0, 1024] (absent or null: 0). */
static nextok_status count_field(const struct rd *r, uint32_t o, const char *path, const char *key,
                                 uint32_t *out)
{
    uint32_t c = nextok__hf_get(r->d, o, key);
    int64_t v = 0;
    if (c != NEXTOK__JSON_NO_NODE && !nextok__json_int(r->d, c, &v)) v = -1;
    NEXTOK_RETURN_IF(v < 0 || v > 1024, r->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s.%s: expected an integer in [0, 1024]", path, key);
    *out = (uint32_t)v;
    return NEXTOK_OK;
}

static nextok_status dec_strip(const struct rd *r, uint32_t o, const char *path,
                               struct nextok__dec_step *st)
{
    char p[96];
    snprintf(p, sizeof p, "%s.content", path);
    NEXTOK_FORWARD(small_str(r, nextok__hf_get(r->d, o, "content"), p, NULL, st->a, &st->a_len));
    NEXTOK_RETURN_IF(st->a_len != nextok__utf8_lead_len((unsigned char)st->a[0]), r->err,
                     NEXTOK_ERR_FORMAT, "tokenizer.json: %s: must be one character", p);
    NEXTOK_FORWARD(count_field(r, o, path, "start", &st->n1));
    return count_field(r, o, path, "stop", &st->n2);
}

static nextok_status dec_wordpiece(const struct rd *r, uint32_t o, const char *path,
                                   struct nextok__dec_step *st)
{
    char p[96];
    snprintf(p, sizeof p, "%s.prefix", path);
    NEXTOK_FORWARD(small_str(r, nextok__hf_get(r->d, o, "prefix"), p, "##", st->a, &st->a_len));
    uint32_t c = nextok__hf_get(r->d, o, "cleanup");
    st->flag = !nextok__hf_bool(r->d, c) || nextok__hf_true(r->d, c); /* default: true */
    return NEXTOK_OK;
}

static nextok_status dec_sequence(const struct rd *r, uint32_t o, const char *path, int depth)
{
    uint32_t list = nextok__hf_get(r->d, o, "decoders");
    NEXTOK_RETURN_IF(nextok__json_type(r->d, list) != NEXTOK__JSON_ARRAY, r->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s.decoders: expected an array", path);
    NEXTOK_RETURN_IF(depth >= 4, r->err, NEXTOK_ERR_UNSUPPORTED,
                     "tokenizer.json: %s: Sequence nested too deep", path);
    size_t i = 0;
    for (uint32_t e = nextok__json_first(r->d, list); e != NEXTOK__JSON_NO_NODE;
         e = nextok__json_next(r->d, e), i++) {
        char p[96];
        snprintf(p, sizeof p, "%s.decoders[%zu]", path, i);
        NEXTOK_FORWARD(dec_one(r, e, p, depth + 1));
    }
    return NEXTOK_OK;
}

static const struct {
    const char *name;
    enum nextok__dec_op op;
} dec_types[] = {
    {"ByteLevel", NEXTOK__DEC_BYTE_LEVEL}, {"ByteFallback", NEXTOK__DEC_BYTE_FALLBACK},
    {"Fuse", NEXTOK__DEC_FUSE},            {"Replace", NEXTOK__DEC_REPLACE},
    {"Metaspace", NEXTOK__DEC_METASPACE},  {"Strip", NEXTOK__DEC_STRIP},
    {"WordPiece", NEXTOK__DEC_WORDPIECE},
};

static nextok_status dec_one(const struct rd *r, uint32_t o, const char *path, int depth)
{
    struct nextok__dec_step st;
    memset(&st, 0, sizeof st);
    uint32_t t = nextok__hf_get(r->d, o, "type");
    size_t len;
    const char *type = nextok__json_str(r->d, t, &len);
    NEXTOK_RETURN_IF(!type, r->err, NEXTOK_ERR_FORMAT, "tokenizer.json: %s.type: expected a string",
                     path);
    if (nextok__hf_is(r->d, t, "Sequence")) return dec_sequence(r, o, path, depth);
    size_t k = 0, n = sizeof dec_types / sizeof dec_types[0];
    while (k < n && !nextok__hf_is(r->d, t, dec_types[k].name)) k++;
    if (k == n) {
        char q[48];
        nextok__quote(q, sizeof q, type, len < 40 ? len : 40);
        return nextok__err(r->err, NEXTOK_ERR_UNSUPPORTED,
                           "tokenizer.json: %s: decoder \"%s\" is not supported", path, q);
    }
    st.op = dec_types[k].op;
    nextok_status rc = NEXTOK_OK;
    if (st.op == NEXTOK__DEC_REPLACE) rc = dec_replace(r, o, path, &st);
    if (st.op == NEXTOK__DEC_METASPACE) rc = dec_metaspace(r, o, path, &st);
    if (st.op == NEXTOK__DEC_STRIP) rc = dec_strip(r, o, path, &st);
    if (st.op == NEXTOK__DEC_WORDPIECE) rc = dec_wordpiece(r, o, path, &st);
    if (rc != NEXTOK_OK) return rc;
    return nextok__dec_push(r->dec, &st, r->err);
}

nextok_status nextok__hf_read_decoder(const struct nextok__json *d, uint32_t root,
                                      struct nextok__decoder *dec, struct nextok_error *err)
{
    struct rd r = {d, dec, err};
    uint32_t o = nextok__hf_get(d, root, "decoder");
    dec->n = 0;
    if (o == NEXTOK__JSON_NO_NODE) {
        /* No decoder: HF joins the tokens with spaces. */
        static const struct nextok__dec_step join = {.op = NEXTOK__DEC_JOIN_SPACE};
        return nextok__dec_push(dec, &join, err);
    }
    NEXTOK_RETURN_IF(nextok__json_type(d, o) != NEXTOK__JSON_OBJECT, err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: decoder: expected an object or null");
    return dec_one(&r, o, "decoder", 0);
}
