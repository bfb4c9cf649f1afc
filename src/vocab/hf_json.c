/*
 * HF tokenizer.json reader (plus tokenizer_config.json and
 * generation_config.json when given), on the project's own JSON reader
 * (common/json.h).
 *
 * model.vocab and model.merges hold nearly all of the file (Llama 3: 128k
 * vocab entries, 280k merges). The document is parsed into a small tree with
 * those two left as validated spans of the text; the pull scanner then reads
 * them straight into the vocabulary's arena. Everything else (model type,
 * added_tokens, decoder, post_processor) is read from the tree.
 */
#include "hf_internal.h"

#include "../common/file.h"
#include "../common/utf8.h"

#include <stdio.h>
#include <sys/stat.h>

struct hf_entry {
    uint32_t off, len; /* text in the arena */
    int32_t  id;
    double   score;    /* Unigram: the encoder keeps it exact */
};

struct hf_added {
    const char *content; /* in the tree's strings */
    size_t      len;
    int32_t     id;
    bool        special;
};

struct hf {
    const struct nextok__mem *mem; /* the load's and the vocabulary's */
    struct nextok_vocab *v;
    struct nextok_error *err;
    const char *text;    /* tokenizer.json, after any byte order mark */
    size_t      size;
    struct nextok__json doc;
    uint32_t    model;   /* node of the "model" object */
    const char *vocab, *vocab_end, *merges, *merges_end; /* spans in text */
    enum nextok__hf_model kind;
    struct hf_entry *ent;
    size_t n_ent, cap_ent;
    struct hf_added *added;
    size_t n_added;
    int32_t max_id;
    struct nextok__decoder dec;
    int32_t gen_eos[64];
    size_t  n_gen_eos;
};

/* ---- errors --------------------------------------------------------------- */

static nextok_status js_error(struct hf *h, const struct nextok__js *s, const char *where)
{
    if (s->nomem) return nextok__err(h->err, NEXTOK_ERR_NOMEM, "tokenizer.json: out of memory");
    return nextok__err(h->err, NEXTOK_ERR_FORMAT, "tokenizer.json: byte %zu%s%s: %s",
                       nextok__js_offset(s), where[0] ? " in " : "", where,
                       s->err_what ? s->err_what : "invalid JSON");
}

static nextok_status key_error(struct hf *h, const char *path, const char *key, size_t len,
                               const char *msg)
{
    char q[64];
    nextok__quote(q, sizeof q, key, len < 48 ? len : 48);
    return nextok__err(h->err, NEXTOK_ERR_FORMAT, "tokenizer.json: %s[\"%s%s\"]: %s", path, q,
                       len > 48 ? "..." : "", msg);
}

/* ---- the document ----------------------------------------------------------- */

static const char *const vocab_path[] = {"model", "vocab", NULL};
static const char *const merges_path[] = {"model", "merges", NULL};
static const char *const *const raw_paths[] = {vocab_path, merges_path, NULL};

/* The span of a RAW member of the model, or NULLs. */
static void raw_span(const struct hf *h, const char *key, const char **start, const char **end)
{
    uint32_t o = nextok__json_get(&h->doc, h->model, key);
    *start = *end = NULL;
    if (nextok__json_type(&h->doc, o) != NEXTOK__JSON_RAW) return;
    *start = h->text + h->doc.node[o].off;
    *end = *start + h->doc.node[o].len;
}

/* Parse (and so validate) the whole text; model.vocab and model.merges stay
 * spans of it. */
static nextok_status parse_doc(struct hf *h)
{
    NEXTOK_FORWARD(nextok__json_parse_object(&h->doc, h->mem, h->text, h->size, raw_paths,
                                             "tokenizer.json", h->err));
    h->model = nextok__hf_get(&h->doc, 0, "model");
    raw_span(h, "vocab", &h->vocab, &h->vocab_end);
    raw_span(h, "merges", &h->merges, &h->merges_end);
    return NEXTOK_OK;
}

static nextok_status jstr(struct hf *h, uint32_t o, const char *path, const char **s, size_t *len)
{
    *s = nextok__json_str(&h->doc, o, len);
    NEXTOK_RETURN_IF(!*s, h->err, NEXTOK_ERR_FORMAT, "tokenizer.json: %s: expected a string", path);
    return NEXTOK_OK;
}

static nextok_status jid(struct hf *h, uint32_t o, const char *path, int32_t *id)
{
    int64_t v = -1;
    if (!nextok__json_int(&h->doc, o, &v)) v = -1;
    NEXTOK_RETURN_IF(v < 0 || v >= NEXTOK__VOCAB_MAX_TOKENS, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: expected an integer in [0, 2^24)", path);
    *id = (int32_t)v;
    return NEXTOK_OK;
}

/* ---- model.vocab ------------------------------------------------------------ */

static nextok_status push_entry(struct hf *h, uint32_t off, uint32_t len, int32_t id, double score)
{
    if (h->n_ent == h->cap_ent) {
        size_t cap = h->cap_ent ? h->cap_ent * 2 : 4096;
        struct hf_entry *p = nextok__realloc(h->mem, h->ent, cap * sizeof *p);
        NEXTOK_RETURN_IF(!p, h->err, NEXTOK_ERR_NOMEM, "tokenizer.json: out of memory");
        h->ent = p;
        h->cap_ent = cap;
    }
    h->ent[h->n_ent++] = (struct hf_entry){off, len, id, score};
    if (id > h->max_id) h->max_id = id;
    return NEXTOK_OK;
}

/* The text just appended to the arena at off: its length, checked. */
static nextok_status arena_text(struct hf *h, size_t off, uint32_t *len, const char *path,
                                size_t index)
{
    struct nextok_vocab *v = h->v;
    NEXTOK_RETURN_IF(v->arena.len > NEXTOK__ARENA_MAX, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: vocabulary text exceeds 4 GiB", path);
    size_t n = v->arena.len - off;
    NEXTOK_RETURN_IF(n > NEXTOK__TOKEN_MAX_BYTES, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s[%zu]: token longer than 64 KiB", path, index);
    *len = (uint32_t)n;
    return NEXTOK_OK;
}

/* BPE / WordPiece: {"token": id, ...} */
static nextok_status vocab_object(struct hf *h, struct nextok__js *s)
{
    struct nextok_vocab *v = h->v;
    bool first = true;
    int r;
    if (!nextok__js_enter(s, '{')) return js_error(h, s, "model.vocab");
    for (size_t i = 0;; i++) {
        size_t off = v->arena.len;
        if ((r = nextok__js_member(s, &first, &v->arena)) != 1) break;
        uint32_t len = 0;
        int64_t id = 0;
        NEXTOK_FORWARD(arena_text(h, off, &len, "model.vocab", i));
        if (!nextok__js_int(s, &id)) return js_error(h, s, "model.vocab");
        if (id < 0 || id >= NEXTOK__VOCAB_MAX_TOKENS)
            return key_error(h, "model.vocab", v->arena.data + off, len,
                             "id must be an integer in [0, 2^24)");
        NEXTOK_FORWARD(push_entry(h, (uint32_t)off, len, (int32_t)id, 0.0));
    }
    return r == 0 ? NEXTOK_OK : js_error(h, s, "model.vocab");
}

/* Unigram: [["piece", score], ...], the id being the index. */
static nextok_status vocab_pair(struct hf *h, struct nextok__js *s, size_t i)
{
    struct nextok_vocab *v = h->v;
    const char *what = "model.vocab (a [piece, score] pair)";
    bool f = true;
    size_t off = v->arena.len;
    uint32_t len = 0;
    double score = 0;
    if (!(nextok__js_enter(s, '[') && nextok__js_element(s, &f) == 1 &&
          nextok__js_string(s, &v->arena)))
        return js_error(h, s, what);
    NEXTOK_FORWARD(arena_text(h, off, &len, "model.vocab", i));
    if (!(nextok__js_element(s, &f) == 1 && nextok__js_number(s, &score) &&
          nextok__js_element(s, &f) == 0))
        return js_error(h, s, what);
    NEXTOK_RETURN_IF(i >= NEXTOK__VOCAB_MAX_TOKENS, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: model.vocab: more than 2^24 entries");
    return push_entry(h, (uint32_t)off, len, (int32_t)i, score);
}

static nextok_status vocab_array(struct hf *h, struct nextok__js *s)
{
    bool first = true;
    int r;
    if (!nextok__js_enter(s, '[')) return js_error(h, s, "model.vocab");
    for (size_t i = 0; (r = nextok__js_element(s, &first)) == 1; i++)
        NEXTOK_FORWARD(vocab_pair(h, s, i));
    return r == 0 ? NEXTOK_OK : js_error(h, s, "model.vocab");
}

static nextok_status read_vocab(struct hf *h)
{
    NEXTOK_RETURN_IF(!h->vocab, h->err, NEXTOK_ERR_FORMAT, "tokenizer.json: model.vocab: missing");
    struct nextok__js s;
    nextok__js_init(&s, h->mem, h->text, (size_t)(h->vocab_end - h->text));
    s.p = h->vocab;
    if (h->kind == HF_UNIGRAM) return vocab_array(h, &s);
    return vocab_object(h, &s);
}

/* ---- model.merges ------------------------------------------------------------ */

static nextok_status merge_pair(struct hf *h, struct nextok__js *s, size_t i)
{
    struct nextok_vocab *v = h->v;
    bool f = true;
    size_t off = v->arena.len;
    if (!(nextok__js_enter(s, '[') && nextok__js_element(s, &f) == 1 &&
          nextok__js_string(s, &v->arena)))
        return js_error(h, s, "model.merges");
    size_t mid = v->arena.len;
    if (!(nextok__js_element(s, &f) == 1 && nextok__js_string(s, &v->arena) &&
          nextok__js_element(s, &f) == 0))
        return js_error(h, s, "model.merges (a [left, right] pair)");
    NEXTOK_RETURN_IF(v->arena.len > NEXTOK__ARENA_MAX, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: model.merges[%zu]: vocabulary text exceeds 4 GiB", i);
    return nextok__vocab_add_merge(v, (uint32_t)off, (uint32_t)(mid - off),
                                   (uint32_t)(v->arena.len - mid), h->err);
}

static nextok_status merge_string(struct hf *h, struct nextok__js *s, struct nextok__buf *tmp,
                                  size_t i)
{
    tmp->len = 0;
    if (!nextok__js_string(s, tmp)) return js_error(h, s, "model.merges");
    struct nextok_error e = {NEXTOK_OK, ""};
    nextok_status rc = nextok__vocab_add_merge_str(h->v, tmp->data, tmp->len, &e);
    NEXTOK_RETURN_IF(rc != NEXTOK_OK, h->err, rc, "tokenizer.json: model.merges[%zu]: %s", i, e.msg);
    return NEXTOK_OK;
}

static nextok_status read_merges(struct hf *h)
{
    if (!h->merges || h->kind != HF_BPE) return NEXTOK_OK;
    struct nextok__js s;
    struct nextok__buf tmp = nextok__buf_of(h->mem);
    bool first = true;
    int r;
    nextok_status rc = NEXTOK_OK;
    nextok__js_init(&s, h->mem, h->text, (size_t)(h->merges_end - h->text));
    s.p = h->merges;
    if (!nextok__js_enter(&s, '[')) return js_error(h, &s, "model.merges");
    for (size_t i = 0; rc == NEXTOK_OK && (r = nextok__js_element(&s, &first)) == 1; i++) {
        rc = nextok__js_peek(&s) == '[' ? merge_pair(h, &s, i) : merge_string(h, &s, &tmp, i);
    }
    nextok__buf_free(&tmp);
    if (rc == NEXTOK_OK && r != 0) rc = js_error(h, &s, "model.merges");
    return rc;
}

/* ---- model kind, added_tokens ------------------------------------------------ */

static nextok_status model_kind(struct hf *h)
{
    const struct nextok__json *d = &h->doc;
    NEXTOK_RETURN_IF(nextok__json_type(d, h->model) != NEXTOK__JSON_OBJECT, h->err,
                     NEXTOK_ERR_FORMAT, "tokenizer.json: model: missing or not an object");
    uint32_t t = nextok__hf_get(d, h->model, "type");
    if (t == NEXTOK__JSON_NO_NODE) {
        /* Old files have no type: a list vocab is Unigram, merges mean BPE. */
        bool list = h->vocab && *h->vocab == '[';
        h->kind = list ? HF_UNIGRAM : h->merges ? HF_BPE : HF_WORDPIECE;
        return NEXTOK_OK;
    }
    size_t len;
    const char *s = nextok__json_str(d, t, &len);
    NEXTOK_RETURN_IF(!s, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: model.type: expected a string");
    if (nextok__hf_is(d, t, "BPE")) h->kind = HF_BPE;
    else if (nextok__hf_is(d, t, "Unigram")) h->kind = HF_UNIGRAM;
    else if (nextok__hf_is(d, t, "WordPiece")) h->kind = HF_WORDPIECE;
    else {
        char q[48];
        nextok__quote(q, sizeof q, s, len < 40 ? len : 40);
        return nextok__err(h->err, NEXTOK_ERR_UNSUPPORTED,
                           "tokenizer.json: model.type: \"%s\" is not supported", q);
    }
    return NEXTOK_OK;
}

static nextok_status added_one(struct hf *h, uint32_t o, size_t i, struct hf_added *a)
{
    const struct nextok__json *d = &h->doc;
    char path[64];
    snprintf(path, sizeof path, "added_tokens[%zu]", i);
    NEXTOK_RETURN_IF(nextok__json_type(d, o) != NEXTOK__JSON_OBJECT, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: expected an object", path);
    snprintf(path, sizeof path, "added_tokens[%zu].id", i);
    NEXTOK_FORWARD(jid(h, nextok__hf_get(d, o, "id"), path, &a->id));
    snprintf(path, sizeof path, "added_tokens[%zu].content", i);
    NEXTOK_FORWARD(jstr(h, nextok__hf_get(d, o, "content"), path, &a->content, &a->len));
    NEXTOK_RETURN_IF(a->len == 0 || a->len > NEXTOK__TOKEN_MAX_BYTES, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: must be 1 byte to 64 KiB long", path);
    uint32_t sp = nextok__hf_get(d, o, "special");
    NEXTOK_RETURN_IF(sp != NEXTOK__JSON_NO_NODE && !nextok__hf_bool(d, sp), h->err,
                     NEXTOK_ERR_FORMAT,
                     "tokenizer.json: added_tokens[%zu].special: expected true or false", i);
    a->special = nextok__hf_true(d, sp);
    if (a->id > h->max_id) h->max_id = a->id;
    return NEXTOK_OK;
}

static nextok_status read_added(struct hf *h)
{
    uint32_t arr = nextok__hf_get(&h->doc, 0, "added_tokens");
    if (arr == NEXTOK__JSON_NO_NODE) return NEXTOK_OK;
    NEXTOK_RETURN_IF(nextok__json_type(&h->doc, arr) != NEXTOK__JSON_ARRAY, h->err,
                     NEXTOK_ERR_FORMAT, "tokenizer.json: added_tokens: expected an array");
    size_t n = nextok__json_len(&h->doc, arr);
    h->added = nextok__calloc(h->mem, n ? n : 1, sizeof *h->added);
    NEXTOK_RETURN_IF(!h->added, h->err, NEXTOK_ERR_NOMEM, "tokenizer.json: out of memory");
    h->n_added = n;
    size_t i = 0;
    for (uint32_t e = nextok__json_first(&h->doc, arr); e != NEXTOK__JSON_NO_NODE;
         e = nextok__json_next(&h->doc, e), i++)
        NEXTOK_FORWARD(added_one(h, e, i, &h->added[i]));
    return NEXTOK_OK;
}

/* ---- placing tokens -------------------------------------------------------------- */

static nextok_status place_vocab(struct hf *h, bool byte_fallback)
{
    struct nextok_vocab *v = h->v;
    for (size_t i = 0; i < h->n_ent; i++) {
        const struct hf_entry *e = &h->ent[i];
        struct nextok__tok *t = &v->toks[e->id];
        if (!(t->attrs & NEXTOK_TOKEN_ATTR_ABSENT)) {
            char msg[120], q[40];
            nextok__quote(q, sizeof q, nextok__tok_text(v, t), t->text_len < 24 ? t->text_len : 24);
            snprintf(msg, sizeof msg, "id %ld is also the id of \"%s\"", (long)e->id, q);
            return key_error(h, "model.vocab", v->arena.data + e->off, e->len, msg);
        }
        t->text_off = e->off;
        t->text_len = e->len;
        t->score = (float)e->score;
        t->attrs = 0;
        bool byte = byte_fallback && nextok__byte_token(v->arena.data + e->off, e->len) >= 0;
        t->type = byte ? NEXTOK_TOKEN_TYPE_BYTE : NEXTOK_TOKEN_TYPE_NORMAL;
    }
    return NEXTOK_OK;
}

static nextok_status place_added(struct hf *h)
{
    struct nextok_vocab *v = h->v;
    for (size_t i = 0; i < h->n_added; i++) {
        const struct hf_added *a = &h->added[i];
        struct nextok__tok *t = &v->toks[a->id];
        NEXTOK_RETURN_IF(t->attrs & NEXTOK_TOKEN_ATTR_ADDED, h->err, NEXTOK_ERR_FORMAT,
                         "tokenizer.json: added_tokens[%zu].id: %ld repeats an earlier added token",
                         i, (long)a->id);
        /* Like HF's id_to_token, the added token's content wins over the model's. */
        NEXTOK_FORWARD(nextok__vocab_set_text(v, a->id, a->content, a->len, h->err));
        t->attrs = NEXTOK_TOKEN_ATTR_ADDED | (a->special ? NEXTOK_TOKEN_ATTR_SPECIAL : 0);
        t->type = a->special ? NEXTOK_TOKEN_TYPE_CONTROL : NEXTOK_TOKEN_TYPE_USER_DEFINED;
    }
    return NEXTOK_OK;
}

/* Two vocab keys with the same text: serde keeps one, so the other id would
 * silently lose its token; refuse the file instead. */
static nextok_status check_unique(struct hf *h)
{
    struct nextok_vocab *v = h->v;
    for (size_t i = 0; i < h->n_ent; i++) {
        const struct hf_entry *e = &h->ent[i];
        if (v->toks[e->id].attrs & NEXTOK_TOKEN_ATTR_ADDED) continue; /* text replaced */
        int32_t id = nextok__vocab_lookup(v, v->arena.data + e->off, e->len);
        if (id < 0 || id == e->id || (v->toks[id].attrs & NEXTOK_TOKEN_ATTR_ADDED)) continue;
        return key_error(h, "model.vocab", v->arena.data + e->off, e->len, "key appears twice");
    }
    return NEXTOK_OK;
}

static nextok_status set_unk(struct hf *h)
{
    struct nextok_vocab *v = h->v;
    int32_t id = -1;
    uint32_t u = nextok__hf_get(&h->doc, h->model, h->kind == HF_UNIGRAM ? "unk_id" : "unk_token");
    if (u != NEXTOK__JSON_NO_NODE && h->kind == HF_UNIGRAM) {
        NEXTOK_FORWARD(jid(h, u, "model.unk_id", &id));
    } else if (u != NEXTOK__JSON_NO_NODE) {
        const char *s = NULL;
        size_t len = 0;
        NEXTOK_FORWARD(jstr(h, u, "model.unk_token", &s, &len));
        id = nextok__vocab_lookup(v, s, len);
    }
    if (id < 0 || id >= v->n_tokens) return NEXTOK_OK;
    v->special[NEXTOK_VOCAB_UNK] = id;
    v->toks[id].type = NEXTOK_TOKEN_TYPE_UNKNOWN;
    return NEXTOK_OK;
}

static nextok_status build_tokens(struct hf *h)
{
    struct nextok_vocab *v = h->v;
    size_t defined = h->n_ent + h->n_added;
    NEXTOK_RETURN_IF(h->max_id < 0, h->err, NEXTOK_ERR_FORMAT, "tokenizer.json: no tokens");
    /* Ids far past the tokens defined would only make a huge, empty table. */
    NEXTOK_RETURN_IF((size_t)h->max_id >= 2 * defined + 65536, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: id %ld is absurdly far beyond the %zu tokens defined",
                     (long)h->max_id, defined);
    NEXTOK_FORWARD(nextok__vocab_alloc_tokens(v, h->max_id + 1, h->err));
    uint32_t bf = nextok__hf_get(&h->doc, h->model, "byte_fallback");
    bool byte_fallback = nextok__hf_true(&h->doc, bf);
    NEXTOK_FORWARD(place_vocab(h, byte_fallback));
    NEXTOK_FORWARD(place_added(h));
    NEXTOK_FORWARD(nextok__vocab_build_hash(v, h->err));
    NEXTOK_FORWARD(check_unique(h));
    return set_unk(h);
}

/* The Unigram encoder's exact scores: each model piece's, NAN elsewhere. */
static nextok_status unigram_scores(struct hf *h)
{
    struct nextok_vocab *v = h->v;
    struct nextok__enc *e = &v->enc;
    e->uscore = nextok__alloc_array(&v->mem, (size_t)v->n_tokens, sizeof *e->uscore);
    NEXTOK_RETURN_IF(!e->uscore, h->err, NEXTOK_ERR_NOMEM, "tokenizer.json: out of memory");
    for (int32_t id = 0; id < v->n_tokens; id++) e->uscore[id] = NAN;
    double min = INFINITY;
    for (size_t i = 0; i < h->n_ent; i++) {
        const struct hf_entry *x = &h->ent[i];
        e->uscore[x->id] = x->score;
        if (x->score < min) min = x->score;
        if (x->len > e->max_piece) e->max_piece = x->len;
    }
    e->unk_score = min - 10.0; /* HF's kUnkPenalty */
    return NEXTOK_OK;
}

/* ---- vocabulary type, post_processor ------------------------------------------------- */

static enum nextok_vocab_type vocab_type(const struct hf *h)
{
    if (h->kind == HF_UNIGRAM) return NEXTOK_VOCAB_TYPE_UGM;
    if (h->kind == HF_WORDPIECE) return NEXTOK_VOCAB_TYPE_WPM;
    for (int i = 0; i < h->dec.n; i++)
        if (h->dec.steps[i].op == NEXTOK__DEC_BYTE_LEVEL) return NEXTOK_VOCAB_TYPE_BPE;
    for (int i = 0; i < h->dec.n; i++) {
        enum nextok__dec_op op = h->dec.steps[i].op;
        if (op == NEXTOK__DEC_BYTE_FALLBACK || op == NEXTOK__DEC_METASPACE) return NEXTOK_VOCAB_TYPE_SPM;
        if (op == NEXTOK__DEC_REPLACE && memcmp(h->dec.steps[i].a, "\xe2\x96\x81", 3) == 0)
            return NEXTOK_VOCAB_TYPE_SPM;
    }
    return NEXTOK_VOCAB_TYPE_BPE;
}

/* A TemplateProcessing whose single-sequence template starts with a special
 * token adds BOS (llama 2, mistral, gemma). */
static bool template_adds_bos(const struct nextok__json *d, uint32_t pp, int depth)
{
    uint32_t type = nextok__hf_get(d, pp, "type");
    if (nextok__hf_is(d, type, "Sequence") && depth < 4) {
        uint32_t list = nextok__hf_get(d, pp, "processors");
        if (nextok__json_type(d, list) != NEXTOK__JSON_ARRAY) return false;
        uint32_t e = nextok__json_first(d, list);
        for (; e != NEXTOK__JSON_NO_NODE; e = nextok__json_next(d, e))
            if (template_adds_bos(d, e, depth + 1)) return true;
        return false;
    }
    uint32_t single = nextok__hf_get(d, pp, "single");
    if (!nextok__hf_is(d, type, "TemplateProcessing") ||
        nextok__json_type(d, single) != NEXTOK__JSON_ARRAY)
        return false;
    uint32_t first = nextok__json_first(d, single); /* NO_NODE when empty: no member either */
    return nextok__hf_get(d, first, "SpecialToken") != NEXTOK__JSON_NO_NODE;
}

/* ---- the whole load ------------------------------------------------------------------ */

static nextok_status load(struct hf *h, const struct nextok_hf_json_mem *f)
{
    /* The texts take less room than their JSON: one reservation, no copies. */
    nextok_status rc = nextok__buf_reserve(&h->v->arena, h->size);
    NEXTOK_RETURN_IF(rc != NEXTOK_OK, h->err, rc, "tokenizer.json: out of memory");
    NEXTOK_FORWARD(parse_doc(h));
    NEXTOK_FORWARD(model_kind(h));
    NEXTOK_FORWARD(read_vocab(h));
    NEXTOK_FORWARD(read_added(h));
    NEXTOK_FORWARD(build_tokens(h));
    NEXTOK_FORWARD(read_merges(h));
    NEXTOK_FORWARD(nextok__hf_read_decoder(&h->doc, 0, &h->dec, h->err));
    NEXTOK_FORWARD(nextok__hf_read_encoder(&h->doc, 0, h->kind, h->v, h->err));
    if (h->kind == HF_UNIGRAM) NEXTOK_FORWARD(unigram_scores(h));
    h->v->type = vocab_type(h);
    h->v->add_bos = template_adds_bos(&h->doc, nextok__hf_get(&h->doc, 0, "post_processor"), 0);
    if (f->tokenizer_config)
        NEXTOK_FORWARD(nextok__hf_read_tokenizer_config(h->v, f->tokenizer_config,
                                                        f->tokenizer_config_size, h->err));
    if (f->generation_config)
        NEXTOK_FORWARD(nextok__hf_read_generation_config(
            h->v, f->generation_config, f->generation_config_size, h->gen_eos,
            sizeof h->gen_eos / sizeof h->gen_eos[0], &h->n_gen_eos, h->err));
    return nextok__vocab_finish(h->v, &h->dec, h->gen_eos, h->n_gen_eos, h->err);
}

static nextok_status load_mem(struct nextok_vocab **out, const struct nextok__mem *mem,
                              const struct nextok_hf_json_mem *files, struct nextok_error *err)
{
    struct hf h;
    memset(&h, 0, sizeof h);
    h.mem = mem;
    h.err = err;
    size_t bom = nextok__utf8_bom_len(files->tokenizer, files->tokenizer_size);
    h.text = files->tokenizer + bom;
    h.size = files->tokenizer_size - bom;
    h.max_id = -1;
    nextok_status rc = nextok__vocab_new(&h.v, mem, err);
    if (rc == NEXTOK_OK) rc = load(&h, files);
    if (rc == NEXTOK_ERR_NOMEM && err && err->status != NEXTOK_ERR_NOMEM)
        nextok__err(err, rc, "tokenizer.json: out of memory");
    nextok__free(mem, h.ent);
    nextok__free(mem, h.added);
    nextok__json_free(&h.doc);
    if (rc != NEXTOK_OK) {
        nextok_vocab_free(h.v);
        return rc;
    }
    *out = h.v;
    return NEXTOK_OK;
}

/* ---- public entry points ---------------------------------------------------------------- */

nextok_status nextok__load_hf_json_mem(struct nextok_vocab **out, const struct nextok__mem *mem,
                                       const struct nextok_hf_json_mem *files,
                                       struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!files || !files->tokenizer, err, NEXTOK_ERR_INVALID_ARG,
                     "files->tokenizer: must not be NULL");
    return load_mem(out, mem, files, err);
}

nextok_status nextok_vocab_load_hf_json_mem(struct nextok_vocab **out,
                                            const struct nextok_hf_json_mem *files,
                                            struct nextok_error *err)
{
    return nextok__load_hf_json_mem(out, &nextok__mem_libc, files, err);
}

/* Read dir/name if it exists; *data stays NULL if it does not. */
static nextok_status read_sibling(const struct nextok__mem *mem, const char *dir, const char *name,
                                  char **data, size_t *size, struct nextok_error *err)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    *data = NULL;
    *size = 0;
    if (n < 0 || (size_t)n >= sizeof path || stat(path, &st) != 0) return NEXTOK_OK;
    return nextok__read_file(mem, path, data, size, err);
}

static nextok_status load_files(struct nextok_vocab **out, const struct nextok__mem *mem,
                                const char *dir, const char *file, struct nextok_error *err)
{
    char *tok = NULL, *cfg = NULL, *gen = NULL;
    struct nextok_hf_json_mem m;
    memset(&m, 0, sizeof m);
    nextok_status rc = nextok__read_file(mem, file, &tok, &m.tokenizer_size, err);
    if (rc == NEXTOK_OK)
        rc = read_sibling(mem, dir, "tokenizer_config.json", &cfg, &m.tokenizer_config_size, err);
    if (rc == NEXTOK_OK)
        rc = read_sibling(mem, dir, "generation_config.json", &gen, &m.generation_config_size, err);
    m.tokenizer = tok;
    m.tokenizer_config = cfg;
    m.generation_config = gen;
    if (rc == NEXTOK_OK) rc = nextok__load_hf_json_mem(out, mem, &m, err);
    nextok__free(mem, tok);
    nextok__free(mem, cfg);
    nextok__free(mem, gen);
    return rc;
}

nextok_status nextok__load_hf_json(struct nextok_vocab **out, const struct nextok__mem *mem,
                                   const char *path, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!path, err, NEXTOK_ERR_INVALID_ARG, "path: must not be NULL");
    char dir[4096], file[4096];
    struct stat st;
    size_t n = strlen(path);
    NEXTOK_RETURN_IF(n + 16 >= sizeof dir, err, NEXTOK_ERR_INVALID_ARG, "path: too long");
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        memcpy(dir, path, n + 1);
        snprintf(file, sizeof file, "%s/tokenizer.json", path);
    } else {
        const char *slash = strrchr(path, '/');
        size_t dn = slash ? (size_t)(slash - path) : 1;
        memcpy(dir, slash ? path : ".", dn);
        dir[dn] = '\0';
        memcpy(file, path, n + 1);
    }
    return load_files(out, mem, dir, file, err);
}

nextok_status nextok_vocab_load_hf_json(struct nextok_vocab **out, const char *path,
                                        struct nextok_error *err)
{
    return nextok__load_hf_json(out, &nextok__mem_libc, path, err);
}
