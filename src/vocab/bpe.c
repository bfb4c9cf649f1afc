/*
 * The BPE merge loop over one pre-tokenized word, O(n log n) in the word's
 * length: the symbols are a linked list over an array, every adjacent pair
 * that may merge sits in a binary heap keyed by (priority, position), and a
 * popped entry is checked against the list instead of being removed when its
 * symbols change (lazy deletion).
 *
 * Why that check is enough: a symbol only grows, by absorbing its right
 * neighbour, and keeps its index (its start); so a pair is still the pair it
 * was pushed as exactly when the left symbol and its current right neighbour
 * have the lengths they had then.
 *
 * The priority is what the tokenizer merges first: the merge's rank (HF BPE,
 * GGUF gpt2), the merged token's id (tiktoken's ranks), or its score, higher
 * first (SentencePiece BPE as llama.cpp runs it). Ties go to the leftmost
 * pair, as in all three.
 */
#include "vocab_internal.h"

#include "../common/utf8.h"

/* ---- scratch ----------------------------------------------------------------- */

static nextok_status reserve(struct nextok__bpe_scratch *s, size_t n)
{
    if (n > (size_t)INT32_MAX / 4) return NEXTOK_ERR_INVALID_ARG;
    if (n > s->sym_cap) {
        size_t cap = n < 64 ? 64 : n + n / 2;
        void *p = nextok__realloc(s->mem, s->sym, cap * sizeof *s->sym);
        if (!p) return NEXTOK_ERR_NOMEM;
        s->sym = p;
        s->sym_cap = cap;
    }
    if (3 * n > s->heap_cap) {
        size_t cap = 3 * (n < 64 ? 64 : n + n / 2);
        void *p = nextok__realloc(s->mem, s->heap, cap * sizeof *s->heap);
        if (!p) return NEXTOK_ERR_NOMEM;
        s->heap = p;
        s->heap_cap = cap;
    }
    return NEXTOK_OK;
}

/* ---- the heap ------------------------------------------------------------------- */

static void heap_push(struct nextok__bpe_scratch *s, struct nextok__merge_ent m)
{
    struct nextok__merge_ent *h = s->heap;
    size_t i = s->n_heap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].key <= m.key) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = m;
}

static struct nextok__merge_ent heap_pop(struct nextok__bpe_scratch *s)
{
    struct nextok__merge_ent *h = s->heap, top = h[0], last = h[--s->n_heap];
    size_t n = s->n_heap, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1].key < h[c].key) c++;
        if (last.key <= h[c].key) break;
        h[i] = h[c];
        i = c;
    }
    if (n) h[i] = last;
    return top;
}

/* ---- which pairs merge ------------------------------------------------------------ */

/* Scores as 32-bit keys that sort higher scores first. */
static uint32_t score_key(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (u & 0x80000000u) ? ~u : u | 0x80000000u; /* ascending with f */
    return ~u;
}

static inline int32_t pair_lookup(const struct nextok__enc *e, int32_t l, int32_t r, int32_t *rank)
{
    if (l < 0 || r < 0) return -1;
    uint64_t key = ((uint64_t)(uint32_t)l << 32 | (uint32_t)r) + 1;
    uint32_t h = nextok__pair_hash(key) & e->pair_mask;
    for (; e->pair_key[h]; h = (h + 1) & e->pair_mask) {
        if (e->pair_key[h] == key) {
            *rank = e->pair_rank[h];
            return e->pair_out[h];
        }
    }
    return -1;
}

/* Push the pair (i, its right neighbour) if it can merge. */
static void try_pair(const struct nextok_vocab *v, struct nextok__bpe_scratch *s, const char *w,
                     int32_t i)
{
    const struct nextok__enc *e = &v->enc;
    struct nextok__sym *a = &s->sym[i];
    if (i < 0 || a->next < 0) return;
    struct nextok__sym *b = &s->sym[a->next];
    int32_t out, rank = 0;
    uint32_t prio;
    if (e->merge_by == NEXTOK__MERGE_RANKS) {
        out = pair_lookup(e, a->id, b->id, &rank);
        prio = (uint32_t)rank;
    } else {
        out = nextok__vocab_lookup(v, w + a->start, (size_t)a->len + (size_t)b->len);
        if (out < 0 ||
            (v->toks[out].attrs & NEXTOK_TOKEN_ATTR_ADDED && e->merge_by == NEXTOK__MERGE_TOKEN))
            return;
        prio = e->merge_by == NEXTOK__MERGE_TOKEN ? (uint32_t)out : score_key(v->toks[out].score);
    }
    if (out < 0) return;
    heap_push(s,
              (struct nextok__merge_ent){(uint64_t)prio << 32 | (uint32_t)i, a->len, b->len, out});
}

/* ---- first symbols ------------------------------------------------------------------ */

static void add_sym(struct nextok__bpe_scratch *s, int32_t *m, int32_t start, int32_t len,
                    int32_t id)
{
    int32_t k = (*m)++;
    s->sym[k] = (struct nextok__sym){start, len, id, k - 1, -1};
    if (k > 0) s->sym[k - 1].next = k;
}

/* One symbol per byte (byte-level and tiktoken vocabularies). */
static int32_t byte_syms(const struct nextok__enc *e, struct nextok__bpe_scratch *s, const char *w,
                         size_t n)
{
    int32_t m = 0;
    for (size_t i = 0; i < n; i++) add_sym(s, &m, (int32_t)i, 1, e->byte_tok[(unsigned char)w[i]]);
    return m;
}

/* One symbol per character (SentencePiece). A character without a token:
 * merged by text when merging by score (llama.cpp), else its byte tokens
 * (byte fallback, HF) or an unknown (id -1). */
static int32_t char_syms(const struct nextok_vocab *v, struct nextok__bpe_scratch *s, const char *w,
                         size_t n)
{
    const struct nextok__enc *e = &v->enc;
    int32_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t k = nextok__utf8_lead_len((unsigned char)w[i]);
        if (k > n - i) k = n - i;
        int32_t id = nextok__vocab_lookup(v, w + i, k);
        bool bytes = id < 0 && e->byte_fallback && e->merge_by != NEXTOK__MERGE_SCORES;
        for (size_t j = 0; bytes && j < k; j++) bytes = e->byte_tok[(unsigned char)w[i + j]] >= 0;
        if (bytes) {
            for (size_t j = 0; j < k; j++)
                add_sym(s, &m, (int32_t)(i + j), 1, e->byte_tok[(unsigned char)w[i + j]]);
        } else {
            add_sym(s, &m, (int32_t)i, (int32_t)k, id);
        }
        i += k;
    }
    return m;
}

/* ---- output ---------------------------------------------------------------------------- */

/* A symbol without a token: its byte tokens (byte fallback), else the
 * unknown token (consecutive ones fused when the file says so), else
 * UNSUPPORTED. */
static nextok_status emit_unknown(const struct nextok__enc *e, const struct nextok__sym *y,
                                  const char *w, struct nextok__ids *out)
{
    const unsigned char *b = (const unsigned char *)w + y->start;
    bool bytes = e->byte_fallback;
    for (int32_t j = 0; bytes && j < y->len; j++) bytes = e->byte_tok[b[j]] >= 0;
    if (bytes) {
        for (int32_t j = 0; j < y->len; j++) nextok__ids_push(out, e->byte_tok[b[j]]);
        return NEXTOK_OK;
    }
    if (e->unk < 0) return NEXTOK_ERR_UNSUPPORTED;
    bool fuse = e->fuse_unk && out->n > out->word_start && out->last == e->unk;
    if (!fuse) nextok__ids_push(out, e->unk);
    return NEXTOK_OK;
}

static nextok_status emit(const struct nextok__enc *e, const struct nextok__bpe_scratch *s,
                          const char *w, struct nextok__ids *out)
{
    out->word_start = out->n;
    for (int32_t i = 0; i >= 0; i = s->sym[i].next) {
        const struct nextok__sym *y = &s->sym[i];
        if (y->id >= 0)
            nextok__ids_push(out, y->id);
        else
            NEXTOK_FORWARD(emit_unknown(e, y, w, out));
    }
    return NEXTOK_OK;
}

/* ---- a word ------------------------------------------------------------------------------ */

static void merge_all(const struct nextok_vocab *v, struct nextok__bpe_scratch *s, const char *w,
                      int32_t m)
{
    s->n_heap = 0;
    for (int32_t i = 0; i + 1 < m; i++) try_pair(v, s, w, i);
    while (s->n_heap) {
        struct nextok__merge_ent t = heap_pop(s);
        int32_t i = (int32_t)(uint32_t)t.key;
        struct nextok__sym *a = &s->sym[i];
        if (a->len != t.llen || a->next < 0 || s->sym[a->next].len != t.rlen) continue; /* stale */
        struct nextok__sym *b = &s->sym[a->next];
        a->len += b->len;
        a->id = t.out;
        a->next = b->next;
        if (b->next >= 0) s->sym[b->next].prev = i;
        b->len = 0;
        try_pair(v, s, w, a->prev);
        try_pair(v, s, w, i);
    }
}

/* The word as the vocabulary spells it, when that is a token: the shortcut
 * of tiktoken and of HF's ignore_merges. */
static int32_t whole_word(const struct nextok_vocab *v, struct nextok__bpe_scratch *s,
                          const char *w, size_t n)
{
    const struct nextok__enc *e = &v->enc;
    if (e->syms != NEXTOK__SYMS_BYTE_LEVEL) return nextok__vocab_lookup(v, w, n);
    if (nextok__buf_reserve(&s->mapped, 2 * n) != NEXTOK_OK)
        return -1; /* then merge the long way */
    char *p = s->mapped.data;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)w[i];
        memcpy(p, e->bl_utf8[b], 2);
        p += e->bl_len[b];
    }
    return nextok__vocab_lookup(v, s->mapped.data, (size_t)(p - s->mapped.data));
}

nextok_status nextok__bpe_word(const struct nextok_vocab *v, struct nextok__bpe_scratch *s,
                               const char *w, size_t n, struct nextok__ids *out)
{
    const struct nextok__enc *e = &v->enc;
    if (n == 0) return NEXTOK_OK;
    if (e->merge_by == NEXTOK__MERGE_TOKEN || e->ignore_merges) {
        int32_t id = whole_word(v, s, w, n);
        if (id >= 0 && !(e->merge_by == NEXTOK__MERGE_TOKEN &&
                         (v->toks[id].attrs & NEXTOK_TOKEN_ATTR_ADDED))) {
            nextok__ids_push(out, id);
            return NEXTOK_OK;
        }
    }
    NEXTOK_FORWARD(reserve(s, n));
    int32_t m = e->syms == NEXTOK__SYMS_CHARS ? char_syms(v, s, w, n) : byte_syms(e, s, w, n);
    merge_all(v, s, w, m);
    return emit(e, s, w, out);
}

void nextok__bpe_scratch_free(struct nextok__bpe_scratch *s)
{
    nextok__free(s->mem, s->sym);
    nextok__free(s->mem, s->heap);
    nextok__buf_free(&s->mapped);
    nextok__free(s->mem, s->lat);
    s->lat = NULL;
    s->lat_cap = 0;
    s->sym = NULL;
    s->heap = NULL;
    s->sym_cap = s->heap_cap = 0;
}
