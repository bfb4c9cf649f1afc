/* JSON pull scanner (see json.h). */
#include "json.h"
#include "utf8.h"

#include <stdlib.h> /* strtod */

/* The first error counts: later ones are consequences. */
static bool fail(struct nextok__js *s, const char *at, const char *what)
{
    if (!s->err_what) {
        s->err_at = at;
        s->err_what = what;
    }
    return false;
}

bool nextok__js_fail(struct nextok__js *s, const char *what)
{
    return fail(s, s->p, what);
}

bool nextok__js_nomem(struct nextok__js *s)
{
    if (!s->err_what) s->nomem = true;
    return fail(s, s->p, "out of memory");
}

void nextok__js_init(struct nextok__js *s, const struct nextok__mem *mem, const char *data,
                     size_t size)
{
    s->mem = mem;
    s->base = s->p = data;
    s->end = data + size;
    s->depth = 0;
    s->err_at = NULL;
    s->err_what = NULL;
    s->nomem = false;
}

static void ws(struct nextok__js *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

int nextok__js_peek(struct nextok__js *s)
{
    ws(s);
    return s->p < s->end ? (unsigned char)*s->p : -1;
}

size_t nextok__js_offset(const struct nextok__js *s)
{
    return (size_t)((s->err_what ? s->err_at : s->p) - s->base);
}

bool nextok__js_at_end(struct nextok__js *s)
{
    ws(s);
    return s->p == s->end || fail(s, s->p, "unexpected data after the JSON value");
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = (c >= '0' && c <= '9') ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* \uXXXX at s->p (after the backslash and 'u'), with a surrogate pair. */
static bool unicode_escape(struct nextok__js *s, char *o, size_t *n)
{
    const char *at = s->p - 2;
    int hi = s->end - s->p >= 4 ? hex4(s->p) : -1;
    if (hi < 0) return fail(s, at, "bad \\u escape");
    s->p += 4;
    uint32_t cp = (uint32_t)hi;
    if (hi >= 0xDC00 && hi <= 0xDFFF) return fail(s, at, "lone low surrogate in \\u escape");
    if (hi >= 0xD800 && hi <= 0xDBFF) {
        int lo = s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u' ? hex4(s->p + 2) : -1;
        if (lo < 0xDC00 || lo > 0xDFFF) return fail(s, at, "lone high surrogate in \\u escape");
        s->p += 6;
        cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
    }
    *n = nextok__utf8_encode(cp, o);
    return true;
}

static bool escape(struct nextok__js *s, struct nextok__buf *out)
{
    if (s->p >= s->end) return fail(s, s->p - 1, "unterminated string");
    char c = *s->p++;
    char o[4];
    size_t n = 1;
    switch (c) {
    case '"': case '\\': case '/': o[0] = c; break;
    case 'b': o[0] = '\b'; break;
    case 'f': o[0] = '\f'; break;
    case 'n': o[0] = '\n'; break;
    case 'r': o[0] = '\r'; break;
    case 't': o[0] = '\t'; break;
    case 'u':
        if (!unicode_escape(s, o, &n)) return false;
        break;
    default:
        return fail(s, s->p - 2, "bad escape in string");
    }
    return !out || nextok__buf_append(out, o, n) == NEXTOK_OK || nextok__js_nomem(s);
}

/* Whether any byte of w is below n (n <= 128). Exact as to "any", which is
 * all plain_run needs (the classic bit trick; borrows only reach bytes above
 * one that is below n). */
static inline uint64_t any_below(uint64_t w, uint64_t n)
{
    return (w - 0x0101010101010101ull * n) & ~w & 0x8080808080808080ull;
}

/* Plain bytes up to the next quote, backslash or control character. Eight
 * bytes at a time while none of them is one: tokenizer.json is millions of
 * short strings, and this loop is most of the time spent reading it. */
static const char *plain_run(const char *p, const char *end)
{
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (any_below(w ^ 0x2222222222222222ull, 1) | any_below(w ^ 0x5C5C5C5C5C5C5C5Cull, 1) |
            any_below(w, 0x20))
            break;
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) p++;
    return p;
}

bool nextok__js_string(struct nextok__js *s, struct nextok__buf *out)
{
    ws(s);
    if (s->p >= s->end || *s->p != '"') return fail(s, s->p, "expected a string");
    const char *start = s->p++;
    for (;;) {
        const char *q = plain_run(s->p, s->end);
        if (out && q > s->p && nextok__buf_append(out, s->p, (size_t)(q - s->p)) != NEXTOK_OK)
            return nextok__js_nomem(s);
        s->p = q;
        if (q >= s->end) return fail(s, start, "unterminated string");
        s->p++;
        if (*q == '"') return true;
        if (*q != '\\') return fail(s, q, "control character in string");
        if (!escape(s, out)) return false;
    }
}

static bool digits(struct nextok__js *s)
{
    const char *p = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++;
    return s->p > p;
}

/* Validate a number's syntax; *is_int tells whether it has no fraction/exponent. */
static bool number_span(struct nextok__js *s, bool *is_int)
{
    const char *start = s->p;
    if (s->p < s->end && *s->p == '-') s->p++;
    if (s->p < s->end && *s->p == '0') s->p++;
    else if (!digits(s)) return fail(s, start, "bad number");
    *is_int = true;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        *is_int = false;
        if (!digits(s)) return fail(s, start, "bad number");
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        *is_int = false;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
        if (!digits(s)) return fail(s, start, "bad number");
    }
    return true;
}

bool nextok__js_int(struct nextok__js *s, int64_t *v)
{
    ws(s);
    const char *start = s->p;
    bool is_int;
    if (!number_span(s, &is_int)) return false;
    if (!is_int) return fail(s, start, "expected an integer");
    bool neg = *start == '-';
    if (s->p - start - neg > 18) return fail(s, start, "integer out of range");
    int64_t x = 0;
    for (const char *p = start + neg; p < s->p; p++) x = x * 10 + (*p - '0');
    *v = neg ? -x : x;
    return true;
}

/* strtod on the number text [start, start + len): the source need not be
 * NUL-terminated, so the digits are copied first. */
static bool to_double(struct nextok__js *s, const char *start, size_t len, double *v)
{
    char tmp[64];
    char *p = len < sizeof tmp ? tmp : nextok__alloc(s->mem, len + 1);
    if (!p) return nextok__js_nomem(s);
    memcpy(p, start, len);
    p[len] = '\0';
    *v = strtod(p, NULL);
    if (p != tmp) nextok__free(s->mem, p);
    return true;
}

bool nextok__js_number(struct nextok__js *s, double *v)
{
    ws(s);
    const char *start = s->p;
    bool is_int;
    if (!number_span(s, &is_int)) return false;
    return to_double(s, start, (size_t)(s->p - start), v);
}

bool nextok__js_num(struct nextok__js *s, bool *is_int, int64_t *iv, double *dv)
{
    ws(s);
    const char *start = s->p;
    if (!number_span(s, is_int)) return false;
    if (!*is_int) return to_double(s, start, (size_t)(s->p - start), dv);
    /* Saturate like strtoll: a huge id is out of every range check anyway. */
    bool neg = *start == '-';
    uint64_t x = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (const char *p = start + neg; p < s->p; p++) {
        unsigned d = (unsigned)(*p - '0');
        x = x > (lim - d) / 10 ? lim : x * 10 + d;
    }
    *iv = neg ? (x == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x) : (int64_t)x;
    return true;
}

bool nextok__js_word(struct nextok__js *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return fail(s, s->p, "unexpected character");
    s->p += n;
    return true;
}

bool nextok__js_enter(struct nextok__js *s, char open)
{
    ws(s);
    if (s->p >= s->end || *s->p != open)
        return fail(s, s->p, open == '{' ? "expected an object" : "expected an array");
    if (s->depth >= NEXTOK__JS_MAX_DEPTH) return fail(s, s->p, "nesting too deep");
    s->p++;
    s->depth++;
    return true;
}

/* Before an element: the closing bracket (done), or ',' unless first. */
static int next_item(struct nextok__js *s, bool *first, char close)
{
    ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        s->depth--;
        return 0;
    }
    if (!*first) {
        if (s->p >= s->end || *s->p != ',') {
            fail(s, s->p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
            return -1;
        }
        s->p++;
    }
    *first = false;
    return 1;
}

int nextok__js_member(struct nextok__js *s, bool *first, struct nextok__buf *key)
{
    int r = next_item(s, first, '}');
    if (r != 1) return r;
    if (!nextok__js_string(s, key)) return -1;
    ws(s);
    if (s->p >= s->end || *s->p != ':') {
        fail(s, s->p, "expected ':'");
        return -1;
    }
    s->p++;
    return 1;
}

int nextok__js_element(struct nextok__js *s, bool *first)
{
    return next_item(s, first, ']');
}

static bool skip_container(struct nextok__js *s, char open)
{
    if (!nextok__js_enter(s, open)) return false;
    bool first = true;
    int r;
    if (open == '{') {
        while ((r = nextok__js_member(s, &first, NULL)) == 1)
            if (!nextok__js_skip(s)) return false;
    } else {
        while ((r = nextok__js_element(s, &first)) == 1)
            if (!nextok__js_skip(s)) return false;
    }
    return r == 0;
}

bool nextok__js_skip(struct nextok__js *s)
{
    int c = nextok__js_peek(s);
    bool is_int;
    switch (c) {
    case '"': return nextok__js_string(s, NULL);
    case '{': return skip_container(s, '{');
    case '[': return skip_container(s, '[');
    case 't': return nextok__js_word(s, "true");
    case 'f': return nextok__js_word(s, "false");
    case 'n': return nextok__js_word(s, "null");
    case -1: return fail(s, s->p, "unexpected end of data");
    default:
        if (c != '-' && (c < '0' || c > '9')) return fail(s, s->p, "unexpected character");
        return number_span(s, &is_int);
    }
}
