/*
 * GGUF (v2/v3) vocabulary reader: header, then the key/value section; only the
 * tokenizer.ggml.* keys are read, every other key of any type is skipped, and
 * the tensor infos after the key/values are never looked at.
 * Format: github.com/ggml-org/ggml docs/gguf.md. All integers little-endian.
 * Every length and count is checked against the bytes that remain before it
 * is used, so a truncated or hostile file fails with the offset and key.
 */
#include "../common/file.h"
#include "vocab_internal.h"

#include <stdio.h>

enum gguf_type {
    GT_U8 = 0, GT_I8 = 1, GT_U16 = 2, GT_I16 = 3, GT_U32 = 4, GT_I32 = 5, GT_F32 = 6,
    GT_BOOL = 7, GT_STRING = 8, GT_ARRAY = 9, GT_U64 = 10, GT_I64 = 11, GT_F64 = 12,
    GT_COUNT = 13,
};

static const uint8_t type_size[GT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
static const char *const type_name[GT_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};

/* Arrays nest; real files never do, hostile ones could try to recurse deep. */
#define GGUF_MAX_DEPTH 4

struct gguf {
    const unsigned char *p;
    size_t size, off;
    struct nextok_error *err;
    char key[72]; /* current key, quoted; "" in the header */
};

/* A typed array found in the file, read after all keys are known. */
struct gguf_arr {
    bool     present;
    uint32_t type;
    uint64_t count;
    size_t   off;     /* first element */
    size_t   key_off; /* for messages  */
};

static const char *const id_keys[NEXTOK_VOCAB_SPECIAL_COUNT] = {
    [NEXTOK_VOCAB_BOS] = "tokenizer.ggml.bos_token_id",
    [NEXTOK_VOCAB_EOS] = "tokenizer.ggml.eos_token_id",
    [NEXTOK_VOCAB_EOT] = "tokenizer.ggml.eot_token_id",
    [NEXTOK_VOCAB_EOM] = "tokenizer.ggml.eom_token_id",
    [NEXTOK_VOCAB_PAD] = "tokenizer.ggml.padding_token_id",
    [NEXTOK_VOCAB_UNK] = "tokenizer.ggml.unknown_token_id",
};

struct gguf_vals {
    char    model[32];
    bool    has_model;
    char    pre[32];       /* tokenizer.ggml.pre; "?" when too long to be one we know */
    struct gguf_arr tokens, types, scores, merges;
    int64_t ids[NEXTOK_VOCAB_SPECIAL_COUNT];
    uint32_t ids_given;
    int     add_bos, add_eos, add_space_prefix; /* -1: not in the file */
    int     lowercase, strip_accents;           /* bert's normalizer; -1: not in the file */
};

static nextok_status fail(struct gguf *g, size_t off, nextok_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static nextok_status fail(struct gguf *g, size_t off, nextok_status st, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    nextok__vfmt(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (g->key[0])
        return nextok__err(g->err, st, "gguf: offset %zu: key '%s': %s", off, g->key, msg);
    return nextok__err(g->err, st, "gguf: offset %zu: %s", off, msg);
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static nextok_status need(struct gguf *g, uint64_t n, const char *what)
{
    size_t left = g->size - g->off;
    if (n <= left) return NEXTOK_OK;
    return fail(g, g->off, NEXTOK_ERR_FORMAT, "%s needs %llu bytes, only %zu left", what,
                (unsigned long long)n, left);
}

static nextok_status rd_uint(struct gguf *g, int n, uint64_t *v, const char *what)
{
    NEXTOK_FORWARD(need(g, (uint64_t)n, what));
    *v = le(g->p + g->off, n);
    g->off += (size_t)n;
    return NEXTOK_OK;
}

/* A string: u64 length, then the bytes. *s points into the data. */
static nextok_status rd_str(struct gguf *g, const char **s, size_t *len, const char *what)
{
    uint64_t n = 0;
    NEXTOK_FORWARD(rd_uint(g, 8, &n, what));
    NEXTOK_FORWARD(need(g, n, what));
    *s = (const char *)g->p + g->off;
    *len = (size_t)n;
    g->off += (size_t)n;
    return NEXTOK_OK;
}

static nextok_status skip_value(struct gguf *g, uint32_t type, int depth);

static nextok_status check_count(struct gguf *g, uint32_t etype, uint64_t count, size_t at)
{
    /* Each element takes at least this many bytes: bounds the count before
     * any loop runs over it. */
    uint64_t min = etype == GT_STRING ? 8 : etype == GT_ARRAY ? 12 : type_size[etype];
    if (count <= (g->size - g->off) / min) return NEXTOK_OK;
    return fail(g, at, NEXTOK_ERR_FORMAT, "array of %llu %s cannot fit in the %zu bytes left",
                (unsigned long long)count, type_name[etype], g->size - g->off);
}

static nextok_status skip_array(struct gguf *g, int depth)
{
    size_t at = g->off;
    uint64_t etype = 0, count = 0;
    NEXTOK_FORWARD(rd_uint(g, 4, &etype, "array element type"));
    NEXTOK_FORWARD(rd_uint(g, 8, &count, "array length"));
    if (etype >= GT_COUNT)
        return fail(g, at, NEXTOK_ERR_FORMAT, "unknown array element type %llu",
                    (unsigned long long)etype);
    if (depth >= GGUF_MAX_DEPTH)
        return fail(g, at, NEXTOK_ERR_FORMAT, "arrays nested deeper than %d", GGUF_MAX_DEPTH);
    NEXTOK_FORWARD(check_count(g, (uint32_t)etype, count, at));
    if (type_size[etype]) {
        g->off += (size_t)(count * type_size[etype]);
        return NEXTOK_OK;
    }
    for (uint64_t i = 0; i < count; i++) NEXTOK_FORWARD(skip_value(g, (uint32_t)etype, depth + 1));
    return NEXTOK_OK;
}

static nextok_status skip_value(struct gguf *g, uint32_t type, int depth)
{
    const char *s = NULL;
    size_t len = 0;
    if (type == GT_STRING) return rd_str(g, &s, &len, "string");
    if (type == GT_ARRAY) return skip_array(g, depth);
    if (type >= GT_COUNT)
        return fail(g, g->off, NEXTOK_ERR_FORMAT, "unknown value type %u", (unsigned)type);
    NEXTOK_FORWARD(need(g, type_size[type], type_name[type]));
    g->off += type_size[type];
    return NEXTOK_OK;
}

/* ---- the keys we read ----------------------------------------------------- */

static nextok_status wrong_type(struct gguf *g, size_t at, const char *want, uint32_t type,
                                uint32_t etype)
{
    if (type == GT_ARRAY && etype < GT_COUNT)
        return fail(g, at, NEXTOK_ERR_FORMAT, "expected %s, got array of %s", want,
                    type_name[etype]);
    return fail(g, at, NEXTOK_ERR_FORMAT, "expected %s, got %s", want,
                type < GT_COUNT ? type_name[type] : "an unknown type");
}

/* Record an array of one of the accepted element types, validating it. */
static nextok_status take_array(struct gguf *g, uint32_t type, struct gguf_arr *a, uint32_t want1,
                                uint32_t want2, const char *want, size_t key_off)
{
    size_t at = g->off;
    if (type != GT_ARRAY) return wrong_type(g, at, want, type, 0);
    NEXTOK_FORWARD(need(g, 12, "array header"));
    uint32_t etype = (uint32_t)le(g->p + at, 4);
    if (etype != want1 && etype != want2) return wrong_type(g, at, want, type, etype);
    NEXTOK_FORWARD(skip_array(g, 0));
    a->present = true;
    a->type = etype;
    a->count = le(g->p + at + 4, 8);
    a->off = at + 12;
    a->key_off = key_off;
    return NEXTOK_OK;
}

static bool is_int_type(uint32_t t)
{
    return t <= GT_I32 || t == GT_U64 || t == GT_I64;
}

static int64_t int_value(const unsigned char *p, uint32_t t)
{
    uint64_t u = le(p, type_size[t]);
    switch (t) {
    case GT_I8: return (int8_t)u;
    case GT_I16: return (int16_t)u;
    case GT_I32: return (int32_t)u;
    case GT_I64: return (int64_t)u;
    case GT_U64: return u > INT64_MAX ? -1 : (int64_t)u;
    default: return (int64_t)u;
    }
}

static nextok_status take_scalar(struct gguf *g, uint32_t type, bool want_bool, int64_t *v)
{
    size_t at = g->off;
    bool ok = want_bool ? type == GT_BOOL : is_int_type(type);
    if (!ok) return wrong_type(g, at, want_bool ? "bool" : "an integer", type, 0);
    NEXTOK_FORWARD(need(g, type_size[type], type_name[type]));
    *v = int_value(g->p + at, type);
    g->off += type_size[type];
    return NEXTOK_OK;
}

static nextok_status take_model(struct gguf *g, uint32_t type, struct gguf_vals *vals)
{
    size_t at = g->off;
    if (type != GT_STRING) return wrong_type(g, at, "string", type, 0);
    const char *s = NULL;
    size_t len = 0;
    NEXTOK_FORWARD(rd_str(g, &s, &len, "string"));
    if (len >= sizeof vals->model)
        return fail(g, at, NEXTOK_ERR_UNSUPPORTED, "unknown tokenizer model (%zu bytes long)", len);
    memcpy(vals->model, s, len);
    vals->model[len] = '\0';
    vals->has_model = true;
    return NEXTOK_OK;
}

static nextok_status take_pre(struct gguf *g, uint32_t type, struct gguf_vals *vals)
{
    size_t at = g->off;
    if (type != GT_STRING) return wrong_type(g, at, "string", type, 0);
    const char *s = NULL;
    size_t len = 0;
    NEXTOK_FORWARD(rd_str(g, &s, &len, "string"));
    if (len >= sizeof vals->pre) s = "?", len = 1;
    memcpy(vals->pre, s, len);
    vals->pre[len] = '\0';
    return NEXTOK_OK;
}

static int bool_key(const char *key)
{
    if (strcmp(key, "tokenizer.ggml.add_bos_token") == 0) return 0;
    if (strcmp(key, "tokenizer.ggml.add_eos_token") == 0) return 1;
    if (strcmp(key, "tokenizer.ggml.add_space_prefix") == 0) return 2;
    if (strcmp(key, "tokenizer.ggml.normalizer.lowercase") == 0) return 3;
    if (strcmp(key, "tokenizer.ggml.normalizer.strip_accents") == 0) return 4;
    return -1;
}

static nextok_status take_value(struct gguf *g, const char *key, uint32_t type, size_t key_off,
                                struct gguf_vals *vals)
{
    if (strcmp(key, "tokenizer.ggml.model") == 0) return take_model(g, type, vals);
    if (strcmp(key, "tokenizer.ggml.pre") == 0) return take_pre(g, type, vals);
    if (strcmp(key, "tokenizer.ggml.tokens") == 0)
        return take_array(g, type, &vals->tokens, GT_STRING, GT_STRING, "array of string", key_off);
    if (strcmp(key, "tokenizer.ggml.token_type") == 0)
        return take_array(g, type, &vals->types, GT_I32, GT_U32, "array of i32", key_off);
    if (strcmp(key, "tokenizer.ggml.scores") == 0)
        return take_array(g, type, &vals->scores, GT_F32, GT_F32, "array of f32", key_off);
    if (strcmp(key, "tokenizer.ggml.merges") == 0)
        return take_array(g, type, &vals->merges, GT_STRING, GT_STRING, "array of string", key_off);
    for (int k = 0; k < NEXTOK_VOCAB_SPECIAL_COUNT; k++) {
        if (strcmp(key, id_keys[k]) != 0) continue;
        vals->ids_given |= 1u << k;
        return take_scalar(g, type, false, &vals->ids[k]);
    }
    int b = bool_key(key);
    if (b < 0) return skip_value(g, type, 0);
    int64_t v = 0;
    NEXTOK_FORWARD(take_scalar(g, type, true, &v));
    int *dst[5] = {&vals->add_bos, &vals->add_eos, &vals->add_space_prefix, &vals->lowercase,
                   &vals->strip_accents};
    *dst[b] = v != 0;
    return NEXTOK_OK;
}

static nextok_status read_kv(struct gguf *g, uint64_t i, struct gguf_vals *vals)
{
    size_t key_off = g->off;
    const char *key = NULL;
    size_t key_len = 0;
    char name[128];
    g->key[0] = '\0';
    NEXTOK_FORWARD(rd_str(g, &key, &key_len, "key"));
    nextok__quote(g->key, sizeof g->key, key, key_len);
    uint64_t type = 0;
    NEXTOK_FORWARD(rd_uint(g, 4, &type, "value type"));
    if (type >= GT_COUNT)
        return fail(g, g->off - 4, NEXTOK_ERR_FORMAT, "unknown value type %llu (key/value %llu)",
                    (unsigned long long)type, (unsigned long long)i);
    /* Keys we read are short; a longer one cannot be ours. */
    if (key_len >= sizeof name) return skip_value(g, (uint32_t)type, 0);
    memcpy(name, key, key_len);
    name[key_len] = '\0';
    return take_value(g, name, (uint32_t)type, key_off, vals);
}

static nextok_status read_header(struct gguf *g, uint64_t *n_kv)
{
    if (g->size < 4 || memcmp(g->p, "GGUF", 4) != 0)
        return fail(g, 0, NEXTOK_ERR_FORMAT, "not a GGUF file (no \"GGUF\" magic)");
    g->off = 4;
    uint64_t version = 0, n_tensors = 0;
    NEXTOK_FORWARD(rd_uint(g, 4, &version, "version"));
    if ((version & 0xFFFF) == 0 && version != 0)
        return fail(g, 4, NEXTOK_ERR_UNSUPPORTED, "big-endian GGUF is not supported");
    if (version != 2 && version != 3)
        return fail(g, 4, NEXTOK_ERR_UNSUPPORTED, "GGUF version %llu (only 2 and 3 are supported)",
                    (unsigned long long)version);
    NEXTOK_FORWARD(rd_uint(g, 8, &n_tensors, "tensor count"));
    NEXTOK_FORWARD(rd_uint(g, 8, n_kv, "key/value count"));
    /* The smallest key/value (empty key, u8) takes 13 bytes. */
    if (*n_kv > (g->size - g->off) / 13)
        return fail(g, 16, NEXTOK_ERR_FORMAT, "%llu key/values cannot fit in the %zu bytes left",
                    (unsigned long long)*n_kv, g->size - g->off);
    return NEXTOK_OK;
}

/* ---- building the vocabulary ------------------------------------------------ */

static nextok_status check_len(struct gguf *g, const struct gguf_arr *a, const char *key, uint64_t n)
{
    if (!a->present || a->count == n) return NEXTOK_OK;
    nextok__quote(g->key, sizeof g->key, key, strlen(key));
    return fail(g, a->key_off, NEXTOK_ERR_FORMAT, "%llu entries, but there are %llu tokens",
                (unsigned long long)a->count, (unsigned long long)n);
}

static nextok_status read_tokens(struct gguf *g, struct nextok_vocab *v, const struct gguf_arr *a)
{
    g->off = a->off;
    for (int32_t i = 0; i < v->n_tokens; i++) {
        const char *s = NULL;
        size_t len = 0, at = g->off;
        NEXTOK_FORWARD(rd_str(g, &s, &len, "token"));
        struct nextok_error e = {NEXTOK_OK, ""};
        nextok_status rc = nextok__vocab_set_text(v, i, s, len, &e);
        if (rc != NEXTOK_OK) return fail(g, at, rc, "%s", e.msg);
    }
    return NEXTOK_OK;
}

static uint8_t attrs_of(int type)
{
    switch (type) {
    case NEXTOK_TOKEN_TYPE_CONTROL:
    case NEXTOK_TOKEN_TYPE_UNKNOWN:
        return NEXTOK_TOKEN_ATTR_SPECIAL | NEXTOK_TOKEN_ATTR_ADDED;
    case NEXTOK_TOKEN_TYPE_USER_DEFINED:
        return NEXTOK_TOKEN_ATTR_ADDED;
    default:
        return 0;
    }
}

static nextok_status read_types(struct gguf *g, struct nextok_vocab *v, const struct gguf_arr *a)
{
    for (int32_t i = 0; i < v->n_tokens; i++) {
        struct nextok__tok *t = &v->toks[i];
        int64_t ty;
        if (a->present) {
            ty = (int32_t)le(g->p + a->off + 4 * (size_t)i, 4);
        } else {
            /* No types: only byte-fallback tokens can be told apart. */
            bool byte = v->type == NEXTOK_VOCAB_TYPE_SPM &&
                        nextok__byte_token(nextok__tok_text(v, t), t->text_len) >= 0;
            ty = byte ? NEXTOK_TOKEN_TYPE_BYTE : NEXTOK_TOKEN_TYPE_NORMAL;
        }
        if (ty == 0) ty = NEXTOK_TOKEN_TYPE_NORMAL; /* llama.cpp's "undefined" */
        if (ty < 0 || ty > NEXTOK_TOKEN_TYPE_BYTE) {
            strcpy(g->key, "tokenizer.ggml.token_type");
            return fail(g, a->off + 4 * (size_t)i, NEXTOK_ERR_FORMAT,
                        "token %ld has type %lld (not 1..6)", (long)i, (long long)ty);
        }
        t->type = (uint8_t)ty;
        t->attrs |= attrs_of((int)ty);
    }
    return NEXTOK_OK;
}

static void read_scores(struct gguf *g, struct nextok_vocab *v, const struct gguf_arr *a)
{
    if (!a->present) return;
    for (int32_t i = 0; i < v->n_tokens; i++) {
        uint32_t bits = (uint32_t)le(g->p + a->off + 4 * (size_t)i, 4);
        memcpy(&v->toks[i].score, &bits, sizeof bits);
    }
}

static nextok_status read_merges(struct gguf *g, struct nextok_vocab *v, const struct gguf_arr *a)
{
    if (!a->present) return NEXTOK_OK;
    g->off = a->off;
    strcpy(g->key, "tokenizer.ggml.merges");
    for (uint64_t i = 0; i < a->count; i++) {
        const char *s = NULL;
        size_t len = 0;
        size_t at = g->off;
        NEXTOK_FORWARD(rd_str(g, &s, &len, "merge"));
        struct nextok_error e = {NEXTOK_OK, ""};
        nextok_status rc = nextok__vocab_add_merge_str(v, s, len, &e);
        if (rc != NEXTOK_OK) return fail(g, at, rc, "merge %llu: %s", (unsigned long long)i, e.msg);
    }
    return NEXTOK_OK;
}

/* The HF decoder chain that goes with each GGUF tokenizer model. */
static nextok_status model_decoder(struct gguf *g, struct gguf_vals *vals, struct nextok_vocab *v,
                                   struct nextok__decoder *dec)
{
    static const struct nextok__dec_step replace = {NEXTOK__DEC_REPLACE, 3, 1, "\xe2\x96\x81", " ", 0, 0, 0};
    static const struct nextok__dec_step bytes = {.op = NEXTOK__DEC_BYTE_FALLBACK};
    static const struct nextok__dec_step fuse = {.op = NEXTOK__DEC_FUSE};
    static const struct nextok__dec_step strip = {NEXTOK__DEC_STRIP, 1, 0, " ", "", 1, 0, 0};
    static const struct nextok__dec_step meta = {NEXTOK__DEC_METASPACE, 3, 0, "\xe2\x96\x81", "", 0, 0, true};
    static const struct nextok__dec_step blevel = {.op = NEXTOK__DEC_BYTE_LEVEL};
    static const struct nextok__dec_step wpm = {NEXTOK__DEC_WORDPIECE, 2, 0, "##", "", 0, 0, true};
    bool prefix = vals->add_space_prefix != 0; /* llama.cpp's default: true */
    const char *m = vals->model;
    dec->n = 0;
    if (strcmp(m, "llama") == 0) {
        v->type = NEXTOK_VOCAB_TYPE_SPM;
        dec->steps[dec->n++] = replace;
        dec->steps[dec->n++] = bytes;
        dec->steps[dec->n++] = fuse;
        if (prefix) dec->steps[dec->n++] = strip;
    } else if (strcmp(m, "gpt2") == 0) {
        v->type = NEXTOK_VOCAB_TYPE_BPE;
        dec->steps[dec->n++] = blevel;
    } else if (strcmp(m, "bert") == 0) {
        v->type = NEXTOK_VOCAB_TYPE_WPM;
        dec->steps[dec->n++] = wpm;
    } else if (strcmp(m, "t5") == 0) {
        v->type = NEXTOK_VOCAB_TYPE_UGM;
        dec->steps[dec->n++] = meta;
        dec->steps[dec->n - 1].flag = prefix;
        dec->steps[dec->n++] = bytes;
    } else {
        strcpy(g->key, "tokenizer.ggml.model");
        return fail(g, 0, NEXTOK_ERR_UNSUPPORTED, "tokenizer model \"%s\" is not supported", m);
    }
    return NEXTOK_OK;
}

/* GGUF bert: HF's BERT pipeline, which llama.cpp's WPM tokenizer
 * reproduces (its test ids are HF's): BertNormalizer (lowercase unless the
 * file says not; strip_accents as lowercase unless the file says), then
 * BertPreTokenizer, then WordPiece over GGUF's spelling of the pieces, where
 * a word's first piece starts with "▁" and the others have no "##". */
static void set_bert_encoder(const struct gguf_vals *vals, struct nextok__enc *e)
{
#if defined(NEXTOK_HAVE_UTF8PROC)
    bool lower = vals->lowercase != 0;
    bool strip = vals->strip_accents >= 0 ? vals->strip_accents != 0 : lower;
    nextok__enc_add_bert(e, true, true, strip, lower);
    nextok__enc_add_bert_split(e);
    e->merge_by = NEXTOK__MODEL_WORDPIECE;
    e->syms = NEXTOK__SYMS_CHARS;
    memcpy(e->wp_start, "\xe2\x96\x81", 3);
    e->wp_start_len = 3;
    e->wp_prefix_len = 0;
    e->wp_max_chars = 100;
#else
    (void)vals;
    nextok__enc_refuse(e, "GGUF bert: its normalizer needs utf8proc "
                          "(built with NEXTOK_WITH_UTF8PROC=OFF)");
#endif
}

/* What llama.cpp does to encode: byte-level BPE by merge rank with the
 * regex its tokenizer.ggml.pre names (the ones nextok knows), or
 * SentencePiece BPE by score with byte fallback and the dummy prefix. */
static void set_encoder(const struct gguf_vals *vals, struct nextok_vocab *v)
{
    struct nextok__enc *e = &v->enc;
    char why[96];
    if (strcmp(vals->model, "gpt2") == 0) {
        const char *p = vals->pre, *re = NULL;
        if (strcmp(p, "gpt-2") == 0) re = nextok__re_gpt2;
        else if (strcmp(p, "llama-bpe") == 0 || strcmp(p, "llama3") == 0) re = nextok__re_llama3;
        else if (strcmp(p, "qwen2") == 0) re = nextok__re_qwen2;
        if (!re) {
            snprintf(why, sizeof why, "GGUF tokenizer.ggml.pre \"%.32s\" is not supported",
                     p[0] ? p : "(none)");
            nextok__enc_refuse(e, why);
            return;
        }
        e->merge_by = NEXTOK__MERGE_RANKS;
        e->syms = NEXTOK__SYMS_BYTE_LEVEL;
        e->ignore_merges = re == nextok__re_llama3;
        nextok__enc_add_regex(e, re, NEXTOK__SPLIT_ISOLATED);
    } else if (strcmp(vals->model, "llama") == 0) {
        e->merge_by = NEXTOK__MERGE_SCORES;
        e->syms = NEXTOK__SYMS_CHARS;
        e->spm_words = true;
        e->byte_fallback = true;
        struct nextok__norm_step rep = {.op = NEXTOK__NORM_REPLACE, .a_len = 1, .b_len = 3};
        memcpy(rep.a, " ", 1);
        memcpy(rep.b, "\xe2\x96\x81", 3);
        struct nextok__norm_step pre = {.op = NEXTOK__NORM_PREPEND, .a_len = 3};
        memcpy(pre.a, "\xe2\x96\x81", 3);
        nextok__enc_add_norm(e, &rep);
        if (vals->add_space_prefix != 0) nextok__enc_add_norm(e, &pre);
    } else if (strcmp(vals->model, "bert") == 0) {
        set_bert_encoder(vals, e);
    } else {
        snprintf(why, sizeof why, "encoding GGUF tokenizer model \"%s\" is not supported", vals->model);
        nextok__enc_refuse(e, why);
    }
}

static void set_roles(struct nextok_vocab *v, const struct gguf_vals *vals)
{
    v->special_given = vals->ids_given;
    for (int k = 0; k < NEXTOK_VOCAB_SPECIAL_COUNT; k++) {
        int64_t id = vals->ids[k];
        bool ok = ((vals->ids_given >> k) & 1u) && id >= 0 && id < v->n_tokens;
        v->special[k] = ok ? (int32_t)id : -1; /* out of range: none, like llama.cpp */
    }
    bool spm = v->type == NEXTOK_VOCAB_TYPE_SPM;
    v->add_bos = vals->add_bos >= 0 ? vals->add_bos != 0 : spm;
    v->add_eos = vals->add_eos > 0;
}

static nextok_status build(struct gguf *g, struct gguf_vals *vals, struct nextok_vocab *v)
{
    struct nextok__decoder dec;
    g->key[0] = '\0';
    if (!vals->has_model) return fail(g, g->off, NEXTOK_ERR_FORMAT, "no tokenizer.ggml.model key");
    if (!vals->tokens.present)
        return fail(g, g->off, NEXTOK_ERR_FORMAT, "no tokenizer.ggml.tokens key");
    NEXTOK_FORWARD(model_decoder(g, vals, v, &dec));
    uint64_t n = vals->tokens.count;
    strcpy(g->key, "tokenizer.ggml.tokens");
    if (n == 0 || n > NEXTOK__VOCAB_MAX_TOKENS)
        return fail(g, vals->tokens.key_off, NEXTOK_ERR_FORMAT, "%llu tokens (must be 1..%d)",
                    (unsigned long long)n, NEXTOK__VOCAB_MAX_TOKENS);
    NEXTOK_FORWARD(check_len(g, &vals->types, "tokenizer.ggml.token_type", n));
    NEXTOK_FORWARD(check_len(g, &vals->scores, "tokenizer.ggml.scores", n));
    NEXTOK_FORWARD(nextok__vocab_alloc_tokens(v, (int32_t)n, g->err));
    strcpy(g->key, "tokenizer.ggml.tokens");
    NEXTOK_FORWARD(read_tokens(g, v, &vals->tokens));
    NEXTOK_FORWARD(read_types(g, v, &vals->types));
    read_scores(g, v, &vals->scores);
    NEXTOK_FORWARD(read_merges(g, v, &vals->merges));
    set_roles(v, vals);
    set_encoder(vals, v);
    return nextok__vocab_finish(v, &dec, NULL, 0, g->err);
}

nextok_status nextok__load_gguf_mem(struct nextok_vocab **out, const struct nextok__mem *mem,
                                    const void *data, size_t size, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!data && size, err, NEXTOK_ERR_INVALID_ARG, "data: must not be NULL");
    struct gguf g = {data, size, 0, err, ""};
    struct gguf_vals vals;
    memset(&vals, 0, sizeof vals);
    vals.add_bos = vals.add_eos = vals.add_space_prefix = -1;
    vals.lowercase = vals.strip_accents = -1;
    uint64_t n_kv = 0;
    NEXTOK_FORWARD(read_header(&g, &n_kv));
    for (uint64_t i = 0; i < n_kv; i++) NEXTOK_FORWARD(read_kv(&g, i, &vals));
    struct nextok_vocab *v;
    NEXTOK_FORWARD(nextok__vocab_new(&v, mem, err));
    nextok_status rc = build(&g, &vals, v);
    if (rc != NEXTOK_OK) {
        nextok_vocab_free(v);
        return rc;
    }
    *out = v;
    return NEXTOK_OK;
}

nextok_status nextok_vocab_load_gguf_mem(struct nextok_vocab **out, const void *data, size_t size,
                                         struct nextok_error *err)
{
    return nextok__load_gguf_mem(out, &nextok__mem_libc, data, size, err);
}

nextok_status nextok__load_gguf(struct nextok_vocab **out, const struct nextok__mem *mem,
                                const char *path, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!path, err, NEXTOK_ERR_INVALID_ARG, "path: must not be NULL");
    char *data;
    size_t size;
    NEXTOK_FORWARD(nextok__read_file(mem, path, &data, &size, err));
    nextok_status rc = nextok__load_gguf_mem(out, mem, data, size, err);
    nextok__free(mem, data);
    return rc;
}

nextok_status nextok_vocab_load_gguf(struct nextok_vocab **out, const char *path,
                                     struct nextok_error *err)
{
    return nextok__load_gguf(out, &nextok__mem_libc, path, err);
}
