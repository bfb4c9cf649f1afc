/*
 * A grammar compiled against a vocabulary: the grammar's elements with every
 * character set normalised (nextok__cset), the alternatives that can derive
 * some finite string (the others are dropped, so every parser state the
 * matcher reaches has a completion and "allowed" means "prefix of a
 * sentence"), and the vocabulary as a byte trie of its text tokens.
 * Immutable once built.
 */
#include "matcher_internal.h"

#include <stdio.h>

#define MAX_CP 0x10FFFFu

/* ---- character sets ------------------------------------------------------------ */

bool nextok__cset_has(const struct nextok_compiled_grammar *cg, uint32_t k, uint32_t cp)
{
    const struct nextok__cset *c = cg->cset + k;
    if (cp < 128) return (c->ascii[cp >> 6] >> (cp & 63)) & 1;
    uint32_t lo = c->r0, hi = c->r1; /* first range with its hi >= cp */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cg->ranges[2 * mid + 1] < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->r1 && cg->ranges[2 * lo] <= cp;
}

/* Whether the set holds a code point in [lo, hi] (lo >= 128). */
bool nextok__cset_any(const struct nextok_compiled_grammar *cg, uint32_t k, uint32_t lo,
                      uint32_t hi)
{
    const struct nextok__cset *c = cg->cset + k;
    uint32_t a = c->r0, b = c->r1;
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (cg->ranges[2 * mid + 1] < lo)
            a = mid + 1;
        else
            b = mid;
    }
    return a < c->r1 && cg->ranges[2 * a] <= hi;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Append [lo, hi] to r without the surrogates: no UTF-8 text holds them. */
static void put_range(uint32_t *r, size_t *k, uint32_t lo, uint32_t hi)
{
    if (lo <= 0xDFFF && hi >= 0xD800) {
        if (lo < 0xD800) r[2 * *k] = lo, r[2 * *k + 1] = 0xD7FF, ++*k;
        if (hi > 0xDFFF) r[2 * *k] = 0xE000, r[2 * *k + 1] = hi, ++*k;
        return;
    }
    r[2 * *k] = lo, r[2 * *k + 1] = hi, ++*k;
}

/* Ranges of the set starting at element d into r (pairs; room for 2n + 2),
 * sorted and merged, negated for CHAR_NOT, surrogates removed. tmp has the
 * same room. Returns the pair count. */
static size_t set_ranges(const struct nextok__gel *el, uint32_t d, uint32_t *r, uint32_t *tmp)
{
    size_t n = 0;
    bool neg = el[d].type == NEXTOK__G_CHAR_NOT;
    if (el[d].type == NEXTOK__G_CHAR_ANY) {
        tmp[0] = 0, tmp[1] = MAX_CP, n = 1;
    } else {
        for (uint32_t k = d;; k++) {
            uint32_t t = el[k].type;
            if (k > d && t != NEXTOK__G_CHAR_ALT && t != NEXTOK__G_CHAR_RNG_UPPER) break;
            if (t == NEXTOK__G_CHAR_RNG_UPPER)
                tmp[2 * n - 1] = el[k].value;
            else
                tmp[2 * n] = tmp[2 * n + 1] = el[k].value, n++;
        }
    }
    qsort(tmp, n, 2 * sizeof *tmp, cmp_pair);
    size_t m = 0; /* merged; a range with hi < lo (e.g. [z-a]) is empty */
    for (size_t i = 0; i < n; i++) {
        uint32_t lo = tmp[2 * i], hi = tmp[2 * i + 1] > MAX_CP ? MAX_CP : tmp[2 * i + 1];
        if (hi < lo) continue;
        if (m && lo <= tmp[2 * m - 1] + 1) {
            if (hi > tmp[2 * m - 1]) tmp[2 * m - 1] = hi;
        } else {
            tmp[2 * m] = lo, tmp[2 * m + 1] = hi, m++;
        }
    }
    size_t k = 0;
    if (!neg) {
        for (size_t i = 0; i < m; i++) put_range(r, &k, tmp[2 * i], tmp[2 * i + 1]);
        return k;
    }
    uint32_t next = 0; /* the complement: the gaps between the ranges */
    for (size_t i = 0; i < m; i++) {
        if (tmp[2 * i] > next) put_range(r, &k, next, tmp[2 * i] - 1);
        next = tmp[2 * i + 1] + 1;
    }
    if (next <= MAX_CP) put_range(r, &k, next, MAX_CP);
    return k;
}

static bool is_set_start(uint32_t t)
{
    return t == NEXTOK__G_CHAR || t == NEXTOK__G_CHAR_NOT || t == NEXTOK__G_CHAR_ANY;
}

/* Normalise every character set; el_cset and el_next for every element. */
static nextok_status build_sets(struct nextok_compiled_grammar *cg)
{
    const struct nextok__mem *mem = &cg->mem;
    size_t n_sets = 0, n_pairs = 0;
    for (uint32_t d = 0; d < cg->n_el; d++)
        if (is_set_start(cg->el[d].type)) n_sets++;
    cg->el_cset = nextok__alloc_array(mem, cg->n_el, sizeof *cg->el_cset);
    cg->el_next = nextok__alloc_array(mem, cg->n_el, sizeof *cg->el_next);
    cg->cset = nextok__calloc(mem, n_sets ? n_sets : 1, sizeof *cg->cset);
    /* a set of k elements has at most k + 2 pairs (k + 1 gaps, one cut at the
     * surrogates); the ASCII part goes to the bitmap */
    uint32_t *tmp = nextok__alloc_array(mem, 2 * (size_t)cg->n_el + 8, sizeof *tmp);
    uint32_t *r = nextok__alloc_array(mem, 2 * (size_t)cg->n_el + 8, sizeof *r);
    cg->ranges = nextok__alloc_array(mem, 6 * (size_t)cg->n_el + 8, sizeof *cg->ranges);
    nextok_status rc = NEXTOK_OK;
    if (!cg->el_cset || !cg->el_next || !cg->cset || !tmp || !r || !cg->ranges)
        rc = NEXTOK_ERR_NOMEM;
    for (uint32_t d = 0; d < cg->n_el && rc == NEXTOK_OK; d++) {
        uint32_t t = cg->el[d].type;
        cg->el_cset[d] = -1;
        cg->el_next[d] = d + 1;
        if (!is_set_start(t)) continue;
        uint32_t e = d + 1;
        if (t != NEXTOK__G_CHAR_ANY)
            while (cg->el[e].type == NEXTOK__G_CHAR_ALT ||
                   cg->el[e].type == NEXTOK__G_CHAR_RNG_UPPER)
                e++;
        cg->el_next[d] = e;
        struct nextok__cset *c = cg->cset + cg->n_cset;
        cg->el_cset[d] = (int32_t)cg->n_cset++;
        size_t k = set_ranges(cg->el, d, r, tmp);
        c->r0 = (uint32_t)n_pairs;
        for (size_t i = 0; i < k; i++) {
            uint32_t lo = r[2 * i], hi = r[2 * i + 1];
            for (uint32_t cp = lo; cp <= hi && cp < 128; cp++)
                c->ascii[cp >> 6] |= 1ull << (cp & 63);
            if (hi < 128) continue;
            cg->ranges[2 * n_pairs] = lo < 128 ? 128 : lo;
            cg->ranges[2 * n_pairs + 1] = hi;
            n_pairs++;
        }
        c->r1 = (uint32_t)n_pairs;
    }
    nextok__free(mem, tmp);
    nextok__free(mem, r);
    return rc;
}

static bool set_empty(const struct nextok_compiled_grammar *cg, uint32_t k)
{
    const struct nextok__cset *c = cg->cset + k;
    return !c->ascii[0] && !c->ascii[1] && c->r0 == c->r1;
}

/* Whether element d can be matched by something, given which rules can. */
static bool el_productive(const struct nextok_compiled_grammar *cg, uint32_t d, const bool *prod)
{
    const struct nextok__gel *e = cg->el + d;
    switch (e->type) {
    case NEXTOK__G_RULE_REF: return prod[e->value];
    case NEXTOK__G_TOKEN: return (int32_t)e->value < cg->n_vocab && cg->tt->kind[e->value];
    case NEXTOK__G_TOKEN_NOT: return cg->n_vocab > 1;
    default: return cg->el_cset[d] < 0 || !set_empty(cg, (uint32_t)cg->el_cset[d]);
    }
}

/* Whether the alternative starting at d derives some finite string. */
static bool alt_productive(const struct nextok_compiled_grammar *cg, uint32_t d, const bool *prod)
{
    for (; cg->el[d].type != NEXTOK__G_ALT && cg->el[d].type != NEXTOK__G_END; d = cg->el_next[d])
        if (!el_productive(cg, d, prod)) return false;
    return true;
}

/* Keep the productive alternatives of every rule (a fixpoint from none). */
static nextok_status live_alternatives(struct nextok_compiled_grammar *cg,
                                       const struct nextok_grammar *g, struct nextok_error *err)
{
    const struct nextok__mem *mem = &cg->mem;
    bool *prod = nextok__calloc(mem, cg->n_rules, sizeof *prod);
    cg->rule_alt = nextok__alloc_array(mem, (size_t)cg->n_rules + 1, sizeof *cg->rule_alt);
    cg->alt = nextok__alloc_array(mem, cg->n_el + 1, sizeof *cg->alt);
    if (!prod || !cg->rule_alt || !cg->alt) {
        nextok__free(mem, prod);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "grammar: out of memory");
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < cg->n_rules; r++) {
            if (prod[r]) continue;
            for (uint32_t d = g->rule_start[r];; d++) {
                if ((d == g->rule_start[r] || cg->el[d - 1].type == NEXTOK__G_ALT) &&
                    alt_productive(cg, d, prod)) {
                    prod[r] = changed = true;
                    break;
                }
                if (cg->el[d].type == NEXTOK__G_END) break;
            }
        }
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < cg->n_rules; r++) {
        cg->rule_alt[r] = n;
        for (uint32_t d = g->rule_start[r];; d++) {
            if ((d == g->rule_start[r] || cg->el[d - 1].type == NEXTOK__G_ALT) &&
                alt_productive(cg, d, prod))
                cg->alt[n++] = d;
            if (cg->el[d].type == NEXTOK__G_END) break;
        }
    }
    cg->rule_alt[cg->n_rules] = n;
    bool root_ok = prod[cg->root];
    nextok__free(mem, prod);
    NEXTOK_RETURN_IF(!root_ok, err, NEXTOK_ERR_FORMAT,
                     "the grammar matches nothing: rule 'root' derives no finite string");
    return NEXTOK_OK;
}

/* ---- public -------------------------------------------------------------------------- */

struct nextok_compile_params nextok_compile_default_params(void)
{
    struct nextok_compile_params p;
    memset(&p, 0, sizeof p);
    p.max_cache_bytes = (size_t)256 << 20;
    p.max_stacks = 4096;
    p.max_work = 1000000;
    return p;
}

static nextok_status copy_grammar(struct nextok_compiled_grammar *cg,
                                  const struct nextok_grammar *g)
{
    cg->n_el = (uint32_t)g->n_el;
    cg->n_rules = g->n_rules;
    cg->root = g->root;
    cg->el = nextok__memdup(&cg->mem, g->el, g->n_el * sizeof *g->el);
    cg->rule_start = nextok__memdup(&cg->mem, g->rule_start, g->n_rules * sizeof *g->rule_start);
    return cg->el && cg->rule_start ? NEXTOK_OK : NEXTOK_ERR_NOMEM;
}

nextok_status nextok_compiled_grammar_init(struct nextok_compiled_grammar **out,
                                           const struct nextok_grammar *g,
                                           const struct nextok_token_table *tt,
                                           const struct nextok_compile_params *p,
                                           struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !g || !tt, err, NEXTOK_ERR_INVALID_ARG,
                     "out, g and tt: must not be NULL");
    *out = NULL;
    struct nextok_compile_params cp = p ? *p : nextok_compile_default_params();
    NEXTOK_RETURN_IF(!cp.max_cache_bytes || !cp.max_stacks || !cp.max_work, err,
                     NEXTOK_ERR_INVALID_ARG, "max_cache_bytes, max_stacks, max_work: must be > 0");
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, cp.allocator, err));
    struct nextok_compiled_grammar *cg = nextok__calloc(&mem, 1, sizeof *cg);
    NEXTOK_RETURN_IF(!cg, err, NEXTOK_ERR_NOMEM, "compiled grammar: out of memory");
    cg->mem = mem;
    cg->tt = tt;
    cg->n_vocab = tt->n_vocab;
    cg->n_words = tt->n_words;
    cg->max_cache_bytes = cp.max_cache_bytes;
    cg->max_stacks = cp.max_stacks;
    cg->max_work = cp.max_work;
    nextok_status rc = copy_grammar(cg, g);
    if (rc == NEXTOK_OK) rc = build_sets(cg);
    if (rc != NEXTOK_OK) {
        nextok_compiled_grammar_free(cg);
        return nextok__err(err, rc, "compiled grammar: out of memory");
    }
    rc = live_alternatives(cg, g, err);
    if (rc == NEXTOK_OK && nextok__find_chains(cg) != NEXTOK_OK)
        rc = nextok__err(err, NEXTOK_ERR_NOMEM, "compiled grammar: out of memory");
    if (rc != NEXTOK_OK) {
        nextok_compiled_grammar_free(cg);
        return rc;
    }
    *out = cg;
    return NEXTOK_OK;
}

void nextok_compiled_grammar_free(struct nextok_compiled_grammar *cg)
{
    if (!cg) return;
    const struct nextok__mem mem = cg->mem;
    void *blocks[] = {cg->el,         cg->alt,       cg->rule_alt,    cg->el_cset,  cg->el_next,
                      cg->cset,       cg->ranges,    cg->rule_start,  cg->el_rule,  cg->rule_rank,
                      cg->rule_chain, cg->rule_body, cg->chain_rules, cg->rule_nopt};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) nextok__free(&mem, blocks[i]);
    nextok__free(&mem, cg);
}

int32_t nextok_compiled_grammar_n_vocab(const struct nextok_compiled_grammar *cg)
{
    return cg ? cg->n_vocab : 0;
}
