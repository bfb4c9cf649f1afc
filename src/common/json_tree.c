/* JSON tree over the pull scanner (see json.h). */
#include "json.h"

struct builder {
    struct nextok__json *doc;
    struct nextok__js *s;
    const char *const *const *raw;
    /* Per open container (index depth - 1): the key of the member being
     * read, as an offset into doc->str; len SIZE_MAX inside arrays. */
    size_t key_off[NEXTOK__JS_MAX_DEPTH];
    size_t key_len[NEXTOK__JS_MAX_DEPTH];
};

static bool value(struct builder *b);

/* Append a node of the given type; *at receives its index. */
static bool push(struct builder *b, enum nextok__json_type type, uint32_t *at)
{
    struct nextok__json *d = b->doc;
    if (d->n == d->cap) {
        if (d->cap >= UINT32_MAX / 2) return nextok__js_fail(b->s, "too many values");
        uint32_t cap = d->cap ? d->cap * 2 : 64;
        struct nextok__json_node *p = nextok__realloc(d->mem, d->node, (size_t)cap * sizeof *p);
        if (!p) return nextok__js_nomem(b->s);
        d->node = p;
        d->cap = cap;
    }
    *at = d->n++;
    struct nextok__json_node *nd = &d->node[*at];
    memset(nd, 0, sizeof *nd);
    nd->type = (uint8_t)type;
    nd->next = NEXTOK__JSON_NO_NODE;
    return true;
}

/* The string just appended to doc->str from off on becomes node at. */
static bool close_string(struct builder *b, uint32_t at, size_t off)
{
    struct nextok__json *d = b->doc;
    size_t len = d->str.len - off;
    if (nextok__buf_append(&d->str, "", 1) != NEXTOK_OK) return nextok__js_nomem(b->s);
    d->node[at].off = off;
    d->node[at].len = len;
    return true;
}

static bool string(struct builder *b)
{
    uint32_t at;
    size_t off = b->doc->str.len;
    return push(b, NEXTOK__JSON_STRING, &at) && nextok__js_string(b->s, &b->doc->str) &&
           close_string(b, at, off);
}

static bool number(struct builder *b)
{
    bool is_int = true;
    int64_t i = 0;
    double d = 0;
    uint32_t at;
    if (!push(b, NEXTOK__JSON_INT, &at) || !nextok__js_num(b->s, &is_int, &i, &d)) return false;
    struct nextok__json_node *nd = &b->doc->node[at];
    nd->type = is_int ? NEXTOK__JSON_INT : NEXTOK__JSON_REAL;
    if (is_int) nd->num.i = i;
    else nd->num.d = d;
    return true;
}

static bool word(struct builder *b, enum nextok__json_type type, const char *text)
{
    uint32_t at;
    return push(b, type, &at) && nextok__js_word(b->s, text);
}

/* Whether the member now being read (depth open containers) sits at one of
 * the raw key paths. */
static bool at_raw_path(const struct builder *b)
{
    int depth = b->s->depth;
    for (const char *const *const *path = b->raw; path && *path; path++) {
        int k = 0;
        for (; k < depth && (*path)[k]; k++) {
            size_t n = strlen((*path)[k]);
            if (b->key_len[k] != n || memcmp(b->doc->str.data + b->key_off[k], (*path)[k], n) != 0)
                break;
        }
        if (k == depth && !(*path)[k]) return true;
    }
    return false;
}

static bool raw_span(struct builder *b)
{
    struct nextok__js *s = b->s;
    uint32_t at;
    nextok__js_peek(s);
    const char *start = s->p;
    if (!push(b, NEXTOK__JSON_RAW, &at) || !nextok__js_skip(s)) return false;
    b->doc->node[at].off = (size_t)(start - s->base);
    b->doc->node[at].len = (size_t)(s->p - start);
    return true;
}

static bool object(struct builder *b)
{
    struct nextok__js *s = b->s;
    struct nextok__json *d = b->doc;
    uint32_t at, prev = NEXTOK__JSON_NO_NODE;
    size_t n = 0;
    bool first = true;
    int r;
    if (!push(b, NEXTOK__JSON_OBJECT, &at) || !nextok__js_enter(s, '{')) return false;
    int level = s->depth - 1;
    for (;;) {
        size_t off = d->str.len;
        if ((r = nextok__js_member(s, &first, &d->str)) != 1) break;
        uint32_t key;
        if (!push(b, NEXTOK__JSON_STRING, &key) || !close_string(b, key, off)) return false;
        if (prev != NEXTOK__JSON_NO_NODE) d->node[prev].next = key;
        prev = key;
        b->key_off[level] = off;
        b->key_len[level] = d->node[key].len;
        if (!(at_raw_path(b) ? raw_span(b) : value(b))) return false;
        n++;
    }
    d->node[at].len = n;
    return r == 0;
}

static bool array(struct builder *b)
{
    struct nextok__js *s = b->s;
    struct nextok__json *d = b->doc;
    uint32_t at, prev = NEXTOK__JSON_NO_NODE;
    size_t n = 0;
    bool first = true;
    int r;
    if (!push(b, NEXTOK__JSON_ARRAY, &at) || !nextok__js_enter(s, '[')) return false;
    b->key_len[s->depth - 1] = SIZE_MAX; /* no key path goes through an array */
    while ((r = nextok__js_element(s, &first)) == 1) {
        uint32_t elem = d->n;
        if (!value(b)) return false;
        if (prev != NEXTOK__JSON_NO_NODE) d->node[prev].next = elem;
        prev = elem;
        n++;
    }
    d->node[at].len = n;
    return r == 0;
}

static bool value(struct builder *b)
{
    int c = nextok__js_peek(b->s);
    switch (c) {
    case '"': return string(b);
    case '{': return object(b);
    case '[': return array(b);
    case 't': return word(b, NEXTOK__JSON_TRUE, "true");
    case 'f': return word(b, NEXTOK__JSON_FALSE, "false");
    case 'n': return word(b, NEXTOK__JSON_NULL, "null");
    case -1: return nextok__js_fail(b->s, "unexpected end of data");
    default:
        if (c != '-' && (c < '0' || c > '9')) return nextok__js_fail(b->s, "unexpected character");
        return number(b);
    }
}

bool nextok__json_parse(struct nextok__json *doc, struct nextok__js *s,
                        const char *const *const *raw)
{
    struct builder b;
    memset(&b, 0, sizeof b);
    doc->mem = s->mem;
    doc->str.mem = s->mem;
    b.doc = doc;
    b.s = s;
    b.raw = raw;
    return value(&b);
}

nextok_status nextok__json_parse_object(struct nextok__json *doc, const struct nextok__mem *mem,
                                        const char *text, size_t n, const char *const *const *raw,
                                        const char *file, struct nextok_error *err)
{
    struct nextok__js s;
    nextok__js_init(&s, mem, text, n);
    bool ok = nextok__js_peek(&s) == '{' ? nextok__json_parse(doc, &s, raw) && nextok__js_at_end(&s)
                                         : nextok__js_fail(&s, "expected an object");
    if (ok) return NEXTOK_OK;
    if (s.nomem) return nextok__err(err, NEXTOK_ERR_NOMEM, "%s: out of memory", file);
    return nextok__err(err, NEXTOK_ERR_FORMAT, "%s: byte %zu: %s", file, nextok__js_offset(&s),
                       s.err_what);
}

void nextok__json_free(struct nextok__json *doc)
{
    if (doc->node) nextok__free(doc->mem, doc->node);
    if (doc->str.data) nextok__buf_free(&doc->str);
    memset(doc, 0, sizeof *doc);
}

uint32_t nextok__json_get(const struct nextok__json *d, uint32_t obj, const char *key)
{
    if (nextok__json_type(d, obj) != NEXTOK__JSON_OBJECT) return NEXTOK__JSON_NO_NODE;
    size_t n = strlen(key);
    uint32_t found = NEXTOK__JSON_NO_NODE;
    for (uint32_t k = nextok__json_first(d, obj); k != NEXTOK__JSON_NO_NODE; k = d->node[k].next) {
        const struct nextok__json_node *nd = &d->node[k];
        if (nd->len == n && memcmp(d->str.data + nd->off, key, n) == 0) found = k + 1;
    }
    return found;
}

uint32_t nextok__json_first(const struct nextok__json *d, uint32_t v)
{
    enum nextok__json_type t = nextok__json_type(d, v);
    if ((t != NEXTOK__JSON_ARRAY && t != NEXTOK__JSON_OBJECT) || d->node[v].len == 0)
        return NEXTOK__JSON_NO_NODE;
    return v + 1;
}

const char *nextok__json_str(const struct nextok__json *d, uint32_t v, size_t *len)
{
    if (nextok__json_type(d, v) != NEXTOK__JSON_STRING) {
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = d->node[v].len;
    return d->str.data + d->node[v].off;
}

bool nextok__json_int(const struct nextok__json *d, uint32_t v, int64_t *out)
{
    if (nextok__json_type(d, v) != NEXTOK__JSON_INT) return false;
    *out = d->node[v].num.i;
    return true;
}

size_t nextok__json_len(const struct nextok__json *d, uint32_t v)
{
    enum nextok__json_type t = nextok__json_type(d, v);
    return t == NEXTOK__JSON_ARRAY || t == NEXTOK__JSON_OBJECT ? d->node[v].len : 0;
}
