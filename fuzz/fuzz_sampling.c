/*
 * Fuzz target: the first 24 bytes pick a profile and its parameters (valid or
 * not), the rest are the logits (f32, f16 or bf16). Whatever the input, the
 * library must answer with a status; when it succeeds the distribution must be
 * a distribution and the sampled token one of its survivors.
 *
 * Parameter bytes: 0 gives the field's off value, 255 a value just outside
 * its accepted range (to exercise validation), anything else a value in the
 * range; profile and mirostat bytes give an invalid value 1 time in 8. So
 * most inputs build a chain and sample (fuzz/make_corpus.py writes seeds).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"

#define HDR 24

/* b in 1..254 -> (0, 1); 0 -> off; 255 -> bad. */
static float unit_param(uint8_t b, float off, float bad)
{
    return b == 0 ? off : b == 255 ? bad : (float)b / 255.0f;
}

static void pick_params(const uint8_t *h, struct nextok_sampling_params *p)
{
    const int profile = h[0] % 8 == 7 ? 3 : h[0] % 8 % 3; /* 3: invalid */
    *p = nextok_sampling_default_params((enum nextok_profile)profile);
    p->profile = (enum nextok_profile)profile;
    p->seed = h[1];
    p->selector = (enum nextok_selector)(h[2] % 3);
    p->temperature = h[3] == 255 ? -0.5f : (float)h[3] / 64.0f; /* 0: greedy, 64: 1 */
    p->top_k = (int32_t)(h[4] % 64) - 4;
    p->top_k_ties = (enum nextok_ties)(h[5] & 1);
    p->top_p = unit_param(h[6], 1.0f, 1.12f);
    p->min_p = unit_param(h[7], 0.0f, -0.1f);
    p->typical_p = unit_param(h[8], 1.0f, 1.2f);
    p->top_n_sigma = h[9] < 128 ? -1.0f : (float)(h[9] - 128) / 32.0f;
    p->xtc_probability = unit_param(h[10], 0.0f, 1.5f);
    p->xtc_threshold = (float)h[11] / 255.0f * 0.6f;
    p->repeat_penalty = h[12] == 0 ? 1.0f : h[12] == 255 ? 0.0f : 0.5f + (float)h[12] / 170.0f;
    p->frequency_penalty = (float)(int8_t)h[13] / 128.0f;
    p->presence_penalty = (float)(int8_t)h[14] / 128.0f;
    p->mirostat = h[15] % 8 < 5 ? 0 : h[15] % 8 - 4; /* 1, 2 or (invalid) 3 */
    p->dry_multiplier = (h[16] & 1) ? (float)h[16] / 128.0f : 0.0f;
    p->epsilon_cutoff = (h[17] & 1) ? (float)h[17] / 255.0f * 0.2f : 0.0f;
    p->eta_cutoff = (h[18] & 1) ? (float)h[18] / 255.0f * 0.2f : 0.0f;
    p->dynatemp_range = (h[19] & 1) ? (float)h[19] / 128.0f : 0.0f;
    p->min_keep = h[20] % 4;
    p->nan_policy = (enum nextok_nan_policy)(h[21] & 1);
}

static int run(const uint8_t *data, size_t size)
{
    if (size < HDR) return 0;
    const uint8_t *h = data;
    enum nextok_dtype dt = (enum nextok_dtype)(h[22] % 3);
    size_t es = nextok_dtype_size(dt);
    size_t n = (size - HDR) / es;
    if (n > 4096) n = 4096;
    void *row = malloc(n ? n * es : 1);
    if (!row) return 0;
    memcpy(row, data + HDR, n * es);

    struct nextok_sampling_params p;
    pick_params(h, &p);
    p.n_vocab = (int32_t)n;
    int32_t hist[3] = {0, (int32_t)(h[23] % (n ? n : 1)), 1};
    struct nextok_chain *c = NULL;
    struct nextok_error err;
    if (nextok_chain_init_sampling(&c, &p, &err) != NEXTOK_OK) {
        if (c || err.msg[0] == '\0') abort();
        free(row);
        return 0;
    }
    fuzz_reached("init");
    (void)nextok_chain_set_prompt(c, hist, n >= 2 ? 3 : 0);
    struct nextok_token_data *out = malloc(n * sizeof *out);
    size_t m = 0;
    int32_t tok = -1, tok2 = -1;
    nextok_status rc = nextok_chain_probs(c, row, dt, out, n, &m, &tok);
    if (rc == NEXTOK_OK) {
        double sum = 0.0;
        int found = 0;
        for (size_t i = 0; i < m; i++) {
            if (!(out[i].p >= 0.0f && out[i].p <= 1.0f)) abort();
            sum += out[i].p;
            found |= out[i].id == tok;
        }
        if (m == 0 || !found || fabs(sum - 1.0) > 1e-3) abort();
        if (nextok_chain_sample(c, row, dt, &tok2) != NEXTOK_OK || tok2 != tok) abort();
        fuzz_reached("sampled");
        if (nextok_chain_last_fused(c)) fuzz_reached("fused");
        (void)nextok_chain_accept(c, tok);
    } else if (nextok_chain_errmsg(c)[0] == '\0') {
        abort(); /* every failure carries a message */
    }
    free(out);
    free(row);
    nextok_chain_free(c);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return run(data, size); }
