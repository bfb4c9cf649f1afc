/*
 * test_determinism: a token is a function of (seed, step, logits, state) only.
 *
 *  - same seed, same inputs -> the same token sequence (fresh chains);
 *  - the token at step n does not depend on how many draws happened before:
 *    a fresh chain at set_step(n) equals a chain that sampled steps 0..n-1
 *    first (without accepting), and two chains that accepted the same tokens
 *    draw the same next token whether or not they sampled along the way;
 *  - sampling twice at one step gives the same token (apply has no side effects);
 *  - different seeds give different sequences;
 *  - a clone continues exactly like its original and is independent of it;
 *  - reset returns a chain to its fresh behaviour.
 * Every profile and selector is covered, with stateful samplers (penalties,
 * DRY, min-tokens, n-grams, mirostat) switched on where they exist.
 */
#include <stdint.h>

#include "harness.h"
#include "nextok.h"
#include "oracle.h"

#define V 2000
#define STEPS 120

/* Logits for step i: a fixed peaked row plus step-dependent noise. */
static void logits_at(int i, float *row)
{
    struct tu_gen g = {0xabc000ull + (uint64_t)i};
    for (int32_t j = 0; j < V; j++) row[j] = (float)(1.5 * tu_norm(&g));
    for (int b = 0; b < 8; b++) row[(b * 97 + i * 13) % V] += 4.0f + (float)b * 0.3f;
}

struct prof { const char *name; enum nextok_profile profile; enum nextok_selector sel; int mirostat; };

static const struct prof profs[] = {
    {"vllm dist", NEXTOK_PROFILE_VLLM, NEXTOK_SELECTOR_CATEGORICAL, 0},
    {"vllm gumbel", NEXTOK_PROFILE_VLLM, NEXTOK_SELECTOR_GUMBEL, 0},
    {"hf dist", NEXTOK_PROFILE_HF, NEXTOK_SELECTOR_CATEGORICAL, 0},
    {"llama dist", NEXTOK_PROFILE_LLAMA, NEXTOK_SELECTOR_CATEGORICAL, 0},
    {"llama gumbel", NEXTOK_PROFILE_LLAMA, NEXTOK_SELECTOR_GUMBEL, 0},
    {"llama mirostat2", NEXTOK_PROFILE_LLAMA, NEXTOK_SELECTOR_CATEGORICAL, 2},
    {"vllm mirostat2", NEXTOK_PROFILE_VLLM, NEXTOK_SELECTOR_CATEGORICAL, 2},
    {"llama mirostat1", NEXTOK_PROFILE_LLAMA, NEXTOK_SELECTOR_CATEGORICAL, 1},
};
#define N_PROFS (sizeof profs / sizeof profs[0])

static const int32_t prompt[] = {5, 6, 7, 8, 5, 6, 7, 9, 10, 11};
static const int32_t eog[] = {97};

static struct nextok_chain *make(const struct prof *p, uint64_t seed)
{
    struct nextok_sampling_params sp = nextok_sampling_default_params(p->profile);
    sp.profile = p->profile;
    sp.n_vocab = V;
    sp.seed = seed;
    sp.selector = p->sel;
    sp.temperature = 0.9f;
    sp.dynatemp_range = 0.0f, sp.dynatemp_exponent = 1.0f;
    sp.min_keep = 1;
    sp.top_k = 200;
    sp.top_p = 0.97f;
    sp.min_p = 0.0f;
    sp.typical_p = 1.0f;
    sp.top_n_sigma = 0.0f;
    sp.xtc_probability = 0.3f, sp.xtc_threshold = 0.1f; /* random, keyed by step */
    sp.epsilon_cutoff = 0.0f, sp.eta_cutoff = 0.0f;
    sp.repeat_penalty = 1.2f, sp.frequency_penalty = 0.1f, sp.presence_penalty = 0.2f;
    sp.penalty_last_n = 64;
    sp.dry_multiplier = 0.0f;
    if (p->profile == NEXTOK_PROFILE_LLAMA) {
        sp.dry_multiplier = 0.8f, sp.dry_base = 1.75f, sp.dry_allowed_length = 2;
        sp.dry_penalty_last_n = -1, sp.dry_breaker_ids = NULL, sp.dry_breaker_off = NULL;
        sp.dry_n_breakers = 0;
    }
    sp.no_repeat_ngram = p->profile == NEXTOK_PROFILE_HF ? 3 : 0;
    sp.min_tokens = 5, sp.eog_ids = eog, sp.n_eog = 1;
    sp.mirostat = p->mirostat, sp.mirostat_tau = 4.0f, sp.mirostat_eta = 0.2f;
    sp.logit_bias = NULL, sp.n_logit_bias = 0, sp.allowed_ids = NULL, sp.n_allowed = 0;
    sp.banned_ids = NULL, sp.n_banned = 0, sp.samplers = NULL;
    sp.nan_policy = NEXTOK_NAN_ERROR;
    struct nextok_chain *c = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_chain_init_sampling(&c, &sp, &err);
    CHECK_MSG(rc == NEXTOK_OK, "%s: init %s: %s", p->name, nextok_status_name(rc), err.msg);
    if (c) CHECK_OK(nextok_chain_set_prompt(c, prompt, sizeof prompt / sizeof prompt[0]));
    return c;
}

/* Sample-and-accept n tokens from the current state into out. */
static int generate(struct nextok_chain *c, int from, int n, int32_t *out)
{
    float row[V];
    for (int i = 0; i < n; i++) {
        logits_at(from + i, row);
        if (nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &out[i]) != NEXTOK_OK) return 0;
        if (nextok_chain_accept(c, out[i]) != NEXTOK_OK) return 0;
    }
    return 1;
}

static int count_diff(const int32_t *a, const int32_t *b, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) d += a[i] != b[i];
    return d;
}

TEST(same_seed_same_sequence)
{
    for (size_t p = 0; p < N_PROFS; p++) {
        struct nextok_chain *a = make(&profs[p], 1234), *b = make(&profs[p], 1234);
        int32_t x[STEPS], y[STEPS];
        CHECK(a && b && generate(a, 0, STEPS, x) && generate(b, 0, STEPS, y));
        if (a && b) CHECK_MSG(count_diff(x, y, STEPS) == 0, "%s", profs[p].name);
        if (a) CHECK_EQ_INT(nextok_chain_step(a), STEPS);
        nextok_chain_free(a);
        nextok_chain_free(b);
    }
}

TEST(different_seeds_differ)
{
    for (size_t p = 0; p < N_PROFS; p++) {
        struct nextok_chain *a = make(&profs[p], 1), *b = make(&profs[p], 2);
        int32_t x[STEPS], y[STEPS];
        CHECK(a && b && generate(a, 0, STEPS, x) && generate(b, 0, STEPS, y));
        /* the distributions have several likely tokens: most steps differ */
        int d = a && b ? count_diff(x, y, STEPS) : 0;
        CHECK_MSG(d > STEPS / 4, "%s: only %d of %d tokens differ between seeds", profs[p].name, d, STEPS);
        nextok_chain_free(a);
        nextok_chain_free(b);
    }
}

/* Fresh chain at step n vs one that drew steps 0..n-1 first (no accepts). */
TEST(step_independent_of_earlier_draws)
{
    float row[V];
    for (size_t p = 0; p < N_PROFS; p++) {
        const int n = 37;
        struct nextok_chain *a = make(&profs[p], 77), *b = make(&profs[p], 77);
        int32_t ta = -1, tb = -1, t;
        for (int i = 0; i < n && b; i++) {
            logits_at(i, row);
            nextok_chain_set_step(b, (uint64_t)i);
            CHECK_OK(nextok_chain_sample(b, row, NEXTOK_DTYPE_F32, &t));
        }
        logits_at(n, row);
        if (a) {
            nextok_chain_set_step(a, n);
            CHECK_OK(nextok_chain_sample(a, row, NEXTOK_DTYPE_F32, &ta));
        }
        if (b) {
            nextok_chain_set_step(b, n);
            CHECK_OK(nextok_chain_sample(b, row, NEXTOK_DTYPE_F32, &tb));
        }
        CHECK_MSG(ta == tb && ta >= 0, "%s: fresh %d, after draws %d", profs[p].name, (int)ta, (int)tb);
        /* and again at the same step: no side effect from the call itself */
        int32_t again = -2;
        if (b) CHECK_OK(nextok_chain_sample(b, row, NEXTOK_DTYPE_F32, &again));
        CHECK_EQ_INT(again, tb);
        nextok_chain_free(a);
        nextok_chain_free(b);
    }
}

/* Chain A samples+accepts; chain B only accepts A's tokens. Same next token. */
TEST(accepted_history_not_draw_count)
{
    float row[V];
    for (size_t p = 0; p < N_PROFS; p++) {
        const int n = 40;
        struct nextok_chain *a = make(&profs[p], 99), *b = make(&profs[p], 99);
        int32_t x[40];
        CHECK(a && generate(a, 0, n, x));
        for (int i = 0; i < n && b; i++) CHECK_OK(nextok_chain_accept(b, x[i]));
        if (b) CHECK_EQ_INT(nextok_chain_step(b), n);
        int32_t ta = -1, tb = -1;
        logits_at(n, row);
        if (a) CHECK_OK(nextok_chain_sample(a, row, NEXTOK_DTYPE_F32, &ta));
        if (b) CHECK_OK(nextok_chain_sample(b, row, NEXTOK_DTYPE_F32, &tb));
        /* Mirostat's mu follows the last distribution it computed: B never
         * computed one, so its mu stayed at 2 tau and may differ from A's. */
        if (profs[p].mirostat == 0)
            CHECK_MSG(ta == tb && ta >= 0, "%s: sampled-along %d, accepted-only %d", profs[p].name, (int)ta, (int)tb);
        /* with the same sampling history as well, even mirostat agrees */
        struct nextok_chain *c = make(&profs[p], 99);
        int32_t y[40], tc = -1;
        CHECK(c && generate(c, 0, n, y));
        if (c) CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tc));
        CHECK_EQ_INT(count_diff(x, y, n), 0);
        CHECK_EQ_INT(tc, ta);
        nextok_chain_free(a);
        nextok_chain_free(b);
        nextok_chain_free(c);
    }
}

TEST(clone_continues_identically)
{
    for (size_t p = 0; p < N_PROFS; p++) {
        struct nextok_chain *a = make(&profs[p], 555), *b = NULL;
        int32_t pre[30], x[STEPS], y[STEPS];
        CHECK(a && generate(a, 0, 30, pre));
        if (a) CHECK_OK(nextok_chain_clone(a, &b));
        if (b) CHECK_EQ_INT(nextok_chain_step(b), 30);
        CHECK(a && b && generate(a, 30, STEPS, x) && generate(b, 30, STEPS, y));
        if (a && b) CHECK_MSG(count_diff(x, y, STEPS) == 0, "%s: clone diverged", profs[p].name);
        nextok_chain_free(a);
        nextok_chain_free(b);
    }
}

/* Accepting into a clone leaves the original untouched. */
TEST(clone_is_independent)
{
    float row[V];
    for (size_t p = 0; p < N_PROFS; p++) {
        struct nextok_chain *a = make(&profs[p], 321), *b = NULL, *ref = make(&profs[p], 321);
        int32_t pre[20], pre2[20];
        CHECK(a && generate(a, 0, 20, pre));
        CHECK(ref && generate(ref, 0, 20, pre2));
        if (a) CHECK_OK(nextok_chain_clone(a, &b));
        for (int i = 0; i < 25 && b; i++) CHECK_OK(nextok_chain_accept(b, (int32_t)(i * 11 % 50)));
        int32_t ta = -1, tr = -1;
        logits_at(20, row);
        if (a) CHECK_OK(nextok_chain_sample(a, row, NEXTOK_DTYPE_F32, &ta));
        if (ref) CHECK_OK(nextok_chain_sample(ref, row, NEXTOK_DTYPE_F32, &tr));
        CHECK_MSG(ta == tr && ta >= 0, "%s: original %d, reference %d", profs[p].name, (int)ta, (int)tr);
        if (a) CHECK_EQ_INT(nextok_chain_step(a), 20);
        nextok_chain_free(a);
        nextok_chain_free(b);
        nextok_chain_free(ref);
    }
}

TEST(reset_restores_fresh_behaviour)
{
    for (size_t p = 0; p < N_PROFS; p++) {
        struct nextok_chain *a = make(&profs[p], 8), *b = make(&profs[p], 8);
        int32_t junk[25], x[STEPS], y[STEPS];
        CHECK(a && generate(a, 0, 25, junk));
        if (a) {
            nextok_chain_reset(a);
            CHECK_EQ_INT(nextok_chain_step(a), 0);
            /* reset forgets the prompt too: give it again */
            CHECK_OK(nextok_chain_set_prompt(a, prompt, sizeof prompt / sizeof prompt[0]));
        }
        CHECK(a && b && generate(a, 0, STEPS, x) && generate(b, 0, STEPS, y));
        if (a && b) CHECK_MSG(count_diff(x, y, STEPS) == 0, "%s: reset chain differs from fresh", profs[p].name);
        nextok_chain_free(a);
        nextok_chain_free(b);
    }
}

/* Half-precision rows: same seed, same tokens, and f16 == f32 of the same values. */
TEST(dtype_rows_agree)
{
    float row[V], wide[V];
    uint16_t half[V];
    logits_at(3, row);
    for (int32_t j = 0; j < V; j++) half[j] = nextok_f32_to_f16(row[j]), wide[j] = nextok_f16_to_f32(half[j]);
    struct nextok_chain *a = make(&profs[0], 4242), *b = make(&profs[0], 4242);
    for (uint64_t s = 0; s < 200 && a && b; s++) {
        int32_t ta = -1, tb = -2;
        nextok_chain_set_step(a, s);
        nextok_chain_set_step(b, s);
        CHECK_OK(nextok_chain_sample(a, half, NEXTOK_DTYPE_F16, &ta));
        CHECK_OK(nextok_chain_sample(b, wide, NEXTOK_DTYPE_F32, &tb));
        CHECK_EQ_INT(ta, tb);
    }
    nextok_chain_free(a);
    nextok_chain_free(b);
}

int main(void)
{
    RUN(same_seed_same_sequence);
    RUN(different_seeds_differ);
    RUN(step_independent_of_earlier_draws);
    RUN(accepted_history_not_draw_count);
    RUN(clone_continues_identically);
    RUN(clone_is_independent);
    RUN(reset_restores_fresh_behaviour);
    RUN(dtype_rows_agree);
    return harness_done();
}
