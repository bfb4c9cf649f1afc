/*
 * Built-in sampler identities and parameters, shared by the sampler files,
 * the profile builder and the fused planner. Each built-in sampler's ctx
 * struct starts with its nextok__p_* parameter struct, so the planner can read
 * parameters as `(const struct nextok__p_x *)nextok_sampler_ctx(s)` once
 * nextok__sampler_kind(s) told it the kind.
 */
#ifndef NEXTOK_BUILTIN_H
#define NEXTOK_BUILTIN_H

#include "../common/internal.h"

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
    NEXTOK__K_COUNT
};

/* One static interface table per built-in sampler (defined in its family file). */
extern const struct nextok_sampler_i nextok__iface_logit_bias, nextok__iface_allowed,
    nextok__iface_banned, nextok__iface_penalties, nextok__iface_dry,
    nextok__iface_no_repeat_ngram, nextok__iface_min_tokens, nextok__iface_temp,
    nextok__iface_temp_ext, nextok__iface_top_k, nextok__iface_top_p, nextok__iface_min_p,
    nextok__iface_typical, nextok__iface_top_n_sigma, nextok__iface_xtc, nextok__iface_epsilon,
    nextok__iface_eta, nextok__iface_greedy, nextok__iface_dist, nextok__iface_gumbel,
    nextok__iface_mirostat, nextok__iface_mirostat_v2;

enum nextok__kind nextok__sampler_kind(const struct nextok_sampler *s);

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

/*
 * Processors whose effect is confined to a few ids (logit bias, banned,
 * min-tokens, penalties, DRY, no-repeat-n-gram) list those ids so the fused
 * path can apply the processor to a small candidate array holding just them
 * (its ordinary apply) instead of the whole row. Writes up to cap ids to ids,
 * the total number to *n (may exceed cap: then call again with a bigger
 * buffer). Ids are unique. Returns false for a sampler that is not such a
 * processor.
 */
bool nextok__processor_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap, size_t *n);

/* Per-kind touched-id functions (implemented next to each processor). */
size_t nextok__bias_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__banned_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__min_tokens_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__penalties_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__dry_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
size_t nextok__ngram_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap);
/* The whitelist of an allowed-sampler (sorted ascending, unique). */
const int32_t *nextok__allowed_ids(const struct nextok_sampler *s, size_t *n);

/* Entropy (nats) of softmax(cur) in double; optionally the max logit and
 * Z = sum exp(l - max). Defined in typical.c. */
double nextok__cand_entropy(const struct nextok_token_data_array *cur, double *max_logit,
                            double *z);

/* The id-order categorical draw (docs/semantics.md, categorical), with its
 * scratch; shared by dist and mirostat. Defined in select.c. */
struct nextok__catdraw;
struct nextok__catdraw *nextok__catdraw_new(size_t reserve);
void nextok__catdraw_free(struct nextok__catdraw *d);
nextok_status nextok__catdraw_run(struct nextok__catdraw *d, struct nextok_token_data_array *cur,
                                  uint64_t seed, uint64_t step, double *prob_out);
/* Just the canonical weights of cur in id order (*set points into d). */
struct nextok__wset;
bool nextok__catdraw_weights(struct nextok__catdraw *d, const struct nextok_token_data_array *cur,
                             struct nextok__wset *set, const int32_t **ids);

/* Canonical weights of a candidate set in id order and the categorical draw
 * over them (docs/semantics.md; weights.c). Sparse sets (the chain) have
 * bstart; a dense row indexed by token id (the fused path) has bstart NULL
 * and block k = ids 64k .. 64k+63. */
struct nextok__wref;

struct nextok__wset {
    const float *w;       /* weights, ids ascending                */
    size_t n;
    const double *cum;    /* running sums of the block sums        */
    const size_t *bstart; /* first index of each block; NULL: 64 k */
    size_t nb;
    double z;             /* cum[nb - 1]                           */
    const double *bsum;   /* dense sets (bstart NULL): block sums; a block
                           * of sum 0 may hold unwritten weights (fused
                           * top-p skips the groups it proves empty), so
                           * readers of every weight skip it. NULL: every
                           * weight is valid. */
};
size_t nextok__wset_sparse(const int32_t *ids, const float *w, size_t n, double *cum,
                           size_t *bstart);
double nextok__wset_cum(const double *bsum, size_t from, size_t nb, double *cum);
size_t nextok__wset_draw(const struct nextok__wset *s, double u);

/* Top-p mass (docs/semantics.md, top-p): candidate i of a set of n weighs
 * q_i = floor(w_i 2^s) with w_i its canonical weight and s =
 * nextok__mass_shift(n), an integer; sums of q are exact (n 2^s <= 2^62), so
 * they do not depend on the order of the additions. */
unsigned nextok__mass_shift(size_t n);
static inline uint64_t nextok__mass_q(float w, float scale /* 2^s */)
{
    /* w scale (a canonical weight, below 2, times 2^s; scale may also hold
     * the fused path's 2^-N) is exact and below 2^62: truncation = floor.
     * The clamp only tames values a caller subtracts again (NaN included). */
    const float x = w * scale;
    return (uint64_t)(int64_t)(x < 0x1p62f ? x : 0x1p62f);
}
/* ceil(p Q) exactly (p in (0, 1)). */
uint64_t nextok__mass_target(float p, uint64_t q);

/* Mirostat v2 (mirostat.c): keep candidates with (double)l >= this (m the
 * float maximum, z the canonical Z relative to it, mu the state). */
double nextok__miro2_threshold(const struct nextok__wref *ref, double z, float mu);
/* Mirostat's draw on an already truncated set (the fused path), remembering
 * the distribution for accept. */
nextok_status nextok__mirostat_draw(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                    uint64_t step);

/* Saturate to ±FLT_MAX so processed logits stay finite. */
static inline float nextok__sat(float x)
{
    if (x > 3.40282347e38f) return 3.40282347e38f;
    if (x < -3.40282347e38f) return -3.40282347e38f;
    return x;
}

#endif
