/*
 * Lazy grammars: free text until a trigger, then the grammar. How tool
 * calls are constrained ("<tool_call>" then JSON) and text after a closing
 * tag: the model writes what it likes until it writes a trigger word or
 * token, and from there on only what the grammar allows.
 *
 * Built as one more grammar: the free part is an Aho-Corasick automaton
 * over the trigger words' code points, written as GBNF rules (one per
 * automaton state, each able to end there: a reply may never trigger),
 * whose transition into a complete word continues with the grammar's
 * root; a trigger token may come at any point of the free part. The
 * grammar itself is printed back as GBNF (its rules renamed g<id>) and the
 * whole parsed as a front end's GBNF. Special tokens other than the
 * triggers are not allowed before the trigger.
 */
#include "grammar_internal.h"

#include "../common/utf8.h"

#include <stdio.h>

#define MAX_TRIGGER_CP 4096 /* code points over all words */

/* ---- the grammar back to GBNF ------------------------------------------------------ */

static void put_cp(struct nextok__buf *b, uint32_t cp, nextok_status *rc)
{
    char t[16];
    int n = snprintf(t, sizeof t, "\\U%08X", (unsigned)cp);
    if (*rc == NEXTOK_OK) *rc = nextok__buf_append(b, t, (size_t)n);
}

static void put(struct nextok__buf *b, const char *s, nextok_status *rc)
{
    if (*rc == NEXTOK_OK) *rc = nextok__buf_append(b, s, strlen(s));
}

/* The character set starting at element d; returns the element after it. */
static uint32_t put_set(struct nextok__buf *b, const struct nextok_grammar *g, uint32_t d,
                        nextok_status *rc)
{
    const struct nextok__gel *el = g->el;
    if (el[d].type == NEXTOK__G_CHAR_ANY) {
        put(b, " .", rc);
        return d + 1;
    }
    put(b, el[d].type == NEXTOK__G_CHAR_NOT ? " [^" : " [", rc);
    uint32_t k = d;
    do {
        put_cp(b, el[k].value, rc);
        if (el[k + 1].type == NEXTOK__G_CHAR_RNG_UPPER)
            put(b, "-", rc), put_cp(b, el[++k].value, rc);
        k++;
    } while (el[k].type == NEXTOK__G_CHAR_ALT);
    put(b, "]", rc);
    return k;
}

/* Every rule of g as GBNF, rule i named <prefix><i>. */
static void print_grammar(struct nextok__buf *b, const struct nextok_grammar *g, const char *prefix,
                          nextok_status *rc)
{
    char t[48];
    for (uint32_t r = 0; r < g->n_rules && *rc == NEXTOK_OK; r++) {
        snprintf(t, sizeof t, "%s%u ::=", prefix, (unsigned)r);
        put(b, t, rc);
        for (uint32_t d = g->rule_start[r];;) {
            const struct nextok__gel *e = g->el + d;
            /* an empty alternative as "": a line may not end with "|" */
            bool starts = d == g->rule_start[r] || g->el[d - 1].type == NEXTOK__G_ALT;
            if (starts && (e->type == NEXTOK__G_ALT || e->type == NEXTOK__G_END))
                put(b, " \"\"", rc);
            if (e->type == NEXTOK__G_END || *rc != NEXTOK_OK) break;
            switch (e->type) {
            case NEXTOK__G_ALT: put(b, " |", rc), d++; break;
            case NEXTOK__G_RULE_REF:
                snprintf(t, sizeof t, " %s%u", prefix, (unsigned)e->value);
                put(b, t, rc), d++;
                break;
            case NEXTOK__G_TOKEN:
            case NEXTOK__G_TOKEN_NOT:
                snprintf(t, sizeof t, " %s<[%u]>", e->type == NEXTOK__G_TOKEN_NOT ? "!" : "",
                         (unsigned)e->value);
                put(b, t, rc), d++;
                break;
            default: d = put_set(b, g, d, rc); break;
            }
        }
        put(b, "\n", rc);
    }
}

/* ---- the trigger automaton ------------------------------------------------------------- */

struct ac {
    uint32_t *cp;     /* node -> the code point into it            */
    uint32_t *parent; /* node -> its parent                        */
    uint32_t *fail;   /* node -> failure link                      */
    bool *end;        /* node -> a word ends here (or at its fail) */
    uint32_t n;
    uint32_t *alpha; /* distinct code points of the words, sorted */
    uint32_t n_alpha;
};

static uint32_t child(const struct ac *a, uint32_t q, uint32_t c)
{
    for (uint32_t k = 1; k < a->n; k++)
        if (a->parent[k] == q && a->cp[k] == c) return k;
    return 0;
}

/* The automaton's move: goto where it exists, else through the failures. */
static uint32_t step(const struct ac *a, uint32_t q, uint32_t c)
{
    for (;;) {
        uint32_t k = child(a, q, c);
        if (k || q == 0) return k;
        q = a->fail[q];
    }
}

static nextok_status add_word(struct ac *a, const char *w, size_t len, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!w || !len, err, NEXTOK_ERR_INVALID_ARG, "trigger words: must not be empty");
    uint32_t q = 0;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        size_t k = nextok__utf8_decode((const unsigned char *)w + i, len - i, &c);
        NEXTOK_RETURN_IF(!k, err, NEXTOK_ERR_INVALID_ARG, "trigger word: invalid UTF-8");
        i += k;
        uint32_t next = child(a, q, c);
        if (!next) {
            NEXTOK_RETURN_IF(a->n > MAX_TRIGGER_CP, err, NEXTOK_ERR_LIMIT,
                             "trigger words: more than %d characters", MAX_TRIGGER_CP);
            next = a->n++;
            a->cp[next] = c, a->parent[next] = q, a->end[next] = false;
            bool seen = false;
            for (uint32_t j = 0; j < a->n_alpha && !seen; j++) seen = a->alpha[j] == c;
            if (!seen) a->alpha[a->n_alpha++] = c;
        }
        q = next;
    }
    a->end[q] = true;
    return NEXTOK_OK;
}

/* Failure links in breadth-first order (nodes were made parents first). */
static void link_failures(struct ac *a)
{
    a->fail[0] = 0;
    for (uint32_t k = 1; k < a->n; k++) {
        uint32_t p = a->parent[k];
        a->fail[k] = p == 0 ? 0 : step(a, a->fail[p], a->cp[k]);
        if (a->end[a->fail[k]]) a->end[k] = true;
    }
}

/* ---- the free part as GBNF --------------------------------------------------------- */

/* lz<q> for each automaton state q that has not matched: any character (a
 * word's leads to its state, a completed word to the grammar), a trigger
 * token, or the end. */
static void print_free(struct nextok__buf *b, const struct ac *a,
                       const struct nextok_lazy_params *lp, uint32_t root, nextok_status *rc)
{
    char t[64];
    for (uint32_t q = 0; q < a->n && *rc == NEXTOK_OK; q++) {
        if (a->end[q]) continue;
        snprintf(t, sizeof t, "lz%u ::=", (unsigned)q);
        put(b, t, rc);
        for (uint32_t j = 0; j < a->n_alpha; j++) {
            uint32_t to = step(a, q, a->alpha[j]);
            put(b, " [", rc), put_cp(b, a->alpha[j], rc);
            if (a->end[to])
                snprintf(t, sizeof t, "] g%u |", (unsigned)root);
            else
                snprintf(t, sizeof t, "] lz%u |", (unsigned)to);
            put(b, t, rc);
        }
        put(b, " [^", rc); /* any other character starts over */
        for (uint32_t j = 0; j < a->n_alpha; j++) put_cp(b, a->alpha[j], rc);
        put(b, "] lz0 |", rc);
        for (size_t k = 0; k < lp->n_tokens; k++) {
            snprintf(t, sizeof t, " <[%d]> g%u |", (int)lp->tokens[k], (unsigned)root);
            put(b, t, rc);
        }
        put(b, " \"\"\n", rc); /* or the end */
    }
}

struct nextok_lazy_params nextok_lazy_default_params(void)
{
    struct nextok_lazy_params p;
    memset(&p, 0, sizeof p);
    return p;
}

static nextok_status build_ac(struct ac *a, const struct nextok__mem *mem,
                              const struct nextok_lazy_params *lp, struct nextok_error *err)
{
    size_t total = 1;
    for (size_t i = 0; i < lp->n_words; i++)
        total += lp->words[i] ? (lp->word_lens ? lp->word_lens[i] : strlen(lp->words[i])) : 0;
    NEXTOK_RETURN_IF(total > MAX_TRIGGER_CP * 4, err, NEXTOK_ERR_LIMIT,
                     "trigger words: more than %d characters", MAX_TRIGGER_CP);
    a->cp = nextok__alloc_array(mem, total, sizeof *a->cp);
    a->parent = nextok__alloc_array(mem, total, sizeof *a->parent);
    a->fail = nextok__alloc_array(mem, total, sizeof *a->fail);
    a->end = nextok__calloc(mem, total, sizeof *a->end);
    a->alpha = nextok__alloc_array(mem, total, sizeof *a->alpha);
    NEXTOK_RETURN_IF(!a->cp || !a->parent || !a->fail || !a->end || !a->alpha, err,
                     NEXTOK_ERR_NOMEM, "grammar: out of memory");
    a->n = 1, a->parent[0] = 0, a->cp[0] = 0;
    for (size_t i = 0; i < lp->n_words; i++)
        NEXTOK_FORWARD(add_word(a, lp->words[i],
                                lp->words[i] && lp->word_lens ? lp->word_lens[i]
                                : lp->words[i]                ? strlen(lp->words[i])
                                                              : 0,
                                err));
    link_failures(a);
    return NEXTOK_OK;
}

nextok_status nextok_grammar_init_lazy(struct nextok_grammar **out, const struct nextok_grammar *g,
                                       const struct nextok_lazy_params *lp,
                                       const struct nextok_grammar_params *params,
                                       struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !g || !lp, err, NEXTOK_ERR_INVALID_ARG,
                     "out, g and lp: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!lp->n_words && !lp->n_tokens, err, NEXTOK_ERR_INVALID_ARG,
                     "lazy grammar: no trigger word or token");
    NEXTOK_RETURN_IF((lp->n_words && !lp->words) || (lp->n_tokens && !lp->tokens), err,
                     NEXTOK_ERR_INVALID_ARG, "words and tokens: NULL with a count");
    for (size_t k = 0; k < lp->n_tokens; k++)
        NEXTOK_RETURN_IF(lp->tokens[k] < 0, err, NEXTOK_ERR_TOKEN_RANGE,
                         "trigger token %d: out of range", (int)lp->tokens[k]);
    const struct nextok__mem *mem = &g->mem;
    struct ac a;
    memset(&a, 0, sizeof a);
    nextok_status rc = build_ac(&a, mem, lp, err);
    struct nextok__buf b = nextok__buf_of(mem);
    if (rc == NEXTOK_OK) {
        put(&b, "root ::= lz0\n", &rc);
        print_free(&b, &a, lp, g->root, &rc);
        print_grammar(&b, g, "g", &rc);
        if (rc != NEXTOK_OK) nextok__err(err, rc, "grammar: out of memory");
    }
    void *blocks[] = {a.cp, a.parent, a.fail, a.end, a.alpha};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) nextok__free(mem, blocks[i]);
    if (rc == NEXTOK_OK) rc = nextok__grammar_from_gbnf(out, b.data, b.len, params, err);
    nextok__buf_free(&b);
    return rc;
}
