/*
 * The free part of a lazy grammar (lazy.c): text up to the first point where
 * it ends with a trigger word or a match of a trigger pattern, as a DFA over
 * code points written out as GBNF rules.
 *
 * Words and patterns are both regexes here (a word is its code points, each
 * escaped), parsed by regex_parse.c. Their alternation becomes a Thompson
 * NFA; the search "anywhere in the text" is the NFA's start states added to
 * every step's set; subset construction over the classes of code points the
 * patterns tell apart gives the DFA. A DFA state holding a pattern's end is
 * where the trigger fires: the grammar's sentence follows from there. Every
 * other state is a rule lz<q> that may also end (a reply need not trigger).
 * Limits (NEXTOK_ERR_LIMIT): NFA and DFA states and the work of building.
 */
#include "regex_internal.h"

#include "../common/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define MAX_NFA 8192
#define MAX_DFA 4096
#define MAX_WORK 400000000ull /* range tests while building the DFA */
#define SURR_LO 0xD800u
#define SURR_HI 0xDFFFu

struct nst {
    uint32_t e1, e2;                  /* epsilon edges (NONE: none)        */
    uint32_t to;                      /* the set edge's target (NONE)      */
    uint32_t n_rng;
    const struct nextok__re_range *rng;
    bool accept;                      /* a pattern matched                 */
};

struct tb {
    const struct nextok__mem *mem;
    struct nextok_error *err;
    struct nextok__re_parser *re;     /* one per pattern, kept for the ranges */
    size_t n_re;
    struct nst *nfa;
    uint32_t n_nfa;
    uint32_t *starts;                 /* each pattern's start state         */
    uint32_t n_starts;
    uint32_t *bound;                  /* class i is [bound[i], bound[i+1]) */
    uint32_t n_class;
    uint64_t *sets;                   /* DFA state q's NFA set: W words     */
    uint32_t words, n_dfa;
    bool *fired;                      /* the set holds an accept state      */
    uint32_t *trans;                  /* [q * n_class + c]                  */
    uint32_t *hash;                   /* 2 * MAX_DFA slots of DFA ids       */
    uint64_t work;
};

static nextok_status limit(struct tb *t, const char *what)
{
    return nextok__err(t->err, NEXTOK_ERR_LIMIT, "lazy grammar triggers: more than %s", what);
}

/* ---- the NFA -------------------------------------------------------------------- */

static nextok_status nfa_new(struct tb *t, uint32_t *id)
{
    *id = NONE;
    if (t->n_nfa >= MAX_NFA) return limit(t, "8192 automaton states (NFA)");
    t->nfa[t->n_nfa] = (struct nst){NONE, NONE, NONE, 0, NULL, false};
    *id = t->n_nfa++;
    return NEXTOK_OK;
}

/* A fragment from state *in to state *out (out has no edges yet). */
static nextok_status frag(struct tb *t, const struct nextok__re_parser *r, uint32_t id,
                          uint32_t *in, uint32_t *out, int depth);

/* `times` copies of node id in a row, joined into *in .. *out (times >= 1). */
static nextok_status frag_copies(struct tb *t, const struct nextok__re_parser *r, uint32_t id,
                                 uint32_t times, uint32_t *in, uint32_t *out, int depth)
{
    uint32_t a = NONE, b = NONE;
    NEXTOK_FORWARD(frag(t, r, id, in, out, depth));
    for (uint32_t k = 1; k < times; k++) {
        NEXTOK_FORWARD(frag(t, r, id, &a, &b, depth));
        t->nfa[*out].e1 = a;
        *out = b;
    }
    return NEXTOK_OK;
}

static nextok_status frag_rep(struct tb *t, const struct nextok__re_parser *r,
                              const struct nextok__re_node *n, uint32_t *in, uint32_t *out,
                              int depth)
{
    uint32_t a = NONE, b = NONE;
    NEXTOK_FORWARD(nfa_new(t, in));
    *out = *in;
    if (n->min > 0) {
        NEXTOK_FORWARD(frag_copies(t, r, n->a, n->min, &a, &b, depth));
        t->nfa[*out].e1 = a;
        *out = b;
    }
    if (n->max == NEXTOK__RE_INF) { /* a loop: out -> body -> out, or on */
        NEXTOK_FORWARD(frag(t, r, n->a, &a, &b, depth));
        uint32_t next = NONE;
        NEXTOK_FORWARD(nfa_new(t, &next));
        t->nfa[*out].e1 = a, t->nfa[*out].e2 = next;
        t->nfa[b].e1 = *out;
        *out = next;
        return NEXTOK_OK;
    }
    uint32_t end = NONE;
    NEXTOK_FORWARD(nfa_new(t, &end));
    for (uint32_t k = n->min; k < n->max; k++) { /* each optional copy may skip to end */
        NEXTOK_FORWARD(frag(t, r, n->a, &a, &b, depth));
        t->nfa[*out].e1 = a, t->nfa[*out].e2 = end;
        *out = b;
    }
    t->nfa[*out].e1 = end;
    *out = end;
    return NEXTOK_OK;
}

static nextok_status frag(struct tb *t, const struct nextok__re_parser *r, uint32_t id,
                          uint32_t *in, uint32_t *out, int depth)
{
    const struct nextok__re_node *n = &r->node[id];
    if (depth > 256) return limit(t, "256 levels of nesting");
    if (n->kind == NEXTOK__RE_REP) return frag_rep(t, r, n, in, out, depth + 1);
    NEXTOK_FORWARD(nfa_new(t, in));
    *out = *in;
    if (n->kind == NEXTOK__RE_SET) {
        NEXTOK_FORWARD(nfa_new(t, out));
        t->nfa[*in].to = *out;
        t->nfa[*in].rng = r->rng + n->a;
        t->nfa[*in].n_rng = n->n;
    } else if (n->kind == NEXTOK__RE_CAT) {
        for (uint32_t k = 0; k < n->n; k++) {
            uint32_t a = NONE, b = NONE;
            NEXTOK_FORWARD(frag(t, r, r->kid[n->a + k], &a, &b, depth + 1));
            t->nfa[*out].e1 = a;
            *out = b;
        }
    } else if (n->kind == NEXTOK__RE_ALT) {
        /* a chain of splits: in -> kid 0 | split -> kid 1 | ... , all to end */
        uint32_t end = NONE, split = *in;
        NEXTOK_FORWARD(nfa_new(t, &end));
        for (uint32_t k = 0; k < n->n; k++) {
            uint32_t a = NONE, b = NONE, next = NONE;
            NEXTOK_FORWARD(frag(t, r, r->kid[n->a + k], &a, &b, depth + 1));
            t->nfa[b].e1 = end;
            if (k + 1 < n->n) NEXTOK_FORWARD(nfa_new(t, &next));
            t->nfa[split].e1 = a, t->nfa[split].e2 = next;
            split = next;
        }
        *out = end;
    }
    return NEXTOK_OK; /* EMPTY: one state */
}

/* Pattern text re[0, len) into the NFA: its start joins t->starts. */
static nextok_status add_pattern(struct tb *t, const char *re, size_t len, size_t i)
{
    struct nextok__re_parser *r = &t->re[t->n_re];
    uint32_t root = 0, in = NONE, out = NONE;
    nextok_status rc = nextok__re_parse(r, re, len, t->mem, t->err, &root);
    t->n_re++; /* freed at the end whatever happened */
    NEXTOK_FORWARD(rc);
    for (uint32_t k = 0; k < r->node[root].n; k++)
        NEXTOK_RETURN_IF(r->node[r->kid[r->node[root].a + k]].anchors, t->err,
                         NEXTOK_ERR_UNSUPPORTED,
                         "trigger pattern %zu: anchors (^, $) are not supported: a trigger is "
                         "found anywhere in the text", i);
    NEXTOK_RETURN_IF(r->node[root].nullable, t->err, NEXTOK_ERR_INVALID_ARG,
                     "trigger pattern %zu: matches the empty string", i);
    NEXTOK_FORWARD(frag(t, r, root, &in, &out, 0));
    t->nfa[out].accept = true;
    t->starts[t->n_starts++] = in;
    return NEXTOK_OK;
}

/* A word as a pattern: each code point escaped (\u{X}). */
static nextok_status add_word(struct tb *t, const char *w, size_t len, size_t i)
{
    NEXTOK_RETURN_IF(!w || !len, t->err, NEXTOK_ERR_INVALID_ARG,
                     "trigger words: must not be empty");
    struct nextok__buf b = nextok__buf_of(t->mem);
    nextok_status rc = NEXTOK_OK;
    for (size_t k = 0; k < len && rc == NEXTOK_OK;) {
        uint32_t c;
        size_t n = nextok__utf8_decode((const unsigned char *)w + k, len - k, &c);
        if (!n) {
            rc = nextok__err(t->err, NEXTOK_ERR_INVALID_ARG, "trigger word %zu: invalid UTF-8", i);
            break;
        }
        k += n;
        char e[16];
        int m = snprintf(e, sizeof e, "\\u{%X}", (unsigned)c);
        rc = nextok__buf_append(&b, e, (size_t)m);
    }
    if (rc == NEXTOK_ERR_NOMEM) nextok__re_nomem(t->err);
    if (rc == NEXTOK_OK) rc = add_pattern(t, b.data, b.len, i);
    nextok__buf_free(&b);
    return rc;
}

/* ---- classes of code points ---------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Every range's ends (and the surrogates', which text never holds) cut the
 * code points into classes the NFA cannot tell apart inside. */
static nextok_status make_classes(struct tb *t)
{
    size_t n = 4;
    for (uint32_t s = 0; s < t->n_nfa; s++) n += 2 * (size_t)t->nfa[s].n_rng;
    t->bound = nextok__alloc_array(t->mem, n, sizeof *t->bound);
    if (!t->bound) return nextok__re_nomem(t->err);
    size_t k = 0;
    t->bound[k++] = 0, t->bound[k++] = NEXTOK__RE_MAX_CP + 1;
    t->bound[k++] = SURR_LO, t->bound[k++] = SURR_HI + 1;
    for (uint32_t s = 0; s < t->n_nfa; s++)
        for (uint32_t j = 0; j < t->nfa[s].n_rng; j++)
            t->bound[k++] = t->nfa[s].rng[j].lo, t->bound[k++] = t->nfa[s].rng[j].hi + 1;
    qsort(t->bound, k, sizeof *t->bound, cmp_u32);
    size_t u = 0;
    for (size_t j = 0; j < k; j++)
        if (u == 0 || t->bound[u - 1] != t->bound[j]) t->bound[u++] = t->bound[j];
    t->n_class = (uint32_t)u - 1;
    return NEXTOK_OK;
}

static bool in_ranges(const struct nst *s, uint32_t c)
{
    uint32_t lo = 0, hi = s->n_rng; /* sorted, disjoint (nextok__re_rng_finish) */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (c < s->rng[mid].lo) hi = mid;
        else if (c > s->rng[mid].hi) lo = mid + 1;
        else return true;
    }
    return false;
}

/* ---- subset construction ---------------------------------------------------------- */

static void closure(const struct tb *t, uint64_t *set, uint32_t *stack)
{
    uint32_t sp = 0;
    for (uint32_t s = 0; s < t->n_nfa; s++)
        if (set[s / 64] >> (s % 64) & 1) stack[sp++] = s;
    while (sp) {
        const struct nst *q = &t->nfa[stack[--sp]];
        uint32_t e[2] = {q->e1, q->e2};
        for (int k = 0; k < 2; k++) {
            if (e[k] == NONE || (set[e[k] / 64] >> (e[k] % 64) & 1)) continue;
            set[e[k] / 64] |= 1ull << (e[k] % 64);
            stack[sp++] = e[k];
        }
    }
}

static uint64_t set_hash(const uint64_t *set, uint32_t words)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < words; i++) h = (h ^ set[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

/* The DFA state of set (the scratch at sets[n_dfa]): found, or added. */
static nextok_status intern(struct tb *t, uint32_t *id)
{
    const uint64_t *set = t->sets + (size_t)t->n_dfa * t->words;
    size_t slots = 2 * MAX_DFA, h = set_hash(set, t->words) % slots;
    for (;; h = (h + 1) % slots) {
        uint32_t q = t->hash[h];
        if (q == NONE) break;
        if (memcmp(t->sets + (size_t)q * t->words, set, t->words * sizeof *set) == 0) {
            *id = q;
            return NEXTOK_OK;
        }
    }
    if (t->n_dfa + 1 >= MAX_DFA) return limit(t, "4096 automaton states (DFA)");
    bool fired = false;
    for (uint32_t s = 0; s < t->n_nfa && !fired; s++)
        fired = (set[s / 64] >> (s % 64) & 1) && t->nfa[s].accept;
    t->hash[h] = *id = t->n_dfa;
    t->fired[t->n_dfa++] = fired;
    return NEXTOK_OK;
}

/* Into the scratch set: the starts, then the states class c moves q's to. */
static nextok_status move(struct tb *t, uint32_t q, uint32_t c, uint32_t *stack)
{
    uint64_t *next = t->sets + (size_t)t->n_dfa * t->words;
    const uint64_t *from = t->sets + (size_t)q * t->words;
    memset(next, 0, t->words * sizeof *next);
    for (uint32_t k = 0; k < t->n_starts; k++)
        next[t->starts[k] / 64] |= 1ull << (t->starts[k] % 64);
    for (uint32_t s = 0; s < t->n_nfa; s++) {
        if (!(from[s / 64] >> (s % 64) & 1) || t->nfa[s].to == NONE) continue;
        t->work += 1 + t->nfa[s].n_rng / 8;
        if (in_ranges(&t->nfa[s], t->bound[c]))
            next[t->nfa[s].to / 64] |= 1ull << (t->nfa[s].to % 64);
    }
    if (t->work > MAX_WORK) return limit(t, "the work allowed to build the automaton");
    closure(t, next, stack);
    return NEXTOK_OK;
}

static nextok_status build_dfa(struct tb *t)
{
    t->words = (t->n_nfa + 63) / 64;
    t->sets = nextok__calloc(t->mem, (size_t)MAX_DFA * t->words, sizeof *t->sets);
    t->fired = nextok__calloc(t->mem, MAX_DFA, sizeof *t->fired);
    t->trans = nextok__alloc_array(t->mem, (size_t)MAX_DFA * t->n_class, sizeof *t->trans);
    t->hash = nextok__alloc_array(t->mem, 2 * MAX_DFA, sizeof *t->hash);
    uint32_t *stack = nextok__alloc_array(t->mem, t->n_nfa, sizeof *stack);
    if (!t->sets || !t->fired || !t->trans || !t->hash || !stack) {
        nextok__free(t->mem, stack);
        return nextok__re_nomem(t->err);
    }
    memset(t->hash, 0xFF, 2 * MAX_DFA * sizeof *t->hash);
    for (uint32_t k = 0; k < t->n_starts; k++)
        t->sets[t->starts[k] / 64] |= 1ull << (t->starts[k] % 64);
    closure(t, t->sets, stack);
    uint32_t start = NONE;
    nextok_status rc = intern(t, &start);
    for (uint32_t q = 0; rc == NEXTOK_OK && q < t->n_dfa; q++) {
        if (t->fired[q]) continue; /* the grammar takes over from here */
        for (uint32_t c = 0; rc == NEXTOK_OK && c < t->n_class; c++) {
            if (t->bound[c] == SURR_LO) {
                t->trans[(size_t)q * t->n_class + c] = NONE;
                continue;
            }
            rc = move(t, q, c, stack);
            if (rc == NEXTOK_OK) rc = intern(t, &t->trans[(size_t)q * t->n_class + c]);
        }
    }
    nextok__free(t->mem, stack);
    return rc;
}

/* ---- the DFA as GBNF ------------------------------------------------------------------ */

static nextok_status put_range(struct nextok__buf *b, uint32_t lo, uint32_t hi)
{
    char s[32];
    int n = lo == hi ? snprintf(s, sizeof s, "\\U%08X", (unsigned)lo)
                     : snprintf(s, sizeof s, "\\U%08X-\\U%08X", (unsigned)lo, (unsigned)hi);
    return nextok__buf_append(b, s, (size_t)n);
}

/* The classes of q that go to `to` (inside = true) or elsewhere, as ranges. */
static nextok_status put_classes(struct nextok__buf *b, const struct tb *t, uint32_t q,
                                 uint32_t to, bool inside)
{
    const uint32_t *tr = t->trans + (size_t)q * t->n_class;
    for (uint32_t c = 0; c < t->n_class;) {
        if (tr[c] == NONE || (tr[c] == to) != inside) {
            c++;
            continue;
        }
        uint32_t e = c;
        while (e + 1 < t->n_class && tr[e + 1] != NONE && (tr[e + 1] == to) == inside) e++;
        NEXTOK_FORWARD(put_range(b, t->bound[c], t->bound[e + 1] - 1));
        c = e + 1;
    }
    return NEXTOK_OK;
}

/* lz<q> ::= one alternative per target state (its classes as one set; the
 * target of U+0000 written as the complement of the others) | a trigger
 * token | the end. */
static nextok_status print_state(struct nextok__buf *b, const struct tb *t, uint32_t q,
                                 const char *grammar_root, const int32_t *tokens,
                                 size_t n_tokens)
{
    char s[64];
    const uint32_t *tr = t->trans + (size_t)q * t->n_class;
    int n = snprintf(s, sizeof s, "lz%u ::=", (unsigned)q);
    NEXTOK_FORWARD(nextok__buf_append(b, s, (size_t)n));
    for (uint32_t c = 0; c < t->n_class; c++) {
        uint32_t to = tr[c];
        bool first = to != NONE;
        for (uint32_t k = 0; first && k < c; k++) first = tr[k] != to;
        if (!first) continue; /* each target once */
        bool others = false;
        for (uint32_t k = 0; k < t->n_class && !others; k++) others = tr[k] != NONE && tr[k] != to;
        if (c == 0 && !others) {
            NEXTOK_FORWARD(nextok__buf_append(b, " .", 2));
        } else {
            NEXTOK_FORWARD(nextok__buf_append(b, c == 0 ? " [^" : " [", c == 0 ? 3 : 2));
            NEXTOK_FORWARD(put_classes(b, t, q, to, c != 0));
            NEXTOK_FORWARD(nextok__buf_append(b, "]", 1));
        }
        n = t->fired[to] ? snprintf(s, sizeof s, " %s |", grammar_root)
                         : snprintf(s, sizeof s, " lz%u |", (unsigned)to);
        NEXTOK_FORWARD(nextok__buf_append(b, s, (size_t)n));
    }
    for (size_t k = 0; k < n_tokens; k++) {
        n = snprintf(s, sizeof s, " <[%d]> %s |", (int)tokens[k], grammar_root);
        NEXTOK_FORWARD(nextok__buf_append(b, s, (size_t)n));
    }
    return nextok__buf_append(b, " \"\"\n", 4);
}

/* ---- the entry point ------------------------------------------------------------------ */

static void tb_free(struct tb *t)
{
    for (size_t i = 0; i < t->n_re; i++) nextok__re_free(&t->re[i]);
    void *blocks[] = {t->re, t->nfa, t->starts, t->bound, t->sets, t->fired, t->trans, t->hash};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) nextok__free(t->mem, blocks[i]);
}

static nextok_status build(struct tb *t, const struct nextok_lazy_params *lp)
{
    size_t n = lp->n_words + lp->n_patterns;
    t->re = nextok__calloc(t->mem, n, sizeof *t->re);
    t->nfa = nextok__alloc_array(t->mem, MAX_NFA, sizeof *t->nfa);
    t->starts = nextok__alloc_array(t->mem, n, sizeof *t->starts);
    if (!t->re || !t->nfa || !t->starts) return nextok__re_nomem(t->err);
    for (size_t i = 0; i < lp->n_words; i++)
        NEXTOK_FORWARD(add_word(t, lp->words[i],
                                !lp->words[i]   ? 0
                                : lp->word_lens ? lp->word_lens[i]
                                                : strlen(lp->words[i]),
                                i));
    for (size_t i = 0; i < lp->n_patterns; i++) {
        const char *p = lp->patterns[i];
        NEXTOK_RETURN_IF(!p, t->err, NEXTOK_ERR_INVALID_ARG, "trigger pattern %zu: NULL", i);
        NEXTOK_FORWARD(add_pattern(t, p, lp->pattern_lens ? lp->pattern_lens[i] : strlen(p), i));
    }
    NEXTOK_FORWARD(make_classes(t));
    return build_dfa(t);
}

nextok_status nextok__lazy_free_part(struct nextok__buf *out, const struct nextok__mem *mem,
                                     const struct nextok_lazy_params *lp,
                                     const char *grammar_root, struct nextok_error *err)
{
    struct tb t;
    memset(&t, 0, sizeof t);
    t.mem = mem, t.err = err;
    nextok_status rc = build(&t, lp);
    if (rc == NEXTOK_OK) {
        /* the root is DFA state 0, the start */
        for (uint32_t q = 0; rc == NEXTOK_OK && q < t.n_dfa; q++)
            if (!t.fired[q]) rc = print_state(out, &t, q, grammar_root, lp->tokens, lp->n_tokens);
        if (rc != NEXTOK_OK) nextok__re_nomem(err);
    }
    tb_free(&t);
    return rc;
}
