/*
 * GBNF, the grammar format of llama.cpp, read exactly as llama.cpp reads it:
 * rules `name ::= alternatives` ending at a newline (inside parentheses
 * newlines are spaces), string literals and character classes with the
 * escapes \x.. \u.... \U........ \t \r \n \\ \" \[ \] \-, `[^...]`, ranges,
 * `.`, groups, `*` `+` `?` `{m}` `{m,}` `{m,n}`, comments from `#`, token
 * references `<[id]>` and `<text>` and their negations `!<...>`. Names are
 * letters, digits and `-`. A rule defined twice keeps its last definition.
 *
 * Groups become generated rules and repetitions are rewritten into them the
 * way llama.cpp does (S{m,n} -> S repeated m times, then optional rules), so
 * each rule has llama.cpp's language; one difference in form: with a bound
 * and a minimum, the m required copies are rules too (r ::= S next), so the
 * matcher sees one counted repetition. Errors say where: "line 3, column 14:
 * expecting ::=".
 */
#include "grammar_internal.h"

#include "../common/utf8.h"

#include <stdio.h>

struct gvec {
    struct nextok__gel *el;
    size_t n, cap;
};

struct grule {
    struct gvec v;
    uint32_t name; /* offset in names */
    bool defined;
};

struct gp {
    const char *src, *p, *end;
    uint64_t max_repeat; /* llama.cpp's bound, or the front ends' larger one */
    uint32_t max_rules;
    const struct nextok__mem *mem;
    const struct nextok_vocab *vocab;
    struct nextok_error *err;
    struct grule *rules;
    uint32_t n_rules, cap_rules;
    uint32_t *hash; /* user names -> rule id + 1; 0 = empty */
    uint32_t hash_cap;
    struct nextok__buf names;
    size_t n_el;
    int depth;
    uint32_t gen; /* generated names' counter */
};

/* ---- errors ------------------------------------------------------------------ */

static nextok_status fail_at(struct gp *g, const char *at, const char *what)
{
    size_t line = 1, col = 1;
    for (const char *q = g->src; q < at && q < g->end; q++) {
        if (*q == '\n')
            line++, col = 1;
        else if (((unsigned char)*q & 0xC0) != 0x80)
            col++;
    }
    return nextok__err(g->err, NEXTOK_ERR_FORMAT, "line %zu, column %zu: %s", line, col, what);
}

static nextok_status nomem(struct gp *g)
{
    return nextok__err(g->err, NEXTOK_ERR_NOMEM, "grammar: out of memory");
}

/* ---- element vectors ---------------------------------------------------------- */

static nextok_status push(struct gp *g, struct gvec *v, uint32_t type, uint32_t value)
{
    if (g->n_el >= NEXTOK__G_MAX_ELEMENTS)
        return fail_at(g, g->p, "the grammar has more than 2^22 elements");
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        void *p = nextok__realloc(g->mem, v->el, cap * sizeof *v->el);
        if (!p) return nomem(g);
        v->el = p;
        v->cap = cap;
    }
    v->el[v->n++] = (struct nextok__gel){type, value};
    g->n_el++;
    return NEXTOK_OK;
}

static nextok_status append(struct gp *g, struct gvec *v, const struct nextok__gel *el, size_t n)
{
    for (size_t i = 0; i < n; i++) NEXTOK_FORWARD(push(g, v, el[i].type, el[i].value));
    return NEXTOK_OK;
}

/* ---- symbols --------------------------------------------------------------------- */

static uint32_t name_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static bool name_is(const struct gp *g, uint32_t id, const char *s, size_t n)
{
    const char *t = g->names.data + g->rules[id].name;
    return strncmp(t, s, n) == 0 && t[n] == '\0';
}

static nextok_status new_rule(struct gp *g, const char *name, size_t n, uint32_t *id)
{
    if (g->n_rules >= g->max_rules)
        return fail_at(g, g->p, "the grammar has more than 65536 rules");
    if (g->n_rules == g->cap_rules) {
        uint32_t cap = g->cap_rules ? 2 * g->cap_rules : 32;
        void *p = nextok__realloc(g->mem, g->rules, cap * sizeof *g->rules);
        if (!p) return nomem(g);
        g->rules = p;
        g->cap_rules = cap;
    }
    uint32_t off = (uint32_t)g->names.len;
    if (nextok__buf_append(&g->names, name, n) != NEXTOK_OK ||
        nextok__buf_append(&g->names, "", 1) != NEXTOK_OK)
        return nomem(g);
    *id = g->n_rules++;
    g->rules[*id] = (struct grule){{NULL, 0, 0}, off, false};
    return NEXTOK_OK;
}

static nextok_status grow_hash(struct gp *g)
{
    uint32_t cap = g->hash_cap ? 2 * g->hash_cap : 64;
    uint32_t *h = nextok__calloc(g->mem, cap, sizeof *h);
    if (!h) return nomem(g);
    for (uint32_t i = 0; i < g->hash_cap; i++) {
        if (!g->hash[i]) continue;
        const char *t = g->names.data + g->rules[g->hash[i] - 1].name;
        uint32_t k = name_hash(t, strlen(t)) & (cap - 1);
        while (h[k]) k = (k + 1) & (cap - 1);
        h[k] = g->hash[i];
    }
    nextok__free(g->mem, g->hash);
    g->hash = h;
    g->hash_cap = cap;
    return NEXTOK_OK;
}

/* The rule a user name refers to, made on first sight. */
static nextok_status symbol(struct gp *g, const char *s, size_t n, uint32_t *id)
{
    if (2 * (g->n_rules + 1) > g->hash_cap) NEXTOK_FORWARD(grow_hash(g));
    uint32_t k = name_hash(s, n) & (g->hash_cap - 1);
    for (; g->hash[k]; k = (k + 1) & (g->hash_cap - 1)) {
        if (name_is(g, g->hash[k] - 1, s, n)) {
            *id = g->hash[k] - 1;
            return NEXTOK_OK;
        }
    }
    NEXTOK_FORWARD(new_rule(g, s, n, id));
    g->hash[k] = *id + 1;
    return NEXTOK_OK;
}

/* A generated rule, named as llama.cpp names them: base_N. */
static nextok_status generated(struct gp *g, uint32_t base, uint32_t *id)
{
    char name[96];
    int n = snprintf(name, sizeof name, "%.80s_%u", g->names.data + g->rules[base].name, ++g->gen);
    return new_rule(g, name, (size_t)n < sizeof name ? (size_t)n : sizeof name - 1, id);
}

static nextok_status define(struct gp *g, uint32_t id, struct gvec *v)
{
    struct grule *r = &g->rules[id];
    g->n_el -= r->v.n; /* a later definition replaces an earlier one */
    nextok__free(g->mem, r->v.el);
    r->v = *v;
    r->defined = true;
    *v = (struct gvec){NULL, 0, 0};
    return NEXTOK_OK;
}

/* ---- lexical pieces ---------------------------------------------------------------- */

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

static void space(struct gp *g, bool newline_ok)
{
    const char *p = g->p;
    while (p < g->end &&
           (*p == ' ' || *p == '\t' || *p == '#' || (newline_ok && (*p == '\r' || *p == '\n')))) {
        if (*p == '#')
            while (p < g->end && *p != '\r' && *p != '\n') p++;
        else
            p++;
    }
    g->p = p;
}

static nextok_status hex(struct gp *g, int digits, uint32_t *cp)
{
    const char *at = g->p;
    uint32_t v = 0;
    for (int i = 0; i < digits; i++, g->p++) {
        char c = g->p < g->end ? *g->p : 0;
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) {
            char msg[48];
            snprintf(msg, sizeof msg, "expecting %d hex chars", digits);
            return fail_at(g, at, msg);
        }
        v = v << 4 | (uint32_t)d;
    }
    *cp = v;
    return NEXTOK_OK;
}

/* One character of a literal or a class: an escape or a UTF-8 character. */
static nextok_status character(struct gp *g, uint32_t *cp)
{
    if (g->p >= g->end) return fail_at(g, g->p, "unexpected end of input");
    if (*g->p != '\\') {
        size_t k = nextok__utf8_decode((const unsigned char *)g->p, (size_t)(g->end - g->p), cp);
        if (!k) return fail_at(g, g->p, "invalid UTF-8");
        g->p += k;
        return NEXTOK_OK;
    }
    char c = g->p + 1 < g->end ? g->p[1] : 0;
    const char *at = g->p;
    g->p += 2;
    switch (c) {
    case 'x': return hex(g, 2, cp);
    case 'u': return hex(g, 4, cp);
    case 'U': return hex(g, 8, cp);
    case 't': *cp = '\t'; return NEXTOK_OK;
    case 'r': *cp = '\r'; return NEXTOK_OK;
    case 'n': *cp = '\n'; return NEXTOK_OK;
    case '\\':
    case '"':
    case '[':
    case ']':
    case '-': *cp = (uint32_t)c; return NEXTOK_OK;
    default: return fail_at(g, at, c ? "unknown escape" : "unexpected end of input");
    }
}

/* <[id]> or <text> (the text must encode as exactly one token). */
static nextok_status token(struct gp *g, uint32_t *id)
{
    const char *at = g->p;
    if (g->p >= g->end || *g->p != '<') return fail_at(g, at, "expecting '<'");
    g->p++;
    if (g->p < g->end && *g->p == '[') {
        uint64_t v = 0;
        const char *d = ++g->p;
        while (g->p < g->end && *g->p >= '0' && *g->p <= '9' && v < (1u << 24))
            v = v * 10 + (uint64_t)(*g->p++ - '0');
        if (g->p == d || g->p + 1 >= g->end || g->p[0] != ']' || g->p[1] != '>')
            return fail_at(g, g->p, "expecting ']>'");
        g->p += 2;
        if (g->vocab && v >= (uint64_t)nextok_vocab_n_tokens(g->vocab))
            return fail_at(g, at, "token id out of the vocabulary's range");
        *id = (uint32_t)v;
        return NEXTOK_OK;
    }
    const char *s = g->p;
    while (g->p < g->end && *g->p != '>') g->p++;
    if (g->p >= g->end) return fail_at(g, g->p, "expecting '>'");
    size_t n = (size_t)(g->p++ - s);
    if (!g->vocab) return fail_at(g, at, "a <token> reference needs a vocabulary");
    struct nextok_encode_params ep = nextok_encode_default_params();
    ep.parse_special = true;
    ep.add_bos = ep.add_eos = 0;
    int32_t ids[2];
    size_t k = 0;
    nextok_status rc = nextok_vocab_encode(g->vocab, s - 1, n + 2, &ep, ids, 2, &k, NULL);
    if (rc == NEXTOK_ERR_NOMEM) return nomem(g);
    if (rc != NEXTOK_OK && rc != NEXTOK_ERR_BUFFER_TOO_SMALL)
        return fail_at(g, at, "the vocabulary cannot encode this <token> reference");
    if (k != 1) return fail_at(g, at, "not exactly one token");
    *id = (uint32_t)ids[0];
    return NEXTOK_OK;
}

/* ---- repetitions -------------------------------------------------------------------- */

/* Rewrite the last item rule[last, n) for {min, max} (max UINT32_MAX: none)
 * as llama.cpp does: the item min times, then max - min nested optional
 * rules (or one recursive rule when unbounded). */
static nextok_status repeat(struct gp *g, uint32_t base, struct gvec *rule, size_t last,
                            uint64_t min, uint64_t max, uint64_t *n_prev)
{
    bool unbounded = max == UINT32_MAX;
    if (last == rule->n) return fail_at(g, g->p, "expecting preceding item to */+/?/{");
    uint64_t total = !unbounded && max > 0 ? max : min > 0 ? min : 1;
    if (*n_prev * total >= g->max_repeat)
        return fail_at(g, g->p,
                       "number of rules that are going to be repeated multiplied by the "
                       "new repetition exceeds sane defaults");
    /* bounded with a minimum: the required copies become rules of the same
     * shape as the optional ones (S next), which the matcher recognises as
     * one counted repetition (chains.c); the language is llama.cpp's */
    bool required_rules = !unbounded && min >= 1;
    struct gvec item = {NULL, 0, 0};
    nextok_status rc = append(g, &item, rule->el + last, rule->n - last);
    g->n_el -= item.n; /* a copy, counted when used */
    if (rc == NEXTOK_OK && (min == 0 || required_rules)) {
        g->n_el -= rule->n - last;
        rule->n = last;
    }
    for (uint64_t i = 1; rc == NEXTOK_OK && !required_rules && i < min; i++)
        rc = append(g, rule, item.el, item.n);
    uint64_t n_opt = unbounded ? 1 : max - min;
    uint32_t prev = 0;
    for (uint64_t i = 0; rc == NEXTOK_OK && i < n_opt; i++) {
        struct gvec r = {NULL, 0, 0};
        uint32_t id = 0;
        rc = generated(g, base, &id);
        if (rc == NEXTOK_OK) rc = append(g, &r, item.el, item.n);
        if (rc == NEXTOK_OK && (i > 0 || unbounded))
            rc = push(g, &r, NEXTOK__G_RULE_REF, unbounded ? id : prev);
        if (rc == NEXTOK_OK) rc = push(g, &r, NEXTOK__G_ALT, 0);
        if (rc == NEXTOK_OK) rc = push(g, &r, NEXTOK__G_END, 0);
        if (rc == NEXTOK_OK) rc = define(g, id, &r);
        nextok__free(g->mem, r.el);
        prev = id;
    }
    for (uint64_t i = 0; rc == NEXTOK_OK && required_rules && i < min; i++) {
        struct gvec r = {NULL, 0, 0};
        uint32_t id = 0;
        rc = generated(g, base, &id);
        if (rc == NEXTOK_OK) rc = append(g, &r, item.el, item.n);
        if (rc == NEXTOK_OK && (i > 0 || n_opt > 0)) rc = push(g, &r, NEXTOK__G_RULE_REF, prev);
        if (rc == NEXTOK_OK) rc = push(g, &r, NEXTOK__G_END, 0);
        if (rc == NEXTOK_OK) rc = define(g, id, &r);
        nextok__free(g->mem, r.el);
        prev = id;
    }
    if (rc == NEXTOK_OK && (n_opt > 0 || required_rules))
        rc = push(g, rule, NEXTOK__G_RULE_REF, prev);
    nextok__free(g->mem, item.el);
    *n_prev *= total;
    return rc;
}

/* {m}, {m,}, {m,n} after the '{'. */
static nextok_status braces(struct gp *g, uint64_t *min, uint64_t *max, bool nested)
{
    space(g, nested);
    uint64_t v[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        if (k == 1) {
            if (g->p < g->end && *g->p == '}') {
                *max = v[0];
                break;
            }
            if (g->p >= g->end || *g->p != ',') return fail_at(g, g->p, "expecting ','");
            g->p++;
            space(g, nested);
            *max = UINT32_MAX;
            if (g->p >= g->end || *g->p < '0' || *g->p > '9') break;
        } else if (g->p >= g->end || *g->p < '0' || *g->p > '9') {
            return fail_at(g, g->p, "expecting an int");
        }
        while (g->p < g->end && *g->p >= '0' && *g->p <= '9') {
            v[k] = v[k] * 10 + (uint64_t)(*g->p++ - '0');
            if (v[k] > UINT32_MAX) v[k] = UINT32_MAX; /* refused below */
        }
        if (k == 1) *max = v[1];
        space(g, nested);
    }
    if (g->p >= g->end || *g->p != '}') return fail_at(g, g->p, "expecting '}'");
    g->p++;
    space(g, nested);
    *min = v[0];
    if (*min > g->max_repeat)
        return fail_at(g, g->p, "number of repetitions exceeds sane defaults");
    if (*max != UINT32_MAX && *max > g->max_repeat) *max = UINT32_MAX; /* as llama.cpp */
    if (*max < *min) return fail_at(g, g->p, "repetition {m,n} with n < m");
    return NEXTOK_OK;
}

/* ---- sequences, alternatives, rules -------------------------------------------------------- */

static nextok_status alternates(struct gp *g, uint32_t base, uint32_t id, bool nested);

static nextok_status literal(struct gp *g, struct gvec *rule)
{
    g->p++;
    while (g->p >= g->end || *g->p != '"') {
        uint32_t cp;
        NEXTOK_FORWARD(character(g, &cp));
        NEXTOK_FORWARD(push(g, rule, NEXTOK__G_CHAR, cp));
    }
    g->p++;
    return NEXTOK_OK;
}

static nextok_status char_class(struct gp *g, struct gvec *rule)
{
    size_t start = rule->n;
    uint32_t first = NEXTOK__G_CHAR;
    if (++g->p < g->end && *g->p == '^') g->p++, first = NEXTOK__G_CHAR_NOT;
    while (g->p >= g->end || *g->p != ']') {
        uint32_t cp, hi;
        NEXTOK_FORWARD(character(g, &cp));
        NEXTOK_FORWARD(push(g, rule, rule->n > start ? NEXTOK__G_CHAR_ALT : first, cp));
        if (g->p + 1 < g->end && g->p[0] == '-' && g->p[1] != ']') {
            g->p++;
            NEXTOK_FORWARD(character(g, &hi));
            NEXTOK_FORWARD(push(g, rule, NEXTOK__G_CHAR_RNG_UPPER, hi));
        } else if (g->p + 1 == g->end && g->p[0] == '-') {
            return fail_at(g, g->p + 1, "unexpected end of input");
        }
    }
    g->p++;
    return NEXTOK_OK;
}

static nextok_status group(struct gp *g, uint32_t base, struct gvec *rule)
{
    if (++g->depth > NEXTOK__G_MAX_DEPTH)
        return fail_at(g, g->p, "groups nested more than 256 deep");
    g->p++;
    space(g, true);
    uint32_t id = 0;
    NEXTOK_FORWARD(generated(g, base, &id));
    NEXTOK_FORWARD(alternates(g, base, id, true));
    if (g->p >= g->end || *g->p != ')') return fail_at(g, g->p, "expecting ')'");
    g->p++;
    g->depth--;
    return push(g, rule, NEXTOK__G_RULE_REF, id);
}

/* One item of a sequence at g->p (the caller knows it starts one). */
static nextok_status item(struct gp *g, uint32_t base, struct gvec *rule)
{
    char c = *g->p;
    if (c == '"') return literal(g, rule);
    if (c == '[') return char_class(g, rule);
    if (c == '(') return group(g, base, rule);
    if (c == '.') {
        g->p++;
        return push(g, rule, NEXTOK__G_CHAR_ANY, 0);
    }
    if (c == '<' || c == '!') {
        uint32_t type = NEXTOK__G_TOKEN, id = 0;
        if (c == '!') g->p++, type = NEXTOK__G_TOKEN_NOT;
        NEXTOK_FORWARD(token(g, &id));
        return push(g, rule, type, id);
    }
    const char *s = g->p;
    while (g->p < g->end && word_char(*g->p)) g->p++;
    uint32_t id = 0;
    NEXTOK_FORWARD(symbol(g, s, (size_t)(g->p - s), &id));
    return push(g, rule, NEXTOK__G_RULE_REF, id);
}

static nextok_status sequence(struct gp *g, uint32_t base, struct gvec *rule, bool nested)
{
    size_t last = rule->n;
    uint64_t n_prev = 1;
    while (g->p < g->end) {
        char c = *g->p;
        uint64_t min = 0, max = UINT32_MAX;
        if (c == '*' || c == '+' || c == '?') {
            g->p++;
            space(g, nested);
            min = c == '+';
            max = c == '?' ? 1 : UINT32_MAX;
        } else if (c == '{') {
            g->p++;
            NEXTOK_FORWARD(braces(g, &min, &max, nested));
        } else if (c == '"' || c == '[' || c == '(' || c == '.' || c == '<' || c == '!' ||
                   word_char(c)) {
            size_t at = rule->n;
            uint32_t rules_before = g->n_rules;
            NEXTOK_FORWARD(item(g, base, rule));
            n_prev = c == '(' ? (g->n_rules - rules_before > 1 ? g->n_rules - rules_before : 1) : 1;
            last = at;
            space(g, nested);
            continue;
        } else {
            break;
        }
        NEXTOK_FORWARD(repeat(g, base, rule, last, min, max, &n_prev));
    }
    return NEXTOK_OK;
}

static nextok_status alternates(struct gp *g, uint32_t base, uint32_t id, bool nested)
{
    struct gvec rule = {NULL, 0, 0};
    nextok_status rc = sequence(g, base, &rule, nested);
    while (rc == NEXTOK_OK && g->p < g->end && *g->p == '|') {
        rc = push(g, &rule, NEXTOK__G_ALT, 0);
        g->p++;
        space(g, true);
        if (rc == NEXTOK_OK) rc = sequence(g, base, &rule, nested);
    }
    if (rc == NEXTOK_OK) rc = push(g, &rule, NEXTOK__G_END, 0);
    if (rc == NEXTOK_OK) rc = define(g, id, &rule);
    nextok__free(g->mem, rule.el);
    return rc;
}

static nextok_status rule(struct gp *g)
{
    const char *s = g->p;
    while (g->p < g->end && word_char(*g->p)) g->p++;
    if (g->p == s) return fail_at(g, s, "expecting name");
    uint32_t id = 0;
    NEXTOK_FORWARD(symbol(g, s, (size_t)(g->p - s), &id));
    space(g, false);
    if (g->end - g->p < 3 || memcmp(g->p, "::=", 3) != 0) return fail_at(g, g->p, "expecting ::=");
    g->p += 3;
    space(g, true);
    g->depth = 0;
    NEXTOK_FORWARD(alternates(g, id, id, false));
    if (g->p < g->end && *g->p == '\r')
        g->p += g->p + 1 < g->end && g->p[1] == '\n' ? 2 : 1;
    else if (g->p < g->end && *g->p == '\n')
        g->p++;
    else if (g->p < g->end)
        return fail_at(g, g->p, "expecting newline or end");
    space(g, true);
    return NEXTOK_OK;
}

/* ---- the whole text -------------------------------------------------------------------------- */

static nextok_status check_defined(struct gp *g)
{
    for (uint32_t id = 0; id < g->n_rules; id++) {
        if (g->rules[id].defined) continue;
        char msg[160];
        snprintf(msg, sizeof msg, "undefined rule identifier '%.100s'",
                 g->names.data + g->rules[id].name);
        return nextok__err(g->err, NEXTOK_ERR_FORMAT, "%s", msg);
    }
    return NEXTOK_OK;
}

/* Move the rules into g's flat form. */
static nextok_status flatten(struct gp *p, struct nextok_grammar *g)
{
    g->el = nextok__alloc_array(&g->mem, p->n_el ? p->n_el : 1, sizeof *g->el);
    g->rule_start =
        nextok__alloc_array(&g->mem, p->n_rules ? p->n_rules : 1, sizeof *g->rule_start);
    g->names = nextok__alloc(&g->mem, p->names.len ? p->names.len : 1);
    if (!g->el || !g->rule_start || !g->names) return nomem(p);
    for (uint32_t id = 0; id < p->n_rules; id++) {
        g->rule_start[id] = (uint32_t)g->n_el;
        memcpy(g->el + g->n_el, p->rules[id].v.el, p->rules[id].v.n * sizeof *g->el);
        g->n_el += p->rules[id].v.n;
    }
    memcpy(g->names, p->names.data, p->names.len);
    g->n_rules = p->n_rules;
    return NEXTOK_OK;
}

nextok_status nextok__gbnf_parse(struct nextok_grammar *g, const char *src, size_t len,
                                 const struct nextok_vocab *vocab, bool front_end,
                                 struct nextok_error *err)
{
    struct gp p;
    memset(&p, 0, sizeof p);
    p.max_repeat = front_end ? NEXTOK__G_MAX_REPEAT_FE : NEXTOK__G_MAX_REPEAT;
    p.max_rules = front_end ? NEXTOK__G_MAX_RULES_FE : NEXTOK__G_MAX_RULES;
    p.src = p.p = src;
    p.end = src + len;
    p.mem = &g->mem;
    p.vocab = vocab;
    p.err = err;
    p.names = nextok__buf_of(&g->mem);
    space(&p, true);
    nextok_status rc = NEXTOK_OK;
    while (rc == NEXTOK_OK && p.p < p.end) rc = rule(&p);
    if (rc == NEXTOK_OK) rc = check_defined(&p);
    uint32_t root = 0;
    if (rc == NEXTOK_OK) {
        bool found = false;
        for (uint32_t id = 0; id < p.n_rules && !found; id++)
            found = name_is(&p, id, "root", 4), root = id;
        if (!found) rc = nextok__err(err, NEXTOK_ERR_FORMAT, "the grammar has no root rule");
    }
    if (rc == NEXTOK_OK) rc = flatten(&p, g);
    g->root = root;
    for (uint32_t id = 0; id < p.n_rules; id++) nextok__free(&g->mem, p.rules[id].v.el);
    nextok__free(&g->mem, p.rules);
    nextok__free(&g->mem, p.hash);
    nextok__buf_free(&p.names);
    return rc;
}
