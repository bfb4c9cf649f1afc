/*
 * One view's body once nothing is left to distribute: the keywords of its
 * schemas merged (types intersected, the tightest bounds, every enum and
 * const), then either the allowed values (enum / const: each candidate that
 * equals a value of every other enum / const, has an allowed type and, when
 * other keywords constrain it, passes a grammar of the rest of the view), or
 * one branch per allowed type, each with that type's keywords.
 *
 * The number branch: bounds through schema_ranges.c, multipleOf as a
 * remainder automaton or a limit on fraction digits. Spellings accepted:
 * integers as -?(0|[1-9][0-9]*) (no "-0" where a range is enforced); numbers
 * with bounds or multipleOf without an exponent (1e2 is refused where 100 is
 * accepted: incomplete, never unsound); unconstrained numbers in every RFC
 * 8259 spelling.
 */
#include "schema_internal.h"

#include <stdio.h>

#define MAX_CHECKED (1u << 20) /* bytes of enum values checked by the recognizer */

struct merged {
    unsigned types;
    uint32_t vals[2 * NEXTOK__SCH_MAX_CONJ]; /* const values, enum arrays */
    bool val_enum[2 * NEXTOK__SCH_MAX_CONJ];
    size_t n_vals;
    uint64_t min_len, max_len;
    uint32_t min_len_node, max_len_node;
    uint32_t pattern, pattern_node, format, format_node;
    struct nextok__sch_num num;
    bool constrained; /* keywords beyond type, enum and const */
};

static bool is_number(const struct nextok__sch_doc *d, uint32_t v)
{
    enum nextok__json_type t = nextok__json_type(&d->json, v);
    return t == NEXTOK__JSON_INT || t == NEXTOK__JSON_REAL;
}

/* A bound of node from keyword kw (value v), open or closed. */
static bool bound(struct nextok__sch_doc *d, struct nextok__sch_bound *b, bool lower, uint32_t node,
                  const char *kw, uint32_t v, bool open)
{
    struct nextok__dec x;
    if (!is_number(d, v)) return nextok__sch_bad(d, node, kw, "must be a number");
    if (!nextok__sch_dec(d, v, &x)) return false;
    int k = b->has ? nextok__dec_cmp(&x, &b->v) : 0;
    if (!b->has || (lower ? k > 0 : k < 0) || (k == 0 && open)) {
        b->has = true;
        b->open = open;
        b->node = v;
        b->v = x;
    }
    return true;
}

static bool bounds(struct nextok__sch_doc *d, struct nextok__sch_num *nm, uint32_t node)
{
    static const char *const kw[2][2] = {{"minimum", "exclusiveMinimum"},
                                         {"maximum", "exclusiveMaximum"}};
    for (int side = 0; side < 2; side++) {
        struct nextok__sch_bound *b = side == 0 ? &nm->lo : &nm->hi;
        uint32_t v = nextok__sch_get(d, node, kw[side][0]);
        uint32_t x = nextok__sch_get(d, node, kw[side][1]);
        enum nextok__json_type tx = nextok__json_type(&d->json, x);
        bool draft4 = tx == NEXTOK__JSON_TRUE || tx == NEXTOK__JSON_FALSE;
        if (v != NEXTOK__SCH_NONE &&
            !bound(d, b, side == 0, node, kw[side][0], v, tx == NEXTOK__JSON_TRUE))
            return false;
        if (x != NEXTOK__SCH_NONE && !draft4 && !bound(d, b, side == 0, node, kw[side][1], x, true))
            return false;
    }
    uint32_t m = nextok__sch_get(d, node, "multipleOf");
    if (m == NEXTOK__SCH_NONE) return true;
    struct nextok__dec x;
    if (!is_number(d, m)) return nextok__sch_bad(d, node, "multipleOf", "must be a number > 0");
    if (!nextok__sch_dec(d, m, &x)) return false;
    if (x.neg || x.n == 0) return nextok__sch_bad(d, node, "multipleOf", "must be a number > 0");
    if (nm->has_mult && nextok__dec_cmp(&x, &nm->mult) != 0) { /* multiples of both: of their lcm */
        struct nextok__dec l;
        if (!nextok__dec_lcm(&x, &nm->mult, &l))
            return nextok__sch_refuse(d, node, "multipleOf",
                                      "cannot be enforced together with another multipleOf");
        x = l;
    }
    nm->has_mult = true;
    nm->mult_node = node;
    nm->mult = x;
    return true;
}

/* pattern or format: one string per view (two cannot be intersected). */
static bool one_string(struct nextok__sch_doc *d, uint32_t node, const char *kw, uint32_t *have,
                       uint32_t *have_node)
{
    uint32_t v = nextok__sch_get(d, node, kw);
    if (v == NEXTOK__SCH_NONE) return true;
    if (nextok__json_type(&d->json, v) != NEXTOK__JSON_STRING)
        return nextok__sch_bad(d, node, kw, "must be a string");
    if (*have != NEXTOK__SCH_NONE && !nextok__sch_equal(d, *have, v))
        return nextok__sch_refuse(d, node, kw, "cannot be enforced together with another one");
    if (*have == NEXTOK__SCH_NONE) *have = v, *have_node = node;
    return true;
}

static const char *const constraining[] = {"minLength",
                                           "maxLength",
                                           "pattern",
                                           "format",
                                           "minimum",
                                           "maximum",
                                           "exclusiveMinimum",
                                           "exclusiveMaximum",
                                           "multipleOf",
                                           "properties",
                                           "required",
                                           "additionalProperties",
                                           "patternProperties",
                                           "minProperties",
                                           "maxProperties",
                                           "propertyNames",
                                           "unevaluatedProperties",
                                           "items",
                                           "prefixItems",
                                           "additionalItems",
                                           "minItems",
                                           "maxItems",
                                           "uniqueItems",
                                           "contains",
                                           "unevaluatedItems"};

static bool merge_node(struct nextok__sch_doc *d, struct merged *m, struct nextok__sch_el e)
{
    const struct nextok__json *j = &d->json;
    uint32_t node = e.node, v;
    unsigned mask;
    if (nextok__json_type(j, node) != NEXTOK__JSON_OBJECT) return true;
    if (nextok__sch_get(d, node, "type") != NEXTOK__SCH_NONE) {
        if (!nextok__sch_types(d, node, &mask)) return false;
        m->types &= mask;
    }
    if ((v = nextok__sch_get(d, node, "not")) != NEXTOK__SCH_NONE) {
        if (nextok__sch_type_only(d, v, &mask))
            m->types &= ~mask;
        else if (d->rc != NEXTOK_OK || !nextok__sch_refuse(d, node, "not", NULL))
            return false;
    }
    if (!(e.skip & NEXTOK__SKIP_VALUES)) {
        if ((v = nextok__sch_get(d, node, "const")) != NEXTOK__SCH_NONE)
            m->vals[m->n_vals] = v, m->val_enum[m->n_vals++] = false;
        if ((v = nextok__sch_get(d, node, "enum")) != NEXTOK__SCH_NONE) {
            if (nextok__json_type(j, v) != NEXTOK__JSON_ARRAY)
                return nextok__sch_bad(d, node, "enum", "must be an array");
            m->vals[m->n_vals] = v, m->val_enum[m->n_vals++] = true;
        }
    }
    uint64_t len = UINT64_MAX;
    if (!nextok__sch_count(d, node, "maxLength", &len)) return false;
    if (len < m->max_len) m->max_len = len, m->max_len_node = node;
    len = 0;
    if (!nextok__sch_count(d, node, "minLength", &len)) return false;
    if (len > m->min_len) m->min_len = len, m->min_len_node = node;
    if (!one_string(d, node, "pattern", &m->pattern, &m->pattern_node) ||
        !one_string(d, node, "format", &m->format, &m->format_node) || !bounds(d, &m->num, node))
        return false;
    for (size_t i = 0; i < sizeof constraining / sizeof constraining[0] && !m->constrained; i++)
        m->constrained = nextok__sch_get(d, node, constraining[i]) != NEXTOK__SCH_NONE;
    return true;
}

/* ---- values ------------------------------------------------------------------------------- */

static bool in_set(struct nextok__sch_doc *d, uint32_t x, uint32_t set, bool is_enum)
{
    const struct nextok__json *j = &d->json;
    if (!is_enum) return nextok__sch_equal(d, x, set);
    for (uint32_t y = nextok__json_first(j, set); y != NEXTOK__SCH_NONE;
         y = nextok__json_next(j, y))
        if (nextok__sch_equal(d, x, y)) return true;
    return false;
}

static bool values(struct nextok__sch *c, struct nextok__buf *b, const struct nextok__sch_el *els,
                   size_t n, const struct merged *m)
{
    struct nextok__sch_doc *d = c->d;
    const struct nextok__json *j = &d->json;
    uint32_t first = m->val_enum[0] ? nextok__json_first(j, m->vals[0]) : m->vals[0];
    size_t n_cand = m->val_enum[0] ? nextok__json_len(j, m->vals[0]) : 1;
    uint32_t *cand = nextok__alloc_array(d->mem, n_cand ? n_cand : 1, sizeof *cand);
    bool *keep = nextok__alloc_array(d->mem, n_cand ? n_cand : 1, sizeof *keep);
    struct nextok__buf *texts = nextok__calloc(d->mem, n_cand ? n_cand : 1, sizeof *texts);
    if (!cand || !keep || !texts) nextok__sch_nomem(d);
    size_t k = 0, checked = 0;
    for (uint32_t x = first; d->rc == NEXTOK_OK && x != NEXTOK__SCH_NONE;
         x = m->val_enum[0] ? nextok__json_next(j, x) : NEXTOK__SCH_NONE) {
        bool ok = (nextok__sch_value_type(d, x) & m->types) != 0;
        for (size_t i = 1; ok && i < m->n_vals; i++) ok = in_set(d, x, m->vals[i], m->val_enum[i]);
        if (!ok) continue;
        cand[k] = x;
        keep[k] = true;
        texts[k] = nextok__buf_of(d->mem);
        if (m->constrained) nextok__sch_json_text(c, &texts[k], x);
        checked += texts[k].len;
        k++;
    }
    if (checked > MAX_CHECKED) /* the recognizer's work grows with the text */
        nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                         "schema: enum values of more than %u bytes to check against their schema",
                         MAX_CHECKED);
    if (d->rc == NEXTOK_OK && k > 0 && m->constrained) {
        struct nextok__sch_el rest[NEXTOK__SCH_MAX_CONJ];
        for (size_t i = 0; i < n; i++) {
            rest[i] = els[i];
            if (rest[i].kind == NEXTOK__SK_NODE) rest[i].skip |= NEXTOK__SKIP_VALUES;
        }
        nextok__sch_check(c, rest, n, texts, k, keep);
    }
    for (size_t i = 0; i < k && d->rc == NEXTOK_OK; i++) {
        if (!keep[i]) continue;
        if (b->len) nextok__sch_put(c, b, " |");
        nextok__sch_value_gbnf(c, b, cand[i]);
    }
    for (size_t i = 0; texts && i < k; i++) nextok__buf_free(&texts[i]);
    nextok__free(d->mem, cand);
    nextok__free(d->mem, keep);
    nextok__free(d->mem, texts);
    return d->rc == NEXTOK_OK;
}

/* ---- the number branch -------------------------------------------------------------------- */

/* Integers divisible by k (2 <= k <= 10000): a remainder automaton. */
static void multiples(struct nextok__sch *c, struct nextok__buf *b, uint32_t k)
{
    nextok__sch_name *st = nextok__calloc(c->d->mem, k, sizeof *st);
    if (!st) {
        nextok__sch_nomem(c->d);
        return;
    }
    for (uint32_t r = 0; r < k; r++) nextok__sch_newname(c, st[r]);
    for (uint32_t r = 0; r < k; r++) {
        struct nextok__buf body = nextok__buf_of(c->d->mem);
        const char *sep = r == 0 ? (nextok__sch_put(c, &body, " \"\""), " |") : "";
        for (int ch = 0; ch <= 9; ch++) {
            nextok__sch_fmt(c, &body, "%s \"%d\" %s", sep, ch, st[(10 * r + (uint32_t)ch) % k]);
            sep = " |";
        }
        nextok__sch_rule(c, st[r], &body);
    }
    struct nextok__buf top = nextok__buf_of(c->d->mem);
    nextok__sch_name mag, name;
    for (int ch = 1; ch <= 9; ch++)
        nextok__sch_fmt(c, &top, "%s \"%d\" %s", ch > 1 ? " |" : "", ch, st[(uint32_t)ch % k]);
    nextok__sch_newname(c, mag);
    nextok__sch_rule(c, mag, &top);
    top = nextok__buf_of(c->d->mem);
    nextok__sch_fmt(c, &top, " \"0\" | %s | \"-\" %s", mag, mag);
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &top);
    nextok__sch_fmt(c, b, " %s", name);
    nextok__free(c->d->mem, st);
}

/* multipleOf m = p * 10^-s: *k the divisor it puts on integers (0: too
 * large), *p1 whether p is 1, *s. */
static void multiple_of(const struct nextok__dec *m, uint64_t *k, bool *p1, uint32_t *s)
{
    *k = 0;
    *p1 = m->n == 1 && m->d[0] == '1' && m->e <= 0;
    *s = m->e < 0 ? (uint32_t)(-m->e < 100000 ? -m->e : 100000) : 0;
    if (m->n > 18 || m->e > 18) return;
    uint64_t p = 0;
    for (uint32_t i = 0; i < m->n; i++) p = p * 10 + (uint64_t)(m->d[i] - '0');
    for (int64_t i = 0; i < m->e; i++) {
        if (p > UINT64_MAX / 10) return;
        p *= 10;
    }
    for (uint32_t i = 0; i < *s && p % 2 == 0; i++) p /= 2;
    for (uint32_t i = 0; i < *s && p % 5 == 0; i++) p /= 5;
    *k = p;
}

bool nextok__sch_number(struct nextok__sch *c, struct nextok__buf *b, unsigned types,
                        struct nextok__sch_num *nm)
{
    bool int_only = !(types & NEXTOK__ST_FRAC), bounded = nm->lo.has || nm->hi.has;
    uint64_t k = 1;
    uint32_t lim = UINT32_MAX;
    if (nm->has_mult) {
        bool p1;
        uint32_t s;
        multiple_of(&nm->mult, &k, &p1, &s);
        if (!int_only && p1)
            lim = s, k = 1; /* at most s digits after the point */
        else
            int_only = true; /* integers divisible by k: a part of the set */
        if (k != 1 && (bounded || k == 0 || k > 10000)) {
            if (!nextok__sch_refuse(c->d, nm->mult_node, "multipleOf",
                                    bounded ? "cannot be enforced together with bounds"
                                            : "cannot be enforced (divisor too large)"))
                return false;
            k = 1; /* lenient: ignored */
        }
    }
    if (!(types & NEXTOK__ST_INT)) { /* non-integers only: a nonzero digit after the point */
        if (bounded || nm->has_mult)
            return nextok__sch_refuse(c->d,
                                      nm->has_mult
                                          ? nm->mult_node
                                          : c->d->parent[nm->lo.has ? nm->lo.node : nm->hi.node],
                                      "type",
                                      "cannot be enforced: non-integer numbers with bounds "
                                      "or multipleOf") &&
                   false;
        nextok__sch_fmt(c, b, " \"-\"? %s \".\" \"0\"* [1-9] [0-9]*", nextok__sch_helper(c, "ju"));
        return true;
    }
    if (int_only) {
        if (k > 1) {
            multiples(c, b, (uint32_t)k);
            return c->d->rc == NEXTOK_OK;
        }
        if (!bounded) {
            nextok__sch_fmt(c, b, " %s", nextok__sch_helper(c, "ji"));
            return true;
        }
        return nextok__sch_int_bounds(c, b, nm);
    }
    if (!bounded && lim == UINT32_MAX) {
        nextok__sch_fmt(c, b, " %s", nextok__sch_helper(c, "jn"));
        return true;
    }
    static const struct nextok__dec zero; /* 0 */
    struct nextok__sch_bound *lo = &nm->lo, *hi = &nm->hi;
    struct nextok__buf r = nextok__buf_of(c->d->mem);
    bool any = false;
    if (!hi->has || !hi->v.neg) /* 0 and up */
        any |= nextok__sch_magnitudes(c, &r, lo->has && !lo->v.neg ? &lo->v : &zero,
                                      lo->has && !lo->v.neg && lo->open, lo->node,
                                      hi->has ? &hi->v : NULL, hi->open, hi->node, lim);
    if (c->d->rc == NEXTOK_OK && (!lo->has || lo->v.neg)) { /* below 0: the magnitude after "-" */
        struct nextok__dec m1, m2;
        const struct nextok__dec *mlo = &zero, *mhi = NULL;
        bool mlo_open = true;
        if (hi->has && hi->v.neg) m1 = hi->v, m1.neg = false, mlo = &m1, mlo_open = hi->open;
        if (lo->has) m2 = lo->v, m2.neg = false, mhi = &m2;
        struct nextok__buf neg = nextok__buf_of(c->d->mem);
        if (nextok__sch_magnitudes(c, &neg, mlo, mlo_open, hi->node, mhi, lo->open, lo->node,
                                   lim)) {
            nextok__sch_fmt(c, &r, "%s \"-\"", any ? " |" : "");
            nextok__sch_putn(c, &r, neg.data, neg.len);
            any = true;
        }
        nextok__buf_free(&neg);
    }
    if (!any || c->d->rc != NEXTOK_OK) {
        nextok__buf_free(&r);
        return false;
    }
    nextok__sch_name name;
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &r);
    nextok__sch_fmt(c, b, " %s", name);
    return true;
}

/* ---- types -------------------------------------------------------------------------------- */

/* The body of the strings pattern or format allow (into body); *lo / *hi
 * their lengths. false with *have unset: no pattern or format (or left out). */
static bool pattern_or_format(struct nextok__sch *c, struct nextok__buf *body, struct merged *m,
                              uint64_t *lo, uint64_t *hi, const char **with, bool *have)
{
    bool ignored = false;
    *have = false;
    if (m->pattern != NEXTOK__SCH_NONE) {
        if (!nextok__sch_pattern(c, body, m->pattern_node, m->pattern, &ignored) && !ignored)
            return false;
        *have = !ignored;
    }
    if (m->format != NEXTOK__SCH_NONE && *have)
        return nextok__sch_refuse(c->d, m->format_node, "format",
                                  "cannot be enforced together with pattern");
    if (m->format == NEXTOK__SCH_NONE) return true;
    ignored = false;
    if (!nextok__sch_format(c, body, m->format_node, m->format, lo, hi, &ignored) && !ignored)
        return false;
    *have = !ignored;
    *with = "format";
    return true;
}

static bool strings(struct nextok__sch *c, struct nextok__buf *b, struct merged *m)
{
    struct nextok__sch_doc *d = c->d;
    struct nextok__buf body = nextok__buf_of(d->mem);
    uint64_t lo = 0, hi = UINT64_MAX; /* lengths the body's strings have */
    const char *with = "pattern";
    bool have = false, ok = pattern_or_format(c, &body, m, &lo, &hi, &with, &have);
    if (ok && !have)
        ok = nextok__sch_string(c, b, m->min_len, m->max_len);
    else if (ok && (m->max_len < lo || m->min_len > hi || m->min_len > m->max_len))
        ok = false; /* no string fits */
    else if (ok) {
        char why[64];
        snprintf(why, sizeof why, "cannot be enforced together with %s", with);
        ok = (m->min_len <= lo || nextok__sch_refuse(d, m->min_len_node, "minLength", why)) &&
             (m->max_len >= hi || nextok__sch_refuse(d, m->max_len_node, "maxLength", why));
        if (ok) {
            nextok__sch_put(c, b, " \"\\\"\"");
            nextok__sch_putn(c, b, body.data, body.len);
            nextok__sch_put(c, b, " \"\\\"\"");
        }
    }
    nextok__buf_free(&body);
    return ok && d->rc == NEXTOK_OK;
}

/* Append alternative alt (" ..." text) to b when it is not empty. */
static void add_alt(struct nextok__sch *c, struct nextok__buf *b, struct nextok__buf *alt, bool ok)
{
    if (ok && c->d->rc == NEXTOK_OK) {
        if (b->len) nextok__sch_put(c, b, " |");
        nextok__sch_putn(c, b, alt->data, alt->len);
    }
    nextok__buf_free(alt);
}

bool nextok__sch_write(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                       struct nextok__buf *b)
{
    struct nextok__sch_doc *d = c->d;
    struct merged m;
    memset(&m, 0, sizeof m);
    m.types = NEXTOK__ST_ALL;
    m.max_len = UINT64_MAX;
    m.pattern = m.format = NEXTOK__SCH_NONE;
    for (size_t i = 0; i < n && d->rc == NEXTOK_OK; i++) {
        if (els[i].kind == NEXTOK__SK_TYPES)
            m.types &= els[i].node;
        else if (els[i].kind != NEXTOK__SK_NODE)
            m.constrained = true;
        else
            merge_node(d, &m, els[i]);
    }
    if (d->rc != NEXTOK_OK) return false;
    if (m.n_vals > 0) return values(c, b, els, n, &m);
    struct nextok__buf alt;
    if (m.types & NEXTOK__ST_NULL) nextok__sch_put(c, b, " \"null\"");
    if (m.types & NEXTOK__ST_BOOL)
        nextok__sch_put(c, b, b->len ? " | \"true\" | \"false\"" : " \"true\" | \"false\"");
    if (m.types & NEXTOK__ST_STR) {
        alt = nextok__buf_of(d->mem);
        add_alt(c, b, &alt, strings(c, &alt, &m));
    }
    if (m.types & (NEXTOK__ST_INT | NEXTOK__ST_FRAC)) {
        alt = nextok__buf_of(d->mem);
        add_alt(c, b, &alt,
                nextok__sch_number(c, &alt, m.types & (NEXTOK__ST_INT | NEXTOK__ST_FRAC), &m.num));
    }
    if (m.types & NEXTOK__ST_OBJ) {
        alt = nextok__buf_of(d->mem);
        add_alt(c, b, &alt, nextok__sch_object(c, &alt, els, n));
    }
    if (m.types & NEXTOK__ST_ARR) {
        alt = nextok__buf_of(d->mem);
        add_alt(c, b, &alt, nextok__sch_array(c, &alt, els, n));
    }
    return d->rc == NEXTOK_OK;
}
