/*
 * The vocabulary's text hash: token text -> the lowest id with that text.
 * Its own file because loaders, the vocabulary object and the encoder all
 * look tokens up, and the encoder's tables are built by the vocabulary.
 */
#include "vocab_internal.h"

/* ---- hash: text -> lowest id --------------------------------------------- */

static uint32_t text_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static bool text_eq(const struct nextok_vocab *v, int32_t id, const char *s, size_t len)
{
    const struct nextok__tok *t = &v->toks[id];
    return t->text_len == len && memcmp(v->arena.data + t->text_off, s, len) == 0;
}

nextok_status nextok__vocab_build_hash(struct nextok_vocab *v, struct nextok_error *err)
{
    size_t cap = 16;
    while (cap < (size_t)v->n_tokens * 2) cap *= 2;
    nextok__free(&v->mem, v->hash);
    v->hash = nextok__alloc_array(&v->mem, cap, sizeof *v->hash);
    NEXTOK_RETURN_IF(!v->hash, err, NEXTOK_ERR_NOMEM, "out of memory for the token index");
    memset(v->hash, 0xFF, cap * sizeof *v->hash);
    v->hash_mask = (uint32_t)(cap - 1);
    for (int32_t id = 0; id < v->n_tokens; id++) {
        const struct nextok__tok *t = &v->toks[id];
        if (t->attrs & NEXTOK_TOKEN_ATTR_ABSENT) continue;
        const char *s = v->arena.data + t->text_off;
        uint32_t h = text_hash(s, t->text_len) & v->hash_mask;
        while (v->hash[h] >= 0 && !text_eq(v, v->hash[h], s, t->text_len))
            h = (h + 1) & v->hash_mask;
        if (v->hash[h] < 0) v->hash[h] = id; /* ids ascend: the first one stays */
    }
    return NEXTOK_OK;
}

int32_t nextok__vocab_lookup(const struct nextok_vocab *v, const char *text, size_t len)
{
    if (!v->hash) return -1;
    uint32_t h = text_hash(text, len) & v->hash_mask;
    for (; v->hash[h] >= 0; h = (h + 1) & v->hash_mask) {
        if (text_eq(v, v->hash[h], text, len)) return v->hash[h];
    }
    return -1;
}
