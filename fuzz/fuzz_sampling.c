/*
 * Fuzz target: the first 24 bytes pick a profile and its parameters (valid or
 * not), the rest are the logits (f32, f16 or bf16). Whatever the input, the
 * library must answer with a status; when it succeeds the distribution must be
 * a distribution and the sampled token one of its survivors.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"

#define HDR 24

static float byte_param(uint8_t b, float lo, float hi) { return lo + (hi - lo) * (float)b / 255.0f; }

static void pick_params(const uint8_t *h, struct nextok_sampling_params *p)
{
    *p = nextok_sampling_default_params((enum nextok_profile)(h[0] % 4)); /* 3: invalid */
    p->profile = (enum nextok_profile)(h[0] % 4);
    p->seed = h[1];
    p->selector = (enum nextok_selector)(h[2] % 3);
    p->temperature = byte_param(h[3], -0.5f, 3.0f);
    p->top_k = (int32_t)(h[4] % 64) - 4;
    p->top_k_ties = (enum nextok_ties)(h[5] & 1);
    p->top_p = byte_param(h[6], -0.1f, 1.2f);
    p->min_p = byte_param(h[7], -0.1f, 1.1f);
    p->typical_p = byte_param(h[8], 0.0f, 1.0f);
    p->top_n_sigma = byte_param(h[9], -1.0f, 4.0f);
    p->xtc_probability = byte_param(h[10], 0.0f, 1.0f);
    p->xtc_threshold = byte_param(h[11], 0.0f, 0.6f);
    p->repeat_penalty = byte_param(h[12], 0.0f, 2.0f);
    p->frequency_penalty = byte_param(h[13], -1.0f, 1.0f);
    p->presence_penalty = byte_param(h[14], -1.0f, 1.0f);
    p->mirostat = h[15] % 4;
    p->dry_multiplier = (h[16] & 1) ? byte_param(h[16], 0.0f, 2.0f) : 0.0f;
    p->epsilon_cutoff = (h[17] & 1) ? byte_param(h[17], 0.0f, 0.2f) : 0.0f;
    p->eta_cutoff = (h[18] & 1) ? byte_param(h[18], 0.0f, 0.2f) : 0.0f;
    p->dynatemp_range = (h[19] & 1) ? byte_param(h[19], 0.0f, 2.0f) : 0.0f;
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
