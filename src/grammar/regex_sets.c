/*
 * Regex to GBNF (regex.c): growing arrays, and sets of code points as
 * sorted, disjoint range lists (the class escapes, complements, `.`).
 */
#include "regex_internal.h"

#include <string.h>

/* ---- memory -------------------------------------------------------------------- */

nextok_status nextok__re_nomem(struct nextok_error *err)
{
    return nextok__err(err, NEXTOK_ERR_NOMEM, "regex: out of memory");
}

/* Room for one more element of size bytes in *v (n used of *cap). */
nextok_status nextok__re_reserve(struct nextok__re_parser *r, void **v, size_t n, size_t *cap,
                                 size_t size)
{
    if (n < *cap) return NEXTOK_OK;
    size_t c = *cap ? 2 * *cap : 32;
    void *q = nextok__realloc(r->mem, *v, c * size);
    if (!q) return nextok__re_nomem(r->err);
    *v = q;
    *cap = c;
    return NEXTOK_OK;
}

/* ---- sets of code points: sorted, disjoint range lists ---------------------------- */

static const struct nextok__re_range set_digit[] = {{'0', '9'}};
static const struct nextok__re_range set_word[] = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
/* ECMA-262 WhiteSpace (TAB VT FF SP NBSP ZWNBSP and Zs) + LineTerminator */
static const struct nextok__re_range set_space[] = {
    {0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
static const struct nextok__re_range set_line_end[] = {
    {0x0A, 0x0A}, {0x0D, 0x0D}, {0x2028, 0x2029}};

nextok_status nextok__re_rng_push(struct nextok__re_parser *r, uint32_t lo, uint32_t hi)
{
    NEXTOK_FORWARD(nextok__re_reserve(r, (void **)&r->rng, r->n_rng, &r->cap_rng, sizeof *r->rng));
    r->rng[r->n_rng++] = (struct nextok__re_range){lo, hi};
    return NEXTOK_OK;
}

static int rng_cmp(const void *a, const void *b)
{
    const struct nextok__re_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort and merge the ranges from base on. */
static void rng_normalize(struct nextok__re_parser *r, size_t base)
{
    size_t n = r->n_rng - base, k = 0;
    struct nextok__re_range *v = r->rng + base;
    if (n == 0) return;
    nextok__sort(v, n, sizeof *v, rng_cmp);
    for (size_t i = 1; i < n; i++) {
        if (v[i].lo <= v[k].hi || v[i].lo - 1 == v[k].hi) {
            if (v[i].hi > v[k].hi) v[k].hi = v[i].hi;
        } else {
            v[++k] = v[i];
        }
    }
    r->n_rng = base + k + 1;
}

/* Move the ranges written past end (at the end of the list) down to base:
 * they replace those from base on. */
static void rng_replace(struct nextok__re_parser *r, size_t base, size_t end)
{
    memmove(r->rng + base, r->rng + end, (r->n_rng - end) * sizeof *r->rng);
    r->n_rng = base + (r->n_rng - end);
}

/* The (normalized) ranges from base on become their complement in
 * [0, 10FFFF]. */
static nextok_status rng_complement(struct nextok__re_parser *r, size_t base)
{
    size_t end = r->n_rng;
    uint32_t next = 0;
    for (size_t i = base; i < end; i++) {
        if (r->rng[i].lo > next) NEXTOK_FORWARD(nextok__re_rng_push(r, next, r->rng[i].lo - 1));
        next = r->rng[i].hi + 1;
    }
    if (next <= NEXTOK__RE_MAX_CP) NEXTOK_FORWARD(nextok__re_rng_push(r, next, NEXTOK__RE_MAX_CP));
    rng_replace(r, base, end);
    return NEXTOK_OK;
}

/* [lo, hi] taken out of the (normalized) ranges from base on. */
static nextok_status rng_remove(struct nextok__re_parser *r, size_t base, uint32_t lo, uint32_t hi)
{
    size_t end = r->n_rng;
    for (size_t i = base; i < end; i++) {
        struct nextok__re_range x = r->rng[i];
        if (x.hi < lo || x.lo > hi) {
            NEXTOK_FORWARD(nextok__re_rng_push(r, x.lo, x.hi));
            continue;
        }
        if (x.lo < lo) NEXTOK_FORWARD(nextok__re_rng_push(r, x.lo, lo - 1));
        if (x.hi > hi) NEXTOK_FORWARD(nextok__re_rng_push(r, hi + 1, x.hi));
    }
    rng_replace(r, base, end);
    return NEXTOK_OK;
}

/* One of \d \D \w \W \s \S: its ranges appended (not normalized). */
nextok_status nextok__re_rng_class_escape(struct nextok__re_parser *r, char c)
{
    const struct nextok__re_range *t = set_digit;
    size_t n = 1;
    if (c == 'w' || c == 'W') t = set_word, n = sizeof set_word / sizeof *t;
    if (c == 's' || c == 'S') t = set_space, n = sizeof set_space / sizeof *t;
    size_t base = r->n_rng;
    for (size_t i = 0; i < n; i++) NEXTOK_FORWARD(nextok__re_rng_push(r, t[i].lo, t[i].hi));
    bool negated = c == 'D' || c == 'W' || c == 'S';
    return negated ? rng_complement(r, base) : NEXTOK_OK;
}

/* The line terminators \n \r U+2028 U+2029 appended (`.` is the rest). */
nextok_status nextok__re_rng_line_end(struct nextok__re_parser *r)
{
    for (size_t i = 0; i < sizeof set_line_end / sizeof *set_line_end; i++)
        NEXTOK_FORWARD(nextok__re_rng_push(r, set_line_end[i].lo, set_line_end[i].hi));
    return NEXTOK_OK;
}

/* The ranges from base on as a set has them: normalized, negated if asked,
 * surrogates taken out (UTF-8 text never holds them). */
nextok_status nextok__re_rng_finish(struct nextok__re_parser *r, size_t base, bool negate)
{
    rng_normalize(r, base);
    if (negate) NEXTOK_FORWARD(rng_complement(r, base));
    return rng_remove(r, base, 0xD800, 0xDFFF);
}
