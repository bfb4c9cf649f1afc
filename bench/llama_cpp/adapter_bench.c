/*
 * adapter_bench.c - time per token of the nextok llama.cpp adapter, of the
 * bare nextok chain, and of llama.cpp's own sampler chain, on the same rows.
 * Built and run by bench/llama_cpp/adapter_bench.sh.
 *
 * usage: adapter_bench VOCAB_GGUF [V ...]    (default V: 32000 128256)
 *   VOCAB_GGUF: tests/data/vocab/gguf/ggml-vocab-gpt-2.gguf, for part 2
 *   environment: ITERS (default 2000 per measurement), ROWS (default 8)
 *
 * Every configuration is the llama.cpp default chain: top-k 40, top-p 0.95,
 * min-p 0.05, temperature 0.8 (last), a categorical draw; on nextok's side
 * nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA). Rows: ROWS distinct
 * logits rows per V (2 * normal with 24 boosted tokens, as a model's row:
 * ~20-40 tokens survive), cycled. Each measurement times ITERS tokens, one
 * clock_gettime pair around each, after ITERS / 10 untimed ones, and prints
 * the median (and p10, p90) in microseconds. What each line times:
 *
 *   build         llama.cpp's loop in llama_sampler_sample: the
 *                 llama_token_data array {i, logits[i], 0} for i < V
 *   sample        nextok_chain_sample(row) + nextok_chain_accept: the bare
 *                 nextok chain on the logits row (its fused path)
 *   build+apply   build + nextok_chain_apply(array) + nextok_chain_accept:
 *                 the bare nextok chain on llama.cpp's candidate array
 *   build+adapter build + llama_sampler_apply(llama.cpp chain holding only
 *                 the adapter) + llama_sampler_accept: what
 *                 llama_sampler_sample costs with the adapter as the chain
 *   build+llama   build + llama_sampler_apply(top_k, top_p, min_p, temp,
 *                 dist) + llama_sampler_accept: llama.cpp's own chain
 *
 * Part 2, llama.cpp's own entry point: a small random-weight llama model
 * (tests/llama/tiny_model.h; the GPT-2 vocabulary, 50257 tokens, and the
 * same padded to 128256) decodes one batch of ROWS tokens with logits for
 * each; then each measurement samples output i % ROWS of it, ITERS times:
 *   llama          llama_sampler_sample(llama.cpp's chain above)
 *   adapter        llama_sampler_sample(a llama.cpp chain of the adapter)
 *   adapter-direct nextok_llama_sampler_sample(the same chain): nextok on
 *                  llama_get_logits_ith's row, no candidate array
 *   bare           nextok_chain_sample(llama_get_logits_ith(ctx, i)) +
 *                  nextok_chain_accept
 * Each includes what llama_sampler_sample does around the chain (the
 * context lookups, building the n_vocab candidate array, accept).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */

#include "nextok_llama.h"
#include "tiny_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* splitmix64 */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double unif(uint64_t *s) { return (double)(next(s) >> 11) * 0x1p-53; }

static float *make_row(int32_t V, uint64_t seed)
{
    float *row = malloc((size_t)V * sizeof *row);
    uint64_t s = seed;
    for (int32_t i = 0; i < V; i++) {
        const double u = unif(&s), v = unif(&s);
        row[i] = (float)(2.0 * sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
    }
    for (int b = 0; b < 24; b++) row[next(&s) % (uint64_t)V] += (float)(7.0 + 2.0 * unif(&s));
    return row;
}

enum what {
    BUILD,
    SAMPLE,
    APPLY,
    ADAPTER,
    LLAMA,
    N_WHAT
};
static const char *const names[N_WHAT] = {"build", "sample", "build+apply", "build+adapter",
                                          "build+llama"};

struct ctx {
    int32_t V;
    float **rows;
    int n_rows;
    llama_token_data *cand;
    struct nextok_chain *chain;    /* SAMPLE, APPLY */
    struct llama_sampler *adapter; /* ADAPTER: a llama.cpp chain holding the adapter */
    struct llama_sampler *llama;   /* LLAMA */
    long sink;
};

static void build(struct ctx *c, const float *row)
{
    for (int32_t i = 0; i < c->V; i++) c->cand[i] = (llama_token_data){i, row[i], 0.0f};
}

/* One token of `w` on row r. */
static void one(struct ctx *c, enum what w, int r)
{
    const float *row = c->rows[r % c->n_rows];
    llama_token_data_array cur = {c->cand, (size_t)c->V, -1, false};
    int32_t tok = 0;
    switch (w) {
    case BUILD:
        build(c, row);
        tok = c->cand[r % c->V].id;
        break;
    case SAMPLE:
        if (nextok_chain_sample(c->chain, row, NEXTOK_DTYPE_F32, &tok) != NEXTOK_OK) exit(1);
        nextok_chain_accept(c->chain, tok);
        break;
    case APPLY: {
        build(c, row);
        struct nextok_token_data_array a = {(struct nextok_token_data *)c->cand, (size_t)c->V, -1,
                                            false};
        if (nextok_chain_apply(c->chain, &a) != NEXTOK_OK) exit(1);
        tok = a.data[a.selected].id;
        nextok_chain_accept(c->chain, tok);
        break;
    }
    case ADAPTER:
    case LLAMA: {
        struct llama_sampler *s = w == ADAPTER ? c->adapter : c->llama;
        build(c, row);
        llama_sampler_apply(s, &cur);
        tok = cur.data[cur.selected].id;
        llama_sampler_accept(s, tok);
        break;
    }
    case N_WHAT: break;
    }
    c->sink += tok;
}

static void measure(struct ctx *c, enum what w, int iters, double out[3])
{
    double *t = malloc((size_t)iters * sizeof *t);
    for (int i = 0; i < iters / 10; i++) one(c, w, i);
    for (int i = 0; i < iters; i++) {
        const double t0 = now_us();
        one(c, w, i);
        t[i] = now_us() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    out[0] = t[iters / 2], out[1] = t[iters / 10], out[2] = t[iters - 1 - iters / 10];
    free(t);
}

static void run(int32_t V, int iters, int n_rows)
{
    struct ctx c = {V,      calloc((size_t)n_rows, sizeof(float *)),
                    n_rows, malloc((size_t)V * sizeof(llama_token_data)),
                    NULL,   NULL,
                    NULL,   0};
    for (int r = 0; r < n_rows; r++) c.rows[r] = make_row(V, 1000 + (uint64_t)r);

    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    sp.n_vocab = V;
    sp.seed = 42;
    struct nextok_error err;
    if (nextok_chain_init_sampling(&c.chain, &sp, &err) != NEXTOK_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    struct llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf = true;
    struct llama_sampler *ad = nextok_llama_sampler_init_sampling(&sp, NULL, &err);
    if (!ad) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    c.adapter = llama_sampler_chain_init(cp);
    llama_sampler_chain_add(c.adapter, ad);
    c.llama = llama_sampler_chain_init(cp);
    llama_sampler_chain_add(c.llama, llama_sampler_init_top_k(40));
    llama_sampler_chain_add(c.llama, llama_sampler_init_top_p(0.95f, 1));
    llama_sampler_chain_add(c.llama, llama_sampler_init_min_p(0.05f, 1));
    llama_sampler_chain_add(c.llama, llama_sampler_init_temp(0.8f));
    llama_sampler_chain_add(c.llama, llama_sampler_init_dist(42));

    /* survivors per row, for the record */
    double surv = 0;
    for (int r = 0; r < n_rows; r++) {
        build(&c, c.rows[r]);
        llama_token_data_array cur = {c.cand, (size_t)V, -1, false};
        llama_sampler_apply(c.adapter, &cur);
        surv += (double)cur.size;
    }
    printf("V = %d: %d rows, %.1f survivors per row on average, %d tokens per measurement\n",
           (int)V, n_rows, surv / n_rows, iters);

    double m[N_WHAT][3];
    for (int w = 0; w < N_WHAT; w++) {
        measure(&c, (enum what)w, iters, m[w]);
        printf("  %-14s median %9.2f us   p10 %9.2f   p90 %9.2f\n", names[w], m[w][0], m[w][1],
               m[w][2]);
    }
    if (nextok_llama_sampler_n_errors(ad)) {
        fprintf(stderr, "adapter errors: %s\n", nextok_llama_sampler_errmsg(ad));
        exit(1);
    }
    const double b = m[BUILD][0], s = m[SAMPLE][0], a = m[APPLY][0], d = m[ADAPTER][0],
                 l = m[LLAMA][0];
    printf("  adapter's own cost (build+adapter - build - sample): %.2f us = %+.1f %% of sample\n",
           d - b - s, 100.0 * (d - b - s) / s);
    printf("  per token with llama.cpp's array: adapter %.2f us vs bare chain_apply %.2f us (%+.1f "
           "%%)\n",
           d, a, 100.0 * (d - a) / a);
    printf("  llama.cpp's chain / adapter (both with the array built): %.2fx\n", l / d);
    printf("  llama.cpp's chain without the build / adapter without it: %.2fx\n",
           (l - b) / (d - b));

    llama_sampler_free(c.adapter);
    llama_sampler_free(c.llama);
    nextok_chain_free(c.chain);
    for (int r = 0; r < n_rows; r++) free(c.rows[r]);
    free(c.rows);
    free(c.cand);
    if (c.sink == 42) printf(" ");
}

/* ---- part 2: llama_sampler_sample on a model's context ---------------------- */

enum real {
    R_LLAMA,
    R_ADAPTER,
    R_DIRECT,
    R_BARE,
    N_REAL
};
static const char *const real_names[N_REAL] = {"llama", "adapter", "adapter-direct", "bare"};

struct rctx {
    struct llama_context *ctx;
    struct llama_sampler *s[N_REAL - 1];
    struct nextok_chain *bare;
    int n_rows;
    long sink;
};

static void real_one(struct rctx *c, enum real w, int i)
{
    const int32_t idx = i % c->n_rows;
    llama_token tok = 0;
    switch (w) {
    case R_LLAMA:
    case R_ADAPTER: tok = llama_sampler_sample(c->s[w], c->ctx, idx); break;
    case R_DIRECT: tok = nextok_llama_sampler_sample(c->s[w], c->ctx, idx); break;
    case R_BARE:
        if (nextok_chain_sample(c->bare, llama_get_logits_ith(c->ctx, idx), NEXTOK_DTYPE_F32, &tok))
            exit(1);
        nextok_chain_accept(c->bare, tok);
        break;
    case N_REAL: break;
    }
    c->sink += tok;
}

static void real_measure(struct rctx *c, enum real w, int iters, double out[3])
{
    double *t = malloc((size_t)iters * sizeof *t);
    for (int i = 0; i < iters / 10; i++) real_one(c, w, i);
    for (int i = 0; i < iters; i++) {
        const double t0 = now_us();
        real_one(c, w, i);
        t[i] = now_us() - t0;
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_double);
    out[0] = t[iters / 2], out[1] = t[iters / 10], out[2] = t[iters - 1 - iters / 10];
    free(t);
}

static void quiet(enum ggml_log_level level, const char *text, void *user)
{
    (void)level, (void)text, (void)user;
}

static void run_real(const char *vocab, int64_t pad, int iters, int n_rows)
{
    char path[] = "/tmp/nextok-bench-model-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) exit(1);
    close(fd);
    tiny_vocab_pad = pad;
    if (tiny_model_write(vocab, path, 7, -1) != 0) exit(1);
    struct llama_model *model = llama_model_load_from_file(path, llama_model_default_params());
    unlink(path);
    if (!model) exit(1);
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 256, cp.n_batch = 256, cp.n_ubatch = 256, cp.n_threads = 1, cp.n_threads_batch = 1;
    cp.no_perf = true;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    const int32_t V = llama_vocab_n_tokens(llama_model_get_vocab(model));
    struct llama_batch b = llama_batch_init(n_rows, 0, 1);
    for (int i = 0; i < n_rows; i++) {
        b.token[i] = 464 + 17 * i, b.pos[i] = i, b.n_seq_id[i] = 1, b.seq_id[i][0] = 0;
        b.logits[i] = 1;
    }
    b.n_tokens = n_rows;
    if (llama_decode(ctx, b) != 0) exit(1);

    struct rctx c = {ctx, {NULL, NULL, NULL}, NULL, n_rows, 0};
    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    sp.n_vocab = V;
    sp.seed = 42;
    struct llama_sampler_chain_params chp = llama_sampler_chain_default_params();
    chp.no_perf = true;
    c.s[R_LLAMA] = llama_sampler_chain_init(chp);
    llama_sampler_chain_add(c.s[R_LLAMA], llama_sampler_init_top_k(40));
    llama_sampler_chain_add(c.s[R_LLAMA], llama_sampler_init_top_p(0.95f, 1));
    llama_sampler_chain_add(c.s[R_LLAMA], llama_sampler_init_min_p(0.05f, 1));
    llama_sampler_chain_add(c.s[R_LLAMA], llama_sampler_init_temp(0.8f));
    llama_sampler_chain_add(c.s[R_LLAMA], llama_sampler_init_dist(42));
    for (int k = R_ADAPTER; k <= R_DIRECT; k++) {
        c.s[k] = llama_sampler_chain_init(chp);
        llama_sampler_chain_add(c.s[k], nextok_llama_sampler_init_sampling(&sp, NULL, NULL));
    }
    if (nextok_chain_init_sampling(&c.bare, &sp, NULL) != NEXTOK_OK) exit(1);

    /* survivors on the model's rows (nextok's final distribution) */
    struct nextok_token_data *probs = malloc((size_t)V * sizeof *probs);
    double surv = 0;
    for (int i = 0; i < n_rows; i++) {
        size_t n = 0;
        nextok_chain_probs(c.bare, llama_get_logits_ith(ctx, i), NEXTOK_DTYPE_F32, probs, (size_t)V,
                           &n, NULL);
        surv += (double)n;
    }
    free(probs);
    printf("model, V = %d: %d rows, %.1f survivors per row on average, %d tokens per measurement\n",
           (int)V, n_rows, surv / n_rows, iters);
    double m[N_REAL][3];
    for (int w = 0; w < N_REAL; w++) {
        real_measure(&c, (enum real)w, iters, m[w]);
        printf("  %-14s median %9.2f us   p10 %9.2f   p90 %9.2f\n", real_names[w], m[w][0], m[w][1],
               m[w][2]);
    }
    for (int k = R_ADAPTER; k <= R_DIRECT; k++)
        if (nextok_llama_sampler_n_errors(nextok_llama_sampler_find(c.s[k]))) exit(1);
    printf("  llama_sampler_sample: llama.cpp's chain / the adapter's: %.2fx\n",
           m[R_LLAMA][0] / m[R_ADAPTER][0]);
    printf("  llama.cpp's chain / nextok_llama_sampler_sample: %.2fx; its cost over the bare "
           "chain: %+.1f %%\n",
           m[R_LLAMA][0] / m[R_DIRECT][0], 100.0 * (m[R_DIRECT][0] - m[R_BARE][0]) / m[R_BARE][0]);
    for (int k = 0; k < N_REAL - 1; k++) llama_sampler_free(c.s[k]);
    nextok_chain_free(c.bare);
    llama_batch_free(b);
    llama_free(ctx);
    llama_model_free(model);
    if (c.sink == 42) printf(" ");
}

int main(int argc, char **argv)
{
    const int iters = getenv("ITERS") ? atoi(getenv("ITERS")) : 2000;
    const int n_rows = getenv("ROWS") ? atoi(getenv("ROWS")) : 8;
    if (argc < 2) {
        fprintf(stderr, "usage: adapter_bench VOCAB_GGUF [V ...]\n");
        return 2;
    }
    if (argc > 2) {
        for (int i = 2; i < argc; i++) run((int32_t)atoi(argv[i]), iters, n_rows);
    } else {
        run(32000, iters, n_rows);
        run(128256, iters, n_rows);
    }
    llama_log_set(quiet, NULL);
    llama_backend_init();
    run_real(argv[1], 0, iters, n_rows);
    run_real(argv[1], 128256, iters, n_rows);
    llama_backend_free();
    return 0;
}
