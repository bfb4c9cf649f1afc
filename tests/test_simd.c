/*
 * Every SIMD kernel against the scalar reference (src/sample/arch/kernels_ref.c)
 * on random and adversarial rows: ties, ±inf, NaN, denormals, ±0, all-equal,
 * lengths that are not a multiple of the vector width, all three dtypes.
 * Exact kernels must agree bit for bit (max by value: -0 == +0); the
 * estimate kernels within their documented error (the sums of sum_sq and
 * sum_sq_dbl against accurate sums).
 */
#include "harness.h"
#include "sample/arch/kernels.h"
#include "sample/builtin.h"

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

static const struct nextok__kernels *g_k;       /* the tables under test: generic, */
static const struct nextok__fused_kernels *g_f; /* and the fused path's (same ISA) */

#define MAXN 5000

static float g_vals[2][MAXN + 64];
static int32_t g_ids[2][MAXN + 64];
static float g_refrow[MAXN];
static uint32_t g_row_u32[MAXN]; /* storage for any dtype */

/* Two compactions agree: their counts, non-finite flags and first
 * min(count, cap) ids and values, bit for bit. */
static bool same_compact(size_t k0, int f0, size_t k1, int f1, const int32_t *i0, const float *v0,
                         const int32_t *i1, const float *v1, size_t cap)
{
    bool same = k0 == k1 && f0 == f1;
    for (size_t j = 0; same && j < (k0 < cap ? k0 : cap); j++)
        same = i0[j] == i1[j] && memcmp(&v0[j], &v1[j], sizeof(float)) == 0;
    return same;
}

/* fn on the reference table and on every SIMD table this build has and this
 * CPU runs. */
static void for_each_table(void (*fn)(const struct nextok__kernels *k))
{
    fn(nextok__kernels_ref());
    if (nextok_cpu_has_avx2() && nextok__kernels_avx2()) fn(nextok__kernels_avx2());
    if (nextok_cpu_has_avx512() && nextok__kernels_avx512()) fn(nextok__kernels_avx512());
}

/* Every ISA's fused table where its generic one is usable (NULL elsewhere). */
static void fused_tables(const struct nextok__fused_kernels *ft[3])
{
    ft[0] = nextok__fused_kernels_ref();
    ft[1] = nextok_cpu_has_avx2() && nextok__kernels_avx2() ? nextok__fused_kernels_avx2() : NULL;
    ft[2] = nextok_cpu_has_avx512() && nextok__kernels_avx512() ? nextok__fused_kernels_avx512() : NULL;
}

/* block_max against the reference: the same count and non-finite flag;
 * on a finite row the same maxima (as values: ±0 may differ), each also
 * the maximum of its block by a plain loop. */
static void check_block_max(const struct nextok__kernels *r, const void *row, enum nextok_dtype dt,
                            size_t n, const char *what)
{
    static float b0[65536 / NEXTOK__BLK + 2], b1[65536 / NEXTOK__BLK + 2];
    int f0 = 0, f1 = 0;
    const size_t n0 = r->block_max(row, dt, n, b0, &f0), n1 = g_k->block_max(row, dt, n, b1, &f1);
    bool ok = n0 == n1 && n0 == (n + NEXTOK__BLK - 1) / NEXTOK__BLK && f0 == f1;
    for (size_t b = 0; ok && !f0 && b < n0; b++) {
        float m = -INFINITY;
        for (size_t i = b * NEXTOK__BLK; i < n && i < (b + 1) * NEXTOK__BLK; i++) {
            const float x = nextok__row_get(row, dt, i);
            m = x > m ? x : m;
        }
        ok = b0[b] == m && b1[b] == m;
    }
    CHECK_MSG(ok, "%s block_max %s dt %d n %zu: %zu/%d vs %zu/%d", g_k->name, what, dt, n, n0, f0, n1, f1);
    if (f0) return;
    /* compact_blocks with those maxima: compact_ge's output over the whole
     * row, at a block maximum, a row value, below everything, with the
     * room running out, and just below a block maximum (for f16/bf16 not a
     * 16-bit value: the 16-bit filter then lets through values below it,
     * which the exact compare must drop) */
    static int32_t ids[2][65536 + 64];
    static float vals[2][65536 + 64];
    for (int t = 0; t < 5 && n > 0; t++) {
        float thr = t == 0 ? b0[next_u64() % n0] : t == 1 ? nextok__row_get(row, dt, next_u64() % n) : -INFINITY;
        if (t == 3) thr = b0[next_u64() % n0];
        if (t == 4) thr = nextafterf(b0[next_u64() % n0], -INFINITY);
        const size_t cap = t == 3 ? (size_t)(next_u64() % (n + 1)) : n + 64;
        int g0 = 0, g1 = 0;
        const size_t k0 = r->compact_ge(row, dt, n, thr, 0, ids[0], vals[0], cap, &g0);
        const size_t k1 = g_k->compact_blocks(row, dt, n, thr, b0, ids[1], vals[1], cap, &g1);
        const bool same = same_compact(k0, g0, k1, g1, ids[0], vals[0], ids[1], vals[1], cap);
        CHECK_MSG(same, "%s compact_blocks %s dt %d n %zu thr %g cap %zu: %zu vs %zu", g_k->name, what, dt, n,
                  (double)thr, cap, k0, k1);
    }
}

/*
 * The token-bitmask kernels against the reference on the row of check_one:
 * masks allowing none, about 1 %, half and every element (bits past n set
 * too), max, block maxima, compaction at a few thresholds (ids from 0 and
 * from 64: bits are read at base + i), compaction by blocks, and the
 * weights (every output bit for bit) at divisors 1 and 0.8.
 */
static void check_masked(const void *row, enum nextok_dtype dt, size_t n, int kind)
{
    static uint32_t mask[MAXN / 32 + 8];
    static float w[2][MAXN + 64], bm[2][MAXN / 256 + 2], b0[MAXN / NEXTOK__BLK + 2], b1[MAXN / NEXTOK__BLK + 2];
    static double bs[2][MAXN / 64 + 2], cum[2][MAXN / 64 + 2];
    const struct nextok__fused_kernels *rf = nextok__fused_kernels_ref();
    const double dens = (double[]){0.0, 0.01, 0.5, 1.0}[next_u64() % 4];
    for (size_t k = 0; k < MAXN / 32 + 8; k++) {
        uint32_t x = 0;
        for (int b = 0; b < 32; b++) x |= (uint32_t)(unif() < dens) << b;
        mask[k] = x;
    }
    size_t plain = 0; /* the count by a plain loop */
    for (size_t i = 0; i < n; i++) plain += (mask[i / 32] >> (i % 32)) & 1u;
    CHECK_MSG(rf->count_allowed(mask, n) == plain && g_f->count_allowed(mask, n) == plain,
              "%s count_allowed n %zu dens %g", g_f->name, n, dens);
    int f0 = 0, f1 = 0;
    const float m0 = rf->max_masked(row, dt, n, mask, &f0), m1 = g_f->max_masked(row, dt, n, mask, &f1);
    CHECK_MSG(same_float(m0, m1) && f0 == f1, "%s max_masked kind %d dt %d n %zu dens %g", g_f->name, kind, dt, n,
              dens);
    f0 = f1 = 0;
    const size_t nb0 = rf->block_max_masked(row, dt, n, mask, b0, &f0);
    const size_t nb1 = g_f->block_max_masked(row, dt, n, mask, b1, &f1);
    bool same = nb0 == nb1 && f0 == f1;
    for (size_t b = 0; same && !f0 && b < nb0; b++) same = b0[b] == b1[b]; /* as values */
    CHECK_MSG(same, "%s block_max_masked kind %d dt %d n %zu dens %g", g_f->name, kind, dt, n, dens);
    const float thrs[3] = {m0, 0.5f, -INFINITY};
    for (int t = 0; t < 3; t++) {
        const int32_t base = t == 1 ? 64 : 0; /* the row as the ids 64 .. (the mask read from there) */
        f0 = f1 = 0;
        const size_t k0 = rf->compact_masked(row, dt, n, thrs[t], base, mask, g_ids[0], g_vals[0], MAXN, &f0);
        const size_t k1 = g_f->compact_masked(row, dt, n, thrs[t], base, mask, g_ids[1], g_vals[1], MAXN, &f1);
        CHECK_MSG(same_compact(k0, f0, k1, f1, g_ids[0], g_vals[0], g_ids[1], g_vals[1], MAXN),
                  "%s compact_masked kind %d dt %d n %zu dens %g thr %g: %zu vs %zu", g_f->name, kind, dt, n, dens,
                  (double)thrs[t], k0, k1);
        if (f0 || base) continue; /* compact_blocks: finite rows, ids from 0 */
        const size_t j0 = rf->compact_blocks_masked(row, dt, n, thrs[t], b0, mask, g_ids[0], g_vals[0], MAXN, &f0);
        const size_t j1 = g_f->compact_blocks_masked(row, dt, n, thrs[t], b0, mask, g_ids[1], g_vals[1], MAXN, &f1);
        CHECK_MSG(j0 == k0 && same_compact(j0, 0, j1, 0, g_ids[0], g_vals[0], g_ids[1], g_vals[1], MAXN),
                  "%s compact_blocks_masked kind %d dt %d n %zu dens %g: %zu, %zu vs %zu", g_f->name, kind, dt, n,
                  dens, k0, j0, j1);
    }
    /* the weights where the fused path uses them: the row's extremes always;
     * the weights of a finite row with the canonical reference of its
     * allowed maximum, and the unscaled ones where they are exact
     * (nextok__wref_unscaled_ok) */
    if (f0 || m0 == -INFINITY) return;
    for (int d = 0; d < 4; d++) {
        const float div = d & 1 ? 0.8f : 1.0f;
        const struct nextok__wref cref = nextok__wref_of(div == 1.0f ? m0 : m0 / div);
        const struct nextok__wref *wr = d & 2 ? &cref : &nextok__wref_unscaled;
        float lo[2], hi[2];
        rf->weights_masked(row, dt, n, div, wr, mask, w[0], bs[0], cum[0], bm[0], &lo[0], &hi[0]);
        g_f->weights_masked(row, dt, n, div, wr, mask, w[1], bs[1], cum[1], bm[1], &lo[1], &hi[1]);
        const size_t nb = (n + 63) / 64, ng = (n + 255) / 256;
        same = same_float(lo[0], lo[1]) && same_float(hi[0], hi[1]);
        for (size_t g = 0; same && g < ng; g++) same = same_float(bm[0][g], bm[1][g]);
        if (same && (wr == &cref || nextok__wref_unscaled_ok(lo[0], hi[0])))
            same = memcmp(w[0], w[1], n * sizeof(float)) == 0 && memcmp(bs[0], bs[1], nb * sizeof(double)) == 0 &&
                   memcmp(cum[0], cum[1], nb * sizeof(double)) == 0;
        CHECK_MSG(same, "%s weights_masked kind %d dt %d n %zu dens %g div %g %s", g_f->name, kind, dt, n, dens,
                  (double)div, d & 2 ? "canonical" : "unscaled");
    }
}

static void check_one(enum row_kind kind, enum nextok_dtype dt, size_t n)
{
    const struct nextok__kernels *r = nextok__kernels_ref();
    const struct nextok__fused_kernels *rf = nextok__fused_kernels_ref();
    void *row = g_row_u32;
    make_row(kind, dt, n, row, g_refrow);

    int nf0 = 0, nf1 = 0;
    float m0 = r->max(row, dt, n, &nf0), m1 = g_k->max(row, dt, n, &nf1);
    CHECK_MSG(same_float(m0, m1) && nf0 == nf1, "%s max kind %d dt %d n %zu: %g/%d vs %g/%d",
              g_k->name, kind, dt, n, (double)m0, nf0, (double)m1, nf1);

    check_block_max(r, row, dt, n, "row");
    check_masked(row, dt, n, kind);

    /* thresholds: the max, a row value, a quantile-ish value, ±inf, below all */
    float thrs[6] = {m0, n ? g_refrow[next_u64() % n] : 0.0f, 0.5f, -INFINITY, INFINITY, -1e30f};
    for (int t = 0; t < 6; t++) {
        float thr = thrs[t];
        if (isnan(thr)) thr = 0.0f;
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
    }

    { /* compact_range: [lo, hi] from row values, one bound infinite, an empty range */
        const float a = n ? g_refrow[next_u64() % n] : 0.0f, b = n ? g_refrow[next_u64() % n] : 1.0f;
        const float los[4] = {a < b ? a : b, -INFINITY, 0.5f, 2.0f}, his[4] = {a < b ? b : a, 0.25f, INFINITY, 1.0f};
        for (int t = 0; t < 4; t++) {
            const float lo = isnan(los[t]) ? 0.0f : los[t], hi = isnan(his[t]) ? 1.0f : his[t];
            const size_t cap = t == 0 ? (size_t)(next_u64() % (n + 1)) : MAXN;
            const size_t k0 = rf->compact_range(row, dt, n, lo, hi, 3, g_ids[0], g_vals[0], cap);
            const size_t k1 = g_f->compact_range(row, dt, n, lo, hi, 3, g_ids[1], g_vals[1], cap);
            bool same = k0 == k1;
            for (size_t j = 0; same && j < (k0 < cap ? k0 : cap); j++)
                same = g_ids[0][j] == g_ids[1][j] && same_float(g_vals[0][j], g_vals[1][j]);
            size_t want = 0;
            for (size_t i = 0; i < n; i++) want += g_refrow[i] >= lo && g_refrow[i] <= hi;
            CHECK_MSG(same && k0 == want, "%s compact_range kind %d dt %d n %zu [%g, %g]: %zu vs %zu (want %zu)",
                      g_k->name, kind, dt, n, (double)lo, (double)hi, k0, k1, want);
        }
    }
    { /* cut_weights: a cut at a row value (its ties split by id) */
        static float w0[MAXN], w1[MAXN], wr[MAXN];
        static double b0[MAXN / 64 + 2], b1[MAXN / 64 + 2];
        for (size_t i = 0; i < n; i++) w0[i] = w1[i] = wr[i] = (float)unif() * 1.9f;
        float eq = n ? g_refrow[next_u64() % n] : 0.0f;
        if (isnan(eq)) eq = 0.0f;
        const float gt = nextafterf(eq, INFINITY);
        const int32_t cut = n ? (int32_t)(next_u64() % n) : 0;
        rf->cut_weights(row, dt, n, gt, eq, cut, w0, b0);
        g_f->cut_weights(row, dt, n, gt, eq, cut, w1, b1);
        for (size_t i = 0; i < n; i++)
            if (!(g_refrow[i] >= gt || (g_refrow[i] >= eq && (int32_t)i <= cut))) wr[i] = 0.0f;
        bool ok = memcmp(w0, wr, n * sizeof *w0) == 0 && memcmp(w1, wr, n * sizeof *w1) == 0;
        for (size_t b = 0; b * 64 < n && ok; b++)
            ok = b0[b] == nextok__wblock(wr + 64 * b, n - 64 * b < 64 ? n - 64 * b : 64) &&
                 memcmp(&b0[b], &b1[b], sizeof b0[b]) == 0;
        CHECK_MSG(ok, "%s cut_weights kind %d dt %d n %zu", g_k->name, kind, dt, n);
    }
    { /* probs: p = (float)(w / z), weights with NaN/inf/subnormal values, z from the set */
        static float w[MAXN], p0[MAXN + 1], p1[MAXN + 1];
        double z = 0.0;
        for (size_t i = 0; i < n; i++) {
            w[i] = next_u64() % 16 == 0 ? fabsf(special_value()) : (float)unif() * 1.9f;
            z += isfinite(w[i]) ? w[i] : 0.0f;
        }
        if (next_u64() % 8 == 0) z = next_u64() & 1 ? 0.0 : 1e-300; /* p overflows or is NaN */
        p0[n] = p1[n] = 7.0f; /* nothing written past n */
        r->probs(w, n, z, p0);
        g_k->probs(w, n, z, p1);
        bool ok = p0[n] == 7.0f && p1[n] == 7.0f && memcmp(p0, p1, n * sizeof *p0) == 0;
        for (size_t i = 0; i < n && ok; i++) {
            const float want = (float)((double)w[i] / z);
            ok = memcmp(&p0[i], &want, sizeof want) == 0;
        }
        CHECK_MSG(ok, "%s probs kind %d dt %d n %zu", g_k->name, kind, dt, n);
    }
    { /* cut_keys: scores |x| (NaN kept as NaN), the cut at one of them */
        static float w0[MAXN], w1[MAXN], wr[MAXN], sc[MAXN];
        static double b0[MAXN / 64 + 2], b1[MAXN / 64 + 2];
        for (size_t i = 0; i < n; i++) {
            w0[i] = w1[i] = wr[i] = (float)unif() * 1.9f;
            sc[i] = fabsf(g_refrow[i]);
        }
        float ks = n ? sc[next_u64() % n] : 0.0f;
        if (next_u64() % 4 == 0) ks = INFINITY; /* everything finite kept */
        uint32_t klo;
        memcpy(&klo, &ks, sizeof klo);
        rf->cut_keys(w0, sc, n, klo, b0);
        g_f->cut_keys(w1, sc, n, klo, b1);
        for (size_t i = 0; i < n; i++) {
            uint32_t k;
            memcpy(&k, &sc[i], sizeof k);
            if (!(k < klo)) wr[i] = 0.0f;
            /* scores >= +0: below a non-NaN cut, bits order as values */
            if (!isnan(ks)) CHECK((k < klo) == (sc[i] < ks));
        }
        bool ok = memcmp(w0, wr, n * sizeof *w0) == 0 && memcmp(w1, wr, n * sizeof *w1) == 0;
        for (size_t b = 0; b * 64 < n && ok; b++)
            ok = b0[b] == nextok__wblock(wr + 64 * b, n - 64 * b < 64 ? n - 64 * b : 64) &&
                 memcmp(&b0[b], &b1[b], sizeof b0[b]) == 0;
        CHECK_MSG(ok, "%s cut_keys kind %d dt %d n %zu", g_k->name, kind, dt, n);
    }
    { /* mass_above: weights with NaN/large values, thresholds from the row, ±inf */
        static float w[MAXN];
        for (size_t i = 0; i < n; i++) w[i] = (next_u64() % 16 == 0) ? fabsf(special_value()) : (float)unif() * 1.9f; /* weights are >= 0 or NaN */
        /* half the time the group-maxima hint, as top-p makes it: the
         * groups' largest values and the lowest threshold */
        static float gmax[MAXN / NEXTOK__BMAX_IDS + 1];
        for (size_t i = 0; i < n; i++) {
            float *m = gmax + i / NEXTOK__BMAX_IDS;
            if (i % NEXTOK__BMAX_IDS == 0) *m = -INFINITY;
            if (g_refrow[i] > *m) *m = g_refrow[i];
        }
        float thr[4];
        for (int j = 0; j < 4; j++) thr[j] = n ? g_refrow[next_u64() % n] : 0.0f;
        if (next_u64() & 1) thr[0] = INFINITY, thr[3] = -INFINITY;
        else if (n && next_u64() % 2) /* thresholds at groups' maxima: the hint rules out whole groups */
            for (int j = 0; j < 4; j++) thr[j] = gmax[next_u64() % ((n + NEXTOK__BMAX_IDS - 1) / NEXTOK__BMAX_IDS)];
        const float scale = 0x1p40f;
        uint64_t q0[5], c0[5], q1[5], c1[5], qw[5] = {0}, cw[5] = {0};
        float gth = INFINITY;
        for (int j = 0; j < 4; j++) gth = thr[j] < gth ? thr[j] : gth; /* NaN thresholds match nothing */
        const bool hint = next_u64() & 1;
        rf->mass_above(row, dt, n, w, scale, thr, NULL, 0.0f, q0, c0);
        g_f->mass_above(row, dt, n, w, scale, thr, hint ? gmax : NULL, gth, q1, c1);
        for (size_t i = 0; i < n; i++) {
            const uint64_t m = nextok__mass_q(w[i], scale);
            qw[0] += m, cw[0]++;
            for (int j = 0; j < 4; j++)
                if (g_refrow[i] >= thr[j]) qw[1 + j] += m, cw[1 + j]++;
        }
        CHECK_MSG(!memcmp(q0, qw, sizeof qw) && !memcmp(q1, qw, sizeof qw) && !memcmp(c0, cw, sizeof cw) &&
                      !memcmp(c1, cw, sizeof cw),
                  "%s mass_above kind %d dt %d n %zu", g_k->name, kind, dt, n);
    }
    { /* mass_band: the sums at two thresholds from the row (or ±inf) and the
       * band's elements in order; room for all of them or for a few (the
       * count is the whole band's either way) */
        static float w[MAXN], v0[MAXN + 16], v1[MAXN + 16];
        static int32_t i0[MAXN + 16], i1[MAXN + 16];
        for (size_t i = 0; i < n; i++) w[i] = (next_u64() % 16 == 0) ? fabsf(special_value()) : (float)unif() * 1.9f;
        float hi = n ? g_refrow[next_u64() % n] : 0.0f, lo = n ? g_refrow[next_u64() % n] : 0.0f;
        if (lo > hi) {
            const float t = lo;
            lo = hi, hi = t;
        }
        if (next_u64() % 4 == 0) hi = INFINITY;
        if (next_u64() % 4 == 0) lo = -INFINITY;
        const float scale = 0x1p40f;
        static float gmax[MAXN / NEXTOK__BMAX_IDS + 1];
        for (size_t i = 0; i < n; i++) {
            float *m = gmax + i / NEXTOK__BMAX_IDS;
            if (i % NEXTOK__BMAX_IDS == 0) *m = -INFINITY;
            if (g_refrow[i] > *m) *m = g_refrow[i];
        }
        if (n && next_u64() % 4 == 0) { /* a band at groups' maxima: the hint rules out whole groups */
            const size_t ng = (n + NEXTOK__BMAX_IDS - 1) / NEXTOK__BMAX_IDS;
            lo = gmax[next_u64() % ng], hi = gmax[next_u64() % ng];
            if (!(lo <= hi)) {
                const float t = lo;
                lo = hi, hi = t;
            }
        }
        const bool hint = next_u64() & 1, counts = next_u64() & 1;
        const size_t cap = next_u64() & 1 ? n : (size_t)(next_u64() % 8);
        uint64_t q0[3], c0[3], q1[3], c1[3], qw[3] = {0}, cw[3] = {0};
        const int32_t base = 1000;
        const size_t n0 = rf->mass_band(row, dt, n, w, scale, hi, lo, NULL, 0.0f, q0, c0, base, i0, v0, cap);
        /* the hint's promise: no element >= either threshold in a group below gth */
        const float gth = isnan(lo) ? (isnan(hi) ? INFINITY : hi) : lo;
        const size_t n1 = g_f->mass_band(row, dt, n, w, scale, hi, lo, hint ? gmax : NULL, gth, q1,
                                         counts ? c1 : NULL, base, i1, v1, cap);
        size_t nw = 0;
        bool ok = true;
        for (size_t i = 0; i < n; i++) {
            const float x = g_refrow[i];
            const uint64_t m = nextok__mass_q(w[i], scale);
            qw[0] += m, cw[0]++;
            if (x >= hi) qw[1] += m, cw[1]++;
            if (x >= lo) qw[2] += m, cw[2]++;
            if (!(x >= lo && !(x >= hi))) continue;
            if (nw < cap) ok = ok && i0[nw] == base + (int32_t)i && i1[nw] == i0[nw] && same_float(v0[nw], x) &&
                               same_float(v1[nw], x);
            nw++;
        }
        ok = ok && n0 == nw && n1 == nw && !memcmp(q0, qw, sizeof qw) && !memcmp(q1, qw, sizeof qw) &&
             !memcmp(c0, cw, sizeof cw) && (!counts || !memcmp(c1, cw, sizeof cw));
        CHECK_MSG(ok, "%s mass_band kind %d dt %d n %zu cap %zu", g_k->name, kind, dt, n, cap);
    }

    { /* sum_sq: the max and the non-finite flag exactly (every row kind);
       * the sums of finite rows within the kernel's documented error, K
       * times the sum of the terms' magnitudes, K = (B + 2) 2^-24 + (n + 8)
       * 2^-53, each (so twice that apart), plus n 2^-149 for the squares'
       * underflow (denormal rows); the sums of rows whose values
       * are not finite are not finite either */
        double s0, q0, s1, q1;
        const float div = (next_u64() & 1) ? 1.0f : 0.7f;
        float center = (next_u64() & 1) ? 0.25f : (n ? g_refrow[0] / div : 0.0f);
        if (!isfinite(center)) center = 0.0f;
        int f0 = 0, f1 = 0;
        const float x0 = rf->sum_sq(row, dt, n, div, center, &f0, &s0, &q0);
        const float x1 = g_f->sum_sq(row, dt, n, div, center, &f1, &s1, &q1);
        CHECK_MSG(same_float(x0, m0) && same_float(x1, m0) && f0 == nf0 && f1 == nf0,
                  "%s sum_sq max kind %d dt %d n %zu: %g/%d %g/%d vs %g/%d", g_k->name, kind, dt, n,
                  (double)x0, f0, (double)x1, f1, (double)m0, nf0);
        if (nf0) CHECK_MSG(!isfinite(q0) && !isfinite(q1), "%s sum_sq kind %d: finite sum", g_k->name, kind);
        double sa = 0.0, qa = 0.0, ss = 0.0; /* Σ|d|, Σd², Σd (double: accurately enough) */
        for (size_t i = 0; i < n && !nf0; i++) {
            const double d = (double)(g_refrow[i] / div) - (double)center;
            sa += fabs(d);
            ss += d;
            qa += d * d;
        }
        const double e = 2.0 * ((NEXTOK__SUMSQ_BLOCK + 2) * 0x1p-24 + (double)(n + 8) * 0x1p-53);
        const double uf = (double)n * 0x1p-149 + 1e-300;
        if (!nf0 && isfinite(qa) && qa < 1e38) {
            if (isfinite(q0) && isfinite(q1))
                CHECK_MSG(fabs(s0 - s1) <= e * sa + 1e-300 && fabs(q0 - q1) <= e * qa + 2 * uf &&
                              fabs(s0 - ss) <= e * sa + 1e-300 && fabs(q0 - qa) <= e * qa + uf &&
                              fabs(s1 - ss) <= e * sa + 1e-300 && fabs(q1 - qa) <= e * qa + uf,
                          "%s sum_sq kind %d dt %d n %zu: %.17g %.17g vs %.17g %.17g", g_k->name, kind,
                          dt, n, s0, q0, s1, q1);
            else /* only a float partial of squares can overflow: both must */
                CHECK_MSG(!isfinite(q0) && !isfinite(q1), "%s sum_sq kind %d dt %d n %zu: %.17g vs %.17g",
                          g_k->name, kind, dt, n, q0, q1);
        }
    }
    if (kind != RK_SPECIAL) { /* sum_sq_dbl: within (n + 8) 2^-53 of the magnitudes each */
        double s0, q0, s1, q1, sa = 0.0, ss = 0.0, qa = 0.0;
        const float div = (next_u64() & 1) ? 1.0f : 0.7f;
        const double center = (next_u64() & 1) ? 0.25 : (n ? (double)g_refrow[n / 2] * 1.0000001 : 0.0);
        rf->sum_sq_dbl(row, dt, n, div, center, &s0, &q0);
        g_f->sum_sq_dbl(row, dt, n, div, center, &s1, &q1);
        for (size_t i = 0; i < n; i++) {
            const long double d = (long double)(g_refrow[i] / div) - (long double)center;
            sa += (double)fabsl(d);
            ss += (double)d;
            qa += (double)(d * d);
        }
        const double e = 2.0 * (double)(n + 8) * 0x1p-53, ua = (double)n * 0x1p-1074 + 1e-300;
        CHECK_MSG(fabs(s0 - ss) <= e * sa + 1e-300 && fabs(s1 - ss) <= e * sa + 1e-300 &&
                      fabs(q0 - qa) <= e * qa + ua && fabs(q1 - qa) <= e * qa + ua,
                  "%s sum_sq_dbl kind %d dt %d n %zu: %.17g %.17g vs %.17g %.17g (%.17g %.17g)", g_k->name,
                  kind, dt, n, s0, q0, s1, q1, ss, qa);
    }

    { /* cands_ge on a compacted-like list: the row's values made finite
       * (huge ones overflow the quotient and are clamped), ids descending */
        static float cv[MAXN];
        static int32_t ci[MAXN];
        static struct nextok_token_data o0[MAXN + 1], o1[MAXN + 1];
        for (size_t i = 0; i < n; i++) {
            cv[i] = isfinite(g_refrow[i]) ? g_refrow[i] : (g_refrow[i] > 0 ? 3.4e38f : -3.4e38f);
            ci[i] = (int32_t)(3 * (n - i)) + 1;
        }
        const float divs[4] = {1.0f, 0.7f, 1e-30f, 1.7f};
        const float div = divs[next_u64() % 4];
        const float ths[5] = {-INFINITY, 0.0f, n ? cv[next_u64() % n] / div : 1.0f, 3.40282347e38f, 1.25f};
        for (int t = 0; t < 5; t++) {
            memset(o0, 0x5a, sizeof o0);
            memset(o1, 0x5a, sizeof o1);
            const size_t k0 = r->cands_ge(ci, cv, n, div, ths[t], o0);
            const size_t k1 = g_k->cands_ge(ci, cv, n, div, ths[t], o1);
            size_t want = 0;
            for (size_t i = 0; i < n; i++) {
                const float v = div == 1.0f ? cv[i] : nextok__sat(cv[i] / div);
                want += v >= ths[t];
            }
            CHECK_MSG(k0 == want && k1 == k0 && memcmp(o0, o1, (k0 + 1) * sizeof *o0) == 0,
                      "%s cands_ge kind %d dt %d n %zu div %g thr %g: %zu %zu (want %zu)", g_k->name,
                      kind, dt, n, (double)div, (double)ths[t], k0, k1, want);
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
                                  100, 127, 129, 255, 257, 511, 512, 513, 1000, 1024, 4099, MAXN};
    for (int kind = 0; kind < RK_COUNT; kind++)
        for (int dt = 0; dt < 3; dt++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                for (int rep = 0; rep < 3; rep++) check_one((enum row_kind)kind, (enum nextok_dtype)dt, lens[li]);
}

/*
 * compact_ge on f16/bf16 rows against thresholds placed on, just above, just
 * below and between 16-bit values (the SIMD kernels may filter in the 16-bit
 * domain first): rows of every 16-bit pattern (so ±0, denormals, ±inf and
 * NaNs), the finite ones only, and all-equal rows, at lengths around the
 * 128-element block; ids, values, count and the non-finite flag must be the
 * reference's bit for bit.
 */
static uint16_t g_h16[65536 + 300];

static void half_case(const struct nextok__kernels *k, enum nextok_dtype dt, const uint16_t *row,
                      size_t n, float thr, size_t cap)
{
    const struct nextok__kernels *r = nextok__kernels_ref();
    static int32_t ids[2][65536 + 300];
    static float vals[2][65536 + 300];
    int f0 = 0, f1 = 0;
    const size_t k0 = r->compact_ge(row, dt, n, thr, 3, ids[0], vals[0], cap, &f0);
    const size_t k1 = k->compact_ge(row, dt, n, thr, 3, ids[1], vals[1], cap, &f1);
    const bool same = same_compact(k0, f0, k1, f1, ids[0], vals[0], ids[1], vals[1], cap);
    CHECK_MSG(same, "%s compact16 dt %d n %zu thr %a cap %zu: %zu/%d vs %zu/%d", k->name, dt, n,
              (double)thr, cap, k0, f0, k1, f1);
}

static uint16_t em16(enum nextok_dtype dt) { return dt == NEXTOK_DTYPE_F16 ? 0x7c00 : 0x7f80; }

static float h16_value(enum nextok_dtype dt, uint16_t h)
{
    return dt == NEXTOK_DTYPE_F16 ? nextok_f16_to_f32(h) : nextok_bf16_to_f32(h);
}

static void half_thresholds(const struct nextok__kernels *k)
{
    for (int d = 0; d < 2; d++) {
        const enum nextok_dtype dt = d ? NEXTOK_DTYPE_BF16 : NEXTOK_DTYPE_F16;
        for (int layout = 0; layout < 3; layout++) {
            size_t n = 0;
            for (uint32_t h = 0; h < 65536; h++) {
                const float v = h16_value(dt, (uint16_t)h);
                if (layout == 0 || (layout == 1 && isfinite(v))) g_h16[n++] = (uint16_t)h;
            }
            if (layout == 2) { /* all equal: one random finite value */
                uint16_t h;
                do h = (uint16_t)next_u64(); while (!isfinite(h16_value(dt, h)));
                for (n = 0; n < 1000; n++) g_h16[n] = h;
            }
            for (size_t i = n; i-- > 1;) { /* shuffle */
                const size_t j = (size_t)(next_u64() % (i + 1));
                const uint16_t x = g_h16[i];
                g_h16[i] = g_h16[j];
                g_h16[j] = x;
            }
            const struct nextok__kernels *saved = g_k;
            g_k = k;
            check_block_max(nextok__kernels_ref(), g_h16, dt, n, "every 16-bit pattern");
            g_k = saved;
            for (int rep = 0; rep < 600; rep++) {
                /* a threshold at a 16-bit value (often a row value), a float
                 * step either side of it, between two neighbours, or special */
                const uint16_t h = rep % 4 == 0 ? g_h16[next_u64() % n] : (uint16_t)next_u64();
                float v = h16_value(dt, h);
                if (isnan(v)) v = 0.0f;
                float thr;
                switch (next_u64() % 6) {
                case 0: thr = v; break;
                case 1: thr = nextafterf(v, INFINITY); break;
                case 2: thr = nextafterf(v, -INFINITY); break;
                case 3: thr = (float)(((double)v + (double)h16_value(dt, (uint16_t)(h + 1))) / 2); break;
                case 4: thr = (float[]){0.0f, -0.0f, INFINITY, -INFINITY, 1e30f, -1e30f, 65504.0f, 65520.0f,
                                        -65520.0f, 1e-40f, -1e-40f, 5.9604645e-8f}[next_u64() % 12]; break;
                default: thr = (float)gauss() * 4.0f; break;
                }
                if (isnan(thr)) thr = 0.0f;
                const size_t cap = rep % 5 == 0 ? (size_t)(next_u64() % 200) : 65536 + 300;
                if (rep % 3 == 0) {
                    half_case(k, dt, g_h16, n, thr, cap);
                    continue;
                }
                /* a short row around the threshold: h's neighbours of both
                 * signs, ±0, the smallest denormals, ±inf, NaN, any pattern */
                static uint16_t sh[700];
                const size_t len = (size_t)(next_u64() % 700);
                const uint16_t sp[8] = {0x0000, 0x8000, 0x0001, 0x8001, em16(dt), (uint16_t)(em16(dt) | 0x8000),
                                        (uint16_t)(em16(dt) | 1), (uint16_t)(em16(dt) | 0x8001)};
                /* sparse rows (most elements the lowest finite value) leave
                 * a lone candidate in a vector: a filter error shows */
                const unsigned dense = (unsigned)(next_u64() % 2) ? 100 : 6;
                const uint16_t low = dt == NEXTOK_DTYPE_F16 ? 0xfbff : 0xff7f;
                for (size_t i = 0; i < len; i++) {
                    const uint64_t u = next_u64();
                    if ((u >> 40) % 100 >= dense) {
                        sh[i] = low;
                        continue;
                    }
                    const uint16_t dd = (uint16_t)((int)(u >> 8) % 7 - 3);
                    sh[i] = layout == 2 ? g_h16[0]
                            : u % 10 < 5 ? (uint16_t)((u & 16 ? h ^ 0x8000 : h) + dd)
                            : u % 10 < 7 ? sp[(u >> 4) % 8]
                                         : (uint16_t)(u >> 32);
                }
                half_case(k, dt, sh, len, thr, cap);
            }
        }
    }
}

/*
 * compact_ge and compact_range on long rows whose survivors' density changes
 * by region (the SIMD kernels switch between a sparse and a dense loop per
 * span of a few thousand elements): sparse, dense and empty regions of
 * random lengths, every dtype, room for everything or running out mid-row;
 * ids, values, count and the non-finite flag must be the reference's.
 */
/* The fused table of k's ISA. */
static const struct nextok__fused_kernels *fused_of(const struct nextok__kernels *k)
{
    if (k == nextok__kernels_avx2()) return nextok__fused_kernels_avx2();
    if (k == nextok__kernels_avx512()) return nextok__fused_kernels_avx512();
    return nextok__fused_kernels_ref();
}

static void long_rows(const struct nextok__kernels *k)
{
    enum { N = 40000 };
    static float f[N];
    static uint16_t h[N];
    static int32_t ids[2][N + 64];
    static float vals[2][N + 64];
    const struct nextok__kernels *r = nextok__kernels_ref();
    const struct nextok__fused_kernels *rf = nextok__fused_kernels_ref(), *kf = fused_of(k);
    for (int rep = 0; rep < 24; rep++) {
        const size_t n = N - (size_t)(next_u64() % 300);
        for (size_t i = 0; i < n;) { /* regions: survivors (x >= 1) at 0, ~2 %, ~30 % or all */
            const size_t len = 1 + (size_t)(next_u64() % 9000);
            const double dens = (double[]){0.0, 0.02, 0.3, 1.0}[next_u64() % 4];
            for (size_t j = 0; j < len && i < n; j++, i++) f[i] = unif() < dens ? 1.0f + (float)unif() : -(float)unif();
        }
        if (rep % 8 == 7) f[next_u64() % n] = rep % 16 == 7 ? NAN : INFINITY;
        for (int d = 0; d < 3; d++) {
            const enum nextok_dtype dt = (enum nextok_dtype)d;
            const void *row = f;
            if (dt != NEXTOK_DTYPE_F32) {
                for (size_t i = 0; i < n; i++) h[i] = dt == NEXTOK_DTYPE_F16 ? nextok_f32_to_f16(f[i]) : nextok_f32_to_bf16(f[i]);
                row = h;
            }
            const size_t cap = rep % 3 == 0 ? (size_t)(next_u64() % n) : N + 64;
            int f0 = 0, f1 = 0;
            const size_t k0 = r->compact_ge(row, dt, n, 1.0f, 5, ids[0], vals[0], cap, &f0);
            const size_t k1 = k->compact_ge(row, dt, n, 1.0f, 5, ids[1], vals[1], cap, &f1);
            const bool same = same_compact(k0, f0, k1, f1, ids[0], vals[0], ids[1], vals[1], cap);
            CHECK_MSG(same, "%s long row dt %d n %zu cap %zu: %zu/%d vs %zu/%d", k->name, d, n, cap, k0, f0, k1, f1);
            /* compact_range shares the adaptive loop: the survivors in [1, 1.5] */
            const size_t j0 = rf->compact_range(row, dt, n, 1.0f, 1.5f, 5, ids[0], vals[0], cap);
            const size_t j1 = kf->compact_range(row, dt, n, 1.0f, 1.5f, 5, ids[1], vals[1], cap);
            CHECK_MSG(same_compact(j0, 0, j1, 0, ids[0], vals[0], ids[1], vals[1], cap),
                      "%s long row range dt %d n %zu cap %zu: %zu vs %zu", kf->name, d, n, cap, j0, j1);
        }
    }
}

TEST(test_compact_long_rows)
{
    for_each_table(long_rows);
}

TEST(test_compact_half_thresholds)
{
    for_each_table(half_thresholds);
}

TEST(test_ref_self)
{
    g_k = nextok__kernels_ref();
    g_f = nextok__fused_kernels_ref();
    run_table();
}

TEST(test_avx2)
{
    if (!nextok__kernels_avx2()) SKIP("AVX2 kernels not built (NEXTOK_SIMD=OFF or not x86-64)");
    if (!nextok_cpu_has_avx2()) SKIP("no AVX2 on this CPU");
    g_k = nextok__kernels_avx2();
    g_f = nextok__fused_kernels_avx2();
    run_table();
}

TEST(test_avx512)
{
    if (!nextok__kernels_avx512()) SKIP("AVX-512 kernels not built (NEXTOK_SIMD=OFF or not x86-64)");
    if (!nextok_cpu_has_avx512()) SKIP("no AVX-512 on this CPU");
    g_k = nextok__kernels_avx512();
    g_f = nextok__fused_kernels_avx512();
    run_table();
}

/* Both tables of every ISA built: complete (no entry left NULL), named
 * alike, the fused one there exactly when the generic one is. */
TEST(test_tables_complete)
{
    const struct nextok__kernels *k[3] = {nextok__kernels_ref(), nextok__kernels_avx2(), nextok__kernels_avx512()};
    const struct nextok__fused_kernels *f[3] = {nextok__fused_kernels_ref(), nextok__fused_kernels_avx2(),
                                                nextok__fused_kernels_avx512()};
    CHECK(k[0] != NULL && f[0] != NULL);
    for (int t = 0; t < 3; t++) {
        CHECK((k[t] == NULL) == (f[t] == NULL));
        if (!k[t] || !f[t]) continue;
        CHECK(k[t]->name && f[t]->name && strcmp(k[t]->name, f[t]->name) == 0);
        CHECK(k[t]->max && k[t]->block_max && k[t]->compact_ge && k[t]->compact_blocks && k[t]->cands_ge &&
              k[t]->widen && k[t]->expw && k[t]->probs);
        CHECK(f[t]->sum_sq && f[t]->sum_sq_dbl && f[t]->weights && f[t]->weights_ge && f[t]->compact_range &&
              f[t]->cut_weights && f[t]->mass_above && f[t]->mass_band && f[t]->wvsum && f[t]->typscan &&
              f[t]->cut_keys);
        CHECK(f[t]->count_allowed && f[t]->max_masked && f[t]->block_max_masked && f[t]->compact_masked && f[t]->compact_blocks_masked &&
              f[t]->weights_masked);
    }
#if defined(NEXTOK_EXPECT_X86_KERNELS)
    /* an x86-64 build with NEXTOK_SIMD=ON must have compiled both ISAs */
    CHECK(k[1] != NULL && k[2] != NULL);
#endif
}

TEST(test_dispatch)
{
    const struct nextok__kernels *k = nextok__kernels();
    const struct nextok__fused_kernels *f = nextok__fused_kernels();
    CHECK(k != NULL && f != NULL);
    CHECK(k == nextok__kernels() && f == nextok__fused_kernels());
    CHECK(strcmp(k->name, f->name) == 0); /* one ISA for both */
    const char *e = getenv("NEXTOK_FORCE_REF");
    if (e && e[0] == '1') CHECK(k == nextok__kernels_ref() && f == nextok__fused_kernels_ref());
    else if (nextok_cpu_has_avx512() && nextok__kernels_avx512()) CHECK(strcmp(k->name, "avx512") == 0);
    else if (nextok_cpu_has_avx2() && nextok__kernels_avx2()) CHECK(strcmp(k->name, "avx2") == 0);
    else CHECK(k == nextok__kernels_ref() && f == nextok__fused_kernels_ref()); /* no SIMD table built or usable */
    if (nextok_cpu_has_avx512()) CHECK(nextok_cpu_has_avx2());
}

/* ---- canonical weights: bit-identical in every ISA ------------------------- */

/* Adversarial finite values for the weights: the maximum itself (x = 0),
 * the cut-off at max - 60 and its neighbours, the unscaled range's edges,
 * huge negatives, ±FLT_MAX, denormals. */
static float weight_value(int kind)
{
    static const float adv[] = {0.0f, -0.0f, -60.0f, -59.99999f, -60.00001f, 80.0f, 80.00001f,
                                -1e30f, -3.4028235e38f, 3.4028235e38f, 1e-40f, -1e-42f,
                                -0.34657359f, 0.34657359f, -100.0f, -0.5f, 5.0f, 40000.0f};
    if (kind == 0) return gauss() * 2.5f;
    if (kind == 1) return (float)(int)(gauss() * 3.0f) * 0.5f;
    if (kind == 2) return gauss() * 40.0f;
    return (next_u64() % 3) ? adv[next_u64() % (sizeof adv / sizeof adv[0])] : gauss() * 30.0f;
}

static float g_w[3][MAXN + 64], g_uw[3][MAXN + 64];
static double g_bs[3][MAXN / 64 + 2], g_cum[3][MAXN / 64 + 2];
static double g_ubs[3][MAXN / 64 + 2], g_ucum[3][MAXN / 64 + 2];

/* Equal bits, or both NaN (the unscaled pass makes NaN of values out of its
 * range, whose payload the definition leaves open). */
static bool same_f(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(isnan(a[i]) && isnan(b[i])) && memcmp(a + i, b + i, sizeof *a) != 0) return false;
    return true;
}

static bool same_d(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(isnan(a[i]) && isnan(b[i])) && memcmp(a + i, b + i, sizeof *a) != 0) return false;
    return true;
}

/* typical-p's scan: every ISA gives the reference's scores, compacted ids and
 * scores, and mass sums, for centres and brackets around the row's scores
 * (empty, everything, one key, random), masses at several scales. */
static void check_typscan(const struct nextok__fused_kernels *const tabs[3], enum nextok_dtype dt, size_t n,
                          float div, const float *vals)
{
    static float sc[3][MAXN + 64], cv[3][MAXN + 64];
    static int32_t ids[3][MAXN + 64];
    for (int rep = 0; rep < 4; rep++) {
        const float c = rep == 0 ? 0.0f : vals[next_u64() % n] + (rep == 3 ? gauss() : 0.0f);
        float a = fabsf(vals[next_u64() % n] - c), b = fabsf(vals[next_u64() % n] - c);
        if (a > b) { const float t = a; a = b; b = t; }
        uint32_t klo, khi;
        memcpy(&klo, &a, sizeof klo);
        memcpy(&khi, &b, sizeof khi);
        if (rep == 0) klo = 0, khi = 0xffffffffu;
        if (rep == 1) khi = klo;
        /* masses as fuse_typical's: w < 2, scale <= 2^mass_shift(n), so
         * every sum stays below 2^62 (the kernel's contract) */
        const float scale = ldexpf(1.0f, (int)nextok__mass_shift(n) - (int)(next_u64() % 80));
        struct nextok__typscan ts[3];
        size_t m[3] = {0};
        for (int t = 0; t < 3; t++) {
            if (!tabs[t]) continue;
            ts[t] = (struct nextok__typscan){c, scale, klo, khi, 7, 3, 1};
            m[t] = tabs[t]->typscan(g_row_u32, dt, n, div, g_w[0], &ts[t], sc[t], ids[t], cv[t]);
            if (t == 0) continue;
            CHECK_MSG(m[t] == m[0] && ts[t].q_total == ts[0].q_total && ts[t].q_below == ts[0].q_below &&
                          ts[t].n_below == ts[0].n_below,
                      "%s typscan sums differ (dt %d n %zu div %g rep %d)", tabs[t]->name, (int)dt, n, (double)div, rep);
            CHECK_MSG(memcmp(sc[0], sc[t], n * sizeof(float)) == 0 && memcmp(ids[0], ids[t], m[0] * sizeof(int32_t)) == 0 &&
                          memcmp(cv[0], cv[t], m[0] * sizeof(float)) == 0,
                      "%s typscan arrays differ (dt %d n %zu div %g rep %d)", tabs[t]->name, (int)dt, n, (double)div, rep);
        }
        /* the reference against the definition on the processed values */
        uint64_t qt = 7, qb = 3;
        size_t nb = 1, mm = 0;
        bool ok = true;
        for (size_t i = 0; i < n && ok; i++) {
            const float s = fabsf(vals[i] - c);
            uint32_t k;
            memcpy(&k, &s, sizeof k);
            const uint64_t q = nextok__mass_q(g_w[0][i], scale);
            qt += q;
            if (k < klo) qb += q, nb++;
            else if (k <= khi) ok = ids[0][mm] == (int32_t)i && cv[0][mm] == s, mm++;
            ok = ok && memcmp(&sc[0][i], &s, sizeof s) == 0;
        }
        CHECK_MSG(ok && mm == m[0] && qt == ts[0].q_total && qb == ts[0].q_below && nb == ts[0].n_below,
                  "ref typscan != definition (dt %d n %zu div %g rep %d)", (int)dt, n, (double)div, rep);
    }
}

/* typical-p's blocked S (kernels' wvsum) over the canonical weights g_w[0]:
 * every ISA equals the reference, which equals nextok__wvblock on the
 * processed values; with the unscaled weights (N != INT32_MIN: the one-pass
 * premise holds) it is the canonical S times 2^N exactly, block by block. */
static void check_wvsum(const struct nextok__fused_kernels *const tabs[3], enum nextok_dtype dt, size_t n,
                        float div, const float *vals, int32_t N)
{
    static double sb[3][MAXN / 64 + 2], ub[MAXN / 64 + 2];
    const size_t nb = (n + 63) / 64;
    for (int t = 0; t < 3; t++) {
        if (!tabs[t]) continue;
        tabs[t]->wvsum(g_row_u32, dt, n, div, g_w[0], sb[t]);
        CHECK_MSG(memcmp(sb[0], sb[t], nb * sizeof(double)) == 0, "%s wvsum differs (dt %d n %zu div %g)",
                  tabs[t]->name, (int)dt, n, (double)div);
    }
    bool ok = true;
    for (size_t b = 0; b < nb && ok; b++) {
        const double e = nextok__wvblock(g_w[0] + 64 * b, vals + 64 * b, n - 64 * b < 64 ? n - 64 * b : 64);
        ok = memcmp(&e, &sb[0][b], sizeof e) == 0;
    }
    CHECK_MSG(ok, "ref wvsum != nextok__wvblock (dt %d n %zu div %g)", (int)dt, n, (double)div);
    check_typscan(tabs, dt, n, div, vals);
    if (N == INT32_MIN) return;
    tabs[0]->wvsum(g_row_u32, dt, n, div, g_uw[0], ub);
    for (size_t b = 0; b < nb && ok; b++) ok = ldexp(ub[b], -N) == sb[0][b];
    CHECK_MSG(ok, "unscaled S != canonical S 2^N (dt %d n %zu div %g N %d)", (int)dt, n, (double)div, (int)N);
}

/* The unscaled pass's extremes (no saturation: v = x / div, ±inf on overflow)
 * in every table: vmin / vmax and the group maxima equal the exact ones
 * (NaN ignored; values compared with ==, so a ±0 tie may report either
 * zero), and the weights and sums match the reference's bits. The SIMD
 * tables may take the extremes over the raw x when 0 < div < inf (fl(x /
 * div) is then non-decreasing in x, NaN only where x is) and take them over
 * the quotients otherwise; div < 0 and div = inf exercise the latter. */
static void check_unscaled_extremes(const struct nextok__fused_kernels *const tabs[3], enum nextok_dtype dt,
                                    size_t n, float div)
{
    static float want[MAXN / 256 + 2], bm[MAXN / 256 + 2]; /* bm[ng]: a guard */
    float wlo = INFINITY, whi = -INFINITY;
    const size_t ng = (n + 255) / 256, nb = (n + 63) / 64;
    for (size_t g = 0; g < ng; g++) want[g] = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const float v = nextok__tempv(g_refrow[i], div, 0);
        wlo = v < wlo ? v : wlo;
        whi = v > whi ? v : whi;
        want[i / 256] = v > want[i / 256] ? v : want[i / 256];
    }
    for (int t = 0; t < 3; t++) {
        if (!tabs[t]) continue;
        float lo, hi;
        for (size_t g = 0; g <= ng; g++) bm[g] = 12345.0f;
        tabs[t]->weights(g_row_u32, dt, n, div, &nextok__wref_unscaled, g_uw[t], g_ubs[t], g_ucum[t], bm, &lo, &hi);
        bool ok = lo == wlo && hi == whi && bm[ng] == 12345.0f;
        for (size_t g = 0; g < ng && ok; g++) ok = bm[g] == want[g];
        CHECK_MSG(ok, "%s unscaled extremes (dt %d n %zu div %g): %g %g, want %g %g", tabs[t]->name, (int)dt, n,
                  (double)div, (double)lo, (double)hi, (double)wlo, (double)whi);
        if (t == 0) continue;
        CHECK_MSG(same_f(g_uw[0], g_uw[t], n) && same_d(g_ubs[0], g_ubs[t], nb) && same_d(g_ucum[0], g_ucum[t], nb),
                  "%s unscaled weights differ (dt %d n %zu div %g)", tabs[t]->name, (int)dt, n, (double)div);
    }
}

/* min-p's dense weights (weights_ge) in every table against their
 * definition: the weights of weights (g_w[0] with ref, g_uw[0] unscaled)
 * where the raw x >= ge, 0 elsewhere, and those arrays' block and running
 * sums; cuts below, at, just above and above row values, and NaN. */
static void check_weights_ge(const struct nextok__fused_kernels *const tabs[3], enum nextok_dtype dt, size_t n,
                             float div, const struct nextok__wref *ref)
{
    static float want[MAXN + 64], got[MAXN + 64];
    static double wbs[MAXN / 64 + 2], wcum[MAXN / 64 + 2], gbs[MAXN / 64 + 2], gcum[MAXN / 64 + 2];
    const float at = g_refrow[next_u64() % n];
    const float ges[] = {-INFINITY, at, nextafterf(at, INFINITY), g_refrow[n / 2], INFINITY, NAN};
    const size_t nb = (n + 63) / 64;
    for (int u = 0; u < 2; u++) {
        const struct nextok__wref *rf = u ? &nextok__wref_unscaled : ref;
        const float *base = u ? g_uw[0] : g_w[0];
        for (size_t gi = 0; gi < sizeof ges / sizeof ges[0]; gi++) {
            size_t kept = 0;
            for (size_t i = 0; i < n; i++) {
                want[i] = g_refrow[i] >= ges[gi] ? base[i] : 0.0f;
                kept += g_refrow[i] >= ges[gi];
            }
            double acc = 0.0;
            for (size_t b = 0; b < nb; b++) wcum[b] = acc += wbs[b] = nextok__wblock(want + 64 * b, n - 64 * b < 64 ? n - 64 * b : 64);
            for (int t = 0; t < 3; t++) {
                if (!tabs[t]) continue;
                tabs[t]->weights_ge(g_row_u32, dt, n, div, rf, ges[gi], got, gbs, gcum);
                CHECK_MSG(same_f(want, got, n) && same_d(wbs, gbs, nb) && same_d(wcum, gcum, nb),
                          "%s weights_ge differ (dt %d n %zu div %g ge %g of %zu kept, %s)", tabs[t]->name,
                          (int)dt, n, (double)div, (double)ges[gi], kept, u ? "unscaled" : "canonical");
            }
        }
    }
}

/* ref, AVX2, AVX-512 weights (row and array forms) compared with memcmp, with
 * the canonical reference of the row's maximum and the unscaled one; the
 * reference against libm exp within 1.3e-7 + 3e-9 |x| relative; and where
 * nextok__wref_unscaled_ok holds, unscaled = canonical 2^N exactly. */
static void check_weights(int kind, enum nextok_dtype dt, size_t n, float div)
{
    const struct nextok__kernels *tabs[3] = {nextok__kernels_ref(), NULL, NULL};
    if (nextok_cpu_has_avx2()) tabs[1] = nextok__kernels_avx2();
    if (nextok_cpu_has_avx512()) tabs[2] = nextok__kernels_avx512();
    const struct nextok__fused_kernels *ftabs[3];
    fused_tables(ftabs);
    for (size_t i = 0; i < n; i++) {
        float v = weight_value(kind);
        if (dt != NEXTOK_DTYPE_F32 && fabsf(v) > 6e4f) v = v > 0 ? 6e4f : -6e4f; /* finite in f16 */
        if (dt == NEXTOK_DTYPE_F32) ((float *)g_row_u32)[i] = v, g_refrow[i] = v;
        else if (dt == NEXTOK_DTYPE_F16)
            ((uint16_t *)g_row_u32)[i] = nextok_f32_to_f16(v), g_refrow[i] = nextok_f16_to_f32(((uint16_t *)g_row_u32)[i]);
        else
            ((uint16_t *)g_row_u32)[i] = nextok_f32_to_bf16(v), g_refrow[i] = nextok_bf16_to_f32(((uint16_t *)g_row_u32)[i]);
    }
    float m = -INFINITY, vlo = INFINITY;
    for (size_t i = 0; i < n; i++) {
        float v = div == 1.0f ? g_refrow[i] : nextok__sat(g_refrow[i] / div);
        m = v > m ? v : m;
        vlo = v < vlo ? v : vlo;
    }
    const float vhi = m;
    if (kind == 3 && n > 2) m = nextok__sat(m + 1.0f); /* a reference above every value */
    const struct nextok__wref ref = nextok__wref_of(m);
    const size_t nb = (n + 63) / 64;
    for (int t = 0; t < 3; t++) {
        if (!tabs[t]) continue;
        float lo, hi, ulo, uhi;
        static float bm[MAXN / 256 + 2];
        ftabs[t]->weights(g_row_u32, dt, n, div, &ref, g_w[t], g_bs[t], g_cum[t], bm, &lo, &hi);
        bool bok = true;
        for (size_t b = 0; b < (n + 255) / 256 && bok; b++) {
            float want = -INFINITY;
            for (size_t i = 256 * b; i < n && i < 256 * b + 256; i++) {
                const float v = div == 1.0f ? g_refrow[i] : nextok__sat(g_refrow[i] / div);
                want = v > want ? v : want;
            }
            bok = bm[b] == want;
        }
        CHECK_MSG(bok, "%s weights: group maxima (kind %d dt %d n %zu)", tabs[t]->name, kind, (int)dt, n);
        ftabs[t]->weights(g_row_u32, dt, n, div, &nextok__wref_unscaled, g_uw[t], g_ubs[t], g_ucum[t], NULL, &ulo, &uhi);
        CHECK_MSG(lo == vlo && hi == vhi, "%s weights: vmin/vmax %g %g, want %g %g", tabs[t]->name,
                  (double)lo, (double)hi, (double)vlo, (double)vhi);
        if (t == 0) continue;
        CHECK_MSG(memcmp(g_w[0], g_w[t], n * sizeof(float)) == 0, "%s weights: w differ (kind %d dt %d n %zu div %g)",
                  tabs[t]->name, kind, (int)dt, n, (double)div);
        CHECK_MSG(memcmp(g_bs[0], g_bs[t], nb * sizeof(double)) == 0, "%s weights: block sums differ (kind %d dt %d n %zu)",
                  tabs[t]->name, kind, (int)dt, n);
        CHECK_MSG(memcmp(g_cum[0], g_cum[t], nb * sizeof(double)) == 0, "%s weights: running sums differ (kind %d dt %d n %zu)",
                  tabs[t]->name, kind, (int)dt, n);
        CHECK_MSG(same_f(g_uw[0], g_uw[t], n) && same_d(g_ubs[0], g_ubs[t], nb) && same_d(g_ucum[0], g_ucum[t], nb),
                  "%s unscaled weights differ (kind %d dt %d n %zu div %g)", tabs[t]->name, kind, (int)dt, n,
                  (double)div);
        /* unscaled and within range (values ±inf when an unsaturated quotient overflows) */
        const bool in = div == 1.0f || (ulo >= -3.4028235e38f && uhi <= 3.4028235e38f);
        CHECK_MSG(!in || (ulo == vlo && uhi == vhi), "%s unscaled vmin/vmax", tabs[t]->name);
    }
    bool acc = true;
    for (size_t i = 0; i < n && acc; i++) {
        float v = div == 1.0f ? g_refrow[i] : nextok__sat(g_refrow[i] / div);
        const float x = v - ref.c;
        /* exp(x) 2^-N as exp(x - N ln 2): exp(x) alone underflows for x < -745 */
        const double e = x < ref.cut ? 0.0 : exp((double)x - (double)ref.n * 0.6931471805599453);
        acc = e == 0.0 ? g_w[0][i] == 0.0f : fabs((double)g_w[0][i] - e) <= (1.3e-7 + 3e-9 * fabs((double)x)) * e;
        CHECK_MSG(acc, "expw(%.9g) = %.9g, exp %.9g", (double)x, (double)g_w[0][i], e);
    }
    if (m == vhi && nextok__wref_unscaled_ok(vlo, vhi)) { /* the one-pass path's premise */
        bool ok = true;
        for (size_t i = 0; i < n && ok; i++) ok = ldexpf(g_uw[0][i], -ref.n) == g_w[0][i];
        for (size_t b = 0; b < nb && ok; b++)
            ok = ldexp(g_ubs[0][b], -ref.n) == g_bs[0][b] && ldexp(g_ucum[0][b], -ref.n) == g_cum[0][b];
        CHECK_MSG(ok, "unscaled != canonical 2^N (kind %d dt %d n %zu div %g N %d)", kind, (int)dt, n,
                  (double)div, (int)ref.n);
    }
    /* the array form on the processed values */
    static float vals[MAXN + 64], w2[MAXN + 64];
    for (size_t i = 0; i < n; i++) vals[i] = div == 1.0f ? g_refrow[i] : nextok__sat(g_refrow[i] / div);
    for (int t = 0; t < 3; t++) {
        if (!tabs[t]) continue;
        tabs[t]->expw(vals, n, &ref, w2);
        CHECK_MSG(memcmp(g_w[0], w2, n * sizeof(float)) == 0, "%s expw differs from weights (n %zu)",
                  tabs[t]->name, n);
    }
    check_weights_ge(ftabs, dt, n, div, &ref);
    check_wvsum(ftabs, dt, n, div, vals, m == vhi && nextok__wref_unscaled_ok(vlo, vhi) ? ref.n : INT32_MIN);
    check_unscaled_extremes(ftabs, dt, n, div);
    if (div != 1.0f) check_unscaled_extremes(ftabs, dt, n, -div);
    if (div == 3.0f) check_unscaled_extremes(ftabs, dt, n, INFINITY); /* inf / inf is NaN */
}

/* Rows inside the one-pass range with shifted maxima (N from -40 to 50):
 * unscaled weights are the canonical ones times 2^N, bit for bit, in every
 * table. */
TEST(test_weights_unscaled_exact)
{
    static float row[4099];
    for (int rep = 0; rep < 300; rep++) {
        const size_t n = 1 + next_u64() % 4099;
        const float base = (float)((int)(next_u64() % 130) - 50), spread = (float)(next_u64() % 60);
        for (size_t i = 0; i < n; i++) {
            float v = base - (float)unif() * spread;
            if (next_u64() % 8 == 0) v = base; /* ties at the maximum */
            row[i] = v;
        }
        float lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) lo = fminf(lo, row[i]), hi = fmaxf(hi, row[i]);
        if (!nextok__wref_unscaled_ok(lo, hi)) continue;
        const struct nextok__wref ref = nextok__wref_of(hi);
        CHECK(ref.c == 0.0f);
        const struct nextok__fused_kernels *tabs[3];
        fused_tables(tabs);
        for (int t = 0; t < 3; t++) {
            if (!tabs[t]) continue;
            float a, b;
            tabs[t]->weights(row, NEXTOK_DTYPE_F32, n, 1.0f, &ref, g_w[t], g_bs[t], g_cum[t], NULL, &a, &b);
            tabs[t]->weights(row, NEXTOK_DTYPE_F32, n, 1.0f, &nextok__wref_unscaled, g_uw[t], g_ubs[t], g_ucum[t], NULL, &a, &b);
            bool ok = true;
            for (size_t i = 0; i < n && ok; i++) ok = ldexpf(g_uw[t][i], -ref.n) == g_w[t][i] && g_w[t][i] > 0.0f;
            const size_t nb = (n + 63) / 64;
            for (size_t k = 0; k < nb && ok; k++) ok = ldexp(g_ucum[t][k], -ref.n) == g_cum[t][k];
            CHECK_MSG(ok, "%s: unscaled != canonical 2^N (n %zu base %g spread %g)", tabs[t]->name, n,
                      (double)base, (double)spread);
        }
    }
}

TEST(test_weights_bitexact)
{
    static const size_t lens[] = {1, 2, 7, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 128, 129, 191,
                                  1000, 4099, MAXN};
    static const float divs[] = {1.0f, 0.8f, 0.7f, 3.0f, 1e-30f};
    for (int kind = 0; kind < 4; kind++)
        for (int dt = 0; dt < 3; dt++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                for (size_t di = 0; di < sizeof divs / sizeof divs[0]; di++)
                    check_weights(kind, (enum nextok_dtype)dt, lens[li], divs[di]);
}

/* A sparse candidate set (ids ascending) gives the block sums of the dense
 * row with zeros at non-candidates, bit for bit; and the draw picks the same
 * token in both forms. */
TEST(test_weights_sparse_equals_dense)
{
    static float dense[MAXN], sw[MAXN];
    static int32_t ids[MAXN];
    static double dbs[MAXN / 64 + 2], dcum[MAXN / 64 + 2], scum[MAXN / 64 + 2];
    static size_t bst[MAXN / 64 + 2];
    for (int rep = 0; rep < 200; rep++) {
        const size_t n = 1 + next_u64() % MAXN;
        const unsigned keep = 1 + (unsigned)(next_u64() % 8); /* density 1/keep */
        const uint64_t holes = rep % 2 ? next_u64() : 0; /* odd reps: blocks without candidates */
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            dense[i] = 0.0f;
            if (next_u64() % keep || (holes >> (i / 64 % 64) & 1)) continue;
            dense[i] = nextok__expw(-fabsf(gauss() * 3.0f), &nextok__wref_unscaled);
            ids[k] = (int32_t)i;
            sw[k++] = dense[i];
        }
        if (k == 0) continue;
        const size_t nb = (n + 63) / 64;
        for (size_t b = 0; b < nb; b++) dbs[b] = nextok__wblock(dense + 64 * b, n - 64 * b < 64 ? n - 64 * b : 64);
        const size_t snb = nextok__wset_sparse(ids, sw, k, scum, bst);
        const struct nextok__wset ds = {dense, n, dcum, NULL, nb, nextok__wset_cum(dbs, 0, nb, dcum), NULL};
        const struct nextok__wset ss = {sw, k, scum, bst, snb, scum[snb - 1], NULL};
        CHECK_MSG(memcmp(&ds.z, &ss.z, sizeof(double)) == 0, "Z dense %.17g sparse %.17g", ds.z, ss.z);
        /* the same dense set as fused top-p leaves it: garbage weights in
         * the blocks of sum 0 before its last candidate's block, the set
         * ended there (n = that block's end), bsum given */
        static float stale[MAXN];
        static size_t n_stale_sets;
        memcpy(stale, dense, n * sizeof *stale);
        bool any = false;
        for (size_t i = 0; i < n && (size_t)ids[k - 1] / 64 > i / 64; i++)
            if (dbs[i / 64] == 0.0) stale[i] = 1.0f + (float)(next_u64() % 7), any = true;
        n_stale_sets += any;
        if (rep == 199) CHECK_MSG(n_stale_sets > 20, "only %zu sets with empty blocks", n_stale_sets);
        const size_t end = ((size_t)ids[k - 1] / 64 + 1) * 64 < n ? ((size_t)ids[k - 1] / 64 + 1) * 64 : n;
        const struct nextok__wset es = {stale, end, dcum, NULL, (end + 63) / 64, ds.z, dbs};
        for (int d = 0; d < 50; d++) {
            const double u = d == 0 ? 1.0 - 0x1p-53 : unif(); /* and the top end: the fallback walk */
            const size_t a = nextok__wset_draw(&ds, u), b = nextok__wset_draw(&ss, u);
            const size_t e = nextok__wset_draw(&es, u);
            CHECK_MSG((int32_t)a == ids[b] && e == a, "u %.17g: dense %zu sparse %d stale %zu", u, a,
                      (int)ids[b], e);
        }
    }
}

/* The definition's constants (docs/semantics.md, Canonical weights) and a
 * strided sweep of expw over [-60, 80] (the unscaled reference: exp(x)
 * itself) against libm exp, ref against every SIMD table on the same inputs
 * (memcmp). */
TEST(test_expw_constants_and_sweep)
{
    CHECK(NEXTOK__EXPW_LOG2E16 == NEXTOK__EXPW_LOG2E * 16.0f);
    CHECK(NEXTOK__EXPW_LN2_16 == NEXTOK__EXPW_LN2 / 16.0f);
    CHECK(NEXTOK__EXPW_LOG2E == (float)1.4426950408889634);
    CHECK(NEXTOK__EXPW_LN2 == (float)0.6931471805599453);
    CHECK(NEXTOK__EXPW_C3 == (float)(1.0 / 6.0));
    for (uint32_t j = 0; j < 16; j++) {
        const float f = (float)exp2((double)j / 16.0); /* float nearest 2^(j/16) */
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        CHECK_MSG(nextok__expw_tab[j] == b - (j << 19), "table entry %u", j);
    }
    const struct nextok__kernels *tabs[3] = {nextok__kernels_ref(), NULL, NULL};
    if (nextok_cpu_has_avx2()) tabs[1] = nextok__kernels_avx2();
    if (nextok_cpu_has_avx512()) tabs[2] = nextok__kernels_avx512();
    static float xs[4096], w0[4096], w1[4096];
    const struct nextok__wref *ref = &nextok__wref_unscaled;
    bool ok = true;
    for (int side = 0; side < 2 && ok; side++) { /* [-60, -0], then [+0, 80] */
        const float end = side ? 80.0f : -60.0f;
        uint32_t bend, b0 = side ? 0u : 0x80000000u;
        memcpy(&bend, &end, sizeof bend);
        size_t c = 0;
        for (uint32_t b = b0; b <= bend && ok; b += 2039u) { /* every 2039th float */
            memcpy(&xs[c], &b, sizeof(float));
            if (++c < 4096 && b + 2039u <= bend) continue;
            tabs[0]->expw(xs, c, ref, w0);
            for (size_t i = 0; i < c && ok; i++) {
                const double e = exp((double)xs[i]);
                ok = fabs((double)w0[i] - e) <= (1.3e-7 + 3e-9 * fabs((double)xs[i])) * e &&
                     w0[i] == nextok__expw(xs[i], ref);
                CHECK_MSG(ok, "expw(%.9g) = %.9g, exp %.9g", (double)xs[i], (double)w0[i], e);
            }
            for (int t = 1; t < 3; t++) {
                if (!tabs[t]) continue;
                tabs[t]->expw(xs, c, ref, w1);
                CHECK_MSG(memcmp(w0, w1, c * sizeof(float)) == 0, "%s expw sweep differs", tabs[t]->name);
            }
            c = 0;
        }
    }
}

int main(int argc, char **argv)
{
    harness_init(argc, argv);
    if (GROUP("")) {
        RUN(test_ref_self);
        RUN(test_tables_complete);
        RUN(test_compact_long_rows);
        RUN(test_compact_half_thresholds);
        RUN(test_dispatch);
        RUN(test_weights_bitexact);
        RUN(test_weights_unscaled_exact);
        RUN(test_weights_sparse_equals_dense);
        RUN(test_expw_constants_and_sweep);
    }
    /* Each kernel table against the reference: skipped (77) on a CPU without it. */
    if (GROUP("avx2")) RUN(test_avx2);
    if (GROUP("avx512")) RUN(test_avx512);
    return harness_done();
}
