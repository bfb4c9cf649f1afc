/*
 * Built-in sampler identities and parameters, shared by the sampler files,
 * the profile builder and the fused path. Each built-in sampler's ctx struct
 * starts with its nextok__p_* parameter struct, so the fused planner reads
 * parameters as `(const struct nextok__p_x *)s->ctx` once
 * nextok__sampler_kind(s) told it the kind. Types and inline accessors only:
 * the fused path (src/sample/fused/, below this module) includes this header
 * but calls nothing defined here; what it needs of a stage at run time it
 * reaches through the stage's ops table (struct nextok__stage_ops).
 */
#ifndef NEXTOK_BUILTIN_H
#define NEXTOK_BUILTIN_H

#include "../common/internal.h"
#include "arch/canonical.h"

enum nextok__kind {
    NEXTOK__K_USER = 0,
    NEXTOK__K_LOGIT_BIAS,
    NEXTOK__K_ALLOWED,
    NEXTOK__K_BANNED,
    NEXTOK__K_PENALTIES,
    NEXTOK__K_DRY,
    NEXTOK__K_NO_REPEAT_NGRAM,
    NEXTOK__K_MIN_TOKENS,
    NEXTOK__K_TEMP,
    NEXTOK__K_TEMP_EXT,
    NEXTOK__K_TOP_K,
    NEXTOK__K_TOP_P,
    NEXTOK__K_MIN_P,
    NEXTOK__K_TYPICAL,
    NEXTOK__K_TOP_N_SIGMA,
    NEXTOK__K_XTC,
    NEXTOK__K_EPSILON,
    NEXTOK__K_ETA,
    NEXTOK__K_GREEDY,
    NEXTOK__K_DIST,
    NEXTOK__K_GUMBEL,
    NEXTOK__K_MIROSTAT,
    NEXTOK__K_MIROSTAT_V2,
    NEXTOK__K_TOKEN_BITMASK,
    NEXTOK__K_COUNT
};

/* One static interface table per built-in sampler (defined in its family file). */
extern const struct nextok_sampler_i nextok__iface_logit_bias, nextok__iface_allowed,
    nextok__iface_banned, nextok__iface_penalties, nextok__iface_dry,
    nextok__iface_no_repeat_ngram, nextok__iface_min_tokens, nextok__iface_temp,
    nextok__iface_temp_ext, nextok__iface_top_k, nextok__iface_top_p, nextok__iface_min_p,
    nextok__iface_typical, nextok__iface_top_n_sigma, nextok__iface_xtc, nextok__iface_epsilon,
    nextok__iface_eta, nextok__iface_greedy, nextok__iface_dist, nextok__iface_gumbel,
    nextok__iface_mirostat, nextok__iface_mirostat_v2, nextok__iface_token_bitmask;

/* The kind of s (set at construction; NEXTOK__K_USER for user samplers). */
static inline enum nextok__kind nextok__sampler_kind(const struct nextok_sampler *s)
{
    return s ? (enum nextok__kind)s->kind : NEXTOK__K_USER;
}

/*
 * What the fused path calls on a built-in stage, beyond its vtable (NULL
 * where a kind has none). Function pointers, so that the fused path, which
 * the samplers' module sits on, never names a symbol of it.
 */
struct nextok__stage_ops {
    /* Processors whose effect is confined to a few ids (logit bias, banned,
     * min-tokens, penalties, DRY, no-repeat-n-gram) list those ids, so the
     * fused path can apply the processor to a small candidate array holding
     * just them (its ordinary apply) instead of the whole row. Writes up to
     * cap ids and returns the total number (may exceed cap: call again with
     * a bigger buffer). Ids are unique. */
    size_t (*touched)(const struct nextok_sampler *s, int32_t *ids, size_t cap);
    /* The whitelist of an allowed-sampler (ascending, unique). */
    const int32_t *(*allowed)(const struct nextok_sampler *s, size_t *n);
    /* A selector's draw on a set that another engine truncated exactly as its
     * own apply would (mirostat v2's fused route), remembering the
     * distribution for accept. */
    nextok_status (*draw)(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                          uint64_t step);
    /* A token bitmask's words for this step (NULL: none set). */
    const uint32_t *(*bitmask)(const struct nextok_sampler *s);
    /* Make accept(token) unable to fail: check the token and grow what
     * recording it needs. Changes nothing the sampler's results depend on
     * (capacity only), so a chain can reserve on every stage before any
     * accepts. NULL: accept cannot fail. */
    nextok_status (*reserve)(struct nextok_sampler *s, int32_t token);
    /* The same for set_prompt(ids, n). NULL: set_prompt cannot fail. */
    nextok_status (*reserve_prompt)(struct nextok_sampler *s, const int32_t *ids, size_t n);
};

/* Wrap a sampler's ctx (allocated with mem) with its interface, kind and
 * ops (a built-in's, or NEXTOK__K_USER and NULL); the sampler keeps a copy
 * of mem. On NOMEM frees ctx through iface->free. */
nextok_status nextok__builtin_new(struct nextok_sampler **out, const struct nextok__mem *mem,
                                  const struct nextok_sampler_i *iface, enum nextok__kind kind,
                                  const struct nextok__stage_ops *ops, void *ctx,
                                  struct nextok_error *err);

/* ---- constructors with an allocator ---------------------------------------
 * nextok_sampler_init_<x>(out, ...) is nextok__init_<x>(out, &nextok__mem_libc,
 * ...); the profile builder passes the sampling params' allocator. */

nextok_status nextok__init_logit_bias(struct nextok_sampler **out, const struct nextok__mem *mem,
        int32_t n_vocab, const struct nextok_logit_bias *bias, size_t n, struct nextok_error *err);
nextok_status nextok__init_allowed(struct nextok_sampler **out, const struct nextok__mem *mem,
        int32_t n_vocab, const int32_t *ids, size_t n, struct nextok_error *err);
nextok_status nextok__init_banned(struct nextok_sampler **out, const struct nextok__mem *mem,
        int32_t n_vocab, const int32_t *ids, size_t n, struct nextok_error *err);
nextok_status nextok__init_penalties(struct nextok_sampler **out, const struct nextok__mem *mem,
        const struct nextok_penalty_params *params, struct nextok_error *err);
nextok_status nextok__init_dry(struct nextok_sampler **out, const struct nextok__mem *mem,
        const struct nextok_dry_params *params, struct nextok_error *err);
nextok_status nextok__init_no_repeat_ngram(struct nextok_sampler **out, const struct nextok__mem *mem,
        int32_t n_vocab, int32_t n, struct nextok_error *err);
nextok_status nextok__init_min_tokens(struct nextok_sampler **out, const struct nextok__mem *mem,
        int32_t n_vocab, int32_t min_tokens, const int32_t *eog_ids, size_t n_eog,
        struct nextok_error *err);
nextok_status nextok__init_temp(struct nextok_sampler **out, const struct nextok__mem *mem, float t,
        struct nextok_error *err);
nextok_status nextok__init_temp_ext(struct nextok_sampler **out, const struct nextok__mem *mem,
        float t, float range, float exponent, struct nextok_error *err);
nextok_status nextok__init_top_k(struct nextok_sampler **out, const struct nextok__mem *mem,
        int32_t k, enum nextok_ties ties, struct nextok_error *err);
nextok_status nextok__init_top_p(struct nextok_sampler **out, const struct nextok__mem *mem,
        float p, enum nextok_ties ties, size_t min_keep, struct nextok_error *err);
nextok_status nextok__init_min_p(struct nextok_sampler **out, const struct nextok__mem *mem,
        float p, size_t min_keep, struct nextok_error *err);
nextok_status nextok__init_typical(struct nextok_sampler **out, const struct nextok__mem *mem,
        float p, size_t min_keep, struct nextok_error *err);
nextok_status nextok__init_top_n_sigma(struct nextok_sampler **out, const struct nextok__mem *mem,
        float n, struct nextok_error *err);
nextok_status nextok__init_xtc(struct nextok_sampler **out, const struct nextok__mem *mem,
        float probability, float threshold, size_t min_keep, uint64_t seed,
        struct nextok_error *err);
nextok_status nextok__init_epsilon(struct nextok_sampler **out, const struct nextok__mem *mem,
        float epsilon, size_t min_keep, struct nextok_error *err);
nextok_status nextok__init_eta(struct nextok_sampler **out, const struct nextok__mem *mem,
        float eta, size_t min_keep, struct nextok_error *err);
nextok_status nextok__init_greedy(struct nextok_sampler **out, const struct nextok__mem *mem,
        struct nextok_error *err);
nextok_status nextok__init_dist(struct nextok_sampler **out, const struct nextok__mem *mem,
        uint64_t seed, struct nextok_error *err);
nextok_status nextok__init_gumbel(struct nextok_sampler **out, const struct nextok__mem *mem,
        uint64_t seed, struct nextok_error *err);
nextok_status nextok__init_mirostat(struct nextok_sampler **out, const struct nextok__mem *mem,
        int32_t n_vocab, uint64_t seed, float tau, float eta, int32_t m, struct nextok_error *err);
nextok_status nextok__init_mirostat_v2(struct nextok_sampler **out, const struct nextok__mem *mem,
        uint64_t seed, float tau, float eta, struct nextok_error *err);
nextok_status nextok__init_token_bitmask(struct nextok_sampler **out, const struct nextok__mem *mem,
        int32_t n_vocab, struct nextok_error *err);

/* ---- parameter structs (first member of each ctx) ----------------------- */

struct nextok__p_temp      { float t; };
struct nextok__p_temp_ext  { float t, range, exponent; };
struct nextok__p_top_k     { int32_t k; enum nextok_ties ties; };
struct nextok__p_top_p     { float p; enum nextok_ties ties; size_t min_keep; };
struct nextok__p_min_p     { float p; size_t min_keep; };
struct nextok__p_typical   { float p; size_t min_keep; };
struct nextok__p_sigma     { float n; };
struct nextok__p_xtc       { float probability, threshold; size_t min_keep; uint64_t seed; };
struct nextok__p_cutoff    { float value; size_t min_keep; };  /* epsilon and eta */
struct nextok__p_seed      { uint64_t seed; };                 /* dist, gumbel */
struct nextok__p_mirostat  { int32_t n_vocab; uint64_t seed; float tau, eta; int32_t m; float mu; };
struct nextok__p_min_tokens{ int32_t n_vocab, min_tokens; int32_t n_accepted; };

/* Per-kind touched-id functions (struct nextok__stage_ops.touched,
 * implemented next to each processor). */
size_t nextok__bias_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__banned_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__min_tokens_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__penalties_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__dry_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__ngram_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
/* The whitelist of an allowed-sampler (sorted ascending, unique). */
const int32_t *nextok__allowed_ids(const struct nextok_sampler *s, size_t *n);
/* A token bitmask's words for this step (NULL: none set). */
const uint32_t *nextok__bitmask_words(const struct nextok_sampler *s);
bool nextok__bitmask_check_first(const struct nextok_sampler *s);
void nextok__bitmask_unmasked(struct nextok_sampler *s, bool on);
nextok_status nextok__bitmask_allows(struct nextok_sampler *s, int32_t token, bool *allowed);

/* Entropy (nats) of softmax(cur) in double; optionally the max logit and
 * Z = sum exp(l - max). Defined in typical.c. */
double nextok__cand_entropy(const struct nextok_token_data_array *cur, double *max_logit,
                            double *z);

/* The id-order categorical draw (docs/semantics.md, categorical), with its
 * scratch; shared by dist and mirostat. Defined in select.c. */
struct nextok__catdraw;
struct nextok__catdraw *nextok__catdraw_new(const struct nextok__mem *mem, size_t reserve);
void nextok__catdraw_free(struct nextok__catdraw *d);
nextok_status nextok__catdraw_run(struct nextok__catdraw *d, struct nextok_token_data_array *cur,
                                  uint64_t seed, uint64_t step, double *prob_out);
/* Just the canonical weights of cur in id order (*set points into d). */
bool nextok__catdraw_weights(struct nextok__catdraw *d, const struct nextok_token_data_array *cur,
                             struct nextok__wset *set, const int32_t **ids);

/* Mirostat's draw on an already truncated set (its ops.draw), remembering
 * the distribution for accept. */
nextok_status nextok__mirostat_draw(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                    uint64_t step);

#endif
