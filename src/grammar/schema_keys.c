/*
 * The keys of additional members. Without patternProperties: keys spelled
 * without escapes that differ from every declared name of the object (a trie
 * of the names, complemented), so that no additional member is a declared
 * property in another spelling. Additional keys may repeat one another
 * ({"x":1,"x":2}); each value is valid, so a parser that keeps either one
 * sees an instance, but duplicates would inflate a count: minProperties that
 * could need two additional members is refused (schema_objects.c).
 *
 * With one pattern and additionalProperties false: keys the pattern finds.
 * propertyNames beyond a type test: the declared names that fail it are
 * forbidden, which is exact only when there are no additional members.
 */
#include "schema_internal.h"

#include "../common/utf8.h"

#include <stdio.h>

#define MAX_KEY 512 /* bytes of a declared name that additional keys must avoid */

/* ---- objects: additional keys ----------------------------------------------------------- */

struct tname {
    const char *s;
    size_t n;
};

struct trie {
    struct nextok__sch *c;
    struct tname *s; /* the names, sorted by their bytes */
};

static int str_cmp(const void *a, const void *b)
{
    const struct tname *x = a, *y = b;
    int r = memcmp(x->s, y->s, x->n < y->n ? x->n : y->n);
    return r ? r : (x->n > y->n) - (x->n < y->n);
}

/* Raw key bodies that share bytes [0, p) with names s[lo, hi) and are none of them. */
static void key_rule(struct trie *t, size_t lo, size_t hi, size_t p, nextok__sch_name name)
{
    struct nextok__sch *c = t->c;
    struct nextok__buf alts = nextok__buf_of(c->d->mem), cls = nextok__buf_of(c->d->mem);
    bool terminal = t->s[lo].n == p;
    nextok__sch_put(c, &cls, " [^\"\\\\\\x00-\\x1F");
    for (size_t a = lo + terminal; a < hi && c->d->rc == NEXTOK_OK;) {
        const char *s = t->s[a].s;
        uint32_t cp = 0;
        size_t k = nextok__utf8_decode((const unsigned char *)s + p, t->s[a].n - p, &cp);
        size_t z = a + 1;
        while (z < hi && t->s[z].n >= p + k && memcmp(t->s[z].s + p, s + p, k) == 0) z++;
        nextok__sch_name child;
        key_rule(t, a, z, p + k, child);
        nextok__sch_put(c, &alts, " |");
        nextok__sch_lit(c, &alts, s + p, k);
        nextok__sch_fmt(c, &alts, " %s", child);
        nextok__sch_fmt(c, &cls, "\\U%08X", (unsigned)cp);
        a = z;
    }
    nextok__sch_fmt(c, &cls, "] %s*", nextok__sch_helper(c, "kc"));
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    if (!terminal) nextok__sch_put(c, &b, " \"\" |");
    nextok__sch_putn(c, &b, cls.data, cls.len);
    nextok__sch_putn(c, &b, alts.data, alts.len);
    nextok__buf_free(&cls);
    nextok__buf_free(&alts);
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &b);
}

static bool raw_key(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == '"' || s[i] == '\\') return false;
    return true;
}

/* The rule (in c->out) of the JSON strings (quotes included) whose value the
 * pattern of string node re finds; false: status set. */
static bool pattern_rule(struct nextok__sch *c, uint32_t node, uint32_t re, nextok__sch_name name)
{
    struct nextok__sch_doc *d = c->d;
    size_t n = 0;
    const char *s = nextok__json_str(&d->json, re, &n);
    nextok__sch_name body;
    nextok__sch_newname(c, body);
    struct nextok_error e = {NEXTOK_OK, ""};
    size_t before = c->out.len;
    nextok_status st =
        nextok__regex_to_gbnf(&c->out, body, s, n, NEXTOK__RE_SEARCH | NEXTOK__RE_JSON_STRING, &e);
    d->n_bytes += c->out.len - before;
    if (st == NEXTOK_ERR_NOMEM) return nextok__sch_nomem(d);
    if (st == NEXTOK_ERR_FORMAT) return nextok__sch_bad(d, node, "patternProperties", e.msg);
    if (st != NEXTOK_OK) {
        char why[NEXTOK_ERRMSG_MAX];
        snprintf(why, sizeof why, "cannot be enforced (%.200s)", e.msg);
        nextok__sch_refuse(d, node, "patternProperties", why);
        return false;
    }
    struct nextok__buf b = nextok__buf_of(d->mem);
    nextok__sch_fmt(c, &b, " \"\\\"\" %s \"\\\"\"", body);
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &b);
    return d->rc == NEXTOK_OK;
}

/* An additional member under patternProperties: a key the pattern finds. */
static bool pattern_member(struct nextok__sch *c, struct nextok__sch_obj *o, const char *value,
                           nextok__sch_name name)
{
    nextok__sch_name key;
    if (!pattern_rule(c, o->node[o->pp], o->pp_re, key)) return false;
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    nextok__sch_fmt(c, &b, " %s", key);
    nextok__sch_ws(c, &b);
    nextok__sch_lit(c, &b, ":", 1);
    nextok__sch_ws(c, &b);
    nextok__sch_fmt(c, &b, " %s", value);
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &b);
    return c->d->rc == NEXTOK_OK;
}

/*
 * patternProperties, one pattern P with schema S: enforced when the same
 * schema's additionalProperties is false (then the members beyond the
 * declared ones are exactly those whose key P finds, with values valid
 * against S and the other schemas' additionalProperties) and no declared name
 * matches P (so no such key is a declared property); when S is always true
 * and additionalProperties allows anything, P constrains nothing.
 */
bool nextok__sch_pattern_keys(struct nextok__sch *c, struct nextok__sch_obj *o)
{
    struct nextok__sch_doc *d = c->d;
    const struct nextok__json *j = &d->json;
    if (o->pp == SIZE_MAX) return true;
    uint32_t a = o->addl[o->pp], node = o->node[o->pp];
    unsigned mask = 0;
    bool trivial = nextok__sch_type_only(d, o->pp_schema, &mask) && mask == NEXTOK__ST_ALL;
    if (d->rc != NEXTOK_OK) return false;
    if (nextok__json_type(j, a) != NEXTOK__JSON_FALSE) {
        o->pp = SIZE_MAX; /* nothing to enforce, or (lenient) left out */
        return (trivial &&
                (a == NEXTOK__SCH_NONE || nextok__json_type(j, a) == NEXTOK__JSON_TRUE)) ||
               nextok__sch_refuse(d, node, "patternProperties",
                                  "cannot be enforced unless additionalProperties is false");
    }
    struct nextok__sch sub; /* a grammar of P alone, to test the declared names */
    memset(&sub, 0, sizeof sub);
    sub.d = d;
    sub.out = nextok__buf_of(d->mem);
    struct nextok_grammar *g = NULL;
    nextok__sch_name key;
    if (pattern_rule(&sub, node, o->pp_re, key)) {
        struct nextok__buf text = nextok__buf_of(d->mem);
        nextok__sch_fmt(&sub, &text, "root ::= %s\n", key);
        nextok__sch_putn(&sub, &text, sub.out.data, sub.out.len);
        if (d->rc == NEXTOK_OK) nextok__sch_compile(d, &text, &g);
        nextok__buf_free(&text);
    }
    bool clash = false, ignored = !g && d->rc == NEXTOK_OK; /* lenient: an unsupported pattern */
    for (size_t i = 0; g && i < o->n_names && !clash && d->rc == NEXTOK_OK; i++) {
        struct nextok__buf t = nextok__buf_of(d->mem);
        size_t len = 0;
        const char *str = nextok__json_str(j, o->names[i].str, &len);
        nextok__sch_json_string(&sub, &t, str, len);
        bool yes = true;
        nextok_status st = nextok_grammar_accepts(g, t.data, t.len, &yes, NULL);
        if (st == NEXTOK_ERR_NOMEM) nextok__sch_nomem(d);
        clash = st != NEXTOK_OK || yes;
        nextok__buf_free(&t);
    }
    nextok_grammar_free(g);
    nextok__sch_free(&sub);
    if (d->rc != NEXTOK_OK || ignored) {
        o->pp = SIZE_MAX;
        return d->rc == NEXTOK_OK;
    }
    if (clash) {
        o->pp = SIZE_MAX;
        return nextok__sch_refuse(d, node, "patternProperties",
                                  "cannot be enforced: a declared property matches its pattern");
    }
    o->addl_ok = true; /* keys P finds, unless another schema forbids additional ones */
    for (size_t i = 0; i < o->n; i++)
        if (i != o->pp && nextok__json_type(j, o->addl[i]) == NEXTOK__JSON_FALSE)
            o->addl_ok = false;
    return true;
}

/* The rule of an additional member: a key that is no declared name, its value. */
bool nextok__sch_additional(struct nextok__sch *c, struct nextok__sch_obj *o, nextok__sch_name name)
{
    struct nextok__sch_doc *d = c->d;
    const struct nextok__json *j = &d->json;
    uint32_t s[NEXTOK__SCH_MAX_CONJ];
    size_t n = 0;
    for (size_t i = 0; i < o->n; i++)
        if (o->addl[i] != NEXTOK__SCH_NONE && i != o->pp) s[n++] = o->addl[i];
    if (o->pp != SIZE_MAX) s[n++] = o->pp_schema;
    nextok__sch_name value, key;
    if (!nextok__sch_view_nodes(c, s, n, value)) return false;
    if (o->pp != SIZE_MAX) return pattern_member(c, o, value, name);
    struct trie t = {c, nextok__alloc_array(d->mem, o->n_names ? o->n_names : 1, sizeof *t.s)};
    if (!t.s) return nextok__sch_nomem(d);
    size_t m = 0;
    for (size_t i = 0; i < o->n_names; i++) {
        size_t len = 0;
        const char *str = nextok__json_str(j, o->names[i].str, &len);
        if (raw_key(str, len)) t.s[m++] = (struct tname){str, len};
        if (raw_key(str, len) && len > MAX_KEY) { /* the trie recurses once per character */
            nextok__free(d->mem, t.s);
            return nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                                    "schema: a property name longer than %d bytes in an object "
                                    "that allows additional properties",
                                    MAX_KEY);
        }
    }
    struct nextok__buf b = nextok__buf_of(d->mem);
    if (o->n_names == 0) { /* nothing to tell apart: any spelling */
        snprintf(key, sizeof key, "%s", nextok__sch_helper(c, "js"));
    } else if (m == 0) { /* every name needs an escape: keys without escapes differ */
        nextok__sch_fmt(c, &b, " \"\\\"\" %s* \"\\\"\"", nextok__sch_helper(c, "kc"));
        nextok__sch_newname(c, key);
        nextok__sch_rule(c, key, &b);
    } else {
        nextok__sort(t.s, m, sizeof *t.s, str_cmp);
        nextok__sch_name body;
        key_rule(&t, 0, m, 0, body);
        nextok__sch_fmt(c, &b, " \"\\\"\" %s \"\\\"\"", body);
        nextok__sch_newname(c, key);
        nextok__sch_rule(c, key, &b);
    }
    nextok__free(d->mem, t.s);
    nextok__sch_fmt(c, &b, " %s", key);
    nextok__sch_ws(c, &b);
    nextok__sch_lit(c, &b, ":", 1);
    nextok__sch_ws(c, &b);
    nextok__sch_fmt(c, &b, " %s", value);
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &b);
    return d->rc == NEXTOK_OK;
}

/* propertyNames that are more than a type test: the declared names that fail
 * them are forbidden; the names of additional properties cannot be checked. */
bool nextok__sch_property_names(struct nextok__sch *c, struct nextok__sch_obj *o)
{
    struct nextok__sch_doc *d = c->d;
    if (o->n_pn == 0 || (o->n_names == 0 && !o->addl_ok)) return true;
    if (o->addl_ok) {
        for (size_t i = 0; i < o->n_pn; i++)
            if (!nextok__sch_refuse(d, o->pn_node[i], "propertyNames",
                                    "cannot be enforced where additional properties are allowed"))
                return false;
        return true;
    }
    struct nextok__sch_el el[NEXTOK__SCH_MAX_CONJ];
    for (size_t i = 0; i < o->n_pn; i++)
        el[i] = (struct nextok__sch_el){o->pn[i], NEXTOK__SK_NODE, 0};
    struct nextok__buf *texts = nextok__calloc(d->mem, o->n_names, sizeof *texts);
    bool *keep = nextok__alloc_array(d->mem, o->n_names, sizeof *keep);
    if (texts && keep) {
        for (size_t i = 0; i < o->n_names; i++) {
            size_t len = 0;
            const char *str = nextok__json_str(&d->json, o->names[i].str, &len);
            texts[i] = nextok__buf_of(d->mem);
            nextok__sch_json_string(c, &texts[i], str, len);
            keep[i] = true;
        }
        if (nextok__sch_check(c, el, o->n_pn, texts, o->n_names, keep))
            for (size_t i = 0; i < o->n_names; i++) o->names[i].forbidden |= !keep[i];
    } else {
        nextok__sch_nomem(d);
    }
    for (size_t i = 0; texts && i < o->n_names; i++) nextok__buf_free(&texts[i]);
    nextok__free(d->mem, texts);
    nextok__free(d->mem, keep);
    return d->rc == NEXTOK_OK;
}
