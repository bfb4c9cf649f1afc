/*
 * The matcher: one generation's path through a compiled grammar, as the
 * list of parser states after each accept call (so rollback and reset are
 * a length change, and a clone is a copy of the list). Masks come from a
 * walk of the token trie through the state cache's byte transitions: a
 * subtree is skipped at its first byte the grammar refuses, and a state's
 * mask, once computed, is kept with the state.
 */
#include "matcher_internal.h"

#include "../common/utf8.h"

#include <stdio.h>

#define TERMINATED (-3) /* history entry: an end-of-generation token was accepted */

static nextok_status cache_error(struct nextok__pcache *pc, struct nextok_error *err)
{
    nextok_status rc = pc->failed ? pc->failed : NEXTOK_ERR_INTERNAL;
    pc->failed = NEXTOK_OK;
    return nextok__err(err, rc, "%s", pc->errmsg);
}

static int32_t current(const struct nextok_matcher *m) { return m->hist[m->n_hist - 1]; }

/* ---- masks ------------------------------------------------------------------------ */

static void set_bit(uint32_t *w, int32_t id) { w[(uint32_t)id >> 5] |= 1u << ((uint32_t)id & 31); }

/* Tokens matched whole by the token references on s's tops. */
static void tokref_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    for (uint32_t k = 0; k < pc->st[s].n; k++) {
        uint32_t top = pc->pool[pc->st[s].off + k];
        if (top == 0) continue;
        const struct nextok__gel *e = cg->el + pc->node[2 * top];
        if (e->type == NEXTOK__G_TOKEN && cg->tt->kind[e->value]) set_bit(w, (int32_t)e->value);
        if (e->type != NEXTOK__G_TOKEN_NOT) continue;
        for (int32_t id = 0; id < cg->n_vocab; id++)
            if (cg->tt->kind[id] && id != (int32_t)e->value) set_bit(w, id);
    }
}

/* The text tokens whose bytes the grammar allows from s: a preorder walk of
 * the trie, the state at each depth kept in pc->walk. */
static bool trie_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    const struct nextok__tnode *trie = cg->tt->trie;
    int32_t *walk = pc->walk;
    walk[0] = s;
    for (uint32_t i = 0; i < cg->tt->n_trie;) {
        const struct nextok__tnode *x = trie + i;
        int32_t nx = nextok__pcache_next(pc, walk[x->depth - 1], x->byte);
        if (nx == NEXTOK__ST_UNKNOWN) return false;
        if (nx < 0) {
            i = x->end;
            continue;
        }
        walk[x->depth] = nx;
        for (uint32_t k = x->tok0; k < x->tok1; k++) set_bit(w, cg->tt->trie_tok[k]);
        if (pc->st[nx].has_exit && x->end > i + 1 &&
            !nextok__pcache_exit(pc, x->tok1, trie[x->end - 1].tok1, x->depth))
            return false;
        i++;
    }
    return true;
}

/* The state after bytes from s: DEAD when refused, UNKNOWN on a cache error. */
static int32_t walk_bytes(struct nextok__pcache *pc, int32_t s, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n && s >= 0; i++) s = nextok__pcache_next(pc, s, b[i]);
    return s;
}

/* Whether every top of s holds all non-ASCII code points or none (so one
 * such character stands for them all). */
static bool high_uniform(struct nextok__pcache *pc, int32_t s)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    for (uint32_t k = 0; k < pc->st[s].n; k++) {
        uint32_t top = pc->pool[pc->st[s].off + k];
        if (top == 0) continue;
        int32_t c = cg->el_cset[pc->node[2 * top]];
        if (c < 0) continue;
        const struct nextok__cset *x = cg->cset + c;
        uint32_t n = x->r1 - x->r0;
        const uint32_t *r = cg->ranges + 2 * x->r0;
        bool all = n == 2 && r[0] == 0x80 && r[1] == 0xD7FF && r[2] == 0xE000 && r[3] == 0x10FFFF;
        if (n && !all) return false;
    }
    return true;
}

/* A looping state: the bytes that lead back to it (or, inside counted
 * repetition, to it one repetition further: `counted`), and the states
 * after j repetitions, made as needed in pc->walk[0, n_shift). */
struct loop {
    int32_t s;
    const bool *loops;
    bool high, counted;
    uint32_t n_shift;
    unsigned rep; /* counted: a byte one repetition on */
};

/* Inside counted repetition: the state one repetition further, which most
 * printable bytes lead to (at the last required repetition that is the
 * first optional one, which may also end there); *rep one such byte.
 * DEAD when no state has a majority. */
static int32_t one_further(struct nextok__pcache *pc, int32_t s, unsigned *rep)
{
    int32_t best = NEXTOK__ST_DEAD;
    unsigned n_best = 0;
    for (unsigned b = 0x20; b < 0x7F; b++)
        if (nextok__pcache_next(pc, s, b) == NEXTOK__ST_UNKNOWN) return NEXTOK__ST_UNKNOWN;
    const int32_t *tr = pc->st[s].trans;
    for (unsigned b = 0x20; b < 0x7F; b++) {
        if (tr[b] < 0 || tr[b] == s || tr[b] == best) continue;
        unsigned n = 0;
        for (unsigned c = b; c < 0x7F; c++) n += tr[c] == tr[b];
        if (n > n_best) best = tr[b], n_best = n, *rep = b;
    }
    return n_best >= 32 ? best : NEXTOK__ST_DEAD;
}

/* The state after j repetitions from lp->s (DEAD past the last one). */
static int32_t shifted_by(struct nextok__pcache *pc, struct loop *lp, uint32_t j)
{
    if (!lp->counted) return lp->s;
    while (lp->n_shift <= j) { /* every looping byte leads one repetition on: rep does */
        int32_t prev = pc->walk[lp->n_shift - 1];
        int32_t t = prev >= 0 ? nextok__pcache_next(pc, prev, lp->rep) : NEXTOK__ST_DEAD;
        if (t == NEXTOK__ST_UNKNOWN) return t;
        pc->walk[lp->n_shift++] = t;
    }
    return pc->walk[j];
}

/* Walk one token from a looping state: its leading looping characters are
 * skipped (j of them lead to the state j repetitions on), the rest walked
 * byte by byte, noting where it leaves the frame. */
static int32_t walk_candidate(struct nextok__pcache *pc, struct loop *lp, int32_t id)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    const unsigned char *p = (const unsigned char *)tt->tok_bytes + tt->tok_off[id];
    uint32_t n = tt->tok_off[id + 1] - tt->tok_off[id], i = 0, j = 0;
    while (i < n) {
        uint32_t cp, len = 1;
        if (p[i] < 0x80 ? !lp->loops[p[i]]
                        : !lp->high || !(len = (uint32_t)nextok__utf8_decode(p + i, n - i, &cp)))
            break;
        i += len, j++;
    }
    int32_t t = shifted_by(pc, lp, j);
    if (t == NEXTOK__ST_DEAD) t = lp->s, i = 0; /* past the repetitions: walk it all */
    for (; i < n && t >= 0; i++) {
        t = nextok__pcache_next(pc, t, p[i]);
        if (t >= 0 && i + 1 < n && pc->st[t].has_exit &&
            !nextok__pcache_exit(pc, tt->tok_pos[id], tt->tok_pos[id] + 1, i + 1))
            return NEXTOK__ST_UNKNOWN;
    }
    return t;
}

/* The loop path, for a state most bytes lead back to (the inside of a
 * string): every text token made only of such bytes is allowed at once
 * (bitmask algebra over the token table's per-byte sets); only the tokens
 * holding another byte are walked. Returns 0 when s is not such a state,
 * 1 when w is filled, -1 on a cache error. */
static int loop_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    bool loops[128];
    int n_loop = 0;
    if (pc->st[s].pneed) return 0;
    /* inside counted repetition a looping byte leads to s one repetition
     * further: fine for tokens shorter than the repetitions left */
    uint32_t rank = nextok__pcache_rank(pc, s);
    unsigned rep = 0;
    int32_t shifted = rank ? one_further(pc, s, &rep) : NEXTOK__ST_DEAD;
    if (shifted == NEXTOK__ST_UNKNOWN) return -1;
    for (unsigned b = 0; b < 128; b++) {
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) return -1;
        n_loop += loops[b] = t == s || (t == shifted && t >= 0);
    }
    if (n_loop < 64) return 0;
    bool high = false; /* U+0100 (C4 80) back to s stands for every non-ASCII character */
    if (high_uniform(pc, s)) {
        int32_t t = nextok__pcache_next(pc, s, 0xC4);
        if (t >= 0) t = nextok__pcache_next(pc, t, 0x80);
        if (t == NEXTOK__ST_UNKNOWN) return -1;
        high = t == s || (t == shifted && t >= 0);
    }
    size_t nw = tt->n_words;
    memcpy(w, high ? tt->bad_utf8 : tt->has_high, nw * sizeof *w); /* w: the tokens to walk */
    for (unsigned b = 0; b < 128; b++) {
        if (loops[b]) continue;
        const uint32_t *m = tt->has_byte + b * nw;
        for (size_t k = 0; k < nw; k++) w[k] |= m[k];
    }
    for (uint32_t i = 0; shifted >= 0 && i < tt->n_text && tt->cp_len[tt->by_cp[i]] >= rank; i++)
        set_bit(w, tt->by_cp[i]); /* as long as the repetitions left: walked */
    struct loop lp = {s, loops, high, shifted >= 0, 1, rep};
    pc->walk[0] = s;
    for (size_t k = 0; k < nw; k++) {
        uint32_t walk = w[k];
        w[k] = tt->text[k] & ~walk;
        for (; walk; walk &= walk - 1) {
            int32_t id = (int32_t)(k * 32 + (unsigned)__builtin_ctz(walk));
            int32_t t = walk_candidate(pc, &lp, id);
            if (t == NEXTOK__ST_UNKNOWN) return -1;
            if (t >= 0) w[k] |= 1u << (id & 31);
        }
    }
    return 1;
}

static bool compute_mask(struct nextok__pcache *pc, int32_t s);
static bool finish_mask(struct nextok__pcache *pc, int32_t s, uint32_t *w, bool extras);

/* The text tokens s allows, walked from s itself: w gets them, pc->ex the
 * exits met on the way (for a relative state). */
static bool direct_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w)
{
    pc->n_ex = 0;
    int lp = loop_bits(pc, s, w);
    return lp > 0 || (lp == 0 && trie_bits(pc, s, w));
}

/* A relative state's own mask (the tokens that stay in the frame or end
 * with it) and its exits, computed once. */
static bool relative_bits(struct nextok__pcache *pc, int32_t x)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    if (pc->st[x].mask) return true;
    uint32_t *w = nextok__pcache_alloc(pc, cg->n_words * sizeof *w);
    if (!w || !direct_bits(pc, x, w)) {
        nextok__pcache_unalloc(pc, w, cg->n_words * sizeof *w);
        return false;
    }
    uint32_t *ex = NULL;
    if (pc->n_ex && !(ex = nextok__pcache_alloc(pc, pc->n_ex * sizeof *ex))) {
        nextok__pcache_unalloc(pc, w, cg->n_words * sizeof *w);
        return false;
    }
    if (ex) memcpy(ex, pc->ex, pc->n_ex * sizeof *ex);
    pc->st[x].mask = w;
    pc->st[x].exits = ex;
    pc->st[x].n_exits = (uint32_t)(pc->n_ex / 3);
    return true;
}

/* s's text tokens from its frame: those the relative state keeps, plus
 * the exits that go on in the caller's state. */
static bool framed_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    int32_t x = pc->st[s].rel, r = pc->st[s].resume;
    if (!relative_bits(pc, x)) return false;
    memcpy(w, pc->st[x].mask, tt->n_words * sizeof *w);
    for (uint32_t e = 0; e < pc->st[x].n_exits; e++) {
        const uint32_t *ex = pc->st[x].exits + 3 * e;
        for (uint32_t i = ex[0]; i < ex[1]; i++) {
            int32_t id = tt->trie_tok[i];
            if ((w[id >> 5] >> (id & 31)) & 1) continue;
            const unsigned char *p = (const unsigned char *)tt->tok_bytes + tt->tok_off[id];
            int32_t t = walk_bytes(pc, r, p + ex[2], tt->tok_off[id + 1] - tt->tok_off[id] - ex[2]);
            if (t == NEXTOK__ST_UNKNOWN) return false;
            if (t >= 0) set_bit(w, id);
        }
    }
    return true;
}

/* The length level for a state with `rank` repetitions left: the longest
 * level T with T < rank (index into tt->level), or -1. */
static int level_for(const struct nextok_token_table *tt, uint32_t rank)
{
    int k = -1;
    for (uint32_t i = 0; i < tt->n_levels; i++)
        if (tt->level[i] < rank) k = (int)i;
    return k;
}

/* Deep inside counted repetition: s and c (s with its ranks capped at
 * level + 1) agree on every token of at most `level` bytes (each
 * repetition takes at least one byte); c's mask gives those, the longer
 * tokens are walked from s. */
static bool capped_bits(struct nextok__pcache *pc, int32_t s, int32_t c, int lv, uint32_t *w)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    if (!pc->st[c].mask && !compute_mask(pc, c)) return false;
    const uint32_t *cm = pc->st[c].mask, *sh = tt->short_mask[lv];
    for (size_t k = 0; k < tt->n_words; k++) w[k] = cm[k] & (sh[k] | ~tt->text[k]);
    for (uint32_t i = 0; i < tt->n_longer[lv]; i++) {
        int32_t id = tt->longer[lv][i];
        const unsigned char *p = (const unsigned char *)tt->tok_bytes + tt->tok_off[id];
        int32_t t = walk_bytes(pc, s, p, tt->tok_off[id + 1] - tt->tok_off[id]);
        if (t == NEXTOK__ST_UNKNOWN) return false;
        if (t >= 0) set_bit(w, id);
    }
    return true;
}

static bool compute_mask(struct nextok__pcache *pc, int32_t s)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    int lv = level_for(cg->tt, nextok__pcache_rank(pc, s));
    if (lv >= 0) {
        int32_t c = nextok__pcache_cap(pc, s, cg->tt->level[lv] + 1);
        if (c == NEXTOK__ST_UNKNOWN) return false;
        if (c != s) {
            uint32_t *w = nextok__pcache_alloc(pc, cg->n_words * sizeof *w);
            if (!w || !capped_bits(pc, s, c, lv, w)) {
                nextok__pcache_unalloc(pc, w, cg->n_words * sizeof *w);
                return false;
            }
            return finish_mask(pc, s, w, false);
        }
    }
    if (!pc->st[s].frame_known) {
        int32_t rel, resume;
        if (!nextok__pcache_frame(pc, s, &rel, &resume)) return false;
        pc->st[s].rel = rel, pc->st[s].resume = resume, pc->st[s].frame_known = true;
    }
    uint32_t *w = nextok__pcache_alloc(pc, cg->n_words * sizeof *w);
    if (!w) return false;
    bool ok = pc->st[s].rel >= 0 ? framed_bits(pc, s, w) : direct_bits(pc, s, w);
    if (!ok) {
        nextok__pcache_unalloc(pc, w, cg->n_words * sizeof *w);
        return false;
    }
    return finish_mask(pc, s, w, true);
}

/* Store w as s's mask, with the end-of-generation and token-reference bits
 * when `extras` (a capped mask has them from its canonical state). */
static bool finish_mask(struct nextok__pcache *pc, int32_t s, uint32_t *w, bool extras)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    if (extras && pc->st[s].accept)
        for (size_t k = 0; k < cg->tt->n_eog; k++) set_bit(w, cg->tt->eog[k]);
    if (extras && pc->st[s].has_tokref) tokref_bits(pc, s, w);
    uint32_t n = 0;
    for (size_t k = 0; k < cg->n_words; k++) n += (uint32_t)__builtin_popcount(w[k]);
    pc->st[s].mask = w;
    pc->st[s].n_allowed = n;
    return true;
}

nextok_status nextok_matcher_fill_bitmask(struct nextok_matcher *m, int32_t *words, size_t n_words,
                                          size_t *n_allowed, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m || !words, err, NEXTOK_ERR_INVALID_ARG, "m and words: must not be NULL");
    const struct nextok_compiled_grammar *cg = m->cg;
    NEXTOK_RETURN_IF(n_words < cg->n_words, err, NEXTOK_ERR_INVALID_ARG,
                     "n_words: %zu, the vocabulary needs %zu", n_words, cg->n_words);
    int32_t s = current(m);
    NEXTOK_RETURN_IF(s == TERMINATED, err, NEXTOK_ERR_STATE,
                     "matcher: terminated (an end-of-generation token was accepted)");
    struct nextok__pcache *pc = m->pc;
    pthread_mutex_lock(&pc->lock);
    nextok_status rc = NEXTOK_OK;
    if (!pc->st[s].mask && !compute_mask(pc, s)) rc = cache_error(pc, err);
    if (rc == NEXTOK_OK) {
        memcpy(words, pc->st[s].mask, cg->n_words * sizeof *words);
        memset(words + cg->n_words, 0, (n_words - cg->n_words) * sizeof *words);
        if (n_allowed) *n_allowed = pc->st[s].n_allowed;
    }
    pthread_mutex_unlock(&pc->lock);
    return rc;
}

/* ---- accepting ------------------------------------------------------------------------ */

/* The state after token id from s (under the lock); DEAD when not allowed. */
static int32_t token_next(struct nextok__pcache *pc, int32_t s, int32_t id)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    int32_t a = NEXTOK__ST_DEAD, b = NEXTOK__ST_DEAD;
    if (cg->tt->kind[id] == NEXTOK__TK_TEXT) {
        const unsigned char *p = (const unsigned char *)cg->tt->tok_bytes + cg->tt->tok_off[id];
        a = walk_bytes(pc, s, p, cg->tt->tok_off[id + 1] - cg->tt->tok_off[id]);
        if (a == NEXTOK__ST_UNKNOWN) return a;
    }
    if (cg->tt->kind[id] && pc->st[s].has_tokref) b = nextok__pcache_token_step(pc, s, id);
    if (b == NEXTOK__ST_UNKNOWN) return b;
    return nextok__pcache_union(pc, a, b);
}

static nextok_status push(struct nextok_matcher *m, int32_t s, struct nextok_error *err)
{
    if (m->n_hist == m->cap_hist) {
        size_t cap = m->cap_hist * 2;
        int32_t *h = nextok__realloc(&m->cg->mem, m->hist, cap * sizeof *h);
        NEXTOK_RETURN_IF(!h, err, NEXTOK_ERR_NOMEM, "matcher: out of memory");
        m->hist = h;
        m->cap_hist = cap;
    }
    m->hist[m->n_hist++] = s;
    return NEXTOK_OK;
}

nextok_status nextok_matcher_is_allowed(struct nextok_matcher *m, int32_t token, bool *allowed,
                                        struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m || !allowed, err, NEXTOK_ERR_INVALID_ARG,
                     "m and allowed: must not be NULL");
    NEXTOK_RETURN_IF(token < 0 || token >= m->cg->n_vocab, err, NEXTOK_ERR_TOKEN_RANGE,
                     "token %d: outside the vocabulary (%d)", token, m->cg->n_vocab);
    int32_t s = current(m);
    NEXTOK_RETURN_IF(s == TERMINATED, err, NEXTOK_ERR_STATE,
                     "matcher: terminated (an end-of-generation token was accepted)");
    struct nextok__pcache *pc = m->pc;
    nextok_status rc = NEXTOK_OK;
    pthread_mutex_lock(&pc->lock);
    if (pc->st[s].mask) {
        *allowed = (pc->st[s].mask[(uint32_t)token >> 5] >> ((uint32_t)token & 31)) & 1;
    } else if (m->cg->tt->kind[token] == NEXTOK__TK_EOG && pc->st[s].accept) {
        *allowed = true;
    } else {
        int32_t t = token_next(pc, s, token);
        if (t == NEXTOK__ST_UNKNOWN)
            rc = cache_error(pc, err);
        else
            *allowed = t >= 0;
    }
    pthread_mutex_unlock(&pc->lock);
    return rc;
}

nextok_status nextok_matcher_accept_token(struct nextok_matcher *m, int32_t token,
                                          struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m, err, NEXTOK_ERR_INVALID_ARG, "m: must not be NULL");
    NEXTOK_RETURN_IF(token < 0 || token >= m->cg->n_vocab, err, NEXTOK_ERR_TOKEN_RANGE,
                     "token %d: outside the vocabulary (%d)", token, m->cg->n_vocab);
    int32_t s = current(m);
    NEXTOK_RETURN_IF(s == TERMINATED, err, NEXTOK_ERR_STATE,
                     "matcher: terminated (an end-of-generation token was accepted)");
    struct nextok__pcache *pc = m->pc;
    pthread_mutex_lock(&pc->lock);
    int32_t t = m->cg->tt->kind[token] == NEXTOK__TK_EOG && pc->st[s].accept
                    ? TERMINATED
                    : token_next(pc, s, token);
    nextok_status rc = NEXTOK_OK;
    if (t == NEXTOK__ST_UNKNOWN) rc = cache_error(pc, err);
    pthread_mutex_unlock(&pc->lock);
    if (rc != NEXTOK_OK) return rc;
    NEXTOK_RETURN_IF(t == NEXTOK__ST_DEAD, err, NEXTOK_ERR_REJECTED,
                     "token %d: not allowed by the grammar here", token);
    return push(m, t, err);
}

nextok_status nextok_matcher_accept_bytes(struct nextok_matcher *m, const void *bytes, size_t len,
                                          struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m || (!bytes && len), err, NEXTOK_ERR_INVALID_ARG,
                     "m and bytes: must not be NULL");
    int32_t s = current(m);
    NEXTOK_RETURN_IF(s == TERMINATED, err, NEXTOK_ERR_STATE,
                     "matcher: terminated (an end-of-generation token was accepted)");
    struct nextok__pcache *pc = m->pc;
    pthread_mutex_lock(&pc->lock);
    const unsigned char *b = bytes;
    size_t i = 0;
    for (; i < len && s >= 0; i++) s = nextok__pcache_next(pc, s, b[i]);
    nextok_status rc = s == NEXTOK__ST_UNKNOWN ? cache_error(pc, err) : NEXTOK_OK;
    pthread_mutex_unlock(&pc->lock);
    if (rc != NEXTOK_OK) return rc;
    NEXTOK_RETURN_IF(s == NEXTOK__ST_DEAD, err, NEXTOK_ERR_REJECTED,
                     "bytes: byte %zu of %zu leaves the grammar", i, len);
    return push(m, s, err);
}

/* ---- life cycle and queries ------------------------------------------------------------- */

static nextok_status new_matcher(struct nextok_matcher **out,
                                 const struct nextok_compiled_grammar *cg,
                                 struct nextok__pcache *pc, size_t cap, struct nextok_error *err)
{
    struct nextok_matcher *m = nextok__calloc(&cg->mem, 1, sizeof *m);
    int32_t *h = nextok__alloc_array(&cg->mem, cap, sizeof *h);
    if (!m || !h) {
        nextok__free(&cg->mem, m);
        nextok__free(&cg->mem, h);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "matcher: out of memory");
    }
    m->cg = cg, m->pc = pc, m->hist = h, m->cap_hist = cap;
    *out = m;
    return NEXTOK_OK;
}

nextok_status nextok_matcher_init(struct nextok_matcher **out,
                                  const struct nextok_compiled_grammar *cg,
                                  struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !cg, err, NEXTOK_ERR_INVALID_ARG, "out and cg: must not be NULL");
    *out = NULL;
    struct nextok__pcache *pc = NULL;
    NEXTOK_FORWARD(nextok__pcache_new(&pc, cg, err));
    struct nextok_matcher *m = NULL;
    nextok_status rc = new_matcher(&m, cg, pc, 64, err);
    if (rc != NEXTOK_OK) {
        nextok__pcache_release(pc);
        return rc;
    }
    m->hist[m->n_hist++] = pc->start;
    *out = m;
    return NEXTOK_OK;
}

void nextok_matcher_free(struct nextok_matcher *m)
{
    if (!m) return;
    nextok__pcache_release(m->pc);
    nextok__free(&m->cg->mem, m->hist);
    nextok__free(&m->cg->mem, m);
}

nextok_status nextok_matcher_clone(struct nextok_matcher **out, const struct nextok_matcher *m,
                                   struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !m, err, NEXTOK_ERR_INVALID_ARG, "out and m: must not be NULL");
    *out = NULL;
    struct nextok_matcher *c = NULL;
    NEXTOK_FORWARD(new_matcher(&c, m->cg, m->pc, m->cap_hist, err));
    memcpy(c->hist, m->hist, m->n_hist * sizeof *m->hist);
    c->n_hist = m->n_hist;
    pthread_mutex_lock(&m->pc->lock);
    m->pc->refs++;
    pthread_mutex_unlock(&m->pc->lock);
    *out = c;
    return NEXTOK_OK;
}

nextok_status nextok_matcher_rollback(struct nextok_matcher *m, size_t n, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m, err, NEXTOK_ERR_INVALID_ARG, "m: must not be NULL");
    NEXTOK_RETURN_IF(n >= m->n_hist, err, NEXTOK_ERR_INVALID_ARG,
                     "rollback %zu: only %zu steps to undo", n, m->n_hist - 1);
    m->n_hist -= n;
    return NEXTOK_OK;
}

void nextok_matcher_reset(struct nextok_matcher *m)
{
    if (m) m->n_hist = 1;
}

size_t nextok_matcher_n_steps(const struct nextok_matcher *m) { return m ? m->n_hist - 1 : 0; }

bool nextok_matcher_is_terminated(const struct nextok_matcher *m)
{
    return m && current(m) == TERMINATED;
}

bool nextok_matcher_is_accepting(const struct nextok_matcher *m)
{
    if (!m) return false;
    int32_t s = current(m);
    if (s == TERMINATED) return true;
    pthread_mutex_lock(&m->pc->lock);
    bool a = m->pc->st[s].accept;
    pthread_mutex_unlock(&m->pc->lock);
    return a;
}

/* The one byte that continues s, or -1 (none, several, or s may end or
 * take a whole token); *next its state. */
static int only_byte(struct nextok__pcache *pc, int32_t s, int32_t *next)
{
    if (pc->st[s].accept || pc->st[s].has_tokref) return -1;
    int found = -1;
    for (unsigned b = 0; b < 256; b++) {
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) return -2;
        if (t < 0) continue;
        if (found >= 0) return -1;
        found = (int)b, *next = t;
    }
    return found;
}

nextok_status nextok_matcher_forced_bytes(struct nextok_matcher *m, char *out, size_t cap,
                                          size_t *len, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!m || !len || (!out && cap), err, NEXTOK_ERR_INVALID_ARG,
                     "m, out and len: must not be NULL");
    *len = 0;
    int32_t s = current(m);
    if (s == TERMINATED) return NEXTOK_OK;
    struct nextok__pcache *pc = m->pc;
    nextok_status rc = NEXTOK_OK;
    pthread_mutex_lock(&pc->lock);
    size_t n = 0;
    while (n < cap) {
        int32_t next = s;
        int b = only_byte(pc, s, &next);
        if (b == -2) rc = cache_error(pc, err);
        if (b < 0) break;
        out[n++] = (char)b;
        s = next;
    }
    pthread_mutex_unlock(&pc->lock);
    if (rc == NEXTOK_OK) *len = n;
    return rc;
}

bool nextok_matcher_is_complete(struct nextok_matcher *m)
{
    if (!m) return false;
    int32_t s = current(m);
    if (s == TERMINATED) return true;
    struct nextok__pcache *pc = m->pc;
    pthread_mutex_lock(&pc->lock);
    bool done = pc->st[s].accept && !pc->st[s].has_tokref;
    for (unsigned b = 0; b < 256 && done; b++) {
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) pc->failed = NEXTOK_OK; /* unknown: say "not complete" */
        done = t == NEXTOK__ST_DEAD;
    }
    pthread_mutex_unlock(&pc->lock);
    return done;
}
