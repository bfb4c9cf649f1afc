/*
 * The C side of bench/python/bench.sh: the same calls the Python bindings
 * make, from C, timed the same way (median of repeats of a loop).
 *
 * usage: bench_c sample V ITERS REPEATS
 *        bench_c batch  V B ITERS REPEATS THREADS
 * Prints the median time per call in nanoseconds. The params are those of
 * bench.py: vLLM profile, temperature 0.8, top_p 0.95, seed 1.
 */
#define _ISOC11_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nextok.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The rows bench.py makes: a fixed LCG, so both sides read the same values. */
static void fill(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (float)((double)((seed >> 40) % 20000) / 1000.0 - 10.0); /* as bench.py */
    }
}

static struct nextok_chain *make_chain(int32_t v)
{
    struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    p.n_vocab = v;
    p.temperature = 0.8f;
    p.top_p = 0.95f;
    p.seed = 1;
    struct nextok_chain *c = NULL;
    if (nextok_chain_init_sampling(&c, &p, NULL) != NEXTOK_OK) exit(1);
    return c;
}

int main(int argc, char **argv)
{
    if (argc < 5) return 2;
    int batch = strcmp(argv[1], "batch") == 0;
    int32_t v = atoi(argv[2]);
    size_t b = batch ? (size_t)atoi(argv[3]) : 1;
    int iters = atoi(argv[batch ? 4 : 3]), reps = atoi(argv[batch ? 5 : 4]);
    size_t threads = batch && argc > 6 ? (size_t)atoi(argv[6]) : 1;
    /* 64-byte aligned, as numpy allocates: malloc's 16-byte alignment would
     * split every 64-byte load across two cache lines */
    size_t bytes = (b * (size_t)v * sizeof(float) + 63) / 64 * 64;
    float *x = aligned_alloc(64, bytes);
    int32_t *tokens = malloc(b * sizeof *tokens);
    struct nextok_chain **chains = malloc(b * sizeof *chains);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!x || !tokens || !chains || !t) return 1;
    fill(x, b * (size_t)v, 7);
    for (size_t r = 0; r < b; r++) chains[r] = make_chain(v);
    struct nextok_threadpool *pool = NULL;
    if (batch && nextok_threadpool_init(&pool, threads) != NEXTOK_OK) return 1;
    long sum = 0;
    for (int k = 0; k < reps; k++) {
        double t0 = now_ns();
        for (int i = 0; i < iters; i++) {
            nextok_status rc = batch ? nextok_batch_sample(pool, chains, x, NEXTOK_DTYPE_F32, b,
                                                           (size_t)v, tokens, NULL)
                                     : nextok_chain_sample(chains[0], x, NEXTOK_DTYPE_F32, tokens);
            if (rc != NEXTOK_OK) return 1;
            sum += tokens[0];
        }
        t[k] = (now_ns() - t0) / iters;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    printf("%.1f %ld\n", t[reps / 2], sum);
    nextok_threadpool_free(pool);
    for (size_t r = 0; r < b; r++) nextok_chain_free(chains[r]);
    free(x);
    free(tokens);
    free(chains);
    free(t);
    return 0;
}
