/*
 * The JSON-Schema-Test-Suite, draft 2020-12 (tests/data/json-schema-test-suite/,
 * the top-level files): every schema compiled with the default parameters, in
 * compact and in flexible whitespace. A refused schema (UNSUPPORTED, FORMAT,
 * LIMIT) is counted as refused; otherwise every test instance, written as
 * compact JSON (keys in their order, numbers as spelled, strings minimally
 * escaped; in flexible mode also spaced out), is given to the recognizer:
 *
 *   - accepted but marked invalid: a FALSE ACCEPT, and the test fails;
 *   - rejected but marked valid: a false reject, counted (the grammar may be
 *     incomplete, never unsound);
 *   - any other status than OK from the recognizer, or from the compiler
 *     other than a refusal: a failure.
 *
 * Prints a summary line per mode and per-file counts on stderr.
 */
#include "harness.h"

#include "common/file.h"
#include "common/json.h"
#include "nextok.h"

#include <dirent.h>

#define SUITE_DIR "json-schema-test-suite/tests/draft2020-12"

struct counts {
    long total, agree, refused, false_rejects, false_accepts, cases, cases_refused;
};

/* ---- instances as JSON text ------------------------------------------------------ */

static void put(struct nextok__buf *b, const char *s, size_t n)
{
    if (nextok__buf_append(b, s, n) != NEXTOK_OK) abort();
}

static void put_string(struct nextok__buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *e = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                        : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f"
                                    : NULL;
        if (e)
            put(b, e, 2);
        else if (c < 0x20) {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(b, u, 6);
        } else
            put(b, s + i, 1);
    }
    put(b, "\"", 1);
}

/* Copy the value at the scanner's cursor as JSON text: compact, or with a
 * space after each ':' and ',' and inside non-empty brackets. */
static bool copy_value(struct nextok__js *s, struct nextok__buf *b, bool spaced)
{
    int c = nextok__js_peek(s);
    struct nextok__buf str = nextok__buf_of(&nextok__mem_libc);
    bool ok = true, first = true;
    if (c == '"') {
        ok = nextok__js_string(s, &str);
        if (ok) put_string(b, str.data ? str.data : "", str.len);
    } else if (c == '{' || c == '[') {
        bool obj = c == '{';
        size_t count = 0;
        int r = 0;
        ok = nextok__js_enter(s, (char)c);
        put(b, obj ? "{" : "[", 1);
        while (ok && (r = obj ? nextok__js_member(s, &first, &str)
                              : nextok__js_element(s, &first)) == 1) {
            if (count++)
                put(b, spaced ? ", " : ",", spaced ? 2 : 1);
            else if (spaced)
                put(b, " ", 1);
            if (obj) {
                put_string(b, str.data ? str.data : "", str.len);
                put(b, spaced ? ": " : ":", spaced ? 2 : 1);
                str.len = 0;
            }
            ok = copy_value(s, b, spaced);
        }
        ok = ok && r == 0;
        if (spaced && count) put(b, " ", 1);
        put(b, obj ? "}" : "]", 1);
    } else {
        nextok__js_peek(s);
        const char *start = s->p;
        ok = nextok__js_skip(s);
        if (ok) put(b, start, (size_t)(s->p - start));
    }
    nextok__buf_free(&str);
    return ok;
}

/* ---- one file ------------------------------------------------------------------------ */

struct span {
    const char *p;
    size_t n;
};

static bool key_is(const struct nextok__buf *k, const char *s)
{
    return k->len == strlen(s) && memcmp(k->data, s, k->len) == 0;
}

/* The value at the cursor, skipped, as a span of the text. */
static bool span_of(struct nextok__js *s, struct span *out)
{
    nextok__js_peek(s);
    out->p = s->p;
    if (!nextok__js_skip(s)) return false;
    out->n = (size_t)(s->p - out->p);
    return true;
}

static void run_tests(const char *file, const char *what, struct span schema, struct span tests,
                      struct counts *cnt, bool flexible, bool any_order)
{
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    if (!flexible) sp.whitespace = NEXTOK_JSON_WS_COMPACT;
    if (any_order) sp.order = NEXTOK_JSON_ORDER_ANY;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status st = nextok_grammar_init_json_schema(&g, schema.p, schema.n, &sp, NULL, &err);
    bool refused =
        st == NEXTOK_ERR_UNSUPPORTED || st == NEXTOK_ERR_FORMAT || st == NEXTOK_ERR_LIMIT;
    CHECK_MSG(st == NEXTOK_OK || refused, "%s: %s: %s %s", file, what, nextok_status_name(st),
              err.msg);
    if (refused && getenv("SUITE_VERBOSE"))
        fprintf(stderr, "  refused %s: %s: %s\n", file, what, err.msg);
    cnt->cases++;
    cnt->cases_refused += st != NEXTOK_OK;
    struct nextok__js s;
    nextok__js_init(&s, &nextok__mem_libc, tests.p, tests.n);
    bool first = true;
    CHECK(nextok__js_enter(&s, '['));
    while (nextok__js_element(&s, &first) == 1) {
        struct nextok__buf key = nextok__buf_of(&nextok__mem_libc),
                           desc = nextok__buf_of(&nextok__mem_libc);
        struct span data = {NULL, 0};
        bool f2 = true, valid = false;
        CHECK(nextok__js_enter(&s, '{'));
        while (nextok__js_member(&s, &f2, &key) == 1) {
            if (key_is(&key, "data"))
                CHECK(span_of(&s, &data));
            else if (key_is(&key, "valid")) {
                valid = nextok__js_peek(&s) == 't';
                CHECK(nextok__js_skip(&s));
            } else if (key_is(&key, "description"))
                CHECK(nextok__js_string(&s, &desc));
            else
                CHECK(nextok__js_skip(&s));
            key.len = 0;
        }
        cnt->total++;
        for (int spaced = 0; st == NEXTOK_OK && spaced <= flexible; spaced++) {
            struct nextok__buf text = nextok__buf_of(&nextok__mem_libc);
            struct nextok__js ds;
            nextok__js_init(&ds, &nextok__mem_libc, data.p, data.n);
            CHECK(copy_value(&ds, &text, spaced));
            bool yes = false;
            nextok_status a = nextok_grammar_accepts(g, text.data, text.len, &yes, &err);
            CHECK_MSG(a == NEXTOK_OK, "%s: %s: %.*s: %s", file, what, (int)text.len, text.data,
                      err.msg);
            if (yes && !valid) {
                cnt->false_accepts++;
                CHECK_MSG(0, "FALSE ACCEPT %s: %s / %.*s: %.*s", file, what, (int)desc.len,
                          desc.data, (int)text.len, text.data);
            } else if (!yes && valid && !spaced) {
                cnt->false_rejects++;
                if (getenv("SUITE_VERBOSE"))
                    fprintf(stderr, "  false reject %s: %s / %.*s: %.*s\n", file, what,
                            (int)desc.len, desc.data, (int)text.len, text.data);
            } else if (!spaced) {
                cnt->agree++;
            }
            nextok__buf_free(&text);
        }
        if (st != NEXTOK_OK) cnt->refused++;
        nextok__buf_free(&key);
        nextok__buf_free(&desc);
    }
    nextok_grammar_free(g);
}

static void run_file(const char *name, struct counts *cnt, bool flexible, bool any_order)
{
    char rel[512], path[1024];
    snprintf(rel, sizeof rel, "%s/%s", SUITE_DIR, name);
    char *text = NULL;
    size_t n = 0;
    struct nextok_error err;
    if (nextok__read_file(&nextok__mem_libc, fixture_path(path, sizeof path, rel), &text, &n,
                          &err) != NEXTOK_OK) {
        CHECK_MSG(0, "%s: %s", path, err.msg);
        return;
    }
    struct nextok__js s;
    nextok__js_init(&s, &nextok__mem_libc, text, n);
    bool first = true;
    CHECK(nextok__js_enter(&s, '['));
    while (nextok__js_element(&s, &first) == 1) {
        struct nextok__buf key = nextok__buf_of(&nextok__mem_libc),
                           desc = nextok__buf_of(&nextok__mem_libc);
        struct span schema = {NULL, 0}, tests = {NULL, 0};
        bool f2 = true;
        CHECK(nextok__js_enter(&s, '{'));
        while (nextok__js_member(&s, &f2, &key) == 1) {
            if (key_is(&key, "schema"))
                CHECK(span_of(&s, &schema));
            else if (key_is(&key, "tests"))
                CHECK(span_of(&s, &tests));
            else if (key_is(&key, "description"))
                CHECK(nextok__js_string(&s, &desc));
            else
                CHECK(nextok__js_skip(&s));
            key.len = 0;
        }
        char what[160];
        snprintf(what, sizeof what, "%.*s", (int)desc.len, desc.data ? desc.data : "");
        CHECK_MSG(schema.p && tests.p, "%s: %s: no schema or tests", name, what);
        if (schema.p && tests.p) run_tests(name, what, schema, tests, cnt, flexible, any_order);
        nextok__buf_free(&key);
        nextok__buf_free(&desc);
    }
    CHECK_MSG(s.err_what == NULL, "%s: byte %zu: %s", name, nextok__js_offset(&s), s.err_what);
    free(text);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_suite(bool flexible, bool any_order)
{
    char path[1024];
    DIR *dir = opendir(fixture_path(path, sizeof path, SUITE_DIR));
    CHECK_MSG(dir != NULL, "%s: cannot open", path);
    if (!dir) return;
    char *names[128];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL && n < 128;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(dir);
    qsort(names, n, sizeof names[0], name_cmp);
    CHECK_MSG(n == 46, "%zu test files, 46 expected", n);
    struct counts all = {0};
    for (size_t i = 0; i < n; i++) {
        struct counts c = {0};
        run_file(names[i], &c, flexible, any_order);
        fprintf(stderr,
                "  %-30s tests %4ld agree %4ld refused %4ld false-rejects %4ld "
                "false-accepts %ld (schemas %ld, refused %ld)\n",
                names[i], c.total, c.agree, c.refused, c.false_rejects, c.false_accepts, c.cases,
                c.cases_refused);
        all.total += c.total, all.agree += c.agree, all.refused += c.refused;
        all.false_rejects += c.false_rejects, all.false_accepts += c.false_accepts;
        all.cases += c.cases, all.cases_refused += c.cases_refused;
        free(names[i]);
    }
    printf("  %s: tests %ld, agree %ld, refused %ld, false rejects %ld, false accepts %ld "
           "(schemas %ld, refused %ld)\n",
           any_order ? "compact, any order" : flexible ? "flexible" : "compact", all.total, all.agree, all.refused, all.false_rejects,
           all.false_accepts, all.cases, all.cases_refused);
    CHECK(all.false_accepts == 0);
    CHECK(all.total > 1200);
}

TEST(suite_compact) { run_suite(false, false); }
TEST(suite_flexible) { run_suite(true, false); }
/* Properties in any order: more instances are accepted, never a wrong one. */
TEST(suite_any_order) { run_suite(false, true); }

int main(void)
{
    RUN(suite_compact);
    RUN(suite_flexible);
    RUN(suite_any_order);
    return harness_done();
}
