/*
 * nextok_llama.h - a llama.cpp sampler (struct llama_sampler) that runs a
 * nextok chain on llama.cpp's candidate array.
 *
 * Compile nextok_llama.c with your own llama.h on the include path and link
 * it with libllama and libnextok (adapters/llama.cpp/README.md). It knows one
 * generation of llama.cpp's sampler interface: the one with the
 * experimental backend_* members and copy_state (twelve function pointers,
 * llama.cpp as bundled by node-llama-cpp 3.21.1); against any other llama.h
 * nextok_llama.c stops compiling with a message that says so.
 *
 *     struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
 *     sp.n_vocab = llama_vocab_n_tokens(vocab);
 *     sp.seed = 42;
 *     struct nextok_error err;
 *     struct llama_sampler *ns = nextok_llama_sampler_init_sampling(&sp, NULL, &err);
 *     if (!ns) { fprintf(stderr, "nextok: %s\n", err.msg); exit(1); }
 *     struct llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
 *     llama_sampler_chain_add(chain, ns);   // the chain owns it now
 *     ...
 *     llama_token tok = nextok_llama_sampler_sample(chain, ctx, -1);  // apply + accept
 *     if (nextok_llama_sampler_status(ns) != NEXTOK_OK)
 *         fprintf(stderr, "nextok: %s\n", nextok_llama_sampler_errmsg(ns));
 *
 * Modes
 *   NEXTOK_LLAMA_TERMINAL (the default): the sampler that picks the token, in
 *     place of llama.cpp's dist / greedy / mirostat at the end of a chain.
 *     The nextok chain must end with one of nextok's selectors (greedy, dist,
 *     gumbel, mirostat, mirostat-v2). apply leaves in the array the
 *     distribution the token was drawn from (the survivors with p) and sets
 *     `selected` to the token's index in it.
 *   NEXTOK_LLAMA_FILTER: a filter like llama.cpp's top-k: apply leaves the
 *     survivors with p (the softmax of their processed logits, as
 *     nextok_chain_probs reports) and `selected` = -1; a later llama.cpp
 *     sampler picks the token. The nextok chain must not contain one of
 *     nextok's selectors (init refuses it); nextok_llama_sampler_init_sampling
 *     leaves the profile's selector out.
 *
 * What apply accepts: any llama_token_data_array whose ids are unique and in
 * [0, n_vocab) of the nextok chain: the whole vocabulary as llama.cpp builds
 * it from a logits row, or what earlier llama.cpp samplers left (a sparse
 * subset after top-k, in any order; -INFINITY logits from a grammar or a
 * logit bias count as removed). A candidate missing from the array is a
 * token the chain never sees. The incoming `p` and `selected` are ignored.
 * llama.cpp's `sorted` (logits descending, ties in any order) is not
 * nextok's (ties by id ascending): it is checked, and dropped when ties are
 * out of id order, so top-k and top-p cut ties as nextok documents.
 * The output order is unspecified; `sorted` is set only when the array is in
 * nextok's sorted order.
 *
 * Speed: when the array is llama.cpp's full row (size == n_vocab and
 * data[i].id == i, as llama_sampler_sample and common_sampler build it) the
 * adapter copies the logits out and runs nextok's fused path
 * (nextok_chain_probs); otherwise, and after a call that left more than
 * n_vocab / 32 survivors (where the plain chain is cheaper than sorting
 * them), it runs nextok_chain_apply on the array. Every path gives the same
 * survivors, p and token. Reading llama.cpp's n_vocab-entry array costs
 * about what llama.cpp's own default chain costs; nextok_llama_sampler_sample
 * skips the array where the nextok sampler is the whole chain.
 *
 * Errors. A llama.cpp sampler cannot return one, so a failed apply or
 * accept is recorded on the sampler instead: nextok_llama_sampler_status()
 * and nextok_llama_sampler_errmsg() tell the status and message of the most
 * recent failure (sticky until nextok_llama_sampler_clear_error() or a
 * reset; a later success does not clear it, so a check after
 * llama_sampler_sample, which calls accept after apply, still sees an apply
 * failure). A failed apply (NaN logits under NEXTOK_NAN_ERROR, an id
 * outside [0, n_vocab), no candidate left, out of memory) leaves the
 * candidates exactly as they came in, changes no state, and sets `selected`
 * by the on_error rule (terminal mode; filter mode sets -1):
 *   NEXTOK_LLAMA_ON_ERROR_GREEDY (default): the index of the highest
 *     logit that is not NaN (the first of equals; 0 if every logit is NaN),
 *     so that llama_sampler_sample and common_sampler_sample, which assert
 *     on or index with `selected`, go on; -1 for an empty array.
 *   NEXTOK_LLAMA_ON_ERROR_NONE: -1 (llama_sampler_sample then aborts the
 *     process in its GGML_ASSERT; for callers that check `selected`).
 * A failed accept (a token outside [0, n_vocab), out of memory) changes no
 * state: the step does not advance.
 *
 * accept, reset, clone (what llama-server does with slots and speculative
 * decoding):
 *   accept(token)  nextok_chain_accept: history (penalties, DRY, n-grams,
 *                  mirostat) and step += 1; the step keys the random draws.
 *                  llama.cpp passes every token it accepts, prompt tokens
 *                  included where the host feeds them (llama-server does):
 *                  to the nextok chain they are all output tokens. To give
 *                  it a prompt, call nextok_chain_set_prompt on
 *                  nextok_llama_sampler_chain(smpl).
 *   reset          nextok_chain_reset (history gone, step 0) and the error
 *                  cleared: the sampler then draws what a new one with the
 *                  same seed draws.
 *   clone          nextok_chain_clone (same samplers, state, seed and step):
 *                  the clone draws what the original draws. A clone starts
 *                  with no error recorded. NULL when out of memory (recorded
 *                  on the original).
 *   copy_state     llama_sampler_copy(src, dst): dst's chain replaced by a
 *                  clone of src's (on failure dst is unchanged and the
 *                  error is recorded on dst).
 *   free           frees the nextok chain (llama_sampler_free, or the
 *                  llama.cpp chain that owns the sampler).
 *
 * Thread safety: as llama.cpp's samplers: one sampler on one thread at a
 * time; distinct samplers (clones included) on distinct threads.
 */
#ifndef NEXTOK_LLAMA_H
#define NEXTOK_LLAMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llama.h"
#include "nextok.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NEXTOK_LLAMA_VERSION_MAJOR 0
#define NEXTOK_LLAMA_VERSION_MINOR 1

enum nextok_llama_mode {
    NEXTOK_LLAMA_TERMINAL = 0, /* select the token (sets `selected`)          */
    NEXTOK_LLAMA_FILTER = 1,   /* leave the survivors; `selected` = -1        */
};

/* What `selected` becomes when apply fails in terminal mode. */
enum nextok_llama_on_error {
    NEXTOK_LLAMA_ON_ERROR_GREEDY = 0, /* highest non-NaN logit (-1 if empty)  */
    NEXTOK_LLAMA_ON_ERROR_NONE = 1,   /* -1                                   */
};

/* Fields are only ever appended; start from the defaults. */
struct nextok_llama_sampler_params {
    enum nextok_llama_mode mode;
    enum nextok_llama_on_error on_error;
};

/* Terminal mode, on_error GREEDY. */
struct nextok_llama_sampler_params nextok_llama_sampler_default_params(void);

/*
 * A llama.cpp sampler that runs `chain`. On success it owns the chain (freed
 * with the sampler) and returns the sampler (llama_sampler_init), to be
 * added to a llama.cpp chain (which then owns it) or used alone and freed
 * with llama_sampler_free. params NULL: the defaults.
 * On failure it returns NULL, the caller still owns the chain, and err (may
 * be NULL) says why: NEXTOK_ERR_INVALID_ARG for a NULL chain, an empty one,
 * an unknown mode or on_error, a terminal chain whose last sampler is not a
 * selector, or a filter chain with a selector; NEXTOK_ERR_NOMEM.
 */
struct llama_sampler *nextok_llama_sampler_init(struct nextok_chain *chain,
                                                const struct nextok_llama_sampler_params *params,
                                                struct nextok_error *err);

/*
 * The same over nextok_chain_init_sampling(sp) (any profile; the llama
 * profile reproduces llama.cpp's common sampler chain). sp->n_vocab must be
 * the model's llama_vocab_n_tokens(). In filter mode the profile's selector
 * (dist, gumbel or greedy) is left out, and mirostat (a selector with
 * state) is refused. Note that sp->seed = LLAMA_DEFAULT_SEED is the fixed
 * seed 0xFFFFFFFF to nextok: pass NEXTOK_DEFAULT_SEED for a random one.
 * Errors: those of nextok_chain_init_sampling (err names the field), and of
 * nextok_llama_sampler_init.
 */
struct llama_sampler *
nextok_llama_sampler_init_sampling(const struct nextok_sampling_params *sp,
                                   const struct nextok_llama_sampler_params *params,
                                   struct nextok_error *err);

/*
 * llama_sampler_sample(smpl, ctx, idx) without the candidate array: when
 * smpl is a terminal nextok sampler, or a llama.cpp chain holding only one,
 * and llama.cpp's backend sampling left nothing for output idx, it runs
 * nextok_chain_sample on llama_get_logits_ith(ctx, idx) itself (no copy of
 * the row, nextok's fused path) and then llama_sampler_accept(smpl, token).
 * The token is the one llama_sampler_sample returns (same step, same
 * draw); only the work of building and reading the n_vocab-entry array is
 * saved (bench/llama_cpp/adapter_bench.c). Any other smpl (llama.cpp
 * samplers before the nextok one, filter mode) or a context whose
 * llama_vocab_n_tokens() is not the chain's n_vocab: llama_sampler_sample.
 * A failure is recorded as apply's (nextok_llama_sampler_status); the
 * token is then the on_error rule's: the highest non-NaN logit (accepted as
 * llama_sampler_sample accepts the fallback), or with
 * NEXTOK_LLAMA_ON_ERROR_NONE LLAMA_TOKEN_NULL, nothing accepted (where
 * llama_sampler_sample would abort). The llama.cpp chain's timing counters
 * (llama_perf_sampler) do not see the sampling time.
 */
llama_token nextok_llama_sampler_sample(struct llama_sampler *smpl, struct llama_context *ctx,
                                        int32_t idx);

/* smpl itself if it is a nextok sampler, else the first nextok sampler among
 * the samplers of the llama.cpp chain smpl (not searched recursively), else
 * NULL. For a sampler inside a chain, and a chain's clone. */
struct llama_sampler *nextok_llama_sampler_find(struct llama_sampler *smpl);

/* The nextok chain the sampler runs (owned by the sampler), or NULL if smpl
 * is not a nextok sampler. Use it for what llama.cpp has no call for:
 * nextok_chain_set_prompt, nextok_chain_set_token_bitmask,
 * nextok_chain_logprobs, nextok_chain_set_step. Adding or removing
 * samplers through it is not supported. */
struct nextok_chain *nextok_llama_sampler_chain(struct llama_sampler *smpl);

/* Status of the most recent failed apply or accept since init, reset or
 * clear_error; NEXTOK_OK if none failed. NEXTOK_ERR_INVALID_ARG if smpl is
 * not a nextok sampler. */
nextok_status nextok_llama_sampler_status(const struct llama_sampler *smpl);
/* Its message ("apply: logits: NaN in input row"), "" if none. Owned by the
 * sampler; valid until its next call. Never NULL. */
const char *nextok_llama_sampler_errmsg(const struct llama_sampler *smpl);
/* Failed applies and accepts since init or reset (0 for a non-nextok smpl). */
uint64_t nextok_llama_sampler_n_errors(const struct llama_sampler *smpl);
/* Forget the recorded failure (status NEXTOK_OK, message ""; the count stays). */
void nextok_llama_sampler_clear_error(struct llama_sampler *smpl);

#ifdef __cplusplus
}
#endif

#endif /* NEXTOK_LLAMA_H */
