/*
 * Transforms and filters: temperature, dynamic temperature, top-k, top-p,
 * min-p, typical, top-n-sigma, XTC, epsilon, eta. Expected values are worked
 * out by hand from docs/semantics.md (the numbers are in the comments), in
 * the spirit of llama.cpp's tests/test-sampling.cpp, plus a randomized
 * comparison against straightforward reference implementations.
 */
#include "nextok.h"
#include "harness.h"
#include "sample/builtin.h"

#include <float.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- helpers ------------------------------------------------------------------ */

#define CAP 64

struct arr {
    struct nextok_token_data d[CAP];
    struct nextok_token_data_array a;
};

/* ids 0..n-1 with the given logits, unsorted. */
static void arr_logits(struct arr *x, const float *logits, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x->d[i] = (struct nextok_token_data){(int32_t)i, logits[i], 0.0f};
    x->a = (struct nextok_token_data_array){x->d, n, -1, false};
}

/* ids 0..n-1 with logits ln p_i. */
static void arr_probs(struct arr *x, const double *p, size_t n)
{
    float l[CAP];
    for (size_t i = 0; i < n; i++) l[i] = (float)log(p[i]);
    arr_logits(x, l, n);
}

/* Reverse the array (a different input order, same candidates). */
static void arr_reverse(struct arr *x)
{
    for (size_t i = 0, j = x->a.size; i + 1 < j--; i++) {
        struct nextok_token_data t = x->d[i];
        x->d[i] = x->d[j];
        x->d[j] = t;
    }
    x->a.sorted = false;
}

static bool before(const struct nextok_token_data *a, const struct nextok_token_data *b)
{
    if (a->logit != b->logit) return a->logit > b->logit;
    return a->id < b->id;
}

/* `sorted` may only be claimed if it holds; logits stay finite; no selection. */
static bool invariants(const struct nextok_token_data_array *a)
{
    if (a->selected != -1 || a->size == 0) return false;
    for (size_t i = 0; i < a->size; i++)
        if (!isfinite(a->data[i].logit)) return false;
    if (!a->sorted) return true;
    for (size_t i = 1; i < a->size; i++)
        if (!before(&a->data[i - 1], &a->data[i])) return false;
    return true;
}

static bool has_id(const struct nextok_token_data_array *a, int32_t id)
{
    for (size_t i = 0; i < a->size; i++)
        if (a->data[i].id == id) return true;
    return false;
}

static bool same_set(const struct nextok_token_data_array *a, const int32_t *ids, size_t n)
{
    if (a->size != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!has_id(a, ids[i])) return false;
    return true;
}

static bool same_seq(const struct nextok_token_data_array *a, const int32_t *ids, size_t n)
{
    if (a->size != n) return false;
    for (size_t i = 0; i < n; i++)
        if (a->data[i].id != ids[i]) return false;
    return true;
}

static const char *ids_str(const struct nextok_token_data_array *a)
{
    static char buf[512];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < a->size && off < sizeof buf - 16; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%d", i ? "," : "",
                                (int)a->data[i].id);
    return buf;
}

#define CHECK_SET(a, ...)                                                              \
    do {                                                                               \
        const int32_t e_[] = {__VA_ARGS__};                                            \
        CHECK_MSG(same_set((a), e_, sizeof e_ / sizeof e_[0]), "got {%s}, want {%s}", \
                  ids_str(a), #__VA_ARGS__);                                           \
    } while (0)

#define CHECK_SEQ(a, ...)                                                              \
    do {                                                                               \
        const int32_t e_[] = {__VA_ARGS__};                                            \
        CHECK_MSG(same_seq((a), e_, sizeof e_ / sizeof e_[0]), "got [%s], want [%s]", \
                  ids_str(a), #__VA_ARGS__);                                           \
    } while (0)

/* Apply at step 0 and check the invariants at the call site. */
#define APPLY(s, x)                                        \
    do {                                                   \
        CHECK_OK(nextok_sampler_apply((s), &(x)->a, 0));   \
        CHECK(invariants(&(x)->a));                        \
    } while (0)

/* The message of the last CHECK_REJECT. */
static char last_msg[NEXTOK_ERRMSG_MAX];
static char dummy_sampler;

/* expr uses s_ (preset non-NULL: must come back NULL) and e_. */
#define CHECK_REJECT(expr, want_status, param)                                          \
    do {                                                                                \
        struct nextok_sampler *s_ = (struct nextok_sampler *)(void *)&dummy_sampler;    \
        struct nextok_error e_ = {NEXTOK_OK, {0}};                                      \
        nextok_status rc_ = (expr);                                                     \
        CHECK_MSG(rc_ == (want_status), "%s returned %s", #expr, nextok_status_name(rc_)); \
        CHECK_MSG(e_.status == (want_status), "err.status %s", nextok_status_name(e_.status)); \
        CHECK_MSG(strstr(e_.msg, param) != NULL, "msg \"%s\" does not name %s", e_.msg, param); \
        CHECK(s_ == NULL);                                                              \
        memcpy(last_msg, e_.msg, sizeof last_msg);                                      \
    } while (0)

static const double P4[] = {0.1, 0.2, 0.3, 0.4}; /* id 3 is the most likely */
static const double D4[] = {0.4, 0.3, 0.2, 0.1}; /* id 0 is the most likely */

/* ---- top-k ---------------------------------------------------------------------- */

TEST(top_k_basic)
{
    const float l[] = {1, 2, 3, 4};
    struct arr x;
    struct nextok_sampler *s;
    const int32_t noop[] = {0, -3, 4, 10};
    for (size_t i = 0; i < 4; i++) {
        CHECK_OK(nextok_sampler_init_top_k(&s, noop[i], NEXTOK_TIES_EXACT, NULL));
        arr_logits(&x, l, 4);
        APPLY(s, &x);
        CHECK_SEQ(&x.a, 0, 1, 2, 3); /* untouched, order included */
        nextok_sampler_free(s);
    }
    CHECK_OK(nextok_sampler_init_top_k(&s, 1, NEXTOK_TIES_EXACT, NULL));
    arr_logits(&x, l, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 3);
    nextok_sampler_free(s);

    CHECK_OK(nextok_sampler_init_top_k(&s, 2, NEXTOK_TIES_KEEP, NULL));
    arr_logits(&x, l, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 3, 2);
    CHECK(x.a.sorted);
    CHECK_NEAR(x.a.data[0].logit, 4.0, 0); /* logits untouched */
    nextok_sampler_free(s);
}

TEST(top_k_ties)
{
    /* logits 1 3 3 3 0 (ids 0..4): the top-2 boundary falls inside a 3-way tie */
    const float l[] = {1, 3, 3, 3, 0};
    struct arr x;
    struct nextok_sampler *ex, *kp, *ex1, *kp1;
    CHECK_OK(nextok_sampler_init_top_k(&ex, 2, NEXTOK_TIES_EXACT, NULL));
    CHECK_OK(nextok_sampler_init_top_k(&kp, 2, NEXTOK_TIES_KEEP, NULL));
    CHECK_OK(nextok_sampler_init_top_k(&ex1, 1, NEXTOK_TIES_EXACT, NULL));
    CHECK_OK(nextok_sampler_init_top_k(&kp1, 1, NEXTOK_TIES_KEEP, NULL));
    for (int rev = 0; rev < 2; rev++) {
        arr_logits(&x, l, 5);
        if (rev) arr_reverse(&x);
        APPLY(ex, &x);
        CHECK_SEQ(&x.a, 1, 2); /* exact: ties broken by lower id */
        arr_logits(&x, l, 5);
        if (rev) arr_reverse(&x);
        APPLY(kp, &x);
        CHECK_SEQ(&x.a, 1, 2, 3); /* keep: every logit >= the 2nd largest (3) */
        CHECK(x.a.sorted);
        arr_logits(&x, l, 5);
        if (rev) arr_reverse(&x);
        APPLY(ex1, &x);
        CHECK_SEQ(&x.a, 1);
        arr_logits(&x, l, 5);
        if (rev) arr_reverse(&x);
        APPLY(kp1, &x);
        CHECK_SEQ(&x.a, 1, 2, 3);
    }
    /* 5 1 1 1 1, k = 2: the 2nd largest is 1, so keep-ties keeps everything */
    const float l2[] = {5, 1, 1, 1, 1};
    arr_logits(&x, l2, 5);
    APPLY(kp, &x);
    CHECK_SEQ(&x.a, 0, 1, 2, 3, 4);
    arr_logits(&x, l2, 5);
    APPLY(ex, &x);
    CHECK_SEQ(&x.a, 0, 1);
    nextok_sampler_free(ex);
    nextok_sampler_free(kp);
    nextok_sampler_free(ex1);
    nextok_sampler_free(kp1);
}

/* ---- top-p ---------------------------------------------------------------------- */

static void top_p_case(float p, enum nextok_ties ties, size_t min_keep, const double *probs,
                       size_t n, struct arr *x)
{
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_top_p(&s, p, ties, min_keep, NULL));
    arr_probs(x, probs, n);
    if (s) APPLY(s, x);
    nextok_sampler_free(s);
}

TEST(top_p_basic)
{
    /* sorted probabilities 0.4 0.3 0.2 0.1 (ids 3 2 1 0); cumulative 0.4 0.7 0.9 1.0 */
    struct arr x;
    top_p_case(1.0f, NEXTOK_TIES_EXACT, 1, P4, 4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2, 3); /* p = 1: no-op, order untouched */
    top_p_case(0.35f, NEXTOK_TIES_EXACT, 1, P4, 4, &x);
    CHECK_SEQ(&x.a, 3);
    top_p_case(0.5f, NEXTOK_TIES_EXACT, 1, P4, 4, &x);
    CHECK_SEQ(&x.a, 3, 2); /* 0.4 < 0.5 <= 0.7: the crossing token stays */
    top_p_case(0.75f, NEXTOK_TIES_KEEP, 1, P4, 4, &x);
    CHECK_SEQ(&x.a, 3, 2, 1);
    top_p_case(0.95f, NEXTOK_TIES_EXACT, 1, P4, 4, &x);
    CHECK_SEQ(&x.a, 3, 2, 1, 0);
    top_p_case(0.35f, NEXTOK_TIES_EXACT, 3, P4, 4, &x);
    CHECK_SEQ(&x.a, 3, 2, 1); /* min_keep */
    top_p_case(0.01f, NEXTOK_TIES_EXACT, 0, P4, 4, &x);
    CHECK_SEQ(&x.a, 3); /* min_keep 0 behaves as 1 */
    top_p_case(0.01f, NEXTOK_TIES_EXACT, 100, P4, 4, &x);
    CHECK_EQ_INT(x.a.size, 4);
}

TEST(top_p_ties)
{
    /* logits 2 1 1 0: p = 0.5345 0.1966 0.1966 0.0723; p = 0.6 crosses at the
     * first of the tied pair (0.5345 + 0.1966 = 0.7311) */
    const float l[] = {2, 1, 1, 0};
    struct arr x;
    struct nextok_sampler *ex, *kp;
    CHECK_OK(nextok_sampler_init_top_p(&ex, 0.6f, NEXTOK_TIES_EXACT, 1, NULL));
    CHECK_OK(nextok_sampler_init_top_p(&kp, 0.6f, NEXTOK_TIES_KEEP, 1, NULL));
    arr_logits(&x, l, 4);
    arr_reverse(&x);
    APPLY(ex, &x);
    CHECK_SEQ(&x.a, 0, 1);
    arr_logits(&x, l, 4);
    arr_reverse(&x);
    APPLY(kp, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    nextok_sampler_free(ex);
    nextok_sampler_free(kp);

    /* 3 3 3 0: the first token alone (p = 0.3318) reaches 0.1 */
    const float l2[] = {3, 3, 3, 0};
    CHECK_OK(nextok_sampler_init_top_p(&ex, 0.1f, NEXTOK_TIES_EXACT, 1, NULL));
    CHECK_OK(nextok_sampler_init_top_p(&kp, 0.1f, NEXTOK_TIES_KEEP, 1, NULL));
    arr_logits(&x, l2, 4);
    APPLY(ex, &x);
    CHECK_SEQ(&x.a, 0);
    arr_logits(&x, l2, 4);
    APPLY(kp, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    nextok_sampler_free(ex);
    nextok_sampler_free(kp);

    /* min_keep = 3 ends inside a tie: 4 2 1 1 0 -> keep-ties takes id 3 too */
    const float l3[] = {4, 2, 1, 1, 0};
    CHECK_OK(nextok_sampler_init_top_p(&ex, 0.01f, NEXTOK_TIES_EXACT, 3, NULL));
    CHECK_OK(nextok_sampler_init_top_p(&kp, 0.01f, NEXTOK_TIES_KEEP, 3, NULL));
    arr_logits(&x, l3, 5);
    APPLY(ex, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    arr_logits(&x, l3, 5);
    APPLY(kp, &x);
    CHECK_SEQ(&x.a, 0, 1, 2, 3);
    nextok_sampler_free(ex);
    nextok_sampler_free(kp);
}

/* ---- min-p ---------------------------------------------------------------------- */

static void min_p_case(float p, size_t min_keep, const float *l, size_t n, struct arr *x)
{
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_min_p(&s, p, min_keep, NULL));
    arr_logits(x, l, n);
    if (s) APPLY(s, x);
    nextok_sampler_free(s);
}

TEST(min_p_basic)
{
    /* logits 0 -1 -2 -3: threshold max + ln p */
    const float l[] = {0, -1, -2, -3};
    struct arr x;
    min_p_case(0.5f, 1, l, 4, &x); /* ln 0.5 = -0.693 */
    CHECK_SEQ(&x.a, 0);
    min_p_case(0.2f, 1, l, 4, &x); /* ln 0.2 = -1.609 */
    CHECK_SEQ(&x.a, 0, 1);
    min_p_case(0.0f, 1, l, 4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2, 3);
    min_p_case(0.5f, 2, l, 4, &x);
    CHECK_SEQ(&x.a, 0, 1);
    min_p_case(0.5f, 3, l, 4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    CHECK(x.a.sorted);
    min_p_case(0.5f, 0, l, 4, &x);
    CHECK_SEQ(&x.a, 0);

    /* p = 1 keeps exactly the tokens tied with the maximum */
    const float t[] = {2, 5, 5, 1};
    min_p_case(1.0f, 1, t, 4, &x);
    CHECK_SEQ(&x.a, 1, 2);
}

TEST(min_p_inclusive_boundary)
{
    /* The boundary 0 + ln(0.25) in double lies between two floats: the one at
     * or above it is kept (>=), the one below is removed. */
    const double b = log((double)0.25f);
    float hi = (float)b;
    if ((double)hi < b) hi = nextafterf(hi, INFINITY);
    const float lo = nextafterf(hi, -INFINITY);
    CHECK((double)hi >= b && (double)lo < b);
    const float l[] = {0.0f, hi, lo};
    struct arr x;
    min_p_case(0.25f, 1, l, 3, &x);
    CHECK_SEQ(&x.a, 0, 1);
}

/* ---- typical -------------------------------------------------------------------- */

TEST(typical_basic)
{
    /* p = 0.5 0.25 0.125 0.125: H = 1.75 ln 2 = 1.2130; -ln p = 0.693 1.386
     * 2.079 2.079; |-ln p - H| = 0.520 0.173 0.866 0.866, so the typical
     * order is ids 1, 0, 2, 3 with cumulative 0.25 0.75 0.875 1.0 */
    static const double P[] = {0.5, 0.25, 0.125, 0.125};
    const float ps[] = {0.2f, 0.5f, 0.8f, 0.95f, 1.0f};
    const size_t want[] = {1, 2, 3, 4, 4};
    struct arr x;
    for (size_t i = 0; i < 5; i++) {
        struct nextok_sampler *s;
        CHECK_OK(nextok_sampler_init_typical(&s, ps[i], 1, NULL));
        arr_probs(&x, P, 4);
        APPLY(s, &x);
        CHECK_EQ_INT(x.a.size, want[i]);
        nextok_sampler_free(s);
    }
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_typical(&s, 0.2f, 1, NULL));
    arr_probs(&x, P, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 1); /* the most typical token is not the most likely */
    arr_probs(&x, P, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 1);
    nextok_sampler_free(s);

    CHECK_OK(nextok_sampler_init_typical(&s, 0.8f, 1, NULL));
    arr_probs(&x, P, 4);
    arr_reverse(&x);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 2, 1, 0); /* tie 2/3 -> lower id; input order preserved */
    nextok_sampler_free(s);

    CHECK_OK(nextok_sampler_init_typical(&s, 0.2f, 3, NULL));
    arr_probs(&x, P, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 0, 1, 2); /* min_keep = 3 in typical order: ids 1, 0, 2 */
    nextok_sampler_free(s);
}

/* The canonical definition: c = S / Z with S = sum w_i v_i, score |v - c|. */
TEST(typical_center)
{
    /* logits 2 0 0 0: w = e^2 1 1 1 (canonical, ~1e-7 relative), Z = 10.389,
     * S = 2 e^2 = 14.778, c = 1.4225; scores 0.5775 1.4225 1.4225 1.4225:
     * typical order id 0, then 1 2 3 (equal logits: lower id first);
     * p_0 = 0.7112, cumulative 0.7112 0.8075 0.9038 1 */
    const float l[] = {2.0f, 0.0f, 0.0f, 0.0f};
    const float ps[] = {0.7f, 0.75f, 0.85f, 0.95f};
    const size_t want[] = {1, 2, 3, 4};
    struct arr x;
    for (size_t i = 0; i < 4; i++) {
        struct nextok_sampler *s;
        CHECK_OK(nextok_sampler_init_typical(&s, ps[i], 1, NULL));
        arr_logits(&x, l, 4);
        APPLY(s, &x);
        CHECK_EQ_INT(x.a.size, want[i]);
        nextok_sampler_free(s);
    }
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_typical(&s, 0.75f, 1, NULL));
    arr_logits(&x, l, 4);
    arr_reverse(&x);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 1, 0); /* kept in input (reversed) order */
    nextok_sampler_free(s);
    /* min_keep counts in typical order: 3 keeps ids 0 1 2 although p = 0.5 */
    CHECK_OK(nextok_sampler_init_typical(&s, 0.5f, 3, NULL));
    arr_logits(&x, l, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    nextok_sampler_free(s);
    /* logits 0 0 0 -3 (ids 0..3): c = -3 e^-3 / (3 + e^-3) = -0.0489; the
     * three zeros (score 0.0489) come before id 3 (score 2.95) and
     * carry 0.9834 of the mass: p = 0.95 keeps exactly them */
    const float m[] = {0.0f, 0.0f, 0.0f, -3.0f};
    CHECK_OK(nextok_sampler_init_typical(&s, 0.95f, 1, NULL));
    arr_logits(&x, m, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    nextok_sampler_free(s);
    /* the same with p = 0.3: 0.3278 per zero, one of them (lowest id) */
    CHECK_OK(nextok_sampler_init_typical(&s, 0.3f, 1, NULL));
    arr_logits(&x, m, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 0);
    nextok_sampler_free(s);
}

/* ---- top-n-sigma ---------------------------------------------------------------- */

TEST(top_n_sigma_basic)
{
    /* logits 0..4: mean 2, population variance 2, sigma = 1.41421 */
    const float l[] = {0, 1, 2, 3, 4};
    const float ns[] = {1.0f, 1.5f, 2.0f, 3.0f, 0.0f, -1.0f};
    const size_t want[] = {2, 3, 3, 5, 5, 5}; /* >= 2.586, 1.879, 1.172, -0.243 */
    struct arr x;
    for (size_t i = 0; i < 6; i++) {
        struct nextok_sampler *s;
        CHECK_OK(nextok_sampler_init_top_n_sigma(&s, ns[i], NULL));
        arr_logits(&x, l, 5);
        APPLY(s, &x);
        CHECK_MSG(x.a.size == want[i], "n = %g: size %zu, want %zu", (double)ns[i], x.a.size,
                  want[i]);
        CHECK(has_id(&x.a, 4));
        nextok_sampler_free(s);
    }
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_top_n_sigma(&s, 1.0f, NULL));
    arr_logits(&x, l, 5);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 3, 4);
    arr_logits(&x, l, 1);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 0);
    nextok_sampler_free(s);
}

/* ---- XTC ------------------------------------------------------------------------ */

static void xtc_case(float prob, float thr, size_t min_keep, uint64_t step, struct arr *x)
{
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_xtc(&s, prob, thr, min_keep, 7, NULL));
    arr_probs(x, D4, 4);
    if (s) {
        CHECK_OK(nextok_sampler_apply(s, &x->a, step));
        CHECK(invariants(&x->a));
    }
    nextok_sampler_free(s);
}

TEST(xtc_basic)
{
    /* p = 0.4 0.3 0.2 0.1 (ids 0..3), forced on with probability 1 */
    struct arr x;
    xtc_case(1.0f, 0.15f, 1, 0, &x); /* above: 0.4 0.3 0.2 -> keep from 0.2 */
    CHECK_SET(&x.a, 2, 3);
    xtc_case(1.0f, 0.25f, 1, 0, &x); /* above: 0.4 0.3 */
    CHECK_SET(&x.a, 1, 2, 3);
    xtc_case(1.0f, 0.35f, 1, 0, &x); /* one above: nothing removed */
    CHECK_EQ_INT(x.a.size, 4);
    xtc_case(1.0f, 0.6f, 1, 0, &x); /* threshold > 0.5: off */
    CHECK_EQ_INT(x.a.size, 4);
    xtc_case(1.0f, 0.0f, 1, 0, &x); /* everything above: only the least likely stays */
    CHECK_SET(&x.a, 3);
    xtc_case(1.0f, 0.15f, 3, 0, &x); /* would leave 2 < min_keep 3 */
    CHECK_EQ_INT(x.a.size, 4);
    xtc_case(1.0f, 0.15f, 2, 0, &x);
    CHECK_SET(&x.a, 2, 3);
    xtc_case(0.0f, 0.15f, 1, 0, &x);
    CHECK_EQ_INT(x.a.size, 4);
}

TEST(xtc_coin)
{
    /* probability 0.5: on exactly when uniform(seed, step, XTC, 0) < 0.5 */
    int on = 0, off = 0;
    for (uint64_t step = 0; step < 64; step++) {
        struct arr x;
        xtc_case(0.5f, 0.15f, 1, step, &x);
        const bool fire = nextok_rng_uniform(7, step, NEXTOK_RNG_XTC, 0) < 0.5;
        CHECK_EQ_INT(x.a.size, fire ? 2 : 4);
        on += fire;
        off += !fire;
    }
    CHECK(on > 10 && off > 10);
}

/* ---- epsilon / eta -------------------------------------------------------------- */

static void cutoff_case(bool eta, float v, size_t min_keep, const double *p, struct arr *x)
{
    struct nextok_sampler *s = NULL;
    if (eta) CHECK_OK(nextok_sampler_init_eta(&s, v, min_keep, NULL));
    else CHECK_OK(nextok_sampler_init_epsilon(&s, v, min_keep, NULL));
    arr_probs(x, p, 4);
    if (s) APPLY(s, x);
    nextok_sampler_free(s);
}

TEST(epsilon_basic)
{
    struct arr x;
    cutoff_case(false, 0.15f, 1, D4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    cutoff_case(false, 0.25f, 1, D4, &x);
    CHECK_SEQ(&x.a, 0, 1);
    cutoff_case(false, 0.35f, 1, D4, &x);
    CHECK_SEQ(&x.a, 0);
    cutoff_case(false, 0.35f, 3, D4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    cutoff_case(false, 0.99f, 0, D4, &x);
    CHECK_SEQ(&x.a, 0);
    cutoff_case(false, 0.0f, 1, D4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2, 3);
}

/* eps = min(eta, sqrt(eta) exp(-H)) computed independently in the test. */
static double eta_eps(const double *p, size_t n, double eta)
{
    double h = 0.0;
    for (size_t i = 0; i < n; i++) h -= p[i] * log(p[i]);
    const double a = sqrt(eta) * exp(-h);
    return eta < a ? eta : a;
}

TEST(eta_basic)
{
    /* D4: H = 1.27985, exp(-H) = 0.27808.
     *   eta 0.5: min(0.5, 0.19663) = 0.19663 -> keep 0.4 0.3 0.2
     *   eta 0.1: min(0.1, 0.08794) = 0.08794 -> keep all four */
    static const double Q[] = {0.6, 0.3, 0.06, 0.04};
    /* Q: H = 0.96525, exp(-H) = 0.38089.
     *   eta 0.05: min(0.05, 0.08517) = 0.05 -> keep 0.6 0.3 0.06
     *   eta 0.1:  min(0.1, 0.12045) = 0.1  -> keep 0.6 0.3 */
    CHECK_NEAR(eta_eps(D4, 4, 0.5), 0.196631, 1e-6);
    CHECK_NEAR(eta_eps(D4, 4, 0.1), 0.087936, 1e-6);
    CHECK_NEAR(eta_eps(Q, 4, 0.05), 0.05, 1e-12);
    CHECK_NEAR(eta_eps(Q, 4, 0.1), 0.1, 1e-12);
    struct arr x;
    cutoff_case(true, 0.5f, 1, D4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2); /* the eta branch (0.5) would keep only id 0 */
    cutoff_case(true, 0.1f, 1, D4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2, 3);
    cutoff_case(true, 0.05f, 1, Q, &x);
    CHECK_SEQ(&x.a, 0, 1, 2); /* the adaptive branch (0.085) would drop id 2 */
    cutoff_case(true, 0.1f, 1, Q, &x);
    CHECK_SEQ(&x.a, 0, 1);
    cutoff_case(true, 0.1f, 3, Q, &x);
    CHECK_SEQ(&x.a, 0, 1, 2);
    cutoff_case(true, 0.0f, 1, Q, &x);
    CHECK_EQ_INT(x.a.size, 4);
}

/* ---- temperature ---------------------------------------------------------------- */

static void temp_case(float t, const float *l, size_t n, struct arr *x)
{
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_temp(&s, t, NULL));
    arr_logits(x, l, n);
    if (s) APPLY(s, x);
    nextok_sampler_free(s);
}

TEST(temp_basic)
{
    const float l[] = {1, 5, 5, 2};
    struct arr x;
    temp_case(0.0f, l, 4, &x);
    CHECK_SEQ(&x.a, 1); /* greedy, tie -> lower id */
    CHECK(x.a.data[0].logit == 5.0f);
    temp_case(-2.0f, l, 4, &x);
    CHECK_SEQ(&x.a, 1);
    temp_case(1.0f, l, 4, &x);
    CHECK_SEQ(&x.a, 0, 1, 2, 3);
    for (size_t i = 0; i < 4; i++) CHECK(x.a.data[i].logit == l[i]);
    temp_case(2.0f, l, 4, &x);
    CHECK_EQ_INT(x.a.size, 4);
    for (size_t i = 0; i < 4; i++) CHECK(x.a.data[i].logit == l[i] / 2);
    temp_case(0.5f, l, 4, &x);
    for (size_t i = 0; i < 4; i++) CHECK(x.a.data[i].logit == l[i] * 2);
}

TEST(temp_saturates_and_keeps_sorted_truthful)
{
    const float l[] = {3e38f, -3e38f, 1.0f};
    struct arr x;
    temp_case(0.01f, l, 3, &x);
    CHECK(x.a.data[0].logit == FLT_MAX);
    CHECK(x.a.data[1].logit == -FLT_MAX);
    CHECK_NEAR(x.a.data[2].logit, 100.0, 1e-4);

    /* sorted input whose two top logits both saturate: ids 5, 2 become a tie
     * in the wrong id order, so `sorted` must not be claimed any more */
    struct nextok_sampler *s;
    CHECK_OK(nextok_sampler_init_temp(&s, 1e-3f, NULL));
    x.d[0] = (struct nextok_token_data){5, 3e38f, 0};
    x.d[1] = (struct nextok_token_data){2, 2e38f, 0};
    x.d[2] = (struct nextok_token_data){9, 1.0f, 0};
    x.a = (struct nextok_token_data_array){x.d, 3, -1, true};
    APPLY(s, &x);
    CHECK(!x.a.sorted);
    /* an ordinary sorted input stays sorted */
    x.d[0] = (struct nextok_token_data){5, 3.0f, 0};
    x.d[1] = (struct nextok_token_data){2, 2.0f, 0};
    x.d[2] = (struct nextok_token_data){9, 1.0f, 0};
    x.a = (struct nextok_token_data_array){x.d, 3, -1, true};
    APPLY(s, &x);
    CHECK(x.a.sorted);
    nextok_sampler_free(s);
}

static void temp_ext_case(float t, float range, float e, const float *l, size_t n, struct arr *x)
{
    struct nextok_sampler *s = NULL;
    CHECK_OK(nextok_sampler_init_temp_ext(&s, t, range, e, NULL));
    arr_logits(x, l, n);
    if (s) APPLY(s, x);
    nextok_sampler_free(s);
}

TEST(temp_ext_basic)
{
    /* logits 0 1 2: p = 0.09003 0.24473 0.66524, H = 0.83240, ln 3 = 1.09861,
     * Hn = 0.75768. t = 1, range 0.5: min_t = 0.5, max_t = 1.5.
     *   e = 1: T = 0.5 + 0.75768 = 1.25768 -> 0, 0.79512, 1.59023
     *   e = 2: T = 0.5 + 0.57408 = 1.07408 -> 0, 0.93103, 1.86206
     *   e = 0: T = max_t = 1.5 */
    const float l[] = {0, 1, 2};
    struct arr x;
    temp_ext_case(1.0f, 0.5f, 1.0f, l, 3, &x);
    CHECK_NEAR(x.a.data[1].logit, 0.795115, 1e-5);
    CHECK_NEAR(x.a.data[2].logit, 1.590231, 1e-5);
    CHECK(x.a.data[0].logit == 0.0f);
    temp_ext_case(1.0f, 0.5f, 2.0f, l, 3, &x);
    CHECK_NEAR(x.a.data[1].logit, 0.931031, 1e-5);
    CHECK_NEAR(x.a.data[2].logit, 1.862063, 1e-5);
    temp_ext_case(1.0f, 0.5f, 0.0f, l, 3, &x);
    CHECK_NEAR(x.a.data[2].logit, 2.0 / 1.5, 1e-6);
    /* t = 0.25, range 0.5: min_t clamps to 0, max_t = 0.75, T = 0.75 * 0.75768 */
    temp_ext_case(0.25f, 0.5f, 1.0f, l, 3, &x);
    CHECK_NEAR(x.a.data[2].logit, 2.0 / (0.75 * 0.7576791), 1e-4);
    /* uniform logits: Hn = 1, T = max_t */
    const float u[] = {1, 1, 1};
    temp_ext_case(1.0f, 0.5f, 1.0f, u, 3, &x);
    for (size_t i = 0; i < 3; i++) CHECK_NEAR(x.a.data[i].logit, 1.0 / 1.5, 1e-6);
    /* range 0: plain temperature */
    temp_ext_case(2.0f, 0.0f, 1.0f, l, 3, &x);
    CHECK(x.a.data[2].logit == 1.0f && x.a.data[1].logit == 0.5f);
    /* T <= 0 (t = -1, range 0.5: max_t = -0.5): greedy */
    temp_ext_case(-1.0f, 0.5f, 1.0f, l, 3, &x);
    CHECK_SEQ(&x.a, 2);
    CHECK(x.a.data[0].logit == 2.0f);
    /* one candidate: nothing to do */
    const float one[] = {3};
    temp_ext_case(0.5f, 0.25f, 1.0f, one, 1, &x);
    CHECK(x.a.size == 1 && x.a.data[0].logit == 3.0f);
}

/* ---- constructors ----------------------------------------------------------------- */

TEST(filter_rejections)
{
    const float nan = NAN, inf = INFINITY;
    CHECK_REJECT(nextok_sampler_init_temp(&s_, nan, &e_), NEXTOK_ERR_INVALID_ARG, "temperature");
    CHECK_REJECT(nextok_sampler_init_temp(&s_, -inf, &e_), NEXTOK_ERR_INVALID_ARG, "temperature");
    CHECK_REJECT(nextok_sampler_init_temp_ext(&s_, nan, 0, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "temperature");
    CHECK_REJECT(nextok_sampler_init_temp_ext(&s_, 1, -0.5f, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "dynatemp_range");
    CHECK_REJECT(nextok_sampler_init_temp_ext(&s_, 1, nan, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "dynatemp_range");
    CHECK_REJECT(nextok_sampler_init_temp_ext(&s_, 1, inf, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "dynatemp_range");
    CHECK_REJECT(nextok_sampler_init_temp_ext(&s_, 1, 0.5f, -1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "dynatemp_exponent");
    CHECK_REJECT(nextok_sampler_init_temp_ext(&s_, 1, 0.5f, inf, &e_), NEXTOK_ERR_INVALID_ARG,
                 "dynatemp_exponent");
    CHECK_REJECT(nextok_sampler_init_top_k(&s_, 5, (enum nextok_ties)7, &e_),
                 NEXTOK_ERR_INVALID_ARG, "ties");
    CHECK_REJECT(nextok_sampler_init_top_p(&s_, 1.5f, NEXTOK_TIES_KEEP, 1, &e_),
                 NEXTOK_ERR_INVALID_ARG, "top_p");
    CHECK_MSG(strstr(last_msg, "got 1.5") != NULL, "%s", last_msg);
    CHECK_REJECT(nextok_sampler_init_top_p(&s_, 0.0f, NEXTOK_TIES_KEEP, 1, &e_),
                 NEXTOK_ERR_INVALID_ARG, "top_p");
    CHECK_REJECT(nextok_sampler_init_top_p(&s_, nan, NEXTOK_TIES_KEEP, 1, &e_),
                 NEXTOK_ERR_INVALID_ARG, "top_p");
    CHECK_REJECT(nextok_sampler_init_top_p(&s_, 0.5f, (enum nextok_ties)-1, 1, &e_),
                 NEXTOK_ERR_INVALID_ARG, "ties");
    CHECK_REJECT(nextok_sampler_init_min_p(&s_, -0.1f, 1, &e_), NEXTOK_ERR_INVALID_ARG, "min_p");
    CHECK_REJECT(nextok_sampler_init_min_p(&s_, 1.1f, 1, &e_), NEXTOK_ERR_INVALID_ARG, "min_p");
    CHECK_REJECT(nextok_sampler_init_min_p(&s_, nan, 1, &e_), NEXTOK_ERR_INVALID_ARG, "min_p");
    CHECK_REJECT(nextok_sampler_init_typical(&s_, 0.0f, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "typical_p");
    CHECK_REJECT(nextok_sampler_init_typical(&s_, 1.01f, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "typical_p");
    CHECK_REJECT(nextok_sampler_init_typical(&s_, nan, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "typical_p");
    CHECK_REJECT(nextok_sampler_init_top_n_sigma(&s_, nan, &e_), NEXTOK_ERR_INVALID_ARG,
                 "top_n_sigma");
    CHECK_REJECT(nextok_sampler_init_top_n_sigma(&s_, inf, &e_), NEXTOK_ERR_INVALID_ARG,
                 "top_n_sigma");
    CHECK_REJECT(nextok_sampler_init_xtc(&s_, -0.1f, 0.1f, 1, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "xtc_probability");
    CHECK_REJECT(nextok_sampler_init_xtc(&s_, 1.1f, 0.1f, 1, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "xtc_probability");
    CHECK_REJECT(nextok_sampler_init_xtc(&s_, nan, 0.1f, 1, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "xtc_probability");
    CHECK_REJECT(nextok_sampler_init_xtc(&s_, 0.5f, -0.1f, 1, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "xtc_threshold");
    CHECK_REJECT(nextok_sampler_init_xtc(&s_, 0.5f, 1.5f, 1, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "xtc_threshold");
    CHECK_REJECT(nextok_sampler_init_xtc(&s_, 0.5f, nan, 1, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "xtc_threshold");
    CHECK_REJECT(nextok_sampler_init_epsilon(&s_, 1.0f, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "epsilon");
    CHECK_REJECT(nextok_sampler_init_epsilon(&s_, -0.01f, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "epsilon");
    CHECK_REJECT(nextok_sampler_init_epsilon(&s_, nan, 1, &e_), NEXTOK_ERR_INVALID_ARG,
                 "epsilon");
    CHECK_REJECT(nextok_sampler_init_eta(&s_, 1.0f, 1, &e_), NEXTOK_ERR_INVALID_ARG, "eta");
    CHECK_REJECT(nextok_sampler_init_eta(&s_, -0.5f, 1, &e_), NEXTOK_ERR_INVALID_ARG, "eta");
    CHECK_REJECT(nextok_sampler_init_eta(&s_, nan, 1, &e_), NEXTOK_ERR_INVALID_ARG, "eta");
    /* out == NULL, err == NULL: a status, no crash */
    CHECK(nextok_sampler_init_top_k(NULL, 1, NEXTOK_TIES_KEEP, NULL) == NEXTOK_ERR_INVALID_ARG);
    CHECK(nextok_sampler_init_min_p(NULL, 0.1f, 1, NULL) == NEXTOK_ERR_INVALID_ARG);
    struct nextok_sampler *s = NULL;
    CHECK(nextok_sampler_init_top_p(&s, 2.0f, NEXTOK_TIES_KEEP, 1, NULL) == NEXTOK_ERR_INVALID_ARG);
    CHECK(s == NULL);
}

TEST(filter_edge_values_accepted)
{
    /* The closed ends of every range are valid. */
    struct nextok_sampler *s[12] = {0};
    CHECK_OK(nextok_sampler_init_temp(&s[0], -1.0f, NULL));
    CHECK_OK(nextok_sampler_init_temp_ext(&s[1], 1.0f, 0.0f, 0.0f, NULL));
    CHECK_OK(nextok_sampler_init_top_k(&s[2], -7, NEXTOK_TIES_EXACT, NULL));
    CHECK_OK(nextok_sampler_init_top_p(&s[3], 1.0f, NEXTOK_TIES_KEEP, 0, NULL));
    CHECK_OK(nextok_sampler_init_min_p(&s[4], 0.0f, 0, NULL));
    CHECK_OK(nextok_sampler_init_min_p(&s[5], 1.0f, 0, NULL));
    CHECK_OK(nextok_sampler_init_typical(&s[6], 1.0f, 0, NULL));
    CHECK_OK(nextok_sampler_init_top_n_sigma(&s[7], -3.0f, NULL));
    CHECK_OK(nextok_sampler_init_xtc(&s[8], 1.0f, 1.0f, 0, NEXTOK_DEFAULT_SEED, NULL));
    CHECK_OK(nextok_sampler_init_xtc(&s[9], 0.0f, 0.0f, 0, 0, NULL));
    CHECK_OK(nextok_sampler_init_epsilon(&s[10], 0.0f, 0, NULL));
    CHECK_OK(nextok_sampler_init_eta(&s[11], 0.0f, 0, NULL));
    for (size_t i = 0; i < 12; i++) {
        CHECK(s[i] != NULL);
        nextok_sampler_free(s[i]);
    }
}

TEST(filter_names_and_clone)
{
    CHECK(strcmp(nextok__iface_temp.name(NULL), "temp") == 0);
    CHECK(strcmp(nextok__iface_temp_ext.name(NULL), "temp-ext") == 0);
    CHECK(strcmp(nextok__iface_top_k.name(NULL), "top-k") == 0);
    CHECK(strcmp(nextok__iface_top_p.name(NULL), "top-p") == 0);
    CHECK(strcmp(nextok__iface_min_p.name(NULL), "min-p") == 0);
    CHECK(strcmp(nextok__iface_typical.name(NULL), "typical") == 0);
    CHECK(strcmp(nextok__iface_top_n_sigma.name(NULL), "top-n-sigma") == 0);
    CHECK(strcmp(nextok__iface_xtc.name(NULL), "xtc") == 0);
    CHECK(strcmp(nextok__iface_epsilon.name(NULL), "epsilon") == 0);
    CHECK(strcmp(nextok__iface_eta.name(NULL), "eta") == 0);

    struct nextok_sampler *s[10] = {0}, *c = NULL;
    CHECK_OK(nextok_sampler_init_temp(&s[0], 0.7f, NULL));
    CHECK_OK(nextok_sampler_init_temp_ext(&s[1], 0.7f, 0.3f, 1.0f, NULL));
    CHECK_OK(nextok_sampler_init_top_k(&s[2], 2, NEXTOK_TIES_KEEP, NULL));
    CHECK_OK(nextok_sampler_init_top_p(&s[3], 0.5f, NEXTOK_TIES_KEEP, 1, NULL));
    CHECK_OK(nextok_sampler_init_min_p(&s[4], 0.4f, 1, NULL));
    CHECK_OK(nextok_sampler_init_typical(&s[5], 0.5f, 1, NULL));
    CHECK_OK(nextok_sampler_init_top_n_sigma(&s[6], 1.0f, NULL));
    CHECK_OK(nextok_sampler_init_xtc(&s[7], 1.0f, 0.15f, 1, 3, NULL));
    CHECK_OK(nextok_sampler_init_epsilon(&s[8], 0.15f, 1, NULL));
    CHECK_OK(nextok_sampler_init_eta(&s[9], 0.5f, 1, NULL));
    static const char *names[] = {"temp", "temp-ext", "top-k", "top-p", "min-p",
                                  "typical", "top-n-sigma", "xtc", "epsilon", "eta"};
    for (size_t i = 0; i < 10; i++) {
        CHECK(strcmp(nextok_sampler_name(s[i]), names[i]) == 0);
        CHECK_OK(nextok_sampler_clone(s[i], &c));
        CHECK(c && strcmp(nextok_sampler_name(c), names[i]) == 0);
        /* the clone behaves exactly as the original */
        struct arr x, y;
        arr_probs(&x, D4, 4);
        arr_probs(&y, D4, 4);
        CHECK_OK(nextok_sampler_apply(s[i], &x.a, 3));
        if (c) CHECK_OK(nextok_sampler_apply(c, &y.a, 3));
        CHECK(x.a.size == y.a.size && x.a.sorted == y.a.sorted);
        CHECK(memcmp(x.d, y.d, x.a.size * sizeof x.d[0]) == 0);
        nextok_sampler_free(c);
        nextok_sampler_free(s[i]);
    }
}

/* ---- exact boundaries ------------------------------------------------------------ */

/* Equal logits give exactly representable p (1/2, 1/4) and cumulative sums,
 * so the inclusive comparisons of the spec can be hit exactly. */
TEST(inclusive_boundaries_exact)
{
    const float eq[] = {0.7f, 0.7f, 0.7f, 0.7f};
    struct arr x;
    struct nextok_sampler *s;
    /* top-p: cumulative 0.25 0.5 0.75 1; reaching p exactly is enough */
    const float ps[] = {0.25f, 0.5f, 0.75f};
    for (size_t i = 0; i < 3; i++) {
        CHECK_OK(nextok_sampler_init_top_p(&s, ps[i], NEXTOK_TIES_EXACT, 1, NULL));
        arr_logits(&x, eq, 4);
        arr_reverse(&x);
        APPLY(s, &x);
        CHECK_EQ_INT(x.a.size, i + 1);
        CHECK(x.a.data[0].id == 0); /* ties broken by lower id */
        nextok_sampler_free(s);
    }
    CHECK_OK(nextok_sampler_init_top_p(&s, 0.25f, NEXTOK_TIES_KEEP, 1, NULL));
    arr_logits(&x, eq, 4);
    APPLY(s, &x);
    CHECK_EQ_INT(x.a.size, 4); /* everything is tied with the kept logit */
    nextok_sampler_free(s);
    /* epsilon: p = 0.25 each, eps = 0.25 keeps all */
    CHECK_OK(nextok_sampler_init_epsilon(&s, 0.25f, 1, NULL));
    arr_logits(&x, eq, 4);
    APPLY(s, &x);
    CHECK_EQ_INT(x.a.size, 4);
    nextok_sampler_free(s);
    /* XTC: all four reach threshold 0.25; only the last in sorted order stays */
    CHECK_OK(nextok_sampler_init_xtc(&s, 1.0f, 0.25f, 1, 0, NULL));
    arr_logits(&x, eq, 4);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 3);
    nextok_sampler_free(s);
    /* typical: all equally typical (score 0): sorted order, cumulative as top-p */
    CHECK_OK(nextok_sampler_init_typical(&s, 0.5f, 1, NULL));
    arr_logits(&x, eq, 4);
    arr_reverse(&x);
    APPLY(s, &x);
    CHECK_SEQ(&x.a, 1, 0); /* ids 0 and 1, in input (reversed) order */
    nextok_sampler_free(s);
    /* top-n-sigma: sigma 0, everything equals max - n * 0 */
    CHECK_OK(nextok_sampler_init_top_n_sigma(&s, 1.0f, NULL));
    arr_logits(&x, eq, 4);
    APPLY(s, &x);
    CHECK_EQ_INT(x.a.size, 4);
    nextok_sampler_free(s);
    /* top-n-sigma on 0 2: mean 1, sigma 1, n = 2 -> threshold 0 keeps both */
    const float two[] = {0.0f, 2.0f};
    CHECK_OK(nextok_sampler_init_top_n_sigma(&s, 2.0f, NULL));
    arr_logits(&x, two, 2);
    APPLY(s, &x);
    CHECK_EQ_INT(x.a.size, 2);
    nextok_sampler_free(s);
}

/* ---- randomized comparison with reference implementations ------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static int cmp_sorted(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    if (before(a, b)) return -1;
    return before(b, a) ? 1 : 0;
}

static int cmp_by_id(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

#define RN 3000
static struct nextok_token_data in_[RN], ref_[RN], out_[RN];

/* Random logits with many ties (coarse grid) and random order; half the time
 * pre-sorted and flagged so. */
static size_t random_input(bool *sorted)
{
    const size_t n = 1 + rnd() % (rnd() % 2 ? 40 : RN);
    const uint32_t levels = 2 + rnd() % 200;
    const float scale = (float)(rnd() % 1000) / 100.0f + 0.01f;
    for (size_t i = 0; i < n; i++)
        in_[i] = (struct nextok_token_data){(int32_t)i, scale * (float)(rnd() % levels) / 10.0f, 0};
    for (size_t i = n; i-- > 1;) {
        size_t j = rnd() % (i + 1);
        struct nextok_token_data t = in_[i];
        in_[i] = in_[j];
        in_[j] = t;
    }
    *sorted = rnd() % 2;
    if (*sorted) qsort(in_, n, sizeof *in_, cmp_sorted);
    return n;
}

static size_t min_keep_of(size_t mk, size_t n)
{
    if (mk == 0) mk = 1;
    return mk < n ? mk : n;
}

/* Reference keep counts over ref_ (sorted), with z summed in input order. */
static size_t ref_top_p(size_t n, double p, bool keep_ties, size_t mk, double z)
{
    if (p >= 1.0) return n;
    const double m = ref_[0].logit;
    double cum = 0.0;
    size_t k = n;
    for (size_t i = 0; i < n; i++) {
        cum += exp((double)ref_[i].logit - m) / z;
        if (cum >= p) {
            k = i + 1;
            break;
        }
    }
    if (k < min_keep_of(mk, n)) k = min_keep_of(mk, n);
    while (keep_ties && k < n && ref_[k].logit == ref_[k - 1].logit) k++;
    return k;
}

static size_t ref_top_k(size_t n, int32_t k, bool keep_ties)
{
    if (k <= 0 || (size_t)k >= n) return n;
    size_t r = (size_t)k;
    while (keep_ties && r < n && ref_[r].logit == ref_[r - 1].logit) r++;
    return r;
}

static size_t ref_threshold(size_t n, double thr_logit, size_t mk)
{
    size_t r = 0;
    while (r < n && (double)ref_[r].logit >= thr_logit) r++;
    return r < min_keep_of(mk, n) ? min_keep_of(mk, n) : r;
}

static size_t ref_epsilon(size_t n, double eps, size_t mk, double z)
{
    const double m = ref_[0].logit;
    size_t r = 0;
    while (r < n && exp((double)ref_[r].logit - m) / z >= eps) r++;
    return r < min_keep_of(mk, n) ? min_keep_of(mk, n) : r;
}

/* Run s on a copy of in_[0..n) and compare the kept set with ref_[0..want). */
static bool matches_ref(struct nextok_sampler *s, size_t n, bool sorted, size_t want)
{
    memcpy(out_, in_, n * sizeof *in_);
    struct nextok_token_data_array a = {out_, n, -1, sorted};
    if (nextok_sampler_apply(s, &a, 0) != NEXTOK_OK || !invariants(&a)) return false;
    if (a.size != want) return false;
    if (sorted && !a.sorted) return false; /* these filters never unsort */
    struct nextok_token_data r[RN];
    memcpy(r, ref_, want * sizeof *r);
    qsort(r, want, sizeof *r, cmp_by_id);
    qsort(out_, want, sizeof *out_, cmp_by_id);
    for (size_t i = 0; i < want; i++)
        if (r[i].id != out_[i].id || r[i].logit != out_[i].logit) return false;
    return true;
}

TEST(filters_match_reference)
{
    for (int it = 0; it < 300; it++) {
        bool sorted;
        const size_t n = random_input(&sorted);
        double z = 0.0, mx = -INFINITY;
        for (size_t i = 0; i < n; i++) mx = in_[i].logit > mx ? in_[i].logit : mx;
        for (size_t i = 0; i < n; i++) z += exp((double)in_[i].logit - mx);
        memcpy(ref_, in_, n * sizeof *in_);
        qsort(ref_, n, sizeof *ref_, cmp_sorted);

        const float p = (float)(rnd() % 1000 + 1) / 1000.0f;
        const size_t mk = rnd() % 5;
        const int32_t k = (int32_t)(rnd() % 60) - 5;
        const bool keep = rnd() % 2;
        const enum nextok_ties ties = keep ? NEXTOK_TIES_KEEP : NEXTOK_TIES_EXACT;
        struct nextok_sampler *s;

        CHECK_OK(nextok_sampler_init_top_p(&s, p, ties, mk, NULL));
        CHECK_MSG(matches_ref(s, n, sorted, ref_top_p(n, p, keep, mk, z)),
                  "top-p it %d n %zu p %g keep %d mk %zu", it, n, (double)p, keep, mk);
        nextok_sampler_free(s);

        CHECK_OK(nextok_sampler_init_top_k(&s, k, ties, NULL));
        CHECK_MSG(matches_ref(s, n, sorted, ref_top_k(n, k, keep)),
                  "top-k it %d n %zu k %d keep %d", it, n, (int)k, keep);
        nextok_sampler_free(s);

        CHECK_OK(nextok_sampler_init_min_p(&s, p, mk, NULL));
        CHECK_MSG(matches_ref(s, n, sorted, ref_threshold(n, mx + log((double)p), mk)),
                  "min-p it %d n %zu p %g mk %zu", it, n, (double)p, mk);
        nextok_sampler_free(s);

        const float eps = p < 1.0f ? p / 4 : 0.25f;
        CHECK_OK(nextok_sampler_init_epsilon(&s, eps, mk, NULL));
        CHECK_MSG(matches_ref(s, n, sorted, ref_epsilon(n, eps, mk, z)),
                  "epsilon it %d n %zu eps %g mk %zu", it, n, (double)eps, mk);
        nextok_sampler_free(s);

        const float ns = (float)(rnd() % 300) / 100.0f + 0.01f;
        double mean = 0.0, var = 0.0;
        for (size_t i = 0; i < n; i++) mean += in_[i].logit;
        mean /= (double)n;
        for (size_t i = 0; i < n; i++) {
            const double d = (double)in_[i].logit - mean;
            var += d * d;
        }
        const double thr = n > 1 ? mx - (double)ns * sqrt(var / (double)n) : -INFINITY;
        CHECK_OK(nextok_sampler_init_top_n_sigma(&s, ns, NULL));
        CHECK_MSG(matches_ref(s, n, sorted, ref_threshold(n, thr, 1)), "sigma it %d n %zu n %g",
                  it, n, (double)ns);
        nextok_sampler_free(s);
    }
}

/* Every filter on wild inputs keeps its invariants and never empties the set. */
TEST(filters_invariants_random)
{
    for (int it = 0; it < 200; it++) {
        bool sorted;
        const size_t n = random_input(&sorted);
        if (it % 3 == 0) {
            in_[rnd() % n].logit = (rnd() % 2 ? 1 : -1) * 3e38f;
            if (sorted) qsort(in_, n, sizeof *in_, cmp_sorted);
        }
        struct nextok_sampler *s[10];
        CHECK_OK(nextok_sampler_init_temp(&s[0], (float)(rnd() % 300) / 100.0f - 0.5f, NULL));
        const float r1 = (float)(rnd() % 300) / 100.0f, r2 = (float)(rnd() % 100 + 1) / 100.0f;
        const float r3 = (float)(rnd() % 60) / 100.0f;
        CHECK_OK(nextok_sampler_init_temp_ext(&s[1], r1, 0.5f, 1.5f, NULL));
        CHECK_OK(nextok_sampler_init_typical(&s[2], r2, rnd() % 4, NULL));
        CHECK_OK(nextok_sampler_init_xtc(&s[3], 1.0f, r3, rnd() % 4, 9, NULL));
        CHECK_OK(nextok_sampler_init_eta(&s[4], (float)(rnd() % 99) / 100.0f, rnd() % 4, NULL));
        CHECK_OK(nextok_sampler_init_top_p(&s[5], 0.9f, NEXTOK_TIES_KEEP, 1, NULL));
        CHECK_OK(nextok_sampler_init_min_p(&s[6], 0.05f, 1, NULL));
        CHECK_OK(nextok_sampler_init_top_k(&s[7], 40, NEXTOK_TIES_KEEP, NULL));
        CHECK_OK(nextok_sampler_init_top_n_sigma(&s[8], 1.0f, NULL));
        CHECK_OK(nextok_sampler_init_epsilon(&s[9], 0.01f, 1, NULL));
        for (size_t j = 0; j < 10; j++) {
            memcpy(out_, in_, n * sizeof *in_);
            struct nextok_token_data_array a = {out_, n, -1, sorted};
            CHECK_OK(nextok_sampler_apply(s[j], &a, (uint64_t)it));
            CHECK_MSG(invariants(&a) && a.size <= n, "%s it %d", nextok_sampler_name(s[j]), it);
            nextok_sampler_free(s[j]);
        }
    }
}

int main(void)
{
    RUN(top_k_basic);
    RUN(top_k_ties);
    RUN(top_p_basic);
    RUN(top_p_ties);
    RUN(min_p_basic);
    RUN(min_p_inclusive_boundary);
    RUN(typical_basic);
    RUN(typical_center);
    RUN(top_n_sigma_basic);
    RUN(xtc_basic);
    RUN(xtc_coin);
    RUN(epsilon_basic);
    RUN(eta_basic);
    RUN(temp_basic);
    RUN(temp_saturates_and_keeps_sorted_truthful);
    RUN(temp_ext_basic);
    RUN(filter_rejections);
    RUN(filter_edge_values_accepted);
    RUN(filter_names_and_clone);
    RUN(inclusive_boundaries_exact);
    RUN(filters_match_reference);
    RUN(filters_invariants_random);
    return harness_done();
}
