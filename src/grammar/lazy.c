/*
 * Lazy grammars: free text until a trigger, then the grammar. How tool
 * calls are constrained ("<tool_call>" then JSON) and text after a closing
 * tag: the model writes what it likes until it writes a trigger word or
 * token, and from there on only what the grammar allows.
 *
 * Built as one more grammar: the free part is a DFA that finds the trigger
 * words and patterns anywhere in the text (trigger_dfa.c), written as GBNF
 * rules (one per automaton state, each able to end there: a reply may
 * never trigger), whose transition into a completed trigger continues with
 * the grammar's root; a trigger token may come at any point of the free
 * part. The
 * grammar itself is printed back as GBNF (its rules renamed g<id>) and the
 * whole parsed as a front end's GBNF. Special tokens other than the
 * triggers are not allowed before the trigger.
 */
#include "grammar_internal.h"

#include "../common/utf8.h"

#include <stdio.h>

#define MAX_TRIGGER_BYTES 16384 /* over all words and patterns */

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

struct nextok_lazy_params nextok_lazy_default_params(void)
{
    struct nextok_lazy_params p;
    memset(&p, 0, sizeof p);
    return p;
}

nextok_status nextok_grammar_init_lazy(struct nextok_grammar **out, const struct nextok_grammar *g,
                                       const struct nextok_lazy_params *lp,
                                       const struct nextok_grammar_params *params,
                                       struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !g || !lp, err, NEXTOK_ERR_INVALID_ARG,
                     "out, g and lp: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!lp->n_words && !lp->n_tokens && !lp->n_patterns, err,
                     NEXTOK_ERR_INVALID_ARG, "lazy grammar: no trigger word, pattern or token");
    NEXTOK_RETURN_IF((lp->n_words && !lp->words) || (lp->n_tokens && !lp->tokens) ||
                         (lp->n_patterns && !lp->patterns),
                     err, NEXTOK_ERR_INVALID_ARG, "words, patterns and tokens: NULL with a count");
    size_t total = 0;
    for (size_t i = 0; i < lp->n_words; i++)
        total += lp->words[i] ? (lp->word_lens ? lp->word_lens[i] : strlen(lp->words[i])) : 0;
    for (size_t i = 0; i < lp->n_patterns; i++)
        total += lp->patterns[i]
                     ? (lp->pattern_lens ? lp->pattern_lens[i] : strlen(lp->patterns[i]))
                     : 0;
    NEXTOK_RETURN_IF(total > MAX_TRIGGER_BYTES, err, NEXTOK_ERR_LIMIT,
                     "trigger words and patterns: more than %d bytes", MAX_TRIGGER_BYTES);
    for (size_t k = 0; k < lp->n_tokens; k++)
        NEXTOK_RETURN_IF(lp->tokens[k] < 0, err, NEXTOK_ERR_TOKEN_RANGE,
                         "trigger token %d: out of range", (int)lp->tokens[k]);
    const struct nextok__mem *mem = &g->mem;
    struct nextok__buf b = nextok__buf_of(mem);
    char root[24];
    snprintf(root, sizeof root, "g%u", (unsigned)g->root);
    nextok_status rc = NEXTOK_OK;
    put(&b, "root ::= lz0\n", &rc);
    if (rc == NEXTOK_OK) rc = nextok__lazy_free_part(&b, mem, lp, root, err);
    if (rc == NEXTOK_OK) {
        print_grammar(&b, g, "g", &rc);
        if (rc != NEXTOK_OK) nextok__err(err, rc, "grammar: out of memory");
    } else if (rc == NEXTOK_ERR_NOMEM && b.len == 0) {
        nextok__err(err, rc, "grammar: out of memory");
    }
    if (rc == NEXTOK_OK) rc = nextok__grammar_from_gbnf(out, b.data, b.len, params, err);
    nextok__buf_free(&b);
    return rc;
}
