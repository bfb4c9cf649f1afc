/*
 * "No allocation per token": counts calls to malloc/calloc/realloc made while
 * sampling, accepting and streaming, after construction and one warm-up call.
 * The program interposes the malloc family and forwards to glibc's __libc_*
 * entry points, so this test runs only on glibc without sanitizers (which
 * intercept malloc themselves); elsewhere it reports SKIP (exit 77), and the
 * sanitizer builds do not register it (tests/CMakeLists.txt).
 *
 * The rule, as documented in docs/design.md: at a fixed state, sampling
 * allocates nothing. While the history grows, accept() and the workspaces that
 * depend on it (touched-id lists, survivor scratch) grow geometrically, so
 * over n tokens there are O(log n) growth events, never one per token.
 *
 * The group "chains" (`test_noalloc chains`, full tier) samples 15 chain
 * configurations 600 times each; the default group is quick.
 */
#include "nextok.h"
#include "harness.h"

#include <stdint.h>

/* gcc says __SANITIZE_*__, clang __has_feature(*_sanitizer). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

#if defined(__GLIBC__) && !defined(UNDER_SANITIZER)
#define COUNTING 1
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static volatile long n_alloc;

void *malloc(size_t n)
{
    n_alloc++;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    n_alloc++;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    n_alloc++;
    return __libc_realloc(p, n);
}
void free(void *p) { __libc_free(p); }
#else
#define COUNTING 0
static long n_alloc;
#endif

#define V 50000

static uint64_t rng_state = 42;
static double unif(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) * 0x1p-53;
}

static void fill_row(float *row, int peaked)
{
    for (int i = 0; i < V; i++) row[i] = (float)(4.0 * unif() - 2.0);
    if (peaked)
        for (int j = 0; j < 20; j++) row[(int)(unif() * V)] += 8.0f;
}

/* Sample `steps` tokens with accept (allocations in sample calls -> *in_sample,
 * in accepts -> *in_accept), then `steps` more samples at the final state
 * with no accept (-> *at_fixed_state). */
static void run_chain(const struct nextok_sampling_params *p, int steps, long *in_sample,
                      long *in_accept, long *at_fixed_state)
{
    static float row[V];
    struct nextok_chain *c = NULL;
    *in_sample = *in_accept = *at_fixed_state = -1;
    if (nextok_chain_init_sampling(&c, p, NULL) != NEXTOK_OK) return;
    int32_t prompt[32];
    for (int i = 0; i < 32; i++) prompt[i] = (int32_t)(unif() * V);
    nextok_chain_set_prompt(c, prompt, 32);
    fill_row(row, 1);
    int32_t tok;
    nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok); /* warm-up: workspaces settle */
    nextok_chain_accept(c, tok);
    long s = 0, a = 0;
    for (int i = 0; i < steps; i++) {
        fill_row(row, i & 1);
        long before = n_alloc;
        nextok_status rc = nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok);
        s += n_alloc - before;
        CHECK_OK(rc);
        before = n_alloc;
        nextok_chain_accept(c, tok);
        a += n_alloc - before;
    }
    long f = 0;
    for (int i = 0; i < steps; i++) {
        fill_row(row, i % 3 == 0);
        nextok_chain_set_step(c, (uint64_t)i);
        long before = n_alloc;
        CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
        f += n_alloc - before;
    }
    nextok_chain_free(c);
    *in_sample = s;
    *in_accept = a;
    *at_fixed_state = f;
}

TEST(chains_do_not_allocate_per_token)
{
    if (!COUNTING) SKIP("needs glibc malloc interposition (not under sanitizers)");
    const enum nextok_profile profiles[3] = {NEXTOK_PROFILE_VLLM, NEXTOK_PROFILE_HF,
                                             NEXTOK_PROFILE_LLAMA};
    for (int k = 0; k < 3; k++) {
        for (int variant = 0; variant < 5; variant++) { /* 4: min-p, then dist (dense on flat rows) */
            struct nextok_sampling_params p = nextok_sampling_default_params(profiles[k]);
            p.n_vocab = V;
            p.seed = 7;
            p.temperature = 0.8f;
            p.top_k = variant == 1 || variant == 4 ? 0 : 40;
            p.top_p = variant == 4 ? 1.0f : 0.95f;
            p.min_p = variant == 2 ? 0.0f : 0.05f;
            p.repeat_penalty = 1.1f;
            p.frequency_penalty = 0.1f;
            p.presence_penalty = 0.1f;
            p.dry_multiplier = variant == 3 ? 0.8f : 0.0f;
            p.mirostat = variant == 3 ? 2 : 0;
            p.selector = variant == 2 ? NEXTOK_SELECTOR_GUMBEL : NEXTOK_SELECTOR_CATEGORICAL;
            long s, a, f;
            run_chain(&p, 300, &s, &a, &f);
            CHECK_MSG(f == 0, "profile %d variant %d: %ld allocations in 300 samples at a fixed "
                      "state", k, variant, f);
            /* geometric growth while the history grows from 33 to 333 tokens:
             * a handful of doublings per growing buffer, not one per token */
            CHECK_MSG(s >= 0 && s <= 30, "profile %d variant %d: %ld allocations in 300 sample "
                      "calls with a growing history", k, variant, s);
            CHECK_MSG(a >= 0 && a <= 24, "profile %d variant %d: %ld allocations in 300 accepts",
                      k, variant, a);
        }
    }
}

TEST(batch_does_not_allocate_per_call)
{
    if (!COUNTING) SKIP("needs glibc malloc interposition (not under sanitizers)");
    enum { B = 8 };
    static float rows[B][V];
    struct nextok_threadpool *pool = NULL;
    CHECK_OK(nextok_threadpool_init(&pool, 2));
    struct nextok_chain *chains[B] = {0};
    for (int b = 0; b < B; b++) {
        struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
        p.n_vocab = V;
        p.seed = (uint64_t)b;
        p.top_k = 40;
        p.top_p = 0.9f;
        CHECK_OK(nextok_chain_init_sampling(&chains[b], &p, NULL));
        fill_row(rows[b], 1);
    }
    int32_t tokens[B];
    nextok_status st[B];
    CHECK_OK(nextok_batch_sample(pool, chains, rows, NEXTOK_DTYPE_F32, B, V, tokens, st));
    long before = n_alloc;
    for (int i = 0; i < 20; i++)
        CHECK_OK(nextok_batch_sample(pool, chains, rows, NEXTOK_DTYPE_F32, B, V, tokens, st));
    CHECK_EQ_INT(n_alloc - before, 0);
    for (int b = 0; b < B; b++) nextok_chain_free(chains[b]);
    nextok_threadpool_free(pool);
}

TEST(detok_and_stop_do_not_allocate)
{
    if (!COUNTING) SKIP("needs glibc malloc interposition (not under sanitizers)");
    char path[1024];
    fixture_path(path, sizeof path, "vocab/gguf/ggml-vocab-gpt-2.gguf");
    struct nextok_vocab *v = NULL;
    struct nextok_error e = {NEXTOK_OK, ""};
    nextok_status rc = nextok_vocab_load_file(&v, path, &e);
    CHECK_MSG(rc == NEXTOK_OK, "%s: %s: %s", path, nextok_status_name(rc), e.msg);
    if (rc != NEXTOK_OK) return;
    struct nextok_detok *d = NULL;
    CHECK_OK(nextok_detok_init(&d, v, NULL, NULL));
    size_t cap = nextok_detok_bound(d, 1), got;
    char *buf = malloc(cap);
    long before = n_alloc;
    for (int32_t i = 0; i < 5000; i++) {
        int32_t id = (int32_t)(unif() * 50000);
        CHECK_OK(nextok_detok_feed(d, &id, 1, buf, cap, &got));
    }
    CHECK_OK(nextok_detok_flush(d, buf, cap, &got));
    CHECK_EQ_INT(n_alloc - before, 0);
    free(buf);
    nextok_detok_free(d);
    nextok_vocab_free(v);
}

int main(int argc, char **argv)
{
    harness_init(argc, argv);
    if (GROUP("")) {
        RUN(batch_does_not_allocate_per_call);
        RUN(detok_and_stop_do_not_allocate);
    }
    if (GROUP("chains")) RUN(chains_do_not_allocate_per_token);
    return harness_done();
}
