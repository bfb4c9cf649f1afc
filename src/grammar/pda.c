/*
 * The parser-state cache: hash-consed stacks, interned states and their
 * byte transitions, built on demand (matcher_internal.h says what they are).
 *
 * Advancing a state by a code point: every top whose character set holds it
 * moves past the set, then expands — an alternative's end returns to the
 * parent, a rule reference pushes its return position (none when the
 * reference ends its alternative: tail calls keep right recursion, which
 * is how repetitions are written, from growing the stack) and branches into
 * the rule's live alternatives, until every branch rests on a character set
 * or a token reference, or has completed the root (top 0).
 *
 * Everything here runs under the cache's lock. Growth is bounded by
 * max_cache_bytes, stacks per state by max_stacks and expansion steps by
 * max_work; hitting one fails the step with NEXTOK_ERR_LIMIT.
 */
#include "matcher_internal.h"

#include <stdio.h>

static uint32_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (uint32_t)x;
}

static int32_t fail(struct nextok__pcache *pc, nextok_status rc, const char *msg)
{
    pc->failed = rc;
    snprintf(pc->errmsg, sizeof pc->errmsg, "%s", msg);
    return NEXTOK__ST_UNKNOWN;
}

/* Grow *p (elements of size sz) to hold at least need; counts the bytes. */
bool nextok__pcache_grow(struct nextok__pcache *pc, void **p, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    size_t more = (n - *cap) * sz;
    if (pc->bytes + more > pc->cg->max_cache_bytes) {
        fail(pc, NEXTOK_ERR_LIMIT, "grammar: the matcher's state cache is full (max_cache_bytes)");
        return false;
    }
    void *q = nextok__realloc(&pc->mem, *p, n * sz);
    if (!q) {
        fail(pc, NEXTOK_ERR_NOMEM, "grammar: out of memory");
        return false;
    }
    pc->bytes += more;
    *p = q;
    *cap = n;
    return true;
}

/* ---- nodes ------------------------------------------------------------------------ */

static bool rehash_nodes(struct nextok__pcache *pc)
{
    uint32_t cap = pc->nhash_cap ? pc->nhash_cap * 2 : 1024;
    size_t more = (size_t)(cap - pc->nhash_cap) * sizeof *pc->nhash;
    if (pc->bytes + more > pc->cg->max_cache_bytes) {
        fail(pc, NEXTOK_ERR_LIMIT, "grammar: the matcher's state cache is full (max_cache_bytes)");
        return false;
    }
    uint32_t *h = nextok__calloc(&pc->mem, cap, sizeof *h);
    if (!h) return fail(pc, NEXTOK_ERR_NOMEM, "grammar: out of memory"), false;
    for (uint32_t id = 1; id < pc->n_node; id++) {
        uint32_t i = mix(((uint64_t)pc->node[2 * id] << 32) | pc->node[2 * id + 1]) & (cap - 1);
        while (h[i]) i = (i + 1) & (cap - 1);
        h[i] = id;
    }
    nextok__free(&pc->mem, pc->nhash);
    pc->bytes += more;
    pc->nhash = h;
    pc->nhash_cap = cap;
    return true;
}

/* The node (pos, parent); 0 on failure (node 0 is never a cons). */
uint32_t nextok__pcache_cons(struct nextok__pcache *pc, uint32_t pos, uint32_t parent)
{
    if (2 * (size_t)(pc->n_node + 1) > pc->nhash_cap && !rehash_nodes(pc)) return 0;
    uint32_t mask = pc->nhash_cap - 1;
    uint32_t i = mix(((uint64_t)pos << 32) | parent) & mask;
    for (uint32_t id; (id = pc->nhash[i]) != 0; i = (i + 1) & mask)
        if (pc->node[2 * id] == pos && pc->node[2 * id + 1] == parent) return id;
    size_t cap = pc->cap_node;
    if (!nextok__pcache_grow(pc, (void **)&pc->node, &cap, 2 * ((size_t)pc->n_node + 1),
                             sizeof *pc->node))
        return 0;
    pc->cap_node = (uint32_t)cap;
    uint32_t id = pc->n_node++;
    pc->node[2 * id] = pos;
    pc->node[2 * id + 1] = parent;
    pc->nhash[i] = id;
    return id;
}

/* ---- expansion ---------------------------------------------------------------------- */

static bool is_end(const struct nextok__gel *e)
{
    return e->type == NEXTOK__G_END || e->type == NEXTOK__G_ALT;
}

static bool push_top(struct nextok__pcache *pc, size_t *n, uint32_t top)
{
    if (*n >= pc->cg->max_stacks) {
        fail(pc, NEXTOK_ERR_LIMIT,
             "grammar: more parser stacks than max_stacks (an ambiguous grammar)");
        return false;
    }
    if (!nextok__pcache_grow(pc, (void **)&pc->tops, &pc->cap_tops, *n + 1, sizeof *pc->tops))
        return false;
    pc->tops[(*n)++] = top;
    return true;
}

/* Expand (pos, parent) into tops appended at pc->tops[*n...]. */
bool nextok__pcache_expand(struct nextok__pcache *pc, uint32_t pos, uint32_t parent, size_t *n)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    size_t nw = 0;
    uint32_t work = 0;
    if (!nextok__pcache_grow(pc, (void **)&pc->work, &pc->cap_work, 2, sizeof *pc->work))
        return false;
    pc->work[nw++] = pos, pc->work[nw++] = parent;
    while (nw) {
        parent = pc->work[--nw];
        pos = pc->work[--nw];
        for (;;) {
            if (++work > cg->max_work) {
                fail(pc, NEXTOK_ERR_LIMIT, "grammar: expansion work over max_work");
                return false;
            }
            const struct nextok__gel *e = cg->el + pos;
            if (is_end(e)) {
                if (parent <= NEXTOK__EXIT) { /* the root completed, or the frame */
                    if (!push_top(pc, n, parent)) return false;
                    break;
                }
                pos = pc->node[2 * parent];
                parent = pc->node[2 * parent + 1];
                continue;
            }
            if (e->type != NEXTOK__G_RULE_REF) {
                uint32_t top = nextok__pcache_cons(pc, pos, parent);
                if (!top || !push_top(pc, n, top)) return false;
                break;
            }
            uint32_t ret = pos + 1, np = parent;
            if (!is_end(cg->el + ret) && !(np = nextok__pcache_cons(pc, ret, parent))) return false;
            uint32_t a0 = cg->rule_alt[e->value], a1 = cg->rule_alt[e->value + 1];
            if (!nextok__pcache_grow(pc, (void **)&pc->work, &pc->cap_work, nw + 2 * (a1 - a0),
                                     sizeof *pc->work))
                return false;
            for (uint32_t a = a1; a-- > a0;) pc->work[nw++] = cg->alt[a], pc->work[nw++] = np;
            break;
        }
    }
    return true;
}

/* ---- states --------------------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static size_t sort_unique(uint32_t *v, size_t n)
{
    if (n > 1) nextok__sort(v, n, sizeof *v, cmp_u32);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || v[m - 1] != v[i]) v[m++] = v[i];
    return m;
}

static uint32_t state_hash(const uint32_t *tops, size_t n, uint32_t pval, unsigned pneed,
                           unsigned plen)
{
    uint64_t h = ((uint64_t)pval << 16) ^ (pneed << 8) ^ plen ^ 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) h = (h ^ tops[i]) * 0x100000001b3ull;
    return mix(h ^ n);
}

static bool same_state(const struct nextok__pcache *pc, const struct nextok__pstate *s,
                       const uint32_t *tops, size_t n, uint32_t pval, unsigned pneed, unsigned plen)
{
    return s->n == n && s->pval == pval && s->pneed == pneed && s->plen == plen &&
           memcmp(pc->pool + s->off, tops, n * sizeof *tops) == 0;
}

static bool rehash_states(struct nextok__pcache *pc)
{
    uint32_t cap = pc->shash_cap ? pc->shash_cap * 2 : 256;
    size_t more = (size_t)(cap - pc->shash_cap) * sizeof *pc->shash;
    if (pc->bytes + more > pc->cg->max_cache_bytes) {
        fail(pc, NEXTOK_ERR_LIMIT, "grammar: the matcher's state cache is full (max_cache_bytes)");
        return false;
    }
    uint32_t *h = nextok__calloc(&pc->mem, cap, sizeof *h);
    if (!h) return fail(pc, NEXTOK_ERR_NOMEM, "grammar: out of memory"), false;
    for (uint32_t id = 0; id < pc->n_st; id++) {
        const struct nextok__pstate *s = pc->st + id;
        uint32_t i = state_hash(pc->pool + s->off, s->n, s->pval, s->pneed, s->plen) & (cap - 1);
        while (h[i]) i = (i + 1) & (cap - 1);
        h[i] = id + 1;
    }
    nextok__free(&pc->mem, pc->shash);
    pc->bytes += more;
    pc->shash = h;
    pc->shash_cap = cap;
    return true;
}

/* The state with these tops (sorted, unique) and partial character. */
static int32_t intern(struct nextok__pcache *pc, const uint32_t *tops, size_t n, uint32_t pval,
                      unsigned pneed, unsigned plen)
{
    if (n == 0) return NEXTOK__ST_DEAD;
    if (2 * ((size_t)pc->n_st + 1) > pc->shash_cap && !rehash_states(pc)) return NEXTOK__ST_UNKNOWN;
    uint32_t mask = pc->shash_cap - 1;
    uint32_t i = state_hash(tops, n, pval, pneed, plen) & mask;
    for (uint32_t id; (id = pc->shash[i]) != 0; i = (i + 1) & mask)
        if (same_state(pc, pc->st + id - 1, tops, n, pval, pneed, plen)) return (int32_t)id - 1;
    size_t cap_st = pc->cap_st;
    if (!nextok__pcache_grow(pc, (void **)&pc->st, &cap_st, (size_t)pc->n_st + 1, sizeof *pc->st) ||
        !nextok__pcache_grow(pc, (void **)&pc->pool, &pc->cap_pool, pc->n_pool + n,
                             sizeof *pc->pool))
        return NEXTOK__ST_UNKNOWN;
    pc->cap_st = (uint32_t)cap_st;
    struct nextok__pstate *s = pc->st + pc->n_st;
    memset(s, 0, sizeof *s);
    s->off = (uint32_t)pc->n_pool;
    s->n = (uint32_t)n;
    s->pval = pval, s->pneed = (uint8_t)pneed, s->plen = (uint8_t)plen;
    memcpy(pc->pool + pc->n_pool, tops, n * sizeof *tops);
    pc->n_pool += n;
    for (size_t k = 0; k < n; k++) {
        if (tops[k] == 0)
            s->accept = pneed == 0;
        else if (tops[k] == NEXTOK__EXIT)
            s->has_exit = true;
        else {
            uint32_t t = pc->cg->el[pc->node[2 * tops[k]]].type;
            if (t == NEXTOK__G_TOKEN || t == NEXTOK__G_TOKEN_NOT) s->has_tokref = true;
        }
    }
    pc->shash[i] = pc->n_st + 1;
    return (int32_t)pc->n_st++;
}

/* Intern pc->tops[0, n) after sorting them. */
int32_t nextok__pcache_intern_tops(struct nextok__pcache *pc, size_t n)
{
    n = sort_unique(pc->tops, n);
    return intern(pc, pc->tops, n, 0, 0, 0);
}

/* ---- transitions -------------------------------------------------------------------- */

/* Advance the tops of state s by the complete code point cp. */
static int32_t advance_cp(struct nextok__pcache *pc, int32_t s, uint32_t cp)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    size_t n = 0;
    for (uint32_t k = 0; k < pc->st[s].n; k++) {
        uint32_t top = pc->pool[pc->st[s].off + k];
        if (top <= NEXTOK__EXIT) continue;
        uint32_t pos = pc->node[2 * top], parent = pc->node[2 * top + 1];
        int32_t c = cg->el_cset[pos];
        if (c < 0 || !nextok__cset_has(cg, (uint32_t)c, cp)) continue;
        if (!nextok__pcache_expand(pc, cg->el_next[pos], parent, &n)) return NEXTOK__ST_UNKNOWN;
    }
    return nextok__pcache_intern_tops(pc, n);
}

/* Whether some top of s has a character set holding a code point of [lo, hi]. */
static bool any_top_in(struct nextok__pcache *pc, int32_t s, uint32_t lo, uint32_t hi)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    for (uint32_t k = 0; k < pc->st[s].n; k++) {
        uint32_t top = pc->pool[pc->st[s].off + k];
        if (top <= NEXTOK__EXIT) continue;
        int32_t c = cg->el_cset[pc->node[2 * top]];
        if (c >= 0 && nextok__cset_any(cg, (uint32_t)c, lo, hi)) return true;
    }
    return false;
}

static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};

/* Byte b after state s: ASCII advances at once; a lead byte or continuation
 * makes a partial state, kept only when some top holds a character with
 * that beginning (valid UTF-8 only: no overlong forms, no surrogates). */
static int32_t compute_step(struct nextok__pcache *pc, int32_t s, unsigned b)
{
    const struct nextok__pstate st = pc->st[s];
    uint32_t val;
    unsigned need, len;
    if (st.pneed == 0) {
        if (b < 0x80) return advance_cp(pc, s, b);
        if (b < 0xC2 || b > 0xF4) return NEXTOK__ST_DEAD;
        need = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : 1;
        val = b & (0x3Fu >> need);
        len = 1;
    } else {
        if ((b & 0xC0) != 0x80) return NEXTOK__ST_DEAD;
        need = st.pneed - 1u;
        val = (st.pval << 6) | (b & 0x3F);
        len = st.plen + 1u;
    }
    uint32_t total = len + need;
    uint32_t lo = val << (6 * need), hi = lo | ((1u << (6 * need)) - 1);
    if (lo < min_cp[total]) lo = min_cp[total];
    if (hi > 0x10FFFF) hi = 0x10FFFF;
    if (lo >= 0xD800 && hi <= 0xDFFF) return NEXTOK__ST_DEAD;
    if (lo > hi) return NEXTOK__ST_DEAD;
    if (need && !any_top_in(pc, s, lo, hi)) return NEXTOK__ST_DEAD;
    /* same tops, other partial character: copied out of the pool first, as
     * interning may move the pool */
    if (!nextok__pcache_grow(pc, (void **)&pc->tops, &pc->cap_tops, st.n, sizeof *pc->tops))
        return NEXTOK__ST_UNKNOWN;
    memcpy(pc->tops, pc->pool + st.off, st.n * sizeof *pc->tops);
    if (need) return intern(pc, pc->tops, st.n, val, need, len);
    int32_t base = intern(pc, pc->tops, st.n, 0, 0, 0);
    return base < 0 ? base : advance_cp(pc, base, val);
}

/* All of s's ASCII transitions at once, when it has at most 64 tops and
 * no partial character: bytes that the same tops take lead to the same
 * state, so each distinct set of tops is advanced once and the bytes no
 * top takes are dead without a look (a mask walks most of them: the trie's
 * first level). false on a cache error. */
static bool fill_ascii(struct nextok__pcache *pc, int32_t s)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    uint32_t n = pc->st[s].n, off = pc->st[s].off;
    if (n > 64 || pc->st[s].pneed) return true;
    uint64_t sig[128] = {0}, seen[128];
    int32_t next[128];
    uint32_t n_seen = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t top = pc->pool[off + k];
        int32_t c = top > NEXTOK__EXIT ? cg->el_cset[pc->node[2 * top]] : -1;
        for (uint32_t w = 0; c >= 0 && w < 2; w++)
            for (uint64_t bits = cg->cset[c].ascii[w]; bits; bits &= bits - 1)
                sig[64 * w + (unsigned)__builtin_ctzll(bits)] |= 1ull << k;
    }
    for (unsigned b = 0; b < 128; b++) {
        int32_t r = NEXTOK__ST_DEAD;
        if (sig[b]) {
            uint32_t i = 0;
            while (i < n_seen && seen[i] != sig[b]) i++;
            if (i < n_seen)
                r = next[i];
            else if ((r = advance_cp(pc, s, b)) == NEXTOK__ST_UNKNOWN)
                return false;
            else
                seen[n_seen] = sig[b], next[n_seen++] = r;
        }
        pc->st[s].trans[b] = r;
    }
    return true;
}

int32_t nextok__pcache_step(struct nextok__pcache *pc, int32_t s, unsigned b)
{
    if (!pc->st[s].trans) {
        int32_t *t = NULL;
        size_t cap = 0;
        if (!nextok__pcache_grow(pc, (void **)&t, &cap, 256, sizeof *t)) return NEXTOK__ST_UNKNOWN;
        for (int i = 0; i < 256; i++) t[i] = NEXTOK__ST_UNKNOWN;
        pc->st[s].trans = t;
        if (!fill_ascii(pc, s)) return NEXTOK__ST_UNKNOWN;
        if (b < 0x80 && t[b] != NEXTOK__ST_UNKNOWN) return t[b];
    }
    int32_t r = compute_step(pc, s, b);
    if (r != NEXTOK__ST_UNKNOWN) pc->st[s].trans[b] = r;
    return r;
}

void nextok__pcache_unalloc(struct nextok__pcache *pc, void *p, size_t size)
{
    if (!p) return;
    nextok__free(&pc->mem, p);
    pc->bytes -= size;
}

bool nextok__pcache_exit(struct nextok__pcache *pc, uint32_t from, uint32_t to, uint32_t k)
{
    if (!nextok__pcache_grow(pc, (void **)&pc->ex, &pc->cap_ex, pc->n_ex + 3, sizeof *pc->ex))
        return false;
    pc->ex[pc->n_ex++] = from, pc->ex[pc->n_ex++] = to, pc->ex[pc->n_ex++] = k;
    return true;
}

void *nextok__pcache_alloc(struct nextok__pcache *pc, size_t size)
{
    if (pc->bytes + size > pc->cg->max_cache_bytes) {
        fail(pc, NEXTOK_ERR_LIMIT, "grammar: the matcher's state cache is full (max_cache_bytes)");
        return NULL;
    }
    void *p = nextok__calloc(&pc->mem, 1, size);
    if (!p)
        fail(pc, NEXTOK_ERR_NOMEM, "grammar: out of memory");
    else
        pc->bytes += size;
    return p;
}

/* ---- token references ------------------------------------------------------------------ */

int32_t nextok__pcache_token_step(struct nextok__pcache *pc, int32_t s, int32_t id)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    if (pc->st[s].pneed || !pc->st[s].has_tokref) return NEXTOK__ST_DEAD;
    size_t n = 0;
    for (uint32_t k = 0; k < pc->st[s].n; k++) {
        uint32_t top = pc->pool[pc->st[s].off + k];
        if (top <= NEXTOK__EXIT) continue;
        uint32_t pos = pc->node[2 * top], parent = pc->node[2 * top + 1];
        const struct nextok__gel *e = cg->el + pos;
        bool hit = (e->type == NEXTOK__G_TOKEN && (int32_t)e->value == id) ||
                   (e->type == NEXTOK__G_TOKEN_NOT && (int32_t)e->value != id);
        if (hit && !nextok__pcache_expand(pc, pos + 1, parent, &n)) return NEXTOK__ST_UNKNOWN;
    }
    return nextok__pcache_intern_tops(pc, n);
}

int32_t nextok__pcache_union(struct nextok__pcache *pc, int32_t a, int32_t b)
{
    if (a < 0) return b;
    if (b < 0 || a == b) return a;
    size_t na = pc->st[a].n, nb = pc->st[b].n;
    if (!nextok__pcache_grow(pc, (void **)&pc->tops, &pc->cap_tops, na + nb, sizeof *pc->tops))
        return NEXTOK__ST_UNKNOWN;
    memcpy(pc->tops, pc->pool + pc->st[a].off, na * sizeof *pc->tops);
    memcpy(pc->tops + na, pc->pool + pc->st[b].off, nb * sizeof *pc->tops);
    return nextok__pcache_intern_tops(pc, na + nb);
}

/* ---- the cache ------------------------------------------------------------------------ */

/* The state before any byte: the root's live alternatives expanded. */
static int32_t start_state(struct nextok__pcache *pc)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    size_t n = 0;
    for (uint32_t a = cg->rule_alt[cg->root]; a < cg->rule_alt[cg->root + 1]; a++)
        if (!nextok__pcache_expand(pc, cg->alt[a], 0, &n)) return NEXTOK__ST_UNKNOWN;
    return nextok__pcache_intern_tops(pc, n);
}

static void free_blocks(struct nextok__pcache *pc)
{
    for (uint32_t i = 0; i < pc->n_st; i++) {
        nextok__free(&pc->mem, pc->st[i].trans);
        nextok__free(&pc->mem, pc->st[i].mask);
        nextok__free(&pc->mem, pc->st[i].exits);
    }
    void *blocks[] = {pc->chain, pc->ex,   pc->node, pc->nhash, pc->st,
                      pc->shash, pc->pool, pc->tops, pc->work,  pc->walk, pc->gone};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) nextok__free(&pc->mem, blocks[i]);
}

nextok_status nextok__pcache_new(struct nextok__pcache **out,
                                 const struct nextok_compiled_grammar *cg, struct nextok_error *err)
{
    struct nextok__pcache *pc = nextok__calloc(&cg->mem, 1, sizeof *pc);
    NEXTOK_RETURN_IF(!pc, err, NEXTOK_ERR_NOMEM, "matcher: out of memory");
    pc->cg = cg;
    pc->mem = cg->mem;
    pc->refs = 1;
    pc->n_node = 2; /* node 0: the empty stack; node 1: a frame's exit */
    size_t cap = 0;
    bool ok = nextok__pcache_grow(pc, (void **)&pc->node, &cap, 4, sizeof *pc->node);
    pc->cap_node = (uint32_t)cap;
    cap = 0;
    ok = ok && nextok__pcache_grow(pc, (void **)&pc->walk, &cap, (size_t)cg->tt->max_depth + 2,
                                   sizeof *pc->walk);
    cap = 0;
    ok = ok && nextok__pcache_grow(pc, (void **)&pc->gone, &cap, cg->n_words, sizeof *pc->gone);
    if (ok) {
        pc->node[0] = pc->node[1] = pc->node[3] = 0;
        pc->node[2] = UINT32_MAX;
        pc->start = start_state(pc);
        ok = pc->start >= 0;
    }
    if (ok && pthread_mutex_init(&pc->lock, NULL) != 0)
        ok = fail(pc, NEXTOK_ERR_INTERNAL, "matcher: cannot make a lock") >= 0;
    if (!ok) {
        nextok_status rc = pc->failed ? pc->failed : NEXTOK_ERR_NOMEM;
        nextok__err(err, rc, "%s", pc->errmsg[0] ? pc->errmsg : "matcher: out of memory");
        free_blocks(pc);
        nextok__free(&pc->mem, pc);
        return rc;
    }
    pc->failed = NEXTOK_OK;
    *out = pc;
    return NEXTOK_OK;
}

void nextok__pcache_release(struct nextok__pcache *pc)
{
    if (!pc) return;
    pthread_mutex_lock(&pc->lock);
    uint32_t left = --pc->refs;
    pthread_mutex_unlock(&pc->lock);
    if (left) return;
    pthread_mutex_destroy(&pc->lock);
    free_blocks(pc);
    nextok__free(&pc->mem, pc);
}
