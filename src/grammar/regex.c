/*
 * Regular expressions to GBNF: the ECMA-262 subset JSON Schema's `pattern`
 * uses, read with the `u` flag's meaning (the text is code points).
 *
 * Supported:
 *  - literal characters (UTF-8); `.` (any code point but the line
 *    terminators \n \r U+2028 U+2029, as ECMA-262 has it);
 *  - escapes \t \n \r \v \f \0 \xHH \uHHHH (a surrogate pair of two \u
 *    escapes is one code point) \u{H...} \cX, and an escaped ASCII
 *    punctuation character is that character (ECMA's `u` flag allows only
 *    the syntax characters, `/` and, in classes, `-`; the others, `\-` and
 *    `\@` say, are accepted because schemas written for other engines use
 *    them);
 *  - \d \D \w \W \s \S (ECMA-262's sets: \s is WhiteSpace + LineTerminator,
 *    listed below), classes [...] and [^...] with ranges and those escapes,
 *    \b in a class (backspace); [] matches nothing, [^] anything;
 *  - alternation, groups ( ), (?: ) and (?<name> ) (all three plain groups);
 *  - quantifiers * + ? {m} {m,} {m,n}, greedy or lazy (*? etc.: laziness
 *    does not change which texts match as a whole), counts up to 2000
 *    (llama.cpp's GBNF bound);
 *  - ^ at the start and $ at the end of the pattern, or of each top-level
 *    alternative (^a|b$ is (^a)|(b$)).
 *
 * Refused, NEXTOK_ERR_UNSUPPORTED "regex column C: <what> cannot be a
 * grammar": backreferences (\1, \k<name>), lookahead and lookbehind, \b \B
 * word boundaries, \p{...} \P{...} property escapes, modifier groups
 * ((?i: ...)), ^ and $ anywhere else. Syntax errors are NEXTOK_ERR_FORMAT
 * "regex column C: ...", C counted in code points from 1: unmatched
 * parentheses, nothing to repeat, lone { } ], ranges out of order or bounded
 * by a class escape, bad escapes, {m,n} with m > n, counts over 2000,
 * groups nested deeper than 128, invalid UTF-8.
 *
 * How: a recursive-descent parser (regex_parse.c) builds a small tree (sets
 * of code points as sorted range lists, regex_sets.c; concatenations,
 * alternations, repetitions), which this file writes out as GBNF. Repetitions become GBNF repetitions of a class or
 * of a generated rule, so x{1000} costs one rule, not a thousand copies of
 * x. An unbounded repetition of something that can be empty, (a?b?)*, is
 * rewritten as the same language over a body that cannot ((a|b)*), since a
 * GBNF rule that repeats an empty-able item is left-recursive.
 *
 * JSON string mode writes each set as its characters, but '"', '\\' and
 * U+0000-U+001F only in escaped forms (\" \\ \b \f \n \r \t, and \u00XX in
 * either case of hex for all of them), so every body the rule accepts is a
 * valid JSON string body whose decoded value the regex matches.
 */
#include "regex_internal.h"

#include <stdio.h>
#include <string.h>

#define RE_MAX_LEN (1u << 28) /* node and range indices stay in 32 bits */
#define RE_CHUNK   1000u      /* the largest count written after one GBNF item */

/* ---- GBNF ------------------------------------------------------------------------------- */

struct em {
    const struct nextok__re_parser *r;
    const char *name;
    bool json;
    uint32_t n_rules; /* generated rules: name-1, name-2, ... */
    struct nextok__buf *out;
};

static nextok_status put(struct nextok__buf *b, const char *s)
{
    return nextok__buf_append(b, s, strlen(s));
}

/* One code point inside "..." or [...]: letters and digits as they are,
 * everything else escaped. */
static nextok_status put_cp(struct nextok__buf *b, uint32_t cp)
{
    char t[16];
    bool plain = (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
    if (plain)
        snprintf(t, sizeof t, "%c", (char)cp);
    else if (cp < 0x80)
        snprintf(t, sizeof t, "\\x%02X", (unsigned)cp);
    else
        snprintf(t, sizeof t, "\\U%08X", (unsigned)cp);
    return put(b, t);
}

static nextok_status put_range(struct nextok__buf *b, uint32_t lo, uint32_t hi)
{
    NEXTOK_FORWARD(put_cp(b, lo));
    if (hi > lo + 1) NEXTOK_FORWARD(put(b, "-"));
    return hi > lo ? put_cp(b, hi) : NEXTOK_OK;
}

#define RE_NOTHING "[^\\x00-\\U0010FFFF]" /* a class no character is in */

/* A class of v[0, n) (normalized, no surrogates): a literal for one code
 * point, a negated class when the set holds both ends of the code space. */
static nextok_status put_class(struct nextok__buf *b, const struct nextok__re_range *v, size_t n)
{
    if (n == 0) return put(b, RE_NOTHING);
    if (n == 1 && v[0].lo == v[0].hi) {
        NEXTOK_FORWARD(put(b, "\""));
        NEXTOK_FORWARD(put_cp(b, v[0].lo));
        return put(b, "\"");
    }
    if (v[0].lo > 0 || v[n - 1].hi < NEXTOK__RE_MAX_CP) {
        NEXTOK_FORWARD(put(b, "["));
        for (size_t i = 0; i < n; i++) NEXTOK_FORWARD(put_range(b, v[i].lo, v[i].hi));
        return put(b, "]");
    }
    /* the gaps, the surrogates' left out: none is any character */
    struct nextok__buf gaps = nextok__buf_of(b->mem);
    nextok_status rc = NEXTOK_OK;
    for (size_t i = 1; i < n && rc == NEXTOK_OK; i++) {
        uint32_t lo = v[i - 1].hi + 1, hi = v[i].lo - 1;
        if (lo < 0xD800) rc = put_range(&gaps, lo, hi < 0xD800 ? hi : 0xD7FF);
        if (hi > 0xDFFF && rc == NEXTOK_OK) rc = put_range(&gaps, lo > 0xDFFF ? lo : 0xE000, hi);
    }
    if (rc == NEXTOK_OK && gaps.len == 0)
        rc = put(b, ".");
    else if (rc == NEXTOK_OK)
        rc = put(b, "[^");
    if (rc == NEXTOK_OK && gaps.len) rc = nextok__buf_append(b, gaps.data, gaps.len);
    if (rc == NEXTOK_OK && gaps.len) rc = put(b, "]");
    nextok__buf_free(&gaps);
    return rc;
}

/* JSON string mode: bit c of the result for each c in U+0000-U+001F of
 * the set, bit 32 for '"', bit 33 for '\\' (the characters JSON escapes). */
static uint64_t json_escaped(const struct nextok__re_range *v, size_t n)
{
    uint64_t m = 0;
    for (size_t i = 0; i < n && v[i].lo <= '\\'; i++) {
        for (uint32_t c = v[i].lo; c <= v[i].hi && c < 0x20; c++) m |= 1ull << c;
        if (v[i].lo <= '"' && v[i].hi >= '"') m |= 1ull << 32;
        if (v[i].lo <= '\\' && v[i].hi >= '\\') m |= 1ull << 33;
    }
    return m;
}

static bool has_escaped(const struct em *e, uint32_t id)
{
    const struct nextok__re_node *n = &e->r->node[id];
    return e->json && n->kind == NEXTOK__RE_SET && json_escaped(e->r->rng + n->a, n->n) != 0;
}

/* A class of the ASCII characters c with in[c] set. */
static nextok_status put_ascii_class(struct nextok__buf *b, const bool in[128])
{
    struct nextok__re_range v[64];
    size_t n = 0;
    for (uint32_t c = 0; c < 128; c++) {
        if (!in[c]) continue;
        if (n && v[n - 1].hi + 1 == c)
            v[n - 1].hi = c;
        else
            v[n++] = (struct nextok__re_range){c, c};
    }
    return put_class(b, v, n);
}

static bool mask_has(uint64_t mask, uint32_t c)
{
    return c < 0x20    ? mask >> c & 1
           : c == '"'  ? mask >> 32 & 1
           : c == '\\' ? mask >> 33 & 1
                       : false;
}

/* The JSON escapes of the characters in mask (json_escaped), as GBNF
 * alternatives (each after " | ", but the first when first): \" \\ \b \f
 * \n \r \t, and \u00XX with hex digits in either case. */
static nextok_status put_json_escapes(struct nextok__buf *b, uint64_t mask, bool first)
{
    static const char letter_of[34] = {
        [8] = 'b', [9] = 't', [10] = 'n', [12] = 'f', [13] = 'r', [32] = '"', [33] = '\\'};
    bool in[128] = {false}, any = false;
    for (uint32_t c = 0; c < 34; c++) {
        if (!letter_of[c] || !(mask >> c & 1)) continue;
        in[(unsigned char)letter_of[c]] = any = true;
    }
    if (any) {
        NEXTOK_FORWARD(put(b, first ? "\"\\x5C\" " : " | \"\\x5C\" "));
        NEXTOK_FORWARD(put_ascii_class(b, in));
        first = false;
    }
    for (uint32_t hi = 0; hi < 6; hi++) { /* XX's first digit: '"' is 22, '\\' 5C */
        memset(in, 0, sizeof in);
        any = false;
        for (uint32_t c = 16 * hi; c < 16 * hi + 16; c++) {
            if (!mask_has(mask, c)) continue;
            in[(unsigned char)"0123456789abcdef"[c & 15]] = true;
            in[(unsigned char)"0123456789ABCDEF"[c & 15]] = any = true;
        }
        if (!any) continue;
        char t[32];
        snprintf(t, sizeof t, "%s\"\\x5Cu00%u\" ", first ? "" : " | ", (unsigned)hi);
        NEXTOK_FORWARD(put(b, t));
        NEXTOK_FORWARD(put_ascii_class(b, in));
        first = false;
    }
    return NEXTOK_OK;
}

/* v[0, n) without U+0000-U+001F, '"' and '\\', into out (room for n + 2). */
static size_t json_plain(const struct nextok__re_range *v, size_t n, struct nextok__re_range *out)
{
    static const uint32_t cut[] = {'"', '\\'};
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t lo = v[i].lo < 0x20 ? 0x20 : v[i].lo, hi = v[i].hi;
        for (size_t c = 0; c < 2 && lo <= hi; c++) {
            if (cut[c] < lo || cut[c] > hi) continue;
            if (cut[c] > lo) out[k++] = (struct nextok__re_range){lo, cut[c] - 1};
            lo = cut[c] + 1;
        }
        if (lo <= hi) out[k++] = (struct nextok__re_range){lo, hi};
    }
    return k;
}

/* A set node. JSON string mode: the characters JSON escapes only escaped,
 * as alternatives (in parentheses inside a sequence). */
static nextok_status emit_set(struct em *e, struct nextok__buf *b, uint32_t id, bool in_seq)
{
    const struct nextok__re_node *n = &e->r->node[id];
    const struct nextok__re_range *v = e->r->rng + n->a;
    uint64_t mask = e->json ? json_escaped(v, n->n) : 0;
    if (!mask) return put_class(b, v, n->n);
    struct nextok__re_range *plain = nextok__alloc_array(b->mem, (size_t)n->n + 2, sizeof *plain);
    if (!plain) return NEXTOK_ERR_NOMEM;
    size_t k = json_plain(v, n->n, plain);
    nextok_status rc = put(b, in_seq ? "( " : "");
    if (rc == NEXTOK_OK && k) rc = put_class(b, plain, k);
    if (rc == NEXTOK_OK) rc = put_json_escapes(b, mask, k == 0);
    if (rc == NEXTOK_OK && in_seq) rc = put(b, " )");
    nextok__free(b->mem, plain);
    return rc;
}

static nextok_status emit_node(struct em *e, struct nextok__buf *b, uint32_t id, bool in_seq);
static nextok_status emit_star_body(struct em *e, struct nextok__buf *b, uint32_t id, bool in_seq);

/* Rule name-N ::= the node (or its star body) appended to out; its number. */
static nextok_status emit_rule(struct em *e, uint32_t id, bool star, uint32_t *no)
{
    struct nextok__buf body = nextok__buf_of(e->out->mem);
    *no = ++e->n_rules;
    nextok_status rc = star ? emit_star_body(e, &body, id, false) : emit_node(e, &body, id, false);
    char t[32];
    snprintf(t, sizeof t, "-%u ::= ", (unsigned)*no);
    if (rc == NEXTOK_OK) rc = put(e->out, e->name);
    if (rc == NEXTOK_OK) rc = put(e->out, t);
    if (rc == NEXTOK_OK) rc = nextok__buf_append(e->out, body.data, body.len);
    if (rc == NEXTOK_OK) rc = put(e->out, "\n");
    nextok__buf_free(&body);
    return rc;
}

/* The kids of a CAT in sequence; runs of single characters as one literal. */
static nextok_status emit_cat(struct em *e, struct nextok__buf *b, uint32_t id)
{
    const struct nextok__re_node *n = &e->r->node[id];
    bool open = false;
    for (uint32_t i = 0; i < n->n; i++) {
        uint32_t k = e->r->kid[n->a + i];
        const struct nextok__re_node *kn = &e->r->node[k];
        const struct nextok__re_range *v = e->r->rng + kn->a;
        bool one = kn->kind == NEXTOK__RE_SET && kn->n == 1 && v->lo == v->hi && !has_escaped(e, k);
        if (one) {
            NEXTOK_FORWARD(put(b, open ? "" : i ? " \"" : "\""));
            NEXTOK_FORWARD(put_cp(b, v->lo));
            open = true;
            continue;
        }
        NEXTOK_FORWARD(put(b, open ? "\" " : i ? " " : ""));
        open = false;
        NEXTOK_FORWARD(emit_node(e, b, k, true));
    }
    return open ? put(b, "\"") : NEXTOK_OK;
}

/* The kids of a CAT or ALT as alternatives; star: each kid that may be
 * empty as its star body. */
static nextok_status emit_alts(struct em *e, struct nextok__buf *b, uint32_t id, bool in_seq,
                               bool star)
{
    const struct nextok__re_node *n = &e->r->node[id];
    NEXTOK_FORWARD(put(b, in_seq ? "( " : ""));
    for (uint32_t i = 0; i < n->n; i++) {
        uint32_t k = e->r->kid[n->a + i];
        NEXTOK_FORWARD(put(b, i ? " | " : ""));
        if (star && e->r->node[k].nullable)
            NEXTOK_FORWARD(emit_star_body(e, b, k, false));
        else
            NEXTOK_FORWARD(emit_node(e, b, k, false));
    }
    return put(b, in_seq ? " )" : "");
}

/* A body that cannot be empty whose star is the node's star: X* = W*.
 * (a1 ... ak)* with every ai empty-able is (W1 | ... | Wk)*, as is
 * (a1 | ... | ak)* (Wi = ai when ai cannot be empty); (y{m,n})* is y*
 * (n >= 1); the empty string's is a class of nothing (W* = the empty
 * string). */
static nextok_status emit_star_body(struct em *e, struct nextok__buf *b, uint32_t id, bool in_seq)
{
    const struct nextok__re_node *n = &e->r->node[id];
    if (!n->nullable) return emit_node(e, b, id, in_seq);
    switch (n->kind) {
    case NEXTOK__RE_CAT:
    case NEXTOK__RE_ALT: return emit_alts(e, b, id, in_seq, true);
    case NEXTOK__RE_REP:
        return n->max == 0 ? put(b, RE_NOTHING) : emit_star_body(e, b, n->a, in_seq);
    default: return put(b, RE_NOTHING);
    }
}

/* {min, max} after an item: counts of at most RE_CHUNK each (GBNF's bound
 * is on the product of nested counts, and llama.cpp's is 2000). */
static nextok_status emit_counts(struct nextok__buf *b, const struct nextok__buf *item,
                                 uint32_t min, uint32_t max)
{
    char t[40];
    for (bool first = true;; first = false) {
        uint32_t m = min, x = max;
        if (max == NEXTOK__RE_INF && min > RE_CHUNK)
            m = x = RE_CHUNK;
        else if (max != NEXTOK__RE_INF && max > RE_CHUNK)
            m = min / 2, x = max / 2;
        if (m == 0 && x == NEXTOK__RE_INF)
            snprintf(t, sizeof t, "*");
        else if (m == 1 && x == NEXTOK__RE_INF)
            snprintf(t, sizeof t, "+");
        else if (x == NEXTOK__RE_INF)
            snprintf(t, sizeof t, "{%u,}", (unsigned)m);
        else if (m == 0 && x == 1)
            snprintf(t, sizeof t, "?");
        else if (m == 1 && x == 1)
            t[0] = '\0';
        else if (m == x)
            snprintf(t, sizeof t, "{%u}", (unsigned)m);
        else
            snprintf(t, sizeof t, "{%u,%u}", (unsigned)m, (unsigned)x);
        NEXTOK_FORWARD(put(b, first ? "" : " "));
        NEXTOK_FORWARD(nextok__buf_append(b, item->data, item->len));
        NEXTOK_FORWARD(put(b, t));
        if (m == min && x == max) return NEXTOK_OK;
        min -= m;
        if (max != NEXTOK__RE_INF) max -= x;
    }
}

static nextok_status emit_rep(struct em *e, struct nextok__buf *b, uint32_t id)
{
    const struct nextok__re_node *n = &e->r->node[id];
    const struct nextok__re_node *kid = &e->r->node[n->a];
    if (n->max == 0 || kid->kind == NEXTOK__RE_EMPTY) return put(b, "\"\"");
    uint32_t min = n->min, max = n->max;
    bool star = kid->nullable && max == NEXTOK__RE_INF; /* X{m,} = X* = W* */
    if (star) min = 0;
    struct nextok__buf item = nextok__buf_of(b->mem);
    nextok_status rc;
    if (kid->kind == NEXTOK__RE_SET && !has_escaped(e, n->a)) {
        rc = emit_set(e, &item, n->a, true);
    } else {
        uint32_t no = 0;
        char t[32];
        rc = emit_rule(e, n->a, star, &no);
        snprintf(t, sizeof t, "-%u", (unsigned)no);
        if (rc == NEXTOK_OK) rc = put(&item, e->name);
        if (rc == NEXTOK_OK) rc = put(&item, t);
    }
    if (rc == NEXTOK_OK) rc = emit_counts(b, &item, min, max);
    nextok__buf_free(&item);
    return rc;
}

/* A node; in_seq: it is an item of a sequence (alternatives parenthesized). */
static nextok_status emit_node(struct em *e, struct nextok__buf *b, uint32_t id, bool in_seq)
{
    switch (e->r->node[id].kind) {
    case NEXTOK__RE_SET: return emit_set(e, b, id, in_seq);
    case NEXTOK__RE_CAT: return emit_cat(e, b, id);
    case NEXTOK__RE_ALT: return emit_alts(e, b, id, in_seq, false);
    case NEXTOK__RE_REP: return emit_rep(e, b, id);
    default: return put(b, "\"\"");
    }
}

/* Search mode's "any string": any code point, or any JSON string body's
 * escape or character (rule name-any). */
static nextok_status put_any(struct em *e, struct nextok__buf *b)
{
    if (!e->json) return put(b, ".*");
    NEXTOK_FORWARD(put(b, e->name));
    return put(b, "-any*");
}

/* The whole rule: each top-level alternative, in search mode between the
 * "any string" fillers its anchors leave. */
static nextok_status emit_top(struct em *e, uint32_t root, bool search)
{
    const struct nextok__re_node *n = &e->r->node[root];
    struct nextok__buf body = nextok__buf_of(e->out->mem);
    nextok_status rc = NEXTOK_OK;
    for (uint32_t i = 0; i < n->n && rc == NEXTOK_OK; i++) {
        uint32_t k = e->r->kid[n->a + i];
        uint8_t anchors =
            search ? e->r->node[k].anchors : NEXTOK__RE_ANCHOR_START | NEXTOK__RE_ANCHOR_END;
        rc = put(&body, i ? " | " : "");
        if (rc == NEXTOK_OK && !(anchors & NEXTOK__RE_ANCHOR_START)) rc = put_any(e, &body);
        if (rc == NEXTOK_OK && !(anchors & NEXTOK__RE_ANCHOR_START)) rc = put(&body, " ");
        if (rc == NEXTOK_OK) rc = emit_node(e, &body, k, search);
        if (rc == NEXTOK_OK && !(anchors & NEXTOK__RE_ANCHOR_END)) rc = put(&body, " ");
        if (rc == NEXTOK_OK && !(anchors & NEXTOK__RE_ANCHOR_END)) rc = put_any(e, &body);
    }
    if (rc == NEXTOK_OK) rc = put(e->out, e->name);
    if (rc == NEXTOK_OK) rc = put(e->out, " ::= ");
    if (rc == NEXTOK_OK) rc = nextok__buf_append(e->out, body.data, body.len);
    if (rc == NEXTOK_OK) rc = put(e->out, "\n");
    nextok__buf_free(&body);
    if (rc != NEXTOK_OK || !search || !e->json) return rc;
    /* any JSON string body, escapes as RFC 8259's grammar has them */
    NEXTOK_FORWARD(put(e->out, e->name));
    return put(e->out, "-any ::= [^\\x22\\x5C\\x00-\\x1F] | \"\\x5C\" [\\x22\\x5C/bfnrt] | "
                       "\"\\x5Cu\" [0-9a-fA-F]{4}\n");
}

/* ---- entry points ------------------------------------------------------------------------- */

nextok_status nextok__regex_to_gbnf(struct nextok__buf *out, const char *name, const char *re,
                                    size_t len, unsigned flags, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(len >= RE_MAX_LEN, err, NEXTOK_ERR_INVALID_ARG,
                     "regex: longer than 2^28 bytes");
    struct nextok__re_parser r;
    uint32_t root = 0;
    nextok_status rc = nextok__re_parse(&r, re, len, out->mem, err, &root);
    size_t out_len = out->len;
    if (rc == NEXTOK_OK) {
        struct em e = {&r, name, (flags & NEXTOK__RE_JSON_STRING) != 0, 0, out};
        rc = emit_top(&e, root, (flags & NEXTOK__RE_SEARCH) != 0);
        if (rc == NEXTOK_ERR_NOMEM) nextok__re_nomem(err);
    }
    if (rc != NEXTOK_OK) out->len = out_len;
    nextok__re_free(&r);
    return rc;
}

nextok_status nextok_grammar_init_regex(struct nextok_grammar **out, const char *re, size_t len,
                                        const struct nextok_grammar_params *params,
                                        struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!re && len, err, NEXTOK_ERR_INVALID_ARG, "re: NULL with len %zu", len);
    struct nextok__mem mem;
    NEXTOK_FORWARD(nextok__mem_resolve_err(&mem, params ? params->allocator : NULL, err));
    struct nextok__buf text = nextok__buf_of(&mem);
    nextok_status rc = nextok__regex_to_gbnf(&text, "root", re ? re : "", len, 0, err);
    struct nextok_error e2 = {NEXTOK_OK, ""};
    if (rc == NEXTOK_OK) rc = nextok__grammar_from_gbnf(out, text.data, text.len, params, &e2);
    nextok__buf_free(&text);
    /* the text is well formed: a FORMAT error is one of GBNF's size limits */
    if (rc == NEXTOK_ERR_FORMAT && e2.status == NEXTOK_ERR_FORMAT)
        return nextok__err(err, rc, "regex: too large for a grammar (%s)", e2.msg);
    if (e2.status != NEXTOK_OK) return nextok__err(err, e2.status, "%s", e2.msg);
    return rc;
}
