/*
 * test_badinput: every bad-input path of docs/semantics.md and the header.
 *
 *  - NaN logits: NEXTOK_ERR_NAN (all dtypes, all profiles), or masked under
 *    NEXTOK_NAN_AS_NEG_INF; +inf forces (only +inf tokens, equal shares);
 *    -inf masks; nothing left -> NEXTOK_ERR_NO_CANDIDATES (row, allowed,
 *    banned, bias);
 *  - invalid nextok_sampling_params, field by field: rejected, *out left
 *    NULL, err->status set and err->msg naming the field (also with err NULL);
 *  - invalid sampler-constructor parameters;
 *  - token ids out of range (prompt, accept), NULL pointers, unknown dtype,
 *    a chain without selector, a too-small probs buffer;
 *  - a failed call changes nothing: step, penalties, mirostat mu, the
 *    caller's token; the next valid call equals a fresh identical chain's.
 */
#include <stdint.h>

#include "harness.h"
#include "nextok.h"
#include "oracle.h"

#define V 64

/* A plain row: id i has logit -0.05 i plus a few boosted ids. */
static void base_row(float *row)
{
    for (int i = 0; i < V; i++) row[i] = -0.05f * (float)i;
    row[7] = 3.0f, row[20] = 2.5f, row[33] = 2.0f;
}

static struct nextok_sampling_params params(enum nextok_profile p)
{
    struct nextok_sampling_params sp = nextok_sampling_default_params(p);
    sp.profile = p;
    sp.n_vocab = V;
    sp.seed = 17;
    sp.selector = NEXTOK_SELECTOR_CATEGORICAL;
    sp.temperature = 0.8f, sp.dynatemp_range = 0.0f, sp.dynatemp_exponent = 1.0f;
    sp.top_k = 0, sp.top_p = 1.0f, sp.min_p = 0.0f, sp.typical_p = 1.0f, sp.top_n_sigma = 0.0f;
    sp.xtc_probability = 0.0f, sp.epsilon_cutoff = 0.0f, sp.eta_cutoff = 0.0f, sp.min_keep = 1;
    sp.repeat_penalty = 1.0f, sp.frequency_penalty = 0.0f, sp.presence_penalty = 0.0f;
    sp.penalty_last_n = 64, sp.dry_multiplier = 0.0f, sp.no_repeat_ngram = 0, sp.mirostat = 0;
    sp.logit_bias = NULL, sp.n_logit_bias = 0, sp.allowed_ids = NULL, sp.n_allowed = 0;
    sp.banned_ids = NULL, sp.n_banned = 0, sp.min_tokens = 0, sp.eog_ids = NULL, sp.n_eog = 0;
    sp.samplers = NULL, sp.nan_policy = NEXTOK_NAN_ERROR;
    return sp;
}

static struct nextok_chain *make(const struct nextok_sampling_params *sp)
{
    struct nextok_chain *c = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_chain_init_sampling(&c, sp, &err);
    CHECK_MSG(rc == NEXTOK_OK, "init_sampling: %s: %s", nextok_status_name(rc), err.msg);
    return c;
}

static const enum nextok_profile all_profiles[3] = {NEXTOK_PROFILE_VLLM, NEXTOK_PROFILE_HF, NEXTOK_PROFILE_LLAMA};

/* ---- NaN, +inf, -inf ------------------------------------------------------ */

/* Row in dtype dt: f32 values, with NaN at nan_at (if >= 0). */
static void encode(const float *row, enum nextok_dtype dt, void *buf)
{
    for (int i = 0; i < V; i++) {
        if (dt == NEXTOK_DTYPE_F32) ((float *)buf)[i] = row[i];
        else if (dt == NEXTOK_DTYPE_F16) ((uint16_t *)buf)[i] = nextok_f32_to_f16(row[i]);
        else ((uint16_t *)buf)[i] = nextok_f32_to_bf16(row[i]);
    }
}

TEST(nan_is_an_error)
{
    float row[V], buf[V];
    base_row(row);
    row[11] = NAN;
    for (int p = 0; p < 3; p++) {
        struct nextok_sampling_params sp = params(all_profiles[p]);
        struct nextok_chain *c = make(&sp);
        for (int dt = 0; dt < 3 && c; dt++) {
            encode(row, (enum nextok_dtype)dt, buf);
            int32_t tok = -123;
            size_t n = 999;
            struct nextok_token_data out[V];
            CHECK_EQ_INT(nextok_chain_sample(c, buf, (enum nextok_dtype)dt, &tok), NEXTOK_ERR_NAN);
            CHECK_EQ_INT(tok, -123); /* output untouched on failure */
            CHECK(strlen(nextok_chain_errmsg(c)) > 0);
            CHECK_EQ_INT(nextok_chain_probs(c, buf, (enum nextok_dtype)dt, out, V, &n, NULL), NEXTOK_ERR_NAN);
        }
        nextok_chain_free(c);
    }
    /* the half encodings really carry a NaN */
    CHECK(isnan(nextok_f16_to_f32(nextok_f32_to_f16(NAN))));
    CHECK(isnan(nextok_bf16_to_f32(nextok_f32_to_bf16(NAN))));
}

/* Sorted copy of a probs result by id. */
static size_t probs_sorted(struct nextok_chain *c, const void *row, enum nextok_dtype dt,
                           struct nextok_token_data *out, nextok_status *rc)
{
    size_t n = 0;
    *rc = nextok_chain_probs(c, row, dt, out, V, &n, NULL);
    for (size_t i = 1; i < n; i++) /* insertion sort by id: n <= 64 */
        for (size_t j = i; j > 0 && out[j - 1].id > out[j].id; j--) {
            struct nextok_token_data t = out[j];
            out[j] = out[j - 1], out[j - 1] = t;
        }
    return *rc == NEXTOK_OK ? n : 0;
}

static int same_probs(const struct nextok_token_data *a, size_t na, const struct nextok_token_data *b, size_t nb)
{
    if (na != nb) return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].id != b[i].id || a[i].p != b[i].p) return 0;
    return 1;
}

TEST(nan_as_neg_inf_masks)
{
    float row[V], ninf[V];
    base_row(row);
    memcpy(ninf, row, sizeof row);
    row[7] = NAN, row[40] = NAN; /* the top token among them */
    ninf[7] = -INFINITY, ninf[40] = -INFINITY;
    for (int p = 0; p < 3; p++) {
        struct nextok_sampling_params sp = params(all_profiles[p]);
        sp.nan_policy = NEXTOK_NAN_AS_NEG_INF;
        struct nextok_chain *c = make(&sp);
        struct nextok_token_data a[V], b[V];
        nextok_status ra, rb;
        size_t na = c ? probs_sorted(c, row, NEXTOK_DTYPE_F32, a, &ra) : 0;
        size_t nb = c ? probs_sorted(c, ninf, NEXTOK_DTYPE_F32, b, &rb) : 0;
        CHECK(c && ra == NEXTOK_OK && rb == NEXTOK_OK);
        CHECK_EQ_INT(na, V - 2);
        CHECK(same_probs(a, na, b, nb));
        for (size_t i = 0; i < na; i++) CHECK(a[i].id != 7 && a[i].id != 40);
        int32_t tok = -1;
        if (c) CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
        CHECK(tok != 7 && tok != 40 && tok >= 0);
        nextok_chain_free(c);
    }
}

/* +inf forces: only +inf tokens, equal shares, whatever the stages do to them. */
TEST(plus_inf_forces)
{
    float row[V];
    base_row(row);
    row[3] = INFINITY, row[10] = INFINITY, row[11] = INFINITY, row[7] = 6e4f; /* finite in f16 too */
    for (int p = 0; p < 3; p++) {
        struct nextok_sampling_params sp = params(all_profiles[p]);
        sp.temperature = 0.5f, sp.top_p = 0.5f;
        sp.top_k_ties = NEXTOK_TIES_KEEP; /* top-p keeps the tied block */
        struct nextok_chain *c = make(&sp);
        for (int dt = 0; dt < 3 && c; dt++) {
            float buf[V];
            encode(row, (enum nextok_dtype)dt, buf);
            struct nextok_token_data out[V];
            nextok_status rc;
            size_t n = probs_sorted(c, buf, (enum nextok_dtype)dt, out, &rc);
            CHECK_OK(rc);
            CHECK_EQ_INT(n, 3);
            if (n == 3) {
                CHECK_EQ_INT(out[0].id, 3);
                CHECK_EQ_INT(out[1].id, 10);
                CHECK_EQ_INT(out[2].id, 11);
                for (int i = 0; i < 3; i++) CHECK_NEAR(out[i].p, 1.0 / 3.0, 1e-6);
            }
        }
        nextok_chain_free(c);
    }
    /* exact ties: top_k 2 in llama's exact mode keeps the two lowest ids */
    struct nextok_sampling_params sp = params(NEXTOK_PROFILE_LLAMA);
    sp.top_k = 2, sp.top_k_ties = NEXTOK_TIES_EXACT;
    struct nextok_chain *c = make(&sp);
    struct nextok_token_data out[V];
    nextok_status rc;
    size_t n = c ? probs_sorted(c, row, NEXTOK_DTYPE_F32, out, &rc) : 0;
    CHECK_EQ_INT(n, 2);
    if (n == 2) CHECK(out[0].id == 3 && out[1].id == 10 && fabsf(out[0].p - 0.5f) < 1e-6f);
    nextok_chain_free(c);
}

TEST(candidates_prepare_contract)
{
    struct nextok_token_data d[5] = {{0, 1.0f, 0}, {1, NAN, 0}, {2, INFINITY, 0}, {3, -INFINITY, 0}, {4, INFINITY, 0}};
    struct nextok_token_data copy[5];
    memcpy(copy, d, sizeof d);
    struct nextok_token_data_array a = {d, 5, -1, false};
    CHECK_EQ_INT(nextok_candidates_prepare(&a, NEXTOK_NAN_ERROR), NEXTOK_ERR_NAN);
    CHECK(a.size == 5 && memcmp(d, copy, sizeof d) == 0); /* unchanged on error */
    CHECK_OK(nextok_candidates_prepare(&a, NEXTOK_NAN_AS_NEG_INF));
    CHECK_EQ_INT(a.size, 2);
    if (a.size == 2) CHECK(d[0].id == 2 && d[1].id == 4 && d[0].logit == 0 && d[1].logit == 0);

    struct nextok_token_data e[3] = {{0, -INFINITY, 0}, {1, NAN, 0}, {2, -INFINITY, 0}};
    struct nextok_token_data ecopy[3];
    memcpy(ecopy, e, sizeof e);
    struct nextok_token_data_array b = {e, 3, -1, false};
    CHECK_EQ_INT(nextok_candidates_prepare(&b, NEXTOK_NAN_AS_NEG_INF), NEXTOK_ERR_NO_CANDIDATES);
    CHECK(b.size == 3 && memcmp(e, ecopy, sizeof e) == 0);
}

static void expect_no_candidates(const char *what, const struct nextok_sampling_params *sp, const float *row)
{
    struct nextok_chain *c = make(sp);
    int32_t tok = -5;
    size_t n = 0;
    struct nextok_token_data out[V];
    if (c) {
        nextok_status rc = nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok);
        CHECK_MSG(rc == NEXTOK_ERR_NO_CANDIDATES, "%s: sample gave %s", what, nextok_status_name(rc));
        CHECK_EQ_INT(tok, -5);
        rc = nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, V, &n, NULL);
        CHECK_MSG(rc == NEXTOK_ERR_NO_CANDIDATES, "%s: probs gave %s", what, nextok_status_name(rc));
    }
    nextok_chain_free(c);
}

TEST(nothing_left)
{
    float row[V], ninf[V], nan[V];
    base_row(row);
    for (int i = 0; i < V; i++) ninf[i] = -INFINITY, nan[i] = NAN;
    for (int p = 0; p < 3; p++) {
        struct nextok_sampling_params sp = params(all_profiles[p]);
        expect_no_candidates("all -inf", &sp, ninf);
        sp.nan_policy = NEXTOK_NAN_AS_NEG_INF;
        expect_no_candidates("all NaN masked", &sp, nan);
        sp = params(all_profiles[p]);
        static const int32_t both[] = {4, 5};
        sp.allowed_ids = both, sp.n_allowed = 2, sp.banned_ids = both, sp.n_banned = 2;
        expect_no_candidates("allowed minus banned", &sp, row);
        sp = params(all_profiles[p]);
        float one[V];
        for (int i = 0; i < V; i++) one[i] = i == 9 ? 1.0f : -INFINITY;
        static const struct nextok_logit_bias ban9[] = {{9, -INFINITY}};
        sp.logit_bias = ban9, sp.n_logit_bias = 1;
        expect_no_candidates("bias -inf on the last token", &sp, one);
        sp = params(all_profiles[p]);
        static const int32_t allow9[] = {9};
        sp.allowed_ids = allow9, sp.n_allowed = 1;
        row[9] = -INFINITY;
        expect_no_candidates("allowed token is -inf", &sp, row);
        base_row(row);
    }
}

/* ---- invalid parameters ------------------------------------------------------ */

struct bad_case {
    const char *what;
    const char *field;         /* must appear in err.msg */
    enum nextok_profile profile;
    void (*mutate)(struct nextok_sampling_params *sp);
};

static const int32_t ids_bad_hi[] = {3, V};
static const int32_t ids_bad_lo[] = {-1};
static const struct nextok_logit_bias bias_bad_id[] = {{2, 1.0f}, {V, 1.0f}};
static const struct nextok_logit_bias bias_bad_neg[] = {{-3, 1.0f}};
static const struct nextok_logit_bias bias_pinf[] = {{2, INFINITY}};
static const struct nextok_logit_bias bias_nan[] = {{2, NAN}};
static const int32_t brk_ids[] = {1, V + 4};
static const size_t brk_off[] = {0, 2};

static void m_top_p_hi(struct nextok_sampling_params *sp) { sp->top_p = 1.5f; }
static void m_top_p_zero(struct nextok_sampling_params *sp) { sp->top_p = 0.0f; }
static void m_top_p_neg(struct nextok_sampling_params *sp) { sp->top_p = -0.2f; }
static void m_top_p_nan(struct nextok_sampling_params *sp) { sp->top_p = NAN; }
static void m_temp_neg(struct nextok_sampling_params *sp) { sp->temperature = -0.5f; }
static void m_min_p_hi(struct nextok_sampling_params *sp) { sp->min_p = 1.5f; }
static void m_min_p_neg(struct nextok_sampling_params *sp) { sp->min_p = -0.1f; }
static void m_min_p_nan(struct nextok_sampling_params *sp) { sp->min_p = NAN; }
static void m_vocab_zero(struct nextok_sampling_params *sp) { sp->n_vocab = 0; }
static void m_vocab_neg(struct nextok_sampling_params *sp) { sp->n_vocab = -7; }
static void m_bias_id(struct nextok_sampling_params *sp) { sp->logit_bias = bias_bad_id, sp->n_logit_bias = 2; }
static void m_bias_neg(struct nextok_sampling_params *sp) { sp->logit_bias = bias_bad_neg, sp->n_logit_bias = 1; }
static void m_bias_pinf(struct nextok_sampling_params *sp) { sp->logit_bias = bias_pinf, sp->n_logit_bias = 1; }
static void m_bias_nan(struct nextok_sampling_params *sp) { sp->logit_bias = bias_nan, sp->n_logit_bias = 1; }
static void m_allowed_hi(struct nextok_sampling_params *sp) { sp->allowed_ids = ids_bad_hi, sp->n_allowed = 2; }
static void m_allowed_lo(struct nextok_sampling_params *sp) { sp->allowed_ids = ids_bad_lo, sp->n_allowed = 1; }
static void m_banned_hi(struct nextok_sampling_params *sp) { sp->banned_ids = ids_bad_hi, sp->n_banned = 2; }
static void m_banned_lo(struct nextok_sampling_params *sp) { sp->banned_ids = ids_bad_lo, sp->n_banned = 1; }
static void m_eog_hi(struct nextok_sampling_params *sp) { sp->min_tokens = 3, sp->eog_ids = ids_bad_hi, sp->n_eog = 2; }
static void m_repeat_zero(struct nextok_sampling_params *sp) { sp->repeat_penalty = 0.0f; }
static void m_repeat_neg(struct nextok_sampling_params *sp) { sp->repeat_penalty = -1.1f; }
static void m_eps_one(struct nextok_sampling_params *sp) { sp->epsilon_cutoff = 1.0f; }
static void m_eps_neg(struct nextok_sampling_params *sp) { sp->epsilon_cutoff = -0.01f; }
static void m_eta_one(struct nextok_sampling_params *sp) { sp->eta_cutoff = 1.0f; }
static void m_eta_neg(struct nextok_sampling_params *sp) { sp->eta_cutoff = -0.01f; }
static void m_mirostat(struct nextok_sampling_params *sp) { sp->mirostat = 3; }
static void m_mirostat_neg(struct nextok_sampling_params *sp) { sp->mirostat = -1; }
static void m_last_n(struct nextok_sampling_params *sp) { sp->repeat_penalty = 1.1f, sp->penalty_last_n = -1; }
static void m_dry_on(struct nextok_sampling_params *sp)
{
    sp->dry_multiplier = 0.8f, sp->dry_base = 1.75f, sp->dry_allowed_length = 2;
    sp->dry_penalty_last_n = -1, sp->dry_breaker_ids = NULL, sp->dry_breaker_off = NULL, sp->dry_n_breakers = 0;
}
static void m_dry_base(struct nextok_sampling_params *sp) { m_dry_on(sp), sp->dry_base = 1.0f; }
static void m_dry_len(struct nextok_sampling_params *sp) { m_dry_on(sp), sp->dry_allowed_length = 0; }
static void m_dry_last(struct nextok_sampling_params *sp) { m_dry_on(sp), sp->dry_penalty_last_n = -2; }
static void m_dry_brk(struct nextok_sampling_params *sp)
{
    m_dry_on(sp), sp->dry_breaker_ids = brk_ids, sp->dry_breaker_off = brk_off, sp->dry_n_breakers = 1;
}
static void m_samplers(struct nextok_sampling_params *sp) { sp->samplers = "top_k;bogus;temperature"; }
static void m_profile(struct nextok_sampling_params *sp) { sp->profile = (enum nextok_profile)7; }
static void m_selector(struct nextok_sampling_params *sp) { sp->selector = (enum nextok_selector)9; }
static void m_ties(struct nextok_sampling_params *sp) { sp->top_k = 5, sp->top_k_ties = (enum nextok_ties)5; }
static void m_nan_policy(struct nextok_sampling_params *sp) { sp->nan_policy = (enum nextok_nan_policy)4; }

static const struct bad_case bad_cases[] = {
    {"top_p > 1", "top_p", NEXTOK_PROFILE_VLLM, m_top_p_hi},
    {"top_p = 0", "top_p", NEXTOK_PROFILE_HF, m_top_p_zero},
    {"top_p < 0", "top_p", NEXTOK_PROFILE_LLAMA, m_top_p_neg},
    {"top_p NaN", "top_p", NEXTOK_PROFILE_VLLM, m_top_p_nan},
    {"temperature < 0 (vllm)", "temperature", NEXTOK_PROFILE_VLLM, m_temp_neg},
    {"temperature < 0 (hf)", "temperature", NEXTOK_PROFILE_HF, m_temp_neg},
    {"min_p > 1", "min_p", NEXTOK_PROFILE_VLLM, m_min_p_hi},
    {"min_p < 0", "min_p", NEXTOK_PROFILE_LLAMA, m_min_p_neg},
    {"min_p NaN", "min_p", NEXTOK_PROFILE_HF, m_min_p_nan},
    {"n_vocab 0", "n_vocab", NEXTOK_PROFILE_VLLM, m_vocab_zero},
    {"n_vocab < 0", "n_vocab", NEXTOK_PROFILE_LLAMA, m_vocab_neg},
    {"bias id = n_vocab", "logit_bias", NEXTOK_PROFILE_VLLM, m_bias_id},
    {"bias id < 0", "logit_bias", NEXTOK_PROFILE_LLAMA, m_bias_neg},
    {"bias +inf", "logit_bias", NEXTOK_PROFILE_HF, m_bias_pinf},
    {"bias NaN", "logit_bias", NEXTOK_PROFILE_VLLM, m_bias_nan},
    {"allowed id = n_vocab", "allowed_ids", NEXTOK_PROFILE_VLLM, m_allowed_hi},
    {"allowed id < 0", "allowed_ids", NEXTOK_PROFILE_LLAMA, m_allowed_lo},
    {"banned id = n_vocab", "banned_ids", NEXTOK_PROFILE_HF, m_banned_hi},
    {"banned id < 0", "banned_ids", NEXTOK_PROFILE_VLLM, m_banned_lo},
    {"eog id = n_vocab", "eog_ids", NEXTOK_PROFILE_VLLM, m_eog_hi},
    {"repeat_penalty 0", "repeat_penalty", NEXTOK_PROFILE_VLLM, m_repeat_zero},
    {"repeat_penalty < 0", "repeat_penalty", NEXTOK_PROFILE_LLAMA, m_repeat_neg},
    {"epsilon_cutoff 1", "epsilon_cutoff", NEXTOK_PROFILE_HF, m_eps_one},
    {"epsilon_cutoff < 0", "epsilon_cutoff", NEXTOK_PROFILE_HF, m_eps_neg},
    {"eta_cutoff 1", "eta_cutoff", NEXTOK_PROFILE_HF, m_eta_one},
    {"eta_cutoff < 0", "eta_cutoff", NEXTOK_PROFILE_VLLM, m_eta_neg},
    {"mirostat 3", "mirostat", NEXTOK_PROFILE_LLAMA, m_mirostat},
    {"mirostat -1", "mirostat", NEXTOK_PROFILE_VLLM, m_mirostat_neg},
    {"penalty_last_n -1", "penalty_last_n", NEXTOK_PROFILE_LLAMA, m_last_n},
    {"dry_base 1", "dry_base", NEXTOK_PROFILE_LLAMA, m_dry_base},
    {"dry_allowed_length 0", "dry_allowed_length", NEXTOK_PROFILE_LLAMA, m_dry_len},
    {"dry_penalty_last_n -2", "dry_penalty_last_n", NEXTOK_PROFILE_LLAMA, m_dry_last},
    {"dry breaker id", "dry_breaker", NEXTOK_PROFILE_LLAMA, m_dry_brk},
    {"samplers unknown name", "samplers", NEXTOK_PROFILE_LLAMA, m_samplers},
    {"profile unknown", "profile", NEXTOK_PROFILE_VLLM, m_profile},
    {"selector unknown", "selector", NEXTOK_PROFILE_VLLM, m_selector},
    {"top_k_ties unknown", "ties", NEXTOK_PROFILE_HF, m_ties},
    {"nan_policy unknown", "nan_policy", NEXTOK_PROFILE_VLLM, m_nan_policy},
};

TEST(invalid_sampling_params_name_the_field)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *b = &bad_cases[i];
        struct nextok_sampling_params sp = params(b->profile);
        b->mutate(&sp);
        struct nextok_chain *c = (struct nextok_chain *)&sp; /* must be reset to NULL */
        struct nextok_error err;
        memset(&err, 0x55, sizeof err);
        err.msg[sizeof err.msg - 1] = 0;
        nextok_status rc = nextok_chain_init_sampling(&c, &sp, &err);
        CHECK_MSG(rc != NEXTOK_OK, "%s: accepted", b->what);
        CHECK_MSG(c == NULL, "%s: *out not NULL after failure", b->what);
        if (rc == NEXTOK_OK) {
            nextok_chain_free(c);
            continue;
        }
        CHECK_MSG(err.status == rc, "%s: err.status %d, returned %d", b->what, (int)err.status, (int)rc);
        CHECK_MSG(strstr(err.msg, b->field) != NULL, "%s: message \"%s\" does not name %s", b->what,
                  err.msg, b->field);
        /* without an error struct: same status, no crash */
        struct nextok_chain *c2 = NULL;
        CHECK_EQ_INT(nextok_chain_init_sampling(&c2, &sp, NULL), rc);
        CHECK(c2 == NULL);
    }
}

TEST(invalid_ids_use_token_range)
{
    /* the documented status for an id outside [0, n_vocab) */
    static void (*const m[])(struct nextok_sampling_params *) = {m_bias_id, m_allowed_hi, m_banned_lo, m_eog_hi};
    for (size_t i = 0; i < 4; i++) {
        struct nextok_sampling_params sp = params(NEXTOK_PROFILE_VLLM);
        m[i](&sp);
        struct nextok_chain *c = NULL;
        CHECK_EQ_INT(nextok_chain_init_sampling(&c, &sp, NULL), NEXTOK_ERR_TOKEN_RANGE);
        nextok_chain_free(c);
    }
}

TEST(valid_edge_params_accepted)
{
    /* llama accepts t < 0 as greedy; top_p = 1 and min_p = 0 or 1 are valid */
    struct nextok_sampling_params sp = params(NEXTOK_PROFILE_LLAMA);
    sp.temperature = -1.0f;
    struct nextok_chain *c = make(&sp);
    float row[V];
    base_row(row);
    struct nextok_token_data out[V];
    size_t n = 0;
    int32_t tok = -1;
    if (c) CHECK_OK(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, V, &n, &tok));
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(tok, 7);
    nextok_chain_free(c);
    sp = params(NEXTOK_PROFILE_VLLM);
    sp.top_p = 1.0f, sp.min_p = 1.0f;
    c = make(&sp);
    nextok_chain_free(c);
    sp.min_p = 0.0f, sp.temperature = 0.0f;
    c = make(&sp);
    nextok_chain_free(c);
}

static int rejected(nextok_status rc, struct nextok_sampler *s, const struct nextok_error *err, const char *what)
{
    CHECK_MSG(rc != NEXTOK_OK, "%s: accepted", what);
    CHECK_MSG(s == NULL, "%s: *out not NULL", what);
    CHECK_MSG(rc == NEXTOK_OK || err->status == rc, "%s: err.status %d vs %d", what, (int)err->status, (int)rc);
    CHECK_MSG(rc == NEXTOK_OK || err->msg[0], "%s: empty message", what);
    nextok_sampler_free(s);
    return rc != NEXTOK_OK;
}

TEST(invalid_sampler_constructors)
{
    struct nextok_sampler *s = NULL;
    struct nextok_error e = {0};
    static const int32_t ok_ids[] = {1, 2};
    struct nextok_logit_bias pinf = {1, INFINITY}, badid = {V, 1.0f};
#define REJ(call, what) (s = NULL, memset(&e, 0, sizeof e), rejected((call), s, &e, what))
    REJ(nextok_sampler_init_top_p(&s, 1.5f, NEXTOK_TIES_KEEP, 1, &e), "top_p 1.5");
    REJ(nextok_sampler_init_top_p(&s, 0.0f, NEXTOK_TIES_KEEP, 1, &e), "top_p 0");
    REJ(nextok_sampler_init_min_p(&s, 1.01f, 1, &e), "min_p 1.01");
    REJ(nextok_sampler_init_min_p(&s, -0.5f, 1, &e), "min_p -0.5");
    REJ(nextok_sampler_init_epsilon(&s, 1.0f, 1, &e), "epsilon 1");
    REJ(nextok_sampler_init_eta(&s, -0.1f, 1, &e), "eta -0.1");
    REJ(nextok_sampler_init_allowed(&s, V, ok_ids, 0, &e), "allowed: empty list");
    REJ(nextok_sampler_init_allowed(&s, V, ids_bad_hi, 2, &e), "allowed: id out of range");
    REJ(nextok_sampler_init_banned(&s, V, ids_bad_lo, 1, &e), "banned: id out of range");
    REJ(nextok_sampler_init_logit_bias(&s, V, &pinf, 1, &e), "bias +inf");
    REJ(nextok_sampler_init_logit_bias(&s, V, &badid, 1, &e), "bias id");
    REJ(nextok_sampler_init_logit_bias(&s, 0, NULL, 0, &e), "bias n_vocab 0");
    REJ(nextok_sampler_init_min_tokens(&s, V, 2, ids_bad_hi, 2, &e), "min_tokens eog id");
    struct nextok_penalty_params pp = nextok_penalty_default_params(V);
    pp.repeat = 0.0f;
    REJ(nextok_sampler_init_penalties(&s, &pp, &e), "penalties repeat 0");
    pp = nextok_penalty_default_params(V);
    pp.scope = NEXTOK_SCOPE_WINDOW, pp.last_n = -1;
    REJ(nextok_sampler_init_penalties(&s, &pp, &e), "penalties last_n -1");
    pp = nextok_penalty_default_params(0);
    REJ(nextok_sampler_init_penalties(&s, &pp, &e), "penalties n_vocab 0");
    struct nextok_dry_params dp = nextok_dry_default_params(V);
    dp.multiplier = 0.8f, dp.base = 0.9f;
    REJ(nextok_sampler_init_dry(&s, &dp, &e), "dry base 0.9");
    dp = nextok_dry_default_params(V);
    dp.multiplier = 0.8f, dp.allowed_length = 0;
    REJ(nextok_sampler_init_dry(&s, &dp, &e), "dry allowed_length 0");
    REJ(nextok_sampler_init_mirostat(&s, 0, 1, 5.0f, 0.1f, 100, &e), "mirostat n_vocab 0");
#undef REJ
    CHECK_EQ_INT(nextok_sampler_init_top_k(NULL, 5, NEXTOK_TIES_KEEP, NULL), NEXTOK_ERR_INVALID_ARG);

    struct nextok_chain_params cp = nextok_chain_default_params();
    struct nextok_chain *c = (struct nextok_chain *)&cp;
    memset(&e, 0, sizeof e);
    CHECK_EQ_INT(nextok_chain_init(&c, &cp, &e), NEXTOK_ERR_VOCAB_SIZE); /* n_vocab 0 */
    CHECK(c == NULL && strstr(e.msg, "n_vocab") != NULL);
    cp.n_vocab = V, cp.nan_policy = (enum nextok_nan_policy)9;
    CHECK(nextok_chain_init(&c, &cp, &e) == NEXTOK_ERR_INVALID_ARG && strstr(e.msg, "nan_policy"));
}

/* ---- ids, pointers, dtype, selector, buffer ---------------------------------- */

TEST(token_ids_out_of_range)
{
    struct nextok_sampling_params sp = params(NEXTOK_PROFILE_VLLM);
    struct nextok_chain *c = make(&sp);
    if (!c) return;
    static const int32_t bad_prompt[] = {1, 2, V};
    static const int32_t neg_prompt[] = {-4};
    CHECK_EQ_INT(nextok_chain_set_prompt(c, bad_prompt, 3), NEXTOK_ERR_TOKEN_RANGE);
    CHECK(strstr(nextok_chain_errmsg(c), "prompt") != NULL);
    CHECK_EQ_INT(nextok_chain_set_prompt(c, neg_prompt, 1), NEXTOK_ERR_TOKEN_RANGE);
    CHECK_EQ_INT(nextok_chain_accept(c, V), NEXTOK_ERR_TOKEN_RANGE);
    CHECK(strstr(nextok_chain_errmsg(c), "token") != NULL);
    CHECK_EQ_INT(nextok_chain_accept(c, -1), NEXTOK_ERR_TOKEN_RANGE);
    CHECK_EQ_INT(nextok_chain_step(c), 0);
    nextok_chain_free(c);
}

TEST(null_pointers)
{
    struct nextok_sampling_params sp = params(NEXTOK_PROFILE_VLLM);
    struct nextok_chain *c = NULL;
    struct nextok_error err = {0};
    CHECK_EQ_INT(nextok_chain_init_sampling(NULL, &sp, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_init_sampling(&c, NULL, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(c == NULL);
    c = make(&sp);
    if (!c) return;
    float row[V];
    base_row(row);
    int32_t tok = -1;
    size_t n = 0;
    struct nextok_token_data out[V];
    CHECK_EQ_INT(nextok_chain_sample(NULL, row, NEXTOK_DTYPE_F32, &tok), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_sample(c, NULL, NEXTOK_DTYPE_F32, &tok), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, NULL), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, NULL, 4, &n, NULL), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, V, NULL, NULL), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_probs(c, NULL, NEXTOK_DTYPE_F32, out, V, &n, NULL), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_set_prompt(c, NULL, 3), NEXTOK_ERR_INVALID_ARG);
    CHECK_OK(nextok_chain_set_prompt(c, NULL, 0)); /* an empty prompt */
    CHECK_EQ_INT(nextok_chain_accept(NULL, 1), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_add(c, NULL), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_chain_clone(c, NULL), NEXTOK_ERR_INVALID_ARG);
    /* probs with cap 0 and out NULL reports the size */
    CHECK_EQ_INT(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, NULL, 0, &n, NULL), NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK_EQ_INT(n, V);
    nextok_chain_free(c);
    nextok_chain_free(NULL);
    nextok_sampler_free(NULL);
}

TEST(bad_dtype)
{
    struct nextok_sampling_params sp = params(NEXTOK_PROFILE_VLLM);
    struct nextok_chain *c = make(&sp);
    if (!c) return;
    float row[V];
    base_row(row);
    int32_t tok = -9;
    CHECK_EQ_INT(nextok_chain_sample(c, row, (enum nextok_dtype)3, &tok), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(nextok_chain_errmsg(c), "dtype") != NULL);
    CHECK_EQ_INT(tok, -9);
    CHECK_EQ_INT(nextok_dtype_size((enum nextok_dtype)3), 0);
    nextok_chain_free(c);
}

TEST(chain_without_selector)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = V;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    if (!c) return;
    float row[V];
    base_row(row);
    int32_t tok = -3;
    CHECK_EQ_INT(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok), NEXTOK_ERR_STATE); /* empty chain */
    CHECK_EQ_INT(tok, -3);
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_top_k(&s, 5, NEXTOK_TIES_EXACT, NULL));
    if (s) CHECK_OK(nextok_chain_add(c, s));
    CHECK_EQ_INT(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok), NEXTOK_ERR_STATE);
    CHECK(strlen(nextok_chain_errmsg(c)) > 0);
    /* probs still works without a selector: softmax of the survivors, no token */
    struct nextok_token_data out[V];
    size_t n = 0;
    CHECK_OK(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, V, &n, &tok));
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_INT(tok, -1);
    nextok_chain_free(c);
}

TEST(probs_buffer_too_small)
{
    struct nextok_sampling_params sp = params(NEXTOK_PROFILE_VLLM);
    sp.top_k = 10, sp.top_k_ties = NEXTOK_TIES_EXACT;
    struct nextok_chain *c = make(&sp);
    if (!c) return;
    float row[V];
    base_row(row);
    struct nextok_token_data full[V], part[4];
    size_t n_full = 0, n = 0;
    CHECK_OK(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, full, V, &n_full, NULL));
    CHECK_EQ_INT(n_full, 10);
    CHECK_EQ_INT(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, part, 3, &n, NULL), NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK_EQ_INT(n, 10);
    for (int i = 0; i < 3; i++) CHECK(part[i].id == full[i].id && part[i].p == full[i].p);
    nextok_chain_free(c);
}

/* ---- failed calls change nothing --------------------------------------------- */

static const int32_t hist_prompt[] = {7, 20, 7, 33, 7};
static const int32_t hist_out[] = {20, 20, 7, 5};

/* A stateful llama chain: penalties, DRY, min-tokens, with history. */
static struct nextok_chain *stateful(int mirostat)
{
    struct nextok_sampling_params sp = params(NEXTOK_PROFILE_LLAMA);
    static const int32_t eog[] = {33};
    sp.repeat_penalty = 1.3f, sp.frequency_penalty = 0.2f, sp.presence_penalty = 0.1f, sp.penalty_last_n = 16;
    m_dry_on(&sp);
    sp.min_tokens = 6, sp.eog_ids = eog, sp.n_eog = 1;
    sp.xtc_probability = 0.5f, sp.xtc_threshold = 0.1f;
    sp.mirostat = mirostat, sp.mirostat_tau = 3.0f, sp.mirostat_eta = 0.5f;
    struct nextok_chain *c = make(&sp);
    if (!c) return NULL;
    CHECK_OK(nextok_chain_set_prompt(c, hist_prompt, 5));
    for (int i = 0; i < 4; i++) CHECK_OK(nextok_chain_accept(c, hist_out[i]));
    return c;
}

/* c's next distribution and token equal a fresh identical chain's. */
static void same_as_fresh(struct nextok_chain *c, int mirostat, const char *what)
{
    struct nextok_chain *f = stateful(mirostat);
    if (!c || !f) {
        nextok_chain_free(f);
        return;
    }
    CHECK_EQ_INT(nextok_chain_step(c), nextok_chain_step(f));
    float row[V];
    base_row(row);
    for (int k = 0; k < 3; k++) {
        struct nextok_token_data a[V], b[V];
        nextok_status ra, rb;
        size_t na = probs_sorted(c, row, NEXTOK_DTYPE_F32, a, &ra), nb = probs_sorted(f, row, NEXTOK_DTYPE_F32, b, &rb);
        CHECK_MSG(ra == NEXTOK_OK && rb == NEXTOK_OK && same_probs(a, na, b, nb), "%s: distribution changed", what);
        int32_t ta = -1, tb = -2;
        CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &ta));
        CHECK_OK(nextok_chain_sample(f, row, NEXTOK_DTYPE_F32, &tb));
        CHECK_MSG(ta == tb, "%s: token %d vs fresh %d", what, (int)ta, (int)tb);
        CHECK_OK(nextok_chain_accept(c, ta));
        CHECK_OK(nextok_chain_accept(f, tb));
    }
    if (mirostat) {
        float ma = nextok_sampler_mirostat_mu(nextok_chain_get(c, nextok_chain_n(c) - 1));
        float mb = nextok_sampler_mirostat_mu(nextok_chain_get(f, nextok_chain_n(f) - 1));
        CHECK_MSG(ma == mb && !isnan(ma), "%s: mu %g vs fresh %g", what, ma, mb);
    }
    nextok_chain_free(f);
}

TEST(failed_calls_change_nothing)
{
    for (int miro = 0; miro <= 2; miro += 2) {
        float nan_row[V], ninf[V], row[V];
        base_row(row);
        memcpy(nan_row, row, sizeof row);
        nan_row[20] = NAN;
        for (int i = 0; i < V; i++) ninf[i] = -INFINITY;
        struct nextok_chain *c = stateful(miro);
        if (!c) continue;
        /* draw a distribution first so mirostat has something to update from */
        int32_t tok = -1;
        CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
        struct nextok_chain *f = stateful(miro);
        int32_t tf = -1;
        if (f) CHECK_OK(nextok_chain_sample(f, row, NEXTOK_DTYPE_F32, &tf));
        CHECK_EQ_INT(tok, tf);

        uint64_t step = nextok_chain_step(c);
        int32_t keep = -77;
        size_t n = 0;
        struct nextok_token_data out[V];
        CHECK_EQ_INT(nextok_chain_sample(c, nan_row, NEXTOK_DTYPE_F32, &keep), NEXTOK_ERR_NAN);
        CHECK_EQ_INT(nextok_chain_probs(c, nan_row, NEXTOK_DTYPE_F32, out, V, &n, NULL), NEXTOK_ERR_NAN);
        CHECK_EQ_INT(nextok_chain_sample(c, ninf, NEXTOK_DTYPE_F32, &keep), NEXTOK_ERR_NO_CANDIDATES);
        CHECK_EQ_INT(nextok_chain_sample(c, row, (enum nextok_dtype)5, &keep), NEXTOK_ERR_INVALID_ARG);
        CHECK_EQ_INT(nextok_chain_accept(c, V + 1), NEXTOK_ERR_TOKEN_RANGE);
        static const int32_t bad_prompt[] = {1, 2, 3, 999};
        CHECK_EQ_INT(nextok_chain_set_prompt(c, bad_prompt, 4), NEXTOK_ERR_TOKEN_RANGE);
        CHECK_EQ_INT(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, 1, &n, NULL), NEXTOK_ERR_BUFFER_TOO_SMALL);
        CHECK_EQ_INT(keep, -77);
        CHECK_EQ_INT(nextok_chain_step(c), step);
        /* the fresh chain also drew once (sampling has no side effects on it either) */
        same_as_fresh(c, miro, miro ? "mirostat chain" : "penalty chain");
        nextok_chain_free(c);
        nextok_chain_free(f);
    }
}

int main(void)
{
    RUN(nan_is_an_error);
    RUN(nan_as_neg_inf_masks);
    RUN(plus_inf_forces);
    RUN(candidates_prepare_contract);
    RUN(nothing_left);
    RUN(invalid_sampling_params_name_the_field);
    RUN(invalid_ids_use_token_range);
    RUN(valid_edge_params_accepted);
    RUN(invalid_sampler_constructors);
    RUN(token_ids_out_of_range);
    RUN(null_pointers);
    RUN(bad_dtype);
    RUN(chain_without_selector);
    RUN(probs_buffer_too_small);
    RUN(failed_calls_change_nothing);
    return harness_done();
}
