/*
 * nextok.h - logits in, next token (and next piece of text) out.
 *
 * This header is the manual. Every public symbol of libnextok is declared here;
 * a symbol that is not here is not API. The exact meaning of every sampler is
 * written in docs/semantics.md; this header states the contracts: inputs,
 * outputs, ownership, error codes and thread safety.
 *
 * Conventions
 *   - Every fallible function returns a nextok_status (0 = OK, negative = error).
 *     Results come back through out-parameters; a count never doubles as an error.
 *   - Objects are opaque handles with nextok_<x>_init / nextok_<x>_free pairs.
 *     nextok_<x>_free(NULL) is a no-op.
 *   - A failed call has no side effects: sampler state, history and step counters
 *     are left exactly as they were, caller buffers named as outputs may hold
 *     partial data only where the function says so.
 *   - Detail text for a failure is kept on the handle (nextok_chain_errmsg(), ...).
 *     Constructors, which have no handle yet, fill an optional caller-owned
 *     struct nextok_error.
 *   - The library never prints and never exits; diagnostics go to a per-object
 *     log callback (none by default).
 *   - Thread safety: distinct handles may be used from distinct threads at once.
 *     One handle must not be used from two threads at the same time. Read-only
 *     objects (a loaded vocabulary) may be shared once built.
 */
#ifndef NEXTOK_H
#define NEXTOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(NEXTOK_SHARED)
#  ifdef NEXTOK_BUILD
#    define NEXTOK_API __declspec(dllexport)
#  else
#    define NEXTOK_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define NEXTOK_API __attribute__((visibility("default")))
#else
#  define NEXTOK_API
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

#define NEXTOK_VERSION_MAJOR 0
#define NEXTOK_VERSION_MINOR 1
#define NEXTOK_VERSION_PATCH 0
#define NEXTOK_VERSION_NUMBER \
    (NEXTOK_VERSION_MAJOR * 10000 + NEXTOK_VERSION_MINOR * 100 + NEXTOK_VERSION_PATCH)

/* "MAJOR.MINOR.PATCH" of the linked library. */
NEXTOK_API const char *nextok_version(void);
/* NEXTOK_VERSION_NUMBER of the linked library. */
NEXTOK_API int nextok_version_number(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/* X(NAME, value, generic text). Values are frozen: append only, never reuse. */
#define NEXTOK_STATUS_LIST(X)                                                        \
    X(OK,               0, "success")                                                \
    X(ERR_INVALID_ARG, -1, "invalid argument")                                       \
    X(ERR_NOMEM,       -2, "out of memory")                                          \
    X(ERR_NAN,         -3, "NaN logit in input")                                     \
    X(ERR_NO_CANDIDATES, -4, "no candidate token left (everything masked)")          \
    X(ERR_TOKEN_RANGE, -5, "token id out of range")                                  \
    X(ERR_BUFFER_TOO_SMALL, -6, "output buffer too small")                           \
    X(ERR_STATE,       -7, "call not valid in the object's current state")           \
    X(ERR_IO,          -8, "I/O error")                                              \
    X(ERR_FORMAT,      -9, "malformed or truncated input file")                      \
    X(ERR_UNSUPPORTED, -10, "unsupported feature or format")                         \
    X(ERR_INTERNAL,    -11, "internal error")                                        \
    X(ERR_VOCAB_SIZE,  -12, "vocabulary size out of range")

typedef enum nextok_status {
#define NEXTOK_X_ENUM(name, value, text) NEXTOK_##name = value,
    NEXTOK_STATUS_LIST(NEXTOK_X_ENUM)
#undef NEXTOK_X_ENUM
} nextok_status;

/* Generic text for a status ("invalid argument"). Never NULL. */
NEXTOK_API const char *nextok_strerror(nextok_status status);
/* The enum name without prefix ("ERR_INVALID_ARG"). Never NULL. */
NEXTOK_API const char *nextok_status_name(nextok_status status);

#define NEXTOK_ERRMSG_MAX 256

/* Caller-owned error report filled by constructors and loaders (may be NULL). */
struct nextok_error {
    nextok_status status;
    char msg[NEXTOK_ERRMSG_MAX]; /* "top_p: must be in (0, 1], got 1.5" */
};

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */
/* ------------------------------------------------------------------------ */

enum nextok_log_level {
    NEXTOK_LOG_DEBUG = 0,
    NEXTOK_LOG_INFO  = 1,
    NEXTOK_LOG_WARN  = 2,
    NEXTOK_LOG_ERROR = 3,
};

/* Called with a complete, NUL-terminated line (no trailing newline). */
typedef void (*nextok_log_fn)(enum nextok_log_level level, const char *msg, void *user);

/* ------------------------------------------------------------------------ */
/* Tokens, candidates, logits                                                */
/* ------------------------------------------------------------------------ */

/* Largest vocabulary accepted: ids are int32_t. */
#define NEXTOK_VOCAB_MAX ((size_t)INT32_MAX)

/* One candidate. Same layout as llama.cpp's llama_token_data. */
struct nextok_token_data {
    int32_t id;    /* token id, 0 <= id < n_vocab            */
    float   logit; /* current (processed) logit              */
    float   p;     /* probability, valid where a stage says  */
};

/*
 * A set of candidates. Same layout as llama.cpp's llama_token_data_array.
 * Ids in one array are unique. `sorted` means data[] is ordered by logit
 * descending, ties by id ascending. `selected` is the index into data[] of the
 * chosen token once a selector has run, -1 before.
 */
struct nextok_token_data_array {
    struct nextok_token_data *data;
    size_t  size;
    int64_t selected;
    bool    sorted;
};

/* Element type of a logits row. */
enum nextok_dtype {
    NEXTOK_DTYPE_F32  = 0,
    NEXTOK_DTYPE_F16  = 1, /* IEEE binary16 */
    NEXTOK_DTYPE_BF16 = 2, /* bfloat16      */
};

/* Size in bytes of one element of dtype, 0 for an unknown dtype. */
NEXTOK_API size_t nextok_dtype_size(enum nextok_dtype dtype);

/* Scalar conversions (exact; f32 -> half types round to nearest even). */
NEXTOK_API float    nextok_f16_to_f32(uint16_t h);
NEXTOK_API float    nextok_bf16_to_f32(uint16_t h);
NEXTOK_API uint16_t nextok_f32_to_f16(float f);
NEXTOK_API uint16_t nextok_f32_to_bf16(float f);

/* What a NaN logit in an input row means. */
enum nextok_nan_policy {
    NEXTOK_NAN_ERROR   = 0, /* NEXTOK_ERR_NAN (the default) */
    NEXTOK_NAN_AS_NEG_INF = 1, /* the token is masked        */
};

/* ------------------------------------------------------------------------ */
/* Randomness: Philox4x32-10, counter based                                  */
/* ------------------------------------------------------------------------ */

/*
 * Every random draw in nextok is a pure function of (seed, step, purpose, index):
 *   key     = { seed & 0xffffffff, seed >> 32 }
 *   counter = { index, purpose, step & 0xffffffff, step >> 32 }
 * The token at step n therefore depends only on the seed, n, the logits and the
 * sampler state, never on how many numbers earlier calls consumed.
 */

/* Purposes used by the built-in samplers. User samplers use values >= 0x100. */
enum nextok_rng_purpose {
    NEXTOK_RNG_DIST     = 1, /* categorical draw (also mirostat)   */
    NEXTOK_RNG_GUMBEL   = 2, /* per-token Gumbel noise, index = id */
    NEXTOK_RNG_XTC      = 3, /* XTC's coin                         */
    NEXTOK_RNG_USER     = 0x100,
};

/* Sentinel: pick a seed from the OS at construction (then the run is not reproducible). */
#define NEXTOK_DEFAULT_SEED UINT64_C(0xFFFFFFFFFFFFFFFF)

/* The raw block function: out = Philox4x32-10(counter, key). */
NEXTOK_API void nextok_philox4x32_10(const uint32_t counter[4], const uint32_t key[2],
                                     uint32_t out[4]);

/* Uniform double in [0, 1) with 53 random bits:
 * ((out[0] << 21) ^ (out[1] >> 11)) * 2^-53, out = block at (seed, step, purpose, index). */
NEXTOK_API double nextok_rng_uniform(uint64_t seed, uint64_t step, uint32_t purpose,
                                     uint32_t index);

/* Uniform double in the open interval (0, 1): (k + 0.5) * 2^-53 for the same k. */
NEXTOK_API double nextok_rng_uniform_open(uint64_t seed, uint64_t step, uint32_t purpose,
                                          uint32_t index);

/* ------------------------------------------------------------------------ */
/* Samplers                                                                  */
/* ------------------------------------------------------------------------ */

struct nextok_sampler;

/*
 * The sampler interface. Built-in samplers are one static table each; users
 * write their own by filling one and calling nextok_sampler_init().
 *
 * apply() receives only finite logits (the chain and nextok_sampler_apply()
 * guarantee it) and may reorder, rescale or shrink the array. A stage that
 * masks a token removes it (shrinks size) rather than writing -inf. A selector
 * sets p on the distribution it samples from, may shrink to its support, and
 * sets `selected`. `step` keys the random draws (see Randomness).
 * apply() must not change the sampler's persistent state: state changes only
 * in accept(), set_prompt() and reset().
 *
 * Optional slots may be NULL: accept, reset, set_prompt, clone (then cloning
 * fails with NEXTOK_ERR_UNSUPPORTED), free.
 */
struct nextok_sampler_i {
    const char   *(*name)(const struct nextok_sampler *s);
    nextok_status (*accept)(struct nextok_sampler *s, int32_t token);
    nextok_status (*apply)(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                           uint64_t step);
    void          (*reset)(struct nextok_sampler *s);
    nextok_status (*clone)(const struct nextok_sampler *s, struct nextok_sampler **out);
    void          (*free)(struct nextok_sampler *s); /* frees ctx, not the sampler */
    nextok_status (*set_prompt)(struct nextok_sampler *s, const int32_t *ids, size_t n);
};

/* Wrap a user implementation. ctx is owned by the sampler from now on (iface->free). */
NEXTOK_API nextok_status nextok_sampler_init(struct nextok_sampler **out,
                                             const struct nextok_sampler_i *iface,
                                             void *ctx);
NEXTOK_API void *nextok_sampler_ctx(const struct nextok_sampler *s);
/* For implementations: record a failure message on the sampler; returns status. */
NEXTOK_API nextok_status nextok_sampler_set_error(struct nextok_sampler *s,
                                                  nextok_status status,
                                                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
NEXTOK_API const char *nextok_sampler_errmsg(const struct nextok_sampler *s);

NEXTOK_API const char   *nextok_sampler_name(const struct nextok_sampler *s);
/* Feed one accepted output token. */
NEXTOK_API nextok_status nextok_sampler_accept(struct nextok_sampler *s, int32_t token);
/* Give the prompt tokens (replaces any earlier prompt; output history is kept). */
NEXTOK_API nextok_status nextok_sampler_set_prompt(struct nextok_sampler *s,
                                                   const int32_t *ids, size_t n);
/* Run the stage on cur. Rejects NaN (NEXTOK_ERR_NAN); ±inf handled as in
 * docs/semantics.md (nextok_candidates_prepare with NEXTOK_NAN_ERROR). */
NEXTOK_API nextok_status nextok_sampler_apply(struct nextok_sampler *s,
                                              struct nextok_token_data_array *cur,
                                              uint64_t step);
/* Forget accepted tokens, prompt and adaptive state (mirostat mu). */
NEXTOK_API void          nextok_sampler_reset(struct nextok_sampler *s);
NEXTOK_API nextok_status nextok_sampler_clone(const struct nextok_sampler *s,
                                              struct nextok_sampler **out);
NEXTOK_API void          nextok_sampler_free(struct nextok_sampler *s);

/*
 * Normalise a candidate array in place before stages run: NaN -> error (or
 * removal under NEXTOK_NAN_AS_NEG_INF), -inf candidates removed; if any +inf
 * is present only the +inf candidates are kept, with logit 0 each (equal
 * shares). Returns NEXTOK_ERR_NO_CANDIDATES when nothing is left. On error
 * the array is unchanged. Keeps the relative order of survivors.
 */
NEXTOK_API nextok_status nextok_candidates_prepare(struct nextok_token_data_array *cur,
                                                   enum nextok_nan_policy nan_policy);

/* --- top-k / top-p tie handling -------------------------------------------- */

enum nextok_ties {
    NEXTOK_TIES_KEEP  = 0, /* keep every token tied with the last kept logit (vLLM, HF) */
    NEXTOK_TIES_EXACT = 1, /* exactly k / the prefix; ties broken by lower id (llama.cpp) */
};

/* --- penalties ---------------------------------------------------------------- */

/* Which tokens the repetition / frequency / presence penalties see. */
enum nextok_penalty_scope {
    /* vLLM / OpenAI: repetition over prompt ∪ output (presence only, no counts),
     * frequency and presence over output tokens only. */
    NEXTOK_SCOPE_PROMPT_OUTPUT = 0,
    /* llama.cpp: the last `last_n` tokens of prompt followed by output; all three
     * penalties use counts inside that window. */
    NEXTOK_SCOPE_WINDOW = 1,
    /* HF transformers: the whole history (prompt then output), all three. */
    NEXTOK_SCOPE_HISTORY = 2,
};

struct nextok_penalty_params {
    int32_t n_vocab;
    enum nextok_penalty_scope scope;
    int32_t last_n;        /* window length for NEXTOK_SCOPE_WINDOW; 0 disables; >0 */
    float   repeat;        /* repetition penalty, > 0; 1 = off                */
    float   frequency;     /* subtract frequency * count; 0 = off              */
    float   presence;      /* subtract presence if count > 0; 0 = off          */
};
NEXTOK_API struct nextok_penalty_params nextok_penalty_default_params(int32_t n_vocab);

/* --- DRY (llama.cpp's "Don't Repeat Yourself") -------------------------------- */

struct nextok_dry_params {
    int32_t n_vocab;
    float   multiplier;     /* 0 = off                                        */
    float   base;           /* > 1 (llama.cpp 1.75)                           */
    int32_t allowed_length; /* >= 1 (llama.cpp 2)                             */
    int32_t last_n;         /* tokens scanned; -1 = whole history, 0 = off    */
    /* Sequence breakers as token-id sequences, concatenated: breaker i is
     * breaker_ids[breaker_off[i] .. breaker_off[i+1]); n_breakers + 1 offsets. */
    const int32_t *breaker_ids;
    const size_t  *breaker_off;
    size_t         n_breakers;
};
NEXTOK_API struct nextok_dry_params nextok_dry_default_params(int32_t n_vocab);

struct nextok_logit_bias {
    int32_t token;
    float   bias;   /* added to the logit; -INFINITY bans the token */
};

/* --- constructors. Each validates its parameters and on failure returns the
 * status, leaves *out NULL and names the parameter in err->msg. -------------- */

NEXTOK_API nextok_status nextok_sampler_init_logit_bias(struct nextok_sampler **out,
        int32_t n_vocab, const struct nextok_logit_bias *bias, size_t n,
        struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_allowed(struct nextok_sampler **out,
        int32_t n_vocab, const int32_t *ids, size_t n, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_banned(struct nextok_sampler **out,
        int32_t n_vocab, const int32_t *ids, size_t n, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_penalties(struct nextok_sampler **out,
        const struct nextok_penalty_params *params, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_dry(struct nextok_sampler **out,
        const struct nextok_dry_params *params, struct nextok_error *err);
/* HF no_repeat_ngram_size: ban tokens that would complete an n-gram already
 * present in prompt + output. n <= 0 disables. */
NEXTOK_API nextok_status nextok_sampler_init_no_repeat_ngram(struct nextok_sampler **out,
        int32_t n_vocab, int32_t n, struct nextok_error *err);
/* Remove the end-of-generation ids while fewer than min_tokens outputs were accepted. */
NEXTOK_API nextok_status nextok_sampler_init_min_tokens(struct nextok_sampler **out,
        int32_t n_vocab, int32_t min_tokens, const int32_t *eog_ids, size_t n_eog,
        struct nextok_error *err);

/* Temperature: logits / t; t <= 0 keeps only the argmax (greedy). */
NEXTOK_API nextok_status nextok_sampler_init_temp(struct nextok_sampler **out, float t,
        struct nextok_error *err);
/* Dynamic temperature (llama.cpp temp_ext): range <= 0 is plain temperature. */
NEXTOK_API nextok_status nextok_sampler_init_temp_ext(struct nextok_sampler **out, float t,
        float range, float exponent, struct nextok_error *err);

NEXTOK_API nextok_status nextok_sampler_init_top_k(struct nextok_sampler **out, int32_t k,
        enum nextok_ties ties, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_top_p(struct nextok_sampler **out, float p,
        enum nextok_ties ties, size_t min_keep, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_min_p(struct nextok_sampler **out, float p,
        size_t min_keep, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_typical(struct nextok_sampler **out, float p,
        size_t min_keep, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_top_n_sigma(struct nextok_sampler **out, float n,
        struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_xtc(struct nextok_sampler **out, float probability,
        float threshold, size_t min_keep, uint64_t seed, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_epsilon(struct nextok_sampler **out, float epsilon,
        size_t min_keep, struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_eta(struct nextok_sampler **out, float eta,
        size_t min_keep, struct nextok_error *err);

/* Selectors. */
NEXTOK_API nextok_status nextok_sampler_init_greedy(struct nextok_sampler **out,
        struct nextok_error *err);
/* Categorical: inverse CDF over candidates in id order with one uniform. */
NEXTOK_API nextok_status nextok_sampler_init_dist(struct nextok_sampler **out, uint64_t seed,
        struct nextok_error *err);
/* Gumbel-max: argmax(logit + Gumbel noise keyed by token id). Same distribution. */
NEXTOK_API nextok_status nextok_sampler_init_gumbel(struct nextok_sampler **out, uint64_t seed,
        struct nextok_error *err);
/* Mirostat v1 (Basu et al. 2021): m tokens estimate Zipf's s (llama.cpp uses 100). */
NEXTOK_API nextok_status nextok_sampler_init_mirostat(struct nextok_sampler **out,
        int32_t n_vocab, uint64_t seed, float tau, float eta, int32_t m,
        struct nextok_error *err);
NEXTOK_API nextok_status nextok_sampler_init_mirostat_v2(struct nextok_sampler **out,
        uint64_t seed, float tau, float eta, struct nextok_error *err);
/* Mirostat's current mu (for inspection/tests); NaN for other samplers. */
NEXTOK_API float nextok_sampler_mirostat_mu(const struct nextok_sampler *s);

/* ------------------------------------------------------------------------ */
/* Chains                                                                    */
/* ------------------------------------------------------------------------ */

struct nextok_chain;

struct nextok_chain_params {
    int32_t n_vocab;                    /* > 0; rows passed in have this length */
    enum nextok_nan_policy nan_policy;  /* NEXTOK_NAN_ERROR by default          */
    bool    no_fused;                   /* force the plain chain (for tests)    */
    nextok_log_fn log_fn;               /* NULL: no logging                     */
    void   *log_user;
};
NEXTOK_API struct nextok_chain_params nextok_chain_default_params(void);

NEXTOK_API nextok_status nextok_chain_init(struct nextok_chain **out,
        const struct nextok_chain_params *params, struct nextok_error *err);
NEXTOK_API void nextok_chain_free(struct nextok_chain *c);
/* Message of the last failed call on c ("" if none). Valid until the next call. */
NEXTOK_API const char *nextok_chain_errmsg(const struct nextok_chain *c);

/* Append s; the chain owns it on success (on failure the caller still does). */
NEXTOK_API nextok_status nextok_chain_add(struct nextok_chain *c, struct nextok_sampler *s);
/* Detach sampler i and hand ownership back; NULL if i is out of range. */
NEXTOK_API struct nextok_sampler *nextok_chain_remove(struct nextok_chain *c, size_t i);
NEXTOK_API size_t nextok_chain_n(const struct nextok_chain *c);
NEXTOK_API struct nextok_sampler *nextok_chain_get(const struct nextok_chain *c, size_t i);
NEXTOK_API int32_t nextok_chain_n_vocab(const struct nextok_chain *c);

/* Prompt tokens (for penalties, DRY, n-grams). Replaces an earlier prompt. */
NEXTOK_API nextok_status nextok_chain_set_prompt(struct nextok_chain *c, const int32_t *ids,
                                                 size_t n);
/* Accept an output token: every sampler's accept, then step += 1. */
NEXTOK_API nextok_status nextok_chain_accept(struct nextok_chain *c, int32_t token);
/* Reset every sampler and set step to 0. */
NEXTOK_API void nextok_chain_reset(struct nextok_chain *c);
NEXTOK_API nextok_status nextok_chain_clone(const struct nextok_chain *c,
                                            struct nextok_chain **out);
/* The step keys random draws; it advances by one per accepted token. */
NEXTOK_API void     nextok_chain_set_step(struct nextok_chain *c, uint64_t step);
NEXTOK_API uint64_t nextok_chain_step(const struct nextok_chain *c);

/* Sample one token from a row of n_vocab logits (not modified). */
NEXTOK_API nextok_status nextok_chain_sample(struct nextok_chain *c, const void *logits,
        enum nextok_dtype dtype, int32_t *token);

/*
 * The final distribution the selector samples from (the chain run in full):
 * survivors with p, sorted by p descending then id ascending. Writes at most
 * cap entries to out and the number of survivors to *n; if cap < *n it returns
 * NEXTOK_ERR_BUFFER_TOO_SMALL (out holds the first cap entries).
 */
NEXTOK_API nextok_status nextok_chain_probs(struct nextok_chain *c, const void *logits,
        enum nextok_dtype dtype, struct nextok_token_data *out, size_t cap, size_t *n,
        int32_t *token);

/* Run the chain on a caller's candidate array (replaced by the result on success,
 * left unchanged on failure). cur->selected is set if the chain has a selector. */
NEXTOK_API nextok_status nextok_chain_apply(struct nextok_chain *c,
                                            struct nextok_token_data_array *cur);

/* Observe each stage (explain, debugging): called after stage i ran, with the
 * candidates it left. Pass NULL to remove. Disables the fused path. */
typedef void (*nextok_stage_fn)(size_t i, const char *name,
                                const struct nextok_token_data_array *cur, void *user);
NEXTOK_API void nextok_chain_set_observer(struct nextok_chain *c, nextok_stage_fn fn,
                                          void *user);

/* True if the last sample/probs call on c ran the fused path. */
NEXTOK_API bool nextok_chain_last_fused(const struct nextok_chain *c);

/* ------------------------------------------------------------------------ */
/* Logprobs                                                                  */
/* ------------------------------------------------------------------------ */

enum nextok_logprobs_source {
    NEXTOK_LOGPROBS_RAW       = 0, /* log_softmax of the input row          */
    NEXTOK_LOGPROBS_PROCESSED = 1, /* log of the final distribution's p     */
};

struct nextok_logprob {
    int32_t id;
    float   logprob;
};

/*
 * Top-n tokens of a distribution (logprob descending, id ascending) and the
 * logprob and 1-based rank of `token` in the same order.
 * RAW: computed from `logits` (a row of n_vocab).
 * PROCESSED: from the distribution of the last successful sample/probs call on
 *   c (logits may be NULL); a token outside it has logprob -INFINITY and rank 0.
 * top may be NULL when top_n is 0; *n_top receives min(top_n, support size).
 */
NEXTOK_API nextok_status nextok_chain_logprobs(struct nextok_chain *c,
        enum nextok_logprobs_source source, const void *logits, enum nextok_dtype dtype,
        int32_t token, size_t top_n, struct nextok_logprob *top, size_t *n_top,
        float *token_logprob, int32_t *token_rank);

/* ------------------------------------------------------------------------ */
/* Profiles: a whole sampling configuration as one struct                    */
/* ------------------------------------------------------------------------ */

enum nextok_profile {
    NEXTOK_PROFILE_VLLM  = 0, /* the default */
    NEXTOK_PROFILE_HF    = 1,
    NEXTOK_PROFILE_LLAMA = 2,
};

enum nextok_selector {
    NEXTOK_SELECTOR_CATEGORICAL = 0,
    NEXTOK_SELECTOR_GUMBEL      = 1,
    NEXTOK_SELECTOR_GREEDY      = 2,
};

/*
 * Everything a request can set. Start from nextok_sampling_default_params()
 * for a profile and change fields. Arrays are borrowed during chain init only.
 * Disabled values: top_k <= 0, top_p >= 1, min_p <= 0, typical_p >= 1,
 * top_n_sigma <= 0, xtc_probability <= 0, epsilon <= 0, eta <= 0,
 * repeat_penalty == 1, frequency/presence == 0, dry_multiplier == 0,
 * no_repeat_ngram <= 0, mirostat == 0, min_tokens <= 0.
 */
struct nextok_sampling_params {
    enum nextok_profile  profile;
    int32_t  n_vocab;
    uint64_t seed;
    enum nextok_selector selector;

    float    temperature;          /* <= 0: greedy (vllm/hf reject < 0)      */
    float    dynatemp_range;       /* llama.cpp --dynatemp-range             */
    float    dynatemp_exponent;
    int32_t  top_k;
    enum nextok_ties top_k_ties;   /* also applies to top_p                  */
    float    top_p;
    float    min_p;
    float    typical_p;
    float    top_n_sigma;
    float    xtc_probability;
    float    xtc_threshold;
    float    epsilon_cutoff;
    float    eta_cutoff;
    size_t   min_keep;

    float    repeat_penalty;
    float    frequency_penalty;
    float    presence_penalty;
    int32_t  penalty_last_n;       /* window for the llama profile (64)      */

    float    dry_multiplier;
    float    dry_base;
    int32_t  dry_allowed_length;
    int32_t  dry_penalty_last_n;
    const int32_t *dry_breaker_ids;
    const size_t  *dry_breaker_off;
    size_t   dry_n_breakers;

    int32_t  no_repeat_ngram;
    int32_t  mirostat;             /* 0, 1 or 2                              */
    float    mirostat_tau;
    float    mirostat_eta;

    const struct nextok_logit_bias *logit_bias;
    size_t   n_logit_bias;
    const int32_t *allowed_ids;    /* NULL: no whitelist                     */
    size_t   n_allowed;
    const int32_t *banned_ids;
    size_t   n_banned;

    int32_t  min_tokens;
    const int32_t *eog_ids;        /* suppressed until min_tokens outputs    */
    size_t   n_eog;

    /* Custom stage order, llama.cpp names separated by ';' (penalties, dry,
     * top_n_sigma, top_k, typ_p, top_p, min_p, xtc, temperature; also
     * epsilon, eta). NULL: the profile's order. In the vllm and hf profiles
     * penalties/dry left out of the list still run first, as processors. */
    const char *samplers;

    enum nextok_nan_policy nan_policy;
};

NEXTOK_API struct nextok_sampling_params nextok_sampling_default_params(enum nextok_profile p);
/* Profile name <-> enum ("vllm", "hf", "llama"). */
NEXTOK_API const char *nextok_profile_name(enum nextok_profile p);
NEXTOK_API nextok_status nextok_profile_from_name(const char *name, enum nextok_profile *out);

/* Build the profile's chain for params (validated; err names a bad field). */
NEXTOK_API nextok_status nextok_chain_init_sampling(struct nextok_chain **out,
        const struct nextok_sampling_params *params, struct nextok_error *err);

/* ==== BEGIN fast path and batches (owned by the fused/batch work) ======== */
/* ==== END fast path and batches ========================================== */

/* ==== BEGIN vocabularies and detokenization ============================== */
/* ==== END vocabularies and detokenization ================================ */

/* ==== BEGIN stop criteria and sessions ==================================== */
/* ==== END stop criteria and sessions ====================================== */

/* ------------------------------------------------------------------------ */
/* CPU features                                                              */
/* ------------------------------------------------------------------------ */

NEXTOK_API bool nextok_cpu_has_avx2(void);
NEXTOK_API bool nextok_cpu_has_avx512(void);

#ifdef __cplusplus
}
#endif

#endif /* NEXTOK_H */
