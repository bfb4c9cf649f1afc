/*
 * A vocabulary prepared for grammar masks, once for every grammar compiled
 * against it: each id's kind and bytes, the text tokens as a byte trie in
 * preorder (a mask walk skips a whole subtree at its first refused byte),
 * and per-byte bitmasks for states that loop on most bytes (the inside of
 * a string: pda.c's loop path takes every token made of looping bytes at
 * once and walks only the others).
 */
#include "matcher_internal.h"

#include "../common/utf8.h"

struct tokref {
    const unsigned char *p;
    uint32_t len;
    int32_t id;
};

static int cmp_tokref(const void *a, const void *b)
{
    const struct tokref *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, n);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static nextok_status copy_tokens(struct nextok_token_table *tt, const struct nextok_vocab *v)
{
    const struct nextok__mem *mem = &tt->mem;
    int32_t n = tt->n_vocab;
    size_t total = 0;
    tt->kind = nextok__calloc(mem, (size_t)n, 1);
    tt->tok_off = nextok__alloc_array(mem, (size_t)n + 1, sizeof *tt->tok_off);
    tt->eog = nextok__alloc_array(mem, (size_t)n, sizeof *tt->eog);
    if (!tt->kind || !tt->tok_off || !tt->eog) return NEXTOK_ERR_NOMEM;
    for (int32_t id = 0; id < n; id++) {
        size_t len = 0;
        uint32_t attrs = nextok_vocab_token_attrs(v, id);
        nextok_vocab_token_bytes(v, id, &len);
        tt->tok_off[id] = (uint32_t)total;
        if (attrs & NEXTOK_TOKEN_ATTR_ABSENT) continue;
        if (nextok_vocab_is_eog(v, id)) {
            tt->kind[id] = NEXTOK__TK_EOG;
            tt->eog[tt->n_eog++] = id;
        } else if (attrs & NEXTOK_TOKEN_ATTR_SPECIAL) {
            tt->kind[id] = NEXTOK__TK_SPECIAL;
        } else if (len) {
            tt->kind[id] = NEXTOK__TK_TEXT;
            total += len;
        }
    }
    tt->tok_off[n] = (uint32_t)total;
    tt->tok_bytes = nextok__alloc(mem, total ? total : 1);
    if (!tt->tok_bytes) return NEXTOK_ERR_NOMEM;
    for (int32_t id = 0; id < n; id++) {
        if (tt->kind[id] != NEXTOK__TK_TEXT) continue;
        size_t len = 0;
        const char *b = nextok_vocab_token_bytes(v, id, &len);
        memcpy(tt->tok_bytes + tt->tok_off[id], b, len);
    }
    return NEXTOK_OK;
}

/* Preorder trie of the text tokens from their sorted byte strings. */
static nextok_status build_trie(struct nextok_token_table *tt)
{
    const struct nextok__mem *mem = &tt->mem;
    size_t n = 0, cap_nodes = 1;
    for (int32_t id = 0; id < tt->n_vocab; id++) n += tt->kind[id] == NEXTOK__TK_TEXT;
    struct tokref *t = nextok__alloc_array(mem, n ? n : 1, sizeof *t);
    tt->trie_tok = nextok__alloc_array(mem, n ? n : 1, sizeof *tt->trie_tok);
    tt->tok_pos = nextok__calloc(mem, (size_t)tt->n_vocab + 1, sizeof *tt->tok_pos);
    if (!t || !tt->trie_tok || !tt->tok_pos) {
        nextok__free(mem, t);
        return NEXTOK_ERR_NOMEM;
    }
    n = 0;
    for (int32_t id = 0; id < tt->n_vocab; id++) {
        if (tt->kind[id] != NEXTOK__TK_TEXT) continue;
        uint32_t len = tt->tok_off[id + 1] - tt->tok_off[id];
        t[n++] = (struct tokref){(const unsigned char *)tt->tok_bytes + tt->tok_off[id], len, id};
        cap_nodes += len;
        if (len > tt->max_depth) tt->max_depth = len;
    }
    nextok__sort(t, n, sizeof *t, cmp_tokref);
    tt->trie = nextok__alloc_array(mem, cap_nodes, sizeof *tt->trie);
    uint32_t *path = nextok__alloc_array(mem, (size_t)tt->max_depth + 1, sizeof *path);
    nextok_status rc = tt->trie && path ? NEXTOK_OK : NEXTOK_ERR_NOMEM;
    uint32_t open = 0; /* nodes on the current path */
    for (size_t i = 0; i < n && rc == NEXTOK_OK; i++) {
        uint32_t lcp = 0;
        if (i) {
            uint32_t m = t[i].len < t[i - 1].len ? t[i].len : t[i - 1].len;
            while (lcp < m && t[i].p[lcp] == t[i - 1].p[lcp]) lcp++;
        }
        for (; open > lcp; open--) tt->trie[path[open - 1]].end = tt->n_trie;
        for (; open < t[i].len; open++) {
            struct nextok__tnode *x = tt->trie + tt->n_trie;
            x->depth = open + 1, x->byte = t[i].p[open];
            x->tok0 = x->tok1 = (uint32_t)i;
            path[open] = tt->n_trie++;
        }
        struct nextok__tnode *leaf = tt->trie + path[open - 1];
        tt->tok_pos[t[i].id] = leaf->tok1;
        tt->trie_tok[leaf->tok1++] = t[i].id;
    }
    for (; open > 0; open--) tt->trie[path[open - 1]].end = tt->n_trie;
    for (unsigned b = 0; b < 256; b++) tt->root_child[b] = UINT32_MAX;
    for (uint32_t r = 0; rc == NEXTOK_OK && r < tt->n_trie; r = tt->trie[r].end)
        tt->root_child[tt->trie[r].byte] = r;
    nextok__free(mem, path);
    nextok__free(mem, t);
    return rc;
}

static void set_bit(uint32_t *w, int32_t id) { w[(uint32_t)id >> 5] |= 1u << ((uint32_t)id & 31); }

/* Whether b[0, n) is UTF-8 up to, possibly, a character cut at the end
 * (that part a valid beginning: no overlong form, surrogate or code point
 * past U+10FFFF can follow from it). */
static bool utf8_prefix_ok(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = nextok__utf8_decode(b + i, n - i, &cp);
        if (k) {
            i += k;
            continue;
        }
        /* a cut character: complete it with the smallest and the largest
         * continuation bytes its lead allows and see whether any is valid */
        size_t need = nextok__utf8_lead_len(b[i]);
        if (b[i] < 0xC2 || b[i] > 0xF4 || n - i >= need) return false;
        for (size_t j = i + 1; j < n; j++)
            if ((b[j] & 0xC0) != 0x80) return false;
        unsigned char t[4];
        memcpy(t, b + i, n - i);
        for (unsigned lo = 0x80; lo <= 0xBF; lo++) {
            for (size_t j = n - i; j < need; j++) t[j] = (unsigned char)lo;
            if (nextok__utf8_decode(t, need, &cp)) return true;
        }
        return false;
    }
    return true;
}

static nextok_status build_masks(struct nextok_token_table *tt)
{
    const struct nextok__mem *mem = &tt->mem;
    size_t w = tt->n_words;
    tt->has_byte = nextok__calloc(mem, 260 * w, sizeof *tt->has_byte);
    if (!tt->has_byte) return NEXTOK_ERR_NOMEM;
    tt->has_high = tt->has_byte + 128 * w;
    tt->bad_utf8 = tt->has_high + w;
    tt->text = tt->bad_utf8 + w;
    tt->first_byte = tt->text + w;
    tt->first_high = tt->first_byte + 128 * w;
    for (int32_t id = 0; id < tt->n_vocab; id++) {
        if (tt->kind[id] != NEXTOK__TK_TEXT) continue;
        const unsigned char *b = (const unsigned char *)tt->tok_bytes + tt->tok_off[id];
        size_t n = tt->tok_off[id + 1] - tt->tok_off[id];
        set_bit(tt->text, id);
        set_bit(b[0] < 0x80 ? tt->first_byte + b[0] * w : tt->first_high, id);
        tt->n_first[b[0] < 0x80 ? b[0] : 128]++;
        bool high = false;
        for (size_t i = 0; i < n; i++) {
            if (b[i] >= 0x80)
                high = true;
            else
                set_bit(tt->has_byte + b[i] * w, id);
        }
        if (high) set_bit(tt->has_high, id);
        if (high && !utf8_prefix_ok(b, n)) set_bit(tt->bad_utf8, id);
    }
    return NEXTOK_OK;
}

static int cmp_cp_desc(const void *a, const void *b)
{
    const int32_t *x = a, *y = b; /* (cp_len, id) pairs */
    if (x[0] != y[0]) return x[0] > y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Code point counts, the text ids longest first, and the length levels. */
static nextok_status build_lengths(struct nextok_token_table *tt)
{
    const struct nextok__mem *mem = &tt->mem;
    size_t n = 0, w = tt->n_words;
    for (int32_t id = 0; id < tt->n_vocab; id++) n += tt->kind[id] == NEXTOK__TK_TEXT;
    tt->cp_len = nextok__calloc(mem, (size_t)tt->n_vocab + 1, 1);
    tt->by_cp = nextok__alloc_array(mem, n ? 2 * n : 1, sizeof *tt->by_cp);
    if (!tt->cp_len || !tt->by_cp) return NEXTOK_ERR_NOMEM;
    tt->n_text = (uint32_t)n;
    n = 0;
    for (int32_t id = 0; id < tt->n_vocab; id++) {
        if (tt->kind[id] != NEXTOK__TK_TEXT) continue;
        uint32_t cps = 0;
        for (uint32_t i = tt->tok_off[id]; i < tt->tok_off[id + 1]; i++)
            cps += ((unsigned char)tt->tok_bytes[i] & 0xC0) != 0x80;
        tt->cp_len[id] = (uint8_t)(cps > 255 ? 255 : cps);
        tt->by_cp[2 * n] = tt->cp_len[id], tt->by_cp[2 * n + 1] = id, n++;
    }
    nextok__sort(tt->by_cp, n, 2 * sizeof *tt->by_cp, cmp_cp_desc);
    for (size_t i = 0; i < n; i++) tt->by_cp[i] = tt->by_cp[2 * i + 1];
    uint32_t step = 16;
    while (tt->max_depth / step >= NEXTOK__LEVELS) step *= 2;
    for (uint32_t t = step; t < tt->max_depth; t += step) tt->level[tt->n_levels++] = t;
    tt->level[tt->n_levels++] = tt->max_depth;
    for (uint32_t k = 0; k < tt->n_levels; k++) {
        tt->short_mask[k] = nextok__calloc(mem, w ? w : 1, sizeof *tt->short_mask[k]);
        tt->longer[k] = nextok__alloc_array(mem, n ? n : 1, sizeof *tt->longer[k]);
        if (!tt->short_mask[k] || !tt->longer[k]) return NEXTOK_ERR_NOMEM;
        for (int32_t id = 0; id < tt->n_vocab; id++) {
            if (tt->kind[id] != NEXTOK__TK_TEXT) continue;
            if (tt->tok_off[id + 1] - tt->tok_off[id] <= tt->level[k])
                set_bit(tt->short_mask[k], id);
            else
                tt->longer[k][tt->n_longer[k]++] = id;
        }
    }
    return NEXTOK_OK;
}

nextok_status nextok_token_table_init(struct nextok_token_table **out,
                                      const struct nextok_vocab *vocab,
                                      const struct nextok_allocator *allocator,
                                      struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !vocab, err, NEXTOK_ERR_INVALID_ARG,
                     "out and vocab: must not be NULL");
    *out = NULL;
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, allocator, err));
    struct nextok_token_table *tt = nextok__calloc(&mem, 1, sizeof *tt);
    NEXTOK_RETURN_IF(!tt, err, NEXTOK_ERR_NOMEM, "token table: out of memory");
    tt->mem = mem;
    tt->n_vocab = nextok_vocab_n_tokens(vocab);
    tt->n_words = NEXTOK_BITMASK_WORDS(tt->n_vocab);
    nextok_status rc = copy_tokens(tt, vocab);
    if (rc == NEXTOK_OK) rc = build_trie(tt);
    if (rc == NEXTOK_OK) rc = build_masks(tt);
    if (rc == NEXTOK_OK) rc = build_lengths(tt);
    if (rc != NEXTOK_OK) {
        nextok_token_table_free(tt);
        return nextok__err(err, rc, "token table: out of memory");
    }
    *out = tt;
    return NEXTOK_OK;
}

void nextok_token_table_free(struct nextok_token_table *tt)
{
    if (!tt) return;
    const struct nextok__mem mem = tt->mem;
    void *blocks[] = {tt->kind, tt->tok_off,  tt->tok_bytes, tt->eog,
                      tt->trie, tt->trie_tok, tt->tok_pos,   tt->has_byte};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) nextok__free(&mem, blocks[i]);
    for (uint32_t k = 0; k < NEXTOK__LEVELS; k++) {
        nextok__free(&mem, tt->short_mask[k]);
        nextok__free(&mem, tt->longer[k]);
    }
    nextok__free(&mem, tt->cp_len);
    nextok__free(&mem, tt->by_cp);
    nextok__free(&mem, tt);
}

int32_t nextok_token_table_n_vocab(const struct nextok_token_table *tt)
{
    return tt ? tt->n_vocab : 0;
}
