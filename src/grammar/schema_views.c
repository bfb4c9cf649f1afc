/*
 * Keywords and views. A view is a conjunction of schema nodes and virtual
 * constraints (a type mask, a required or forbidden name), with $ref and allOf
 * expanded into it and the schemas that add nothing left out; sorted, it is
 * the key under which its rule is written once.
 */
#include "schema_internal.h"

#include <stdio.h>

/* ---- keywords --------------------------------------------------------------------------- */

static const char *const type_names[] = {"null",   "boolean", "object", "array",
                                         "string", "integer", "number"};
static const unsigned type_bits[] = {NEXTOK__ST_NULL,
                                     NEXTOK__ST_BOOL,
                                     NEXTOK__ST_OBJ,
                                     NEXTOK__ST_ARR,
                                     NEXTOK__ST_STR,
                                     NEXTOK__ST_INT,
                                     NEXTOK__ST_INT | NEXTOK__ST_FRAC};

static bool one_type(struct nextok__sch_doc *d, uint32_t node, uint32_t v, unsigned *mask)
{
    size_t n = 0;
    const char *s = nextok__json_str(&d->json, v, &n);
    for (size_t i = 0; s && i < 7; i++) {
        if (strlen(type_names[i]) == n && memcmp(s, type_names[i], n) == 0) {
            *mask |= type_bits[i];
            return true;
        }
    }
    return nextok__sch_bad(d, node, "type", "must be a type name or an array of them");
}

bool nextok__sch_types(struct nextok__sch_doc *d, uint32_t node, unsigned *mask)
{
    const struct nextok__json *j = &d->json;
    uint32_t t = nextok__sch_get(d, node, "type");
    *mask = 0;
    if (nextok__json_type(j, t) != NEXTOK__JSON_ARRAY) return one_type(d, node, t, mask);
    for (uint32_t e = nextok__json_first(j, t); e != NEXTOK__SCH_NONE; e = nextok__json_next(j, e))
        if (!one_type(d, node, e, mask)) return false;
    return true;
}

bool nextok__sch_count(struct nextok__sch_doc *d, uint32_t node, const char *kw, uint64_t *v)
{
    uint32_t k = nextok__sch_get(d, node, kw);
    if (k == NEXTOK__SCH_NONE) return true;
    enum nextok__json_type t = nextok__json_type(&d->json, k);
    struct nextok__dec x;
    if ((t != NEXTOK__JSON_INT && t != NEXTOK__JSON_REAL) || !nextok__sch_dec(d, k, &x) || x.neg ||
        !nextok__dec_is_int(&x))
        return d->rc == NEXTOK_OK && nextok__sch_bad(d, node, kw, "must be a non-negative integer");
    uint64_t r = 0;
    for (uint32_t i = 0; i < x.n + (uint64_t)x.e && r != UINT64_MAX; i++) {
        unsigned dg = i < x.n ? (unsigned)(x.d[i] - '0') : 0;
        r = r > (UINT64_MAX - dg) / 10 ? UINT64_MAX : r * 10 + dg;
    }
    *v = r;
    return true;
}

/* How each keyword is dealt with. Names not listed are unknown keywords:
 * annotations, as the specification has them. */
enum kw {
    KW_ANNOT,   /* no constraint on instances */
    KW_EXPAND,  /* $ref, allOf: expanded into the view */
    KW_COMBINE, /* anyOf, oneOf, if, dependent*: distributed */
    KW_VALUE,   /* constrains instances: merged and written */
    KW_REFUSED, /* cannot be a grammar */
};

static const struct {
    const char *name;
    enum kw kind;
} keywords[] = {
    {"$ref", KW_EXPAND},
    {"allOf", KW_EXPAND},
    {"anyOf", KW_COMBINE},
    {"oneOf", KW_COMBINE},
    {"if", KW_COMBINE},
    {"dependentRequired", KW_COMBINE},
    {"dependentSchemas", KW_COMBINE},
    {"dependencies", KW_COMBINE},
    {"$dynamicRef", KW_REFUSED},
    {"$recursiveRef", KW_REFUSED},
    {"type", KW_VALUE},
    {"enum", KW_VALUE},
    {"const", KW_VALUE},
    {"not", KW_VALUE},
    {"minLength", KW_VALUE},
    {"maxLength", KW_VALUE},
    {"pattern", KW_VALUE},
    {"format", KW_VALUE},
    {"minimum", KW_VALUE},
    {"maximum", KW_VALUE},
    {"exclusiveMinimum", KW_VALUE},
    {"exclusiveMaximum", KW_VALUE},
    {"multipleOf", KW_VALUE},
    {"properties", KW_VALUE},
    {"required", KW_VALUE},
    {"additionalProperties", KW_VALUE},
    {"patternProperties", KW_VALUE},
    {"minProperties", KW_VALUE},
    {"maxProperties", KW_VALUE},
    {"propertyNames", KW_VALUE},
    {"unevaluatedProperties", KW_VALUE},
    {"items", KW_VALUE},
    {"prefixItems", KW_VALUE},
    {"additionalItems", KW_VALUE},
    {"minItems", KW_VALUE},
    {"maxItems", KW_VALUE},
    {"uniqueItems", KW_VALUE},
    {"contains", KW_VALUE},
    {"unevaluatedItems", KW_VALUE},
};

static enum kw kw_of(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strlen(keywords[i].name) == n && memcmp(keywords[i].name, s, n) == 0)
            return keywords[i].kind;
    return KW_ANNOT;
}

/* Whether node only holds keywords the view already has in expanded form
 * (or none that constrain): it can be left out of the view. */
static bool pure(const struct nextok__sch_doc *d, uint32_t node)
{
    const struct nextok__json *j = &d->json;
    for (uint32_t k = nextok__json_first(j, node); k != NEXTOK__SCH_NONE;
         k = nextok__json_next(j, k)) {
        size_t n = 0;
        const char *s = nextok__json_str(j, k, &n);
        enum kw w = kw_of(s, n);
        if (w == KW_ANNOT || w == KW_EXPAND) continue;
        if (n == 2 && memcmp(s, "if", 2) == 0 &&
            nextok__sch_get(d, node, "then") == NEXTOK__SCH_NONE &&
            nextok__sch_get(d, node, "else") == NEXTOK__SCH_NONE)
            continue;
        return false;
    }
    return true;
}

/* Whether node is a schema that only tests the type (annotations aside):
 * *mask the types it allows. Booleans too (true: all, false: none). */
bool nextok__sch_type_only(struct nextok__sch_doc *d, uint32_t node, unsigned *mask)
{
    const struct nextok__json *j = &d->json;
    enum nextok__json_type t = nextok__json_type(j, node);
    *mask = t == NEXTOK__JSON_FALSE ? 0 : NEXTOK__ST_ALL;
    if (t != NEXTOK__JSON_OBJECT) return t == NEXTOK__JSON_TRUE || t == NEXTOK__JSON_FALSE;
    for (uint32_t k = nextok__json_first(j, node); k != NEXTOK__SCH_NONE;
         k = nextok__json_next(j, k)) {
        size_t n = 0;
        const char *s = nextok__json_str(j, k, &n);
        if (n == 4 && memcmp(s, "type", 4) == 0) {
            if (!nextok__sch_types(d, node, mask)) return false;
        } else if (kw_of(s, n) != KW_ANNOT) {
            return false;
        }
    }
    return true;
}

/* ---- views ------------------------------------------------------------------------------ */

struct conj {
    struct nextok__sch_el el[NEXTOK__SCH_MAX_CONJ];
    size_t n;
};

static bool conj_add(struct nextok__sch_doc *d, struct conj *x, struct nextok__sch_el e)
{
    for (size_t i = 0; i < x->n; i++) {
        if (x->el[i].node == e.node && x->el[i].kind == e.kind) {
            x->el[i].skip &= e.skip;
            return true;
        }
    }
    if (x->n == NEXTOK__SCH_MAX_CONJ)
        return nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                                "schema: more than %u schemas apply to one value",
                                NEXTOK__SCH_MAX_CONJ);
    x->el[x->n++] = e;
    return true;
}

static bool schema_array(struct nextok__sch_doc *d, uint32_t node, const char *kw, uint32_t *arr)
{
    const struct nextok__json *j = &d->json;
    *arr = nextok__sch_get(d, node, kw);
    if (*arr == NEXTOK__SCH_NONE) return true;
    if (nextok__json_type(j, *arr) != NEXTOK__JSON_ARRAY || nextok__json_len(j, *arr) == 0)
        return nextok__sch_bad(d, node, kw, "must be a non-empty array of schemas");
    for (uint32_t e = nextok__json_first(j, *arr); e != NEXTOK__SCH_NONE;
         e = nextok__json_next(j, e)) {
        enum nextok__json_type t = nextok__json_type(j, e);
        if (t != NEXTOK__JSON_OBJECT && t != NEXTOK__JSON_TRUE && t != NEXTOK__JSON_FALSE)
            return nextok__sch_bad(d, node, kw, "must be a non-empty array of schemas");
    }
    return true;
}

/* Expand $ref and allOf; false: the status is set, or *never. */
static bool expand(struct nextok__sch_doc *d, struct conj *x, bool *never)
{
    const struct nextok__json *j = &d->json;
    *never = false;
    for (size_t i = 0; i < x->n; i++) {
        struct nextok__sch_el e = x->el[i];
        if (e.kind == NEXTOK__SK_TYPES && e.node == 0) *never = true;
        if (e.kind != NEXTOK__SK_NODE) continue;
        enum nextok__json_type t = nextok__json_type(j, e.node);
        if (t == NEXTOK__JSON_FALSE) *never = true;
        if (t == NEXTOK__JSON_TRUE || t == NEXTOK__JSON_FALSE) continue;
        if (t != NEXTOK__JSON_OBJECT) {
            char ptr[160];
            nextok__sch_pointer(d, e.node, ptr, sizeof ptr);
            return nextok__sch_fail(d, NEXTOK_ERR_FORMAT,
                                    "%s: a schema must be an object or a boolean",
                                    ptr[0] ? ptr : "(root)");
        }
        if (nextok__sch_get(d, e.node, "$dynamicRef") != NEXTOK__SCH_NONE &&
            !nextok__sch_refuse(d, e.node, "$dynamicRef", NULL))
            return false;
        if (nextok__sch_get(d, e.node, "$recursiveRef") != NEXTOK__SCH_NONE &&
            !nextok__sch_refuse(d, e.node, "$recursiveRef", NULL))
            return false;
        uint32_t ref = nextok__sch_get(d, e.node, "$ref"), target, all;
        if (ref != NEXTOK__SCH_NONE) {
            if (nextok__sch_resolve(d, e.node, ref, &target)) {
                if (!conj_add(d, x, (struct nextok__sch_el){target, NEXTOK__SK_NODE, 0}))
                    return false;
            } else if (d->rc != NEXTOK_OK) {
                return false;
            }
        }
        if (!schema_array(d, e.node, "allOf", &all)) return false;
        for (uint32_t s = nextok__json_first(j, all); s != NEXTOK__SCH_NONE;
             s = nextok__json_next(j, s))
            if (!conj_add(d, x, (struct nextok__sch_el){s, NEXTOK__SK_NODE, 0})) return false;
    }
    return !*never;
}

static int el_cmp(const void *a, const void *b)
{
    const struct nextok__sch_el *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return (x->skip > y->skip) - (x->skip < y->skip);
}

static uint32_t view_hash(const struct nextok__sch_el *e, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        uint32_t w[2] = {e[i].node, (uint32_t)e[i].kind << 16 | e[i].skip};
        for (int k = 0; k < 2; k++) h = (h ^ w[k]) * 16777619u;
    }
    return h;
}

static bool grow_views(struct nextok__sch *c, size_t n)
{
    const struct nextok__mem *mem = c->d->mem;
    if (c->n_els + n > c->cap_els) {
        size_t cap = c->cap_els ? 2 * c->cap_els : 256;
        while (cap < c->n_els + n) cap *= 2;
        void *p = nextok__realloc(mem, c->els, cap * sizeof *c->els);
        if (!p) return nextok__sch_nomem(c->d);
        c->els = p;
        c->cap_els = cap;
    }
    if (c->n_views == c->cap_views) {
        uint32_t cap = c->cap_views ? 2 * c->cap_views : 64;
        void *p = nextok__realloc(mem, c->views, cap * sizeof *c->views);
        if (!p) return nextok__sch_nomem(c->d);
        c->views = p;
        c->cap_views = cap;
    }
    if (2 * (c->n_views + 1) > c->hcap) {
        uint32_t cap = c->hcap ? 2 * c->hcap : 128;
        uint32_t *h = nextok__calloc(mem, cap, sizeof *h);
        if (!h) return nextok__sch_nomem(c->d);
        for (uint32_t v = 0; v < c->n_views; v++) {
            uint32_t k = view_hash(c->els + c->views[v].first, c->views[v].n) & (cap - 1);
            while (h[k]) k = (k + 1) & (cap - 1);
            h[k] = v + 1;
        }
        nextok__free(mem, c->hash);
        c->hash = h;
        c->hcap = cap;
    }
    return true;
}

bool nextok__sch_view(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                      nextok__sch_name name)
{
    struct nextok__sch_doc *d = c->d;
    struct conj x;
    x.n = 0;
    bool never = false;
    for (size_t i = 0; i < n; i++)
        if (!conj_add(d, &x, els[i])) return false;
    if (!expand(d, &x, &never)) {
        if (never) snprintf(name, sizeof(nextok__sch_name), "%s", nextok__sch_helper(c, "nv"));
        return never && d->rc == NEXTOK_OK;
    }
    size_t m = 0; /* leave out what adds nothing */
    for (size_t i = 0; i < x.n; i++) {
        struct nextok__sch_el e = x.el[i];
        if (e.kind == NEXTOK__SK_NODE &&
            (nextok__json_type(&d->json, e.node) == NEXTOK__JSON_TRUE || pure(d, e.node)))
            continue;
        if (e.kind == NEXTOK__SK_TYPES && e.node == NEXTOK__ST_ALL) continue;
        x.el[m++] = e;
    }
    if (m == 0) {
        snprintf(name, sizeof(nextok__sch_name), "%s", nextok__sch_helper(c, "jv"));
        return d->rc == NEXTOK_OK;
    }
    nextok__sort(x.el, m, sizeof x.el[0], el_cmp);
    if (!grow_views(c, m)) return false;
    uint32_t k = view_hash(x.el, m) & (c->hcap - 1);
    for (; c->hash[k]; k = (k + 1) & (c->hcap - 1)) {
        uint32_t v = c->hash[k] - 1;
        if (c->views[v].n == m &&
            memcmp(c->els + c->views[v].first, x.el, m * sizeof x.el[0]) == 0) {
            snprintf(name, sizeof(nextok__sch_name), "s%u", v);
            return true;
        }
    }
    if (++d->n_views > NEXTOK__SCH_MAX_VIEWS)
        return nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                                "schema: more than %u distinct subschemas to write",
                                NEXTOK__SCH_MAX_VIEWS);
    uint32_t v = c->n_views++;
    c->views[v].first = (uint32_t)c->n_els;
    c->views[v].n = (uint32_t)m;
    memcpy(c->els + c->n_els, x.el, m * sizeof x.el[0]);
    c->n_els += m;
    c->hash[k] = v + 1;
    snprintf(name, sizeof(nextok__sch_name), "s%u", v);
    return true;
}

bool nextok__sch_view_nodes(struct nextok__sch *c, const uint32_t *nodes, size_t n,
                            nextok__sch_name name)
{
    struct nextok__sch_el el[NEXTOK__SCH_MAX_CONJ];
    if (n > NEXTOK__SCH_MAX_CONJ)
        return nextok__sch_fail(c->d, NEXTOK_ERR_LIMIT,
                                "schema: more than %u schemas apply to one value",
                                NEXTOK__SCH_MAX_CONJ);
    for (size_t i = 0; i < n; i++) el[i] = (struct nextok__sch_el){nodes[i], NEXTOK__SK_NODE, 0};
    return nextok__sch_view(c, el, n, name);
}
