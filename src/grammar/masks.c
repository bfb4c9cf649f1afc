/*
 * Masks: how a state's mask is made and kept. A state deep inside counted
 * repetition shares a canonical state's mask for the tokens too short to
 * tell them apart; a state whose stacks share a caller is computed relative
 * to it (the same inside of a string wherever the string is) plus the
 * tokens that leave it; otherwise the loop path (loop.c) or a walk of the
 * token trie through the state cache's transitions.
 */
#include "matcher_internal.h"

/* Tokens matched whole by the token references on s's tops. */
static void tokref_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    for (uint32_t k = 0; k < pc->st[s].n; k++) {
        uint32_t top = pc->pool[pc->st[s].off + k];
        if (top <= NEXTOK__EXIT) continue;
        const struct nextok__gel *e = cg->el + pc->node[2 * top];
        if (e->type == NEXTOK__G_TOKEN && cg->tt->kind[e->value])
            nextok__set_bit(w, (int32_t)e->value);
        if (e->type != NEXTOK__G_TOKEN_NOT) continue;
        for (int32_t id = 0; id < cg->n_vocab; id++)
            if (cg->tt->kind[id] && id != (int32_t)e->value) nextok__set_bit(w, id);
    }
}

/* The text tokens of trie nodes [from, to) whose bytes the grammar allows:
 * a preorder walk, the state at each depth kept in pc->walk. */
static bool walk_nodes(struct nextok__pcache *pc, uint32_t from, uint32_t to, uint32_t *w)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    const struct nextok__tnode *trie = cg->tt->trie;
    int32_t *walk = pc->walk;
    for (uint32_t i = from; i < to;) {
        const struct nextok__tnode *x = trie + i;
        int32_t nx = nextok__pcache_next(pc, walk[x->depth - 1], x->byte);
        if (nx == NEXTOK__ST_UNKNOWN) return false;
        if (nx < 0) {
            i = x->end;
            continue;
        }
        walk[x->depth] = nx;
        for (uint32_t k = x->tok0; k < x->tok1; k++) nextok__set_bit(w, cg->tt->trie_tok[k]);
        if (pc->st[nx].has_exit && x->end > i + 1 &&
            !nextok__pcache_exit(pc, x->tok1, trie[x->end - 1].tok1, x->depth))
            return false;
        i++;
    }
    return true;
}

/* The text tokens whose bytes the grammar allows from s: the subtrees of
 * the first bytes s takes (most states refuse most first bytes, so they
 * are not visited one by one). */
static bool trie_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    pc->walk[0] = s;
    for (unsigned b = 0; b < 256; b++) {
        uint32_t r = tt->root_child[b];
        if (r == UINT32_MAX) continue;
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) return false;
        if (t >= 0 && !walk_nodes(pc, r, tt->trie[r].end, w)) return false;
    }
    return true;
}

static bool finish_mask(struct nextok__pcache *pc, int32_t s, uint32_t *w, bool extras);
static bool relative_bits(struct nextok__pcache *pc, int32_t x);

/* Whether a top reads a class of at least 64 ASCII characters. */
static bool wide_top(struct nextok__pcache *pc, uint32_t top)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    int32_t c = top > NEXTOK__EXIT ? cg->el_cset[pc->node[2 * top]] : -1;
    if (c < 0) return false;
    const uint64_t *a = cg->cset[c].ascii;
    uint32_t n = 0;
    for (int k = 0; k < 2; k++) n += nextok__pop32((uint32_t)a[k]) + nextok__pop32((uint32_t)(a[k] >> 32));
    return n >= 64;
}

/* The state of s's tops that are wide (or not), UNKNOWN on a cache error,
 * DEAD when there are none. */
static int32_t part_of(struct nextok__pcache *pc, int32_t s, bool wide)
{
    uint32_t n = pc->st[s].n;
    if (!nextok__pcache_grow(pc, (void **)&pc->tops, &pc->cap_tops, n, sizeof *pc->tops))
        return NEXTOK__ST_UNKNOWN;
    size_t m = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t top = pc->pool[pc->st[s].off + k];
        if (top > NEXTOK__EXIT && wide_top(pc, top) == wide) pc->tops[m++] = top;
    }
    return nextok__pcache_intern_tops(pc, m);
}

/* A state that reads both a wide class and narrow ones, where none of
 * them loops alone: "still in [^/]+, or in the extension" after
 * "photo.jp" in a file name, which walked the whole trie. A token is
 * allowed from a set of stacks iff from one of them, so s's text tokens
 * are the union of its wide part's (the loop path) and its narrow part's
 * (a short walk), and its exits the union of theirs; each part is cached
 * for every state that holds it. 1 done, 0 not such a state, -1 on a
 * cache error. */
static int split_bits(struct nextok__pcache *pc, int32_t s, bool relative, uint32_t *w)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    if (pc->st[s].pneed) return 0;
    int live = nextok__live_sample(pc, s);
    if (live <= 0) return live; /* few tokens: the trie walk is cheap */
    int32_t part[2];
    for (int k = 0; k < 2; k++) {
        part[k] = part_of(pc, s, k);
        if (part[k] == NEXTOK__ST_UNKNOWN) return -1;
        if (part[k] < 0 || part[k] == s) return 0;
    }
    for (int k = 0; k < 2; k++) { /* each resets pc->ex: all first, then the union */
        int32_t t = part[k];
        if (!pc->st[t].mask && !(relative ? relative_bits(pc, t) : nextok__compute_mask(pc, t)))
            return -1;
    }
    pc->n_ex = 0;
    memset(w, 0, tt->n_words * sizeof *w);
    for (int k = 0; k < 2; k++) {
        const struct nextok__pstate *t = pc->st + part[k];
        for (size_t i = 0; i < tt->n_words; i++) w[i] |= t->mask[i] & tt->text[i];
        for (uint32_t e = 0; e < t->n_exits; e++) {
            const uint32_t *ex = t->exits + 3 * e;
            if (!nextok__pcache_exit(pc, ex[0], ex[1], ex[2])) return -1;
        }
    }
    return 1;
}

/* The text tokens s allows, walked from s itself: w gets them, pc->ex the
 * exits met on the way (for a relative state). */
static bool direct_bits(struct nextok__pcache *pc, int32_t s, bool relative, uint32_t *w)
{
    pc->n_ex = 0;
    int lp = nextok__loop_bits(pc, s, w);
    if (lp == 0) lp = split_bits(pc, s, relative, w);
    return lp > 0 || (lp == 0 && trie_bits(pc, s, w));
}

/* A relative state's own mask (the tokens that stay in the frame or end
 * with it) and its exits, computed once. */
static bool relative_bits(struct nextok__pcache *pc, int32_t x)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    if (pc->st[x].mask) return true;
    uint32_t *w = nextok__pcache_alloc(pc, cg->n_words * sizeof *w);
    if (!w || !direct_bits(pc, x, true, w)) {
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
            int32_t t =
                nextok__walk_bytes(pc, r, p + ex[2], tt->tok_off[id + 1] - tt->tok_off[id] - ex[2]);
            if (t == NEXTOK__ST_UNKNOWN) return false;
            if (t >= 0) nextok__set_bit(w, id);
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
    if (!pc->st[c].mask && !nextok__compute_mask(pc, c)) return false;
    const uint32_t *cm = pc->st[c].mask, *sh = tt->short_mask[lv];
    for (size_t k = 0; k < tt->n_words; k++) w[k] = cm[k] & (sh[k] | ~tt->text[k]);
    for (uint32_t i = 0; i < tt->n_longer[lv]; i++) {
        int32_t id = tt->longer[lv][i];
        const unsigned char *p = (const unsigned char *)tt->tok_bytes + tt->tok_off[id];
        int32_t t = nextok__walk_bytes(pc, s, p, tt->tok_off[id + 1] - tt->tok_off[id]);
        if (t == NEXTOK__ST_UNKNOWN) return false;
        if (t >= 0) nextok__set_bit(w, id);
    }
    return true;
}

/* A frame pays when few tokens leave it (at most an eighth of them: each
 * is walked again in the caller): a frame as small as one character of a
 * string (its stacks share no caller above it) would send nearly every
 * token to be walked again. Up to four callers up are tried, the first
 * that leaves too many ends the search; none good: no frame. */
#define FRAME_TRIES 4
#define LEAVING_MAX(tt) ((tt)->n_text / 8)

/* Whether relative state x's frame ends too soon to pay: the first bytes
 * that may end it start too many tokens, most printable bytes end it at
 * once (one character of a string), or a common character repeated ends
 * it within four while it could go on: 1 yes, 0 no, -1 on a cache error. */
static int frame_too_small(struct nextok__pcache *pc, int32_t x)
{
    /* the tokens whose first byte may end the frame already: if most of
     * them go on in the caller (" the" after the space of a "ws" rule),
     * too many tokens would leave */
    const struct nextok_token_table *tt = pc->cg->tt;
    uint64_t leak = 0;
    for (unsigned b = 0; b < 128; b++) {
        int32_t t = nextok__pcache_next(pc, x, b);
        if (t == NEXTOK__ST_UNKNOWN) return -1;
        if (t >= 0 && pc->st[t].has_exit) leak += tt->n_first[b];
    }
    if (leak > LEAVING_MAX(tt)) return 1;
    int live = nextok__live_sample(pc, x);
    if (live <= 0) return live;
    unsigned n = 0;
    for (unsigned b = 0x20; b < 0x7F; b++) {
        int32_t t = nextok__pcache_next(pc, x, b);
        if (t == NEXTOK__ST_UNKNOWN) return -1;
        n += t >= 0 && pc->st[t].has_exit;
    }
    if (n >= 32) return 1;
    /* or a few characters on (the rest of a pattern of 3 to 10 of them):
     * every token that goes on past that point would leave */
    static const char common[] = "ea0";
    for (const char *c = common; *c; c++) {
        int32_t t = x;
        for (unsigned d = 0; d < 4 && t >= 0; d++) {
            t = nextok__pcache_next(pc, t, (unsigned char)*c);
            if (t == NEXTOK__ST_UNKNOWN) return -1;
            if (t < 0 || !pc->st[t].has_exit) continue;
            int32_t u = nextok__pcache_next(pc, t, (unsigned char)*c);
            if (u == NEXTOK__ST_UNKNOWN) return -1;
            if (u >= 0) return 1;
        }
    }
    return 0;
}

static bool choose_frame(struct nextok__pcache *pc, int32_t s)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    int32_t rel = NEXTOK__ST_DEAD, resume = NEXTOK__ST_DEAD;
    for (uint32_t up = 0; up < FRAME_TRIES; up++) {
        if (!nextok__pcache_frame(pc, s, up, &rel, &resume)) return false;
        if (rel < 0) break;
        int tiny = frame_too_small(pc, rel);
        if (tiny < 0) return false;
        if (tiny) continue;
        if (!relative_bits(pc, rel)) break;
        uint64_t leaving = 0;
        for (uint32_t e = 0; e < pc->st[rel].n_exits; e++)
            leaving += pc->st[rel].exits[3 * e + 1] - pc->st[rel].exits[3 * e];
        /* too many: callers further up leave at least as much (the start of
         * a value in JSON: every token that ends the value goes on after it) */
        if (leaving > LEAVING_MAX(tt)) rel = resume = NEXTOK__ST_DEAD;
        break;
    }
    if (pc->failed) return false;
    pc->st[s].rel = rel, pc->st[s].resume = resume, pc->st[s].frame_known = true;
    return true;
}

bool nextok__compute_mask(struct nextok__pcache *pc, int32_t s)
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
    if (!pc->st[s].frame_known && !choose_frame(pc, s)) return false;
    uint32_t *w = nextok__pcache_alloc(pc, cg->n_words * sizeof *w);
    if (!w) return false;
    bool ok = pc->st[s].rel >= 0 ? framed_bits(pc, s, w) : direct_bits(pc, s, false, w);
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
        for (size_t k = 0; k < cg->tt->n_eog; k++) nextok__set_bit(w, cg->tt->eog[k]);
    if (extras && pc->st[s].has_tokref) tokref_bits(pc, s, w);
    uint32_t n = 0;
    for (size_t k = 0; k < cg->n_words; k++) n += w[k] ? nextok__pop32(w[k]) : 0; /* sparse */
    pc->st[s].mask = w;
    pc->st[s].n_allowed = n;
    return true;
}
