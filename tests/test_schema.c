/*
 * JSON Schema to grammar: acceptance tables (schema, JSON text, expected)
 * checked with the reference recognizer for every keyword; integer ranges
 * against every integer of a window, bounded numbers against an exact
 * oracle; whitespace modes; refusals and format errors with their JSON
 * pointers; lenient mode's reports; $ref recursion; every allocation failing
 * in turn. The JSON-Schema-Test-Suite runs in test_schema_suite.c.
 */
#include "harness.h"
#include "fail_alloc.h"

#include "grammar/schema_internal.h"
#include "nextok.h"

#include <stdint.h>
#include <stdlib.h>

static struct nextok_grammar *compile_p(const char *schema,
                                        const struct nextok_json_schema_params *sp)
{
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status st = nextok_grammar_init_json_schema(&g, schema, strlen(schema), sp, NULL, &err);
    CHECK_MSG(st == NEXTOK_OK, "%s: %s\n    schema: %s", nextok_status_name(st), err.msg, schema);
    return g;
}

static struct nextok_grammar *compile_compact(const char *schema)
{
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.whitespace = NEXTOK_JSON_WS_COMPACT;
    return compile_p(schema, &sp);
}

static bool accepts(const struct nextok_grammar *g, const char *text)
{
    bool yes = false;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status st = nextok_grammar_accepts(g, text, strlen(text), &yes, &err);
    CHECK_MSG(st == NEXTOK_OK, "\"%s\": %s", text, err.msg);
    return yes;
}

struct case_ {
    const char *text;
    int accepted;
};

/* The schema compiled with sp (named `mode` in failures) against the cases. */
static void table_p(const char *schema, const struct nextok_json_schema_params *sp,
                    const char *mode, const struct case_ *c, size_t n)
{
    struct nextok_grammar *g = compile_p(schema, sp);
    for (size_t i = 0; g && i < n; i++) {
        bool yes = accepts(g, c[i].text);
        CHECK_MSG(yes == (c[i].accepted == 1), "%s: %s: \"%s\" %s", mode, schema, c[i].text,
                  yes ? "accepted, should be rejected" : "rejected, should be accepted");
    }
    nextok_grammar_free(g);
}

/* The schema in compact and in flexible mode (the texts are compact). */
static void table(const char *schema, const struct case_ *c, size_t n)
{
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    table_p(schema, &sp, "flexible", c, n);
    sp.whitespace = NEXTOK_JSON_WS_COMPACT;
    table_p(schema, &sp, "compact", c, n);
}
#define TABLE(schema, ...)                                \
    do {                                                  \
        static const struct case_ cs_[] = {__VA_ARGS__};  \
        table((schema), cs_, sizeof cs_ / sizeof cs_[0]); \
    } while (0)

/* The status and message of compiling schema (default params but lenient). */
static nextok_status refusal(const char *schema, bool lenient, char *msg)
{
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.lenient = lenient;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status st = nextok_grammar_init_json_schema(&g, schema, strlen(schema), &sp, NULL, &err);
    CHECK(st != NEXTOK_OK || g != NULL);
    if (st != NEXTOK_OK) CHECK(g == NULL && err.status == st);
    nextok_grammar_free(g);
    if (msg) strcpy(msg, err.msg);
    return st;
}

#define REFUSED(schema, status, text)                                                            \
    do {                                                                                         \
        char m_[NEXTOK_ERRMSG_MAX];                                                              \
        nextok_status s_ = refusal((schema), false, m_);                                         \
        CHECK_MSG(s_ == (status) && strcmp(m_, (text)) == 0,                                     \
                  "%s\n    got %s \"%s\"\n    want %s \"%s\"", (schema), nextok_status_name(s_), \
                  m_, nextok_status_name(status), (text));                                       \
    } while (0)

/* ---- types and scalars ---------------------------------------------------------------- */

TEST(types)
{
    TABLE("{\"type\":\"null\"}", {"null", 1}, {"true", 0}, {"0", 0}, {"\"\"", 0}, {" null", 0});
    TABLE("{\"type\":\"boolean\"}", {"true", 1}, {"false", 1}, {"null", 0}, {"1", 0});
    TABLE("{\"type\":\"string\"}", {"\"\"", 1}, {"\"a b\"", 1}, {"\"\\u00e9\\n\"", 1}, {"1", 0},
          {"\"a", 0}, {"\"\x01\"", 0});
    TABLE("{\"type\":\"integer\"}", {"0", 1}, {"-17", 1}, {"123456789012345678901234567890", 1},
          {"1.5", 0}, {"01", 0}, {"\"1\"", 0}, {"1e2", 0});
    TABLE("{\"type\":\"number\"}", {"0", 1}, {"-0.5", 1}, {"1e-7", 1}, {"2E+10", 1}, {"1.", 0},
          {".5", 0}, {"+1", 0}, {"0x10", 0}, {"NaN", 0});
    TABLE("{\"type\":[\"string\",\"null\"]}", {"null", 1}, {"\"x\"", 1}, {"1", 0}, {"{}", 0});
    TABLE("{\"type\":\"object\"}", {"{}", 1}, {"{\"a\":[1,{\"b\":null}]}", 1}, {"[]", 0});
    TABLE("{\"type\":\"array\"}", {"[]", 1}, {"[1,\"a\",[],{}]", 1}, {"{}", 0}, {"[1,]", 0});
    /* no type: every type; type-specific keywords apply to their type only */
    TABLE("{\"minLength\":2,\"minimum\":5,\"minItems\":1,\"required\":[\"a\"]}", {"\"ab\"", 1},
          {"\"a\"", 0}, {"5", 1}, {"4", 0}, {"[0]", 1}, {"[]", 0}, {"{\"a\":0}", 1}, {"{}", 0},
          {"null", 1}, {"true", 1});
    TABLE("true", {"1", 1}, {"{\"x\":[null]}", 1}, {"\"\"", 1});
    TABLE("false", {"1", 0}, {"null", 0}, {"{}", 0});
    TABLE("{}", {"1", 1}, {"[{}]", 1});
}

TEST(strings)
{
    /* code points: an escape or a raw character is one */
    TABLE("{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}", {"\"a\"", 0}, {"\"ab\"", 1},
          {"\"abc\"", 1}, {"\"abcd\"", 0}, {"\"\\n\\t\"", 1}, {"\"\\u0041\\u00e9\\u4e2d\"", 1},
          {"\"\xf0\x9f\x92\xa9\xf0\x9f\x92\xa9\"", 1}, {"\"\xf0\x9f\x92\xa9\"", 0},
          {"\"\xc3\xa9\xe4\xb8\xad\"", 1}, {"\"a\\\"\"", 1}, {"\"\\/\\\\\\b\"", 1});
    /* \u escapes of surrogates are not accepted (one would count as two) */
    TABLE("{\"type\":\"string\"}", {"\"\\ud83d\\udca9\"", 0}, {"\"\\uD800\"", 0},
          {"\"\\uE000\"", 1}, {"\"\\uFFFF\"", 1}, {"\"\\u12\"", 0}, {"\"\\x41\"", 0});
    TABLE("{\"maxLength\":0}", {"\"\"", 1}, {"\"a\"", 0}, {"0", 1});
    TABLE("{\"minLength\":2.0,\"type\":\"string\"}", {"\"ab\"", 1}, {"\"a\"", 0});
    TABLE("{\"minLength\":3,\"maxLength\":2}", {"\"ab\"", 0}, {"\"abc\"", 0}, {"1", 1});
    /* counts past GBNF's 2000 bound (the recognizer's time grows with the
     * square of the length: just past it) */
    struct nextok_grammar *g =
        compile_compact("{\"type\":\"string\",\"minLength\":2002,\"maxLength\":2005}");
    char *s = malloc(2020);
    for (size_t n = 2000; g && n <= 2007; n++) {
        s[0] = '"';
        memset(s + 1, 'x', n);
        s[n + 1] = '"';
        s[n + 2] = '\0';
        CHECK_MSG(accepts(g, s) == (n >= 2002 && n <= 2005), "length %zu", n);
    }
    nextok_grammar_free(g);
    /* and as many optional ones */
    g = compile_compact("{\"type\":\"string\",\"maxLength\":2003}");
    static const size_t lens[] = {0, 1, 2002, 2003, 2004};
    for (size_t i = 0; g && i < sizeof lens / sizeof *lens; i++) {
        size_t n = lens[i];
        s[0] = '"';
        memset(s + 1, 'x', n);
        s[n + 1] = '"';
        s[n + 2] = '\0';
        CHECK_MSG(accepts(g, s) == (n <= 2003), "length %zu", n);
    }
    free(s);
    nextok_grammar_free(g);
}

/* ---- numbers -------------------------------------------------------------------------- */

/* Every integer of [lo - 30, hi + 30] (and a few far ones) against [lo, hi]. */
static void integer_range(const char *schema, long long lo, long long hi)
{
    struct nextok_grammar *g = compile_compact(schema);
    char t[64];
    for (long long v = lo - 30; g && v <= hi + 30; v++) {
        snprintf(t, sizeof t, "%lld", v);
        CHECK_MSG(accepts(g, t) == (v >= lo && v <= hi), "%s: %s", schema, t);
    }
    static const char *const never[] = {"-0", "01", "+1", "1e2", "1.0", "0.5", "00", "-", "", " 1"};
    for (size_t i = 0; g && i < sizeof never / sizeof never[0]; i++)
        CHECK_MSG(!accepts(g, never[i]), "%s: \"%s\"", schema, never[i]);
    nextok_grammar_free(g);
}

TEST(integer_ranges)
{
    integer_range("{\"type\":\"integer\",\"minimum\":-123,\"maximum\":4567}", -123, 4567);
    integer_range("{\"type\":\"integer\",\"exclusiveMinimum\":-123,\"exclusiveMaximum\":4567}",
                  -122, 4566);
    integer_range("{\"type\":\"integer\",\"minimum\":-1.5,\"maximum\":99.99}", -1, 99);
    integer_range("{\"type\":\"integer\",\"exclusiveMinimum\":-1.5,\"exclusiveMaximum\":100}", -1,
                  99);
    integer_range("{\"type\":\"integer\",\"minimum\":1e2,\"maximum\":10000e-1}", 100, 1000);
    integer_range("{\"type\":\"integer\",\"minimum\":-1000,\"maximum\":-999}", -1000, -999);
    integer_range("{\"type\":\"integer\",\"minimum\":0,\"maximum\":0}", 0, 0);
    integer_range("{\"type\":\"integer\",\"minimum\":7,\"maximum\":7}", 7, 7);
    integer_range("{\"type\":\"integer\",\"minimum\":5,\"maximum\":4.5}", 1, 0); /* empty */
    /* draft-04's boolean exclusive forms */
    integer_range("{\"type\":\"integer\",\"minimum\":3,\"exclusiveMinimum\":true,\"maximum\":9,"
                  "\"exclusiveMaximum\":false}",
                  4, 9);
    /* the tightest of several */
    integer_range("{\"allOf\":[{\"type\":\"integer\",\"minimum\":-50},{\"maximum\":70},"
                  "{\"exclusiveMaximum\":60,\"minimum\":-60}]}",
                  -50, 59);
    /* one side only */
    TABLE("{\"type\":\"integer\",\"minimum\":-20}", {"-20", 1}, {"-21", 0}, {"0", 1}, {"-1", 1},
          {"99999999999999999999999", 1}, {"-99999999999999999999", 0});
    TABLE("{\"type\":\"integer\",\"exclusiveMaximum\":1000}", {"999", 1}, {"1000", 0},
          {"-99999999999999999999999", 1}, {"10000", 0}, {"0", 1});
    /* bounds past the 64-bit range are exact */
    TABLE("{\"type\":\"integer\",\"minimum\":18446744073709551616,\"maximum\":1e21}",
          {"18446744073709551615", 0}, {"18446744073709551616", 1}, {"1000000000000000000000", 1},
          {"1000000000000000000001", 0});
}

/* Numbers k/100 for k in [-1200, 1200], spelled "1.5", "1.50", "-0.05", "3":
 * accepted iff lo <(=) k/100 <(=) hi (bounds in hundredths). */
static void number_range(const char *schema, long lo, bool lo_open, long hi, bool hi_open)
{
    struct nextok_grammar *g = compile_compact(schema);
    char t[64];
    for (long k = -1200; g && k <= 1200; k++) {
        bool in = (lo_open ? k > lo : k >= lo) && (hi_open ? k < hi : k <= hi);
        long a = k < 0 ? -k : k;
        for (int form = 0; form < 3; form++) {
            if (form == 0 && a % 100) continue;
            if (form == 0)
                snprintf(t, sizeof t, "%s%ld", k < 0 ? "-" : "", a / 100);
            else if (form == 1)
                snprintf(t, sizeof t, "%s%ld.%02ld", k < 0 ? "-" : "", a / 100, a % 100);
            else
                snprintf(t, sizeof t, "%s%ld.%02ld000", k < 0 ? "-" : "", a / 100, a % 100);
            if (k == 0 && form == 0) strcpy(t, "0");
            CHECK_MSG(accepts(g, t) == in, "%s: %s", schema, t);
        }
    }
    nextok_grammar_free(g);
}

TEST(number_ranges)
{
    number_range("{\"type\":\"number\",\"minimum\":-2.5,\"exclusiveMaximum\":10.25}", -250, false,
                 1025, true);
    number_range("{\"type\":\"number\",\"exclusiveMinimum\":-0.05,\"maximum\":0}", -5, true, 0,
                 false);
    number_range("{\"type\":\"number\",\"minimum\":10,\"maximum\":10.5}", 1000, false, 1050, false);
    number_range("{\"type\":\"number\",\"exclusiveMinimum\":0}", 0, true, 100000, false);
    number_range("{\"type\":\"number\",\"maximum\":-3.07}", -100000, false, -307, false);
    number_range("{\"type\":\"number\",\"minimum\":1.23,\"maximum\":1.23}", 123, false, 123, false);
    number_range("{\"type\":\"number\",\"exclusiveMinimum\":-11.99,\"exclusiveMaximum\":-0.01}",
                 -1199, true, -1, true);
    number_range("{\"minimum\":0.5,\"maximum\":7}", 50, false, 700, false);
    /* exponents and "-0" are not spellings a bounded number accepts (incomplete, never unsound) */
    TABLE("{\"type\":\"number\",\"minimum\":0,\"maximum\":100}", {"1e1", 0}, {"-0", 0}, {"-0.0", 0},
          {"100.000", 1}, {"100.001", 0}, {"0.0000001", 1});
    /* 10.5 > 10: the fraction counts */
    TABLE("{\"type\":\"number\",\"maximum\":10}", {"10", 1}, {"10.0", 1}, {"10.5", 0},
          {"9.999", 1});
    TABLE("{\"type\":\"number\",\"minimum\":1e-30}", {"0.000000000000000000000000000001", 1},
          {"0.0000000000000000000000000000009", 0}, {"5", 1});
}

TEST(multiple_of)
{
    struct nextok_grammar *g = compile_compact("{\"type\":\"integer\",\"multipleOf\":7}");
    char t[32];
    for (int v = -300; g && v <= 300; v++) {
        snprintf(t, sizeof t, "%d", v);
        CHECK_MSG(accepts(g, t) == (v % 7 == 0), "%s", t);
    }
    nextok_grammar_free(g);
    TABLE("{\"type\":\"integer\",\"multipleOf\":1}", {"5", 1}, {"-5", 1});
    TABLE("{\"allOf\":[{\"type\":\"integer\",\"multipleOf\":4},{\"multipleOf\":6}]}", {"12", 1},
          {"24", 1}, {"8", 0}, {"6", 0}, {"0", 1});
    TABLE("{\"allOf\":[{\"type\":\"number\",\"multipleOf\":0.1},{\"multipleOf\":0.01}]}",
          {"0.3", 1}, {"0.33", 0});
    TABLE("{\"type\":\"integer\",\"multipleOf\":2.5}", {"5", 1}, {"10", 1}, {"2", 0}, {"7", 0});
    TABLE("{\"type\":\"number\",\"multipleOf\":0.01}", {"1.25", 1}, {"1.250", 1}, {"1.255", 0},
          {"-3", 1}, {"0.1", 1}, {"1e2", 0});
    TABLE("{\"type\":\"number\",\"multipleOf\":0.1,\"minimum\":1,\"maximum\":2}", {"1", 1},
          {"1.5", 1}, {"1.50", 1}, {"2", 1}, {"2.0", 1}, {"0.5", 0}, {"1.25", 0}, {"2.1", 0});
    /* other multiples on numbers: the integers among them (incomplete, never unsound) */
    TABLE("{\"type\":\"number\",\"multipleOf\":0.5,\"minimum\":1,\"maximum\":2}", {"1", 1},
          {"2", 1}, {"1.5", 0}, {"3", 0});
    TABLE("{\"type\":\"number\",\"multipleOf\":3}", {"9", 1}, {"10", 0}, {"4.5", 0});
    TABLE("{\"type\":\"number\",\"multipleOf\":0.25,\"minimum\":1}", {"1", 1}, {"7", 1},
          {"1.25", 0}, {"0", 0});
    REFUSED("{\"type\":\"integer\",\"multipleOf\":3,\"minimum\":1}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'multipleOf' cannot be enforced together with bounds");
    REFUSED("{\"multipleOf\":0}", NEXTOK_ERR_FORMAT, "/multipleOf: must be a number > 0");
}

/* ---- enum, const ------------------------------------------------------------------------ */

TEST(values)
{
    TABLE("{\"enum\":[1,\"a\",null,[1,{\"x\":true}],{\"k\":\"v\",\"n\":2.50}]}", {"1", 1},
          {"\"a\"", 1}, {"null", 1}, {"[1,{\"x\":true}]", 1}, {"{\"k\":\"v\",\"n\":2.5}", 1},
          {"2", 0}, {"\"b\"", 0}, {"[1]", 0}, {"{\"k\":\"v\"}", 0}, {"true", 0});
    TABLE("{\"const\":\"he said \\\"hi\\\"\\n\"}", {"\"he said \\\"hi\\\"\\n\"", 1},
          {"\"he said\"", 0});
    TABLE("{\"const\":1.0}", {"1", 1}, {"2", 0});
    TABLE("{\"const\":1e2}", {"100", 1});
    TABLE("{\"const\":-0.000125}", {"-0.000125", 1}, {"0.000125", 0});
    /* filtered by the rest of the schema */
    TABLE("{\"type\":\"string\",\"enum\":[\"a\",1,\"bb\",null]}", {"\"a\"", 1}, {"\"bb\"", 1},
          {"1", 0}, {"null", 0});
    TABLE("{\"type\":\"integer\",\"enum\":[1,1.5,2.0]}", {"1", 1}, {"2", 1});
    TABLE("{\"enum\":[\"a\",\"bcd\",5,\"ef\"],\"maxLength\":2}", {"\"a\"", 1}, {"\"ef\"", 1},
          {"5", 1}, {"\"bcd\"", 0});
    TABLE("{\"enum\":[1,2,3,4],\"allOf\":[{\"enum\":[2,3,4,5]},{\"const\":3}]}", {"3", 1},
          {"2", 0});
    TABLE("{\"enum\":[{\"a\":1},{\"a\":\"x\"}],\"properties\":{\"a\":{\"type\":\"integer\"}}}",
          {"{\"a\":1}", 1}, {"{\"a\":\"x\"}", 0});
    TABLE("{\"enum\":[]}", {"1", 0}, {"null", 0});
    /* in flexible mode a container value may have whitespace inside */
    struct nextok_grammar *g = compile_p("{\"const\":{\"a\":[1,2]}}", NULL);
    CHECK(g && accepts(g, "{ \"a\" : [ 1 , 2 ] }") && accepts(g, "{\"a\":[1,2]}"));
    nextok_grammar_free(g);
}

/* ---- objects ------------------------------------------------------------------------------ */

TEST(objects)
{
    const char *s = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
                    "\"b\":{\"type\":\"string\"},\"c\":{}},\"required\":[\"b\"]}";
    TABLE(s, {"{\"b\":\"x\"}", 1}, {"{\"a\":1,\"b\":\"x\"}", 1},
          {"{\"a\":1,\"b\":\"x\",\"c\":[]}", 1}, {"{\"b\":\"x\",\"c\":null}", 1}, {"{}", 0},
          {"{\"a\":1}", 0}, {"{\"b\":1}", 0}, {"{\"b\":\"x\",\"a\":1}", 0}, /* schema order only */
          {"{\"b\":\"x\",\"zz\":1}", 1}, /* additional: allowed by default */
          {"{\"b\":\"x\",\"zz\":1,\"yy\":[]}", 1}, {"{\"b\":\"x\",\"a\":1}", 0},
          {"{\"b\":\"x\",\"b\":\"y\"}", 0},       /* a declared name is no additional key */
          {"{\"b\":\"x\",\"\\u0061\":\"y\"}", 0}, /* ... in any spelling: no escapes */
          {"{\"b\":\"x\",\"a\\n\":1}", 0}, {"{\"b\":\"x\",\"ab\":1}", 1},
          {"{\"b\":\"x\",\"\":1}", 1});
    TABLE("{\"properties\":{\"a\":{\"type\":\"integer\"}},\"additionalProperties\":false}",
          {"{}", 1}, {"{\"a\":1}", 1}, {"{\"a\":1,\"b\":2}", 0}, {"{\"b\":2}", 0}, {"[]", 1});
    TABLE("{\"properties\":{\"a\":{}},\"additionalProperties\":{\"type\":\"boolean\"}}",
          {"{\"a\":1,\"x\":true}", 1}, {"{\"x\":1}", 0}, {"{\"x\":false,\"y\":true}", 1});
    TABLE("{\"required\":[\"q\\\"r\"]}", {"{\"q\\\"r\":1}", 1}, {"{}", 0}, {"{\"q\":1}", 0});
    TABLE("{\"properties\":{\"a\":false,\"b\":true}}", {"{\"a\":1}", 0}, {"{\"b\":1}", 1},
          {"{}", 1});
    TABLE("{\"properties\":{\"a\":false},\"required\":[\"a\"]}", {"{\"a\":1}", 0}, {"{}", 0},
          {"1", 1});
    TABLE("{\"minProperties\":1,\"maxProperties\":2,\"properties\":{\"a\":{},\"b\":{},\"c\":{}},"
          "\"additionalProperties\":false}",
          {"{}", 0}, {"{\"a\":1}", 1}, {"{\"a\":1,\"c\":1}", 1}, {"{\"a\":1,\"b\":1,\"c\":1}", 0});
    TABLE("{\"maxProperties\":1}", {"{}", 1}, {"{\"x\":1}", 1}, {"{\"x\":1,\"y\":1}", 0});
    TABLE("{\"minProperties\":1}", {"{}", 0}, {"{\"x\":1}", 1}, {"{\"x\":1,\"y\":1}", 1});
    REFUSED("{\"minProperties\":2}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'minProperties' cannot be enforced where additional properties may "
            "repeat a key");
    /* strict: no additional properties unless the schema says so */
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.strict = true;
    sp.whitespace = NEXTOK_JSON_WS_COMPACT;
    struct nextok_grammar *g = compile_p("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
                                         "\"object\"}}}",
                                         &sp);
    CHECK(g && accepts(g, "{\"a\":{}}") && !accepts(g, "{\"b\":1}") &&
          !accepts(g, "{\"a\":{\"c\":1}}"));
    nextok_grammar_free(g);
    g = compile_p("{\"properties\":{\"a\":{}},\"additionalProperties\":true,\"items\":{}}", &sp);
    CHECK(g && accepts(g, "{\"a\":1,\"b\":2}") && accepts(g, "[{\"z\":1}]"));
    nextok_grammar_free(g);
    /* patternProperties: one pattern, additionalProperties false */
    TABLE("{\"properties\":{\"id\":{\"type\":\"integer\"}},\"patternProperties\":{\"^x-\":"
          "{\"type\":\"string\"}},\"additionalProperties\":false}",
          {"{\"id\":1,\"x-a\":\"s\"}", 1}, {"{\"x-a\":1}", 0}, {"{\"y\":\"s\"}", 0},
          {"{\"x-\":\"\",\"x-\\n\":\"c\"}", 1}, {"{\"id\":\"x\"}", 0}, {"{}", 1});
    TABLE("{\"patternProperties\":{\"a\":true}}", {"{\"b\":1}", 1});
    /* propertyNames: a type test, or a check of the declared names of a closed object */
    TABLE("{\"properties\":{\"ab\":{},\"abcd\":{}},\"additionalProperties\":false,"
          "\"propertyNames\":{\"maxLength\":3}}",
          {"{\"ab\":1}", 1}, {"{\"abcd\":1}", 0}, {"{}", 1});
    TABLE("{\"propertyNames\":false}", {"{}", 1}, {"{\"a\":1}", 0}, {"1", 1});
    TABLE("{\"propertyNames\":{\"type\":\"string\"}}", {"{\"a\":1}", 1});
    /* dependentRequired, dependentSchemas, draft-07 dependencies */
    TABLE("{\"properties\":{\"a\":{},\"b\":{},\"c\":{}},\"dependentRequired\":{\"a\":[\"c\"]}}",
          {"{\"a\":1,\"c\":1}", 1}, {"{\"a\":1}", 0}, {"{\"a\":1,\"b\":1}", 0}, {"{\"b\":1}", 1},
          {"{\"c\":1}", 1});
    TABLE("{\"properties\":{\"a\":{},\"b\":{}},\"dependentSchemas\":{\"a\":{\"required\":[\"b\"],"
          "\"properties\":{\"b\":{\"type\":\"string\"}}}}}",
          {"{\"a\":1,\"b\":\"x\"}", 1}, {"{\"a\":1,\"b\":2}", 0}, {"{\"b\":2}", 1},
          {"{\"a\":1}", 0});
    TABLE("{\"dependencies\":{\"x\":[\"y\"]}}", {"{\"x\":1,\"y\":1}", 1}, {"{\"x\":1}", 0},
          {"{}", 1});
}

/* Properties in any order (NEXTOK_JSON_ORDER_ANY), compact. */
static void any_table(const char *schema, const struct case_ *c, size_t n)
{
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.whitespace = NEXTOK_JSON_WS_COMPACT;
    sp.order = NEXTOK_JSON_ORDER_ANY;
    table_p(schema, &sp, "any order", c, n);
}
#define ANY_TABLE(schema, ...)                                \
    do {                                                      \
        static const struct case_ cs_[] = {__VA_ARGS__};      \
        any_table((schema), cs_, sizeof cs_ / sizeof cs_[0]); \
    } while (0)

TEST(any_order)
{
    const char *s = "{\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"string\"},"
                    "\"c\":{\"type\":\"boolean\"}},\"required\":[\"a\",\"c\"]}";
    ANY_TABLE(s, {"{\"a\":1,\"c\":true}", 1}, {"{\"c\":true,\"a\":1}", 1},
              {"{\"b\":\"x\",\"c\":false,\"a\":2}", 1}, {"{\"c\":true,\"b\":\"x\",\"a\":1}", 1},
              {"{\"a\":1}", 0}, {"{\"c\":true}", 0}, {"{}", 0},
              {"{\"a\":1,\"c\":true,\"a\":2}", 0},            /* each once */
              {"{\"c\":true,\"b\":\"x\",\"a\":1,\"b\":\"y\"}", 0}, /* each once */
              {"{\"c\":1,\"a\":1}", 0},                         /* values still checked */
              {"{\"c\":true,\"a\":1,\"z\":null}", 1},          /* additional ones: last */
              {"{\"z\":null,\"c\":true,\"a\":1}", 0}, {"{\"c\":true,\"a\":1,\"b\":1}", 0});
    /* counts: at most two of three, at least one */
    ANY_TABLE("{\"minProperties\":1,\"maxProperties\":2,\"properties\":{\"a\":{},\"b\":{},"
              "\"c\":{}},\"additionalProperties\":false}",
              {"{}", 0}, {"{\"c\":1}", 1}, {"{\"c\":1,\"a\":1}", 1}, {"{\"b\":1,\"a\":1}", 1},
              {"{\"c\":1,\"b\":1,\"a\":1}", 0}, {"{\"a\":1,\"a\":1}", 0});
    /* nested objects each in any order; one property: as in schema order */
    ANY_TABLE("{\"properties\":{\"o\":{\"properties\":{\"x\":{},\"y\":{}},"
              "\"additionalProperties\":false},\"n\":{}},\"additionalProperties\":false}",
              {"{\"n\":1,\"o\":{\"y\":2,\"x\":1}}", 1}, {"{\"o\":{\"x\":1},\"n\":[]}", 1},
              {"{\"o\":{\"y\":1,\"y\":1}}", 0});
    ANY_TABLE("{\"properties\":{\"a\":{}},\"additionalProperties\":false}", {"{\"a\":1}", 1},
              {"{}", 1}, {"{\"b\":1}", 0});
    /* at most 10 declared properties; the error names the object */
    char big[512] = "{\"properties\":{\"p\":{\"properties\":{";
    for (int i = 0; i < 11; i++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "%s\"k%d\":{}", i ? "," : "", i);
    strcat(big, "}}}}");
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.order = NEXTOK_JSON_ORDER_ANY;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status st = nextok_grammar_init_json_schema(&g, big, strlen(big), &sp, NULL, &err);
    CHECK_MSG(st == NEXTOK_ERR_LIMIT && g == NULL &&
                  strcmp(err.msg, "/properties/p: properties in any order: at most 10 per "
                                  "object, this one has 11") == 0,
              "%s: %s", nextok_status_name(st), err.msg);
    sp.order = (enum nextok_json_order)7;
    st = nextok_grammar_init_json_schema(&g, s, strlen(s), &sp, NULL, &err);
    CHECK_MSG(st == NEXTOK_ERR_INVALID_ARG && g == NULL &&
                  strcmp(err.msg, "order: must be SCHEMA or ANY, got 7") == 0,
              "%s: %s", nextok_status_name(st), err.msg);
}

/* ---- arrays ------------------------------------------------------------------------------ */

TEST(arrays)
{
    TABLE("{\"items\":{\"type\":\"integer\"},\"minItems\":1,\"maxItems\":3}", {"[]", 0}, {"[1]", 1},
          {"[1,2,3]", 1}, {"[1,2,3,4]", 0}, {"[1,\"a\"]", 0}, {"\"x\"", 1});
    TABLE("{\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"items\":false}",
          {"[]", 1}, {"[\"a\"]", 1}, {"[\"a\",1]", 1}, {"[\"a\",1,2]", 0}, {"[1]", 0});
    TABLE("{\"prefixItems\":[{\"type\":\"string\"}],\"items\":{\"type\":\"null\"},\"minItems\":3}",
          {"[\"a\",null,null]", 1}, {"[\"a\",null]", 0}, {"[\"a\",null,null,null]", 1},
          {"[\"a\",null,1]", 0});
    TABLE("{\"prefixItems\":[{},{},{}],\"maxItems\":2}", {"[1,2]", 1}, {"[1,2,3]", 0});
    /* draft-07 tuples */
    TABLE(
        "{\"items\":[{\"type\":\"integer\"},{\"type\":\"boolean\"}],\"additionalItems\":{\"type\":"
        "\"string\"}}",
        {"[1,true,\"a\",\"b\"]", 1}, {"[1,true,2]", 0}, {"[1]", 1});
    TABLE("{\"items\":false}", {"[]", 1}, {"[1]", 0});
    TABLE("{\"contains\":{\"type\":\"integer\"}}", {"[]", 0}, {"[\"a\",1,\"b\"]", 1},
          {"[\"a\"]", 0}, {"[2]", 1});
    TABLE("{\"contains\":{\"const\":1},\"minContains\":2,\"items\":{\"type\":\"integer\"}}",
          {"[1,2,1]", 1}, {"[1,2]", 0}, {"[1,\"x\",1]", 0}, {"[1,1,1]", 1});
    TABLE("{\"uniqueItems\":true,\"maxItems\":1}", {"[1]", 1}, {"[1,1]", 0});
    TABLE("{\"uniqueItems\":false}", {"[1,1]", 1});
    TABLE("{\"minItems\":3,\"maxItems\":2}", {"[1,2]", 0}, {"1", 1});
}

/* ---- combinators -------------------------------------------------------------------------- */

TEST(combinators)
{
    TABLE(
        "{\"anyOf\":[{\"type\":\"string\",\"maxLength\":1},{\"type\":\"integer\",\"minimum\":10}]}",
        {"\"a\"", 1}, {"\"ab\"", 0}, {"10", 1}, {"9", 0}, {"null", 0});
    TABLE("{\"type\":\"integer\",\"anyOf\":[{\"minimum\":10},{\"maximum\":-10}]}", {"10", 1},
          {"-10", 1}, {"0", 0}, {"\"x\"", 0});
    /* oneOf: disjoint by type, by value, by a required discriminator */
    TABLE("{\"oneOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", {"\"a\"", 1}, {"1", 1},
          {"1.5", 0});
    TABLE("{\"oneOf\":[{\"const\":1},{\"enum\":[2,3]}]}", {"1", 1}, {"3", 1}, {"4", 0});
    TABLE(
        "{\"oneOf\":[{\"type\":\"object\",\"properties\":{\"k\":{\"const\":\"a\"},\"x\":{\"type\":"
        "\"integer\"}},\"required\":[\"k\"]},{\"type\":\"object\",\"properties\":{\"k\":{\"const\":"
        "\"b\"}},\"required\":[\"k\"]}]}",
        {"{\"k\":\"a\",\"x\":1}", 1}, {"{\"k\":\"b\",\"x\":\"s\"}", 1},
        {"{\"k\":\"a\",\"x\":\"s\"}", 0}, {"{\"k\":\"c\"}", 0});
    REFUSED("{\"oneOf\":[{\"type\":\"integer\"},{\"minimum\":2}]}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'oneOf' cannot be enforced: its branches are not provably disjoint");
    /* allOf merges */
    TABLE("{\"allOf\":[{\"type\":[\"string\",\"integer\"]},{\"type\":[\"integer\",\"null\"]},"
          "{\"minimum\":3}]}",
          {"3", 1}, {"2", 0}, {"\"a\"", 0}, {"null", 0});
    TABLE("{\"allOf\":[{\"properties\":{\"a\":{\"type\":\"integer\"}}},{\"properties\":{\"a\":{"
          "\"minimum\":5},\"b\":{\"type\":\"string\"}},\"required\":[\"b\"]}]}",
          {"{\"a\":5,\"b\":\"x\"}", 1}, {"{\"a\":4,\"b\":\"x\"}", 0}, {"{\"a\":5}", 0},
          {"{\"b\":\"x\"}", 1});
    TABLE("{\"allOf\":[{\"properties\":{\"a\":{}},\"additionalProperties\":false},{\"properties\":"
          "{\"b\":{}}}]}",
          {"{\"a\":1}", 1}, {"{\"b\":1}", 0}, {"{}", 1});
    /* not: types only */
    TABLE("{\"not\":{\"type\":[\"string\",\"null\"]}}", {"1", 1}, {"\"a\"", 0}, {"null", 0},
          {"[]", 1});
    TABLE("{\"type\":\"number\",\"not\":{\"type\":\"integer\"}}", {"1.5", 1}, {"1", 0}, {"1.0", 0},
          {"-0.25", 1});
    TABLE("{\"not\":{}}", {"1", 0});
    REFUSED("{\"not\":{\"minimum\":3}}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'not' cannot be enforced");
    /* if/then/else with a type test */
    TABLE(
        "{\"if\":{\"type\":\"string\"},\"then\":{\"maxLength\":2},\"else\":{\"type\":\"integer\"}}",
        {"\"ab\"", 1}, {"\"abc\"", 0}, {"5", 1}, {"null", 0});
    TABLE("{\"if\":{\"minimum\":3}}", {"1", 1}); /* no then, no else: no constraint */
    REFUSED("{\"if\":{\"minimum\":3},\"then\":{\"multipleOf\":2}}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'if' cannot be enforced (only an `if` that tests the type can)");
}

TEST(unevaluated)
{
    /* without applicators: additionalProperties / items after prefixItems */
    TABLE("{\"properties\":{\"a\":{}},\"unevaluatedProperties\":{\"type\":\"integer\"}}",
          {"{\"a\":\"x\",\"b\":1}", 1}, {"{\"b\":\"x\"}", 0});
    TABLE("{\"prefixItems\":[{\"type\":\"string\"}],\"unevaluatedItems\":false}", {"[\"a\"]", 1},
          {"[\"a\",1]", 0});
    /* what allOf, $ref and the chosen anyOf branch evaluate counts */
    TABLE("{\"allOf\":[{\"properties\":{\"a\":{}}}],\"unevaluatedProperties\":false}",
          {"{\"a\":1}", 1}, {"{\"b\":1}", 0}, {"{}", 1});
    TABLE("{\"$defs\":{\"base\":{\"properties\":{\"id\":{\"type\":\"integer\"}}}},\"$ref\":"
          "\"#/$defs/base\",\"properties\":{\"name\":{}},\"unevaluatedProperties\":false}",
          {"{\"id\":1,\"name\":2}", 1}, {"{\"id\":1,\"x\":2}", 0});
    TABLE("{\"anyOf\":[{\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]},"
          "{\"properties\":{\"b\":{}},\"required\":[\"b\"]}],\"unevaluatedProperties\":false}",
          {"{\"a\":1}", 1}, {"{\"b\":1}", 1}, {"{\"a\":1,\"c\":1}", 0}, {"{}", 0});
    TABLE("{\"allOf\":[{\"prefixItems\":[{\"type\":\"integer\"}]}],\"unevaluatedItems\":false}",
          {"[1]", 1}, {"[1,2]", 0}, {"[]", 1});
    /* a parent's properties are not in a subschema's scope */
    TABLE("{\"properties\":{\"foo\":{}},\"allOf\":[{\"unevaluatedProperties\":false}]}", {"{}", 1},
          {"{\"foo\":1}", 0});
    /* additionalProperties in the scope evaluates everything */
    TABLE("{\"allOf\":[{\"additionalProperties\":true}],\"unevaluatedProperties\":false}",
          {"{\"x\":1}", 1});
}

/* ---- references ------------------------------------------------------------------------------ */

TEST(refs)
{
    const char *tree =
        "{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":"
        "\"integer\"},\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}},"
        "\"required\":[\"v\"],\"additionalProperties\":false}},\"$ref\":\"#/$defs/node\"}";
    TABLE(tree, {"{\"v\":1}", 1},
          {"{\"v\":1,\"kids\":[{\"v\":2},{\"v\":3,\"kids\":[{\"v\":4}]}]}", 1},
          {"{\"v\":1,\"kids\":[{\"v\":\"x\"}]}", 0}, {"{\"v\":1,\"kids\":[{}]}", 0});
    TABLE("{\"properties\":{\"next\":{\"$ref\":\"#\"},\"n\":{\"type\":\"integer\"}},"
          "\"additionalProperties\":false}",
          {"{\"n\":1,\"next\":{\"n\":2,\"next\":{}}}", 0}, {"{\"next\":{\"next\":{\"n\":3}}}", 1},
          {"{\"next\":{\"x\":1}}", 0});
    /* pointer escapes ~0 ~1 and percent-encoding; definitions; $anchor; $id */
    TABLE("{\"definitions\":{\"a/b\":{\"type\":\"integer\"},\"c~d\":{\"type\":\"string\"},"
          "\"e%f\":{\"type\":\"null\"}},\"anyOf\":[{\"$ref\":\"#/definitions/a~1b\"},{\"$ref\":"
          "\"#/definitions/c~0d\"},{\"$ref\":\"#/definitions/e%25f\"}]}",
          {"1", 1}, {"\"s\"", 1}, {"null", 1}, {"true", 0});
    TABLE("{\"$defs\":{\"x\":{\"$anchor\":\"thing\",\"type\":\"boolean\"}},\"$ref\":\"#thing\"}",
          {"true", 1}, {"1", 0});
    TABLE("{\"$id\":\"http://example.com/root.json\",\"$defs\":{\"b\":{\"$id\":\"other.json\","
          "\"type\":\"integer\"}},\"$ref\":\"other.json\"}",
          {"1", 1}, {"\"a\"", 0});
    TABLE("{\"items\":[{\"type\":\"integer\"},{\"$ref\":\"#/items/0\"}]}", {"[1,2]", 1},
          {"[1,\"x\"]", 0});
    /* a $ref with other keywords: both apply */
    TABLE("{\"$defs\":{\"s\":{\"type\":\"string\"}},\"$ref\":\"#/$defs/s\",\"maxLength\":1}",
          {"\"a\"", 1}, {"\"ab\"", 0}, {"1", 0});
    /* a reference to itself alone: any value; through anyOf before anything is matched: refused */
    TABLE("{\"$ref\":\"#\"}", {"1", 1});
    REFUSED("{\"anyOf\":[{\"$ref\":\"#\"},{\"type\":\"null\"}]}", NEXTOK_ERR_UNSUPPORTED,
            "schema: a schema refers back to itself before anything is matched (left recursion "
            "through rule 's0')");
    REFUSED("{\"$ref\":\"http://example.com/x.json\"}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword '$ref' is a remote reference (only references inside the schema are "
            "followed)");
    REFUSED("{\"properties\":{\"a\":{\"$ref\":\"#/$defs/none\"}}}", NEXTOK_ERR_FORMAT,
            "/properties/a/$ref: \"#/$defs/none\" points to nothing in the schema");
    REFUSED("{\"$ref\":\"#/type\",\"type\":\"string\"}", NEXTOK_ERR_FORMAT,
            "/$ref: \"#/type\" points to a value that is not a schema");
}

/* ---- formats and patterns ------------------------------------------------------------------- */

TEST(formats)
{
    TABLE("{\"format\":\"date\"}", {"\"2024-02-29\"", 1}, {"\"2023-02-29\"", 0},
          {"\"2000-02-29\"", 1}, {"\"1900-02-29\"", 0}, {"\"2023-04-31\"", 0},
          {"\"2023-12-31\"", 1}, {"\"2023-13-01\"", 0}, {"\"2023-1-01\"", 0}, {"5", 1});
    TABLE("{\"format\":\"date-time\"}", {"\"2023-06-30T23:59:59.5+02:00\"", 1},
          {"\"2023-06-30T23:59:59Z\"", 1}, {"\"2023-06-30T24:00:00Z\"", 0},
          {"\"2023-06-30 23:59:59Z\"", 0}, {"\"2023-06-30T23:59:59\"", 0});
    TABLE("{\"format\":\"time\"}", {"\"08:30:06Z\"", 1}, {"\"08:30:06.283185-11:30\"", 1},
          {"\"8:30:06Z\"", 0});
    TABLE("{\"format\":\"duration\"}", {"\"P4DT12H30M5S\"", 1}, {"\"PT1M\"", 1}, {"\"P2W\"", 1},
          {"\"P\"", 0}, {"\"PT\"", 0}, {"\"P1Y2M\"", 1}, {"\"PT1D\"", 0});
    TABLE("{\"format\":\"uuid\"}", {"\"2EB8AA08-AA98-11ea-b4aa-73b441d16380\"", 1},
          {"\"2eb8aa08-aa98-11ea-b4aa-73b441d1638\"", 0});
    TABLE("{\"format\":\"ipv4\"}", {"\"192.168.0.1\"", 1}, {"\"256.1.1.1\"", 0},
          {"\"01.1.1.1\"", 0}, {"\"1.1.1\"", 0});
    TABLE("{\"format\":\"ipv6\"}", {"\"::1\"", 1}, {"\"::\"", 1}, {"\"1:2:3:4:5:6:7:8\"", 1},
          {"\"fe80::1:2\"", 1}, {"\"::ffff:1.2.3.4\"", 1}, {"\"1::2::3\"", 0},
          {"\"1:2:3:4:5:6:7:8:9\"", 0}, {"\"12345::\"", 0});
    TABLE("{\"format\":\"email\"}", {"\"joe.bloggs@example.com\"", 1}, {"\"a@[127.0.0.1]\"", 1},
          {"\".a@b.c\"", 0}, {"\"a..b@c.d\"", 0}, {"\"ab\"", 0});
    TABLE("{\"format\":\"hostname\"}", {"\"www.example.com\"", 1}, {"\"-a.com\"", 0},
          {"\"a-.com\"", 0}, {"\"ab--cd.com\"", 0}, {"\"a_b.com\"", 0}, {"\"localhost\"", 1});
    TABLE("{\"format\":\"uri\"}", {"\"http://example.com/a?b=c#d\"", 1},
          {"\"urn:isbn:0451450523\"", 1}, {"\"//example.com\"", 0}, {"\"http://exa mple.com\"", 0},
          {"\"mailto:a@b.c\"", 1});
    TABLE("{\"format\":\"date\",\"maxLength\":10,\"minLength\":5}", {"\"2020-01-01\"", 1});
    TABLE("{\"format\":\"date\",\"maxLength\":9}", {"\"2020-01-01\"", 0}, {"1", 1});
    REFUSED("{\"format\":\"ipv4\",\"maxLength\":10}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'maxLength' cannot be enforced together with format");
    REFUSED("{\"format\":\"color\"}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'format' cannot be enforced: unknown format \"color\"");
    /* pattern: unanchored search */
    TABLE("{\"pattern\":\"a+b\"}", {"\"xxaab\"", 1}, {"\"ab\"", 1}, {"\"ba\"", 0}, {"3", 1});
    TABLE("{\"pattern\":\"^[0-9]{3}$\"}", {"\"123\"", 1}, {"\"1234\"", 0}, {"\"12\"", 0});
    TABLE("{\"type\":\"string\",\"pattern\":\"q\\\"\"}", {"\"xq\\\"\"", 1}, {"\"xq\"", 0});
    REFUSED("{\"pattern\":\"(a\"}", NEXTOK_ERR_FORMAT, "/pattern: regex column 1: unmatched '('");
    REFUSED("{\"pattern\":\"(a)\\\\1\"}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'pattern' cannot be enforced (regex column 4: a backreference cannot "
            "be a grammar)");
    REFUSED("{\"pattern\":\"a\",\"maxLength\":3}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'maxLength' cannot be enforced together with pattern");
}

/* ---- whitespace -------------------------------------------------------------------------------- */

TEST(whitespace)
{
    const char *s = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\"}}}";
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    CHECK(sp.whitespace == NEXTOK_JSON_WS_FLEXIBLE && sp.max_ws == 20 && !sp.strict && !sp.lenient);
    struct nextok_grammar *g = compile_p(s, &sp);
    CHECK(g && accepts(g, "{ \"a\" : [ 1 , 2 ] }") && accepts(g, "{\n\t\"a\":\r\n[]\n}") &&
          accepts(g, "{ }") && accepts(g, "{\"a\":[],\"b\" : 1}"));
    CHECK(g && !accepts(g, " {}") && !accepts(g, "{} ") && !accepts(g, "{\f}"));
    char t[128];
    for (unsigned n = 18; g && n <= 21; n++) { /* at most max_ws in one place */
        snprintf(t, sizeof t, "{\"a\":%*s[]}", (int)n, "");
        CHECK_MSG(accepts(g, t) == (n <= 20), "%u spaces", n);
    }
    nextok_grammar_free(g);
    sp.max_ws = 2;
    g = compile_p(s, &sp);
    CHECK(g && accepts(g, "{  \"a\":[]}") && !accepts(g, "{   \"a\":[]}"));
    nextok_grammar_free(g);
    sp.max_ws = 0;
    g = compile_p(s, &sp);
    CHECK(g && accepts(g, "{\"a\":[]}") && !accepts(g, "{ \"a\":[]}"));
    nextok_grammar_free(g);
    sp.whitespace = NEXTOK_JSON_WS_COMPACT;
    g = compile_p(s, &sp);
    CHECK(g && accepts(g, "{\"a\":[1,2]}") && !accepts(g, "{\"a\": [1,2]}") &&
          !accepts(g, "{\"a\":[1, 2]}"));
    nextok_grammar_free(g);
}

/* ---- refusals and errors ---------------------------------------------------------------------- */

TEST(refusals)
{
    REFUSED("{\"properties\":{\"a\":{\"uniqueItems\":true}}}", NEXTOK_ERR_UNSUPPORTED,
            "/properties/a: keyword 'uniqueItems' cannot be enforced");
    REFUSED("{\"$defs\":{\"x\":{\"patternProperties\":{\"^a\":{\"type\":\"null\"}}}},\"items\":"
            "{\"$ref\":\"#/$defs/x\"}}",
            NEXTOK_ERR_UNSUPPORTED,
            "/$defs/x: keyword 'patternProperties' cannot be enforced unless "
            "additionalProperties is false");
    REFUSED("{\"patternProperties\":{\"^a\":{},\"b\":{}},\"additionalProperties\":false}",
            NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'patternProperties' cannot be enforced (one "
            "pattern per object can)");
    REFUSED("{\"properties\":{\"ab\":{}},\"patternProperties\":{\"^a\":{}},"
            "\"additionalProperties\":false}",
            NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'patternProperties' cannot be enforced: a declared property matches "
            "its pattern");
    REFUSED("{\"items\":[{},{\"$dynamicRef\":\"#a\"}]}", NEXTOK_ERR_UNSUPPORTED,
            "/items/1: keyword '$dynamicRef' cannot be enforced");
    REFUSED("{\"contains\":{},\"maxContains\":2}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'maxContains' cannot be enforced");
    REFUSED("{\"type\":\"object\",\"propertyNames\":{\"maxLength\":3}}", NEXTOK_ERR_UNSUPPORTED,
            "(root): keyword 'propertyNames' cannot be enforced where additional properties are "
            "allowed");
    /* malformed */
    REFUSED("{\"type\":\"string\",}", NEXTOK_ERR_FORMAT, "schema: byte 17: expected a string");
    REFUSED("[1]", NEXTOK_ERR_FORMAT, "schema: must be an object or a boolean");
    REFUSED("{\"properties\":{\"a\":{\"minLength\":-1}}}", NEXTOK_ERR_FORMAT,
            "/properties/a/minLength: must be a non-negative integer");
    REFUSED("{\"properties\":{\"a\":{\"maxItems\":1.5}}}", NEXTOK_ERR_FORMAT,
            "/properties/a/maxItems: must be a non-negative integer");
    REFUSED("{\"type\":\"strnig\"}", NEXTOK_ERR_FORMAT,
            "/type: must be a type name or an array of them");
    REFUSED("{\"items\":{\"anyOf\":[]}}", NEXTOK_ERR_FORMAT,
            "/items/anyOf: must be a non-empty array of schemas");
    REFUSED("{\"properties\":{\"a\":3}}", NEXTOK_ERR_FORMAT,
            "/properties/a: a schema must be an object or a boolean");
    REFUSED("{\"required\":\"a\"}", NEXTOK_ERR_FORMAT, "/required: must be an array of strings");
    REFUSED("{\"minimum\":\"3\"}", NEXTOK_ERR_FORMAT, "/minimum: must be a number");
    REFUSED("{\"enum\":3}", NEXTOK_ERR_FORMAT, "/enum: must be an array");
    REFUSED("{\"const\":\"\xff\"}", NEXTOK_ERR_FORMAT, "schema: byte 10: invalid UTF-8");
    /* limits */
    char deep[1024] = "";
    for (int i = 0; i < 40; i++) strcat(deep, "{\"items\":");
    strcat(deep, "{}");
    for (int i = 0; i < 40; i++) strcat(deep, "}");
    char m[NEXTOK_ERRMSG_MAX];
    CHECK(refusal(deep, false, m) == NEXTOK_ERR_LIMIT && strstr(m, "nested more than 32 deep"));
    CHECK(refusal("{\"minimum\":1e500,\"type\":\"integer\"}", false, m) == NEXTOK_ERR_LIMIT &&
          strstr(m, "/minimum") && strstr(m, "a bound with more than 400 digits"));
    /* parameters */
    struct nextok_grammar *g = (struct nextok_grammar *)&m;
    struct nextok_error err;
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.max_ws = 65;
    CHECK(nextok_grammar_init_json_schema(&g, "{}", 2, &sp, NULL, &err) == NEXTOK_ERR_INVALID_ARG &&
          !g && strcmp(err.msg, "max_ws: must be <= 64, got 65") == 0);
    sp.max_ws = 64;
    CHECK(nextok_grammar_init_json_schema(&g, "{}", 2, &sp, NULL, &err) == NEXTOK_OK && g);
    nextok_grammar_free(g);
    CHECK(nextok_grammar_init_json_schema(NULL, "{}", 2, NULL, NULL, &err) ==
          NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_grammar_init_json_schema(&g, NULL, 2, NULL, NULL, &err) == NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_grammar_init_json_schema(&g, "", 0, NULL, NULL, &err) == NEXTOK_ERR_FORMAT);
}

/* ---- lenient mode -------------------------------------------------------------------------------- */

static char reports[1024];
static void on_ignored(void *user, const char *pointer, const char *keyword)
{
    (*(int *)user)++;
    size_t n = strlen(reports);
    snprintf(reports + n, sizeof reports - n, "[%s %s]", pointer, keyword);
}

TEST(lenient)
{
    int n_reports = 0;
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.lenient = true;
    sp.on_ignored = on_ignored;
    sp.user = &n_reports;
    sp.whitespace = NEXTOK_JSON_WS_COMPACT;
    reports[0] = '\0';
    struct nextok_grammar *g = compile_p(
        "{\"type\":\"array\",\"uniqueItems\":true,\"items\":{\"$ref\":\"#/$defs/"
        "i\"},\"$defs\":{\"i\":"
        "{\"type\":[\"integer\",\"string\"],\"not\":{\"const\":3},\"format\":\"prime\"}}}",
        &sp);
    CHECK(g && accepts(g, "[1,1,3]") && accepts(g, "[\"a\"]") && !accepts(g, "[null]"));
    CHECK_MSG(n_reports == 3 && strcmp(reports, "[ uniqueItems][/$defs/i not][/$defs/i format]") == 0,
              "%d: %s", n_reports, reports);
    nextok_grammar_free(g);
    /* a failed call reports nothing */
    n_reports = 0;
    reports[0] = '\0';
    struct nextok_error err;
    g = NULL;
    CHECK(nextok_grammar_init_json_schema(&g, "{\"uniqueItems\":true,\"minimum\":\"x\"}", 35, &sp,
                                          NULL, &err) == NEXTOK_ERR_FORMAT &&
          !g && n_reports == 0);
    /* without a callback */
    sp.on_ignored = NULL;
    CHECK(nextok_grammar_init_json_schema(&g, "{\"uniqueItems\":true}", 20, &sp, NULL, &err) ==
          NEXTOK_OK);
    nextok_grammar_free(g);
}

/* ---- the GBNF text -------------------------------------------------------------------------------- */

static char *gbnf(const char *schema, enum nextok_json_ws ws)
{
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.whitespace = ws;
    struct nextok__buf t = nextok__buf_of(&nextok__mem_libc);
    struct nextok_error err = {NEXTOK_OK, ""};
    CHECK_MSG(nextok__schema_gbnf(schema, strlen(schema), &sp, NULL, &t, &err) == NEXTOK_OK, "%s",
              err.msg);
    if (nextok__buf_append(&t, "", 1) != NEXTOK_OK) abort();
    return t.data;
}

TEST(gbnf_text)
{
    const char *s = "{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#\"},\"b\":{\"enum\":"
                    "[1,[2]]}},\"additionalProperties\":{\"type\":\"string\",\"maxLength\":250}}";
    char *flex = gbnf(s, NEXTOK_JSON_WS_FLEXIBLE), *again = gbnf(s, NEXTOK_JSON_WS_FLEXIBLE);
    char *compact = gbnf(s, NEXTOK_JSON_WS_COMPACT);
    CHECK(flex && again && strcmp(flex, again) == 0); /* the same text every time */
    CHECK(flex && strncmp(flex, "root ::= s0\n", 12) == 0);
    CHECK(flex && strstr(flex, "\nws ::= [ \\t\\n\\r]{0,20}\n"));
    CHECK(compact && !strstr(compact, "ws"));
    /* recursion is a rule that refers to itself, not a copy */
    CHECK(flex && strstr(flex, "\"\\\"a\\\"\" ws \":\" ws s0\n"));
    free(flex);
    free(again);
    free(compact);
}

/* ---- allocation failure --------------------------------------------------------------------------- */


TEST(every_allocation_failing)
{
    static const char schema[] =
        "{\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":{\"v\":{\"enum\":[1,\"a\",2.5],"
        "\"type\":\"integer\"},\"w\":{\"type\":\"number\",\"minimum\":-1.5,\"maximum\":20},"
        "\"s\":{\"type\":\"string\",\"maxLength\":3,\"format\":\"date\"},"
        "\"k\":{\"$ref\":\"#/$defs/n\"},\"e\":{\"enum\":[\"ab\",\"abc\"],\"maxLength\":2},"
        "\"p\":{\"patternProperties\":{\"^x\":{}},\"additionalProperties\":false}},"
        "\"required\":[\"v\"]}},\"anyOf\":[{\"$ref\":\"#/$defs/n\"},{\"type\":\"array\",\"items\":"
        "{\"pattern\":\"^a\"},\"maxItems\":3}]}";
    const struct nextok_allocator a = {f_alloc, f_realloc, f_free, NULL};
    struct nextok_grammar_params p = {NULL, &a};
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    long points = 0;
    for (fail_at = 1;; fail_at++, points++) {
        calls = live = 0;
        struct nextok_grammar *g = NULL;
        struct nextok_error err = {NEXTOK_OK, ""};
        /* every other point with the properties in any order */
        sp.order = fail_at % 2 ? NEXTOK_JSON_ORDER_SCHEMA : NEXTOK_JSON_ORDER_ANY;
        nextok_status st =
            nextok_grammar_init_json_schema(&g, schema, sizeof schema - 1, &sp, &p, &err);
        bool yes = false, want = sp.order == NEXTOK_JSON_ORDER_ANY; /* "w" before "v" */
        if (st == NEXTOK_OK) st = nextok_grammar_accepts(g, "{\"w\":0.5,\"v\":1}", 15, &yes, &err);
        nextok_grammar_free(g);
        CHECK_MSG(live == 0, "allocation %ld failing: %ld blocks left", fail_at, live);
        if (calls < fail_at) {
            CHECK(st == NEXTOK_OK && yes == want);
            break;
        }
        CHECK_MSG(st == NEXTOK_ERR_NOMEM && strstr(err.msg, "out of memory"),
                  "allocation %ld failing: %s %s", fail_at, nextok_status_name(st), err.msg);
        if (h_cur_failed) break;
    }
    CHECK(points > 100);
    printf("  %ld failure points\n", points);
}

int main(void)
{
    RUN(types);
    RUN(strings);
    RUN(integer_ranges);
    RUN(number_ranges);
    RUN(multiple_of);
    RUN(values);
    RUN(objects);
    RUN(any_order);
    RUN(arrays);
    RUN(combinators);
    RUN(unevaluated);
    RUN(refs);
    RUN(formats);
    RUN(whitespace);
    RUN(refusals);
    RUN(lenient);
    RUN(gbnf_text);
    RUN(every_allocation_failing);
    return harness_done();
}
