/*
 * Grammars from GBNF: llama.cpp's example grammars compile; malformed ones
 * are refused with the place and the reason; acceptance tables (the Earley
 * reference recognizer) for the examples and for each construct; token
 * references; every allocation failing in turn.
 */
#include "harness.h"
#include "fail_alloc.h"

#include "common/file.h"
#include "nextok.h"

#include <stdlib.h>

static struct nextok_grammar *compile(const char *src, const struct nextok_vocab *v)
{
    struct nextok_grammar_params p = nextok_grammar_default_params();
    p.vocab = v;
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    nextok_status st = nextok_grammar_init_gbnf(&g, src, strlen(src), &p, &err);
    CHECK_MSG(st == NEXTOK_OK, "%s\n    in: %s", err.msg, src);
    return g;
}

static struct nextok_grammar *compile_file(const char *name)
{
    char rel[128], path[1024];
    snprintf(rel, sizeof rel, "grammars/%s", name);
    char *text = NULL;
    size_t n = 0;
    struct nextok_error err;
    if (nextok__read_file(&nextok__mem_libc, fixture_path(path, sizeof path, rel), &text, &n,
                          &err) != NEXTOK_OK) {
        CHECK_MSG(0, "%s: %s", path, err.msg);
        return NULL;
    }
    struct nextok_grammar *g = NULL;
    nextok_status st = nextok_grammar_init_gbnf(&g, text, n, NULL, &err);
    CHECK_MSG(st == NEXTOK_OK, "%s: %s", name, err.msg);
    free(text);
    return g;
}

/* Each text: 1 accepted, 0 rejected. */
struct case_ {
    const char *text;
    int accepted;
};

static void table(struct nextok_grammar *g, const char *what, const struct case_ *c, size_t n)
{
    for (size_t i = 0; g && i < n; i++) {
        bool yes = false;
        struct nextok_error err;
        nextok_status st = nextok_grammar_accepts(g, c[i].text, strlen(c[i].text), &yes, &err);
        CHECK_MSG(st == NEXTOK_OK && yes == (c[i].accepted == 1), "%s: \"%s\": %s%s", what,
                  c[i].text, st == NEXTOK_OK ? (yes ? "accepted" : "rejected") : err.msg,
                  st == NEXTOK_OK ? ", the other was expected" : "");
    }
}
#define TABLE(g, what, ...)                                  \
    do {                                                     \
        static const struct case_ cs_[] = {__VA_ARGS__};     \
        table((g), (what), cs_, sizeof cs_ / sizeof cs_[0]); \
    } while (0)

/* ---- llama.cpp's example grammars ---------------------------------------------------- */

TEST(examples_compile)
{
    static const char *const names[] = {"arithmetic.gbnf", "c.gbnf",        "chess.gbnf",
                                        "english.gbnf",    "japanese.gbnf", "json.gbnf",
                                        "json_arr.gbnf",   "list.gbnf"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct nextok_grammar *g = compile_file(names[i]);
        CHECK(g && nextok_grammar_n_rules(g) > 1);
        nextok_grammar_free(g);
    }
}

TEST(json_gbnf)
{
    struct nextok_grammar *g = compile_file("json.gbnf");
    TABLE(g, "json.gbnf", {"{}", 1}, {"{\"a\": 1}", 1}, {"{\"a\": [1, 2.5, -3e19, true, null]}", 1},
          {"{\"a\": -3e10}", 0} /* the grammar's exponent */,
          {"{\"k\": {\"n\": \"\\u00e9\\n\"}}", 1}, {"{ }", 1}, {"{\"a\":1}\n", 1},
          {"[]", 0},          /* root is an object */
          {"{\"a\": 01}", 0}, /* no leading zero */
          {"{\"a\": 1,}", 0}, /* no trailing comma */
          {"{'a': 1}", 0}, {"{\"a\": tru}", 0}, {"{\"a\": \"x\x01\"}", 0}, {"", 0},
          {"{\"a\": 1.}", 0}, {"{\"a\": \"\\q\"}", 0});
    nextok_grammar_free(g);
}

TEST(other_examples)
{
    struct nextok_grammar *g = compile_file("arithmetic.gbnf");
    TABLE(g, "arithmetic", {"1+2=3\n", 1}, {"(1+2)*3=x\n", 1}, {"a = b\nc=d\n", 1}, {"1+2=3", 0},
          {"1+=3\n", 0});
    nextok_grammar_free(g);
    g = compile_file("chess.gbnf");
    TABLE(g, "chess", {"1. e4 e5\n2. Nf3 Nc6\n", 1}, {"1. O-O-O exd8=Q+\n2. a1 b2\n", 1},
          {"1. e4 e5\n", 0}, {"1. e9 e5\n2. a1 a2\n", 0});
    nextok_grammar_free(g);
    g = compile_file("list.gbnf");
    TABLE(g, "list", {"- a\n- b c\n", 1}, {"- a\r\n", 0}, {"- \n", 0}, {"-a\n", 0});
    nextok_grammar_free(g);
    g = compile_file("japanese.gbnf");
    TABLE(g, "japanese", {"ひらがな カタカナ", 1}, {"日本語。", 1}, {"abc", 0}, {"ひらがな  x", 0});
    nextok_grammar_free(g);
}

/* The built-in JSON grammar: every value and schema of the JSON-Schema-Test-
 * Suite, as Python's json module writes them, is accepted; malformed JSON is
 * not. */
TEST(json_builtin)
{
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_grammar_init_json(&g, NULL, &err));
    char path[1024], *text = NULL;
    size_t n = 0, lines = 0, bad = 0;
    CHECK_OK(nextok__read_file(&nextok__mem_libc,
                               fixture_path(path, sizeof path, "grammars/json-values.txt"), &text,
                               &n, &err));
    for (char *p = text, *end = text + n; g && text && p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (*p != '#') {
            bool yes = false;
            lines++;
            if ((nextok_grammar_accepts(g, p, len, &yes, &err) != NEXTOK_OK || !yes) && bad++ < 3)
                printf("  rejected: %.*s\n", (int)(len < 80 ? len : 80), p);
        }
        p += len + 1;
    }
    CHECK_MSG(lines > 1000 && bad == 0, "%zu of %zu JSON texts rejected", bad, lines);
    TABLE(g, "json", {" {\"a\" :\t[ ]\r\n} ", 1}, {"-0.0e-0", 1}, {"\"\\ud800\"", 1}, {"01", 0},
          {"[1,]", 0}, {"{\"a\":1,}", 0}, {"\"\\x41\"", 0}, {"1.", 0}, {".5", 0}, {"+1", 0},
          {"[1 2]", 0}, {"{1:2}", 0}, {"'a'", 0}, {"\"a\tb\"", 0}, {"nul", 0}, {"", 0}, {"[", 0},
          {"NaN", 0}, {"1e", 0});
    bool yes = true;
    CHECK_EQ_INT(nextok_grammar_accepts(g, "\"\xff\"", 3, &yes, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(!yes && strstr(err.msg, "UTF-8") != NULL);
    free(text);
    nextok_grammar_free(g);
}

/* ---- constructs ------------------------------------------------------------------------- */

TEST(constructs)
{
    struct nextok_grammar *g;
    g = compile("root ::= \"a\"{3,5}\n", NULL);
    TABLE(g, "{3,5}", {"aa", 0}, {"aaa", 1}, {"aaaaa", 1}, {"aaaaaa", 0});
    nextok_grammar_free(g);
    g = compile("root ::= \"ab\"{2,} \"c\"{0}\n", NULL);
    TABLE(g, "{2,} {0}", {"ab", 0}, {"abab", 1}, {"ababab", 1}, {"ababc", 0});
    nextok_grammar_free(g);
    g = compile("root ::= [^a-c\\x41] [\\u00e9-\\u00ea] . [-x] [x-]\n", NULL);
    TABLE(g, "classes", {"d\xc3\xa9\xe2\x82\xac-x", 1}, {"b\xc3\xa9zx-", 0}, {"A\xc3\xa9zxx", 0},
          {"d\xc3\xaa\xf0\x9f\x98\x80x-", 1}, {"d\xc3\xabzxx", 0});
    nextok_grammar_free(g);
    g = compile("# comment\nroot ::= | x # an empty alternative first\n\n  x ::= (\"a\" | \"b\"\n  "
                "| \"c\")+ y?\r\ny ::= \"\\\"\\\\\\t\"\n",
                NULL);
    TABLE(g, "groups, comments, CRLF", {"", 1}, {"abca", 1}, {"a\"\\\t", 1}, {"d", 0},
          {"a\"\\", 0});
    nextok_grammar_free(g);
    g = compile("root ::= \"x\"\nroot ::= \"y\"\n", NULL); /* the last definition counts */
    TABLE(g, "redefinition", {"y", 1}, {"x", 0});
    nextok_grammar_free(g);
    /* nullable rules inside and at the ends (Earley's empty-rule case) */
    g = compile("root ::= a b a \"z\" a\na ::= \"q\"? | b\nb ::= \"\"\n", NULL);
    TABLE(g, "empty rules", {"z", 1}, {"qz", 1}, {"qqzq", 1}, {"qqqzq", 0});
    nextok_grammar_free(g);
    /* ambiguous, right-recursive */
    g = compile("root ::= e\ne ::= t \"+\" e | t\nt ::= \"1\" | \"(\" e \")\"\n", NULL);
    TABLE(g, "recursion", {"1+(1+1)+1", 1}, {"((1))", 1}, {"1+", 0}, {"(1", 0});
    nextok_grammar_free(g);
}

/* ---- refusals ------------------------------------------------------------------------------ */

TEST(refusals)
{
    static const struct {
        const char *src, *msg;
    } bad[] = {
        {"root ::= \"a\n", "line 2, column 1: unexpected end of input"},
        {"root = \"a\"\n", "line 1, column 6: expecting ::="},
        {"root ::= \"a\" ]\n", "line 1, column 14: expecting newline or end"},
        {"root ::= (\"a\"\n", "line 2, column 1: expecting ')'"},
        {"root ::= \"\\q\"\n", "line 1, column 11: unknown escape"},
        {"root ::= \"\\x4\"\n", "line 1, column 13: expecting 2 hex chars"},
        {"root ::= * \"a\"\n", "line 1, column 12: expecting preceding item to */+/?/{"},
        {"root ::= \"a\"{x}\n", "line 1, column 14: expecting an int"},
        {"root ::= \"a\"{1 2}\n", "line 1, column 16: expecting ','"},
        {"root ::= \"a\"{1,2\n", "line 1, column 17: expecting '}'"},
        {"root ::= \"a\"{2001}\n", "number of repetitions exceeds sane defaults"},
        {"root ::= \"a\"{3,2}\n", "n < m"},
        {"root ::= x\n", "undefined rule identifier 'x'"},
        {"x ::= \"a\"\n", "the grammar has no root rule"},
        {"", "the grammar has no root rule"},
        {"root ::= root \"a\" | \"b\"\n", "left recursion through rule 'root'"},
        {"root ::= a\na ::= b? root\nb ::= \"b\"\n", "left recursion"},
        {"  ::= \"a\"\n", "line 1, column 3: expecting name"},
        {"root ::= <hello>\n", "needs a vocabulary"},
        {"root ::= <[12\n", "expecting ']>'"},
        {"root ::= \"\xff\"\n", "line 1, column 11: invalid UTF-8"},
        {"root ::= [a-\n", "unexpected end of input"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct nextok_grammar *g = (struct nextok_grammar *)1;
        struct nextok_error err;
        nextok_status st = nextok_grammar_init_gbnf(&g, bad[i].src, strlen(bad[i].src), NULL, &err);
        CHECK_MSG(st == NEXTOK_ERR_FORMAT && g == NULL && strstr(err.msg, bad[i].msg),
                  "\"%s\": %s \"%s\", want \"%s\"", bad[i].src, nextok_status_name(st), err.msg,
                  bad[i].msg);
    }
    /* nesting and size limits, not a stack overflow */
    char *deep = malloc(4000);
    size_t n = (size_t)sprintf(deep, "root ::= ");
    for (int i = 0; i < 1000; i++) deep[n++] = '(';
    deep[n++] = '"';
    deep[n++] = 'a';
    deep[n++] = '"';
    for (int i = 0; i < 1000; i++) deep[n++] = ')';
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    CHECK_EQ_INT(nextok_grammar_init_gbnf(&g, deep, n, NULL, &err), NEXTOK_ERR_FORMAT);
    CHECK(strstr(err.msg, "nested") != NULL);
    free(deep);
    const char *rep = "root ::= ((\"a\"{0,40}){0,40}){0,40}\n";
    CHECK_EQ_INT(nextok_grammar_init_gbnf(&g, rep, strlen(rep), NULL, &err), NEXTOK_ERR_FORMAT);
    CHECK(strstr(err.msg, "sane defaults") != NULL);
}

/* ---- token references ------------------------------------------------------------------------ */

TEST(tokens)
{
    char path[1024];
    struct nextok_vocab *v = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_vocab_load_file(
        &v, fixture_path(path, sizeof path, "vocab/hf/gpt2/tokenizer.json"), &err));
#if defined(NEXTOK_HAVE_PCRE2)
    struct nextok_grammar *g = compile("root ::= \"a\" <[50256]> | !<|endoftext|>\n", v);
    CHECK(g != NULL);
#else /* <text> is encoded with the vocabulary, whose regex needs PCRE2 */
    const char *t = "root ::= !<|endoftext|>\n";
    struct nextok_grammar *g = NULL;
    CHECK_EQ_INT(
        nextok_grammar_init_gbnf(&g, t, strlen(t), &(struct nextok_grammar_params){v, NULL}, &err),
        NEXTOK_ERR_FORMAT);
    CHECK(strstr(err.msg, "cannot encode") != NULL);
    g = compile("root ::= \"a\" <[50256]> | !<[50256]>\n", v);
#endif
    TABLE(g, "tokens never match text", {"a", 0}, {"a<|endoftext|>", 0}, {"x", 0});
    nextok_grammar_free(g);
    const char *bad = "root ::= <[50257]>\n";
    CHECK_EQ_INT(nextok_grammar_init_gbnf(&g, bad, strlen(bad),
                                          &(struct nextok_grammar_params){v, NULL}, &err),
                 NEXTOK_ERR_FORMAT);
    CHECK(strstr(err.msg, "range") != NULL);
    bad = "root ::= <Hello world>\n"; /* two tokens */
    CHECK_EQ_INT(nextok_grammar_init_gbnf(&g, bad, strlen(bad),
                                          &(struct nextok_grammar_params){v, NULL}, &err),
                 NEXTOK_ERR_FORMAT);
#if defined(NEXTOK_HAVE_PCRE2)
    CHECK(strstr(err.msg, "exactly one token") != NULL);
#else
    CHECK(strstr(err.msg, "cannot encode") != NULL);
#endif
    nextok_vocab_free(v);
}

/* ---- allocation failure ---------------------------------------------------------------------- */


TEST(every_allocation_failing)
{
    char path[1024];
    char *text = NULL;
    size_t n = 0;
    struct nextok_error err;
    CHECK_OK(nextok__read_file(
        &nextok__mem_libc, fixture_path(path, sizeof path, "grammars/json.gbnf"), &text, &n, &err));
    const struct nextok_allocator a = {f_alloc, f_realloc, f_free, NULL};
    struct nextok_grammar_params p = {NULL, &a};
    long points = 0;
    for (fail_at = 1;; fail_at++, points++) {
        calls = live = 0;
        struct nextok_grammar *g = NULL;
        nextok_status st = nextok_grammar_init_gbnf(&g, text, n, &p, &err);
        bool yes = false;
        if (st == NEXTOK_OK) st = nextok_grammar_accepts(g, "{\"a\": [1]}", 10, &yes, &err);
        nextok_grammar_free(g);
        CHECK_MSG(live == 0, "allocation %ld failing: %ld blocks left", fail_at, live);
        if (calls < fail_at) { /* nothing failed: the run is complete */
            CHECK(st == NEXTOK_OK && yes);
            break;
        }
        CHECK_MSG(st == NEXTOK_ERR_NOMEM && strstr(err.msg, "out of memory"),
                  "allocation %ld failing: %s %s", fail_at, nextok_status_name(st), err.msg);
    }
    CHECK(points > 20);
    printf("  json.gbnf: %ld failure points\n", points);
    free(text);
    /* a lazy grammar, with words and patterns (trigger_dfa.c): the inner
     * grammar's allocator is the one lazy uses, so it is the failing one */
    struct nextok_grammar *inner = NULL;
    fail_at = 0;
    CHECK_OK(nextok_grammar_init_gbnf(&inner, "root ::= [0-9]+", 15, &p, &err));
    static const char *const words[] = {"<n>"}, *const pats[] = {"\\[N[0-9]{1,3}\\]"};
    struct nextok_lazy_params lp = nextok_lazy_default_params();
    lp.words = words, lp.n_words = 1, lp.patterns = pats, lp.n_patterns = 1;
    points = 0;
    for (fail_at = 1; inner; fail_at++, points++) {
        calls = live = 0;
        struct nextok_grammar *g = NULL;
        nextok_status st = nextok_grammar_init_lazy(&g, inner, &lp, &p, &err);
        bool yes = false;
        if (st == NEXTOK_OK) st = nextok_grammar_accepts(g, "x [N12]345", 10, &yes, &err);
        nextok_grammar_free(g);
        CHECK_MSG(live == 0, "lazy: allocation %ld failing: %ld blocks left", fail_at, live);
        if (calls < fail_at) {
            CHECK(st == NEXTOK_OK && yes);
            break;
        }
        CHECK_MSG(st == NEXTOK_ERR_NOMEM && strstr(err.msg, "out of memory"),
                  "lazy: allocation %ld failing: %s %s", fail_at, nextok_status_name(st), err.msg);
    }
    CHECK(points > 10);
    printf("  lazy: %ld failure points\n", points);
    nextok_grammar_free(inner);
}

int main(void)
{
    RUN(examples_compile);
    RUN(json_gbnf);
    RUN(other_examples);
    RUN(json_builtin);
    RUN(constructs);
    RUN(refusals);
    RUN(tokens);
    RUN(every_allocation_failing);
    return harness_done();
}
