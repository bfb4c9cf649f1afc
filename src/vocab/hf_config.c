/*
 * The two files that may sit next to tokenizer.json and name its special
 * tokens: tokenizer_config.json (by text) and generation_config.json (by id).
 * Both are small; each is read whole into a JSON tree.
 */
#include "../common/utf8.h"
#include "hf_internal.h"

#include <stdio.h>

static nextok_status parse(const struct nextok_vocab *v, struct nextok__json *doc, const char *text,
                           size_t n, const char *file, struct nextok_error *err)
{
    size_t bom = nextok__utf8_bom_len(text, n);
    return nextok__json_parse_object(doc, &v->mem, text + bom, n - bom, NULL, file, err);
}

/* ---- tokenizer_config.json -------------------------------------------------------------- */

/* "eos_token": "<text>", {"content": "<text>", ...} or null. */
static nextok_status config_role(struct nextok_vocab *v, const struct nextok__json *d,
                                 const char *key, int role, struct nextok_error *err)
{
    uint32_t o = nextok__json_get(d, 0, key);
    if (o == NEXTOK__JSON_NO_NODE) return NEXTOK_OK; /* absent: other sources decide */
    if (nextok__json_type(d, o) == NEXTOK__JSON_OBJECT) o = nextok__hf_get(d, o, "content");
    if (o == NEXTOK__JSON_NO_NODE || nextok__json_type(d, o) == NEXTOK__JSON_NULL) {
        v->special[role] = -1; /* an explicit null: the model has none */
        v->special_given |= 1u << role;
        return NEXTOK_OK;
    }
    size_t len;
    const char *s = nextok__json_str(d, o, &len);
    NEXTOK_RETURN_IF(!s, err, NEXTOK_ERR_FORMAT,
                     "tokenizer_config.json: %s: expected a string, {\"content\": ...} or null",
                     key);
    int32_t id = nextok__vocab_lookup(v, s, len);
    if (id < 0) return NEXTOK_OK; /* names no token: leave the role to other sources */
    v->special[role] = id;
    v->special_given |= 1u << role;
    return NEXTOK_OK;
}

static nextok_status config_bool(const struct nextok__json *d, const char *key, bool *dst,
                                 struct nextok_error *err)
{
    uint32_t o = nextok__hf_get(d, 0, key);
    if (o == NEXTOK__JSON_NO_NODE) return NEXTOK_OK;
    NEXTOK_RETURN_IF(!nextok__hf_bool(d, o), err, NEXTOK_ERR_FORMAT,
                     "tokenizer_config.json: %s: expected true or false", key);
    *dst = nextok__hf_true(d, o);
    return NEXTOK_OK;
}

nextok_status nextok__hf_read_tokenizer_config(struct nextok_vocab *v, const char *text, size_t n,
                                               struct nextok_error *err)
{
    static const char *const keys[] = {"bos_token", "eos_token", "pad_token", "unk_token"};
    static const int roles[] = {NEXTOK_VOCAB_BOS, NEXTOK_VOCAB_EOS, NEXTOK_VOCAB_PAD, NEXTOK_VOCAB_UNK};
    struct nextok__json d = {0};
    nextok_status rc = parse(v, &d, text, n, "tokenizer_config.json", err);
    for (int i = 0; i < 4 && rc == NEXTOK_OK; i++) rc = config_role(v, &d, keys[i], roles[i], err);
    if (rc == NEXTOK_OK) rc = config_bool(&d, "add_bos_token", &v->add_bos, err);
    if (rc == NEXTOK_OK) rc = config_bool(&d, "add_eos_token", &v->add_eos, err);
    nextok__json_free(&d);
    return rc;
}

/* ---- generation_config.json ------------------------------------------------------------- */

struct gen {
    struct nextok_vocab *v;
    const struct nextok__json *d;
    struct nextok_error *err;
};

/* An id; out of the vocabulary's range it is ignored (-1), like HF. */
static nextok_status gen_id(const struct gen *g, uint32_t o, const char *path, int32_t *id)
{
    int64_t v = 0;
    NEXTOK_RETURN_IF(!nextok__json_int(g->d, o, &v), g->err, NEXTOK_ERR_FORMAT,
                     "generation_config.json: %s: expected an integer", path);
    *id = v >= 0 && v < g->v->n_tokens ? (int32_t)v : -1;
    return NEXTOK_OK;
}

/* eos_token_id: one id or a list. */
static nextok_status gen_eos(const struct gen *g, uint32_t o, int32_t *eos, size_t cap,
                             size_t *n_eos)
{
    int32_t id = -1;
    if (nextok__json_type(g->d, o) != NEXTOK__JSON_ARRAY) {
        NEXTOK_FORWARD(gen_id(g, o, "eos_token_id", &id));
        if (id >= 0 && *n_eos < cap) eos[(*n_eos)++] = id;
        return NEXTOK_OK;
    }
    size_t i = 0;
    for (uint32_t e = nextok__json_first(g->d, o); e != NEXTOK__JSON_NO_NODE;
         e = nextok__json_next(g->d, e), i++) {
        char path[48];
        snprintf(path, sizeof path, "eos_token_id[%zu]", i);
        NEXTOK_FORWARD(gen_id(g, e, path, &id));
        if (id >= 0 && *n_eos < cap) eos[(*n_eos)++] = id;
    }
    return NEXTOK_OK;
}

/* bos_token_id, pad_token_id: only where tokenizer_config.json was silent. */
static nextok_status gen_role(const struct gen *g, const char *key, int role)
{
    struct nextok_vocab *v = g->v;
    uint32_t o = nextok__hf_get(g->d, 0, key);
    int32_t id = -1;
    if (o == NEXTOK__JSON_NO_NODE || ((v->special_given >> role) & 1u)) return NEXTOK_OK;
    NEXTOK_FORWARD(gen_id(g, o, key, &id));
    if (id >= 0) v->special[role] = id, v->special_given |= 1u << role;
    return NEXTOK_OK;
}

static nextok_status gen_read(const struct gen *g, int32_t *eos, size_t cap, size_t *n_eos)
{
    struct nextok_vocab *v = g->v;
    uint32_t o = nextok__hf_get(g->d, 0, "eos_token_id");
    if (o != NEXTOK__JSON_NO_NODE) NEXTOK_FORWARD(gen_eos(g, o, eos, cap, n_eos));
    if (*n_eos && !((v->special_given >> NEXTOK_VOCAB_EOS) & 1u)) {
        v->special[NEXTOK_VOCAB_EOS] = eos[0];
        v->special_given |= 1u << NEXTOK_VOCAB_EOS;
    }
    NEXTOK_FORWARD(gen_role(g, "bos_token_id", NEXTOK_VOCAB_BOS));
    return gen_role(g, "pad_token_id", NEXTOK_VOCAB_PAD);
}

nextok_status nextok__hf_read_generation_config(struct nextok_vocab *v, const char *text, size_t n,
                                                int32_t *eos, size_t cap, size_t *n_eos,
                                                struct nextok_error *err)
{
    struct nextok__json d = {0};
    *n_eos = 0;
    nextok_status rc = parse(v, &d, text, n, "generation_config.json", err);
    struct gen g = {v, &d, err};
    if (rc == NEXTOK_OK) rc = gen_read(&g, eos, cap, n_eos);
    nextok__json_free(&d);
    return rc;
}
