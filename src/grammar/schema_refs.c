/*
 * The schema document: each node's container (for JSON pointers in
 * messages), the spelling of each number (bounds and constants are exact
 * decimals, not doubles), the resources ($id, draft-04 "id") and anchors
 * ($anchor, $dynamicAnchor, draft-07 "$id": "#name"), and $ref resolution
 * against them (RFC 3986 section 5.2 for relative references, RFC 6901
 * pointers, percent-decoded fragments). A reference to anything outside the
 * document is refused: nothing is fetched.
 */
#include "schema_internal.h"

#include <stdio.h>

/* ---- parents and numbers -------------------------------------------------------- */

static bool parents(struct nextok__sch_doc *d)
{
    const struct nextok__json *j = &d->json;
    d->parent = nextok__alloc_array(d->mem, j->n, sizeof *d->parent);
    if (!d->parent) return nextok__sch_nomem(d);
    for (uint32_t v = 0; v < j->n; v++) d->parent[v] = NEXTOK__SCH_NONE;
    for (uint32_t v = 0; v < j->n; v++) {
        enum nextok__json_type t = nextok__json_type(j, v);
        for (uint32_t k = nextok__json_first(j, v); k != NEXTOK__SCH_NONE;
             k = nextok__json_next(j, k)) {
            d->parent[k] = v;
            if (t == NEXTOK__JSON_OBJECT) d->parent[k + 1] = v;
        }
    }
    return true;
}

static bool number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* The text is valid JSON (the tree was built from it): numbers are the runs
 * that start with '-' or a digit outside strings, in document order, as the
 * number nodes are. */
static bool numbers(struct nextok__sch_doc *d)
{
    const struct nextok__json *j = &d->json;
    d->num = nextok__calloc(d->mem, j->n, sizeof *d->num);
    if (!d->num) return nextok__sch_nomem(d);
    uint32_t v = 0;
    for (size_t i = 0; i < d->src_len;) {
        char ch = d->src[i];
        if (ch == '"') {
            for (i++; i < d->src_len && d->src[i] != '"'; i++)
                if (d->src[i] == '\\') i++;
            i++;
            continue;
        }
        if (ch != '-' && (ch < '0' || ch > '9')) {
            i++;
            continue;
        }
        size_t start = i;
        while (i < d->src_len && number_char(d->src[i])) i++;
        while (v < j->n && nextok__json_type(j, v) != NEXTOK__JSON_INT &&
               nextok__json_type(j, v) != NEXTOK__JSON_REAL)
            v++;
        if (v == j->n) break;
        d->num[v].off = (uint32_t)start;
        d->num[v].len = (uint32_t)(i - start);
        v++;
    }
    return true;
}

/* ---- URIs (RFC 3986) ---------------------------------------------------------------- */

struct uri {
    const char *scheme, *auth, *path, *query;
    size_t n_scheme, n_auth, n_path, n_query;
    bool has_scheme, has_auth, has_query;
};

static void uri_parse(const char *s, size_t n, struct uri *u)
{
    memset(u, 0, sizeof *u);
    size_t i = 0;
    while (i < n &&
           ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
            (i > 0 && ((s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '-' || s[i] == '.'))))
        i++;
    if (i > 0 && i < n && s[i] == ':') {
        u->has_scheme = true;
        u->scheme = s;
        u->n_scheme = i;
        s += i + 1;
        n -= i + 1;
    }
    if (n >= 2 && s[0] == '/' && s[1] == '/') {
        size_t k = 2;
        while (k < n && s[k] != '/' && s[k] != '?') k++;
        u->has_auth = true;
        u->auth = s + 2;
        u->n_auth = k - 2;
        s += k;
        n -= k;
    }
    size_t k = 0;
    while (k < n && s[k] != '?') k++;
    u->path = s;
    u->n_path = k;
    if (k < n) {
        u->has_query = true;
        u->query = s + k + 1;
        u->n_query = n - k - 1;
    }
}

/* RFC 3986 5.2.4, appending the result to out. */
static bool remove_dots(struct nextok__sch_doc *d, struct nextok__buf *out, const char *p, size_t n)
{
    size_t base = out->len;
    while (n > 0) {
        if (n >= 3 && memcmp(p, "../", 3) == 0)
            p += 3, n -= 3;
        else if (n >= 2 && memcmp(p, "./", 2) == 0)
            p += 2, n -= 2;
        else if (n >= 3 && memcmp(p, "/./", 3) == 0)
            p += 2, n -= 2;
        else if (n == 2 && memcmp(p, "/.", 2) == 0)
            p = "/", n = 1;
        else if ((n >= 4 && memcmp(p, "/../", 4) == 0) || (n == 3 && memcmp(p, "/..", 3) == 0)) {
            p += 3, n -= 3;
            if (n == 0)
                p = "/", n = 1;
            else
                p--, n++;
            while (out->len > base && out->data[out->len - 1] != '/') out->len--;
            if (out->len > base) out->len--;
        } else if ((n == 1 && p[0] == '.') || (n == 2 && memcmp(p, "..", 2) == 0)) {
            n = 0;
        } else {
            size_t k = p[0] == '/' ? 1 : 0;
            while (k < n && p[k] != '/') k++;
            if (nextok__buf_append(out, p, k) != NEXTOK_OK) return nextok__sch_nomem(d);
            p += k, n -= k;
        }
    }
    return true;
}

static bool app(struct nextok__sch_doc *d, struct nextok__buf *b, const char *s, size_t n)
{
    return nextok__buf_append(b, s, n) == NEXTOK_OK || nextok__sch_nomem(d);
}

/* The target URI of reference ref against base (RFC 3986 5.2.2), NUL-terminated
 * in out. No fragment in either. */
static bool uri_resolve(struct nextok__sch_doc *d, const char *base, const char *ref, size_t n_ref,
                        struct nextok__buf *out)
{
    struct uri b, r;
    uri_parse(base, strlen(base), &b);
    uri_parse(ref, n_ref, &r);
    out->len = 0;
    const struct uri *auth = &r, *q = &r;
    const char *path = r.path;
    size_t n_path = r.n_path;
    bool merge = false;
    if (!r.has_scheme) {
        r.has_scheme = b.has_scheme, r.scheme = b.scheme, r.n_scheme = b.n_scheme;
        if (!r.has_auth) {
            auth = &b;
            if (n_path == 0) {
                path = b.path, n_path = b.n_path;
                if (!r.has_query) q = &b;
            } else {
                merge = path[0] != '/';
            }
        }
    }
    bool ok = true;
    if (r.has_scheme) ok = app(d, out, r.scheme, r.n_scheme) && app(d, out, ":", 1);
    if (ok && auth->has_auth) ok = app(d, out, "//", 2) && app(d, out, auth->auth, auth->n_auth);
    if (ok && merge) {
        struct nextok__buf m = nextok__buf_of(d->mem);
        size_t keep = b.n_path;
        while (keep > 0 && b.path[keep - 1] != '/') keep--;
        if (b.has_auth && b.n_path == 0) ok = app(d, &m, "/", 1);
        ok = ok && app(d, &m, b.path, keep) && app(d, &m, path, n_path) &&
             remove_dots(d, out, m.data, m.len);
        nextok__buf_free(&m);
    } else if (ok) {
        ok = remove_dots(d, out, path, n_path);
    }
    if (ok && q->has_query) ok = app(d, out, "?", 1) && app(d, out, q->query, q->n_query);
    return ok && app(d, out, "", 1);
}

/* ---- resources and anchors ------------------------------------------------------------- */

static bool add_anchor(struct nextok__sch_doc *d, uint32_t res, uint32_t name, uint32_t skip,
                       uint32_t node)
{
    if (d->n_anchors == d->cap_anchors) {
        size_t cap = d->cap_anchors ? 2 * d->cap_anchors : 16;
        void *p = nextok__realloc(d->mem, d->anchors, cap * sizeof *d->anchors);
        if (!p) return nextok__sch_nomem(d);
        d->anchors = p;
        d->cap_anchors = cap;
    }
    d->anchors[d->n_anchors++] = (struct nextok__sch_anchor){res, name, skip, node};
    return true;
}

static bool add_resource(struct nextok__sch_doc *d, uint32_t node, const char *uri)
{
    if (d->n_res == d->cap_res) {
        size_t cap = d->cap_res ? 2 * d->cap_res : 16;
        void *p = nextok__realloc(d->mem, d->resources, cap * sizeof *d->resources);
        if (!p) return nextok__sch_nomem(d);
        d->resources = p;
        d->cap_res = cap;
    }
    d->resources[d->n_res++] = node;
    d->res[node] = (uint32_t)d->uris.len + 1;
    return app(d, &d->uris, uri, strlen(uri) + 1);
}

/* Keywords whose value is a schema, an array of schemas, an object of schemas. */
static const char *const one_schema[] = {"additionalProperties",
                                         "propertyNames",
                                         "items",
                                         "additionalItems",
                                         "unevaluatedItems",
                                         "unevaluatedProperties",
                                         "contains",
                                         "not",
                                         "if",
                                         "then",
                                         "else",
                                         "contentSchema"};
static const char *const schema_arrays[] = {"allOf", "anyOf", "oneOf", "prefixItems", "items"};
static const char *const schema_objects[] = {
    "$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static bool walk(struct nextok__sch_doc *d, uint32_t v, uint32_t res, bool draft4);

/* Whether schema node v declares draft-04 (or 03) as its $schema: its base
 * URI is then in "id" (a plain unknown keyword in later drafts). */
static bool old_draft(const struct nextok__sch_doc *d, uint32_t v, bool outer)
{
    size_t n = 0;
    const char *s = nextok__json_str(&d->json, nextok__sch_get(d, v, "$schema"), &n);
    if (!s) return outer;
    return nextok__memfind(s, n, "draft-04", 8) || nextok__memfind(s, n, "draft-03", 8);
}

static bool walk_children(struct nextok__sch_doc *d, uint32_t v, uint32_t res, bool draft4)
{
    const struct nextok__json *j = &d->json;
    for (size_t i = 0; i < N_OF(one_schema); i++) {
        uint32_t s = nextok__sch_get(d, v, one_schema[i]);
        if (nextok__json_type(j, s) == NEXTOK__JSON_OBJECT && !walk(d, s, res, draft4))
            return false;
    }
    for (size_t i = 0; i < N_OF(schema_arrays); i++) {
        uint32_t a = nextok__sch_get(d, v, schema_arrays[i]);
        if (nextok__json_type(j, a) != NEXTOK__JSON_ARRAY) continue;
        for (uint32_t e = nextok__json_first(j, a); e != NEXTOK__SCH_NONE;
             e = nextok__json_next(j, e))
            if (!walk(d, e, res, draft4)) return false;
    }
    for (size_t i = 0; i < N_OF(schema_objects); i++) {
        uint32_t o = nextok__sch_get(d, v, schema_objects[i]);
        if (nextok__json_type(j, o) != NEXTOK__JSON_OBJECT) continue;
        for (uint32_t k = nextok__json_first(j, o); k != NEXTOK__SCH_NONE;
             k = nextok__json_next(j, k))
            if (!walk(d, k + 1, res, draft4)) return false;
    }
    return true;
}

static const char *base_of(const struct nextok__sch_doc *d, uint32_t res)
{
    return d->uris.data + d->res[res] - 1;
}

static bool walk(struct nextok__sch_doc *d, uint32_t v, uint32_t res, bool draft4)
{
    const struct nextok__json *j = &d->json;
    if (nextok__json_type(j, v) != NEXTOK__JSON_OBJECT) return true;
    draft4 = old_draft(d, v, draft4);
    uint32_t id = nextok__sch_get(d, v, draft4 ? "id" : "$id");
    size_t n = 0;
    const char *s = nextok__json_str(j, id, &n);
    if (s && n > 0 && s[0] == '#') {
        if (n > 1 && !add_anchor(d, res, id, 1, v)) return false;
    } else if (s && v != 0) {
        size_t k = 0;
        while (k < n && s[k] != '#') k++;
        struct nextok__buf u = nextok__buf_of(d->mem);
        bool ok = uri_resolve(d, base_of(d, res), s, k, &u) && add_resource(d, v, u.data);
        nextok__buf_free(&u);
        if (!ok) return false;
        res = v;
    }
    static const char *const anchors[] = {"$anchor", "$dynamicAnchor"};
    for (size_t i = 0; i < N_OF(anchors); i++) {
        uint32_t a = nextok__sch_get(d, v, anchors[i]);
        if (nextok__json_type(j, a) == NEXTOK__JSON_STRING && !add_anchor(d, res, a, 0, v))
            return false;
    }
    return walk_children(d, v, res, draft4);
}

bool nextok__sch_index(struct nextok__sch_doc *d)
{
    const struct nextok__json *j = &d->json;
    if (!parents(d) || !numbers(d)) return false;
    d->res = nextok__calloc(d->mem, j->n, sizeof *d->res);
    if (!d->res) return nextok__sch_nomem(d);
    size_t n = 0;
    d->draft4 = old_draft(d, 0, false);
    const char *id = nextok__json_str(j, nextok__sch_get(d, 0, d->draft4 ? "id" : "$id"), &n);
    struct nextok__buf u = nextok__buf_of(d->mem);
    bool ok = true;
    if (id && !(n > 0 && id[0] == '#')) {
        size_t k = 0;
        while (k < n && id[k] != '#') k++;
        ok = uri_resolve(d, "", id, k, &u);
    } else {
        ok = app(d, &u, "", 1);
    }
    ok = ok && add_resource(d, 0, u.data);
    nextok__buf_free(&u);
    return ok && walk(d, 0, 0, d->draft4);
}

/* ---- $ref --------------------------------------------------------------------------------- */

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static bool pct_decode(struct nextok__sch_doc *d, const char *s, size_t n, struct nextok__buf *out)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            c = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        }
        if (!app(d, out, &c, 1)) return false;
    }
    return true;
}

/* One step of a JSON pointer: the member or element of v named seg. */
static uint32_t step(const struct nextok__sch_doc *d, uint32_t v, const char *seg, size_t n)
{
    const struct nextok__json *j = &d->json;
    enum nextok__json_type t = nextok__json_type(j, v);
    uint32_t found = NEXTOK__SCH_NONE;
    if (t == NEXTOK__JSON_OBJECT) {
        for (uint32_t k = nextok__json_first(j, v); k != NEXTOK__SCH_NONE;
             k = nextok__json_next(j, k)) {
            size_t len = 0;
            const char *key = nextok__json_str(j, k, &len);
            if (len == n && memcmp(key, seg, n) == 0) found = k + 1;
        }
        return found;
    }
    if (t != NEXTOK__JSON_ARRAY || n == 0 || n > 9 || (n > 1 && seg[0] == '0')) return found;
    uint32_t idx = 0;
    for (size_t i = 0; i < n; i++) {
        if (seg[i] < '0' || seg[i] > '9') return found;
        idx = idx * 10 + (uint32_t)(seg[i] - '0');
    }
    uint32_t e = nextok__json_first(j, v);
    while (idx-- > 0 && e != NEXTOK__SCH_NONE) e = nextok__json_next(j, e);
    return e;
}

/* The node pointer p[0, n) (decoded, starting with '/') names from v. */
static uint32_t walk_pointer(struct nextok__sch_doc *d, uint32_t v, const char *p, size_t n)
{
    struct nextok__buf seg = nextok__buf_of(d->mem);
    size_t i = 0;
    while (v != NEXTOK__SCH_NONE && i < n) {
        i++; /* the '/' */
        seg.len = 0;
        for (; i < n && p[i] != '/'; i++) {
            char c = p[i];
            if (c == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1'))
                c = p[++i] == '0' ? '~' : '/';
            if (!app(d, &seg, &c, 1)) {
                v = NEXTOK__SCH_NONE;
                break;
            }
        }
        if (v != NEXTOK__SCH_NONE) v = step(d, v, seg.data ? seg.data : "", seg.len);
    }
    nextok__buf_free(&seg);
    return v;
}

static uint32_t resource_of(const struct nextok__sch_doc *d, uint32_t v)
{
    while (v != NEXTOK__SCH_NONE && d->res[v] == 0) v = d->parent[v];
    return v == NEXTOK__SCH_NONE ? 0 : v;
}

static uint32_t find_anchor(const struct nextok__sch_doc *d, uint32_t res, const char *name,
                            size_t n)
{
    for (size_t i = 0; i < d->n_anchors; i++) {
        const struct nextok__sch_anchor *a = &d->anchors[i];
        size_t len = 0;
        const char *s = nextok__json_str(&d->json, a->name, &len);
        if (a->res == res && len - a->skip == n && memcmp(s + a->skip, name, n) == 0)
            return a->node;
    }
    return NEXTOK__SCH_NONE;
}

bool nextok__sch_resolve(struct nextok__sch_doc *d, uint32_t from, uint32_t ref, uint32_t *out)
{
    size_t n = 0;
    const char *s = nextok__json_str(&d->json, ref, &n);
    if (!s) return nextok__sch_bad(d, from, "$ref", "must be a string");
    size_t k = 0;
    while (k < n && s[k] != '#') k++;
    uint32_t res = resource_of(d, from);
    char quoted[96];
    nextok__quote(quoted, sizeof quoted, s, n);
    if (k > 0) {
        struct nextok__buf u = nextok__buf_of(d->mem);
        bool ok = uri_resolve(d, base_of(d, res), s, k, &u);
        uint32_t found = NEXTOK__SCH_NONE;
        for (size_t i = 0; ok && i < d->n_res && found == NEXTOK__SCH_NONE; i++)
            if (strcmp(base_of(d, d->resources[i]), u.data) == 0) found = d->resources[i];
        nextok__buf_free(&u);
        if (!ok) return false;
        if (found == NEXTOK__SCH_NONE) { /* lenient: ignored, d->rc stays OK */
            nextok__sch_refuse(d, from, "$ref",
                               "is a remote reference (only references inside the schema are "
                               "followed)");
            return false;
        }
        res = found;
    }
    struct nextok__buf frag = nextok__buf_of(d->mem);
    if (k < n && !pct_decode(d, s + k + 1, n - k - 1, &frag)) {
        nextok__buf_free(&frag);
        return false;
    }
    uint32_t v = res;
    if (frag.len > 0 && frag.data[0] == '/')
        v = walk_pointer(d, res, frag.data, frag.len);
    else if (frag.len > 0)
        v = find_anchor(d, res, frag.data, frag.len);
    nextok__buf_free(&frag);
    if (d->rc != NEXTOK_OK) return false;
    enum nextok__json_type t = nextok__json_type(&d->json, v);
    if (v == NEXTOK__SCH_NONE) {
        char why[160];
        snprintf(why, sizeof why, "\"%s\" points to nothing in the schema", quoted);
        return nextok__sch_bad(d, from, "$ref", why);
    }
    if (t != NEXTOK__JSON_OBJECT && t != NEXTOK__JSON_TRUE && t != NEXTOK__JSON_FALSE) {
        char why[160];
        snprintf(why, sizeof why, "\"%s\" points to a value that is not a schema", quoted);
        return nextok__sch_bad(d, from, "$ref", why);
    }
    *out = v;
    return true;
}
