/*
 * Regex to GBNF (regex.c): the recursive-descent parser that builds the
 * small tree (sets, concatenations, alternations, repetitions), and its
 * syntax errors and refusals.
 */
#include "regex_internal.h"

#include "../common/utf8.h"

#include <stdio.h>
#include <string.h>

#define RE_MAX_DEPTH 128

/* ---- errors ------------------------------------------------------------------- */

static size_t column(const struct nextok__re_parser *r, const char *at)
{
    size_t col = 1;
    for (const char *q = r->src; q < at && q < r->end; q++)
        col += ((unsigned char)*q & 0xC0) != 0x80;
    return col;
}

static nextok_status syntax(struct nextok__re_parser *r, const char *at, const char *what)
{
    return nextok__err(r->err, NEXTOK_ERR_FORMAT, "regex column %zu: %s", column(r, at), what);
}

static nextok_status refuse(struct nextok__re_parser *r, const char *at, const char *what)
{
    return nextok__err(r->err, NEXTOK_ERR_UNSUPPORTED, "regex column %zu: %s cannot be a grammar",
                       column(r, at), what);
}

/* ---- nodes ------------------------------------------------------------------------ */

static nextok_status new_node(struct nextok__re_parser *r, struct nextok__re_node n, uint32_t *id)
{
    NEXTOK_FORWARD(
        nextok__re_reserve(r, (void **)&r->node, r->n_node, &r->cap_node, sizeof *r->node));
    *id = (uint32_t)r->n_node;
    r->node[r->n_node++] = n;
    return NEXTOK_OK;
}

/* A set node from the ranges from base on (nextok__re_rng_finish). */
static nextok_status set_node(struct nextok__re_parser *r, size_t base, bool negate, uint32_t *id)
{
    NEXTOK_FORWARD(nextok__re_rng_finish(r, base, negate));
    struct nextok__re_node n = {
        NEXTOK__RE_SET, 0, 0, (uint32_t)base, (uint32_t)(r->n_rng - base), 0, 0};
    return new_node(r, n, id);
}

static nextok_status char_node(struct nextok__re_parser *r, uint32_t cp, uint32_t *id)
{
    size_t base = r->n_rng;
    NEXTOK_FORWARD(nextok__re_rng_push(r, cp, cp));
    return set_node(r, base, false, id);
}

static nextok_status push_tmp(struct nextok__re_parser *r, uint32_t id)
{
    NEXTOK_FORWARD(nextok__re_reserve(r, (void **)&r->tmp, r->n_tmp, &r->cap_tmp, sizeof *r->tmp));
    r->tmp[r->n_tmp++] = id;
    return NEXTOK_OK;
}

/* A CAT or ALT node of the kids collected from base on (popped); one kid is
 * itself unless keep_one, none is EMPTY. */
static nextok_status list_node(struct nextok__re_parser *r, uint8_t kind, size_t base,
                               bool keep_one, uint32_t *id)
{
    size_t n = r->n_tmp - base;
    if (n == 1 && !keep_one) {
        *id = r->tmp[base];
        r->n_tmp = base;
        return NEXTOK_OK;
    }
    if (n == 0 && kind == NEXTOK__RE_CAT)
        return new_node(r, (struct nextok__re_node){NEXTOK__RE_EMPTY, 1, 0, 0, 0, 0, 0}, id);
    struct nextok__re_node node = {
        kind, kind == NEXTOK__RE_CAT, 0, (uint32_t)r->n_kid, (uint32_t)n, 0, 0};
    for (size_t i = 0; i < n; i++) {
        uint32_t k = r->tmp[base + i];
        NEXTOK_FORWARD(
            nextok__re_reserve(r, (void **)&r->kid, r->n_kid, &r->cap_kid, sizeof *r->kid));
        r->kid[r->n_kid++] = k;
        if (kind == NEXTOK__RE_CAT)
            node.nullable &= r->node[k].nullable;
        else
            node.nullable |= r->node[k].nullable;
    }
    r->n_tmp = base;
    return new_node(r, node, id);
}

/* ---- escapes ------------------------------------------------------------------------ */

static int hex_value(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Exactly n hex digits at *p (advanced past them). */
static bool hex_digits(const char **p, const char *end, int n, uint32_t *v)
{
    uint32_t x = 0;
    for (int i = 0; i < n; i++) {
        int d = *p + i < end ? hex_value((*p)[i]) : -1;
        if (d < 0) return false;
        x = x << 4 | (uint32_t)d;
    }
    *p += n;
    *v = x;
    return true;
}

static bool is_ascii_punct(char c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

static bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* After "\u": {H...} or HHHH, and a trail surrogate's \uHHHH after a lead's. */
static nextok_status unicode_escape(struct nextok__re_parser *r, const char *at, uint32_t *cp)
{
    if (r->p < r->end && *r->p == '{') {
        uint32_t v = 0;
        const char *d = ++r->p;
        for (; r->p < r->end && hex_value(*r->p) >= 0; r->p++)
            v = v > NEXTOK__RE_MAX_CP ? v : v << 4 | (uint32_t)hex_value(*r->p);
        if (r->p == d || r->p >= r->end || *r->p != '}' || v > NEXTOK__RE_MAX_CP)
            return syntax(r, at, "invalid escape \\u{...}");
        r->p++;
        *cp = v;
        return NEXTOK_OK;
    }
    if (!hex_digits(&r->p, r->end, 4, cp))
        return syntax(r, at, "invalid escape \\u: expecting 4 hex digits");
    if (*cp < 0xD800 || *cp > 0xDBFF || r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u')
        return NEXTOK_OK;
    const char *q = r->p + 2;
    uint32_t trail;
    if (hex_digits(&q, r->end, 4, &trail) && trail >= 0xDC00 && trail <= 0xDFFF) {
        *cp = 0x10000 + ((*cp - 0xD800) << 10) + (trail - 0xDC00);
        r->p = q;
    }
    return NEXTOK_OK;
}

/* A character escape at r->p ('\\' with a character after it), in a class
 * or not. Class escapes (\d ...) and \b are the callers'. */
static nextok_status char_escape(struct nextok__re_parser *r, uint32_t *cp)
{
    const char *at = r->p;
    char c = r->p[1];
    r->p += 2;
    switch (c) {
    case 'f': *cp = 0x0C; return NEXTOK_OK;
    case 'n': *cp = 0x0A; return NEXTOK_OK;
    case 'r': *cp = 0x0D; return NEXTOK_OK;
    case 't': *cp = 0x09; return NEXTOK_OK;
    case 'v': *cp = 0x0B; return NEXTOK_OK;
    case '0':
        if (r->p < r->end && *r->p >= '0' && *r->p <= '9')
            return syntax(r, at, "invalid escape \\0 followed by a digit");
        *cp = 0;
        return NEXTOK_OK;
    case 'c':
        if (r->p >= r->end || !is_letter(*r->p))
            return syntax(r, at, "invalid escape \\c: expecting a letter");
        *cp = (uint32_t)(*r->p++ & 31);
        return NEXTOK_OK;
    case 'x':
        if (!hex_digits(&r->p, r->end, 2, cp))
            return syntax(r, at, "invalid escape \\x: expecting 2 hex digits");
        return NEXTOK_OK;
    case 'u': return unicode_escape(r, at, cp);
    default: break;
    }
    if (!is_ascii_punct(c)) {
        char msg[48] = "invalid escape";
        if (c > ' ' && c < 0x7F) snprintf(msg, sizeof msg, "invalid escape '\\%c'", c);
        return syntax(r, at, msg);
    }
    *cp = (uint32_t)c;
    return NEXTOK_OK;
}

/* ---- atoms --------------------------------------------------------------------------- */

static nextok_status utf8_char(struct nextok__re_parser *r, uint32_t *cp)
{
    size_t k = nextok__utf8_decode((const unsigned char *)r->p, (size_t)(r->end - r->p), cp);
    if (!k) return syntax(r, r->p, "invalid UTF-8");
    r->p += k;
    return NEXTOK_OK;
}

static bool is_class_escape(char c)
{
    return c == 'd' || c == 'D' || c == 'w' || c == 'W' || c == 's' || c == 'S';
}

/* One class atom: a character (*is_set false) or a class escape, whose
 * ranges are appended (*is_set true). */
static nextok_status class_atom(struct nextok__re_parser *r, uint32_t *cp, bool *is_set)
{
    *is_set = false;
    if (*r->p != '\\') return utf8_char(r, cp);
    if (r->p + 1 >= r->end) return syntax(r, r->p, "'\\' at the end of the pattern");
    char c = r->p[1];
    if (c == 'p' || c == 'P') return refuse(r, r->p, "a Unicode property escape (\\p{...})");
    if (c == 'b') {
        r->p += 2;
        *cp = 0x08;
        return NEXTOK_OK;
    }
    if (!is_class_escape(c)) return char_escape(r, cp);
    r->p += 2;
    *is_set = true;
    return nextok__re_rng_class_escape(r, c);
}

static nextok_status char_class(struct nextok__re_parser *r, uint32_t *id)
{
    const char *at = r->p++;
    bool negate = r->p < r->end && *r->p == '^';
    r->p += negate;
    size_t base = r->n_rng;
    for (;;) {
        if (r->p >= r->end) return syntax(r, at, "unterminated character class");
        if (*r->p == ']') break;
        const char *from = r->p;
        uint32_t lo, hi;
        bool lo_set, hi_set;
        NEXTOK_FORWARD(class_atom(r, &lo, &lo_set));
        if (r->end - r->p >= 2 && r->p[0] == '-' && r->p[1] != ']') {
            r->p++;
            NEXTOK_FORWARD(class_atom(r, &hi, &hi_set));
            if (lo_set || hi_set) return syntax(r, from, "a class escape cannot bound a range");
            if (lo > hi) return syntax(r, from, "range out of order in character class");
            NEXTOK_FORWARD(nextok__re_rng_push(r, lo, hi));
        } else if (!lo_set) {
            NEXTOK_FORWARD(nextok__re_rng_push(r, lo, lo));
        }
    }
    r->p++;
    return set_node(r, base, negate, id);
}

static nextok_status atom_escape(struct nextok__re_parser *r, uint32_t *id)
{
    const char *at = r->p;
    if (r->p + 1 >= r->end) return syntax(r, at, "'\\' at the end of the pattern");
    char c = r->p[1];
    if (c == 'b' || c == 'B') return refuse(r, at, "a word boundary (\\b, \\B)");
    if (c == 'p' || c == 'P') return refuse(r, at, "a Unicode property escape (\\p{...})");
    if (c == 'k' || (c >= '1' && c <= '9')) return refuse(r, at, "a backreference");
    if (is_class_escape(c)) {
        size_t base = r->n_rng;
        r->p += 2;
        NEXTOK_FORWARD(nextok__re_rng_class_escape(r, c));
        return set_node(r, base, false, id);
    }
    uint32_t cp;
    NEXTOK_FORWARD(char_escape(r, &cp));
    return char_node(r, cp, id);
}

static nextok_status disjunction(struct nextok__re_parser *r, bool top, uint32_t *id);

/* (?<name>: an identifier ($, _, letters, digits after the first; any
 * non-ASCII letter is taken as one), then '>'. */
static nextok_status group_name(struct nextok__re_parser *r, const char *at)
{
    const char *s = r->p;
    while (r->p < r->end && *r->p != '>') {
        char c = *r->p;
        bool ok = c == '$' || c == '_' || is_letter(c) || (r->p > s && c >= '0' && c <= '9');
        uint32_t cp;
        if ((unsigned char)c >= 0x80)
            NEXTOK_FORWARD(utf8_char(r, &cp));
        else if (!ok)
            return syntax(r, at, "invalid group name");
        else
            r->p++;
    }
    if (r->p == s || r->p >= r->end) return syntax(r, at, "invalid group name");
    r->p++;
    return NEXTOK_OK;
}

static nextok_status group(struct nextok__re_parser *r, uint32_t *id)
{
    const char *at = r->p++;
    if (r->p < r->end && *r->p == '?') {
        char c = ++r->p < r->end ? *r->p : 0;
        char d = r->p + 1 < r->end ? r->p[1] : 0;
        r->p += c != 0;
        if (c == '=' || c == '!') return refuse(r, at, "a lookahead");
        if (c == '<' && (d == '=' || d == '!')) return refuse(r, at, "a lookbehind");
        if (c == '<')
            NEXTOK_FORWARD(group_name(r, at));
        else if (c == '-' || is_letter(c))
            return refuse(r, at, "a modifier group ((?i: ...))");
        else if (c != ':')
            return syntax(r, at, "invalid group");
    }
    if (++r->depth > RE_MAX_DEPTH) return syntax(r, at, "groups nested more than 128 deep");
    NEXTOK_FORWARD(disjunction(r, false, id));
    if (r->p >= r->end) return syntax(r, at, "unmatched '('");
    r->p++;
    r->depth--;
    return NEXTOK_OK;
}

static nextok_status atom(struct nextok__re_parser *r, uint32_t *id)
{
    char c = *r->p;
    if (c == '(') return group(r, id);
    if (c == '[') return char_class(r, id);
    if (c == '\\') return atom_escape(r, id);
    if (c == '.') {
        size_t base = r->n_rng;
        r->p++;
        NEXTOK_FORWARD(nextok__re_rng_line_end(r));
        return set_node(r, base, true, id);
    }
    uint32_t cp;
    NEXTOK_FORWARD(utf8_char(r, &cp));
    return char_node(r, cp, id);
}

/* ---- quantifiers, terms, alternatives ------------------------------------------------- */

static bool quantifier_next(const struct nextok__re_parser *r, const char *q)
{
    return q < r->end && (*q == '*' || *q == '+' || *q == '?' || *q == '{');
}

static uint32_t count(struct nextok__re_parser *r)
{
    uint32_t v = 0;
    for (; r->p < r->end && *r->p >= '0' && *r->p <= '9'; r->p++)
        v = v > 100000 ? v : v * 10 + (uint32_t)(*r->p - '0');
    return v;
}

/* The quantifier at r->p (quantifier_next is true), and its lazy '?'. */
static nextok_status quantifier(struct nextok__re_parser *r, uint32_t *min, uint32_t *max)
{
    const char *at = r->p;
    char c = *r->p++;
    *min = c == '+';
    *max = c == '?' ? 1 : NEXTOK__RE_INF;
    if (c == '{') {
        if (r->p >= r->end || *r->p < '0' || *r->p > '9')
            return syntax(r, at, "incomplete quantifier");
        *min = *max = count(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            *max = r->p < r->end && *r->p >= '0' && *r->p <= '9' ? count(r) : NEXTOK__RE_INF;
        }
        if (r->p >= r->end || *r->p != '}') return syntax(r, at, "incomplete quantifier");
        r->p++;
        if (*min > *max) return syntax(r, at, "numbers out of order in {} quantifier");
        if (*min > NEXTOK__G_MAX_REPEAT || (*max != NEXTOK__RE_INF && *max > NEXTOK__G_MAX_REPEAT))
            return syntax(r, at, "repetition count over 2000");
    }
    if (r->p < r->end && *r->p == '?') r->p++;
    return NEXTOK_OK;
}

static nextok_status term(struct nextok__re_parser *r, uint32_t *id)
{
    char c = *r->p;
    if (c == '*' || c == '+' || c == '?') return syntax(r, r->p, "nothing to repeat");
    if (c == '{') {
        const char *q = r->p + 1;
        bool digit = q < r->end && *q >= '0' && *q <= '9';
        return syntax(r, r->p, digit ? "nothing to repeat" : "lone quantifier bracket '{'");
    }
    if (c == '}') return syntax(r, r->p, "lone quantifier bracket '}'");
    if (c == ']') return syntax(r, r->p, "lone ']'");
    NEXTOK_FORWARD(atom(r, id));
    if (!quantifier_next(r, r->p)) return NEXTOK_OK;
    struct nextok__re_node n = {NEXTOK__RE_REP, 0, 0, *id, 0, 0, 0};
    NEXTOK_FORWARD(quantifier(r, &n.min, &n.max));
    if (quantifier_next(r, r->p)) return syntax(r, r->p, "nothing to repeat");
    n.nullable = n.min == 0 || r->node[*id].nullable;
    return new_node(r, n, id);
}

/* One alternative; at the top level a leading ^ and a trailing $ are noted
 * on its node. */
static nextok_status alternative(struct nextok__re_parser *r, bool top, uint32_t *id)
{
    size_t base = r->n_tmp;
    uint8_t anchors = 0;
    if (top && r->p < r->end && *r->p == '^') {
        anchors |= NEXTOK__RE_ANCHOR_START;
        if (quantifier_next(r, ++r->p)) return syntax(r, r->p, "nothing to repeat");
    }
    while (r->p < r->end && *r->p != '|' && *r->p != ')') {
        const char *at = r->p;
        if (*at == '^') return refuse(r, at, "an anchor '^' inside the pattern");
        if (*at == '$') {
            if (quantifier_next(r, at + 1)) return syntax(r, at + 1, "nothing to repeat");
            if (!top || (at + 1 < r->end && at[1] != '|'))
                return refuse(r, at, "an anchor '$' inside the pattern");
            anchors |= NEXTOK__RE_ANCHOR_END;
            r->p++;
            break;
        }
        uint32_t t = 0;
        NEXTOK_FORWARD(term(r, &t));
        NEXTOK_FORWARD(push_tmp(r, t));
    }
    NEXTOK_FORWARD(list_node(r, NEXTOK__RE_CAT, base, false, id));
    if (top) r->node[*id].anchors = anchors;
    return NEXTOK_OK;
}

/* Alternatives up to ')' or the end; the top level's are always an ALT. */
static nextok_status disjunction(struct nextok__re_parser *r, bool top, uint32_t *id)
{
    size_t base = r->n_tmp;
    for (;;) {
        uint32_t a = 0;
        NEXTOK_FORWARD(alternative(r, top, &a));
        NEXTOK_FORWARD(push_tmp(r, a));
        if (r->p >= r->end || *r->p != '|') break;
        r->p++;
    }
    if (top && r->p < r->end) return syntax(r, r->p, "unmatched ')'");
    return list_node(r, NEXTOK__RE_ALT, base, top, id);
}

/* ---- the parser's entry points -------------------------------------------------- */

nextok_status nextok__re_parse(struct nextok__re_parser *r, const char *re, size_t len,
                               const struct nextok__mem *mem, struct nextok_error *err,
                               uint32_t *root)
{
    memset(r, 0, sizeof *r);
    r->src = r->p = re ? re : "";
    r->end = r->src + len;
    r->mem = mem;
    r->err = err;
    /* the range list is never NULL, even with no range in it */
    NEXTOK_FORWARD(nextok__re_reserve(r, (void **)&r->rng, 0, &r->cap_rng, sizeof *r->rng));
    return disjunction(r, true, root);
}

void nextok__re_free(struct nextok__re_parser *r)
{
    nextok__free(r->mem, r->node);
    nextok__free(r->mem, r->kid);
    nextok__free(r->mem, r->tmp);
    nextok__free(r->mem, r->rng);
}
