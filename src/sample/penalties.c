/*
 * Repetition, frequency and presence penalties (docs/semantics.md, Processors).
 *
 *   repetition r: logit / r if logit > 0 else logit * r    (CTRL, Keskar et al.
 *                 2019; the form HF, vLLM and llama.cpp share)
 *   frequency  f: logit -= f * count                       (OpenAI API)
 *   presence   q: logit -= q if count > 0                  (OpenAI API)
 *
 * Counts live in an open-addressing map keyed by token id, updated in accept
 * and set_prompt, so apply costs O(distinct ids in the history) on a full row
 * (token t at index t) instead of llama.cpp's lookup of every vocabulary entry,
 * and one O(size) pass with O(1) lookups otherwise. The window scope keeps a
 * ring of the last last_n tokens and moves counts as tokens slide in and out.
 */
#include "proc_common.h"

static nextok_status pen_reserve(struct nextok_sampler *s, int32_t token);
static nextok_status pen_reserve_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n);

static const struct nextok__stage_ops penalties_ops = {
    .touched = nextok__penalties_touched,
    .reserve = pen_reserve,
    .reserve_prompt = pen_reserve_prompt,
};

/* Per-id counts. a: prompt count (window scope: count inside the window), b: output count. */
struct pen_slot {
    int32_t  id; /* -1: empty */
    uint32_t a, b;
};

struct pen_map {
    struct pen_slot *slot; /* 2^bits slots, linear probing, load <= 1/2 */
    unsigned bits;
    size_t   n;
};

struct pen_ctx {
    struct nextok_penalty_params p;
    struct pen_map map;
    /* NEXTOK_SCOPE_WINDOW: the last last_n tokens of prompt||output, oldest at head;
     * the first n_prompt of them are prompt tokens. */
    int32_t *ring;
    size_t   ring_cap, head, count, n_prompt;
    /* What the next set_prompt builds into (pen_reserve_prompt allocates
     * them, set_prompt takes them over): not state. */
    struct pen_map next_map; /* slot NULL: none */
    int32_t *next_ring;
    size_t next_ring_cap;
};

/* ---- the count map ------------------------------------------------------------ */

static size_t map_cap(const struct pen_map *m) { return (size_t)1 << m->bits; }

static void map_clear(struct pen_map *m)
{
    for (size_t i = 0; i < map_cap(m); i++) m->slot[i] = (struct pen_slot){-1, 0, 0};
    m->n = 0;
}

static nextok_status map_init(const struct nextok__mem *mem, struct pen_map *m, size_t n_keys)
{
    if (n_keys > NEXTOK__TABLE_MAX) return NEXTOK_ERR_NOMEM;
    m->bits = nextok__table_bits(n_keys);
    m->slot = nextok__alloc_array(mem, map_cap(m), sizeof *m->slot);
    if (!m->slot) return NEXTOK_ERR_NOMEM;
    map_clear(m);
    return NEXTOK_OK;
}

static struct pen_slot *map_find(const struct pen_map *m, int32_t id)
{
    const size_t mask = map_cap(m) - 1;
    for (size_t h = nextok__slot_of((uint32_t)id, m->bits);; h = (h + 1) & mask) {
        struct pen_slot *s = &m->slot[h];
        if (s->id == id) return s;
        if (s->id < 0) return NULL;
    }
}

/* The slot of id, inserted with zero counts if absent (room must be reserved). */
static struct pen_slot *map_get(struct pen_map *m, int32_t id)
{
    const size_t mask = map_cap(m) - 1;
    for (size_t h = nextok__slot_of((uint32_t)id, m->bits);; h = (h + 1) & mask) {
        struct pen_slot *s = &m->slot[h];
        if (s->id == id) return s;
        if (s->id < 0) {
            *s = (struct pen_slot){id, 0, 0};
            m->n++;
            return s;
        }
    }
}

/* Make room for `extra` more keys; the map is unchanged on failure. */
static nextok_status map_reserve(const struct nextok__mem *mem, struct pen_map *m, size_t extra)
{
    const size_t need = m->n + extra;
    if (2 * need <= map_cap(m)) return NEXTOK_OK;
    struct pen_map g;
    NEXTOK_FORWARD(map_init(mem, &g, need));
    for (size_t i = 0; i < map_cap(m); i++)
        if (m->slot[i].id >= 0) *map_get(&g, m->slot[i].id) = m->slot[i];
    nextok__free(mem, m->slot);
    *m = g;
    return NEXTOK_OK;
}

/* A map with room for n_keys keys in *m (its contents are not kept). */
static nextok_status map_room(const struct nextok__mem *mem, struct pen_map *m, size_t n_keys)
{
    if (m->slot && 2 * n_keys <= map_cap(m)) return NEXTOK_OK;
    struct pen_map g;
    NEXTOK_FORWARD(map_init(mem, &g, n_keys));
    nextok__free(mem, m->slot);
    *m = g;
    return NEXTOK_OK;
}

/* Delete by backward shift (Knuth, TAOCP 6.4, Algorithm R): no tombstones. */
static void map_del(struct pen_map *m, struct pen_slot *s)
{
    const size_t mask = map_cap(m) - 1;
    size_t i = (size_t)(s - m->slot);
    for (size_t j = (i + 1) & mask; m->slot[j].id >= 0; j = (j + 1) & mask) {
        size_t home = nextok__slot_of((uint32_t)m->slot[j].id, m->bits);
        if (((j - home) & mask) >= ((j - i) & mask)) { /* home not in (i, j]: may move to i */
            m->slot[i] = m->slot[j];
            i = j;
        }
    }
    m->slot[i] = (struct pen_slot){-1, 0, 0};
    m->n--;
}

/* ---- the formulas ------------------------------------------------------------ */

static bool pen_active(const struct nextok_penalty_params *p)
{
    if (p->scope == NEXTOK_SCOPE_WINDOW && p->last_n == 0) return false;
    return p->repeat != 1.0f || p->frequency != 0.0f || p->presence != 0.0f;
}

/* The count frequency and presence see (docs/semantics.md, Scopes). */
static uint32_t pen_count(const struct nextok_penalty_params *p, const struct pen_slot *s)
{
    switch (p->scope) {
    case NEXTOK_SCOPE_PROMPT_OUTPUT: return s->b; /* vLLM: output tokens only */
    case NEXTOK_SCOPE_HISTORY: return s->a + s->b; /* HF: prompt||output      */
    default: return s->a;                           /* llama.cpp: the window   */
    }
}

static bool pen_touches(const struct nextok_penalty_params *p, const struct pen_slot *s)
{
    if (p->repeat != 1.0f && s->a + s->b > 0) return true;
    return (p->frequency != 0.0f || p->presence != 0.0f) && pen_count(p, s) > 0;
}

/* Repetition first, then frequency and presence; saturate to stay finite. */
static bool pen_one(const struct nextok_penalty_params *p, const struct pen_slot *s,
                    struct nextok_token_data *d)
{
    float l = d->logit;
    if (p->repeat != 1.0f && s->a + s->b > 0)
        l = nextok__sat(l > 0.0f ? l / p->repeat : l * p->repeat);
    uint32_t n = pen_count(p, s);
    if (n > 0) {
        l = nextok__sat(l - p->frequency * (float)n);
        l = nextok__sat(l - p->presence);
    }
    bool changed = l != d->logit;
    d->logit = l;
    return changed;
}

/* ---- apply ------------------------------------------------------------------ */

static bool map_identity(const struct pen_ctx *c, const struct nextok_token_data_array *cur)
{
    for (size_t i = 0; i < map_cap(&c->map); i++) {
        const struct pen_slot *s = &c->map.slot[i];
        if (s->id >= 0 && pen_touches(&c->p, s) && !nextok__at_identity(cur, s->id)) return false;
    }
    return true;
}

static bool pen_fast(const struct pen_ctx *c, struct nextok_token_data_array *cur)
{
    bool changed = false;
    for (size_t i = 0; i < map_cap(&c->map); i++) {
        const struct pen_slot *s = &c->map.slot[i];
        if (s->id >= 0 && pen_touches(&c->p, s)) changed |= pen_one(&c->p, s, &cur->data[s->id]);
    }
    return changed;
}

static bool pen_scan(const struct pen_ctx *c, struct nextok_token_data_array *cur)
{
    bool changed = false;
    for (size_t i = 0; i < cur->size; i++) {
        const struct pen_slot *s = map_find(&c->map, cur->data[i].id);
        if (s) changed |= pen_one(&c->p, s, &cur->data[i]);
    }
    return changed;
}

static nextok_status pen_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                               uint64_t step)
{
    (void)step;
    const struct pen_ctx *c = s->ctx;
    if (!pen_active(&c->p) || c->map.n == 0) return NEXTOK_OK;
    bool changed = map_identity(c, cur) ? pen_fast(c, cur) : pen_scan(c, cur);
    if (changed) {
        cur->sorted = false;
        cur->selected = -1;
    }
    return NEXTOK_OK;
}

/* ---- the window ring ----------------------------------------------------------- */

static nextok_status ring_grow(const struct nextok__mem *mem, struct pen_ctx *c)
{
    size_t last_n = (size_t)c->p.last_n;
    size_t cap = c->ring_cap < 8 ? 16 : 2 * c->ring_cap;
    if (cap > last_n) cap = last_n;
    int32_t *r = nextok__alloc_array(mem, cap, sizeof *r);
    if (!r) return NEXTOK_ERR_NOMEM;
    for (size_t i = 0; i < c->count; i++) r[i] = c->ring[(c->head + i) % c->ring_cap];
    nextok__free(mem, c->ring);
    c->ring = r;
    c->ring_cap = cap;
    c->head = 0;
    return NEXTOK_OK;
}

/* Drop the oldest window token and its count. */
static void window_evict(struct pen_ctx *c)
{
    int32_t old = c->ring[c->head];
    c->head = (c->head + 1) % c->ring_cap;
    c->count--;
    if (c->n_prompt) c->n_prompt--;
    struct pen_slot *s = map_find(&c->map, old);
    if (--s->a == 0) map_del(&c->map, s);
}

/* Room to record one more token (ring and count map); unchanged meaning on
 * failure (a grown ring or map holds the same). */
static nextok_status record_reserve(const struct nextok__mem *mem, struct pen_ctx *c)
{
    if (c->p.scope == NEXTOK_SCOPE_WINDOW && c->count == c->ring_cap &&
        c->ring_cap < (size_t)c->p.last_n)
        NEXTOK_FORWARD(ring_grow(mem, c));
    return map_reserve(mem, &c->map, 1);
}

/* Room must be reserved (record_reserve). */
static void window_push(struct pen_ctx *c, int32_t token)
{
    if (c->count == (size_t)c->p.last_n) window_evict(c);
    c->ring[(c->head + c->count) % c->ring_cap] = token;
    c->count++;
    map_get(&c->map, token)->a++;
}

/* ---- state slots ---------------------------------------------------------------- */

static const char *pen_name(const struct nextok_sampler *s)
{
    (void)s;
    return "penalties";
}

static nextok_status pen_reserve(struct nextok_sampler *s, int32_t token)
{
    struct pen_ctx *c = s->ctx;
    NEXTOK_FORWARD(nextok__proc_check_token(s, c->p.n_vocab, token));
    if (!pen_active(&c->p) || record_reserve(&s->mem, c) == NEXTOK_OK) return NEXTOK_OK;
    return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM,
                                    "penalties: out of memory recording token %d", (int)token);
}

static nextok_status pen_accept(struct nextok_sampler *s, int32_t token)
{
    struct pen_ctx *c = s->ctx;
    NEXTOK_FORWARD(pen_reserve(s, token));
    if (!pen_active(&c->p)) return NEXTOK_OK;
    if (c->p.scope == NEXTOK_SCOPE_WINDOW)
        window_push(c, token);
    else
        map_get(&c->map, token)->b++;
    return NEXTOK_OK;
}

/* Window scope: the new window holds the last m of the prompt and the k
 * outputs in the window now; its ring needs *cap entries. */
static void window_sizes(const struct pen_ctx *c, size_t n, size_t *m, size_t *k, size_t *cap)
{
    const size_t last_n = (size_t)c->p.last_n;
    *k = c->count - c->n_prompt;
    *m = n < last_n - *k ? n : last_n - *k;
    const size_t total = *m + *k;
    *cap = total > 16 ? total : (last_n < 16 ? last_n : 16);
}

/* Other scopes: the keys of the new map (the prompt's, the outputs'). */
static size_t counts_keys(const struct pen_ctx *c, size_t n)
{
    size_t keys = n;
    for (size_t i = 0; i < map_cap(&c->map); i++) keys += c->map.slot[i].b > 0;
    return keys > (size_t)c->p.n_vocab ? (size_t)c->p.n_vocab : keys;
}

/* Allocate what set_prompt(n ids) builds into: c->next_map (and ring). */
static nextok_status prompt_room(const struct nextok__mem *mem, struct pen_ctx *c, size_t n)
{
    if (c->p.scope != NEXTOK_SCOPE_WINDOW) return map_room(mem, &c->next_map, counts_keys(c, n));
    size_t m, k, cap;
    window_sizes(c, n, &m, &k, &cap);
    if (c->next_ring_cap < cap) {
        int32_t *r = nextok__alloc_array(mem, cap, sizeof *r);
        if (!r) return NEXTOK_ERR_NOMEM;
        nextok__free(mem, c->next_ring);
        c->next_ring = r;
        c->next_ring_cap = cap;
    }
    return map_room(mem, &c->next_map, m + k);
}

/* Take the next buffers over: the new map (and ring) becomes current. */
static void take_next(const struct nextok__mem *mem, struct pen_ctx *c)
{
    nextok__free(mem, c->map.slot);
    c->map = c->next_map;
    c->next_map = (struct pen_map){NULL, 0, 0};
}

/* Window scope: the last last_n of new prompt || the outputs already in the window. */
static void window_set_prompt(const struct nextok__mem *mem, struct pen_ctx *c, const int32_t *ids,
                              size_t n)
{
    size_t m, k, cap;
    window_sizes(c, n, &m, &k, &cap);
    const size_t total = m + k;
    int32_t *r = c->next_ring;
    map_clear(&c->next_map);
    if (m) memcpy(r, ids + (n - m), m * sizeof *r);
    for (size_t i = 0; i < k; i++) r[m + i] = c->ring[(c->head + c->n_prompt + i) % c->ring_cap];
    for (size_t i = 0; i < total; i++) map_get(&c->next_map, r[i])->a++;
    take_next(mem, c);
    nextok__free(mem, c->ring);
    c->ring = r;
    c->ring_cap = c->next_ring_cap;
    c->next_ring = NULL;
    c->next_ring_cap = 0;
    c->head = 0;
    c->count = total;
    c->n_prompt = m;
}

/* Other scopes: keep the output counts, replace the prompt counts. */
static void counts_set_prompt(const struct nextok__mem *mem, struct pen_ctx *c, const int32_t *ids,
                              size_t n)
{
    struct pen_map *g = &c->next_map;
    map_clear(g);
    for (size_t i = 0; i < map_cap(&c->map); i++)
        if (c->map.slot[i].b > 0) map_get(g, c->map.slot[i].id)->b = c->map.slot[i].b;
    for (size_t i = 0; i < n; i++) map_get(g, ids[i])->a++;
    take_next(mem, c);
}

static nextok_status pen_reserve_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    struct pen_ctx *c = s->ctx;
    NEXTOK_FORWARD(nextok__proc_check_prompt(s, c->p.n_vocab, ids, n));
    if (!pen_active(&c->p) || prompt_room(&s->mem, c, n) == NEXTOK_OK) return NEXTOK_OK;
    return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM,
                                    "penalties: out of memory for a %zu-token prompt", n);
}

static nextok_status pen_set_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    struct pen_ctx *c = s->ctx;
    NEXTOK_FORWARD(pen_reserve_prompt(s, ids, n));
    if (!pen_active(&c->p)) return NEXTOK_OK;
    if (c->p.scope == NEXTOK_SCOPE_WINDOW)
        window_set_prompt(&s->mem, c, ids, n);
    else
        counts_set_prompt(&s->mem, c, ids, n);
    return NEXTOK_OK;
}

static void pen_reset(struct nextok_sampler *s)
{
    struct pen_ctx *c = s->ctx;
    map_clear(&c->map);
    c->head = c->count = c->n_prompt = 0;
}

static void pen_free_ctx(const struct nextok__mem *mem, struct pen_ctx *c)
{
    if (!c) return;
    nextok__free(mem, c->map.slot);
    nextok__free(mem, c->ring);
    nextok__free(mem, c->next_map.slot);
    nextok__free(mem, c->next_ring);
    nextok__free(mem, c);
}

static void pen_free(struct nextok_sampler *s) { pen_free_ctx(&s->mem, s->ctx); }

static nextok_status pen_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    const struct nextok__mem *mem = &s->mem;
    const struct pen_ctx *c = s->ctx;
    struct pen_ctx *d = nextok__alloc(mem, sizeof *d);
    if (!d) return NEXTOK_ERR_NOMEM;
    *d = *c;
    d->next_map = (struct pen_map){NULL, 0, 0}; /* not state: the clone allocates its own */
    d->next_ring = NULL;
    d->next_ring_cap = 0;
    d->map.slot = nextok__memdup(mem, c->map.slot, map_cap(&c->map) * sizeof *d->map.slot);
    d->ring = c->ring_cap ? nextok__memdup(mem, c->ring, c->ring_cap * sizeof *d->ring) : NULL;
    if (!d->map.slot || (c->ring_cap && !d->ring)) {
        pen_free_ctx(mem, d);
        return NEXTOK_ERR_NOMEM;
    }
    return nextok__builtin_new(out, mem, s->iface, (enum nextok__kind)s->kind, s->ops, d, NULL);
}

const struct nextok_sampler_i nextok__iface_penalties = {
    pen_name, pen_accept, pen_apply, pen_reset, pen_clone, pen_free, pen_set_prompt,
};

/* ---- construction ---------------------------------------------------------------- */

struct nextok_penalty_params nextok_penalty_default_params(int32_t n_vocab)
{
    struct nextok_penalty_params p;
    memset(&p, 0, sizeof p);
    p.n_vocab = n_vocab;
    p.scope = NEXTOK_SCOPE_PROMPT_OUTPUT;
    p.last_n = 64;
    p.repeat = 1.0f;
    p.frequency = 0.0f;
    p.presence = 0.0f;
    return p;
}

static nextok_status check_params(const struct nextok_penalty_params *p, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!p, err, NEXTOK_ERR_INVALID_ARG, "params: must be non-NULL");
    NEXTOK_FORWARD(nextok__check_vocab(p->n_vocab, err));
    NEXTOK_RETURN_IF(p->scope != NEXTOK_SCOPE_PROMPT_OUTPUT && p->scope != NEXTOK_SCOPE_WINDOW &&
                         p->scope != NEXTOK_SCOPE_HISTORY,
                     err, NEXTOK_ERR_INVALID_ARG, "scope: unknown value %d", (int)p->scope);
    NEXTOK_RETURN_IF(p->last_n < 0, err, NEXTOK_ERR_INVALID_ARG,
                     "last_n: must be >= 0 (pass the context size for 'all'), got %d",
                     (int)p->last_n);
    NEXTOK_RETURN_IF(!(p->repeat > 0.0f && isfinite(p->repeat)), err, NEXTOK_ERR_INVALID_ARG,
                     "repeat: must be > 0 and finite, got %g", (double)p->repeat);
    NEXTOK_RETURN_IF(!isfinite(p->frequency), err, NEXTOK_ERR_INVALID_ARG,
                     "frequency: must be finite, got %g", (double)p->frequency);
    NEXTOK_RETURN_IF(!isfinite(p->presence), err, NEXTOK_ERR_INVALID_ARG,
                     "presence: must be finite, got %g", (double)p->presence);
    return NEXTOK_OK;
}

nextok_status nextok__init_penalties(struct nextok_sampler **out, const struct nextok__mem *mem,
                                     const struct nextok_penalty_params *params,
                                     struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(check_params(params, err));
    struct pen_ctx *c = nextok__calloc(mem, 1, sizeof *c);
    if (!c || map_init(mem, &c->map, 8) != NEXTOK_OK) {
        nextok__free(mem, c);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory creating penalties");
    }
    c->p = *params;
    return nextok__builtin_new(out, mem, &nextok__iface_penalties, NEXTOK__K_PENALTIES,
                               &penalties_ops, c, err);
}

nextok_status nextok_sampler_init_penalties(struct nextok_sampler **out,
                                            const struct nextok_penalty_params *params,
                                            struct nextok_error *err)
{
    return nextok__init_penalties(out, &nextok__mem_libc, params, err);
}

size_t nextok__penalties_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap)
{
    if (!s || s->iface != &nextok__iface_penalties) return 0;
    const struct pen_ctx *c = s->ctx;
    if (!pen_active(&c->p)) return 0;
    size_t m = 0;
    for (size_t i = 0; i < map_cap(&c->map); i++) {
        const struct pen_slot *sl = &c->map.slot[i];
        if (sl->id < 0 || !pen_touches(&c->p, sl)) continue;
        if (m < cap) ids[m] = sl->id;
        m++;
    }
    return m;
}
