/*
 * No-repeat-n-gram (HF transformers NoRepeatNGramLogitsProcessor,
 * no_repeat_ngram_size; docs/semantics.md): remove every token that would
 * complete an n-gram already present in prompt||output.
 *
 * HF rebuilds a dict of every n-gram from the whole sequence at each step,
 * O(history * n). Here the index is kept between steps: each distinct
 * (n-1)-gram context maps to the distinct tokens that followed it, and accept
 * adds the one n-gram the new token completes, O(n). apply looks up the
 * current context, O(n), and removes its followers.
 */
#include "proc_common.h"

static nextok_status ng_reserve(struct nextok_sampler *s, int32_t token);
static nextok_status ng_reserve_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n);

static const struct nextok__stage_ops ngram_ops = {
    .touched = nextok__ngram_touched,
    .reserve = ng_reserve,
    .reserve_prompt = ng_reserve_prompt,
};

/* A distinct context: the n-1 tokens hist[pos..pos+n-1) and its follower list. */
struct ng_ent {
    uint32_t pos;
    uint32_t hash;
    int32_t  head; /* first node, -1 none */
};

/* A distinct (context, follower) pair, chained per context. */
struct ng_node {
    int32_t ent, tok, next;
};

struct ng_index {
    int32_t        *hist; /* prompt||output, all of it */
    size_t          len, hist_cap, n_prompt;
    struct ng_ent  *ents;
    size_t          n_ents, ents_cap;
    int32_t        *eslot; /* 2^ebits: index into ents, -1 empty */
    unsigned        ebits;
    struct ng_node *nodes;
    size_t          n_nodes, nodes_cap;
    int32_t        *nslot; /* 2^nbits: index into nodes, -1 empty */
    unsigned        nbits;
};

struct ng_ctx {
    int32_t n_vocab, n;
    struct ng_index x;
    /* What the next set_prompt builds into (ng_reserve_prompt allocates it,
     * set_prompt takes it over): not state. eslot NULL: none. */
    struct ng_index next;
};

/* ---- hashing ------------------------------------------------------------------ */

/* FNV-1a over 32-bit words; Fibonacci hashing spreads it over the table. */
static uint32_t ctx_hash(const int32_t *key, size_t k)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < k; i++) h = (h ^ (uint32_t)key[i]) * 16777619u;
    return h;
}

static uint32_t pair_hash(int32_t ent, int32_t tok)
{
    return ((uint32_t)ent * 0x85EBCA6Bu) ^ (uint32_t)tok;
}

/* The slot holding the context key[0..k), or the empty slot where it would go. */
static uint32_t ent_probe(const struct ng_index *x, const int32_t *key, size_t k, uint32_t hash)
{
    const uint32_t mask = ((uint32_t)1 << x->ebits) - 1;
    for (uint32_t h = nextok__slot_of(hash, x->ebits);; h = (h + 1) & mask) {
        int32_t e = x->eslot[h];
        if (e < 0) return h;
        const struct ng_ent *en = &x->ents[e];
        if (en->hash == hash && (k == 0 || memcmp(x->hist + en->pos, key, k * sizeof *key) == 0))
            return h;
    }
}

static uint32_t node_probe(const struct ng_index *x, int32_t ent, int32_t tok)
{
    const uint32_t mask = ((uint32_t)1 << x->nbits) - 1;
    for (uint32_t h = nextok__slot_of(pair_hash(ent, tok), x->nbits);; h = (h + 1) & mask) {
        int32_t k = x->nslot[h];
        if (k < 0 || (x->nodes[k].ent == ent && x->nodes[k].tok == tok)) return h;
    }
}

/* ---- the index ------------------------------------------------------------------ */

static void index_free(const struct nextok__mem *mem, struct ng_index *x)
{
    nextok__free(mem, x->hist);
    nextok__free(mem, x->ents);
    nextok__free(mem, x->eslot);
    nextok__free(mem, x->nodes);
    nextok__free(mem, x->nslot);
    memset(x, 0, sizeof *x);
}

static void index_clear(struct ng_index *x)
{
    x->len = x->n_prompt = x->n_ents = x->n_nodes = 0;
    memset(x->eslot, 0xff, ((size_t)1 << x->ebits) * sizeof *x->eslot);
    memset(x->nslot, 0xff, ((size_t)1 << x->nbits) * sizeof *x->nslot);
}

/* An empty index with room for `cap` tokens. */
static nextok_status index_init(const struct nextok__mem *mem, struct ng_index *x, size_t cap)
{
    memset(x, 0, sizeof *x);
    if (cap < 16) cap = 16;
    if (cap > NEXTOK__TABLE_MAX) return NEXTOK_ERR_NOMEM;
    x->hist_cap = x->ents_cap = x->nodes_cap = cap;
    x->ebits = x->nbits = nextok__table_bits(cap);
    x->hist = nextok__alloc_array(mem, cap, sizeof *x->hist);
    x->ents = nextok__alloc_array(mem, cap, sizeof *x->ents);
    x->nodes = nextok__alloc_array(mem, cap, sizeof *x->nodes);
    x->eslot = nextok__alloc_array(mem, (size_t)1 << x->ebits, sizeof *x->eslot);
    x->nslot = nextok__alloc_array(mem, (size_t)1 << x->nbits, sizeof *x->nslot);
    if (!x->hist || !x->ents || !x->nodes || !x->eslot || !x->nslot) {
        index_free(mem, x);
        return NEXTOK_ERR_NOMEM;
    }
    index_clear(x);
    return NEXTOK_OK;
}

/* p grown geometrically to hold `need` elements; NULL (p untouched) on failure. */
static void *grow_mem(const struct nextok__mem *mem, void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t c = 2 * *cap > need ? 2 * *cap : need;
    if (c > NEXTOK__TABLE_MAX) return NULL;
    void *q = nextok__realloc(mem, p, c * elem);
    if (q) *cap = c;
    return q;
}

static nextok_status rehash_ents(const struct nextok__mem *mem, struct ng_index *x, size_t need)
{
    if (2 * need <= ((size_t)1 << x->ebits)) return NEXTOK_OK;
    unsigned bits = nextok__table_bits(need);
    int32_t *t = nextok__alloc_array(mem, (size_t)1 << bits, sizeof *t);
    if (!t) return NEXTOK_ERR_NOMEM;
    memset(t, 0xff, ((size_t)1 << bits) * sizeof *t);
    const uint32_t mask = ((uint32_t)1 << bits) - 1;
    for (size_t e = 0; e < x->n_ents; e++) {
        uint32_t h = nextok__slot_of(x->ents[e].hash, bits);
        while (t[h] >= 0) h = (h + 1) & mask;
        t[h] = (int32_t)e;
    }
    nextok__free(mem, x->eslot);
    x->eslot = t;
    x->ebits = bits;
    return NEXTOK_OK;
}

static nextok_status rehash_nodes(const struct nextok__mem *mem, struct ng_index *x, size_t need)
{
    if (2 * need <= ((size_t)1 << x->nbits)) return NEXTOK_OK;
    unsigned bits = nextok__table_bits(need);
    int32_t *t = nextok__alloc_array(mem, (size_t)1 << bits, sizeof *t);
    if (!t) return NEXTOK_ERR_NOMEM;
    memset(t, 0xff, ((size_t)1 << bits) * sizeof *t);
    const uint32_t mask = ((uint32_t)1 << bits) - 1;
    for (size_t k = 0; k < x->n_nodes; k++) {
        uint32_t h = nextok__slot_of(pair_hash(x->nodes[k].ent, x->nodes[k].tok), bits);
        while (t[h] >= 0) h = (h + 1) & mask;
        t[h] = (int32_t)k;
    }
    nextok__free(mem, x->nslot);
    x->nslot = t;
    x->nbits = bits;
    return NEXTOK_OK;
}

/* Room for one more token (and the context and pair it may add). Growing is
 * invisible, so a failure part way leaves the index meaning the same. */
static nextok_status index_reserve(const struct nextok__mem *mem, struct ng_index *x)
{
    int32_t *hist = grow_mem(mem, x->hist, &x->hist_cap, x->len + 1, sizeof *hist);
    if (!hist) return NEXTOK_ERR_NOMEM;
    x->hist = hist;
    struct ng_ent *ents = grow_mem(mem, x->ents, &x->ents_cap, x->n_ents + 1, sizeof *ents);
    if (!ents) return NEXTOK_ERR_NOMEM;
    x->ents = ents;
    struct ng_node *nodes = grow_mem(mem, x->nodes, &x->nodes_cap, x->n_nodes + 1, sizeof *nodes);
    if (!nodes) return NEXTOK_ERR_NOMEM;
    x->nodes = nodes;
    NEXTOK_FORWARD(rehash_ents(mem, x, x->n_ents + 1));
    return rehash_nodes(mem, x, x->n_nodes + 1);
}

/* Append tok; record the n-gram it completes (room must be reserved). */
static void index_push(struct ng_index *x, size_t n, int32_t tok)
{
    x->hist[x->len++] = tok;
    if (x->len < n) return;
    const size_t start = x->len - n, k = n - 1;
    const uint32_t hash = ctx_hash(x->hist + start, k);
    const uint32_t h = ent_probe(x, x->hist + start, k, hash);
    int32_t e = x->eslot[h];
    if (e < 0) {
        e = (int32_t)x->n_ents++;
        x->ents[e] = (struct ng_ent){(uint32_t)start, hash, -1};
        x->eslot[h] = e;
    }
    const uint32_t hn = node_probe(x, e, tok);
    if (x->nslot[hn] >= 0) return; /* pair already known */
    const int32_t node = (int32_t)x->n_nodes++;
    x->nodes[node] = (struct ng_node){e, tok, x->ents[e].head};
    x->ents[e].head = node;
    x->nslot[hn] = node;
}

static nextok_status index_clone(const struct nextok__mem *mem, struct ng_index *d,
                                 const struct ng_index *x)
{
    *d = *x;
    d->hist = nextok__memdup(mem, x->hist, x->hist_cap * sizeof *x->hist);
    d->ents = nextok__memdup(mem, x->ents, x->ents_cap * sizeof *x->ents);
    d->nodes = nextok__memdup(mem, x->nodes, x->nodes_cap * sizeof *x->nodes);
    d->eslot = nextok__memdup(mem, x->eslot, ((size_t)1 << x->ebits) * sizeof *x->eslot);
    d->nslot = nextok__memdup(mem, x->nslot, ((size_t)1 << x->nbits) * sizeof *x->nslot);
    if (d->hist && d->ents && d->nodes && d->eslot && d->nslot) return NEXTOK_OK;
    index_free(mem, d);
    return NEXTOK_ERR_NOMEM;
}

/* ---- apply ------------------------------------------------------------------ */

/* The context entry of the last n-1 tokens, -1 if that context never occurred. */
static int32_t current_ent(const struct ng_ctx *c)
{
    const struct ng_index *x = &c->x;
    const size_t k = (size_t)c->n - 1;
    if (c->n <= 0 || x->n_ents == 0 || x->len < k) return -1;
    const int32_t *key = x->hist + (x->len - k);
    return x->eslot[ent_probe(x, key, k, ctx_hash(key, k))];
}

static bool followers_at_identity(const struct ng_index *x, int32_t e,
                                  const struct nextok_token_data_array *cur, size_t *first)
{
    *first = SIZE_MAX;
    for (int32_t k = x->ents[e].head; k >= 0; k = x->nodes[k].next) {
        const int32_t t = x->nodes[k].tok;
        if (!nextok__at_identity(cur, t)) return false;
        if ((size_t)t < *first) *first = (size_t)t;
    }
    return true;
}

static nextok_status ng_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                              uint64_t step)
{
    (void)step;
    const struct ng_ctx *c = s->ctx;
    const struct ng_index *x = &c->x;
    const int32_t e = current_ent(c);
    if (e < 0) return NEXTOK_OK;
    size_t first;
    if (followers_at_identity(x, e, cur, &first)) {
        for (int32_t k = x->ents[e].head; k >= 0; k = x->nodes[k].next)
            cur->data[x->nodes[k].tok].id = NEXTOK__REMOVED;
        nextok__compact_marked(cur, first);
        return NEXTOK_OK;
    }
    size_t w = 0;
    for (size_t i = 0; i < cur->size; i++)
        if (x->nslot[node_probe(x, e, cur->data[i].id)] < 0) cur->data[w++] = cur->data[i];
    cur->size = w;
    cur->selected = -1;
    return NEXTOK_OK;
}

/* ---- state slots ---------------------------------------------------------------- */

static const char *ng_name(const struct nextok_sampler *s)
{
    (void)s;
    return "no_repeat_ngram";
}

static nextok_status ng_reserve(struct nextok_sampler *s, int32_t token)
{
    struct ng_ctx *c = s->ctx;
    NEXTOK_FORWARD(nextok__proc_check_token(s, c->n_vocab, token));
    if (c->n <= 0 || index_reserve(&s->mem, &c->x) == NEXTOK_OK) return NEXTOK_OK;
    return nextok_sampler_set_error(
        s, NEXTOK_ERR_NOMEM, "no_repeat_ngram: out of memory recording token %d", (int)token);
}

static nextok_status ng_accept(struct nextok_sampler *s, int32_t token)
{
    struct ng_ctx *c = s->ctx;
    NEXTOK_FORWARD(ng_reserve(s, token));
    if (c->n > 0) index_push(&c->x, (size_t)c->n, token);
    return NEXTOK_OK;
}

/* Tokens of the index a prompt of n ids makes: the prompt, then the outputs. */
static size_t prompt_tokens(const struct ng_ctx *c, size_t n)
{
    return n + (c->x.len - c->x.n_prompt);
}

/* c->next gets room for an index of the new prompt and the outputs. */
static nextok_status ng_reserve_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    struct ng_ctx *c = s->ctx;
    NEXTOK_FORWARD(nextok__proc_check_prompt(s, c->n_vocab, ids, n));
    if (c->n <= 0) return NEXTOK_OK;
    const size_t need = prompt_tokens(c, n);
    if (c->next.eslot && need <= c->next.hist_cap) return NEXTOK_OK;
    index_free(&s->mem, &c->next);
    if (index_init(&s->mem, &c->next, need) == NEXTOK_OK) return NEXTOK_OK;
    return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM,
                                    "no_repeat_ngram: out of memory for a %zu-token prompt", n);
}

/* Rebuild the index from the new prompt followed by the outputs so far, in
 * c->next, which then replaces it. */
static nextok_status ng_set_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    struct ng_ctx *c = s->ctx;
    NEXTOK_FORWARD(ng_reserve_prompt(s, ids, n));
    if (c->n <= 0) return NEXTOK_OK;
    const struct ng_index *old = &c->x;
    const size_t n_out = old->len - old->n_prompt;
    struct ng_index *x = &c->next;
    index_clear(x);
    for (size_t i = 0; i < n; i++) index_push(x, (size_t)c->n, ids[i]);
    for (size_t i = 0; i < n_out; i++) index_push(x, (size_t)c->n, old->hist[old->n_prompt + i]);
    x->n_prompt = n;
    index_free(&s->mem, &c->x);
    c->x = *x;
    memset(x, 0, sizeof *x);
    return NEXTOK_OK;
}

static void ng_reset(struct nextok_sampler *s)
{
    struct ng_ctx *c = s->ctx;
    if (c->x.eslot) index_clear(&c->x);
}

static void ng_free(struct nextok_sampler *s)
{
    struct ng_ctx *c = s->ctx;
    if (!c) return;
    index_free(&s->mem, &c->x);
    index_free(&s->mem, &c->next);
    nextok__free(&s->mem, c);
}

static nextok_status ng_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    const struct ng_ctx *c = s->ctx;
    struct ng_ctx *d = nextok__calloc(&s->mem, 1, sizeof *d);
    if (!d) return NEXTOK_ERR_NOMEM;
    d->n_vocab = c->n_vocab;
    d->n = c->n;
    if (c->x.eslot && index_clone(&s->mem, &d->x, &c->x) != NEXTOK_OK) {
        nextok__free(&s->mem, d);
        return NEXTOK_ERR_NOMEM;
    }
    return nextok__builtin_new(out, &s->mem, s->iface, (enum nextok__kind)s->kind, s->ops, d, NULL);
}

const struct nextok_sampler_i nextok__iface_no_repeat_ngram = {
    ng_name, ng_accept, ng_apply, ng_reset, ng_clone, ng_free, ng_set_prompt,
};

nextok_status nextok__init_no_repeat_ngram(struct nextok_sampler **out,
                                           const struct nextok__mem *mem, int32_t n_vocab,
                                           int32_t n, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(nextok__check_vocab(n_vocab, err));
    struct ng_ctx *c = nextok__calloc(mem, 1, sizeof *c);
    if (!c) return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory creating no_repeat_ngram");
    c->n_vocab = n_vocab;
    c->n = n; /* <= 0: disabled, no index kept */
    if (n > 0 && index_init(mem, &c->x, 16) != NEXTOK_OK) {
        nextok__free(mem, c);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory creating no_repeat_ngram");
    }
    return nextok__builtin_new(out, mem, &nextok__iface_no_repeat_ngram, NEXTOK__K_NO_REPEAT_NGRAM,
                               &ngram_ops, c, err);
}

nextok_status nextok_sampler_init_no_repeat_ngram(struct nextok_sampler **out, int32_t n_vocab,
                                                  int32_t n, struct nextok_error *err)
{
    return nextok__init_no_repeat_ngram(out, &nextok__mem_libc, n_vocab, n, err);
}

size_t nextok__ngram_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap)
{
    if (!s || s->iface != &nextok__iface_no_repeat_ngram) return 0;
    const struct ng_ctx *c = s->ctx;
    const int32_t e = current_ent(c);
    if (e < 0) return 0;
    size_t m = 0;
    for (int32_t k = c->x.ents[e].head; k >= 0; k = c->x.nodes[k].next) {
        if (m < cap) ids[m] = c->x.nodes[k].tok;
        m++;
    }
    return m;
}
