/*
 * A grammar in a chain: the constrained chain draws from the unconstrained
 * distribution renormalised over the tokens the grammar allows (Pearson's
 * chi-square on 4 * 10^4 draws at steps 0..N-1, each an independent draw),
 * through the plain chain, the fused path, a top-k after the mask, batches
 * on the thread pool and llama.cpp's check-first shortcut; the chain's
 * accept, clone and reset carry the matcher; a session ends with
 * NEXTOK_FINISH_GRAMMAR when the grammar is complete.
 *
 * False alarms: a configuration fails when P(chi2 >= observed) < 1e-6; with
 * the six here a correct library fails a run with probability about 6e-6.
 * Seeds are fixed, so a failure repeats.
 */
#include "harness.h"
#include "nextok.h"
#include "oracle.h"

#include <stdlib.h>

#define N_DRAWS 40000
#define P_FAIL  1e-6

static const char grammar_src[] = "root ::= (\"yes\" | \"no\" | \"maybe\" | [0-9] [0-9]?) \".\"\n";

struct fixture {
    struct nextok_vocab *v;
    struct nextok_grammar *g;
    struct nextok_token_table *tt;
    struct nextok_compiled_grammar *cg;
    int32_t V;
    float *row;
    bool *allowed; /* the grammar's first step, from a matcher */
};

static void fixture_init(struct fixture *f)
{
    char path[1024];
    struct nextok_error err;
    memset(f, 0, sizeof *f);
    CHECK_OK(nextok_vocab_load_file(
        &f->v, fixture_path(path, sizeof path, "vocab/hf/gpt2/tokenizer.json"), &err));
    CHECK_OK(nextok_grammar_init_gbnf(&f->g, grammar_src, strlen(grammar_src), NULL, &err));
    CHECK_OK(nextok_token_table_init(&f->tt, f->v, NULL, &err));
    CHECK_OK(nextok_compiled_grammar_init(&f->cg, f->g, f->tt, NULL, &err));
    f->V = nextok_vocab_n_tokens(f->v);
    /* 1.5 * normal, and the allowed tokens lifted so that several carry mass */
    struct nextok_matcher *m = NULL;
    CHECK_OK(nextok_matcher_init(&m, f->cg, &err));
    int32_t *w = calloc(NEXTOK_BITMASK_WORDS(f->V), sizeof *w);
    size_t n = 0;
    CHECK_OK(nextok_matcher_fill_bitmask(m, w, NEXTOK_BITMASK_WORDS(f->V), &n, &err));
    nextok_matcher_free(m);
    f->allowed = calloc((size_t)f->V, sizeof *f->allowed);
    f->row = malloc((size_t)f->V * sizeof *f->row);
    struct tu_gen gen = {7};
    for (int32_t i = 0; i < f->V; i++) {
        f->allowed[i] = (w[i >> 5] >> (i & 31)) & 1;
        f->row[i] = (float)(1.5 * tu_norm(&gen) + (f->allowed[i] ? 4.0 : 0.0));
    }
    CHECK(n >= 15 && n <= 200);
    printf("  %zu tokens allowed at the first step\n", n);
    free(w);
}

static void fixture_free(struct fixture *f)
{
    free(f->row);
    free(f->allowed);
    nextok_compiled_grammar_free(f->cg);
    nextok_token_table_free(f->tt);
    nextok_grammar_free(f->g);
    nextok_vocab_free(f->v);
}

/* softmax(row / t) over the allowed ids among the k largest allowed logits
 * (k = 0: all of them); ties do not occur with these rows. */
static long double *expected(const struct fixture *f, float t, int k)
{
    long double *e = calloc((size_t)f->V, sizeof *e), z = 0;
    for (int32_t i = 0; i < f->V; i++) {
        if (!f->allowed[i]) continue;
        int above = 0;
        for (int32_t j = 0; j < f->V && k; j++) above += f->allowed[j] && f->row[j] > f->row[i];
        if (k && above >= k) continue;
        e[i] = expl((long double)f->row[i] / t);
        z += e[i];
    }
    for (int32_t i = 0; i < f->V; i++) e[i] /= z;
    return e;
}

static void check_counts(const char *name, const long *count, const long double *e, int32_t V)
{
    struct or_chi2 r = or_chi2_fit(count, e, V, N_DRAWS);
    printf("  %-30s bins %3d  p %.3g  outside the grammar %d\n", name, r.bins, r.p, r.impossible);
    CHECK_MSG(r.impossible == 0, "%s: %d draws the grammar forbids", name, r.impossible);
    CHECK_MSG(r.bins >= 5, "%s: %d bins", name, r.bins);
    CHECK_MSG(r.p >= P_FAIL, "%s: p %.3g", name, r.p);
}

/* A chain: [grammar] [top-k k] temp t, dist. */
static struct nextok_chain *chain(const struct fixture *f, float t, int k, bool no_fused,
                                  bool check_first)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = f->V;
    cp.no_fused = no_fused;
    struct nextok_chain *c = NULL;
    struct nextok_sampler *s = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_chain_init(&c, &cp, &err));
    if (check_first) {
        struct nextok_matcher *m = NULL;
        struct nextok_mask_source src;
        CHECK_OK(nextok_sampler_init_token_bitmask(&s, f->V, &err));
        CHECK_OK(nextok_matcher_init(&m, f->cg, &err));
        nextok_matcher_mask_source(m, &src);
        src.check_first = true;
        CHECK_OK(nextok_sampler_set_mask_source(s, &src));
    } else {
        CHECK_OK(nextok_sampler_init_grammar(&s, f->cg, f->V, &err));
    }
    CHECK_OK(nextok_chain_add(c, s));
    if (k) {
        CHECK_OK(nextok_sampler_init_top_k(&s, k, NEXTOK_TIES_KEEP, &err));
        CHECK_OK(nextok_chain_add(c, s));
    }
    CHECK_OK(nextok_sampler_init_temp(&s, t, &err));
    CHECK_OK(nextok_chain_add(c, s));
    CHECK_OK(nextok_sampler_init_dist(&s, 1234, &err));
    CHECK_OK(nextok_chain_add(c, s));
    return c;
}

static void draws(const struct fixture *f, const char *name, float t, int k, bool no_fused,
                  bool check_first)
{
    struct nextok_chain *c = chain(f, t, k, no_fused, check_first);
    long *count = calloc((size_t)f->V, sizeof *count);
    int bad = 0;
    bool fused = false;
    for (long s = 0; s < N_DRAWS; s++) {
        int32_t tok = -1;
        nextok_chain_set_step(c, (uint64_t)s);
        nextok_status rc = nextok_chain_sample(c, f->row, NEXTOK_DTYPE_F32, &tok);
        fused |= nextok_chain_last_fused(c);
        if (rc != NEXTOK_OK || tok < 0 || tok >= f->V) {
            if (!bad++) CHECK_MSG(0, "%s: %s", name, nextok_chain_errmsg(c));
            continue;
        }
        count[tok]++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_MSG(fused == !no_fused, "%s: fused path %s", name, fused ? "taken" : "not taken");
    long double *e = expected(f, t, k);
    check_counts(name, count, e, f->V);
    free(e);
    free(count);
    nextok_chain_free(c);
}

TEST(distribution)
{
    struct fixture f;
    fixture_init(&f);
    draws(&f, "plain chain", 1.0f, 0, true, false);
    draws(&f, "fused", 1.0f, 0, false, false);
    draws(&f, "fused, top-k 6 after the mask", 0.8f, 6, false, false);
    draws(&f, "plain, top-k 6 after the mask", 0.8f, 6, true, false);
    draws(&f, "check first (temperature only)", 1.3f, 0, false, true);
    fixture_free(&f);
}

TEST(batches)
{
    struct fixture f;
    fixture_init(&f);
    enum {
        B = 8
    };
    struct nextok_chain *cs[B];
    float *rows = malloc((size_t)B * (size_t)f.V * sizeof *rows);
    for (int b = 0; b < B; b++) {
        cs[b] = chain(&f, 1.0f, 0, false, false);
        memcpy(rows + (size_t)b * (size_t)f.V, f.row, (size_t)f.V * sizeof *rows);
    }
    struct nextok_threadpool *pool = NULL;
    CHECK_OK(nextok_threadpool_init(&pool, 2));
    long *count = calloc((size_t)f.V, sizeof *count);
    int32_t tok[B];
    nextok_status st[B];
    for (long s = 0; s < N_DRAWS / B; s++) {
        for (int b = 0; b < B; b++) nextok_chain_set_step(cs[b], (uint64_t)(s * B + b));
        CHECK_OK(nextok_batch_sample(pool, cs, rows, NEXTOK_DTYPE_F32, B, (size_t)f.V, tok, st));
        for (int b = 0; b < B; b++)
            if (st[b] == NEXTOK_OK && tok[b] >= 0 && tok[b] < f.V) count[tok[b]]++;
    }
    long double *e = expected(&f, 1.0f, 0);
    check_counts("batch of 8 on 2 threads", count, e, f.V);
    free(e);
    free(count);
    for (int b = 0; b < B; b++) nextok_chain_free(cs[b]);
    nextok_threadpool_free(pool);
    free(rows);
    fixture_free(&f);
}

/* The chain's accept moves the matcher; clone and reset take it along. */
TEST(chain_carries_the_matcher)
{
    struct fixture f;
    fixture_init(&f);
    struct nextok_chain *c = chain(&f, 1.0f, 0, false, false), *d = NULL;
    struct nextok_matcher *m = nextok_mask_source_matcher(nextok_chain_mask_source(c));
    CHECK(m != NULL);
    int32_t tok = -1, yes = nextok_vocab_find(f.v, "yes", 3), dot = nextok_vocab_find(f.v, ".", 1);
    CHECK(yes >= 0 && dot >= 0);
    CHECK_OK(nextok_chain_accept(c, yes));
    CHECK_EQ_INT((int)nextok_matcher_n_steps(m), 1);
    CHECK_OK(nextok_chain_clone(c, &d));
    /* after "yes" only "." (and tokens starting with it) remain */
    for (int s = 0; s < 200; s++) {
        nextok_chain_set_step(d, (uint64_t)s);
        CHECK_OK(nextok_chain_sample(d, f.row, NEXTOK_DTYPE_F32, &tok));
        size_t n = 0;
        const char *b = nextok_vocab_token_bytes(f.v, tok, &n);
        CHECK_MSG(n == 1 && b[0] == '.', "after \"yes\": token %d \"%.*s\"", tok, (int)n, b);
        if (n != 1 || b[0] != '.') break;
    }
    CHECK_OK(nextok_chain_accept(d, dot));
    CHECK(nextok_matcher_is_complete(nextok_mask_source_matcher(nextok_chain_mask_source(d))));
    CHECK(nextok_chain_accept(d, yes) != NEXTOK_OK); /* the grammar refuses it */
    CHECK(strstr(nextok_chain_errmsg(d), "not allowed") != NULL);
    nextok_chain_reset(c);
    CHECK_EQ_INT((int)nextok_matcher_n_steps(m), 0);
    nextok_chain_free(d);
    nextok_chain_free(c);
    fixture_free(&f);
}

TEST(session_finishes_with_the_grammar)
{
    struct fixture f;
    fixture_init(&f);
    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    sp.n_vocab = f.V;
    sp.seed = 3;
    struct nextok_session_params ps = nextok_session_default_params();
    ps.sampling = &sp;
    ps.vocab = f.v;
    ps.grammar = f.cg;
    struct nextok_session *s = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_session_init(&s, &ps, &err));
    char text[256];
    size_t len = 0;
    struct nextok_step_result r;
    memset(&r, 0, sizeof r);
    int steps = 0;
    for (; steps < 20 && r.finish == NEXTOK_FINISH_NONE; steps++) {
        CHECK_OK(nextok_session_step(s, f.row, NEXTOK_DTYPE_F32, &r));
        if (len + r.text_len < sizeof text)
            memcpy(text + len, r.text, r.text_len), len += r.text_len;
    }
    text[len] = '\0';
    printf("  generated \"%s\" in %d steps\n", text, steps);
    CHECK_MSG(r.finish == NEXTOK_FINISH_GRAMMAR, "finish %s", nextok_finish_name(r.finish));
    bool ok = false;
    CHECK_OK(nextok_grammar_accepts(f.g, text, len, &ok, &err));
    CHECK_MSG(ok, "\"%s\" is no sentence of the grammar", text);
    CHECK(nextok_session_step(s, f.row, NEXTOK_DTYPE_F32, &r) == NEXTOK_ERR_STATE);
    CHECK(strstr(nextok_session_errmsg(s), "grammar") != NULL);
    nextok_session_reset(s);
    CHECK_OK(nextok_session_step(s, f.row, NEXTOK_DTYPE_F32, &r));
    nextok_session_free(s);
    /* a grammar over a larger vocabulary than the logits is refused */
    sp.n_vocab = 1000;
    CHECK(nextok_session_init(&s, &ps, &err) == NEXTOK_ERR_VOCAB_SIZE);
    fixture_free(&f);
}

int main(int argc, char **argv)
{
    harness_init(argc, argv);
    RUN(distribution);
    RUN(batches);
    RUN(chain_carries_the_matcher);
    RUN(session_finishes_with_the_grammar);
    return harness_done();
}
