/* The chain's private layout, shared by chain.c, batch.c and logprobs.c. */
#ifndef NEXTOK_CHAIN_INTERNAL_H
#define NEXTOK_CHAIN_INTERNAL_H

#include "builtin.h"
#include "fused/fused.h"

struct nextok_chain {
    struct nextok_chain_params params;   /* params.allocator: NULL (see mem)      */
    struct nextok__mem mem;              /* the chain's own blocks                */
    struct nextok_sampler **samplers;
    size_t n, cap;
    uint64_t step;

    struct nextok_token_data *work;      /* n_vocab candidates, allocated at init */
    struct nextok_token_data_array last; /* final candidates of the last call     */
    bool last_valid;
    bool last_fused;                     /* the fused path ran the last call: when */
                                         /* its result is dense (nextok__chain_   */
                                         /* dist), c->last holds just the token   */

    struct nextok__fused *fused;         /* fused plan and workspace (lazy)       */
    struct nextok__catdraw *draw;        /* sample_n's scratch (lazy)             */

    nextok_stage_fn observer;
    void *observer_user;
    char errmsg[NEXTOK_ERRMSG_MAX];
};

nextok_status nextok__chain_fail(struct nextok_chain *c, nextok_status rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The dense distribution of the last call (the fused path's), or NULL when
 * c->last holds the final candidates. */
static inline const struct nextok__dist *nextok__chain_dist(const struct nextok_chain *c)
{
    return c->last_valid && c->last_fused ? nextok__fused_dist(c->fused) : NULL;
}

#endif
