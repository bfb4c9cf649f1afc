/* The chain's private layout, shared with the fused path and logprobs. */
#ifndef NEXTOK_CHAIN_INTERNAL_H
#define NEXTOK_CHAIN_INTERNAL_H

#include "../common/internal.h"

struct nextok__fused; /* fused-path plan and workspace (fused.c) */

struct nextok_chain {
    struct nextok_chain_params params;
    struct nextok_sampler **samplers;
    size_t n, cap;
    uint64_t step;

    struct nextok_token_data *work;      /* n_vocab candidates, allocated at init */
    struct nextok_token_data_array last; /* final candidates of the last call     */
    bool last_valid;
    bool last_fused;
    bool last_dense; /* fused dist: the distribution is dense in the fused
                        workspace; c->last holds only the token until
                        nextok__fused_materialize */

    struct nextok__fused *fused;         /* lazily built plan (NULL: none yet)    */
    bool plan_valid;                     /* false after add/remove                */

    nextok_stage_fn observer;
    void *observer_user;
    char errmsg[NEXTOK_ERRMSG_MAX];
};

nextok_status nextok__chain_fail(struct nextok_chain *c, nextok_status rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*
 * Fused path (fused.c). If the chain's samplers form a fusable sequence, run it:
 * set *handled, leave the final candidates (with p, selected) in c->last and
 * return the status. Otherwise set *handled = false and touch nothing.
 */
nextok_status nextok__fused_run(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype,
                                bool *handled);
void nextok__fused_prefetch(struct nextok_chain *c, const void *row, enum nextok_dtype dt);
void nextok__fused_free(struct nextok__fused *f);
/* Turn a dense fused result into the chain's c->last (no-op otherwise); row
 * is the row of that call. */
void nextok__fused_materialize(struct nextok_chain *c, const void *row, enum nextok_dtype dt);
struct nextok__wset;
bool nextok__fused_dense_set(const struct nextok_chain *c, struct nextok__wset *set);

#endif
