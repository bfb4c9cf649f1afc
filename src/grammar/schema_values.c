/*
 * Strings with length bounds, and values: their canonical JSON spelling (for
 * enum and const), equality as JSON values, and the check of candidate values
 * against a schema (a grammar of its own, written through the document's
 * build pointer: see struct nextok__sch_doc).
 *
 * String characters: any character but '"', '\' and U+0000-U+001F as it is,
 * or an escape: \" \\ \/ \b \f \n \r \t, or \uXXXX of a code point that is
 * not a surrogate. Each is one code point, so minLength / maxLength (which
 * count code points) are counts of this rule ("jc", schema_base.c);
 * characters outside the BMP are written as themselves, never as a surrogate
 * pair.
 */
#include "schema_internal.h"

#include <stdio.h>

/* ---- strings ------------------------------------------------------------------------- */

bool nextok__sch_string(struct nextok__sch *c, struct nextok__buf *b, uint64_t min, uint64_t max)
{
    if (max < min) return false;
    if (min == 0 && max == UINT64_MAX) {
        nextok__sch_fmt(c, b, " %s", nextok__sch_helper(c, "js"));
        return true;
    }
    const char *jc = nextok__sch_helper(c, "jc");
    struct nextok__buf r = nextok__buf_of(c->d->mem);
    nextok__sch_put(c, &r, " \"\\\"\"");
    nextok__sch_rep(c, &r, jc, min, max);
    nextok__sch_put(c, &r, " \"\\\"\"");
    nextok__sch_name name;
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &r);
    nextok__sch_fmt(c, b, " %s", name);
    return true;
}

void nextok__sch_json_string(struct nextok__sch *c, struct nextok__buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    nextok__sch_put(c, b, "\"");
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') {
            run++;
            continue;
        }
        nextok__sch_putn(c, b, s + i - run, run);
        run = 0;
        const char *short_esc = ch == '"'    ? "\\\""
                                : ch == '\\' ? "\\\\"
                                : ch == '\b' ? "\\b"
                                : ch == '\f' ? "\\f"
                                : ch == '\n' ? "\\n"
                                : ch == '\r' ? "\\r"
                                : ch == '\t' ? "\\t"
                                             : NULL;
        char u[7] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15], 0};
        nextok__sch_put(c, b, short_esc ? short_esc : u);
    }
    if (run) nextok__sch_putn(c, b, s + n - run, run); /* s may be NULL when n is 0 */
    nextok__sch_put(c, b, "\"");
}

/* ---- values -------------------------------------------------------------------------- */

bool nextok__sch_same_str(const struct nextok__json *j, uint32_t a, uint32_t b)
{
    size_t n = 0, m = 0;
    const char *s = nextok__json_str(j, a, &n), *t = nextok__json_str(j, b, &m);
    return n == m && memcmp(s, t, n) == 0;
}

/* The member of obj (an object node) named like string node str. */
uint32_t nextok__sch_member(const struct nextok__json *j, uint32_t obj, uint32_t str)
{
    uint32_t found = NEXTOK__SCH_NONE;
    for (uint32_t k = nextok__json_first(j, obj); k != NEXTOK__SCH_NONE;
         k = nextok__json_next(j, k))
        if (nextok__sch_same_str(j, k, str)) found = k + 1;
    return found;
}

/* Whether key k of its object is followed by a member of the same name (the
 * last one counts, as the reader's lookups have it). */
static bool shadowed(const struct nextok__json *j, uint32_t k)
{
    size_t n = 0, m = 0;
    const char *s = nextok__json_str(j, k, &n);
    for (uint32_t o = nextok__json_next(j, k); o != NEXTOK__SCH_NONE; o = nextok__json_next(j, o)) {
        const char *t = nextok__json_str(j, o, &m);
        if (m == n && memcmp(s, t, n) == 0) return true;
    }
    return false;
}

/* The JSON text of v; ws: put whitespace rules between tokens (GBNF) or not
 * (plain text). GBNF mode writes scalars as literals. */
static void value(struct nextok__sch *c, struct nextok__buf *b, uint32_t v, bool gbnf)
{
    const struct nextok__json *j = &c->d->json;
    enum nextok__json_type t = nextok__json_type(j, v);
    if (t == NEXTOK__JSON_ARRAY || t == NEXTOK__JSON_OBJECT) {
        bool obj = t == NEXTOK__JSON_OBJECT;
        const char *open = obj ? "{" : "[", *close = obj ? "}" : "]";
        if (gbnf)
            nextok__sch_lit(c, b, open, 1), nextok__sch_ws(c, b);
        else
            nextok__sch_put(c, b, open);
        bool first = true;
        for (uint32_t e = nextok__json_first(j, v); e != NEXTOK__SCH_NONE;
             e = nextok__json_next(j, e)) {
            if (obj && shadowed(j, e)) continue;
            if (!first && gbnf)
                nextok__sch_lit(c, b, ",", 1), nextok__sch_ws(c, b);
            else if (!first)
                nextok__sch_put(c, b, ",");
            first = false;
            if (obj) {
                value(c, b, e, gbnf);
                if (gbnf)
                    nextok__sch_ws(c, b), nextok__sch_lit(c, b, ":", 1), nextok__sch_ws(c, b);
                else
                    nextok__sch_put(c, b, ":");
            }
            value(c, b, obj ? e + 1 : e, gbnf);
            if (gbnf) nextok__sch_ws(c, b);
        }
        if (gbnf)
            nextok__sch_lit(c, b, close, 1);
        else
            nextok__sch_put(c, b, close);
        return;
    }
    struct nextok__buf text = nextok__buf_of(c->d->mem), *o = gbnf ? &text : b;
    size_t n = 0;
    const char *s;
    struct nextok__dec dv;
    switch (t) {
    case NEXTOK__JSON_NULL: nextok__sch_put(c, o, "null"); break;
    case NEXTOK__JSON_TRUE: nextok__sch_put(c, o, "true"); break;
    case NEXTOK__JSON_FALSE: nextok__sch_put(c, o, "false"); break;
    case NEXTOK__JSON_STRING:
        s = nextok__json_str(j, v, &n);
        nextok__sch_json_string(c, o, s, n);
        break;
    default:
        if (nextok__sch_dec(c->d, v, &dv)) nextok__sch_dec_text(c, o, &dv);
        break;
    }
    if (gbnf) nextok__sch_lit(c, b, text.data ? text.data : "", text.len);
    nextok__buf_free(&text);
}

void nextok__sch_json_text(struct nextok__sch *c, struct nextok__buf *b, uint32_t v)
{
    value(c, b, v, false);
}

void nextok__sch_value_gbnf(struct nextok__sch *c, struct nextok__buf *b, uint32_t v)
{
    if (c->d->sp.whitespace != NEXTOK_JSON_WS_FLEXIBLE) {
        struct nextok__buf text = nextok__buf_of(c->d->mem);
        value(c, &text, v, false);
        nextok__sch_lit(c, b, text.data ? text.data : "", text.len);
        nextok__buf_free(&text);
        return;
    }
    value(c, b, v, true);
}

static bool is_number(enum nextok__json_type t)
{
    return t == NEXTOK__JSON_INT || t == NEXTOK__JSON_REAL;
}

unsigned nextok__sch_value_type(struct nextok__sch_doc *d, uint32_t v)
{
    struct nextok__dec x;
    switch (nextok__json_type(&d->json, v)) {
    case NEXTOK__JSON_NULL: return NEXTOK__ST_NULL;
    case NEXTOK__JSON_TRUE:
    case NEXTOK__JSON_FALSE: return NEXTOK__ST_BOOL;
    case NEXTOK__JSON_STRING: return NEXTOK__ST_STR;
    case NEXTOK__JSON_ARRAY: return NEXTOK__ST_ARR;
    case NEXTOK__JSON_OBJECT: return NEXTOK__ST_OBJ;
    default:
        if (!nextok__sch_dec(d, v, &x)) return 0;
        return nextok__dec_is_int(&x) ? NEXTOK__ST_INT : NEXTOK__ST_FRAC;
    }
}

static bool equal_objects(struct nextok__sch_doc *d, uint32_t a, uint32_t b)
{
    const struct nextok__json *j = &d->json;
    size_t na = 0, nb = 0;
    for (uint32_t k = nextok__json_first(j, a); k != NEXTOK__SCH_NONE;
         k = nextok__json_next(j, k)) {
        if (shadowed(j, k)) continue;
        na++;
        uint32_t other = nextok__sch_member(j, b, k);
        if (other == NEXTOK__SCH_NONE || !nextok__sch_equal(d, k + 1, other)) return false;
    }
    for (uint32_t k = nextok__json_first(j, b); k != NEXTOK__SCH_NONE; k = nextok__json_next(j, k))
        nb += !shadowed(j, k);
    return na == nb;
}

bool nextok__sch_equal(struct nextok__sch_doc *d, uint32_t a, uint32_t b)
{
    const struct nextok__json *j = &d->json;
    enum nextok__json_type ta = nextok__json_type(j, a), tb = nextok__json_type(j, b);
    if (is_number(ta) && is_number(tb)) {
        struct nextok__dec x, y;
        return nextok__sch_dec(d, a, &x) && nextok__sch_dec(d, b, &y) &&
               nextok__dec_cmp(&x, &y) == 0;
    }
    if (ta != tb) return false;
    size_t na = 0, nb = 0;
    if (ta == NEXTOK__JSON_STRING) {
        const char *x = nextok__json_str(j, a, &na), *y = nextok__json_str(j, b, &nb);
        return na == nb && memcmp(x, y, na) == 0;
    }
    if (ta == NEXTOK__JSON_OBJECT) return equal_objects(d, a, b);
    if (ta != NEXTOK__JSON_ARRAY) return true;
    if (nextok__json_len(j, a) != nextok__json_len(j, b)) return false;
    for (uint32_t x = nextok__json_first(j, a), y = nextok__json_first(j, b); x != NEXTOK__SCH_NONE;
         x = nextok__json_next(j, x), y = nextok__json_next(j, y))
        if (!nextok__sch_equal(d, x, y)) return false;
    return true;
}

/* ---- checking values against a schema ---------------------------------------------------- */

static bool same_view(const struct nextok__sch_el *a, uint32_t na, const struct nextok__sch_el *b,
                      size_t nb)
{
    return na == nb && memcmp(a, b, nb * sizeof *a) == 0;
}

bool nextok__sch_check(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                       const struct nextok__buf *texts, size_t n_texts, bool *keep)
{
    struct nextok__sch_doc *d = c->d;
    for (int i = 0; i < d->nest; i++) {
        if (!same_view(d->checking[i], d->n_checking[i], els, n)) continue;
        uint32_t node = els[0].kind == NEXTOK__SK_NODE ? els[0].node : 0;
        return nextok__sch_refuse(d, node, "enum",
                                  "cannot be enforced: its schema refers back to itself");
    }
    if (d->nest >= NEXTOK__SCH_MAX_NEST)
        return nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                                "schema: enum / const nested more than %d deep in schemas "
                                "that need a check of their values",
                                NEXTOK__SCH_MAX_NEST);
    d->checking[d->nest] = els;
    d->n_checking[d->nest] = (uint32_t)n;
    d->nest++;
    struct nextok__sch s;
    memset(&s, 0, sizeof s);
    s.d = d;
    s.out = nextok__buf_of(d->mem);
    struct nextok_grammar *g = NULL;
    struct nextok__buf text = nextok__buf_of(d->mem);
    if (d->build(&s, els, n, &text)) nextok__sch_compile(d, &text, &g);
    for (size_t i = 0; g && i < n_texts && d->rc == NEXTOK_OK; i++) {
        bool yes = false;
        struct nextok_error e;
        nextok_status st =
            nextok_grammar_accepts(g, texts[i].data ? texts[i].data : "", texts[i].len, &yes, &e);
        if (st == NEXTOK_ERR_NOMEM) nextok__sch_nomem(d);
        keep[i] = keep[i] && st == NEXTOK_OK && yes; /* past the work limit: left out */
    }
    nextok_grammar_free(g);
    nextok__buf_free(&text);
    nextok__sch_free(&s);
    d->nest--;
    return d->rc == NEXTOK_OK;
}
