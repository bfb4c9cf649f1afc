/*
 * Regular expressions to grammars (src/grammar/regex.c): the acceptance
 * table tests/data/grammars/regex-cases.txt, whose expected values are
 * V8's RegExp with the u flag (tools/refs/make_regex_refs.mjs), checked in
 * all four modes (whole text, search, and both as JSON string bodies); what
 * Node cannot tell (the escapes we accept beyond the u flag's, the JSON
 * escape forms); refusals with their status and column; grammar sizes of
 * counted repetitions; every allocation failing in turn.
 */
#include "harness.h"
#include "fail_alloc.h"

#include "common/file.h"
#include "common/json.h"
#include "grammar/grammar_internal.h"
#include "nextok.h"

#include <stdlib.h>

enum mode {
    M_FULL,
    M_SEARCH,
    M_JSON_FULL,
    M_JSON_SEARCH,
    M_COUNT
};
static const char *const mode_name[M_COUNT] = {"full", "search", "json full", "json search"};

/* The grammar of re in a mode: the public function for the whole text;
 * otherwise the rule from nextok__regex_to_gbnf, the JSON modes between
 * quotes (root ::= "\"" r "\""). */
static nextok_status compile(struct nextok_grammar **g, const char *re, size_t len, enum mode m,
                             struct nextok_error *err)
{
    *g = NULL;
    if (m == M_FULL) return nextok_grammar_init_regex(g, re, len, NULL, err);
    unsigned flags = (m == M_SEARCH || m == M_JSON_SEARCH ? NEXTOK__RE_SEARCH : 0) |
                     (m >= M_JSON_FULL ? NEXTOK__RE_JSON_STRING : 0);
    struct nextok__buf b = nextok__buf_of(&nextok__mem_libc);
    const char *name = m >= M_JSON_FULL ? "r" : "root";
    nextok_status st = nextok__regex_to_gbnf(&b, name, re, len, flags, err);
    const char *wrap = "root ::= \"\\\"\" r \"\\\"\"\n";
    if (st == NEXTOK_OK && m >= M_JSON_FULL) st = nextok__buf_append(&b, wrap, strlen(wrap));
    if (st == NEXTOK_OK) st = nextok_grammar_init_gbnf(g, b.data, b.len, NULL, err);
    nextok__buf_free(&b);
    return st;
}

/* s[0, n) as a JSON string, quotes included, into out (room for 6n + 3):
 * as JSON.stringify writes it, or (upper) with every escaped character as
 * \u00XX in upper-case hex. Returns the length. */
static size_t json_quote(const char *s, size_t n, char *out, bool upper)
{
    size_t k = 0;
    out[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = strchr("\"\\\b\f\n\r\t", c);
        if (c && esc && !upper) {
            out[k++] = '\\';
            out[k++] = "\"\\bfnrt"[esc - "\"\\\b\f\n\r\t"];
        } else if (c < 0x20 || c == '"' || c == '\\') {
            k += (size_t)sprintf(out + k, upper ? "\\u%04X" : "\\u%04x", c);
        } else {
            out[k++] = (char)c;
        }
    }
    out[k++] = '"';
    return k;
}

/* Whether the text between quotes is not a JSON string: it holds a '"' or
 * a control character, and no '\\' (which could make an escape of them). */
static bool not_json_as_is(const char *s, size_t n)
{
    bool special = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\') return false;
        special |= (unsigned char)s[i] < 0x20 || s[i] == '"';
    }
    return special;
}

/* -1: the recognizer failed (message printed). */
static int accepts(const struct nextok_grammar *g, const char *text, size_t len)
{
    bool yes = false;
    struct nextok_error err;
    if (nextok_grammar_accepts(g, text, len, &yes, &err) != NEXTOK_OK) {
        printf("  accepts: %s\n", err.msg);
        return -1;
    }
    return yes;
}

/* ---- the table from Node ---------------------------------------------------------------- */

struct tally {
    size_t rows, checks, bad;
};

static void report(struct tally *t, const char *p, const char *text, size_t len, const char *what,
                   int got, int want)
{
    t->checks++;
    if (got == want) return;
    if (t->bad++ < 12)
        printf("  /%s/ %s: \"%.*s\" (%zu bytes): %s, want %s\n", p, what,
               (int)(len < 60 ? len : 60), text, len,
               got < 0 ? "error"
               : got   ? "accepted"
                       : "rejected",
               want ? "accepted" : "rejected");
}

static void check_row(struct nextok_grammar *const g[M_COUNT], const char *p, const char *text,
                      size_t len, int full, int search, struct tally *t, char *quoted)
{
    t->rows++;
    report(t, p, text, len, mode_name[M_FULL], accepts(g[M_FULL], text, len), full);
    report(t, p, text, len, mode_name[M_SEARCH], accepts(g[M_SEARCH], text, len), search);
    size_t q = json_quote(text, len, quoted, false);
    report(t, p, quoted, q, mode_name[M_JSON_FULL], accepts(g[M_JSON_FULL], quoted, q), full);
    report(t, p, quoted, q, mode_name[M_JSON_SEARCH], accepts(g[M_JSON_SEARCH], quoted, q), search);
    size_t u = json_quote(text, len, quoted, true);
    if (u != q) { /* the \u00XX forms are the same characters */
        report(t, p, quoted, u, "json full \\u00XX", accepts(g[M_JSON_FULL], quoted, u), full);
        report(t, p, quoted, u, "json search \\u00XX", accepts(g[M_JSON_SEARCH], quoted, u),
               search);
    }
    if (not_json_as_is(text, len)) { /* not a JSON string as it is */
        quoted[0] = '"';
        memcpy(quoted + 1, text, len);
        quoted[len + 1] = '"';
        report(t, p, quoted, len + 2, "json full, unescaped",
               accepts(g[M_JSON_FULL], quoted, len + 2), 0);
        report(t, p, quoted, len + 2, "json search, unescaped",
               accepts(g[M_JSON_SEARCH], quoted, len + 2), 0);
    }
}

/* One line: {"p": PATTERN, "t": [[TEXT, FULL, SEARCH], ...]}. */
static void check_line(const char *line, size_t n, struct tally *t, size_t *patterns)
{
    struct nextok__json d;
    memset(&d, 0, sizeof d);
    struct nextok_error err;
    nextok_status st =
        nextok__json_parse_object(&d, &nextok__mem_libc, line, n, NULL, "regex-cases.txt", &err);
    CHECK_MSG(st == NEXTOK_OK, "%s", err.msg);
    size_t plen = 0;
    const char *p =
        st == NEXTOK_OK ? nextok__json_str(&d, nextok__json_get(&d, 0, "p"), &plen) : NULL;
    uint32_t rows = nextok__json_get(&d, 0, "t");
    CHECK(p != NULL && nextok__json_type(&d, rows) == NEXTOK__JSON_ARRAY);
    struct nextok_grammar *g[M_COUNT] = {NULL};
    bool ok = p != NULL;
    for (int m = 0; m < M_COUNT && ok; m++) {
        st = compile(&g[m], p, plen, (enum mode)m, &err);
        CHECK_MSG(st == NEXTOK_OK, "/%s/ %s: %s %s", p, mode_name[m], nextok_status_name(st),
                  err.msg);
        ok = st == NEXTOK_OK;
    }
    for (uint32_t r = nextok__json_first(&d, rows); ok && r != NEXTOK__JSON_NO_NODE;
         r = nextok__json_next(&d, r)) {
        uint32_t s = nextok__json_first(&d, r), f = nextok__json_next(&d, s),
                 m = nextok__json_next(&d, f);
        size_t len = 0;
        const char *text = nextok__json_str(&d, s, &len);
        int64_t full = -1, search = -1;
        if (!text || !nextok__json_int(&d, f, &full) || !nextok__json_int(&d, m, &search)) {
            CHECK_MSG(0, "/%s/: a row is not [text, 0|1, 0|1]", p);
            break;
        }
        char *quoted = malloc(6 * len + 3);
        check_row(g, p, text, len, (int)full, (int)search, t, quoted);
        free(quoted);
    }
    *patterns += ok;
    for (int m = 0; m < M_COUNT; m++) nextok_grammar_free(g[m]);
    nextok__json_free(&d);
}

TEST(node_table)
{
    char path[1024], *text = NULL;
    size_t n = 0, patterns = 0;
    struct nextok_error err;
    CHECK_OK(nextok__read_file(&nextok__mem_libc,
                               fixture_path(path, sizeof path, "grammars/regex-cases.txt"), &text,
                               &n, &err));
    struct tally t = {0, 0, 0};
    for (char *p = text, *end = text + n; text && p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (len && *p != '#') check_line(p, len, &t, &patterns);
        p += len + 1;
    }
    printf("  %zu patterns, %zu rows, %zu checks, %zu wrong\n", patterns, t.rows, t.checks, t.bad);
    CHECK_MSG(patterns >= 100 && t.rows >= 2500 && t.bad == 0, "%zu of %zu checks wrong", t.bad,
              t.checks);
    free(text);
}

/* ---- what Node cannot tell ------------------------------------------------------------------- */

struct case_ {
    const char *re;
    enum mode mode;
    const char *text; /* JSON modes: with the quotes */
    int accepted;
};

TEST(beyond_node)
{
    static const struct case_ cs[] = {
        /* identity escapes of ASCII punctuation, which the u flag refuses */
        {"a\\-b\\@\\#\\:\\_", M_FULL, "a-b@#:_", 1},
        {"a\\-b", M_FULL, "a\\-b", 0},
        {"[\\@-\\_]+", M_FULL, "@AZ_", 1},
        {"[\\@-\\_]+", M_FULL, "a", 0},
        /* a lone surrogate escape: no UTF-8 text holds one */
        {"\\uD800", M_FULL, "", 0},
        {"\\uD800", M_FULL, "\xef\xbf\xbd", 0},
        {"a\\uD800?", M_FULL, "a", 1},
        {"[\\uD800-\\uDFFFa]", M_FULL, "a", 1},
        /* JSON string bodies: each escaped character in every allowed form */
        {"a\"b", M_JSON_FULL, "\"a\\\"b\"", 1},
        {"a\"b", M_JSON_FULL, "\"a\"b\"", 0},
        {"a\"b", M_JSON_FULL, "\"a\\u0022b\"", 1},
        {"a\"b", M_JSON_FULL, "\"a\\u0022\"", 0},
        {"\\\\", M_JSON_FULL, "\"\\\\\"", 1},
        {"\\\\", M_JSON_FULL, "\"\\u005c\"", 1},
        {"\\\\", M_JSON_FULL, "\"\\u005C\"", 1},
        {"\\\\", M_JSON_FULL, "\"\\\"", 0},
        {"\\n\\t\\r\\f[\\b]", M_JSON_FULL, "\"\\n\\t\\r\\f\\b\"", 1},
        {"\\n\\t\\r\\f[\\b]", M_JSON_FULL, "\"\\u000A\\u0009\\u000d\\u000C\\u0008\"", 1},
        {"\\n", M_JSON_FULL, "\"\n\"", 0},
        {"\\v\\0\\x1f", M_JSON_FULL, "\"\\u000b\\u0000\\u001F\"", 1},
        {"\\v", M_JSON_FULL, "\"\\v\"", 0}, /* not a JSON escape */
        {"\\x1f", M_JSON_FULL, "\"\\u001g\"", 0},
        {"\\x1f", M_JSON_FULL, "\"\\U001F\"", 0},
        {"a", M_JSON_FULL, "\"\\u0061\"", 0}, /* ordinary characters: only as they are */
        {"/", M_JSON_FULL, "\"\\/\"", 0},
        {"/", M_JSON_FULL, "\"/\"", 1},
        {".", M_JSON_FULL, "\"\\u001e\"", 1},
        {".", M_JSON_FULL, "\"\\n\"", 0},
        {"[^a]", M_JSON_FULL, "\"\\\"\"", 1},
        {"\\s", M_JSON_FULL, "\"\\u000B\"", 1},
        {"\\S", M_JSON_FULL, "\"\\u001b\"", 1},
        {"\\S", M_JSON_FULL, "\"\\t\"", 0},
        /* search mode's filler: any JSON string body, any escape RFC 8259 allows */
        {"b", M_JSON_SEARCH, "\"\\u00e9\\/\\\"b\\ud800\\n\"", 1},
        {"b", M_JSON_SEARCH, "\"b\\x\"", 0},
        {"b", M_JSON_SEARCH, "\"b\"\"", 0},
        {"b", M_JSON_SEARCH, "\"\\\"", 0},
        {"b", M_JSON_SEARCH, "\"\tb\"", 0},
        {"^b", M_JSON_SEARCH, "\"\\\\b\"", 0},
        {"^\\\\b", M_JSON_SEARCH, "\"\\\\b\"", 1},
        {"^\\\\b$", M_JSON_SEARCH, "\"\\\\b\"", 1},
        {"\\\\b", M_JSON_SEARCH, "\"\\b\"", 0}, /* a backspace, not a backslash and b */
        /* anchored alternatives in full match: the anchors are no-ops there */
        {"^a|b$", M_FULL, "a", 1},
        {"^a|b$", M_FULL, "ab", 0},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        struct nextok_grammar *g = NULL;
        struct nextok_error err;
        nextok_status st = compile(&g, cs[i].re, strlen(cs[i].re), cs[i].mode, &err);
        CHECK_MSG(st == NEXTOK_OK, "/%s/: %s", cs[i].re, err.msg);
        int got = g ? accepts(g, cs[i].text, strlen(cs[i].text)) : -1;
        CHECK_MSG(got == cs[i].accepted, "/%s/ %s: \"%s\": %s, want %s", cs[i].re,
                  mode_name[cs[i].mode], cs[i].text, got ? "accepted" : "rejected",
                  cs[i].accepted ? "accepted" : "rejected");
        nextok_grammar_free(g);
    }
}

/* ---- refusals -------------------------------------------------------------------------------- */

TEST(refusals)
{
    static const struct {
        const char *re;
        nextok_status st;
        const char *msg;
    } bad[] = {
        {"(a)\\1", NEXTOK_ERR_UNSUPPORTED, "regex column 4: a backreference cannot be a grammar"},
        {"(?<n>a)\\k<n>", NEXTOK_ERR_UNSUPPORTED, "regex column 8: a backreference cannot"},
        {"(?=a)", NEXTOK_ERR_UNSUPPORTED, "regex column 1: a lookahead cannot be a grammar"},
        {"a(?!b)", NEXTOK_ERR_UNSUPPORTED, "regex column 2: a lookahead cannot"},
        {"(?<=a)b", NEXTOK_ERR_UNSUPPORTED, "regex column 1: a lookbehind cannot"},
        {"x(?<!a)", NEXTOK_ERR_UNSUPPORTED, "regex column 2: a lookbehind cannot"},
        {"\\bword", NEXTOK_ERR_UNSUPPORTED, "regex column 1: a word boundary (\\b, \\B) cannot"},
        {"é\\B", NEXTOK_ERR_UNSUPPORTED, "regex column 2: a word boundary"},
        {"\\p{L}", NEXTOK_ERR_UNSUPPORTED, "regex column 1: a Unicode property escape"},
        {"[a\\P{Lu}]", NEXTOK_ERR_UNSUPPORTED, "regex column 3: a Unicode property escape"},
        {"(?i:a)", NEXTOK_ERR_UNSUPPORTED, "regex column 1: a modifier group"},
        {"b(?-i:a)", NEXTOK_ERR_UNSUPPORTED, "regex column 2: a modifier group"},
        {"a^b", NEXTOK_ERR_UNSUPPORTED, "regex column 2: an anchor '^' inside the pattern cannot"},
        {"(^a)", NEXTOK_ERR_UNSUPPORTED, "regex column 2: an anchor '^'"},
        {"^^a", NEXTOK_ERR_UNSUPPORTED, "regex column 2: an anchor '^'"},
        {"éé^", NEXTOK_ERR_UNSUPPORTED, "regex column 3: an anchor '^'"},
        {"a$b", NEXTOK_ERR_UNSUPPORTED, "regex column 2: an anchor '$' inside the pattern cannot"},
        {"(a$)", NEXTOK_ERR_UNSUPPORTED, "regex column 3: an anchor '$'"},
        {"(a|b$)|c", NEXTOK_ERR_UNSUPPORTED, "regex column 5: an anchor '$'"},
        {"(a", NEXTOK_ERR_FORMAT, "regex column 1: unmatched '('"},
        {"a((b)", NEXTOK_ERR_FORMAT, "regex column 2: unmatched '('"},
        {"a)", NEXTOK_ERR_FORMAT, "regex column 2: unmatched ')'"},
        {"(a))", NEXTOK_ERR_FORMAT, "regex column 4: unmatched ')'"},
        {"*a", NEXTOK_ERR_FORMAT, "regex column 1: nothing to repeat"},
        {"a**", NEXTOK_ERR_FORMAT, "regex column 3: nothing to repeat"},
        {"a*??", NEXTOK_ERR_FORMAT, "regex column 4: nothing to repeat"},
        {"a|+", NEXTOK_ERR_FORMAT, "regex column 3: nothing to repeat"},
        {"(?:)a{2}{3}", NEXTOK_ERR_FORMAT, "regex column 9: nothing to repeat"},
        {"^*", NEXTOK_ERR_FORMAT, "regex column 2: nothing to repeat"},
        {"a$+", NEXTOK_ERR_FORMAT, "regex column 3: nothing to repeat"},
        {"{1}", NEXTOK_ERR_FORMAT, "regex column 1: nothing to repeat"},
        {"{", NEXTOK_ERR_FORMAT, "regex column 1: lone quantifier bracket '{'"},
        {"a}", NEXTOK_ERR_FORMAT, "regex column 2: lone quantifier bracket '}'"},
        {"]", NEXTOK_ERR_FORMAT, "regex column 1: lone ']'"},
        {"a{1", NEXTOK_ERR_FORMAT, "regex column 2: incomplete quantifier"},
        {"a{,5}", NEXTOK_ERR_FORMAT, "regex column 2: incomplete quantifier"},
        {"a{x}", NEXTOK_ERR_FORMAT, "regex column 2: incomplete quantifier"},
        {"ab{3,2}", NEXTOK_ERR_FORMAT, "regex column 3: numbers out of order in {} quantifier"},
        {"a{2001}", NEXTOK_ERR_FORMAT, "regex column 2: repetition count over 2000"},
        {"a{0,2001}", NEXTOK_ERR_FORMAT, "regex column 2: repetition count over 2000"},
        {"a{99999999999999999999}", NEXTOK_ERR_FORMAT, "regex column 2: repetition count over"},
        {"a{2001,}", NEXTOK_ERR_FORMAT, "regex column 2: repetition count over 2000"},
        {"[z-a]", NEXTOK_ERR_FORMAT, "regex column 2: range out of order in character class"},
        {"[😂-😀]", NEXTOK_ERR_FORMAT, "regex column 2: range out of order"},
        {"x[\\d-z]", NEXTOK_ERR_FORMAT, "regex column 3: a class escape cannot bound a range"},
        {"[a-\\w]", NEXTOK_ERR_FORMAT, "regex column 2: a class escape cannot bound a range"},
        {"[abc", NEXTOK_ERR_FORMAT, "regex column 1: unterminated character class"},
        {"[a-", NEXTOK_ERR_FORMAT, "regex column 1: unterminated character class"},
        {"[\\", NEXTOK_ERR_FORMAT, "regex column 2: '\\' at the end of the pattern"},
        {"ab\\", NEXTOK_ERR_FORMAT, "regex column 3: '\\' at the end of the pattern"},
        {"\\q", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape '\\q'"},
        {"é\\a", NEXTOK_ERR_FORMAT, "regex column 2: invalid escape '\\a'"},
        {"\\é", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape"},
        {"[\\B]", NEXTOK_ERR_FORMAT, "regex column 2: invalid escape '\\B'"},
        {"[\\1]", NEXTOK_ERR_FORMAT, "regex column 2: invalid escape '\\1'"},
        {"\\x4", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape \\x: expecting 2 hex digits"},
        {"a\\u12", NEXTOK_ERR_FORMAT, "regex column 2: invalid escape \\u: expecting 4 hex"},
        {"\\u{110000}", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape \\u{...}"},
        {"\\u{}", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape \\u{...}"},
        {"\\u{41", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape \\u{...}"},
        {"\\c1", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape \\c: expecting a letter"},
        {"\\c", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape \\c"},
        {"\\00", NEXTOK_ERR_FORMAT, "regex column 1: invalid escape \\0 followed by a digit"},
        {"(?<1a>x)", NEXTOK_ERR_FORMAT, "regex column 1: invalid group name"},
        {"(?<>x)", NEXTOK_ERR_FORMAT, "regex column 1: invalid group name"},
        {"(?<a", NEXTOK_ERR_FORMAT, "regex column 1: invalid group name"},
        {"(?*)", NEXTOK_ERR_FORMAT, "regex column 1: invalid group"},
        {"a(?", NEXTOK_ERR_FORMAT, "regex column 2: invalid group"},
        {"a\xff", NEXTOK_ERR_FORMAT, "regex column 2: invalid UTF-8"},
        {"é[\xc3]", NEXTOK_ERR_FORMAT, "regex column 3: invalid UTF-8"},
        {"\xed\xa0\x80", NEXTOK_ERR_FORMAT, "regex column 1: invalid UTF-8"},
    };
    struct nextok__buf b = nextok__buf_of(&nextok__mem_libc);
    const char *before = "x ::= \"a\"\n";
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct nextok_grammar *g = (struct nextok_grammar *)&b;
        struct nextok_error err;
        nextok_status st = nextok_grammar_init_regex(&g, bad[i].re, strlen(bad[i].re), NULL, &err);
        CHECK_MSG(st == bad[i].st && g == NULL && strstr(err.msg, bad[i].msg) == err.msg,
                  "/%s/: %s \"%s\", want %s \"%s\"", bad[i].re, nextok_status_name(st), err.msg,
                  nextok_status_name(bad[i].st), bad[i].msg);
        /* the same in every mode, and the buffer as it was */
        for (unsigned flags = 1; flags < 4; flags++) {
            b.len = 0;
            CHECK_OK(nextok__buf_append(&b, before, strlen(before)));
            st = nextok__regex_to_gbnf(&b, "r", bad[i].re, strlen(bad[i].re), flags, &err);
            CHECK_MSG(st == bad[i].st && strstr(err.msg, bad[i].msg) == err.msg &&
                          b.len == strlen(before) && memcmp(b.data, before, b.len) == 0,
                      "/%s/ flags %u: %s \"%s\"", bad[i].re, flags, nextok_status_name(st),
                      err.msg);
        }
    }
    nextok__buf_free(&b);

    /* nesting: 128 groups deep compile, 129 do not */
    char deep[400];
    for (int depth = 128; depth <= 129; depth++) {
        size_t n = 0;
        for (int i = 0; i < depth; i++) deep[n++] = '(';
        deep[n++] = 'a';
        for (int i = 0; i < depth; i++) deep[n++] = '|', deep[n++] = ')';
        struct nextok_grammar *g = NULL;
        struct nextok_error err;
        nextok_status st = nextok_grammar_init_regex(&g, deep, n, NULL, &err);
        if (depth == 128) {
            CHECK_MSG(st == NEXTOK_OK, "128 deep: %s", err.msg);
            CHECK(g && accepts(g, "a", 1) == 1 && accepts(g, "", 0) == 1);
        } else {
            CHECK_EQ_INT(st, NEXTOK_ERR_FORMAT);
            CHECK(strstr(err.msg, "regex column 129: groups nested more than 128 deep") != NULL);
        }
        nextok_grammar_free(g);
    }

    /* arguments */
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    CHECK_EQ_INT(nextok_grammar_init_regex(NULL, "a", 1, NULL, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_grammar_init_regex(&g, NULL, 1, NULL, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK_OK(nextok_grammar_init_regex(&g, NULL, 0, NULL, &err)); /* the empty pattern */
    CHECK(g && accepts(g, "", 0) == 1 && accepts(g, "a", 1) == 0);
    nextok_grammar_free(g);
    const struct nextok_allocator half = {NULL, NULL, f_free, NULL};
    struct nextok_grammar_params p = {NULL, &half};
    CHECK_EQ_INT(nextok_grammar_init_regex(&g, "a", 1, &p, &err), NEXTOK_ERR_INVALID_ARG);
    /* a NUL in the pattern is a character */
    CHECK_OK(nextok_grammar_init_regex(&g, "a\0b", 3, NULL, &err));
    CHECK(g && accepts(g, "a\0b", 3) == 1 && accepts(g, "ab", 2) == 0);
    nextok_grammar_free(g);
}

/* ---- sizes ----------------------------------------------------------------------------------- */

static size_t gbnf_size(const char *re, unsigned flags)
{
    struct nextok__buf b = nextok__buf_of(&nextok__mem_libc);
    struct nextok_error err;
    nextok_status st = nextok__regex_to_gbnf(&b, "root", re, strlen(re), flags, &err);
    CHECK_MSG(st == NEXTOK_OK, "/%s/: %s", re, err.msg);
    size_t n = b.len;
    nextok__buf_free(&b);
    return n;
}

TEST(sizes)
{
    /* a counted repetition repeats one rule or class: the text stays small */
    static const char *const res[] = {"(abc|def){1,2000}", "[\\s\\S]{2000}", "(x{0,2000}){0,2000}",
                                      "(\"|\\\\|[^\\n]){7,1999}", "(a|b?){2000,}"};
    for (size_t i = 0; i < sizeof res / sizeof res[0]; i++)
        for (unsigned flags = 0; flags < 4; flags++)
            CHECK_MSG(gbnf_size(res[i], flags) < 1200, "/%s/ flags %u: %zu bytes", res[i], flags,
                      gbnf_size(res[i], flags));
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_grammar_init_regex(&g, res[2], strlen(res[2]), NULL, &err));
    CHECK(g && nextok_grammar_n_rules(g) < 4100);
    nextok_grammar_free(g);
    char *text = malloc(4002);
    for (int i = 0; i < 2001; i++) memcpy(text + 2 * i, "ab", 2);
    CHECK_OK(nextok_grammar_init_regex(&g, "(ab|c){1999,2000}", 17, NULL, &err));
    CHECK(g && accepts(g, text, 3998) == 1 && accepts(g, text, 4000) == 1);
    CHECK(g && accepts(g, text, 3996) == 0 && accepts(g, text, 3999) == 0);
    CHECK(g && accepts(g, text, 4002) == 0);
    nextok_grammar_free(g);
    memset(text, 'x', 4002);
    CHECK_OK(nextok_grammar_init_regex(&g, "x{1500,}", 8, NULL, &err));
    CHECK(g && accepts(g, text, 1499) == 0 && accepts(g, text, 1500) == 1);
    CHECK(g && accepts(g, text, 1600) == 1);
    nextok_grammar_free(g);
    free(text);

    /* 68 000 generated rules: within the front ends' bounds (2^20 rules);
     * the same repetitions written as GBNF meet llama.cpp's bounds */
    char big[600] = "", gb[700] = "root ::= ";
    for (int i = 0; i < 34; i++) strcat(big, "a{0,2000}"), strcat(gb, "\"a\"{0,2000} ");
    CHECK_OK(nextok_grammar_init_regex(&g, big, strlen(big), NULL, &err));
    CHECK(g && nextok_grammar_n_rules(g) > 65536);
    nextok_grammar_free(g);
    g = NULL;
    CHECK_EQ_INT(nextok_grammar_init_gbnf(&g, gb, strlen(gb), NULL, &err), NEXTOK_ERR_FORMAT);
    CHECK_MSG(g == NULL && strstr(err.msg, "sane defaults") != NULL, "%s", err.msg);
}

/* ---- allocation failure ---------------------------------------------------------------------- */


TEST(every_allocation_failing)
{
    static const char re[] = "^(?<a>[^\\d\"]|\\s\\w+?)*x{2,1500}(\\.|é😀\\\\)?[a-z\\x00]+$|b";
    const struct nextok_allocator a = {f_alloc, f_realloc, f_free, NULL};
    struct nextok_grammar_params p = {NULL, &a};
    struct nextok__mem mem;
    CHECK_OK(nextok__mem_resolve(&mem, &a));
    long points = 0;
    for (fail_at = 1;; fail_at++, points++) {
        calls = live = 0;
        /* the internal converter in JSON search mode, then the public function */
        struct nextok_error err = {NEXTOK_OK, ""};
        struct nextok__buf b = nextok__buf_of(&mem);
        nextok_status st = nextok__regex_to_gbnf(&b, "r", re, sizeof re - 1,
                                                 NEXTOK__RE_JSON_STRING | NEXTOK__RE_SEARCH, &err);
        nextok__buf_free(&b);
        struct nextok_grammar *g = NULL;
        bool yes = false;
        if (st == NEXTOK_OK) st = nextok_grammar_init_regex(&g, re, sizeof re - 1, &p, &err);
        if (st == NEXTOK_OK) st = nextok_grammar_accepts(g, "b", 1, &yes, &err);
        nextok_grammar_free(g);
        CHECK_MSG(live == 0, "allocation %ld failing: %ld blocks left", fail_at, live);
        if (calls < fail_at) { /* nothing failed: the run is complete */
            CHECK(st == NEXTOK_OK && yes);
            break;
        }
        CHECK_MSG(st == NEXTOK_ERR_NOMEM && strstr(err.msg, "out of memory"),
                  "allocation %ld failing: %s %s", fail_at, nextok_status_name(st), err.msg);
    }
    CHECK(points > 40);
    printf("  %ld failure points\n", points);
}

int main(void)
{
    RUN(node_table);
    RUN(beyond_node);
    RUN(refusals);
    RUN(sizes);
    RUN(every_allocation_failing);
    return harness_done();
}
