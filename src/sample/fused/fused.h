/*
 * The fused path as the chain sees it (src/sample/chain.c, batch.c,
 * logprobs.c). Internal, not API.
 *
 * A chain whose stages start with ones the fused path knows (processors, at
 * most one temperature, then top-k, top-1, min-p, top-n-sigma, top-p,
 * typical-p, Mirostat v2 or dist) hands each row to nextok__fused_run
 * first. The fused path runs that prefix without materialising and sorting
 * the vocabulary and leaves exactly the candidates the plain chain would
 * leave there (same ids, order, values and `sorted` flag), and the index of
 * the first stage the chain must still run itself. When a dist ends the
 * prefix, the result is a distribution object (struct nextok__dist): the
 * canonical weights of every candidate, dense by id, which probs, logprobs
 * and sample_n read through the functions below instead of a candidate
 * array. docs/fastpath.md describes the routes.
 *
 * The fused path never fails a row: anything it cannot do exactly (a
 * non-finite value, a stage it does not know, memory) hands the row back,
 * and the plain chain gives the result and the errors.
 */
#ifndef NEXTOK_FUSED_H
#define NEXTOK_FUSED_H

#include "../arch/canonical.h"
#include "../../common/alloc.h"

struct nextok__fused; /* plan and workspace, one per chain */
struct nextok__dist;  /* a dense result                   */

/* What the fused path reads of a chain. */
struct nextok__fz_chain {
    struct nextok_sampler *const *stages;
    size_t n_stages;
    uint64_t step;
    int32_t n_vocab;
    struct nextok_token_data *work; /* n_vocab candidates of scratch */
    const struct nextok__mem *mem;  /* the chain's: the workspace is allocated with it */
};

/* Run the fused prefix of chain c on a row (*f: the chain's workspace,
 * created on first use). Returns true when it ran: *out holds the
 * candidates the chain's stage *tail starts from (work entries, or just the
 * drawn token when the result is dense: nextok__fused_dist then returns it).
 * false: the row is the plain chain's (nothing changed). */
bool nextok__fused_run(struct nextok__fused **f, const struct nextok__fz_chain *c, const void *row,
                       enum nextok_dtype dt, struct nextok_token_data_array *out, size_t *tail);

/* The stages changed (add/remove): the plan is built again on the next row. */
void nextok__fused_invalidate(struct nextok__fused *f);
void nextok__fused_free(struct nextok__fused *f);

/* Ask for the cache lines the next row's call reads first (its touched
 * logits, the chain's state): for a batch, whose thread issues it for the row
 * it samples next. Only the thread that samples that chain next may call it;
 * it allocates nothing. */
void nextok__fused_prefetch(struct nextok__fused *f, const struct nextok__fz_chain *c,
                            const void *row, enum nextok_dtype dt);

/* ---- the distribution object ------------------------------------------------ */

/* The dense result of the last run, or NULL when that run left candidates
 * (or did not run). */
const struct nextok__dist *nextok__fused_dist(const struct nextok__fused *f);
/* Forget the dense result (its reader listed it: nextok__dist_materialize). */
void nextok__fused_drop_dist(struct nextok__fused *f);
/* The weights as a canonical set (block sums, running sums, Z): what the
 * categorical walk and the logprobs read. */
void nextok__dist_wset(const struct nextok__dist *d, struct nextok__wset *set);
/* The token the run drew. */
int32_t nextok__dist_token(const struct nextok__dist *d);
/* Every candidate of the set, in id order, with its processed logit and p =
 * w / Z, into out (n_vocab entries): the array the plain chain's dist would
 * have left. row must be the run's row. Returns the count; *selected = the
 * index of the drawn token. */
size_t nextok__dist_materialize(const struct nextok__dist *d, const void *row, enum nextok_dtype dt,
                                struct nextok_token_data *out, int64_t *selected);

#endif
