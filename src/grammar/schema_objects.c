/*
 * Objects: members in schema order (property names in the order they appear
 * in the schema document, across the view's schemas; then names only
 * required), each property at most once, required ones always; then the
 * additional members (schema_keys.c). A state (next name, members so far)
 * machine counts members for minProperties / maxProperties. In any order
 * (NEXTOK_JSON_ORDER_ANY) a state is the set of names written so far, so
 * objects are limited to NEXTOK__SCH_MAX_ANY names (2^n states).
 *
 * A name's value must satisfy every schema of the view that speaks of it:
 * its `properties` entry, or else that schema's additionalProperties (or its
 * unevaluatedProperties, when the name is not evaluated in its scope).
 */
#include "schema_internal.h"

/* Declared names in document order, then the others as they came. */
static int pname_cmp(const void *a, const void *b)
{
    const struct nextok__sch_pname *x = a, *y = b;
    if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static struct nextok__sch_pname *name_of(struct nextok__sch_doc *d, struct nextok__sch_obj *o,
                                         uint32_t str)
{
    for (size_t i = 0; i < o->n_names; i++)
        if (nextok__sch_same_str(&d->json, o->names[i].str, str)) return &o->names[i];
    if (o->n_names == NEXTOK__SCH_MAX_NAMES) {
        nextok__sch_fail(d, NEXTOK_ERR_LIMIT, "schema: an object with more than %u property names",
                         NEXTOK__SCH_MAX_NAMES);
        return NULL;
    }
    o->names[o->n_names] =
        (struct nextok__sch_pname){str, UINT32_MAX, (uint32_t)o->n_names, false, false};
    return &o->names[o->n_names++];
}

static bool conjunct(struct nextok__sch_doc *d, struct nextok__sch_obj *o, uint32_t node,
                     const struct nextok__sch_el *els, size_t n)
{
    const struct nextok__json *j = &d->json;
    size_t i = o->n;
    uint32_t v;
    unsigned mask = 0;
    o->node[i] = node;
    o->props[i] = nextok__sch_get(d, node, "properties");
    o->addl[i] = nextok__sch_get(d, node, "additionalProperties");
    if (o->props[i] != NEXTOK__SCH_NONE && nextok__json_type(j, o->props[i]) != NEXTOK__JSON_OBJECT)
        return nextok__sch_bad(d, node, "properties", "must be an object");
    size_t from = 0;
    o->n_scope[i] = 0;
    if (o->addl[i] == NEXTOK__SCH_NONE &&
        !nextok__sch_unevaluated(d, node, false, els, n, &o->addl[i],
                                 o->scope + i * NEXTOK__SCH_MAX_CONJ, &o->n_scope[i], &from))
        return false;
    v = nextok__sch_get(d, node, "patternProperties");
    if (v != NEXTOK__SCH_NONE && nextok__json_type(j, v) != NEXTOK__JSON_OBJECT)
        return nextok__sch_bad(d, node, "patternProperties", "must be an object");
    if (nextok__json_len(j, v) == 1 && o->pp == SIZE_MAX) {
        o->pp = i;
        o->pp_re = nextok__json_first(j, v);
        o->pp_schema = o->pp_re + 1;
    } else if (nextok__json_len(j, v) > 0 &&
               !nextok__sch_refuse(d, node, "patternProperties",
                                   "cannot be enforced (one pattern per object can)")) {
        return false;
    }
    if ((v = nextok__sch_get(d, node, "propertyNames")) != NEXTOK__SCH_NONE) {
        if (nextok__sch_type_only(d, v, &mask)) {
            if (!(mask & NEXTOK__ST_STR)) o->max = 0; /* no name is valid: no member */
        } else if (d->rc != NEXTOK_OK) {
            return false;
        } else {
            o->pn[o->n_pn] = v, o->pn_node[o->n_pn++] = node;
        }
    }
    uint64_t lo = 0, hi = UINT64_MAX;
    if (!nextok__sch_count(d, node, "minProperties", &lo) ||
        !nextok__sch_count(d, node, "maxProperties", &hi))
        return false;
    if (lo > o->min) o->min = lo;
    if (hi < o->max) o->max = hi;
    if (o->addl[i] != NEXTOK__SCH_NONE) o->any_addl = true;
    if (nextok__json_type(j, o->addl[i]) == NEXTOK__JSON_FALSE) o->addl_ok = false;
    mask = 0;
    if (nextok__sch_get(d, node, "type") != NEXTOK__SCH_NONE && !nextok__sch_types(d, node, &mask))
        return false;
    o->strict |= o->props[i] != NEXTOK__SCH_NONE || (mask & NEXTOK__ST_OBJ) ||
                 nextok__sch_get(d, node, "required") != NEXTOK__SCH_NONE;
    for (uint32_t k = nextok__json_first(j, o->props[i]); k != NEXTOK__SCH_NONE;
         k = nextok__json_next(j, k)) {
        struct nextok__sch_pname *p = name_of(d, o, k);
        if (!p) return false;
        if (k < p->pos) p->pos = k;
    }
    uint32_t req = nextok__sch_get(d, node, "required");
    if (req != NEXTOK__SCH_NONE && nextok__json_type(j, req) != NEXTOK__JSON_ARRAY)
        return nextok__sch_bad(d, node, "required", "must be an array of strings");
    for (uint32_t e = nextok__json_first(j, req); e != NEXTOK__SCH_NONE;
         e = nextok__json_next(j, e)) {
        if (nextok__json_type(j, e) != NEXTOK__JSON_STRING)
            return nextok__sch_bad(d, node, "required", "must be an array of strings");
        struct nextok__sch_pname *p = name_of(d, o, e);
        if (!p) return false;
        p->required = true;
    }
    o->n++;
    return true;
}

static bool collect(struct nextok__sch_doc *d, struct nextok__sch_obj *o,
                    const struct nextok__sch_el *els, size_t n)
{
    o->min = 0;
    o->max = UINT64_MAX;
    o->addl_ok = true;
    o->pp = SIZE_MAX;
    for (size_t i = 0; i < n && d->rc == NEXTOK_OK; i++) {
        if (els[i].kind == NEXTOK__SK_NODE) {
            if (nextok__json_type(&d->json, els[i].node) == NEXTOK__JSON_OBJECT)
                conjunct(d, o, els[i].node, els, n);
            continue;
        }
        if (els[i].kind != NEXTOK__SK_REQUIRE && els[i].kind != NEXTOK__SK_FORBID) continue;
        struct nextok__sch_pname *p = name_of(d, o, els[i].node);
        if (p && els[i].kind == NEXTOK__SK_REQUIRE) p->required = true;
        if (p && els[i].kind == NEXTOK__SK_FORBID) p->forbidden = true;
    }
    if (d->sp.strict && o->strict && !o->any_addl) o->addl_ok = false;
    nextok__sort(o->names, o->n_names, sizeof *o->names, pname_cmp);
    return d->rc == NEXTOK_OK;
}

/* Whether name str is evaluated in the scope of conjunct i's unevaluatedProperties. */
static bool evaluated(struct nextok__sch_doc *d, const struct nextok__sch_obj *o, size_t i,
                      uint32_t str)
{
    for (size_t k = 0; k < o->n_scope[i]; k++) {
        uint32_t props = nextok__sch_get(d, o->scope[i * NEXTOK__SCH_MAX_CONJ + k], "properties");
        if (nextok__sch_member(&d->json, props, str) != NEXTOK__SCH_NONE) return true;
    }
    return false;
}

/* The value rule of name p: every conjunct's schema for it. */
static bool value_rule(struct nextok__sch *c, struct nextok__sch_obj *o,
                       struct nextok__sch_pname *p, nextok__sch_name name)
{
    const struct nextok__json *j = &c->d->json;
    uint32_t s[NEXTOK__SCH_MAX_CONJ];
    size_t n = 0;
    for (size_t i = 0; i < o->n; i++) {
        uint32_t v = nextok__sch_member(j, o->props[i], p->str);
        if (v == NEXTOK__SCH_NONE && evaluated(c->d, o, i, p->str)) continue;
        if (v == NEXTOK__SCH_NONE) v = o->addl[i];
        if (v == NEXTOK__SCH_NONE) continue;
        if (nextok__json_type(j, v) == NEXTOK__JSON_FALSE) p->forbidden = true;
        s[n++] = v;
    }
    return p->forbidden || nextok__sch_view_nodes(c, s, n, name);
}

/* ---- objects: the member machine ---------------------------------------------------------- */

struct om {
    size_t n;     /* names */
    uint64_t cap; /* counts kept: 0 .. cap */
    bool has_max;
    uint8_t *ok, *reach;
    nextok__sch_name *st;
};

static size_t om_at(const struct om *m, size_t i, uint64_t k) { return i * (m->cap + 1) + k; }
/* Counts saturate at cap: without maxProperties "cap or more"; with it, cap
 * is reached only at the last name or where no member may follow. */
static uint64_t om_next(const struct om *m, uint64_t k) { return k == m->cap ? k : k + 1; }

static bool om_tail_ok(const struct om *m, const struct nextok__sch_obj *o, uint64_t k)
{
    return k >= o->min || (o->addl_ok && (!m->has_max || k < o->max));
}

/* The states, from the last name back: which can still end well. */
static void om_solve(struct om *m, const struct nextok__sch_obj *o)
{
    for (size_t i = m->n + 1; i-- > 0;) {
        for (uint64_t k = 0; k <= m->cap; k++) {
            if (i == m->n) {
                m->ok[om_at(m, i, k)] = om_tail_ok(m, o, k);
                continue;
            }
            const struct nextok__sch_pname *p = &o->names[i];
            bool add = !p->forbidden && (!m->has_max || k < o->max) &&
                       m->ok[om_at(m, i + 1, om_next(m, k))];
            m->ok[om_at(m, i, k)] = (!p->required && m->ok[om_at(m, i + 1, k)]) || add;
        }
    }
    m->reach[0] = 1;
    for (size_t i = 0; i < m->n; i++) {
        for (uint64_t k = 0; k <= m->cap; k++) {
            if (!m->reach[om_at(m, i, k)]) continue;
            m->reach[om_at(m, i + 1, k)] |= !o->names[i].required;
            if (!o->names[i].forbidden && (!m->has_max || k < o->max))
                m->reach[om_at(m, i + 1, om_next(m, k))] = 1;
        }
    }
}

static void om_state(struct nextok__sch *c, struct om *m, const struct nextok__sch_obj *o, size_t i,
                     uint64_t k, nextok__sch_name *member, const char *am)
{
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    if (i == m->n) {
        if (k >= o->min) nextok__sch_close(c, &b, k > 0, "}");
        if (o->addl_ok && (!m->has_max || k < o->max)) {
            uint64_t lo = o->min > k ? o->min - k : 0;
            if (b.len) nextok__sch_put(c, &b, " |");
            nextok__sch_comma(c, &b, k > 0);
            nextok__sch_more(c, &b, am, lo ? lo - 1 : 0, m->has_max ? o->max - k - 1 : UINT64_MAX,
                             "}");
        }
    } else {
        const struct nextok__sch_pname *p = &o->names[i];
        uint64_t k2 = om_next(m, k);
        if (!p->required && m->ok[om_at(m, i + 1, k)])
            nextok__sch_fmt(c, &b, " %s", m->st[om_at(m, i + 1, k)]);
        if (!p->forbidden && (!m->has_max || k < o->max) && m->ok[om_at(m, i + 1, k2)]) {
            if (b.len) nextok__sch_put(c, &b, " |");
            nextok__sch_comma(c, &b, k > 0);
            nextok__sch_fmt(c, &b, " %s %s", member[i], m->st[om_at(m, i + 1, k2)]);
        }
    }
    nextok__sch_newname(c, m->st[om_at(m, i, k)]);
    nextok__sch_rule(c, m->st[om_at(m, i, k)], &b);
}

/* ---- objects in any order -------------------------------------------------------------- */

#define NEXTOK__SCH_MAX_ANY 10u

/* The declared members in any order: a state per set of names written so
 * far (bit j: name live[j]), reachable and able to end well; then the
 * additional members as in schema order (the machine's last row, m). The
 * state of the empty set is named in *start. */
struct ao {
    size_t n;                          /* live names */
    size_t live[NEXTOK__SCH_MAX_ANY]; /* their indices in o->names */
    uint32_t required;                 /* the required ones, as a set */
    uint8_t *ok, *reach;
    nextok__sch_name *st;
};

static uint64_t ao_count(const struct om *m, uint32_t set)
{
    uint64_t k = (uint64_t)__builtin_popcount(set);
    return k < m->cap ? k : m->cap;
}

static bool ao_may_add(const struct om *m, const struct nextok__sch_obj *o, uint32_t set)
{
    return !m->has_max || (uint64_t)__builtin_popcount(set) < o->max;
}

static bool ao_may_end(const struct ao *a, const struct om *m, uint32_t set)
{
    return (set & a->required) == a->required && m->ok[om_at(m, m->n, ao_count(m, set))];
}

static void ao_solve(struct ao *a, const struct om *m, const struct nextok__sch_obj *o)
{
    uint32_t all = (1u << a->n) - 1;
    for (uint32_t set = all + 1; set-- > 0;) { /* supersets first */
        bool ok = ao_may_end(a, m, set);
        for (size_t j = 0; !ok && j < a->n && ao_may_add(m, o, set); j++)
            ok = !(set >> j & 1) && a->ok[set | 1u << j];
        a->ok[set] = ok;
    }
    a->reach[0] = 1;
    for (uint32_t set = 0; set <= all; set++) {
        if (!a->reach[set] || !a->ok[set] || !ao_may_add(m, o, set)) continue;
        for (size_t j = 0; j < a->n; j++)
            if (!(set >> j & 1)) a->reach[set | 1u << j] = 1;
    }
}

static void ao_state(struct nextok__sch *c, const struct ao *a, const struct om *m,
                     const struct nextok__sch_obj *o, uint32_t set, nextok__sch_name *member)
{
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    if (ao_may_end(a, m, set)) nextok__sch_fmt(c, &b, " %s", m->st[om_at(m, m->n, ao_count(m, set))]);
    for (size_t j = 0; j < a->n && ao_may_add(m, o, set); j++) {
        uint32_t next = set | 1u << j;
        if ((set >> j & 1) || !a->ok[next]) continue;
        if (b.len) nextok__sch_put(c, &b, " |");
        nextok__sch_comma(c, &b, set != 0);
        nextok__sch_fmt(c, &b, " %s %s", member[a->live[j]], a->st[next]);
    }
    nextok__sch_newname(c, a->st[set]);
    nextok__sch_rule(c, a->st[set], &b);
}

/* The any-order states over m's last row; false when no object is valid
 * (or on an error, in c->d->rc). */
static bool any_order(struct nextok__sch *c, struct om *m, struct nextok__sch_obj *o,
                      nextok__sch_name *member, const char *am, const size_t *live, size_t n_live,
                      nextok__sch_name start)
{
    struct nextok__sch_doc *d = c->d;
    if (n_live > NEXTOK__SCH_MAX_ANY) {
        char at[256];
        nextok__sch_pointer(d, o->node[0], at, sizeof at);
        return nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                                "%s: properties in any order: at most %u per object, this one has "
                                "%zu",
                                at, NEXTOK__SCH_MAX_ANY, n_live);
    }
    struct ao a = {n_live, {0}, 0, NULL, NULL, NULL};
    for (size_t j = 0; j < n_live; j++) {
        a.live[j] = live[j];
        if (o->names[live[j]].required) a.required |= 1u << j;
    }
    for (size_t i = 0; i < o->n_names; i++) /* a required name that cannot be written */
        if (o->names[i].required && !member[i][0]) return false;
    size_t sets = (size_t)1 << n_live;
    a.ok = nextok__calloc(d->mem, sets, 1);
    a.reach = nextok__calloc(d->mem, sets, 1);
    a.st = nextok__calloc(d->mem, sets, sizeof *a.st);
    bool any = false;
    if (!a.ok || !a.reach || !a.st) {
        nextok__sch_nomem(d);
    } else {
        for (uint64_t k = 0; k <= m->cap; k++) /* the additional members' row */
            if (m->ok[om_at(m, m->n, k)]) om_state(c, m, o, m->n, k, member, am);
        ao_solve(&a, m, o);
        any = a.ok[0];
        for (size_t set = sets; any && set-- > 0;)
            if (a.ok[set] && a.reach[set]) ao_state(c, &a, m, o, (uint32_t)set, member);
        if (any) memcpy(start, a.st[0], sizeof a.st[0]);
    }
    nextok__free(d->mem, a.ok);
    nextok__free(d->mem, a.reach);
    nextok__free(d->mem, a.st);
    return any && d->rc == NEXTOK_OK;
}

/* Member rules, then the states; " name" of the object appended to b. */
static bool members(struct nextok__sch *c, struct nextok__buf *b, struct nextok__sch_obj *o)
{
    struct nextok__sch_doc *d = c->d;
    size_t n = o->n_names, required = 0, n_live = 0;
    nextok__sch_name *member = nextok__calloc(d->mem, n ? n : 1, sizeof *member), am = "", start;
    size_t *live = nextok__calloc(d->mem, n ? n : 1, sizeof *live);
    if (!live) nextok__sch_nomem(d);
    for (size_t i = 0; member && live && i < n && d->rc == NEXTOK_OK; i++) {
        struct nextok__sch_pname *p = &o->names[i];
        nextok__sch_name value;
        if (!value_rule(c, o, p, value) || p->forbidden) continue;
        required += p->required;
        live[n_live++] = i;
        struct nextok__buf m = nextok__buf_of(d->mem), key = nextok__buf_of(d->mem);
        size_t len = 0;
        const char *s = nextok__json_str(&d->json, p->str, &len);
        nextok__sch_json_string(c, &key, s, len);
        nextok__sch_lit(c, &m, key.data, key.len);
        nextok__buf_free(&key);
        nextok__sch_ws(c, &m);
        nextok__sch_lit(c, &m, ":", 1);
        nextok__sch_ws(c, &m);
        nextok__sch_fmt(c, &m, " %s", value);
        nextok__sch_newname(c, member[i]);
        nextok__sch_rule(c, member[i], &m);
    }
    if (!member) nextok__sch_nomem(d);
    if (o->addl_ok && o->min >= required + 2 && d->rc == NEXTOK_OK &&
        nextok__sch_refuse(d, o->node[0], "minProperties",
                           "cannot be enforced where additional properties may repeat a key"))
        o->min = 0;
    if (o->addl_ok && d->rc == NEXTOK_OK && !nextok__sch_additional(c, o, am)) o->addl_ok = false;
    struct om m = {n, 0, o->max != UINT64_MAX, NULL, NULL, NULL};
    m.cap = m.has_max ? (o->max < n ? o->max : n) : (o->min < n ? o->min : n);
    if (!m.has_max && m.cap == 0) m.cap = 1;
    size_t states = (n + 1) * (size_t)(m.cap + 1);
    if (d->rc == NEXTOK_OK && states > NEXTOK__SCH_MAX_STATES)
        nextok__sch_fail(d, NEXTOK_ERR_LIMIT, "schema: an object needs more than %u member states",
                         NEXTOK__SCH_MAX_STATES);
    if (d->rc == NEXTOK_OK) {
        m.ok = nextok__calloc(d->mem, states, 1);
        m.reach = nextok__calloc(d->mem, states, 1);
        m.st = nextok__calloc(d->mem, states, sizeof *m.st);
        if (!m.ok || !m.reach || !m.st) nextok__sch_nomem(d);
    }
    bool any = false;
    if (d->rc == NEXTOK_OK && d->sp.order == NEXTOK_JSON_ORDER_ANY && n_live > 1) {
        om_solve(&m, o); /* for the additional members' row */
        any = any_order(c, &m, o, member, am, live, n_live, start);
    } else if (d->rc == NEXTOK_OK) {
        om_solve(&m, o);
        any = m.ok[0];
        for (size_t i = n + 1; any && i-- > 0;)
            for (uint64_t k = 0; k <= m.cap; k++)
                if (m.ok[om_at(&m, i, k)] && m.reach[om_at(&m, i, k)])
                    om_state(c, &m, o, i, k, member, am);
        if (any) memcpy(start, m.st[0], sizeof start);
    }
    if (any && d->rc == NEXTOK_OK) {
        struct nextok__buf top = nextok__buf_of(d->mem);
        nextok__sch_lit(c, &top, "{", 1);
        nextok__sch_ws(c, &top);
        nextok__sch_fmt(c, &top, " %s", start);
        nextok__sch_name name;
        nextok__sch_newname(c, name);
        nextok__sch_rule(c, name, &top);
        nextok__sch_fmt(c, b, " %s", name);
    }
    nextok__free(d->mem, m.ok);
    nextok__free(d->mem, m.reach);
    nextok__free(d->mem, m.st);
    nextok__free(d->mem, member);
    nextok__free(d->mem, live);
    return any && d->rc == NEXTOK_OK;
}

bool nextok__sch_object(struct nextok__sch *c, struct nextok__buf *b,
                        const struct nextok__sch_el *els, size_t n)
{
    struct nextok__sch_obj o;
    memset(&o, 0, sizeof o);
    o.names = nextok__alloc_array(c->d->mem, NEXTOK__SCH_MAX_NAMES, sizeof *o.names);
    o.scope = nextok__alloc_array(c->d->mem, NEXTOK__SCH_MAX_CONJ * NEXTOK__SCH_MAX_CONJ,
                                  sizeof *o.scope);
    bool ok = o.names && o.scope ? collect(c->d, &o, els, n) && nextok__sch_pattern_keys(c, &o) &&
                                       nextok__sch_property_names(c, &o) && members(c, b, &o)
                                 : nextok__sch_nomem(c->d);
    nextok__free(c->d->mem, o.names);
    nextok__free(c->d->mem, o.scope);
    return ok;
}
