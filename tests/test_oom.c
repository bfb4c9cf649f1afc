/*
 * Allocation failure everywhere (issue 14; SQLite's test_malloc.c idea):
 * every public constructor, loader, chain, stop, detokenizer and session
 * call is run with its N-th allocation failing, for N = 1, 2, ... until the
 * calls complete without reaching N. Each time:
 *
 *   - every call returns NEXTOK_OK or NEXTOK_ERR_NOMEM, and a NOMEM comes
 *     with a message (on the handle, on the original of a clone, or in the
 *     constructor's nextok_error) and with the failure really injected;
 *     an OK while an allocation failed is allowed only where the fused path
 *     may fall back to the plain chain (sample, probs, sample_n, batch,
 *     session steps), and then the result must be the unfailed run's;
 *   - a failed call changes nothing: it is made again (the one failure is
 *     spent), and every result of the sequence and a probe of the objects
 *     afterwards (the next tokens, the whole final distribution with its
 *     p values, the text, the stop state, the vocabulary's contents) must
 *     be byte for byte those of a run where nothing failed;
 *   - nothing leaks: the allocator counts live blocks, and once the
 *     objects are freed the count is back where it started.
 *
 * Objects made with an allocator (struct nextok_allocator) are failed
 * through it, and must never call the C library's malloc family: this
 * program is linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=free (tests/CMakeLists.txt), and a call that reaches the wrappers
 * while such a scenario runs is an error. The objects that keep the C
 * library's allocator (standalone samplers, the thread pool, a chain with no
 * allocator) are failed through the same wrappers.
 */
#include "harness.h"
#include "nextok.h"

#include "sample/builtin.h" /* min-tokens' count, for the probes */

#include <stdatomic.h>
#include <stdint.h>

/* ---- the C library, wrapped ------------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

/* One failing allocator's counters (the hook's, and the C library's). */
struct fa {
    atomic_int armed;    /* count calls, fail the fail_at-th                      */
    atomic_long calls;   /* allocations (alloc, realloc) since armed              */
    atomic_long fail_at; /* 0: none                                               */
    atomic_int sticky;   /* and every allocation after it                         */
    atomic_int injected; /* the failure happened                                  */
    atomic_int track;    /* count live blocks                                     */
    atomic_long live;
};

static struct fa lc;         /* the C library (the wrappers)                    */
static atomic_int lc_watch;  /* a hook scenario runs: the wrappers must be idle */
static atomic_long lc_stray; /* calls that reached them meanwhile               */

static int fa_fail(struct fa *f)
{
    if (!atomic_load(&f->armed)) return 0;
    long c = atomic_fetch_add(&f->calls, 1) + 1, at = atomic_load(&f->fail_at);
    if (!at || (c != at && !(atomic_load(&f->sticky) && c > at))) return 0;
    atomic_store(&f->injected, 1);
    return 1;
}

static void lc_enter(void)
{
    if (atomic_load(&lc_watch)) atomic_fetch_add(&lc_stray, 1);
}

void *__wrap_malloc(size_t n)
{
    lc_enter();
    if (fa_fail(&lc)) return NULL;
    void *p = __real_malloc(n);
    if (p && atomic_load(&lc.track)) atomic_fetch_add(&lc.live, 1);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    lc_enter();
    if (fa_fail(&lc)) return NULL;
    void *p = __real_calloc(n, size);
    if (p && atomic_load(&lc.track)) atomic_fetch_add(&lc.live, 1);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    lc_enter();
    if (fa_fail(&lc)) return NULL;
    void *q = __real_realloc(p, n);
    if (q && !p && atomic_load(&lc.track)) atomic_fetch_add(&lc.live, 1);
    return q;
}

void __wrap_free(void *p)
{
    if (p) lc_enter();
    if (p && atomic_load(&lc.track)) atomic_fetch_sub(&lc.live, 1);
    __real_free(p);
}

/* ---- the hook ------------------------------------------------------------------------- */

static struct fa hk;
static atomic_long hk_bad; /* calls outside the contract: size 0, NULL ptr, wrong user */

static void *hk_alloc(void *user, size_t n)
{
    if (user != &hk || n == 0) atomic_fetch_add(&hk_bad, 1);
    if (fa_fail(&hk)) return NULL;
    void *p = __real_malloc(n);
    if (p) atomic_fetch_add(&hk.live, 1);
    return p;
}

static void *hk_realloc(void *user, void *p, size_t n)
{
    if (user != &hk || !p || n == 0) atomic_fetch_add(&hk_bad, 1);
    if (fa_fail(&hk)) return NULL;
    return __real_realloc(p, n);
}

static void hk_free(void *user, void *p)
{
    if (user != &hk || !p) atomic_fetch_add(&hk_bad, 1);
    atomic_fetch_sub(&hk.live, 1);
    __real_free(p);
}

static const struct nextok_allocator g_hook = {hk_alloc, hk_realloc, hk_free, &hk};

/* ---- results, recorded to be compared byte for byte ----------------------------------- */

struct rec {
    unsigned char *p;
    size_t n, cap;
};

static void put(struct rec *r, const void *src, size_t n)
{
    if (r->n + n > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->n + n) cap *= 2;
        r->p = __real_realloc(r->p, cap);
        r->cap = cap;
    }
    if (n) memcpy(r->p + r->n, src, n);
    r->n += n;
}

#define PUT(r, v) put((r), &(v), sizeof(v))

static void rec_free(struct rec *r)
{
    __real_free(r->p);
    memset(r, 0, sizeof *r);
}

static int rec_eq(const struct rec *a, const struct rec *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

/* ---- scenarios --------------------------------------------------------------------- */

/* The objects of one run of a scenario. */
struct x {
    const void *arg;
    struct nextok_chain *c, *d, *cs[3];
    struct nextok_session *s, *s2;
    struct nextok_stop *st, *st2;
    struct nextok_detok *dt, *dt2;
    struct nextok_encoder *en;
    struct nextok_vocab *v;
    struct nextok_sampler *sm, *sm2;
    struct nextok_threadpool *pool;
    struct nextok_error err;
    int32_t tok, toks[64];
    nextok_status row_status[3];
    bool absorb;     /* set by run: this call may absorb an injected failure */
    const char *msg; /* set by run on failure: the message it left          */
};

struct scenario {
    const char *name;
    int libc; /* fail the C library's allocations, not the hook's */
    int n_calls;
    void (*setup)(struct x *x);
    nextok_status (*run)(struct x *x, int k, struct rec *r);
    void (*probe)(struct x *x, struct rec *r);
    void (*teardown)(struct x *x);
};

/* rc, remembering msg as the failure's message. */
static nextok_status note(struct x *x, nextok_status rc, const char *msg)
{
    if (rc != NEXTOK_OK) x->msg = msg;
    return rc;
}

static void no_setup(struct x *x) { (void)x; }

static void free_all(struct x *x)
{
    nextok_chain_free(x->c);
    nextok_chain_free(x->d);
    for (int i = 0; i < 3; i++) nextok_chain_free(x->cs[i]);
    nextok_session_free(x->s);
    nextok_session_free(x->s2);
    nextok_stop_free(x->st);
    nextok_stop_free(x->st2);
    nextok_detok_free(x->dt);
    nextok_detok_free(x->dt2);
    nextok_encoder_free(x->en);
    nextok_vocab_free(x->v);
    nextok_sampler_free(x->sm);
    nextok_sampler_free(x->sm2);
    nextok_threadpool_free(x->pool);
}

static struct fa *fa_of(const struct scenario *s) { return s->libc ? &lc : &hk; }

static void arm(const struct scenario *s, long fail_at)
{
    struct fa *f = fa_of(s);
    atomic_store(&f->calls, 0);
    atomic_store(&f->fail_at, fail_at);
    atomic_store(&f->injected, 0);
    atomic_store(&f->armed, 1);
}

static void disarm(const struct scenario *s) { atomic_store(&fa_of(s)->armed, 0); }

static void begin(const struct scenario *s, struct x *x, const void *arg)
{
    memset(x, 0, sizeof *x);
    x->arg = arg;
    atomic_store(&lc.track, 1);
    if (!s->libc) atomic_store(&lc_watch, 1);
}

static void end(const struct scenario *s)
{
    atomic_store(&lc_watch, 0);
    atomic_store(&lc.track, 0);
    (void)s;
}

/* Run the calls; a call that fails is made again. The failing call is the
 * one that reaches allocation fail_at (with sticky, every allocation after
 * it in that call fails too); nothing fails after it. Returns whether an
 * allocation failed. */
static int run_calls(const struct scenario *s, struct x *x, long fail_at, int sticky,
                     struct rec *got)
{
    struct rec call = {0};
    struct fa *f = fa_of(s);
    arm(s, fail_at);
    atomic_store(&f->sticky, sticky);
    for (int k = 0; k < s->n_calls; k++) {
        call.n = 0;
        x->absorb = false;
        x->msg = NULL;
        const int before = atomic_load(&f->injected);
        nextok_status rc = s->run(x, k, &call);
        const int hit = atomic_load(&f->injected) && !before;
        if (hit) atomic_store(&f->armed, 0);
        if (rc == NEXTOK_ERR_NOMEM && hit) {
            CHECK_MSG(x->msg && x->msg[0],
                      "%s: call %d, allocation %ld failing: NOMEM without a "
                      "message",
                      s->name, k, fail_at);
            call.n = 0;
            rc = s->run(x, k, &call);
            CHECK_MSG(rc == NEXTOK_OK, "%s: call %d made again after allocation %ld failed: %s",
                      s->name, k, fail_at, nextok_status_name(rc));
        } else if (rc == NEXTOK_OK) {
            CHECK_MSG(!hit || x->absorb, "%s: call %d: allocation %ld failed, the call returned OK",
                      s->name, k, fail_at);
        } else {
            CHECK_MSG(0, "%s: call %d, allocation %ld failing: %s (%s)%s", s->name, k, fail_at,
                      nextok_status_name(rc), x->msg ? x->msg : "",
                      hit ? "" : " (no failure injected)");
        }
        put(got, call.p, call.n);
    }
    disarm(s);
    atomic_store(&f->sticky, 0);
    rec_free(&call);
    return atomic_load(&f->injected);
}

/* A scenario: the unfailed run, then each allocation failed in turn, alone
 * and with every later one of its call. Returns the number of failure
 * points tried. */
static long sweep(const struct scenario *s, const void *arg)
{
    struct rec ref = {0}, ref_probe = {0}, got = {0}, probe = {0};
    struct x x;
    const long live0 = atomic_load(&fa_of(s)->live);
    const long stray0 = atomic_load(&lc_stray);
    begin(s, &x, arg);
    s->setup(&x);
    run_calls(s, &x, 0, 0, &ref);
    const long total = atomic_load(&fa_of(s)->calls);
    s->probe(&x, &ref_probe);
    s->teardown(&x);
    end(s);
    CHECK_MSG(atomic_load(&fa_of(s)->live) == live0, "%s: unfailed run: %ld blocks leaked", s->name,
              atomic_load(&fa_of(s)->live) - live0);
    const int failed0 = h_cur_failed;
    h_cur_failed = 0;
    long n_all = 0;
    for (int sticky = 0; sticky < 2 && !h_cur_failed; sticky++) {
        const char *how = sticky ? " (and the rest of its call)" : "";
        long n = 0;
        for (long fail_at = 1; !h_cur_failed; fail_at++) {
            got.n = probe.n = 0;
            begin(s, &x, arg);
            s->setup(&x);
            const int reached = run_calls(s, &x, fail_at, sticky, &got);
            s->probe(&x, &probe);
            s->teardown(&x);
            end(s);
            CHECK_MSG(rec_eq(&got, &ref),
                      "%s: allocation %ld failing%s: the calls' results "
                      "differ from the unfailed run's",
                      s->name, fail_at, how);
            CHECK_MSG(rec_eq(&probe, &ref_probe),
                      "%s: allocation %ld failing%s: the objects "
                      "differ afterwards from the unfailed run's",
                      s->name, fail_at, how);
            CHECK_MSG(atomic_load(&fa_of(s)->live) == live0,
                      "%s: allocation %ld failing%s: %ld "
                      "blocks leaked",
                      s->name, fail_at, how, atomic_load(&fa_of(s)->live) - live0);
            if (!reached) break;
            n++;
        }
        CHECK_MSG(n == total, "%s%s: %ld allocations failed, the unfailed run made %ld", s->name,
                  how, n, total);
        n_all += n;
    }
    CHECK_MSG(atomic_load(&lc_stray) == stray0,
              "%s: %ld calls to the C library's allocator "
              "from objects that have a hook",
              s->name, atomic_load(&lc_stray) - stray0);
    CHECK_MSG(atomic_load(&hk_bad) == 0, "%s: the hook was called outside its contract", s->name);
    h_cur_failed |= failed0;
    rec_free(&ref);
    rec_free(&ref_probe);
    rec_free(&got);
    rec_free(&probe);
    return n_all;
}

static long g_total; /* allocations failed over every scenario */

static void report(const char *name, long n)
{
    g_total += n;
    printf("  %-52s %5ld failure points\n", name, n);
}

#define SWEEP(sc, arg) report((sc)->name, sweep((sc), (arg)))

/* ---- rows, prompts, tokens --------------------------------------------------------- */

#define V     4096 /* wide enough for the fused path */
#define NROWS 16
#define NW    (V / 32)

static float g_rows[NROWS][V];
static int32_t g_mask[NW];
static int32_t g_masks[3][NW]; /* a batch's: the same mask for each row */
static int32_t g_prompt[100];
static int32_t g_acc[80];
static int32_t g_allowed[V / 7 + 1];
static size_t g_n_allowed;

static void make_data(void)
{
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (int r = 0; r < NROWS; r++) {
        for (int i = 0; i < V; i++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            g_rows[r][i] = (float)((double)(s >> 40) / 16777216.0 * 8.0 - 4.0);
            if ((i + r) % 97 == 0) g_rows[r][i] += 2.5f;
        }
    }
    for (int i = 0; i < V; i++)
        if (i % 3 != 1) g_mask[i / 32] |= (int32_t)(UINT32_C(1) << (i % 32));
    for (int r = 0; r < 3; r++) memcpy(g_masks[r], g_mask, sizeof g_mask);
    for (int i = 0; i < 100; i++) g_prompt[i] = (i * 131 + 17) % V;
    for (int k = 0; k < 80; k++)
        g_acc[k] = k < 40 ? (k * 53 + 7) % V : k < 60 ? g_acc[k - 40] : (k * 101 + 3) % V;
    for (int i = 0; i < V; i += 7) g_allowed[g_n_allowed++] = i;
}

/* ---- chains ------------------------------------------------------------------------ */

struct cfg {
    const char *name;
    struct nextok_sampling_params p;
    bool mask; /* has a token-bitmask stage */
};

static const int32_t brk_ids[] = {13, 14, 15};
static const size_t brk_off[] = {0, 1, 3};
static const struct nextok_logit_bias bias[] = {{5, 2.5f}, {9, -INFINITY}, {77, -1.5f}, {5, 0.5f}};
static const int32_t banned[] = {3, 4, 1000};
static const int32_t eog[] = {0, 2};

#define N_CFG 7
static struct cfg g_cfg[N_CFG];

static void make_cfgs(void)
{
    struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    p.n_vocab = V;
    p.seed = 7;
    p.repeat_penalty = 1.2f;
    p.frequency_penalty = 0.4f;
    p.presence_penalty = 0.2f;
    p.dry_multiplier = 0.8f;
    p.dry_breaker_ids = brk_ids;
    p.dry_breaker_off = brk_off;
    p.dry_n_breakers = 2;
    p.no_repeat_ngram = 3;
    p.logit_bias = bias;
    p.n_logit_bias = 4;
    p.banned_ids = banned;
    p.n_banned = 3;
    p.min_tokens = 4;
    p.eog_ids = eog;
    p.n_eog = 2;
    p.temperature = 0.9f;
    p.top_k = 200;
    p.top_p = 0.92f;
    p.min_p = 0.01f;
    p.typical_p = 0.97f;
    g_cfg[0] = (struct cfg){"vllm: processors, top-k, top-p, min-p, typical", p, false};

    p = nextok_sampling_default_params(NEXTOK_PROFILE_HF);
    p.n_vocab = V;
    p.seed = 11;
    p.repeat_penalty = 1.1f;
    p.dry_multiplier = 0.5f;
    p.dry_penalty_last_n = 48;
    p.no_repeat_ngram = 2;
    p.allowed_ids = g_allowed;
    p.n_allowed = g_n_allowed;
    p.temperature = 1.2f;
    p.top_n_sigma = 2.0f;
    p.xtc_probability = 0.5f;
    p.xtc_threshold = 0.05f;
    p.epsilon_cutoff = 0.0003f;
    p.eta_cutoff = 0.001f;
    p.selector = NEXTOK_SELECTOR_GUMBEL;
    g_cfg[1] = (struct cfg){"hf: allowed ids, top-n-sigma, XTC, epsilon, eta, gumbel", p, false};

    p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    p.n_vocab = V;
    p.seed = 3;
    p.penalty_last_n = 16;
    p.repeat_penalty = 1.3f;
    p.frequency_penalty = 0.2f;
    p.dry_multiplier = 1.0f;
    p.dry_penalty_last_n = 24;
    p.dry_breaker_ids = brk_ids;
    p.dry_breaker_off = brk_off;
    p.dry_n_breakers = 2;
    g_cfg[2] = (struct cfg){"llama: window penalties, DRY window, top-k, top-p, min-p", p, false};

    p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    p.n_vocab = V;
    p.seed = 5;
    p.dynatemp_range = 0.3f;
    p.mirostat = 1;
    p.mirostat_tau = 4.0f;
    p.mirostat_eta = 0.2f;
    g_cfg[3] = (struct cfg){"llama: dynamic temperature, mirostat v1", p, false};

    p = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    p.n_vocab = V;
    p.seed = 9;
    p.token_bitmask = true;
    p.frequency_penalty = 0.3f;
    p.no_repeat_ngram = 4;
    p.typical_p = 0.9f;
    p.top_p = 0.8f;
    g_cfg[4] = (struct cfg){"vllm: token bitmask, typical, top-p", p, true};

    p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    p.n_vocab = V;
    p.seed = 13;
    p.samplers = "penalties;dry;top_k;typ_p;xtc;min_p;temperature";
    p.presence_penalty = 0.5f;
    p.dry_multiplier = 0.3f;
    p.typical_p = 0.95f;
    p.xtc_probability = 1.0f;
    p.xtc_threshold = 0.01f;
    p.min_tokens = 2;
    p.eog_ids = eog;
    p.n_eog = 2;
    g_cfg[5] = (struct cfg){"llama: custom order, XTC, min_tokens", p, false};

    p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    p.n_vocab = V;
    p.seed = 15;
    p.temperature = 0.7f;
    p.mirostat = 2;
    g_cfg[6] = (struct cfg){"llama: mirostat v2", p, false};
    for (int i = 0; i < N_CFG; i++) g_cfg[i].p.allocator = &g_hook;
}

static const struct cfg *cfg_of(const struct x *x) { return x->arg; }

static void set_mask(const struct x *x, struct nextok_chain *c)
{
    if (cfg_of(x)->mask) nextok_chain_set_token_bitmask(c, g_mask, NW);
}

/* Each stage's state as it shows: the stage alone applied to a whole row
 * (every id a processor changes or removes), min-tokens' count, mirostat's
 * mu. (The final distribution alone would miss most of it: a double-counted
 * penalty on a token that top-k cuts changes nothing there.) */
static void stages_probe(struct nextok_chain *c, const float *row, struct rec *r)
{
    static struct nextok_token_data buf[50257];
    const size_t n_vocab = (size_t)nextok_chain_n_vocab(c);
    for (size_t i = 0; i < nextok_chain_n(c); i++) {
        struct nextok_sampler *s = nextok_chain_get(c, i);
        for (size_t j = 0; j < n_vocab; j++)
            buf[j] = (struct nextok_token_data){(int32_t)j, row[j], 0.0f};
        struct nextok_token_data_array a = {buf, n_vocab, -1, false};
        nextok_status rc = nextok_sampler_apply(s, &a, 1);
        PUT(r, rc);
        if (rc == NEXTOK_OK) {
            PUT(r, a.size);
            put(r, buf, a.size * sizeof *buf);
        }
        float mu = nextok_sampler_mirostat_mu(s);
        PUT(r, mu);
        if (nextok__sampler_kind(s) == NEXTOK__K_MIN_TOKENS) {
            const struct nextok__p_min_tokens *p = nextok_sampler_ctx(s);
            PUT(r, p->n_accepted);
        }
    }
}

/* The chain afterwards: its stages, then three steps of its whole final
 * distribution (ids, p, the token), each accepted. */
static void chain_probe(struct x *x, struct nextok_chain *c, struct rec *r)
{
    static struct nextok_token_data out[V];
    if (!c) return;
    stages_probe(c, g_rows[9], r);
    for (int s = 0; s < 3; s++) {
        set_mask(x, c);
        size_t n = 0;
        int32_t tok = -1;
        nextok_status rc =
            nextok_chain_probs(c, g_rows[10 + s], NEXTOK_DTYPE_F32, out, V, &n, &tok);
        PUT(r, rc);
        PUT(r, n);
        PUT(r, tok);
        if (rc == NEXTOK_OK) put(r, out, n * sizeof *out);
        if (rc == NEXTOK_OK) rc = nextok_chain_accept(c, tok);
        PUT(r, rc);
    }
    uint64_t step = nextok_chain_step(c);
    PUT(r, step);
}

static void probe_c(struct x *x, struct rec *r) { chain_probe(x, x->c, r); }

static void chain_fresh(struct x *x)
{
    CHECK_OK(nextok_chain_init_sampling(&x->c, &cfg_of(x)->p, NULL));
    if (x->c) CHECK_OK(nextok_chain_set_prompt(x->c, g_prompt, 12));
}

static void chain_sample_accept(struct x *x, struct nextok_chain *c, int row)
{
    int32_t tok = -1;
    set_mask(x, c);
    CHECK_OK(nextok_chain_sample(c, g_rows[row], NEXTOK_DTYPE_F32, &tok));
    CHECK_OK(nextok_chain_accept(c, tok));
}

/* Two steps taken: every lazily made workspace exists. */
static void chain_warm(struct x *x)
{
    chain_fresh(x);
    if (!x->c) return;
    chain_sample_accept(x, x->c, 0);
    chain_sample_accept(x, x->c, 1);
}

static nextok_status run_init_sampling(struct x *x, int k, struct rec *r)
{
    (void)k, (void)r;
    nextok_status rc = nextok_chain_init_sampling(&x->c, &cfg_of(x)->p, &x->err);
    if (rc != NEXTOK_OK) CHECK(x->c == NULL);
    return note(x, rc, x->err.msg);
}

static nextok_status run_set_prompt(struct x *x, int k, struct rec *r)
{
    (void)r;
    return note(x, nextok_chain_set_prompt(x->c, g_prompt, k ? 100 : 40),
                nextok_chain_errmsg(x->c));
}

/* Even calls sample, odd calls accept the token. */
static nextok_status run_steps(struct x *x, int k, struct rec *r)
{
    if (k % 2) return note(x, nextok_chain_accept(x->c, x->tok), nextok_chain_errmsg(x->c));
    set_mask(x, x->c);
    x->absorb = true;
    nextok_status rc = nextok_chain_sample(x->c, g_rows[k / 2], NEXTOK_DTYPE_F32, &x->tok);
    PUT(r, x->tok);
    return note(x, rc, nextok_chain_errmsg(x->c));
}

static nextok_status run_accepts(struct x *x, int k, struct rec *r)
{
    (void)r;
    return note(x, nextok_chain_accept(x->c, g_acc[k]), nextok_chain_errmsg(x->c));
}

/* probs, accept its token, probs again. */
static nextok_status run_probs(struct x *x, int k, struct rec *r)
{
    static struct nextok_token_data out[V];
    if (k == 1) return note(x, nextok_chain_accept(x->c, x->tok), nextok_chain_errmsg(x->c));
    set_mask(x, x->c);
    x->absorb = true;
    size_t n = 0;
    nextok_status rc = nextok_chain_probs(x->c, g_rows[k], NEXTOK_DTYPE_F32, out, V, &n, &x->tok);
    if (rc == NEXTOK_OK) {
        PUT(r, n);
        PUT(r, x->tok);
        put(r, out, n * sizeof *out);
    }
    return note(x, rc, nextok_chain_errmsg(x->c));
}

static nextok_status run_sample_n(struct x *x, int k, struct rec *r)
{
    set_mask(x, x->c);
    x->absorb = true;
    nextok_status rc = nextok_chain_sample_n(x->c, g_rows[k], NEXTOK_DTYPE_F32, 16, x->toks);
    if (rc == NEXTOK_OK) put(r, x->toks, 16 * sizeof *x->toks);
    return note(x, rc, nextok_chain_errmsg(x->c));
}

/* logprobs of the last sample (the setup's), raw then processed. */
static void chain_sampled(struct x *x)
{
    chain_warm(x);
    if (!x->c) return;
    set_mask(x, x->c);
    CHECK_OK(nextok_chain_sample(x->c, g_rows[2], NEXTOK_DTYPE_F32, &x->tok));
}

static nextok_status run_logprobs(struct x *x, int k, struct rec *r)
{
    struct nextok_logprob top[5];
    size_t n_top = 0;
    float lp = 0;
    int32_t rank = 0;
    nextok_status rc =
        nextok_chain_logprobs(x->c, k ? NEXTOK_LOGPROBS_PROCESSED : NEXTOK_LOGPROBS_RAW, g_rows[2],
                              NEXTOK_DTYPE_F32, x->tok, 5, top, &n_top, &lp, &rank);
    if (rc == NEXTOK_OK) {
        PUT(r, n_top);
        put(r, top, n_top * sizeof *top);
        PUT(r, lp);
        PUT(r, rank);
    }
    return note(x, rc, nextok_chain_errmsg(x->c));
}

static nextok_status run_apply(struct x *x, int k, struct rec *r)
{
    (void)k;
    static struct nextok_token_data buf[1000];
    for (int i = 0; i < 1000; i++) buf[i] = (struct nextok_token_data){i, g_rows[3][i], 0.0f};
    struct nextok_token_data_array a = {buf, 1000, -1, false};
    set_mask(x, x->c);
    nextok_status rc = nextok_chain_apply(x->c, &a);
    if (rc == NEXTOK_OK) {
        PUT(r, a.size);
        PUT(r, a.selected);
        put(r, buf, a.size * sizeof *buf);
    }
    return note(x, rc, nextok_chain_errmsg(x->c));
}

static nextok_status run_clone(struct x *x, int k, struct rec *r)
{
    (void)k, (void)r;
    nextok_status rc = nextok_chain_clone(x->c, &x->d);
    if (rc != NEXTOK_OK) CHECK(x->d == NULL);
    return note(x, rc, nextok_chain_errmsg(x->c)); /* the message is on the original */
}

static void probe_clone(struct x *x, struct rec *r)
{
    chain_probe(x, x->d, r);
    chain_probe(x, x->c, r);
}

/* Three chains, one row each, on a pool of two threads. */
static struct nextok_threadpool *g_pool;

static void chains_fresh(struct x *x)
{
    for (int i = 0; i < 3; i++) {
        CHECK_OK(nextok_chain_init_sampling(&x->cs[i], &cfg_of(x)->p, NULL));
        if (x->cs[i]) CHECK_OK(nextok_chain_set_prompt(x->cs[i], g_prompt + i, 12));
    }
}

/* batch, accept each row's token, batch again. */
static nextok_status run_batch(struct x *x, int k, struct rec *r)
{
    if (k >= 1 && k <= 3) {
        struct nextok_chain *c = x->cs[k - 1];
        return note(x, nextok_chain_accept(c, x->toks[k - 1]), nextok_chain_errmsg(c));
    }
    x->absorb = true;
    const float *rows = g_rows[k == 0 ? 0 : 3];
    nextok_status rc = cfg_of(x)->mask
                           ? nextok_batch_sample_bitmask(g_pool, x->cs, rows, NEXTOK_DTYPE_F32, 3,
                                                         V, g_masks[0], NW, x->toks, x->row_status)
                           : nextok_batch_sample(g_pool, x->cs, rows, NEXTOK_DTYPE_F32, 3, V,
                                                 x->toks, x->row_status);
    if (rc == NEXTOK_OK) put(r, x->toks, 3 * sizeof *x->toks);
    for (int i = 0; i < 3 && rc != NEXTOK_OK; i++)
        if (x->row_status[i] != NEXTOK_OK) return note(x, rc, nextok_chain_errmsg(x->cs[i]));
    return rc;
}

static void probe_chains(struct x *x, struct rec *r)
{
    for (int i = 0; i < 3; i++) chain_probe(x, x->cs[i], r);
}

static const struct scenario sc_chain[] = {
    {"chain_init_sampling", 0, 1, no_setup, run_init_sampling, probe_c, free_all},
    {"chain_set_prompt x2", 0, 2, chain_warm, run_set_prompt, probe_c, free_all},
    {"chain_sample + chain_accept x6", 0, 12, chain_fresh, run_steps, probe_c, free_all},
    {"chain_accept x80", 0, 80, chain_fresh, run_accepts, probe_c, free_all},
    {"chain_probs, accept, probs", 0, 3, chain_fresh, run_probs, probe_c, free_all},
    {"chain_sample_n", 0, 1, chain_fresh, run_sample_n, probe_c, free_all},
    {"chain_logprobs raw, processed", 0, 2, chain_sampled, run_logprobs, probe_c, free_all},
    {"chain_apply", 0, 1, chain_fresh, run_apply, probe_c, free_all},
    {"chain_clone", 0, 1, chain_warm, run_clone, probe_clone, free_all},
    {"batch_sample, accept x3, batch_sample", 0, 5, chains_fresh, run_batch, probe_chains,
     free_all},
};

/* Whether cfg's chain samples a row by the fused path (whose workspace
 * allocations the sweeps then fail too). */
static bool takes_fused(const struct cfg *cf)
{
    struct x x = {.arg = cf};
    chain_fresh(&x);
    int32_t tok;
    set_mask(&x, x.c);
    bool fused = x.c && nextok_chain_sample(x.c, g_rows[0], NEXTOK_DTYPE_F32, &tok) == NEXTOK_OK &&
                 nextok_chain_last_fused(x.c);
    nextok_chain_free(x.c);
    return fused;
}

TEST(chains)
{
    int n_fused = 0;
    for (int i = 0; i < N_CFG; i++) {
        const bool fused = takes_fused(&g_cfg[i]);
        n_fused += fused;
        printf("  %s%s\n", g_cfg[i].name, fused ? " (fused path)" : "");
        for (size_t j = 0; j < sizeof sc_chain / sizeof sc_chain[0]; j++)
            SWEEP(&sc_chain[j], &g_cfg[i]);
    }
    CHECK_MSG(n_fused >= 3, "only %d configurations take the fused path", n_fused);
}

/* A chain with no samplers: nextok_chain_init. */
static nextok_status run_chain_init(struct x *x, int k, struct rec *r)
{
    (void)k, (void)r;
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    cp.allocator = &g_hook;
    nextok_status rc = nextok_chain_init(&x->c, &cp, &x->err);
    if (rc != NEXTOK_OK) CHECK(x->c == NULL);
    return note(x, rc, x->err.msg);
}

static void probe_empty_chain(struct x *x, struct rec *r)
{
    int32_t n = nextok_chain_n_vocab(x->c), tok = 0;
    size_t n_st = nextok_chain_n(x->c);
    nextok_status rc = nextok_chain_sample(x->c, g_rows[0], NEXTOK_DTYPE_F32, &tok);
    PUT(r, n);
    PUT(r, n_st);
    PUT(r, rc); /* STATE: no selector */
}

static const struct scenario sc_chain_init = {
    "chain_init (no samplers)", 0, 1, no_setup, run_chain_init, probe_empty_chain, free_all};

TEST(chain_init) { SWEEP(&sc_chain_init, NULL); }

/* ---- stop matcher ----------------------------------------------------------------- */

static const char *const stop_strings[] = {"\n\n", "END"};
static const int32_t stop_seq_ids[] = {6, 5, 9, 9, 9};
static const size_t stop_seq_off[] = {0, 2, 5};
static const int32_t stop_eog[] = {50256};

static struct nextok_stop_params stop_params(void)
{
    struct nextok_stop_params p = nextok_stop_default_params();
    p.strings = stop_strings;
    p.n_strings = 2;
#ifdef NEXTOK_HAVE_PCRE2
    p.regex = "[0-9]{3}";
#endif
    p.seq_ids = stop_seq_ids;
    p.seq_off = stop_seq_off;
    p.n_seqs = 2;
    p.eog_ids = stop_eog;
    p.n_eog = 1;
    p.max_tokens = 40;
    p.allocator = &g_hook;
    return p;
}

/* Held newline, held "E"/"EN", a partial sequence (6 then 5 would stop),
 * a partial regex "12", then "123": the regex stops it (without PCRE2 the
 * last pushes just run on). */
static const struct {
    int32_t tok;
    const char *text;
} stop_script[] = {{1, "ab"}, {2, "\n"}, {3, "x E"}, {4, "N"},
                   {5, "9"},  {6, "8 "}, {7, "12"},  {8, "3"}};
#define N_PUSH 8

static nextok_status push_one(struct nextok_stop *st, int i, struct rec *r)
{
    char buf[512];
    struct nextok_text_out out = {buf, sizeof buf, 0};
    struct nextok_stop_result res = {NEXTOK_FINISH_NONE, -1, 0};
    const char *t = stop_script[i].text;
    nextok_status rc =
        nextok_stop_push(st, stop_script[i].tok, t, strlen(t), NEXTOK_STOP_CONTINUE, &out, &res);
    PUT(r, rc);
    if (rc == NEXTOK_OK) {
        PUT(r, out.pos);
        put(r, buf, out.pos);
        PUT(r, res);
    }
    return rc;
}

static nextok_status run_stop(struct x *x, int k, struct rec *r)
{
    if (k == 0) {
        struct nextok_stop_params p = stop_params();
        nextok_status rc = nextok_stop_init(&x->st, &p, &x->err);
        if (rc != NEXTOK_OK) CHECK(x->st == NULL);
        return note(x, rc, x->err.msg);
    }
    nextok_status rc = push_one(x->st, k - 1, r);
    if (rc != NEXTOK_OK) r->n = 0;
    return note(x, rc, nextok_stop_errmsg(x->st));
}

static void stop_state(struct nextok_stop *st, struct rec *r)
{
    if (!st) return;
    int32_t which = -1;
    enum nextok_finish f = nextok_stop_finish(st, &which);
    size_t held = nextok_stop_held(st);
    int32_t n = nextok_stop_n_tokens(st);
    PUT(r, f);
    PUT(r, which);
    PUT(r, held);
    PUT(r, n);
}

static void probe_stop(struct x *x, struct rec *r) { stop_state(x->st, r); }

static void stop_started(struct x *x)
{
    struct nextok_stop_params p = stop_params();
    CHECK_OK(nextok_stop_init(&x->st, &p, NULL));
    struct rec scratch = {0};
    for (int i = 0; x->st && i < 3; i++) CHECK_OK(push_one(x->st, i, &scratch));
    rec_free(&scratch);
}

static nextok_status run_stop_clone(struct x *x, int k, struct rec *r)
{
    (void)k, (void)r;
    nextok_status rc = nextok_stop_clone(x->st, &x->st2);
    if (rc != NEXTOK_OK) CHECK(x->st2 == NULL);
    return note(x, rc, nextok_stop_errmsg(x->st));
}

/* The rest of the script on the clone, then on the original. */
static void probe_stop_clone(struct x *x, struct rec *r)
{
    struct nextok_stop *both[2] = {x->st2, x->st};
    for (int j = 0; j < 2; j++) {
        for (int i = 3; both[j] && i < N_PUSH; i++) push_one(both[j], i, r);
        stop_state(both[j], r);
    }
}

static const struct scenario sc_stop[] = {
    {"stop_init + stop_push x8 (strings, regex, sequences)", 0, 1 + N_PUSH, no_setup, run_stop,
     probe_stop, free_all},
    {"stop_clone", 0, 1, stop_started, run_stop_clone, probe_stop_clone, free_all},
};

TEST(stop)
{
#ifndef NEXTOK_HAVE_PCRE2
    printf("  (built without PCRE2: no stop regex in these scenarios)\n");
#endif
    for (size_t j = 0; j < sizeof sc_stop / sizeof sc_stop[0]; j++) SWEEP(&sc_stop[j], NULL);
}

/* The regex's memory is PCRE2's, through the hook (PCRE2 is a shared
 * library: the wrappers cannot see its calls, so count them here): the
 * matcher's allocations grow by PCRE2's blocks (general context, compile
 * context, code, match data) when a regex is added, and the first match
 * allocates PCRE2's backtracking frames through the hook too. */
TEST(stop_regex_through_hook)
{
#ifdef NEXTOK_HAVE_PCRE2
    const struct scenario hook_sc = {.libc = 0};
    long calls[2], push_calls = 0;
    for (int with = 0; with < 2; with++) {
        struct nextok_stop_params p = stop_params();
        if (!with) p.regex = NULL;
        struct nextok_stop *st = NULL;
        arm(&hook_sc, 0);
        CHECK_OK(nextok_stop_init(&st, &p, NULL));
        calls[with] = atomic_load(&hk.calls);
        struct rec scratch = {0};
        arm(&hook_sc, 0);
        for (int i = 0; st && i < 3; i++) CHECK_OK(push_one(st, i, &scratch));
        disarm(&hook_sc);
        if (with) push_calls = atomic_load(&hk.calls);
        rec_free(&scratch);
        nextok_stop_free(st);
    }
    CHECK_MSG(calls[1] >= calls[0] + 4, "allocations: %ld without the regex, %ld with", calls[0],
              calls[1]);
    CHECK_MSG(push_calls >= 1, "no allocation through the hook in the regex's first match");
#else
    printf("  (built without PCRE2: nothing to check)\n");
#endif
}

/* Mirostat v2's draw grows its cache of the distribution accept reads; a
 * draw that fails (its allocations failing from the N-th on, for every N:
 * some after the cache grew) must leave that distribution: [sample A,
 * sample B failing, accept A's token] moves mu exactly as [sample A, accept
 * A's token] does, and the next token is the same. The sweep cannot see
 * this: it always makes a failed call again before going on. */
static int miro_once(long fail_at, const float *row_a, const float *row_b)
{
    struct nextok_chain *c[2] = {NULL, NULL};
    int32_t tok[2] = {-1, -1}, next[2] = {-1, -1};
    for (int j = 0; j < 2; j++) {
        CHECK_OK(nextok_chain_init_sampling(&c[j], &g_cfg[6].p, NULL));
        if (c[j]) CHECK_OK(nextok_chain_sample(c[j], row_a, NEXTOK_DTYPE_F32, &tok[j]));
    }
    const struct scenario hook_sc = {.libc = 0};
    arm(&hook_sc, fail_at);
    atomic_store(&hk.sticky, 1);
    int32_t t = -1;
    nextok_status rc = c[0] ? nextok_chain_sample(c[0], row_b, NEXTOK_DTYPE_F32, &t) : NEXTOK_OK;
    const int injected = atomic_load(&hk.injected);
    disarm(&hook_sc);
    atomic_store(&hk.sticky, 0);
    CHECK_MSG(rc == (injected ? NEXTOK_ERR_NOMEM : NEXTOK_OK),
              "sample B, allocations failing from "
              "%ld on: %s",
              fail_at, nextok_status_name(rc));
    for (int j = 0; j < 2 && c[0] && c[1]; j++) {
        CHECK_OK(nextok_chain_accept(c[j], tok[j]));
        CHECK_OK(nextok_chain_sample(c[j], g_rows[1], NEXTOK_DTYPE_F32, &next[j]));
    }
    if (c[0] && c[1] && injected) {
        const float mu0 =
            nextok_sampler_mirostat_mu(nextok_chain_get(c[0], nextok_chain_n(c[0]) - 1));
        const float mu1 =
            nextok_sampler_mirostat_mu(nextok_chain_get(c[1], nextok_chain_n(c[1]) - 1));
        CHECK_MSG(tok[0] == tok[1] && memcmp(&mu0, &mu1, sizeof mu0) == 0 && next[0] == next[1],
                  "allocations failing from %ld on: mu %.9g after the failed draw, %.9g without "
                  "it; next token %d, %d",
                  fail_at, (double)mu0, (double)mu1, (int)next[0], (int)next[1]);
        CHECK(mu1 != 2.0f * g_cfg[6].p.mirostat_tau); /* the accept did move it */
    }
    nextok_chain_free(c[0]);
    nextok_chain_free(c[1]);
    return injected;
}

TEST(mirostat_failed_draw)
{
    static float row_a[V], row_b[V];
    for (int i = 0; i < V; i++) {
        row_a[i] = g_rows[0][i];
        row_b[i] = i < 200 ? 0.0f : -30.0f; /* 200 survivors: the cache grows past 64 */
    }
    row_a[77] += 20.0f; /* one survivor */
    long n = 0;
    while (miro_once(n + 1, row_a, row_b) && !h_cur_failed) n++;
    report("mirostat v2: sample, failing sample, accept", n);
}

/* ---- vocabularies, detokenizer, sessions ---------------------------------------------- */

struct vocab_src {
    const char *name; /* for the report */
    const char *path; /* load_file_ex; NULL: load_mem_ex of data */
    const void *data;
    size_t size;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211u;
    return h;
}

/* Everything a vocabulary answers. */
static void vocab_probe(const struct nextok_vocab *v, struct rec *r)
{
    if (!v) return;
    int32_t n = nextok_vocab_n_tokens(v);
    enum nextok_vocab_type type = nextok_vocab_get_type(v);
    PUT(r, n);
    PUT(r, type);
    uint64_t h = 14695981039346656037u;
    for (int32_t id = 0; id < n; id++) {
        size_t len = 0;
        const char *t = nextok_vocab_token_text(v, id, &len);
        h = fnv(h, t, len);
        t = nextok_vocab_token_bytes(v, id, &len);
        h = fnv(h, t, len);
        uint32_t a = nextok_vocab_token_attrs(v, id);
        float sc = nextok_vocab_token_score(v, id);
        h = fnv(h, &a, sizeof a);
        h = fnv(h, &sc, sizeof sc);
    }
    PUT(r, h);
    for (int k = 0; k < NEXTOK_VOCAB_SPECIAL_COUNT; k++) {
        int32_t id = nextok_vocab_special_id(v, (enum nextok_vocab_special)k);
        PUT(r, id);
    }
    size_t n_eog = 0;
    const int32_t *e = nextok_vocab_eog_ids(v, &n_eog);
    PUT(r, n_eog);
    put(r, e, n_eog * sizeof *e);
    size_t n_merges = nextok_vocab_n_merges(v);
    bool bos = nextok_vocab_adds_bos(v), eos = nextok_vocab_adds_eos(v);
    PUT(r, n_merges);
    PUT(r, bos);
    PUT(r, eos);
}

static nextok_status run_load(struct x *x, int k, struct rec *r)
{
    (void)k, (void)r;
    const struct vocab_src *src = x->arg;
    struct nextok_vocab_load_params lp = nextok_vocab_load_default_params();
    lp.allocator = &g_hook;
    nextok_status rc = src->path
                           ? nextok_vocab_load_file_ex(&x->v, src->path, &lp, &x->err)
                           : nextok_vocab_load_mem_ex(&x->v, src->data, src->size, &lp, &x->err);
    if (rc != NEXTOK_OK) CHECK(x->v == NULL);
    return note(x, rc, x->err.msg);
}

static void probe_vocab(struct x *x, struct rec *r) { vocab_probe(x->v, r); }

static const struct scenario sc_load = {"", 0, 1, no_setup, run_load, probe_vocab, free_all};

/* Growing the end-of-generation set of a vocabulary made with the hook. */
static const char small_json[] =
    "{\"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\", \"vocab\": {\"[UNK]\": 0, "
    "\"a\": 1, \"b\": 2, \"c\": 3, \"d\": 4, \"e\": 5, \"f\": 6, \"g\": 7, \"h\": 8, \"i\": 9, "
    "\"j\": 10, \"k\": 11, \"l\": 12}}, \"decoder\": {\"type\": \"WordPiece\", \"prefix\": "
    "\"##\"}}";

static void small_vocab(struct x *x)
{
    struct nextok_vocab_load_params lp = nextok_vocab_load_default_params();
    lp.allocator = &g_hook;
    CHECK_OK(nextok_vocab_load_mem_ex(&x->v, small_json, strlen(small_json), &lp, NULL));
}

static nextok_status run_eog(struct x *x, int k, struct rec *r)
{
    (void)r;
    x->msg = "(the vocabulary keeps no message)";
    if (k < 12) return nextok_vocab_add_eog(x->v, k + 1);
    return nextok_vocab_set_special_id(x->v, NEXTOK_VOCAB_EOT, 12);
}

static const struct scenario sc_eog = {
    "vocab_add_eog x12, set_special_id", 0, 13, small_vocab, run_eog, probe_vocab, free_all};

static void *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = __real_malloc((size_t)len + 1);
    if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
        __real_free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return p;
}

TEST(vocab_loads)
{
    static const struct {
        const char *name, *rel;
    } files[] = {
        {"load_file_ex: gpt2 tokenizer.json", "vocab/hf/gpt2/tokenizer.json"},
        {"load_file_ex: mistral dir (+ tokenizer_config.json)", "vocab/hf/mistral-7b-v0.1"},
        {"load_file_ex: gpt-2 GGUF", "vocab/gguf/ggml-vocab-gpt-2.gguf"},
        {"load_file_ex: phi-3 GGUF", "vocab/gguf/ggml-vocab-phi-3.gguf"},
        {"load_file_ex: o200k_base.tiktoken", "vocab/tiktoken/o200k_base.tiktoken"},
    };
    char paths[5][1024];
    for (size_t i = 0; i < 5; i++) {
        struct vocab_src src = {files[i].name,
                                fixture_path(paths[i], sizeof paths[i], files[i].rel), NULL, 0};
        struct scenario sc = sc_load;
        sc.name = files[i].name;
        SWEEP(&sc, &src);
    }
    static const char *const mem_names[] = {"load_mem_ex: gpt2 tokenizer.json bytes",
                                            "load_mem_ex: phi-3 GGUF bytes",
                                            "load_mem_ex: o200k tiktoken bytes"};
    static const int mem_of[] = {0, 3, 4};
    for (int i = 0; i < 3; i++) {
        struct vocab_src src = {mem_names[i], NULL, NULL, 0};
        src.data = read_all(paths[mem_of[i]], &src.size);
        CHECK_MSG(src.data != NULL, "%s: not readable", paths[mem_of[i]]);
        if (!src.data) continue;
        struct scenario sc = sc_load;
        sc.name = mem_names[i];
        SWEEP(&sc, &src);
        __real_free((void *)src.data);
    }
    SWEEP(&sc_eog, NULL);
}

/* gpt2, loaded with the hook: the sessions' and detokenizers' vocabulary. */
static struct nextok_vocab *g_v2;
static int32_t g_ids[8]; /* Ġthe Ġcat ĠHello , Ġworld 1 2 3 */

static int load_gpt2(void)
{
    char path[1024];
    struct nextok_vocab_load_params lp = nextok_vocab_load_default_params();
    lp.allocator = &g_hook;
    struct nextok_error e;
    fixture_path(path, sizeof path, "vocab/hf/gpt2/tokenizer.json");
    if (nextok_vocab_load_file_ex(&g_v2, path, &lp, &e) != NEXTOK_OK) {
        printf("  %s: %s\n", path, e.msg);
        return 0;
    }
    static const char *const texts[] = {"\xc4\xa0the",
                                        ("\xc4\xa0" "cat"), /* split: \xa0c would be one escape */
                                        "\xc4\xa0Hello",
                                        ",",
                                        "\xc4\xa0world",
                                        "1",
                                        "2",
                                        "3"};
    for (int i = 0; i < 8; i++) {
        g_ids[i] = nextok_vocab_find(g_v2, texts[i], strlen(texts[i]));
        if (g_ids[i] < 0) return 0;
    }
    return 1;
}

static nextok_status run_detok(struct x *x, int k, struct rec *r)
{
    if (k == 0) {
        struct nextok_decode_params dp = nextok_decode_default_params();
        dp.allocator = &g_hook;
        nextok_status rc = nextok_detok_init(&x->dt, g_v2, &dp, &x->err);
        if (rc != NEXTOK_OK) CHECK(x->dt == NULL);
        return note(x, rc, x->err.msg);
    }
    if (k == 1) {
        char buf[256];
        size_t n = 0;
        nextok_status rc = nextok_detok_feed(x->dt, g_ids + 2, 3, buf, sizeof buf, &n);
        if (rc == NEXTOK_OK) put(r, buf, n);
        return note(x, rc, nextok_detok_errmsg(x->dt));
    }
    nextok_status rc = nextok_detok_clone(x->dt, &x->dt2);
    if (rc != NEXTOK_OK) CHECK(x->dt2 == NULL);
    return note(x, rc, nextok_detok_errmsg(x->dt));
}

static void probe_detok(struct x *x, struct rec *r)
{
    struct nextok_detok *both[2] = {x->dt2, x->dt};
    for (int j = 0; j < 2; j++) {
        char buf[256];
        size_t n = 0, m = 0;
        if (!both[j]) continue;
        nextok_detok_feed(both[j], g_ids + 5, 3, buf, sizeof buf, &n);
        nextok_detok_flush(both[j], buf + n, sizeof buf - n, &m);
        put(r, buf, n + m);
    }
}

static const struct scenario sc_detok = {
    "detok_init, detok_feed, detok_clone", 0, 3, no_setup, run_detok, probe_detok, free_all};

/* The encoder, over Mistral's vocabulary (SentencePiece: its normalizer's
 * buffers and the merge loop's grow; no regex, so every build runs it):
 * init, then a text long enough to grow every buffer. */
static struct nextok_vocab *g_v3;

static int load_mistral(void)
{
    char path[1024];
    struct nextok_vocab_load_params lp = nextok_vocab_load_default_params();
    lp.allocator = &g_hook;
    struct nextok_error e;
    fixture_path(path, sizeof path, "vocab/hf/mistral-7b-v0.1/tokenizer.json");
    if (nextok_vocab_load_file_ex(&g_v3, path, &lp, &e) == NEXTOK_OK) return 1;
    printf("  %s: %s\n", path, e.msg);
    return 0;
}

static const char g_enc_text[] = "Hello, world! It's 2024 and \xc3\xa9t\xc3\xa9 </s> \xf0\x9f\xa6\x99 "
                                 "a longer word: supercalifragilisticexpialidocious";

static nextok_status run_encode(struct x *x, int k, struct rec *r)
{
    if (k == 0) {
        struct nextok_encode_params ep = nextok_encode_default_params();
        ep.allocator = &g_hook;
        ep.parse_special = true;
        nextok_status rc = nextok_encoder_init(&x->en, g_v3, &ep, &x->err);
        if (rc != NEXTOK_OK) CHECK(x->en == NULL);
        return note(x, rc, x->err.msg);
    }
    int32_t ids[64];
    size_t n = 0;
    nextok_status rc = nextok_encoder_encode(x->en, g_enc_text, sizeof g_enc_text - 1, ids, 64, &n);
    if (rc == NEXTOK_OK) put(r, ids, n * sizeof *ids);
    return note(x, rc, nextok_encoder_errmsg(x->en));
}

static void probe_encode(struct x *x, struct rec *r)
{
    int32_t ids[64];
    size_t n = 0;
    if (x->en && nextok_encoder_encode(x->en, g_enc_text, sizeof g_enc_text - 1, ids, 64, &n) == NEXTOK_OK)
        put(r, ids, n * sizeof *ids);
}

static const struct scenario sc_encode = {
    "encoder_init, encoder_encode", 0, 2, no_setup, run_encode, probe_encode, free_all};

/* Session steps: the logits of step k peak at one token, so the text is
 * " Hello, world123" and the regex [0-9]{3} ends it. */
static float g_srow[50257];

static const float *session_row(int step)
{
    static const int order[] = {2, 3, 4, 5, 6, 7};
    const int32_t n = nextok_vocab_n_tokens(g_v2);
    uint64_t s = (uint64_t)step * 0x9E3779B97F4A7C15u + 1;
    for (int32_t i = 0; i < n; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        g_srow[i] = (float)((double)(s >> 40) / 16777216.0 * 2.0 - 1.0);
    }
    g_srow[g_ids[order[step % 6]]] += 25.0f;
    return g_srow;
}

static const char *const sess_strings[] = {"\n\n", " world!"};

struct sess_cfg {
    struct nextok_sampling_params sp;
    struct nextok_stop_params stop;
    struct nextok_session_params ps;
};

static void sess_cfg(struct sess_cfg *c)
{
    c->sp = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    c->sp.n_vocab = nextok_vocab_n_tokens(g_v2);
    c->sp.seed = 21;
    c->sp.repeat_penalty = 1.1f;
    c->sp.frequency_penalty = 0.1f;
    c->sp.dry_multiplier = 0.5f;
    c->sp.no_repeat_ngram = 3;
    c->sp.temperature = 0.7f;
    c->sp.top_p = 0.95f;
    c->sp.min_tokens = 2;
    c->sp.allocator = NULL; /* the session's allocator is used, not this */
    c->stop = nextok_stop_default_params();
    c->stop.strings = sess_strings;
    c->stop.n_strings = 2;
#ifdef NEXTOK_HAVE_PCRE2
    c->stop.regex = "[0-9]{3}";
#endif
    c->stop.max_tokens = 30;
    c->ps = nextok_session_default_params();
    c->ps.sampling = &c->sp;
    c->ps.stop = &c->stop;
    c->ps.vocab = g_v2;
    c->ps.logprobs = true;
    c->ps.top_logprobs = 3;
    c->ps.logprobs_source = NEXTOK_LOGPROBS_PROCESSED;
    c->ps.allocator = &g_hook;
}

static void put_step(struct rec *r, nextok_status rc, const struct nextok_step_result *res)
{
    PUT(r, rc);
    if (rc != NEXTOK_OK) return;
    PUT(r, res->token);
    PUT(r, res->text_len);
    put(r, res->text, res->text_len);
    PUT(r, res->finish);
    PUT(r, res->which);
    PUT(r, res->logprob);
    PUT(r, res->rank);
    PUT(r, res->n_top);
    for (size_t i = 0; i < res->n_top; i++) {
        PUT(r, res->top[i].id);
        PUT(r, res->top[i].logprob);
    }
}

static nextok_status sess_step(struct nextok_session *s, int step, struct rec *r)
{
    struct nextok_step_result res;
    nextok_status rc = nextok_session_step(s, session_row(step), NEXTOK_DTYPE_F32, &res);
    put_step(r, rc, &res);
    return rc;
}

static nextok_status run_sess_init(struct x *x, int k, struct rec *r)
{
    (void)k, (void)r;
    struct sess_cfg c;
    sess_cfg(&c);
    nextok_status rc = nextok_session_init(&x->s, &c.ps, &x->err);
    if (rc != NEXTOK_OK) CHECK(x->s == NULL);
    return note(x, rc, x->err.msg);
}

/* The whole text: prompt, six steps (the last finishes), one refused step. */
static void sess_run(struct nextok_session *s, int from, struct rec *r)
{
    if (!s) return;
    if (from == 0) {
        nextok_status rc = nextok_session_set_prompt(s, g_ids, 2);
        PUT(r, rc);
    }
    for (int k = from; k < 7; k++) sess_step(s, k, r);
    int32_t n = nextok_session_n_tokens(s);
    PUT(r, n);
}

static void probe_sess(struct x *x, struct rec *r)
{
    if (x->s) stages_probe(nextok_session_chain(x->s), session_row(0), r);
    sess_run(x->s, 0, r);
}

static void sess_new(struct x *x)
{
    struct sess_cfg c;
    sess_cfg(&c);
    CHECK_OK(nextok_session_init(&x->s, &c.ps, NULL));
}

/* set_prompt, then steps; with finish_at, session_finish at that call. */
static nextok_status run_sess_steps(struct x *x, int k, struct rec *r, int finish_at)
{
    if (k == 0)
        return note(x, nextok_session_set_prompt(x->s, g_ids, 2), nextok_session_errmsg(x->s));
    x->absorb = true; /* a step samples: the fused path may fall back */
    if (k == finish_at) {
        struct nextok_step_result res;
        nextok_status rc = nextok_session_finish(x->s, &res);
        put_step(r, rc, &res);
        if (rc != NEXTOK_OK) r->n = 0;
        return note(x, rc, nextok_session_errmsg(x->s));
    }
    nextok_status rc = sess_step(x->s, k - 1, r);
    if (rc != NEXTOK_OK) r->n = 0;
    return note(x, rc, nextok_session_errmsg(x->s));
}

static nextok_status run_sess_to_stop(struct x *x, int k, struct rec *r)
{
    return run_sess_steps(x, k, r, -1);
}

static nextok_status run_sess_finish(struct x *x, int k, struct rec *r)
{
    return run_sess_steps(x, k, r, 5);
}

/* After the run: the chain's stages, n_tokens and the refused step. */
static void probe_sess_after(struct x *x, struct rec *r)
{
    stages_probe(nextok_session_chain(x->s), session_row(0), r);
    int32_t n = nextok_session_n_tokens(x->s);
    PUT(r, n);
    struct nextok_step_result res;
    nextok_status rc = nextok_session_step(x->s, session_row(0), NEXTOK_DTYPE_F32, &res);
    PUT(r, rc);
}

static void sess_started(struct x *x)
{
    sess_new(x);
    if (!x->s) return;
    struct rec scratch = {0};
    CHECK_OK(nextok_session_set_prompt(x->s, g_ids, 2));
    CHECK_OK(sess_step(x->s, 0, &scratch));
    CHECK_OK(sess_step(x->s, 1, &scratch));
    rec_free(&scratch);
}

static nextok_status run_sess_clone(struct x *x, int k, struct rec *r)
{
    (void)k, (void)r;
    nextok_status rc = nextok_session_clone(x->s, &x->s2);
    if (rc != NEXTOK_OK) CHECK(x->s2 == NULL);
    return note(x, rc, nextok_session_errmsg(x->s));
}

static void probe_sess_clone(struct x *x, struct rec *r)
{
    if (x->s2) stages_probe(nextok_session_chain(x->s2), session_row(0), r);
    stages_probe(nextok_session_chain(x->s), session_row(0), r);
    sess_run(x->s2, 2, r);
    sess_run(x->s, 2, r);
}

static const struct scenario sc_sess[] = {
    {"session_init", 0, 1, no_setup, run_sess_init, probe_sess, free_all},
    {"session_set_prompt + session_step x6 (regex stop)", 0, 7, sess_new, run_sess_to_stop,
     probe_sess_after, free_all},
    {"session_set_prompt, session_step x4, session_finish", 0, 6, sess_new, run_sess_finish,
     probe_sess_after, free_all},
    {"session_clone", 0, 1, sess_started, run_sess_clone, probe_sess_clone, free_all},
};

TEST(detok_sessions)
{
    if (!g_v2) {
        CHECK_MSG(0, "the gpt2 fixture did not load");
        return;
    }
    SWEEP(&sc_detok, NULL);
    if (g_v3) SWEEP(&sc_encode, NULL);
    else CHECK_MSG(0, "the mistral fixture did not load");
    for (size_t j = 0; j < sizeof sc_sess / sizeof sc_sess[0]; j++) SWEEP(&sc_sess[j], NULL);
}

/* ---- the C library's allocator: standalone samplers, the pool, no hook ------------ */

struct ctor {
    const char *name;
    nextok_status (*init)(struct nextok_sampler **out, struct nextok_error *err);
};

static nextok_status mk_bias(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_logit_bias(o, V, bias, 4, e);
}
static nextok_status mk_allowed(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_allowed(o, V, g_allowed, g_n_allowed, e);
}
static nextok_status mk_banned(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_banned(o, V, banned, 3, e);
}
static nextok_status mk_pen(struct nextok_sampler **o, struct nextok_error *e,
                            enum nextok_penalty_scope sc)
{
    struct nextok_penalty_params p = nextok_penalty_default_params(V);
    p.scope = sc;
    p.last_n = 8;
    p.repeat = 1.3f;
    p.frequency = 0.5f;
    p.presence = 0.25f;
    return nextok_sampler_init_penalties(o, &p, e);
}
static nextok_status mk_pen0(struct nextok_sampler **o, struct nextok_error *e)
{
    return mk_pen(o, e, NEXTOK_SCOPE_PROMPT_OUTPUT);
}
static nextok_status mk_pen1(struct nextok_sampler **o, struct nextok_error *e)
{
    return mk_pen(o, e, NEXTOK_SCOPE_WINDOW);
}
static nextok_status mk_pen2(struct nextok_sampler **o, struct nextok_error *e)
{
    return mk_pen(o, e, NEXTOK_SCOPE_HISTORY);
}
static nextok_status mk_dry(struct nextok_sampler **o, struct nextok_error *e)
{
    struct nextok_dry_params p = nextok_dry_default_params(V);
    p.multiplier = 0.8f;
    p.breaker_ids = brk_ids;
    p.breaker_off = brk_off;
    p.n_breakers = 2;
    return nextok_sampler_init_dry(o, &p, e);
}
static nextok_status mk_ngram(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_no_repeat_ngram(o, V, 2, e);
}
static nextok_status mk_min_tokens(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_min_tokens(o, V, 40, eog, 2, e);
}
static nextok_status mk_temp(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_temp(o, 0.7f, e);
}
static nextok_status mk_temp_ext(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_temp_ext(o, 0.8f, 0.3f, 1.0f, e);
}
static nextok_status mk_top_k(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_top_k(o, 20, NEXTOK_TIES_KEEP, e);
}
static nextok_status mk_top_p(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_top_p(o, 0.7f, NEXTOK_TIES_EXACT, 1, e);
}
static nextok_status mk_min_p(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_min_p(o, 0.1f, 1, e);
}
static nextok_status mk_typical(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_typical(o, 0.8f, 1, e);
}
static nextok_status mk_sigma(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_top_n_sigma(o, 1.5f, e);
}
static nextok_status mk_xtc(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_xtc(o, 1.0f, 0.02f, 1, 17, e);
}
static nextok_status mk_epsilon(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_epsilon(o, 0.001f, 1, e);
}
static nextok_status mk_eta(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_eta(o, 0.001f, 1, e);
}
static nextok_status mk_greedy(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_greedy(o, e);
}
static nextok_status mk_dist(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_dist(o, 23, e);
}
static nextok_status mk_gumbel(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_gumbel(o, 29, e);
}
static nextok_status mk_miro(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_mirostat(o, V, 31, 3.0f, 0.1f, 100, e);
}
static nextok_status mk_miro2(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_mirostat_v2(o, 37, 3.0f, 0.1f, e);
}
static nextok_status mk_bitmask(struct nextok_sampler **o, struct nextok_error *e)
{
    return nextok_sampler_init_token_bitmask(o, V, e);
}

/* A user sampler (nextok_sampler_init): keeps its ctx, clones by copying it. */
static const char *user_name(const struct nextok_sampler *s)
{
    (void)s;
    return "user";
}
static nextok_status user_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                uint64_t step)
{
    (void)s, (void)step;
    for (size_t i = 0; i < cur->size; i++) cur->data[i].logit *= 0.5f;
    return NEXTOK_OK;
}
static nextok_status user_clone(const struct nextok_sampler *s, struct nextok_sampler **out);
static const struct nextok_sampler_i user_iface = {user_name,  NULL, user_apply, NULL,
                                                   user_clone, NULL, NULL};
static nextok_status user_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    (void)s;
    return nextok_sampler_init(out, &user_iface, NULL);
}
static nextok_status mk_user(struct nextok_sampler **o, struct nextok_error *e)
{
    nextok_status rc = nextok_sampler_init(o, &user_iface, NULL);
    if (rc != NEXTOK_OK && e)
        snprintf(e->msg, sizeof e->msg, "nextok_sampler_init: %s", nextok_strerror(rc));
    return rc;
}

static const struct ctor ctors[] = {
    {"sampler_init_logit_bias", mk_bias},
    {"sampler_init_allowed", mk_allowed},
    {"sampler_init_banned", mk_banned},
    {"sampler_init_penalties (prompt+output)", mk_pen0},
    {"sampler_init_penalties (window)", mk_pen1},
    {"sampler_init_penalties (history)", mk_pen2},
    {"sampler_init_dry", mk_dry},
    {"sampler_init_no_repeat_ngram", mk_ngram},
    {"sampler_init_min_tokens", mk_min_tokens},
    {"sampler_init_temp", mk_temp},
    {"sampler_init_temp_ext", mk_temp_ext},
    {"sampler_init_top_k", mk_top_k},
    {"sampler_init_top_p", mk_top_p},
    {"sampler_init_min_p", mk_min_p},
    {"sampler_init_typical", mk_typical},
    {"sampler_init_top_n_sigma", mk_sigma},
    {"sampler_init_xtc", mk_xtc},
    {"sampler_init_epsilon", mk_epsilon},
    {"sampler_init_eta", mk_eta},
    {"sampler_init_greedy", mk_greedy},
    {"sampler_init_dist", mk_dist},
    {"sampler_init_gumbel", mk_gumbel},
    {"sampler_init_mirostat", mk_miro},
    {"sampler_init_mirostat_v2", mk_miro2},
    {"sampler_init_token_bitmask", mk_bitmask},
    {"sampler_init (a user sampler)", mk_user},
};

#define N_ACC 30
#define CANDS V /* every id: a processor's whole state shows */

/* Apply s to the first CANDS candidates of a row. */
static nextok_status apply_on(struct nextok_sampler *s, int row, struct rec *r)
{
    static struct nextok_token_data buf[CANDS];
    for (int i = 0; i < CANDS; i++) buf[i] = (struct nextok_token_data){i, g_rows[row][i], 0.0f};
    struct nextok_token_data_array a = {buf, CANDS, -1, false};
    nextok_sampler_set_token_bitmask(s, g_mask, NW); /* INVALID_ARG for other samplers */
    nextok_status rc = nextok_sampler_apply(s, &a, 5);
    if (rc == NEXTOK_OK) {
        PUT(r, a.size);
        PUT(r, a.selected);
        put(r, buf, a.size * sizeof *buf);
    }
    return rc;
}

/* init, set_prompt, accept x30, clone, apply on both. */
static nextok_status run_sampler(struct x *x, int k, struct rec *r)
{
    const struct ctor *c = x->arg;
    if (k == 0) {
        nextok_status rc = c->init(&x->sm, &x->err);
        if (rc != NEXTOK_OK) CHECK(x->sm == NULL);
        return note(x, rc, x->err.msg);
    }
    if (k == 1)
        return note(x, nextok_sampler_set_prompt(x->sm, g_prompt, 30),
                    nextok_sampler_errmsg(x->sm));
    if (k < 2 + N_ACC)
        return note(x, nextok_sampler_accept(x->sm, g_acc[k - 2]), nextok_sampler_errmsg(x->sm));
    if (k == 2 + N_ACC) {
        nextok_status rc = nextok_sampler_clone(x->sm, &x->sm2);
        if (rc != NEXTOK_OK) CHECK(x->sm2 == NULL);
        return note(x, rc, nextok_sampler_errmsg(x->sm));
    }
    struct nextok_sampler *s = k == 3 + N_ACC ? x->sm : x->sm2;
    return note(x, apply_on(s, 4, r), nextok_sampler_errmsg(s));
}

static void probe_sampler(struct x *x, struct rec *r)
{
    if (x->sm) apply_on(x->sm, 5, r);
    if (x->sm2) apply_on(x->sm2, 5, r);
}

static const struct scenario sc_sampler = {
    "", 1, 5 + N_ACC, no_setup, run_sampler, probe_sampler, free_all};

TEST(standalone_samplers)
{
    for (size_t i = 0; i < sizeof ctors / sizeof ctors[0]; i++) {
        struct scenario sc = sc_sampler;
        sc.name = ctors[i].name;
        SWEEP(&sc, &ctors[i]);
    }
}

static nextok_status run_pool(struct x *x, int k, struct rec *r)
{
    (void)k, (void)r;
    x->msg = "(a pool keeps no message)";
    nextok_status rc = nextok_threadpool_init(&x->pool, 3);
    if (rc != NEXTOK_OK) CHECK(x->pool == NULL);
    return rc;
}

static void probe_pool(struct x *x, struct rec *r)
{
    size_t n = nextok_threadpool_size(x->pool);
    PUT(r, n);
}

/* The default allocator end to end: a chain with none, through the wrappers. */
static struct cfg g_libc_cfg;

static nextok_status run_libc_chain(struct x *x, int k, struct rec *r)
{
    if (k == 0) return run_init_sampling(x, k, r);
    if (k == 1) return run_set_prompt(x, 0, r);
    return run_steps(x, k - 2, r);
}

static const struct scenario sc_libc[] = {
    {"threadpool_init", 1, 1, no_setup, run_pool, probe_pool, free_all},
    {"chain_init_sampling (no allocator), prompt, 4 steps", 1, 10, no_setup, run_libc_chain,
     probe_c, free_all},
};

TEST(libc_defaults)
{
    g_libc_cfg = g_cfg[0];
    g_libc_cfg.p.allocator = NULL;
    SWEEP(&sc_libc[0], NULL);
    SWEEP(&sc_libc[1], &g_libc_cfg);
}

/* ---- the API around the hook ------------------------------------------------------ */

static void *never_alloc(void *u, size_t n)
{
    (void)u, (void)n;
    return NULL;
}

/* Some but not all three functions: INVALID_ARG naming the field, at every
 * entry point; all three NULL: the C library's. The defaults leave it NULL. */
TEST(allocator_args)
{
    const struct nextok_allocator half = {never_alloc, NULL, NULL, NULL};
    const struct nextok_allocator none = {NULL, NULL, NULL, NULL};
    struct nextok_error e;
    struct nextok_chain_params cp = nextok_chain_default_params();
    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_HF);
    struct nextok_stop_params st = nextok_stop_default_params();
    struct nextok_session_params ps = nextok_session_default_params();
    struct nextok_decode_params dp = nextok_decode_default_params();
    struct nextok_vocab_load_params lp = nextok_vocab_load_default_params();
    CHECK(!cp.allocator && !sp.allocator && !st.allocator && !ps.allocator && !dp.allocator &&
          !lp.allocator);
    for (int p = 0; p < 3; p++)
        CHECK(nextok_sampling_default_params((enum nextok_profile)p).allocator == NULL);

    struct nextok_chain *c = (void *)1;
    cp.n_vocab = V;
    cp.allocator = &half;
    CHECK_EQ_INT(nextok_chain_init(&c, &cp, &e), NEXTOK_ERR_INVALID_ARG);
    CHECK(c == NULL && strstr(e.msg, "allocator"));
    sp.n_vocab = V;
    sp.allocator = &half;
    CHECK_EQ_INT(nextok_chain_init_sampling(&c, &sp, &e), NEXTOK_ERR_INVALID_ARG);
    CHECK(c == NULL && strstr(e.msg, "allocator"));
    struct nextok_stop *s = NULL;
    st.allocator = &half;
    CHECK_EQ_INT(nextok_stop_init(&s, &st, &e), NEXTOK_ERR_INVALID_ARG);
    CHECK(s == NULL && strstr(e.msg, "allocator"));
    struct nextok_detok *d = NULL;
    dp.allocator = &half;
    CHECK_EQ_INT(nextok_detok_init(&d, g_v2, &dp, &e), NEXTOK_ERR_INVALID_ARG);
    CHECK(d == NULL && strstr(e.msg, "allocator"));
    struct nextok_vocab *v = NULL;
    lp.allocator = &half;
    CHECK_EQ_INT(nextok_vocab_load_mem_ex(&v, small_json, strlen(small_json), &lp, &e),
                 NEXTOK_ERR_INVALID_ARG);
    CHECK(v == NULL && strstr(e.msg, "allocator"));
    CHECK_EQ_INT(nextok_vocab_load_file_ex(&v, "/nonexistent", &lp, &e), NEXTOK_ERR_INVALID_ARG);
    struct nextok_session *ss = NULL;
    sp.allocator = NULL;
    ps.sampling = &sp;
    ps.vocab = g_v2;
    ps.allocator = &half;
    if (g_v2) {
        sp.n_vocab = nextok_vocab_n_tokens(g_v2);
        CHECK_EQ_INT(nextok_session_init(&ss, &ps, &e), NEXTOK_ERR_INVALID_ARG);
        CHECK(ss == NULL && strstr(e.msg, "allocator"));
    }
    /* all three NULL: the C library's */
    cp.allocator = &none;
    CHECK_OK(nextok_chain_init(&c, &cp, &e));
    nextok_chain_free(c);
    lp.allocator = &none;
    CHECK_OK(nextok_vocab_load_mem_ex(&v, small_json, strlen(small_json), &lp, &e));
    nextok_vocab_free(v);
}

/* load_mem_ex picks the format by content, as load_file does. */
TEST(load_mem_by_content)
{
    struct nextok_vocab *v = NULL;
    struct nextok_error e;
    const char *tt = "YQ== 0\nYg== 1\n";
    CHECK_OK(nextok_vocab_load_mem_ex(&v, tt, strlen(tt), NULL, &e));
    CHECK(v && nextok_vocab_get_type(v) == NEXTOK_VOCAB_TYPE_TIKTOKEN &&
          nextok_vocab_n_tokens(v) == 2);
    nextok_vocab_free(v);
    char bom_json[sizeof small_json + 8];
    snprintf(bom_json, sizeof bom_json, "\xef\xbb\xbf \n%s", small_json);
    CHECK_OK(nextok_vocab_load_mem_ex(&v, bom_json, strlen(bom_json), NULL, &e));
    CHECK(v && nextok_vocab_get_type(v) == NEXTOK_VOCAB_TYPE_WPM && nextok_vocab_n_tokens(v) == 13);
    nextok_vocab_free(v);
    CHECK_EQ_INT(nextok_vocab_load_mem_ex(&v, "GGUF\x03", 5, NULL, &e), NEXTOK_ERR_FORMAT);
    CHECK(v == NULL);
    CHECK_EQ_INT(nextok_vocab_load_mem_ex(&v, NULL, 3, NULL, &e), NEXTOK_ERR_INVALID_ARG);
}

int main(int argc, char **argv)
{
    harness_init(argc, argv);
    make_data();
    make_cfgs();
    if (!load_gpt2()) printf("  the gpt2 fixture did not load\n");
    load_mistral();
    if (nextok_threadpool_init(&g_pool, 2) != NEXTOK_OK) printf("  no thread pool\n");
    if (GROUP("")) {
        RUN(allocator_args);
        RUN(load_mem_by_content);
        RUN(chain_init);
        RUN(chains);
        RUN(mirostat_failed_draw);
        RUN(stop);
        RUN(stop_regex_through_hook);
        RUN(detok_sessions);
        RUN(standalone_samplers);
        RUN(libc_defaults);
    }
    /* Every fixture loaded once per failure point: slow, the full tier. */
    if (GROUP("vocab")) RUN(vocab_loads);
    nextok_threadpool_free(g_pool);
    nextok_vocab_free(g_v2);
    nextok_vocab_free(g_v3);
    printf("  %ld failure points in all; hook blocks live at exit: %ld\n", g_total,
           atomic_load(&hk.live));
    if (atomic_load(&hk.live) != 0) {
        printf("FAIL: blocks of the hook never freed\n");
        return 1;
    }
    return harness_done();
}
