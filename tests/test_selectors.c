/*
 * Selectors: greedy, categorical (dist), Gumbel-max, mirostat v1/v2.
 * Expected tokens are derived from the documented draws: the test computes
 * u = nextok_rng_uniform(...) itself and checks the chosen id against the
 * inverse CDF in id order (dist) or the Gumbel argmax (gumbel). Mirostat
 * values are worked out by hand (numbers in the comments).
 */
#include "nextok.h"
#include "harness.h"
#include "sample/builtin.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- helpers ------------------------------------------------------------------ */

#define CAP 64

struct arr {
    struct nextok_token_data d[CAP];
    struct nextok_token_data_array a;
};

static void arr_set(struct arr *x, const int32_t *ids, const float *logits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x->d[i] = (struct nextok_token_data){ids ? ids[i] : (int32_t)i, logits[i], 0.0f};
    x->a = (struct nextok_token_data_array){x->d, n, -1, false};
}

static void arr_probs(struct arr *x, const double *p, size_t n)
{
    float l[CAP];
    for (size_t i = 0; i < n; i++) l[i] = (float)log(p[i]);
    arr_set(x, NULL, l, n);
}

static int32_t picked(const struct nextok_token_data_array *a)
{
    if (a->selected < 0 || (size_t)a->selected >= a->size) return -1;
    return a->data[a->selected].id;
}

/* Apply at `step`; returns the chosen id (-1 on failure). */
static int32_t draw(struct nextok_sampler *s, struct arr *x, uint64_t step)
{
    if (nextok_sampler_apply(s, &x->a, step) != NEXTOK_OK) return -1;
    return picked(&x->a);
}

static bool has_id(const struct nextok_token_data_array *a, int32_t id)
{
    for (size_t i = 0; i < a->size; i++)
        if (a->data[i].id == id) return true;
    return false;
}

static double p_of(const struct nextok_token_data_array *a, int32_t id)
{
    for (size_t i = 0; i < a->size; i++)
        if (a->data[i].id == id) return a->data[i].p;
    return -1.0;
}

static uint64_t rng_state = 0x243f6a8885a308d3u;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void shuffle(struct nextok_token_data *d, size_t n)
{
    for (size_t i = n; i-- > 1;) {
        size_t j = rnd() % (i + 1);
        struct nextok_token_data t = d[i];
        d[i] = d[j];
        d[j] = t;
    }
}

static int cmp_by_id(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

/* The documented categorical draw, written independently: sort a copy by id,
 * weights exp(l - m), first running sum > u * Z. */
static int32_t ref_dist(const struct nextok_token_data *in, size_t n, uint64_t seed, uint64_t step)
{
    static struct nextok_token_data c[8192];
    memcpy(c, in, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_by_id);
    double m = -INFINITY, z = 0.0, acc = 0.0;
    for (size_t i = 0; i < n; i++) m = c[i].logit > m ? c[i].logit : m;
    for (size_t i = 0; i < n; i++) z += exp((double)c[i].logit - m);
    const double target = nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, 0) * z;
    for (size_t i = 0; i < n; i++) {
        acc += exp((double)c[i].logit - m);
        if (acc > target) return c[i].id;
    }
    return c[n - 1].id;
}

/* The documented Gumbel-max choice, written independently. */
static int32_t ref_gumbel(const struct nextok_token_data *in, size_t n, uint64_t seed,
                          uint64_t step)
{
    int32_t best = -1;
    double bv = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const double u = nextok_rng_uniform_open(seed, step, NEXTOK_RNG_GUMBEL, (uint32_t)in[i].id);
        const double v = (double)in[i].logit - log(-log(u));
        if (v > bv || (v == bv && in[i].id < best)) {
            bv = v;
            best = in[i].id;
        }
    }
    return best;
}

/* The documented mirostat update, for the expected values. */
static double mu_after(double mu, double eta, double tau, double p)
{
    return mu - eta * (-log2(p) - tau);
}

static char dummy_sampler;

#define CHECK_REJECT(expr, want_status, param)                                          \
    do {                                                                                \
        struct nextok_sampler *s_ = (struct nextok_sampler *)(void *)&dummy_sampler;    \
        struct nextok_error e_ = {NEXTOK_OK, {0}};                                      \
        nextok_status rc_ = (expr);                                                     \
        CHECK_MSG(rc_ == (want_status), "%s returned %s", #expr, nextok_status_name(rc_)); \
        CHECK_MSG(e_.status == (want_status), "err.status %s", nextok_status_name(e_.status)); \
        CHECK_MSG(strstr(e_.msg, param) != NULL, "msg \"%s\" does not name %s", e_.msg, param); \
        CHECK(s_ == NULL);                                                              \
    } while (0)

/* ---- greedy --------------------------------------------------------------------- */

TEST(greedy_ties_lower_id)
{
    const int32_t ids[] = {9, 4, 2, 7};
    const float l[] = {1, 5, 5, 2};
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_greedy(&s, NULL));
    struct arr x;
    arr_set(&x, ids, l, 4);
    CHECK_EQ_INT(draw(s, &x, 0), 2);
    CHECK_EQ_INT(x.a.size, 1);
    CHECK_EQ_INT(x.a.selected, 0);
    CHECK(x.a.data[0].p == 1.0f && x.a.data[0].logit == 5.0f && x.a.sorted);
    arr_set(&x, ids, l, 1);
    CHECK_EQ_INT(draw(s, &x, 5), 9);
    nextok_sampler_free(s);
}

/* ---- dist ----------------------------------------------------------------------- */

TEST(dist_inverse_cdf_known_u)
{
    /* Four equal logits, ids 7 3 100 42: in id order 3 7 42 100 with
     * cumulative 1 2 3 4 of Z = 4, so the token is ids[floor(4u)]. */
    const int32_t ids[] = {7, 3, 100, 42}, by_id[] = {3, 7, 42, 100};
    const float l[] = {0.5f, 0.5f, 0.5f, 0.5f};
    const uint64_t seed = 1234;
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_dist(&s, seed, NULL));
    int seen[4] = {0};
    for (uint64_t step = 0; step < 200; step++) {
        const double u = nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, 0);
        const int q = (int)(4.0 * u);
        struct arr x;
        arr_set(&x, ids, l, 4);
        CHECK_EQ_INT(draw(s, &x, step), by_id[q]);
        seen[q]++;
        for (size_t i = 0; i < 4; i++) CHECK(x.a.data[i].p == 0.25f);
        CHECK_EQ_INT(x.a.size, 4);
        CHECK(x.a.data[0].id == 7 && x.a.data[3].id == 42); /* array not reordered */
    }
    for (int q = 0; q < 4; q++) CHECK(seen[q] > 20);

    /* Weights 1 2 3 4 (logits ln w) for ids 0..3, Z = 10: token 0 iff
     * 10u < 1, 1 iff 10u < 3, 2 iff 10u < 6, else 3 (steps whose 10u falls
     * within 1e-9 of a boundary are skipped: rounding may go either way). */
    const double w[] = {1, 2, 3, 4}, cum[] = {1, 3, 6};
    int found[4] = {0};
    for (uint64_t step = 0; step < 400; step++) {
        const double tu = 10.0 * nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, 0);
        int want = 0;
        bool edge = false;
        for (int j = 0; j < 3; j++) {
            want += tu >= cum[j];
            edge |= fabs(tu - cum[j]) < 1e-9;
        }
        if (edge) continue;
        struct arr x;
        arr_probs(&x, w, 4);
        CHECK_EQ_INT(draw(s, &x, step), want);
        CHECK_NEAR(x.a.data[3].p, 0.4, 1e-6);
        found[want]++;
    }
    for (int q = 0; q < 4; q++) CHECK(found[q] > 0);
    nextok_sampler_free(s);
}

TEST(dist_deterministic_and_varies)
{
    float l[16];
    for (size_t i = 0; i < 16; i++) l[i] = 0.0f;
    struct nextok_sampler *s, *t;
    CHECK_OK(nextok_sampler_init_dist(&s, 42, NULL));
    CHECK_OK(nextok_sampler_init_dist(&t, 43, NULL));
    bool seen[16] = {false};
    int distinct = 0, differ = 0;
    for (uint64_t step = 0; step < 100; step++) {
        struct arr x, y, z;
        arr_set(&x, NULL, l, 16);
        arr_set(&y, NULL, l, 16);
        arr_set(&z, NULL, l, 16);
        const int32_t a = draw(s, &x, step), b = draw(s, &y, step), c = draw(t, &z, step);
        CHECK(a >= 0 && a == b); /* same seed and step: same token, no hidden state */
        if (a >= 0 && !seen[a]) {
            seen[a] = true;
            distinct++;
        }
        differ += a != c;
    }
    CHECK(distinct >= 12); /* draws vary with the step */
    CHECK(differ >= 70);   /* and with the seed (15/16 expected) */
    /* steps past 2^32 use the high word of the counter */
    struct arr x;
    arr_set(&x, NULL, l, 16);
    const int32_t hi = draw(s, &x, UINT64_C(1) << 40);
    const double u_hi = nextok_rng_uniform(42, UINT64_C(1) << 40, NEXTOK_RNG_DIST, 0);
    CHECK_EQ_INT(hi, (int32_t)(16.0 * u_hi));
    nextok_sampler_free(s);
    nextok_sampler_free(t);
}

/* Large arrays exercise the radix sort; the answer must not depend on the
 * array's order and must equal the reference inverse CDF. */
TEST(dist_order_independent_large)
{
    static struct nextok_token_data base[5000], work[5000];
    const uint32_t id_range[] = {5000, 1u << 20, 0x7fffffffu}; /* 1, 2 and 3 radix passes */
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_dist(&s, 77, NULL));
    for (size_t r = 0; r < 3; r++) {
        const size_t n = 1000 + 2000 * r;
        for (size_t i = 0; i < n; i++) {
            /* unique ids: i spread over the range, plus jitter below the stride */
            const uint32_t stride = id_range[r] / (uint32_t)n;
            const uint32_t id = (uint32_t)i * stride + (stride > 1 ? rnd() % stride : 0);
            base[i] = (struct nextok_token_data){(int32_t)id, (float)(rnd() % 1000) / 250.0f, 0};
        }
        for (uint64_t step = 0; step < 20; step++) {
            const int32_t want = ref_dist(base, n, 77, step);
            for (int order = 0; order < 3; order++) {
                memcpy(work, base, n * sizeof *work);
                if (order == 1) shuffle(work, n);
                if (order == 2) qsort(work, n, sizeof *work, cmp_by_id);
                struct nextok_token_data_array a = {work, n, -1, false};
                CHECK_OK(nextok_sampler_apply(s, &a, step));
                CHECK_MSG(picked(&a) == want, "range %zu step %d order %d: %d vs %d", r,
                          (int)step, order, (int)picked(&a), (int)want);
            }
        }
    }
    nextok_sampler_free(s);
}

TEST(dist_frequency_sanity)
{
    static const double P[] = {0.5, 0.3, 0.2};
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_dist(&s, 2024, NULL));
    int count[3] = {0};
    const int N = 30000;
    for (int step = 0; step < N; step++) {
        struct arr x;
        arr_probs(&x, P, 3);
        const int32_t t = draw(s, &x, (uint64_t)step);
        if (t >= 0 && t < 3) count[t]++;
    }
    for (int i = 0; i < 3; i++) /* sd <= 0.0029: 5 sd */
        CHECK_NEAR((double)count[i] / N, P[i], 0.015);
    nextok_sampler_free(s);
}

TEST(dist_default_seed_and_clone)
{
    /* NEXTOK_DEFAULT_SEED is resolved once at construction; a clone keeps it */
    float l[16] = {0};
    struct nextok_sampler *s, *c;
    CHECK_OK(nextok_sampler_init_dist(&s, NEXTOK_DEFAULT_SEED, NULL));
    CHECK_OK(nextok_sampler_clone(s, &c));
    int distinct = 0;
    bool seen[16] = {false};
    for (uint64_t step = 0; step < 40; step++) {
        struct arr x, y;
        arr_set(&x, NULL, l, 16);
        arr_set(&y, NULL, l, 16);
        const int32_t a = draw(s, &x, step);
        CHECK(a >= 0 && a == draw(c, &y, step));
        if (a >= 0 && !seen[a]) {
            seen[a] = true;
            distinct++;
        }
    }
    CHECK(distinct >= 8);
    nextok_sampler_free(s);
    nextok_sampler_free(c);
}

/* ---- gumbel --------------------------------------------------------------------- */

TEST(gumbel_reference_and_order)
{
    struct nextok_token_data base[50], work[50];
    for (size_t i = 0; i < 50; i++)
        base[i] = (struct nextok_token_data){(int32_t)(i * 37 + 5),
                                             (float)(rnd() % 100) / 40.0f, 0};
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_gumbel(&s, 99, NULL));
    int distinct = 0;
    bool seen[50] = {false};
    for (uint64_t step = 0; step < 100; step++) {
        const int32_t want = ref_gumbel(base, 50, 99, step);
        for (int order = 0; order < 2; order++) {
            memcpy(work, base, sizeof work);
            if (order) shuffle(work, 50);
            struct nextok_token_data_array a = {work, 50, -1, false};
            CHECK_OK(nextok_sampler_apply(s, &a, step));
            CHECK_EQ_INT(picked(&a), want);
            CHECK_EQ_INT(a.size, 50);
            double sum = 0.0;
            for (size_t i = 0; i < 50; i++) sum += a.data[i].p;
            CHECK_NEAR(sum, 1.0, 1e-5); /* p = softmax */
        }
        if (want >= 5 && !seen[(want - 5) / 37]) {
            seen[(want - 5) / 37] = true;
            distinct++;
        }
    }
    CHECK(distinct >= 10);
    nextok_sampler_free(s);
}

TEST(gumbel_frequency_sanity)
{
    static const double P[] = {0.5, 0.3, 0.2};
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_gumbel(&s, 5, NULL));
    int count[3] = {0};
    const int N = 30000;
    for (int step = 0; step < N; step++) {
        struct arr x;
        arr_probs(&x, P, 3);
        const int32_t t = draw(s, &x, (uint64_t)step);
        if (t >= 0 && t < 3) count[t]++;
        if (step == 0) {
            for (int i = 0; i < 3; i++) CHECK_NEAR(p_of(&x.a, i), P[i], 1e-6);
        }
    }
    for (int i = 0; i < 3; i++) CHECK_NEAR((double)count[i] / N, P[i], 0.015);
    nextok_sampler_free(s);
}

/* ---- mirostat v2 ---------------------------------------------------------------- */

static const double Z4[] = {0.5, 0.25, 0.125, 0.125}; /* surprises 1 2 3 3 bits */

TEST(mirostat_v2_hand)
{
    /* tau 1.25 -> mu 2.5: keep surprise <= 2.5, ids 0 and 1 (1 and 2 bits;
     * 3 bits is out), renormalised 2/3 1/3; token 0 iff u * 1.5 < 1. */
    const uint64_t seed = 11;
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_mirostat_v2(&s, seed, 1.25f, 0.1f, NULL));
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.5, 0);
    int zeros = 0;
    for (uint64_t step = 0; step < 30; step++) {
        struct arr x;
        arr_probs(&x, Z4, 4);
        const int32_t t = draw(s, &x, step);
        const double u = nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, 0);
        CHECK_EQ_INT(t, u * 1.5 < 1.0 ? 0 : 1);
        zeros += t == 0;
        CHECK_EQ_INT(x.a.size, 2);
        CHECK_NEAR(p_of(&x.a, 0), 2.0 / 3, 1e-6);
        CHECK_NEAR(p_of(&x.a, 1), 1.0 / 3, 1e-6);
    }
    CHECK(zeros > 5 && zeros < 25);
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.5, 0); /* apply never moves mu */

    /* accept(0): s = log2(3/2) = 0.58496, mu = 2.5 - 0.1 (0.58496 - 1.25) = 2.566504 */
    CHECK_OK(nextok_sampler_accept(s, 0));
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.5665037, 1e-6);
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), mu_after(2.5, 0.1, 1.25, 2.0 / 3), 1e-6);
    /* a token outside the last distribution leaves mu alone */
    CHECK_OK(nextok_sampler_accept(s, 3));
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.5665037, 1e-6);

    nextok_sampler_reset(s);
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.5, 0);
    CHECK_OK(nextok_sampler_accept(s, 0)); /* cache cleared by reset */
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.5, 0);

    /* accept(1): s = log2 3 = 1.58496, mu = 2.5 - 0.1 (1.58496 - 1.25) = 2.466504 */
    struct arr x;
    arr_probs(&x, Z4, 4);
    CHECK(draw(s, &x, 0) >= 0);
    CHECK_OK(nextok_sampler_accept(s, 1));
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.4665037, 1e-6);
    nextok_sampler_free(s);

    /* tau 0.25 -> mu 0.5: even the top token's surprise (1 bit) exceeds mu;
     * it stays, alone */
    CHECK_OK(nextok_sampler_init_mirostat_v2(&s, seed, 0.25f, 0.1f, NULL));
    arr_probs(&x, Z4, 4);
    CHECK_EQ_INT(draw(s, &x, 0), 0);
    CHECK(x.a.size == 1 && x.a.data[0].p == 1.0f);
    CHECK_OK(nextok_sampler_accept(s, 0)); /* s = 0: mu = 0.5 - 0.1 (0 - 0.25) */
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 0.525, 1e-7);
    nextok_sampler_free(s);
}

/* ---- mirostat v1 ---------------------------------------------------------------- */

/* Keep count of v1 for Z4 (n_vocab 4, m 100): t = ln 2, ln 1.5, ln 4/3;
 * b = ln 2, ln 2, 0; s_hat = 0.761500 / 0.727616 = 1.046569, eps = 0.046569,
 * 4^-eps = 0.93748: k = (eps 2^mu / 0.062522)^(1 / 1.046569):
 *   tau 0.5 (mu 1): 1.4636 -> 1;  tau 1 (mu 2): 2.8382 -> 2;
 *   tau 1.5 (mu 3): 5.5041 -> 5, clamped to the 4 candidates. */
static size_t v1_size(int32_t n_vocab, float tau, int32_t m, int32_t *token)
{
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_mirostat(&s, n_vocab, 3, tau, 0.1f, m, NULL));
    struct arr x;
    arr_probs(&x, Z4, 4);
    if (s) *token = draw(s, &x, 0);
    nextok_sampler_free(s);
    /* the kept ones are the top of the sorted order */
    for (size_t i = 0; i < x.a.size; i++) CHECK(has_id(&x.a, (int32_t)i));
    return x.a.size;
}

TEST(mirostat_v1_hand)
{
    int32_t t;
    CHECK_EQ_INT(v1_size(4, 0.5f, 100, &t), 1);
    CHECK_EQ_INT(t, 0);
    CHECK_EQ_INT(v1_size(4, 1.0f, 100, &t), 2);
    CHECK_EQ_INT(v1_size(4, 1.5f, 100, &t), 4);
    /* n_vocab 32000: 1 - 32000^-eps = 0.38297; tau 2: k = 1.888 -> 1;
     * tau 3: k = 7.10 -> clamped to 4 */
    CHECK_EQ_INT(v1_size(32000, 2.0f, 100, &t), 1);
    CHECK_EQ_INT(v1_size(32000, 3.0f, 100, &t), 4);
    /* m = 2: one pair, s_hat = ln2 / ln2 = 1 (eps ~ 0, ratio -> 1/ln 4):
     * tau 1: k = 4 / ln 4 = 2.885 -> 2 */
    CHECK_EQ_INT(v1_size(4, 1.0f, 2, &t), 2);
    /* m = 1: no pair to estimate from -> k = 1 */
    CHECK_EQ_INT(v1_size(4, 3.0f, 1, &t), 1);
}

TEST(mirostat_v1_state)
{
    const uint64_t seed = 5;
    struct nextok_sampler *s, *c;
    CHECK_OK(nextok_sampler_init_mirostat(&s, 4, seed, 1.0f, 0.25f, 100, NULL));
    struct arr x;
    arr_probs(&x, Z4, 4);
    const int32_t t = draw(s, &x, 9);
    CHECK_EQ_INT(x.a.size, 2); /* k = 2 as above: p 2/3 1/3 */
    CHECK_EQ_INT(t, nextok_rng_uniform(seed, 9, NEXTOK_RNG_DIST, 0) * 1.5 < 1.0 ? 0 : 1);
    arr_probs(&x, Z4, 4);
    CHECK_EQ_INT(draw(s, &x, 9), t); /* same step, same state: same token */
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.0, 0);

    CHECK_OK(nextok_sampler_clone(s, &c)); /* the clone carries the cached distribution */
    CHECK_OK(nextok_sampler_accept(s, 1));
    CHECK_OK(nextok_sampler_accept(c, 1));
    /* s = log2 3: mu = 2 - 0.25 (1.58496 - 1) = 1.853759 */
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 1.8537594, 1e-6);
    CHECK_NEAR(nextok_sampler_mirostat_mu(c), 1.8537594, 1e-6);
    CHECK_OK(nextok_sampler_accept(s, 2)); /* id 2 was cut by k = 2 */
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 1.8537594, 1e-6);
    CHECK_OK(nextok_sampler_accept(c, 0)); /* the two evolve independently */
    CHECK_NEAR(nextok_sampler_mirostat_mu(c), mu_after(1.8537594, 0.25, 1.0, 2.0 / 3), 1e-6);
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 1.8537594, 1e-6);

    nextok_sampler_reset(s);
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.0, 0);
    CHECK_OK(nextok_sampler_accept(s, 0));
    CHECK_NEAR(nextok_sampler_mirostat_mu(s), 2.0, 0);
    nextok_sampler_free(s);
    nextok_sampler_free(c);
}

/* Without a fixed mu the controller drives the observed surprise towards tau. */
TEST(mirostat_converges_to_tau)
{
    float l[CAP];
    for (size_t i = 0; i < CAP; i++) l[i] = -1.1f * logf((float)(i + 1)); /* Zipf-like */
    for (int v = 1; v <= 2; v++) {
        struct nextok_sampler *s;
        if (v == 1) CHECK_OK(nextok_sampler_init_mirostat(&s, CAP, 8, 3.0f, 0.1f, 100, NULL));
        else CHECK_OK(nextok_sampler_init_mirostat_v2(&s, 8, 3.0f, 0.1f, NULL));
        double sum = 0.0;
        int n = 0;
        for (uint64_t step = 0; step < 3000; step++) {
            struct arr x;
            arr_set(&x, NULL, l, CAP);
            const int32_t t = draw(s, &x, step);
            CHECK(t >= 0);
            if (step >= 1000 && t >= 0) {
                sum += -log2(p_of(&x.a, t));
                n++;
            }
            CHECK_OK(nextok_sampler_accept(s, t < 0 ? 0 : t));
        }
        /* the mean observed surprise lands near tau (3 bits) */
        CHECK_MSG(fabs(sum / n - 3.0) < 0.1, "v%d: mean surprise %g", v, sum / n);
        nextok_sampler_free(s);
    }
}

/* ---- constructors and names ------------------------------------------------------ */

TEST(selector_rejections)
{
    const float nan = NAN, inf = INFINITY;
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 0, 1, 5, 0.1f, 100, &e_), NEXTOK_ERR_VOCAB_SIZE,
                 "n_vocab");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, -3, 1, 5, 0.1f, 100, &e_),
                 NEXTOK_ERR_VOCAB_SIZE, "n_vocab");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 10, 1, -1, 0.1f, 100, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_tau");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 10, 1, nan, 0.1f, 100, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_tau");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 10, 1, inf, 0.1f, 100, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_tau");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 10, 1, 5, -0.1f, 100, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_eta");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 10, 1, 5, nan, 100, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_eta");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 10, 1, 5, inf, 100, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_eta");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 10, 1, 5, 0.1f, 0, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_m");
    CHECK_REJECT(nextok_sampler_init_mirostat(&s_, 10, 1, 5, 0.1f, -4, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_m");
    CHECK_REJECT(nextok_sampler_init_mirostat_v2(&s_, 1, -0.5f, 0.1f, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_tau");
    CHECK_REJECT(nextok_sampler_init_mirostat_v2(&s_, 1, nan, 0.1f, &e_),
                 NEXTOK_ERR_INVALID_ARG, "mirostat_tau");
    CHECK_REJECT(nextok_sampler_init_mirostat_v2(&s_, 1, 5, -1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "mirostat_eta");
    CHECK_REJECT(nextok_sampler_init_mirostat_v2(&s_, 1, 5, nan, &e_), NEXTOK_ERR_INVALID_ARG,
                 "mirostat_eta");
    struct nextok_error e = {NEXTOK_OK, {0}};
    CHECK(nextok_sampler_init_greedy(NULL, &e) == NEXTOK_ERR_INVALID_ARG && strstr(e.msg, "out"));
    CHECK(nextok_sampler_init_dist(NULL, 1, NULL) == NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_sampler_init_gumbel(NULL, 1, NULL) == NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_sampler_init_mirostat(NULL, 10, 1, 5, 0.1f, 100, NULL) == NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_sampler_init_mirostat_v2(NULL, 1, 5, 0.1f, NULL) == NEXTOK_ERR_INVALID_ARG);
    /* closed ends are valid */
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_mirostat(&s, 1, 1, 0.0f, 0.0f, 1, NULL));
    nextok_sampler_free(s);
    CHECK_OK(nextok_sampler_init_mirostat_v2(&s, NEXTOK_DEFAULT_SEED, 0.0f, 0.0f, NULL));
    nextok_sampler_free(s);
}

TEST(selector_names_and_mu_query)
{
    CHECK(strcmp(nextok__iface_greedy.name(NULL), "greedy") == 0);
    CHECK(strcmp(nextok__iface_dist.name(NULL), "dist") == 0);
    CHECK(strcmp(nextok__iface_gumbel.name(NULL), "gumbel") == 0);
    CHECK(strcmp(nextok__iface_mirostat.name(NULL), "mirostat") == 0);
    CHECK(strcmp(nextok__iface_mirostat_v2.name(NULL), "mirostat-v2") == 0);
    struct nextok_sampler *s[5];
    CHECK_OK(nextok_sampler_init_greedy(&s[0], NULL));
    CHECK_OK(nextok_sampler_init_dist(&s[1], 1, NULL));
    CHECK_OK(nextok_sampler_init_gumbel(&s[2], 1, NULL));
    CHECK_OK(nextok_sampler_init_mirostat(&s[3], 100, 1, 2.5f, 0.1f, 100, NULL));
    CHECK_OK(nextok_sampler_init_mirostat_v2(&s[4], 1, 4.0f, 0.1f, NULL));
    static const char *names[] = {"greedy", "dist", "gumbel", "mirostat", "mirostat-v2"};
    for (size_t i = 0; i < 5; i++) {
        CHECK(strcmp(nextok_sampler_name(s[i]), names[i]) == 0);
        struct nextok_sampler *c = NULL;
        CHECK_OK(nextok_sampler_clone(s[i], &c)); /* a fresh clone draws the same */
        const float l[] = {0.3f, 1.2f, -0.4f, 0.9f, 1.1f};
        struct arr x, y;
        arr_set(&x, NULL, l, 5);
        arr_set(&y, NULL, l, 5);
        CHECK_EQ_INT(draw(s[i], &x, 17), c ? draw(c, &y, 17) : -2);
        nextok_sampler_free(c);
    }
    CHECK(isnan(nextok_sampler_mirostat_mu(s[1])));
    CHECK(isnan(nextok_sampler_mirostat_mu(NULL)));
    CHECK_NEAR(nextok_sampler_mirostat_mu(s[3]), 5.0, 0);
    CHECK_NEAR(nextok_sampler_mirostat_mu(s[4]), 8.0, 0);
    for (size_t i = 0; i < 5; i++) nextok_sampler_free(s[i]);
}

/* apply() rejects NaN and drops -inf before a selector sees the row. */
TEST(selectors_see_prepared_input)
{
    const float l[] = {-INFINITY, 1.0f, -INFINITY, 0.5f};
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_dist(&s, 3, NULL));
    for (uint64_t step = 0; step < 20; step++) {
        struct arr x;
        arr_set(&x, NULL, l, 4);
        const int32_t t = draw(s, &x, step);
        CHECK(t == 1 || t == 3);
        CHECK_EQ_INT(x.a.size, 2);
    }
    const float n[] = {NAN, 1.0f};
    struct arr x;
    arr_set(&x, NULL, n, 2);
    CHECK(nextok_sampler_apply(s, &x.a, 0) == NEXTOK_ERR_NAN);
    nextok_sampler_free(s);
}

int main(void)
{
    RUN(greedy_ties_lower_id);
    RUN(dist_inverse_cdf_known_u);
    RUN(dist_deterministic_and_varies);
    RUN(dist_order_independent_large);
    RUN(dist_frequency_sanity);
    RUN(dist_default_seed_and_clone);
    RUN(gumbel_reference_and_order);
    RUN(gumbel_frequency_sanity);
    RUN(mirostat_v2_hand);
    RUN(mirostat_v1_hand);
    RUN(mirostat_v1_state);
    RUN(mirostat_converges_to_tau);
    RUN(selector_rejections);
    RUN(selector_names_and_mu_query);
    RUN(selectors_see_prepared_input);
    return harness_done();
}
