/*
 * test_rng: the counter-based RNG every random draw in nextok is made of.
 *
 *  - Philox4x32-10 known-answer vectors (Random123's kat_vectors) for the
 *    library's block function and for oracle.h's independent one;
 *  - nextok_rng_uniform / _open follow the documented key/counter layout and
 *    53-bit construction bit for bit, and stay in [0,1) / (0,1);
 *  - 10^6 uniforms (over steps, and over indices) pass a chi-square test on
 *    1000 equal bins and a Kolmogorov-Smirnov test, both failing below
 *    p = 1e-6 (false-alarm rate 1e-6 per test; seeds are fixed);
 *  - streams for different purposes, seeds and steps (including their high
 *    32 bits) are different and uncorrelated.
 */
#include <stdint.h>

#include "harness.h"
#include "nextok.h"
#include "oracle.h"

#define P_FAIL 1e-6

struct kat { uint32_t ctr[4], key[2], out[4]; };

static const struct kat kats[3] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(philox_known_answers)
{
    for (int i = 0; i < 3; i++) {
        uint32_t lib[4] = {0}, ora[4] = {0};
        nextok_philox4x32_10(kats[i].ctr, kats[i].key, lib);
        or_philox(kats[i].ctr, kats[i].key, ora);
        for (int j = 0; j < 4; j++) {
            CHECK_MSG(lib[j] == kats[i].out[j], "kat %d word %d: library %08x want %08x", i, j,
                      (unsigned)lib[j], (unsigned)kats[i].out[j]);
            CHECK_MSG(ora[j] == kats[i].out[j], "kat %d word %d: oracle %08x want %08x", i, j,
                      (unsigned)ora[j], (unsigned)kats[i].out[j]);
        }
    }
}

/* The documented construction, from the (KAT-checked) block function. */
static double doc_uniform(uint64_t seed, uint64_t step, uint32_t purpose, uint32_t index, int open)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {index, purpose, (uint32_t)step, (uint32_t)(step >> 32)};
    uint32_t o[4];
    nextok_philox4x32_10(ctr, key, o);
    uint64_t k = ((uint64_t)o[0] << 21) ^ (o[1] >> 11);
    return open ? ((double)(k >> 1) + 0.5) * 0x1p-52 : (double)k * 0x1p-53;
}

TEST(uniform_layout_bit_exact)
{
    struct tu_gen g = {2024};
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t seed = tu_u64(&g), step = tu_u64(&g) >> tu_int(&g, 64);
        uint32_t purpose = (uint32_t)tu_int(&g, 4) + (i & 1 ? 0 : 0x100), index = (uint32_t)tu_u64(&g);
        double u = nextok_rng_uniform(seed, step, purpose, index);
        double uo = nextok_rng_uniform_open(seed, step, purpose, index);
        bad += u != doc_uniform(seed, step, purpose, index, 0);
        bad += uo != doc_uniform(seed, step, purpose, index, 1);
        bad += u != or_uniform(seed, step, purpose, index);
        bad += !(u >= 0 && u < 1) + !(uo > 0 && uo < 1);
        /* open = the closed draw with its lowest bit dropped, moved to the cell centre */
        bad += fabs(uo - u) > 0x1p-53;
    }
    CHECK_EQ_INT(bad, 0);
    /* extremes of the grid: the largest 52-bit k maps strictly below 1 */
    CHECK(nextok_rng_uniform_open(0, 0, 0, 0) > 0);
    CHECK((((double)((UINT64_C(1) << 52) - 1) + 0.5) * 0x1p-52) < 1.0);
    CHECK((((double)((UINT64_C(1) << 53) - 1) + 0.5) * 0x1p-53) == 1.0); /* why 53 bits would fail */
}

static double ks_pvalue(double d, double n)
{
    /* Kolmogorov distribution, with Stephens' small-sample correction */
    double sn = sqrt(n), lam = (sn + 0.12 + 0.11 / sn) * d, sum = 0;
    for (int k = 1; k <= 100; k++) sum += (k & 1 ? 2.0 : -2.0) * exp(-2.0 * k * k * lam * lam);
    return sum < 0 ? 0 : sum > 1 ? 1 : sum;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* 10^6 draws along steps (by_index = 0) or along indices (1). */
static void uniformity(const char *name, int by_index, uint64_t seed, uint32_t purpose)
{
    const int n = 1000000, bins = 1000;
    double *u = malloc((size_t)n * sizeof *u);
    long *count = calloc((size_t)bins, sizeof *count);
    for (int i = 0; i < n; i++) {
        u[i] = by_index ? nextok_rng_uniform(seed, 7, purpose, (uint32_t)i)
                        : nextok_rng_uniform(seed, (uint64_t)i, purpose, 0);
        count[(int)(u[i] * bins)]++;
    }
    double e = (double)n / bins, chi = 0;
    for (int b = 0; b < bins; b++) chi += (count[b] - e) * (count[b] - e) / e;
    double p_chi = or_chi2_sf(chi, bins - 1);
    qsort(u, (size_t)n, sizeof *u, cmp_double);
    double d = 0;
    for (int i = 0; i < n; i++) {
        double lo = u[i] - (double)i / n, hi = (double)(i + 1) / n - u[i];
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    double p_ks = ks_pvalue(d, n);
    printf("  %-26s chi2 %.1f (df 999) p %.3g   KS D %.2e p %.3g\n", name, chi, p_chi, d, p_ks);
    CHECK_MSG(p_chi >= P_FAIL, "%s: chi2 %.1f p %.3g", name, chi, p_chi);
    CHECK_MSG(p_ks >= P_FAIL, "%s: KS D %.3g p %.3g", name, d, p_ks);
    free(u);
    free(count);
}

TEST(uniform_over_steps) { uniformity("dist purpose, over steps", 0, 42, NEXTOK_RNG_DIST); }
TEST(uniform_over_indices) { uniformity("gumbel purpose, over ids", 1, 0xdeadbeefcafef00dull, NEXTOK_RNG_GUMBEL); }

/* Pearson correlation of two streams over n steps. */
static double correlation(uint64_t s1, uint32_t p1, uint64_t off1, uint64_t s2, uint32_t p2, uint64_t off2, int n)
{
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double x = nextok_rng_uniform(s1, (uint64_t)i + off1, p1, 0);
        double y = nextok_rng_uniform(s2, (uint64_t)i + off2, p2, 0);
        sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
    }
    double cov = sxy / n - (sx / n) * (sy / n);
    return cov / sqrt((sxx / n - (sx / n) * (sx / n)) * (syy / n - (sy / n) * (sy / n)));
}

TEST(streams_independent)
{
    const int n = 200000;
    /* |r| * sqrt(n) is ~N(0,1): 5 is a 6e-7 two-sided false alarm */
    const double lim = 5.0 / sqrt((double)n);
    double r1 = correlation(5, NEXTOK_RNG_DIST, 0, 5, NEXTOK_RNG_XTC, 0, n);
    double r2 = correlation(5, NEXTOK_RNG_DIST, 0, 6, NEXTOK_RNG_DIST, 0, n);
    double r3 = correlation(5, NEXTOK_RNG_DIST, 0, 5, NEXTOK_RNG_DIST, 1, n); /* lag 1 */
    double r4 = correlation(5, NEXTOK_RNG_DIST, 0, 5 + (UINT64_C(1) << 32), NEXTOK_RNG_DIST, 0, n);
    double r5 = correlation(5, NEXTOK_RNG_DIST, 0, 5, NEXTOK_RNG_DIST, UINT64_C(1) << 32, n);
    printf("  correlations: purpose %.2e seed %.2e lag %.2e seed-hi %.2e step-hi %.2e (limit %.2e)\n",
           r1, r2, r3, r4, r5, lim);
    CHECK(fabs(r1) < lim);
    CHECK(fabs(r2) < lim);
    CHECK(fabs(r3) < lim);
    CHECK(fabs(r4) < lim);
    CHECK(fabs(r5) < lim);
}

TEST(every_key_and_counter_word_matters)
{
    const uint64_t seed = 0x0123456789abcdefull, step = 0x0000000500000007ull;
    const double base = nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, 3);
    CHECK(nextok_rng_uniform(seed ^ 1, step, NEXTOK_RNG_DIST, 3) != base);
    CHECK(nextok_rng_uniform(seed ^ (UINT64_C(1) << 40), step, NEXTOK_RNG_DIST, 3) != base);
    CHECK(nextok_rng_uniform(seed, step ^ 1, NEXTOK_RNG_DIST, 3) != base);
    CHECK(nextok_rng_uniform(seed, step ^ (UINT64_C(1) << 33), NEXTOK_RNG_DIST, 3) != base);
    CHECK(nextok_rng_uniform(seed, step, NEXTOK_RNG_GUMBEL, 3) != base);
    CHECK(nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, 4) != base);
    /* a pure function: same arguments, same value */
    CHECK(nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, 3) == base);
}

int main(void)
{
    RUN(philox_known_answers);
    RUN(uniform_layout_bit_exact);
    RUN(uniform_over_steps);
    RUN(uniform_over_indices);
    RUN(streams_independent);
    RUN(every_key_and_counter_word_matters);
    return harness_done();
}
