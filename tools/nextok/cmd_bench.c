/*
 * nextok bench: how long sampling takes next to one plain read of the logits.
 *
 * Logits come from a fixed generator so other tools can reproduce the data
 * (docs/performance.md): splitmix64 seeded 0x5EED0000 + V (peaked) or
 * 0xF1A70000 + V (flat); uniform() = (next() >> 11) * 2^-53; normal() =
 * sqrt(-2 ln max(uniform(), 1e-300)) * cos(2 pi uniform()).
 *   peaked: logit[i] = 2.5 normal() for i = 0..V-1, then 20 distinct ids
 *           floor(uniform() V) (duplicates redrawn), each += 8 + 6 uniform();
 *   flat:   logit[i] = normal().
 * Rows 1..B-1 of a batch (and rows 1..R-1 of --rows R) continue the same
 * stream (row r is generated right after row r-1, boosts included).
 * f16/bf16 rows are the f32 values rounded to nearest even.
 *
 * When the chain has penalties, DRY or an n-gram ban, 64 history tokens are
 * accepted first: floor(uniform() V) from splitmix64 seeded 0x4157000 + V.
 *
 * --allowed-fraction F adds a token-bitmask stage and one mask per row: id i
 * of row r allowed iff uniform() < F, from splitmix64 seeded 0xA11D0000 + V,
 * rows in order, ids in order (a row that allows none then allows id
 * floor(uniform() V)). Each timed call sets its row's mask (B = 1:
 * nextok_chain_set_token_bitmask; batches: nextok_batch_sample_bitmask).
 *
 * Timing: each iteration times one sampling call (one row, or the whole
 * batch) with CLOCK_MONOTONIC; median, p10 and p90 over --iters iterations
 * (>= 200) after --warmup. In the same run the read pass (sum of every
 * element of the same rows, 4 independent SIMD accumulators; with --threads T
 * the rows are split over T threads) is timed the same way, and so is the
 * plain chain (the fused path disabled by an observer).
 */
#include "cli.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the generator ---------------------------------------------------------------- */

struct sm64 {
    uint64_t s;
};

static uint64_t sm_next(struct sm64 *g)
{
    uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double sm_uniform(struct sm64 *g) { return (double)(sm_next(g) >> 11) * 0x1p-53; }

static double sm_normal(struct sm64 *g)
{
    double u = sm_uniform(g);
    double v = sm_uniform(g);
    return sqrt(-2.0 * log(u > 1e-300 ? u : 1e-300)) * cos(2.0 * 3.14159265358979323846 * v);
}

static void gen_row(struct sm64 *g, bool peaked, size_t V, float *row)
{
    for (size_t i = 0; i < V; i++) row[i] = (float)((peaked ? 2.5 : 1.0) * sm_normal(g));
    if (!peaked) return;
    size_t ids[20];
    size_t nb = V < 20 ? V : 20;
    for (size_t k = 0; k < nb; k++) {
        size_t id;
        bool dup;
        do {
            id = (size_t)(sm_uniform(g) * (double)V);
            dup = false;
            for (size_t j = 0; j < k; j++) dup |= ids[j] == id;
        } while (dup);
        ids[k] = id;
        row[id] = (float)((double)row[id] + 8.0 + 6.0 * sm_uniform(g));
    }
}

/* ---- options ------------------------------------------------------------------------- */

struct bench_opts {
    bool peaked;
    size_t V, B, T, R; /* R: distinct rows cycled through when B = 1 */
    enum nextok_dtype dtype;
    long long iters, warmup, plain_iters;
    bool json, no_plain;
    float allowed; /* --allowed-fraction (0: no mask) */
};

static enum cli_parse own_flag(struct bench_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    long long x;
    if (cli_is_flag(a, "--json")) return o->json = true, CLI_PARSE_OK;
    if (cli_is_flag(a, "--no-plain")) return o->no_plain = true, CLI_PARSE_OK;
#define VAL() if (!(v = cli_flag_value("bench", argc, argv, i))) return CLI_PARSE_ERROR
    if (cli_is_flag(a, "--dist")) {
        VAL();
        if (strcmp(v, "peaked") && strcmp(v, "flat")) {
            cli_fail("bench", "--dist: want peaked or flat, got '%s'", v);
            return CLI_PARSE_ERROR;
        }
        o->peaked = strcmp(v, "peaked") == 0;
        return CLI_PARSE_OK;
    }
    if (cli_is_flag(a, "--vocab")) { /* the size was once --vocab; it names a file elsewhere */
        cli_fail("bench", "--vocab is a vocabulary file in the other commands; give the "
                 "vocabulary size as --n-vocab N");
        return CLI_PARSE_ERROR;
    }
    if (cli_is_flag(a, "--allowed-fraction")) {
        VAL();
        if (cli_parse_float("bench", "--allowed-fraction", v, 0.0, 1.0, &o->allowed)) return CLI_PARSE_ERROR;
        if (o->allowed > 0.0f) return CLI_PARSE_OK;
        cli_fail("bench", "--allowed-fraction: must be > 0 (a mask that allows no token), got '%s'", v);
        return CLI_PARSE_ERROR;
    }
    if (cli_is_flag(a, "--dtype")) {
        VAL();
        if (!strcmp(v, "f32")) o->dtype = NEXTOK_DTYPE_F32;
        else if (!strcmp(v, "f16")) o->dtype = NEXTOK_DTYPE_F16;
        else if (!strcmp(v, "bf16")) o->dtype = NEXTOK_DTYPE_BF16;
        else {
            cli_fail("bench", "--dtype: want f32, f16 or bf16, got '%s'", v);
            return CLI_PARSE_ERROR;
        }
        return CLI_PARSE_OK;
    }
    struct { const char *name; long long lo, hi; void *dst; bool size; } nums[] = {
        {"--n-vocab", 1, INT32_MAX, &o->V, true},     {"--batch", 1, 1 << 20, &o->B, true},
        {"--threads", 1, 1024, &o->T, true},          {"--iters", 200, 100000000, &o->iters, false},
        {"--rows", 1, 4096, &o->R, true},
        {"--warmup", 0, 100000000, &o->warmup, false}, {"--plain-iters", 1, 100000000, &o->plain_iters, false},
    };
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        if (!cli_is_flag(a, nums[k].name)) continue;
        VAL();
        if (cli_parse_int("bench", nums[k].name, v, nums[k].lo, nums[k].hi, &x)) return CLI_PARSE_ERROR;
        if (nums[k].size) *(size_t *)nums[k].dst = (size_t)x;
        else *(long long *)nums[k].dst = x;
        return CLI_PARSE_OK;
    }
#undef VAL
    return CLI_PARSE_NOT_MINE;
}

static void usage(void)
{
    printf("usage: nextok bench [--dist peaked|flat] [--n-vocab V] [--dtype f32|f16|bf16]\n"
           "                    [--batch B] [--threads T] [--rows R] [--iters N] [--warmup N]\n"
           "                    [--plain-iters N] [--no-plain] [--allowed-fraction F]\n"
           "                    [--json] [sampling flags]\n"
           "Times the sampling call per row against a plain read pass over the same\n"
           "logits (and the plain chain with the fused path off). With --rows R (B = 1)\n"
           "call k samples row k mod R of R generated rows, so branch predictors cannot\n"
           "learn one row. --allowed-fraction F (0 < F <= 1) adds a token bitmask that\n"
           "allows about a fraction F of the ids, a random mask per row set on each call.\n"
           "Defaults: peaked, V 128256, f32, B 1, R 1, T 1, 200 iterations after 20\n"
           "warm-up calls.\n\n");
    cli_sampling_usage(stdout);
}

/* ---- timing ------------------------------------------------------------------------------ */

static double now_ns(void) { return cli_now_s() * 1e9; }

struct stats {
    double med, p10, p90;
};

static struct stats summarize(double *t, size_t n)
{
    cli_sort_doubles(t, n);
    struct stats s = {t[n / 2], t[n / 10], t[(n * 9) / 10]};
    return s;
}

/* ---- the read pass (T threads, persistent, barrier-synchronised) --------------------- */

struct reader {
    const void *data;
    size_t elems_per_row, elem_size, rows, T;
    pthread_barrier_t start, done;
    bool stop;
    volatile double sink[64];
};

struct reader_arg {
    struct reader *r;
    size_t k;
};

/* GCC/Clang vector extensions: 4 independent 16-byte accumulators, so the
 * read pass runs at load bandwidth rather than at the latency of one add
 * chain (an honest, fast baseline). */
#if defined(__GNUC__)
typedef float v4f __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
#define LANES 16
static double sum_f32(const float *x, size_t n)
{
    v4f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, t;
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        memcpy(&t, x + i, 16), a0 += t;
        memcpy(&t, x + i + 4, 16), a1 += t;
        memcpy(&t, x + i + 8, 16), a2 += t;
        memcpy(&t, x + i + 12, 16), a3 += t;
    }
    v4f a = (a0 + a1) + (a2 + a3);
    double s = (double)a[0] + a[1] + a[2] + a[3];
    for (; i < n; i++) s += x[i];
    return s;
}

static double sum_u16(const uint16_t *x, size_t n)
{
    /* the 16-bit values summed as pairs inside 32-bit lanes: every byte read once */
    v4u a0 = {0}, a1 = {0}, t;
    const v4u lo = {0xffff, 0xffff, 0xffff, 0xffff};
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        memcpy(&t, x + i, 16), a0 += (t & lo) + (t >> 16);
        memcpy(&t, x + i + 8, 16), a1 += (t & lo) + (t >> 16);
    }
    v4u a = a0 + a1;
    double s = (double)a[0] + a[1] + a[2] + a[3];
    for (; i < n; i++) s += x[i];
    return s;
}
#else
static double sum_f32(const float *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

static double sum_u16(const uint16_t *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}
#endif

static void read_share(struct reader *r, size_t k)
{
    double s = 0.0;
    for (size_t row = k; row < r->rows; row += r->T) {
        const char *p = (const char *)r->data + row * r->elems_per_row * r->elem_size;
        s += r->elem_size == 4 ? sum_f32((const float *)p, r->elems_per_row)
                               : sum_u16((const uint16_t *)p, r->elems_per_row);
    }
    r->sink[k % 64] = s;
}

static void *reader_main(void *arg)
{
    struct reader_arg *a = arg;
    for (;;) {
        pthread_barrier_wait(&a->r->start);
        if (a->r->stop) return NULL;
        read_share(a->r, a->k);
        pthread_barrier_wait(&a->r->done);
    }
}

static double read_pass_once(struct reader *r)
{
    double t0 = now_ns();
    if (r->T > 1) pthread_barrier_wait(&r->start);
    read_share(r, 0);
    if (r->T > 1) pthread_barrier_wait(&r->done);
    return now_ns() - t0;
}

/* ---- the benchmark -------------------------------------------------------------------------- */

struct bench {
    struct bench_opts o;
    void *rows;
    int32_t *masks; /* --allowed-fraction: one mask per row (mask_words each) */
    size_t mask_words;
    struct nextok_chain **chains, **plain;
    struct nextok_threadpool *pool;
    int32_t *tokens;
    nextok_status *st;
};

static bool has_history_stages(const struct nextok_sampling_params *p)
{
    return p->repeat_penalty != 1.0f || p->frequency_penalty != 0.0f ||
           p->presence_penalty != 0.0f || p->dry_multiplier != 0.0f || p->no_repeat_ngram > 0;
}

static void noop_observer(size_t i, const char *name, const struct nextok_token_data_array *cur,
                          void *user)
{
    (void)i;
    (void)name;
    (void)cur;
    (void)user;
}

static int build_chains(struct bench *b, struct cli_sampling *smp)
{
    struct nextok_sampling_params p;
    if (cli_sampling_params(smp, (int32_t)b->o.V, "bench", &p)) return CLI_EXIT_USAGE;
    const bool hist = has_history_stages(&p);
    for (size_t r = 0; r < b->o.B; r++) {
        if (cli_chain_build(smp, (int32_t)b->o.V, "bench", &b->chains[r])) return CLI_EXIT_USAGE;
        struct sm64 g = {0x4157000ull + b->o.V};
        for (int k = 0; k < 64 && hist; k++) {
            nextok_status rc = nextok_chain_accept(b->chains[r], (int32_t)(sm_uniform(&g) * (double)b->o.V));
            if (rc != NEXTOK_OK) return cli_fail("bench", "accept: %s", nextok_chain_errmsg(b->chains[r]));
        }
        if (b->o.no_plain) continue;
        if (nextok_chain_clone(b->chains[r], &b->plain[r]) != NEXTOK_OK)
            return cli_fail("bench", "cloning the chain failed");
        nextok_chain_set_observer(b->plain[r], noop_observer, NULL);
    }
    return 0;
}

static void *make_rows(const struct bench_opts *o)
{
    const size_t nr = o->B > o->R ? o->B : o->R;
    const size_t n = o->V * nr, es = nextok_dtype_size(o->dtype);
    float *f = malloc(n * sizeof *f);
    void *out = o->dtype == NEXTOK_DTYPE_F32 ? (void *)f : malloc(n * es);
    if (!f || !out) {
        free(f);
        return NULL;
    }
    struct sm64 g = {(o->peaked ? 0x5EED0000ull : 0xF1A70000ull) + o->V};
    for (size_t r = 0; r < nr; r++) gen_row(&g, o->peaked, o->V, f + r * o->V);
    if (o->dtype == NEXTOK_DTYPE_F32) return f;
    uint16_t *h = out;
    for (size_t i = 0; i < n; i++)
        h[i] = o->dtype == NEXTOK_DTYPE_F16 ? nextok_f32_to_f16(f[i]) : nextok_f32_to_bf16(f[i]);
    free(f);
    return out;
}

/* The masks of --allowed-fraction (see the top of the file), or NULL. */
static int32_t *make_masks(const struct bench_opts *o, size_t words)
{
    const size_t nr = o->B > o->R ? o->B : o->R;
    uint32_t *m = calloc(nr * words, sizeof *m);
    if (!m) return NULL;
    struct sm64 g = {0xA11D0000ull + o->V};
    for (size_t r = 0; r < nr; r++) {
        uint32_t *w = m + r * words;
        size_t n = 0;
        for (size_t i = 0; i < o->V; i++)
            if (sm_uniform(&g) < (double)o->allowed) w[i / 32] |= UINT32_C(1) << (i % 32), n++;
        if (n == 0) {
            const size_t i = (size_t)(sm_uniform(&g) * (double)o->V);
            w[i / 32] |= UINT32_C(1) << (i % 32);
        }
    }
    return (int32_t *)m;
}

/* The k-th call's row (B = 1: row k mod R). */
static const void *row_of(const struct bench *b, long long k)
{
    const size_t bytes = b->o.V * nextok_dtype_size(b->o.dtype);
    return (const char *)b->rows + (size_t)(k % (long long)b->o.R) * bytes;
}

/* One timed sampling call over all rows (fused chains or plain ones). */
static nextok_status sample_once(struct bench *b, struct nextok_chain **chains, long long k, double *ns)
{
    const size_t mw = b->mask_words;
    double t0 = now_ns();
    nextok_status rc = NEXTOK_OK;
    if (b->o.B == 1) {
        const int32_t *m = b->masks ? b->masks + (size_t)(k % (long long)b->o.R) * mw : NULL;
        if (m) rc = nextok_chain_set_token_bitmask(chains[0], m, mw);
        if (rc == NEXTOK_OK) rc = nextok_chain_sample(chains[0], row_of(b, k), b->o.dtype, b->tokens);
    } else if (b->masks) {
        rc = nextok_batch_sample_bitmask(b->pool, chains, b->rows, b->o.dtype, b->o.B, b->o.V, b->masks, mw,
                                         b->tokens, b->st);
    } else {
        rc = nextok_batch_sample(b->pool, chains, b->rows, b->o.dtype, b->o.B, b->o.V, b->tokens, b->st);
    }
    *ns = now_ns() - t0;
    return rc;
}

static int time_sampling(struct bench *b, struct nextok_chain **chains, long long iters,
                         double *t, struct stats *out)
{
    double ns;
    for (long long k = 0; k < b->o.warmup; k++)
        if (sample_once(b, chains, k, &ns) != NEXTOK_OK)
            return cli_fail("bench", "sampling failed: %s", nextok_chain_errmsg(chains[0]));
    for (long long k = 0; k < iters; k++)
        if (sample_once(b, chains, k, &t[k]) != NEXTOK_OK)
            return cli_fail("bench", "sampling failed: %s", nextok_chain_errmsg(chains[0]));
    *out = summarize(t, (size_t)iters);
    return 0;
}

static struct stats time_read(struct bench *b, double *t, long long iters)
{
    struct reader r = {.data = b->rows, .elems_per_row = b->o.V,
                       .elem_size = nextok_dtype_size(b->o.dtype), .rows = b->o.B, .T = b->o.T};
    pthread_t th[1024];
    struct reader_arg args[1024];
    if (r.T > 1) {
        pthread_barrier_init(&r.start, NULL, (unsigned)r.T);
        pthread_barrier_init(&r.done, NULL, (unsigned)r.T);
        for (size_t k = 1; k < r.T; k++) {
            args[k] = (struct reader_arg){&r, k};
            pthread_create(&th[k], NULL, reader_main, &args[k]);
        }
    }
    for (long long k = 0; k < b->o.warmup; k++) {
        r.data = b->o.B == 1 ? row_of(b, k) : b->rows;
        (void)read_pass_once(&r);
    }
    for (long long k = 0; k < iters; k++) {
        r.data = b->o.B == 1 ? row_of(b, k) : b->rows;
        t[k] = read_pass_once(&r);
    }
    if (r.T > 1) {
        r.stop = true;
        pthread_barrier_wait(&r.start);
        for (size_t k = 1; k < r.T; k++) pthread_join(th[k], NULL);
        pthread_barrier_destroy(&r.start);
        pthread_barrier_destroy(&r.done);
    }
    return summarize(t, (size_t)iters);
}

static void report(const struct bench *b, const struct cli_sampling *smp, struct stats s,
                   struct stats rd, struct stats pl, bool fused)
{
    const double B = (double)b->o.B, ns_row = s.med / B, rd_row = rd.med / B;
    const double bytes = (double)b->o.V * (double)nextok_dtype_size(b->o.dtype);
    const char *dt = b->o.dtype == NEXTOK_DTYPE_F32 ? "f32" : b->o.dtype == NEXTOK_DTYPE_F16 ? "f16" : "bf16";
    const double plain_row = b->o.no_plain ? 0.0 : pl.med / B;
    if (b->o.json) {
        printf("{\"dist\":\"%s\",\"vocab\":%zu,\"dtype\":\"%s\",\"batch\":%zu,\"threads\":%zu,"
               "\"rows\":%zu,\"profile\":\"%s\",\"iters\":%lld,\"fused\":%s,"
               "\"ns_per_row\":%.1f,\"p10_ns_per_row\":%.1f,\"p90_ns_per_row\":%.1f,"
               "\"read_pass_ns\":%.1f,\"ratio_to_read_pass\":%.3f,\"rows_per_s\":%.1f,"
               "\"gb_per_s\":%.3f,\"read_gb_per_s\":%.3f,\"plain_ns_per_row\":%.1f,"
               "\"speedup_vs_plain\":%.2f,\"allowed_fraction\":%g,\"avx2\":%s,\"avx512\":%s}\n",
               b->o.peaked ? "peaked" : "flat", b->o.V, dt, b->o.B, b->o.T, b->o.R,
               nextok_profile_name(smp->profile), b->o.iters, fused ? "true" : "false", ns_row,
               s.p10 / B, s.p90 / B, rd_row, ns_row / rd_row, 1e9 / ns_row, bytes / ns_row,
               bytes / rd_row, plain_row, plain_row > 0 ? plain_row / ns_row : 0.0, (double)b->o.allowed,
               nextok_cpu_has_avx2() ? "true" : "false", nextok_cpu_has_avx512() ? "true" : "false");
        return;
    }
    printf("logits: %s, V = %zu, %s, batch %zu, threads %zu, %lld iterations\n",
           b->o.peaked ? "peaked" : "flat", b->o.V, dt, b->o.B, b->o.T, b->o.iters);
    if (b->masks) printf("token bitmask:    a random mask per row allowing a fraction %g\n", (double)b->o.allowed);
    printf("sampling (%s): %10.1f ns/row (p10 %.1f, p90 %.1f)  %.0f rows/s  %.2f GB/s\n",
           fused ? "fused" : "plain", ns_row, s.p10 / B, s.p90 / B, 1e9 / ns_row, bytes / ns_row);
    printf("read pass:        %10.1f ns/row  %.2f GB/s\n", rd_row, bytes / rd_row);
    printf("ratio to read:    %10.2f x\n", ns_row / rd_row);
    if (!b->o.no_plain)
        printf("plain chain:      %10.1f ns/row  (fused is %.2f x faster)\n", plain_row,
               plain_row / ns_row);
}

static void bench_free(struct bench *b)
{
    for (size_t r = 0; r < b->o.B && b->chains; r++) nextok_chain_free(b->chains[r]);
    for (size_t r = 0; r < b->o.B && b->plain; r++) nextok_chain_free(b->plain[r]);
    free(b->chains);
    free(b->plain);
    free(b->rows);
    free(b->masks);
    free(b->tokens);
    free(b->st);
    nextok_threadpool_free(b->pool);
}

static int run_bench(struct bench *b, struct cli_sampling *smp)
{
    const struct bench_opts *o = &b->o;
    b->chains = calloc(o->B, sizeof *b->chains);
    b->plain = calloc(o->B, sizeof *b->plain);
    b->tokens = calloc(o->B, sizeof *b->tokens);
    b->st = calloc(o->B, sizeof *b->st);
    b->rows = make_rows(o);
    b->mask_words = NEXTOK_BITMASK_WORDS(o->V);
    if (o->allowed > 0.0f) b->masks = make_masks(o, b->mask_words);
    long long n_t = o->iters > o->plain_iters ? o->iters : o->plain_iters;
    double *t = calloc((size_t)n_t, sizeof *t);
    int rc = 0;
    if (!b->chains || !b->plain || !b->tokens || !b->st || !b->rows || !t || (o->allowed > 0.0f && !b->masks))
        rc = cli_fail("bench", "out of memory for %zu rows of %zu", o->B, o->V);
    if (!rc && nextok_threadpool_init(&b->pool, o->T) != NEXTOK_OK)
        rc = cli_fail("bench", "cannot start %zu threads", o->T);
    if (!rc) rc = build_chains(b, smp);
    struct stats s = {0}, rd = {0}, pl = {0};
    if (!rc) rc = time_sampling(b, b->chains, o->iters, t, &s);
    bool fused = !rc && nextok_chain_last_fused(b->chains[0]);
    if (!rc) rd = time_read(b, t, o->iters);
    if (!rc && !o->no_plain) rc = time_sampling(b, b->plain, o->plain_iters, t, &pl);
    if (!rc) report(b, smp, s, rd, pl, fused);
    free(t);
    return rc;
}

int nextok_cmd_bench(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage();
        return 0;
    }
    struct bench b;
    memset(&b, 0, sizeof b);
    b.o = (struct bench_opts){true, 128256, 1, 1, 1, NEXTOK_DTYPE_F32, 200, 20, 0, false, false, 0.0f};
    struct cli_sampling smp;
    cli_sampling_init(&smp);
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        enum cli_parse r = cli_sampling_parse(&smp, "bench", argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = own_flag(&b.o, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = cli_unknown_flag("bench", argv[i]);
        if (r == CLI_PARSE_ERROR) rc = CLI_EXIT_USAGE;
    }
    if (!rc && b.o.R > 1 && b.o.B > 1) rc = cli_fail("bench", "--rows: only with --batch 1");
    if (!rc && cli_grammar_given(&smp.grammar))
        rc = cli_fail("bench", "grammars are measured by nextok grammar bench");
    if (!rc && b.o.plain_iters == 0) b.o.plain_iters = b.o.B > 1 ? 10 : b.o.iters;
    smp.token_bitmask = b.o.allowed > 0.0f;
    if (!rc) rc = run_bench(&b, &smp);
    bench_free(&b);
    cli_sampling_free(&smp);
    return rc ? CLI_EXIT_USAGE : 0;
}
