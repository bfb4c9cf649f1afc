/*
 * Exact decimals: the value of a number node (a bound of 0.1 is one tenth, not
 * the double next to it), comparisons, the least common multiple of two
 * multipleOf, the canonical spelling (enum and const).
 */
#include "schema_internal.h"

#include <stdio.h>

/* ---- decimals ------------------------------------------------------------------- */

bool nextok__sch_dec(struct nextok__sch_doc *d, uint32_t v, struct nextok__dec *out)
{
    const char *s = d->src + d->num[v].off, *end = s + d->num[v].len;
    memset(out, 0, offsetof(struct nextok__dec, d));
    bool neg = s < end && *s == '-';
    s += neg;
    int64_t frac = 0;
    uint32_t zeros = 0; /* trailing zeros held back */
    for (bool dot = false; s < end && ((*s >= '0' && *s <= '9') || *s == '.'); s++) {
        if (*s == '.') {
            dot = true;
            continue;
        }
        frac += dot;
        if (*s == '0') {
            if (out->n) zeros++;
            continue;
        }
        if (out->n + zeros + 1 > NEXTOK__DEC_MAX) {
            char ptr[128];
            nextok__sch_pointer(d, v, ptr, sizeof ptr);
            return nextok__sch_fail(d, NEXTOK_ERR_LIMIT, "%s: a number with more than %u digits",
                                    ptr[0] ? ptr : "(root)", NEXTOK__DEC_MAX);
        }
        for (; zeros; zeros--) out->d[out->n++] = '0';
        out->d[out->n++] = *s;
    }
    int64_t exp = 0;
    if (s < end && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = s < end && *s == '-';
        s += s < end && (*s == '-' || *s == '+');
        for (; s < end; s++)
            if (exp < 1000000000000000LL) exp = exp * 10 + (*s - '0');
        if (eneg) exp = -exp;
    }
    if (out->n == 0) return true;
    out->neg = neg;
    out->e = exp - frac + zeros;
    return true;
}

int nextok__dec_mag_cmp(const struct nextok__dec *a, const struct nextok__dec *b)
{
    if (!a->n || !b->n) return (a->n > 0) - (b->n > 0);
    int64_t pa = (int64_t)a->n + a->e, pb = (int64_t)b->n + b->e;
    if (pa != pb) return pa < pb ? -1 : 1;
    for (uint32_t i = 0; i < a->n || i < b->n; i++) {
        char x = i < a->n ? a->d[i] : '0', y = i < b->n ? b->d[i] : '0';
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

int nextok__dec_cmp(const struct nextok__dec *a, const struct nextok__dec *b)
{
    if (a->neg != b->neg) return a->neg ? -1 : 1;
    int m = nextok__dec_mag_cmp(a, b);
    return a->neg ? -m : m;
}

void nextok__sch_dec_text(struct nextok__sch *c, struct nextok__buf *b, const struct nextok__dec *a)
{
    if (!a->n) {
        nextok__sch_put(c, b, "0");
        return;
    }
    if (a->neg) nextok__sch_put(c, b, "-");
    int64_t point = (int64_t)a->n + a->e; /* digits before the decimal point */
    if (a->e >= 0 && point <= NEXTOK__DEC_DIGITS) {
        nextok__sch_putn(c, b, a->d, a->n);
        for (int64_t i = 0; i < a->e; i++) nextok__sch_put(c, b, "0");
    } else if (a->e < 0 && -a->e <= NEXTOK__DEC_DIGITS) {
        if (point > 0)
            nextok__sch_putn(c, b, a->d, (size_t)point);
        else
            nextok__sch_put(c, b, "0");
        nextok__sch_put(c, b, ".");
        for (int64_t i = point; i < 0; i++) nextok__sch_put(c, b, "0");
        nextok__sch_putn(c, b, a->d + (point > 0 ? point : 0),
                         a->n - (size_t)(point > 0 ? point : 0));
    } else {
        nextok__sch_putn(c, b, a->d, 1);
        if (a->n > 1) nextok__sch_put(c, b, "."), nextok__sch_putn(c, b, a->d + 1, a->n - 1);
        nextok__sch_fmt(c, b, "e%lld", (long long)(point - 1));
    }
}

/* a = p * 10^-s with p < 10^18, s <= 18. */
static bool small(const struct nextok__dec *a, uint64_t *p, int *s)
{
    if (a->n > 18 || a->e > 18 || a->e < -18) return false;
    *p = 0;
    for (uint32_t i = 0; i < a->n; i++) *p = *p * 10 + (uint64_t)(a->d[i] - '0');
    for (int64_t i = 0; i < a->e; i++) {
        if (*p > UINT64_MAX / 10) return false;
        *p *= 10;
    }
    *s = a->e < 0 ? (int)-a->e : 0;
    return true;
}

static bool scale(uint64_t *p, int by)
{
    for (int i = 0; i < by; i++) {
        if (*p > UINT64_MAX / 10) return false;
        *p *= 10;
    }
    return true;
}

bool nextok__dec_lcm(const struct nextok__dec *a, const struct nextok__dec *b,
                     struct nextok__dec *out)
{
    uint64_t p, q;
    int s, t;
    if (!small(a, &p, &s) || !small(b, &q, &t) || !p || !q) return false;
    int m = s > t ? s : t;
    if (!scale(&p, m - s) || !scale(&q, m - t)) return false;
    uint64_t x = p, y = q;
    while (y) {
        uint64_t r = x % y;
        x = y;
        y = r;
    }
    uint64_t l = p / x;
    if (l > UINT64_MAX / q) return false;
    l *= q; /* lcm(p, q) * 10^-m */
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)l);
    memset(out, 0, offsetof(struct nextok__dec, d));
    out->e = -m;
    while (n > 1 && digits[n - 1] == '0') n--, out->e++;
    if (n > 18) return false;
    memcpy(out->d, digits, (size_t)n);
    out->n = (uint32_t)n;
    return true;
}
