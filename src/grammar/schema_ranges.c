/*
 * Bounded numbers as grammars, digit by digit. An integer range [a, b] is
 * written like a regular expression for it: the common prefix, then one
 * alternative for the digit where a and b part (a's digit and what may follow
 * it, the digits between, b's digit and what may follow), each of the same
 * length; lengths between a's and b's are free. A bounded number with a
 * fraction is its integer part in a range plus, where the integer part equals
 * a bound's, an automaton over the digits after the point. No exponents.
 */
#include "schema_internal.h"

#include <stdio.h>

/* ---- digit strings --------------------------------------------------------------------- */

/* An integer as sign and digits without leading zeros ("0" for zero). */
struct istr {
    bool neg;
    size_t n;
    char s[NEXTOK__DEC_DIGITS + 2];
};

static bool too_long(struct nextok__sch *c, uint32_t node)
{
    char ptr[128];
    nextok__sch_pointer(c->d, node, ptr, sizeof ptr);
    return nextok__sch_fail(c->d, NEXTOK_ERR_LIMIT, "%s: a bound with more than %d digits",
                            ptr[0] ? ptr : "(root)", NEXTOK__DEC_DIGITS);
}

/* The integer part (trunc) of |a|, and whether a has a fractional part. */
static bool int_part(struct nextok__sch *c, const struct nextok__dec *a, uint32_t node,
                     struct istr *out, bool *has_frac)
{
    int64_t point = (int64_t)a->n + a->e;
    out->neg = false;
    out->n = 0;
    *has_frac = a->e < 0 && a->n > 0;
    if (point > NEXTOK__DEC_DIGITS) return too_long(c, node);
    for (int64_t i = 0; i < point; i++) out->s[out->n++] = i < (int64_t)a->n ? a->d[i] : '0';
    if (out->n == 0) out->s[out->n++] = '0';
    out->s[out->n] = '\0';
    return true;
}

/* The digits after the point of |a| (no trailing zeros; may be empty). */
static bool frac_part(struct nextok__sch *c, const struct nextok__dec *a, uint32_t node,
                      struct istr *out)
{
    out->neg = false;
    out->n = 0;
    if (a->e >= 0 || !a->n) return true;
    if (-a->e > NEXTOK__DEC_DIGITS) return too_long(c, node);
    int64_t point = (int64_t)a->n + a->e;
    for (int64_t i = point; i < (int64_t)a->n; i++) out->s[out->n++] = i < 0 ? '0' : a->d[i];
    out->s[out->n] = '\0';
    return true;
}

/* |x| + 1 and |x| - 1 (|x| > 0) on digit strings. */
static void mag_inc(struct istr *x)
{
    size_t i = x->n;
    while (i > 0 && x->s[i - 1] == '9') x->s[--i] = '0';
    if (i > 0) {
        x->s[i - 1]++;
        return;
    }
    memmove(x->s + 1, x->s, x->n + 1);
    x->s[0] = '1';
    x->n++;
}

static void mag_dec(struct istr *x)
{
    size_t i = x->n;
    while (i > 0 && x->s[i - 1] == '0') x->s[--i] = '9';
    if (i == 0) return; /* |x| was 0: not called so */
    x->s[i - 1]--;
    if (x->n > 1 && x->s[0] == '0') memmove(x->s, x->s + 1, x->n--);
    if (x->n == 1 && x->s[0] == '0') x->neg = false;
}

static void add_one(struct istr *x, int sign)
{
    bool zero = x->n == 1 && x->s[0] == '0';
    if (zero) {
        x->s[0] = '1';
        x->neg = sign < 0;
    } else if (x->neg == (sign < 0)) {
        mag_inc(x);
    } else {
        mag_dec(x);
    }
}

static int mag_cmp_s(const struct istr *a, const struct istr *b)
{
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    int r = memcmp(a->s, b->s, a->n);
    return (r > 0) - (r < 0);
}

/* ---- integer ranges --------------------------------------------------------------------- */

static void digits(struct nextok__sch *c, struct nextok__buf *b, size_t r)
{
    if (r == 1)
        nextok__sch_put(c, b, " [0-9]");
    else if (r > 1)
        nextok__sch_fmt(c, b, " [0-9]{%zu}", r);
}

static bool all_of(const char *s, size_t n, char ch)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ch) return false;
    return true;
}

/* r-digit strings >= s (ge) or <= s (le), s of r digits. */
static void bound_rule(struct nextok__sch *c, const char *s, size_t r, bool ge,
                       nextok__sch_name name)
{
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    if (all_of(s + 1, r - 1, ge ? '0' : '9')) {
        nextok__sch_fmt(c, &b, ge ? " [%c-9]" : " [0-%c]", s[0]);
        digits(c, &b, r - 1);
    } else {
        nextok__sch_name sub;
        bound_rule(c, s + 1, r - 1, ge, sub);
        nextok__sch_fmt(c, &b, " \"%c\" %s", s[0], sub);
        if (ge ? s[0] < '9' : s[0] > '0') {
            nextok__sch_fmt(c, &b, ge ? " | [%c-9]" : " | [0-%c]", ge ? s[0] + 1 : s[0] - 1);
            digits(c, &b, r - 1);
        }
    }
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &b);
}

/* len-digit strings in [a, b] (a <= b). */
static void same_len(struct nextok__sch *c, const char *a, const char *z, size_t len,
                     nextok__sch_name name)
{
    size_t p = 0;
    while (p < len && a[p] == z[p]) p++;
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    if (p == len) {
        nextok__sch_lit(c, &b, a, len);
        nextok__sch_newname(c, name);
        nextok__sch_rule(c, name, &b);
        return;
    }
    size_t r = len - p - 1;
    bool a_zero = all_of(a + p + 1, r, '0'), z_nine = all_of(z + p + 1, r, '9');
    char lo = a_zero ? a[p] : (char)(a[p] + 1), hi = z_nine ? z[p] : (char)(z[p] - 1);
    const char *sep = "";
    if (!a_zero) {
        nextok__sch_name ge;
        bound_rule(c, a + p + 1, r, true, ge);
        nextok__sch_fmt(c, &b, " \"%c\" %s", a[p], ge);
        sep = " |";
    }
    if (lo <= hi) {
        nextok__sch_fmt(c, &b, "%s [%c-%c]", sep, lo, hi);
        digits(c, &b, r);
        sep = " |";
    }
    if (!z_nine) {
        nextok__sch_name le;
        bound_rule(c, z + p + 1, r, false, le);
        nextok__sch_fmt(c, &b, "%s \"%c\" %s", sep, z[p], le);
    }
    nextok__sch_newname(c, name);
    if (p > 0) {
        nextok__sch_name rest;
        nextok__sch_rule(c, name, &b);
        memcpy(rest, name, sizeof rest);
        b = nextok__buf_of(c->d->mem);
        nextok__sch_lit(c, &b, a, p);
        nextok__sch_fmt(c, &b, " %s", rest);
        nextok__sch_newname(c, name);
    }
    nextok__sch_rule(c, name, &b);
}

/* The non-negative integers in [a, z] (z NULL: unbounded); false if none. */
static bool int_range(struct nextok__sch *c, const struct istr *a, const struct istr *z,
                      nextok__sch_name name)
{
    if (z && mag_cmp_s(a, z) > 0) return false;
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    nextok__sch_name part;
    if (z && a->n == z->n) {
        same_len(c, a->s, z->s, a->n, part);
        nextok__sch_fmt(c, &b, " %s", part);
    } else {
        char top[NEXTOK__DEC_DIGITS + 2];
        memset(top, '9', a->n);
        same_len(c, a->s, top, a->n, part);
        nextok__sch_fmt(c, &b, " %s", part);
        if (!z)
            nextok__sch_fmt(c, &b, " | [1-9] [0-9]{%zu,}", a->n);
        else if (z->n - a->n >= 2)
            nextok__sch_fmt(c, &b, " | [1-9] [0-9]{%zu,%zu}", a->n, z->n - 2);
        if (z) {
            memset(top, '0', z->n);
            top[0] = '1';
            same_len(c, top, z->s, z->n, part);
            nextok__sch_fmt(c, &b, " | %s", part);
        }
    }
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &b);
    return true;
}

/* ---- fractions --------------------------------------------------------------------------- */

/*
 * The digits after the point of a number whose integer part equals that of a
 * bound: a state is (position i, still equal to the lower bound's digits so
 * far, still equal to the upper's). Past every bound digit and the multipleOf
 * limit the states repeat (i = m + 1 loops on itself).
 */
struct fm {
    struct nextok__sch *c;
    const struct istr *lf, *hf; /* NULL: no bound on that side */
    bool lo_open, hi_open;
    uint32_t lim; /* digits allowed after the point; past it only zeros (UINT32_MAX: none) */
    size_t m;
    int8_t *ok;              /* per state: nonempty */
    nextok__sch_name *names; /* per state */
    nextok__sch_name *free;  /* per position: the untied continuation */
};

static size_t fm_at(const struct fm *f, size_t i, int lt, int ht)
{
    return i * 4 + (size_t)(lt * 2 + ht);
}

static int digit_of(const struct istr *s, size_t i) { return i <= s->n ? s->s[i - 1] - '0' : 0; }

static bool fm_eps(const struct fm *f, size_t i, int lt, int ht)
{
    return (!lt || (i > f->lf->n && !f->lo_open)) && (!ht || i <= f->hf->n || !f->hi_open);
}

/* Where digit ch leads from (i, lt, ht): -1 not allowed, 0 untied, 1 the state (nlt, nht). */
static int fm_step(const struct fm *f, size_t i, int lt, int ht, int ch, int *nlt, int *nht)
{
    if (i > f->lim && ch > 0) return -1;
    if (lt && ch < digit_of(f->lf, i)) return -1;
    if (ht && ch > digit_of(f->hf, i)) return -1;
    *nlt = lt && ch == digit_of(f->lf, i);
    *nht = ht && ch == digit_of(f->hf, i);
    return *nlt || *nht;
}

static bool fm_state_ok(const struct fm *f, size_t i, int lt, int ht)
{
    if (fm_eps(f, i, lt, ht)) return true;
    size_t next = i > f->m ? f->m + 1 : i + 1;
    for (int ch = 0; ch <= 9; ch++) {
        int a, h, r = fm_step(f, i, lt, ht, ch, &a, &h);
        if (r == 0) return true;
        if (r == 1 && !(next == i && a == lt && h == ht) && f->ok[fm_at(f, next, a, h)])
            return true;
    }
    return false;
}

/* The untied continuation at position i: [0-9]* with the limit. */
static const char *fm_free(struct fm *f, size_t i)
{
    if (f->lim == UINT32_MAX) return nextok__sch_helper(f->c, "fany");
    if (i > f->lim) return nextok__sch_helper(f->c, "fz");
    if (!f->free[i][0]) {
        struct nextok__buf b = nextok__buf_of(f->c->d->mem);
        nextok__sch_rep(f->c, &b, "[0-9]", 0, f->lim - i + 1);
        nextok__sch_fmt(f->c, &b, " %s", nextok__sch_helper(f->c, "fz"));
        nextok__sch_newname(f->c, f->free[i]);
        nextok__sch_rule(f->c, f->free[i], &b);
    }
    return f->free[i];
}

/* The body of state (i, lt, ht): its alternatives, eps first if wanted. */
static bool fm_body(struct fm *f, size_t i, int lt, int ht, bool with_eps, struct nextok__buf *b)
{
    size_t next = i > f->m ? f->m + 1 : i + 1;
    const char *sep = "";
    if (with_eps && fm_eps(f, i, lt, ht)) nextok__sch_put(f->c, b, " \"\""), sep = " |";
    for (int ch = 0; ch <= 9;) {
        int a, h, r = fm_step(f, i, lt, ht, ch, &a, &h);
        if (r == 0) {
            int end = ch;
            while (end < 9 && fm_step(f, i, lt, ht, end + 1, &a, &h) == 0) end++;
            const char *fr = fm_free(f, next);
            nextok__sch_fmt(f->c, b, "%s [%d-%d] %s", sep, ch, end, fr);
            sep = " |";
            ch = end + 1;
            continue;
        }
        if (r == 1 && f->ok[fm_at(f, next, a, h)]) {
            nextok__sch_fmt(f->c, b, "%s \"%d\" %s", sep, ch, f->names[fm_at(f, next, a, h)]);
            sep = " |";
        }
        ch++;
    }
    return sep[0] != '\0';
}

static bool fm_build(struct fm *f)
{
    struct nextok__sch *c = f->c;
    size_t m = f->lf->n > f->hf->n ? f->lf->n : f->hf->n;
    if (f->lim != UINT32_MAX && f->lim > m) m = f->lim;
    if (m < 1) m = 1; /* position 1 is the top, never the loop */
    f->m = m;
    size_t n = (m + 2) * 4;
    f->ok = nextok__calloc(c->d->mem, n, 1);
    f->names = nextok__calloc(c->d->mem, n, sizeof *f->names);
    f->free = nextok__calloc(c->d->mem, m + 2, sizeof *f->free);
    if (!f->ok || !f->names || !f->free) return nextok__sch_nomem(c->d);
    for (int round = 0; round < 3; round++) /* the loops at m + 1 settle in 3 rounds */
        for (int s = 1; s < 4; s++)
            f->ok[fm_at(f, m + 1, s >> 1, s & 1)] |= fm_state_ok(f, m + 1, s >> 1, s & 1);
    for (size_t i = m; i >= 2; i--)
        for (int s = 1; s < 4; s++)
            f->ok[fm_at(f, i, s >> 1, s & 1)] = fm_state_ok(f, i, s >> 1, s & 1);
    for (size_t i = 2; i <= m + 1; i++)
        for (int s = 1; s < 4; s++)
            if (f->ok[fm_at(f, i, s >> 1, s & 1)])
                nextok__sch_newname(c, f->names[fm_at(f, i, s >> 1, s & 1)]);
    for (size_t i = m + 1; i >= 2; i--) {
        for (int s = 1; s < 4; s++) {
            if (!f->ok[fm_at(f, i, s >> 1, s & 1)]) continue;
            struct nextok__buf b = nextok__buf_of(c->d->mem);
            fm_body(f, i, s >> 1, s & 1, true, &b);
            nextok__sch_rule(c, f->names[fm_at(f, i, s >> 1, s & 1)], &b);
        }
    }
    return c->d->rc == NEXTOK_OK;
}

static void fm_free_all(struct fm *f)
{
    nextok__free(f->c->d->mem, f->ok);
    nextok__free(f->c->d->mem, f->names);
    nextok__free(f->c->d->mem, f->free);
}

/* Alternatives "I" and "I" "." digits for integer part lit (or rule ref when
 * is_rule) with the state (1, lt, ht). */
static void fm_top(struct fm *f, struct nextok__buf *b, const char **sep, const char *ip,
                   size_t n_ip, bool is_rule, int lt, int ht)
{
    struct nextok__sch *c = f->c;
    struct nextok__buf t = nextok__buf_of(c->d->mem);
    bool trans = fm_body(f, 1, lt, ht, false, &t);
    nextok__sch_name tn = "";
    if (trans) {
        nextok__sch_newname(c, tn);
        nextok__sch_rule(c, tn, &t);
    } else {
        nextok__buf_free(&t);
    }
    for (int k = 0; k < 2; k++) {
        if (k == 0 ? !fm_eps(f, 1, lt, ht) : !trans) continue;
        nextok__sch_put(c, b, *sep);
        if (is_rule)
            nextok__sch_fmt(c, b, " %.*s", (int)n_ip, ip);
        else
            nextok__sch_lit(c, b, ip, n_ip);
        if (k == 1) nextok__sch_fmt(c, b, " \".\" %s", tn);
        *sep = " |";
    }
}

/* Magnitudes (no sign) in [lo, hi] (hi NULL: unbounded), without exponent:
 * appends " name"; false when none. */
bool nextok__sch_magnitudes(struct nextok__sch *c, struct nextok__buf *out,
                            const struct nextok__dec *lo, bool lo_open, uint32_t lo_node,
                            const struct nextok__dec *hi, bool hi_open, uint32_t hi_node,
                            uint32_t lim)
{
    if (hi) {
        int k = nextok__dec_mag_cmp(lo, hi);
        if (k > 0 || (k == 0 && (lo_open || hi_open))) return false;
    }
    static const struct istr empty; /* zero-initialised: no digits */
    struct istr li, lf, hi_i, hf;
    bool has_frac;
    if (!int_part(c, lo, lo_node, &li, &has_frac) || !frac_part(c, lo, lo_node, &lf)) return false;
    if (hi && (!int_part(c, hi, hi_node, &hi_i, &has_frac) || !frac_part(c, hi, hi_node, &hf)))
        return false;
    struct fm f = {c, &lf, hi ? &hf : &empty, lo_open, hi_open, lim, 0, NULL, NULL, NULL};
    struct nextok__buf b = nextok__buf_of(c->d->mem);
    const char *sep = "";
    if (fm_build(&f)) {
        bool same = hi && mag_cmp_s(&li, &hi_i) == 0;
        fm_top(&f, &b, &sep, li.s, li.n, false, 1, same);
        struct istr a = li;
        mag_inc(&a);
        nextok__sch_name mid;
        if (hi && !same) {
            struct istr z = hi_i;
            if (z.n > 1 || z.s[0] != '0') mag_dec(&z);
            if (int_range(c, &a, &z, mid)) fm_top(&f, &b, &sep, mid, strlen(mid), true, 0, 0);
            fm_top(&f, &b, &sep, hi_i.s, hi_i.n, false, 0, 1);
        } else if (!hi && int_range(c, &a, NULL, mid)) {
            fm_top(&f, &b, &sep, mid, strlen(mid), true, 0, 0);
        }
    }
    fm_free_all(&f);
    if (c->d->rc != NEXTOK_OK || !sep[0]) {
        nextok__buf_free(&b);
        return false;
    }
    nextok__sch_name name;
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &b);
    nextok__sch_fmt(c, out, " %s", name);
    return true;
}

/* ---- integers within bounds ------------------------------------------------------------------ */

bool nextok__sch_int_bounds(struct nextok__sch *c, struct nextok__buf *b,
                            struct nextok__sch_num *nm)
{
    struct istr lo, hi;
    bool has_frac = false;
    if (nm->lo.has) { /* the least integer allowed */
        if (!int_part(c, &nm->lo.v, nm->lo.node, &lo, &has_frac)) return false;
        lo.neg = nm->lo.v.neg && (lo.n > 1 || lo.s[0] != '0');
        if (nm->lo.open && !has_frac)
            add_one(&lo, 1);
        else if (has_frac && !nm->lo.v.neg)
            add_one(&lo, 1);
    }
    if (nm->hi.has) { /* the greatest */
        if (!int_part(c, &nm->hi.v, nm->hi.node, &hi, &has_frac)) return false;
        hi.neg = nm->hi.v.neg && (hi.n > 1 || hi.s[0] != '0');
        if (nm->hi.open && !has_frac)
            add_one(&hi, -1);
        else if (has_frac && nm->hi.v.neg)
            add_one(&hi, -1);
    }
    if (nm->lo.has && nm->hi.has &&
        (lo.neg != hi.neg ? lo.neg == false
                          : (lo.neg ? mag_cmp_s(&lo, &hi) < 0 : mag_cmp_s(&lo, &hi) > 0)))
        return false;
    struct nextok__buf r = nextok__buf_of(c->d->mem);
    const char *sep = "";
    nextok__sch_name name;
    static const struct istr zero = {false, 1, "0"}, one = {false, 1, "1"};
    if (!nm->hi.has || !hi.neg) { /* 0 and up */
        if (int_range(c, nm->lo.has && !lo.neg ? &lo : &zero, nm->hi.has ? &hi : NULL, name))
            nextok__sch_fmt(c, &r, " %s", name), sep = " |";
    }
    if (!nm->lo.has || lo.neg) { /* below 0: "-" and the magnitude */
        const struct istr *a = nm->hi.has && hi.neg ? &hi : &one;
        if (int_range(c, a, nm->lo.has ? &lo : NULL, name))
            nextok__sch_fmt(c, &r, "%s \"-\" %s", sep, name), sep = " |";
    }
    if (!sep[0]) {
        nextok__buf_free(&r);
        return false;
    }
    nextok__sch_newname(c, name);
    nextok__sch_rule(c, name, &r);
    nextok__sch_fmt(c, b, " %s", name);
    return true;
}
