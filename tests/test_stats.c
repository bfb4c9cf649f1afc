/*
 * test_stats: the selectors draw from the distribution they report.
 *
 * For each configuration the chain samples N = 10^5 tokens at steps 0..N-1
 * (nextok_chain_set_step; each step is an independent Philox draw) and the
 * counts are compared with the oracle's exact distribution by Pearson's
 * chi-square. Expected counts below 5 are pooled into one bin (merged into
 * the smallest regular bin if the pool itself is below 5). A draw outside the
 * support fails at once.
 *
 * False alarms: each test fails when P(chi2 >= observed) < 1e-6, so a correct
 * library fails one configuration with probability 1e-6, about 2e-5 for the
 * whole file. Seeds are fixed, so a run is deterministic: a failure repeats.
 *
 * Besides the frequency tests, the exact-draw tests recompute the spec's
 * draw itself (inverse CDF in id order for dist, argmax of logit + Gumbel noise
 * for gumbel) from the oracle's own Philox and check the token step by step.
 */
#include <stdint.h>
#include <time.h>

#include "harness.h"
#include "nextok.h"
#include "oracle.h"

#define N_DRAWS 100000
#define P_FAIL 1e-6

/* ---- rows ------------------------------------------------------------------ */

/* 2.5 * normal with a few boosted tokens: mass spread over a few dozen ids. */
static float *peaked_row(int32_t V, uint64_t seed, int n_boost, double boost)
{
    struct tu_gen g = {seed};
    float *row = malloc((size_t)V * sizeof *row);
    for (int32_t i = 0; i < V; i++) row[i] = (float)(1.5 * tu_norm(&g));
    for (int b = 0; b < n_boost; b++) row[tu_int(&g, V)] += (float)(boost + tu_range(&g, -1, 1));
    return row;
}

/* ---- the chi-square test ----------------------------------------------------- */


/* Draw N tokens at steps 0..N-1 and test them against expect. */
static void draw_and_test(const char *name, struct nextok_chain *c, const void *row,
                          enum nextok_dtype dt, const long double *expect, int32_t V)
{
    long *count = calloc((size_t)V, sizeof *count);
    int bad = 0;
    clock_t t0 = clock();
    for (long s = 0; s < N_DRAWS; s++) {
        int32_t tok = -1;
        nextok_chain_set_step(c, (uint64_t)s);
        nextok_status rc = nextok_chain_sample(c, row, dt, &tok);
        if (rc != NEXTOK_OK || tok < 0 || tok >= V) {
            if (!bad++) CHECK_MSG(0, "%s: step %ld: %s token %d", name, s, nextok_status_name(rc), (int)tok);
            continue;
        }
        count[tok]++;
    }
    struct or_chi2 r = or_chi2_fit(count, expect, V, N_DRAWS);
    printf("  %-34s bins %4d  chi2 %9.2f  df %4.0f  p %.3g  outside-support %d  (%.1fs)\n", name, r.bins,
           r.stat, r.df, r.p, r.impossible, (double)(clock() - t0) / CLOCKS_PER_SEC);
    CHECK_EQ_INT(bad, 0);
    CHECK_MSG(r.impossible == 0, "%s: %d draws outside the support", name, r.impossible);
    CHECK_MSG(r.bins >= 5, "%s: only %d bins: the test has little power", name, r.bins);
    CHECK_MSG(r.p >= P_FAIL, "%s: chi2 %.2f df %.0f p %.3g < %g", name, r.stat, r.df, r.p, P_FAIL);
    free(count);
}

/* The oracle's distribution as expect[id]. */
static long double *oracle_expect(const float *row, int32_t V, const struct or_stage *st, size_t n_st,
                                  const struct or_hist *h)
{
    long double *e = calloc((size_t)V, sizeof *e);
    struct or_result res;
    or_run(row, V, NEXTOK_NAN_ERROR, st, n_st, h, &res);
    CHECK_EQ_INT(res.status, NEXTOK_OK);
    CHECK_MSG(!res.ambiguous, "oracle near-tie in a fixed configuration: %s", res.why);
    for (size_t i = 0; i < res.n; i++) e[res.c[i].id] = res.c[i].p;
    or_result_free(&res);
    return e;
}

static struct nextok_chain *chain_of(int32_t V, struct nextok_sampler **s, size_t n)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    for (size_t i = 0; i < n; i++) {
        CHECK(s[i] != NULL);
        if (c && s[i]) CHECK_OK(nextok_chain_add(c, s[i]));
    }
    return c;
}

/* ---- selectors on their own ------------------------------------------------- */

static void selector_alone(const char *name, int gumbel, enum nextok_dtype dt, uint64_t seed)
{
    const int32_t V = 500;
    float *row = peaked_row(V, seed, 12, 4.5);
    uint16_t *half = malloc((size_t)V * sizeof *half);
    float *wide = malloc((size_t)V * sizeof *wide);
    for (int32_t i = 0; i < V; i++) {
        half[i] = dt == NEXTOK_DTYPE_F16 ? nextok_f32_to_f16(row[i]) : nextok_f32_to_bf16(row[i]);
        wide[i] = dt == NEXTOK_DTYPE_F32 ? row[i]
                  : dt == NEXTOK_DTYPE_F16 ? nextok_f16_to_f32(half[i]) : nextok_bf16_to_f32(half[i]);
    }
    struct nextok_sampler *s = NULL;
    CHECK_OK(gumbel ? nextok_sampler_init_gumbel(&s, seed, NULL) : nextok_sampler_init_dist(&s, seed, NULL));
    struct nextok_chain *c = chain_of(V, &s, 1);
    struct or_stage st[1] = {{.kind = OR_SOFTMAX}};
    struct or_hist h = {0};
    long double *e = oracle_expect(wide, V, st, 1, &h);
    if (c) draw_and_test(name, c, dt == NEXTOK_DTYPE_F32 ? (const void *)row : half, dt, e, V);
    nextok_chain_free(c);
    free(e), free(row), free(half), free(wide);
}

/* The chi-square tail against closed forms: even df (Poisson sum) and df 1 (erfc). */
TEST(chi2_tail_reference)
{
    static const double xs[] = {0.5, 3.0, 9.5, 20.0, 80.0, 1100.0, 1300.0};
    static const int dfs[] = {2, 10, 40, 1000};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        for (size_t j = 0; j < sizeof dfs / sizeof dfs[0]; j++) {
            long double h = xs[i] / 2, term = expl(-h), sum = 0;
            for (int k = 0; k < dfs[j] / 2; k++) sum += term, term *= h / (k + 1);
            double got = or_chi2_sf(xs[i], dfs[j]);
            CHECK_MSG(fabs(got - (double)sum) <= 1e-9 * (double)sum + 1e-300, "sf(%g, %d) = %.12g, want %.12Lg",
                      xs[i], dfs[j], got, sum);
        }
        CHECK_NEAR(or_chi2_sf(xs[i], 1), erfc(sqrt(xs[i] / 2)), 1e-12);
    }
    CHECK_NEAR(or_chi2_sf(3.841458820694124, 1), 0.05, 1e-12);
}

TEST(dist_alone) { selector_alone("dist f32", 0, NEXTOK_DTYPE_F32, 11); }
TEST(gumbel_alone) { selector_alone("gumbel f32", 1, NEXTOK_DTYPE_F32, 12); }
TEST(dist_bf16_ties) { selector_alone("dist bf16 (many ties)", 0, NEXTOK_DTYPE_BF16, 13); }
TEST(gumbel_f16) { selector_alone("gumbel f16", 1, NEXTOK_DTYPE_F16, 14); }

/* temperature + top-k before a selector (manual chain). */
static void filtered_selector(const char *name, int gumbel, uint64_t seed)
{
    const int32_t V = 400;
    float *row = peaked_row(V, seed, 20, 3.0);
    struct nextok_sampler *s[3] = {NULL, NULL, NULL};
    CHECK_OK(nextok_sampler_init_temp(&s[0], 0.7f, NULL));
    CHECK_OK(nextok_sampler_init_top_k(&s[1], 50, NEXTOK_TIES_EXACT, NULL));
    CHECK_OK(gumbel ? nextok_sampler_init_gumbel(&s[2], seed, NULL) : nextok_sampler_init_dist(&s[2], seed, NULL));
    struct nextok_chain *c = chain_of(V, s, 3);
    struct or_stage st[3] = {{.kind = OR_TEMP, .t = 0.7f},
                             {.kind = OR_TOP_K, .k = 50, .ties = NEXTOK_TIES_EXACT},
                             {.kind = OR_SOFTMAX}};
    struct or_hist h = {0};
    long double *e = oracle_expect(row, V, st, 3, &h);
    if (c) draw_and_test(name, c, row, NEXTOK_DTYPE_F32, e, V);
    nextok_chain_free(c);
    free(e), free(row);
}

TEST(dist_temp_top_k) { filtered_selector("temp 0.7 + top_k 50 + dist", 0, 21); }
TEST(gumbel_temp_top_k) { filtered_selector("temp 0.7 + top_k 50 + gumbel", 1, 22); }

/* ---- whole profiles ---------------------------------------------------------- */

static struct nextok_sampling_params base_params(enum nextok_profile p, int32_t V, uint64_t seed)
{
    struct nextok_sampling_params sp = nextok_sampling_default_params(p);
    sp.profile = p;
    sp.n_vocab = V;
    sp.seed = seed;
    sp.selector = NEXTOK_SELECTOR_CATEGORICAL;
    sp.temperature = 1.0f, sp.dynatemp_range = 0.0f, sp.dynatemp_exponent = 1.0f;
    sp.top_k = 0, sp.top_p = 1.0f, sp.min_p = 0.0f, sp.typical_p = 1.0f, sp.top_n_sigma = 0.0f;
    sp.xtc_probability = 0.0f, sp.xtc_threshold = 0.1f, sp.epsilon_cutoff = 0.0f, sp.eta_cutoff = 0.0f;
    sp.min_keep = 1;
    sp.repeat_penalty = 1.0f, sp.frequency_penalty = 0.0f, sp.presence_penalty = 0.0f;
    sp.penalty_last_n = 64;
    sp.dry_multiplier = 0.0f;
    sp.no_repeat_ngram = 0, sp.mirostat = 0, sp.min_tokens = 0;
    sp.logit_bias = NULL, sp.n_logit_bias = 0, sp.allowed_ids = NULL, sp.n_allowed = 0;
    sp.banned_ids = NULL, sp.n_banned = 0, sp.eog_ids = NULL, sp.n_eog = 0, sp.samplers = NULL;
    sp.nan_policy = NEXTOK_NAN_ERROR;
    return sp;
}

/* Expected distribution of a profile; XTC as its exact mixture. */
static long double *profile_expect(const struct nextok_sampling_params *sp, const float *row,
                                   const struct or_hist *h)
{
    struct or_stage st[OR_MAX_STAGES];
    size_t n;
    struct nextok_sampling_params on = *sp, off = *sp;
    on.xtc_probability = 1.0f;  /* u < 1 always: XTC filters */
    off.xtc_probability = 0.0f; /* never */
    CHECK(or_profile_stages(&on, st, &n) == 0);
    long double *e_on = oracle_expect(row, sp->n_vocab, st, n, h);
    CHECK(or_profile_stages(&off, st, &n) == 0);
    long double *e_off = oracle_expect(row, sp->n_vocab, st, n, h);
    /* the coin is u < probability with u uniform on the 2^53 grid */
    long double q = ceill((long double)sp->xtc_probability * 0x1p53L) / 0x1p53L;
    for (int32_t i = 0; i < sp->n_vocab; i++) e_on[i] = q * e_on[i] + (1 - q) * e_off[i];
    free(e_off);
    return e_on;
}

static void profile_case(const char *name, const struct nextok_sampling_params *sp, const float *row,
                         const int32_t *prompt, size_t n_prompt, const int32_t *out, size_t n_out)
{
    struct or_hist h = {prompt, n_prompt, out, n_out, 0};
    long double *e = profile_expect(sp, row, &h);
    struct nextok_chain *c = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_chain_init_sampling(&c, sp, &err);
    CHECK_MSG(rc == NEXTOK_OK, "%s: init_sampling %s: %s", name, nextok_status_name(rc), err.msg);
    if (c) {
        CHECK_OK(nextok_chain_set_prompt(c, prompt, n_prompt));
        for (size_t i = 0; i < n_out; i++) CHECK_OK(nextok_chain_accept(c, out[i]));
        draw_and_test(name, c, row, NEXTOK_DTYPE_F32, e, sp->n_vocab);
    }
    nextok_chain_free(c);
    free(e);
}

TEST(vllm_top_p)
{
    const int32_t V = 500;
    float *row = peaked_row(V, 31, 25, 3.0);
    for (int sel = 0; sel < 2; sel++) {
        struct nextok_sampling_params sp = base_params(NEXTOK_PROFILE_VLLM, V, 310 + (uint64_t)sel);
        sp.selector = sel ? NEXTOK_SELECTOR_GUMBEL : NEXTOK_SELECTOR_CATEGORICAL;
        sp.temperature = 0.8f, sp.top_p = 0.9f;
        profile_case(sel ? "vllm t0.8 top_p0.9 gumbel" : "vllm t0.8 top_p0.9 dist", &sp, row, NULL, 0, NULL, 0);
    }
    free(row);
}

TEST(llama_top_k_min_p_penalties)
{
    const int32_t V = 500;
    float *row = peaked_row(V, 41, 30, 2.0);
    static const int32_t prompt[] = {1, 2, 3, 4, 5, 1, 2, 3};
    int32_t out[12];
    for (int i = 0; i < 12; i++) out[i] = (int32_t)((i * 37) % 60); /* some hit boosted ids */
    struct nextok_sampling_params sp = base_params(NEXTOK_PROFILE_LLAMA, V, 41);
    sp.top_k = 40, sp.min_p = 0.02f, sp.temperature = 0.8f;
    profile_case("llama top_k40 min_p0.02 t0.8", &sp, row, NULL, 0, NULL, 0);
    sp.repeat_penalty = 1.3f, sp.frequency_penalty = 0.2f, sp.presence_penalty = 0.3f;
    sp.penalty_last_n = 10;
    for (int i = 0; i < 12; i++) row[out[i]] += 2.0f; /* make the penalties matter */
    profile_case("llama + penalties (window 10)", &sp, row, prompt, 8, out, 12);
    free(row);
}

TEST(hf_typical_eta)
{
    const int32_t V = 400;
    float *row = peaked_row(V, 51, 15, 2.5);
    struct nextok_sampling_params sp = base_params(NEXTOK_PROFILE_HF, V, 51);
    sp.temperature = 1.2f, sp.top_k = 60, sp.typical_p = 0.9f, sp.eta_cutoff = 0.003f;
    profile_case("hf t1.2 top_k60 typical0.9 eta", &sp, row, NULL, 0, NULL, 0);
    free(row);
}

/* XTC is random: the target is its exact mixture. The logits put several
 * tokens above the threshold so that the two components differ a lot. */
TEST(xtc_mixture)
{
    const int32_t V = 300;
    float *row = peaked_row(V, 61, 0, 0);
    row[10] = 7.0f, row[20] = 6.8f, row[30] = 6.5f, row[40] = 6.2f;
    struct nextok_sampling_params sp = base_params(NEXTOK_PROFILE_VLLM, V, 61);
    sp.xtc_probability = 0.5f, sp.xtc_threshold = 0.1f;
    profile_case("vllm xtc p0.5 thr0.1", &sp, row, NULL, 0, NULL, 0);
    sp = base_params(NEXTOK_PROFILE_LLAMA, V, 62);
    sp.xtc_probability = 0.3f, sp.xtc_threshold = 0.05f, sp.temperature = 0.9f, sp.top_k = 100;
    sp.selector = NEXTOK_SELECTOR_GUMBEL;
    profile_case("llama xtc p0.3 thr0.05 gumbel", &sp, row, NULL, 0, NULL, 0);
    free(row);
}

/* Mirostat v2 at its initial mu = 2 tau (no token accepted, so mu stays). */
TEST(mirostat_v2_fixed_mu)
{
    const int32_t V = 600;
    float *row = peaked_row(V, 71, 30, 3.0);
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_mirostat_v2(&s, 71, 3.5f, 0.1f, NULL));
    CHECK(s == NULL || fabsf(nextok_sampler_mirostat_mu(s) - 7.0f) < 1e-6f);
    struct nextok_chain *c = chain_of(V, &s, 1);
    struct or_stage st[1] = {{.kind = OR_MIROSTAT_V2, .mu = 7.0f}};
    struct or_hist h = {0};
    long double *e = oracle_expect(row, V, st, 1, &h);
    if (c) draw_and_test("mirostat v2 tau 3.5 (mu 7)", c, row, NEXTOK_DTYPE_F32, e, V);
    if (c) CHECK_NEAR(nextok_sampler_mirostat_mu(nextok_chain_get(c, 0)), 7.0, 1e-6);
    nextok_chain_free(c);
    free(e);

    struct nextok_sampling_params sp = base_params(NEXTOK_PROFILE_LLAMA, V, 72);
    sp.mirostat = 2, sp.mirostat_tau = 3.0f, sp.mirostat_eta = 0.1f, sp.temperature = 0.9f;
    profile_case("llama mirostat 2 tau 3 t0.9", &sp, row, NULL, 0, NULL, 0);
    free(row);
}

/* ---- greedy ---------------------------------------------------------------- */

TEST(greedy_is_argmax)
{
    const int32_t V = 700;
    float *row = peaked_row(V, 81, 5, 2.0);
    row[123] = 50.0f, row[77] = 50.0f; /* a tie at the top: lower id wins */
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_greedy(&s, NULL));
    struct nextok_chain *c = chain_of(V, &s, 1);
    struct nextok_sampling_params sp = base_params(NEXTOK_PROFILE_VLLM, V, 82);
    sp.temperature = 0.0f;
    struct nextok_chain *c2 = NULL;
    CHECK_OK(nextok_chain_init_sampling(&c2, &sp, NULL));
    int wrong = 0;
    for (uint64_t step = 0; step < 2000 && c && c2; step++) {
        int32_t a = -1, b = -1;
        nextok_chain_set_step(c, step * 7919);
        nextok_chain_set_step(c2, step);
        CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &a));
        CHECK_OK(nextok_chain_sample(c2, row, NEXTOK_DTYPE_F32, &b));
        wrong += (a != 77) + (b != 77);
    }
    CHECK_EQ_INT(wrong, 0);
    nextok_chain_free(c);
    nextok_chain_free(c2);
    free(row);
}

/* ---- exact draws: the spec's procedure, recomputed ------------------------- */

/* Final candidates of a small chain, from the oracle (floats as stored). */
static struct or_result final_cands(const float *row, int32_t V, const struct or_stage *st, size_t n)
{
    struct or_hist h = {0};
    struct or_result res;
    or_run(row, V, NEXTOK_NAN_ERROR, st, n, &h, &res);
    CHECK_EQ_INT(res.status, NEXTOK_OK);
    CHECK(!res.ambiguous);
    return res;
}

static int cmp_cand_id(const void *a, const void *b)
{
    const struct or_cand *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* dist: walk ids ascending, first cumulative exp(l - m) > u Z. -1: boundary near-tie. */
static int32_t dist_token(const struct or_result *r, double u)
{
    long double m = r->c[0].l, z = 0, cum = 0;
    for (size_t i = 0; i < r->n; i++) z += expl((long double)r->c[i].l - m);
    long double target = (long double)u * z;
    for (size_t i = 0; i < r->n; i++) {
        cum += expl((long double)r->c[i].l - m);
        if (fabsl(cum - target) <= 1e-12L * z) return -1;
        if (cum > target) return r->c[i].id;
    }
    return -1;
}

/* gumbel: argmax logit + (-ln(-ln u_id)), ties to the lower id. -1: near-tie. */
static int32_t gumbel_token(const struct or_result *r, uint64_t seed, uint64_t step)
{
    long double best = -INFINITY, second = -INFINITY;
    int32_t arg = -1;
    for (size_t i = 0; i < r->n; i++) {
        double u = or_uniform_open(seed, step, NEXTOK_RNG_GUMBEL, (uint32_t)r->c[i].id);
        long double v = (long double)r->c[i].l - logl(-logl(u));
        if (v > best) second = best, best = v, arg = r->c[i].id;
        else if (v > second) second = v;
    }
    return best - second <= 1e-9L * (1 + fabsl(best)) ? -1 : arg;
}

static void exact_draws(int gumbel)
{
    const int32_t V = 1000;
    const uint64_t seed = gumbel ? 0x1234567890abcdefull : 99;
    float *row = peaked_row(V, 91 + (uint64_t)gumbel, 12, 4.0);
    struct nextok_sampler *s[3] = {NULL, NULL, NULL};
    CHECK_OK(nextok_sampler_init_temp(&s[0], 0.6f, NULL));
    CHECK_OK(nextok_sampler_init_top_k(&s[1], 200, NEXTOK_TIES_KEEP, NULL));
    CHECK_OK(gumbel ? nextok_sampler_init_gumbel(&s[2], seed, NULL) : nextok_sampler_init_dist(&s[2], seed, NULL));
    struct nextok_chain *c = chain_of(V, s, 3);
    struct or_stage st[3] = {{.kind = OR_TEMP, .t = 0.6f},
                             {.kind = OR_TOP_K, .k = 200, .ties = NEXTOK_TIES_KEEP},
                             {.kind = OR_SOFTMAX}};
    struct or_result r = final_cands(row, V, st, 3);
    qsort(r.c, r.n, sizeof *r.c, cmp_cand_id); /* dist walks ids ascending */
    int n_steps = gumbel ? 3000 : 30000, checked = 0, wrong = 0, near = 0;
    for (int i = 0; i < n_steps && c && r.n; i++) {
        uint64_t step = (uint64_t)i * 1000003u; /* spread over the step space */
        int32_t want = gumbel ? gumbel_token(&r, seed, step)
                              : dist_token(&r, or_uniform(seed, step, NEXTOK_RNG_DIST, 0));
        if (want < 0) {
            near++;
            continue;
        }
        int32_t got = -1;
        nextok_chain_set_step(c, step);
        CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &got));
        if (got != want && wrong++ < 5)
            printf("  %s step %llu: chain %d, spec %d\n", gumbel ? "gumbel" : "dist", (unsigned long long)step,
                   (int)got, (int)want);
        checked++;
    }
    printf("  %s exact draws: %d checked, %d near-ties skipped, %d wrong\n", gumbel ? "gumbel" : "dist",
           checked, near, wrong);
    CHECK_EQ_INT(wrong, 0);
    CHECK(checked > n_steps * 9 / 10);
    nextok_chain_free(c);
    or_result_free(&r);
    free(row);
}

TEST(dist_exact_draws) { exact_draws(0); }
TEST(gumbel_exact_draws) { exact_draws(1); }

int main(void)
{
    clock_t t0 = clock();
    RUN(chi2_tail_reference);
    RUN(dist_alone);
    RUN(gumbel_alone);
    RUN(dist_bf16_ties);
    RUN(gumbel_f16);
    RUN(dist_temp_top_k);
    RUN(gumbel_temp_top_k);
    RUN(vllm_top_p);
    RUN(llama_top_k_min_p_penalties);
    RUN(hf_typical_eta);
    RUN(xtc_mixture);
    RUN(mirostat_v2_fixed_mu);
    RUN(greedy_is_argmax);
    RUN(dist_exact_draws);
    RUN(gumbel_exact_draws);
    printf("test_stats: %.1fs cpu\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
    return harness_done();
}
