/*
 * JSON Schema to grammar (draft 2020-12; draft-07 and draft-04 spellings).
 *
 * The promise is soundness: every text the grammar accepts is a JSON text
 * that is an instance of the schema. A keyword that cannot be enforced
 * exactly is refused (NEXTOK_ERR_UNSUPPORTED, naming it and its JSON
 * pointer), or in lenient mode left out and reported. The grammar may reject
 * some instances (other property orders, other spellings of a number):
 * docs/grammars.md lists where.
 *
 * A view is a conjunction of schema nodes ($ref and allOf are expanded into
 * it); each distinct view is one rule s<id>, written once, from a work list.
 * anyOf / oneOf (when its branches are disjoint), if/then/else (when `if` is
 * a type test) and the dependent* keywords are distributed into one view per
 * alternative; the other keywords of a view are merged (the tightest bounds,
 * the intersection of the types) and written per instance type.
 */
#include "schema_internal.h"

#include "../common/utf8.h"

#include <stdio.h>

/* ---- writing ------------------------------------------------------------------------------ */

static void write_view(struct nextok__sch *c, uint32_t id)
{
    struct nextok__sch_el el[NEXTOK__SCH_MAX_CONJ];
    size_t n = c->views[id].n;
    memcpy(el, c->els + c->views[id].first, n * sizeof el[0]);
    c->cur = id;
    c->sub = 0;
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    bool done = false;
    if (nextok__sch_combine(c, el, n, &b, &done) && !done) nextok__sch_write(c, el, n, &b);
    char name[16];
    snprintf(name, sizeof name, "s%u", id);
    if (c->d->rc == NEXTOK_OK && b.len == 0)
        nextok__sch_fmt(c, &b, " %s", nextok__sch_helper(c, "nv"));
    nextok__sch_rule(c, name, &b);
}

bool nextok__sch_build(struct nextok__sch *c, const struct nextok__sch_el *els, size_t n,
                       struct nextok__buf *text)
{
    nextok__sch_name root;
    if (!nextok__sch_view(c, els, n, root)) return false;
    while (c->done < c->n_views && c->d->rc == NEXTOK_OK) write_view(c, c->done++);
    if (c->d->rc != NEXTOK_OK) return false;
    if (nextok__buf_append(text, "root ::= ", 9) != NEXTOK_OK ||
        nextok__buf_append(text, root, strlen(root)) != NEXTOK_OK ||
        nextok__buf_append(text, "\n", 1) != NEXTOK_OK ||
        nextok__buf_append(text, c->out.data, c->out.len) != NEXTOK_OK)
        return nextok__sch_nomem(c->d);
    return true;
}

/* ---- public ----------------------------------------------------------------------------------- */

struct nextok_json_schema_params nextok_json_schema_default_params(void)
{
    struct nextok_json_schema_params p;
    memset(&p, 0, sizeof p);
    p.whitespace = NEXTOK_JSON_WS_FLEXIBLE;
    p.max_ws = 20;
    return p;
}

static nextok_status check_utf8(const char *s, size_t n, struct nextok_error *err)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = nextok__utf8_decode((const unsigned char *)s + i, n - i, &cp);
        NEXTOK_RETURN_IF(!k, err, NEXTOK_ERR_FORMAT, "schema: byte %zu: invalid UTF-8", i);
        i += k;
    }
    return NEXTOK_OK;
}

static void doc_free(struct nextok__sch_doc *d)
{
    const struct nextok__mem *mem = d->mem;
    nextok__json_free(&d->json);
    nextok__free(mem, d->parent);
    nextok__free(mem, d->num);
    nextok__free(mem, d->res);
    nextok__buf_free(&d->uris);
    nextok__free(mem, d->resources);
    nextok__free(mem, d->anchors);
    nextok__free(mem, d->ign);
}

/* Parse and index the schema, write its GBNF text. */
static bool schema_text(struct nextok__sch_doc *d, struct nextok__buf *text)
{
    struct nextok__js s;
    nextok__js_init(&s, d->mem, d->src, d->src_len);
    if (!(nextok__json_parse(&d->json, &s, NULL) && nextok__js_at_end(&s))) {
        if (s.nomem) return nextok__sch_nomem(d);
        if (s.err_what && strcmp(s.err_what, "nesting too deep") == 0)
            return nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                                    "schema: byte %zu: nested more than %d deep",
                                    nextok__js_offset(&s), NEXTOK__JS_MAX_DEPTH);
        return nextok__sch_fail(d, NEXTOK_ERR_FORMAT, "schema: byte %zu: %s", nextok__js_offset(&s),
                                s.err_what);
    }
    enum nextok__json_type t = nextok__json_type(&d->json, 0);
    if (t != NEXTOK__JSON_OBJECT && t != NEXTOK__JSON_TRUE && t != NEXTOK__JSON_FALSE)
        return nextok__sch_fail(d, NEXTOK_ERR_FORMAT, "schema: must be an object or a boolean");
    if (!nextok__sch_index(d)) return false;
    struct nextok__sch c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.out = nextok__buf_of(d->mem);
    const struct nextok__sch_el root = {0, NEXTOK__SK_NODE, 0};
    bool ok = nextok__sch_build(&c, &root, 1, text);
    nextok__sch_free(&c);
    return ok;
}

static nextok_status start(struct nextok__sch_doc *d, const char *schema, size_t len,
                           const struct nextok_json_schema_params *sp,
                           const struct nextok__mem *mem, struct nextok_error *err)
{
    struct nextok_json_schema_params p = sp ? *sp : nextok_json_schema_default_params();
    NEXTOK_RETURN_IF(!schema && len, err, NEXTOK_ERR_INVALID_ARG, "schema: NULL with len %zu", len);
    NEXTOK_RETURN_IF(p.whitespace != NEXTOK_JSON_WS_FLEXIBLE &&
                         p.whitespace != NEXTOK_JSON_WS_COMPACT,
                     err, NEXTOK_ERR_INVALID_ARG, "whitespace: must be FLEXIBLE or COMPACT, got %d",
                     (int)p.whitespace);
    NEXTOK_RETURN_IF(p.order != NEXTOK_JSON_ORDER_SCHEMA && p.order != NEXTOK_JSON_ORDER_ANY, err,
                     NEXTOK_ERR_INVALID_ARG, "order: must be SCHEMA or ANY, got %d", (int)p.order);
    NEXTOK_RETURN_IF(p.max_ws > 64, err, NEXTOK_ERR_INVALID_ARG, "max_ws: must be <= 64, got %u",
                     p.max_ws);
    NEXTOK_RETURN_IF(len > NEXTOK__SCH_MAX_TEXT, err, NEXTOK_ERR_LIMIT,
                     "schema: longer than %u MiB", NEXTOK__SCH_MAX_TEXT >> 20);
    NEXTOK_FORWARD(check_utf8(schema, len, err));
    memset(d, 0, sizeof *d);
    d->mem = mem;
    d->src = schema ? schema : "";
    d->src_len = len;
    d->uris = nextok__buf_of(mem);
    d->sp = p;
    d->err = err;
    d->build = nextok__sch_build; /* the way back up for nextok__sch_check */
    return NEXTOK_OK;
}

nextok_status nextok__schema_gbnf(const char *schema, size_t len,
                                  const struct nextok_json_schema_params *sp,
                                  const struct nextok_grammar_params *params,
                                  struct nextok__buf *text, struct nextok_error *err)
{
    struct nextok__sch_doc d;
    struct nextok_grammar_params gp = params ? *params : nextok_grammar_default_params();
    NEXTOK_FORWARD(start(&d, schema, len, sp, text->mem, err));
    d.gp = &gp;
    schema_text(&d, text);
    doc_free(&d);
    return d.rc;
}

nextok_status nextok_grammar_init_json_schema(struct nextok_grammar **out, const char *schema,
                                              size_t len,
                                              const struct nextok_json_schema_params *sp,
                                              const struct nextok_grammar_params *params,
                                              struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    struct nextok_grammar_params gp = params ? *params : nextok_grammar_default_params();
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, gp.allocator, err));
    struct nextok__sch_doc d;
    NEXTOK_FORWARD(start(&d, schema, len, sp, &mem, err));
    d.gp = &gp;
    struct nextok__buf text = nextok__buf_of(&mem);
    if (schema_text(&d, &text)) nextok__sch_compile(&d, &text, out);
    nextok__buf_free(&text);
    if (d.rc == NEXTOK_OK && d.sp.on_ignored) { /* only once nothing can fail */
        for (size_t i = 0; i < d.n_ign; i++) {
            char ptr[512];
            nextok__sch_pointer(&d, d.ign[i].node, ptr, sizeof ptr);
            d.sp.on_ignored(d.sp.user, ptr, d.ign[i].keyword);
        }
    }
    nextok_status rc = d.rc;
    if (rc != NEXTOK_OK) {
        nextok_grammar_free(*out);
        *out = NULL;
    }
    doc_free(&d);
    return rc;
}
