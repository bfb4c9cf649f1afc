/*
 * Counted repetition, found again in the compiled grammar. GBNF (and so
 * every front end) writes S{m,n} (n bounded) as a chain of rules:
 *
 *     r(k) ::= S r(k-1)          (k = n .. n-m+1: required)
 *     r(k) ::= S r(k-1) |        (k = n-m .. 2: optional)
 *     r(1) ::= S |               (or "S" when m = n)
 *
 * so a parser inside such a repetition is in a different state after every
 * S: a string of at most 100 characters has 100 "inside" states. Their
 * masks differ only for tokens long enough to reach the end of the chain.
 * This file finds the chains (rules of that shape with identical S, S not
 * nullable, no optional rule above a required one) and ranks their rules
 * (r(k) has rank k: at most k more S; ranks above n_opt are required), so
 * that the matcher can map a state deep inside a chain to a canonical one
 * (pda.c) and share its mask for every token too short to tell them apart.
 */
#include "matcher_internal.h"

/* Nullable rules (a fixpoint over the live alternatives). */
static void find_nullable(const struct nextok_compiled_grammar *cg, bool *nullable)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < cg->n_rules; r++) {
            for (uint32_t a = cg->rule_alt[r]; a < cg->rule_alt[r + 1] && !nullable[r]; a++) {
                bool ok = true;
                for (uint32_t d = cg->alt[a];
                     ok && cg->el[d].type != NEXTOK__G_ALT && cg->el[d].type != NEXTOK__G_END;
                     d = cg->el_next[d])
                    ok = cg->el[d].type == NEXTOK__G_RULE_REF && nullable[cg->el[d].value];
                if (ok) nullable[r] = changed = true;
            }
        }
    }
}

static bool at_end(const struct nextok__gel *e)
{
    return e->type == NEXTOK__G_ALT || e->type == NEXTOK__G_END;
}

/* Whether rule r is a link of a counted repetition: "S next |" (optional)
 * or "S next" (required), next a reference to another rule or nothing.
 * *start, *len: S; *next: the referenced rule or UINT32_MAX. */
static bool link_shape(const struct nextok_compiled_grammar *cg, uint32_t r, uint32_t *start,
                       uint32_t *len, uint32_t *next, bool *required)
{
    uint32_t n_alt = cg->rule_alt[r + 1] - cg->rule_alt[r];
    if (n_alt != 1 && n_alt != 2) return false;
    uint32_t a0 = cg->alt[cg->rule_alt[r]];
    if (at_end(cg->el + a0) || (n_alt == 2 && !at_end(cg->el + cg->alt[cg->rule_alt[r] + 1])))
        return false;
    uint32_t n = 0;
    while (!at_end(cg->el + a0 + n)) n++;
    *start = a0, *len = n, *next = UINT32_MAX, *required = n_alt == 1;
    const struct nextok__gel *last = cg->el + a0 + n - 1;
    if (n >= 2 && last->type == NEXTOK__G_RULE_REF && last->value != r)
        *next = last->value, *len = n - 1;
    return true;
}

static bool same_body(const struct nextok_compiled_grammar *cg, uint32_t s1, uint32_t l1,
                      uint32_t s2, uint32_t l2)
{
    if (l1 != l2) return false;
    for (uint32_t k = 0; k < l1; k++)
        if (cg->el[s1 + k].type != cg->el[s2 + k].type ||
            cg->el[s1 + k].value != cg->el[s2 + k].value)
            return false;
    return true;
}

/* Whether the body holds something that cannot be empty. */
static bool body_solid(const struct nextok_compiled_grammar *cg, uint32_t s, uint32_t l,
                       const bool *nullable)
{
    for (uint32_t d = s; d < s + l; d = cg->el_next[d])
        if (cg->el[d].type != NEXTOK__G_RULE_REF || !nullable[cg->el[d].value]) return true;
    return false;
}

/* Rank the rules of the chain whose last rule is b, upwards through prev;
 * their rules go to cg->chain_rules by rank. */
static void rank_chain(struct nextok_compiled_grammar *cg, uint32_t b, const uint32_t *prev,
                       uint32_t *n_chain)
{
    uint32_t off = *n_chain, rank = 1, n_opt = 0;
    for (uint32_t r = b;; r = prev[r]) {
        uint32_t s, l, nx;
        bool req;
        link_shape(cg, r, &s, &l, &nx, &req);
        if (!req) n_opt = rank;
        cg->rule_rank[r] = rank++;
        cg->rule_chain[r] = off;
        cg->rule_body[r] = s;
        cg->chain_rules[(*n_chain)++] = r;
        if (prev[r] >= UINT32_MAX - 1) break;
    }
    for (uint32_t k = off; k < *n_chain; k++) cg->rule_nopt[cg->chain_rules[k]] = n_opt;
}

nextok_status nextok__find_chains(struct nextok_compiled_grammar *cg)
{
    const struct nextok__mem *mem = &cg->mem;
    uint32_t n = cg->n_rules, n_chain = 0;
    size_t m = n ? n : 1;
    bool *nullable = nextok__calloc(mem, m, sizeof *nullable);
    uint32_t *next = nextok__alloc_array(mem, m, sizeof *next);
    uint32_t *prev = nextok__alloc_array(mem, m, sizeof *prev);
    cg->rule_rank = nextok__calloc(mem, m, sizeof *cg->rule_rank);
    cg->rule_chain = nextok__calloc(mem, m, sizeof *cg->rule_chain);
    cg->rule_body = nextok__calloc(mem, m, sizeof *cg->rule_body);
    cg->chain_rules = nextok__calloc(mem, m, sizeof *cg->chain_rules);
    cg->rule_nopt = nextok__calloc(mem, m, sizeof *cg->rule_nopt);
    cg->el_rule = nextok__alloc_array(mem, cg->n_el ? cg->n_el : 1, sizeof *cg->el_rule);
    nextok_status rc = nullable && next && prev && cg->rule_rank && cg->rule_chain &&
                               cg->rule_body && cg->chain_rules && cg->rule_nopt && cg->el_rule
                           ? NEXTOK_OK
                           : NEXTOK_ERR_NOMEM;
    if (rc == NEXTOK_OK) {
        for (uint32_t r = 0, d = 0; r < n; r++) /* rules lie one after another */
            for (; d < cg->n_el && (r + 1 == n || d < cg->rule_start[r + 1]); d++)
                cg->el_rule[d] = r;
        find_nullable(cg, nullable);
        for (uint32_t r = 0; r < n; r++) next[r] = prev[r] = UINT32_MAX;
        /* links: r -> next[r] with the same body; a rule pointed at twice
         * is no chain (prev would be ambiguous) */
        /* an optional link never leads to a required one: ranks 1..n_opt
         * are the optional rules, the ones above required */
        for (uint32_t r = 0; r < n; r++) {
            uint32_t s, l, nx, s2, l2, nx2;
            bool req, req2;
            if (!link_shape(cg, r, &s, &l, &nx, &req) || !body_solid(cg, s, l, nullable)) continue;
            if (nx == UINT32_MAX) continue;
            if (!link_shape(cg, nx, &s2, &l2, &nx2, &req2) || !same_body(cg, s, l, s2, l2) ||
                (!req && req2))
                continue;
            next[r] = nx;
            prev[nx] = prev[nx] == UINT32_MAX ? r : UINT32_MAX - 1;
        }
        /* a chain starts at a link with no next (rank 1) */
        for (uint32_t b = 0; b < n; b++) {
            uint32_t s, l, nx;
            bool req;
            if (!link_shape(cg, b, &s, &l, &nx, &req) || nx != UINT32_MAX ||
                !body_solid(cg, s, l, nullable) || prev[b] >= UINT32_MAX - 1)
                continue;
            rank_chain(cg, b, prev, &n_chain);
        }
    }
    nextok__free(mem, nullable);
    nextok__free(mem, next);
    nextok__free(mem, prev);
    return rc;
}

uint32_t nextok__chain_pos(const struct nextok_compiled_grammar *cg, uint32_t p, uint32_t rank)
{
    uint32_t r = cg->el_rule[p];
    uint32_t to = cg->chain_rules[cg->rule_chain[r] + rank - 1];
    return cg->rule_body[to] + (p - cg->rule_body[r]);
}
