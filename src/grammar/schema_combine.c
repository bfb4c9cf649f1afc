/*
 * The keywords that become alternatives: a view with anyOf is the union of
 * one view per branch (the branch added to the conjunction); oneOf the same
 * when its branches are provably disjoint (then "exactly one" is "at least
 * one"); if/then/else when `if` only tests the type (two views, split by
 * type); dependentRequired / dependentSchemas / dependencies one view per
 * choice of which keys are present (present: required, with their
 * dependencies; absent: forbidden).
 */
#include "schema_internal.h"

#define MAX_DEPS 8 /* 2^8 views */

/* One alternative: els with els[i].skip |= flag, plus extra[0, n_extra). */
static bool alternative(struct nextok__sch *c, struct nextok__buf *b,
                        const struct nextok__sch_el *els, size_t n, size_t i, uint16_t flag,
                        const struct nextok__sch_el *extra, size_t n_extra)
{
    struct nextok__sch_el el[NEXTOK__SCH_MAX_CONJ];
    if (n + n_extra > NEXTOK__SCH_MAX_CONJ)
        return nextok__sch_fail(c->d, NEXTOK_ERR_LIMIT,
                                "schema: more than %u schemas apply to one value",
                                NEXTOK__SCH_MAX_CONJ);
    memcpy(el, els, n * sizeof *els);
    el[i].skip |= flag;
    if (n_extra) memcpy(el + n, extra, n_extra * sizeof *extra);
    nextok__sch_name name;
    if (!nextok__sch_view(c, el, n + n_extra, name)) return false;
    nextok__sch_fmt(c, b, "%s %s", b->len ? " |" : "", name);
    return true;
}

/* ---- oneOf: disjoint branches ------------------------------------------------------------ */

/* The types node can let through (a superset). */
static unsigned types_of(struct nextok__sch_doc *d, uint32_t node, int depth)
{
    const struct nextok__json *j = &d->json;
    enum nextok__json_type t = nextok__json_type(j, node);
    if (t != NEXTOK__JSON_OBJECT) return t == NEXTOK__JSON_FALSE ? 0 : NEXTOK__ST_ALL;
    unsigned m = NEXTOK__ST_ALL, k;
    if (nextok__sch_get(d, node, "type") != NEXTOK__SCH_NONE && nextok__sch_types(d, node, &k))
        m &= k;
    uint32_t v = nextok__sch_get(d, node, "const");
    if (v != NEXTOK__SCH_NONE) m &= nextok__sch_value_type(d, v);
    v = nextok__sch_get(d, node, "enum");
    if (nextok__json_type(j, v) == NEXTOK__JSON_ARRAY) {
        k = 0;
        for (uint32_t e = nextok__json_first(j, v); e != NEXTOK__SCH_NONE;
             e = nextok__json_next(j, e))
            k |= nextok__sch_value_type(d, e);
        m &= k;
    }
    v = nextok__sch_get(d, node, "not");
    if (v != NEXTOK__SCH_NONE && nextok__sch_type_only(d, v, &k)) m &= ~k;
    if (depth >= 16) return m;
    uint32_t target;
    v = nextok__sch_get(d, node, "$ref");
    if (v != NEXTOK__SCH_NONE && nextok__sch_resolve(d, node, v, &target))
        m &= types_of(d, target, depth + 1);
    v = nextok__sch_get(d, node, "allOf");
    if (nextok__json_type(j, v) == NEXTOK__JSON_ARRAY)
        for (uint32_t e = nextok__json_first(j, v); e != NEXTOK__SCH_NONE;
             e = nextok__json_next(j, e))
            m &= types_of(d, e, depth + 1);
    return m;
}

/* The const node or enum array that lists node's values, else NONE. */
static uint32_t values_of(struct nextok__sch_doc *d, uint32_t node, bool *is_enum, int depth)
{
    uint32_t v = nextok__sch_get(d, node, "const"), target;
    *is_enum = false;
    if (v != NEXTOK__SCH_NONE) return v;
    v = nextok__sch_get(d, node, "enum");
    if (nextok__json_type(&d->json, v) == NEXTOK__JSON_ARRAY) {
        *is_enum = true;
        return v;
    }
    v = nextok__sch_get(d, node, "$ref");
    if (v != NEXTOK__SCH_NONE && depth < 16 && nextok__sch_resolve(d, node, v, &target))
        return values_of(d, target, is_enum, depth + 1);
    return NEXTOK__SCH_NONE;
}

static bool no_common_value(struct nextok__sch_doc *d, uint32_t a, bool a_enum, uint32_t b,
                            bool b_enum)
{
    const struct nextok__json *j = &d->json;
    uint32_t x = a_enum ? nextok__json_first(j, a) : a;
    for (; x != NEXTOK__SCH_NONE; x = a_enum ? nextok__json_next(j, x) : NEXTOK__SCH_NONE) {
        uint32_t y = b_enum ? nextok__json_first(j, b) : b;
        for (; y != NEXTOK__SCH_NONE; y = b_enum ? nextok__json_next(j, y) : NEXTOK__SCH_NONE)
            if (nextok__sch_equal(d, x, y)) return false;
    }
    return true;
}

static bool requires(struct nextok__sch_doc *d, uint32_t node, const char *name, size_t n)
{
    const struct nextok__json *j = &d->json;
    uint32_t r = nextok__sch_get(d, node, "required");
    for (uint32_t e = nextok__json_first(j, r); e != NEXTOK__SCH_NONE;
         e = nextok__json_next(j, e)) {
        size_t m = 0;
        const char *s = nextok__json_str(j, e, &m);
        if (s && m == n && memcmp(s, name, n) == 0) return true;
    }
    return false;
}

/* A property both objects require, with values that differ in every case. */
static bool discriminated(struct nextok__sch_doc *d, uint32_t a, uint32_t b)
{
    const struct nextok__json *j = &d->json;
    uint32_t ra = nextok__sch_get(d, a, "required");
    for (uint32_t e = nextok__json_first(j, ra); e != NEXTOK__SCH_NONE;
         e = nextok__json_next(j, e)) {
        size_t n = 0;
        const char *name = nextok__json_str(j, e, &n);
        if (!name || !requires(d, b, name, n) || strlen(name) != n) continue;
        uint32_t pa = nextok__sch_get(d, nextok__sch_get(d, a, "properties"), name);
        uint32_t pb = nextok__sch_get(d, nextok__sch_get(d, b, "properties"), name);
        bool ea, eb;
        uint32_t va = pa == NEXTOK__SCH_NONE ? pa : values_of(d, pa, &ea, 0);
        uint32_t vb = pb == NEXTOK__SCH_NONE ? pb : values_of(d, pb, &eb, 0);
        if (va != NEXTOK__SCH_NONE && vb != NEXTOK__SCH_NONE && no_common_value(d, va, ea, vb, eb))
            return true;
    }
    return false;
}

static bool disjoint(struct nextok__sch_doc *d, uint32_t a, uint32_t b)
{
    unsigned common = types_of(d, a, 0) & types_of(d, b, 0);
    if (common == 0) return true;
    bool ea, eb;
    uint32_t va = values_of(d, a, &ea, 0), vb = values_of(d, b, &eb, 0);
    if (va != NEXTOK__SCH_NONE && vb != NEXTOK__SCH_NONE && no_common_value(d, va, ea, vb, eb))
        return true;
    return common == NEXTOK__ST_OBJ && nextok__json_type(&d->json, a) == NEXTOK__JSON_OBJECT &&
           nextok__json_type(&d->json, b) == NEXTOK__JSON_OBJECT && discriminated(d, a, b);
}

static bool all_disjoint(struct nextok__sch_doc *d, uint32_t arr)
{
    const struct nextok__json *j = &d->json;
    for (uint32_t x = nextok__json_first(j, arr); x != NEXTOK__SCH_NONE;
         x = nextok__json_next(j, x))
        for (uint32_t y = nextok__json_next(j, x); y != NEXTOK__SCH_NONE;
             y = nextok__json_next(j, y))
            if (!disjoint(d, x, y)) return false;
    return d->rc == NEXTOK_OK;
}

/* ---- the keywords ---------------------------------------------------------------------------- */

static bool branches(struct nextok__sch *c, struct nextok__buf *b, const struct nextok__sch_el *els,
                     size_t n, size_t i, const char *kw, uint16_t flag)
{
    struct nextok__sch_doc *d = c->d;
    const struct nextok__json *j = &d->json;
    uint32_t node = els[i].node, arr = nextok__sch_get(d, node, kw);
    if (nextok__json_type(j, arr) != NEXTOK__JSON_ARRAY || nextok__json_len(j, arr) == 0)
        return nextok__sch_bad(d, node, kw, "must be a non-empty array of schemas");
    if (nextok__json_len(j, arr) > NEXTOK__SCH_MAX_ALTS)
        return nextok__sch_fail(d, NEXTOK_ERR_LIMIT, "schema: %s with more than %u branches", kw,
                                NEXTOK__SCH_MAX_ALTS);
    if (flag == NEXTOK__SKIP_ONEOF && !all_disjoint(d, arr) &&
        !nextok__sch_refuse(d, node, "oneOf",
                            "cannot be enforced: its branches are not provably disjoint"))
        return false;
    for (uint32_t e = nextok__json_first(j, arr); e != NEXTOK__SCH_NONE;
         e = nextok__json_next(j, e)) {
        struct nextok__sch_el x = {e, NEXTOK__SK_NODE, 0};
        if (!alternative(c, b, els, n, i, flag, &x, 1)) return false;
    }
    return true;
}

static bool if_then_else(struct nextok__sch *c, struct nextok__buf *b,
                         const struct nextok__sch_el *els, size_t n, size_t i)
{
    struct nextok__sch_doc *d = c->d;
    uint32_t node = els[i].node;
    uint32_t cond = nextok__sch_get(d, node, "if");
    uint32_t then = nextok__sch_get(d, node, "then"), other = nextok__sch_get(d, node, "else");
    unsigned mask;
    if (!nextok__sch_type_only(d, cond, &mask)) {
        if (d->rc != NEXTOK_OK ||
            !nextok__sch_refuse(d, node, "if",
                                "cannot be enforced (only an `if` that tests the "
                                "type can)"))
            return false;
        return alternative(c, b, els, n, i, NEXTOK__SKIP_IF, NULL, 0);
    }
    for (int k = 0; k < 2; k++) {
        uint32_t s = k == 0 ? then : other;
        struct nextok__sch_el x[2] = {{k == 0 ? mask : NEXTOK__ST_ALL & ~mask, NEXTOK__SK_TYPES, 0},
                                      {s, NEXTOK__SK_NODE, 0}};
        if (!alternative(c, b, els, n, i, NEXTOK__SKIP_IF, x, s == NEXTOK__SCH_NONE ? 1 : 2))
            return false;
    }
    return true;
}

struct dep {
    uint32_t key;  /* string node */
    uint32_t what; /* array of names, or a schema */
    bool names;
};

static bool collect_deps(struct nextok__sch_doc *d, uint32_t node, struct dep *dep, size_t *n)
{
    static const char *const kws[] = {"dependentRequired", "dependentSchemas", "dependencies"};
    const struct nextok__json *j = &d->json;
    for (int k = 0; k < 3; k++) {
        uint32_t o = nextok__sch_get(d, node, kws[k]);
        if (o == NEXTOK__SCH_NONE) continue;
        if (nextok__json_type(j, o) != NEXTOK__JSON_OBJECT)
            return nextok__sch_bad(d, node, kws[k], "must be an object");
        for (uint32_t e = nextok__json_first(j, o); e != NEXTOK__SCH_NONE;
             e = nextok__json_next(j, e)) {
            enum nextok__json_type t = nextok__json_type(j, e + 1);
            bool names = t == NEXTOK__JSON_ARRAY && k != 1;
            bool schema =
                t == NEXTOK__JSON_OBJECT || t == NEXTOK__JSON_TRUE || t == NEXTOK__JSON_FALSE;
            for (uint32_t s = names ? nextok__json_first(j, e + 1) : NEXTOK__SCH_NONE;
                 s != NEXTOK__SCH_NONE; s = nextok__json_next(j, s))
                names = names && nextok__json_type(j, s) == NEXTOK__JSON_STRING;
            if (k == 0 ? !names : k == 1 ? !schema : !names && !schema)
                return nextok__sch_bad(d, node, kws[k],
                                       k == 0   ? "must map names to arrays of names"
                                       : k == 1 ? "must map names to schemas"
                                                : "must map names to arrays of names or schemas");
            if (*n == MAX_DEPS)
                return nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                                        "schema: more than %d dependent keys in one object",
                                        MAX_DEPS);
            dep[(*n)++] = (struct dep){e, e + 1, names};
        }
    }
    return true;
}

static bool dependencies(struct nextok__sch *c, struct nextok__buf *b,
                         const struct nextok__sch_el *els, size_t n, size_t i)
{
    struct nextok__sch_doc *d = c->d;
    const struct nextok__json *j = &d->json;
    struct dep dep[MAX_DEPS];
    size_t nd = 0;
    if (!collect_deps(d, els[i].node, dep, &nd)) return false;
    for (unsigned mask = 0; mask < (1u << nd); mask++) {
        struct nextok__sch_el x[NEXTOK__SCH_MAX_CONJ];
        size_t nx = 0;
        for (size_t k = 0; k < nd; k++) {
            bool on = mask >> k & 1;
            if (nx == NEXTOK__SCH_MAX_CONJ) break;
            x[nx++] =
                (struct nextok__sch_el){dep[k].key, on ? NEXTOK__SK_REQUIRE : NEXTOK__SK_FORBID, 0};
            if (on && !dep[k].names && nx < NEXTOK__SCH_MAX_CONJ)
                x[nx++] = (struct nextok__sch_el){dep[k].what, NEXTOK__SK_NODE, 0};
            for (uint32_t s = on && dep[k].names ? nextok__json_first(j, dep[k].what)
                                                 : NEXTOK__SCH_NONE;
                 s != NEXTOK__SCH_NONE && nx < NEXTOK__SCH_MAX_CONJ; s = nextok__json_next(j, s))
                x[nx++] = (struct nextok__sch_el){s, NEXTOK__SK_REQUIRE, 0};
        }
        if (nx == NEXTOK__SCH_MAX_CONJ)
            return nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                                    "schema: too many dependent names in one object");
        if (!alternative(c, b, els, n, i, NEXTOK__SKIP_DEPS, x, nx)) return false;
    }
    return true;
}

bool nextok__sch_combine(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                         struct nextok__buf *b, bool *done)
{
    struct nextok__sch_doc *d = c->d;
    *done = true;
    for (size_t i = 0; i < n; i++) {
        if (els[i].kind != NEXTOK__SK_NODE) continue;
        uint32_t node = els[i].node;
        uint16_t skip = els[i].skip;
        if (!(skip & NEXTOK__SKIP_ANYOF) && nextok__sch_get(d, node, "anyOf") != NEXTOK__SCH_NONE)
            return branches(c, b, els, n, i, "anyOf", NEXTOK__SKIP_ANYOF);
        if (!(skip & NEXTOK__SKIP_ONEOF) && nextok__sch_get(d, node, "oneOf") != NEXTOK__SCH_NONE)
            return branches(c, b, els, n, i, "oneOf", NEXTOK__SKIP_ONEOF);
        if (!(skip & NEXTOK__SKIP_IF) && nextok__sch_get(d, node, "if") != NEXTOK__SCH_NONE &&
            (nextok__sch_get(d, node, "then") != NEXTOK__SCH_NONE ||
             nextok__sch_get(d, node, "else") != NEXTOK__SCH_NONE))
            return if_then_else(c, b, els, n, i);
        if (!(skip & NEXTOK__SKIP_DEPS) &&
            (nextok__sch_get(d, node, "dependentRequired") != NEXTOK__SCH_NONE ||
             nextok__sch_get(d, node, "dependentSchemas") != NEXTOK__SCH_NONE ||
             nextok__sch_get(d, node, "dependencies") != NEXTOK__SCH_NONE))
            return dependencies(c, b, els, n, i);
    }
    *done = false;
    return true;
}

/* ---- the scope of unevaluated* ------------------------------------------------------------ */

static bool key_is(const struct nextok__json *j, uint32_t key, const char *s)
{
    size_t n = 0;
    const char *k = nextok__json_str(j, key, &n);
    return k && n == strlen(s) && memcmp(k, s, n) == 0;
}

/* Whether e is a branch of m's anyOf / oneOf, its then / else or one of its
 * dependentSchemas. */
static bool branch_of(const struct nextok__sch_doc *d, uint32_t m, uint32_t e)
{
    const struct nextok__json *j = &d->json;
    uint32_t p = d->parent[e];
    if (p == m) return key_is(j, e - 1, "then") || key_is(j, e - 1, "else");
    if (p == NEXTOK__SCH_NONE || d->parent[p] != m) return false;
    return key_is(j, p - 1, "anyOf") || key_is(j, p - 1, "oneOf") ||
           key_is(j, p - 1, "dependentSchemas");
}

static void scope_add(uint32_t *s, size_t *n, uint32_t v)
{
    for (size_t i = 0; i < *n; i++)
        if (s[i] == v) return;
    if (*n < NEXTOK__SCH_MAX_CONJ) s[(*n)++] = v; /* past it: fewer, so stricter */
}

/*
 * The schemas whose annotations an unevaluated* keyword of node sees, as far
 * as they can be known here: node, what its $ref and allOf reach, and the
 * branches of its anyOf / oneOf, then / else and dependentSchemas that the
 * view holds (the view is a conjunction: an instance satisfies each, so each
 * is a successful branch). Leaving one out only makes more properties
 * unevaluated: stricter, never unsound.
 */
static size_t scope(struct nextok__sch_doc *d, uint32_t node, const struct nextok__sch_el *els,
                    size_t n, uint32_t *s)
{
    const struct nextok__json *j = &d->json;
    size_t k = 0;
    scope_add(s, &k, node);
    for (size_t i = 0; i < k && d->rc == NEXTOK_OK; i++) {
        uint32_t m = s[i], ref = nextok__sch_get(d, m, "$ref"), target;
        if (nextok__json_type(j, m) != NEXTOK__JSON_OBJECT) continue;
        if (ref != NEXTOK__SCH_NONE && nextok__sch_resolve(d, m, ref, &target))
            scope_add(s, &k, target);
        uint32_t all = nextok__sch_get(d, m, "allOf");
        for (uint32_t e = nextok__json_first(j, all); e != NEXTOK__SCH_NONE;
             e = nextok__json_next(j, e))
            scope_add(s, &k, e);
        for (size_t e = 0; e < n; e++)
            if (els[e].kind == NEXTOK__SK_NODE && branch_of(d, m, els[e].node))
                scope_add(s, &k, els[e].node);
    }
    return k;
}

/* unevaluatedProperties (items: unevaluatedItems) of node, as the schema
 * properties it does not evaluate (items from *from on) must satisfy: *out,
 * NONE when there is none or every property (item) is evaluated. s / *n_s:
 * node's scope (properties: their `properties` decide). */
bool nextok__sch_unevaluated(struct nextok__sch_doc *d, uint32_t node, bool items,
                             const struct nextok__sch_el *els, size_t n, uint32_t *out, uint32_t *s,
                             size_t *n_s, size_t *from)
{
    const struct nextok__json *j = &d->json;
    uint32_t u = nextok__sch_get(d, node, items ? "unevaluatedItems" : "unevaluatedProperties");
    *out = NEXTOK__SCH_NONE;
    *n_s = 0;
    if (u == NEXTOK__SCH_NONE || nextok__json_type(j, u) == NEXTOK__JSON_TRUE) return true;
    if (nextok__sch_get(d, node, "$dynamicRef") != NEXTOK__SCH_NONE)
        return nextok__sch_refuse(d, node, items ? "unevaluatedItems" : "unevaluatedProperties",
                                  "cannot be enforced next to $dynamicRef");
    *n_s = scope(d, node, els, n, s);
    for (size_t i = 0; i < *n_s; i++) {
        uint32_t m = s[i];
        static const char *const all[2][2] = {{"additionalProperties", "unevaluatedProperties"},
                                              {"items", "unevaluatedItems"}};
        for (int k = 0; k < 2; k++) {
            uint32_t v = nextok__sch_get(d, m, all[items][k]);
            bool everything = v != NEXTOK__SCH_NONE && (k == 0 || m != node);
            if (items && k == 0 && nextok__json_type(j, v) == NEXTOK__JSON_ARRAY) { /* draft-07 */
                if (nextok__json_len(j, v) > *from) *from = nextok__json_len(j, v);
                everything = nextok__sch_get(d, m, "additionalItems") != NEXTOK__SCH_NONE;
            }
            if (everything) return true;
        }
        uint32_t pre = nextok__sch_get(d, m, "prefixItems");
        if (items && nextok__json_len(j, pre) > *from) *from = nextok__json_len(j, pre);
    }
    *out = u;
    return d->rc == NEXTOK_OK;
}
