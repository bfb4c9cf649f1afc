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
 *   - Callbacks run on the thread that made the call that triggers them,
 *     during that call: a sampler's vtable functions, a chain's stage
 *     observer and log callback. nextok_batch_sample* is the exception: it
 *     runs each row's chain (its samplers, its log callback) on a worker of
 *     the thread pool, one row's chain on one thread at a time; callbacks
 *     shared by several rows' chains must be thread-safe.
 *   - Declarations between #ifdef NEXTOK_EXPERIMENTAL and its #endif are
 *     for tests and inspection, or new; they may change between minor
 *     versions. Define NEXTOK_EXPERIMENTAL before including this header to
 *     use them.
 *
 * Start here
 *
 * Generating text (a session owns the chain, the detokenizer and the stop
 * rules; model_forward() stands for your model):
 *
 *     struct nextok_vocab *vocab;
 *     nextok_vocab_load_file(&vocab, "tokenizer.json", &err);
 *     struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
 *     sp.n_vocab = nextok_vocab_n_tokens(vocab);
 *     sp.temperature = 0.7f; sp.top_p = 0.9f; sp.seed = 42;
 *     struct nextok_stop_params stop = nextok_stop_default_params();
 *     stop.max_tokens = 256;
 *     struct nextok_session_params ps = nextok_session_default_params();
 *     ps.sampling = &sp; ps.stop = &stop; ps.vocab = vocab;
 *     struct nextok_session *s;
 *     nextok_session_init(&s, &ps, &err);
 *     nextok_session_set_prompt(s, prompt_ids, n_prompt);
 *     struct nextok_step_result r = {0};
 *     while (r.finish == NEXTOK_FINISH_NONE) {
 *         const float *logits = model_forward(...);
 *         if (nextok_session_step(s, logits, NEXTOK_DTYPE_F32, &r) != NEXTOK_OK) break;
 *         fwrite(r.text, 1, r.text_len, stdout);  // final text, never taken back
 *     }
 *     nextok_session_free(s);
 *
 * Sampling tokens only (a chain; you decode and stop yourself):
 *
 *     struct nextok_chain *c;
 *     nextok_chain_init_sampling(&c, &sp, &err);
 *     nextok_chain_set_prompt(c, prompt_ids, n_prompt);
 *     for (;;) {
 *         int32_t tok;
 *         if (nextok_chain_sample(c, model_forward(...), NEXTOK_DTYPE_F16, &tok) != NEXTOK_OK) {
 *             fprintf(stderr, "%s\n", nextok_chain_errmsg(c));
 *             break;
 *         }
 *         nextok_chain_accept(c, tok);  // history, penalties, mirostat; step += 1
 *         ...
 *     }
 *     nextok_chain_free(c);
 *
 * Many requests at once: one chain per row and nextok_batch_sample on a
 * nextok_threadpool. Every function returns a status; the handle's errmsg
 * says what went wrong.
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
    X(ERR_VOCAB_SIZE,  -12, "vocabulary size out of range")                          \
    X(ERR_LIMIT,       -13, "a configured limit was reached")                        \
    X(ERR_REJECTED,    -14, "input not allowed by the grammar")

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
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * An allocator hook (in the manner of zstd's ZSTD_customMem). An object made
 * with one keeps a copy of it and uses it for every block it allocates, at
 * init and as it grows (histories, workspaces, the stop regex's PCRE2
 * memory), and to free them; nothing it does calls the C library's malloc.
 *
 *   - NULL, or all three functions NULL: the C library's malloc, realloc
 *     and free. Some but not all three: NEXTOK_ERR_INVALID_ARG at init.
 *   - alloc(user, size): size > 0; memory aligned as malloc's; NULL when it
 *     fails. realloc(user, ptr, size): ptr non-NULL and from this
 *     allocator, size > 0; as C realloc (on NULL, ptr stays valid).
 *     free(user, ptr): ptr non-NULL and from this allocator.
 *   - The functions run on the thread that made the call on the object (for
 *     nextok_batch_sample*, a pool worker); one allocator shared by objects
 *     used on several threads at once must be thread-safe.
 *
 * Where it plugs in: the `allocator` field of nextok_chain_params,
 * nextok_sampling_params, nextok_stop_params, nextok_session_params,
 * nextok_decode_params (nextok_detok_init) and nextok_vocab_load_params.
 * The default params leave it NULL. Standalone sampler constructors
 * (nextok_sampler_init_top_k, ..., nextok_sampler_init) and
 * nextok_threadpool_init use the C library's allocator. A chain frees each
 * of its samplers with the sampler's own allocator; clones use their
 * original's.
 *
 * A failed allocation is NEXTOK_ERR_NOMEM with a message, and the failed
 * call changes nothing (see Conventions). The one exception: in
 * nextok_chain_accept and nextok_chain_set_prompt the built-in samplers
 * first reserve what the token or prompt needs, so none of them can fail
 * part way, and the user samplers run before them; a user sampler's accept
 * or set_prompt that fails (of any cause) leaves the user samplers before
 * it changed.
 */
struct nextok_allocator {
    void *(*alloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *ptr, size_t size);
    void  (*free)(void *user, void *ptr);
    void  *user;
};

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

/* Uniform double in the open interval (0, 1): ((k >> 1) + 0.5) * 2^-52 for the
 * same 53-bit k (exact, so never 0 or 1). */
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
/* For implementations: record a failure message on the sampler; returns
 * status. nextok_sampler_set_errmsg takes the message as it is (for
 * bindings that cannot call a variadic function). */
NEXTOK_API nextok_status nextok_sampler_set_errmsg(struct nextok_sampler *s, nextok_status status,
                                                   const char *msg);
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
/* A copy, state included, on s's allocator. On failure the message is on s
 * (UNSUPPORTED: the implementation has no clone). */
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
 * status, leaves *out NULL and names the parameter in err->msg. The sampler
 * uses the C library's allocator (nextok_chain_init_sampling builds its
 * samplers with nextok_sampling_params.allocator instead). ---------------- */

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
/* --- token bitmask (constrained decoding with an external grammar engine) --
 *
 * The allowed tokens of one step as bits, in the layout XGrammar,
 * llguidance and vLLM use: int32 words, token i allowed iff bit i % 32
 * (least significant first) of word i / 32 is set; NEXTOK_BITMASK_WORDS(V)
 * words per row. It means what nextok_sampler_init_allowed with those ids
 * means (every other token removed; none left: NEXTOK_ERR_NO_CANDIDATES);
 * bits of ids >= n_vocab are ignored. It is a processor: put it with the
 * others, before filters (nextok_sampling_params.token_bitmask does).
 *
 * The words are borrowed, not copied: set them before each step's sample,
 * keep them valid and unchanged until the chain accepts a token (which
 * forgets them), resets, or gets new ones. Sampling a step whose mask was
 * not set fails with NEXTOK_ERR_STATE: a forgotten mask never becomes an
 * unconstrained sample. The fused path applies the mask inside its passes.
 */
#define NEXTOK_BITMASK_WORDS(n_vocab) (((size_t)(n_vocab) + 31) / 32)
NEXTOK_API nextok_status nextok_sampler_init_token_bitmask(struct nextok_sampler **out,
        int32_t n_vocab, struct nextok_error *err);
/* Set this step's mask on a token-bitmask sampler. NEXTOK_ERR_INVALID_ARG
 * for another sampler, NULL words, or fewer than NEXTOK_BITMASK_WORDS(n_vocab)
 * words (more are ignored). */
NEXTOK_API nextok_status nextok_sampler_set_token_bitmask(struct nextok_sampler *s,
        const int32_t *words, size_t n_words);

/* A mask source: a grammar engine feeding a token-bitmask stage. When a
 * step has no mask set, the stage asks fill for it (into its own buffer of
 * NEXTOK_BITMASK_WORDS(n_vocab) words); every accepted token is passed to
 * accept, reset to reset, and a clone of the stage clones the source. The
 * stage owns user from a successful set on: free is called when the stage
 * is freed or given another source. nextok_sampler_init_grammar makes one
 * over nextok's matcher; other engines plug in the same way. */
struct nextok_mask_source {
    void *user;
    nextok_status (*fill)(void *user, int32_t *words, size_t n_words, struct nextok_error *err);
    nextok_status (*accept)(void *user, int32_t token, struct nextok_error *err);
    void (*reset)(void *user);                                                  /* may be NULL */
    nextok_status (*clone)(void *user, void **out, struct nextok_error *err); /* NULL: no clone */
    void (*free)(void *user);                                                   /* may be NULL */
    /* llama.cpp's shortcut: nextok_chain_sample first samples without the
     * mask and asks allows only about the chosen token; the full mask is
     * made only when it is refused, and the step then redrawn (with fresh
     * randomness). Exact for greedy and for temperature + categorical
     * draws; with truncation filters (top-k, top-p, min-p, ...) the result
     * is llama.cpp's, not the masked-then-filtered distribution. Needs
     * allows. */
    bool check_first;
    nextok_status (*allows)(void *user, int32_t token, bool *allowed, struct nextok_error *err);
};
/* Give a token-bitmask stage a source (NULL: take it away, freeing it).
 * NEXTOK_ERR_INVALID_ARG for another sampler or a source without fill or
 * accept; on failure the source is not taken. */
NEXTOK_API nextok_status nextok_sampler_set_mask_source(struct nextok_sampler *s,
        const struct nextok_mask_source *src);
/* The stage's source, or NULL. */
NEXTOK_API const struct nextok_mask_source *nextok_sampler_mask_source(const struct nextok_sampler *s);

#ifdef NEXTOK_EXPERIMENTAL
/* Mirostat's current mu (for inspection/tests); NaN for other samplers. */
NEXTOK_API float nextok_sampler_mirostat_mu(const struct nextok_sampler *s);
#endif

/* ------------------------------------------------------------------------ */
/* Chains                                                                    */
/* ------------------------------------------------------------------------ */

struct nextok_chain;

struct nextok_chain_params {
    int32_t n_vocab;                    /* > 0; rows passed in have this length */
    enum nextok_nan_policy nan_policy;  /* NEXTOK_NAN_ERROR by default          */
    bool    no_fused;                   /* force the plain chain (tests only)   */
    nextok_log_fn log_fn;               /* NULL: no logging                     */
    void   *log_user;
    /* The chain's own memory: its sampler array, workspace, fused-path
     * workspace and sample_n scratch (copied at init; NULL: the C library's).
     * Samplers added to it keep their own allocator. */
    const struct nextok_allocator *allocator;
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

/* Prompt tokens (for penalties, DRY, n-grams). Replaces an earlier prompt.
 * Failures as nextok_chain_accept's. */
NEXTOK_API nextok_status nextok_chain_set_prompt(struct nextok_chain *c, const int32_t *ids,
                                                 size_t n);
/* Accept an output token: every sampler's accept, then step += 1. A failure
 * changes nothing, except when a user sampler's accept fails after another
 * user sampler's accepted (see Memory). */
NEXTOK_API nextok_status nextok_chain_accept(struct nextok_chain *c, int32_t token);
/* Reset every sampler and set step to 0. */
NEXTOK_API void nextok_chain_reset(struct nextok_chain *c);
/* A copy with the same samplers (each cloned) and step, on c's allocator.
 * On failure the message is on c (nextok_chain_errmsg(c)). */
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

/* Set this step's token bitmask on every token-bitmask stage of c (see
 * nextok_sampler_init_token_bitmask). NEXTOK_ERR_STATE if c has none. */
NEXTOK_API nextok_status nextok_chain_set_token_bitmask(struct nextok_chain *c,
        const int32_t *words, size_t n_words);

#ifdef NEXTOK_EXPERIMENTAL
/* True if the last sample/probs call on c ran the fused path (for tests and
 * benchmarks). */
NEXTOK_API bool nextok_chain_last_fused(const struct nextok_chain *c);
/* The same on the chain's token-bitmask stage (NEXTOK_ERR_STATE if none). */
NEXTOK_API nextok_status nextok_chain_set_mask_source(struct nextok_chain *c,
        const struct nextok_mask_source *src);
NEXTOK_API const struct nextok_mask_source *nextok_chain_mask_source(const struct nextok_chain *c);
#endif

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
 * Off values (the stage is left out): top_k <= 0, top_p == 1, min_p == 0,
 * typical_p == 1, top_n_sigma <= 0, xtc_probability == 0, epsilon_cutoff == 0,
 * eta_cutoff == 0, repeat_penalty == 1, frequency/presence == 0,
 * dry_multiplier == 0, no_repeat_ngram <= 0, mirostat == 0, min_tokens <= 0
 * (or no eog_ids). XTC with xtc_threshold > 0.5 stays in the chain but never
 * removes a token (llama.cpp's rule).
 * Accepted ranges, in every profile (vLLM's; HF's warpers reject the same):
 * top_p and typical_p in (0, 1]; min_p, xtc_probability and xtc_threshold in
 * [0, 1]; epsilon_cutoff and eta_cutoff in [0, 1). A value past the off value
 * (top_p 1.2, min_p -0.1) fails chain init with NEXTOK_ERR_INVALID_ARG naming
 * the field, also in the llama profile, although llama.cpp reads it as off:
 * docs/semantics.md, "Parameter ranges".
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

    /* Add a token-bitmask stage (first among the processors); its mask is
     * set per step: nextok_chain_set_token_bitmask, nextok_batch_sample_bitmask,
     * nextok_session_set_token_bitmask. */
    bool     token_bitmask;

    /* For the chain and every sampler nextok_chain_init_sampling builds
     * (copied; NULL: the C library's). See Memory. */
    const struct nextok_allocator *allocator;
};

NEXTOK_API struct nextok_sampling_params nextok_sampling_default_params(enum nextok_profile p);
/* Profile name <-> enum ("vllm", "hf", "llama"). */
NEXTOK_API const char *nextok_profile_name(enum nextok_profile p);
NEXTOK_API nextok_status nextok_profile_from_name(const char *name, enum nextok_profile *out);

/* Build the profile's chain for params (validated; err names a bad field). */
NEXTOK_API nextok_status nextok_chain_init_sampling(struct nextok_chain **out,
        const struct nextok_sampling_params *params, struct nextok_error *err);

/* ------------------------------------------------------------------------ */
/* Batches, thread pools, parallel sampling, CPU dispatch                   */
/* ------------------------------------------------------------------------ */

/*
 * The fused path. nextok_chain_sample/probs run it by themselves when the
 * chain starts with stages it knows (processors, at most one temperature,
 * then top-k, min-p, top-n-sigma, top-p, typical-p, Mirostat v2, dist or a
 * top-1); the result is identical to the plain chain (same survivors, same
 * p, same token). nextok_chain_last_fused() tells whether it ran. Set
 * NEXTOK_FORCE_REF=1 in the environment to use the scalar reference kernels
 * instead of AVX2/AVX-512, or NEXTOK_FORCE_AVX2=1 to use AVX2 on an AVX-512
 * CPU (for triage; read once, at the first use of the kernels).
 */

/* ---- thread pool ----------------------------------------------------------- */

/*
 * A fixed set of worker threads (pthreads). Batch calls reference a pool; they
 * never own it. One pool may serve several callers: their batch calls run one
 * at a time. n_threads counts the calling thread: a pool of 1 starts no thread
 * and runs everything on the caller; 0 means the number of online CPUs.
 * Not for use from inside one of its own jobs.
 */
struct nextok_threadpool;

/* The pool's memory is the C library's. */
NEXTOK_API nextok_status nextok_threadpool_init(struct nextok_threadpool **out, size_t n_threads);
NEXTOK_API void   nextok_threadpool_free(struct nextok_threadpool *pool);
NEXTOK_API size_t nextok_threadpool_size(const struct nextok_threadpool *pool);

/* ---- batches ------------------------------------------------------------------- */

/*
 * Sample one token for each of n_rows rows: row r is the n_vocab logits at
 * (element) offset r * row_stride of logits, sampled with chains[r], exactly
 * as nextok_chain_sample(chains[r], row r, dtype, &tokens[r]) would. The
 * chains must be distinct (each is used by one thread) and have the row's
 * n_vocab <= row_stride. A row's token depends only on its own chain (seed,
 * step, state) and logits: never on n_rows, the thread count or its position.
 * pool may be NULL (the calling thread does all rows). row_status (may be NULL)
 * receives each row's status; tokens[r] is -1 for a failed row. Returns OK
 * if every row succeeded, else the status of the first failed row. Steps do
 * not advance: accept each token with nextok_chain_accept as usual.
 * No allocation in steady state (each chain keeps its own workspace).
 */
NEXTOK_API nextok_status nextok_batch_sample(struct nextok_threadpool *pool,
        struct nextok_chain *const *chains, const void *logits, enum nextok_dtype dtype,
        size_t n_rows, size_t row_stride, int32_t *tokens, nextok_status *row_status);

/*
 * Parallel sampling: n tokens from ONE distribution, the chain's final
 * distribution for this row at the current step (every stage runs once).
 * Draw j uses u_j = nextok_rng_uniform(seed, step, NEXTOK_RNG_DIST, j), a
 * sub-stream of this step (index j), so draws never collide with other steps:
 *   - tokens[0] is exactly the token nextok_chain_sample would return;
 *   - tokens[j], j >= 1, is the categorical (inverse-CDF, id order) draw with
 *     u_j over the final candidates (also for Gumbel and mirostat selectors,
 *     which sample the same distribution); a greedy chain repeats its token.
 * The seed is the selector's. Draws are with replacement. Fails with
 * NEXTOK_ERR_STATE if the chain has no selector. n = 0 is allowed.
 */
NEXTOK_API nextok_status nextok_chain_sample_n(struct nextok_chain *c, const void *logits,
        enum nextok_dtype dtype, size_t n, int32_t *tokens);

/* nextok_batch_sample with a token bitmask per row: row r's mask is the
 * mask_stride words at bitmask + r * mask_stride (a [B, ceil(V / 32)] int32
 * array, as XGrammar and vLLM fill it), set on chains[r] as
 * nextok_chain_set_token_bitmask does (each chain needs a token-bitmask
 * stage; mask_stride >= NEXTOK_BITMASK_WORDS of its n_vocab). A row whose
 * mask cannot be set fails alone (its status, token -1). */
NEXTOK_API nextok_status nextok_batch_sample_bitmask(struct nextok_threadpool *pool,
        struct nextok_chain *const *chains, const void *logits, enum nextok_dtype dtype,
        size_t n_rows, size_t row_stride, const int32_t *bitmask, size_t mask_stride,
        int32_t *tokens, nextok_status *row_status);

/* nextok_chain_sample_n for B rows, n tokens per row (tokens[r * n + j]). */
NEXTOK_API nextok_status nextok_batch_sample_n(struct nextok_threadpool *pool,
        struct nextok_chain *const *chains, const void *logits, enum nextok_dtype dtype,
        size_t n_rows, size_t row_stride, size_t n, int32_t *tokens, nextok_status *row_status);

/* ------------------------------------------------------------------------ */
/* Vocabularies and detokenization                                          */
/* ------------------------------------------------------------------------ */

/*
 * Vocabularies. A struct nextok_vocab maps token ids to text. It is loaded once
 * (GGUF, HF tokenizer.json, tiktoken ranks), is read-only afterwards and may be
 * shared by any number of threads. The only calls that change it are
 * nextok_vocab_set_special_id() and nextok_vocab_add_eog(): make them before
 * sharing it. A vocabulary must outlive every detokenizer made from it.
 *
 * Loaders: on success *out owns a new vocabulary; on failure *out is NULL and
 * err (may be NULL) holds the status and a message naming where the input went
 * wrong (GGUF: byte offset and key; tokenizer.json: the JSON path, e.g.
 * `model.vocab["foo"]` or `added_tokens[3].id`; tiktoken: the line number).
 * Statuses: NEXTOK_ERR_IO (file cannot be read), NEXTOK_ERR_FORMAT (malformed,
 * truncated, or absurd sizes: more than 2^24 tokens, a token over 64 KiB),
 * NEXTOK_ERR_UNSUPPORTED (a valid file using something nextok does not
 * implement, e.g. a regex Replace decoder or GGUF v1), NEXTOK_ERR_NOMEM (any
 * failed allocation; nothing is half-loaded), NEXTOK_ERR_INVALID_ARG.
 * Loaders never crash on malformed input and never read past the given size.
 */
struct nextok_vocab;

/* How the vocabulary turns tokens into text (llama.cpp's llama_vocab_type
 * numbering where it overlaps). */
enum nextok_vocab_type {
    NEXTOK_VOCAB_TYPE_SPM      = 1, /* SentencePiece-style BPE: U+2581 for space, <0xNN> bytes */
    NEXTOK_VOCAB_TYPE_BPE      = 2, /* byte-level BPE (GPT-2 byte <-> unicode map)            */
    NEXTOK_VOCAB_TYPE_WPM      = 3, /* WordPiece ("##" continues a word)                      */
    NEXTOK_VOCAB_TYPE_UGM      = 4, /* Unigram (SentencePiece unigram, T5)                     */
    NEXTOK_VOCAB_TYPE_TIKTOKEN = 5, /* tiktoken ranks: tokens are raw bytes                   */
};
/* "spm", "bpe", "wpm", "ugm", "tiktoken"; "?" otherwise. Never NULL. */
NEXTOK_API const char *nextok_vocab_type_name(enum nextok_vocab_type type);

/* Token types; the values are GGUF's tokenizer.ggml.token_type. */
enum nextok_token_type {
    NEXTOK_TOKEN_TYPE_INVALID      = 0, /* id out of range                     */
    NEXTOK_TOKEN_TYPE_NORMAL       = 1,
    NEXTOK_TOKEN_TYPE_UNKNOWN      = 2, /* the unknown token (<unk>)           */
    NEXTOK_TOKEN_TYPE_CONTROL      = 3, /* special: <s>, <|eot_id|>, ...       */
    NEXTOK_TOKEN_TYPE_USER_DEFINED = 4, /* added, not special                  */
    NEXTOK_TOKEN_TYPE_UNUSED       = 5, /* holes in the id range, unused slots */
    NEXTOK_TOKEN_TYPE_BYTE         = 6, /* byte-fallback token <0xNN>          */
};

/* Token attribute bits (nextok_vocab_token_attrs). */
enum nextok_token_attr {
    /* Removed by skip_special_tokens. HF: added_tokens with "special": true.
     * GGUF: control and unknown tokens. tiktoken: the caller's special tokens. */
    NEXTOK_TOKEN_ATTR_SPECIAL = 1u << 0,
    /* An added token (HF added_tokens; GGUF control, user-defined, unknown;
     * tiktoken specials): a segment of its own under spaces_between_special_tokens. */
    NEXTOK_TOKEN_ATTR_ADDED   = 1u << 1,
    NEXTOK_TOKEN_ATTR_EOG     = 1u << 2, /* in the end-of-generation set          */
    /* The id has no token (a hole in the file's id range): decodes to nothing,
     * as HF's id_to_token() -> None. Its type is UNUSED. */
    NEXTOK_TOKEN_ATTR_ABSENT  = 1u << 3,
};

/* Well-known token roles. */
enum nextok_vocab_special {
    NEXTOK_VOCAB_BOS = 0, /* beginning of sequence */
    NEXTOK_VOCAB_EOS = 1, /* end of sequence       */
    NEXTOK_VOCAB_EOT = 2, /* end of turn           */
    NEXTOK_VOCAB_EOM = 3, /* end of message        */
    NEXTOK_VOCAB_PAD = 4,
    NEXTOK_VOCAB_UNK = 5,
    NEXTOK_VOCAB_SPECIAL_COUNT = 6,
};

/* Load by content: "GGUF" magic -> GGUF; a directory, a name ending in .json
 * or text starting with '{' -> HF tokenizer.json (a directory means its
 * tokenizer.json); otherwise a
 * tiktoken ranks file, with the special tokens of OpenAI's published encodings
 * when the file name is one of r50k_base, p50k_base, cl100k_base, o200k_base
 * (.tiktoken), and none otherwise. */
NEXTOK_API nextok_status nextok_vocab_load_file(struct nextok_vocab **out, const char *path,
                                                struct nextok_error *err);

/* GGUF v2/v3 (a vocab-only file or a whole model; only the tokenizer.ggml.*
 * keys are read, tensor infos are not needed). */
NEXTOK_API nextok_status nextok_vocab_load_gguf(struct nextok_vocab **out, const char *path,
                                                struct nextok_error *err);
NEXTOK_API nextok_status nextok_vocab_load_gguf_mem(struct nextok_vocab **out, const void *data,
                                                    size_t size, struct nextok_error *err);

/* HF tokenizer.json (models BPE, Unigram, WordPiece; added_tokens; decoders
 * ByteLevel, Metaspace, Replace with a string pattern, ByteFallback, Fuse,
 * Strip, WordPiece, Sequence). path is the file or its directory; a
 * tokenizer_config.json (bos/eos/pad/unk_token, add_bos_token, add_eos_token)
 * and a generation_config.json (eos_token_id: int or list, bos/pad_token_id)
 * in the same directory are read when present. All three are strict JSON
 * (RFC 8259, nesting at most 32 deep); when a key repeats, the last counts. */
NEXTOK_API nextok_status nextok_vocab_load_hf_json(struct nextok_vocab **out, const char *path,
                                                   struct nextok_error *err);

/* The same from memory. tokenizer_config and generation_config may be NULL. */
struct nextok_hf_json_mem {
    const char *tokenizer;          /* tokenizer.json contents (required) */
    size_t      tokenizer_size;
    const char *tokenizer_config;   /* tokenizer_config.json or NULL      */
    size_t      tokenizer_config_size;
    const char *generation_config;  /* generation_config.json or NULL     */
    size_t      generation_config_size;
};
NEXTOK_API nextok_status nextok_vocab_load_hf_json_mem(struct nextok_vocab **out,
        const struct nextok_hf_json_mem *files, struct nextok_error *err);

/* A special token given by the caller (tiktoken files do not list them). */
struct nextok_special_token {
    const char *text;  /* NUL-terminated, non-empty */
    int32_t     id;    /* must not be a rank of the file */
};

/* tiktoken ranks file: one "base64(token bytes) rank" per line. Ranks are the
 * ids; specials are added with their ids (NEXTOK_ERR_INVALID_ARG if an id is
 * negative, over 2^24, repeated or a rank of the file). Ids that are neither
 * are holes (NEXTOK_TOKEN_ATTR_ABSENT). */
NEXTOK_API nextok_status nextok_vocab_load_tiktoken(struct nextok_vocab **out, const char *path,
        const struct nextok_special_token *specials, size_t n_specials, struct nextok_error *err);
NEXTOK_API nextok_status nextok_vocab_load_tiktoken_mem(struct nextok_vocab **out,
        const void *data, size_t size, const struct nextok_special_token *specials,
        size_t n_specials, struct nextok_error *err);

/* Options for the _ex loaders. Start from nextok_vocab_load_default_params(). */
struct nextok_vocab_load_params {
    /* The vocabulary's memory: the load's own blocks and the vocabulary's,
     * which nextok_vocab_add_eog and nextok_vocab_free then use (copied;
     * NULL: the C library's). */
    const struct nextok_allocator *allocator;
};
NEXTOK_API struct nextok_vocab_load_params nextok_vocab_load_default_params(void);
/* nextok_vocab_load_file with params (NULL: defaults). */
NEXTOK_API nextok_status nextok_vocab_load_file_ex(struct nextok_vocab **out, const char *path,
        const struct nextok_vocab_load_params *params, struct nextok_error *err);
/* Load from memory by content, as nextok_vocab_load_file: the GGUF magic ->
 * GGUF; text starting with '{' (after spaces) -> a tokenizer.json alone (no
 * config files: nextok_vocab_load_hf_json_mem takes those); otherwise a
 * tiktoken ranks file without special tokens. */
NEXTOK_API nextok_status nextok_vocab_load_mem_ex(struct nextok_vocab **out, const void *data,
        size_t size, const struct nextok_vocab_load_params *params, struct nextok_error *err);

NEXTOK_API void nextok_vocab_free(struct nextok_vocab *v);

/* --- queries (v must not be NULL; an out-of-range id gives the stated
 * "none" value, never undefined behaviour) --------------------------------- */

/* Number of ids: every id in [0, n) is valid (some may be holes). */
NEXTOK_API int32_t nextok_vocab_n_tokens(const struct nextok_vocab *v);
NEXTOK_API enum nextok_vocab_type nextok_vocab_get_type(const struct nextok_vocab *v);
/* NEXTOK_TOKEN_TYPE_INVALID for an id out of range. */
NEXTOK_API enum nextok_token_type nextok_vocab_token_type(const struct nextok_vocab *v, int32_t id);
/* enum nextok_token_attr bits; 0 for an id out of range. */
NEXTOK_API uint32_t nextok_vocab_token_attrs(const struct nextok_vocab *v, int32_t id);
/* The token as stored in the file ("Ġworld", "▁Hello", "<0x0A>", "<|eot_id|>";
 * tiktoken: the raw bytes). Not NUL-terminated; *len receives its length.
 * Points into v. NULL (and *len = 0) for an id out of range. */
NEXTOK_API const char *nextok_vocab_token_text(const struct nextok_vocab *v, int32_t id,
                                               size_t *len);
/* The bytes the token contributes to decoded text when it is not the first
 * token (" world" for "Ġworld" and "▁world", "\n" for "<0x0A>", "ing" for
 * WordPiece "##ing"). Added and special tokens go through the same decoder,
 * which leaves the usual ones ("<|eot_id|>") as they are. May be invalid
 * UTF-8 alone. Not NUL-terminated; points into v; NULL for an id out of range. */
NEXTOK_API const char *nextok_vocab_token_bytes(const struct nextok_vocab *v, int32_t id,
                                                size_t *len);
/* SentencePiece / Unigram score; 0 where the file has none or id is out of range. */
NEXTOK_API float nextok_vocab_token_score(const struct nextok_vocab *v, int32_t id);
/* The id whose stored text is exactly text[0..len) (the lowest such id), or -1. */
NEXTOK_API int32_t nextok_vocab_find(const struct nextok_vocab *v, const char *text, size_t len);
/* The id of a role, -1 if none. From the file (GGUF keys; tokenizer_config /
 * generation_config next to tokenizer.json); roles the file leaves unset are
 * looked up by well-known names among special tokens ("</s>", "<|endoftext|>",
 * "<|eot_id|>", "<|im_end|>", "<end_of_turn>", ...; see docs/text.md). */
NEXTOK_API int32_t nextok_vocab_special_id(const struct nextok_vocab *v,
                                           enum nextok_vocab_special which);
/* Override a role (-1 clears it). Setting EOS, EOT or EOM also adds the id to
 * the end-of-generation set. Not thread-safe: call before sharing v. */
NEXTOK_API nextok_status nextok_vocab_set_special_id(struct nextok_vocab *v,
        enum nextok_vocab_special which, int32_t id);
/* Whether the tokenizer adds BOS / EOS when encoding (GGUF add_bos_token,
 * tokenizer_config add_bos_token, or a TemplateProcessing that starts with a
 * special token). */
NEXTOK_API bool nextok_vocab_adds_bos(const struct nextok_vocab *v);
NEXTOK_API bool nextok_vocab_adds_eos(const struct nextok_vocab *v);

/* End-of-generation ids: eos, eot, eom, generation_config's eos_token_id(s),
 * special tokens with a well-known end name, and ids added by the caller.
 * Sorted ascending; *n receives the count; valid until the set changes. */
NEXTOK_API const int32_t *nextok_vocab_eog_ids(const struct nextok_vocab *v, size_t *n);
NEXTOK_API bool nextok_vocab_is_eog(const struct nextok_vocab *v, int32_t id);
/* Add id to the end-of-generation set. Not thread-safe: call before sharing v. */
NEXTOK_API nextok_status nextok_vocab_add_eog(struct nextok_vocab *v, int32_t id);

/* BPE merges in priority order (GGUF tokenizer.ggml.merges, tokenizer.json
 * model.merges); 0 for other models. */
NEXTOK_API size_t nextok_vocab_n_merges(const struct nextok_vocab *v);
/* Merge i as two strings pointing into v (not NUL-terminated). */
NEXTOK_API nextok_status nextok_vocab_merge(const struct nextok_vocab *v, size_t i,
        const char **left, size_t *left_len, const char **right, size_t *right_len);

/* --- encoding text to ids ----------------------------------------------------
 *
 * Text (UTF-8) to ids as the vocabulary's own tokenizer does it: HF
 * tokenizers for tokenizer.json, llama.cpp for GGUF, tiktoken for ranks
 * files. The pipeline: added tokens are split out of the text (leftmost,
 * longest first); each stretch between them goes through the normalizer
 * (Prepend, Replace, NFC/NFD/NFKC/NFKD, Lowercase, StripAccents,
 * BertNormalizer; Unicode through utf8proc), the pre-tokenizer (Split by
 * regex or string, ByteLevel, Metaspace, Digits, WhitespaceSplit,
 * BertPreTokenizer; regexes through PCRE2) and the model (BPE by merge rank,
 * by token rank for tiktoken, by score for GGUF SentencePiece; Unigram;
 * WordPiece; byte fallback, unknown tokens). What is supported per format,
 * and where nextok follows which reference, is in docs/text.md.
 *
 * A vocabulary nextok cannot encode (GGUF t5, a normalizer or pre-tokenizer
 * it does not run, a build without PCRE2 or utf8proc where the vocabulary
 * needs them) loads and decodes as before; nextok_encoder_init then fails
 * with NEXTOK_ERR_UNSUPPORTED saying why.
 */
struct nextok_encode_params {
    /* Split special tokens written in the text ("<|eot_id|>", "<s>") out as
     * their ids. Off (the default): they are plain text. Added tokens that
     * are not special are always split out (HF and llama.cpp do the same). */
    bool parse_special;
    /* Add BOS / EOS: -1 as the vocabulary says (nextok_vocab_adds_bos/eos;
     * the default), 0 never, 1 always (NEXTOK_ERR_INVALID_ARG at init when
     * the vocabulary has no such token). */
    int add_bos;
    int add_eos;
    /* The encoder's memory (NULL: the C library's). */
    const struct nextok_allocator *allocator;
};
NEXTOK_API struct nextok_encode_params nextok_encode_default_params(void);

/* An encoder: the scratch one thread needs to encode with a shared,
 * read-only vocabulary (v must outlive it). After its buffers have grown to
 * the longest text seen, encoding allocates nothing. */
struct nextok_encoder;
NEXTOK_API nextok_status nextok_encoder_init(struct nextok_encoder **out, const struct nextok_vocab *v,
        const struct nextok_encode_params *params, struct nextok_error *err);
NEXTOK_API void nextok_encoder_free(struct nextok_encoder *e);
/* The message of the last failed nextok_encoder_encode ("" after a success). */
NEXTOK_API const char *nextok_encoder_errmsg(const struct nextok_encoder *e);
/* Encode text[0, len) into ids. *n_out receives the number of ids the whole
 * text gives; if it exceeds cap: NEXTOK_ERR_BUFFER_TOO_SMALL and ids holds
 * the first cap (ids may be NULL when cap is 0: a size query).
 * NEXTOK_ERR_INVALID_ARG for invalid UTF-8 (the message gives the byte
 * offset); NEXTOK_ERR_UNSUPPORTED when a character has no token, no byte
 * token and the vocabulary has no unknown token. */
NEXTOK_API nextok_status nextok_encoder_encode(struct nextok_encoder *e, const char *text, size_t len,
        int32_t *ids, size_t cap, size_t *n_out);
/* One call with a temporary encoder (allocates; use an encoder in loops).
 * params NULL: defaults. */
NEXTOK_API nextok_status nextok_vocab_encode(const struct nextok_vocab *v, const char *text, size_t len,
        const struct nextok_encode_params *params, int32_t *ids, size_t cap, size_t *n_out,
        struct nextok_error *err);

/* --- grammars -----------------------------------------------------------------
 *
 * Constrained decoding, first part: grammars compiled from GBNF, exactly as
 * llama.cpp reads GBNF (docs/grammars.md), and a reference recognizer. The
 * per-token matcher, token masks and the JSON Schema and regex front ends
 * come next.
 *
 * A compiled grammar is immutable: any number of threads may use it.
 */
struct nextok_grammar;
struct nextok_grammar_params {
    /* For <token> references (<[id]> needs none, but is then checked against
     * it). Must outlive the call only. NULL: none. */
    const struct nextok_vocab *vocab;
    /* The grammar's memory (NULL: the C library's). */
    const struct nextok_allocator *allocator;
};
NEXTOK_API struct nextok_grammar_params nextok_grammar_default_params(void);
/* Compile GBNF text[0, len) (UTF-8). NEXTOK_ERR_FORMAT with the place in the
 * message ("line 3, column 14: expecting ::="), or "undefined rule
 * identifier 'x'", "the grammar has no root rule", "left recursion through
 * rule 'x'"; limits (rules, elements, nesting, llama.cpp's repetition bound)
 * are FORMAT errors too. params NULL: defaults. */
NEXTOK_API nextok_status nextok_grammar_init_gbnf(struct nextok_grammar **out, const char *text,
        size_t len, const struct nextok_grammar_params *params, struct nextok_error *err);
/* The built-in grammar of any JSON value (RFC 8259, whitespace unbounded as
 * the RFC has it, around the value too). */
NEXTOK_API nextok_status nextok_grammar_init_json(struct nextok_grammar **out,
        const struct nextok_grammar_params *params, struct nextok_error *err);
/* A regular expression, matched against the whole text (as if between ^
 * and $): the ECMA-262 subset JSON Schema's `pattern` uses, over Unicode
 * code points (docs/grammars.md lists what is supported). A syntax error is
 * NEXTOK_ERR_FORMAT naming the column ("regex column 7: unmatched ')'"); a
 * feature that cannot be a grammar (backreferences, lookaround) is
 * NEXTOK_ERR_UNSUPPORTED naming it. */
NEXTOK_API nextok_status nextok_grammar_init_regex(struct nextok_grammar **out, const char *re,
        size_t len, const struct nextok_grammar_params *params, struct nextok_error *err);

/* JSON Schema to grammar. */
enum nextok_json_ws {
    NEXTOK_JSON_WS_FLEXIBLE = 0, /* up to max_ws whitespace characters where JSON allows them */
    NEXTOK_JSON_WS_COMPACT  = 1, /* none: {"a":1,"b":[1,2]}                                   */
};
/* Where an object's properties may come. */
enum nextok_json_order {
    NEXTOK_JSON_ORDER_SCHEMA = 0, /* as the schema lists them (then the additional ones)   */
    NEXTOK_JSON_ORDER_ANY    = 1, /* declared ones in any order, each once (then additional
                                   * ones); objects of at most 10 declared properties, else
                                   * NEXTOK_ERR_LIMIT                                        */
};
struct nextok_json_schema_params {
    enum nextok_json_ws whitespace; /* default NEXTOK_JSON_WS_FLEXIBLE                  */
    unsigned max_ws;                /* flexible: the bound per place (default 20, <= 64) */
    /* Objects without "additionalProperties" allow none (the spec's default
     * is to allow any; default false, as the spec says). */
    bool strict;
    /* Keywords that cannot be enforced exactly are ignored instead of
     * refused; each is reported to on_ignored (may be NULL) with its JSON
     * pointer. Default false: such a keyword is NEXTOK_ERR_UNSUPPORTED. */
    bool lenient;
    void (*on_ignored)(void *user, const char *pointer, const char *keyword);
    void *user;
    enum nextok_json_order order; /* default NEXTOK_JSON_ORDER_SCHEMA */
};
NEXTOK_API struct nextok_json_schema_params nextok_json_schema_default_params(void);
/* The grammar of the JSON texts that are instances of the schema (draft
 * 2020-12; draft-07 and draft-04 spellings accepted), properties in schema
 * order (or any: sp->order). Errors name the JSON pointer: NEXTOK_ERR_FORMAT for a schema that is
 * not valid JSON or not a valid schema ("/properties/a/minLength: must be a
 * non-negative integer"), NEXTOK_ERR_UNSUPPORTED for a keyword that cannot be
 * enforced exactly ("/properties/a: keyword 'uniqueItems' cannot be
 * enforced"). sp NULL: defaults. */
NEXTOK_API nextok_status nextok_grammar_init_json_schema(struct nextok_grammar **out,
        const char *schema, size_t len, const struct nextok_json_schema_params *sp,
        const struct nextok_grammar_params *params, struct nextok_error *err);
/* Lazy grammars: free text until a trigger, then g (how a tool call after
 * "<tool_call>", or the answer after "</think>", is constrained). The text
 * before the trigger is any UTF-8 text in which no trigger has fired (it may
 * also end there: a reply need not trigger). A trigger fires at the first
 * point where the text so far ends with a trigger word or with a match of a
 * trigger pattern (for a pattern that can match several lengths there, the
 * earliest end wins: "<call>\s*" fires right after "<call>"), or at a
 * trigger token; from there g's sentence must follow. Special tokens other
 * than the triggers are not allowed before the trigger.
 * words: UTF-8, not empty (word_lens NULL: NUL-terminated). patterns: the
 * regexes of nextok_grammar_init_regex (pattern_lens NULL: NUL-terminated),
 * without ^ and $ (NEXTOK_ERR_UNSUPPORTED) and not matching the empty string.
 * At least one word, pattern or token; 16384 bytes over all words and
 * patterns; the automaton they make is limited (NEXTOK_ERR_LIMIT). */
struct nextok_lazy_params {
    const char *const *words;
    const size_t *word_lens;
    size_t n_words;
    const int32_t *tokens;
    size_t n_tokens;
    const char *const *patterns;
    const size_t *pattern_lens;
    size_t n_patterns;
};
NEXTOK_API struct nextok_lazy_params nextok_lazy_default_params(void);
NEXTOK_API nextok_status nextok_grammar_init_lazy(struct nextok_grammar **out,
        const struct nextok_grammar *g, const struct nextok_lazy_params *lp,
        const struct nextok_grammar_params *params, struct nextok_error *err);
NEXTOK_API void nextok_grammar_free(struct nextok_grammar *g);
/* Rules, the generated ones (groups, repetitions) included. */
NEXTOK_API size_t nextok_grammar_n_rules(const struct nextok_grammar *g);
/* Whether text[0, len) (UTF-8) is a sentence of the root rule: an Earley
 * recognizer, exact for any grammar, meant as a reference (O(n^3) at worst;
 * texts of up to 2^20 characters; NEXTOK_ERR_INVALID_ARG past its work
 * limit or for invalid UTF-8). Token references never match text. */
NEXTOK_API nextok_status nextok_grammar_accepts(const struct nextok_grammar *g, const char *text,
        size_t len, bool *accepted, struct nextok_error *err);

/* --- token masks from a grammar ------------------------------------------------
 *
 * A compiled grammar binds a grammar to a vocabulary's token table: built
 * once, immutable, shared by any number of threads (the grammar may be
 * freed afterwards). A matcher follows one generation through it and gives
 * the exact mask of each step: token t is allowed iff its bytes
 * (nextok_vocab_token_bytes) extend the bytes accepted so far to a prefix of
 * some sentence of the grammar. Bytes are judged one at a time, so a token
 * that ends inside a UTF-8 character is allowed iff some completion of that
 * character continues a sentence. Special tokens (NEXTOK_TOKEN_ATTR_SPECIAL)
 * never match text; end-of-generation tokens are allowed exactly when the
 * grammar can end here (accepting one terminates the matcher); ids without a
 * token or without bytes are never allowed. Token references in GBNF
 * (<[id]>, !<[id]>) match whole tokens, not bytes.
 *
 * The mask uses the token bitmask layout above (NEXTOK_BITMASK_WORDS).
 * Every call either succeeds or changes nothing. A matcher and its clones
 * share a cache of parser states (guarded by a lock, so clones may live on
 * different threads); its size is bounded by max_cache_bytes: past it a call
 * fails with NEXTOK_ERR_LIMIT and the matcher is unchanged.
 */
struct nextok_token_table;
struct nextok_compiled_grammar;
struct nextok_matcher;

/* A vocabulary prepared for masks (its tokens' bytes as a trie, per-byte
 * token sets): built once per vocabulary (tens of ms for 128k tokens),
 * immutable, shared by every grammar compiled against it and by any number
 * of threads. The vocabulary may be freed afterwards. */
NEXTOK_API nextok_status nextok_token_table_init(struct nextok_token_table **out,
        const struct nextok_vocab *vocab, const struct nextok_allocator *allocator,
        struct nextok_error *err);
NEXTOK_API void nextok_token_table_free(struct nextok_token_table *tt);
NEXTOK_API int32_t nextok_token_table_n_vocab(const struct nextok_token_table *tt);

struct nextok_compile_params {
    size_t   max_cache_bytes; /* per matcher family (default 256 MiB)               */
    uint32_t max_stacks;      /* parser stacks alive at one point (default 4096)     */
    uint32_t max_work;        /* expansion steps per byte (default 1 000 000)        */
    const struct nextok_allocator *allocator; /* NULL: the C library's               */
};
NEXTOK_API struct nextok_compile_params nextok_compile_default_params(void);
/* Bind a grammar to a token table (tt must outlive the result; g need not).
 * Work proportional to the grammar only. NEXTOK_ERR_FORMAT when the grammar
 * matches nothing at all. p NULL: defaults. */
NEXTOK_API nextok_status nextok_compiled_grammar_init(struct nextok_compiled_grammar **out,
        const struct nextok_grammar *g, const struct nextok_token_table *tt,
        const struct nextok_compile_params *p, struct nextok_error *err);
NEXTOK_API void nextok_compiled_grammar_free(struct nextok_compiled_grammar *cg);
/* The vocabulary's size: masks cover ids [0, n_vocab). */
NEXTOK_API int32_t nextok_compiled_grammar_n_vocab(const struct nextok_compiled_grammar *cg);

/* A matcher at the start of the grammar. cg must outlive it. */
NEXTOK_API nextok_status nextok_matcher_init(struct nextok_matcher **out,
        const struct nextok_compiled_grammar *cg, struct nextok_error *err);
NEXTOK_API void nextok_matcher_free(struct nextok_matcher *m);
/* Write this step's mask: n_words >= NEXTOK_BITMASK_WORDS(n_vocab) (words
 * past the vocabulary are zeroed: a model with more rows than tokens gets
 * them masked). *n_allowed (may be NULL): how many bits are set.
 * NEXTOK_ERR_STATE once terminated. */
NEXTOK_API nextok_status nextok_matcher_fill_bitmask(struct nextok_matcher *m, int32_t *words,
        size_t n_words, size_t *n_allowed, struct nextok_error *err);
/* Whether one token is allowed now (cheaper than a full mask). */
NEXTOK_API nextok_status nextok_matcher_is_allowed(struct nextok_matcher *m, int32_t token,
        bool *allowed, struct nextok_error *err);
/* Advance by one token: NEXTOK_ERR_REJECTED when the mask would not allow
 * it, NEXTOK_ERR_TOKEN_RANGE for an id outside the vocabulary. */
NEXTOK_API nextok_status nextok_matcher_accept_token(struct nextok_matcher *m, int32_t token,
        struct nextok_error *err);
/* Advance by bytes (text the engine inserted, e.g. forced bytes): all or
 * nothing; NEXTOK_ERR_REJECTED when they leave the grammar. One step for
 * rollback. */
NEXTOK_API nextok_status nextok_matcher_accept_bytes(struct nextok_matcher *m, const void *bytes,
        size_t len, struct nextok_error *err);
/* Undo the last n accept calls (speculative decoding). NEXTOK_ERR_INVALID_ARG
 * when fewer were made since init or reset. */
NEXTOK_API nextok_status nextok_matcher_rollback(struct nextok_matcher *m, size_t n,
        struct nextok_error *err);
/* Back to the start (the state cache is kept). */
NEXTOK_API void nextok_matcher_reset(struct nextok_matcher *m);
/* An independent matcher in the same state (the cache is shared). */
NEXTOK_API nextok_status nextok_matcher_clone(struct nextok_matcher **out,
        const struct nextok_matcher *m, struct nextok_error *err);
/* The bytes so far are a sentence of the grammar (the end-of-generation
 * tokens are allowed). */
NEXTOK_API bool nextok_matcher_is_accepting(const struct nextok_matcher *m);
/* An end-of-generation token was accepted: nothing more can be. */
NEXTOK_API bool nextok_matcher_is_terminated(const struct nextok_matcher *m);
/* Jump-forward: the bytes every continuation must start with (up to cap;
 * stops where the grammar may end or branches). *len receives the count. */
NEXTOK_API nextok_status nextok_matcher_forced_bytes(struct nextok_matcher *m, char *out,
        size_t cap, size_t *len, struct nextok_error *err);
/* Accept calls made since init or reset (what rollback can undo). */
NEXTOK_API size_t nextok_matcher_n_steps(const struct nextok_matcher *m);
/* Accepting, and nothing but the end can follow: the grammar is complete. */
NEXTOK_API bool nextok_matcher_is_complete(struct nextok_matcher *m);

/* The grammar as a chain stage: a token-bitmask stage fed by a new matcher
 * over cg (put it with the processors, before filters and selectors, as
 * nextok_chain_add order has it). n_vocab: the logits row length, at least
 * the vocabulary's (ids past it are never allowed). cg must outlive it. */
NEXTOK_API nextok_status nextok_sampler_init_grammar(struct nextok_sampler **out,
        const struct nextok_compiled_grammar *cg, int32_t n_vocab, struct nextok_error *err);
/* A mask source over m (the stage that takes it owns m). */
NEXTOK_API void nextok_matcher_mask_source(struct nextok_matcher *m, struct nextok_mask_source *out);
/* The matcher behind a source made by the two above, else NULL: how to
 * reach a chain's matcher (nextok_chain_mask_source) for forced bytes,
 * rollback or is_accepting. */
NEXTOK_API struct nextok_matcher *nextok_mask_source_matcher(const struct nextok_mask_source *src);

/* --- decoding ids to text ----------------------------------------------------
 *
 * Decoding follows HF tokenizers' Tokenizer.decode(ids, skip_special_tokens):
 * every token (added ones too) goes through the tokenizer's decoder chain
 * (for GGUF files the chain HF uses for that model type; tiktoken: raw bytes),
 * and the resulting bytes are turned into UTF-8 text with one U+FFFD per
 * maximal invalid subsequence (Python's errors="replace", Rust's
 * from_utf8_lossy). Exact rules and the few places where HF differs (runs of
 * invalid byte-fallback tokens) are in docs/text.md.
 * For any ids, decode(ids) == concatenation of nextok_detok_feed() of each id,
 * then nextok_detok_flush(), byte for byte.
 */
struct nextok_decode_params {
    /* Leave out tokens with NEXTOK_TOKEN_ATTR_SPECIAL (HF skip_special_tokens). */
    bool skip_special_tokens;
    /* HF slow-tokenizer semantics (transformers' PreTrainedTokenizer._decode):
     * each added token is a segment of its own (its stored text, not through
     * the decoder), each run of other tokens is decoded as a sequence of its
     * own, and the non-empty segments are joined with one space. Off: the fast
     * tokenizer's decode, what vLLM and tokenizers do (the default). */
    bool spaces_between_special_tokens;
    /* nextok_detok_init's allocator for the detokenizer (and its clones);
     * decoding itself allocates nothing. NULL: the C library's. */
    const struct nextok_allocator *allocator;
};
NEXTOK_API struct nextok_decode_params nextok_decode_default_params(void);

/* Decode n ids into buf (not NUL-terminated). *n_out receives the size of the
 * whole text. If it exceeds cap: NEXTOK_ERR_BUFFER_TOO_SMALL, buf holds the
 * first cap bytes. buf may be NULL when cap is 0 (a size query).
 * NEXTOK_ERR_TOKEN_RANGE for an id outside [0, n_tokens) (buf untouched).
 * params NULL: defaults. Thread-safe on a shared v. */
NEXTOK_API nextok_status nextok_vocab_decode(const struct nextok_vocab *v, const int32_t *ids,
        size_t n, const struct nextok_decode_params *params, char *buf, size_t cap,
        size_t *n_out);

/*
 * Incremental detokenizer: feed ids as they are sampled, get text that is
 * final. Only complete, valid UTF-8 comes out; an incomplete multi-byte
 * character is held back until it completes or can no longer complete (then it
 * becomes one U+FFFD); nothing emitted is ever taken back. A U+FFFD that the
 * tokens really spell is passed through at once. Work per id is O(length of
 * its text): no history is kept or re-decoded, and nothing is allocated after
 * init. Holds at most 3 bytes of a partial character (plus up to `stop`
 * trailing characters of a Strip decoder, which no shipped tokenizer uses).
 */
struct nextok_detok;

NEXTOK_API nextok_status nextok_detok_init(struct nextok_detok **out, const struct nextok_vocab *v,
        const struct nextok_decode_params *params, struct nextok_error *err);
NEXTOK_API void nextok_detok_free(struct nextok_detok *d);
/* Forget everything: the next id starts a new text (first-token rules apply). */
NEXTOK_API void nextok_detok_reset(struct nextok_detok *d);
/* A copy with the same state (same vocabulary, same allocator). On failure
 * the message is on d. */
NEXTOK_API nextok_status nextok_detok_clone(const struct nextok_detok *d, struct nextok_detok **out);
/* Message of the last failed call on d ("" if none). */
NEXTOK_API const char *nextok_detok_errmsg(const struct nextok_detok *d);

/* Bytes held back now (a partial UTF-8 character, held Strip characters). */
NEXTOK_API size_t nextok_detok_held(const struct nextok_detok *d);
/* Most bytes that feeding n_ids ids and then flushing can write (saturates
 * at SIZE_MAX). A buffer of nextok_detok_bound(d, 1) bytes always takes one
 * nextok_detok_feed of one id, and one flush. */
NEXTOK_API size_t nextok_detok_bound(const struct nextok_detok *d, size_t n_ids);

/* Feed n ids; write the text that became final to buf and its size to *n_out.
 * All or nothing: if it does not fit in cap, NEXTOK_ERR_BUFFER_TOO_SMALL,
 * *n_out = the size needed, d unchanged (buf may hold partial data).
 * NEXTOK_ERR_TOKEN_RANGE for a bad id (nothing consumed). */
NEXTOK_API nextok_status nextok_detok_feed(struct nextok_detok *d, const int32_t *ids, size_t n,
                                           char *buf, size_t cap, size_t *n_out);
/* End of text: held bytes that can no longer complete come out as U+FFFD (a
 * held Strip tail is dropped). Same buffer contract as feed. The first-token
 * state is kept: call reset to start a new text. */
NEXTOK_API nextok_status nextok_detok_flush(struct nextok_detok *d, char *buf, size_t cap,
                                            size_t *n_out);

/* Streaming form in the style of zstd's ZSTD_compressStream2: consume ids
 * from in->src[in->pos..] while their text fits in out->dst[out->pos..]
 * (each id all or nothing), advancing both pos fields; with
 * NEXTOK_DETOK_END, flush once every id is consumed and the flush fits.
 * *held (may be NULL) receives nextok_detok_held() afterwards. Call again
 * with more room while in->pos < in->size (or, for END, while *held > 0).
 * Returns NEXTOK_OK when it made progress or had nothing to do;
 * NEXTOK_ERR_BUFFER_TOO_SMALL when the out room cannot take even the next
 * id's text (nothing changed); NEXTOK_ERR_TOKEN_RANGE if any remaining id is
 * bad (nothing consumed). */
struct nextok_ids_in {
    const int32_t *src;
    size_t size;
    size_t pos;
};
struct nextok_text_out {
    char  *dst;
    size_t size;
    size_t pos;
};
enum nextok_detok_directive {
    NEXTOK_DETOK_CONTINUE = 0, /* more ids will follow          */
    NEXTOK_DETOK_END      = 1, /* these are the last ids: flush */
};
NEXTOK_API nextok_status nextok_detok_stream(struct nextok_detok *d, struct nextok_ids_in *in,
        struct nextok_text_out *out, enum nextok_detok_directive directive, size_t *held);

/* ------------------------------------------------------------------------ */
/* Stop criteria and streaming sessions                                     */
/* ------------------------------------------------------------------------ */

/*
 * Stop criteria. A stop matcher decides when generation ends and which text the
 * client receives. It works on token ids and bytes only (no vocabulary), so it
 * can be used and tested alone; a session (below) feeds it for you.
 *
 * Per step the caller pushes the sampled token and the bytes of text it added
 * (from the detokenizer). The matcher writes the bytes that are safe to show
 * and holds back a tail that could still turn out to be the start of a stop
 * string (or of a stop-regex match, or of a stop token sequence).
 * Exact rules (docs/text.md, "Stop criteria and streaming"):
 *   - Finish order within one push: a stop string or regex match in the text
 *     wins over the token's own criteria (eos, stop token, stop sequence),
 *     which win over max_tokens.
 *   - Stop strings: one Aho–Corasick automaton over all of them; the match that
 *     ends first wins, and among matches ending at the same byte the longest.
 *     The result does not depend on how the text is split into pushes.
 *   - Holdback: after a push that did not finish, the held bytes are exactly the
 *     longest suffix of the text that is a proper prefix of some stop string,
 *     extended (up to max_hold bytes) for a partial regex match or a partial
 *     stop token sequence. emitted + held == all text pushed.
 *   - The stop string (or regex match, or stop token / sequence text) is left
 *     out of the output unless include_stop; text after it is dropped.
 *   - min_tokens: the first min_tokens tokens never finish (except by
 *     max_tokens); their text is released at once and can never be part of a
 *     stop string, regex or sequence match.
 * Matching allocates nothing, except PCRE2's backtracking memory for a regex
 * (kept in the matcher, made or grown by a match that needs more, through
 * the stop params' allocator).
 */

/* Why generation ended. Append only. */
enum nextok_finish {
    NEXTOK_FINISH_NONE          = 0, /* not finished                               */
    NEXTOK_FINISH_EOS           = 1, /* an end-of-generation token                 */
    NEXTOK_FINISH_STOP_TOKEN    = 2, /* one of stop_ids                            */
    NEXTOK_FINISH_STOP_SEQUENCE = 3, /* a stop token-id sequence                   */
    NEXTOK_FINISH_STOP_STRING   = 4, /* a stop string matched the text             */
    NEXTOK_FINISH_STOP_REGEX    = 5, /* the stop regex matched the text            */
    NEXTOK_FINISH_LENGTH        = 6, /* max_tokens reached                         */
    NEXTOK_FINISH_GRAMMAR       = 7, /* the session's grammar is complete          */
};
/* "none", "eos", "stop_token", "stop_sequence", "stop_string", "stop_regex",
 * "length", "grammar". Never NULL. */
NEXTOK_API const char *nextok_finish_name(enum nextok_finish f);

/* Total bytes of all stop strings together, at most. */
#define NEXTOK_STOP_MAX_BYTES 16384
/* Default cap on the regex / stop-sequence holdback (bytes). */
#define NEXTOK_STOP_DEFAULT_MAX_HOLD 256
/* Token value for a push of text that belongs to no new token. */
#define NEXTOK_NO_TOKEN (-1)

/* Arrays are copied at init. Start from nextok_stop_default_params(). */
struct nextok_stop_params {
    /* Stop strings (bytes; need not be UTF-8; not empty). string_lens NULL:
     * each is NUL-terminated. */
    const char *const *strings;
    const size_t *string_lens;
    size_t   n_strings;
    bool     include_stop;      /* keep the stop string / token text in the output */
    /* A PCRE2 pattern (UTF mode, NUL-terminated) or NULL. Builds without PCRE2
     * give NEXTOK_ERR_UNSUPPORTED. Empty matches never stop. The regex sees the
     * not yet released text (at most max_hold bytes are held for it). */
    const char *regex;
    size_t   max_hold;          /* 0: NEXTOK_STOP_DEFAULT_MAX_HOLD               */
    const int32_t *eog_ids;     /* end-of-generation ids (ids >= 0)              */
    size_t   n_eog;
    bool     ignore_eos;        /* eog ids do not stop (vLLM ignore_eos)         */
    const int32_t *stop_ids;    /* stop token ids                                */
    size_t   n_stop_ids;
    /* Stop token-id sequences, concatenated: sequence i is
     * seq_ids[seq_off[i] .. seq_off[i+1]) (n_seqs + 1 offsets, none empty). */
    const int32_t *seq_ids;
    const size_t  *seq_off;
    size_t   n_seqs;
    int32_t  max_tokens;        /* <= 0: no limit                                */
    int32_t  min_tokens;        /* <= 0: none; must be <= max_tokens if both set */
    /* The matcher's memory, PCRE2's for the regex included (copied; NULL:
     * the C library's). */
    const struct nextok_allocator *allocator;
};
NEXTOK_API struct nextok_stop_params nextok_stop_default_params(void);

/* What a push decided. */
struct nextok_stop_result {
    enum nextok_finish finish;
    /* Index into the params array that matched: strings (STOP_STRING), stop_ids
     * (STOP_TOKEN), sequences (STOP_SEQUENCE), eog_ids (EOS); -1 otherwise. */
    int32_t  which;
    size_t   held;              /* bytes held back after this push               */
};

/* Whether the push is the last one (zstd's ZSTD_e_continue / ZSTD_e_end). */
enum nextok_stop_directive {
    NEXTOK_STOP_CONTINUE = 0,
    /* The text ends here: match what is there (a regex match cut off by the
     * end of text does not count), release everything held, and end. */
    NEXTOK_STOP_END      = 1,
};

struct nextok_stop;

/* Errors: INVALID_ARG (names the field), UNSUPPORTED (regex without PCRE2),
 * FORMAT (regex does not compile: message has PCRE2's text and offset), NOMEM
 * (PCRE2's compiling included). */
NEXTOK_API nextok_status nextok_stop_init(struct nextok_stop **out,
        const struct nextok_stop_params *params, struct nextok_error *err);
NEXTOK_API void nextok_stop_free(struct nextok_stop *s);
/* Message of the last failed call on s ("" if none). */
NEXTOK_API const char *nextok_stop_errmsg(const struct nextok_stop *s);
/* Back to the state right after init (nothing pushed). */
NEXTOK_API void nextok_stop_reset(struct nextok_stop *s);
/* An independent copy, state included, on s's allocator. On failure the
 * message is on s. */
NEXTOK_API nextok_status nextok_stop_clone(const struct nextok_stop *s, struct nextok_stop **out);

/* Room a push of len bytes needs in out: bytes held now + len. */
NEXTOK_API size_t nextok_stop_out_bound(const struct nextok_stop *s, size_t len);

/*
 * Push one step: token (the accepted id, or NEXTOK_NO_TOKEN for text alone)
 * and the text[0..len) it added. Released bytes are written at
 * out->dst[out->pos..] and out->pos advances past them (the cursor of
 * nextok_detok_stream). out->size - out->pos must be at least
 * nextok_stop_out_bound(s, len) (else NEXTOK_ERR_BUFFER_TOO_SMALL); bytes
 * after the new out->pos are scratch. res (may be NULL) says whether it
 * finished and how many bytes are held. Once finished (or after
 * NEXTOK_STOP_END) every push fails with NEXTOK_ERR_STATE until
 * nextok_stop_reset(). A failed push changes nothing (except scratch bytes).
 * Errors: INVALID_ARG, STATE, BUFFER_TOO_SMALL, and with a regex INTERNAL or
 * NOMEM when PCRE2 fails (match or heap limit; the message says which).
 */
NEXTOK_API nextok_status nextok_stop_push(struct nextok_stop *s, int32_t token,
        const char *text, size_t len, enum nextok_stop_directive directive,
        struct nextok_text_out *out, struct nextok_stop_result *res);

/* Bytes held back now. */
NEXTOK_API size_t nextok_stop_held(const struct nextok_stop *s);
/* Tokens pushed since init/reset. */
NEXTOK_API int32_t nextok_stop_n_tokens(const struct nextok_stop *s);
/* How it finished (NONE while running, or after END without a stop). */
NEXTOK_API enum nextok_finish nextok_stop_finish(const struct nextok_stop *s, int32_t *which);
/* Stop string i as given (bytes, *len), or NULL. */
NEXTOK_API const char *nextok_stop_string(const struct nextok_stop *s, size_t i, size_t *len);

/*
 * Sessions: one generation stream. A session owns a sampler chain (built from
 * nextok_sampling_params by nextok_chain_init_sampling, with a min-tokens
 * stage when min_tokens > 0), a detokenizer and a stop matcher. Each step
 * samples a token from a logits row, accepts it into the chain, decodes it and
 * runs the stop criteria; it returns the token and the text a client should
 * see now. Nothing is allocated per step.
 *
 * Contracts:
 *   - A failed step changes nothing: the chain, detokenizer and stop state are
 *     as before (the one exception is the chain's own: a user sampler's
 *     accept failing after another user sampler's, see Memory).
 *   - After a step (or nextok_session_finish) that finished, every step fails
 *     with NEXTOK_ERR_STATE until nextok_session_reset().
 *   - The text of a finishing step includes everything still held (partial
 *     UTF-8 becomes U+FFFD; a held stop-string prefix is released), except
 *     what the stop rules leave out.
 *   - Sampled ids with no token in the vocabulary (a model whose logits row
 *     is wider than its tokenizer) decode to no text.
 *   - One session must not be used from two threads at once; the vocabulary
 *     may be shared.
 */
struct nextok_session;

struct nextok_session_params {
    /* Required. n_vocab is the logits row length. The session's min-tokens
     * stage suppresses the stop params' end ids and stop ids plus these
     * eog_ids; arrays are borrowed during init. */
    const struct nextok_sampling_params *sampling;
    /* NULL: no stop strings etc. With eog_ids NULL and n_eog 0 the vocabulary's
     * end-of-generation ids are used. min_tokens <= 0 takes the sampling
     * params' min_tokens. Copied at init. */
    const struct nextok_stop_params *stop;
    /* NULL: nextok_decode_default_params(). */
    const struct nextok_decode_params *decode;
    /* Required; borrowed: must outlive the session (and its clones). */
    const struct nextok_vocab *vocab;
    bool   logprobs;             /* fill logprob and rank of the sampled token     */
    size_t top_logprobs;         /* alternatives per step, with their token bytes   */
    enum nextok_logprobs_source logprobs_source;
    /* NULL: none. Otherwise the chain gets a token-bitmask stage fed by a
     * matcher over it (nextok_sampler_init_grammar), and generation ends
     * with NEXTOK_FINISH_GRAMMAR at the token after which the grammar is
     * complete (accepting, nothing else can follow; an end-of-generation
     * token still ends it as NEXTOK_FINISH_EOS). Borrowed: must outlive the
     * session and its clones. */
    const struct nextok_compiled_grammar *grammar;
    /* Everything the session makes: its chain and samplers (this one, not
     * sampling->allocator), detokenizer, stop matcher and buffers (copied;
     * NULL: the C library's). The stop and decode params' allocators are
     * not used. */
    const struct nextok_allocator *allocator;
};
NEXTOK_API struct nextok_session_params nextok_session_default_params(void);

/* One alternative at a step. */
struct nextok_top_logprob {
    int32_t     id;
    float       logprob;
    const char *bytes;  /* nextok_vocab_token_bytes(); points into the vocabulary */
    size_t      len;
};

struct nextok_step_result {
    int32_t token;               /* the sampled token (-1 from session_finish)   */
    /* Text the client receives now: possibly empty, NUL-terminated (it may also
     * contain NUL bytes: use text_len). Owned by the session, valid until the
     * next call on it. */
    const char *text;
    size_t  text_len;
    enum nextok_finish finish;   /* NONE while generating                        */
    int32_t which;               /* as nextok_stop_result.which                  */
    float   logprob;             /* logprobs on: the token's; else NAN           */
    int32_t rank;                /* 1-based; 0 when not in the distribution      */
    /* top_logprobs entries, best first; owned by the session like text. */
    const struct nextok_top_logprob *top;
    size_t  n_top;
};

/* Errors: INVALID_ARG (names the field), what the chain, detokenizer and stop
 * constructors return, NOMEM. */
NEXTOK_API nextok_status nextok_session_init(struct nextok_session **out,
        const struct nextok_session_params *params, struct nextok_error *err);
NEXTOK_API void nextok_session_free(struct nextok_session *s);
/* Message of the last failed call on s ("" if none). */
NEXTOK_API const char *nextok_session_errmsg(const struct nextok_session *s);
/* Prompt tokens for the chain (penalties, DRY, n-grams); the last one also sets
 * the detokenizer's context, so the first output token decodes as a
 * continuation (a SentencePiece "▁Hello" keeps its space, as in vLLM). Only
 * before the first step (NEXTOK_ERR_STATE after). */
NEXTOK_API nextok_status nextok_session_set_prompt(struct nextok_session *s, const int32_t *ids,
                                                   size_t n);
/* This step's token bitmask (the sampling params need token_bitmask):
 * nextok_chain_set_token_bitmask on the session's chain. */
NEXTOK_API nextok_status nextok_session_set_token_bitmask(struct nextok_session *s,
        const int32_t *words, size_t n_words);
/* Sample from a row of n_vocab logits, accept, decode, check the stop rules. */
NEXTOK_API nextok_status nextok_session_step(struct nextok_session *s, const void *logits,
        enum nextok_dtype dtype, struct nextok_step_result *res);
/* End the stream now (the caller stops early): flush held text into res->text.
 * res->finish is NONE unless the flushed text completes a stop match. */
NEXTOK_API nextok_status nextok_session_finish(struct nextok_session *s,
                                               struct nextok_step_result *res);
/* Back to the state after init: no prompt, no output. */
NEXTOK_API void nextok_session_reset(struct nextok_session *s);
/* An independent copy with the same state (for beams and parallel samples),
 * on s's allocator. On failure the message is on s. */
NEXTOK_API nextok_status nextok_session_clone(const struct nextok_session *s,
                                              struct nextok_session **out);
/* Tokens generated so far. */
NEXTOK_API int32_t nextok_session_n_tokens(const struct nextok_session *s);
/* The session's chain, for inspection (nextok_chain_get, ...). Do not add or
 * remove samplers while the session uses it. */
NEXTOK_API struct nextok_chain *nextok_session_chain(const struct nextok_session *s);

/* ------------------------------------------------------------------------ */
/* CPU features                                                              */
/* ------------------------------------------------------------------------ */

NEXTOK_API bool nextok_cpu_has_avx2(void);
NEXTOK_API bool nextok_cpu_has_avx512(void);

#ifdef __cplusplus
}
#endif

#endif /* NEXTOK_H */
