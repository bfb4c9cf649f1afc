/*
 * The off values and accepted ranges that nextok.h states for
 * nextok_sampling_params, checked one field at a time in every profile:
 * an off value leaves the stage out of the chain, an on value adds exactly
 * one stage, a value past the off value fails with ERR_INVALID_ARG naming
 * the field (docs/semantics.md, "Parameter ranges").
 */
#include <stdbool.h>
#include <string.h>

#include "harness.h"
#include "nextok.h"

#define NV 64

static const enum nextok_profile PROFILES[] = {NEXTOK_PROFILE_VLLM, NEXTOK_PROFILE_HF,
                                               NEXTOK_PROFILE_LLAMA};
static const int32_t EOG = 3;

/* Every stage off: the chain is the selector alone. */
static struct nextok_sampling_params all_off(enum nextok_profile pr)
{
    struct nextok_sampling_params p = nextok_sampling_default_params(pr);
    p.n_vocab = NV;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.typical_p = 1.0f;
    p.top_n_sigma = -1.0f;
    p.eog_ids = &EOG;
    p.n_eog = 1;
    return p;
}

/* Chain length for p, or -1 with the status in *rc and the message in msg. */
static long chain_len(const struct nextok_sampling_params *p, nextok_status *rc, char *msg)
{
    struct nextok_chain *c = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    *rc = nextok_chain_init_sampling(&c, p, &err);
    strcpy(msg, err.msg);
    if (*rc != NEXTOK_OK) return -1;
    long n = (long)nextok_chain_n(c);
    nextok_chain_free(c);
    return n;
}

enum field {
    F_TOP_K, F_TOP_P, F_MIN_P, F_TYPICAL, F_TOP_N_SIGMA, F_XTC, F_EPSILON, F_ETA,
    F_REPEAT, F_FREQUENCY, F_PRESENCE, F_DRY, F_NGRAM, F_MIN_TOKENS
};

static void set(struct nextok_sampling_params *p, enum field f, float v)
{
    switch (f) {
    case F_TOP_K: p->top_k = (int32_t)v; break;
    case F_TOP_P: p->top_p = v; break;
    case F_MIN_P: p->min_p = v; break;
    case F_TYPICAL: p->typical_p = v; break;
    case F_TOP_N_SIGMA: p->top_n_sigma = v; break;
    case F_XTC: p->xtc_probability = v; break;
    case F_EPSILON: p->epsilon_cutoff = v; break;
    case F_ETA: p->eta_cutoff = v; break;
    case F_REPEAT: p->repeat_penalty = v; break;
    case F_FREQUENCY: p->frequency_penalty = v; break;
    case F_PRESENCE: p->presence_penalty = v; break;
    case F_DRY: p->dry_multiplier = v; break;
    case F_NGRAM: p->no_repeat_ngram = (int32_t)v; break;
    case F_MIN_TOKENS: p->min_tokens = (int32_t)v; break;
    }
}

/* name, off values (NAN ends), one on value, values past off (NAN ends) */
static const struct {
    enum field f;
    const char *name;
    float off[3], on, past[3];
} FIELDS[] = {
    {F_TOP_K, "top_k", {0, -1, NAN}, 5, {NAN}},
    {F_TOP_P, "top_p", {1, NAN}, 0.9f, {1.2f, 1.0001f, NAN}},
    {F_MIN_P, "min_p", {0, NAN}, 0.05f, {-0.1f, -1e-6f, NAN}},
    {F_TYPICAL, "typical_p", {1, NAN}, 0.5f, {1.12f, NAN}},
    {F_TOP_N_SIGMA, "top_n_sigma", {0, -2, NAN}, 1.0f, {NAN}},
    {F_XTC, "xtc_probability", {0, NAN}, 0.5f, {-0.1f, 1.5f, NAN}},
    {F_EPSILON, "epsilon_cutoff", {0, NAN}, 0.01f, {-0.01f, 1.0f, NAN}},
    {F_ETA, "eta_cutoff", {0, NAN}, 0.01f, {-0.01f, 1.0f, NAN}},
    {F_REPEAT, "repeat_penalty", {1, NAN}, 1.1f, {0.0f, -1.0f, NAN}},
    {F_FREQUENCY, "frequency_penalty", {0, NAN}, 0.5f, {NAN}},
    {F_PRESENCE, "presence_penalty", {0, NAN}, 0.5f, {NAN}},
    {F_DRY, "dry_multiplier", {0, NAN}, 0.8f, {-0.5f, NAN}},
    {F_NGRAM, "no_repeat_ngram", {0, -3, NAN}, 2, {NAN}},
    {F_MIN_TOKENS, "min_tokens", {0, -3, NAN}, 2, {NAN}},
};

TEST(off_values_leave_the_stage_out)
{
    for (size_t k = 0; k < sizeof PROFILES / sizeof *PROFILES; k++) {
        struct nextok_sampling_params base = all_off(PROFILES[k]);
        nextok_status rc;
        char msg[NEXTOK_ERRMSG_MAX];
        CHECK_EQ_INT(chain_len(&base, &rc, msg), 1);
        for (size_t i = 0; i < sizeof FIELDS / sizeof *FIELDS; i++) {
            for (size_t j = 0; !isnan(FIELDS[i].off[j]); j++) {
                struct nextok_sampling_params p = base;
                set(&p, FIELDS[i].f, FIELDS[i].off[j]);
                long n = chain_len(&p, &rc, msg);
                CHECK_MSG(n == 1, "%s %s = %g: chain of %ld (%s)", nextok_profile_name(PROFILES[k]),
                          FIELDS[i].name, (double)FIELDS[i].off[j], n, msg);
            }
            /* llama.cpp has no epsilon/eta stage: the llama profile runs them
             * only where a custom `samplers` order names them */
            bool unused = PROFILES[k] == NEXTOK_PROFILE_LLAMA &&
                          (FIELDS[i].f == F_EPSILON || FIELDS[i].f == F_ETA);
            struct nextok_sampling_params p = base;
            set(&p, FIELDS[i].f, FIELDS[i].on);
            long n = chain_len(&p, &rc, msg);
            CHECK_MSG(n == (unused ? 1 : 2), "%s %s = %g: chain of %ld, want %d (%s)",
                      nextok_profile_name(PROFILES[k]), FIELDS[i].name, (double)FIELDS[i].on, n,
                      unused ? 1 : 2, msg);
        }
    }
}

TEST(values_past_off_are_rejected_in_every_profile)
{
    for (size_t k = 0; k < sizeof PROFILES / sizeof *PROFILES; k++) {
        for (size_t i = 0; i < sizeof FIELDS / sizeof *FIELDS; i++) {
            for (size_t j = 0; !isnan(FIELDS[i].past[j]); j++) {
                struct nextok_sampling_params p = all_off(PROFILES[k]);
                set(&p, FIELDS[i].f, FIELDS[i].past[j]);
                nextok_status rc;
                char msg[NEXTOK_ERRMSG_MAX];
                long n = chain_len(&p, &rc, msg);
                CHECK_MSG(n == -1 && rc == NEXTOK_ERR_INVALID_ARG &&
                              strncmp(msg, FIELDS[i].name, strlen(FIELDS[i].name)) == 0,
                          "%s %s = %g: chain of %ld, status %s, message '%s'",
                          nextok_profile_name(PROFILES[k]), FIELDS[i].name,
                          (double)FIELDS[i].past[j], n, nextok_status_name(rc), msg);
            }
        }
    }
}

/* XTC with threshold > 0.5 is in the chain but removes nothing. */
TEST(xtc_threshold_above_half_is_a_no_op)
{
    struct nextok_sampling_params p = all_off(NEXTOK_PROFILE_LLAMA);
    p.xtc_probability = 1.0f;
    p.xtc_threshold = 0.6f;
    p.selector = NEXTOK_SELECTOR_GREEDY;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init_sampling(&c, &p, NULL));
    if (!c) return;
    CHECK_EQ_INT(nextok_chain_n(c), 2);
    float row[NV];
    for (int i = 0; i < NV; i++) row[i] = i == 7 ? 20.0f : 0.0f; /* token 7 has p ~ 1 */
    int32_t tok = -1;
    CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
    CHECK_EQ_INT(tok, 7);
    nextok_chain_free(c);
}

int main(void)
{
    RUN(off_values_leave_the_stage_out);
    RUN(values_past_off_are_rejected_in_every_profile);
    RUN(xtc_threshold_above_half_is_a_no_op);
    return harness_done();
}
