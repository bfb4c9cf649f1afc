/*
 * test_exact: the chain's final distribution equals the oracle's (oracle.h,
 * written from docs/semantics.md) over many random configurations.
 *
 * Two families of configurations:
 *   profile - nextok_chain_init_sampling() for vllm / hf / llama with random
 *             parameters, histories, bias and masks;
 *   manual  - random stage sequences built from nextok_sampler_init_*()
 *             (covers samplers and orders the profiles do not).
 * Every configuration runs twice: on whatever path the chain picks (the fused
 * engine where it applies) and forced onto the plain stage-by-stage chain
 * (no_fused, or an observer for profile chains).
 * Rows come in f32, f16 and bf16 (the oracle gets the exactly widened values)
 * and in peaked, flat, tie-heavy, all-equal, huge-magnitude, masked and narrow
 * shapes. For each configuration: same status; on success the same survivor
 * set and |p_chain - p_oracle| <= 1e-6 for every survivor; the token reported
 * by probs is a survivor and equals what sample() draws at the same step.
 * Configurations whose oracle cut decision is a near-tie (see oracle.h) are
 * skipped and counted; the skipped fraction must stay below 5%.
 */
#include <stdint.h>
#include <time.h>

#include "harness.h"
#include "nextok.h"
#include "oracle.h"

#define P_TOL 1e-6

/* The configuration generator and the work scale are oracle.h's tu_*. */

/* ---- logit rows --------------------------------------------------------- */

enum shape { SH_PEAKED, SH_FLAT, SH_TIES, SH_EQUAL, SH_HUGE, SH_MASKED, SH_NARROW, SH_SPIKY, SH_COUNT };
static const char *shape_name[SH_COUNT] = {"peaked", "flat", "ties", "equal", "huge", "masked", "narrow", "spiky"};

#define MAX_BOOST 8

struct row {
    int32_t V;
    enum nextok_dtype dtype;
    float *f32;   /* generated values                          */
    void *buf;    /* the row handed to the chain (dtype)        */
    float *wide;  /* buf widened back to f32: the oracle input  */
    int32_t boost[MAX_BOOST];
    int n_boost;
    int has_nan;
};

static void fill_shape(struct tu_gen *g, struct row *r, enum shape sh)
{
    const int32_t V = r->V;
    double c = tu_range(g, -5, 5);
    for (int32_t i = 0; i < V; i++) {
        switch (sh) {
        case SH_PEAKED: case SH_MASKED: r->f32[i] = (float)(2.5 * tu_norm(g)); break;
        case SH_FLAT: r->f32[i] = (float)tu_norm(g); break;
        case SH_TIES: r->f32[i] = (float)(0.5 * tu_int(g, 6)); break; /* six distinct values */
        case SH_EQUAL: r->f32[i] = (float)c; break;
        case SH_HUGE: r->f32[i] = (float)(tu_norm(g) * 1e37); break;
        case SH_NARROW: r->f32[i] = (float)(1e-3 * tu_norm(g)); break;
        case SH_SPIKY: r->f32[i] = (float)(tu_norm(g) - 20); break;
        default: break;
        }
    }
    r->n_boost = 1 + tu_int(g, MAX_BOOST);
    for (int b = 0; b < r->n_boost; b++) r->boost[b] = tu_int(g, V);
    if (sh == SH_PEAKED || sh == SH_MASKED)
        for (int b = 0; b < r->n_boost; b++) r->f32[r->boost[b]] += (float)tu_range(g, 5, 14);
    if (sh == SH_SPIKY)
        for (int b = 0; b < r->n_boost; b++) r->f32[r->boost[b]] = (float)tu_range(g, 0, 3);
    if (sh == SH_TIES) /* a tied block at the top */
        for (int b = 0; b < r->n_boost; b++) r->f32[r->boost[b]] = 4.0f;
    if (sh == SH_HUGE) /* saturation territory */
        for (int b = 0; b < r->n_boost; b++) r->f32[r->boost[b]] = (b & 1) ? FLT_MAX : 3.0e38f;
}

static void add_specials(struct tu_gen *g, struct row *r)
{
    int32_t V = r->V;
    r->has_nan = 0;
    int32_t n_ninf = V / 10 + 1;
    for (int32_t i = 0; i < n_ninf; i++) r->f32[tu_int(g, V)] = -INFINITY;
    if (tu_chance(g, 0.3)) /* forced tokens */
        for (int i = 0, n = 1 + tu_int(g, 3); i < n; i++) r->f32[tu_int(g, V)] = INFINITY;
    if (tu_chance(g, 0.4)) {
        for (int i = 0, n = 1 + tu_int(g, 4); i < n; i++) r->f32[tu_int(g, V)] = NAN;
        r->has_nan = 1;
    }
}

static void encode_row(struct row *r)
{
    const int32_t V = r->V;
    if (r->dtype == NEXTOK_DTYPE_F32) {
        memcpy(r->buf, r->f32, (size_t)V * sizeof(float));
        memcpy(r->wide, r->f32, (size_t)V * sizeof(float));
        return;
    }
    uint16_t *h = r->buf;
    for (int32_t i = 0; i < V; i++) {
        if (r->dtype == NEXTOK_DTYPE_F16) {
            h[i] = nextok_f32_to_f16(r->f32[i]);
            r->wide[i] = nextok_f16_to_f32(h[i]);
        } else {
            h[i] = nextok_f32_to_bf16(r->f32[i]);
            r->wide[i] = nextok_bf16_to_f32(h[i]);
        }
    }
}

static void row_alloc(struct row *r, int32_t V)
{
    r->V = V;
    r->f32 = malloc((size_t)V * sizeof(float));
    r->buf = malloc((size_t)V * sizeof(float));
    r->wide = malloc((size_t)V * sizeof(float));
}

static void row_free(struct row *r)
{
    free(r->f32);
    free(r->buf);
    free(r->wide);
}

static enum shape pick_shape(struct tu_gen *g)
{
    static const int w[SH_COUNT] = {30, 14, 14, 5, 7, 13, 7, 10};
    int x = tu_int(g, 100);
    for (int s = 0; s < SH_COUNT; s++) {
        if (x < w[s]) return (enum shape)s;
        x -= w[s];
    }
    return SH_PEAKED;
}

static void make_row(struct tu_gen *g, struct row *r, enum shape sh)
{
    static const enum nextok_dtype dt[3] = {NEXTOK_DTYPE_F32, NEXTOK_DTYPE_F16, NEXTOK_DTYPE_BF16};
    r->dtype = dt[tu_int(g, 3)];
    fill_shape(g, r, sh);
    r->has_nan = 0;
    if (sh == SH_MASKED) add_specials(g, r);
    encode_row(r);
}

/* ---- histories and id lists --------------------------------------------- */

#define MAX_HIST 320

struct hist {
    int32_t prompt[MAX_HIST], output[MAX_HIST];
    size_t n_prompt, n_output;
};

/* Ids that matter: boosted ones, a small low block, a few random ones. */
static int32_t pick_id(struct tu_gen *g, const struct row *r)
{
    int x = tu_int(g, 10);
    if (x < 4) return r->boost[tu_int(g, r->n_boost)];
    if (x < 8) return tu_int(g, r->V < 24 ? r->V : 24);
    return tu_int(g, r->V);
}

static void fill_seq(struct tu_gen *g, const struct row *r, int32_t *s, size_t n)
{
    if (tu_chance(g, 0.35)) { /* a repeated short pattern: n-grams and DRY bite */
        int32_t pat[4];
        size_t m = 2 + (size_t)tu_int(g, 3);
        for (size_t i = 0; i < m; i++) pat[i] = pick_id(g, r);
        for (size_t i = 0; i < n; i++) s[i] = tu_chance(g, 0.1) ? pick_id(g, r) : pat[i % m];
    } else {
        for (size_t i = 0; i < n; i++) s[i] = pick_id(g, r);
    }
}

static void make_hist(struct tu_gen *g, const struct row *r, struct hist *h)
{
    h->n_prompt = (size_t)tu_int(g, 4) == 0 ? 0 : (size_t)tu_int(g, 200);
    h->n_output = (size_t)tu_int(g, 3) == 0 ? 0 : (size_t)tu_int(g, 100);
    fill_seq(g, r, h->prompt, h->n_prompt);
    fill_seq(g, r, h->output, h->n_output);
}

/* ---- one configuration's shared data ------------------------------------ */

struct lists {
    struct nextok_logit_bias bias[16];
    size_t n_bias;
    int32_t *allowed;
    size_t n_allowed;
    int32_t banned[24];
    size_t n_banned;
    int32_t eog[3];
    size_t n_eog;
    int32_t brk_ids[8];
    size_t brk_off[4];
    size_t n_brk;
};

static void make_bias(struct tu_gen *g, const struct row *r, struct lists *l)
{
    l->n_bias = 1 + (size_t)tu_int(g, 12);
    for (size_t i = 0; i < l->n_bias; i++) {
        l->bias[i].token = (i > 0 && tu_chance(g, 0.1)) ? l->bias[i - 1].token : pick_id(g, r);
        l->bias[i].bias = tu_chance(g, 0.06) ? -INFINITY : (float)tu_range(g, -6, 6);
    }
}

static void make_allowed(struct tu_gen *g, const struct row *r, struct lists *l)
{
    size_t cap = (size_t)(r->V < 3000 ? r->V : 3000);
    l->n_allowed = 1 + (size_t)tu_int(g, (int32_t)cap);
    l->allowed = malloc(l->n_allowed * sizeof *l->allowed);
    for (size_t i = 0; i < l->n_allowed; i++) l->allowed[i] = pick_id(g, r);
}

static void make_banned(struct tu_gen *g, const struct row *r, struct lists *l)
{
    l->n_banned = 1 + (size_t)tu_int(g, 20);
    for (size_t i = 0; i < l->n_banned; i++) l->banned[i] = pick_id(g, r);
}

static void make_eog(struct tu_gen *g, const struct row *r, struct lists *l)
{
    l->n_eog = 1 + (size_t)tu_int(g, 2);
    l->eog[0] = r->boost[0];
    l->eog[1] = r->V - 1;
}

/* Breakers: often a recent history token (or pair), so that the breaker
 * limit on the match length actually binds. */
static void make_breakers(struct tu_gen *g, const struct row *r, const struct hist *h, struct lists *l)
{
    l->n_brk = (size_t)tu_int(g, 3);
    size_t at = 0;
    l->brk_off[0] = 0;
    for (size_t b = 0; b < l->n_brk; b++) {
        size_t m = 1 + (size_t)tu_int(g, 2);
        if (h->n_output > m && tu_chance(g, 0.6)) {
            size_t from = h->n_output - m - (size_t)tu_int(g, (int32_t)(h->n_output - m < 8 ? h->n_output - m : 8));
            for (size_t i = 0; i < m; i++) l->brk_ids[at++] = h->output[from + i];
        } else {
            for (size_t i = 0; i < m; i++) l->brk_ids[at++] = pick_id(g, r);
        }
        l->brk_off[b + 1] = at;
    }
}

/* ---- comparing distributions -------------------------------------------- */

static int cmp_td_id(const void *a, const void *b)
{
    const struct nextok_token_data *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_or_id(const void *a, const void *b)
{
    const struct or_cand *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* probs' contract: p descending, then id ascending. */
static int check_order(const struct nextok_token_data *d, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (d[i - 1].p < d[i].p || (d[i - 1].p == d[i].p && d[i - 1].id >= d[i].id)) return 0;
    return 1;
}

/* Same survivors and p within P_TOL. Writes a description of the first difference. */
static int same_dist(struct nextok_token_data *got, size_t n_got, struct or_result *want,
                     char *msg, size_t cap)
{
    qsort(got, n_got, sizeof *got, cmp_td_id);
    qsort(want->c, want->n, sizeof *want->c, cmp_or_id);
    size_t i = 0, j = 0;
    while (i < n_got || j < want->n) {
        if (j == want->n || (i < n_got && got[i].id < want->c[j].id)) {
            snprintf(msg, cap, "extra token %d (p %.9g) in chain; survivors chain %zu oracle %zu",
                     (int)got[i].id, (double)got[i].p, n_got, want->n);
            return 0;
        }
        if (i == n_got || got[i].id > want->c[j].id) {
            snprintf(msg, cap, "missing token %d (oracle p %.9g logit %.9g); survivors chain %zu oracle %zu",
                     (int)want->c[j].id, (double)want->c[j].p, (double)want->c[j].l, n_got, want->n);
            return 0;
        }
        if (fabs((double)got[i].p - (double)want->c[j].p) > P_TOL) {
            snprintf(msg, cap, "token %d: p chain %.9g oracle %.9g (oracle logit %.9g)",
                     (int)got[i].id, (double)got[i].p, (double)want->c[j].p, (double)want->c[j].l);
            return 0;
        }
        i++, j++;
    }
    return 1;
}

/* ---- per-run tallies ---------------------------------------------------- */

struct tally {
    int run, compared, skipped, errors_agreed, failed, fused;
};

/* Which engine a run exercises: whatever the chain picks (the fused path when
 * it applies), or the plain stage-by-stage chain. */
enum path { PATH_DEFAULT, PATH_PLAIN };
static const char *path_name[2] = {"default", "plain"};

static int n_fail_printed[2];

/* Print the first few mismatches of each family (profile, manual). */
static void report(const char *what, int id, const char *desc, const char *msg)
{
    if (n_fail_printed[what[0] == 'm']++ < 12) printf("  MISMATCH %s #%d [%s]: %s\n", what, id, desc, msg);
}

/*
 * Run the chain on the row after feeding the history, compare against the
 * oracle result. Returns 1 if compared, 0 if skipped, -1 on mismatch.
 */
static int check_chain(struct nextok_chain *c, const struct row *r, const struct hist *h,
                       uint64_t step, struct or_result *want, const char *desc, int id,
                       const char *what, struct tally *t)
{
    char msg[400] = "";
    int ok = 1;
    nextok_status rc = nextok_chain_set_prompt(c, h->prompt, h->n_prompt);
    for (size_t i = 0; i < h->n_output && rc == NEXTOK_OK; i++) rc = nextok_chain_accept(c, h->output[i]);
    nextok_chain_set_step(c, step);
    if (rc != NEXTOK_OK) {
        snprintf(msg, sizeof msg, "history: %s (%s)", nextok_status_name(rc), nextok_chain_errmsg(c));
        report(what, id, desc, msg);
        return -1;
    }
    struct nextok_token_data *out = malloc((size_t)r->V * sizeof *out);
    size_t n = 0;
    int32_t tok = -1, tok2 = -1;
    rc = nextok_chain_probs(c, r->buf, r->dtype, out, (size_t)r->V, &n, &tok);
    int fused = nextok_chain_last_fused(c);
    t->run++;
    t->fused += fused;
    if (want->ambiguous && rc == NEXTOK_OK && want->status == NEXTOK_OK) {
        t->skipped++;
        free(out);
        return 0;
    }
    if (rc != want->status) {
        snprintf(msg, sizeof msg, "status chain %s (%s), oracle %s", nextok_status_name(rc),
                 nextok_chain_errmsg(c), nextok_status_name(want->status));
        ok = 0;
    } else if (rc != NEXTOK_OK) {
        t->errors_agreed++;
    } else {
        if (!check_order(out, n)) snprintf(msg, sizeof msg, "probs output not sorted by p desc, id asc"), ok = 0;
        int in = 0;
        for (size_t i = 0; i < n; i++) in |= out[i].id == tok;
        if (ok && !in) snprintf(msg, sizeof msg, "selected token %d not among survivors", (int)tok), ok = 0;
        nextok_status rc2 = nextok_chain_sample(c, r->buf, r->dtype, &tok2);
        if (ok && (rc2 != NEXTOK_OK || tok2 != tok))
            snprintf(msg, sizeof msg, "sample() gave %d (%s), probs() selected %d", (int)tok2,
                     nextok_status_name(rc2), (int)tok), ok = 0;
        if (ok) ok = same_dist(out, n, want, msg, sizeof msg);
        t->compared++;
    }
    free(out);
    if (!ok) {
        char full[512];
        snprintf(full, sizeof full, "(ran %s) %s", fused ? "fused" : "plain", msg);
        t->failed++;
        report(what, id, desc, full);
        return -1;
    }
    return 1;
}

/* An observer that does nothing: installing one forces the plain chain. */
static void no_observer(size_t i, const char *name, const struct nextok_token_data_array *cur, void *user)
{
    (void)i, (void)name, (void)cur, (void)user;
}

/* ---- debugging one configuration ------------------------------------------
 * NEXTOK_EXACT_DEBUG="m,V,id" (manual) or "p,V,id" (profile) runs just that
 * configuration and prints both engines' survivors after every stage. */

static int dbg_family = -1, dbg_id = -1;
static int32_t dbg_V;

static int cmp_int(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void dbg_print(const char *who, size_t stage, const int32_t *ids, const float *l, size_t n)
{
    printf("    %s stage %zu: %zu left:", who, stage, n);
    int32_t *s = malloc((n ? n : 1) * sizeof *s);
    for (size_t i = 0; i < n; i++) s[i] = ids[i];
    qsort(s, n, sizeof *s, cmp_int);
    for (size_t i = 0; i < n && i < 40; i++) printf(" %d", (int)s[i]);
    printf("%s\n", n > 40 ? " ..." : "");
    if (l) {
        printf("      logits (first 12 in array order):");
        for (size_t i = 0; i < n && i < 12; i++) printf(" %d:%.9g", (int)ids[i], (double)l[i]);
        printf("\n");
    }
    free(s);
}

static void dbg_oracle(size_t stage, const struct or_cand *c, size_t n)
{
    int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    float *l = malloc((n ? n : 1) * sizeof *l);
    for (size_t i = 0; i < n; i++) ids[i] = c[i].id, l[i] = c[i].l;
    dbg_print("oracle", stage, ids, l, n);
    free(ids), free(l);
}

static void dbg_chain(size_t stage, const char *name, const struct nextok_token_data_array *cur, void *user)
{
    (void)user;
    int32_t *ids = malloc((cur->size ? cur->size : 1) * sizeof *ids);
    float *l = malloc((cur->size ? cur->size : 1) * sizeof *l);
    for (size_t i = 0; i < cur->size; i++) ids[i] = cur->data[i].id, l[i] = cur->data[i].logit;
    printf("    (%s)\n", name);
    dbg_print("chain ", stage, ids, l, cur->size);
    free(ids), free(l);
}

static void dbg_stage(const struct or_stage *s)
{
    printf("    stage kind %d:", (int)s->kind);
    for (size_t i = 0; i < s->n_bias; i++) printf(" %d%+g", (int)s->bias[i].token, (double)s->bias[i].bias);
    for (size_t i = 0; i < s->n_ids && i < 30; i++) printf(" #%d", (int)s->ids[i]);
    if (s->kind == OR_DRY)
        printf(" mult %g base %g allowed %d last_n %d breakers %zu", s->mult, s->base, (int)s->allowed_length,
               (int)s->last_n, s->n_brk);
    printf("\n");
}

static void dbg_hist(const struct hist *h)
{
    printf("    prompt:");
    for (size_t i = 0; i < h->n_prompt; i++) printf(" %d", (int)h->prompt[i]);
    printf("\n    output:");
    for (size_t i = 0; i < h->n_output; i++) printf(" %d", (int)h->output[i]);
    printf("\n");
}

static int dbg_on(int family, int32_t V, int id)
{
    return dbg_family == family && dbg_V == V && dbg_id == id;
}

/* ---- profile configurations --------------------------------------------- */

static const char *llama_names[9] = {"penalties", "dry", "top_n_sigma", "top_k", "typ_p",
                                     "top_p", "min_p", "xtc", "temperature"};

static void shuffle_names(struct tu_gen *g, char *buf, size_t cap)
{
    int idx[9];
    for (int i = 0; i < 9; i++) idx[i] = i;
    for (int i = 8; i > 0; i--) {
        int j = tu_int(g, i + 1), tmp = idx[i];
        idx[i] = idx[j], idx[j] = tmp;
    }
    buf[0] = 0;
    for (int i = 0; i < 9; i++) {
        strncat(buf, llama_names[idx[i]], cap - strlen(buf) - 1);
        if (i < 8) strncat(buf, ";", cap - strlen(buf) - 1);
    }
}

static float pick_float(struct tu_gen *g, double p_off, float off, double a, double b)
{
    return tu_chance(g, p_off) ? off : (float)tu_range(g, a, b);
}

static void gen_filters(struct tu_gen *g, struct nextok_sampling_params *sp, int32_t V)
{
    static const int32_t ks[] = {1, 2, 5, 20, 40, 100, 1000};
    sp->top_k = tu_chance(g, 0.35) ? 0 : tu_chance(g, 0.05) ? V + 5 : ks[tu_int(g, 7)];
    sp->top_k_ties = tu_chance(g, 0.5) ? NEXTOK_TIES_KEEP : NEXTOK_TIES_EXACT;
    sp->top_p = pick_float(g, 0.35, 1.0f, 0.1, 0.99);
    sp->min_p = tu_chance(g, 0.03) ? 1.0f : pick_float(g, 0.5, 0.0f, 0.001, 0.3);
    sp->typical_p = pick_float(g, 0.7, 1.0f, 0.2, 0.99);
    sp->top_n_sigma = pick_float(g, 0.75, 0.0f, 0.5, 4.0);
    sp->xtc_probability = pick_float(g, 0.75, 0.0f, 0.2, 1.0);
    sp->xtc_threshold = tu_chance(g, 0.1) ? 0.6f : (float)tu_range(g, 0.02, 0.4);
    sp->epsilon_cutoff = tu_chance(g, 0.8) ? 0.0f : (float)exp(tu_range(g, log(1e-6), log(3e-3)));
    sp->eta_cutoff = tu_chance(g, 0.8) ? 0.0f : (float)exp(tu_range(g, log(1e-5), log(1e-2)));
    static const size_t mks[] = {0, 1, 1, 1, 1, 2, 5, 50};
    sp->min_keep = mks[tu_int(g, 8)];
}

static void gen_processors(struct tu_gen *g, struct nextok_sampling_params *sp, const struct row *r,
                           const struct hist *h, struct lists *l)
{
    if (tu_chance(g, 0.5)) {
        sp->repeat_penalty = pick_float(g, 0.3, 1.0f, 1.05, 1.8);
        sp->frequency_penalty = pick_float(g, 0.4, 0.0f, 0.05, 1.5);
        sp->presence_penalty = pick_float(g, 0.4, 0.0f, 0.05, 1.5);
    }
    static const int32_t lastn[] = {0, 8, 64, 512};
    sp->penalty_last_n = lastn[tu_int(g, 4)];
    if (tu_chance(g, 0.2)) {
        make_breakers(g, r, h, l);
        static const int32_t dlast[] = {-1, 32, 256};
        sp->dry_multiplier = (float)tu_range(g, 0.3, 1.5);
        sp->dry_base = (float)tu_range(g, 1.2, 2.5);
        sp->dry_allowed_length = 1 + tu_int(g, 3);
        sp->dry_penalty_last_n = dlast[tu_int(g, 3)];
        sp->dry_breaker_ids = l->brk_ids;
        sp->dry_breaker_off = l->brk_off;
        sp->dry_n_breakers = l->n_brk;
    }
    if (tu_chance(g, 0.15)) sp->no_repeat_ngram = 1 + tu_int(g, 3);
    if (tu_chance(g, 0.4)) make_bias(g, r, l), sp->logit_bias = l->bias, sp->n_logit_bias = l->n_bias;
    if (tu_chance(g, 0.15)) make_allowed(g, r, l), sp->allowed_ids = l->allowed, sp->n_allowed = l->n_allowed;
    if (tu_chance(g, 0.25)) make_banned(g, r, l), sp->banned_ids = l->banned, sp->n_banned = l->n_banned;
    if (tu_chance(g, 0.2)) {
        make_eog(g, r, l);
        sp->min_tokens = 1 + tu_int(g, (int32_t)h->n_output + 3);
        sp->eog_ids = l->eog;
        sp->n_eog = l->n_eog;
    }
}

/* Everything off, so the profile's own defaults do not leak into a config. */
static void params_clear(struct nextok_sampling_params *sp)
{
    sp->temperature = 1.0f;
    sp->dynatemp_range = 0.0f;
    sp->dynatemp_exponent = 1.0f;
    sp->top_k = 0;
    sp->top_p = 1.0f;
    sp->min_p = 0.0f;
    sp->typical_p = 1.0f;
    sp->top_n_sigma = 0.0f;
    sp->xtc_probability = 0.0f;
    sp->xtc_threshold = 0.1f;
    sp->epsilon_cutoff = 0.0f;
    sp->eta_cutoff = 0.0f;
    sp->min_keep = 1;
    sp->repeat_penalty = 1.0f;
    sp->frequency_penalty = 0.0f;
    sp->presence_penalty = 0.0f;
    sp->penalty_last_n = 64;
    sp->dry_multiplier = 0.0f;
    sp->dry_base = 1.75f;
    sp->dry_allowed_length = 2;
    sp->dry_penalty_last_n = -1;
    sp->dry_breaker_ids = NULL;
    sp->dry_breaker_off = NULL;
    sp->dry_n_breakers = 0;
    sp->no_repeat_ngram = 0;
    sp->mirostat = 0;
    sp->logit_bias = NULL;
    sp->n_logit_bias = 0;
    sp->allowed_ids = NULL;
    sp->n_allowed = 0;
    sp->banned_ids = NULL;
    sp->n_banned = 0;
    sp->min_tokens = 0;
    sp->eog_ids = NULL;
    sp->n_eog = 0;
    sp->samplers = NULL;
    sp->nan_policy = NEXTOK_NAN_ERROR;
}

static void gen_profile_params(struct tu_gen *g, struct nextok_sampling_params *sp, const struct row *r,
                               const struct hist *h, struct lists *l, char *order, size_t order_cap)
{
    static const enum nextok_profile profs[3] = {NEXTOK_PROFILE_VLLM, NEXTOK_PROFILE_HF, NEXTOK_PROFILE_LLAMA};
    enum nextok_profile pr = profs[tu_int(g, 3)];
    *sp = nextok_sampling_default_params(pr);
    sp->profile = pr;
    params_clear(sp);
    sp->n_vocab = r->V;
    sp->seed = tu_u64(g) >> (tu_int(g, 2) * 40); /* small and large seeds */
    int x = tu_int(g, 20);
    sp->selector = x < 9 ? NEXTOK_SELECTOR_CATEGORICAL : x < 18 ? NEXTOK_SELECTOR_GUMBEL : NEXTOK_SELECTOR_GREEDY;
    sp->temperature = tu_chance(g, 0.08) ? 0.0f : pick_float(g, 0.15, 1.0f, 0.3, 1.8);
    if (pr == NEXTOK_PROFILE_LLAMA && sp->temperature > 0 && tu_chance(g, 0.25)) {
        sp->dynatemp_range = (float)tu_range(g, 0.1, 0.8);
        sp->dynatemp_exponent = tu_chance(g, 0.3) ? 1.0f : (float)tu_range(g, 0.5, 2.0);
    }
    gen_filters(g, sp, r->V);
    gen_processors(g, sp, r, h, l);
    if (pr == NEXTOK_PROFILE_LLAMA && tu_chance(g, 0.2)) shuffle_names(g, order, order_cap), sp->samplers = order;
    if (r->has_nan) sp->nan_policy = tu_chance(g, 0.8) ? NEXTOK_NAN_AS_NEG_INF : NEXTOK_NAN_ERROR;
}

static void describe_params(const struct nextok_sampling_params *sp, const struct row *r,
                            enum shape sh, const struct hist *h, uint64_t step, char *buf, size_t cap)
{
    static const char *dts[3] = {"f32", "f16", "bf16"};
    snprintf(buf, cap,
             "%s V=%d %s %s sel=%d seed=%llu step=%llu t=%g dyn=%g/%g k=%d ties=%d p=%g minp=%g typ=%g "
             "sigma=%g xtc=%g/%g eps=%g eta=%g mk=%zu rep=%g freq=%g pres=%g lastn=%d dry=%g "
             "ngram=%d bias=%zu allowed=%zu banned=%zu mintok=%d hist=%zu+%zu order=%s nan=%d",
             nextok_profile_name(sp->profile), (int)r->V, shape_name[sh], dts[r->dtype], (int)sp->selector,
             (unsigned long long)sp->seed, (unsigned long long)step, sp->temperature, sp->dynatemp_range,
             sp->dynatemp_exponent, (int)sp->top_k, (int)sp->top_k_ties, sp->top_p, sp->min_p,
             sp->typical_p, sp->top_n_sigma, sp->xtc_probability, sp->xtc_threshold,
             sp->epsilon_cutoff, sp->eta_cutoff, sp->min_keep, sp->repeat_penalty,
             sp->frequency_penalty, sp->presence_penalty, (int)sp->penalty_last_n, sp->dry_multiplier,
             (int)sp->no_repeat_ngram, sp->n_logit_bias, sp->n_allowed, sp->n_banned,
             (int)sp->min_tokens, h->n_prompt, h->n_output, sp->samplers ? sp->samplers : "-",
             (int)sp->nan_policy);
}

static uint64_t pick_step(struct tu_gen *g, const struct hist *h)
{
    /* the natural step after the accepts, or an arbitrary one */
    return tu_chance(g, 0.5) ? h->n_output : tu_u64(g) >> tu_int(g, 64);
}

static void run_profile_config(int32_t V, int id, struct row *r, struct tally *t)
{
    struct tu_gen g = {0x5eed0000ull + (uint64_t)id * 7919u + (uint64_t)V};
    enum shape sh = pick_shape(&g);
    make_row(&g, r, sh);
    struct hist h;
    make_hist(&g, r, &h);
    struct lists l;
    memset(&l, 0, sizeof l);
    char order[160];
    struct nextok_sampling_params sp;
    gen_profile_params(&g, &sp, r, &h, &l, order, sizeof order);
    uint64_t step = pick_step(&g, &h);
    char desc[640];
    describe_params(&sp, r, sh, &h, step, desc, sizeof desc);

    struct or_stage st[OR_MAX_STAGES];
    size_t n_st;
    struct or_hist oh = {h.prompt, h.n_prompt, h.output, h.n_output, step};
    struct or_result want;
    CHECK(or_profile_stages(&sp, st, &n_st) == 0);
    int dbg = dbg_on(0, V, id);
    if (dbg) {
        printf("  DEBUG profile #%d [%s]\n", id, desc);
        for (size_t i = 0; i < n_st; i++) dbg_stage(&st[i]);
        dbg_hist(&h);
        or_trace = dbg_oracle;
    }
    or_run(r->wide, V, sp.nan_policy, st, n_st, &oh, &want);
    or_trace = NULL;

    for (int path = PATH_DEFAULT; path <= PATH_PLAIN; path++) {
        struct nextok_chain *c = NULL;
        struct nextok_error err = {0};
        nextok_status rc = nextok_chain_init_sampling(&c, &sp, &err);
        if (rc != NEXTOK_OK) {
            char msg[320];
            snprintf(msg, sizeof msg, "init_sampling: %s (%s)", nextok_status_name(rc), err.msg);
            report("profile", id, desc, msg);
            t->failed++;
            CHECK_MSG(0, "profile config #%d: init_sampling failed", id);
        } else {
            if (path == PATH_PLAIN) nextok_chain_set_observer(c, dbg ? dbg_chain : no_observer, NULL);
            if (check_chain(c, r, &h, step, &want, desc, id, "profile", t) < 0)
                CHECK_MSG(0, "profile config #%d (%s path) differs from the oracle", id, path_name[path]);
        }
        nextok_chain_free(c);
    }
    or_result_free(&want);
    free(l.allowed);
}

/* ---- manual chains -------------------------------------------------------- */

static nextok_status make_sampler(const struct or_stage *s, int32_t V, uint64_t seed, float tau,
                                  struct nextok_sampler **out, struct nextok_error *err)
{
    switch (s->kind) {
    case OR_BIAS: return nextok_sampler_init_logit_bias(out, V, s->bias, s->n_bias, err);
    case OR_ALLOWED: return nextok_sampler_init_allowed(out, V, s->ids, s->n_ids, err);
    case OR_BANNED: return nextok_sampler_init_banned(out, V, s->ids, s->n_ids, err);
    case OR_MIN_TOKENS: return nextok_sampler_init_min_tokens(out, V, s->k, s->ids, s->n_ids, err);
    case OR_NGRAM: return nextok_sampler_init_no_repeat_ngram(out, V, s->k, err);
    case OR_PENALTIES: {
        struct nextok_penalty_params pp = nextok_penalty_default_params(V);
        pp.scope = s->scope, pp.last_n = s->last_n, pp.repeat = s->repeat;
        pp.frequency = s->freq, pp.presence = s->presence;
        return nextok_sampler_init_penalties(out, &pp, err);
    }
    case OR_DRY: {
        struct nextok_dry_params dp = nextok_dry_default_params(V);
        dp.multiplier = s->mult, dp.base = s->base, dp.allowed_length = s->allowed_length;
        dp.last_n = s->last_n, dp.breaker_ids = s->brk_ids, dp.breaker_off = s->brk_off;
        dp.n_breakers = s->n_brk;
        return nextok_sampler_init_dry(out, &dp, err);
    }
    case OR_TEMP: return nextok_sampler_init_temp(out, s->t, err);
    case OR_TEMP_EXT: return nextok_sampler_init_temp_ext(out, s->t, s->range, s->exponent, err);
    case OR_TOP_K: return nextok_sampler_init_top_k(out, s->k, s->ties, err);
    case OR_TOP_P: return nextok_sampler_init_top_p(out, s->p, s->ties, s->min_keep, err);
    case OR_MIN_P: return nextok_sampler_init_min_p(out, s->p, s->min_keep, err);
    case OR_TYPICAL: return nextok_sampler_init_typical(out, s->p, s->min_keep, err);
    case OR_SIGMA: return nextok_sampler_init_top_n_sigma(out, s->p, err);
    case OR_XTC: return nextok_sampler_init_xtc(out, s->prob, s->threshold, s->min_keep, s->seed, err);
    case OR_EPSILON: return nextok_sampler_init_epsilon(out, s->p, s->min_keep, err);
    case OR_ETA: return nextok_sampler_init_eta(out, s->p, s->min_keep, err);
    case OR_MIROSTAT_V2: return nextok_sampler_init_mirostat_v2(out, seed, tau, 0.1f, err);
    case OR_SOFTMAX: return (seed & 1) ? nextok_sampler_init_gumbel(out, seed, err)
                                       : nextok_sampler_init_dist(out, seed, err);
    case OR_GREEDY: return nextok_sampler_init_greedy(out, err);
    }
    return NEXTOK_ERR_INTERNAL;
}

static struct or_stage gen_stage(struct tu_gen *g, const struct row *r, const struct hist *h, struct lists *l)
{
    struct or_stage s;
    memset(&s, 0, sizeof s);
    static const size_t mks[] = {0, 1, 1, 2, 5, 50};
    s.min_keep = mks[tu_int(g, 6)];
    s.ties = tu_chance(g, 0.5) ? NEXTOK_TIES_KEEP : NEXTOK_TIES_EXACT;
    switch (tu_int(g, 18)) {
    case 0: s.kind = OR_BIAS; make_bias(g, r, l); s.bias = l->bias, s.n_bias = l->n_bias; break;
    case 1: s.kind = OR_BANNED; make_banned(g, r, l); s.ids = l->banned, s.n_ids = l->n_banned; break;
    case 2: s.kind = OR_MIN_TOKENS; make_eog(g, r, l); s.ids = l->eog, s.n_ids = l->n_eog;
            s.k = 1 + tu_int(g, (int32_t)h->n_output + 3); break;
    case 3: s.kind = OR_NGRAM; s.k = 1 + tu_int(g, 4); break;
    case 4: s.kind = OR_PENALTIES; s.scope = (enum nextok_penalty_scope)tu_int(g, 3);
            s.last_n = 1 + tu_int(g, 200); s.repeat = (float)tu_range(g, 0.7, 1.8);
            s.freq = pick_float(g, 0.3, 0, -0.5, 1.5); s.presence = pick_float(g, 0.3, 0, -0.5, 1.5); break;
    case 5: case 17: s.kind = OR_DRY; make_breakers(g, r, h, l); s.mult = (float)tu_range(g, 0.2, 2);
            s.base = (float)tu_range(g, 1.1, 2.5); s.allowed_length = 1 + tu_int(g, 3);
            s.last_n = tu_chance(g, 0.5) ? -1 : 1 + tu_int(g, 300);
            s.brk_ids = l->brk_ids, s.brk_off = l->brk_off, s.n_brk = l->n_brk; break;
    case 6: s.kind = OR_TEMP; s.t = tu_chance(g, 0.1) ? 0.0f : (float)tu_range(g, 0.25, 3); break;
    case 7: s.kind = OR_TEMP_EXT; s.t = (float)tu_range(g, 0.3, 2); s.range = pick_float(g, 0.2, 0, 0.05, 1.5);
            s.exponent = (float)tu_range(g, 0.3, 3); break;
    case 8: s.kind = OR_TOP_K; s.k = 1 + tu_int(g, tu_chance(g, 0.5) ? 10 : 2000); break;
    case 9: s.kind = OR_TOP_P; s.p = (float)tu_range(g, 0.05, 0.999); break;
    case 10: s.kind = OR_MIN_P; s.p = (float)tu_range(g, 0.001, 0.9); break;
    case 11: s.kind = OR_TYPICAL; s.p = (float)tu_range(g, 0.05, 0.99); break;
    case 12: s.kind = OR_SIGMA; s.p = (float)tu_range(g, 0.1, 4); break;
    case 13: s.kind = OR_XTC; s.prob = (float)tu_range(g, 0.3, 1); s.threshold = (float)tu_range(g, 0.01, 0.5);
             s.seed = tu_u64(g); break;
    case 14: s.kind = OR_EPSILON; s.p = (float)exp(tu_range(g, log(1e-7), log(0.05))); break;
    case 15: s.kind = OR_ETA; s.p = (float)exp(tu_range(g, log(1e-6), log(0.05))); break;
    case 16: s.kind = OR_ALLOWED; make_allowed(g, r, l); s.ids = l->allowed, s.n_ids = l->n_allowed; break;
    }
    return s;
}

#define MAX_MANUAL 6

/* The library chain for a manual stage list; NULL (reported) on failure. */
static struct nextok_chain *build_manual(const struct nextok_chain_params *cp, const struct or_stage *st,
                                         size_t n, uint64_t seed, float tau, const char *desc, int id,
                                         struct tally *t)
{
    struct nextok_chain *c = NULL;
    struct nextok_error err = {0};
    if (nextok_chain_init(&c, cp, &err) != NEXTOK_OK) return NULL;
    for (size_t i = 0; i < n; i++) {
        struct nextok_sampler *s = NULL;
        nextok_status rc = make_sampler(&st[i], cp->n_vocab, seed, tau, &s, &err);
        if (rc == NEXTOK_OK) rc = nextok_chain_add(c, s);
        if (rc != NEXTOK_OK) {
            char msg[320];
            snprintf(msg, sizeof msg, "stage %zu (kind %d) init: %s (%s)", i, (int)st[i].kind,
                     nextok_status_name(rc), err.msg);
            report("manual", id, desc, msg);
            t->failed++;
            nextok_sampler_free(s);
            nextok_chain_free(c);
            return NULL;
        }
    }
    return c;
}

static void run_manual_config(int32_t V, int id, struct row *r, struct tally *t)
{
    struct tu_gen g = {0xc4a10000ull + (uint64_t)id * 104729u + (uint64_t)V};
    enum shape sh = pick_shape(&g);
    make_row(&g, r, sh);
    struct hist h;
    make_hist(&g, r, &h);
    struct lists l[MAX_MANUAL];
    memset(l, 0, sizeof l);
    struct or_stage st[MAX_MANUAL + 1];
    size_t n = 1 + (size_t)tu_int(&g, MAX_MANUAL);
    for (size_t i = 0; i < n; i++) st[i] = gen_stage(&g, r, &h, &l[i]);
    uint64_t seed = tu_u64(&g);
    float tau = (float)tu_range(&g, 0.5, 6);
    int sel = tu_int(&g, 10);
    st[n].kind = sel < 7 ? OR_SOFTMAX : sel < 9 ? OR_GREEDY : OR_MIROSTAT_V2;
    st[n].mu = 2 * tau;
    n++;
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    if (r->has_nan) cp.nan_policy = tu_chance(&g, 0.8) ? NEXTOK_NAN_AS_NEG_INF : NEXTOK_NAN_ERROR;
    uint64_t step = pick_step(&g, &h);

    char desc[640];
    int at = snprintf(desc, sizeof desc, "V=%d %s dtype=%d nan=%d seed=%llu step=%llu hist=%zu+%zu stages:",
                      (int)V, shape_name[sh], (int)r->dtype, (int)cp.nan_policy,
                      (unsigned long long)seed, (unsigned long long)step, h.n_prompt, h.n_output);
    for (size_t i = 0; i < n && at < (int)sizeof desc - 80; i++)
        at += snprintf(desc + at, sizeof desc - (size_t)at, " [kind=%d t=%g r=%g e=%g p=%g k=%d ties=%d mk=%zu x=%g/%g pen=%d:%g/%g/%g/%d]",
                       (int)st[i].kind, st[i].t, st[i].range, st[i].exponent, st[i].p, (int)st[i].k, (int)st[i].ties,
                       st[i].min_keep, st[i].prob, st[i].threshold, (int)st[i].scope, st[i].repeat,
                       st[i].freq, st[i].presence, (int)st[i].last_n);

    struct or_hist oh = {h.prompt, h.n_prompt, h.output, h.n_output, step};
    struct or_result want;
    int dbg = dbg_on(1, V, id);
    if (dbg) {
        printf("  DEBUG manual #%d [%s]\n", id, desc);
        for (size_t i = 0; i < n; i++) dbg_stage(&st[i]);
        dbg_hist(&h);
        or_trace = dbg_oracle;
    }
    or_run(r->wide, V, cp.nan_policy, st, n, &oh, &want);
    or_trace = NULL;

    for (int path = PATH_DEFAULT; path <= PATH_PLAIN; path++) {
        cp.no_fused = path == PATH_PLAIN;
        struct nextok_chain *c = build_manual(&cp, st, n, seed, tau, desc, id, t);
        if (!c) {
            CHECK_MSG(0, "manual config #%d: a sampler constructor failed", id);
            continue;
        }
        if (dbg && path == PATH_PLAIN) nextok_chain_set_observer(c, dbg_chain, NULL);
        if (check_chain(c, r, &h, step, &want, desc, id, "manual", t) < 0)
            CHECK_MSG(0, "manual config #%d (%s path) differs from the oracle", id, path_name[path]);
        nextok_chain_free(c);
    }
    or_result_free(&want);
    for (size_t i = 0; i < MAX_MANUAL; i++) free(l[i].allowed);
}

/* ---- the random sweeps -------------------------------------------------- */

struct sweep { int32_t V; int n_profile, n_manual; };

static void print_tally(const char *what, const struct tally *t, double secs)
{
    printf("  %-8s runs %4d (fused %4d) compared %4d errors-agreed %3d skipped(near-tie) %3d failed %3d  (%.1fs)\n",
           what, t->run, t->fused, t->compared, t->errors_agreed, t->skipped, t->failed, secs);
}

static void sweep(const struct sweep *sw, int n_sw)
{
    struct tally all = {0};
    for (int s = 0; s < n_sw; s++) {
        struct row r;
        row_alloc(&r, sw[s].V);
        struct tally tp = {0}, tm = {0};
        clock_t t0 = clock();
        for (int i = 0; i < tu_scaled(sw[s].n_profile); i++)
            if (dbg_family < 0 || dbg_on(0, sw[s].V, i)) run_profile_config(sw[s].V, i, &r, &tp);
        clock_t t1 = clock();
        for (int i = 0; i < tu_scaled(sw[s].n_manual); i++)
            if (dbg_family < 0 || dbg_on(1, sw[s].V, i)) run_manual_config(sw[s].V, i, &r, &tm);
        clock_t t2 = clock();
        printf(" V=%d\n", (int)sw[s].V);
        print_tally("profile", &tp, (double)(t1 - t0) / CLOCKS_PER_SEC);
        print_tally("manual", &tm, (double)(t2 - t1) / CLOCKS_PER_SEC);
        all.run += tp.run + tm.run, all.compared += tp.compared + tm.compared;
        all.skipped += tp.skipped + tm.skipped, all.failed += tp.failed + tm.failed;
        all.errors_agreed += tp.errors_agreed + tm.errors_agreed;
        all.fused += tp.fused + tm.fused;
        row_free(&r);
    }
    printf(" total: %d runs (%d on the fused path), %d distributions compared, %d errors agreed, "
           "%d near-tie skips, %d failed\n",
           all.run, all.fused, all.compared, all.errors_agreed, all.skipped, all.failed);
    CHECK_EQ_INT(all.failed, 0);
    CHECK(all.run > 0);
    CHECK_MSG(all.skipped * 20 < all.run, "near-tie skips %d of %d configs (>= 5%%)", all.skipped, all.run);
    CHECK_MSG(all.compared * 2 > all.run, "only %d of %d configs compared a distribution", all.compared, all.run);
}

TEST(random_small_vocab)
{
    static const struct sweep sw[] = {{7, 300, 300}, {64, 300, 300}, {1000, 200, 200}};
    sweep(sw, 3);
}

TEST(random_32000)
{
    static const struct sweep sw[] = {{32000, 500, 300}};
    sweep(sw, 1);
}

TEST(random_128256)
{
    static const struct sweep sw[] = {{128256, 80, 40}};
    sweep(sw, 1);
}

TEST(random_256000)
{
    static const struct sweep sw[] = {{256000, 50, 25}};
    sweep(sw, 1);
}

/* ---- hand-computed anchors: the oracle and the chain against the spec ---- */

/* logits {3, 2, 2, 1, 0, -1}; softmax = {0.5157, 0.1897, 0.1897, 0.0698, 0.0257, 0.0094} */
static const float anchor_row[6] = {3, 2, 2, 1, 0, -1};

/* Run one stage + dist both ways; check both against the expected id set. */
static void anchor(struct or_stage s, const int32_t *want_ids, size_t n_want)
{
    struct or_stage st[2] = {s, {.kind = OR_SOFTMAX}};
    struct or_hist oh = {0};
    struct or_result res;
    or_run(anchor_row, 6, NEXTOK_NAN_ERROR, st, 2, &oh, &res);
    CHECK_EQ_INT(res.status, NEXTOK_OK);
    CHECK_EQ_INT(res.n, n_want);
    qsort(res.c, res.n, sizeof *res.c, cmp_or_id);
    for (size_t i = 0; i < res.n && i < n_want; i++) CHECK_EQ_INT(res.c[i].id, want_ids[i]);

    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = 6;
    struct nextok_chain *c = NULL;
    struct nextok_sampler *smp = NULL;
    struct nextok_error err = {0};
    CHECK_OK(nextok_chain_init(&c, &cp, &err));
    CHECK_OK(make_sampler(&s, 6, 2, 1.0f, &smp, &err));
    if (c && smp) CHECK_OK(nextok_chain_add(c, smp));
    CHECK_OK(make_sampler(&st[1], 6, 2, 1.0f, &smp, &err));
    if (c && smp) CHECK_OK(nextok_chain_add(c, smp));
    struct nextok_token_data out[6];
    size_t n = 0;
    CHECK_OK(nextok_chain_probs(c, anchor_row, NEXTOK_DTYPE_F32, out, 6, &n, NULL));
    CHECK_EQ_INT(n, n_want);
    qsort(out, n, sizeof *out, cmp_td_id);
    for (size_t i = 0; i < n && i < n_want; i++) {
        CHECK_EQ_INT(out[i].id, want_ids[i]);
        CHECK_NEAR(out[i].p, res.c[i].p, P_TOL);
    }
    nextok_chain_free(c);
    or_result_free(&res);
}

TEST(hand_anchors)
{
    static const int32_t k01[] = {0, 1}, k012[] = {0, 1, 2}, k0[] = {0}, k0123[] = {0, 1, 2, 3};
    anchor((struct or_stage){.kind = OR_TOP_K, .k = 2, .ties = NEXTOK_TIES_EXACT}, k01, 2);
    anchor((struct or_stage){.kind = OR_TOP_K, .k = 2, .ties = NEXTOK_TIES_KEEP}, k012, 3);
    /* cumulative 0.5157, 0.7054: p = 0.6 crosses at the 2nd token */
    anchor((struct or_stage){.kind = OR_TOP_P, .p = 0.6f, .ties = NEXTOK_TIES_EXACT, .min_keep = 1}, k01, 2);
    anchor((struct or_stage){.kind = OR_TOP_P, .p = 0.6f, .ties = NEXTOK_TIES_KEEP, .min_keep = 1}, k012, 3);
    anchor((struct or_stage){.kind = OR_TOP_P, .p = 0.5f, .ties = NEXTOK_TIES_EXACT, .min_keep = 1}, k0, 1);
    anchor((struct or_stage){.kind = OR_TOP_P, .p = 0.5f, .ties = NEXTOK_TIES_EXACT, .min_keep = 3}, k012, 3);
    /* min_p 0.3: threshold 3 + ln 0.3 = 1.796; 0.37: 2.006 */
    anchor((struct or_stage){.kind = OR_MIN_P, .p = 0.3f, .min_keep = 1}, k012, 3);
    anchor((struct or_stage){.kind = OR_MIN_P, .p = 0.37f, .min_keep = 1}, k0, 1);
    anchor((struct or_stage){.kind = OR_MIN_P, .p = 0.37f, .min_keep = 2}, k01, 2);
    /* epsilon 0.05 keeps p >= 0.05: tokens 0..3 */
    anchor((struct or_stage){.kind = OR_EPSILON, .p = 0.05f, .min_keep = 1}, k0123, 4);
    /* top-n-sigma: mean 7/6, sigma = 1.3437; n = 1: threshold 3 - 1.3437 = 1.656 */
    anchor((struct or_stage){.kind = OR_SIGMA, .p = 1.0f}, k012, 3);
    /* XTC threshold 0.15, probability 1: tokens 0,1,2 >= 0.15, j = 2, drop 0 and 1 */
    static const int32_t x[] = {2, 3, 4, 5};
    anchor((struct or_stage){.kind = OR_XTC, .prob = 1.0f, .threshold = 0.15f, .min_keep = 1, .seed = 9}, x, 4);
    anchor((struct or_stage){.kind = OR_TEMP, .t = 0.0f}, k0, 1);
}

TEST(forced_tokens_share_equally)
{
    const float row[5] = {1, INFINITY, 5, INFINITY, -INFINITY};
    struct or_stage st[2] = {{.kind = OR_TEMP, .t = 0.5f}, {.kind = OR_SOFTMAX}};
    struct or_hist oh = {0};
    struct or_result res;
    or_run(row, 5, NEXTOK_NAN_ERROR, st, 2, &oh, &res);
    CHECK_EQ_INT(res.n, 2);
    if (res.n == 2) {
        CHECK_NEAR(res.c[0].p, 0.5, 1e-15);
        CHECK_EQ_INT(res.c[0].id, 1);
        CHECK_EQ_INT(res.c[1].id, 3);
    }
    or_result_free(&res);
}

int main(void)
{
    clock_t t0 = clock();
    const char *d = getenv("NEXTOK_EXACT_DEBUG");
    if (d) {
        char fam = 0;
        int v = 0;
        if (sscanf(d, "%c,%d,%d", &fam, &v, &dbg_id) == 3) dbg_family = fam == 'm', dbg_V = v;
    }
    RUN(hand_anchors);
    RUN(forced_tokens_share_equally);
    RUN(random_small_vocab);
    RUN(random_32000);
    RUN(random_128256);
    RUN(random_256000);
    printf("test_exact: %.1fs cpu (scale %.2f)\n", (double)(clock() - t0) / CLOCKS_PER_SEC, tu_scale());
    return harness_done();
}
