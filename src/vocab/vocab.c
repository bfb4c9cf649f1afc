/*
 * The vocabulary object: building it (the loaders' shared part), freeing it,
 * and the public queries. Nothing here knows a file format; loading by
 * content is load.c, the formats are gguf.c, hf_json.c and tiktoken.c.
 */
#include "vocab_internal.h"

/* ---- building ------------------------------------------------------------ */

nextok_status nextok__vocab_new(struct nextok_vocab **out, const struct nextok__mem *mem,
                                struct nextok_error *err)
{
    struct nextok_vocab *v = nextok__calloc(mem, 1, sizeof *v);
    NEXTOK_RETURN_IF(!v, err, NEXTOK_ERR_NOMEM, "out of memory");
    v->mem = *mem;
    v->arena = nextok__buf_of(&v->mem);
    for (int k = 0; k < NEXTOK_VOCAB_SPECIAL_COUNT; k++) v->special[k] = -1;
    /* A non-NULL arena from the start: empty texts point into it too. */
    if (nextok__buf_reserve(&v->arena, 1 << 16) != NEXTOK_OK) {
        nextok__free(mem, v);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory");
    }
    *out = v;
    return NEXTOK_OK;
}

nextok_status nextok__vocab_alloc_tokens(struct nextok_vocab *v, int32_t n, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(n <= 0 || n > NEXTOK__VOCAB_MAX_TOKENS, err, NEXTOK_ERR_FORMAT,
                     "%ld tokens: must be in [1, %d]", (long)n, NEXTOK__VOCAB_MAX_TOKENS);
    v->toks = nextok__calloc(&v->mem, (size_t)n, sizeof *v->toks);
    NEXTOK_RETURN_IF(!v->toks, err, NEXTOK_ERR_NOMEM, "out of memory for %ld tokens", (long)n);
    v->n_tokens = n;
    for (int32_t i = 0; i < n; i++) {
        v->toks[i].type = NEXTOK_TOKEN_TYPE_UNUSED;
        v->toks[i].attrs = NEXTOK_TOKEN_ATTR_ABSENT;
    }
    return NEXTOK_OK;
}

nextok_status nextok__arena_add(struct nextok_vocab *v, const char *s, size_t len, uint32_t *off,
                                struct nextok_error *err)
{
    NEXTOK_RETURN_IF(len > NEXTOK__ARENA_MAX - v->arena.len, err, NEXTOK_ERR_FORMAT,
                     "vocabulary text exceeds %zu bytes", NEXTOK__ARENA_MAX);
    *off = (uint32_t)v->arena.len;
    nextok_status rc = nextok__buf_append(&v->arena, s, len);
    NEXTOK_RETURN_IF(rc != NEXTOK_OK, err, rc, "out of memory for vocabulary text");
    return NEXTOK_OK;
}

nextok_status nextok__vocab_set_text(struct nextok_vocab *v, int32_t id, const char *text, size_t len,
                                     struct nextok_error *err)
{
    NEXTOK_RETURN_IF(len > NEXTOK__TOKEN_MAX_BYTES, err, NEXTOK_ERR_FORMAT,
                     "token %ld: %zu bytes long (at most %d)", (long)id, len,
                     NEXTOK__TOKEN_MAX_BYTES);
    struct nextok__tok *t = &v->toks[id];
    NEXTOK_FORWARD(nextok__arena_add(v, text, len, &t->text_off, err));
    t->text_len = (uint32_t)len;
    t->attrs &= (uint8_t)~NEXTOK_TOKEN_ATTR_ABSENT;
    if (t->type == NEXTOK_TOKEN_TYPE_UNUSED) t->type = NEXTOK_TOKEN_TYPE_NORMAL;
    return NEXTOK_OK;
}

nextok_status nextok__vocab_add_merge(struct nextok_vocab *v, uint32_t off, uint32_t left_len,
                                      uint32_t right_len, struct nextok_error *err)
{
    if (v->n_merges % 1024 == 0) {
        NEXTOK_RETURN_IF(v->n_merges >= (size_t)NEXTOK__VOCAB_MAX_TOKENS * 4, err, NEXTOK_ERR_FORMAT,
                         "more than %d merges", NEXTOK__VOCAB_MAX_TOKENS * 4);
        uint32_t *m = nextok__realloc(&v->mem, v->merges, (v->n_merges + 1024) * 3 * sizeof *m);
        NEXTOK_RETURN_IF(!m, err, NEXTOK_ERR_NOMEM, "out of memory for merges");
        v->merges = m;
    }
    uint32_t *m = v->merges + 3 * v->n_merges++;
    m[0] = off;
    m[1] = left_len;
    m[2] = right_len;
    return NEXTOK_OK;
}

nextok_status nextok__vocab_add_merge_str(struct nextok_vocab *v, const char *s, size_t len,
                                          struct nextok_error *err)
{
    /* Like llama.cpp and HF: split at the first space that is not the first
     * character, so that each side is non-empty. */
    const char *sp = len > 1 ? memchr(s + 1, ' ', len - 1) : NULL;
    NEXTOK_RETURN_IF(!sp || sp + 1 == s + len, err, NEXTOK_ERR_FORMAT,
                     "a merge must be \"left right\"");
    size_t l = (size_t)(sp - s), r = len - l - 1;
    uint32_t off = 0, off2 = 0;
    NEXTOK_FORWARD(nextok__arena_add(v, s, l, &off, err));
    NEXTOK_FORWARD(nextok__arena_add(v, sp + 1, r, &off2, err));
    return nextok__vocab_add_merge(v, off, (uint32_t)l, (uint32_t)r, err);
}

/* ---- pieces -------------------------------------------------------------- */

/* Store s as a piece: reuse the text or an earlier piece when equal. */
static nextok_status store_piece(struct nextok_vocab *v, const struct nextok__buf *s,
                                 uint32_t same_off, uint32_t same_len, uint32_t *off,
                                 uint32_t *len, struct nextok_error *err)
{
    if (s->len == same_len && memcmp(s->data, v->arena.data + same_off, s->len) == 0) {
        *off = same_off;
        *len = same_len;
        return NEXTOK_OK;
    }
    *len = (uint32_t)s->len;
    return nextok__arena_add(v, s->data, s->len, off, err);
}

static nextok_status token_pieces(struct nextok_vocab *v, int32_t id, const struct nextok__decoder *dec,
                                  bool first_matters, struct nextok__buf *b, struct nextok__buf *tmp,
                                  struct nextok__buf *text, struct nextok_error *err)
{
    struct nextok__tok *t = &v->toks[id];
    /* Copy the text out: the arena may move while pieces are appended. */
    text->len = 0;
    NEXTOK_FORWARD(nextok__buf_append(text, v->arena.data + t->text_off, t->text_len));
    NEXTOK_FORWARD(nextok__dec_apply(dec, text->data, text->len, false, b, tmp, err));
    NEXTOK_FORWARD(store_piece(v, b, t->text_off, t->text_len, &t->piece_off, &t->piece_len, err));
    t->first_off = t->piece_off;
    t->first_len = t->piece_len;
    if (first_matters) {
        NEXTOK_FORWARD(nextok__dec_apply(dec, text->data, text->len, true, b, tmp, err));
        NEXTOK_FORWARD(store_piece(v, b, t->piece_off, t->piece_len, &t->first_off, &t->first_len, err));
    }
    uint32_t m = t->text_len > t->piece_len ? t->text_len : t->piece_len;
    if (t->first_len > m) m = t->first_len;
    if (m > v->max_piece) v->max_piece = m;
    return NEXTOK_OK;
}

static nextok_status all_pieces(struct nextok_vocab *v, const struct nextok__decoder *dec,
                                struct nextok_error *err)
{
    struct nextok__buf b = nextok__buf_of(&v->mem), tmp = nextok__buf_of(&v->mem),
                       text = nextok__buf_of(&v->mem);
    bool first_matters = nextok__dec_first_matters(dec);
    nextok_status rc = NEXTOK_OK;
    for (int32_t id = 0; id < v->n_tokens && rc == NEXTOK_OK; id++) {
        if (v->toks[id].attrs & NEXTOK_TOKEN_ATTR_ABSENT) continue;
        rc = token_pieces(v, id, dec, first_matters, &b, &tmp, &text, err);
    }
    nextok__buf_free(&b);
    nextok__buf_free(&tmp);
    nextok__buf_free(&text);
    if (rc == NEXTOK_ERR_NOMEM) return nextok__err(err, rc, "out of memory decoding tokens");
    return rc;
}

/* ---- special ids and the end-of-generation set --------------------------- */

/* Names used when the file leaves a role unset (llama.cpp does the same for
 * eot/eom; tokenizer.json has no roles at all without its config files). */
static const char *const role_names[NEXTOK_VOCAB_SPECIAL_COUNT][8] = {
    [NEXTOK_VOCAB_BOS] = {"<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>", NULL},
    [NEXTOK_VOCAB_EOS] = {"</s>", "<|endoftext|>", "<|end_of_text|>", "<eos>", NULL},
    [NEXTOK_VOCAB_EOT] = {"<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>", "<|end_of_turn|>",
                          "<EOT>", NULL},
    [NEXTOK_VOCAB_EOM] = {"<|eom_id|>", NULL},
    [NEXTOK_VOCAB_PAD] = {"<pad>", "<|pad|>", "[PAD]", NULL},
    [NEXTOK_VOCAB_UNK] = {"<unk>", "[UNK]", NULL},
};

static int32_t find_special(const struct nextok_vocab *v, const char *name)
{
    int32_t id = nextok__vocab_lookup(v, name, strlen(name));
    if (id < 0 || !(v->toks[id].attrs & NEXTOK_TOKEN_ATTR_SPECIAL)) return -1;
    return id;
}

static void guess_roles(struct nextok_vocab *v)
{
    for (int k = 0; k < NEXTOK_VOCAB_SPECIAL_COUNT; k++) {
        if ((v->special_given >> k) & 1u) continue;
        for (int j = 0; role_names[k][j] && v->special[k] < 0; j++)
            v->special[k] = find_special(v, role_names[k][j]);
    }
    if (v->special[NEXTOK_VOCAB_UNK] < 0 && !((v->special_given >> NEXTOK_VOCAB_UNK) & 1u)) {
        for (int32_t id = 0; id < v->n_tokens && v->special[NEXTOK_VOCAB_UNK] < 0; id++)
            if (v->toks[id].type == NEXTOK_TOKEN_TYPE_UNKNOWN) v->special[NEXTOK_VOCAB_UNK] = id;
    }
}

static nextok_status eog_names(struct nextok_vocab *v)
{
    static const int roles[] = {NEXTOK_VOCAB_EOS, NEXTOK_VOCAB_EOT, NEXTOK_VOCAB_EOM};
    for (size_t r = 0; r < 3; r++) {
        for (int j = 0; role_names[roles[r]][j]; j++) {
            int32_t id = find_special(v, role_names[roles[r]][j]);
            if (id >= 0) NEXTOK_FORWARD(nextok_vocab_add_eog(v, id));
        }
    }
    return NEXTOK_OK;
}

static nextok_status build_eog(struct nextok_vocab *v, const int32_t *extra, size_t n_extra,
                               struct nextok_error *err)
{
    nextok_status rc = NEXTOK_OK;
    for (size_t i = 0; i < n_extra && rc == NEXTOK_OK; i++) {
        if (extra[i] >= 0 && extra[i] < v->n_tokens) rc = nextok_vocab_add_eog(v, extra[i]);
    }
    static const int roles[] = {NEXTOK_VOCAB_EOS, NEXTOK_VOCAB_EOT, NEXTOK_VOCAB_EOM};
    for (size_t r = 0; r < 3 && rc == NEXTOK_OK; r++) {
        if (v->special[roles[r]] >= 0) rc = nextok_vocab_add_eog(v, v->special[roles[r]]);
    }
    if (rc == NEXTOK_OK) rc = eog_names(v);
    NEXTOK_RETURN_IF(rc != NEXTOK_OK, err, rc, "out of memory for the end-of-generation set");
    return NEXTOK_OK;
}

nextok_status nextok__vocab_finish(struct nextok_vocab *v, const struct nextok__decoder *dec,
                                   const int32_t *extra_eog, size_t n_extra_eog,
                                   struct nextok_error *err)
{
    NEXTOK_FORWARD(nextok__dec_global(dec, &v->strip, err));
    NEXTOK_FORWARD(all_pieces(v, dec, err));
    if (!v->hash) NEXTOK_FORWARD(nextok__vocab_build_hash(v, err));
    for (int k = 0; k < NEXTOK_VOCAB_SPECIAL_COUNT; k++) {
        if (v->special[k] >= v->n_tokens) v->special[k] = -1;
    }
    guess_roles(v);
    NEXTOK_FORWARD(build_eog(v, extra_eog, n_extra_eog, err));
    return nextok__enc_build(v, err);
}

/* ---- public: free and queries --------------------------------------------- */

void nextok_vocab_free(struct nextok_vocab *v)
{
    if (!v) return;
    const struct nextok__mem mem = v->mem;
    nextok__enc_free(v);
    nextok__free(&mem, v->toks);
    nextok__buf_free(&v->arena);
    nextok__free(&mem, v->merges);
    nextok__free(&mem, v->hash);
    nextok__free(&mem, v->eog);
    nextok__free(&mem, v);
}

const char *nextok_vocab_type_name(enum nextok_vocab_type type)
{
    switch (type) {
    case NEXTOK_VOCAB_TYPE_SPM: return "spm";
    case NEXTOK_VOCAB_TYPE_BPE: return "bpe";
    case NEXTOK_VOCAB_TYPE_WPM: return "wpm";
    case NEXTOK_VOCAB_TYPE_UGM: return "ugm";
    case NEXTOK_VOCAB_TYPE_TIKTOKEN: return "tiktoken";
    }
    return "?";
}

static const struct nextok__tok *tok_at(const struct nextok_vocab *v, int32_t id)
{
    return v && id >= 0 && id < v->n_tokens ? &v->toks[id] : NULL;
}

int32_t nextok_vocab_n_tokens(const struct nextok_vocab *v) { return v ? v->n_tokens : 0; }

enum nextok_vocab_type nextok_vocab_get_type(const struct nextok_vocab *v)
{
    return v ? v->type : (enum nextok_vocab_type)0;
}

enum nextok_token_type nextok_vocab_token_type(const struct nextok_vocab *v, int32_t id)
{
    const struct nextok__tok *t = tok_at(v, id);
    return t ? (enum nextok_token_type)t->type : NEXTOK_TOKEN_TYPE_INVALID;
}

uint32_t nextok_vocab_token_attrs(const struct nextok_vocab *v, int32_t id)
{
    const struct nextok__tok *t = tok_at(v, id);
    return t ? t->attrs : 0;
}

const char *nextok_vocab_token_text(const struct nextok_vocab *v, int32_t id, size_t *len)
{
    const struct nextok__tok *t = tok_at(v, id);
    if (len) *len = t ? t->text_len : 0;
    return t ? v->arena.data + t->text_off : NULL;
}

const char *nextok_vocab_token_bytes(const struct nextok_vocab *v, int32_t id, size_t *len)
{
    const struct nextok__tok *t = tok_at(v, id);
    if (len) *len = t ? t->piece_len : 0;
    return t ? v->arena.data + t->piece_off : NULL;
}

float nextok_vocab_token_score(const struct nextok_vocab *v, int32_t id)
{
    const struct nextok__tok *t = tok_at(v, id);
    return t ? t->score : 0.0f;
}

int32_t nextok_vocab_find(const struct nextok_vocab *v, const char *text, size_t len)
{
    if (!v || (!text && len)) return -1;
    return nextok__vocab_lookup(v, text ? text : "", len);
}

int32_t nextok_vocab_special_id(const struct nextok_vocab *v, enum nextok_vocab_special which)
{
    if (!v || (int)which < 0 || which >= NEXTOK_VOCAB_SPECIAL_COUNT) return -1;
    return v->special[which];
}

nextok_status nextok_vocab_set_special_id(struct nextok_vocab *v, enum nextok_vocab_special which,
                                          int32_t id)
{
    if (!v || (int)which < 0 || which >= NEXTOK_VOCAB_SPECIAL_COUNT) return NEXTOK_ERR_INVALID_ARG;
    if (id < -1 || id >= v->n_tokens) return NEXTOK_ERR_TOKEN_RANGE;
    bool ends = which == NEXTOK_VOCAB_EOS || which == NEXTOK_VOCAB_EOT || which == NEXTOK_VOCAB_EOM;
    if (ends && id >= 0) NEXTOK_FORWARD(nextok_vocab_add_eog(v, id));
    v->special[which] = id;
    return NEXTOK_OK;
}

bool nextok_vocab_adds_bos(const struct nextok_vocab *v) { return v && v->add_bos; }
bool nextok_vocab_adds_eos(const struct nextok_vocab *v) { return v && v->add_eos; }

const int32_t *nextok_vocab_eog_ids(const struct nextok_vocab *v, size_t *n)
{
    if (n) *n = v ? v->n_eog : 0;
    return v ? v->eog : NULL;
}

bool nextok_vocab_is_eog(const struct nextok_vocab *v, int32_t id)
{
    const struct nextok__tok *t = tok_at(v, id);
    return t && (t->attrs & NEXTOK_TOKEN_ATTR_EOG);
}

nextok_status nextok_vocab_add_eog(struct nextok_vocab *v, int32_t id)
{
    if (!v) return NEXTOK_ERR_INVALID_ARG;
    if (id < 0 || id >= v->n_tokens) return NEXTOK_ERR_TOKEN_RANGE;
    if (v->toks[id].attrs & NEXTOK_TOKEN_ATTR_EOG) return NEXTOK_OK;
    if (v->n_eog == v->eog_cap) {
        size_t cap = v->eog_cap ? v->eog_cap * 2 : 8;
        int32_t *p = nextok__realloc(&v->mem, v->eog, cap * sizeof *p);
        if (!p) return NEXTOK_ERR_NOMEM;
        v->eog = p;
        v->eog_cap = cap;
    }
    size_t i = v->n_eog;
    while (i > 0 && v->eog[i - 1] > id) {
        v->eog[i] = v->eog[i - 1];
        i--;
    }
    v->eog[i] = id;
    v->n_eog++;
    v->toks[id].attrs |= NEXTOK_TOKEN_ATTR_EOG;
    return NEXTOK_OK;
}

size_t nextok_vocab_n_merges(const struct nextok_vocab *v) { return v ? v->n_merges : 0; }

nextok_status nextok_vocab_merge(const struct nextok_vocab *v, size_t i, const char **left,
                                 size_t *left_len, const char **right, size_t *right_len)
{
    if (!v || !left || !left_len || !right || !right_len) return NEXTOK_ERR_INVALID_ARG;
    if (i >= v->n_merges) return NEXTOK_ERR_INVALID_ARG;
    const uint32_t *m = v->merges + 3 * i;
    *left = v->arena.data + m[0];
    *left_len = m[1];
    *right = v->arena.data + m[0] + m[1];
    *right_len = m[2];
    return NEXTOK_OK;
}
