/*
 * Token bitmasks (nextok_sampler_init_token_bitmask): the XGrammar /
 * llguidance / vLLM layout means what an allowed-token list of the same ids
 * means, in the fused path and in the plain chain; bits past n_vocab are
 * ignored; a step without a mask is an error that changes nothing; accept
 * forgets the mask; batches take one mask per row; sessions set it per step.
 */
#include "harness.h"
#include "nextok.h"
#include "sample/chain_internal.h"
#include "sample/fused/internal.h"

#include <stdint.h>

static uint64_t g_s = 11;

static uint64_t rnd(void)
{
    uint64_t z = (g_s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unif(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static float gauss(void)
{
    const double u = unif(), v = unif();
    return (float)(sqrt(-2.0 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v));
}

#define VMAX 100000
#define WMAX ((VMAX + 31) / 32 + 4)

/* A random mask allowing about a fraction `frac` of [0, V) (at least one id),
 * with garbage in the bits past V; its allowed ids into ids (count
 * returned). */
static size_t make_mask(size_t V, double frac, int32_t *words, int32_t *ids)
{
    const size_t nw = (V + 31) / 32;
    memset(words, 0, nw * sizeof *words);
    size_t n = 0;
    for (size_t i = 0; i < V; i++)
        if (unif() < frac) {
            words[i / 32] |= (int32_t)(UINT32_C(1) << (i % 32));
            ids[n++] = (int32_t)i;
        }
    if (n == 0) {
        const size_t i = (size_t)(rnd() % V);
        words[i / 32] |= (int32_t)(UINT32_C(1) << (i % 32));
        ids[n++] = (int32_t)i;
    }
    if (V % 32) words[nw - 1] |= (int32_t)~((UINT32_C(1) << (V % 32)) - 1); /* ids past V */
    return n;
}

/* Sampling params of a random chain over V tokens (filters, penalties,
 * bias, a profile). */
static struct nextok_sampling_params random_params(size_t V)
{
    struct nextok_sampling_params p = nextok_sampling_default_params((enum nextok_profile)(rnd() % 3));
    p.n_vocab = (int32_t)V;
    p.seed = rnd() % 1000;
    p.temperature = (float[]){0.0f, 0.7f, 1.0f, 1.3f}[rnd() % 4];
    p.top_k = (int32_t[]){0, 1, 40, 5000}[rnd() % 4];
    p.top_p = (float[]){1.0f, 1.0f, 0.9f, 0.5f}[rnd() % 4];
    p.min_p = (float[]){0.0f, 0.05f}[rnd() % 2];
    p.typical_p = rnd() % 5 == 0 ? 0.9f : 1.0f;
    if (rnd() % 2) p.repeat_penalty = 1.2f;
    return p;
}

static struct nextok_chain *build(const struct nextok_sampling_params *p)
{
    struct nextok_chain *c = NULL;
    struct nextok_error err;
    CHECK_MSG(nextok_chain_init_sampling(&c, p, &err) == NEXTOK_OK, "%s", err.msg);
    return c;
}

/* An observer turns the fused path off (the plain chain runs). */
static void noop_observer(size_t i, const char *name, const struct nextok_token_data_array *cur, void *u)
{
    (void)i, (void)name, (void)cur, (void)u;
}

/* One step of three chains on a row (f32 values, passed as dtype dt): same
 * status, token and distribution. */
static bool same_step(struct nextok_chain *c[3], const float *row, size_t V, enum nextok_dtype dt,
                      const char *what)
{
    static uint16_t half[VMAX];
    const void *r = row;
    if (dt != NEXTOK_DTYPE_F32) {
        for (size_t i = 0; i < V; i++) half[i] = dt == NEXTOK_DTYPE_F16 ? nextok_f32_to_f16(row[i]) : nextok_f32_to_bf16(row[i]);
        r = half;
    }
    static struct nextok_token_data o[3][VMAX];
    int32_t t[3] = {-1, -1, -1};
    size_t n[3] = {0, 0, 0};
    nextok_status rc[3];
    for (int k = 0; k < 3; k++) rc[k] = nextok_chain_probs(c[k], r, dt, o[k], V, &n[k], &t[k]);
    CHECK_MSG(rc[0] == rc[1] && rc[1] == rc[2], "%s: %s / %s / %s", what, nextok_status_name(rc[0]),
              nextok_status_name(rc[1]), nextok_status_name(rc[2]));
    if (rc[0] != NEXTOK_OK || rc[1] != NEXTOK_OK || rc[2] != NEXTOK_OK) return false;
    CHECK_MSG(n[0] == n[1] && n[1] == n[2] && t[0] == t[1] && t[1] == t[2] &&
                  memcmp(o[0], o[1], n[0] * sizeof o[0][0]) == 0 && memcmp(o[1], o[2], n[1] * sizeof o[0][0]) == 0,
              "%s: %zu/%zu/%zu candidates, token %d/%d/%d", what, n[0], n[1], n[2], (int)t[0], (int)t[1],
              (int)t[2]);
    for (int k = 0; k < 3; k++) CHECK_OK(nextok_chain_accept(c[k], t[0]));
    return true;
}

/*
 * A bitmask chain on the fused path, the same chain on the plain path, and
 * the chain with the mask's ids as allowed_ids (plain): same status, token
 * and distribution over three steps with accept (the mask set again each
 * step, as a grammar engine does); every mask density from one id to all,
 * garbage in the bits past V.
 */
TEST(test_bitmask_equals_allowed_list)
{
    static float row[VMAX];
    static int32_t words[WMAX], ids[VMAX];
    const double fracs[] = {0.0, 0.0005, 0.01, 0.2, 0.5, 0.99, 1.0};
    int runs = 0, fused = 0, kernels = 0;
    for (int rep = 0; rep < 30; rep++)
        for (size_t fi = 0; fi < sizeof fracs / sizeof *fracs; fi++) {
            const size_t V = (size_t[]){1, 31, 32, 33, 1000, 20000, 100000}[rnd() % 7];
            struct nextok_sampling_params p = random_params(V);
            const size_t n = make_mask(V, fracs[fi], words, ids);
            const int32_t prompt[3] = {0, (int32_t)(V / 2), (int32_t)(V - 1)};
            p.token_bitmask = true;
            struct nextok_chain *c[3] = {build(&p), build(&p), NULL};
            p.token_bitmask = false;
            p.allowed_ids = ids;
            p.n_allowed = n;
            c[2] = build(&p);
            if (c[0] && c[1] && c[2]) {
                nextok_chain_set_observer(c[1], noop_observer, NULL);
                nextok_chain_set_observer(c[2], noop_observer, NULL);
                for (int k = 0; k < 3; k++) CHECK_OK(nextok_chain_set_prompt(c[k], prompt, 3));
                const enum nextok_dtype dt = (enum nextok_dtype)(rnd() % 3);
                for (int st = 0; st < 3; st++) {
                    for (size_t i = 0; i < V; i++) row[i] = gauss() * 2.0f;
                    CHECK_OK(nextok_chain_set_token_bitmask(c[0], words, (V + 31) / 32));
                    CHECK_OK(nextok_chain_set_token_bitmask(c[1], words, (V + 31) / 32));
                    char what[96];
                    snprintf(what, sizeof what, "V %zu frac %g step %d", V, fracs[fi], st);
                    const bool ok = same_step(c, row, V, dt, what);
                    runs++;
                    fused += ok && nextok_chain_last_fused(c[0]);
                    /* the mask applied in the SIMD passes, not gathered */
                    kernels += ok && nextok_chain_last_fused(c[0]) && c[0]->fused->plan.mask_kernels;
                    if (!ok) break;
                }
            }
            for (int k = 0; k < 3; k++) nextok_chain_free(c[k]);
        }
    printf("  %d masked steps, %d ran the fused path, %d of them with the mask in the passes\n", runs, fused,
           kernels);
    CHECK(runs > 300 && fused > runs / 2 && kernels > runs / 4);
}

/* Every misuse is an error that changes nothing. */
TEST(test_bitmask_errors)
{
    enum { V = 100 };
    static float row[V];
    for (size_t i = 0; i < V; i++) row[i] = (float)i * 0.01f;
    int32_t words[4] = {0, 0, 0, 0}, few[3] = {-1, -1, -1};
    words[1] = 1; /* token 32 only */
    struct nextok_sampler *s = NULL, *t = NULL;
    CHECK(nextok_sampler_init_token_bitmask(&s, 0, NULL) == NEXTOK_ERR_VOCAB_SIZE);
    CHECK_OK(nextok_sampler_init_token_bitmask(&s, V, NULL));
    CHECK_OK(nextok_sampler_init_temp(&t, 1.0f, NULL));
    CHECK(nextok_sampler_set_token_bitmask(s, few, 3) == NEXTOK_ERR_INVALID_ARG); /* 4 needed */
    CHECK(strstr(nextok_sampler_errmsg(s), "need 4") != NULL);
    CHECK(nextok_sampler_set_token_bitmask(s, NULL, 4) == NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_sampler_set_token_bitmask(t, words, 4) == NEXTOK_ERR_INVALID_ARG); /* not a bitmask */
    nextok_sampler_free(t);

    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    struct nextok_chain *c = NULL, *bare = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    CHECK_OK(nextok_chain_init(&bare, &cp, NULL));
    CHECK(nextok_chain_set_token_bitmask(bare, words, 4) == NEXTOK_ERR_STATE); /* no such stage */
    CHECK_OK(nextok_chain_add(c, s));
    CHECK_OK(nextok_sampler_init_dist(&t, 1, NULL));
    CHECK_OK(nextok_chain_add(c, t));
    int32_t tok = -1;
    /* no mask for this step: ERR_STATE, the step does not advance */
    CHECK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok) == NEXTOK_ERR_STATE);
    CHECK(strstr(nextok_chain_errmsg(c), "no mask") != NULL);
    CHECK_EQ_INT(nextok_chain_step(c), 0);
    CHECK(nextok_chain_set_token_bitmask(c, few, 3) == NEXTOK_ERR_INVALID_ARG);
    CHECK_OK(nextok_chain_set_token_bitmask(c, words, 4));
    CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
    CHECK_EQ_INT(tok, 32);
    CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok)); /* the mask holds for the step */
    CHECK_EQ_INT(tok, 32);
    /* accept forgets it */
    CHECK_OK(nextok_chain_accept(c, tok));
    CHECK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok) == NEXTOK_ERR_STATE);
    /* a mask that allows nothing: no candidates */
    words[1] = 0;
    CHECK_OK(nextok_chain_set_token_bitmask(c, words, 4));
    CHECK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok) == NEXTOK_ERR_NO_CANDIDATES);
    /* bits of ids past V (100..127) allow nothing */
    words[3] = (int32_t)0xfffffff0u;
    CHECK_OK(nextok_chain_set_token_bitmask(c, words, 4));
    CHECK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok) == NEXTOK_ERR_NO_CANDIDATES);
    nextok_chain_free(c);
    nextok_chain_free(bare);
}

/*
 * nextok_batch_sample_bitmask: row r's mask from row r of a [B, words]
 * array; the same tokens as setting each chain's mask and sampling alone;
 * a row whose mask cannot be set (a chain without the stage) fails alone.
 */
TEST(test_bitmask_batch)
{
    enum { B = 9, V = 3000, W = (V + 31) / 32 };
    static float rows[B][V];
    static int32_t masks[B][W], ids[V];
    struct nextok_chain *a[B], *b[B];
    struct nextok_threadpool *pool = NULL;
    CHECK_OK(nextok_threadpool_init(&pool, 2));
    for (int r = 0; r < B; r++) {
        struct nextok_sampling_params p = random_params(V);
        p.token_bitmask = r != 4; /* row 4's chain has no bitmask stage */
        a[r] = build(&p);
        b[r] = build(&p);
        for (size_t i = 0; i < V; i++) rows[r][i] = gauss();
        make_mask(V, (double[]){0.001, 0.3, 1.0}[r % 3], masks[r], ids);
    }
    int32_t tok[B];
    nextok_status st[B];
    CHECK(nextok_batch_sample_bitmask(pool, a, rows, NEXTOK_DTYPE_F32, B, V, &masks[0][0], W, tok, st) ==
          NEXTOK_ERR_STATE);
    for (int r = 0; r < B; r++) {
        int32_t t = -1;
        nextok_status rc = nextok_chain_set_token_bitmask(b[r], masks[r], W);
        if (rc == NEXTOK_OK) rc = nextok_chain_sample(b[r], rows[r], NEXTOK_DTYPE_F32, &t);
        CHECK_MSG(rc == st[r] && t == tok[r], "row %d: %s %d vs %s %d", r, nextok_status_name(st[r]),
                  (int)tok[r], nextok_status_name(rc), (int)t);
        if (r == 4) CHECK(st[r] == NEXTOK_ERR_STATE && tok[r] == -1);
        nextok_chain_free(a[r]);
        nextok_chain_free(b[r]);
    }
    nextok_threadpool_free(pool);
}

int main(void)
{
    RUN(test_bitmask_equals_allowed_list);
    RUN(test_bitmask_errors);
    RUN(test_bitmask_batch);
    return harness_done();
}
