/*
 * The compiled grammar: made from a front end (GBNF now), checked for left
 * recursion (llama.cpp refuses it too: its stack matcher would not end),
 * immutable afterwards and shared by any number of threads.
 */
#include "grammar_internal.h"

#include <stdio.h>

const char *nextok__grammar_rule_name(const struct nextok_grammar *g, uint32_t id)
{
    const char *s = g->names;
    for (uint32_t i = 0; i < id; i++) s += strlen(s) + 1;
    return s;
}

/* ---- left recursion ----------------------------------------------------------- */

struct lr {
    const struct nextok_grammar *g;
    uint8_t *state; /* 0 new, 1 on the path, 2 done */
    bool *nullable;
    uint32_t *stack; /* explicit DFS: rule ids */
};

/* Whether element d of rule r comes first in its alternative, or after
 * rules that may be empty only. */
static bool leading(const struct lr *x, uint32_t r, uint32_t d)
{
    for (uint32_t k = d; k > x->g->rule_start[r]; k--) {
        const struct nextok__gel *b = x->g->el + k - 1;
        if (b->type == NEXTOK__G_ALT) return true;
        if (!(b->type == NEXTOK__G_RULE_REF && x->nullable[b->value])) return false;
    }
    return true;
}

/* Rules a rule may start with: each alternative's refs up to the first
 * element that cannot be empty. */
static bool left_recursive_from(struct lr *x, uint32_t r0, uint32_t *culprit)
{
    const struct nextok_grammar *g = x->g;
    /* (rule, element) frames; an element index walks the rule's leading refs */
    uint32_t *el_at = x->stack + g->n_rules;
    uint32_t depth = 0;
    x->stack[0] = r0;
    el_at[0] = g->rule_start[r0];
    x->state[r0] = 1;
    while (depth != UINT32_MAX) {
        uint32_t r = x->stack[depth];
        uint32_t d = el_at[depth];
        const struct nextok__gel *e = g->el + d;
        if (e->type == NEXTOK__G_END) {
            x->state[r] = 2;
            depth--;
            continue;
        }
        el_at[depth] = d + 1;
        if (e->type != NEXTOK__G_RULE_REF || !leading(x, r, d)) continue;
        uint32_t t = e->value;
        if (x->state[t] == 1) {
            *culprit = t;
            return true;
        }
        if (x->state[t] == 2) continue;
        x->state[t] = 1;
        depth++;
        x->stack[depth] = t;
        el_at[depth] = g->rule_start[t];
    }
    return false;
}

static void nullable_rules(const struct nextok_grammar *g, bool *nullable)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < g->n_rules; r++) {
            bool ok = true;
            for (uint32_t d = g->rule_start[r]; !nullable[r]; d++) {
                uint32_t t = g->el[d].type;
                if (t == NEXTOK__G_ALT || t == NEXTOK__G_END) {
                    if (ok) nullable[r] = changed = true;
                    if (t == NEXTOK__G_END) break;
                    ok = true;
                } else if (t != NEXTOK__G_CHAR_ALT && t != NEXTOK__G_CHAR_RNG_UPPER &&
                           !(t == NEXTOK__G_RULE_REF && nullable[g->el[d].value])) {
                    ok = false;
                }
            }
        }
    }
}

static nextok_status check_left_recursion(struct nextok_grammar *g, struct nextok_error *err)
{
    struct lr x = {g, NULL, NULL, NULL};
    x.state = nextok__calloc(&g->mem, g->n_rules, 1);
    x.nullable = nextok__calloc(&g->mem, g->n_rules, sizeof *x.nullable);
    x.stack = nextok__alloc_array(&g->mem, 2 * (size_t)g->n_rules + 2, sizeof *x.stack);
    nextok_status rc = x.state && x.nullable && x.stack ? NEXTOK_OK : NEXTOK_ERR_NOMEM;
    uint32_t culprit = 0;
    if (rc == NEXTOK_OK) {
        nullable_rules(g, x.nullable);
        for (uint32_t r = 0; r < g->n_rules && rc == NEXTOK_OK; r++)
            if (x.state[r] == 0 && left_recursive_from(&x, r, &culprit)) rc = NEXTOK_ERR_FORMAT;
    }
    nextok__free(&g->mem, x.state);
    nextok__free(&g->mem, x.nullable);
    nextok__free(&g->mem, x.stack);
    if (rc == NEXTOK_ERR_NOMEM) return nextok__err(err, rc, "grammar: out of memory");
    if (rc != NEXTOK_OK)
        return nextok__err(err, rc, "left recursion through rule '%.100s'",
                           nextok__grammar_rule_name(g, culprit));
    return NEXTOK_OK;
}

/* ---- public -------------------------------------------------------------------------- */

struct nextok_grammar_params nextok_grammar_default_params(void)
{
    struct nextok_grammar_params p;
    memset(&p, 0, sizeof p);
    return p;
}

static nextok_status init_gbnf(struct nextok_grammar **out, const char *text, size_t len,
                               const struct nextok_grammar_params *params, bool front_end,
                               struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!text && len, err, NEXTOK_ERR_INVALID_ARG, "text: NULL with len %zu", len);
    struct nextok_grammar_params p = params ? *params : nextok_grammar_default_params();
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, p.allocator, err));
    struct nextok_grammar *g = nextok__calloc(&mem, 1, sizeof *g);
    NEXTOK_RETURN_IF(!g, err, NEXTOK_ERR_NOMEM, "grammar: out of memory");
    g->mem = mem;
    nextok_status rc = nextok__gbnf_parse(g, text ? text : "", len, p.vocab, front_end, err);
    if (rc == NEXTOK_OK) rc = check_left_recursion(g, err);
    if (rc != NEXTOK_OK) {
        nextok_grammar_free(g);
        return rc;
    }
    *out = g;
    return NEXTOK_OK;
}

nextok_status nextok_grammar_init_gbnf(struct nextok_grammar **out, const char *text, size_t len,
                                       const struct nextok_grammar_params *params,
                                       struct nextok_error *err)
{
    return init_gbnf(out, text, len, params, false, err);
}

nextok_status nextok__grammar_from_gbnf(struct nextok_grammar **out, const char *text, size_t len,
                                        const struct nextok_grammar_params *params,
                                        struct nextok_error *err)
{
    return init_gbnf(out, text, len, params, true, err);
}

/* Any JSON value (RFC 8259): whitespace as the RFC has it, unbounded; any
 * four hex digits after \u, as the RFC's grammar has it. */
static const char json_gbnf[] =
    "root   ::= ws value ws\n"
    "value  ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n"
    "object ::= \"{\" ws ( member ( ws \",\" ws member )* ws )? \"}\"\n"
    "member ::= string ws \":\" ws value\n"
    "array  ::= \"[\" ws ( value ( ws \",\" ws value )* ws )? \"]\"\n"
    "string ::= \"\\\"\" char* \"\\\"\"\n"
    "char   ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} )\n"
    "number ::= \"-\"? ( \"0\" | [1-9] [0-9]* ) ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?\n"
    "ws     ::= [ \\t\\n\\r]*\n";

nextok_status nextok_grammar_init_json(struct nextok_grammar **out,
                                       const struct nextok_grammar_params *params,
                                       struct nextok_error *err)
{
    return nextok_grammar_init_gbnf(out, json_gbnf, sizeof json_gbnf - 1, params, err);
}

void nextok_grammar_free(struct nextok_grammar *g)
{
    if (!g) return;
    const struct nextok__mem mem = g->mem;
    nextok__free(&mem, g->el);
    nextok__free(&mem, g->rule_start);
    nextok__free(&mem, g->names);
    nextok__free(&mem, g);
}

size_t nextok_grammar_n_rules(const struct nextok_grammar *g) { return g ? g->n_rules : 0; }

nextok_status nextok_grammar_accepts(const struct nextok_grammar *g, const char *text, size_t len,
                                     bool *accepted, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!g || !accepted, err, NEXTOK_ERR_INVALID_ARG,
                     "g and accepted: must not be NULL");
    NEXTOK_RETURN_IF(!text && len, err, NEXTOK_ERR_INVALID_ARG, "text: NULL with len %zu", len);
    return nextok__earley_accepts(g, text ? text : "", len, accepted, err);
}
