/*
 * Every SIMD kernel against the scalar reference (src/sample/arch/kernels_ref.c)
 * on random and adversarial rows: ties, ±inf, NaN, denormals, ±0, all-equal,
 * lengths that are not a multiple of the vector width, all three dtypes.
 * Exact kernels must agree bit for bit (max by value: -0 == +0); the two
 * estimate kernels (sum_sq, exp_sum) within their documented error.
 */
#include "harness.h"
#include "sample/arch/kernels.h"

#include <stdint.h>

static uint64_t g_rng = 0x1234567ull;

static uint64_t next_u64(void)
{
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unif(void) { return (double)(next_u64() >> 11) * 0x1p-53; }

static float gauss(void)
{
    double u = unif(), v = unif();
    return (float)(sqrt(-2.0 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v));
}

enum row_kind { RK_NORMAL, RK_TIES, RK_SPECIAL, RK_DENORMAL, RK_EQUAL, RK_NEG, RK_COUNT };

static float special_value(void)
{
    switch (next_u64() % 10) {
    case 0: return INFINITY;
    case 1: return -INFINITY;
    case 2: return NAN;
    case 3: return -0.0f;
    case 4: return 0.0f;
    case 5: return 1e-40f;
    case 6: return -1e-42f;
    case 7: return 3.4e38f;
    case 8: return -3.4e38f;
    default: return gauss() * 10.0f;
    }
}

static float make_value(enum row_kind k)
{
    switch (k) {
    case RK_TIES: return (float)(int)(gauss() * 3.0f) * 0.5f;
    case RK_SPECIAL: return (next_u64() % 8 == 0) ? special_value() : gauss() * 4.0f;
    case RK_DENORMAL: return (float)((double)gauss() * 1e-39);
    case RK_EQUAL: return 1.25f;
    case RK_NEG: return -50.0f - fabsf(gauss()) * 10.0f;
    default: return gauss() * 2.5f;
    }
}

/* A row of n elements of dtype; f32 copy (the exact widened values) in ref. */
static void make_row(enum row_kind k, enum nextok_dtype dt, size_t n, void *row, float *ref)
{
    for (size_t i = 0; i < n; i++) {
        float v = make_value(k);
        if (dt == NEXTOK_DTYPE_F32) {
            ((float *)row)[i] = v;
            ref[i] = v;
        } else if (dt == NEXTOK_DTYPE_F16) {
            uint16_t h = nextok_f32_to_f16(v);
            ((uint16_t *)row)[i] = h;
            ref[i] = nextok_f16_to_f32(h);
        } else {
            uint16_t h = nextok_f32_to_bf16(v);
            ((uint16_t *)row)[i] = h;
            ref[i] = nextok_bf16_to_f32(h);
        }
    }
}

static bool same_float(float a, float b) { return (isnan(a) && isnan(b)) || a == b; }

static const struct nextok__kernels *g_k; /* the table under test */

#define MAXN 5000

static float g_vals[2][MAXN + 64];
static int32_t g_ids[2][MAXN + 64];
static float g_refrow[MAXN];
static uint32_t g_row_u32[MAXN]; /* storage for any dtype */

static void check_one(enum row_kind kind, enum nextok_dtype dt, size_t n)
{
    const struct nextok__kernels *r = nextok__kernels_ref();
    void *row = g_row_u32;
    make_row(kind, dt, n, row, g_refrow);

    int nf0 = 0, nf1 = 0;
    float m0 = r->max(row, dt, n, &nf0), m1 = g_k->max(row, dt, n, &nf1);
    CHECK_MSG(same_float(m0, m1) && nf0 == nf1, "%s max kind %d dt %d n %zu: %g/%d vs %g/%d",
              g_k->name, kind, dt, n, (double)m0, nf0, (double)m1, nf1);

    /* thresholds: the max, a row value, a quantile-ish value, ±inf, below all */
    float thrs[6] = {m0, n ? g_refrow[next_u64() % n] : 0.0f, 0.5f, -INFINITY, INFINITY, -1e30f};
    for (int t = 0; t < 6; t++) {
        float thr = thrs[t];
        if (isnan(thr)) thr = 0.0f;
        size_t c0 = r->count_ge(row, dt, n, thr), c1 = g_k->count_ge(row, dt, n, thr);
        CHECK_MSG(c0 == c1, "%s count_ge kind %d dt %d n %zu thr %g: %zu vs %zu", g_k->name, kind,
                  dt, n, (double)thr, c0, c1);
        size_t cap = (t == 1) ? (size_t)(next_u64() % (n + 1)) : MAXN;
        int f0 = 0, f1 = 0;
        size_t k0 = r->compact_ge(row, dt, n, thr, 7, g_ids[0], g_vals[0], cap, &f0);
        size_t k1 = g_k->compact_ge(row, dt, n, thr, 7, g_ids[1], g_vals[1], cap, &f1);
        CHECK_MSG(k0 == k1 && f0 == f1, "%s compact kind %d dt %d n %zu: %zu/%d vs %zu/%d",
                  g_k->name, kind, dt, n, k0, f0, k1, f1);
        size_t w = k0 < cap ? k0 : cap;
        if (k0 == k1) {
            bool same = true;
            for (size_t j = 0; j < w; j++)
                same &= g_ids[0][j] == g_ids[1][j] && same_float(g_vals[0][j], g_vals[1][j]);
            CHECK_MSG(same, "%s compact content kind %d dt %d n %zu", g_k->name, kind, dt, n);
        }
        if (isfinite(thr)) {
            uint32_t h0[64] = {0}, h1[64] = {0};
            unsigned shift = (unsigned)(next_u64() % 28);
            r->histogram(row, dt, n, thr, shift, h0, 64);
            g_k->histogram(row, dt, n, thr, shift, h1, 64);
            CHECK_MSG(memcmp(h0, h1, sizeof h0) == 0, "%s histogram kind %d dt %d n %zu",
                      g_k->name, kind, dt, n);
        }
    }

    if (kind != RK_SPECIAL) {
        double s0, q0, s1, q1;
        float div = (next_u64() & 1) ? 1.0f : 0.7f;
        r->sum_sq(row, dt, n, div, 0.25, &s0, &q0);
        g_k->sum_sq(row, dt, n, div, 0.25, &s1, &q1);
        double scale = 1.0;
        for (size_t i = 0; i < n; i++) scale += fabs((double)g_refrow[i] / div) + 0.25;
        CHECK_MSG(fabs(s0 - s1) <= 1e-12 * scale && fabs(q0 - q1) <= 1e-12 * (q0 + 1.0) * 4,
                  "%s sum_sq kind %d dt %d n %zu: %.17g %.17g vs %.17g %.17g", g_k->name, kind,
                  dt, n, s0, q0, s1, q1);
        if (n > 0 && kind != RK_DENORMAL) {
            float mx = g_refrow[0];
            for (size_t i = 1; i < n; i++) mx = g_refrow[i] > mx ? g_refrow[i] : mx;
            double e0 = r->exp_sum(g_refrow, n, mx), e1 = g_k->exp_sum(g_refrow, n, mx);
            CHECK_MSG(fabs(e0 - e1) <= 2e-6 * e0, "%s exp_sum kind %d n %zu: %.17g vs %.17g",
                      g_k->name, kind, n, e0, e1);
        }
    }

    if (dt != NEXTOK_DTYPE_F32) {
        static float w0[MAXN], w1[MAXN + 16];
        r->widen((const uint16_t *)row, dt, n, w0);
        w1[n] = 12345.0f;
        g_k->widen((const uint16_t *)row, dt, n, w1);
        bool same = w1[n] == 12345.0f; /* no write past n */
        for (size_t i = 0; i < n; i++) {
            uint32_t a, b;
            memcpy(&a, &w0[i], 4);
            memcpy(&b, &w1[i], 4);
            same &= isnan(w0[i]) ? isnan(w1[i]) : a == b;
        }
        CHECK_MSG(same, "%s widen dt %d n %zu", g_k->name, dt, n);
    }
}

static void run_table(void)
{
    static const size_t lens[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
                                  100, 127, 129, 255, 257, 1000, 4099, MAXN};
    for (int kind = 0; kind < RK_COUNT; kind++)
        for (int dt = 0; dt < 3; dt++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                for (int rep = 0; rep < 3; rep++) check_one((enum row_kind)kind, (enum nextok_dtype)dt, lens[li]);
}

TEST(test_ref_self)
{
    g_k = nextok__kernels_ref();
    run_table();
}

TEST(test_avx2)
{
#if defined(__x86_64__)
    if (!nextok_cpu_has_avx2() || !nextok__kernels_avx2()) SKIP("no AVX2 on this CPU");
    g_k = nextok__kernels_avx2();
    run_table();
#else
    SKIP("not x86-64");
#endif
}

TEST(test_avx512)
{
#if defined(__x86_64__)
    if (!nextok_cpu_has_avx512() || !nextok__kernels_avx512()) SKIP("no AVX-512 on this CPU");
    g_k = nextok__kernels_avx512();
    run_table();
#else
    SKIP("not x86-64");
#endif
}

TEST(test_dispatch)
{
    const struct nextok__kernels *k = nextok__kernels();
    CHECK(k != NULL);
    CHECK(k == nextok__kernels());
    const char *e = getenv("NEXTOK_FORCE_REF");
    if (e && e[0] == '1') CHECK(k == nextok__kernels_ref());
    else if (nextok_cpu_has_avx512()) CHECK(strcmp(k->name, "avx512") == 0);
    else if (nextok_cpu_has_avx2()) CHECK(strcmp(k->name, "avx2") == 0);
    if (nextok_cpu_has_avx512()) CHECK(nextok_cpu_has_avx2());
}

int main(void)
{
    RUN(test_ref_self);
    RUN(test_avx2);
    RUN(test_avx512);
    RUN(test_dispatch);
    return harness_done();
}
