/* Internal interface of the thread pool (threadpool.c). */
#ifndef NEXTOK_THREADPOOL_H
#define NEXTOK_THREADPOOL_H

#include "../common/internal.h"

/* Run fn(ctx, i) for every i in [0, n_items) on the pool's threads and the
 * caller; returns when all are done. pool NULL: all on the caller. */
void nextok__pool_run(struct nextok_threadpool *pool, void (*fn)(void *ctx, size_t i), void *ctx,
                      size_t n_items);

#endif
