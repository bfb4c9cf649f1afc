/*
 * llama_chain.c - nextok at the end of a llama.cpp sampler chain.
 *
 * llama.cpp's own top-k first, then the nextok adapter (the llama profile:
 * top-k 40, top-p 0.95, min-p 0.05, temperature 0.8, a categorical draw,
 * plus a repetition penalty) selecting the token. No model file: the logits
 * are made up, and the candidate array is built from them the way
 * llama_sampler_sample builds it from a context's logits. With a model,
 * replace the loop body by `llama_token tok = llama_sampler_sample(chain,
 * ctx, -1);`.
 *
 * Build (tests/llama/run.sh does this): compile with adapters/llama.cpp/
 * nextok_llama.c against your llama.h, link libllama, the ggml libraries
 * and libnextok. Run: llama_chain [seed] [steps].
 */
#include "nextok_llama.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N_VOCAB 32000

/* Stand-in for a model: a fixed noisy background with a few favoured
 * tokens whose scores drift with the step. */
static void fake_logits(float *logits, int step)
{
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < N_VOCAB; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        logits[i] = (float)((double)(s >> 11) * 0x1p-53 * 6.0 - 3.0); /* uniform in [-3, 3) */
    }
    static const int favoured[] = {464, 3797, 3290, 318, 257, 1332, 286, 262, 12557, 2068};
    for (int k = 0; k < 10; k++) logits[favoured[k]] += 8.0f + 1.5f * (float)sin(0.7 * step + k);
}

int main(int argc, char **argv)
{
    const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 42;
    const int steps = argc > 2 ? atoi(argv[2]) : 12;

    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    sp.n_vocab = N_VOCAB; /* llama_vocab_n_tokens(vocab) with a model */
    sp.seed = seed;
    sp.repeat_penalty = 1.3f;
    struct nextok_error err;
    struct llama_sampler *ns = nextok_llama_sampler_init_sampling(&sp, NULL, &err);
    if (!ns) {
        fprintf(stderr, "nextok: %s\n", err.msg);
        return 1;
    }
    struct llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, llama_sampler_init_top_k(100)); /* llama.cpp's own stage */
    llama_sampler_chain_add(chain, ns);                            /* the chain owns it now */

    printf("chain:");
    for (int i = 0; i < llama_sampler_chain_n(chain); i++)
        printf(" %s%s", i ? "-> " : "", llama_sampler_name(llama_sampler_chain_get(chain, i)));
    printf(" (seed %" PRIu64 ")\n", seed);

    float *logits = malloc(N_VOCAB * sizeof *logits);
    llama_token_data *cand = malloc(N_VOCAB * sizeof *cand);
    if (!logits || !cand) return 1;
    int rc = 0;
    for (int step = 0; step < steps; step++) {
        fake_logits(logits, step);
        for (llama_token i = 0; i < N_VOCAB; i++) cand[i] = (llama_token_data){i, logits[i], 0.0f};
        llama_token_data_array cur = {cand, N_VOCAB, -1, false};
        llama_sampler_apply(chain, &cur);
        if (nextok_llama_sampler_status(ns) != NEXTOK_OK) {
            fprintf(stderr, "nextok: %s\n", nextok_llama_sampler_errmsg(ns));
            rc = 1;
            break;
        }
        const llama_token tok = cur.data[cur.selected].id;
        printf("step %2d: token %5d  p %.3f  (%zu candidates left)\n", step, (int)tok,
               (double)cur.data[cur.selected].p, cur.size);
        llama_sampler_accept(chain, tok); /* history for the penalty; step + 1 */
    }
    llama_sampler_free(chain); /* frees ns and the nextok chain too */
    free(logits);
    free(cand);
    return rc;
}
