/*
 * test_llama_adapter: the nextok llama.cpp sampler (adapters/llama.cpp)
 * against real llama.cpp (libllama as built by bench/llama_cpp/build.sh) and
 * against nextok's own chain. Built and run by tests/llama/run.sh.
 *
 * What is exact and what is statistical:
 *   - exact: the adapter at the end of a llama.cpp chain returns, step for
 *     step, the token nextok_chain_sample returns for the same row, seed and
 *     step, on every input path (llama.cpp's full row, a shuffled array, a
 *     sparse one after llama.cpp's top-k, many survivors); filter mode leaves
 *     the survivors and p of nextok_chain_probs; greedy picks llama.cpp's
 *     greedy token; clones, resets, copies and accepts continue exactly;
 *   - statistical (Pearson chi-square, N = 10^5 draws, fixed seeds): the
 *     adapter's draws and llama.cpp's own chain (top_k 40, top_p 0.95,
 *     min_p 0.05, temp 0.8, dist) against the exact distribution of nextok's
 *     llama profile, and the two samples against each other. Each test fails
 *     when P(chi2 >= observed) < 1e-6: a correct adapter fails one with
 *     probability 1e-6, the file's five about 5e-6. Seeds are fixed, so a run
 *     is deterministic and a failure repeats.
 *   - llama.cpp's real loop: a small random-weight llama model written at
 *     run time (tiny_model.h, the GPT-2 vocabulary fixture), llama_decode,
 *     then llama_sampler_sample with the adapter and
 *     nextok_llama_sampler_sample give nextok_chain_sample's token on the
 *     context's logits, step after step; NaN logits from the model do not
 *     abort llama_sampler_sample.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, unlink */

#include "nextok_llama.h"

#include "harness.h"
#include "oracle.h"
#include "tiny_model.h"

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define N_DRAWS 100000
#define P_FAIL  1e-6

/* ---- rows and candidate arrays --------------------------------------------- */

/* 1.5 * normal with a few dozen boosted tokens: most of the mass on a few
 * dozen ids, as a model's row. */
static float *row_new(int32_t V, uint64_t seed)
{
    struct tu_gen g = {seed};
    float *row = malloc((size_t)V * sizeof *row);
    for (int32_t i = 0; i < V; i++) row[i] = (float)(1.5 * tu_norm(&g));
    for (int b = 0; b < 24; b++) row[tu_int(&g, V)] += (float)(4.5 + tu_range(&g, -1, 1));
    return row;
}

/* The array llama_sampler_sample builds from a row. */
static llama_token_data_array full_array(llama_token_data *buf, const float *row, int32_t V)
{
    for (int32_t i = 0; i < V; i++) buf[i] = (llama_token_data){i, row[i], 0.0f};
    return (llama_token_data_array){buf, (size_t)V, -1, false};
}

static void shuffle(llama_token_data *d, size_t n, uint64_t seed)
{
    struct tu_gen g = {seed};
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(tu_u64(&g) % i);
        llama_token_data t = d[i - 1];
        d[i - 1] = d[j];
        d[j] = t;
    }
}

static int cmp_id(const void *pa, const void *pb)
{
    const llama_token_data *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

/* The survivors of a (terminal or filter) result and of nextok_chain_probs
 * are the same ids with the same p: bit for bit when exact, else within tol
 * (relative). Sorts a copy of both by id. Returns the number of mismatches. */
static int same_dist(const llama_token_data *a, size_t na, const struct nextok_token_data *b,
                     size_t nb, double tol, const char *what)
{
    if (na != nb) {
        CHECK_MSG(na == nb, "%s: %zu survivors, nextok %zu", what, na, nb);
        return 1;
    }
    llama_token_data *x = malloc(na * sizeof *x), *y = malloc(na * sizeof *y);
    memcpy(x, a, na * sizeof *x);
    memcpy(y, b, na * sizeof *y);
    qsort(x, na, sizeof *x, cmp_id);
    qsort(y, na, sizeof *y, cmp_id);
    int bad = 0;
    for (size_t i = 0; i < na; i++) {
        const int ok = x[i].id == y[i].id &&
                       (tol == 0 ? x[i].p == y[i].p
                                 : fabs((double)x[i].p - y[i].p) <= tol * fabs((double)y[i].p));
        if (!ok && !bad++)
            CHECK_MSG(ok, "%s: entry %zu: id %d p %.9g, nextok id %d p %.9g", what, i, (int)x[i].id,
                      (double)x[i].p, (int)y[i].id, (double)y[i].p);
    }
    free(x), free(y);
    return bad;
}

/* ---- building samplers ---------------------------------------------------------- */

static struct nextok_sampling_params llama_profile(int32_t V, uint64_t seed)
{
    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    sp.n_vocab = V;
    sp.seed = seed;
    return sp;
}

static struct llama_sampler *adapter(const struct nextok_sampling_params *sp,
                                     enum nextok_llama_mode mode)
{
    struct nextok_llama_sampler_params lp = nextok_llama_sampler_default_params();
    lp.mode = mode;
    struct nextok_error err = {NEXTOK_OK, ""};
    struct llama_sampler *s = nextok_llama_sampler_init_sampling(sp, &lp, &err);
    CHECK_MSG(s != NULL, "nextok_llama_sampler_init_sampling: %s", err.msg);
    return s;
}

static struct nextok_chain *nextok_ref(const struct nextok_sampling_params *sp)
{
    struct nextok_chain *c = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    CHECK_MSG(nextok_chain_init_sampling(&c, sp, &err) == NEXTOK_OK, "%s", err.msg);
    return c;
}

/* A llama.cpp chain of the given samplers (it owns them). */
static struct llama_sampler *lchain(struct llama_sampler *const *s, size_t n)
{
    struct llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf = true;
    struct llama_sampler *c = llama_sampler_chain_init(cp);
    for (size_t i = 0; i < n; i++) llama_sampler_chain_add(c, s[i]);
    return c;
}

/* llama.cpp's own chain for the llama profile's defaults. */
static struct llama_sampler *llama_default_chain(uint32_t seed)
{
    struct llama_sampler *s[] = {llama_sampler_init_top_k(40), llama_sampler_init_top_p(0.95f, 1),
                                 llama_sampler_init_min_p(0.05f, 1), llama_sampler_init_temp(0.8f),
                                 llama_sampler_init_dist(seed)};
    return lchain(s, 5);
}

static int32_t selected_id(const llama_token_data_array *cur)
{
    if (cur->selected < 0 || (size_t)cur->selected >= cur->size) return -1;
    return cur->data[cur->selected].id;
}

/* ---- chi-square --------------------------------------------------------------------- */

/* Homogeneity of two samples of equal size (2 x K table; ids with fewer than
 * 10 draws in both together pooled). */
static struct or_chi2 chi2_two(const long *a, const long *b, int32_t V, long n)
{
    struct or_chi2 r = {0, 0, 1, 0, 0};
    double pa = 0, pb = 0;
    for (int32_t i = 0; i < V; i++) {
        if (a[i] + b[i] < 10) {
            pa += (double)a[i], pb += (double)b[i];
            continue;
        }
        const double e = (a[i] + b[i]) / 2.0; /* equal sample sizes */
        r.stat += ((a[i] - e) * (a[i] - e) + (b[i] - e) * (b[i] - e)) / e;
        r.bins++;
    }
    if (pa + pb > 0) {
        const double e = (pa + pb) / 2.0;
        r.stat += ((pa - e) * (pa - e) + (pb - e) * (pb - e)) / e;
        r.bins++;
    }
    (void)n;
    r.df = r.bins - 1;
    r.p = r.df > 0 ? or_chi2_sf(r.stat, r.df) : 1.0;
    return r;
}

static void check_chi2(const char *name, struct or_chi2 r)
{
    printf("  %-44s bins %4d  chi2 %9.2f  df %4.0f  p %.3g  outside-support %d\n", name, r.bins,
           r.stat, r.df, r.p, r.impossible);
    CHECK_MSG(r.impossible == 0, "%s: %d draws outside the support", name, r.impossible);
    CHECK_MSG(r.bins >= 5, "%s: only %d bins: the test has little power", name, r.bins);
    CHECK_MSG(r.p >= P_FAIL, "%s: chi2 %.2f df %.0f p %.3g < %g", name, r.stat, r.df, r.p, P_FAIL);
}

/* nextok's exact distribution for row (the chain at its current step). */
static long double *exact_dist(struct nextok_chain *c, const float *row, int32_t V)
{
    struct nextok_token_data *out = malloc((size_t)V * sizeof *out);
    long double *e = calloc((size_t)V, sizeof *e);
    size_t n = 0;
    CHECK_OK(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, (size_t)V, &n, NULL));
    for (size_t i = 0; i < n; i++) e[out[i].id] = out[i].p;
    free(out);
    return e;
}

/* =========================================================================== */

/* The interface table as llama.cpp reads it; find; name. */
TEST(interface)
{
    const int32_t V = 1000;
    struct nextok_sampling_params sp = llama_profile(V, 1);
    struct llama_sampler *ad = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    if (!ad) return;
    const struct llama_sampler_i *i = ad->iface;
    /* called by llama.cpp without a NULL check (name, apply, clone) or carrying state */
    CHECK(i->name && i->accept && i->apply && i->reset && i->clone && i->free && i->copy_state);
    /* the backend group must be NULL: the sampler runs on the CPU */
    CHECK(!i->backend_init && !i->backend_accept && !i->backend_apply && !i->backend_set_input &&
          !i->backend_reset);
    CHECK(strcmp(llama_sampler_name(ad), "nextok") == 0);
    CHECK(nextok_llama_sampler_find(ad) == ad);
    CHECK(nextok_llama_sampler_chain(ad) != NULL);
    CHECK_EQ_INT(nextok_chain_n_vocab(nextok_llama_sampler_chain(ad)), V);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_OK);
    CHECK(strcmp(nextok_llama_sampler_errmsg(ad), "") == 0);

    struct llama_sampler *s[] = {llama_sampler_init_top_k(50), ad};
    struct llama_sampler *chain = lchain(s, 2);
    CHECK(nextok_llama_sampler_find(chain) == ad);
    struct llama_sampler *other = llama_sampler_init_greedy();
    CHECK(nextok_llama_sampler_find(other) == NULL);
    CHECK(nextok_llama_sampler_chain(other) == NULL);
    CHECK_EQ_INT(nextok_llama_sampler_status(other), NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_llama_sampler_find(NULL) == NULL);
    struct llama_sampler *cl = llama_sampler_clone(chain); /* a chain's clone holds a clone of ad */
    struct llama_sampler *found = nextok_llama_sampler_find(cl);
    CHECK(found != NULL && found != ad);
    llama_sampler_free(other);
    llama_sampler_free(cl);
    llama_sampler_free(chain);
}

/* Terminal mode at the end of a llama.cpp chain: the token of
 * nextok_chain_sample, step after step, on every input path. */
static void same_tokens(const char *what, struct nextok_sampling_params sp, int32_t V, int path)
{
    enum {
        ROWS = 6,
        STEPS = 120
    };
    float *rows[ROWS];
    for (int r = 0; r < ROWS; r++) rows[r] = row_new(V, 100 + (uint64_t)r);
    struct llama_sampler *ad = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    struct nextok_chain *ref = nextok_ref(&sp);
    if (!ad || !ref) return;
    struct llama_sampler *chain = lchain(&ad, 1);
    llama_token_data *buf = malloc((size_t)V * sizeof *buf);
    struct nextok_token_data *probs = malloc((size_t)V * sizeof *probs);
    int bad = 0, bad_dist = 0;
    for (int s = 0; s < STEPS; s++) {
        const float *row = rows[s % ROWS];
        llama_token_data_array cur = full_array(buf, row, V);
        if (path == 1)
            shuffle(buf, (size_t)V, 7 + (uint64_t)s); /* not llama.cpp's row: plain path */
        llama_sampler_apply(chain, &cur);
        const int32_t got = selected_id(&cur);
        int32_t want = -1;
        size_t n = 0;
        CHECK_OK(nextok_chain_probs(ref, row, NEXTOK_DTYPE_F32, probs, (size_t)V, &n, &want));
        if (got != want && !bad++)
            CHECK_MSG(got == want, "%s: step %d: adapter %d, nextok %d (%s)", what, s, (int)got,
                      (int)want, nextok_llama_sampler_errmsg(ad));
        /* what is left in the array is the distribution the token came from */
        if (!bad_dist)
            bad_dist = same_dist(cur.data, cur.size, probs, n, path == 0 ? 0 : 2e-6, what);
        if (got < 0) break;
        llama_sampler_accept(chain, got);
        CHECK_OK(nextok_chain_accept(ref, got));
    }
    CHECK_EQ_INT(nextok_llama_sampler_n_errors(ad), 0);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(ad)), STEPS);
    printf("  %-44s %d steps, %d wrong tokens, %d wrong distributions\n", what, STEPS, bad,
           bad_dist);
    llama_sampler_free(chain);
    nextok_chain_free(ref);
    free(buf), free(probs);
    for (int r = 0; r < ROWS; r++) free(rows[r]);
}

TEST(terminal_same_tokens)
{
    struct nextok_sampling_params sp = llama_profile(32000, 7);
    sp.repeat_penalty = 1.3f; /* history matters */
    same_tokens("llama profile, V 32000, full row", sp, 32000, 0);
    same_tokens("llama profile, V 32000, shuffled", sp, 32000, 1);
    sp = llama_profile(128256, 8);
    same_tokens("llama profile, V 128256, full row", sp, 128256, 0);
    /* every token survives: the adapter changes to the plain chain after
     * the first call (a sort of 10^5 survivors costs more) */
    sp = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    sp.n_vocab = 50000, sp.seed = 9, sp.temperature = 0.7f;
    same_tokens("vllm profile, temperature only, V 50000", sp, 50000, 0);
    sp = nextok_sampling_default_params(NEXTOK_PROFILE_HF);
    sp.n_vocab = 32000, sp.seed = 10, sp.top_p = 0.9f, sp.selector = NEXTOK_SELECTOR_GUMBEL;
    same_tokens("hf profile, gumbel, V 32000, shuffled", sp, 32000, 1);
}

/* The adapter's draws follow nextok's exact distribution (chi-square). */
TEST(terminal_chi2)
{
    const int32_t V = 4096;
    float *row = row_new(V, 21);
    struct nextok_sampling_params sp = llama_profile(V, 22);
    struct llama_sampler *ad = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    struct nextok_chain *ref = nextok_ref(&sp);
    if (!ad || !ref) return;
    struct llama_sampler *chain = lchain(&ad, 1);
    long double *e = exact_dist(ref, row, V);
    long *count = calloc((size_t)V, sizeof *count);
    llama_token_data *buf = malloc((size_t)V * sizeof *buf);
    int bad = 0;
    for (long s = 0; s < N_DRAWS; s++) {
        nextok_chain_set_step(nextok_llama_sampler_chain(ad), (uint64_t)s);
        llama_token_data_array cur = full_array(buf, row, V);
        llama_sampler_apply(chain, &cur);
        const int32_t t = selected_id(&cur);
        if (t < 0 || t >= V) {
            bad++;
            continue;
        }
        count[t]++;
    }
    CHECK_EQ_INT(bad, 0);
    check_chi2("adapter vs nextok exact (V 4096)", or_chi2_fit(count, e, V, N_DRAWS));
    llama_sampler_free(chain);
    nextok_chain_free(ref);
    free(row), free(e), free(count), free(buf);
}

/* With the llama profile, llama.cpp's own chain (top_k 40, top_p 0.95,
 * min_p 0.05, temp 0.8, dist) keeps the same survivors with the same p,
 * and its draws and the adapter's follow the same distribution. */
TEST(llama_profile_vs_llama_chain)
{
    /* survivors and p on several rows and sizes */
    const int32_t sizes[] = {4096, 32000, 128256};
    int rows_checked = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const int32_t V = sizes[k];
        struct nextok_sampling_params sp = llama_profile(V, 5);
        struct nextok_chain *ref = nextok_ref(&sp);
        struct llama_sampler *lc = llama_default_chain(5);
        llama_token_data *buf = malloc((size_t)V * sizeof *buf);
        struct nextok_token_data *probs = malloc((size_t)V * sizeof *probs);
        for (int r = 0; r < 4 && ref; r++) {
            float *row = row_new(V, 300 + (uint64_t)(10 * k) + (uint64_t)r);
            llama_token_data_array cur = full_array(buf, row, V);
            llama_sampler_apply(lc, &cur);
            size_t n = 0;
            CHECK_OK(nextok_chain_probs(ref, row, NEXTOK_DTYPE_F32, probs, (size_t)V, &n, NULL));
            char what[64];
            snprintf(what, sizeof what, "llama.cpp chain, V %d row %d", (int)V, r);
            /* llama.cpp: expf in float, sums in double; nextok: double */
            same_dist(cur.data, cur.size, probs, n, 1e-5, what);
            rows_checked++;
            free(row);
        }
        llama_sampler_free(lc);
        nextok_chain_free(ref);
        free(buf), free(probs);
    }
    printf("  survivors and p equal to llama.cpp's on %d rows\n", rows_checked);

    /* the draws */
    const int32_t V = 4096;
    float *row = row_new(V, 31);
    struct nextok_sampling_params sp = llama_profile(V, 32);
    struct nextok_chain *ref = nextok_ref(&sp);
    struct llama_sampler *ad = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    struct llama_sampler *lc = llama_default_chain(33);
    if (!ref || !ad) return;
    struct llama_sampler *nc = lchain(&ad, 1);
    long double *e = exact_dist(ref, row, V);
    long *cl = calloc((size_t)V, sizeof *cl), *cn = calloc((size_t)V, sizeof *cn);
    llama_token_data *buf = malloc((size_t)V * sizeof *buf);
    int bad = 0;
    for (long s = 0; s < N_DRAWS; s++) {
        llama_token_data_array cur = full_array(buf, row, V);
        llama_sampler_apply(lc, &cur);
        int32_t t = selected_id(&cur);
        if (t >= 0)
            cl[t]++;
        else
            bad++;
        llama_sampler_accept(lc, t); /* as llama_sampler_sample does */
        cur = full_array(buf, row, V);
        llama_sampler_apply(nc, &cur);
        t = selected_id(&cur);
        if (t >= 0)
            cn[t]++;
        else
            bad++;
        nextok_chain_set_step(nextok_llama_sampler_chain(ad), (uint64_t)s + 1); /* no history */
    }
    CHECK_EQ_INT(bad, 0);
    check_chi2("llama.cpp chain vs nextok exact", or_chi2_fit(cl, e, V, N_DRAWS));
    check_chi2("adapter vs nextok exact", or_chi2_fit(cn, e, V, N_DRAWS));
    check_chi2("adapter vs llama.cpp chain (two samples)", chi2_two(cn, cl, V, N_DRAWS));
    llama_sampler_free(lc);
    llama_sampler_free(nc);
    nextok_chain_free(ref);
    free(row), free(e), free(cl), free(cn), free(buf);
}

/* Greedy: the token llama.cpp's greedy sampler picks (rows without a tie at
 * the top), alone and after llama.cpp's top-k. */
TEST(greedy_same_as_llama)
{
    const int32_t V = 32000;
    struct nextok_sampling_params sp = llama_profile(V, 1);
    sp.temperature = 0.0f; /* greedy */
    struct llama_sampler *ad = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    struct llama_sampler *ad2 = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    if (!ad || !ad2) return;
    struct llama_sampler *s1[] = {llama_sampler_init_top_k(20), ad2};
    struct llama_sampler *after_topk = lchain(s1, 2);
    struct llama_sampler *lg = llama_sampler_init_greedy();
    llama_token_data *buf = malloc((size_t)V * sizeof *buf);
    int bad = 0;
    for (int r = 0; r < 40; r++) {
        float *row = row_new(V, 500 + (uint64_t)r);
        llama_token_data_array cur = full_array(buf, row, V);
        llama_sampler_apply(lg, &cur);
        const int32_t want = selected_id(&cur);
        cur = full_array(buf, row, V);
        llama_sampler_apply(ad, &cur);
        const int32_t got = selected_id(&cur);
        CHECK(cur.size == 1 && cur.data[0].p == 1.0f);
        cur = full_array(buf, row, V);
        llama_sampler_apply(after_topk, &cur);
        const int32_t got2 = selected_id(&cur);
        if ((got != want || got2 != want) && !bad++)
            CHECK_MSG(0, "row %d: llama.cpp greedy %d, adapter %d, after top-k %d", r, (int)want,
                      (int)got, (int)got2);
        free(row);
    }
    CHECK_EQ_INT(bad, 0);
    llama_sampler_free(ad);
    llama_sampler_free(after_topk);
    llama_sampler_free(lg);
    free(buf);
}

/* Filter mode: the survivors and p of nextok_chain_probs, selected -1; then
 * llama.cpp's dist after it samples that distribution. */
TEST(filter_mode)
{
    const int32_t V = 32000;
    struct nextok_sampling_params sp = llama_profile(V, 3);
    struct llama_sampler *f = adapter(&sp, NEXTOK_LLAMA_FILTER);
    /* nextok's own chain without the selector (as filter mode runs it), and
     * with it: the selector's p come from its own kernel, within an ulp */
    struct nextok_chain *ref = nextok_ref(&sp), *ref_sel = nextok_ref(&sp);
    if (!f || !ref || !ref_sel) return;
    CHECK(strcmp(nextok_sampler_name(nextok_chain_get(ref, nextok_chain_n(ref) - 1)), "dist") == 0);
    nextok_sampler_free(nextok_chain_remove(ref, nextok_chain_n(ref) - 1));
    llama_token_data *buf = malloc((size_t)V * sizeof *buf);
    struct nextok_token_data *probs = malloc((size_t)V * sizeof *probs);
    struct nextok_token_data *probs_sel = malloc((size_t)V * sizeof *probs_sel);
    for (int r = 0; r < 6; r++) {
        float *row = row_new(V, 600 + (uint64_t)r);
        size_t n = 0, n_sel = 0;
        CHECK_OK(nextok_chain_probs(ref, row, NEXTOK_DTYPE_F32, probs, (size_t)V, &n, NULL));
        CHECK_OK(
            nextok_chain_probs(ref_sel, row, NEXTOK_DTYPE_F32, probs_sel, (size_t)V, &n_sel, NULL));
        llama_token_data_array cur = full_array(buf, row, V);
        llama_sampler_apply(f, &cur);
        CHECK_EQ_INT(cur.selected, -1);
        same_dist(cur.data, cur.size, probs, n, 0, "filter, full row (exact)");
        same_dist(cur.data, cur.size, probs_sel, n_sel, 1e-6, "filter, full row vs dist's p");
        cur = full_array(buf, row, V);
        shuffle(buf, (size_t)V, 99 + (uint64_t)r);
        llama_sampler_apply(f, &cur);
        CHECK_EQ_INT(cur.selected, -1);
        same_dist(cur.data, cur.size, probs, n, 1e-6, "filter, shuffled");
        free(row);
    }
    free(probs_sel);
    nextok_chain_free(ref_sel);
    CHECK_EQ_INT(nextok_llama_sampler_n_errors(f), 0);

    /* filter + llama.cpp's dist: nextok's distribution, sampled by llama.cpp */
    const int32_t W = 4096;
    float *row = row_new(W, 41);
    struct nextok_sampling_params sw = llama_profile(W, 42);
    struct nextok_chain *rw = nextok_ref(&sw);
    struct llama_sampler *s[] = {adapter(&sw, NEXTOK_LLAMA_FILTER), llama_sampler_init_dist(43)};
    if (!rw || !s[0]) return;
    struct llama_sampler *chain = lchain(s, 2);
    long double *e = exact_dist(rw, row, W);
    long *count = calloc((size_t)W, sizeof *count);
    int bad = 0;
    for (long d = 0; d < N_DRAWS; d++) {
        llama_token_data_array cur = full_array(buf, row, W);
        llama_sampler_apply(chain, &cur);
        const int32_t t = selected_id(&cur);
        if (t >= 0)
            count[t]++;
        else
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    check_chi2("filter + llama.cpp dist vs nextok exact", or_chi2_fit(count, e, W, N_DRAWS));
    llama_sampler_free(chain);
    nextok_chain_free(rw);
    free(row), free(e), free(count);
    llama_sampler_free(f);
    nextok_chain_free(ref);
    free(buf), free(probs);
}

/* Which chains each mode takes; filter mode strips the profile's selector. */
TEST(modes_and_chains)
{
    const int32_t V = 1000;
    struct nextok_error err = {NEXTOK_OK, ""};
    struct nextok_llama_sampler_params lp = nextok_llama_sampler_default_params();
    CHECK_EQ_INT(lp.mode, NEXTOK_LLAMA_TERMINAL);
    CHECK_EQ_INT(lp.on_error, NEXTOK_LLAMA_ON_ERROR_GREEDY);

    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_top_k(&s, 10, NEXTOK_TIES_EXACT, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    /* terminal: top-k last is not a selector */
    CHECK(nextok_llama_sampler_init(c, &lp, &err) == NULL);
    CHECK_EQ_INT(err.status, NEXTOK_ERR_INVALID_ARG);
    CHECK_MSG(strstr(err.msg, "selector") != NULL, "%s", err.msg);
    /* filter: fine; the adapter owns c from here */
    lp.mode = NEXTOK_LLAMA_FILTER;
    struct llama_sampler *f = nextok_llama_sampler_init(c, &lp, &err);
    CHECK(f != NULL);
    CHECK(nextok_llama_sampler_chain(f) == c);
    llama_sampler_free(f);

    /* a chain with a selector: terminal yes, filter no (the caller keeps it) */
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    CHECK_OK(nextok_sampler_init_dist(&s, 1, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    CHECK(nextok_llama_sampler_init(c, &lp, &err) == NULL);
    CHECK_MSG(err.status == NEXTOK_ERR_INVALID_ARG && strstr(err.msg, "dist"), "%s", err.msg);
    lp.mode = NEXTOK_LLAMA_TERMINAL;
    struct llama_sampler *t = nextok_llama_sampler_init(c, NULL, &err);
    CHECK(t != NULL);
    llama_sampler_free(t);

    /* bad arguments */
    CHECK(nextok_llama_sampler_init(NULL, NULL, &err) == NULL);
    CHECK_EQ_INT(err.status, NEXTOK_ERR_INVALID_ARG);
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    CHECK(nextok_llama_sampler_init(c, NULL, &err) == NULL); /* empty */
    CHECK_MSG(strstr(err.msg, "no samplers") != NULL, "%s", err.msg);
    lp.mode = (enum nextok_llama_mode)7;
    CHECK(nextok_llama_sampler_init(c, &lp, NULL) == NULL);
    lp = nextok_llama_sampler_default_params();
    lp.on_error = (enum nextok_llama_on_error)7;
    CHECK(nextok_llama_sampler_init(c, &lp, &err) == NULL);
    CHECK_MSG(strstr(err.msg, "on_error") != NULL, "%s", err.msg);
    nextok_chain_free(c);

    /* from sampling params: errors name the field */
    struct nextok_sampling_params sp = llama_profile(V, 1);
    sp.top_p = 1.5f;
    CHECK(nextok_llama_sampler_init_sampling(&sp, NULL, &err) == NULL);
    CHECK_MSG(err.status == NEXTOK_ERR_INVALID_ARG && strstr(err.msg, "top_p"), "%s", err.msg);
    CHECK(nextok_llama_sampler_init_sampling(NULL, NULL, &err) == NULL);
    sp = llama_profile(V, 1);
    sp.mirostat = 2;
    lp = nextok_llama_sampler_default_params();
    lp.mode = NEXTOK_LLAMA_FILTER;
    CHECK(nextok_llama_sampler_init_sampling(&sp, &lp, &err) == NULL);
    CHECK_MSG(strstr(err.msg, "mirostat") != NULL, "%s", err.msg);
    lp.mode = NEXTOK_LLAMA_TERMINAL;
    t = nextok_llama_sampler_init_sampling(&sp, &lp, &err); /* mirostat terminal: fine */
    CHECK(t != NULL);
    llama_sampler_free(t);
    /* filter mode from params: the selector is gone, the filters stay */
    sp = llama_profile(V, 1);
    lp.mode = NEXTOK_LLAMA_FILTER;
    f = nextok_llama_sampler_init_sampling(&sp, &lp, &err);
    CHECK(f != NULL);
    if (f) {
        struct nextok_chain *fc = nextok_llama_sampler_chain(f);
        const size_t n = nextok_chain_n(fc);
        CHECK(n > 0 && strcmp(nextok_sampler_name(nextok_chain_get(fc, n - 1)), "temp") == 0);
        for (size_t i = 0; i < n; i++) {
            const char *nm = nextok_sampler_name(nextok_chain_get(fc, i));
            CHECK(strcmp(nm, "dist") != 0 && strcmp(nm, "greedy") != 0);
        }
    }
    llama_sampler_free(f);
    /* a greedy filter: temperature 0 keeps the argmax */
    sp.temperature = 0.0f;
    f = nextok_llama_sampler_init_sampling(&sp, &lp, &err);
    CHECK(f != NULL);
    if (f) {
        float *row = row_new(V, 77);
        llama_token_data *buf = malloc((size_t)V * sizeof *buf);
        llama_token_data_array cur = full_array(buf, row, V);
        llama_sampler_apply(f, &cur);
        int32_t am = 0;
        for (int32_t i = 1; i < V; i++)
            if (row[i] > row[am]) am = i;
        CHECK(cur.size == 1 && cur.data[0].id == am && cur.selected == -1);
        free(row), free(buf);
    }
    llama_sampler_free(f);
}

/* ---- state across steps ----------------------------------------------------- */

enum {
    ST_ROWS = 5,
    ST_STEPS = 16,
    ST_CLONE_AT = 7
};

/* Run steps [from, to) of the script on chain (apply + accept, as
 * llama_sampler_sample does), tokens into tok[]. */
static void run_steps(struct llama_sampler *chain, float *const *rows, int32_t V, int from, int to,
                      int32_t *tok)
{
    llama_token_data *buf = malloc((size_t)V * sizeof *buf);
    for (int s = from; s < to; s++) {
        llama_token_data_array cur = full_array(buf, rows[s % ST_ROWS], V);
        llama_sampler_apply(chain, &cur);
        tok[s] = selected_id(&cur);
        llama_sampler_accept(chain, tok[s]);
    }
    free(buf);
}

static struct llama_sampler *state_chain(int32_t V)
{
    struct nextok_sampling_params sp = llama_profile(V, 99);
    sp.repeat_penalty = 1.5f;
    sp.temperature = 1.5f; /* flat enough that the penalties change draws */
    struct llama_sampler *s[] = {llama_sampler_init_top_k(100),
                                 adapter(&sp, NEXTOK_LLAMA_TERMINAL)};
    return s[1] ? lchain(s, 2) : NULL;
}

static int same_tokens_from(const int32_t *a, const int32_t *b, int from, int to)
{
    for (int s = from; s < to; s++)
        if (a[s] != b[s] || a[s] < 0) return 0;
    return 1;
}

/* clone, reset, copy and accept, the way llama-server uses them. */
TEST(clone_reset_copy)
{
    const int32_t V = 32000;
    float *rows[ST_ROWS];
    for (int r = 0; r < ST_ROWS; r++) rows[r] = row_new(V, 700 + (uint64_t)r);
    int32_t t1[ST_STEPS], t2[ST_STEPS], t3[ST_STEPS], t4[ST_STEPS], t5[ST_STEPS], t6[ST_STEPS];
    struct llama_sampler *a = state_chain(V), *fresh = state_chain(V), *dst = state_chain(V);
    if (!a || !fresh || !dst) return;

    run_steps(a, rows, V, 0, ST_CLONE_AT, t1);
    struct llama_sampler *b = llama_sampler_clone(a); /* a llama.cpp chain's clone */
    struct llama_sampler *ad_clone = llama_sampler_clone(nextok_llama_sampler_find(a));
    llama_sampler_copy(a, dst); /* copy_state: dst now continues as a */
    CHECK(b != NULL && ad_clone != NULL);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(nextok_llama_sampler_find(b))),
                 ST_CLONE_AT);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(nextok_llama_sampler_find(dst))),
                 ST_CLONE_AT);
    run_steps(a, rows, V, ST_CLONE_AT, ST_STEPS, t1);
    if (b) {
        memcpy(t2, t1, sizeof t2);
        run_steps(b, rows, V, ST_CLONE_AT, ST_STEPS, t2);
        CHECK_MSG(same_tokens_from(t1, t2, ST_CLONE_AT, ST_STEPS), "the clone drew other tokens");
    }
    memcpy(t3, t1, sizeof t3);
    run_steps(dst, rows, V, ST_CLONE_AT, ST_STEPS, t3);
    CHECK_MSG(same_tokens_from(t1, t3, ST_CLONE_AT, ST_STEPS), "the copy drew other tokens");
    if (ad_clone) { /* the adapter alone, cloned, behind its own top-k */
        struct llama_sampler *s[] = {llama_sampler_init_top_k(100), ad_clone};
        struct llama_sampler *c = lchain(s, 2);
        memcpy(t4, t1, sizeof t4);
        run_steps(c, rows, V, ST_CLONE_AT, ST_STEPS, t4);
        CHECK_MSG(same_tokens_from(t1, t4, ST_CLONE_AT, ST_STEPS),
                  "the adapter's clone drew other tokens");
        llama_sampler_free(c);
    }

    /* reset: step 0, no history: the draws of a new sampler with the seed */
    llama_sampler_reset(a);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(nextok_llama_sampler_find(a))), 0);
    run_steps(a, rows, V, 0, ST_STEPS, t5);
    run_steps(fresh, rows, V, 0, ST_STEPS, t6);
    CHECK_MSG(same_tokens_from(t1, t5, 0, ST_STEPS), "reset: other tokens than the first run");
    CHECK_MSG(same_tokens_from(t1, t6, 0, ST_STEPS),
              "a new sampler: other tokens than the first run");
    /* the run was not trivial: the tokens vary */
    int distinct = 0;
    for (int s = 1; s < ST_STEPS; s++) distinct += t1[s] != t1[0];
    CHECK(distinct > 0);
    printf("  tokens:");
    for (int s = 0; s < ST_STEPS; s++) printf(" %d", (int)t1[s]);
    printf("\n");

    llama_sampler_free(a);
    llama_sampler_free(b);
    llama_sampler_free(fresh);
    llama_sampler_free(dst);
    for (int r = 0; r < ST_ROWS; r++) free(rows[r]);
}

/* accept carries the penalty history: the greedy pick changes once its
 * token is accepted, and back after reset; a clone keeps the history. */
TEST(accept_history)
{
    const int32_t V = 1000;
    float *row = row_new(V, 801);
    int32_t a = 0, b = 1; /* a clear first and second */
    for (int32_t i = 0; i < V; i++) row[i] = (float)(i % 7) * 0.1f;
    row[a = 123] = 10.0f;
    row[b = 456] = 9.0f;
    struct nextok_sampling_params sp = llama_profile(V, 1);
    sp.temperature = 0.0f;    /* greedy */
    sp.repeat_penalty = 5.0f; /* a positive logit is divided by 5 once seen */
    struct llama_sampler *ad = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    if (!ad) return;
    struct llama_sampler *chain = lchain(&ad, 1);
    llama_token_data *buf = malloc((size_t)V * sizeof *buf);
    llama_token_data_array cur = full_array(buf, row, V);
    llama_sampler_apply(chain, &cur);
    CHECK_EQ_INT(selected_id(&cur), a);
    llama_sampler_accept(chain, a);
    cur = full_array(buf, row, V);
    llama_sampler_apply(chain, &cur);
    CHECK_EQ_INT(selected_id(&cur), b); /* 10 / 5 = 2 < 9 */
    struct llama_sampler *cl = llama_sampler_clone(chain);
    cur = full_array(buf, row, V);
    llama_sampler_apply(cl, &cur);
    CHECK_EQ_INT(selected_id(&cur), b);
    llama_sampler_reset(chain);
    cur = full_array(buf, row, V);
    llama_sampler_apply(chain, &cur);
    CHECK_EQ_INT(selected_id(&cur), a);
    /* the same through a sparse array after llama.cpp's top-k */
    struct llama_sampler *ad2 = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    struct llama_sampler *s[] = {llama_sampler_init_top_k(5), ad2};
    struct llama_sampler *c2 = lchain(s, 2);
    llama_sampler_accept(c2, a);
    cur = full_array(buf, row, V);
    llama_sampler_apply(c2, &cur);
    CHECK_EQ_INT(selected_id(&cur), b);
    llama_sampler_free(c2);
    llama_sampler_free(cl);
    llama_sampler_free(chain);
    free(buf), free(row);
}

/* ---- arrays llama.cpp hands over --------------------------------------------- */

/* After llama.cpp's own top-k: the adapter's token is nextok's on the same
 * sparse set (nextok_chain_apply on a copy), and equal to nextok_chain_sample
 * on the row with every other token masked (-inf). */
TEST(sparse_after_llama_top_k)
{
    const int32_t V = 32000;
    struct nextok_sampling_params sp = llama_profile(V, 11);
    sp.top_k = 20; /* inside llama.cpp's 50 */
    struct llama_sampler *s[] = {llama_sampler_init_top_k(50), adapter(&sp, NEXTOK_LLAMA_TERMINAL)};
    struct nextok_chain *ref = nextok_ref(&sp), *ref2 = nextok_ref(&sp);
    if (!s[1] || !ref || !ref2) return;
    struct llama_sampler *chain = lchain(s, 2);
    struct llama_sampler *topk = llama_sampler_init_top_k(50);
    llama_token_data *buf = malloc((size_t)V * sizeof *buf), *set = malloc((size_t)V * sizeof *set);
    float *masked = malloc((size_t)V * sizeof *masked);
    int bad = 0, sorted_in = 0;
    for (int st = 0; st < 100; st++) {
        float *row = row_new(V, 900 + (uint64_t)(st % 9));
        /* the set llama.cpp's top-k leaves */
        llama_token_data_array sub = full_array(set, row, V);
        llama_sampler_apply(topk, &sub);
        sorted_in += sub.sorted;
        for (int32_t i = 0; i < V; i++) masked[i] = -INFINITY;
        for (size_t i = 0; i < sub.size; i++) masked[sub.data[i].id] = sub.data[i].logit;
        struct nextok_token_data_array nsub = {(struct nextok_token_data *)sub.data, sub.size, -1,
                                               false};
        CHECK_OK(nextok_chain_apply(ref, &nsub)); /* (overwrites sub.data) */
        const int32_t want = nsub.data[nsub.selected].id;
        int32_t want2 = -1;
        CHECK_OK(nextok_chain_sample(ref2, masked, NEXTOK_DTYPE_F32, &want2));
        /* the adapter behind llama.cpp's top-k */
        llama_token_data_array cur = full_array(buf, row, V);
        llama_sampler_apply(chain, &cur);
        const int32_t got = selected_id(&cur);
        if ((got != want || got != want2) && !bad++)
            CHECK_MSG(0, "step %d: adapter %d, nextok on the set %d, on the masked row %d", st,
                      (int)got, (int)want, (int)want2);
        if (got < 0) break;
        llama_sampler_accept(chain, got);
        CHECK_OK(nextok_chain_accept(ref, got));
        CHECK_OK(nextok_chain_accept(ref2, got));
        free(row);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(nextok_llama_sampler_n_errors(s[1]), 0);
    printf("  100 steps behind llama.cpp top-k 50 (it set sorted %d times)\n", sorted_in);
    llama_sampler_free(chain);
    llama_sampler_free(topk);
    nextok_chain_free(ref);
    nextok_chain_free(ref2);
    free(buf), free(set), free(masked);
}

/* A shuffled sparse array (sorted = false): nextok's result on the same array. */
TEST(sparse_shuffled)
{
    const int32_t V = 50000;
    float *row = row_new(V, 1001);
    struct nextok_sampling_params sp = llama_profile(V, 12);
    struct llama_sampler *ad = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    struct nextok_chain *ref = nextok_ref(&sp);
    if (!ad || !ref) return;
    const size_t n = 700;
    llama_token_data *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    struct tu_gen g = {5};
    int bad = 0;
    for (int st = 0; st < 50; st++) {
        /* n distinct ids: a random stride through the vocabulary */
        const int32_t start = tu_int(&g, V), stride = 1 + 2 * tu_int(&g, 30);
        for (size_t i = 0; i < n; i++) {
            const int32_t id = (int32_t)(((int64_t)start + (int64_t)i * stride) % V);
            a[i] = (llama_token_data){id, row[id], 0.0f};
        }
        shuffle(a, n, 31 + (uint64_t)st);
        memcpy(b, a, n * sizeof *a);
        llama_token_data_array cur = {a, n, -1, false};
        llama_sampler_apply(ad, &cur);
        struct nextok_token_data_array nb = {(struct nextok_token_data *)b, n, -1, false};
        CHECK_OK(nextok_chain_apply(ref, &nb));
        if ((selected_id(&cur) != nb.data[nb.selected].id || cur.size != nb.size) && !bad++)
            CHECK_MSG(0, "step %d: adapter %d (%zu left), nextok %d (%zu left)", st,
                      (int)selected_id(&cur), cur.size, (int)nb.data[nb.selected].id, nb.size);
        llama_sampler_accept(ad, selected_id(&cur));
        CHECK_OK(nextok_chain_accept(ref, nb.data[nb.selected].id));
    }
    CHECK_EQ_INT(bad, 0);
    llama_sampler_free(ad);
    nextok_chain_free(ref);
    free(a), free(b), free(row);
}

/* sorted = true as llama.cpp means it (logits descending) with ties out of
 * id order: the adapter must not pass that `sorted` to nextok, whose top-k
 * would then keep the first k of the tie instead of the lowest ids. */
TEST(sorted_ties_not_by_id)
{
    const int32_t V = 1000;
    /* 6 ids tied at 5.0 in descending id order, then lower logits */
    llama_token_data a[30];
    size_t n = 0;
    const int32_t tied[] = {900, 700, 500, 300, 200, 100};
    for (size_t i = 0; i < 6; i++) a[n++] = (llama_token_data){tied[i], 5.0f, 0.0f};
    for (int32_t i = 0; i < 24; i++)
        a[n++] = (llama_token_data){10 + i, 4.0f - 0.1f * (float)i, 0.0f};
    llama_token_data a0[30], b[30];
    memcpy(a0, a, sizeof a);
    memcpy(b, a, sizeof a);

    struct nextok_sampling_params sp = llama_profile(V, 1);
    sp.top_k = 3, sp.top_p = 1.0f, sp.min_p = 0.0f,
    sp.temperature = 1.0f; /* top-k (exact ties) alone */
    struct llama_sampler *f = adapter(&sp, NEXTOK_LLAMA_FILTER);
    if (!f) return;
    llama_token_data_array cur = {a, n, -1, true}; /* llama.cpp's sorted */
    llama_sampler_apply(f, &cur);
    CHECK_EQ_INT(nextok_llama_sampler_status(f), NEXTOK_OK);
    CHECK_EQ_INT(cur.size, 3);
    qsort(cur.data, cur.size, sizeof *cur.data, cmp_id);
    CHECK(cur.size == 3 && cur.data[0].id == 100 && cur.data[1].id == 200 && cur.data[2].id == 300);
    for (size_t i = 0; i < cur.size; i++) CHECK_NEAR(cur.data[i].p, 1.0 / 3, 1e-7);

    /* the same set with sorted = false gives the same; and terminal mode
     * draws only from the three lowest ids */
    llama_token_data_array cur2 = {b, n, -1, false};
    llama_sampler_apply(f, &cur2);
    qsort(cur2.data, cur2.size, sizeof *cur2.data, cmp_id);
    CHECK(cur2.size == 3 && cur2.data[0].id == 100 && cur2.data[2].id == 300);
    struct llama_sampler *t = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    int outside = 0;
    for (int st = 0; st < 200 && t; st++) {
        llama_token_data c[30];
        memcpy(c, a0, sizeof c); /* the tie in descending id order, sorted = true */
        llama_token_data_array cc = {c, n, -1, true};
        nextok_chain_set_step(nextok_llama_sampler_chain(t), (uint64_t)st);
        llama_sampler_apply(t, &cc);
        const int32_t id = selected_id(&cc);
        outside += !(id == 100 || id == 200 || id == 300);
    }
    CHECK_EQ_INT(outside, 0);

    /* realistic: quantised logits (many ties) through llama.cpp's top-k,
     * which sets sorted with ties in whatever order its sort left them */
    const int32_t W = 32000;
    float *row = row_new(W, 1201);
    for (int32_t i = 0; i < W; i++) row[i] = floorf(row[i] * 2.0f) / 2.0f;
    struct nextok_sampling_params sq = llama_profile(W, 2);
    sq.top_k = 30, sq.top_p = 1.0f, sq.min_p = 0.0f;
    struct llama_sampler *fq = adapter(&sq, NEXTOK_LLAMA_FILTER);
    struct nextok_chain *ref = nextok_ref(&sq);
    struct llama_sampler *topk = llama_sampler_init_top_k(200);
    llama_token_data *buf = malloc((size_t)W * sizeof *buf), *cp = malloc(200 * sizeof *cp);
    if (fq && ref) {
        llama_token_data_array q = full_array(buf, row, W);
        llama_sampler_apply(topk, &q);
        CHECK(q.sorted && q.size == 200);
        memcpy(cp, q.data, q.size * sizeof *cp);
        const size_t nq = q.size;
        llama_sampler_apply(fq, &q);
        /* nextok on the same set with sorted = false: the truth */
        struct nextok_token_data_array nq2 = {(struct nextok_token_data *)cp, nq, -1, false};
        CHECK_OK(nextok_chain_apply(ref, &nq2));
        struct nextok_token_data *want = (struct nextok_token_data *)cp;
        double m = -INFINITY, z = 0; /* p: the softmax of the survivors */
        for (size_t i = 0; i < nq2.size; i++) m = fmax(m, want[i].logit);
        for (size_t i = 0; i < nq2.size; i++) z += exp((double)want[i].logit - m);
        for (size_t i = 0; i < nq2.size; i++)
            want[i].p = (float)(exp((double)want[i].logit - m) / z);
        same_dist(q.data, q.size, want, nq2.size, 2e-6, "quantised row after llama.cpp top-k");
    }
    llama_sampler_free(fq);
    llama_sampler_free(topk);
    llama_sampler_free(t);
    llama_sampler_free(f);
    nextok_chain_free(ref);
    free(buf), free(cp), free(row);
}

/* ---- errors ------------------------------------------------------------------- */

static int same_bytes(const llama_token_data_array *a, const llama_token_data *copy, size_t n,
                      bool sorted)
{
    return a->size == n && a->sorted == sorted && memcmp(a->data, copy, n * sizeof *copy) == 0;
}

/* NaN logits: the array unchanged, the documented `selected`, the message
 * readable, no state change; later calls work; the error is sticky. */
static void nan_case(const char *what, int shuffled, enum nextok_llama_mode mode,
                     enum nextok_llama_on_error on_err)
{
    const int32_t V = 2000;
    float *row = row_new(V, 1301);
    row[777] = NAN;
    int32_t am = 0;
    for (int32_t i = 1; i < V; i++)
        if (!isnan(row[i]) && row[i] > row[am]) am = i;
    struct nextok_sampling_params sp = llama_profile(V, 1);
    struct nextok_llama_sampler_params lp = nextok_llama_sampler_default_params();
    lp.mode = mode, lp.on_error = on_err;
    struct llama_sampler *ad = nextok_llama_sampler_init_sampling(&sp, &lp, NULL);
    CHECK(ad != NULL);
    if (!ad) return;
    llama_token_data *buf = malloc((size_t)V * sizeof *buf),
                     *copy = malloc((size_t)V * sizeof *copy);
    llama_token_data_array cur = full_array(buf, row, V);
    if (shuffled) shuffle(buf, (size_t)V, 3);
    for (int32_t i = 0; i < V; i++) buf[i].p = 0.25f; /* stale p from an earlier stage */
    memcpy(copy, buf, (size_t)V * sizeof *copy);
    llama_sampler_apply(ad, &cur);
    CHECK_MSG(same_bytes(&cur, copy, (size_t)V, false), "%s: the array changed", what);
    int64_t want = -1;
    if (mode == NEXTOK_LLAMA_TERMINAL && on_err == NEXTOK_LLAMA_ON_ERROR_GREEDY)
        for (int32_t i = 0; i < V; i++)
            if (buf[i].id == am) want = i;
    CHECK_MSG(cur.selected == want, "%s: selected %lld, want %lld", what, (long long)cur.selected,
              (long long)want);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_ERR_NAN);
    CHECK_MSG(strstr(nextok_llama_sampler_errmsg(ad), "NaN") != NULL, "%s: message '%s'", what,
              nextok_llama_sampler_errmsg(ad));
    CHECK_EQ_INT(nextok_llama_sampler_n_errors(ad), 1);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(ad)), 0);
    /* a good row works; the failure stays recorded until cleared */
    row[777] = 0.0f;
    cur = full_array(buf, row, V);
    llama_sampler_apply(ad, &cur);
    if (mode == NEXTOK_LLAMA_TERMINAL)
        CHECK(selected_id(&cur) >= 0);
    else
        CHECK(cur.size > 0 && cur.selected == -1);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_ERR_NAN);
    nextok_llama_sampler_clear_error(ad);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_OK);
    CHECK(strcmp(nextok_llama_sampler_errmsg(ad), "") == 0);
    CHECK_EQ_INT(nextok_llama_sampler_n_errors(ad), 1);
    llama_sampler_free(ad);
    free(buf), free(copy), free(row);
}

TEST(errors_nan)
{
    nan_case("terminal, greedy fallback, full row", 0, NEXTOK_LLAMA_TERMINAL,
             NEXTOK_LLAMA_ON_ERROR_GREEDY);
    nan_case("terminal, greedy fallback, shuffled", 1, NEXTOK_LLAMA_TERMINAL,
             NEXTOK_LLAMA_ON_ERROR_GREEDY);
    nan_case("terminal, no fallback", 0, NEXTOK_LLAMA_TERMINAL, NEXTOK_LLAMA_ON_ERROR_NONE);
    nan_case("filter, full row", 0, NEXTOK_LLAMA_FILTER, NEXTOK_LLAMA_ON_ERROR_GREEDY);
    nan_case("filter, shuffled", 1, NEXTOK_LLAMA_FILTER, NEXTOK_LLAMA_ON_ERROR_GREEDY);
}

TEST(errors_other)
{
    const int32_t V = 100;
    struct nextok_sampling_params sp = llama_profile(V, 1);
    struct llama_sampler *ad = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    if (!ad) return;
    llama_token_data d[4], copy[4];

    /* an id outside [0, n_vocab) */
    d[0] = (llama_token_data){5, 1.0f, 0}, d[1] = (llama_token_data){100, 2.0f, 0};
    d[2] = (llama_token_data){7, 3.0f, 0};
    memcpy(copy, d, sizeof d);
    llama_token_data_array cur = {d, 3, -1, false};
    llama_sampler_apply(ad, &cur);
    CHECK(same_bytes(&cur, copy, 3, false));
    CHECK_EQ_INT(cur.selected, 2); /* the fallback: highest logit */
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_ERR_TOKEN_RANGE);
    CHECK_MSG(strstr(nextok_llama_sampler_errmsg(ad), "100") != NULL, "%s",
              nextok_llama_sampler_errmsg(ad));

    /* everything masked (-inf, as llama.cpp's grammar masks) */
    nextok_llama_sampler_clear_error(ad);
    for (int i = 0; i < 4; i++) d[i] = (llama_token_data){i, -INFINITY, 0};
    cur = (llama_token_data_array){d, 4, -1, false};
    llama_sampler_apply(ad, &cur);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_ERR_NO_CANDIDATES);
    CHECK_EQ_INT(cur.selected, 0);
    CHECK_EQ_INT(cur.size, 4);
    /* all NaN: index 0; empty: -1 */
    for (int i = 0; i < 4; i++) d[i].logit = NAN;
    llama_sampler_apply(ad, &cur);
    CHECK_EQ_INT(cur.selected, 0);
    cur = (llama_token_data_array){d, 0, -1, false};
    llama_sampler_apply(ad, &cur);
    CHECK_EQ_INT(cur.selected, -1);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_ERR_NO_CANDIDATES);
    CHECK_EQ_INT(nextok_llama_sampler_n_errors(ad), 4);

    /* -inf candidates (a grammar's) are removed, not an error */
    nextok_llama_sampler_clear_error(ad);
    for (int i = 0; i < 4; i++) d[i] = (llama_token_data){10 + i, i < 2 ? -INFINITY : 1.0f, 0};
    cur = (llama_token_data_array){d, 4, -1, false};
    llama_sampler_apply(ad, &cur);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_OK);
    CHECK(selected_id(&cur) == 12 || selected_id(&cur) == 13);

    /* accept of an id outside the vocabulary: recorded, the step stays */
    const uint64_t step = nextok_chain_step(nextok_llama_sampler_chain(ad));
    llama_sampler_accept(ad, LLAMA_TOKEN_NULL);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_ERR_TOKEN_RANGE);
    CHECK_MSG(strncmp(nextok_llama_sampler_errmsg(ad), "accept:", 7) == 0, "%s",
              nextok_llama_sampler_errmsg(ad));
    llama_sampler_accept(ad, V);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(ad)), step);
    llama_sampler_accept(ad, 3);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(ad)), step + 1);

    /* reset forgets the failures */
    llama_sampler_reset(ad);
    CHECK_EQ_INT(nextok_llama_sampler_status(ad), NEXTOK_OK);
    CHECK_EQ_INT(nextok_llama_sampler_n_errors(ad), 0);

    /* NaN as -inf when the params say so */
    sp.nan_policy = NEXTOK_NAN_AS_NEG_INF;
    struct llama_sampler *lenient = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    for (int i = 0; i < 4; i++) d[i] = (llama_token_data){20 + i, i == 0 ? NAN : 1.0f, 0};
    cur = (llama_token_data_array){d, 4, -1, false};
    llama_sampler_apply(lenient, &cur);
    CHECK_EQ_INT(nextok_llama_sampler_status(lenient), NEXTOK_OK);
    CHECK(selected_id(&cur) >= 21);
    llama_sampler_free(lenient);
    llama_sampler_free(ad);
}

/* ---- llama.cpp's real decode loop (a tiny random model) ---------------------- */

static void quiet_log(enum ggml_log_level level, const char *text, void *user)
{
    (void)level, (void)text, (void)user;
}

struct tiny {
    char path[256];
    struct llama_model *model;
    struct llama_context *ctx;
    int32_t n_vocab;
};

static int tiny_open(struct tiny *t, int32_t nan_token)
{
    char vocab[1024];
    fixture_path(vocab, sizeof vocab, "vocab/gguf/ggml-vocab-gpt-2.gguf");
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(t->path, sizeof t->path, "%s/nextok-tiny-model-XXXXXX", dir);
    const int fd = mkstemp(t->path);
    CHECK_MSG(fd >= 0, "mkstemp %s", t->path);
    if (fd < 0) return -1;
    close(fd);
    CHECK_MSG(tiny_model_write(vocab, t->path, 12345, nan_token) == 0, "writing %s", t->path);
    struct llama_model_params mp = llama_model_default_params();
    t->model = llama_model_load_from_file(t->path, mp);
    CHECK_MSG(t->model != NULL, "llama_model_load_from_file(%s) failed", t->path);
    unlink(t->path);
    if (!t->model) return -1;
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 128, cp.n_batch = 128, cp.n_ubatch = 128, cp.n_threads = 1, cp.n_threads_batch = 1;
    cp.no_perf = true;
    t->ctx = llama_init_from_model(t->model, cp);
    CHECK(t->ctx != NULL);
    t->n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(t->model));
    return t->ctx ? 0 : -1;
}

static void tiny_close(struct tiny *t)
{
    llama_free(t->ctx);
    llama_model_free(t->model);
}

static int decode(struct tiny *t, llama_token tok)
{
    struct llama_batch b = llama_batch_get_one(&tok, 1);
    const int rc = llama_decode(t->ctx, b);
    CHECK_MSG(rc == 0, "llama_decode: %d", rc);
    return rc;
}

/* llama_sampler_sample with the adapter, nextok_llama_sampler_sample, and
 * nextok_chain_sample on the context's logits: one token, 60 steps. */
TEST(real_decode_loop)
{
    struct tiny t = {0};
    if (tiny_open(&t, -1) != 0) return;
    CHECK_EQ_INT(t.n_vocab, 50257);
    struct nextok_sampling_params sp = llama_profile(t.n_vocab, 5);
    sp.repeat_penalty = 1.2f;
    sp.temperature = 1.5f;
    struct llama_sampler *a = adapter(&sp, NEXTOK_LLAMA_TERMINAL),
                         *b = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    struct nextok_chain *ref = nextok_ref(&sp);
    /* llama.cpp's top-k before the adapter: nextok_llama_sampler_sample
     * takes llama_sampler_sample's way, equal to nextok on the sparse set */
    struct nextok_sampling_params sk = sp;
    sk.top_k = 20;
    struct llama_sampler *k1[] = {llama_sampler_init_top_k(60),
                                  adapter(&sk, NEXTOK_LLAMA_TERMINAL)};
    struct llama_sampler *k2[] = {llama_sampler_init_top_k(60),
                                  adapter(&sk, NEXTOK_LLAMA_TERMINAL)};
    /* filter mode, then llama.cpp's dist */
    struct llama_sampler *f[] = {adapter(&sp, NEXTOK_LLAMA_FILTER), llama_sampler_init_dist(6)};
    if (!a || !b || !ref || !k1[1] || !k2[1] || !f[0]) return;
    struct llama_sampler *ca = lchain(&a, 1), *cb = lchain(&b, 1);
    struct llama_sampler *ck1 = lchain(k1, 2), *ck2 = lchain(k2, 2), *cf = lchain(f, 2);
    llama_token tok = 464;
    int bad = 0, distinct = 0, bad_k = 0, bad_f = 0;
    llama_token first = -1;
    for (int s = 0; s < 60; s++) {
        if (decode(&t, tok) != 0) break;
        const llama_token ta = llama_sampler_sample(ca, t.ctx, -1);
        const llama_token tb = nextok_llama_sampler_sample(cb, t.ctx, -1);
        llama_token tr = -1;
        CHECK_OK(nextok_chain_sample(ref, llama_get_logits_ith(t.ctx, -1), NEXTOK_DTYPE_F32, &tr));
        CHECK_OK(nextok_chain_accept(ref, tr));
        if ((ta != tr || tb != tr) && !bad++)
            CHECK_MSG(0,
                      "step %d: llama_sampler_sample %d, nextok_llama_sampler_sample %d, nextok %d",
                      s, (int)ta, (int)tb, (int)tr);
        const llama_token tk1 = llama_sampler_sample(ck1, t.ctx, -1);
        const llama_token tk2 = nextok_llama_sampler_sample(ck2, t.ctx, -1);
        bad_k += tk1 != tk2 || tk1 < 0;
        const llama_token tf = nextok_llama_sampler_sample(cf, t.ctx, -1); /* llama.cpp's way */
        bad_f += tf < 0 || tf >= t.n_vocab;
        if (first < 0) first = ta;
        distinct += ta != first;
        tok = ta;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(bad_k, 0);
    CHECK_EQ_INT(bad_f, 0);
    CHECK(distinct > 0);
    CHECK_EQ_INT(nextok_llama_sampler_n_errors(a) + nextok_llama_sampler_n_errors(b), 0);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(a)), 60);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(b)), 60);
    printf(
        "  60 decode steps: llama_sampler_sample, nextok_llama_sampler_sample and nextok agree\n");
    llama_sampler_free(ca), llama_sampler_free(cb), llama_sampler_free(ck1),
        llama_sampler_free(ck2);
    llama_sampler_free(cf);
    nextok_chain_free(ref);
    tiny_close(&t);
}

/* A model whose logit for one token is NaN: llama_sampler_sample with the
 * adapter goes on with the fallback token (no abort), the failure is
 * readable; nextok_llama_sampler_sample the same, or LLAMA_TOKEN_NULL. */
TEST(real_nan_logits)
{
    struct tiny t = {0};
    if (tiny_open(&t, 777) != 0) return;
    if (decode(&t, 464) != 0) return;
    const float *row = llama_get_logits_ith(t.ctx, -1);
    CHECK(isnan(row[777]));
    llama_token am = 0;
    for (llama_token i = 1; i < t.n_vocab; i++)
        if (!isnan(row[i]) && (isnan(row[am]) || row[i] > row[am])) am = i;
    struct nextok_sampling_params sp = llama_profile(t.n_vocab, 5);
    struct llama_sampler *a = adapter(&sp, NEXTOK_LLAMA_TERMINAL),
                         *b = adapter(&sp, NEXTOK_LLAMA_TERMINAL);
    struct nextok_llama_sampler_params lp = nextok_llama_sampler_default_params();
    lp.on_error = NEXTOK_LLAMA_ON_ERROR_NONE;
    struct llama_sampler *n = nextok_llama_sampler_init_sampling(&sp, &lp, NULL);
    if (!a || !b || !n) return;
    struct llama_sampler *ca = lchain(&a, 1);
    CHECK_EQ_INT(llama_sampler_sample(ca, t.ctx, -1), am);
    CHECK_EQ_INT(nextok_llama_sampler_status(a), NEXTOK_ERR_NAN);
    CHECK_MSG(strstr(nextok_llama_sampler_errmsg(a), "NaN") != NULL, "%s",
              nextok_llama_sampler_errmsg(a));
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(a)), 1); /* llama.cpp accepted it */
    CHECK_EQ_INT(nextok_llama_sampler_sample(b, t.ctx, -1), am);
    CHECK_EQ_INT(nextok_llama_sampler_status(b), NEXTOK_ERR_NAN);
    CHECK_EQ_INT(nextok_llama_sampler_sample(n, t.ctx, -1), LLAMA_TOKEN_NULL);
    CHECK_EQ_INT(nextok_llama_sampler_status(n), NEXTOK_ERR_NAN);
    CHECK_EQ_INT(nextok_chain_step(nextok_llama_sampler_chain(n)), 0); /* nothing accepted */
    /* the same through a llama.cpp chain holding only it: this also shows
     * that nextok_llama_sampler_sample ran nextok on the row itself, since
     * llama_sampler_sample would abort on selected = -1 */
    struct llama_sampler *n2 = nextok_llama_sampler_init_sampling(&sp, &lp, NULL);
    struct llama_sampler *cn = n2 ? lchain(&n2, 1) : NULL;
    if (cn) CHECK_EQ_INT(nextok_llama_sampler_sample(cn, t.ctx, -1), LLAMA_TOKEN_NULL);
    CHECK_EQ_INT(nextok_llama_sampler_status(n2), NEXTOK_ERR_NAN);
    llama_sampler_free(cn);
    printf("  NaN logit: fallback token %d, message \"%s\"\n", (int)am,
           nextok_llama_sampler_errmsg(a));
    llama_sampler_free(ca), llama_sampler_free(b), llama_sampler_free(n);
    tiny_close(&t);
}

int main(void)
{
    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    printf("llama.cpp: %s\n", llama_print_system_info());
    RUN(interface);
    RUN(modes_and_chains);
    RUN(terminal_same_tokens);
    RUN(terminal_chi2);
    RUN(llama_profile_vs_llama_chain);
    RUN(greedy_same_as_llama);
    RUN(filter_mode);
    RUN(clone_reset_copy);
    RUN(accept_history);
    RUN(sparse_after_llama_top_k);
    RUN(sparse_shuffled);
    RUN(sorted_ties_not_by_id);
    RUN(errors_nan);
    RUN(errors_other);
    RUN(real_decode_loop);
    RUN(real_nan_logits);
    llama_backend_free();
    return harness_done();
}
