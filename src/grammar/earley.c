/*
 * An Earley recognizer over code points: whether a text is a sentence of a
 * grammar's root rule. It is the reference for the grammar front ends (what
 * `nextok grammar accepts` runs and what the tests of every front end check
 * against), not the per-token matcher: it is exact for any grammar and has
 * no speed to speak of (O(n^3) at worst, bounded by a work limit).
 *
 * An item is (rule, dot, origin); the dot is an index into the grammar's
 * elements, inside one alternative. Empty rules are handled by advancing
 * over a nullable rule at prediction (Aycock and Horspool).
 */
#include "grammar_internal.h"

#include "../common/utf8.h"

#define WORK_LIMIT 20000000u /* items over all sets */

struct item {
    uint32_t rule, dot, origin;
};

struct eset {
    struct item *it;
    uint32_t n, cap;
    uint32_t *hash; /* item index + 1; 0 empty */
    uint32_t hcap;
};

struct ep {
    const struct nextok_grammar *g;
    const struct nextok__mem *mem;
    struct eset *sets;
    bool *nullable;
    bool *alt_ok; /* prefix mode: per element, the alternative starting there can
                   * derive a finite string (NULL: every alternative is predicted) */
    uint32_t work;
};

static bool end_of_alt(const struct nextok__gel *e)
{
    return e->type == NEXTOK__G_ALT || e->type == NEXTOK__G_END;
}

/* The element after the character set (or other single element) at e. */
static uint32_t after(const struct nextok_grammar *g, uint32_t dot)
{
    uint32_t t = g->el[dot].type;
    dot++;
    if (t == NEXTOK__G_CHAR || t == NEXTOK__G_CHAR_NOT)
        while (g->el[dot].type == NEXTOK__G_CHAR_ALT || g->el[dot].type == NEXTOK__G_CHAR_RNG_UPPER)
            dot++;
    return dot;
}

static bool match(const struct nextok_grammar *g, uint32_t dot, uint32_t cp)
{
    const struct nextok__gel *e = g->el + dot;
    if (e->type == NEXTOK__G_CHAR_ANY) return true;
    if (e->type != NEXTOK__G_CHAR && e->type != NEXTOK__G_CHAR_NOT) return false;
    bool in = false;
    for (const struct nextok__gel *x = e;; x++) {
        uint32_t hi = x[1].type == NEXTOK__G_CHAR_RNG_UPPER ? x[1].value : x->value;
        if (cp >= x->value && cp <= hi) in = true;
        if (x[1].type == NEXTOK__G_CHAR_RNG_UPPER) x++;
        if (x[1].type != NEXTOK__G_CHAR_ALT) break;
    }
    return e->type == NEXTOK__G_CHAR_NOT ? !in : in;
}

/* ---- sets --------------------------------------------------------------------- */

static uint32_t ihash(struct item it)
{
    uint64_t k = ((uint64_t)it.dot << 32 | it.origin) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(k >> 32);
}

static nextok_status grow(struct ep *p, struct eset *s)
{
    uint32_t cap = s->hcap ? 2 * s->hcap : 64;
    uint32_t *h = nextok__calloc(p->mem, cap, sizeof *h);
    void *it = nextok__realloc(p->mem, s->it, (size_t)(cap / 2) * sizeof *s->it);
    if (!h || !it) {
        nextok__free(p->mem, h);
        if (it) s->it = it;
        return NEXTOK_ERR_NOMEM;
    }
    s->it = it;
    s->cap = cap / 2;
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t k = ihash(s->it[i]) & (cap - 1);
        while (h[k]) k = (k + 1) & (cap - 1);
        h[k] = i + 1;
    }
    nextok__free(p->mem, s->hash);
    s->hash = h;
    s->hcap = cap;
    return NEXTOK_OK;
}

static nextok_status add(struct ep *p, struct eset *s, struct item it)
{
    if (s->n + 1 > s->cap) NEXTOK_FORWARD(grow(p, s));
    uint32_t k = ihash(it) & (s->hcap - 1);
    for (; s->hash[k]; k = (k + 1) & (s->hcap - 1)) {
        const struct item *o = &s->it[s->hash[k] - 1];
        if (o->dot == it.dot && o->origin == it.origin) return NEXTOK_OK;
    }
    if (++p->work > WORK_LIMIT) return NEXTOK_ERR_INVALID_ARG;
    s->hash[k] = s->n + 1;
    s->it[s->n++] = it;
    return NEXTOK_OK;
}

/* ---- nullable rules -------------------------------------------------------------- */

static void find_nullable(const struct nextok_grammar *g, bool *nullable)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < g->n_rules; r++) {
            if (nullable[r]) continue;
            bool alt_ok = true;
            for (uint32_t d = g->rule_start[r];; d++) {
                const struct nextok__gel *e = g->el + d;
                if (end_of_alt(e)) {
                    if (alt_ok) nullable[r] = changed = true;
                    if (e->type == NEXTOK__G_END || nullable[r]) break;
                    alt_ok = true;
                    continue;
                }
                if (e->type == NEXTOK__G_CHAR_ALT || e->type == NEXTOK__G_CHAR_RNG_UPPER) continue;
                if (!(e->type == NEXTOK__G_RULE_REF && nullable[e->value])) alt_ok = false;
            }
        }
    }
}

/* ---- the three operations ------------------------------------------------------------- */

static nextok_status predict(struct ep *p, struct eset *s, uint32_t at, struct item it)
{
    const struct nextok_grammar *g = p->g;
    uint32_t r = g->el[it.dot].value;
    for (uint32_t d = g->rule_start[r];; d++) {
        if ((d == g->rule_start[r] || g->el[d - 1].type == NEXTOK__G_ALT) &&
            (!p->alt_ok || p->alt_ok[d]))
            NEXTOK_FORWARD(add(p, s, (struct item){r, d, at}));
        if (g->el[d].type == NEXTOK__G_END) break;
    }
    if (p->nullable[r]) NEXTOK_FORWARD(add(p, s, (struct item){it.rule, it.dot + 1, it.origin}));
    return NEXTOK_OK;
}

static nextok_status complete(struct ep *p, struct eset *s, struct item it)
{
    const struct nextok_grammar *g = p->g;
    const struct eset *o = &p->sets[it.origin];
    for (uint32_t j = 0; j < o->n; j++) { /* o may grow while we add (when origin == here) */
        struct item w = o->it[j];
        if (g->el[w.dot].type == NEXTOK__G_RULE_REF && g->el[w.dot].value == it.rule)
            NEXTOK_FORWARD(add(p, s, (struct item){w.rule, w.dot + 1, w.origin}));
    }
    return NEXTOK_OK;
}

/* Close set i (predict and complete until nothing changes), then scan cp into i + 1. */
static nextok_status step(struct ep *p, uint32_t i, bool has_cp, uint32_t cp)
{
    const struct nextok_grammar *g = p->g;
    struct eset *s = &p->sets[i];
    for (uint32_t j = 0; j < s->n; j++) {
        struct item it = s->it[j];
        const struct nextok__gel *e = g->el + it.dot;
        if (end_of_alt(e))
            NEXTOK_FORWARD(complete(p, s, it));
        else if (e->type == NEXTOK__G_RULE_REF)
            NEXTOK_FORWARD(predict(p, s, i, it));
        else if (has_cp && match(g, it.dot, cp))
            NEXTOK_FORWARD(
                add(p, &p->sets[i + 1], (struct item){it.rule, after(g, it.dot), it.origin}));
    }
    return NEXTOK_OK;
}

/* ---- productive alternatives (prefix mode) ---------------------------------------- */

/* Whether the set at element d holds any code point a text can hold: tried
 * one code point at a time, slow and plain on purpose (a reference). */
static bool set_nonempty(const struct nextok_grammar *g, uint32_t d)
{
    if (g->el[d].type == NEXTOK__G_CHAR_ANY) return true;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++)
        if ((cp < 0xD800 || cp > 0xDFFF) && match(g, d, cp)) return true;
    return false;
}

/* alt_ok[d] for every alternative start d: all its elements can derive a
 * finite string, by a fixpoint over the rules. */
static void find_productive(const struct nextok_grammar *g, bool *alt_ok, bool *prod,
                            bool *set_ok)
{
    for (uint32_t d = 0; d < g->n_el; d++) {
        uint32_t t = g->el[d].type;
        set_ok[d] = !(t == NEXTOK__G_CHAR || t == NEXTOK__G_CHAR_NOT) || set_nonempty(g, d);
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < g->n_rules; r++) {
            for (uint32_t d = g->rule_start[r];; d++) {
                bool start = d == g->rule_start[r] || g->el[d - 1].type == NEXTOK__G_ALT;
                if (start && !alt_ok[d]) {
                    bool ok = true;
                    for (uint32_t k = d; !end_of_alt(g->el + k); k = after(g, k)) {
                        const struct nextok__gel *e = g->el + k;
                        if (e->type == NEXTOK__G_RULE_REF ? !prod[e->value] : !set_ok[k]) ok = false;
                    }
                    if (ok) alt_ok[d] = prod[r] = changed = true;
                }
                if (g->el[d].type == NEXTOK__G_END) break;
            }
        }
    }
}

/* ---- runs -------------------------------------------------------------------------------- */

/* Parse the code points of text[0, len) (all of it valid UTF-8); the sets
 * are left in p for the caller, who frees them with free_run. */
static nextok_status run(struct ep *p, const char *text, size_t len, size_t n_cp)
{
    const struct nextok_grammar *g = p->g;
    nextok_status rc = NEXTOK_OK;
    for (uint32_t d = g->rule_start[g->root]; rc == NEXTOK_OK; d++) {
        if ((d == g->rule_start[g->root] || g->el[d - 1].type == NEXTOK__G_ALT) &&
            (!p->alt_ok || p->alt_ok[d]))
            rc = add(p, &p->sets[0], (struct item){g->root, d, 0});
        if (g->el[d].type == NEXTOK__G_END) break;
    }
    size_t pos = 0;
    for (uint32_t i = 0; rc == NEXTOK_OK && i <= n_cp; i++) {
        uint32_t cp = 0;
        size_t k =
            i < n_cp ? nextok__utf8_decode((const unsigned char *)text + pos, len - pos, &cp) : 0;
        if (i < n_cp && !k) rc = NEXTOK_ERR_INVALID_ARG;
        if (rc == NEXTOK_OK) rc = step(p, i, i < n_cp, cp);
        pos += k;
    }
    return rc;
}

static void free_run(struct ep *p, size_t n_sets)
{
    const struct nextok__mem *mem = p->mem;
    for (size_t i = 0; p->sets && i < n_sets; i++) {
        nextok__free(mem, p->sets[i].it);
        nextok__free(mem, p->sets[i].hash);
    }
    nextok__free(mem, p->sets);
    nextok__free(mem, p->nullable);
    nextok__free(mem, p->alt_ok);
}

static size_t count_cp(const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)text[i] & 0xC0) != 0x80;
    return n;
}

static nextok_status run_error(const struct ep *p, nextok_status rc, struct nextok_error *err)
{
    if (rc == NEXTOK_ERR_NOMEM) return nextok__err(err, rc, "grammar: out of memory");
    return nextok__err(err, rc,
                       p->work > WORK_LIMIT ? "text: over the recognizer's work limit"
                                            : "text: invalid UTF-8");
}

nextok_status nextok__earley_accepts(const struct nextok_grammar *g, const char *text, size_t len,
                                     bool *accepted, struct nextok_error *err)
{
    *accepted = false;
    size_t n_cp = count_cp(text, len);
    NEXTOK_RETURN_IF(n_cp >= (1u << 20), err, NEXTOK_ERR_INVALID_ARG,
                     "text: over 2^20 characters for the reference recognizer");
    struct ep p = {g, &g->mem, NULL, NULL, NULL, 0};
    p.sets = nextok__calloc(&g->mem, n_cp + 1, sizeof *p.sets);
    p.nullable = nextok__calloc(&g->mem, g->n_rules, sizeof *p.nullable);
    nextok_status rc = p.sets && p.nullable ? NEXTOK_OK : NEXTOK_ERR_NOMEM;
    if (rc == NEXTOK_OK) {
        find_nullable(g, p.nullable);
        rc = run(&p, text, len, n_cp);
    }
    for (uint32_t j = 0; rc == NEXTOK_OK && j < p.sets[n_cp].n; j++) {
        struct item it = p.sets[n_cp].it[j];
        if (it.rule == g->root && it.origin == 0 && end_of_alt(g->el + it.dot)) *accepted = true;
    }
    free_run(&p, n_cp + 1);
    return rc == NEXTOK_OK ? NEXTOK_OK : run_error(&p, rc, err);
}

/* Length of the longest valid UTF-8 prefix of a character at the end of
 * text that is not complete (0 when text ends on a character boundary or
 * its last bytes cannot begin a valid character). */
static size_t partial_tail(const unsigned char *t, size_t len)
{
    for (size_t k = 1; k <= 3 && k <= len; k++) {
        unsigned char c = t[len - k];
        if ((c & 0xC0) == 0x80) continue;
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return need > k ? k : 0;
    }
    return 0;
}

/* Whether some scanning item of set s holds a code point whose UTF-8 form
 * starts with b[0, k). */
static bool partial_viable(const struct ep *p, const struct eset *s, const unsigned char *b, size_t k)
{
    size_t need = b[0] >= 0xF0 ? 4 : b[0] >= 0xE0 ? 3 : 2;
    uint32_t lo = b[0] & (0x7Fu >> need), hi = lo; /* the code points b can start */
    for (size_t i = 1; i < need; i++) {
        lo = lo << 6 | (i < k ? b[i] & 0x3Fu : 0);
        hi = hi << 6 | (i < k ? b[i] & 0x3Fu : 0x3F);
    }
    for (uint32_t cp = lo; cp <= hi && cp <= 0x10FFFF; cp++) {
        char u[4];
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        size_t n = nextok__utf8_encode(cp, u);
        if (n <= k || memcmp(u, b, k) != 0) continue;
        for (uint32_t j = 0; j < s->n; j++)
            if (match(p->g, s->it[j].dot, cp)) return true;
    }
    return false;
}

nextok_status nextok__earley_viable(const struct nextok_grammar *g, const char *text, size_t len,
                                    bool *viable, struct nextok_error *err)
{
    *viable = false;
    const unsigned char *t = (const unsigned char *)text;
    size_t tail = partial_tail(t, len);
    size_t body = len - tail;
    for (size_t i = 0; i < body;) { /* invalid UTF-8 is no prefix of any text */
        uint32_t cp;
        size_t k = nextok__utf8_decode(t + i, body - i, &cp);
        if (!k) return NEXTOK_OK;
        i += k;
    }
    size_t n_cp = count_cp(text, body);
    NEXTOK_RETURN_IF(n_cp >= (1u << 20), err, NEXTOK_ERR_INVALID_ARG,
                     "text: over 2^20 characters for the reference recognizer");
    struct ep p = {g, &g->mem, NULL, NULL, NULL, 0};
    p.sets = nextok__calloc(&g->mem, n_cp + 1, sizeof *p.sets);
    p.nullable = nextok__calloc(&g->mem, g->n_rules, sizeof *p.nullable);
    p.alt_ok = nextok__calloc(&g->mem, g->n_el + 1, sizeof *p.alt_ok);
    bool *prod = nextok__calloc(&g->mem, g->n_rules + g->n_el + 1, sizeof *prod);
    nextok_status rc = p.sets && p.nullable && p.alt_ok && prod ? NEXTOK_OK : NEXTOK_ERR_NOMEM;
    if (rc == NEXTOK_OK) {
        find_nullable(g, p.nullable);
        find_productive(g, p.alt_ok, prod, prod + g->n_rules);
        rc = run(&p, text, body, n_cp);
    }
    if (rc == NEXTOK_OK) {
        const struct eset *last = &p.sets[n_cp];
        *viable = tail ? partial_viable(&p, last, t + body, tail) : last->n > 0;
    }
    nextok__free(&g->mem, prod);
    free_run(&p, n_cp + 1);
    return rc == NEXTOK_OK ? NEXTOK_OK : run_error(&p, rc, err);
}
