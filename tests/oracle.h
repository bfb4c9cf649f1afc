/*
 * oracle.h - an independent reference for nextok's distributions.
 *
 * Written from docs/semantics.md alone (never from src/sample/): plain loops,
 * full sorts, long double arithmetic. Header-only (static functions) because
 * tests/CMakeLists.txt builds one executable per tests/test_*.c.
 *
 * Precision model. A candidate's logit is a float (struct nextok_token_data),
 * so each stage computes its new logit in long double and stores it rounded
 * to float and saturated to +-FLT_MAX, exactly as the spec's "logit = ..."
 * assignments do. Everything else (softmax, cumulative sums, entropy,
 * thresholds) stays in long double. The library computes those in double, so
 * where a cut decision of the oracle lies within OR_REL_TOL (relative) of its
 * threshold, the library may legitimately decide the other way: the oracle
 * then marks its result `ambiguous` (with the reason) and a test skips that
 * configuration instead of comparing it.
 *
 * Also here: an independent Philox4x32-10 (the XTC coin and the exact-draw
 * checks need the spec's uniforms without trusting the library's RNG) and the
 * chi-square upper tail for the statistical tests.
 */
#ifndef NEXTOK_TEST_ORACLE_H
#define NEXTOK_TEST_ORACLE_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nextok.h"

/* Relative distance under which a cut decision counts as a near-tie. */
#define OR_REL_TOL 1e-9L
/* Distinct float logits this many ulps apart or closer may be ordered
 * differently by an implementation that rounds one operation differently. */
#define OR_ORDER_ULPS 2

/* ------------------------------------------------------------------------ */
/* Philox4x32-10 (Salmon et al. 2011), written out again for independence.  */
/* ------------------------------------------------------------------------ */

static inline void or_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t x[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * x[0];
        uint64_t p1 = (uint64_t)0xCD9E8D57u * x[2];
        uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k[0];
        uint32_t y1 = (uint32_t)p1;
        uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k[1];
        uint32_t y3 = (uint32_t)p0;
        x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
        k[0] += 0x9E3779B9u; /* the key schedule: golden ratio, sqrt(3)-1 */
        k[1] += 0xBB67AE85u;
    }
    memcpy(out, x, sizeof x);
}

/* The 53-bit integer behind nextok_rng_uniform (header: Randomness). */
static inline uint64_t or_draw53(uint64_t seed, uint64_t step, uint32_t purpose, uint32_t index)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {index, purpose, (uint32_t)step, (uint32_t)(step >> 32)};
    uint32_t o[4];
    or_philox(ctr, key, o);
    return ((uint64_t)o[0] << 21) ^ (o[1] >> 11);
}

static inline double or_uniform(uint64_t seed, uint64_t step, uint32_t purpose, uint32_t index)
{
    return (double)or_draw53(seed, step, purpose, index) * 0x1p-53;
}

static inline double or_uniform_open(uint64_t seed, uint64_t step, uint32_t purpose, uint32_t index)
{
    return ((double)(or_draw53(seed, step, purpose, index) >> 1) + 0.5) * 0x1p-52;
}

/* ------------------------------------------------------------------------ */
/* Chi-square upper tail Q(df/2, x/2) (regularised incomplete gamma).        */
/* ------------------------------------------------------------------------ */

static inline double or_gamma_p_series(double a, double x)
{
    double sum = 1.0 / a, term = sum;
    for (int n = 1; n < 100000; n++) {
        term *= x / (a + n);
        sum += term;
        if (fabs(term) < fabs(sum) * 1e-16) break;
    }
    return sum * exp(-x + a * log(x) - lgamma(a));
}

static inline double or_gamma_q_cf(double a, double x)
{
    /* Lentz's continued fraction for Q(a, x), valid for x >= a + 1. */
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16) break;
    }
    return exp(-x + a * log(x) - lgamma(a)) * h;
}

/* P(chi2_df >= x). */
static inline double or_chi2_sf(double x, double df)
{
    double a = df / 2.0, y = x / 2.0;
    if (x <= 0) return 1.0;
    if (y < a + 1.0) return 1.0 - or_gamma_p_series(a, y);
    return or_gamma_q_cf(a, y);
}

/* Pearson's goodness of fit of count[id] (n draws) to expect[id], the exact
 * probabilities (0 outside the support: a draw there counts as impossible).
 * Ids expected fewer than 5 times are pooled into one bin, or, when the pool
 * itself expects fewer than 5, merged into the smallest regular bin.
 * df = bins - 1, p = P(chi2_df >= stat) (1 with no degree of freedom). */
struct or_chi2 {
    double stat, df, p;
    int bins, impossible;
};

static inline struct or_chi2 or_chi2_fit(const long *count, const long double *expect, int32_t V,
                                         long n)
{
    struct or_chi2 r = {0, 0, 1, 0, 0};
    double pool_e = 0, pool_o = 0, small_e = INFINITY;
    int32_t small_id = -1;
    for (int32_t i = 0; i < V; i++) {
        double e = (double)(expect[i] * n);
        if (expect[i] == 0) {
            r.impossible += count[i] > 0;
            continue;
        }
        if (e < 5) {
            pool_e += e, pool_o += (double)count[i];
            continue;
        }
        r.stat += (count[i] - e) * (count[i] - e) / e;
        r.bins++;
        if (e < small_e) small_e = e, small_id = i;
    }
    if (pool_e >= 5) {
        r.stat += (pool_o - pool_e) * (pool_o - pool_e) / pool_e;
        r.bins++;
    } else if (pool_e > 0 && small_id >= 0) {
        double e = small_e, o = (double)count[small_id];
        r.stat -= (o - e) * (o - e) / e;
        e += pool_e, o += pool_o;
        r.stat += (o - e) * (o - e) / e;
    }
    r.df = r.bins - 1;
    r.p = r.df > 0 ? or_chi2_sf(r.stat, r.df) : 1.0;
    return r;
}

/* ------------------------------------------------------------------------ */
/* Candidates and state                                                      */
/* ------------------------------------------------------------------------ */

struct or_cand {
    int32_t id;
    float l;       /* logit as stored between stages (a float, as in the library) */
    long double p; /* softmax where a stage computed it, final p at the end */
};

/* Prompt and accepted output tokens the processors see, and the step. */
struct or_hist {
    const int32_t *prompt;
    size_t n_prompt;
    const int32_t *output;
    size_t n_output;
    uint64_t step;
};

enum or_kind {
    OR_BIAS, OR_ALLOWED, OR_BANNED, OR_MIN_TOKENS, OR_NGRAM, OR_PENALTIES, OR_DRY,
    OR_TEMP, OR_TEMP_EXT, OR_TOP_K, OR_TOP_P, OR_MIN_P, OR_TYPICAL, OR_SIGMA, OR_XTC,
    OR_EPSILON, OR_ETA, OR_MIROSTAT_V2,
    OR_SOFTMAX, /* categorical and Gumbel-max: both sample softmax(logits) */
    OR_GREEDY,
};

/* One stage; only the fields its kind names are read. */
struct or_stage {
    enum or_kind kind;
    float t, range, exponent;       /* TEMP (t), TEMP_EXT (all three)               */
    float p;                        /* TOP_P, MIN_P, TYPICAL, EPSILON, ETA; SIGMA: n */
    int32_t k;                      /* TOP_K: k; NGRAM: n; MIN_TOKENS: min_tokens   */
    enum nextok_ties ties;          /* TOP_K, TOP_P                                 */
    size_t min_keep;                /* TOP_P, MIN_P, TYPICAL, XTC, EPSILON, ETA      */
    float prob, threshold;          /* XTC                                          */
    uint64_t seed;                  /* XTC                                          */
    float repeat, freq, presence;   /* PENALTIES                                    */
    enum nextok_penalty_scope scope;
    int32_t last_n;                 /* PENALTIES (window), DRY                      */
    float mult, base;               /* DRY                                          */
    int32_t allowed_length;         /* DRY                                          */
    const int32_t *brk_ids;         /* DRY breakers (concatenated, as the API)      */
    const size_t *brk_off;
    size_t n_brk;
    float mu;                       /* MIROSTAT_V2: the current mu                  */
    const int32_t *ids;             /* ALLOWED, BANNED, MIN_TOKENS (eog)            */
    size_t n_ids;
    const struct nextok_logit_bias *bias; /* BIAS */
    size_t n_bias;
};

struct or_result {
    nextok_status status;
    struct or_cand *c; /* final distribution, sorted (logit desc, id asc) */
    size_t n;
    int ambiguous;     /* a cut decision was a near-tie: do not compare */
    char why[192];
};

struct or_state {
    struct or_cand *c;
    size_t n;
    int sorted;
    int32_t V;
    const struct or_hist *h;
    int32_t *pos;        /* id -> index while a processor runs, else -1 */
    struct or_result *res;
};

static inline void or_result_free(struct or_result *r)
{
    free(r->c);
    memset(r, 0, sizeof *r);
}

static inline void or_flag(struct or_state *st, const char *fmt, long double a, long double b)
{
    if (st->res->ambiguous) return;
    st->res->ambiguous = 1;
    snprintf(st->res->why, sizeof st->res->why, fmt, (double)a, (double)b);
}

/* Probability-space near-tie: the library sums/compares in double. */
static inline int or_near_p(long double a, long double b)
{
    long double m = fabsl(a) > fabsl(b) ? fabsl(a) : fabsl(b);
    return fabsl(a - b) <= OR_REL_TOL * m;
}

/* Logit-space near-tie against a computed threshold (exact equality is a
 * true tie, decided the same way by any implementation). */
static inline int or_near_l(long double a, long double b)
{
    long double m = fabsl(a) > fabsl(b) ? fabsl(a) : fabsl(b);
    return a != b && fabsl(a - b) <= OR_REL_TOL * (m > 1 ? m : 1);
}

/* Two distinct float logits close enough that a one-ulp rounding difference
 * in an earlier stage could swap them. */
static inline int or_near_order(float a, float b)
{
    if (a == b) return 0;
    float m = fabsf(a) > fabsf(b) ? fabsf(a) : fabsf(b);
    float ulp = nextafterf(m, INFINITY) - m;
    return fabsf(a - b) <= OR_ORDER_ULPS * ulp;
}

/* Store a stage's result as the library must: float, saturated. */
static inline float or_store(long double x)
{
    if (x > (long double)FLT_MAX) return FLT_MAX;
    if (x < -(long double)FLT_MAX) return -FLT_MAX;
    return (float)x;
}

static inline int or_cmp_sorted(const void *pa, const void *pb)
{
    const struct or_cand *a = pa, *b = pb;
    if (a->l != b->l) return a->l > b->l ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static inline void or_sort(struct or_state *st)
{
    if (!st->sorted) qsort(st->c, st->n, sizeof *st->c, or_cmp_sorted);
    st->sorted = 1;
}

/* softmax in long double over the current candidates; returns the entropy. */
static inline long double or_softmax(struct or_state *st)
{
    long double m = -INFINITY, z = 0, h = 0;
    for (size_t i = 0; i < st->n; i++)
        if (st->c[i].l > m) m = st->c[i].l;
    for (size_t i = 0; i < st->n; i++) {
        st->c[i].p = expl((long double)st->c[i].l - m);
        z += st->c[i].p;
    }
    for (size_t i = 0; i < st->n; i++) {
        st->c[i].p /= z;
        if (st->c[i].p > 0) h -= st->c[i].p * logl(st->c[i].p);
    }
    return h;
}

/* Keep the first n (the array must be in the order the stage defines). */
static inline void or_truncate(struct or_state *st, size_t n)
{
    if (n < st->n) st->n = n;
}

/* Keep candidates with keep[i] != 0, preserving order. */
static inline void or_compact(struct or_state *st, const unsigned char *keep)
{
    size_t w = 0;
    for (size_t i = 0; i < st->n; i++)
        if (keep[i]) st->c[w++] = st->c[i];
    st->n = w;
}

/* min_keep = 0 behaves as 1; never more than size. */
static inline size_t or_min_keep(size_t min_keep, size_t size)
{
    size_t m = min_keep ? min_keep : 1;
    return m < size ? m : size;
}

static inline void or_map_build(struct or_state *st)
{
    for (size_t i = 0; i < st->n; i++) st->pos[st->c[i].id] = (int32_t)i;
}

static inline void or_map_clear(struct or_state *st)
{
    for (size_t i = 0; i < st->n; i++) st->pos[st->c[i].id] = -1;
}

/* The sequence prompt || output as one freshly allocated array. */
static inline int32_t *or_history(const struct or_hist *h, size_t *n)
{
    *n = h->n_prompt + h->n_output;
    int32_t *s = malloc((*n ? *n : 1) * sizeof *s);
    if (h->n_prompt) memcpy(s, h->prompt, h->n_prompt * sizeof *s);
    if (h->n_output) memcpy(s + h->n_prompt, h->output, h->n_output * sizeof *s);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Processors                                                                */
/* ------------------------------------------------------------------------ */

static inline void or_bias(struct or_state *st, const struct or_stage *s)
{
    long double *add = calloc(st->n ? st->n : 1, sizeof *add);
    unsigned char *keep = malloc(st->n ? st->n : 1);
    memset(keep, 1, st->n);
    or_map_build(st);
    for (size_t j = 0; j < s->n_bias; j++) {
        int32_t i = st->pos[s->bias[j].token];
        if (i < 0) continue;
        if (s->bias[j].bias == -INFINITY) keep[i] = 0;
        else add[i] += s->bias[j].bias; /* a token listed twice gets both */
    }
    or_map_clear(st);
    for (size_t i = 0; i < st->n; i++)
        if (add[i] != 0) st->c[i].l = or_store((long double)st->c[i].l + add[i]);
    or_compact(st, keep);
    st->sorted = 0;
    free(add);
    free(keep);
}

/* Remove listed ids (banned = 1) or every id not listed (banned = 0). */
static inline void or_list_filter(struct or_state *st, const int32_t *ids, size_t n, int banned)
{
    unsigned char *keep = malloc(st->n ? st->n : 1);
    memset(keep, banned ? 1 : 0, st->n);
    or_map_build(st);
    for (size_t j = 0; j < n; j++) {
        int32_t i = st->pos[ids[j]];
        if (i >= 0) keep[i] = banned ? 0 : 1;
    }
    or_map_clear(st);
    or_compact(st, keep);
    free(keep);
}

static inline void or_min_tokens(struct or_state *st, const struct or_stage *s)
{
    if ((int64_t)st->h->n_output < (int64_t)s->k) or_list_filter(st, s->ids, s->n_ids, 1);
}

/* HF no_repeat_ngram: ban t where (last n-1 tokens, t) already occurred. */
static inline void or_ngram(struct or_state *st, const struct or_stage *s)
{
    size_t L;
    int32_t *h = or_history(st->h, &L);
    size_t n = (size_t)s->k;
    if (s->k > 0 && L >= n - 1 && L >= 1) {
        int32_t *ban = malloc(L * sizeof *ban);
        size_t nb = 0;
        for (size_t i = 0; i + n <= L; i++) {
            if (memcmp(h + i, h + L - (n - 1), (n - 1) * sizeof *h) == 0) ban[nb++] = h[i + n - 1];
        }
        or_list_filter(st, ban, nb, 1);
        free(ban);
    }
    free(h);
}

static inline void or_penalties(struct or_state *st, const struct or_stage *s)
{
    size_t L;
    int32_t *h = or_history(st->h, &L);
    int32_t *cnt = calloc((size_t)st->V, sizeof *cnt);
    unsigned char *present = calloc((size_t)st->V, 1);
    if (s->scope == NEXTOK_SCOPE_PROMPT_OUTPUT) {
        for (size_t i = 0; i < L; i++) present[h[i]] = 1;
        for (size_t i = 0; i < st->h->n_output; i++) cnt[st->h->output[i]]++;
    } else {
        size_t from = 0;
        if (s->scope == NEXTOK_SCOPE_WINDOW) {
            if (s->last_n <= 0) from = L; /* last_n = 0 disables the penalties */
            else if ((size_t)s->last_n < L) from = L - (size_t)s->last_n;
        }
        for (size_t i = from; i < L; i++) cnt[h[i]]++, present[h[i]] = 1;
    }
    for (size_t i = 0; i < st->n; i++) {
        int32_t id = st->c[i].id;
        if (!present[id] && !cnt[id]) continue;
        long double x = st->c[i].l;
        if (present[id]) x = x > 0 ? x / s->repeat : x * s->repeat;
        x -= (long double)s->freq * cnt[id];
        if (cnt[id] > 0) x -= s->presence;
        st->c[i].l = or_store(x);
    }
    st->sorted = 0;
    free(h);
    free(cnt);
    free(present);
}

/* End of the last complete breaker occurrence in h[0..n) (0 if none). */
static inline size_t or_dry_breaker_end(const int32_t *h, size_t n, const struct or_stage *s)
{
    size_t best = 0;
    for (size_t b = 0; b < s->n_brk; b++) {
        const int32_t *bk = s->brk_ids + s->brk_off[b];
        size_t m = s->brk_off[b + 1] - s->brk_off[b];
        if (m == 0 || m > n) continue;
        for (size_t e = m; e <= n; e++)
            if (e > best && memcmp(h + e - m, bk, m * sizeof *bk) == 0) best = e;
    }
    return best;
}

/* DRY exactly as docs/semantics.md defines L(t); O(n^2), n is small. */
static inline void or_dry(struct or_state *st, const struct or_stage *s)
{
    size_t L;
    int32_t *full = or_history(st->h, &L);
    size_t from = 0;
    if (s->last_n == 0) L = 0;
    else if (s->last_n > 0 && (size_t)s->last_n < L) from = L - (size_t)s->last_n;
    const int32_t *h = full + from;
    size_t n = L - from;
    if (n >= 2) {
        size_t lim = n - or_dry_breaker_end(h, n, s);
        int32_t *best = malloc((size_t)st->V * sizeof *best);
        for (size_t i = 0; i + 1 < n; i++) best[h[i + 1]] = -1;
        for (size_t i = 0; i + 1 < n; i++) {
            size_t k = 0; /* longest common suffix of h[..i] and h[..n-1], <= lim */
            while (k < lim && k <= i && h[i - k] == h[n - 1 - k]) k++;
            if ((int32_t)k > best[h[i + 1]]) best[h[i + 1]] = (int32_t)k;
        }
        or_map_build(st);
        for (size_t i = 0; i + 1 < n; i++) {
            int32_t t = h[i + 1], j = st->pos[t];
            if (j < 0 || best[t] < s->allowed_length) continue;
            long double pen = s->mult * powl(s->base, best[t] - s->allowed_length);
            st->c[j].l = or_store((long double)st->c[j].l - pen);
            best[t] = -1; /* apply once per token */
        }
        or_map_clear(st);
        free(best);
        st->sorted = 0;
    }
    free(full);
}

/* ------------------------------------------------------------------------ */
/* Transforms                                                                */
/* ------------------------------------------------------------------------ */

/* Keep only the top candidate in sorted order. */
static inline void or_keep_top(struct or_state *st)
{
    or_sort(st);
    if (st->n >= 2 && or_near_order(st->c[0].l, st->c[1].l))
        or_flag(st, "argmax: top logits %.9g and %.9g are ulps apart", st->c[0].l, st->c[1].l);
    or_truncate(st, 1);
}

static inline void or_divide(struct or_state *st, long double t)
{
    for (size_t i = 0; i < st->n; i++) st->c[i].l = or_store((long double)st->c[i].l / t);
    st->sorted = 0; /* rounding can create ties, which reorder by id */
}

static inline void or_temp(struct or_state *st, float t)
{
    if (t <= 0) or_keep_top(st);
    else if (t != 1) or_divide(st, t);
}

static inline void or_temp_ext(struct or_state *st, const struct or_stage *s)
{
    if (s->range <= 0) {
        or_temp(st, s->t);
        return;
    }
    if (st->n < 2) return;
    long double min_t = (long double)s->t - s->range, max_t = (long double)s->t + s->range;
    if (min_t < 0) min_t = 0;
    long double hn = or_softmax(st) / logl((long double)st->n);
    long double T = min_t + (max_t - min_t) * powl(hn, s->exponent);
    if (T <= 0) or_keep_top(st);
    else or_divide(st, T);
}

/* ------------------------------------------------------------------------ */
/* Filters                                                                   */
/* ------------------------------------------------------------------------ */

static inline void or_top_k(struct or_state *st, const struct or_stage *s)
{
    if (s->k <= 0 || (size_t)s->k >= st->n) return;
    or_sort(st);
    size_t k = (size_t)s->k;
    if (or_near_order(st->c[k - 1].l, st->c[k].l))
        or_flag(st, "top_k: k-th logit %.9g vs next %.9g", st->c[k - 1].l, st->c[k].l);
    if (s->ties == NEXTOK_TIES_KEEP)
        while (k < st->n && st->c[k].l == st->c[k - 1].l) k++;
    or_truncate(st, k);
}

/*
 * Shortest prefix of c[0..n) (in the given order) with cumulative p >= p.
 * Flags a near-tie at the crossing or one before it.
 */
static inline size_t or_mass_prefix(struct or_state *st, float p, const char *what)
{
    long double cum = 0, prev = 0;
    for (size_t i = 0; i < st->n; i++) {
        prev = cum;
        cum += st->c[i].p;
        if (cum >= p || or_near_p(cum, p)) {
            if (or_near_p(cum, p) || (i > 0 && or_near_p(prev, p))) {
                char fmt[96];
                snprintf(fmt, sizeof fmt, "%s: cumulative %%.17g vs p %%.9g", what);
                or_flag(st, fmt, cum, p);
            }
            if (cum >= p) return i + 1;
        }
    }
    return st->n;
}

static inline void or_top_p(struct or_state *st, const struct or_stage *s)
{
    if (s->p >= 1) return;
    or_sort(st);
    or_softmax(st);
    size_t n = or_mass_prefix(st, s->p, "top_p");
    size_t mk = or_min_keep(s->min_keep, st->n);
    if (n < mk) n = mk;
    if (s->ties == NEXTOK_TIES_KEEP)
        while (n < st->n && st->c[n].l == st->c[n - 1].l) n++;
    or_truncate(st, n);
}

/* Keep the first n_pass in sorted order, at least min_keep. */
static inline void or_keep_sorted_prefix(struct or_state *st, size_t n_pass, size_t min_keep)
{
    size_t mk = or_min_keep(min_keep, st->n);
    or_truncate(st, n_pass > mk ? n_pass : mk);
}

static inline void or_min_p(struct or_state *st, const struct or_stage *s)
{
    if (s->p <= 0) return;
    or_sort(st);
    long double thr = (long double)st->c[0].l + logl(s->p);
    size_t n = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (or_near_l(st->c[i].l, thr)) or_flag(st, "min_p: logit %.9g vs threshold %.17g", st->c[i].l, thr);
        if (st->c[i].l >= thr) n = i + 1;
    }
    or_keep_sorted_prefix(st, n, s->min_keep);
}

struct or_typ { struct or_cand c; long double score; size_t rank; };

static inline int or_cmp_typ(const void *pa, const void *pb)
{
    const struct or_typ *a = pa, *b = pb;
    if (a->score != b->score) return a->score < b->score ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static inline void or_typical(struct or_state *st, const struct or_stage *s)
{
    if (s->p >= 1) return;
    or_sort(st);
    long double H = or_softmax(st);
    struct or_typ *t = malloc(st->n * sizeof *t);
    for (size_t i = 0; i < st->n; i++)
        t[i] = (struct or_typ){st->c[i], fabsl(-logl(st->c[i].p) - H), i};
    qsort(t, st->n, sizeof *t, or_cmp_typ);
    for (size_t i = 0; i < st->n; i++) st->c[i] = t[i].c;
    size_t n = or_mass_prefix(st, s->p, "typical");
    size_t mk = or_min_keep(s->min_keep, st->n);
    if (n < mk) n = mk;
    /* an order swap across the cut between distinct logits is a near-tie */
    for (size_t i = n > 1 ? n - 2 : 0; i + 1 < st->n && i < n; i++)
        if (st->c[i].l != st->c[i + 1].l &&
            fabsl(t[i].score - t[i + 1].score) <= OR_REL_TOL * (1 + H))
            or_flag(st, "typical: scores %.17g and %.17g", t[i].score, t[i + 1].score);
    or_truncate(st, n);
    st->sorted = 0;
    free(t);
}

static inline void or_sigma(struct or_state *st, const struct or_stage *s)
{
    if (s->p <= 0 || st->n <= 1) return;
    or_sort(st);
    long double mean = 0, var = 0;
    for (size_t i = 0; i < st->n; i++) mean += st->c[i].l;
    mean /= st->n;
    for (size_t i = 0; i < st->n; i++) var += ((long double)st->c[i].l - mean) * (st->c[i].l - mean);
    long double thr = (long double)st->c[0].l - s->p * sqrtl(var / st->n);
    size_t n = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (or_near_l(st->c[i].l, thr)) or_flag(st, "top_n_sigma: logit %.9g vs threshold %.17g", st->c[i].l, thr);
        if (st->c[i].l >= thr) n = i + 1;
    }
    or_truncate(st, n);
}

static inline void or_xtc(struct or_state *st, const struct or_stage *s)
{
    if (s->prob <= 0 || s->threshold > 0.5f || st->n < 2) return;
    double u = or_uniform(s->seed, st->h->step, NEXTOK_RNG_XTC, 0);
    if (u >= s->prob) return;
    or_sort(st);
    or_softmax(st);
    long double thr = s->threshold;
    size_t j = 0, any = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (or_near_p(st->c[i].p, thr)) or_flag(st, "xtc: p %.17g vs threshold %.9g", st->c[i].p, thr);
        if (st->c[i].p >= thr) j = i, any = 1;
    }
    size_t mk = s->min_keep ? s->min_keep : 1;
    if (any && j >= 1 && st->n - j >= mk) {
        memmove(st->c, st->c + j, (st->n - j) * sizeof *st->c);
        st->n -= j;
    }
}

/* Keep p >= eps (sorted), at least min_keep; shared by epsilon and eta. */
static inline void or_cutoff(struct or_state *st, long double eps, size_t min_keep, const char *what)
{
    size_t n = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (or_near_p(st->c[i].p, eps)) {
            char fmt[96];
            snprintf(fmt, sizeof fmt, "%s: p %%.17g vs cutoff %%.17g", what);
            or_flag(st, fmt, st->c[i].p, eps);
        }
        if (st->c[i].p >= eps) n = i + 1;
    }
    or_keep_sorted_prefix(st, n, min_keep);
}

static inline void or_epsilon(struct or_state *st, const struct or_stage *s)
{
    if (s->p <= 0) return;
    or_sort(st);
    or_softmax(st);
    or_cutoff(st, s->p, s->min_keep, "epsilon");
}

static inline void or_eta(struct or_state *st, const struct or_stage *s)
{
    if (s->p <= 0) return;
    or_sort(st);
    long double H = or_softmax(st);
    long double eta = s->p, eps = sqrtl(eta) * expl(-H);
    or_cutoff(st, eps < eta ? eps : eta, s->min_keep, "eta");
}

static inline void or_mirostat_v2(struct or_state *st, const struct or_stage *s)
{
    or_sort(st);
    or_softmax(st);
    size_t n = 1; /* the top candidate always stays */
    for (size_t i = 0; i < st->n; i++) {
        long double surprise = -log2l(st->c[i].p);
        if (or_near_l(surprise, s->mu)) or_flag(st, "mirostat: surprise %.17g vs mu %.9g", surprise, s->mu);
        if (i > 0 && surprise <= s->mu) n = i + 1;
    }
    or_truncate(st, n);
}

/* ------------------------------------------------------------------------ */
/* Running                                                                   */
/* ------------------------------------------------------------------------ */

static inline void or_apply(struct or_state *st, const struct or_stage *s)
{
    switch (s->kind) {
    case OR_BIAS: or_bias(st, s); break;
    case OR_ALLOWED: or_list_filter(st, s->ids, s->n_ids, 0); break;
    case OR_BANNED: or_list_filter(st, s->ids, s->n_ids, 1); break;
    case OR_MIN_TOKENS: or_min_tokens(st, s); break;
    case OR_NGRAM: or_ngram(st, s); break;
    case OR_PENALTIES: or_penalties(st, s); break;
    case OR_DRY: if (s->mult != 0) or_dry(st, s); break;
    case OR_TEMP: or_temp(st, s->t); break;
    case OR_TEMP_EXT: or_temp_ext(st, s); break;
    case OR_TOP_K: or_top_k(st, s); break;
    case OR_TOP_P: or_top_p(st, s); break;
    case OR_MIN_P: or_min_p(st, s); break;
    case OR_TYPICAL: or_typical(st, s); break;
    case OR_SIGMA: or_sigma(st, s); break;
    case OR_XTC: or_xtc(st, s); break;
    case OR_EPSILON: or_epsilon(st, s); break;
    case OR_ETA: or_eta(st, s); break;
    case OR_MIROSTAT_V2: or_mirostat_v2(st, s); break;
    case OR_SOFTMAX: break;
    case OR_GREEDY: or_keep_top(st); break;
    }
}

/* Input rules: NaN (error or masked), -inf masked, +inf forced. */
static inline nextok_status or_prepare(struct or_state *st, const float *row, enum nextok_nan_policy nan)
{
    size_t n_pinf = 0;
    for (int32_t i = 0; i < st->V; i++) {
        if (isnan(row[i]) && nan == NEXTOK_NAN_ERROR) return NEXTOK_ERR_NAN;
        if (row[i] == INFINITY) n_pinf++;
    }
    st->n = 0;
    for (int32_t i = 0; i < st->V; i++) {
        float x = row[i];
        if (isnan(x) || x == -INFINITY) continue;
        if (n_pinf && x != INFINITY) continue;
        st->c[st->n++] = (struct or_cand){i, n_pinf ? 0.0f : x, 0};
    }
    return st->n ? NEXTOK_OK : NEXTOK_ERR_NO_CANDIDATES;
}

/* Debugging hook: called after each stage with the survivors (NULL: off). */
typedef void (*or_trace_fn)(size_t stage, const struct or_cand *c, size_t n);
static or_trace_fn or_trace;

/*
 * Run stages on a row of V widened logits. On success res->c holds the final
 * distribution sorted (logit desc, id asc) with p = softmax of the final
 * logits (1 for the greedy survivor). Caller frees with or_result_free.
 */
static inline void or_run(const float *row, int32_t V, enum nextok_nan_policy nan,
                   const struct or_stage *stages, size_t n_stages, const struct or_hist *h,
                   struct or_result *res)
{
    memset(res, 0, sizeof *res);
    struct or_state st = {malloc((size_t)V * sizeof *st.c), 0, 0, V, h,
                          malloc((size_t)V * sizeof *st.pos), res};
    for (int32_t i = 0; i < V; i++) st.pos[i] = -1;
    res->status = or_prepare(&st, row, nan);
    for (size_t i = 0; i < n_stages && res->status == NEXTOK_OK; i++) {
        or_apply(&st, &stages[i]);
        if (or_trace) or_trace(i, st.c, st.n);
        if (st.n == 0) res->status = NEXTOK_ERR_NO_CANDIDATES;
    }
    if (res->status == NEXTOK_OK) {
        or_sort(&st);
        or_softmax(&st);
        res->c = st.c;
        res->n = st.n;
    } else {
        free(st.c);
    }
    free(st.pos);
}

/* ------------------------------------------------------------------------ */
/* Profiles (docs/semantics.md, "Profiles")                                  */
/* ------------------------------------------------------------------------ */

#define OR_MAX_STAGES 32

static inline void or_push(struct or_stage *v, size_t *n, struct or_stage s)
{
    if (*n < OR_MAX_STAGES) v[(*n)++] = s;
}

static inline int or_penalties_on(const struct nextok_sampling_params *sp)
{
    return sp->repeat_penalty != 1 || sp->frequency_penalty != 0 || sp->presence_penalty != 0;
}

static inline struct or_stage or_penalty_stage(const struct nextok_sampling_params *sp)
{
    static const enum nextok_penalty_scope scope[3] = {
        NEXTOK_SCOPE_PROMPT_OUTPUT, NEXTOK_SCOPE_HISTORY, NEXTOK_SCOPE_WINDOW};
    return (struct or_stage){.kind = OR_PENALTIES, .repeat = sp->repeat_penalty,
                             .freq = sp->frequency_penalty, .presence = sp->presence_penalty,
                             .scope = scope[sp->profile], .last_n = sp->penalty_last_n};
}

static inline struct or_stage or_dry_stage(const struct nextok_sampling_params *sp)
{
    return (struct or_stage){.kind = OR_DRY, .mult = sp->dry_multiplier, .base = sp->dry_base,
                             .allowed_length = sp->dry_allowed_length,
                             .last_n = sp->dry_penalty_last_n, .brk_ids = sp->dry_breaker_ids,
                             .brk_off = sp->dry_breaker_off, .n_brk = sp->dry_n_breakers};
}

/* Processors that always come first, before any ordered stage. */
static inline void or_push_masks(const struct nextok_sampling_params *sp, struct or_stage *v, size_t *n)
{
    if (sp->n_logit_bias)
        or_push(v, n, (struct or_stage){.kind = OR_BIAS, .bias = sp->logit_bias, .n_bias = sp->n_logit_bias});
    if (sp->allowed_ids)
        or_push(v, n, (struct or_stage){.kind = OR_ALLOWED, .ids = sp->allowed_ids, .n_ids = sp->n_allowed});
    if (sp->n_banned)
        or_push(v, n, (struct or_stage){.kind = OR_BANNED, .ids = sp->banned_ids, .n_ids = sp->n_banned});
    if (sp->min_tokens > 0 && sp->n_eog)
        or_push(v, n, (struct or_stage){.kind = OR_MIN_TOKENS, .k = sp->min_tokens,
                                        .ids = sp->eog_ids, .n_ids = sp->n_eog});
    if (sp->no_repeat_ngram > 0)
        or_push(v, n, (struct or_stage){.kind = OR_NGRAM, .k = sp->no_repeat_ngram});
}

/* One llama.cpp-named stage (or nothing if it is disabled). */
static inline int or_push_llama(const struct nextok_sampling_params *sp, const char *name, size_t len,
                         struct or_stage *v, size_t *n)
{
    size_t mk = sp->min_keep;
#define OR_IS(s) (len == strlen(s) && strncmp(name, s, len) == 0)
    if (OR_IS("penalties")) {
        if (or_penalties_on(sp)) or_push(v, n, or_penalty_stage(sp));
    } else if (OR_IS("dry")) {
        if (sp->dry_multiplier != 0) or_push(v, n, or_dry_stage(sp));
    } else if (OR_IS("top_n_sigma")) {
        or_push(v, n, (struct or_stage){.kind = OR_SIGMA, .p = sp->top_n_sigma});
    } else if (OR_IS("top_k")) {
        or_push(v, n, (struct or_stage){.kind = OR_TOP_K, .k = sp->top_k, .ties = sp->top_k_ties});
    } else if (OR_IS("typ_p")) {
        or_push(v, n, (struct or_stage){.kind = OR_TYPICAL, .p = sp->typical_p, .min_keep = mk});
    } else if (OR_IS("top_p")) {
        or_push(v, n, (struct or_stage){.kind = OR_TOP_P, .p = sp->top_p, .ties = sp->top_k_ties, .min_keep = mk});
    } else if (OR_IS("min_p")) {
        or_push(v, n, (struct or_stage){.kind = OR_MIN_P, .p = sp->min_p, .min_keep = mk});
    } else if (OR_IS("xtc")) {
        or_push(v, n, (struct or_stage){.kind = OR_XTC, .prob = sp->xtc_probability,
                                        .threshold = sp->xtc_threshold, .min_keep = mk, .seed = sp->seed});
    } else if (OR_IS("temperature")) {
        or_push(v, n, (struct or_stage){.kind = OR_TEMP_EXT, .t = sp->temperature,
                                        .range = sp->dynatemp_range, .exponent = sp->dynatemp_exponent});
    } else {
        return -1;
    }
#undef OR_IS
    return 0;
}

/* vllm/hf filters after temperature, in the profile's order. */
static inline void or_push_filters(const struct nextok_sampling_params *sp, int hf, struct or_stage *v, size_t *n)
{
    size_t mk = sp->min_keep;
    struct or_stage min_p = {.kind = OR_MIN_P, .p = sp->min_p, .min_keep = mk};
    if (!hf) or_push(v, n, min_p);
    or_push(v, n, (struct or_stage){.kind = OR_TOP_K, .k = sp->top_k, .ties = sp->top_k_ties});
    or_push(v, n, (struct or_stage){.kind = OR_TOP_P, .p = sp->top_p, .ties = sp->top_k_ties, .min_keep = mk});
    if (hf) or_push(v, n, min_p);
    or_push(v, n, (struct or_stage){.kind = OR_TYPICAL, .p = sp->typical_p, .min_keep = mk});
    or_push(v, n, (struct or_stage){.kind = OR_EPSILON, .p = sp->epsilon_cutoff, .min_keep = mk});
    or_push(v, n, (struct or_stage){.kind = OR_ETA, .p = sp->eta_cutoff, .min_keep = mk});
    or_push(v, n, (struct or_stage){.kind = OR_SIGMA, .p = sp->top_n_sigma});
    or_push(v, n, (struct or_stage){.kind = OR_XTC, .prob = sp->xtc_probability,
                                    .threshold = sp->xtc_threshold, .min_keep = mk, .seed = sp->seed});
}

/*
 * The stage list of a profile. Disabled stages may be listed: each oracle
 * stage is a no-op at its disabled value, as the spec defines. Mirostat v2 is
 * modelled in its fresh state (mu = 2 tau, nothing accepted since); mirostat
 * v1 and unknown `samplers` names are not (returns -1).
 */
static inline int or_profile_stages(const struct nextok_sampling_params *sp, struct or_stage *v, size_t *n)
{
    *n = 0;
    if (sp->mirostat != 0 && sp->mirostat != 2) return -1;
    struct or_stage miro = {.kind = OR_MIROSTAT_V2, .mu = 2 * sp->mirostat_tau};
    or_push_masks(sp, v, n);
    if (sp->profile == NEXTOK_PROFILE_LLAMA && sp->mirostat) {
        /* llama.cpp: bias/masks -> temperature -> mirostat, nothing else */
        or_push(v, n, (struct or_stage){.kind = OR_TEMP, .t = sp->temperature});
        or_push(v, n, sp->temperature <= 0 ? (struct or_stage){.kind = OR_GREEDY} : miro);
        return 0;
    }
    if (sp->profile == NEXTOK_PROFILE_LLAMA) {
        const char *order = sp->samplers ? sp->samplers
            : "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature";
        while (*order) {
            size_t len = strcspn(order, ";");
            if (len && or_push_llama(sp, order, len, v, n) != 0) return -1;
            order += len + (order[len] == ';');
        }
    } else {
        if (or_penalties_on(sp)) or_push(v, n, or_penalty_stage(sp));
        if (sp->dry_multiplier != 0) or_push(v, n, or_dry_stage(sp));
        or_push(v, n, (struct or_stage){.kind = OR_TEMP, .t = sp->temperature});
        or_push_filters(sp, sp->profile == NEXTOK_PROFILE_HF, v, n);
    }
    int greedy = sp->selector == NEXTOK_SELECTOR_GREEDY || sp->temperature <= 0;
    if (greedy) or_push(v, n, (struct or_stage){.kind = OR_GREEDY});
    else or_push(v, n, sp->mirostat ? miro : (struct or_stage){.kind = OR_SOFTMAX});
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Test utilities shared by the distribution tests                           */
/* ------------------------------------------------------------------------ */

/* Deterministic generator for configurations (splitmix64): tests never use
 * the library's RNG to build their inputs. */
struct tu_gen { uint64_t s; };

static inline uint64_t tu_u64(struct tu_gen *g)
{
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline double tu_unif(struct tu_gen *g) { return (double)(tu_u64(g) >> 11) * 0x1p-53; }
static inline int32_t tu_int(struct tu_gen *g, int32_t n) { return (int32_t)(tu_u64(g) % (uint64_t)n); }
static inline int tu_chance(struct tu_gen *g, double p) { return tu_unif(g) < p; }
static inline double tu_range(struct tu_gen *g, double a, double b) { return a + (b - a) * tu_unif(g); }
static inline double tu_norm(struct tu_gen *g)
{
    double u = tu_unif(g), v = tu_unif(g);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

/* Work scale: NEXTOK_TEST_SCALE overrides; sanitizer builds run half. */
static inline double tu_scale(void)
{
    const char *e = getenv("NEXTOK_TEST_SCALE");
    if (e && atof(e) > 0) return atof(e);
#if defined(__SANITIZE_ADDRESS__)
    return 0.5;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 0.5;
#endif
#endif
    return 1.0;
}

static inline int tu_scaled(int n)
{
    int m = (int)(n * tu_scale() + 0.5);
    return m < 1 ? 1 : m;
}

#endif /* NEXTOK_TEST_ORACLE_H */
