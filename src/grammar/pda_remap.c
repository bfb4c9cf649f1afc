/*
 * Stacks rebuilt: a state relative to its frame (the caller its stacks
 * share, replaced by the exit node), and a state inside counted repetition
 * with its ranks capped (chains.c says what the ranks are). Both only
 * create nodes and states through pda.c.
 */
#include "matcher_internal.h"

/* The deepest node below every top of s (their common caller), or 0. */
static uint32_t common_parent(const struct nextok__pcache *pc, int32_t s)
{
    const struct nextok__pstate *st = pc->st + s;
    uint32_t best = 0, best_depth = 0;
    for (uint32_t k = 0; k < st->n; k++) {
        uint32_t top = pc->pool[st->off + k];
        if (top <= NEXTOK__EXIT) return 0;
        uint32_t depth = 0;
        for (uint32_t n = pc->node[2 * top + 1]; n; n = pc->node[2 * n + 1]) depth++;
        uint32_t n = pc->node[2 * top + 1];
        if (k == 0) {
            best = n, best_depth = depth;
            continue;
        }
        /* lift the deeper of the two chains, then both, until they meet */
        for (; depth > best_depth; depth--) n = pc->node[2 * n + 1];
        for (; best_depth > depth; best_depth--) best = pc->node[2 * best + 1];
        while (n != best) n = pc->node[2 * n + 1], best = pc->node[2 * best + 1], best_depth--;
        if (!best) return 0;
    }
    /* not inside a counted repetition: its frames would be single
     * repetitions, and the repetition's count must stay in the state */
    const struct nextok_compiled_grammar *cg = pc->cg;
    while (best > NEXTOK__EXIT && cg->rule_rank[cg->el_rule[pc->node[2 * best]]])
        best = pc->node[2 * best + 1];
    return best > NEXTOK__EXIT ? best : 0;
}

/* How a stack is rebuilt: its caller frame replaced by the exit node, or
 * every chain position capped at a rank. */
enum remap_kind {
    REMAP_FRAME,
    REMAP_CAP
};

struct remap {
    enum remap_kind kind;
    uint32_t frame; /* REMAP_FRAME */
    uint32_t cap;   /* REMAP_CAP   */
};

/* Position p under the remap. */
static uint32_t remap_pos(const struct nextok_compiled_grammar *cg, uint32_t p,
                          const struct remap *m)
{
    uint32_t k = m->kind == REMAP_FRAME ? 0 : cg->rule_rank[cg->el_rule[p]];
    if (!k) return p;
    /* capped: an optional rank above cap becomes cap; a required one with
     * more than cap required left becomes n_opt + cap. Either way the first
     * cap - 1 repetitions cannot tell them apart. */
    uint32_t n_opt = cg->rule_nopt[cg->el_rule[p]];
    if (k <= n_opt) return k > m->cap ? nextok__chain_pos(cg, p, m->cap) : p;
    return k - n_opt > m->cap ? nextok__chain_pos(cg, p, n_opt + m->cap) : p;
}

/* Node n's stack rebuilt under the remap (iteratively: stacks can be deep).
 * 0 on a cache error. */
static uint32_t remap_node(struct nextok__pcache *pc, uint32_t n, const struct remap *m)
{
    size_t depth = 0;
    uint32_t stop = n;
    for (; stop > NEXTOK__EXIT && !(m->kind == REMAP_FRAME && stop == m->frame);
         stop = pc->node[2 * stop + 1]) {
        if (!nextok__pcache_grow(pc, (void **)&pc->chain, &pc->cap_chain, depth + 1,
                                 sizeof *pc->chain))
            return 0;
        pc->chain[depth++] = stop;
    }
    uint32_t cur = m->kind == REMAP_FRAME && stop == m->frame ? NEXTOK__EXIT : stop;
    bool same = m->kind != REMAP_FRAME; /* unchanged so far, from the bottom up */
    while (depth--) {
        uint32_t node = pc->chain[depth], p = pc->node[2 * node];
        uint32_t q = remap_pos(pc->cg, p, m);
        if (same && q == p) {
            cur = node;
            continue;
        }
        same = false;
        if (!(cur = nextok__pcache_cons(pc, q, cur))) return 0;
    }
    return cur;
}

/* The state with every top of s remapped; UNKNOWN on a cache error. */
static int32_t remap_state(struct nextok__pcache *pc, int32_t s, const struct remap *m)
{
    uint32_t n_tops = pc->st[s].n;
    if (!nextok__pcache_grow(pc, (void **)&pc->tops, &pc->cap_tops, n_tops, sizeof *pc->tops))
        return NEXTOK__ST_UNKNOWN;
    for (uint32_t k = 0; k < n_tops; k++) {
        uint32_t top = remap_node(pc, pc->pool[pc->st[s].off + k], m);
        if (!top) return NEXTOK__ST_UNKNOWN;
        pc->tops[k] = top;
    }
    return nextok__pcache_intern_tops(pc, n_tops);
}

/* The lowest chain rank over every position of s's stacks (0: none). */
static uint32_t min_rank(const struct nextok__pcache *pc, int32_t s)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    uint32_t best = 0;
    for (uint32_t k = 0; k < pc->st[s].n; k++)
        for (uint32_t n = pc->pool[pc->st[s].off + k]; n > NEXTOK__EXIT; n = pc->node[2 * n + 1]) {
            uint32_t r = cg->rule_rank[cg->el_rule[pc->node[2 * n]]];
            if (r && (!best || r < best)) best = r;
        }
    return best;
}

uint32_t nextok__pcache_rank(struct nextok__pcache *pc, int32_t s)
{
    struct nextok__pstate *st = pc->st + s;
    if (!st->rank_known) st->rank = st->pneed ? 0 : min_rank(pc, s), st->rank_known = true;
    return st->rank;
}

int32_t nextok__pcache_cap(struct nextok__pcache *pc, int32_t s, uint32_t cap)
{
    struct remap m = {REMAP_CAP, 0, cap};
    return remap_state(pc, s, &m);
}

bool nextok__pcache_frame(struct nextok__pcache *pc, int32_t s, uint32_t up, int32_t *rel,
                          int32_t *resume)
{
    *rel = *resume = NEXTOK__ST_DEAD;
    uint32_t frame = pc->st[s].pneed ? 0 : common_parent(pc, s);
    for (; frame > NEXTOK__EXIT && up; up--) frame = pc->node[2 * frame + 1];
    if (frame <= NEXTOK__EXIT) return true;
    struct remap m = {REMAP_FRAME, frame, 0};
    int32_t r = remap_state(pc, s, &m);
    if (r < 0) return false;
    size_t n = 0;
    if (!nextok__pcache_expand(pc, pc->node[2 * frame], pc->node[2 * frame + 1], &n)) return false;
    int32_t q = nextok__pcache_intern_tops(pc, n);
    if (q < 0) return false;
    *rel = r, *resume = q;
    return true;
}
