/*
 * tokenizer.json's "normalizer", "pre_tokenizer" and model options, read
 * into the encoder's description (encode_internal.h). Something nextok does
 * not run leaves the vocabulary loadable but not encodable, with the reason
 * (never a silently different encoding); only running out of memory fails
 * the load.
 */
#include "hf_internal.h"

#include <stdio.h>

struct er {
    const struct nextok__json *d;
    struct nextok_vocab *v;
    struct nextok__enc *e;
    struct nextok_error *err;
    bool byte_level;
};

static bool refused(const struct er *r) { return r->e->unsupported[0] != '\0'; }

static void refuse(struct er *r, const char *what, uint32_t type)
{
    char why[sizeof r->e->unsupported], q[40];
    size_t n = 0;
    const char *s = nextok__json_str(r->d, type, &n);
    nextok__quote(q, sizeof q, s ? s : "?", n < 24 ? n : 24);
    /* at most 16 + 40 + 2 + 39 + 18 bytes: no cut */
    snprintf(why, sizeof why, "tokenizer.json: %.40s \"%s\" is not supported", what, q);
    if (!refused(r)) nextok__enc_refuse(r->e, why);
}

/* A short string member (at most 16 bytes), or dflt; false if it is not one. */
static bool small(const struct er *r, uint32_t o, const char *key, const char *dflt, char *dst,
                  uint8_t *len)
{
    size_t n = dflt ? strlen(dflt) : 0;
    const char *s = dflt;
    uint32_t m = nextok__hf_get(r->d, o, key);
    if (m != NEXTOK__JSON_NO_NODE) s = nextok__json_str(r->d, m, &n);
    if (!s || n > NEXTOK__ENC_STR_MAX) return false;
    memcpy(dst, s, n);
    *len = (uint8_t)n;
    return true;
}

/* ---- normalizer ------------------------------------------------------------------ */

#if defined(NEXTOK_HAVE_UTF8PROC)
/* A boolean member, or dflt when absent or null. */
static bool flag(const struct nextok__json *d, uint32_t o, const char *key, bool dflt)
{
    uint32_t m = nextok__hf_get(d, o, key);
    return m == NEXTOK__JSON_NO_NODE ? dflt : nextok__hf_true(d, m);
}

/* BertNormalizer: clean_text and handle_chinese_chars (one step), then
 * strip_accents (null: as lowercase; NFD, then drop Mn), then lowercase,
 * HF's order. StripAccents alone drops every combining mark. */
static void norm_bert(struct er *r, uint32_t o, bool bert)
{
    const struct nextok__json *d = r->d;
    struct nextok__norm_step st;
    memset(&st, 0, sizeof st);
    if (!bert) {
        st.op = NEXTOK__NORM_STRIP_MARKS;
        nextok__enc_add_norm(r->e, &st);
        return;
    }
    bool clean = flag(d, o, "clean_text", true), cjk = flag(d, o, "handle_chinese_chars", true);
    bool lower = flag(d, o, "lowercase", true), strip = flag(d, o, "strip_accents", lower);
    nextok__enc_add_bert(r->e, clean, cjk, strip, lower);
}
#endif

static void norm_one(struct er *r, uint32_t o, int depth)
{
    const struct nextok__json *d = r->d;
    uint32_t type = nextok__hf_get(d, o, "type");
    struct nextok__norm_step st;
    memset(&st, 0, sizeof st);
    if (nextok__hf_is(d, type, "Sequence") && depth < 4) {
        uint32_t list = nextok__hf_get(d, o, "normalizers");
        for (uint32_t c = nextok__json_first(d, list); c != NEXTOK__JSON_NO_NODE;
             c = nextok__json_next(d, c))
            norm_one(r, c, depth + 1);
        return;
    }
    static const char *const forms[] = {"NFC", "NFD", "NFKC", "NFKD", "Lowercase"};
    static const enum nextok__norm_op ops[] = {NEXTOK__NORM_NFC, NEXTOK__NORM_NFD,
                                               NEXTOK__NORM_NFKC, NEXTOK__NORM_NFKD,
                                               NEXTOK__NORM_LOWERCASE};
    for (int k = 0; k < 5; k++) {
        if (!nextok__hf_is(d, type, forms[k])) continue;
#if defined(NEXTOK_HAVE_UTF8PROC)
        st.op = ops[k];
        nextok__enc_add_norm(r->e, &st);
#else
        (void)ops;
        if (!refused(r))
            nextok__enc_refuse(r->e, "tokenizer.json: Unicode normalizers need utf8proc "
                                     "(built with NEXTOK_WITH_UTF8PROC=OFF)");
#endif
        return;
    }
    if (nextok__hf_is(d, type, "BertNormalizer") || nextok__hf_is(d, type, "StripAccents")) {
#if defined(NEXTOK_HAVE_UTF8PROC)
        norm_bert(r, o, nextok__hf_is(d, type, "BertNormalizer"));
#else
        if (!refused(r))
            nextok__enc_refuse(r->e, "tokenizer.json: Unicode normalizers need utf8proc "
                                     "(built with NEXTOK_WITH_UTF8PROC=OFF)");
#endif
        return;
    }
    if (nextok__hf_is(d, type, "Prepend")) {
        st.op = NEXTOK__NORM_PREPEND;
        if (small(r, o, "prepend", NULL, st.a, &st.a_len) && st.a_len) {
            nextok__enc_add_norm(r->e, &st);
            return;
        }
    } else if (nextok__hf_is(d, type, "Replace")) {
        uint32_t pat = nextok__hf_get(d, o, "pattern");
        st.op = NEXTOK__NORM_REPLACE;
        if (small(r, pat, "String", NULL, st.a, &st.a_len) && st.a_len &&
            small(r, o, "content", NULL, st.b, &st.b_len)) {
            nextok__enc_add_norm(r->e, &st);
            return;
        }
    }
    refuse(r, "normalizer", type);
}

/* ---- pre-tokenizer ------------------------------------------------------------------- */

static bool split_how(const struct nextok__json *d, uint32_t o, enum nextok__split_how *how)
{
    uint32_t b = nextok__hf_get(d, o, "behavior");
    if (nextok__hf_is(d, b, "Isolated"))
        *how = NEXTOK__SPLIT_ISOLATED;
    else if (nextok__hf_is(d, b, "Removed"))
        *how = NEXTOK__SPLIT_REMOVED;
    else if (nextok__hf_is(d, b, "MergedWithPrevious"))
        *how = NEXTOK__SPLIT_MERGED_PREV;
    else if (nextok__hf_is(d, b, "MergedWithNext"))
        *how = NEXTOK__SPLIT_MERGED_NEXT;
    else
        return false;
    return !nextok__hf_true(d, nextok__hf_get(d, o, "invert"));
}

static nextok_status pre_split(struct er *r, uint32_t o, uint32_t type)
{
    const struct nextok__json *d = r->d;
    enum nextok__split_how how;
    uint32_t pat = nextok__hf_get(d, o, "pattern");
    size_t n = 0, sn = 0;
    const char *re = nextok__json_str(d, nextok__hf_get(d, pat, "Regex"), &n);
    const char *str = nextok__json_str(d, nextok__hf_get(d, pat, "String"), &sn);
    if (!split_how(d, o, &how) || (!re && !str)) {
        refuse(r, "pre_tokenizer Split with behavior/invert/pattern", type);
        return NEXTOK_OK;
    }
    if (re) return nextok__enc_add_regex_copy(r->v, re, n, how, r->err);
    nextok__enc_add_split_string(r->e, str, sn, how);
    return NEXTOK_OK;
}

static void pre_byte_level(struct er *r, uint32_t o)
{
    const struct nextok__json *d = r->d;
    r->byte_level = true;
    if (nextok__hf_true(d, nextok__hf_get(d, o, "add_prefix_space"))) {
        struct nextok__norm_step st = {
            .op = NEXTOK__NORM_PREPEND, .unless_present = true, .a_len = 1};
        st.a[0] = ' ';
        nextok__enc_add_norm(r->e, &st);
    }
    uint32_t use = nextok__hf_get(d, o, "use_regex"); /* default: true */
    if (use == NEXTOK__JSON_NO_NODE || nextok__hf_true(d, use))
        nextok__enc_add_regex(r->e, nextok__re_gpt2, NEXTOK__SPLIT_ISOLATED);
}

/* Metaspace: spaces become the replacement, which is prepended (always, to
 * the first segment only, or never) and starts each word when split. */
static void pre_metaspace(struct er *r, uint32_t o, uint32_t type)
{
    const struct nextok__json *d = r->d;
    struct nextok__norm_step rep = {.op = NEXTOK__NORM_REPLACE, .a_len = 1};
    rep.a[0] = ' ';
    if (!small(r, o, "replacement", "\xe2\x96\x81", rep.b, &rep.b_len) || rep.b_len == 0) {
        refuse(r, "pre_tokenizer Metaspace replacement", type);
        return;
    }
    struct nextok__norm_step pre = {.op = NEXTOK__NORM_PREPEND, .unless_present = true};
    memcpy(pre.a, rep.b, rep.b_len);
    pre.a_len = rep.b_len;
    uint32_t scheme = nextok__hf_get(d, o, "prepend_scheme");
    uint32_t old = nextok__hf_get(d, o, "add_prefix_space");
    bool never =
        nextok__hf_is(d, scheme, "never") ||
        (scheme == NEXTOK__JSON_NO_NODE && old != NEXTOK__JSON_NO_NODE && !nextok__hf_true(d, old));
    pre.first_only = nextok__hf_is(d, scheme, "first");
    nextok__enc_add_norm(r->e, &rep);
    if (!never) nextok__enc_add_norm(r->e, &pre);
    uint32_t sp = nextok__hf_get(d, o, "split");
    if (sp == NEXTOK__JSON_NO_NODE || nextok__hf_true(d, sp))
        nextok__enc_add_split_string(r->e, rep.b, rep.b_len, NEXTOK__SPLIT_MERGED_NEXT);
}

static nextok_status pre_one(struct er *r, uint32_t o, int depth)
{
    const struct nextok__json *d = r->d;
    uint32_t type = nextok__hf_get(d, o, "type");
    if (nextok__hf_is(d, type, "Sequence") && depth < 4) {
        uint32_t list = nextok__hf_get(d, o, "pretokenizers");
        for (uint32_t c = nextok__json_first(d, list); c != NEXTOK__JSON_NO_NODE;
             c = nextok__json_next(d, c))
            NEXTOK_FORWARD(pre_one(r, c, depth + 1));
    } else if (nextok__hf_is(d, type, "Split")) {
        return pre_split(r, o, type);
    } else if (nextok__hf_is(d, type, "ByteLevel")) {
        pre_byte_level(r, o);
    } else if (nextok__hf_is(d, type, "Metaspace")) {
        pre_metaspace(r, o, type);
    } else if (nextok__hf_is(d, type, "Digits")) {
        bool each = nextok__hf_true(d, nextok__hf_get(d, o, "individual_digits"));
        nextok__enc_add_regex(r->e, each ? "\\p{N}" : "\\p{N}+", NEXTOK__SPLIT_ISOLATED);
    } else if (nextok__hf_is(d, type, "WhitespaceSplit")) {
        nextok__enc_add_regex(r->e, "\\s+", NEXTOK__SPLIT_REMOVED);
    } else if (nextok__hf_is(d, type, "BertPreTokenizer")) {
        /* whitespace removed, then each punctuation character alone */
        nextok__enc_add_bert_split(r->e);
    } else {
        refuse(r, "pre_tokenizer", type);
    }
    return NEXTOK_OK;
}

/* ---- model ------------------------------------------------------------------------------- */

static void model_bpe(struct er *r, uint32_t model)
{
    const struct nextok__json *d = r->d;
    struct nextok__enc *e = r->e;
    size_t n = 0;
    const char *pfx =
        nextok__json_str(d, nextok__hf_get(d, model, "continuing_subword_prefix"), &n);
    size_t m = 0;
    const char *sfx = nextok__json_str(d, nextok__hf_get(d, model, "end_of_word_suffix"), &m);
    if ((pfx && n) || (sfx && m)) {
        refuse(r, "model option",
               nextok__hf_get(d, model,
                              pfx && n ? "continuing_subword_prefix" : "end_of_word_suffix"));
        return;
    }
    if (refused(r)) return;
    e->merge_by = NEXTOK__MERGE_RANKS;
    e->syms = r->byte_level ? NEXTOK__SYMS_BYTE_LEVEL : NEXTOK__SYMS_CHARS;
    e->spm_words = !r->byte_level;
    e->byte_fallback = nextok__hf_true(d, nextok__hf_get(d, model, "byte_fallback"));
    e->fuse_unk = nextok__hf_true(d, nextok__hf_get(d, model, "fuse_unk"));
    e->ignore_merges = nextok__hf_true(d, nextok__hf_get(d, model, "ignore_merges"));
}

/* Unigram: pieces are characters' spellings; byte fallback as the file says. */
static void model_unigram(struct er *r, uint32_t model)
{
    if (refused(r)) return;
    r->e->merge_by = NEXTOK__MODEL_UNIGRAM;
    r->e->syms = NEXTOK__SYMS_CHARS;
    r->e->byte_fallback = nextok__hf_true(r->d, nextok__hf_get(r->d, model, "byte_fallback"));
}

static void model_wordpiece(struct er *r, uint32_t model)
{
    const struct nextok__json *d = r->d;
    struct nextok__enc *e = r->e;
    int64_t max = 100;
    uint32_t m = nextok__hf_get(d, model, "max_input_chars_per_word");
    if (m != NEXTOK__JSON_NO_NODE &&
        (!nextok__json_int(d, m, &max) || max < 0 || max > INT32_MAX)) {
        refuse(r, "WordPiece max_input_chars_per_word", m);
        return;
    }
    if (!small(r, model, "continuing_subword_prefix", "##", e->wp_prefix, &e->wp_prefix_len)) {
        refuse(r, "WordPiece continuing_subword_prefix",
               nextok__hf_get(d, model, "continuing_subword_prefix"));
        return;
    }
    if (refused(r)) return;
    e->merge_by = NEXTOK__MODEL_WORDPIECE;
    e->syms = NEXTOK__SYMS_CHARS;
    e->wp_max_chars = (int32_t)max;
}

nextok_status nextok__hf_read_encoder(const struct nextok__json *d, uint32_t root,
                                      enum nextok__hf_model kind, struct nextok_vocab *v,
                                      struct nextok_error *err)
{
    struct er r = {d, v, &v->enc, err, false};
    uint32_t model = nextok__hf_get(d, root, "model");
    uint32_t norm = nextok__hf_get(d, root, "normalizer");
    if (norm != NEXTOK__JSON_NO_NODE) norm_one(&r, norm, 0);
    uint32_t pre = nextok__hf_get(d, root, "pre_tokenizer");
    if (pre != NEXTOK__JSON_NO_NODE) NEXTOK_FORWARD(pre_one(&r, pre, 0));
    if (kind == HF_BPE)
        model_bpe(&r, model);
    else if (kind == HF_UNIGRAM)
        model_unigram(&r, model);
    else
        model_wordpiece(&r, model);
    return NEXTOK_OK;
}
