/*
 * HF tokenizer.json reader (plus tokenizer_config.json and
 * generation_config.json when given).
 *
 * json-c parses the document, except model.vocab and model.merges: those two
 * hold nearly all of the file (Llama 3: 128k vocab entries, 280k merges) and a
 * json-c tree for them costs about our whole 150 ms load budget. A first pass of
 * the jscan scanner validates the whole text and finds the two members; json-c
 * then gets the document with "null" in their place, and jscan reads them
 * straight into the vocabulary's arena.
 */
#include "../common/file.h"
#include "jscan.h"
#include "vocab_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#ifndef NEXTOK_HAVE_JSONC

nextok_status nextok__load_hf_mem(struct nextok_vocab **out, const struct nextok_hf_json_mem *files,
                                  struct nextok_error *err)
{
    (void)out;
    (void)files;
    return nextok__err(err, NEXTOK_ERR_UNSUPPORTED,
                       "tokenizer.json: this build of nextok has no JSON reader "
                       "(rebuild with json-c, Debian package libjson-c-dev)");
}

#else

#include <json-c/json.h>

enum hf_model { HF_BPE, HF_UNIGRAM, HF_WORDPIECE };

struct hf_entry {
    uint32_t off, len; /* text in the arena */
    int32_t  id;
    float    score;
};

struct hf_added {
    const char *content; /* owned by the json-c tree */
    size_t      len;
    int32_t     id;
    bool        special;
};

struct hf {
    struct nextok_vocab *v;
    struct nextok_error *err;
    const char *doc;
    size_t      size;
    const char *vocab, *vocab_end, *merges, *merges_end; /* spans in doc */
    json_object *root, *model;
    enum hf_model kind;
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

/* ---- pass 1: validate everything, find model.vocab and model.merges -------- */

static bool key_is(const struct nextok__buf *k, const char *s)
{
    return k->len == strlen(s) && memcmp(k->data, s, k->len) == 0;
}

static bool scan_model(struct hf *h, struct nextok__js *s, struct nextok__buf *key)
{
    bool first = true;
    int r;
    if (!nextok__js_enter(s, '{')) return false;
    while (key->len = 0, (r = nextok__js_member(s, &first, key)) == 1) {
        bool is_vocab = key_is(key, "vocab"), is_merges = key_is(key, "merges");
        nextok__js_peek(s);
        const char *start = s->p;
        if (!nextok__js_skip(s)) return false;
        if (is_vocab) {
            h->vocab = start;
            h->vocab_end = s->p;
        }
        if (is_merges) {
            h->merges = start;
            h->merges_end = s->p;
        }
    }
    return r == 0;
}

static nextok_status scan_top(struct hf *h)
{
    struct nextok__js s;
    struct nextok__buf key = {0};
    bool first = true, ok;
    int r = -1;
    nextok__js_init(&s, h->doc, h->size);
    ok = nextok__js_enter(&s, '{');
    while (ok && (key.len = 0, (r = nextok__js_member(&s, &first, &key)) == 1)) {
        bool model = key_is(&key, "model") && nextok__js_peek(&s) == '{';
        ok = model ? scan_model(h, &s, &key) : nextok__js_skip(&s);
    }
    ok = ok && r == 0 && nextok__js_at_end(&s);
    nextok__buf_free(&key);
    return ok ? NEXTOK_OK : js_error(h, &s, "");
}

/* ---- pass 2: json-c on everything else ------------------------------------ */

static nextok_status jc_feed(json_tokener *tok, const char *p, size_t n, json_object **obj,
                             const char *file, struct nextok_error *err)
{
    while (n > 0 && !*obj) {
        size_t k = n > (size_t)INT_MAX / 2 ? (size_t)INT_MAX / 2 : n;
        *obj = json_tokener_parse_ex(tok, p, (int)k);
        enum json_tokener_error e = json_tokener_get_error(tok);
        NEXTOK_RETURN_IF(!*obj && e != json_tokener_continue, err, NEXTOK_ERR_FORMAT,
                         "%s: invalid JSON: %s", file, json_tokener_error_desc(e));
        p += k;
        n -= k;
    }
    return NEXTOK_OK;
}

/* Files saved by some Windows editors start with a UTF-8 byte order mark. */
static size_t bom_len(const char *text, size_t n)
{
    return n >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

/* Parse text[0, n) minus up to two spans, each replaced by "null". */
static nextok_status jc_parse(const char *text, size_t n, const char *const cut[4], const char *file,
                              json_object **out, struct nextok_error *err)
{
    size_t bom = bom_len(text, n);
    text += bom;
    n -= bom;
    json_tokener *tok = json_tokener_new_ex(NEXTOK__JS_MAX_DEPTH);
    NEXTOK_RETURN_IF(!tok, err, NEXTOK_ERR_NOMEM, "%s: out of memory", file);
    json_object *obj = NULL;
    const char *p = text;
    nextok_status rc = NEXTOK_OK;
    for (int i = 0; i < 4 && rc == NEXTOK_OK; i += 2) {
        if (!cut[i]) continue;
        rc = jc_feed(tok, p, (size_t)(cut[i] - p), &obj, file, err);
        if (rc == NEXTOK_OK) rc = jc_feed(tok, "null", 4, &obj, file, err);
        p = cut[i + 1];
    }
    if (rc == NEXTOK_OK) rc = jc_feed(tok, p, (size_t)(text + n - p), &obj, file, err);
    json_tokener_free(tok);
    if (rc == NEXTOK_OK && !obj)
        rc = nextok__err(err, NEXTOK_ERR_FORMAT, "%s: invalid JSON: not an object", file);
    if (rc == NEXTOK_OK && !json_object_is_type(obj, json_type_object))
        rc = nextok__err(err, NEXTOK_ERR_FORMAT, "%s: the top level must be an object", file);
    if (rc != NEXTOK_OK) {
        json_object_put(obj);
        return rc;
    }
    *out = obj;
    return NEXTOK_OK;
}

static nextok_status parse_doc(struct hf *h)
{
    const char *cut[4] = {h->vocab, h->vocab_end, h->merges, h->merges_end};
    if (cut[0] && cut[2] && cut[2] < cut[0]) {
        cut[0] = h->merges, cut[1] = h->merges_end;
        cut[2] = h->vocab, cut[3] = h->vocab_end;
    } else if (!cut[0]) {
        cut[0] = cut[2], cut[1] = cut[3];
        cut[2] = cut[3] = NULL;
    }
    return jc_parse(h->doc, h->size, cut, "tokenizer.json", &h->root, h->err);
}

/* ---- json-c helpers -------------------------------------------------------- */

static json_object *jget(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static bool jis(json_object *o, json_type t)
{
    return json_object_get_type(o) == t; /* NULL is JSON null */
}

static nextok_status jstr(struct hf *h, json_object *o, const char *path, const char **s,
                          size_t *len)
{
    NEXTOK_RETURN_IF(!jis(o, json_type_string), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: expected a string", path);
    *s = json_object_get_string(o);
    *len = (size_t)json_object_get_string_len(o);
    return NEXTOK_OK;
}

static nextok_status jid(struct hf *h, json_object *o, const char *path, int32_t *id)
{
    int64_t v = jis(o, json_type_int) ? json_object_get_int64(o) : -1;
    NEXTOK_RETURN_IF(v < 0 || v >= NEXTOK__VOCAB_MAX_TOKENS, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: expected an integer in [0, 2^24)", path);
    *id = (int32_t)v;
    return NEXTOK_OK;
}

/* ---- model.vocab ------------------------------------------------------------ */

static nextok_status push_entry(struct hf *h, uint32_t off, uint32_t len, int32_t id, float score)
{
    if (h->n_ent == h->cap_ent) {
        size_t cap = h->cap_ent ? h->cap_ent * 2 : 4096;
        struct hf_entry *p = realloc(h->ent, cap * sizeof *p);
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
        NEXTOK_FORWARD(push_entry(h, (uint32_t)off, len, (int32_t)id, 0.0f));
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
    return push_entry(h, (uint32_t)off, len, (int32_t)i, (float)score);
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
    nextok__js_init(&s, h->doc, (size_t)(h->vocab_end - h->doc));
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
    struct nextok__buf tmp = {0};
    bool first = true;
    int r;
    nextok_status rc = NEXTOK_OK;
    nextok__js_init(&s, h->doc, (size_t)(h->merges_end - h->doc));
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
    h->model = jget(h->root, "model");
    NEXTOK_RETURN_IF(!jis(h->model, json_type_object), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: model: missing or not an object");
    json_object *t = jget(h->model, "type");
    const char *s = jis(t, json_type_string) ? json_object_get_string(t) : NULL;
    if (!t) {
        /* Old files have no type: a list vocab is Unigram, merges mean BPE. */
        bool list = h->vocab && *h->vocab == '[';
        h->kind = list ? HF_UNIGRAM : h->merges ? HF_BPE : HF_WORDPIECE;
        return NEXTOK_OK;
    }
    NEXTOK_RETURN_IF(!s, h->err, NEXTOK_ERR_FORMAT, "tokenizer.json: model.type: expected a string");
    if (strcmp(s, "BPE") == 0) h->kind = HF_BPE;
    else if (strcmp(s, "Unigram") == 0) h->kind = HF_UNIGRAM;
    else if (strcmp(s, "WordPiece") == 0) h->kind = HF_WORDPIECE;
    else
        return nextok__err(h->err, NEXTOK_ERR_UNSUPPORTED,
                           "tokenizer.json: model.type: \"%.40s\" is not supported", s);
    return NEXTOK_OK;
}

static nextok_status added_one(struct hf *h, json_object *o, size_t i, struct hf_added *a)
{
    char path[64];
    snprintf(path, sizeof path, "added_tokens[%zu]", i);
    NEXTOK_RETURN_IF(!jis(o, json_type_object), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: expected an object", path);
    snprintf(path, sizeof path, "added_tokens[%zu].id", i);
    NEXTOK_FORWARD(jid(h, jget(o, "id"), path, &a->id));
    snprintf(path, sizeof path, "added_tokens[%zu].content", i);
    NEXTOK_FORWARD(jstr(h, jget(o, "content"), path, &a->content, &a->len));
    NEXTOK_RETURN_IF(a->len == 0 || a->len > NEXTOK__TOKEN_MAX_BYTES, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: must be 1 byte to 64 KiB long", path);
    json_object *sp = jget(o, "special");
    NEXTOK_RETURN_IF(sp && !jis(sp, json_type_boolean), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: added_tokens[%zu].special: expected true or false", i);
    a->special = sp && json_object_get_boolean(sp);
    if (a->id > h->max_id) h->max_id = a->id;
    return NEXTOK_OK;
}

static nextok_status read_added(struct hf *h)
{
    json_object *arr = jget(h->root, "added_tokens");
    if (!arr) return NEXTOK_OK;
    NEXTOK_RETURN_IF(!jis(arr, json_type_array), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: added_tokens: expected an array");
    size_t n = json_object_array_length(arr);
    h->added = calloc(n ? n : 1, sizeof *h->added);
    NEXTOK_RETURN_IF(!h->added, h->err, NEXTOK_ERR_NOMEM, "tokenizer.json: out of memory");
    h->n_added = n;
    for (size_t i = 0; i < n; i++)
        NEXTOK_FORWARD(added_one(h, json_object_array_get_idx(arr, i), i, &h->added[i]));
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
        t->score = e->score;
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
    json_object *u = jget(h->model, h->kind == HF_UNIGRAM ? "unk_id" : "unk_token");
    if (u && h->kind == HF_UNIGRAM) {
        NEXTOK_FORWARD(jid(h, u, "model.unk_id", &id));
    } else if (u) {
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
    json_object *bf = jget(h->model, "byte_fallback");
    NEXTOK_FORWARD(place_vocab(h, jis(bf, json_type_boolean) && json_object_get_boolean(bf)));
    NEXTOK_FORWARD(place_added(h));
    NEXTOK_FORWARD(nextok__vocab_build_hash(v, h->err));
    NEXTOK_FORWARD(check_unique(h));
    return set_unk(h);
}

/* ---- decoder ------------------------------------------------------------------------ */

static nextok_status dec_one(struct hf *h, json_object *d, const char *path, int depth);

static nextok_status small_str(struct hf *h, json_object *o, const char *path, const char *dflt,
                               char *dst, uint8_t *len)
{
    const char *s = dflt;
    size_t n = dflt ? strlen(dflt) : 0;
    if (o) NEXTOK_FORWARD(jstr(h, o, path, &s, &n));
    NEXTOK_RETURN_IF(!s, h->err, NEXTOK_ERR_FORMAT, "tokenizer.json: %s: missing", path);
    NEXTOK_RETURN_IF(n > NEXTOK__DEC_STR_MAX, h->err, NEXTOK_ERR_UNSUPPORTED,
                     "tokenizer.json: %s: longer than %d bytes", path, NEXTOK__DEC_STR_MAX);
    memcpy(dst, s, n);
    *len = (uint8_t)n;
    return NEXTOK_OK;
}

static nextok_status dec_replace(struct hf *h, json_object *d, const char *path,
                                 struct nextok__dec_step *st)
{
    char p[96];
    json_object *pat = jget(d, "pattern");
    snprintf(p, sizeof p, "%s.pattern", path);
    NEXTOK_RETURN_IF(jget(pat, "Regex"), h->err, NEXTOK_ERR_UNSUPPORTED,
                     "tokenizer.json: %s: Regex patterns are not supported", p);
    snprintf(p, sizeof p, "%s.pattern.String", path);
    NEXTOK_FORWARD(small_str(h, jget(pat, "String"), p, NULL, st->a, &st->a_len));
    NEXTOK_RETURN_IF(st->a_len == 0, h->err, NEXTOK_ERR_FORMAT, "tokenizer.json: %s: empty", p);
    snprintf(p, sizeof p, "%s.content", path);
    return small_str(h, jget(d, "content"), p, NULL, st->b, &st->b_len);
}

static nextok_status dec_metaspace(struct hf *h, json_object *d, const char *path,
                                   struct nextok__dec_step *st)
{
    char p[96];
    snprintf(p, sizeof p, "%s.replacement", path);
    NEXTOK_FORWARD(small_str(h, jget(d, "replacement"), p, "\xe2\x96\x81", st->a, &st->a_len));
    json_object *scheme = jget(d, "prepend_scheme"), *aps = jget(d, "add_prefix_space");
    const char *s = jis(scheme, json_type_string) ? json_object_get_string(scheme) : "always";
    st->flag = strcmp(s, "never") != 0 && !(jis(aps, json_type_boolean) && !json_object_get_boolean(aps));
    return NEXTOK_OK;
}

static nextok_status count_field(struct hf *h, json_object *d, const char *path, const char *key,
                                 uint32_t *out)
{
    json_object *o = jget(d, key);
    int64_t v = o ? (jis(o, json_type_int) ? json_object_get_int64(o) : -1) : 0;
    NEXTOK_RETURN_IF(v < 0 || v > 1024, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s.%s: expected an integer in [0, 1024]", path, key);
    *out = (uint32_t)v;
    return NEXTOK_OK;
}

static nextok_status dec_strip(struct hf *h, json_object *d, const char *path,
                               struct nextok__dec_step *st)
{
    char p[96];
    snprintf(p, sizeof p, "%s.content", path);
    NEXTOK_FORWARD(small_str(h, jget(d, "content"), p, NULL, st->a, &st->a_len));
    unsigned char c = (unsigned char)st->a[0];
    size_t want = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    NEXTOK_RETURN_IF(st->a_len != want, h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s: must be one character", p);
    NEXTOK_FORWARD(count_field(h, d, path, "start", &st->n1));
    return count_field(h, d, path, "stop", &st->n2);
}

static nextok_status dec_wordpiece(struct hf *h, json_object *d, const char *path,
                                   struct nextok__dec_step *st)
{
    char p[96];
    snprintf(p, sizeof p, "%s.prefix", path);
    NEXTOK_FORWARD(small_str(h, jget(d, "prefix"), p, "##", st->a, &st->a_len));
    json_object *c = jget(d, "cleanup");
    st->flag = !jis(c, json_type_boolean) || json_object_get_boolean(c);
    return NEXTOK_OK;
}

static nextok_status dec_sequence(struct hf *h, json_object *d, const char *path, int depth)
{
    json_object *list = jget(d, "decoders");
    NEXTOK_RETURN_IF(!jis(list, json_type_array), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s.decoders: expected an array", path);
    NEXTOK_RETURN_IF(depth >= 4, h->err, NEXTOK_ERR_UNSUPPORTED,
                     "tokenizer.json: %s: Sequence nested too deep", path);
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        char p[96];
        snprintf(p, sizeof p, "%s.decoders[%zu]", path, i);
        NEXTOK_FORWARD(dec_one(h, json_object_array_get_idx(list, i), p, depth + 1));
    }
    return NEXTOK_OK;
}

static nextok_status dec_one(struct hf *h, json_object *d, const char *path, int depth)
{
    struct nextok__dec_step st;
    memset(&st, 0, sizeof st);
    json_object *t = jget(d, "type");
    NEXTOK_RETURN_IF(!jis(t, json_type_string), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: %s.type: expected a string", path);
    const char *type = json_object_get_string(t);
    if (strcmp(type, "Sequence") == 0) return dec_sequence(h, d, path, depth);
    if (strcmp(type, "ByteLevel") == 0) st.op = NEXTOK__DEC_BYTE_LEVEL;
    else if (strcmp(type, "ByteFallback") == 0) st.op = NEXTOK__DEC_BYTE_FALLBACK;
    else if (strcmp(type, "Fuse") == 0) st.op = NEXTOK__DEC_FUSE;
    else if (strcmp(type, "Replace") == 0) st.op = NEXTOK__DEC_REPLACE;
    else if (strcmp(type, "Metaspace") == 0) st.op = NEXTOK__DEC_METASPACE;
    else if (strcmp(type, "Strip") == 0) st.op = NEXTOK__DEC_STRIP;
    else if (strcmp(type, "WordPiece") == 0) st.op = NEXTOK__DEC_WORDPIECE;
    else
        return nextok__err(h->err, NEXTOK_ERR_UNSUPPORTED,
                           "tokenizer.json: %s: decoder \"%.40s\" is not supported", path, type);
    nextok_status rc = NEXTOK_OK;
    if (st.op == NEXTOK__DEC_REPLACE) rc = dec_replace(h, d, path, &st);
    if (st.op == NEXTOK__DEC_METASPACE) rc = dec_metaspace(h, d, path, &st);
    if (st.op == NEXTOK__DEC_STRIP) rc = dec_strip(h, d, path, &st);
    if (st.op == NEXTOK__DEC_WORDPIECE) rc = dec_wordpiece(h, d, path, &st);
    if (rc != NEXTOK_OK) return rc;
    return nextok__dec_push(&h->dec, &st, h->err);
}

static nextok_status read_decoder(struct hf *h)
{
    json_object *d = jget(h->root, "decoder");
    h->dec.n = 0;
    if (!d) {
        /* No decoder: HF joins the tokens with spaces. */
        static const struct nextok__dec_step join = {.op = NEXTOK__DEC_JOIN_SPACE};
        return nextok__dec_push(&h->dec, &join, h->err);
    }
    NEXTOK_RETURN_IF(!jis(d, json_type_object), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer.json: decoder: expected an object or null");
    return dec_one(h, d, "decoder", 0);
}

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
static bool template_adds_bos(json_object *pp, int depth)
{
    json_object *t = jget(pp, "type");
    const char *type = jis(t, json_type_string) ? json_object_get_string(t) : "";
    if (strcmp(type, "Sequence") == 0 && depth < 4) {
        json_object *list = jget(pp, "processors");
        size_t n = jis(list, json_type_array) ? json_object_array_length(list) : 0;
        for (size_t i = 0; i < n; i++)
            if (template_adds_bos(json_object_array_get_idx(list, i), depth + 1)) return true;
        return false;
    }
    json_object *single = jget(pp, "single");
    if (strcmp(type, "TemplateProcessing") != 0 || !jis(single, json_type_array)) return false;
    return json_object_array_length(single) > 0 &&
           jget(json_object_array_get_idx(single, 0), "SpecialToken") != NULL;
}

/* ---- tokenizer_config.json and generation_config.json ------------------------------- */

static nextok_status config_role(struct hf *h, json_object *cfg, const char *key, int role)
{
    struct nextok_vocab *v = h->v;
    json_object *o;
    if (!json_object_object_get_ex(cfg, key, &o)) return NEXTOK_OK;
    if (jis(o, json_type_object)) o = jget(o, "content");
    if (!o) {
        v->special[role] = -1; /* an explicit null: the model has none */
        v->special_given |= 1u << role;
        return NEXTOK_OK;
    }
    NEXTOK_RETURN_IF(!jis(o, json_type_string), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer_config.json: %s: expected a string, {\"content\": ...} or null", key);
    int32_t id = nextok__vocab_lookup(v, json_object_get_string(o),
                                      (size_t)json_object_get_string_len(o));
    if (id < 0) return NEXTOK_OK; /* names no token: leave the role to other sources */
    v->special[role] = id;
    v->special_given |= 1u << role;
    return NEXTOK_OK;
}

static nextok_status config_bool(struct hf *h, json_object *cfg, const char *key, bool *dst)
{
    json_object *o = jget(cfg, key);
    if (!o) return NEXTOK_OK;
    NEXTOK_RETURN_IF(!jis(o, json_type_boolean), h->err, NEXTOK_ERR_FORMAT,
                     "tokenizer_config.json: %s: expected true or false", key);
    *dst = json_object_get_boolean(o);
    return NEXTOK_OK;
}

static nextok_status read_tokenizer_config(struct hf *h, const char *text, size_t n)
{
    static const char *const keys[] = {"bos_token", "eos_token", "pad_token", "unk_token"};
    static const int roles[] = {NEXTOK_VOCAB_BOS, NEXTOK_VOCAB_EOS, NEXTOK_VOCAB_PAD, NEXTOK_VOCAB_UNK};
    const char *cut[4] = {NULL, NULL, NULL, NULL};
    json_object *cfg;
    NEXTOK_FORWARD(jc_parse(text, n, cut, "tokenizer_config.json", &cfg, h->err));
    nextok_status rc = NEXTOK_OK;
    for (int i = 0; i < 4 && rc == NEXTOK_OK; i++) rc = config_role(h, cfg, keys[i], roles[i]);
    if (rc == NEXTOK_OK) rc = config_bool(h, cfg, "add_bos_token", &h->v->add_bos);
    if (rc == NEXTOK_OK) rc = config_bool(h, cfg, "add_eos_token", &h->v->add_eos);
    json_object_put(cfg);
    return rc;
}

static nextok_status gen_id(struct hf *h, json_object *o, const char *path, int32_t *id)
{
    NEXTOK_RETURN_IF(!jis(o, json_type_int), h->err, NEXTOK_ERR_FORMAT,
                     "generation_config.json: %s: expected an integer", path);
    int64_t v = json_object_get_int64(o);
    *id = v >= 0 && v < h->v->n_tokens ? (int32_t)v : -1; /* out of range: ignored */
    return NEXTOK_OK;
}

static nextok_status gen_eos(struct hf *h, json_object *o)
{
    int32_t id = -1;
    if (!jis(o, json_type_array)) {
        NEXTOK_FORWARD(gen_id(h, o, "eos_token_id", &id));
        if (id >= 0) h->gen_eos[h->n_gen_eos++] = id;
        return NEXTOK_OK;
    }
    size_t n = json_object_array_length(o);
    for (size_t i = 0; i < n; i++) {
        char path[48];
        snprintf(path, sizeof path, "eos_token_id[%zu]", i);
        NEXTOK_FORWARD(gen_id(h, json_object_array_get_idx(o, i), path, &id));
        if (id >= 0 && h->n_gen_eos < sizeof h->gen_eos / sizeof h->gen_eos[0])
            h->gen_eos[h->n_gen_eos++] = id;
    }
    return NEXTOK_OK;
}

static nextok_status gen_role(struct hf *h, json_object *cfg, const char *key, int role)
{
    struct nextok_vocab *v = h->v;
    json_object *o = jget(cfg, key);
    int32_t id = -1;
    if (!o || ((v->special_given >> role) & 1u)) return NEXTOK_OK;
    NEXTOK_FORWARD(gen_id(h, o, key, &id));
    if (id >= 0) v->special[role] = id, v->special_given |= 1u << role;
    return NEXTOK_OK;
}

static nextok_status read_generation_config(struct hf *h, const char *text, size_t n)
{
    const char *cut[4] = {NULL, NULL, NULL, NULL};
    json_object *cfg;
    NEXTOK_FORWARD(jc_parse(text, n, cut, "generation_config.json", &cfg, h->err));
    json_object *eos = jget(cfg, "eos_token_id");
    nextok_status rc = eos ? gen_eos(h, eos) : NEXTOK_OK;
    struct nextok_vocab *v = h->v;
    if (rc == NEXTOK_OK && h->n_gen_eos && !((v->special_given >> NEXTOK_VOCAB_EOS) & 1u)) {
        v->special[NEXTOK_VOCAB_EOS] = h->gen_eos[0];
        v->special_given |= 1u << NEXTOK_VOCAB_EOS;
    }
    if (rc == NEXTOK_OK) rc = gen_role(h, cfg, "bos_token_id", NEXTOK_VOCAB_BOS);
    if (rc == NEXTOK_OK) rc = gen_role(h, cfg, "pad_token_id", NEXTOK_VOCAB_PAD);
    json_object_put(cfg);
    return rc;
}

/* ---- the whole load ------------------------------------------------------------------ */

static nextok_status load(struct hf *h, const struct nextok_hf_json_mem *f)
{
    /* The texts take less room than their JSON: one reservation, no copies. */
    nextok_status rc = nextok__buf_reserve(&h->v->arena, h->size);
    NEXTOK_RETURN_IF(rc != NEXTOK_OK, h->err, rc, "tokenizer.json: out of memory");
    NEXTOK_FORWARD(scan_top(h));
    NEXTOK_FORWARD(parse_doc(h));
    NEXTOK_FORWARD(model_kind(h));
    NEXTOK_FORWARD(read_vocab(h));
    NEXTOK_FORWARD(read_added(h));
    NEXTOK_FORWARD(build_tokens(h));
    NEXTOK_FORWARD(read_merges(h));
    NEXTOK_FORWARD(read_decoder(h));
    h->v->type = vocab_type(h);
    h->v->add_bos = template_adds_bos(jget(h->root, "post_processor"), 0);
    if (f->tokenizer_config)
        NEXTOK_FORWARD(read_tokenizer_config(h, f->tokenizer_config, f->tokenizer_config_size));
    if (f->generation_config)
        NEXTOK_FORWARD(read_generation_config(h, f->generation_config, f->generation_config_size));
    return nextok__vocab_finish(h->v, &h->dec, h->gen_eos, h->n_gen_eos, h->err);
}

nextok_status nextok__load_hf_mem(struct nextok_vocab **out, const struct nextok_hf_json_mem *files,
                                  struct nextok_error *err)
{
    struct hf h;
    memset(&h, 0, sizeof h);
    h.err = err;
    h.doc = files->tokenizer + bom_len(files->tokenizer, files->tokenizer_size);
    h.size = files->tokenizer_size - (size_t)(h.doc - files->tokenizer);
    h.max_id = -1;
    nextok_status rc = nextok__vocab_new(&h.v, err);
    if (rc == NEXTOK_OK) rc = load(&h, files);
    if (rc == NEXTOK_ERR_NOMEM && err && err->status != NEXTOK_ERR_NOMEM)
        nextok__err(err, rc, "tokenizer.json: out of memory");
    free(h.ent);
    free(h.added);
    json_object_put(h.root);
    if (rc != NEXTOK_OK) {
        nextok_vocab_free(h.v);
        return rc;
    }
    *out = h.v;
    return NEXTOK_OK;
}

#endif /* NEXTOK_HAVE_JSONC */

/* ---- public entry points (with or without json-c) ------------------------------------ */

nextok_status nextok_vocab_load_hf_json_mem(struct nextok_vocab **out,
                                            const struct nextok_hf_json_mem *files,
                                            struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!files || !files->tokenizer, err, NEXTOK_ERR_INVALID_ARG,
                     "files->tokenizer: must not be NULL");
    return nextok__load_hf_mem(out, files, err);
}

/* Read dir/name if it exists; *data stays NULL if it does not. */
static nextok_status read_sibling(const char *dir, const char *name, char **data, size_t *size,
                                  struct nextok_error *err)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    *data = NULL;
    *size = 0;
    if (n < 0 || (size_t)n >= sizeof path || stat(path, &st) != 0) return NEXTOK_OK;
    return nextok__read_file(path, data, size, err);
}

static nextok_status load_files(struct nextok_vocab **out, const char *dir, const char *file,
                                struct nextok_error *err)
{
    char *tok = NULL, *cfg = NULL, *gen = NULL;
    struct nextok_hf_json_mem m;
    memset(&m, 0, sizeof m);
    nextok_status rc = nextok__read_file(file, &tok, &m.tokenizer_size, err);
    if (rc == NEXTOK_OK) rc = read_sibling(dir, "tokenizer_config.json", &cfg, &m.tokenizer_config_size, err);
    if (rc == NEXTOK_OK) rc = read_sibling(dir, "generation_config.json", &gen, &m.generation_config_size, err);
    m.tokenizer = tok;
    m.tokenizer_config = cfg;
    m.generation_config = gen;
    if (rc == NEXTOK_OK) rc = nextok_vocab_load_hf_json_mem(out, &m, err);
    free(tok);
    free(cfg);
    free(gen);
    return rc;
}

nextok_status nextok_vocab_load_hf_json(struct nextok_vocab **out, const char *path,
                                        struct nextok_error *err)
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
    return load_files(out, dir, file, err);
}
