/* Core pieces: status table, version, half floats, layout, chain ownership,
 * user-written samplers, logprobs, profile validation messages. */
#include "nextok.h"
#include "harness.h"

#include <stddef.h>
#include <stdint.h>

TEST(status_table)
{
    CHECK(strcmp(nextok_strerror(NEXTOK_OK), "success") == 0);
    CHECK(strcmp(nextok_status_name(NEXTOK_ERR_NAN), "ERR_NAN") == 0);
    CHECK(strcmp(nextok_status_name((nextok_status)-999), "UNKNOWN") == 0);
    CHECK(strcmp(nextok_strerror((nextok_status)-999), "unknown status") == 0);
    /* frozen values */
    CHECK_EQ_INT(NEXTOK_ERR_INVALID_ARG, -1);
    CHECK_EQ_INT(NEXTOK_ERR_NO_CANDIDATES, -4);
    CHECK_EQ_INT(NEXTOK_ERR_VOCAB_SIZE, -12);
}

TEST(version)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%d.%d", NEXTOK_VERSION_MAJOR, NEXTOK_VERSION_MINOR,
             NEXTOK_VERSION_PATCH);
    CHECK(strcmp(nextok_version(), buf) == 0);
    CHECK_EQ_INT(nextok_version_number(), NEXTOK_VERSION_NUMBER);
}

/* Same layout as llama.cpp's llama_token_data / llama_token_data_array. */
TEST(layout)
{
    CHECK_EQ_INT(sizeof(struct nextok_token_data), 12);
    CHECK_EQ_INT(offsetof(struct nextok_token_data, logit), 4);
    CHECK_EQ_INT(offsetof(struct nextok_token_data, p), 8);
    CHECK_EQ_INT(offsetof(struct nextok_token_data_array, size), sizeof(void *));
    CHECK_EQ_INT(offsetof(struct nextok_token_data_array, selected), sizeof(void *) + sizeof(size_t));
    CHECK_EQ_INT(offsetof(struct nextok_token_data_array, sorted), sizeof(void *) + sizeof(size_t) + 8);
}

static double f16_value(uint16_t h) /* independent decoding with ldexp */
{
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    double v;
    if (exp == 31) v = man ? NAN : INFINITY;
    else if (exp == 0) v = ldexp(man, -24);
    else v = ldexp(1024 + man, exp - 25);
    return sign ? -v : v;
}

TEST(f16_exhaustive)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        double want = f16_value((uint16_t)h);
        float got = nextok_f16_to_f32((uint16_t)h);
        if (isnan(want) ? !isnan(got) : (double)got != want || (signbit(got) != 0) != ((h >> 15) != 0)) bad++;
        if (!isnan(want) && nextok_f32_to_f16(got) != h) bad++; /* round trip */
    }
    CHECK_EQ_INT(bad, 0);
    /* rounding: halfway between 1 and 1+2^-10 goes to even (1) */
    CHECK_EQ_INT(nextok_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    CHECK_EQ_INT(nextok_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    CHECK_EQ_INT(nextok_f32_to_f16(65520.0f), 0x7c00); /* rounds to inf */
    CHECK_EQ_INT(nextok_f32_to_f16(65519.0f), 0x7bff);
    CHECK_EQ_INT(nextok_f32_to_f16(0x1p-25f), 0x0000); /* half of the smallest subnormal: even */
    CHECK_EQ_INT(nextok_f32_to_f16(0x1.8p-25f), 0x0001);
}

TEST(bf16)
{
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = nextok_bf16_to_f32((uint16_t)h);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (bits != h << 16) bad++;
        if (!isnan(f) && nextok_f32_to_bf16(f) != h) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(nextok_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);      /* tie -> even */
    CHECK_EQ_INT(nextok_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
    CHECK(isnan(nextok_bf16_to_f32(nextok_f32_to_bf16(NAN))));
    CHECK_EQ_INT(nextok_dtype_size(NEXTOK_DTYPE_BF16), 2);
    CHECK_EQ_INT(nextok_dtype_size((enum nextok_dtype)7), 0);
}

TEST(prepare_rules)
{
    struct nextok_token_data d[5] = {
        {0, 1.0f, 0}, {1, -INFINITY, 0}, {2, 2.0f, 0}, {3, NAN, 0}, {4, 0.5f, 0}};
    struct nextok_token_data_array a = {d, 5, -1, false};
    CHECK_EQ_INT(nextok_candidates_prepare(&a, NEXTOK_NAN_ERROR), NEXTOK_ERR_NAN);
    CHECK_EQ_INT(a.size, 5); /* unchanged on error */
    CHECK_OK(nextok_candidates_prepare(&a, NEXTOK_NAN_AS_NEG_INF));
    CHECK_EQ_INT(a.size, 3);
    CHECK(a.data[0].id == 0 && a.data[1].id == 2 && a.data[2].id == 4);

    struct nextok_token_data e[4] = {{0, 1.0f, 0}, {1, INFINITY, 0}, {2, 2.0f, 0}, {3, INFINITY, 0}};
    struct nextok_token_data_array b = {e, 4, -1, false};
    CHECK_OK(nextok_candidates_prepare(&b, NEXTOK_NAN_ERROR));
    CHECK_EQ_INT(b.size, 2);
    CHECK(b.data[0].id == 1 && b.data[1].id == 3 && b.data[0].logit == 0.0f);

    struct nextok_token_data f[2] = {{0, -INFINITY, 0}, {1, -INFINITY, 0}};
    struct nextok_token_data_array c = {f, 2, -1, false};
    CHECK_EQ_INT(nextok_candidates_prepare(&c, NEXTOK_NAN_ERROR), NEXTOK_ERR_NO_CANDIDATES);
}

/* ---- a user-written sampler: removes odd ids, counts accepted tokens ---- */

struct odd_ctx {
    int accepted;
};

static const char *odd_name(const struct nextok_sampler *s)
{
    (void)s;
    return "ban-odd";
}

static nextok_status odd_accept(struct nextok_sampler *s, int32_t tok)
{
    (void)tok;
    ((struct odd_ctx *)nextok_sampler_ctx(s))->accepted++;
    return NEXTOK_OK;
}

static nextok_status odd_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                               uint64_t step)
{
    (void)s;
    (void)step;
    size_t j = 0;
    for (size_t i = 0; i < cur->size; i++)
        if (cur->data[i].id % 2 == 0) cur->data[j++] = cur->data[i];
    cur->size = j;
    return NEXTOK_OK;
}

static void odd_free(struct nextok_sampler *s) { free(nextok_sampler_ctx(s)); }

static const struct nextok_sampler_i odd_iface = {
    .name = odd_name, .accept = odd_accept, .apply = odd_apply, .free = odd_free};

TEST(user_sampler_in_chain)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = 6;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    if (!c) return;
    struct nextok_sampler *odd = NULL, *greedy = NULL;
    struct odd_ctx *ctx = calloc(1, sizeof *ctx);
    CHECK_OK(nextok_sampler_init(&odd, &odd_iface, ctx));
    CHECK_OK(nextok_sampler_init_greedy(&greedy, NULL));
    CHECK_OK(nextok_chain_add(c, odd));
    CHECK_OK(nextok_chain_add(c, greedy));
    CHECK_EQ_INT(nextok_chain_n(c), 2);
    CHECK(strcmp(nextok_sampler_name(nextok_chain_get(c, 0)), "ban-odd") == 0);

    const float row[6] = {0.0f, 9.0f, 3.0f, 8.0f, 1.0f, 7.0f}; /* best even id: 2 */
    int32_t tok = -1;
    CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
    CHECK_EQ_INT(tok, 2);
    CHECK_OK(nextok_chain_accept(c, tok));
    CHECK_EQ_INT(ctx->accepted, 1);
    CHECK_EQ_INT(nextok_chain_step(c), 1);
    CHECK_EQ_INT(nextok_chain_accept(c, 6), NEXTOK_ERR_TOKEN_RANGE);
    CHECK(strstr(nextok_chain_errmsg(c), "token") != NULL);
    CHECK_EQ_INT(ctx->accepted, 1); /* failed accept changed nothing */
    CHECK_EQ_INT(nextok_chain_step(c), 1);

    /* cloning fails cleanly: the user sampler has no clone */
    struct nextok_chain *d = NULL;
    CHECK_EQ_INT(nextok_chain_clone(c, &d), NEXTOK_ERR_UNSUPPORTED);
    CHECK(d == NULL);

    /* remove hands ownership back */
    struct nextok_sampler *r = nextok_chain_remove(c, 0);
    CHECK(r == odd);
    CHECK(nextok_chain_remove(c, 5) == NULL);
    CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
    CHECK_EQ_INT(tok, 1);
    nextok_sampler_free(r);
    nextok_chain_free(c);
    nextok_chain_free(NULL);
    nextok_sampler_free(NULL);
}

TEST(chain_without_selector)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    cp.n_vocab = 3;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init(&c, &cp, NULL));
    if (!c) return;
    const float row[3] = {1.0f, 2.0f, 3.0f};
    int32_t tok;
    CHECK_EQ_INT(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok), NEXTOK_ERR_STATE);
    CHECK(strstr(nextok_chain_errmsg(c), "selector") != NULL);
    /* probs without a selector: softmax of the survivors */
    struct nextok_token_data out[3];
    size_t n = 0;
    CHECK_OK(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, 3, &n, NULL));
    CHECK_EQ_INT(n, 3);
    double z = exp(1.0) + exp(2.0) + exp(3.0);
    CHECK(out[0].id == 2 && out[1].id == 1 && out[2].id == 0);
    CHECK_NEAR(out[0].p, exp(3.0) / z, 1e-7);
    CHECK_NEAR(out[2].p, exp(1.0) / z, 1e-7);
    /* too small a buffer: needed size reported */
    CHECK_EQ_INT(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, 2, &n, NULL),
                 NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK_EQ_INT(n, 3);
    nextok_chain_free(c);
}

TEST(chain_init_errors)
{
    struct nextok_chain_params cp = nextok_chain_default_params();
    struct nextok_chain *c = (struct nextok_chain *)&cp; /* must be reset to NULL */
    struct nextok_error err = {0};
    cp.n_vocab = 0;
    CHECK_EQ_INT(nextok_chain_init(&c, &cp, &err), NEXTOK_ERR_VOCAB_SIZE);
    CHECK(c == NULL);
    CHECK(strstr(err.msg, "n_vocab") != NULL);
    cp.n_vocab = -5;
    CHECK_EQ_INT(nextok_chain_init(&c, &cp, &err), NEXTOK_ERR_VOCAB_SIZE);
    cp.n_vocab = 10;
    cp.nan_policy = (enum nextok_nan_policy)9;
    CHECK_EQ_INT(nextok_chain_init(&c, &cp, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "nan_policy") != NULL);
}

TEST(logprobs_raw_and_processed)
{
    struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    p.n_vocab = 5;
    p.seed = 7;
    p.top_k = 2;
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init_sampling(&c, &p, NULL));
    if (!c) return;
    const float row[5] = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f};
    double z = exp(1.0) + 2 * exp(3.0) + exp(2.0) + exp(-1.0);
    struct nextok_logprob top[3];
    size_t n_top = 0;
    float lp = 0;
    int32_t rank = -1;
    CHECK_EQ_INT(nextok_chain_logprobs(c, NEXTOK_LOGPROBS_PROCESSED, NULL, NEXTOK_DTYPE_F32, 0, 0,
                                       NULL, &n_top, &lp, &rank), NEXTOK_ERR_STATE);
    CHECK_OK(nextok_chain_logprobs(c, NEXTOK_LOGPROBS_RAW, row, NEXTOK_DTYPE_F32, 2, 3, top, &n_top,
                                   &lp, &rank));
    CHECK_EQ_INT(n_top, 3);
    CHECK(top[0].id == 1 && top[1].id == 3 && top[2].id == 2); /* ties: lower id first */
    CHECK_NEAR(top[0].logprob, 3.0 - log(z), 1e-6);
    CHECK_NEAR(lp, 2.0 - log(z), 1e-6);
    CHECK_EQ_INT(rank, 3);

    int32_t tok;
    CHECK_OK(nextok_chain_sample(c, row, NEXTOK_DTYPE_F32, &tok));
    CHECK(tok == 1 || tok == 3); /* top-k 2 keeps exactly the two tied 3.0 logits */
    CHECK_OK(nextok_chain_logprobs(c, NEXTOK_LOGPROBS_PROCESSED, NULL, NEXTOK_DTYPE_F32, 3, 3, top,
                                   &n_top, &lp, &rank));
    CHECK_EQ_INT(n_top, 2);
    CHECK_NEAR(lp, log(0.5), 1e-6);
    CHECK_EQ_INT(rank, 2);
    CHECK_OK(nextok_chain_logprobs(c, NEXTOK_LOGPROBS_PROCESSED, NULL, NEXTOK_DTYPE_F32, 0, 0, NULL,
                                   &n_top, &lp, &rank));
    CHECK(lp == -INFINITY);
    CHECK_EQ_INT(rank, 0);
    CHECK_EQ_INT(nextok_chain_logprobs(c, NEXTOK_LOGPROBS_RAW, row, NEXTOK_DTYPE_F32, 9, 0, NULL,
                                       &n_top, &lp, &rank), NEXTOK_ERR_TOKEN_RANGE);
    const float bad[5] = {1.0f, NAN, 0, 0, 0};
    CHECK_EQ_INT(nextok_chain_logprobs(c, NEXTOK_LOGPROBS_RAW, bad, NEXTOK_DTYPE_F32, 0, 0, NULL,
                                       &n_top, &lp, &rank), NEXTOK_ERR_NAN);
    nextok_chain_free(c);
}

TEST(profile_names_and_validation)
{
    enum nextok_profile pr;
    CHECK_OK(nextok_profile_from_name("llama", &pr));
    CHECK_EQ_INT(pr, NEXTOK_PROFILE_LLAMA);
    CHECK_EQ_INT(nextok_profile_from_name("tgi", &pr), NEXTOK_ERR_INVALID_ARG);
    CHECK(strcmp(nextok_profile_name(NEXTOK_PROFILE_HF), "hf") == 0);

    struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    CHECK_EQ_INT(p.top_k, 40);
    CHECK_EQ_INT(p.top_k_ties, NEXTOK_TIES_EXACT);
    p.n_vocab = 100;
    struct nextok_chain *c = NULL;
    struct nextok_error err = {0};
    p.samplers = "top_k;bogus";
    CHECK_EQ_INT(nextok_chain_init_sampling(&c, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "samplers") && strstr(err.msg, "bogus"));
    p.samplers = NULL;
    p.top_p = 1.5f;
    CHECK_EQ_INT(nextok_chain_init_sampling(&c, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "top_p") != NULL);
    CHECK(c == NULL);
    p = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    p.n_vocab = 100;
    p.temperature = -1.0f;
    CHECK_EQ_INT(nextok_chain_init_sampling(&c, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "temperature") != NULL);
    p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    p.n_vocab = 100;
    p.temperature = -1.0f; /* llama.cpp: negative temperature is greedy */
    CHECK_OK(nextok_chain_init_sampling(&c, &p, &err));
    nextok_chain_free(c);
    c = NULL;
    struct nextok_logit_bias b = {100, 1.0f};
    p.logit_bias = &b;
    p.n_logit_bias = 1;
    CHECK_EQ_INT(nextok_chain_init_sampling(&c, &p, &err), NEXTOK_ERR_TOKEN_RANGE);
    CHECK(strstr(err.msg, "logit_bias") != NULL);
}

/* The llama profile's order is temperature last: with top-k 1 the result is
 * the argmax regardless of temperature; the vllm profile puts temperature
 * first, so a min-p cut depends on it. */
TEST(profile_orders_differ)
{
    const float row[4] = {2.0f, 1.0f, 0.0f, -1.0f};
    size_t n = 0;
    struct nextok_token_data out[4];
    struct nextok_sampling_params p = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    p.n_vocab = 4;
    p.seed = 1;
    p.temperature = 4.0f;
    p.min_p = 0.5f; /* after T=4: p1/p0 = e^-0.25 = 0.78 (kept), p2/p0 = e^-0.5 = 0.61 (kept), p3/p0 = 0.47 */
    struct nextok_chain *c = NULL;
    CHECK_OK(nextok_chain_init_sampling(&c, &p, NULL));
    if (c) {
        CHECK_OK(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, 4, &n, NULL));
        CHECK_EQ_INT(n, 3);
        nextok_chain_free(c);
    }
    p = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    p.n_vocab = 4;
    p.seed = 1;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.temperature = 4.0f;
    p.min_p = 0.5f; /* before temperature: p1/p0 = e^-1 < 0.5: only token 0 */
    CHECK_OK(nextok_chain_init_sampling(&c, &p, NULL));
    if (c) {
        CHECK_OK(nextok_chain_probs(c, row, NEXTOK_DTYPE_F32, out, 4, &n, NULL));
        CHECK_EQ_INT(n, 1);
        CHECK_EQ_INT(out[0].id, 0);
        nextok_chain_free(c);
    }
}

int main(void)
{
    RUN(status_table);
    RUN(version);
    RUN(layout);
    RUN(f16_exhaustive);
    RUN(bf16);
    RUN(prepare_rules);
    RUN(user_sampler_in_chain);
    RUN(chain_without_selector);
    RUN(chain_init_errors);
    RUN(logprobs_raw_and_processed);
    RUN(profile_names_and_validation);
    RUN(profile_orders_differ);
    return harness_done();
}
