/*
 * Differential fuzz target: the fused path against the plain chain, through
 * the public API only. The input picks a whole sampling configuration (profile,
 * stages and their parameters, a custom `samplers` order, penalties and DRY
 * with a prompt and accepted history, logit bias, banned and allowed ids,
 * min-tokens, mirostat, the selector, the dtype, V from 1 to 4096) and a row
 * (raw half floats, ties and repeated values, huge and tiny magnitudes, values
 * near -60 .. -48, flat rows, peaks). The chain is built twice, once as
 * nextok_chain_init_sampling builds it (fused path allowed) and once with the
 * same samplers moved into a chain with no_fused set, and over a few accepted
 * steps the two must agree exactly: status, probs (same ids in the same
 * order, bitwise-equal p, same token), processed logprobs, sample and
 * sample_n. Any difference is printed and aborts.
 *
 * Input layout: bytes are read in order by take() (0 once the input is
 * used up); rows larger than the rest of the input continue from a
 * splitmix64 stream seeded by the input.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_reach.h"
#include "nextok.h"

#define V_MAX 4096
#define TOP_N 16

struct reader {
    const uint8_t *p;
    size_t n;
    uint64_t rng; /* continues rows once the input is used up */
};

static uint8_t take(struct reader *r)
{
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

static uint16_t take16(struct reader *r)
{
    uint16_t lo = take(r);
    return (uint16_t)(lo | (uint16_t)take(r) << 8);
}

/* Row bytes: the input while it lasts, then splitmix64. */
static uint8_t row_byte(struct reader *r)
{
    if (r->n > 0) return take(r);
    uint64_t z = (r->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint8_t)(z ^ (z >> 31));
}

/* ---- the configuration ------------------------------------------------------ */

struct setup {
    struct nextok_sampling_params p;
    char order[192];
    int32_t prompt[16], hist[8], banned[4], allowed[8], eog;
    size_t n_prompt, n_hist;
    struct nextok_logit_bias bias[4];
    enum nextok_dtype dt;
    size_t V, steps, draws;
    int32_t probe; /* a token whose logprob and rank are compared too */
};

static const char *const STAGES[] = {"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p",
                                     "min_p", "xtc", "temperature", "epsilon", "eta"};

static float unit(uint8_t b) { return (float)b / 255.0f; }
static int32_t id_in(struct reader *r, size_t V) { return (int32_t)(take16(r) % V); }

static void pick_filters(struct reader *r, struct nextok_sampling_params *p)
{
    if (take(r) & 1) p->temperature = (float)take(r) / 64.0f; /* 0: greedy, 64: 1 */
    if (take(r) & 1) p->top_k = 1 + take(r) % 64;
    if (take(r) & 1) p->top_p = (1.0f + take(r)) / 257.0f;
    if (take(r) & 1) p->min_p = unit(take(r));
    if (take(r) & 1) p->typical_p = (1.0f + take(r)) / 257.0f;
    if (take(r) & 1) p->top_n_sigma = (float)take(r) / 51.0f;
    if (take(r) & 1) {
        p->xtc_probability = unit(take(r));
        p->xtc_threshold = unit(take(r)) * 0.6f;
    }
    if (take(r) & 1) p->epsilon_cutoff = unit(take(r)) * 0.5f;
    if (take(r) & 1) p->eta_cutoff = unit(take(r)) * 0.5f;
    if (take(r) & 1) {
        p->dynatemp_range = (float)take(r) / 128.0f;
        p->dynatemp_exponent = (float)take(r) / 64.0f;
    }
    p->top_k_ties = (enum nextok_ties)(take(r) & 1);
    p->min_keep = take(r) % 4;
}

static void pick_penalties(struct reader *r, struct nextok_sampling_params *p)
{
    if (take(r) & 1) {
        p->repeat_penalty = 0.5f + (float)take(r) / 128.0f;
        p->frequency_penalty = (float)(int8_t)take(r) / 64.0f;
        p->presence_penalty = (float)(int8_t)take(r) / 64.0f;
        p->penalty_last_n = take(r) % 80;
    }
    if (take(r) & 1) {
        p->dry_multiplier = (float)take(r) / 128.0f;
        p->dry_base = 1.0f + (1.0f + take(r)) / 64.0f;
        p->dry_allowed_length = 1 + take(r) % 4;
        p->dry_penalty_last_n = (int32_t)(take(r) % 40) - 1;
    }
    uint8_t m = take(r);
    p->mirostat = m % 8 == 7 ? 2 : m % 8 == 6 ? 1 : 0;
    if (p->mirostat) {
        p->mirostat_tau = (float)take(r) / 32.0f;
        p->mirostat_eta = unit(take(r));
    }
    p->selector = (enum nextok_selector)(take(r) % 3);
    p->seed = take(r);
    p->nan_policy = (enum nextok_nan_policy)(take(r) & 1);
}

static void pick_masks(struct reader *r, struct setup *s)
{
    struct nextok_sampling_params *p = &s->p;
    size_t nb = take(r) % 5;
    for (size_t i = 0; i < nb; i++) {
        s->bias[i].token = id_in(r, s->V);
        uint8_t b = take(r);
        s->bias[i].bias = b == 255 ? -INFINITY : (float)(int8_t)b / 8.0f;
    }
    p->logit_bias = nb ? s->bias : NULL;
    p->n_logit_bias = nb;
    p->n_banned = take(r) % 5;
    for (size_t i = 0; i < p->n_banned; i++) s->banned[i] = id_in(r, s->V);
    p->banned_ids = p->n_banned ? s->banned : NULL;
    if (take(r) & 1) {
        p->n_allowed = 1 + take(r) % 8;
        for (size_t i = 0; i < p->n_allowed; i++) s->allowed[i] = id_in(r, s->V);
        p->allowed_ids = s->allowed;
    }
    if (take(r) & 1) {
        p->min_tokens = 1 + take(r) % 3;
        s->eog = id_in(r, s->V);
        p->eog_ids = &s->eog;
        p->n_eog = 1;
    }
    if (take(r) & 1) p->no_repeat_ngram = 1 + take(r) % 3;
}

static void pick_order(struct reader *r, struct setup *s)
{
    if (!(take(r) & 1)) return;
    size_t n = take(r) % 10, len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = STAGES[take(r) % (sizeof STAGES / sizeof *STAGES)];
        len += (size_t)snprintf(s->order + len, sizeof s->order - len, "%s%s", i ? ";" : "", name);
    }
    s->order[len] = '\0';
    s->p.samplers = s->order;
}

static void pick_setup(struct reader *r, struct setup *s)
{
    memset(s, 0, sizeof *s);
    enum nextok_profile profile = (enum nextok_profile)(take(r) % 3);
    uint8_t v = take(r);
    s->V = v & 0x80 ? 1 + (size_t)take16(r) % V_MAX : 1 + (size_t)v % 64;
    s->dt = (enum nextok_dtype)(take(r) % 3);
    s->p = nextok_sampling_default_params(profile);
    s->p.n_vocab = (int32_t)s->V;
    if (take(r) & 1) { /* from all stages off rather than the profile's defaults */
        s->p.temperature = 1.0f;
        s->p.top_k = 0;
        s->p.top_p = s->p.typical_p = 1.0f;
        s->p.min_p = 0.0f;
    }
    pick_filters(r, &s->p);
    pick_penalties(r, &s->p);
    pick_masks(r, s);
    pick_order(r, s);
    s->n_prompt = take(r) % 16;
    for (size_t i = 0; i < s->n_prompt; i++) s->prompt[i] = id_in(r, s->V);
    s->n_hist = take(r) % 8;
    for (size_t i = 0; i < s->n_hist; i++) s->hist[i] = id_in(r, s->V);
    s->steps = 1 + take(r) % 3;
    s->draws = take(r) % 5;
    s->probe = id_in(r, s->V);
}

/* ---- the row ---------------------------------------------------------------------- */

static float row_value(struct reader *r, int mode, const float *pal)
{
    static const float MAGS[16] = {1e30f, -1e30f, 3e38f, -3e38f, 1e-30f, -1e-30f, 0.0f, -0.0f,
                                   65504.0f, -65504.0f, 1e-8f, 100.0f, -100.0f, 88.0f, -88.0f, -1e4f};
    uint8_t b = row_byte(r);
    switch (mode) {
    case 0: return nextok_f16_to_f32((uint16_t)(b | (uint16_t)row_byte(r) << 8)); /* any half */
    case 1: return pal[b % 4];                                      /* ties */
    case 2: return -60.0f + 12.0f * unit(b);                        /* -60 .. -48 */
    case 3: return pal[0];                                          /* flat */
    case 4: return MAGS[b % 16];                                    /* magnitudes */
    case 5: return b > 250 ? 10.0f + (float)row_byte(r) / 16.0f : unit(b) - 0.5f; /* peaks */
    case 6: return (float)((int)b + (int)row_byte(r) - 255) / 32.0f; /* bell-ish */
    default: return (float)(b % 16) - 8.0f;                         /* small integers */
    }
}

/* The row in the setup's dtype (elements of 4 or 2 bytes). */
static void *make_row(struct reader *r, const struct setup *s)
{
    const int mode = take(r) % 8;
    float pal[4];
    for (int k = 0; k < 4; k++) pal[k] = (float)(int8_t)take(r) / 4.0f;
    r->rng = (uint64_t)take(r) << 8 | s->V;
    void *row = malloc(s->V * 4);
    if (!row) return NULL;
    for (size_t i = 0; i < s->V; i++) {
        float x = row_value(r, mode, pal);
        if (s->dt == NEXTOK_DTYPE_F32) ((float *)row)[i] = x;
        else if (s->dt == NEXTOK_DTYPE_F16) ((uint16_t *)row)[i] = nextok_f32_to_f16(x);
        else ((uint16_t *)row)[i] = nextok_f32_to_bf16(x);
    }
    return row;
}

/* ---- the two chains ------------------------------------------------------------ */

static nextok_status build(const struct setup *s, bool no_fused, struct nextok_chain **out)
{
    struct nextok_chain *built = NULL, *c = NULL;
    *out = NULL;
    nextok_status rc = nextok_chain_init_sampling(&built, &s->p, NULL);
    if (rc != NEXTOK_OK || !no_fused) {
        *out = built;
        return rc;
    }
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = s->p.n_vocab;
    cp.nan_policy = s->p.nan_policy;
    cp.no_fused = true;
    rc = nextok_chain_init(&c, &cp, NULL);
    while (rc == NEXTOK_OK && nextok_chain_n(built) > 0) { /* same samplers, same order */
        struct nextok_sampler *smp = nextok_chain_remove(built, 0);
        rc = nextok_chain_add(c, smp);
        if (rc != NEXTOK_OK) nextok_sampler_free(smp);
    }
    nextok_chain_free(built);
    if (rc != NEXTOK_OK) {
        nextok_chain_free(c);
        return rc;
    }
    *out = c;
    return NEXTOK_OK;
}

static nextok_status prepare(const struct setup *s, struct nextok_chain *c)
{
    nextok_status rc = nextok_chain_set_prompt(c, s->prompt, s->n_prompt);
    for (size_t i = 0; rc == NEXTOK_OK && i < s->n_hist; i++) rc = nextok_chain_accept(c, s->hist[i]);
    return rc;
}

/* ---- comparison ------------------------------------------------------------------- */

/* The configuration and the row, for the report of a mismatch. */
static void describe(const struct setup *s, const void *row)
{
    const struct nextok_sampling_params *p = &s->p;
    static const char *const DT[] = {"f32", "f16", "bf16"};
    fprintf(stderr, "  profile %s, V %zu, dtype %s, samplers '%s', selector %d, seed %llu\n",
            nextok_profile_name(p->profile), s->V, DT[s->dt], p->samplers ? p->samplers : "(profile)",
            (int)p->selector, (unsigned long long)p->seed);
    fprintf(stderr, "  temp %g dynatemp %g/%g top_k %d ties %d top_p %g min_p %g typical %g sigma %g "
            "xtc %g/%g eps %g eta %g min_keep %zu\n", p->temperature, p->dynatemp_range,
            p->dynatemp_exponent, (int)p->top_k, (int)p->top_k_ties, p->top_p, p->min_p,
            p->typical_p, p->top_n_sigma, p->xtc_probability, p->xtc_threshold, p->epsilon_cutoff,
            p->eta_cutoff, p->min_keep);
    fprintf(stderr, "  repeat %g freq %g pres %g last_n %d dry %g/%g/%d/%d mirostat %d (%g, %g) "
            "nan %d bias %zu banned %zu allowed %zu min_tokens %d ngram %d prompt %zu hist %zu\n",
            p->repeat_penalty, p->frequency_penalty, p->presence_penalty, (int)p->penalty_last_n,
            p->dry_multiplier, p->dry_base, (int)p->dry_allowed_length, (int)p->dry_penalty_last_n,
            (int)p->mirostat, p->mirostat_tau, p->mirostat_eta, (int)p->nan_policy, p->n_logit_bias,
            p->n_banned, p->n_allowed, (int)p->min_tokens, (int)p->no_repeat_ngram, s->n_prompt,
            s->n_hist);
    fprintf(stderr, "  row:");
    for (size_t k = 0; row && k < s->V && k < 64; k++) {
        float x = s->dt == NEXTOK_DTYPE_F32 ? ((const float *)row)[k]
                : s->dt == NEXTOK_DTYPE_F16 ? nextok_f16_to_f32(((const uint16_t *)row)[k])
                                            : nextok_bf16_to_f32(((const uint16_t *)row)[k]);
        fprintf(stderr, " %.9g", x);
    }
    fprintf(stderr, s->V > 64 ? " ...\n" : "\n");
}

static const void *g_row; /* the row of the input being compared, for differ() */

static void differ(const struct setup *s, size_t step, const char *what)
{
    fprintf(stderr, "fused/plain mismatch at step %zu: %s\n", step, what);
    describe(s, g_row);
    abort();
}

static bool same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Tag each fused route the chain's fusable prefix holds. */
static void tag_routes(const struct nextok_chain *c)
{
    static const char *const ROUTES[] = {"top-k", "min-p", "top-p", "typical", "top-n-sigma",
                                         "mirostat-v2", "dist", "greedy"};
    static const char *const PROCS[] = {"logit_bias", "allowed", "banned", "min_tokens",
                                        "no_repeat_ngram", "penalties", "dry", "temp"};
    static const char *const TAGS[] = {"fused:top-k", "fused:min-p", "fused:top-p", "fused:typical",
                                       "fused:top-n-sigma", "fused:mirostat-v2", "fused:dist",
                                       "fused:greedy"};
    fuzz_reached("fused");
    for (size_t i = 0; i < nextok_chain_n(c); i++) {
        const char *name = nextok_sampler_name(nextok_chain_get(c, i));
        bool known = false;
        for (size_t k = 0; k < sizeof PROCS / sizeof *PROCS; k++) known |= strcmp(name, PROCS[k]) == 0;
        for (size_t k = 0; k < sizeof ROUTES / sizeof *ROUTES; k++)
            if (strcmp(name, ROUTES[k]) == 0) {
                fuzz_reached(TAGS[k]);
                known = true;
            }
        if (!known) return; /* the plain tail starts here */
    }
}

struct bufs {
    struct nextok_token_data *pa, *pb;
    struct nextok_logprob ta[TOP_N], tb[TOP_N];
    int32_t da[8], db[8];
};

static void compare_probs(const struct setup *s, size_t step, nextok_status ra, nextok_status rb,
                          const struct bufs *b, size_t na, size_t nb, int32_t ka, int32_t kb)
{
    if (ra != rb) differ(s, step, "probs status");
    if (ra != NEXTOK_OK) return;
    if (na != nb || ka != kb) {
        fprintf(stderr, "  fused: %zu survivors, token %d:", na, (int)ka);
        for (size_t i = 0; i < na && i < 16; i++) fprintf(stderr, " %d:%.9g", (int)b->pa[i].id, b->pa[i].p);
        fprintf(stderr, "\n  plain: %zu survivors, token %d:", nb, (int)kb);
        for (size_t i = 0; i < nb && i < 16; i++) fprintf(stderr, " %d:%.9g", (int)b->pb[i].id, b->pb[i].p);
        fprintf(stderr, "\n");
    }
    if (na != nb) differ(s, step, "probs: number of survivors");
    if (ka != kb) differ(s, step, "probs: token");
    for (size_t i = 0; i < na; i++)
        if (b->pa[i].id != b->pb[i].id || !same_float(b->pa[i].p, b->pb[i].p))
            differ(s, step, "probs: ids or p");
}

static void compare_logprobs(const struct setup *s, size_t step, struct nextok_chain *a,
                             struct nextok_chain *c, struct bufs *b, int32_t token)
{
    size_t na = 0, nb = 0;
    float la = 0, lb = 0;
    int32_t rka = 0, rkb = 0;
    nextok_status ra = nextok_chain_logprobs(a, NEXTOK_LOGPROBS_PROCESSED, NULL, s->dt, token,
                                             TOP_N, b->ta, &na, &la, &rka);
    nextok_status rb = nextok_chain_logprobs(c, NEXTOK_LOGPROBS_PROCESSED, NULL, s->dt, token,
                                             TOP_N, b->tb, &nb, &lb, &rkb);
    if (ra != rb) differ(s, step, "logprobs status");
    if (ra != NEXTOK_OK) return;
    if (na != nb || rka != rkb || !same_float(la, lb)) differ(s, step, "logprobs: token or n_top");
    for (size_t i = 0; i < na; i++)
        if (b->ta[i].id != b->tb[i].id || !same_float(b->ta[i].logprob, b->tb[i].logprob))
            differ(s, step, "logprobs: top entries");
}

/* One step on both chains; returns false when the run should stop. */
static bool step_both(const struct setup *s, size_t step, struct nextok_chain *a,
                      struct nextok_chain *c, const void *row, struct bufs *b)
{
    size_t na = 0, nb = 0;
    int32_t ka = -1, kb = -1;
    nextok_status ra = nextok_chain_probs(a, row, s->dt, b->pa, s->V, &na, &ka);
    nextok_status rb = nextok_chain_probs(c, row, s->dt, b->pb, s->V, &nb, &kb);
    compare_probs(s, step, ra, rb, b, na, nb, ka, kb);
    if (ra == NEXTOK_OK) {
        compare_logprobs(s, step, a, c, b, ka);
        compare_logprobs(s, step, a, c, b, s->probe);
    }
    ra = nextok_chain_sample(a, row, s->dt, &ka);
    rb = nextok_chain_sample(c, row, s->dt, &kb);
    if (ra != rb || (ra == NEXTOK_OK && ka != kb)) differ(s, step, "sample");
    if (nextok_chain_last_fused(c)) differ(s, step, "the no_fused chain ran the fused path");
    if (ra != NEXTOK_OK) return false;
    fuzz_reached("compared");
    if (nextok_chain_last_fused(a)) tag_routes(a);
    nextok_status sa = nextok_chain_sample_n(a, row, s->dt, s->draws, b->da);
    nextok_status sb = nextok_chain_sample_n(c, row, s->dt, s->draws, b->db);
    if (sa != sb || (sa == NEXTOK_OK && memcmp(b->da, b->db, s->draws * sizeof *b->da) != 0))
        differ(s, step, "sample_n");
    if (nextok_chain_accept(a, ka) != nextok_chain_accept(c, ka)) differ(s, step, "accept status");
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct reader r = {data, size, 0};
    struct setup s;
    pick_setup(&r, &s);
    struct nextok_chain *a = NULL, *c = NULL;
    nextok_status ra = build(&s, false, &a), rb = build(&s, true, &c);
    if (ra != rb) differ(&s, 0, "chain init status");
    void *row = ra == NEXTOK_OK ? make_row(&r, &s) : NULL;
    g_row = row;
    if (getenv("FUZZ_DESCRIBE")) describe(&s, row); /* triage: what this input is */
    struct bufs *b = row ? calloc(1, sizeof *b) : NULL;
    if (b) {
        b->pa = malloc(s.V * sizeof *b->pa);
        b->pb = malloc(s.V * sizeof *b->pb);
    }
    if (b && b->pa && b->pb) {
        if (prepare(&s, a) != prepare(&s, c)) differ(&s, 0, "prompt/history status");
        for (size_t step = 0; step < s.steps; step++) {
            if (!step_both(&s, step, a, c, row, b)) break;
        }
    }
    if (b) {
        free(b->pa);
        free(b->pb);
    }
    free(b);
    free(row);
    nextok_chain_free(a);
    nextok_chain_free(c);
    return 0;
}
