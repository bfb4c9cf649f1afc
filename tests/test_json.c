/*
 * The project's JSON reader (src/common/json.h) on its own: the tree's
 * values and iteration, duplicate keys, raw spans, the nesting limit, and
 * strict RFC 8259 errors with their byte offsets. tokenizer.json through the
 * loader is in test_vocab.c; allocation failure in test_vocab_nomem.c.
 */
#include "harness.h"
#include "nextok.h"

#include "common/json.h"

#include <stdint.h>

/* Parse text as a whole document (any top-level value); 1 on success. */
static int parse(struct nextok__json *d, const char *text, const char *const *const *raw,
                 struct nextok__js *s)
{
    memset(d, 0, sizeof *d);
    nextok__js_init(s, &nextok__mem_libc, text, strlen(text));
    return nextok__json_parse(d, s, raw) && nextok__js_at_end(s);
}

static int str_is(const struct nextok__json *d, uint32_t v, const char *want, size_t want_len)
{
    size_t n;
    const char *s = nextok__json_str(d, v, &n);
    return s && n == want_len && memcmp(s, want, n) == 0 && s[n] == '\0';
}

TEST(values)
{
    struct nextok__json d;
    struct nextok__js s;
    const char *text = " {\"n\": null, \"t\": true, \"f\": false, \"i\": -42, \"z\": -0, "
                       "\"big\": 123456789012345678901234567890, \"neg\": -99999999999999999999, "
                       "\"max\": 9223372036854775807, \"min\": -9223372036854775808, "
                       "\"r\": 2.5e-3, \"e\": 1E2, \"s\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00"
                       "\\u0000x\", \"raw\": \"caf\xc3\xa9\", \"a\": [1, [2, []], {}], \"o\": {\"k\": [true]}} ";
    CHECK(parse(&d, text, NULL, &s));
    CHECK_EQ_INT(nextok__json_type(&d, 0), NEXTOK__JSON_OBJECT);
    CHECK_EQ_INT(nextok__json_len(&d, 0), 15);
    CHECK_EQ_INT(nextok__json_type(&d, nextok__json_get(&d, 0, "n")), NEXTOK__JSON_NULL);
    CHECK_EQ_INT(nextok__json_type(&d, nextok__json_get(&d, 0, "t")), NEXTOK__JSON_TRUE);
    CHECK_EQ_INT(nextok__json_type(&d, nextok__json_get(&d, 0, "f")), NEXTOK__JSON_FALSE);
    int64_t v = 0;
    CHECK(nextok__json_int(&d, nextok__json_get(&d, 0, "i"), &v) && v == -42);
    CHECK(nextok__json_int(&d, nextok__json_get(&d, 0, "z"), &v) && v == 0);
    /* Integers past the int64 range saturate (json-c's strtoll did the same). */
    CHECK(nextok__json_int(&d, nextok__json_get(&d, 0, "big"), &v) && v == INT64_MAX);
    CHECK(nextok__json_int(&d, nextok__json_get(&d, 0, "neg"), &v) && v == INT64_MIN);
    CHECK(nextok__json_int(&d, nextok__json_get(&d, 0, "max"), &v) && v == INT64_MAX);
    CHECK(nextok__json_int(&d, nextok__json_get(&d, 0, "min"), &v) && v == INT64_MIN);
    uint32_t r = nextok__json_get(&d, 0, "r"), e = nextok__json_get(&d, 0, "e");
    CHECK(nextok__json_type(&d, r) == NEXTOK__JSON_REAL && d.node[r].num.d == 2.5e-3);
    CHECK(nextok__json_type(&d, e) == NEXTOK__JSON_REAL && d.node[e].num.d == 100.0);
    CHECK(!nextok__json_int(&d, e, &v));
    /* Every escape; \u0000 is a byte of the string, which stays NUL-terminated. */
    static const char want[] = "\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\0x";
    CHECK(str_is(&d, nextok__json_get(&d, 0, "s"), want, sizeof want - 1));
    CHECK(str_is(&d, nextok__json_get(&d, 0, "raw"), "caf\xc3\xa9", 5));
    /* Iteration: elements in order, nested containers skipped as a whole. */
    uint32_t a = nextok__json_get(&d, 0, "a");
    CHECK_EQ_INT(nextok__json_len(&d, a), 3);
    uint32_t x = nextok__json_first(&d, a);
    CHECK(nextok__json_int(&d, x, &v) && v == 1);
    x = nextok__json_next(&d, x);
    CHECK_EQ_INT(nextok__json_type(&d, x), NEXTOK__JSON_ARRAY);
    CHECK_EQ_INT(nextok__json_len(&d, x), 2);
    CHECK_EQ_INT(nextok__json_len(&d, nextok__json_next(&d, nextok__json_first(&d, x))), 0);
    x = nextok__json_next(&d, x);
    CHECK_EQ_INT(nextok__json_type(&d, x), NEXTOK__JSON_OBJECT);
    CHECK_EQ_INT(nextok__json_first(&d, x), NEXTOK__JSON_NO_NODE);
    CHECK_EQ_INT(nextok__json_next(&d, x), NEXTOK__JSON_NO_NODE);
    uint32_t k = nextok__json_get(&d, nextok__json_get(&d, 0, "o"), "k");
    CHECK_EQ_INT(nextok__json_type(&d, nextok__json_first(&d, k)), NEXTOK__JSON_TRUE);
    /* Object members: key nodes, each followed by its value. */
    uint32_t key = nextok__json_first(&d, 0);
    CHECK(str_is(&d, key, "n", 1));
    CHECK(str_is(&d, nextok__json_next(&d, key), "t", 1));
    /* Absent members, wrong types. */
    CHECK_EQ_INT(nextok__json_get(&d, 0, "missing"), NEXTOK__JSON_NO_NODE);
    CHECK_EQ_INT(nextok__json_get(&d, a, "n"), NEXTOK__JSON_NO_NODE);
    CHECK_EQ_INT(nextok__json_get(&d, NEXTOK__JSON_NO_NODE, "n"), NEXTOK__JSON_NO_NODE);
    CHECK_EQ_INT(nextok__json_type(&d, NEXTOK__JSON_NO_NODE), NEXTOK__JSON_NONE);
    CHECK(nextok__json_str(&d, a, NULL) == NULL);
    CHECK_EQ_INT(nextok__json_len(&d, nextok__json_get(&d, 0, "s")), 0);
    nextok__json_free(&d);
}

/* The last of repeated keys counts, as in json-c 0.16 (json_object_object_add
 * replaces), serde_json and Python; keys compare byte for byte. */
TEST(duplicate_keys)
{
    struct nextok__json d;
    struct nextok__js s;
    CHECK(parse(&d, "{\"a\": 1, \"b\": 2, \"a\": 3, \"a\\u0000\": 4, \"\\u0061\": 5, \"b\": null}",
                NULL, &s));
    int64_t v = 0;
    CHECK(nextok__json_int(&d, nextok__json_get(&d, 0, "a"), &v) && v == 5);
    CHECK_EQ_INT(nextok__json_type(&d, nextok__json_get(&d, 0, "b")), NEXTOK__JSON_NULL);
    CHECK_EQ_INT(nextok__json_len(&d, 0), 6); /* every member stays in the tree */
    nextok__json_free(&d);
}

TEST(raw_spans)
{
    static const char *const vocab[] = {"model", "vocab", NULL};
    static const char *const merges[] = {"model", "merges", NULL};
    static const char *const *const raw[] = {vocab, merges, NULL};
    struct nextok__json d;
    struct nextok__js s;
    const char *text = "{\"vocab\": {\"x\": 1}, \"model\": {\"type\": \"BPE\", \"vocab\":  "
                       "{\"a\": 0, \"b\": [1, {\"c\": null}]} , \"merges\": [\"a b\"], "
                       "\"list\": [{\"vocab\": 2}]}}";
    CHECK(parse(&d, text, raw, &s));
    uint32_t model = nextok__json_get(&d, 0, "model");
    uint32_t v = nextok__json_get(&d, model, "vocab"), m = nextok__json_get(&d, model, "merges");
    CHECK_EQ_INT(nextok__json_type(&d, v), NEXTOK__JSON_RAW);
    const char *want = "{\"a\": 0, \"b\": [1, {\"c\": null}]}";
    CHECK(d.node[v].len == strlen(want) && memcmp(text + d.node[v].off, want, strlen(want)) == 0);
    CHECK_EQ_INT(nextok__json_type(&d, m), NEXTOK__JSON_RAW);
    CHECK(d.node[m].len == 7 && memcmp(text + d.node[m].off, "[\"a b\"]", 7) == 0);
    /* The same key elsewhere is parsed. */
    CHECK_EQ_INT(nextok__json_type(&d, nextok__json_get(&d, 0, "vocab")), NEXTOK__JSON_OBJECT);
    uint32_t list = nextok__json_get(&d, model, "list");
    uint32_t inner = nextok__json_get(&d, nextok__json_first(&d, list), "vocab");
    CHECK_EQ_INT(nextok__json_type(&d, inner), NEXTOK__JSON_INT);
    CHECK(str_is(&d, nextok__json_get(&d, model, "type"), "BPE", 3));
    nextok__json_free(&d);
    /* A raw span is still validated. */
    CHECK(!parse(&d, "{\"model\": {\"vocab\": {\"a\": 01}}}", raw, &s));
    CHECK(s.err_what && strcmp(s.err_what, "expected ',' or '}'") == 0);
    CHECK_EQ_INT(nextok__js_offset(&s), 27);
    nextok__json_free(&d);
}

/* 32 nested containers are fine, the 33rd is refused where it opens. */
TEST(nesting_limit)
{
    char text[200];
    struct nextok__json d;
    struct nextok__js s;
    for (int depth = NEXTOK__JS_MAX_DEPTH; depth <= NEXTOK__JS_MAX_DEPTH + 1; depth++) {
        size_t n = 0;
        text[n++] = '{';
        memcpy(text + n, "\"k\": ", 5);
        n += 5;
        for (int i = 1; i < depth; i++) text[n++] = '[';
        for (int i = 1; i < depth; i++) text[n++] = ']';
        text[n++] = '}';
        text[n] = '\0';
        int ok = parse(&d, text, NULL, &s);
        nextok__json_free(&d);
        if (depth == NEXTOK__JS_MAX_DEPTH) {
            CHECK_MSG(ok, "depth %d: %s", depth, s.err_what ? s.err_what : "");
        } else {
            CHECK(!ok && s.err_what && strcmp(s.err_what, "nesting too deep") == 0);
            CHECK_EQ_INT(nextok__js_offset(&s), 6 + NEXTOK__JS_MAX_DEPTH - 1);
        }
    }
}

/* Strict RFC 8259: what json-c's lenient mode took is refused, where it is. */
TEST(strict_errors)
{
    static const struct {
        const char *text;
        size_t at;
        const char *what;
    } bad[] = {
        {"", 0, "unexpected end of data"},
        {"   ", 3, "unexpected end of data"},
        {"{\"a\": 1,}", 8, "expected a string"},
        {"[1,]", 3, "unexpected character"},
        {"{'a': 1}", 1, "expected a string"},
        {"{\"a\": NaN}", 6, "unexpected character"},
        {"{\"a\": Infinity}", 6, "unexpected character"},
        {"{\"a\": True}", 6, "unexpected character"},
        {"[01]", 2, "expected ',' or ']'"},
        {"[1.]", 1, "bad number"},
        {"[1e]", 1, "bad number"},
        {"[.5]", 1, "unexpected character"},
        {"[+1]", 1, "unexpected character"},
        {"[-]", 1, "bad number"},
        {"/* c */ {}", 0, "unexpected character"},
        {"{} // c", 3, "unexpected data after the JSON value"},
        {"{}}", 2, "unexpected data after the JSON value"},
        {"[\"a\tb\"]", 3, "control character in string"},
        {"[\"\\x\"]", 2, "bad escape in string"},
        {"[\"\\u12\"]", 2, "bad \\u escape"},
        {"[\"\\ud800\"]", 2, "lone high surrogate in \\u escape"},
        {"[\"\\udc00\"]", 2, "lone low surrogate in \\u escape"},
        {"[\"\\ud800\\u0041\"]", 2, "lone high surrogate in \\u escape"},
        {"[\"abc", 1, "unterminated string"},
        {"{\"a\" 1}", 5, "expected ':'"},
        {"{\"a\": 1 \"b\": 2}", 8, "expected ',' or '}'"},
        {"[1 2]", 3, "expected ',' or ']'"},
        {"[tru]", 1, "unexpected character"},
        {"[nul", 1, "unexpected character"},
        {"{\"a\": [1, 2}", 11, "expected ',' or ']'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct nextok__json d;
        struct nextok__js s;
        int ok = parse(&d, bad[i].text, NULL, &s);
        nextok__json_free(&d);
        CHECK_MSG(!ok && !s.nomem && s.err_what && strcmp(s.err_what, bad[i].what) == 0 &&
                      nextok__js_offset(&s) == bad[i].at,
                  "%s: want \"%s\" at %zu, got \"%s\" at %zu", bad[i].text, bad[i].what, bad[i].at,
                  ok ? "(accepted)" : s.err_what, nextok__js_offset(&s));
    }
}

/* The whole-document entry point: object required, errors name the file. */
TEST(parse_object)
{
    struct nextok__json d = {0};
    struct nextok_error e;
    const struct nextok__mem *m = &nextok__mem_libc;
    CHECK_OK(nextok__json_parse_object(&d, m, "\n{\"a\": [1]}\n", 12, NULL, "x.json", &e));
    CHECK_EQ_INT(nextok__json_type(&d, 0), NEXTOK__JSON_OBJECT);
    nextok__json_free(&d);
    CHECK_EQ_INT(nextok__json_parse_object(&d, m, " [1]", 4, NULL, "x.json", &e), NEXTOK_ERR_FORMAT);
    CHECK(strcmp(e.msg, "x.json: byte 1: expected an object") == 0);
    nextok__json_free(&d);
    CHECK_EQ_INT(nextok__json_parse_object(&d, m, "{\"a\": 1} 2", 10, NULL, "y.json", &e),
                 NEXTOK_ERR_FORMAT);
    CHECK(strcmp(e.msg, "y.json: byte 9: unexpected data after the JSON value") == 0);
    nextok__json_free(&d);
    /* The length is honoured: the text need not end with a NUL. */
    CHECK_EQ_INT(nextok__json_parse_object(&d, m, "{\"a\": 12}", 8, NULL, "z.json", &e),
                 NEXTOK_ERR_FORMAT);
    CHECK(strcmp(e.msg, "z.json: byte 8: expected ',' or '}'") == 0);
    nextok__json_free(&d);
}

int main(void)
{
    RUN(values);
    RUN(duplicate_keys);
    RUN(raw_spans);
    RUN(nesting_limit);
    RUN(strict_errors);
    RUN(parse_object);
    return harness_done();
}
