/*
 * Processors: logit bias, allowed, banned, penalties (three scopes), DRY,
 * no-repeat-n-gram and min-tokens. Hand-computed cases for every formula and
 * edge, then randomized comparisons against direct transcriptions of the
 * definitions in docs/semantics.md (O(n^2) oracles), on full rows (the
 * identity fast path) and on shuffled rows (the fallback pass).
 */
#include "harness.h"
#include "nextok.h"
#include "sample/builtin.h"

#include <float.h>
#include <stdint.h>

#define NV 12
#define MAXH 512

/* ---- helpers ------------------------------------------------------------------ */

static void row(struct nextok_token_data_array *a, struct nextok_token_data *d, size_t n,
                const float *logits)
{
    for (size_t i = 0; i < n; i++)
        d[i] = (struct nextok_token_data){(int32_t)i, logits ? logits[i] : 0.0f, 0.0f};
    *a = (struct nextok_token_data_array){d, n, -1, false};
}

static const struct nextok_token_data *find(const struct nextok_token_data_array *a, int32_t id)
{
    for (size_t i = 0; i < a->size; i++)
        if (a->data[i].id == id) return &a->data[i];
    return NULL;
}

/* Logit of id after processing, NAN if it was removed. */
static float lg(const struct nextok_token_data_array *a, int32_t id)
{
    const struct nextok_token_data *d = find(a, id);
    return d ? d->logit : NAN;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

static void shuffle(struct nextok_token_data *d, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = rnd((uint32_t)i);
        struct nextok_token_data t = d[i - 1];
        d[i - 1] = d[j];
        d[j] = t;
    }
}

/* Distinct non-zero logits of both signs. */
static void test_logits(float *l, size_t n)
{
    for (size_t i = 0; i < n; i++) l[i] = (i % 2 ? -1.0f : 1.0f) * (0.37f + 0.61f * (float)i);
}

static bool same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/*
 * Apply s to the full row (fast path) and to a shuffled copy (fallback pass);
 * both must give the same survivors with bit-identical logits, and each must
 * keep its input's relative order. Leaves the full-row result in *out.
 */
static bool paths_agree(struct nextok_sampler *s, const float *logits, size_t n,
                        struct nextok_token_data *fd, struct nextok_token_data_array *out)
{
    struct nextok_token_data sd[MAXH];
    int pos[MAXH];
    struct nextok_token_data_array sh;
    row(out, fd, n, logits);
    row(&sh, sd, n, logits);
    shuffle(sd, n);
    for (size_t i = 0; i < n; i++) pos[sd[i].id] = (int)i;
    if (nextok_sampler_apply(s, out, 0) != NEXTOK_OK) return false;
    if (nextok_sampler_apply(s, &sh, 0) != NEXTOK_OK) return false;
    if (out->size != sh.size) return false;
    for (size_t i = 0; i < sh.size; i++) {
        if (!same_bits(sh.data[i].logit, lg(out, sh.data[i].id))) return false;
        if (i && pos[sh.data[i].id] < pos[sh.data[i - 1].id]) return false;
        if (i && out->data[i].id < out->data[i - 1].id) return false;
    }
    return true;
}

/* Touched ids: every id whose logit the full-row apply changed or removed is
 * listed, and applying to an array of just the listed ids agrees (the fused
 * path's use). Returns the number listed, or -1 on a mismatch. */
static int touched_consistent(struct nextok_sampler *s,
                              size_t (*touched)(const struct nextok_sampler *, int32_t *, size_t))
{
    float l[NV];
    int32_t ids[NV];
    struct nextok_token_data fd[NV], td[NV];
    struct nextok_token_data_array full, small;
    test_logits(l, NV);
    size_t nt = touched(s, ids, NV);
    if (nt > NV || touched(s, ids, 0) != nt) return -1;
    row(&full, fd, NV, l);
    if (nextok_sampler_apply(s, &full, 0) != NEXTOK_OK) return -1;
    bool listed[NV] = {0};
    for (size_t k = 0; k < nt; k++) {
        if (ids[k] < 0 || ids[k] >= NV || listed[ids[k]]) return -1; /* unique, in range */
        listed[ids[k]] = true;
    }
    for (int32_t t = 0; t < NV; t++)
        if (!listed[t] && !same_bits(lg(&full, t), l[t])) return -1;
    if (nt == 0) return 0; /* an empty array is not a valid input */
    for (size_t k = 0; k < nt; k++) td[k] = (struct nextok_token_data){ids[k], l[ids[k]], 0.0f};
    small = (struct nextok_token_data_array){td, nt, -1, false};
    if (nextok_sampler_apply(s, &small, 0) != NEXTOK_OK) return -1;
    for (size_t k = 0; k < nt; k++) {
        float a = lg(&small, ids[k]), b = lg(&full, ids[k]);
        if (!(same_bits(a, b) || (isnan(a) && isnan(b)))) return -1;
    }
    return (int)nt;
}

static void accept_all(struct nextok_sampler *s, const int32_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++) CHECK_OK(nextok_sampler_accept(s, t[i]));
}

static void apply_row(struct nextok_sampler *s, const float *l, struct nextok_token_data *d,
                      struct nextok_token_data_array *a)
{
    row(a, d, NV, l);
    CHECK_OK(nextok_sampler_apply(s, a, 0));
}

/* Two full-row applications give bit-identical results. */
static bool same_result(struct nextok_sampler *a, struct nextok_sampler *b)
{
    float l[NV];
    struct nextok_token_data da[NV], db[NV];
    struct nextok_token_data_array ra, rb;
    test_logits(l, NV);
    row(&ra, da, NV, l);
    row(&rb, db, NV, l);
    if (nextok_sampler_apply(a, &ra, 0) != NEXTOK_OK) return false;
    if (nextok_sampler_apply(b, &rb, 0) != NEXTOK_OK) return false;
    if (ra.size != rb.size) return false;
    for (size_t i = 0; i < ra.size; i++)
        if (ra.data[i].id != rb.data[i].id || !same_bits(ra.data[i].logit, rb.data[i].logit))
            return false;
    return true;
}

static struct nextok_error fresh_err(void)
{
    struct nextok_error e;
    memset(&e, 0, sizeof e);
    return e;
}

/* The constructor fails with want_, leaves *out NULL and names the parameter. */
static char not_null_;
#define CHECK_REJECT(call, want_, needle)                                               \
    do {                                                                                \
        struct nextok_error e_ = fresh_err();                                           \
        struct nextok_sampler *s_ = (struct nextok_sampler *)(void *)&not_null_;        \
        nextok_status rc_ = call(&s_, &e_);                                             \
        CHECK_MSG(rc_ == (want_), "%s -> %s", #call, nextok_status_name(rc_));          \
        CHECK(s_ == NULL);                                                              \
        CHECK(e_.status == (want_));                                                    \
        CHECK_MSG(strstr(e_.msg, needle) != NULL, "msg '%s' lacks '%s'", e_.msg, needle); \
    } while (0)

/* ---- logit bias ------------------------------------------------------------------ */

static float l8[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f};

TEST(bias_adds_twice_and_removes)
{
    const struct nextok_logit_bias b[] = {{2, 1.5f}, {5, -2.0f}, {2, 0.25f}, {6, -INFINITY}};
    struct nextok_sampler *s;
    struct nextok_token_data d[8];
    struct nextok_token_data_array a;
    CHECK_OK(nextok_sampler_init_logit_bias(&s, 8, b, 4, NULL));
    row(&a, d, 8, l8);
    a.selected = 3;
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_EQ_INT(a.size, 7);
    const int32_t want[] = {0, 1, 2, 3, 4, 5, 7};
    for (size_t i = 0; i < 7; i++) CHECK_EQ_INT(a.data[i].id, want[i]);
    CHECK_NEAR(lg(&a, 2), 2.75, 0);
    CHECK_NEAR(lg(&a, 5), 0.5, 0);
    CHECK_NEAR(lg(&a, 7), 3.5, 0);
    CHECK(!a.sorted);
    CHECK_EQ_INT(a.selected, -1);
    CHECK_EQ_INT(strcmp(nextok_sampler_name(s), "logit_bias"), 0);
    CHECK_EQ_INT(strcmp(nextok__iface_logit_bias.name(NULL), "logit_bias"), 0);
    nextok_sampler_free(s);
}

TEST(bias_removal_keeps_sorted_order)
{
    const struct nextok_logit_bias b[] = {{6, -INFINITY}, {1, 0.0f}, {3, 2.0f}, {3, -INFINITY}};
    struct nextok_sampler *s;
    struct nextok_token_data d[8];
    for (int i = 0; i < 8; i++) d[i] = (struct nextok_token_data){7 - i, l8[7 - i], 0.0f};
    struct nextok_token_data_array a = {d, 8, -1, true};
    CHECK_OK(nextok_sampler_init_logit_bias(&s, 8, b, 4, NULL));
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    const int32_t want[] = {7, 5, 4, 2, 1, 0};
    CHECK_EQ_INT(a.size, 6);
    for (size_t i = 0; i < a.size && i < 6; i++) CHECK_EQ_INT(a.data[i].id, want[i]);
    CHECK(a.sorted); /* only removals and a zero bias: order still valid */
    int32_t ids[8];
    CHECK_EQ_INT(nextok__bias_touched(s, ids, 8), 2); /* the zero bias is not listed */
    CHECK(ids[0] == 3 && ids[1] == 6);
    nextok_sampler_free(s);
}

TEST(bias_saturates)
{
    const struct nextok_logit_bias b[] = {{0, 3e38f}, {1, -3e38f}, {1, -3e38f}, {2, 3e38f}, {2, 3e38f}};
    float l[3] = {3e38f, -3e38f, 1.0f};
    struct nextok_sampler *s;
    struct nextok_token_data d[3];
    struct nextok_token_data_array a;
    CHECK_OK(nextok_sampler_init_logit_bias(&s, 3, b, 5, NULL));
    row(&a, d, 3, l);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_EQ_INT(a.size, 3); /* two huge negative biases are not a removal */
    CHECK(lg(&a, 0) == FLT_MAX);
    CHECK(lg(&a, 1) == -FLT_MAX);
    CHECK(lg(&a, 2) == FLT_MAX);
    nextok_sampler_free(s);
}

TEST(bias_paths_agree)
{
    const struct nextok_logit_bias b[] = {{9, 1.0f}, {0, -INFINITY}, {4, -0.5f}, {11, -INFINITY}, {4, 2.0f}};
    float l[NV];
    struct nextok_token_data fd[NV];
    struct nextok_token_data_array a;
    struct nextok_sampler *s;
    test_logits(l, NV);
    CHECK_OK(nextok_sampler_init_logit_bias(&s, NV, b, 5, NULL));
    for (int rep = 0; rep < 20; rep++) CHECK(paths_agree(s, l, NV, fd, &a));
    CHECK_EQ_INT(a.size, NV - 2);
    CHECK_NEAR(lg(&a, 4), l[4] + 1.5f, 0);
    /* a row shorter than the largest listed id: the fallback pass */
    row(&a, fd, 10, l);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_EQ_INT(a.size, 9);
    CHECK_NEAR(lg(&a, 9), l[9] + 1.0f, 0);
    CHECK(touched_consistent(s, nextok__bias_touched) == 4);
    nextok_sampler_free(s);
}

#define INIT_BIAS(b, n, nv) \
    static nextok_status init_bias_##b(struct nextok_sampler **o, struct nextok_error *e) \
    { return nextok_sampler_init_logit_bias(o, nv, b, n, e); }
static const struct nextok_logit_bias bias_bad_tok[] = {{1, 1.0f}, {1, 1.0f}, {1, 1.0f}, {70000, 1.0f}};
static const struct nextok_logit_bias bias_nan[] = {{1, NAN}};
static const struct nextok_logit_bias bias_pinf[] = {{1, INFINITY}};
static const struct nextok_logit_bias bias_neg[] = {{-1, 0.0f}};
INIT_BIAS(bias_bad_tok, 4, 32000)
INIT_BIAS(bias_nan, 1, 8)
INIT_BIAS(bias_pinf, 1, 8)
INIT_BIAS(bias_neg, 1, 8)
static nextok_status init_bias_null(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_logit_bias(o, 8, NULL, 2, e); }
static nextok_status init_bias_vocab(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_logit_bias(o, 0, bias_nan, 0, e); }

TEST(bias_rejects)
{
    CHECK_REJECT(init_bias_bias_bad_tok, NEXTOK_ERR_TOKEN_RANGE, "bias[3].token: 70000 outside [0, 32000)");
    CHECK_REJECT(init_bias_bias_nan, NEXTOK_ERR_INVALID_ARG, "bias[0].bias");
    CHECK_REJECT(init_bias_bias_pinf, NEXTOK_ERR_INVALID_ARG, "bias[0].bias");
    CHECK_REJECT(init_bias_bias_neg, NEXTOK_ERR_TOKEN_RANGE, "bias[0].token");
    CHECK_REJECT(init_bias_null, NEXTOK_ERR_INVALID_ARG, "bias");
    CHECK_REJECT(init_bias_vocab, NEXTOK_ERR_VOCAB_SIZE, "n_vocab");
}

TEST(stateless_validate_ids)
{
    const int32_t ok_ids[] = {1, 2}, bad_ids[] = {1, 8};
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_banned(&s, 8, ok_ids, 2, NULL));
    CHECK_EQ_INT(nextok_sampler_accept(s, 8), NEXTOK_ERR_TOKEN_RANGE);
    CHECK(strstr(nextok_sampler_errmsg(s), "token") != NULL);
    CHECK_EQ_INT(nextok_sampler_set_prompt(s, bad_ids, 2), NEXTOK_ERR_TOKEN_RANGE);
    CHECK(strstr(nextok_sampler_errmsg(s), "prompt[1]") != NULL);
    CHECK_OK(nextok_sampler_accept(s, 7));
    CHECK_OK(nextok_sampler_set_prompt(s, ok_ids, 2));
    nextok_sampler_free(s);
}

/* ---- allowed / banned ---------------------------------------------------------------- */

TEST(allowed_whitelist)
{
    const int32_t ids[] = {5, 1, 3, 3};
    struct nextok_sampler *s;
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    float l[NV];
    test_logits(l, NV);
    CHECK_OK(nextok_sampler_init_allowed(&s, NV, ids, 4, NULL));
    CHECK_EQ_INT(strcmp(nextok__iface_allowed.name(NULL), "allowed"), 0);
    size_t n = 0;
    const int32_t *w = nextok__allowed_ids(s, &n);
    CHECK_EQ_INT(n, 3);
    CHECK(w && w[0] == 1 && w[1] == 3 && w[2] == 5);
    for (int rep = 0; rep < 10; rep++) CHECK(paths_agree(s, l, NV, d, &a));
    CHECK_EQ_INT(a.size, 3);
    CHECK(a.data[0].id == 1 && a.data[1].id == 3 && a.data[2].id == 5);
    CHECK(same_bits(a.data[1].logit, l[3]));
    row(&a, d, 4, l); /* id 5 is not a candidate */
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_EQ_INT(a.size, 2);
    CHECK(a.data[0].id == 1 && a.data[1].id == 3);
    row(&a, d, 1, l); /* nothing allowed is left: empty, not an error */
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_EQ_INT(a.size, 0);
    nextok_sampler_free(s);
}

static const int32_t ids_bad[] = {1, 8};
static nextok_status init_allowed_empty(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_allowed(o, 8, ids_bad, 0, e); }
static nextok_status init_allowed_range(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_allowed(o, 8, ids_bad, 2, e); }
static nextok_status init_allowed_null(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_allowed(o, 8, NULL, 2, e); }
static nextok_status init_allowed_vocab(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_allowed(o, -5, ids_bad, 1, e); }
static nextok_status init_banned_range(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_banned(o, 8, ids_bad, 2, e); }
static nextok_status init_banned_null(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_banned(o, 8, NULL, 1, e); }
static nextok_status init_banned_vocab(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_banned(o, 0, NULL, 0, e); }

TEST(allowed_banned_reject)
{
    CHECK_REJECT(init_allowed_empty, NEXTOK_ERR_INVALID_ARG, "ids");
    CHECK_REJECT(init_allowed_range, NEXTOK_ERR_TOKEN_RANGE, "ids[1]: 8 outside [0, 8)");
    CHECK_REJECT(init_allowed_null, NEXTOK_ERR_INVALID_ARG, "ids");
    CHECK_REJECT(init_allowed_vocab, NEXTOK_ERR_VOCAB_SIZE, "n_vocab");
    CHECK_REJECT(init_banned_range, NEXTOK_ERR_TOKEN_RANGE, "ids[1]: 8 outside [0, 8)");
    CHECK_REJECT(init_banned_null, NEXTOK_ERR_INVALID_ARG, "ids");
    CHECK_REJECT(init_banned_vocab, NEXTOK_ERR_VOCAB_SIZE, "n_vocab");
}

TEST(banned_removes)
{
    const int32_t ids[] = {0, 11, 3, 3};
    struct nextok_sampler *s;
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    float l[NV];
    test_logits(l, NV);
    CHECK_OK(nextok_sampler_init_banned(&s, NV, ids, 4, NULL));
    for (int rep = 0; rep < 10; rep++) CHECK(paths_agree(s, l, NV, d, &a));
    CHECK_EQ_INT(a.size, NV - 3);
    CHECK(!find(&a, 0) && !find(&a, 3) && !find(&a, 11));
    CHECK(a.data[0].id == 1 && a.data[2].id == 4);
    int32_t t[4];
    CHECK_EQ_INT(nextok__banned_touched(s, t, 4), 3);
    CHECK(t[0] == 0 && t[1] == 3 && t[2] == 11);
    CHECK_EQ_INT(nextok__banned_touched(s, t, 1), 3);
    CHECK(touched_consistent(s, nextok__banned_touched) == 3);
    nextok_sampler_free(s);
    CHECK_OK(nextok_sampler_init_banned(&s, NV, NULL, 0, NULL)); /* empty list: no-op */
    apply_row(s, l, d, &a);
    CHECK_EQ_INT(a.size, NV);
    nextok_sampler_free(s);
}

/* ---- penalties ---------------------------------------------------------------------- */

static const float pl[NV] = {0.0f, 4.0f, -2.0f, 3.0f, 1.0f, 0.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
static const int32_t pprompt[] = {1, 2, 2};
static const int32_t pout[] = {2, 3, 3, 3};

static struct nextok_sampler *pen(enum nextok_penalty_scope scope, int32_t last_n, float r,
                                  float f, float q)
{
    struct nextok_penalty_params p = nextok_penalty_default_params(NV);
    struct nextok_sampler *s = NULL;
    p.scope = scope;
    p.last_n = last_n;
    p.repeat = r;
    p.frequency = f;
    p.presence = q;
    CHECK_OK(nextok_sampler_init_penalties(&s, &p, NULL));
    return s;
}

/* The standard history: prompt [1 2 2], outputs [2 3 3 3]; returns the row. */
static void pen_case(struct nextok_sampler *s, struct nextok_token_data *d,
                     struct nextok_token_data_array *a)
{
    CHECK_OK(nextok_sampler_set_prompt(s, pprompt, 3));
    accept_all(s, pout, 4);
    apply_row(s, pl, d, a);
}

TEST(penalty_defaults)
{
    struct nextok_penalty_params p = nextok_penalty_default_params(100);
    CHECK_EQ_INT(p.n_vocab, 100);
    CHECK_EQ_INT(p.scope, NEXTOK_SCOPE_PROMPT_OUTPUT);
    CHECK_EQ_INT(p.last_n, 64);
    CHECK(p.repeat == 1.0f && p.frequency == 0.0f && p.presence == 0.0f);
    struct nextok_dry_params q = nextok_dry_default_params(100);
    CHECK_EQ_INT(q.n_vocab, 100);
    CHECK(q.multiplier == 0.0f && q.base == 1.75f);
    CHECK_EQ_INT(q.allowed_length, 2);
    CHECK_EQ_INT(q.last_n, -1);
    CHECK(q.n_breakers == 0 && q.breaker_ids == NULL && q.breaker_off == NULL);
}

TEST(penalty_each_formula)
{
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    struct nextok_sampler *s = pen(NEXTOK_SCOPE_PROMPT_OUTPUT, 64, 2.0f, 0.0f, 0.0f);
    pen_case(s, d, &a); /* repetition: positive divided, negative multiplied */
    CHECK_NEAR(lg(&a, 1), 2.0, 0);
    CHECK_NEAR(lg(&a, 2), -4.0, 0);
    CHECK_NEAR(lg(&a, 3), 1.5, 0);
    CHECK_NEAR(lg(&a, 4), 1.0, 0);
    CHECK(!a.sorted);
    nextok_sampler_free(s);
    s = pen(NEXTOK_SCOPE_PROMPT_OUTPUT, 64, 1.0f, 0.5f, 0.0f);
    pen_case(s, d, &a); /* frequency: output counts only */
    CHECK_NEAR(lg(&a, 1), 4.0, 0);
    CHECK_NEAR(lg(&a, 2), -2.5, 0);
    CHECK_NEAR(lg(&a, 3), 1.5, 0);
    nextok_sampler_free(s);
    s = pen(NEXTOK_SCOPE_PROMPT_OUTPUT, 64, 1.0f, 0.0f, 0.25f);
    pen_case(s, d, &a); /* presence: once per output token seen */
    CHECK_NEAR(lg(&a, 1), 4.0, 0);
    CHECK_NEAR(lg(&a, 2), -2.25, 0);
    CHECK_NEAR(lg(&a, 3), 2.75, 0);
    nextok_sampler_free(s);
}

TEST(penalty_scopes)
{
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    struct nextok_sampler *s = pen(NEXTOK_SCOPE_PROMPT_OUTPUT, 64, 2.0f, 0.5f, 0.25f);
    pen_case(s, d, &a);
    CHECK_NEAR(lg(&a, 1), 2.0, 0);
    CHECK_NEAR(lg(&a, 2), -4.75, 0);
    CHECK_NEAR(lg(&a, 3), -0.25, 0);
    CHECK_NEAR(lg(&a, 0), 0.0, 0);
    nextok_sampler_free(s);
    s = pen(NEXTOK_SCOPE_HISTORY, 0, 2.0f, 0.5f, 0.25f); /* last_n ignored outside WINDOW */
    pen_case(s, d, &a);
    CHECK_NEAR(lg(&a, 1), 1.25, 0);
    CHECK_NEAR(lg(&a, 2), -5.75, 0);
    CHECK_NEAR(lg(&a, 3), -0.25, 0);
    nextok_sampler_free(s);
    s = pen(NEXTOK_SCOPE_WINDOW, 4, 2.0f, 0.5f, 0.25f); /* window [2 3 3 3] */
    pen_case(s, d, &a);
    CHECK_NEAR(lg(&a, 1), 4.0, 0);
    CHECK_NEAR(lg(&a, 2), -4.75, 0);
    CHECK_NEAR(lg(&a, 3), -0.25, 0);
    nextok_sampler_free(s);
    s = pen(NEXTOK_SCOPE_WINDOW, 0, 2.0f, 0.5f, 0.25f); /* last_n = 0: off */
    pen_case(s, d, &a);
    for (int32_t t = 0; t < NV; t++) CHECK(same_bits(lg(&a, t), pl[t]));
    int32_t ids[NV];
    CHECK_EQ_INT(nextok__penalties_touched(s, ids, NV), 0);
    nextok_sampler_free(s);
}

TEST(penalty_window_slides)
{
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    struct nextok_sampler *s = pen(NEXTOK_SCOPE_WINDOW, 4, 2.0f, 0.5f, 0.25f);
    pen_case(s, d, &a);
    CHECK_OK(nextok_sampler_accept(s, 4)); /* window [3 3 3 4]: the last 2 slid out */
    apply_row(s, pl, d, &a);
    CHECK_NEAR(lg(&a, 2), -2.0, 0);
    CHECK_NEAR(lg(&a, 3), -0.25, 0);
    CHECK_NEAR(lg(&a, 4), -0.25, 0);
    accept_all(s, (const int32_t[]){5, 5, 5}, 3); /* window [4 5 5 5] */
    apply_row(s, pl, d, &a);
    CHECK_NEAR(lg(&a, 3), 3.0, 0);
    CHECK_NEAR(lg(&a, 4), -0.25, 0);
    CHECK_NEAR(lg(&a, 5), -1.5, 0);
    int32_t ids[NV];
    CHECK_EQ_INT(nextok__penalties_touched(s, ids, NV), 2);
    nextok_sampler_free(s);
}

TEST(penalty_window_set_prompt_keeps_outputs)
{
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    struct nextok_sampler *s = pen(NEXTOK_SCOPE_WINDOW, 10, 1.0f, 1.0f, 0.0f);
    CHECK_OK(nextok_sampler_set_prompt(s, pprompt, 3));
    accept_all(s, (const int32_t[]){2, 3, 3, 3, 4, 5, 5, 5}, 8);
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){7, 7, 7, 7, 7}, 5));
    apply_row(s, pl, d, &a); /* window [7 7 2 3 3 3 4 5 5 5] */
    CHECK_NEAR(lg(&a, 7), -2.0, 0);
    CHECK_NEAR(lg(&a, 2), -3.0, 0);
    CHECK_NEAR(lg(&a, 3), 0.0, 0);
    CHECK_NEAR(lg(&a, 5), -2.5, 0);
    CHECK_NEAR(lg(&a, 1), 4.0, 0);
    nextok_sampler_free(s);
    s = pen(NEXTOK_SCOPE_PROMPT_OUTPUT, 64, 2.0f, 1.0f, 0.0f);
    pen_case(s, d, &a);
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){4}, 1)); /* 1 and 2's prompt part gone */
    apply_row(s, pl, d, &a);
    CHECK_NEAR(lg(&a, 1), 4.0, 0);
    CHECK_NEAR(lg(&a, 4), 0.5, 0);
    CHECK_NEAR(lg(&a, 2), -5.0, 0); /* still an output token once */
    nextok_sampler_free(s);
}

TEST(penalty_saturates)
{
    float l[NV] = {3e38f, -3e38f};
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    struct nextok_sampler *s = pen(NEXTOK_SCOPE_HISTORY, 0, 1e-3f, 3e38f, 0.0f);
    accept_all(s, (const int32_t[]){0, 1, 1}, 3);
    apply_row(s, l, d, &a);
    CHECK(lg(&a, 0) == FLT_MAX - 3e38f); /* 3e38 / 1e-3 saturates, then one 3e38 off */
    CHECK(lg(&a, 1) == -FLT_MAX);        /* 3e38 * 2 overflows: saturates, not -inf */
    nextok_sampler_free(s);
    s = pen(NEXTOK_SCOPE_HISTORY, 0, 1e3f, 0.0f, -3e38f);
    accept_all(s, (const int32_t[]){0, 1}, 2);
    apply_row(s, l, d, &a);
    CHECK(lg(&a, 0) == 3e38f / 1e3f + 3e38f);
    CHECK(lg(&a, 1) == -FLT_MAX + 3e38f);
    nextok_sampler_free(s);
    s = pen(NEXTOK_SCOPE_PROMPT_OUTPUT, 0, 1.0f, 0.0f, 3e38f);
    accept_all(s, (const int32_t[]){1}, 1);
    apply_row(s, l, d, &a);
    CHECK(lg(&a, 1) == -FLT_MAX); /* -3e38 - 3e38 saturates */
    nextok_sampler_free(s);
}

static struct nextok_penalty_params pbad;
static nextok_status init_pen_bad(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_penalties(o, &pbad, e); }
static nextok_status init_pen_null(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_penalties(o, NULL, e); }

TEST(penalty_rejects)
{
    CHECK_REJECT(init_pen_null, NEXTOK_ERR_INVALID_ARG, "params");
    pbad = nextok_penalty_default_params(0);
    CHECK_REJECT(init_pen_bad, NEXTOK_ERR_VOCAB_SIZE, "n_vocab");
    pbad = nextok_penalty_default_params(NV);
    pbad.scope = (enum nextok_penalty_scope)7;
    CHECK_REJECT(init_pen_bad, NEXTOK_ERR_INVALID_ARG, "scope");
    pbad = nextok_penalty_default_params(NV);
    pbad.last_n = -1;
    CHECK_REJECT(init_pen_bad, NEXTOK_ERR_INVALID_ARG, "last_n");
    pbad = nextok_penalty_default_params(NV);
    pbad.repeat = -1.0f;
    CHECK_REJECT(init_pen_bad, NEXTOK_ERR_INVALID_ARG, "repeat: must be > 0 and finite, got -1");
    pbad.repeat = 0.0f;
    CHECK_REJECT(init_pen_bad, NEXTOK_ERR_INVALID_ARG, "repeat");
    pbad.repeat = INFINITY;
    CHECK_REJECT(init_pen_bad, NEXTOK_ERR_INVALID_ARG, "repeat");
    pbad = nextok_penalty_default_params(NV);
    pbad.frequency = NAN;
    CHECK_REJECT(init_pen_bad, NEXTOK_ERR_INVALID_ARG, "frequency");
    pbad = nextok_penalty_default_params(NV);
    pbad.presence = -INFINITY;
    CHECK_REJECT(init_pen_bad, NEXTOK_ERR_INVALID_ARG, "presence");
}

/* Logit of every id after a full-row apply (NAN: removed). */
static void snapshot(struct nextok_sampler *s, float *out)
{
    float l[NV];
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    test_logits(l, NV);
    row(&a, d, NV, l);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    for (int32_t t = 0; t < NV; t++) out[t] = lg(&a, t);
}

static bool same_snapshot(const float *x, const float *y)
{
    for (int t = 0; t < NV; t++)
        if (!(same_bits(x[t], y[t]) || (isnan(x[t]) && isnan(y[t])))) return false;
    return true;
}

static bool is_raw(const float *x)
{
    float l[NV];
    test_logits(l, NV);
    return same_snapshot(x, l);
}

/* Out-of-range ids fail with TOKEN_RANGE and change nothing. */
static void check_bad_ids_unchanged(struct nextok_sampler *s)
{
    float before[NV], after[NV];
    snapshot(s, before);
    CHECK_EQ_INT(nextok_sampler_accept(s, NV), NEXTOK_ERR_TOKEN_RANGE);
    CHECK_MSG(strstr(nextok_sampler_errmsg(s), "token") != NULL, "%s", nextok_sampler_errmsg(s));
    CHECK_EQ_INT(nextok_sampler_accept(s, -1), NEXTOK_ERR_TOKEN_RANGE);
    CHECK_EQ_INT(nextok_sampler_set_prompt(s, (const int32_t[]){1, NV + 3}, 2),
                 NEXTOK_ERR_TOKEN_RANGE);
    CHECK_MSG(strstr(nextok_sampler_errmsg(s), "prompt[1]") != NULL, "%s", nextok_sampler_errmsg(s));
    snapshot(s, after);
    CHECK(same_snapshot(before, after));
}

/* A clone is deep: it diverges from the original and outlives it. */
static void check_clone_reset(struct nextok_sampler *s, const int32_t *more, size_t n_more)
{
    float before[NV], x[NV], y[NV];
    struct nextok_sampler *c = NULL;
    snapshot(s, before);
    CHECK_OK(nextok_sampler_clone(s, &c));
    if (!c) return;
    CHECK(same_result(s, c));
    accept_all(c, more, n_more);
    snapshot(s, x);
    CHECK(same_snapshot(before, x));
    snapshot(c, y);
    CHECK(!same_snapshot(before, y));
    nextok_sampler_reset(s);
    snapshot(s, x);
    CHECK(is_raw(x));
    snapshot(c, x);
    CHECK(same_snapshot(x, y));
    nextok_sampler_free(c);
}

TEST(penalty_state)
{
    const enum nextok_penalty_scope scopes[] = {NEXTOK_SCOPE_PROMPT_OUTPUT, NEXTOK_SCOPE_WINDOW,
                                                NEXTOK_SCOPE_HISTORY};
    for (int k = 0; k < 3; k++) {
        struct nextok_token_data d[NV];
        struct nextok_token_data_array a;
        struct nextok_sampler *s = pen(scopes[k], 5, 1.5f, 0.5f, 0.25f);
        pen_case(s, d, &a);
        check_bad_ids_unchanged(s);
        /* window [2 2 3 3 3] holds two ids; the other scopes also see prompt id 1 */
        CHECK(touched_consistent(s, nextok__penalties_touched) == (k == 1 ? 2 : 3));
        check_clone_reset(s, (const int32_t[]){8, 8, 9}, 3);
        CHECK(touched_consistent(s, nextok__penalties_touched) == 0);
        nextok_sampler_free(s);
    }
    CHECK_EQ_INT(strcmp(nextok__iface_penalties.name(NULL), "penalties"), 0);
}

/* The definition, transcribed: counts straight from prompt and outputs. */
static float pen_oracle_one(const struct nextok_penalty_params *p, const int32_t *pr, size_t np,
                            const int32_t *out, size_t no, int32_t t, float l)
{
    uint32_t in_prompt = 0, in_out = 0, in_win = 0;
    for (size_t i = 0; i < np; i++) in_prompt += pr[i] == t;
    for (size_t i = 0; i < no; i++) in_out += out[i] == t;
    size_t total = np + no, w = (size_t)p->last_n < total ? (size_t)p->last_n : total;
    for (size_t i = total - w; i < total; i++) in_win += (i < np ? pr[i] : out[i - np]) == t;
    uint32_t present = p->scope == NEXTOK_SCOPE_WINDOW ? in_win : in_prompt + in_out;
    uint32_t cnt = p->scope == NEXTOK_SCOPE_WINDOW ? in_win
                   : p->scope == NEXTOK_SCOPE_HISTORY ? in_prompt + in_out : in_out;
    if (p->scope == NEXTOK_SCOPE_WINDOW && p->last_n == 0) return l;
    if (p->repeat != 1.0f && present) l = nextok__sat(l > 0 ? l / p->repeat : l * p->repeat);
    if (cnt) {
        l = nextok__sat(l - p->frequency * (float)cnt);
        l = nextok__sat(l - p->presence);
    }
    return l;
}

/* Random history edits, each followed by a comparison with fn's expectations. */
struct hist {
    int32_t prompt[64], out[MAXH];
    size_t np, no;
};

static void hist_step(struct nextok_sampler *s, struct hist *h, int32_t alphabet)
{
    uint32_t op = rnd(100);
    if (op < 8) {
        h->np = rnd(20);
        for (size_t i = 0; i < h->np; i++) h->prompt[i] = (int32_t)rnd((uint32_t)alphabet);
        CHECK_OK(nextok_sampler_set_prompt(s, h->prompt, h->np));
    } else if (op < 10) {
        nextok_sampler_reset(s);
        h->np = h->no = 0;
    } else if (h->no < MAXH) {
        h->out[h->no] = (int32_t)rnd((uint32_t)alphabet);
        CHECK_OK(nextok_sampler_accept(s, h->out[h->no]));
        h->no++;
    }
}

TEST(penalty_matches_definition)
{
    const int32_t last_ns[] = {0, 1, 3, 7, 64};
    const float rs[] = {1.0f, 1.3f, 0.7f}, fs[] = {0.0f, 0.4f, -0.3f}, qs[] = {0.0f, 0.2f};
    int bad = 0;
    for (int cfg = 0; cfg < 40; cfg++) {
        struct nextok_penalty_params p = nextok_penalty_default_params(NV);
        p.scope = (enum nextok_penalty_scope)rnd(3);
        p.last_n = last_ns[rnd(5)];
        p.repeat = rs[rnd(3)];
        p.frequency = fs[rnd(3)];
        p.presence = qs[rnd(2)];
        struct nextok_sampler *s;
        struct hist h = {{0}, {0}, 0, 0};
        CHECK_OK(nextok_sampler_init_penalties(&s, &p, NULL));
        float l[NV];
        struct nextok_token_data d[NV];
        struct nextok_token_data_array a;
        test_logits(l, NV);
        for (int step = 0; step < 120; step++) {
            hist_step(s, &h, 8);
            if (!paths_agree(s, l, NV, d, &a)) bad++;
            for (int32_t t = 0; t < NV; t++)
                if (!same_bits(lg(&a, t), pen_oracle_one(&p, h.prompt, h.np, h.out, h.no, t, l[t])))
                    bad++;
            if (touched_consistent(s, nextok__penalties_touched) < 0) bad++;
        }
        nextok_sampler_free(s);
    }
    CHECK_EQ_INT(bad, 0);
}

/* A long history on a large vocabulary: the fast path and the fallback agree. */
TEST(penalty_large_history)
{
    enum { V = 50000, H = 20000 };
    struct nextok_penalty_params p = nextok_penalty_default_params(V);
    struct nextok_token_data *d = malloc(V * sizeof *d), *e = malloc(V * sizeof *e);
    struct nextok_sampler *s;
    p.scope = NEXTOK_SCOPE_WINDOW;
    p.last_n = 4096;
    p.repeat = 1.2f;
    p.frequency = 0.1f;
    CHECK_OK(nextok_sampler_init_penalties(&s, &p, NULL));
    for (int i = 0; i < H; i++) CHECK_OK(nextok_sampler_accept(s, (int32_t)rnd(V / 10) * 7));
    struct nextok_token_data_array a, b;
    row(&a, d, V, NULL);
    for (int i = 0; i < V; i++) d[i].logit = (float)(i % 13) - 6.0f;
    memcpy(e, d, V * sizeof *d);
    b = (struct nextok_token_data_array){e, V, -1, false};
    shuffle(e, V);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_OK(nextok_sampler_apply(s, &b, 0));
    int bad = 0, changed = 0;
    for (size_t i = 0; i < b.size; i++) bad += !same_bits(d[e[i].id].logit, e[i].logit);
    for (int i = 0; i < V; i++) changed += d[i].logit != (float)(i % 13) - 6.0f;
    CHECK_EQ_INT(bad, 0);
    CHECK(changed > 2000 && changed <= 4096);
    nextok_sampler_free(s);
    free(d);
    free(e);
}

/* ---- DRY ------------------------------------------------------------------------- */

static struct nextok_sampler *dry(float mult, float base, int32_t allowed, int32_t last_n,
                                  const int32_t *bids, const size_t *boff, size_t nb)
{
    struct nextok_dry_params p = nextok_dry_default_params(NV);
    struct nextok_sampler *s = NULL;
    p.multiplier = mult;
    p.base = base;
    p.allowed_length = allowed;
    p.last_n = last_n;
    p.breaker_ids = bids;
    p.breaker_off = boff;
    p.n_breakers = nb;
    CHECK_OK(nextok_sampler_init_dry(&s, &p, NULL));
    return s;
}

/* Apply to an all-zero row after feeding h; return the logit of `tok`, and
 * check that no other token moved. */
static float dry_on(struct nextok_sampler *s, const int32_t *h, size_t n, int32_t tok)
{
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    nextok_sampler_reset(s);
    accept_all(s, h, n);
    row(&a, d, NV, NULL);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_EQ_INT(a.size, NV);
    for (int32_t t = 0; t < NV; t++)
        if (t != tok) CHECK_MSG(lg(&a, t) == 0.0f, "token %d moved to %g", t, (double)lg(&a, t));
    return lg(&a, tok);
}

static const int32_t h_abcab[] = {1, 2, 3, 1, 2};
static const int32_t h_abcabcab[] = {1, 2, 3, 1, 2, 3, 1, 2};

TEST(dry_basic)
{
    struct nextok_sampler *s = dry(1.0f, 2.0f, 2, -1, NULL, NULL, 0);
    CHECK_NEAR(dry_on(s, h_abcab, 5, 3), -1.0, 0);    /* [1 2] repeats: L(3) = 2 -> 2^0 */
    CHECK_NEAR(dry_on(s, h_abcabcab, 8, 3), -8.0, 0); /* L(3) = 5 -> 2^3 */
    int32_t ids[NV];
    CHECK_EQ_INT(nextok__dry_touched(s, ids, NV), 1);
    CHECK_EQ_INT(ids[0], 3);
    CHECK(touched_consistent(s, nextok__dry_touched) == 1);
    CHECK_NEAR(dry_on(s, h_abcab, 2, 3), 0.0, 0); /* too short for a repeat */
    CHECK_EQ_INT(strcmp(nextok_sampler_name(s), "dry"), 0);
    CHECK_EQ_INT(strcmp(nextok__iface_dry.name(NULL), "dry"), 0);
    nextok_sampler_free(s);
    s = dry(0.5f, 2.0f, 2, -1, NULL, NULL, 0);
    CHECK_NEAR(dry_on(s, h_abcabcab, 8, 3), -4.0, 0);
    nextok_sampler_free(s);
    s = dry(0.0f, 2.0f, 2, -1, NULL, NULL, 0); /* multiplier 0: off */
    CHECK_NEAR(dry_on(s, h_abcabcab, 8, 3), 0.0, 0);
    CHECK_EQ_INT(nextok__dry_touched(s, ids, NV), 0);
    nextok_sampler_free(s);
}

TEST(dry_allowed_length_boundary)
{
    struct nextok_sampler *s = dry(1.0f, 2.0f, 3, -1, NULL, NULL, 0);
    CHECK_NEAR(dry_on(s, h_abcab, 5, 3), 0.0, 0); /* L = 2 < 3 */
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 1, -1, NULL, NULL, 0);
    CHECK_NEAR(dry_on(s, h_abcab, 5, 3), -2.0, 0); /* L = 2 -> 2^1 */
    nextok_sampler_free(s);
}

TEST(dry_last_n)
{
    struct nextok_sampler *s = dry(1.0f, 2.0f, 2, 4, NULL, NULL, 0); /* window [2 3 1 2] */
    CHECK_NEAR(dry_on(s, h_abcab, 5, 3), 0.0, 0);
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, 5, NULL, NULL, 0);
    CHECK_NEAR(dry_on(s, h_abcab, 5, 3), -1.0, 0);
    CHECK_NEAR(dry_on(s, h_abcabcab, 8, 3), -1.0, 0); /* window [1 2 3 1 2] */
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, 0, NULL, NULL, 0); /* last_n 0: off */
    CHECK_NEAR(dry_on(s, h_abcabcab, 8, 3), 0.0, 0);
    nextok_sampler_free(s);
}

TEST(dry_breakers)
{
    static const int32_t nine[] = {9}, eight_nine[] = {8, 9}, seven_nine[] = {7, 9};
    static const int32_t two_brk[] = {7, 9, 8, 9};
    static const size_t off1[] = {0, 1}, off2[] = {0, 2}, off22[] = {0, 2, 4};
    static const int32_t h1[] = {9, 1, 2, 3, 9, 1, 2};
    static const int32_t h2[] = {8, 9, 1, 2, 3, 8, 9, 1, 2};
    struct nextok_sampler *s = dry(1.0f, 2.0f, 2, -1, NULL, NULL, 0);
    CHECK_NEAR(dry_on(s, h1, 7, 3), -2.0, 0); /* L = 3 */
    CHECK_NEAR(dry_on(s, h2, 9, 3), -4.0, 0); /* L = 4 */
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, -1, nine, off1, 1);
    CHECK_NEAR(dry_on(s, h1, 7, 3), -1.0, 0); /* lim = 2 after the last 9 */
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, -1, eight_nine, off2, 1);
    CHECK_NEAR(dry_on(s, h2, 9, 3), -1.0, 0); /* [8 9] ends 2 before the end */
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, -1, seven_nine, off2, 1);
    CHECK_NEAR(dry_on(s, h2, 9, 3), -4.0, 0); /* [7 9] never occurs complete */
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, -1, two_brk, off22, 2);
    CHECK_NEAR(dry_on(s, h2, 9, 3), -1.0, 0);
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, 8, eight_nine, off2, 1); /* window [9 1 2 3 8 9 1 2] */
    CHECK_NEAR(dry_on(s, h2, 9, 3), -1.0, 0);
    nextok_sampler_free(s);
}

TEST(dry_breaker_last_token)
{
    static const int32_t h[] = {1, 2, 9, 1, 2, 9};
    static const int32_t nine[] = {9}, two_nine[] = {2, 9};
    static const size_t off1[] = {0, 1}, off2[] = {0, 2};
    struct nextok_sampler *s = dry(1.0f, 2.0f, 2, -1, NULL, NULL, 0);
    CHECK_NEAR(dry_on(s, h, 6, 1), -2.0, 0); /* L(1) = 3 */
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, -1, nine, off1, 1);
    CHECK_NEAR(dry_on(s, h, 6, 1), 0.0, 0); /* lim = 0 */
    int32_t ids[NV];
    CHECK_EQ_INT(nextok__dry_touched(s, ids, NV), 0);
    nextok_sampler_free(s);
    s = dry(1.0f, 2.0f, 2, -1, two_nine, off2, 1);
    CHECK_NEAR(dry_on(s, h, 6, 1), 0.0, 0);
    nextok_sampler_free(s);
}

TEST(dry_exponent_capped)
{
    int32_t h[300];
    for (int i = 0; i < 300; i++) h[i] = 1;
    struct nextok_sampler *s = dry(1.0f, 2.0f, 2, -1, NULL, NULL, 0);
    CHECK(dry_on(s, h, 300, 1) == -ldexpf(1.0f, 127)); /* 2^297 capped at 2^127 */
    nextok_sampler_free(s);
    s = dry(3.0f, 2.0f, 2, -1, NULL, NULL, 0);
    CHECK(dry_on(s, h, 300, 1) == -FLT_MAX); /* 3 * 2^127 overflows: saturated */
    nextok_sampler_free(s);
}

TEST(dry_prompt_and_state)
{
    struct nextok_sampler *s = dry(1.0f, 2.0f, 2, -1, NULL, NULL, 0);
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){1, 2, 3}, 3));
    accept_all(s, (const int32_t[]){1, 2}, 2);
    row(&a, d, NV, NULL);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_NEAR(lg(&a, 3), -1.0, 0);
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){4, 5}, 2)); /* [4 5 1 2] */
    row(&a, d, NV, NULL);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_NEAR(lg(&a, 3), 0.0, 0);
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){1, 2, 3, 1, 2, 3}, 6));
    check_bad_ids_unchanged(s);
    CHECK(touched_consistent(s, nextok__dry_touched) == 1);
    check_clone_reset(s, (const int32_t[]){5, 6, 5}, 3);
    nextok_sampler_free(s);
}

/* set_prompt on a fresh DRY (no history array yet) once computed NULL + 0,
 * undefined behaviour that clang's UBSan reports (issue 14): run under the
 * clang sanitizer build, this test fails without the fix. */
TEST(dry_set_prompt_fresh)
{
    struct nextok_sampler *s = dry(1.0f, 2.0f, 2, -1, NULL, NULL, 0);
    CHECK_OK(nextok_sampler_set_prompt(s, NULL, 0)); /* empty prompt, fresh */
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){1, 2, 3, 1, 2}, 5));
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    row(&a, d, NV, NULL);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_NEAR(lg(&a, 3), -1.0, 0); /* the prompt alone: [1 2] repeats */
    nextok_sampler_free(s);

    /* the same through a whole chain, as a session starts one */
    struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    p.n_vocab = NV;
    p.dry_multiplier = 1.0f;
    p.dry_base = 2.0f;
    p.selector = NEXTOK_SELECTOR_GREEDY;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init_sampling(&c, &p, NULL));
    if (!c) return;
    CHECK_OK(nextok_chain_set_prompt(c, (const int32_t[]){1, 2, 3, 1, 2}, 5));
    float lgts[NV] = {0};
    lgts[3] = 0.5f; /* the top token, until DRY takes 1 off it */
    lgts[4] = 0.25f;
    int32_t tok = -1;
    CHECK_OK(nextok_chain_sample(c, lgts, NEXTOK_DTYPE_F32, &tok));
    CHECK_EQ_INT(tok, 4);
    nextok_chain_free(c);
}

/* The definition, transcribed: O(n^2) per token. */
static float dry_oracle_one(const struct nextok_dry_params *p, const int32_t *full, size_t len,
                            int32_t t, float l)
{
    size_t n = p->last_n < 0 || (size_t)p->last_n > len ? len : (size_t)p->last_n;
    const int32_t *h = full + (len - n);
    size_t lim = n;
    for (size_t q = n; q-- > 0 && lim == n;)
        for (size_t b = 0; b < p->n_breakers; b++) {
            size_t bl = p->breaker_off[b + 1] - p->breaker_off[b];
            if (bl <= q + 1 && !memcmp(h + q + 1 - bl, p->breaker_ids + p->breaker_off[b], bl * 4))
                lim = n - 1 - q;
        }
    long best = -1;
    for (size_t i = 0; i + 1 < n; i++) {
        if (h[i + 1] != t) continue;
        size_t k = 0;
        while (k < lim && k <= i && h[i - k] == h[n - 1 - k]) k++;
        if ((long)k > best) best = (long)k;
    }
    if (p->multiplier == 0.0f || p->last_n == 0 || best < p->allowed_length) return l;
    float x = (float)(best - p->allowed_length);
    float cap = (float)floor(log((double)FLT_MAX) / log((double)p->base));
    return nextok__sat(l - p->multiplier * powf(p->base, x < cap ? x : cap));
}

TEST(dry_matches_definition)
{
    static const int32_t bids[] = {3, 0, 1, 3, 2, 0, 1, 2};
    static const size_t boffs[][4] = {{0, 1}, {0, 2}, {0, 1, 3}, {0, 3, 5}};
    const int32_t last_ns[] = {-1, -1, 1, 2, 6, 17};
    int bad = 0;
    for (int cfg = 0; cfg < 48; cfg++) {
        struct nextok_dry_params p = nextok_dry_default_params(NV);
        p.multiplier = 0.7f;
        p.base = cfg % 2 ? 1.5f : 2.0f;
        p.allowed_length = 1 + (int32_t)rnd(3);
        p.last_n = last_ns[rnd(6)];
        p.n_breakers = rnd(3);
        uint32_t which = rnd(4);
        p.breaker_off = boffs[which];
        p.breaker_ids = which == 3 ? bids + 2 : bids;
        if (p.n_breakers > 1 && which < 2) p.n_breakers = 1;
        struct nextok_sampler *s;
        struct hist h = {{0}, {0}, 0, 0};
        int32_t full[64 + MAXH];
        CHECK_OK(nextok_sampler_init_dry(&s, &p, NULL));
        float l[NV];
        struct nextok_token_data d[NV];
        struct nextok_token_data_array a;
        test_logits(l, NV);
        for (int step = 0; step < 150; step++) {
            hist_step(s, &h, cfg % 3 ? 3 : 5);
            memcpy(full, h.prompt, h.np * 4);
            memcpy(full + h.np, h.out, h.no * 4);
            if (!paths_agree(s, l, NV, d, &a)) bad++;
            for (int32_t t = 0; t < NV; t++)
                if (!same_bits(lg(&a, t), dry_oracle_one(&p, full, h.np + h.no, t, l[t]))) bad++;
            if (touched_consistent(s, nextok__dry_touched) < 0) bad++;
        }
        nextok_sampler_free(s);
    }
    CHECK_EQ_INT(bad, 0);
}

static struct nextok_dry_params dbad;
static nextok_status init_dry_bad(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_dry(o, &dbad, e); }
static nextok_status init_dry_null(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_dry(o, NULL, e); }

TEST(dry_rejects)
{
    static const int32_t ids[] = {1, 2, 40};
    static const size_t off_empty[] = {0, 1, 1}, off_ok[] = {0, 1, 2}, off_far[] = {0, 3};
    CHECK_REJECT(init_dry_null, NEXTOK_ERR_INVALID_ARG, "params");
    dbad = nextok_dry_default_params(0);
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_VOCAB_SIZE, "n_vocab");
    dbad = nextok_dry_default_params(NV);
    dbad.multiplier = -1.0f;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "multiplier");
    dbad.multiplier = NAN;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "multiplier");
    dbad = nextok_dry_default_params(NV);
    dbad.base = 1.0f;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "base");
    dbad.base = INFINITY;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "base");
    dbad = nextok_dry_default_params(NV);
    dbad.allowed_length = 0;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "allowed_length");
    dbad = nextok_dry_default_params(NV);
    dbad.last_n = -2;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "last_n");
    dbad = nextok_dry_default_params(NV);
    dbad.n_breakers = 2;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "breaker_off");
    dbad.breaker_off = off_empty;
    dbad.breaker_ids = ids;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "breaker_off[2]");
    dbad.breaker_off = off_ok;
    dbad.breaker_ids = NULL;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_INVALID_ARG, "breaker_ids");
    dbad.n_breakers = 1;
    dbad.breaker_off = off_far;
    dbad.breaker_ids = ids;
    CHECK_REJECT(init_dry_bad, NEXTOK_ERR_TOKEN_RANGE, "breaker_ids[2]: 40 outside [0, 12)");
}

/* A long repetitive history: the Z-function path on a big window stays exact. */
TEST(dry_long_history)
{
    enum { H = 30000 };
    struct nextok_sampler *s = dry(1.0f, 1.75f, 2, -1, NULL, NULL, 0);
    for (int i = 0; i < H; i++) CHECK_OK(nextok_sampler_accept(s, (int32_t)(i % 7)));
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    row(&a, d, NV, NULL);
    CHECK_OK(nextok_sampler_apply(s, &a, 0)); /* the next token (30000 % 7 = 5) repeats */
    CHECK(lg(&a, 5) == nextok__sat(-powf(1.75f, (float)floor(log(FLT_MAX) / log(1.75)))));
    CHECK(lg(&a, 4) == 0.0f);
    nextok_sampler_free(s);
}

/* ---- no-repeat-n-gram ----------------------------------------------------------------- */

static struct nextok_sampler *ngram(int32_t n)
{
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_no_repeat_ngram(&s, NV, n, NULL));
    return s;
}

/* Feed h, apply to a full row; return the removed ids as a bit mask. */
static unsigned ng_removed(struct nextok_sampler *s, const int32_t *h, size_t n)
{
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    float l[NV];
    test_logits(l, NV);
    nextok_sampler_reset(s);
    accept_all(s, h, n);
    CHECK(paths_agree(s, l, NV, d, &a));
    unsigned m = 0;
    for (int32_t t = 0; t < NV; t++) {
        if (!find(&a, t)) m |= 1u << t;
        else CHECK(same_bits(lg(&a, t), l[t]));
    }
    return m;
}

TEST(ngram_sizes)
{
    struct nextok_sampler *s = ngram(2);
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){1, 2, 3, 1}, 4), 1u << 2);
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){1, 2, 3}, 3), 0); /* 3 never preceded anything */
    CHECK_EQ_INT(strcmp(nextok__iface_no_repeat_ngram.name(NULL), "no_repeat_ngram"), 0);
    nextok_sampler_free(s);
    s = ngram(3);
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){1, 2, 3, 1, 2}, 5), 1u << 3);
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){1, 2, 4, 1, 2, 3, 1, 2}, 8), (1u << 3) | (1u << 4));
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){1}, 1), 0);    /* shorter than n - 1 */
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){1, 2}, 2), 0); /* no complete 3-gram */
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){2, 2, 2}, 3), 1u << 2);
    int32_t ids[NV];
    CHECK_EQ_INT(nextok__ngram_touched(s, ids, NV), 1);
    CHECK_EQ_INT(ids[0], 2);
    nextok_sampler_free(s);
    s = ngram(1); /* every token already seen */
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){4, 2, 4}, 3), (1u << 2) | (1u << 4));
    CHECK_EQ_INT(ng_removed(s, NULL, 0), 0);
    CHECK(touched_consistent(s, nextok__ngram_touched) == 0);
    nextok_sampler_free(s);
    s = ngram(0); /* disabled */
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){4, 4, 4}, 3), 0);
    nextok_sampler_free(s);
    s = ngram(-3);
    CHECK_EQ_INT(ng_removed(s, (const int32_t[]){4, 4, 4}, 3), 0);
    nextok_sampler_free(s);
}

TEST(ngram_prompt_and_state)
{
    struct nextok_sampler *s = ngram(3);
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){1, 2, 3}, 3));
    accept_all(s, (const int32_t[]){1, 2}, 2);
    row(&a, d, NV, NULL);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK(!find(&a, 3) && a.size == NV - 1);
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){5, 6}, 2)); /* [5 6 1 2] */
    row(&a, d, NV, NULL);
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK_EQ_INT(a.size, NV);
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){1, 2, 3, 1, 2, 7}, 6));
    row(&a, d, NV, NULL); /* [1 2 3 1 2 7 1 2]: 3 and 7 followed [1 2] */
    CHECK_OK(nextok_sampler_apply(s, &a, 0));
    CHECK(!find(&a, 3) && !find(&a, 7) && a.size == NV - 2);
    check_bad_ids_unchanged(s);
    CHECK(touched_consistent(s, nextok__ngram_touched) == 2);
    check_clone_reset(s, (const int32_t[]){9}, 1);
    nextok_sampler_free(s);
}

static bool ngram_oracle_banned(const int32_t *h, size_t len, size_t n, int32_t t)
{
    if (len + 1 < n) return false;
    for (size_t s = 0; s + n <= len; s++) {
        if (h[s + n - 1] != t) continue;
        if (n == 1 || !memcmp(h + s, h + len - (n - 1), (n - 1) * 4)) return true;
    }
    return false;
}

TEST(ngram_matches_definition)
{
    int bad = 0;
    for (int cfg = 0; cfg < 24; cfg++) {
        const int32_t n = 1 + cfg % 4;
        struct nextok_sampler *s = ngram(n);
        struct hist h = {{0}, {0}, 0, 0};
        int32_t full[64 + MAXH];
        float l[NV];
        struct nextok_token_data d[NV];
        struct nextok_token_data_array a;
        test_logits(l, NV);
        for (int step = 0; step < 150; step++) {
            hist_step(s, &h, cfg % 2 ? 3 : 6);
            memcpy(full, h.prompt, h.np * 4);
            memcpy(full + h.np, h.out, h.no * 4);
            if (!paths_agree(s, l, NV, d, &a)) bad++;
            for (int32_t t = 0; t < NV; t++)
                if ((find(&a, t) == NULL) != ngram_oracle_banned(full, h.np + h.no, (size_t)n, t)) bad++;
            if (touched_consistent(s, nextok__ngram_touched) < 0) bad++;
        }
        nextok_sampler_free(s);
    }
    CHECK_EQ_INT(bad, 0);
}

static nextok_status init_ngram_vocab(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_no_repeat_ngram(o, -1, 3, e); }

TEST(ngram_rejects)
{
    CHECK_REJECT(init_ngram_vocab, NEXTOK_ERR_VOCAB_SIZE, "n_vocab");
}

/* ---- min tokens ------------------------------------------------------------------------ */

TEST(min_tokens_gates)
{
    const int32_t eog[] = {7, 3, 7};
    struct nextok_sampler *s;
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    float l[NV];
    int32_t ids[NV];
    test_logits(l, NV);
    CHECK_OK(nextok_sampler_init_min_tokens(&s, NV, 2, eog, 3, NULL));
    const struct nextok__p_min_tokens *p = nextok_sampler_ctx(s);
    CHECK(p->n_vocab == NV && p->min_tokens == 2 && p->n_accepted == 0);
    CHECK_OK(nextok_sampler_set_prompt(s, (const int32_t[]){1, 1, 1}, 3)); /* prompt does not count */
    CHECK(paths_agree(s, l, NV, d, &a));
    CHECK(a.size == NV - 2 && !find(&a, 3) && !find(&a, 7));
    CHECK_EQ_INT(nextok__min_tokens_touched(s, ids, NV), 2);
    CHECK(ids[0] == 3 && ids[1] == 7);
    CHECK(touched_consistent(s, nextok__min_tokens_touched) == 2);
    CHECK_OK(nextok_sampler_accept(s, 5));
    CHECK(paths_agree(s, l, NV, d, &a));
    CHECK_EQ_INT(a.size, NV - 2);
    check_bad_ids_unchanged(s);
    CHECK_OK(nextok_sampler_accept(s, 5)); /* two outputs: reached */
    CHECK_EQ_INT(p->n_accepted, 2);
    CHECK(paths_agree(s, l, NV, d, &a));
    CHECK_EQ_INT(a.size, NV);
    CHECK_EQ_INT(nextok__min_tokens_touched(s, ids, NV), 0);
    struct nextok_sampler *c = NULL;
    CHECK_OK(nextok_sampler_clone(s, &c));
    nextok_sampler_reset(s); /* gated again; the clone is not */
    apply_row(s, l, d, &a);
    CHECK_EQ_INT(a.size, NV - 2);
    apply_row(c, l, d, &a);
    CHECK_EQ_INT(a.size, NV);
    CHECK_EQ_INT(strcmp(nextok__iface_min_tokens.name(NULL), "min_tokens"), 0);
    nextok_sampler_free(c);
    nextok_sampler_free(s);
    CHECK_OK(nextok_sampler_init_min_tokens(&s, NV, 0, eog, 3, NULL)); /* 0: never gated */
    apply_row(s, l, d, &a);
    CHECK_EQ_INT(a.size, NV);
    nextok_sampler_free(s);
}

static const int32_t eog_bad[] = {3, 99};
static nextok_status init_mt_range(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_min_tokens(o, NV, 2, eog_bad, 2, e); }
static nextok_status init_mt_null(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_min_tokens(o, NV, 2, NULL, 2, e); }
static nextok_status init_mt_vocab(struct nextok_sampler **o, struct nextok_error *e)
{ return nextok_sampler_init_min_tokens(o, 0, 2, eog_bad, 1, e); }

TEST(min_tokens_rejects)
{
    CHECK_REJECT(init_mt_range, NEXTOK_ERR_TOKEN_RANGE, "eog_ids[1]: 99 outside [0, 12)");
    CHECK_REJECT(init_mt_null, NEXTOK_ERR_INVALID_ARG, "eog_ids");
    CHECK_REJECT(init_mt_vocab, NEXTOK_ERR_VOCAB_SIZE, "n_vocab");
}

/* ---- in a chain ------------------------------------------------------------------------- */

static struct nextok_chain *proc_chain(void)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    struct nextok_chain *c = NULL;
    struct nextok_sampler *s;
    const struct nextok_logit_bias b[] = {{0, 10.0f}, {1, -INFINITY}};
    const int32_t banned[] = {11};
    cp.n_vocab = NV;
    cp.no_fused = true;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    CHECK_OK(nextok_sampler_init_logit_bias(&s, NV, b, 2, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    CHECK_OK(nextok_sampler_init_banned(&s, NV, banned, 1, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    CHECK_OK(nextok_sampler_init_min_tokens(&s, NV, 1, (const int32_t[]){10}, 1, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    CHECK_OK(nextok_sampler_init_no_repeat_ngram(&s, NV, 2, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    s = pen(NEXTOK_SCOPE_PROMPT_OUTPUT, 64, 2.0f, 0.5f, 0.0f);
    CHECK_OK(nextok_chain_add(c, s));
    s = dry(1.0f, 2.0f, 2, -1, NULL, NULL, 0);
    CHECK_OK(nextok_chain_add(c, s));
    return c;
}

TEST(chain_of_processors)
{
    struct nextok_chain *c = proc_chain(), *k = NULL;
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    float l[NV];
    for (int i = 0; i < NV; i++) l[i] = 1.0f;
    CHECK_OK(nextok_chain_set_prompt(c, (const int32_t[]){4, 5, 4}, 3));
    CHECK_OK(nextok_chain_accept(c, 6));
    CHECK_OK(nextok_chain_accept(c, 4));
    /* history [4 5 4 6 4]: bigrams after 4 are 5 and 6 (removed); 4 was seen
     * in the prompt (repetition 1 -> 0.5) and once in the output (-0.5);
     * DRY: suffix [4] only, L = 1 < 2. 0 is biased, 1, 11 removed. */
    row(&a, d, NV, l);
    CHECK_OK(nextok_chain_apply(c, &a));
    CHECK_EQ_INT(a.size, NV - 4);
    CHECK(!find(&a, 1) && !find(&a, 5) && !find(&a, 6) && !find(&a, 11));
    CHECK_NEAR(lg(&a, 0), 11.0, 0);
    CHECK_NEAR(lg(&a, 4), 0.0, 0);
    CHECK_NEAR(lg(&a, 10), 1.0, 0); /* min_tokens 1 reached */
    CHECK_EQ_INT(a.selected, -1);
    CHECK_OK(nextok_chain_clone(c, &k));
    nextok_chain_reset(c);
    row(&a, d, NV, l);
    CHECK_OK(nextok_chain_apply(c, &a));
    CHECK_EQ_INT(a.size, NV - 3); /* 1, 11 and eog 10 (gated again) */
    CHECK(!find(&a, 10) && lg(&a, 4) == 1.0f);
    row(&a, d, NV, l);
    CHECK_OK(nextok_chain_apply(k, &a));
    CHECK_EQ_INT(a.size, NV - 4);
    CHECK_EQ_INT(nextok_chain_accept(k, NV), NEXTOK_ERR_TOKEN_RANGE);
    nextok_chain_free(k);
    nextok_chain_free(c);
}

TEST(chain_everything_masked)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    struct nextok_chain *c = NULL;
    struct nextok_sampler *s;
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    cp.n_vocab = NV;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    CHECK_OK(nextok_sampler_init_allowed(&s, NV, (const int32_t[]){9}, 1, NULL));
    CHECK_OK(nextok_chain_add(c, s));
    row(&a, d, 4, NULL); /* 9 is not a candidate */
    CHECK_EQ_INT(nextok_chain_apply(c, &a), NEXTOK_ERR_NO_CANDIDATES);
    CHECK_EQ_INT(a.size, 4); /* unchanged on failure */
    CHECK(strstr(nextok_chain_errmsg(c), "allowed") != NULL);
    row(&a, d, NV, NULL);
    CHECK_OK(nextok_chain_apply(c, &a));
    CHECK(a.size == 1 && a.data[0].id == 9);
    nextok_chain_free(c);
}

/* Sort a row the canonical way (logit descending, id ascending). */
static void sorted_row(struct nextok_token_data_array *a, struct nextok_token_data *d)
{
    float l[NV];
    test_logits(l, NV);
    row(a, d, NV, l);
    for (size_t i = 1; i < NV; i++)
        for (size_t j = i; j > 0 && d[j].logit > d[j - 1].logit; j--) {
            struct nextok_token_data t = d[j];
            d[j] = d[j - 1];
            d[j - 1] = t;
        }
    a->sorted = true;
}

static bool still_sorted(const struct nextok_token_data_array *a)
{
    for (size_t i = 1; i < a->size; i++)
        if (a->data[i].logit > a->data[i - 1].logit) return false;
    return a->sorted;
}

/* Removals keep a sorted array sorted (flag and order); logit changes clear the flag. */
TEST(sorted_flag)
{
    struct nextok_sampler *rm[4], *chg[3];
    const struct nextok_logit_bias b[] = {{3, 2.0f}};
    CHECK_OK(nextok_sampler_init_banned(&rm[0], NV, (const int32_t[]){2, 5}, 2, NULL));
    CHECK_OK(nextok_sampler_init_allowed(&rm[1], NV, (const int32_t[]){2, 5, 8}, 3, NULL));
    CHECK_OK(nextok_sampler_init_min_tokens(&rm[2], NV, 1, (const int32_t[]){4}, 1, NULL));
    rm[3] = ngram(1);
    CHECK_OK(nextok_sampler_init_logit_bias(&chg[0], NV, b, 1, NULL));
    chg[1] = pen(NEXTOK_SCOPE_PROMPT_OUTPUT, 64, 1.5f, 0.0f, 0.0f);
    chg[2] = dry(1.0f, 2.0f, 2, -1, NULL, NULL, 0);
    for (int i = 0; i < 3; i++) accept_all(chg[i], h_abcab, 5);
    CHECK_OK(nextok_sampler_accept(rm[3], 6));
    struct nextok_token_data d[NV];
    struct nextok_token_data_array a;
    for (int i = 0; i < 4; i++) {
        sorted_row(&a, d);
        CHECK_OK(nextok_sampler_apply(rm[i], &a, 0));
        CHECK_MSG(a.size < NV && still_sorted(&a), "%s", nextok_sampler_name(rm[i]));
        nextok_sampler_free(rm[i]);
    }
    for (int i = 0; i < 3; i++) {
        sorted_row(&a, d);
        CHECK_OK(nextok_sampler_apply(chg[i], &a, 0));
        CHECK_MSG(a.size == NV && !a.sorted, "%s", nextok_sampler_name(chg[i]));
        nextok_sampler_free(chg[i]);
    }
}

/* Larger ids exercise min-tokens' bit filter and the fallback on a bigger row. */
TEST(min_tokens_large_ids)
{
    enum { V = 200 };
    const int32_t eog[] = {150, 37, 64, 199};
    struct nextok_sampler *s;
    struct nextok_token_data d[V];
    struct nextok_token_data_array a;
    CHECK_OK(nextok_sampler_init_min_tokens(&s, V, 3, eog, 4, NULL));
    for (int rep = 0; rep < 2; rep++) {
        row(&a, d, V, NULL);
        if (rep) shuffle(d, V);
        CHECK_OK(nextok_sampler_apply(s, &a, 0));
        CHECK_EQ_INT(a.size, V - 4);
        for (int k = 0; k < 4; k++) CHECK(!find(&a, eog[k]));
    }
    nextok_sampler_free(s);
}

int main(void)
{
    RUN(bias_adds_twice_and_removes);
    RUN(bias_removal_keeps_sorted_order);
    RUN(bias_saturates);
    RUN(bias_paths_agree);
    RUN(bias_rejects);
    RUN(stateless_validate_ids);
    RUN(allowed_whitelist);
    RUN(allowed_banned_reject);
    RUN(banned_removes);
    RUN(penalty_defaults);
    RUN(penalty_each_formula);
    RUN(penalty_scopes);
    RUN(penalty_window_slides);
    RUN(penalty_window_set_prompt_keeps_outputs);
    RUN(penalty_saturates);
    RUN(penalty_rejects);
    RUN(penalty_state);
    RUN(penalty_matches_definition);
    RUN(penalty_large_history);
    RUN(dry_basic);
    RUN(dry_allowed_length_boundary);
    RUN(dry_last_n);
    RUN(dry_breakers);
    RUN(dry_breaker_last_token);
    RUN(dry_exponent_capped);
    RUN(dry_prompt_and_state);
    RUN(dry_set_prompt_fresh);
    RUN(dry_matches_definition);
    RUN(dry_rejects);
    RUN(dry_long_history);
    RUN(ngram_sizes);
    RUN(ngram_prompt_and_state);
    RUN(ngram_matches_definition);
    RUN(ngram_rejects);
    RUN(min_tokens_gates);
    RUN(min_tokens_rejects);
    RUN(chain_of_processors);
    RUN(chain_everything_masked);
    RUN(sorted_flag);
    RUN(min_tokens_large_ids);
    return harness_done();
}
