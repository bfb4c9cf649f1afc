/*
 * The fused path against the plain chain. For hundreds of random sampling
 * configurations (every profile, every dtype, every selector; penalties,
 * bias, masks, DRY, n-grams, min-tokens, XTC, mirostat) and peaked, flat and
 * adversarial rows (ties, all-equal, huge values, ±inf, NaN), a chain and its
 * clone with an observer (which disables the fused path) must give the same
 * status, the same survivors, p within 1e-6 and the same token, step after
 * step with accepted tokens in between. NEXTOK_TEST_SCALE (default 1) scales
 * the number of configurations (the sanitizer builds set it lower).
 */
#include "harness.h"
#include "sample/arch/kernels.h"
#include "sample/chain_internal.h"
#include "sample/fused/internal.h"
#include "nextok.h"

#include <float.h>
#include <stdarg.h>
#include <stdint.h>

static uint64_t g_s = 42;

static uint64_t rnd(void)
{
    uint64_t z = (g_s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unif(void) { return (double)(rnd() >> 11) * 0x1p-53; }
static size_t pick(size_t n) { return (size_t)(rnd() % n); }

static float gauss(void)
{
    double u = unif(), v = unif();
    return (float)(sqrt(-2.0 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v));
}

enum row_kind { R_PEAKED, R_FLAT, R_TIES, R_EQUAL, R_HUGE, R_INF, R_NAN, R_NEGINF, R_COUNT };

static float row_value(enum row_kind k, size_t i)
{
    switch (k) {
    case R_FLAT: return gauss();
    case R_TIES: return (float)(int)(gauss() * 2.0f);
    case R_EQUAL: return 0.75f;
    case R_HUGE: return gauss() * 1e37f;
    default: (void)i; return 2.5f * gauss();
    }
}

static void make_row(enum row_kind k, size_t V, float *row)
{
    for (size_t i = 0; i < V; i++) row[i] = row_value(k, i);
    if (k == R_PEAKED)
        for (int j = 0; j < 20 && V > 0; j++) row[pick(V)] += 8.0f + 6.0f * (float)unif();
    if (k == R_INF && V > 2) row[pick(V)] = INFINITY;
    if (k == R_NAN && V > 2) row[pick(V)] = NAN;
    if (k == R_NEGINF)
        for (size_t i = 0; i < V; i++)
            if (rnd() % 3 == 0) row[i] = -INFINITY;
}

/* The row in dtype (f16/bf16 rounded from f32). */
static const void *as_dtype(const float *row, size_t V, enum nextok_dtype dt, uint16_t *half)
{
    if (dt == NEXTOK_DTYPE_F32) return row;
    for (size_t i = 0; i < V; i++)
        half[i] = dt == NEXTOK_DTYPE_F16 ? nextok_f32_to_f16(row[i]) : nextok_f32_to_bf16(row[i]);
    return half;
}

static void observe(size_t i, const char *name, const struct nextok_token_data_array *cur, void *u)
{
    (void)i;
    (void)name;
    (void)cur;
    (void)u;
}

struct cfg_buf {
    struct nextok_logit_bias bias[8];
    int32_t allowed[64], banned[8], eog[2], breakers[4];
    size_t breaker_off[3];
};

static const float temps[] = {0.0f, 0.5f, 0.8f, 1.0f, 1.7f};

static void random_params(struct nextok_sampling_params *p, size_t V, struct cfg_buf *b)
{
    p->seed = rnd();
    p->selector = (enum nextok_selector)pick(3);
    if (pick(4) == 0) p->selector = NEXTOK_SELECTOR_CATEGORICAL;
    p->temperature = temps[pick(5)];
    p->top_k = pick(3) ? (int32_t)(int[]){0, 1, 5, 40, 200}[pick(5)] : (int32_t)V;
    p->top_k_ties = (enum nextok_ties)pick(2);
    p->top_p = pick(2) ? 1.0f : (float[]){0.5f, 0.9f, 0.95f}[pick(3)];
    p->min_p = pick(2) ? 0.0f : (float[]){0.01f, 0.05f, 0.3f, 1.0f}[pick(4)];
    p->typical_p = pick(4) ? 1.0f : 0.9f;
    p->top_n_sigma = pick(3) ? 0.0f : (float[]){0.5f, 1.0f, 2.0f}[pick(3)];
    p->min_keep = pick(3) ? 1 : pick(50);
    if (pick(6) == 0) p->xtc_probability = 0.5f, p->xtc_threshold = 0.1f;
    if (pick(6) == 0) p->epsilon_cutoff = 0.001f;
    if (pick(6) == 0) p->eta_cutoff = 0.001f;
    if (pick(2)) {
        p->repeat_penalty = 1.0f + (float)unif();
        p->frequency_penalty = (float)unif();
        p->presence_penalty = (float)unif();
    }
    if (pick(5) == 0) {
        p->dry_multiplier = 0.8f;
        b->breakers[0] = 1;
        b->breaker_off[0] = 0;
        b->breaker_off[1] = 1;
        p->dry_breaker_ids = b->breakers;
        p->dry_breaker_off = b->breaker_off;
        p->dry_n_breakers = 1;
    }
    if (pick(6) == 0) p->no_repeat_ngram = 2;
    if (pick(3) == 0) {
        size_t n = 1 + pick(8);
        for (size_t i = 0; i < n; i++)
            b->bias[i] = (struct nextok_logit_bias){(int32_t)pick(V),
                                                    pick(5) ? (float)(gauss() * 5) : -INFINITY};
        p->logit_bias = b->bias;
        p->n_logit_bias = n;
    }
    if (pick(8) == 0 && V > 4) {
        size_t n = 1 + pick(V < 64 ? V : 64);
        for (size_t i = 0; i < n; i++) b->allowed[i] = (int32_t)pick(V);
        p->allowed_ids = b->allowed;
        p->n_allowed = n;
    }
    if (pick(5) == 0) {
        size_t n = 1 + pick(8);
        for (size_t i = 0; i < n; i++) b->banned[i] = (int32_t)pick(V);
        p->banned_ids = b->banned;
        p->n_banned = n;
    }
    if (pick(6) == 0) {
        b->eog[0] = (int32_t)pick(V);
        p->eog_ids = b->eog;
        p->n_eog = 1;
        p->min_tokens = 2;
    }
    if (pick(10) == 0) p->mirostat = 2;
    if (pick(25) == 0) p->mirostat = 1;
    if (p->profile == NEXTOK_PROFILE_LLAMA && pick(4) == 0) p->samplers = "top_k;penalties;min_p;temperature;top_p";
}

static int g_fused_calls, g_total_calls;

static void print_chain(const struct nextok_chain *c)
{
    printf("    chain:");
    for (size_t i = 0; i < nextok_chain_n(c); i++) printf(" %s", nextok_sampler_name(nextok_chain_get(c, i)));
    printf("\n");
}

/* One step on both chains: same status, survivors, p, token. */
static bool compare_step(struct nextok_chain *fa, struct nextok_chain *pl, const void *row,
                         enum nextok_dtype dt, size_t V, struct nextok_token_data *o1,
                         struct nextok_token_data *o2, int32_t *tok_out, const char *what)
{
    size_t n1 = 0, n2 = 0;
    int32_t t1 = -1, t2 = -1;
    nextok_status r1 = nextok_chain_probs(fa, row, dt, o1, V, &n1, &t1);
    nextok_status r2 = nextok_chain_probs(pl, row, dt, o2, V, &n2, &t2);
    g_total_calls++;
    g_fused_calls += nextok_chain_last_fused(fa);
    bool ok = r1 == r2;
    CHECK_MSG(r1 == r2, "%s: status %s vs %s", what, nextok_status_name(r1), nextok_status_name(r2));
    if (!ok || r1 != NEXTOK_OK) {
        *tok_out = -1;
        return ok;
    }
    CHECK_MSG(n1 == n2 && t1 == t2, "%s: n %zu vs %zu, token %d vs %d", what, n1, n2, (int)t1, (int)t2);
    if (n1 != n2 || t1 != t2) {
        print_chain(fa);
        return false;
    }
    for (size_t i = 0; i < n1; i++) {
        if (o1[i].id != o2[i].id || fabsf(o1[i].p - o2[i].p) > 1e-6f) {
            CHECK_MSG(false, "%s: entry %zu: id %d p %.9g vs id %d p %.9g", what, i, (int)o1[i].id,
                      (double)o1[i].p, (int)o2[i].id, (double)o2[i].p);
            return false;
        }
    }
    *tok_out = t1;
    return true;
}

static size_t g_vocabs[] = {1, 2, 3, 17, 100, 1000, 3001, 20000, 50000};

static void one_config(int iter)
{
    static float row[50000];
    static uint16_t half[50000];
    static struct nextok_token_data o1[50000], o2[50000];
    const size_t V = g_vocabs[pick(sizeof g_vocabs / sizeof g_vocabs[0])];
    enum nextok_profile prof = (enum nextok_profile)pick(3);
    struct nextok_sampling_params p = nextok_sampling_default_params(prof);
    struct cfg_buf b;
    memset(&b, 0, sizeof b);
    p.n_vocab = (int32_t)V;
    random_params(&p, V, &b);
    enum row_kind rk = (enum row_kind)pick(R_COUNT);
    if (rk == R_NAN && pick(2)) p.nan_policy = NEXTOK_NAN_AS_NEG_INF;
    struct nextok_chain *fa = NULL, *pl = NULL;
    struct nextok_error err;
    if (nextok_chain_init_sampling(&fa, &p, &err) != NEXTOK_OK) return; /* invalid combination */
    if (nextok_chain_clone(fa, &pl) != NEXTOK_OK) {
        nextok_chain_free(fa);
        return; /* a sampler without clone */
    }
    nextok_chain_set_observer(pl, observe, NULL);
    int32_t prompt[16];
    size_t np = pick(16);
    for (size_t i = 0; i < np; i++) prompt[i] = (int32_t)pick(V);
    CHECK_OK(nextok_chain_set_prompt(fa, prompt, np));
    CHECK_OK(nextok_chain_set_prompt(pl, prompt, np));
    enum nextok_dtype dt = (enum nextok_dtype)pick(3);
    char what[160];
    for (int step = 0; step < 4; step++) {
        make_row(rk, V, row);
        const void *r = as_dtype(row, V, dt, half);
        snprintf(what, sizeof what, "iter %d V %zu prof %d dt %d row %d step %d", iter, V, (int)prof,
                 (int)dt, (int)rk, step);
        int32_t tok;
        if (!compare_step(fa, pl, r, dt, V, o1, o2, &tok, what)) break;
        if (tok < 0) tok = (int32_t)pick(V);
        CHECK_OK(nextok_chain_accept(fa, tok));
        CHECK_OK(nextok_chain_accept(pl, tok));
    }
    nextok_chain_free(fa);
    nextok_chain_free(pl);
}

/* 100 at NEXTOK_TEST_SCALE 1 (the default; the quick tier runs less, the
 * sanitizer builds 0.3): the same multiplier as oracle.h's tu_scale(). */
static int scale(void)
{
    const char *s = getenv("NEXTOK_TEST_SCALE");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    const double dflt = 0.3; /* sanitizer builds: fewer configurations */
#else
    const double dflt = 1.0;
#endif
    double m = s && atof(s) > 0 ? atof(s) : dflt;
    int v = (int)(100.0 * m + 0.5);
    return v > 0 ? v : 1;
}

TEST(test_fused_random_configs)
{
    int n = 6 * scale();
    for (int i = 0; i < n; i++) one_config(i);
    printf("  %d calls, %d fused\n", g_total_calls, g_fused_calls);
    CHECK(g_fused_calls > g_total_calls / 3);
}

/* Hand-built chains: each fusable first stage, every tie mode, tiny rows. */
static void run_chain_pair(struct nextok_sampler **ss, size_t n, size_t V, enum row_kind rk,
                           enum nextok_dtype dt)
{
    static float row[20000];
    static uint16_t half[20000];
    static struct nextok_token_data o1[20000], o2[20000];
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = (int32_t)V;
    struct nextok_chain *fa = NULL, *pl = NULL;
    CHECK_OK(nextok_chain_init(&fa, &cp, NULL));
    for (size_t i = 0; i < n; i++) CHECK_OK(nextok_chain_add(fa, ss[i]));
    CHECK_OK(nextok_chain_clone(fa, &pl));
    nextok_chain_set_observer(pl, observe, NULL);
    make_row(rk, V, row);
    const void *r = as_dtype(row, V, dt, half);
    int32_t tok;
    char what[64];
    snprintf(what, sizeof what, "manual V %zu row %d dt %d", V, (int)rk, (int)dt);
    for (uint64_t st = 0; st < 3; st++) {
        nextok_chain_set_step(fa, st);
        nextok_chain_set_step(pl, st);
        compare_step(fa, pl, r, dt, V, o1, o2, &tok, what);
    }
    nextok_chain_free(fa);
    nextok_chain_free(pl);
}

TEST(test_fused_manual_chains)
{
    for (int rep = 0; rep < scale() / 4 + 1; rep++)
        for (int rk = 0; rk < R_COUNT; rk++)
            for (int dt = 0; dt < 3; dt++) {
                size_t V = (size_t)(int[]){5, 64, 999, 20000}[pick(4)];
                struct nextok_sampler *s[4] = {0};
                int which = (int)pick(6);
                float t = temps[pick(5)];
                CHECK_OK(nextok_sampler_init_temp(&s[0], t, NULL));
                if (which == 0) CHECK_OK(nextok_sampler_init_top_k(&s[1], 1 + (int)pick(50), (enum nextok_ties)pick(2), NULL));
                if (which == 1) CHECK_OK(nextok_sampler_init_min_p(&s[1], 0.1f, pick(8), NULL));
                if (which == 2) CHECK_OK(nextok_sampler_init_top_n_sigma(&s[1], 1.0f, NULL));
                if (which == 3) CHECK_OK(nextok_sampler_init_top_p(&s[1], 0.9f, (enum nextok_ties)pick(2), 1, NULL));
                if (which == 4) CHECK_OK(nextok_sampler_init_typical(&s[1], 0.9f, 1, NULL));
                if (which == 5) CHECK_OK(nextok_sampler_init_greedy(&s[1], NULL));
                if (pick(2)) CHECK_OK(nextok_sampler_init_gumbel(&s[2], 7, NULL));
                else CHECK_OK(nextok_sampler_init_dist(&s[2], 7, NULL));
                run_chain_pair(s, 3, V, (enum row_kind)rk, (enum nextok_dtype)dt);
            }
}

/* An empty chain over V tokens. */
/* Append the sampler init(&s, ...) makes to chain c. */
#define ADD(c, init, ...)                                                  \
    do {                                                                   \
        struct nextok_sampler *s_ = NULL;                                  \
        CHECK_OK(init(&s_, __VA_ARGS__));                                  \
        CHECK_OK(nextok_chain_add(c, s_));                                 \
    } while (0)

static struct nextok_chain *chain_of(size_t V)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = (int32_t)V;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    return c;
}

/* One step of chain fa against its plain clone on the given row (f32
 * values, passed as dtype dt), both freed after; returns whether fa ran
 * the fused path. */
static bool row_pair(struct nextok_chain *fa, const float *row, size_t V, enum nextok_dtype dt,
                     const char *what)
{
    static uint16_t half[70000];
    static struct nextok_token_data o1[70000], o2[70000];
    struct nextok_chain *pl = NULL;
    CHECK_OK(nextok_chain_clone(fa, &pl));
    nextok_chain_set_observer(pl, observe, NULL);
    int32_t tok;
    compare_step(fa, pl, as_dtype(row, V, dt, half), dt, V, o1, o2, &tok, what);
    const bool fused = nextok_chain_last_fused(fa);
    nextok_chain_free(fa);
    nextok_chain_free(pl);
    return fused;
}

/* The rows of one test: how many were compared and how many ran fused. */
struct tally {
    int runs, fused;
};

/* row_pair with a printf-style description, counted into tl. */
static void tally_pair(struct tally *tl, struct nextok_chain *fa, const float *row, size_t V, int dt,
                       const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    tl->fused += row_pair(fa, row, V, (enum nextok_dtype)dt, what);
    tl->runs++;
}

/* Some rows were compared, and every one ran fused. */
static void tally_all_fused(const struct tally *tl, const char *label)
{
    printf("  %d %s, %d fused\n", tl->runs, label, tl->fused);
    CHECK(tl->fused == tl->runs && tl->runs > 0);
}

/*
 * The top candidates by blocks (collect_top on rows of at least 8 blocks of
 * 512 ids when the candidates needed are at most a quarter of the blocks):
 * rows whose top values share one block, whose block maxima tie, that are
 * all negative, whose blocks' maxima have either sign or are zeros of either
 * sign, or plain; the top ids touched by penalties or pushed down by
 * a logit bias (so a block maximum can be a touched id and the route falls
 * back); top-k, min-p + top-k and min-p alone, every dtype, against the
 * plain chain.
 */
TEST(test_fused_block_route)
{
    static float row[70000];
    struct tally tl = {0, 0};
    for (int rep = 0; rep < scale() / 2 + 8; rep++)
        for (int dt = 0; dt < 3; dt++) {
            const size_t V = (size_t)(int[]){4096, 8269, 20000, 65541}[pick(4)];
            const size_t kmax = V / 512 / 4;
            const int k = 1 + (int)pick(kmax);
            /* 0 plain, 1 top values in one block, 2 ties, 3 all negative,
             * 4 blocks of either sign, 5 zeros of either sign */
            const int layout = (int)pick(6);
            for (size_t i = 0; i < V; i++) {
                const float g = gauss();
                row[i] = layout == 2 ? roundf(g * 2.0f) * 0.5f
                         : layout == 3 ? g - 50.0f
                         : layout == 4 ? (i / 512 % 3 == 0 ? g : g - 50.0f)
                         : layout == 5 ? (pick(2) ? 0.0f : -0.0f)
                                       : g;
            }
            int32_t top[64];
            const size_t nt = (size_t)k + 2 < 64 ? (size_t)k + 2 : 64;
            const size_t base = pick(V - 64);
            for (size_t j = 0; j < nt; j++) { /* the top values: one block, or anywhere */
                top[j] = (int32_t)(layout == 1 ? base + j : pick(V));
                row[top[j]] = (layout == 3 ? -40.0f : 8.0f) + (float)unif() * (layout == 2 ? 0.0f : 2.0f);
            }
            if (layout == 5 && pick(2)) /* or only a few positive values */
                for (size_t j = 0; j < nt; j++) row[top[j]] = pick(2) ? 0.0f : 1e-39f;
            struct nextok_chain *fa = chain_of(V);
            const int touch = (int)pick(3); /* 0: none, 1: penalties, 2: logit bias */
            if (touch == 1) {
                struct nextok_penalty_params pp = nextok_penalty_default_params((int32_t)V);
                pp.repeat = 1.3f;
                pp.presence = 0.5f;
                ADD(fa, nextok_sampler_init_penalties, &pp, NULL);
            } else if (touch == 2) {
                struct nextok_logit_bias lb[4];
                for (int j = 0; j < 4; j++) lb[j] = (struct nextok_logit_bias){top[pick(nt)], -(float)(5.0 + unif() * 20.0)};
                ADD(fa, nextok_sampler_init_logit_bias, (int32_t)V, lb, 4, NULL);
            }
            const float t = (float[]){0.8f, 1.0f}[pick(2)];
            ADD(fa, nextok_sampler_init_temp, t, NULL);
            const int stages = (int)pick(3); /* top-k | min-p + top-k | min-p */
            if (stages) {
                ADD(fa, nextok_sampler_init_min_p, stages == 1 ? 0.3f : 0.05f, 1, NULL);
            }
            if (stages < 2) {
                ADD(fa, nextok_sampler_init_top_k, k, (enum nextok_ties)pick(2), NULL);
            }
            ADD(fa, nextok_sampler_init_dist, 29 + (uint64_t)rep, NULL);
            for (size_t j = 0; touch == 1 && j < nt; j += 2) CHECK_OK(nextok_chain_accept(fa, top[j]));
            tally_pair(&tl, fa, row, V, dt, "block route V %zu k %d layout %d touch %d stages %d t %g dt %d",
                       V, k, layout, touch, stages, (double)t, dt);
        }
    tally_all_fused(&tl, "rows on the block route's sizes");
}

/*
 * top-k larger than the untouched ids: most of the row is touched (a logit
 * bias on 1300-1900 of 2000 ids, some banned) and the untouched ids are the
 * row's highest, so the sampled guess leaves every untouched id compacted
 * above a finite threshold while the top k must also take overrides from
 * below it.
 */
TEST(test_fused_top_k_beyond_untouched)
{
    static float row[2000];
    static struct nextok_logit_bias lb[2000];
    struct tally tl = {0, 0};
    for (int rep = 0; rep < scale() / 4 + 6; rep++)
        for (int dt = 0; dt < 3; dt++) {
            const size_t V = 2000, nb = 1300 + pick(600);
            /* the untouched ids high (all above a guess from the sample, which
             * is mostly touched ids), the touched ones plain */
            for (size_t i = 0; i < V; i++) row[i] = gauss() + 10.0f;
            for (size_t j = 0; j < nb; j++) { /* ids spread over the row */
                const int32_t id = (int32_t)(j * V / nb);
                row[id] -= 10.0f;
                lb[j] = (struct nextok_logit_bias){id, pick(8) ? (float)(unif() * 6.0 - 3.0) : -INFINITY};
            }
            const int k = (int)(V - nb) + 1 + (int)pick(400);
            struct nextok_chain *fa = chain_of(V);
            ADD(fa, nextok_sampler_init_logit_bias, (int32_t)V, lb, nb, NULL);
            ADD(fa, nextok_sampler_init_temp, 0.7f, NULL);
            ADD(fa, nextok_sampler_init_top_k, k, (enum nextok_ties)pick(2), NULL);
            ADD(fa, nextok_sampler_init_dist, 41 + (uint64_t)rep, NULL);
            tally_pair(&tl, fa, row, V, dt, "top-k %d beyond %zu untouched, dt %d", k, V - nb, dt);
        }
    tally_all_fused(&tl, "rows with top-k beyond the untouched ids");
}

/*
 * min-p followed by top-k (the vllm order) around the point where min-p keeps
 * exactly k: the fused path counts min-p's survivors before it selects the
 * top k + 1, so groups of k - 2 .. k + 2 high values (ties, overrides from a
 * logit bias, every dtype and temperature) must give the plain chain's
 * survivors, p and token.
 */
TEST(test_fused_min_p_top_k_boundary)
{
    static float row[20000];
    for (int rep = 0; rep < scale() + 4; rep++)
        for (int dt = 0; dt < 3; dt++) {
            const size_t V = (size_t)(int[]){64, 999, 4097, 20000}[pick(4)];
            const int k = (int[]){1, 2, 5, 40}[pick(4)];
            const float t = (float[]){0.5f, 0.8f, 1.0f, 1.7f}[pick(4)];
            const float mp = (float[]){0.05f, 0.3f, 0.9f}[pick(3)];
            const size_t g = (size_t)(k + 3 > 3 ? k : 1) + pick(5) - (k >= 2 ? 2 : 0);
            for (size_t i = 0; i < V; i++) row[i] = gauss();
            /* g values near the top: all within min-p's reach, or spread
             * across its threshold; ties when rounded */
            const bool spread = pick(2), ties = pick(2);
            for (size_t j = 0; j < g && j < V; j++) {
                float v = 20.0f + (spread ? (float)unif() * 3.0f * t : (float)unif() * 0.01f);
                if (ties) v = roundf(v * 4.0f) / 4.0f;
                row[pick(V)] = v;
            }
            struct nextok_chain *fa = chain_of(V);
            if (pick(2)) {
                struct nextok_logit_bias lb[4];
                for (int i = 0; i < 4; i++)
                    lb[i] = (struct nextok_logit_bias){(int32_t)pick(V), pick(4) ? (float)(unif() * 40 - 20) : -INFINITY};
                ADD(fa, nextok_sampler_init_logit_bias, (int32_t)V, lb, 4, NULL);
            }
            ADD(fa, nextok_sampler_init_temp, t, NULL);
            ADD(fa, nextok_sampler_init_min_p, mp, pick(3) ? 1 : pick((size_t)k + 3), NULL);
            ADD(fa, nextok_sampler_init_top_k, k, (enum nextok_ties)pick(2), NULL);
            if (pick(2)) {
                ADD(fa, nextok_sampler_init_top_p, 0.95f, NEXTOK_TIES_KEEP, 1, NULL);
            }
            ADD(fa, nextok_sampler_init_dist, 11 + (uint64_t)rep, NULL);
            char what[96];
            snprintf(what, sizeof what, "min-p/top-k V %zu k %d g %zu t %g p %g dt %d", V, k, g,
                     (double)t, (double)mp, dt);
            CHECK_MSG(row_pair(fa, row, V, (enum nextok_dtype)dt, what), "%s: not fused", what);
        }
}

/*
 * min-p (temperature, dist) when the row's largest values belong to touched
 * ids: a logit bias moves them down (below, into or above the untouched
 * values' reach) or bans them, so the row's maximum is not the candidates'
 * maximum and the threshold taken from the row is too high. The fused path
 * must find the candidates' maximum all the same (with and without
 * overrides left: banned ids leave none).
 */
TEST(test_fused_min_p_touched_top)
{
    static float row[20000];
    struct tally tl = {0, 0};
    for (int rep = 0; rep < scale() + 8; rep++)
        for (int dt = 0; dt < 3; dt++) {
            const size_t V = (size_t)(int[]){2, 64, 999, 20000}[pick(4)];
            const float t = (float[]){0.5f, 0.8f, 1.0f, 1.7f}[pick(4)];
            const float mp = (float[]){0.05f, 0.3f, 0.9f}[pick(3)];
            for (size_t i = 0; i < V; i++) row[i] = gauss();
            struct nextok_logit_bias lb[4];
            const size_t g = 1 + pick(V < 4 ? V - 1 : 4);
            const bool ban = pick(3) == 0;
            for (size_t j = 0; j < g; j++) { /* distinct ids: j-th of g evenly spread */
                const int32_t id = (int32_t)(j * (V / g) + pick(V / g));
                row[id] = 20.0f + (float)unif() * 5.0f;
                lb[j] = (struct nextok_logit_bias){id, ban ? -INFINITY : -(float)(18.0 + unif() * 30.0)};
            }
            if (g == V) continue; /* banning every id leaves nothing to sample */
            struct nextok_chain *fa = chain_of(V);
            ADD(fa, nextok_sampler_init_logit_bias, (int32_t)V, lb, g, NULL);
            ADD(fa, nextok_sampler_init_temp, t, NULL);
            ADD(fa, nextok_sampler_init_min_p, mp, 1, NULL);
            ADD(fa, nextok_sampler_init_dist, 5 + (uint64_t)rep, NULL);
            tally_pair(&tl, fa, row, V, dt, "min-p touched top V %zu g %zu ban %d t %g p %g dt %d", V, g,
                       (int)ban, (double)t, (double)mp, dt);
        }
    tally_all_fused(&tl, "min-p rows with touched top values");
}

/*
 * min-p right before dist on rows where many survive: the fused path then
 * draws densely (weights_ge, cut_draw) instead of compacting the survivors.
 * Flat rows of several spreads (1 % to half the row survives; some offset
 * by 75), every dtype
 * and temperature, touched ids lowered, raised above the row or banned,
 * min_keep up to far more than survive (the sparse route's fallback), and
 * chains whose dist does not directly follow (sparse). Both routes must be
 * taken; every row is compared with the plain chain (survivors, p, token).
 */
TEST(test_fused_min_p_dense)
{
    static float row[70000];
    struct tally tl = {0, 0};
    int dense = 0, sparse = 0;
    for (int rep = 0; rep < scale() + 8; rep++)
        for (int dt = 0; dt < 3; dt++) {
            const size_t V = (size_t)(int[]){4096, 5000, 20000, 70000}[pick(4)];
            const float t = (float[]){0.5f, 0.8f, 1.0f, 1.7f}[pick(4)];
            const float mp = (float[]){0.01f, 0.05f, 0.1f, 0.3f}[pick(4)];
            const float spread = (float[]){0.3f, 1.0f, 2.0f}[pick(3)];
            /* an offset of 75 puts some rows' values (over t) beyond where
             * unscaled weights are exact: the pass then takes the canonical
             * reference */
            const float off = pick(3) ? 0.0f : 75.0f;
            for (size_t i = 0; i < V; i++) row[i] = off + spread * gauss();
            struct nextok_logit_bias lb[6];
            const size_t g = pick(7);
            for (size_t j = 0; j < g; j++) { /* distinct ids: j-th of g evenly spread */
                const int32_t id = (int32_t)(j * (V / g) + pick(V / g));
                const int how = (int)pick(3);
                lb[j] = (struct nextok_logit_bias){id, how == 0 ? -INFINITY : how == 1 ? 3.0f * spread : -2.0f};
            }
            const size_t mk = pick(4) ? 1 : (size_t)(int[]){0, 2, 40, 3000}[pick(4)];
            const int shape = (int)pick(4); /* 0-2: min-p, dist; 3: min-p, top-k 5000, dist */
            struct nextok_chain *fa = chain_of(V);
            if (g) ADD(fa, nextok_sampler_init_logit_bias, (int32_t)V, lb, g, NULL);
            ADD(fa, nextok_sampler_init_temp, t, NULL);
            ADD(fa, nextok_sampler_init_min_p, mp, mk, NULL);
            if (shape == 3) ADD(fa, nextok_sampler_init_top_k, 5000, NEXTOK_TIES_EXACT, NULL);
            ADD(fa, nextok_sampler_init_dist, 11 + (uint64_t)rep, NULL);
            /* which route ran: a clone samples the row and tells whether its set stayed dense */
            struct nextok_chain *probe = NULL;
            CHECK_OK(nextok_chain_clone(fa, &probe));
            int32_t tok = -1;
            CHECK_OK(nextok_chain_sample(probe, row, NEXTOK_DTYPE_F32, &tok));
            if (nextok__chain_dist(probe)) dense++;
            else sparse++;
            nextok_chain_free(probe);
            tally_pair(&tl, fa, row, V, dt, "min-p dense V %zu t %g p %g spread %g g %zu mk %zu shape %d dt %d", V,
                       (double)t, (double)mp, (double)spread, g, mk, shape, dt);
        }
    printf("  min-p rows: %d drawn densely, %d through the survivors\n", dense, sparse);
    CHECK(dense > 0 && sparse > 0);
    tally_all_fused(&tl, "min-p rows, dense or not");
}

/*
 * top-p whose p sits at, or a relative 2^-22 .. 2^-15 and a few ulp
 * around, the cumulative probability of one of the top candidates of a
 * peaked row: the fused path decides such rows
 * from the few heavy candidates and a bound on the total mass when the bound
 * allows, and runs the full crossing search when it does not; either way the
 * plain chain's survivors, p and token. p comes from a double softmax here
 * (only to aim at the boundary; the comparison is with the chain).
 */
TEST(test_fused_top_p_heavy_boundary)
{
    static float row[20000];
    static uint16_t half[20000];
    static double e[20000];
    struct tally tl = {0, 0};
    for (int rep = 0; rep < scale() + 8; rep++)
        for (int dt = 0; dt < 3; dt++) {
            const size_t V = (size_t)(int[]){999, 4097, 20000}[pick(3)];
            const float t = (float[]){0.5f, 0.8f, 1.0f, 1.7f}[pick(4)];
            const size_t g = 1 + pick(6);
            for (size_t i = 0; i < V; i++) row[i] = gauss();
            for (size_t j = 0; j < g; j++) row[pick(V)] = 10.0f + (float)unif() * 6.0f;
            as_dtype(row, V, (enum nextok_dtype)dt, half);
            for (size_t i = 0; dt && i < V; i++) /* the values the chain sees */
                row[i] = dt == NEXTOK_DTYPE_F16 ? nextok_f16_to_f32(half[i]) : nextok_bf16_to_f32(half[i]);
            double m = -INFINITY, z = 0.0;
            for (size_t i = 0; i < V; i++) m = row[i] / t > m ? row[i] / t : m;
            for (size_t i = 0; i < V; i++) z += e[i] = exp(row[i] / t - m);
            /* the cumulative probability of the top j candidates, j random */
            const size_t j = 1 + pick(g);
            double cum = 0.0;
            for (size_t k = 0; k < j; k++) {
                size_t best = 0;
                for (size_t i = 1; i < V; i++) best = e[i] > e[best] ? i : best;
                cum += e[best] / z;
                e[best] = -1.0;
            }
            /* relative offsets inside and outside the bound's margin (2^-19) */
            const double off = (double[]){0.0, 0x1p-22, -0x1p-22, 0x1p-18, -0x1p-18, 0x1p-15, -0x1p-15}[pick(7)];
            float p = (float)(cum * (1.0 + off));
            for (int u = (int)pick(5) - 2; u != 0; u += u > 0 ? -1 : 1)
                p = nextafterf(p, u > 0 ? INFINITY : 0.0f);
            if (!(p > 0.0f && p < 1.0f)) continue;
            struct nextok_chain *fa = chain_of(V);
            ADD(fa, nextok_sampler_init_temp, t, NULL);
            ADD(fa, nextok_sampler_init_top_p, p, (enum nextok_ties)pick(2), 1, NULL);
            ADD(fa, nextok_sampler_init_dist, 17 + (uint64_t)rep, NULL);
            tally_pair(&tl, fa, row, V, dt, "top-p heavy V %zu g %zu j %zu t %g p %.9g dt %d", V, g, j,
                       (double)t, (double)p, dt);
        }
    tally_all_fused(&tl, "top-p rows aimed at a boundary");
}

/* The fused path actually runs on the standard profiles. */
TEST(test_fused_is_used)
{
    static float row[32000];
    for (int prof = 0; prof < 3; prof++) {
        struct nextok_sampling_params p = nextok_sampling_default_params((enum nextok_profile)prof);
        p.n_vocab = 32000;
        p.seed = 5;
        p.temperature = 0.8f;
        p.top_k = 40;
        p.top_p = 0.95f;
        p.min_p = 0.05f;
        p.repeat_penalty = 1.1f;
        struct nextok_chain *c = NULL;
        CHECK_OK(nextok_chain_init_sampling(&c, &p, NULL));
        make_row(R_PEAKED, 32000, row);
        int32_t tok;
        CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
        CHECK_MSG(nextok_chain_last_fused(c), "profile %d not fused", prof);
        nextok_chain_free(c);
    }
    /* typical (p < 1) then dist fuses too */
    struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    p.n_vocab = 32000;
    p.seed = 5;
    p.typical_p = 0.95f;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init_sampling(&c, &p, NULL));
    make_row(R_PEAKED, 32000, row);
    int32_t tok;
    CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
    CHECK_MSG(nextok_chain_last_fused(c), "typical not fused");
    nextok_chain_free(c);
}

/* Full-vocabulary dist (processors, temperature, dist): the fused path keeps
 * the distribution dense; sample, probs (bit-equal p: same arithmetic),
 * processed logprobs and sample_n must match the plain chain exactly. */
static void dense_pair(struct nextok_chain *fa, size_t V, enum row_kind rk, enum nextok_dtype dt)
{
    static float row[20000];
    static uint16_t half[20000];
    static struct nextok_token_data o1[20000], o2[20000];
    struct nextok_chain *pl = NULL;
    CHECK_OK(nextok_chain_clone(fa, &pl));
    nextok_chain_set_observer(pl, observe, NULL);
    make_row(rk, V, row);
    const void *r = as_dtype(row, V, dt, half);
    for (uint64_t st = 0; st < 4; st++) {
        nextok_chain_set_step(fa, st);
        nextok_chain_set_step(pl, st);
        int32_t a = -1, b = -1;
        nextok_status ra = nextok_chain_sample(fa, r, dt, &a), rb = nextok_chain_sample(pl, r, dt, &b);
        CHECK_MSG(ra == rb && a == b, "dense V %zu dt %d step %d: token %d (%s) vs %d (%s)", V, (int)dt,
                  (int)st, (int)a, nextok_status_name(ra), (int)b, nextok_status_name(rb));
        if (ra != NEXTOK_OK || rb != NEXTOK_OK) break;
        /* processed logprobs straight after sample (dense on the fused side) */
        struct nextok_logprob t1[5], t2[5];
        size_t n1 = 0, n2 = 0;
        float l1 = 0, l2 = 0;
        int32_t k1 = 0, k2 = 0;
        CHECK_OK(nextok_chain_logprobs(fa, NEXTOK_LOGPROBS_PROCESSED, NULL, dt, a, 5, t1, &n1, &l1, &k1));
        CHECK_OK(nextok_chain_logprobs(pl, NEXTOK_LOGPROBS_PROCESSED, NULL, dt, b, 5, t2, &n2, &l2, &k2));
        CHECK_MSG(n1 == n2 && l1 == l2 && k1 == k2 && memcmp(t1, t2, n1 * sizeof *t1) == 0,
                  "dense logprobs differ (V %zu): %.9g/%d vs %.9g/%d", V, (double)l1, (int)k1, (double)l2, (int)k2);
        int32_t s1[8], s2[8];
        CHECK_OK(nextok_chain_sample_n(fa, r, dt, 8, s1));
        CHECK_OK(nextok_chain_sample_n(pl, r, dt, 8, s2));
        CHECK_MSG(memcmp(s1, s2, sizeof s1) == 0, "dense sample_n differs (V %zu)", V);
        size_t m1 = 0, m2 = 0;
        CHECK_OK(nextok_chain_probs(fa, r, dt, o1, V, &m1, &a));
        CHECK_OK(nextok_chain_probs(pl, r, dt, o2, V, &m2, &b));
        CHECK_MSG(m1 == m2 && a == b && memcmp(o1, o2, m1 * sizeof *o1) == 0,
                  "dense probs differ (V %zu): n %zu vs %zu, token %d vs %d", V, m1, m2, (int)a, (int)b);
        CHECK_OK(nextok_chain_accept(fa, a));
        CHECK_OK(nextok_chain_accept(pl, b));
    }
    nextok_chain_free(pl);
}

/* Six random biases in [-span/2, span/2), a quarter of them bans (-inf). */
static void add_bias6(struct nextok_chain *c, size_t V, double span)
{
    struct nextok_logit_bias lb[6];
    for (int i = 0; i < 6; i++)
        lb[i] = (struct nextok_logit_bias){(int32_t)pick(V), pick(4) ? (float)(unif() * span - span / 2) : -INFINITY};
    ADD(c, nextok_sampler_init_logit_bias, (int32_t)V, lb, 6, NULL);
}

/* A temperature from {0.5, 0.8, 1, 1.7}, half the time. */
static void maybe_temp(struct nextok_chain *c)
{
    if (!pick(2)) return;
    ADD(c, nextok_sampler_init_temp, (float[]){0.5f, 0.8f, 1.0f, 1.7f}[pick(4)], NULL);
}

/* dense_pair on chain c, counted, then c freed. */
static void pair_and_free(struct nextok_chain *c, size_t V, int rk, int dt, int *runs, int *fused)
{
    dense_pair(c, V, (enum row_kind)rk, (enum nextok_dtype)dt);
    ++*runs;
    *fused += nextok_chain_last_fused(c);
    nextok_chain_free(c);
}

TEST(test_fused_dense_dist)
{
    int fused = 0, runs = 0;
    for (int rep = 0; rep < scale() / 4 + 2; rep++)
        for (int rk = 0; rk < R_COUNT; rk++)
            for (int dt = 0; dt < 3; dt++) {
                const size_t V = (size_t)(int[]){1, 5, 64, 65, 999, 20000}[pick(6)];
                struct nextok_chain *c = chain_of(V);
                if (pick(2)) { /* bias (some bans) and a banned list */
                    add_bias6(c, V, 10.0);
                    int32_t ban[3] = {(int32_t)pick(V), (int32_t)pick(V), (int32_t)pick(V)};
                    if (V > 3 && ban[0] != ban[1] && ban[1] != ban[2] && ban[0] != ban[2]) {
                        ADD(c, nextok_sampler_init_banned, (int32_t)V, ban, 3, NULL);
                    }
                }
                const float t = (float[]){0.5f, 0.8f, 1.0f, 1.7f}[pick(4)];
                ADD(c, nextok_sampler_init_temp, t, NULL);
                ADD(c, nextok_sampler_init_dist, 11 + (uint64_t)rep, NULL);
                pair_and_free(c, V, rk, dt, &runs, &fused);
            }
    printf("  %d dense-dist chains, %d ended on the fused path\n", runs, fused);
    CHECK(fused > 0);
}

/* Whether a clone of c draws from a dense set on a flat row whose values
 * lie in [-2, 2]: a Gaussian row's maximum is now and then an outlier that
 * lifts min-p's cut until fewer than 1 in 64 sampled values survive (the
 * sparse route: right, but not what a probe of the dense route wants);
 * here min-p 0.03 at t 0.8 keeps at least 30 %. */
static bool probe_dense(const struct nextok_chain *c, float *row)
{
    struct nextok_chain *probe = NULL;
    CHECK_OK(nextok_chain_clone(c, &probe));
    for (size_t i = 0; i < 20000; i++) row[i] = (float)(4.0 * unif() - 2.0);
    int32_t tok = -1;
    CHECK_OK(nextok_chain_sample(probe, row, NEXTOK_DTYPE_F32, &tok));
    const bool dense = nextok__chain_dist(probe) != NULL;
    nextok_chain_free(probe);
    return dense;
}

/* min-p's dense draw through every reader of a dense set: sample over four
 * steps, processed logprobs, sample_n, probs and accept, as dense_pair
 * checks them against the plain chain. Flat rows of 20000 where at least
 * about 4 % survive (t >= 0.8, p <= 0.03), far past the dense route's 1 in
 * 64; a probe on another flat row of the same chain confirms the route. */
TEST(test_fused_min_p_dense_readers)
{
    static float row[20000];
    int fused = 0, runs = 0, dense = 0, probes = 0;
    for (int rep = 0; rep < scale() / 4 + 4; rep++)
        for (int dt = 0; dt < 3; dt++) {
            struct nextok_chain *c = chain_of(20000);
            const bool biased = pick(2);
            if (biased) add_bias6(c, 20000, 6.0);
            ADD(c, nextok_sampler_init_temp, (float[]){0.8f, 1.0f, 1.7f}[pick(3)], NULL);
            ADD(c, nextok_sampler_init_min_p, (float[]){0.01f, 0.03f}[pick(2)], 1, NULL);
            ADD(c, nextok_sampler_init_dist, 21 + (uint64_t)rep, NULL);
            if (!biased) {
                /* the route on a flat row (a bias of up to +3 raises the
                 * maximum, and then the cut, so biased chains may well take
                 * the sparse route: not probed) */
                dense += probe_dense(c, row);
                probes++;
            }
            pair_and_free(c, 20000, R_FLAT, dt, &runs, &fused);
        }
    printf("  %d min-p chains on flat rows, %d ended on the fused path, %d of %d probes dense\n", runs, fused,
           dense, probes);
    CHECK(fused == runs && dense == probes && probes > 0);
}

/*
 * A temperature between the fused filter and dist (llama.cpp's order:
 * min-p, temperature, dist; top-p, temperature, dist; typical,
 * temperature, dist): the filter's cut applies to the values before the
 * temperature, the draw to those after. Through every reader of the result
 * (dense_pair: four steps, processed logprobs, sample_n, probs, accept)
 * against the plain chain; flat rows, where min-p and top-p keep many and
 * draw from a dense set (a probe confirms it), and peaked ones; touched ids
 * raised, lowered and banned; every dtype and ties mode.
 */
TEST(test_fused_temp_after_filter)
{
    static float row[20000];
    int fused = 0, runs = 0, dense = 0, dense_want = 0;
    for (int rep = 0; rep < scale() / 4 + 3; rep++)
        for (int which = 0; which < 3; which++)
            for (int dt = 0; dt < 3; dt++) {
                const int rk = pick(2) ? R_FLAT : (int[]){R_PEAKED, R_TIES, R_EQUAL}[pick(3)];
                struct nextok_chain *c = chain_of(20000);
                const bool biased = pick(2); /* a bias raises the maximum: not probed */
                if (biased) add_bias6(c, 20000, 6.0);
                if (which == 0) ADD(c, nextok_sampler_init_min_p, (float[]){0.01f, 0.05f}[pick(2)], 1, NULL);
                if (which == 1)
                    ADD(c, nextok_sampler_init_top_p, (float[]){0.5f, 0.9f}[pick(2)], (enum nextok_ties)pick(2), 1, NULL);
                if (which == 2) ADD(c, nextok_sampler_init_typical, 0.9f, 1, NULL);
                ADD(c, nextok_sampler_init_temp, (float[]){0.5f, 0.8f, 1.7f}[pick(3)], NULL);
                ADD(c, nextok_sampler_init_dist, 31 + (uint64_t)rep, NULL);
                if (rk == R_FLAT && which < 2 && !biased) { /* the dense route: a probe on another flat row */
                    dense += probe_dense(c, row);
                    dense_want++;
                }
                pair_and_free(c, 20000, rk, dt, &runs, &fused);
            }
    printf("  %d filter-temperature-dist chains, %d fused, %d of %d flat probes dense\n", runs, fused, dense,
           dense_want);
    CHECK(fused == runs && dense == dense_want && dense_want > 0);
}

/* top-p first (processors and a temperature before it; a quarter of the
 * chains use Mirostat v2 instead): fuse_top_p's cut (exact masses above
 * estimated thresholds) against top_p.c's sorted walk, densely drawn when dist
 * follows, emitted in sorted order when another stage does; every ties mode,
 * min_keep and p, tie-heavy rows included. */
TEST(test_fused_top_p)
{
    int fused = 0, runs = 0;
    for (int rep = 0; rep < scale() / 2 + 2; rep++)
        for (int rk = 0; rk < R_COUNT; rk++)
            for (int dt = 0; dt < 3; dt++) {
                const size_t V = (size_t)(int[]){1, 2, 5, 64, 65, 999, 4097, 20000}[pick(8)];
                struct nextok_chain *c = chain_of(V);
                if (pick(2)) add_bias6(c, V, 10.0);
                maybe_temp(c);
                if (pick(4) == 0) { /* Mirostat v2 instead (fuse_miro2), tau 0.5 .. 8 */
                    ADD(c, nextok_sampler_init_mirostat_v2, 9 + (uint64_t)rep, (float)(0.5 + unif() * 7.5),
                        (float)unif(), NULL);
                    pair_and_free(c, V, rk, dt, &runs, &fused);
                    continue;
                }
                const float p = (float[]){0.05f, 0.5f, 0.9f, 0.95f, 0.999f, (float)unif()}[pick(6)];
                ADD(c, nextok_sampler_init_top_p, p > 0.0f ? p : 0.5f, (enum nextok_ties)pick(2),
                    pick(3) ? 1 : pick(40), NULL);
                if (pick(3) == 0) { /* a tail stage: the sorted survivors are emitted */
                    ADD(c, nextok_sampler_init_min_p, 0.02f, 1, NULL);
                }
                ADD(c, nextok_sampler_init_dist, 3 + (uint64_t)rep, NULL);
                pair_and_free(c, V, rk, dt, &runs, &fused);
            }
    printf("  %d top-p / mirostat-v2 chains, %d ended on the fused path\n", runs, fused);
    CHECK(fused > 0);
}

/*
 * top-p on rows built against its estimate: top-p samples runs of 32 ids at
 * even gaps (V / 128) to place its first interval. Raising only the sampled
 * ids (or only the others) makes the estimate too high (too low), so the
 * crossing falls outside the first interval, the second, or both, and every
 * route (the interval on either side, the four thresholds) must still give
 * the plain chain's survivors, p and token.
 */
TEST(test_fused_top_p_estimate_misses)
{
    static float row[20000];
    struct tally tl = {0, 0};
    for (int rep = 0; rep < scale() + 8; rep++)
        for (int dt = 0; dt < 3; dt++) {
            const size_t V = (size_t)(int[]){8192, 20000}[pick(2)], gap = V / 128;
            const float t = (float[]){0.7f, 1.0f, 1.5f}[pick(3)];
            const float p = (float[]){0.3f, 0.6f, 0.9f, 0.99f}[pick(4)];
            const float up = (float[]){1.0f, 2.5f, 5.0f}[pick(3)];
            const bool in_runs = pick(2);
            for (size_t i = 0; i < V; i++) row[i] = gauss() + (((i % gap) < 32) == in_runs ? up : 0.0f);
            struct nextok_chain *fa = chain_of(V);
            if (pick(2)) add_bias6(fa, V, 6.0);
            ADD(fa, nextok_sampler_init_temp, t, NULL);
            ADD(fa, nextok_sampler_init_top_p, p, (enum nextok_ties)pick(2), pick(3) ? 1 : pick(300),
                NULL);
            ADD(fa, nextok_sampler_init_dist, 23 + (uint64_t)rep, NULL);
            tally_pair(&tl, fa, row, V, dt, "top-p estimate V %zu up %g in_runs %d t %g p %g dt %d", V,
                       (double)up, (int)in_runs, (double)t, (double)p, dt);
        }
    tally_all_fused(&tl, "top-p rows against the estimate");
}

/* top-n-sigma whose threshold falls exactly on candidate values: rows made
 * of the pattern {-1, 1, 0 x 6} (mean 0, σ = 1/2 exactly) with n = 2 put
 * the chain's threshold max - 2σ on the zeros, inside the fused estimate's
 * uncertainty interval, so fuse_sigma must fall back to the exact σ; with
 * the zeros at ±2^-30 the double second pass decides; tiny
 * perturbations (a zero moved by an ulp or two, either way) and processors
 * (a bias, a ban) and temperatures move the threshold and the values around
 * it. Fused and plain must agree on every survivor. */
TEST(test_fused_sigma_straddle)
{
    static float row[20000];
    static struct nextok_token_data o1[20000], o2[20000];
    int fused = 0, runs = 0;
    for (int rep = 0; rep < scale() + 8; rep++) {
        const size_t V = 8 * (size_t)(int[]){1, 2, 9, 64, 300, 2500}[pick(6)];
        for (size_t i = 0; i < V; i++) row[i] = (float[]){-1.0f, 1.0f, 0, 0, 0, 0, 0, 0}[i % 8];
        for (size_t i = V - 1; i > 0; i--) { /* shuffle */
            const size_t j = pick(i + 1);
            const float t = row[i];
            row[i] = row[j];
            row[j] = t;
        }
        const int how = (int)pick(3);
        if (how == 1)
            for (int e = 0; e < 3; e++) {
                const size_t i = pick(V);
                if (row[i] == 0.0f) row[i] = (float[]){1e-30f, -1e-30f, 1e-7f, -1e-7f}[pick(4)];
            }
        if (how == 2) /* every zero at ±2^-30: inside the float sums' interval, outside the double one's */
            for (size_t i = 0; i < V; i++)
                if (row[i] == 0.0f) row[i] = pick(2) ? 0x1p-30f : -0x1p-30f;
        struct nextok_chain_params cp = nextok_chain_default_params();
        cp.n_vocab = (int32_t)V;
        struct nextok_chain *fa = NULL, *pl = NULL;
        CHECK_OK(nextok_chain_init(&fa, &cp, NULL));
        if (pick(3) == 0) {
            struct nextok_logit_bias lb[2] = {{(int32_t)pick(V), pick(2) ? 0.5f : -INFINITY},
                                              {(int32_t)pick(V), 0.0f}};
            ADD(fa, nextok_sampler_init_logit_bias, (int32_t)V, lb, 2, NULL);
        }
        if (pick(2)) {
            ADD(fa, nextok_sampler_init_temp, (float[]){0.5f, 0.8f, 1.0f, 2.0f}[pick(4)], NULL);
        }
        ADD(fa, nextok_sampler_init_top_n_sigma, pick(4) ? 2.0f : 1.0f, NULL);
        ADD(fa, nextok_sampler_init_dist, 5 + (uint64_t)rep, NULL);
        CHECK_OK(nextok_chain_clone(fa, &pl));
        nextok_chain_set_observer(pl, observe, NULL);
        int32_t tok;
        char what[64];
        snprintf(what, sizeof what, "sigma straddle rep %d V %zu", rep, V);
        compare_step(fa, pl, row, NEXTOK_DTYPE_F32, V, o1, o2, &tok, what);
        runs++;
        fused += nextok_chain_last_fused(fa);
        nextok_chain_free(fa);
        nextok_chain_free(pl);
    }
    printf("  %d straddling top-n-sigma rows, %d fused\n", runs, fused);
    CHECK(fused > runs / 2);
}

/* typical first (processors, a temperature before it): fuse_typical's
 * histogram cut over |v - c| against typical.c's sort, densely drawn when
 * dist follows, emitted in id order when another stage does; p, min_keep
 * (counted in typical order), every dtype, tie-heavy and all-equal rows. */
TEST(test_fused_typical)
{
    int fused = 0, runs = 0;
    for (int rep = 0; rep < scale() / 2 + 2; rep++)
        for (int rk = 0; rk < R_COUNT; rk++)
            for (int dt = 0; dt < 3; dt++) {
                const size_t V = (size_t)(int[]){1, 2, 5, 64, 65, 999, 4097, 20000}[pick(8)];
                struct nextok_chain *c = chain_of(V);
                if (pick(2)) { /* bias (some bans, some raising a token far up) and bans */
                    add_bias6(c, V, 20.0);
                    int32_t ban[2] = {(int32_t)pick(V), (int32_t)pick(V)};
                    if (V > 2 && ban[0] != ban[1] && pick(2)) {
                        ADD(c, nextok_sampler_init_banned, (int32_t)V, ban, 2, NULL);
                    }
                }
                maybe_temp(c);
                const float p = (float[]){0.05f, 0.5f, 0.9f, 0.95f, 0.999f, (float)unif()}[pick(6)];
                ADD(c, nextok_sampler_init_typical, p > 0.0f ? p : 0.5f, pick(3) ? 1 : pick(40), NULL);
                if (pick(3) == 0) { /* a tail stage: the survivors are emitted in id order */
                    ADD(c, nextok_sampler_init_min_p, 0.02f, 1, NULL);
                }
                ADD(c, nextok_sampler_init_dist, 3 + (uint64_t)rep, NULL);
                pair_and_free(c, V, rk, dt, &runs, &fused);
            }
    printf("  %d typical chains, %d ended on the fused path\n", runs, fused);
    CHECK(fused > runs / 3);
}

/* drop_touched (both its merge and its galloping search) against a plain
 * filter: sorted unique ids and touched lists of many sizes and overlaps. */
/*
 * Rows whose maximum lies below about -51 (every value in [-60, -48], all
 * equal to -60, or below -51 only): the one-pass weights carry 2^N with N
 * near -87, and top-p's and typical's masses scale them by 2^(s - N), which
 * overflowed a float: every mass became 2^62, their sum wrapped to 0 and
 * typical's bracket search never returned (top-p cut at a wrong place).
 * top-p and typical, with and without a temperature and dist, every dtype,
 * against the plain chain; a hang here is a ctest timeout.
 */
TEST(test_fused_mass_low_rows)
{
    struct tally tl = {0, 0};
    static float row[20000];
    const size_t sizes[] = {256, 4096, 20000};
    for (size_t si = 0; si < 3; si++)
        for (int shape = 0; shape < 4; shape++)
            for (int which = 0; which < 4; which++) {
                const size_t V = sizes[si];
                for (size_t i = 0; i < V; i++)
                    row[i] = shape == 0   ? -60.0f
                             : shape == 1 ? (float)(-48.0 - 12.0 * unif())
                             : shape == 2 ? (float)(-52.0 - 8.0 * unif())
                                          : (float)(-59.0 - 1.0 * unif());
                const int dt = (int)pick(3);
                struct nextok_chain *c = chain_of(V);
                if (which & 2) ADD(c, nextok_sampler_init_temp, 0.8f, NULL);
                if (which & 1) ADD(c, nextok_sampler_init_typical, 0.3f + 0.6f * (float)unif(), 1, NULL);
                else ADD(c, nextok_sampler_init_top_p, 0.3f + 0.6f * (float)unif(), NEXTOK_TIES_EXACT, 1, NULL);
                ADD(c, nextok_sampler_init_dist, 5 + (uint64_t)which, NULL);
                tally_pair(&tl, c, row, V, dt, "low row V %zu shape %d which %d dt %d", V, shape, which, dt);
            }
    tally_all_fused(&tl, "rows below -51");
}

static void test_fused_drop_touched(void)
{
    static int32_t ids[4096], ref[4096], touched[1024];
    static float vals[4096], rvals[4096];
    const size_t ns[] = {0, 1, 2, 7, 40, 64, 257, 1000, 4000}, nts[] = {0, 1, 3, 64, 300, 1000};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof nts / sizeof *nts; b++)
            for (int rep = 0; rep < 4; rep++) {
                const size_t n = ns[a], nt = nts[b];
                const int32_t span = (int32_t)(2 * (n + nt) + 1 + pick(3 * (n + nt) + 1));
                /* ascending unique ids of [0, span): each id taken with a
                 * fixed chance until n (and nt) are drawn */
                size_t k = 0, t = 0;
                for (int32_t id = 0; id < span && k < n; id++)
                    if (pick((size_t)span) < 2 * n + 1 || (size_t)(span - id) <= n - k) ids[k++] = id;
                for (int32_t id = 0; id < span && t < nt; id++)
                    if (pick((size_t)span) < 2 * nt + 1 || (size_t)(span - id) <= nt - t) touched[t++] = id;
                size_t m = 0;
                for (size_t i = 0; i < k; i++) {
                    vals[i] = (float)ids[i] * 0.5f;
                    bool hit = false;
                    for (size_t j = 0; j < t && !hit; j++) hit = touched[j] == ids[i];
                    if (!hit) ref[m] = ids[i], rvals[m++] = vals[i];
                }
                const size_t got = nextok__fz_drop_touched(ids, vals, k, touched, t);
                bool same = got == m;
                for (size_t i = 0; same && i < m; i++) same = ids[i] == ref[i] && vals[i] == rvals[i];
                CHECK_MSG(same, "drop_touched n %zu nt %zu: %zu kept, expected %zu", k, t, got, m);
            }
}

int main(void)
{
    printf("kernels: %s\n", nextok__kernels()->name); /* which table this run checks */
    RUN(test_fused_dense_dist);
    RUN(test_fused_top_p);
    RUN(test_fused_typical);
    RUN(test_fused_random_configs);
    RUN(test_fused_manual_chains);
    RUN(test_fused_block_route);
    RUN(test_fused_top_k_beyond_untouched);
    RUN(test_fused_min_p_top_k_boundary);
    RUN(test_fused_min_p_touched_top);
    RUN(test_fused_min_p_dense);
    RUN(test_fused_min_p_dense_readers);
    RUN(test_fused_top_p_heavy_boundary);
    RUN(test_fused_top_p_estimate_misses);
    RUN(test_fused_is_used);
    RUN(test_fused_sigma_straddle);
    RUN(test_fused_drop_touched);
    RUN(test_fused_mass_low_rows);
    RUN(test_fused_temp_after_filter);
    return harness_done();
}
