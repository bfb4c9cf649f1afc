/*
 * What every file of the JSON Schema front end shares, using none of them (the
 * bottom layer; see schema_internal.h): failures, JSON pointers for messages,
 * keyword lookup, writing GBNF text (literals, rule names, rules), the shared
 * rules (any JSON value, strings, numbers, whitespace), repetitions of any
 * size, compiling the GBNF written here and freeing a grammar being written.
 */
#include "schema_internal.h"

#include <stdio.h>

/* ---- failures ------------------------------------------------------------------------ */

bool nextok__sch_fail(struct nextok__sch_doc *d, nextok_status st, const char *fmt, ...)
{
    if (d->rc != NEXTOK_OK) return false;
    d->rc = st;
    if (d->err) {
        va_list ap;
        va_start(ap, fmt);
        nextok__vfmt(d->err->msg, sizeof d->err->msg, fmt, ap);
        va_end(ap);
        d->err->status = st;
    }
    return false;
}

bool nextok__sch_nomem(struct nextok__sch_doc *d)
{
    return nextok__sch_fail(d, NEXTOK_ERR_NOMEM, "schema: out of memory");
}

static const char *ptr_of(const struct nextok__sch_doc *d, uint32_t node, char *buf, size_t cap)
{
    nextok__sch_pointer(d, node, buf, cap);
    return buf[0] ? buf : "(root)";
}

bool nextok__sch_refuse(struct nextok__sch_doc *d, uint32_t node, const char *kw, const char *why)
{
    if (d->rc != NEXTOK_OK) return false;
    if (!d->sp.lenient) {
        char ptr[160];
        return nextok__sch_fail(d, NEXTOK_ERR_UNSUPPORTED, "%s: keyword '%s' %s",
                                ptr_of(d, node, ptr, sizeof ptr), kw,
                                why ? why : "cannot be enforced");
    }
    for (size_t i = 0; i < d->n_ign; i++)
        if (d->ign[i].node == node && strcmp(d->ign[i].keyword, kw) == 0) return true;
    if (d->n_ign == d->cap_ign) {
        size_t cap = d->cap_ign ? 2 * d->cap_ign : 8;
        void *p = nextok__realloc(d->mem, d->ign, cap * sizeof *d->ign);
        if (!p) return nextok__sch_nomem(d);
        d->ign = p;
        d->cap_ign = cap;
    }
    d->ign[d->n_ign++] = (struct nextok__sch_ignored){node, kw};
    return true;
}

bool nextok__sch_bad(struct nextok__sch_doc *d, uint32_t node, const char *kw, const char *why)
{
    char ptr[160];
    nextok__sch_pointer(d, node, ptr, sizeof ptr);
    return nextok__sch_fail(d, NEXTOK_ERR_FORMAT, "%s/%s: %s", ptr, kw, why);
}

/* ---- pointers ----------------------------------------------------------------------------- */

void nextok__sch_pointer(const struct nextok__sch_doc *d, uint32_t node, char *buf, size_t cap)
{
    uint32_t path[NEXTOK__JS_MAX_DEPTH + 2];
    int depth = 0;
    for (uint32_t v = node; v != NEXTOK__SCH_NONE && d->parent[v] != NEXTOK__SCH_NONE &&
                            depth < (int)(sizeof path / sizeof path[0]);
         v = d->parent[v])
        path[depth++] = v;
    size_t n = 0;
    bool cut = false;
    buf[0] = '\0';
    for (int i = depth - 1; i >= 0 && !cut; i--) {
        uint32_t v = path[i], p = d->parent[v];
        buf[n++] = '/';
        if (nextok__json_type(&d->json, p) == NEXTOK__JSON_ARRAY) {
            uint32_t idx = 0;
            for (uint32_t e = nextok__json_first(&d->json, p); e != v && e != NEXTOK__SCH_NONE;
                 e = nextok__json_next(&d->json, e))
                idx++;
            if (n + 16 >= cap)
                cut = true;
            else
                n += (size_t)snprintf(buf + n, cap - n, "%u", idx);
            continue;
        }
        size_t len = 0;
        const char *key = nextok__json_str(&d->json, v - 1, &len);
        for (size_t k = 0; k < len && !cut; k++) {
            unsigned char c = (unsigned char)key[k];
            if (n + 8 >= cap) {
                cut = true;
                break;
            }
            if (c == '~' || c == '/') {
                buf[n++] = '~';
                buf[n++] = c == '~' ? '0' : '1';
            } else {
                buf[n++] = c < 0x20 ? '?' : (char)c;
            }
        }
    }
    if (cut) memcpy(buf + n, "...", 3), n += 3;
    buf[n] = '\0';
}

/* ---- keywords ------------------------------------------------------------------------------- */

uint32_t nextok__sch_get(const struct nextok__sch_doc *d, uint32_t obj, const char *key)
{
    return nextok__json_get(&d->json, obj, key);
}

/* ---- text ------------------------------------------------------------------------- */

void nextok__sch_putn(struct nextok__sch *c, struct nextok__buf *b, const char *s, size_t n)
{
    struct nextok__sch_doc *d = c->d;
    if (d->rc != NEXTOK_OK) return;
    d->n_bytes += n;
    if (d->n_bytes > NEXTOK__SCH_MAX_GBNF) {
        nextok__sch_fail(d, NEXTOK_ERR_LIMIT,
                         "schema: the grammar would be larger than %u MiB (NEXTOK_ERR_LIMIT)",
                         NEXTOK__SCH_MAX_GBNF >> 20);
        return;
    }
    if (nextok__buf_append(b, s, n) != NEXTOK_OK) nextok__sch_nomem(d);
}

void nextok__sch_put(struct nextok__sch *c, struct nextok__buf *b, const char *s)
{
    nextok__sch_putn(c, b, s, strlen(s));
}

void nextok__sch_fmt(struct nextok__sch *c, struct nextok__buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        nextok__sch_fail(c->d, NEXTOK_ERR_INTERNAL, "schema: rule text too long");
        return;
    }
    nextok__sch_putn(c, b, tmp, (size_t)n);
}

void nextok__sch_lit(struct nextok__sch *c, struct nextok__buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    nextok__sch_put(c, b, " \"");
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') {
            run++;
            continue;
        }
        nextok__sch_putn(c, b, s + i - run, run);
        run = 0;
        char esc[4] = {'\\', (char)ch, 0, 0};
        if (ch < 0x20) esc[1] = 'x', esc[2] = hex[ch >> 4], esc[3] = hex[ch & 15];
        nextok__sch_putn(c, b, esc, ch < 0x20 ? 4 : 2);
    }
    if (run) nextok__sch_putn(c, b, s + n - run, run); /* s may be NULL when n is 0 */
    nextok__sch_put(c, b, "\"");
}

void nextok__sch_ws(struct nextok__sch *c, struct nextok__buf *b)
{
    if (c->d->sp.whitespace != NEXTOK_JSON_WS_FLEXIBLE) return;
    nextok__sch_helper(c, "ws");
    nextok__sch_put(c, b, " ws");
}

void nextok__sch_newname(struct nextok__sch *c, nextok__sch_name name)
{
    snprintf(name, sizeof(nextok__sch_name), "s%u-%u", c->cur, ++c->sub);
}

void nextok__sch_rule(struct nextok__sch *c, const char *name, struct nextok__buf *b)
{
    nextok__sch_put(c, &c->out, name);
    nextok__sch_put(c, &c->out, " ::=");
    if (b->len) nextok__sch_putn(c, &c->out, b->data, b->len);
    nextok__sch_put(c, &c->out, "\n");
    nextok__buf_free(b);
}

/* ---- shared rules ------------------------------------------------------------------- */

static const struct {
    const char *name, *needs, *body; /* "W" in a body: whitespace */
} helpers[] = {
    {"ws", "", ""},
    {"jv", "jo ja js jn", " jo | ja | js | jn | \"true\" | \"false\" | \"null\""},
    {"jo", "jm", " \"{\"W \"}\" | \"{\"W jm (W \",\"W jm)*W \"}\""},
    {"jm", "js jv", " jsW \":\"W jv"},
    {"ja", "jv", " \"[\"W \"]\" | \"[\"W jv (W \",\"W jv)*W \"]\""},
    {"js", "jc", " \"\\\"\" jc* \"\\\"\""},
    {"jc", "jh", " [^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" jh )"},
    {"jh", "", " [0-9a-cA-C] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} | [eEfF] [0-9a-fA-F]{3}"},
    {"jn", "ju", " \"-\"? ju ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?"},
    {"ju", "", " \"0\" | [1-9] [0-9]*"},
    {"ji", "ju", " \"-\"? ju"},
    {"nv", "", " [^\\x00-\\U0010FFFF]"},
    {"kc", "", " [^\"\\\\\\x00-\\x1F]"},
    {"fany", "", " [0-9]*"},
    {"fz", "", " \"0\"*"},
};

const char *nextok__sch_helper(struct nextok__sch *c, const char *which)
{
    size_t i = 0;
    while (strcmp(helpers[i].name, which) != 0) i++;
    if (c->helpers & (1u << i)) return helpers[i].name;
    c->helpers |= 1u << i;
    bool flexible = c->d->sp.whitespace == NEXTOK_JSON_WS_FLEXIBLE;
    if (i != 0 && flexible) nextok__sch_helper(c, "ws");
    for (const char *p = helpers[i].needs; *p;) {
        char dep[8];
        size_t n = 0;
        while (p[n] && p[n] != ' ') n++;
        memcpy(dep, p, n);
        dep[n] = '\0';
        nextok__sch_helper(c, dep);
        p += n + (p[n] == ' ');
    }
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    if (i == 0) {
        if (c->d->sp.max_ws == 0)
            nextok__sch_put(c, &b, " \"\"");
        else
            nextok__sch_fmt(c, &b, " [ \\t\\n\\r]{0,%u}", c->d->sp.max_ws);
    }
    for (const char *p = helpers[i].body; *p; p++) {
        if (*p == 'W')
            nextok__sch_ws(c, &b);
        else
            nextok__sch_putn(c, &b, p, 1);
    }
    nextok__sch_rule(c, helpers[i].name, &b);
    return helpers[i].name;
}

/* ---- repetitions --------------------------------------------------------------------- */

/* Up to the front ends' repetition bound a repetition is written as {m,n}:
 * one rule per copy, which the matcher recognises as one counted repetition
 * (chains.c) and keeps cheap; past it, by decimal digits. */
#define REP_SMALL NEXTOK__G_MAX_REPEAT_FE

static void rule_of(struct nextok__sch *c, struct nextok__buf *body, nextok__sch_name name)
{
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, body);
}

/* Counts 0 .. N of blk[0] (blk[k]: exactly 10^k copies): by decimal digits. */
static void upto(struct nextok__sch *c, struct nextok__buf *b, nextok__sch_name *blk,
                 nextok__sch_name *full, uint64_t n)
{
    if (n <= REP_SMALL) {
        if (n > 0) nextok__sch_fmt(c, b, " %s{0,%llu}", blk[0], (unsigned long long)n);
        return;
    }
    int k = 0;
    uint64_t p = 1;
    while (n / p >= 10) p *= 10, k++;
    uint64_t q = n / p;
    struct nextok__buf r = nextok__buf_of(c->d->mem), rest = nextok__buf_of(c->d->mem);
    upto(c, &rest, blk, full, n - q * p);
    if (q > 1) nextok__sch_fmt(c, &r, " %s{0,%llu}", blk[k], (unsigned long long)(q - 1));
    nextok__sch_fmt(c, &r, " %s | %s{%llu}", full[k], blk[k], (unsigned long long)q);
    if (rest.len) nextok__sch_putn(c, &r, rest.data, rest.len);
    nextok__buf_free(&rest);
    nextok__sch_name name;
    rule_of(c, &r, name);
    nextok__sch_fmt(c, b, " %s", name);
}

void nextok__sch_rep(struct nextok__sch *c, struct nextok__buf *b, const char *item, uint64_t lo,
                     uint64_t hi)
{
    bool unbounded = hi == UINT64_MAX;
    if (lo <= REP_SMALL && (unbounded || hi <= REP_SMALL)) {
        if (unbounded)
            nextok__sch_fmt(c, b,
                            lo == 0   ? " %s*"
                            : lo == 1 ? " %s+"
                                      : " %s{%llu,}",
                            item, (unsigned long long)lo);
        else if (lo == hi && lo > 0)
            nextok__sch_fmt(c, b, lo == 1 ? " %s" : " %s{%llu}", item, (unsigned long long)lo);
        else if (lo != hi)
            nextok__sch_fmt(c, b, " %s{%llu,%llu}", item, (unsigned long long)lo,
                            (unsigned long long)hi);
        return;
    }
    /* blk[k]: 10^k items; full[k]: 0 .. 10^k - 1 items */
    nextok__sch_name blk[21], full[21];
    uint64_t top = unbounded || lo > hi - lo ? lo : hi - lo;
    int kmax = 0;
    for (uint64_t p = 1; top / p >= 10; p *= 10) kmax++;
    snprintf(blk[0], sizeof blk[0], "%s", item);
    for (int k = 1; k <= kmax; k++) {
        struct nextok__buf r = nextok__buf_of(c->d->mem);
        nextok__sch_fmt(c, &r, " %s{10}", blk[k - 1]);
        rule_of(c, &r, blk[k]);
        r = nextok__buf_of(c->d->mem);
        if (k > 1)
            nextok__sch_fmt(c, &r, " %s{0,9} %s", blk[k - 1], full[k - 1]);
        else
            nextok__sch_fmt(c, &r, " %s{0,9}", item);
        rule_of(c, &r, full[k]);
    }
    uint64_t p = 1;
    for (int k = 0; k < kmax; k++) p *= 10;
    for (int k = kmax; k >= 0; k--, p /= 10) {
        uint64_t dgt = lo / p % 10;
        if (k == kmax) dgt = lo / p;
        if (dgt)
            nextok__sch_fmt(c, b, dgt == 1 ? " %s" : " %s{%llu}", blk[k], (unsigned long long)dgt);
    }
    if (unbounded)
        nextok__sch_fmt(c, b, " %s*", item);
    else
        upto(c, b, blk, full, hi - lo);
}

/* ---- compiling, freeing --------------------------------------------------------------------- */

bool nextok__sch_compile(struct nextok__sch_doc *d, const struct nextok__buf *text,
                         struct nextok_grammar **g)
{
    struct nextok_error e = {NEXTOK_OK, ""};
    *g = NULL;
    nextok_status st = nextok__grammar_from_gbnf(g, text->data, text->len, d->gp, &e);
    if (st == NEXTOK_OK) return true;
    if (st == NEXTOK_ERR_NOMEM) return nextok__sch_nomem(d);
    if (st == NEXTOK_ERR_FORMAT && strstr(e.msg, "left recursion")) /* anyOf: [{"$ref": "#"}] */
        return nextok__sch_fail(d, NEXTOK_ERR_UNSUPPORTED,
                                "schema: a schema refers back to itself before anything is "
                                "matched (%s)",
                                e.msg);
    if (st == NEXTOK_ERR_FORMAT && (strstr(e.msg, "more than") || strstr(e.msg, "exceeds")))
        return nextok__sch_fail(d, NEXTOK_ERR_LIMIT, "schema: the grammar is too large (%s)",
                                e.msg);
    return nextok__sch_fail(d, NEXTOK_ERR_INTERNAL, "schema: %s", e.msg); /* a defect */
}

void nextok__sch_free(struct nextok__sch *c)
{
    const struct nextok__mem *mem = c->d->mem;
    nextok__buf_free(&c->out);
    nextok__free(mem, c->els);
    nextok__free(mem, c->views);
    nextok__free(mem, c->hash);
}
