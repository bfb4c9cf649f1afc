/*
 * Arrays: prefixItems (draft-07: items as an array, and additionalItems) then
 * the rest, counted for minItems / maxItems; contains with minContains when
 * nothing else fixes the positions; uniqueItems only where at most one item
 * fits. Also the punctuation every container shares.
 */
#include "schema_internal.h"

void nextok__sch_close(struct nextok__sch *c, struct nextok__buf *b, bool any, const char *close)
{
    if (any) nextok__sch_ws(c, b);
    nextok__sch_lit(c, b, close, 1);
}

void nextok__sch_comma(struct nextok__sch *c, struct nextok__buf *b, bool any)
{
    if (!any) return;
    nextok__sch_ws(c, b);
    nextok__sch_lit(c, b, ",", 1);
    nextok__sch_ws(c, b);
}

/* " item (WS "," WS item){lo,hi} WS close" : the rest of a container. */
void nextok__sch_more(struct nextok__sch *c, struct nextok__buf *b, const char *item, uint64_t lo,
                      uint64_t hi, const char *close)
{
    struct nextok__buf m = nextok__buf_of(c->d->mem);
    nextok__sch_name more;
    nextok__sch_comma(c, &m, true);
    nextok__sch_fmt(c, &m, " %s", item);
    nextok__sch_newname(c, more);
    nextok__sch_rule(c, more, &m);
    nextok__sch_fmt(c, b, " %s", item);
    nextok__sch_rep(c, b, more, lo, hi);
    nextok__sch_close(c, b, true, close);
}

/* ---- arrays --------------------------------------------------------------------------------- */

struct arr {
    uint32_t prefix[NEXTOK__SCH_MAX_CONJ], rest[NEXTOK__SCH_MAX_CONJ]; /* NONE: none */
    size_t from[NEXTOK__SCH_MAX_CONJ]; /* the first index rest applies to */
    size_t n, k;                       /* conjuncts, prefix states */
    uint64_t min, max, min_contains;
    uint32_t contains, contains_node;
};

static bool is_schema(const struct nextok__json *j, uint32_t v)
{
    enum nextok__json_type t = nextok__json_type(j, v);
    return t == NEXTOK__JSON_OBJECT || t == NEXTOK__JSON_TRUE || t == NEXTOK__JSON_FALSE;
}

static bool array_conjunct(struct nextok__sch_doc *d, struct arr *a, uint32_t node,
                           const struct nextok__sch_el *els, size_t n)
{
    const struct nextok__json *j = &d->json;
    uint32_t pre = nextok__sch_get(d, node, "prefixItems"),
             items = nextok__sch_get(d, node, "items");
    uint32_t rest = items;
    if (pre == NEXTOK__SCH_NONE && nextok__json_type(j, items) == NEXTOK__JSON_ARRAY) /* draft-07 */
        pre = items, rest = nextok__sch_get(d, node, "additionalItems");
    if (pre != NEXTOK__SCH_NONE && nextok__json_type(j, pre) != NEXTOK__JSON_ARRAY)
        return nextok__sch_bad(d, node, "prefixItems", "must be an array of schemas");
    for (uint32_t e = nextok__json_first(j, pre); e != NEXTOK__SCH_NONE;
         e = nextok__json_next(j, e))
        if (!is_schema(j, e))
            return nextok__sch_bad(d, node, "prefixItems", "must be an array of schemas");
    if (rest != NEXTOK__SCH_NONE && !is_schema(j, rest))
        return nextok__sch_bad(d, node, rest == items ? "items" : "additionalItems",
                               "must be a schema");
    size_t from = nextok__json_len(j, pre), n_scope = 0;
    uint32_t sc[NEXTOK__SCH_MAX_CONJ];
    if (rest == NEXTOK__SCH_NONE &&
        !nextok__sch_unevaluated(d, node, true, els, n, &rest, sc, &n_scope, &from))
        return false;
    uint64_t lo = 0, hi = UINT64_MAX, mc = 1, unique = 0;
    if (!nextok__sch_count(d, node, "minItems", &lo) ||
        !nextok__sch_count(d, node, "maxItems", &hi))
        return false;
    if (lo > a->min) a->min = lo;
    if (hi < a->max) a->max = hi;
    uint32_t u = nextok__sch_get(d, node, "uniqueItems");
    unique = nextok__json_type(j, u) == NEXTOK__JSON_TRUE;
    if (u != NEXTOK__SCH_NONE && !unique && nextok__json_type(j, u) != NEXTOK__JSON_FALSE)
        return nextok__sch_bad(d, node, "uniqueItems", "must be a boolean");
    if (unique && a->max > 1 && !nextok__sch_refuse(d, node, "uniqueItems", NULL)) return false;
    uint32_t cont = nextok__sch_get(d, node, "contains");
    if (cont != NEXTOK__SCH_NONE) {
        if (!is_schema(j, cont)) return nextok__sch_bad(d, node, "contains", "must be a schema");
        if (!nextok__sch_count(d, node, "minContains", &mc)) return false;
        if (nextok__sch_get(d, node, "maxContains") != NEXTOK__SCH_NONE &&
            !nextok__sch_refuse(d, node, "maxContains", NULL))
            return false;
        if (mc > 0 && a->contains != NEXTOK__SCH_NONE &&
            !nextok__sch_refuse(d, node, "contains", "cannot be enforced next to another contains"))
            return false;
        if (mc > 0 && a->contains == NEXTOK__SCH_NONE)
            a->contains = cont, a->contains_node = node, a->min_contains = mc;
    }
    a->prefix[a->n] = pre;
    a->rest[a->n] = rest;
    a->from[a->n] = from;
    if (nextok__json_len(j, pre) > a->k) a->k = nextok__json_len(j, pre);
    if (rest != NEXTOK__SCH_NONE && from > a->k) a->k = from;
    a->n++;
    return true;
}

/* The view of item i (SIZE_MAX: an item past every prefix). */
static bool item_rule(struct nextok__sch *c, const struct arr *a, size_t i, uint32_t extra,
                      nextok__sch_name name)
{
    const struct nextok__json *j = &c->d->json;
    uint32_t s[NEXTOK__SCH_MAX_CONJ + 1];
    size_t n = 0;
    for (size_t k = 0; k < a->n; k++) {
        uint32_t v = i >= a->from[k] ? a->rest[k] : NEXTOK__SCH_NONE;
        if (i < nextok__json_len(j, a->prefix[k])) {
            v = nextok__json_first(j, a->prefix[k]);
            for (size_t m = 0; m < i; m++) v = nextok__json_next(j, v);
        }
        if (v != NEXTOK__SCH_NONE) s[n++] = v;
    }
    if (extra != NEXTOK__SCH_NONE) s[n++] = extra;
    return nextok__sch_view_nodes(c, s, n, name);
}

static bool forbidden_item(const struct nextok__sch *c, const char *name)
{
    return strcmp(name, "nv") == 0 && c->d->rc == NEXTOK_OK;
}

/* contains with minContains m, no prefix, no maxItems, minItems <= m:
 * (item ,)* hit ( , (item ,)* hit ){m-1} ( , item)* */
static bool contains(struct nextok__sch *c, struct nextok__buf *b, const struct arr *a)
{
    nextok__sch_name item, hit, pre, name;
    if (!item_rule(c, a, SIZE_MAX, NEXTOK__SCH_NONE, item) ||
        !item_rule(c, a, SIZE_MAX, a->contains, hit) || forbidden_item(c, hit))
        return false;
    struct nextok__buf r = nextok__buf_of(c->d->mem);
    nextok__sch_fmt(c, &r, " %s", item);
    nextok__sch_comma(c, &r, true);
    nextok__sch_newname(c, pre);
    nextok__sch_rule(c, pre, &r);
    r = nextok__buf_of(c->d->mem);
    nextok__sch_comma(c, &r, true);
    nextok__sch_fmt(c, &r, " %s* %s", pre, hit);
    nextok__sch_name again;
    nextok__sch_newname(c, again);
    nextok__sch_rule(c, again, &r);
    r = nextok__buf_of(c->d->mem);
    nextok__sch_lit(c, &r, "[", 1);
    nextok__sch_ws(c, &r);
    nextok__sch_fmt(c, &r, " %s* %s", pre, hit);
    nextok__sch_rep(c, &r, again, a->min_contains - 1, a->min_contains - 1);
    struct nextok__buf tail = nextok__buf_of(c->d->mem);
    nextok__sch_comma(c, &tail, true);
    nextok__sch_fmt(c, &tail, " %s", item);
    nextok__sch_name more;
    nextok__sch_newname(c, more);
    nextok__sch_rule(c, more, &tail);
    nextok__sch_fmt(c, &r, " %s*", more);
    nextok__sch_close(c, &r, true, "]");
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &r);
    nextok__sch_fmt(c, b, " %s", name);
    return c->d->rc == NEXTOK_OK;
}

bool nextok__sch_array(struct nextok__sch *c, struct nextok__buf *b,
                       const struct nextok__sch_el *els, size_t n)
{
    struct nextok__sch_doc *d = c->d;
    struct arr a;
    memset(&a, 0, sizeof a);
    a.max = UINT64_MAX;
    a.contains = NEXTOK__SCH_NONE;
    for (size_t i = 0; i < n; i++)
        if (els[i].kind == NEXTOK__SK_NODE &&
            nextok__json_type(&d->json, els[i].node) == NEXTOK__JSON_OBJECT &&
            !array_conjunct(d, &a, els[i].node, els, n))
            return false;
    if (a.max < a.min) return false;
    if (a.contains != NEXTOK__SCH_NONE) {
        if (a.k == 0 && a.max == UINT64_MAX && a.min <= a.min_contains) return contains(c, b, &a);
        if (!nextok__sch_refuse(d, a.contains_node, "contains",
                                "cannot be enforced next to prefixItems, maxItems or a larger "
                                "minItems"))
            return false;
    }
    size_t top = a.max < a.k ? (size_t)a.max : a.k; /* the last prefix state */
    nextok__sch_name next = "", item;
    for (size_t i = top + 1; i-- > 0 && d->rc == NEXTOK_OK;) {
        struct nextok__buf r = nextok__buf_of(d->mem);
        if (i >= a.min) nextok__sch_close(c, &r, i > 0, "]");
        if (i < top) {
            if (item_rule(c, &a, i, NEXTOK__SCH_NONE, item) && !forbidden_item(c, item) &&
                next[0]) {
                if (r.len) nextok__sch_put(c, &r, " |");
                nextok__sch_comma(c, &r, i > 0);
                nextok__sch_fmt(c, &r, " %s %s", item, next);
            }
        } else if (i == a.k && (a.max == UINT64_MAX || i < a.max) &&
                   item_rule(c, &a, SIZE_MAX, NEXTOK__SCH_NONE, item) && !forbidden_item(c, item)) {
            uint64_t lo = a.min > i + 1 ? a.min - i - 1 : 0;
            if (r.len) nextok__sch_put(c, &r, " |");
            nextok__sch_comma(c, &r, i > 0);
            nextok__sch_more(c, &r, item, lo, a.max == UINT64_MAX ? UINT64_MAX : a.max - i - 1,
                             "]");
        }
        if (r.len == 0) {
            next[0] = '\0';
            continue;
        }
        nextok__sch_newname(c, next);
        nextok__sch_rule(c, next, &r);
    }
    if (!next[0] || d->rc != NEXTOK_OK) return false;
    struct nextok__buf r = nextok__buf_of(d->mem);
    nextok__sch_lit(c, &r, "[", 1);
    nextok__sch_ws(c, &r);
    nextok__sch_fmt(c, &r, " %s", next);
    nextok__sch_name name;
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &r);
    nextok__sch_fmt(c, b, " %s", name);
    return true;
}
