/*
 * Batches and the thread pool: a row's tokens depend only on its own chain
 * and logits, never on the batch size (1, 7, 256), the thread count (1, 2)
 * or its position; tokens are accepted between steps. Parallel sampling:
 * draw 0 is the chain's own token, draws are reproducible and follow the
 * distribution. Runs under TSan (the name matches 'batch').
 */
#include "harness.h"
#include "nextok.h"

#include <stdint.h>

#define V 3000
#define MAXB 256
#define STEPS 3

static uint64_t g_s = 7;

static uint64_t rnd(void)
{
    uint64_t z = (g_s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float gauss(void)
{
    double u = (double)(rnd() >> 11) * 0x1p-53, v = (double)(rnd() >> 11) * 0x1p-53;
    return (float)(sqrt(-2.0 * log(u > 1e-300 ? u : 1e-300)) * cos(6.283185307179586 * v));
}

static float g_logits[STEPS][MAXB][V];

/* s by address: it is read after the constructor ran (argument evaluation
 * order is unspecified in C). */
static void add(struct nextok_chain *c, nextok_status rc, struct nextok_sampler **s)
{
    CHECK_OK(rc);
    if (rc == NEXTOK_OK) CHECK_OK(nextok_chain_add(c, *s));
}

/* Row r's chain: its own seed and settings, fixed by r alone (built by hand
 * so the test does not depend on the profile builder). */
static struct nextok_chain *make_chain(size_t r)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    struct nextok_sampler *s = NULL;
    if (r % 2) {
        struct nextok_penalty_params pp = nextok_penalty_default_params(V);
        pp.scope = (enum nextok_penalty_scope)(r % 3);
        pp.last_n = 64;
        pp.repeat = 1.2f;
        pp.frequency = 0.1f;
        add(c, nextok_sampler_init_penalties(&s, &pp, NULL), &s);
    }
    add(c, nextok_sampler_init_temp(&s, (float)(0.5 + 0.1 * (double)(r % 7)), NULL), &s);
    if (r % 3 == 0) add(c, nextok_sampler_init_min_p(&s, 0.05f, 1, NULL), &s);
    if (r % 4 != 0) add(c, nextok_sampler_init_top_k(&s, 40, (enum nextok_ties)(r % 2), NULL), &s);
    if (r % 5 != 0) add(c, nextok_sampler_init_top_p(&s, 0.9f, NEXTOK_TIES_KEEP, 1, NULL), &s);
    if (r % 11 == 3) add(c, nextok_sampler_init_gumbel(&s, 1000 + r, NULL), &s);
    else add(c, nextok_sampler_init_dist(&s, 1000 + r, NULL), &s);
    return c;
}

/* Tokens of rows [0, B) of the batch starting at global row `first`, over
 * STEPS steps with accept in between, threads T. out[step][row]. */
static void run_batch(size_t first, size_t B, size_t T, int32_t out[STEPS][MAXB])
{
    struct nextok_threadpool *pool = NULL;
    CHECK_OK(nextok_threadpool_init(&pool, T));
    CHECK_EQ_INT(nextok_threadpool_size(pool), T);
    struct nextok_chain *chains[MAXB];
    nextok_status st[MAXB];
    for (size_t r = 0; r < B; r++) chains[r] = make_chain(first + r);
    for (int s = 0; s < STEPS; s++) {
        int32_t tok[MAXB];
        CHECK_OK(nextok_batch_sample(pool, chains, &g_logits[s][first][0], NEXTOK_DTYPE_F32, B, V,
                                     tok, (s & 1) ? NULL : st));
        for (size_t r = 0; r < B; r++) {
            out[s][r] = tok[r];
            CHECK_OK(nextok_chain_accept(chains[r], tok[r]));
        }
    }
    for (size_t r = 0; r < B; r++) nextok_chain_free(chains[r]);
    nextok_threadpool_free(pool);
}

static int32_t g_ref[STEPS][MAXB];

TEST(test_batch_independence)
{
    for (int s = 0; s < STEPS; s++)
        for (size_t r = 0; r < MAXB; r++)
            for (size_t i = 0; i < V; i++) g_logits[s][r][i] = 2.0f * gauss();
    /* reference: each row alone, single thread, one chain call per step */
    for (size_t r = 0; r < MAXB; r++) {
        struct nextok_chain *c = make_chain(r);
        for (int s = 0; s < STEPS; s++) {
            CHECK_OK(nextok_chain_sample(c, g_logits[s][r], NEXTOK_DTYPE_F32, &g_ref[s][r]));
            CHECK_OK(nextok_chain_accept(c, g_ref[s][r]));
        }
        nextok_chain_free(c);
    }
    static int32_t out[STEPS][MAXB];
    const size_t sizes[] = {1, 7, 256};
    for (size_t T = 1; T <= 2; T++)
        for (size_t k = 0; k < 3; k++) {
            size_t B = sizes[k];
            for (size_t first = 0; first + B <= MAXB; first += (B == 256 ? 256 : 61)) {
                run_batch(first, B, T, out);
                for (int s = 0; s < STEPS; s++)
                    for (size_t r = 0; r < B; r++)
                        CHECK_MSG(out[s][r] == g_ref[s][first + r],
                                  "B %zu T %zu row %zu step %d: %d vs %d", B, T, first + r, s,
                                  (int)out[s][r], (int)g_ref[s][first + r]);
            }
        }
}

TEST(test_batch_errors)
{
    struct nextok_threadpool *pool = NULL;
    CHECK_OK(nextok_threadpool_init(&pool, 2));
    struct nextok_chain *chains[3] = {make_chain(1), make_chain(2), make_chain(3)};
    static float rows[3][V];
    for (int r = 0; r < 3; r++)
        for (size_t i = 0; i < V; i++) rows[r][i] = gauss();
    rows[1][5] = NAN;
    int32_t tok[3];
    nextok_status st[3];
    CHECK_EQ_INT(nextok_batch_sample(pool, chains, rows, NEXTOK_DTYPE_F32, 3, V, tok, st), NEXTOK_ERR_NAN);
    CHECK_EQ_INT(st[0], NEXTOK_OK);
    CHECK_EQ_INT(st[1], NEXTOK_ERR_NAN);
    CHECK_EQ_INT(st[2], NEXTOK_OK);
    CHECK_EQ_INT(tok[1], -1);
    CHECK(tok[0] >= 0 && tok[2] >= 0);
    CHECK_EQ_INT(nextok_batch_sample(pool, chains, NULL, NEXTOK_DTYPE_F32, 3, V, tok, st),
                 NEXTOK_ERR_INVALID_ARG);
    CHECK_OK(nextok_batch_sample(pool, chains, rows, NEXTOK_DTYPE_F32, 0, V, tok, st));
    for (int r = 0; r < 3; r++) nextok_chain_free(chains[r]);
    nextok_threadpool_free(pool);
    nextok_threadpool_free(NULL);
}

static nextok_status pick_first(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                uint64_t step)
{
    (void)s, (void)step;
    cur->selected = 0;
    return NEXTOK_OK;
}

static const char *pick_first_name(const struct nextok_sampler *s)
{
    (void)s;
    return "pick-first";
}

/*
 * sample_n's errors, as nextok.h states them: a chain without a selector is
 * NEXTOK_ERR_STATE for any n (it was ERR_UNSUPPORTED for n > 1, with a
 * message about the selector not being built in); a user selector can give
 * one token but not the distribution of more (ERR_UNSUPPORTED, naming it).
 */
TEST(test_sample_n_errors)
{
    static float row[V];
    for (size_t i = 0; i < V; i++) row[i] = gauss();
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_top_k(&s, 5, NEXTOK_TIES_EXACT, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    int32_t tok[3] = {7, 7, 7};
    for (size_t n = 1; n <= 3; n++) {
        CHECK_EQ_INT(nextok_chain_sample_n(c, row, NEXTOK_DTYPE_F32, n, tok), NEXTOK_ERR_STATE);
        CHECK(strstr(nextok_chain_errmsg(c), "no selector") != NULL);
    }
    static const struct nextok_sampler_i user = {.name = pick_first_name, .apply = pick_first};
    CHECK_OK(nextok_sampler_init(&s, &user, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    CHECK_OK(nextok_chain_sample_n(c, row, NEXTOK_DTYPE_F32, 1, tok));
    CHECK_EQ_INT(nextok_chain_sample_n(c, row, NEXTOK_DTYPE_F32, 3, tok), NEXTOK_ERR_UNSUPPORTED);
    CHECK(strstr(nextok_chain_errmsg(c), "pick-first") != NULL);
    nextok_chain_free(c);
}

TEST(test_batch_parallel_sampling)
{
    static float row[V];
    for (size_t i = 0; i < V; i++) row[i] = gauss();
    struct nextok_chain *c = make_chain(1); /* categorical */
    int32_t one, many[4096], again[4096];
    CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &one));
    CHECK_OK(nextok_chain_sample_n(c, row, NEXTOK_DTYPE_F32, 4096, many));
    CHECK_OK(nextok_chain_sample_n(c, row, NEXTOK_DTYPE_F32, 4096, again));
    CHECK_EQ_INT(many[0], one);
    CHECK(memcmp(many, again, sizeof many) == 0);
    /* draws follow the final distribution: the most likely token's frequency */
    struct nextok_token_data probs[V];
    size_t n = 0;
    CHECK_OK(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, probs, V, &n, NULL));
    size_t hits = 0;
    bool inside = true;
    for (int j = 0; j < 4096; j++) {
        hits += many[j] == probs[0].id;
        bool found = false;
        for (size_t i = 0; i < n && !found; i++) found = probs[i].id == many[j];
        inside &= found;
    }
    CHECK(inside);
    double expect = 4096.0 * probs[0].p, sd = sqrt(4096.0 * probs[0].p * (1.0 - probs[0].p));
    CHECK_MSG(fabs((double)hits - expect) <= 5.0 * sd + 1.0, "hits %zu expect %.1f", hits, expect);
    /* batched parallel sampling equals per-row sample_n, at 1 and 2 threads */
    struct nextok_chain *cs[5];
    static float rows[5][V];
    for (int r = 0; r < 5; r++) {
        cs[r] = make_chain((size_t)r + 10);
        for (size_t i = 0; i < V; i++) rows[r][i] = gauss();
    }
    int32_t ref[5][8], got[5 * 8];
    for (int r = 0; r < 5; r++) CHECK_OK(nextok_chain_sample_n(cs[r], rows[r], NEXTOK_DTYPE_F32, 8, ref[r]));
    for (size_t T = 1; T <= 2; T++) {
        struct nextok_threadpool *pool = NULL;
        CHECK_OK(nextok_threadpool_init(&pool, T));
        CHECK_OK(nextok_batch_sample_n(pool, cs, rows, NEXTOK_DTYPE_F32, 5, V, 8, got, NULL));
        CHECK(memcmp(ref, got, sizeof got) == 0);
        nextok_threadpool_free(pool);
    }
    for (int r = 0; r < 5; r++) nextok_chain_free(cs[r]);
    /* greedy repeats its token */
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    struct nextok_chain *g = NULL;
    CHECK_OK(nextok_chain_init(&g, &cp, NULL));
    struct nextok_sampler *s = NULL;
    add(g, nextok_sampler_init_greedy(&s, NULL), &s);
    int32_t gt[3];
    CHECK_OK(nextok_chain_sample_n(g, row, NEXTOK_DTYPE_F32, 3, gt));
    CHECK(gt[0] == gt[1] && gt[1] == gt[2]);
    nextok_chain_free(g);
    nextok_chain_free(c);
}

int main(void)
{
    RUN(test_batch_independence);
    RUN(test_batch_errors);
    RUN(test_batch_parallel_sampling);
    RUN(test_sample_n_errors);
    return harness_done();
}
