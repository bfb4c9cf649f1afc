/*
 * A fixed pool of worker threads for batch calls. The calling thread takes
 * part, so a pool of n threads starts n - 1 workers. A job is a function over
 * item indices [0, n_items); items are handed out one at a time from an
 * atomic counter, so a slow row never holds up the others. Which thread runs
 * which item never matters to the result: every item writes only its own
 * outputs. Callers of one pool are serialised by run_mu.
 */
#include "threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

struct nextok_threadpool {
    size_t n_threads;        /* including the caller */
    pthread_t *workers;      /* n_threads - 1 */
    pthread_mutex_t run_mu;  /* one job at a time */
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    uint64_t generation;     /* bumped per job (under mu) */
    bool stop;
    size_t active;           /* workers still in the current job (under mu) */
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    size_t n_items;
    atomic_size_t next;
};

static void drain(struct nextok_threadpool *p)
{
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (i >= p->n_items) return;
        p->fn(p->ctx, i);
    }
}

static void *worker_main(void *arg)
{
    struct nextok_threadpool *p = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->generation == seen) pthread_cond_wait(&p->cv_work, &p->mu);
        if (p->stop) break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        drain(p);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0) pthread_cond_signal(&p->cv_done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static size_t online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

static void stop_workers(struct nextok_threadpool *p, size_t started)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < started; i++) pthread_join(p->workers[i], NULL);
}

static void destroy(struct nextok_threadpool *p)
{
    pthread_cond_destroy(&p->cv_done);
    pthread_cond_destroy(&p->cv_work);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->run_mu);
    nextok__free(&nextok__mem_libc, p->workers);
    nextok__free(&nextok__mem_libc, p);
}

nextok_status nextok_threadpool_init(struct nextok_threadpool **out, size_t n_threads)
{
    if (!out) return NEXTOK_ERR_INVALID_ARG;
    *out = NULL;
    if (n_threads == 0) n_threads = online_cpus();
    if (n_threads > 1024) return NEXTOK_ERR_INVALID_ARG;
    /* a pool takes no allocator (nextok.h): the C library's */
    struct nextok_threadpool *p = nextok__calloc(&nextok__mem_libc, 1, sizeof *p);
    if (!p) return NEXTOK_ERR_NOMEM;
    p->n_threads = n_threads;
    p->workers = nextok__calloc(&nextok__mem_libc, n_threads, sizeof *p->workers);
    pthread_mutex_init(&p->run_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_work, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    atomic_init(&p->next, 0);
    if (!p->workers) {
        destroy(p);
        return NEXTOK_ERR_NOMEM;
    }
    for (size_t i = 0; i + 1 < n_threads; i++) {
        if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0) {
            stop_workers(p, i);
            destroy(p);
            return NEXTOK_ERR_NOMEM;
        }
    }
    *out = p;
    return NEXTOK_OK;
}

void nextok_threadpool_free(struct nextok_threadpool *p)
{
    if (!p) return;
    stop_workers(p, p->n_threads - 1);
    destroy(p);
}

size_t nextok_threadpool_size(const struct nextok_threadpool *p) { return p ? p->n_threads : 0; }

void nextok__pool_run(struct nextok_threadpool *p, void (*fn)(void *ctx, size_t i), void *ctx,
                      size_t n_items)
{
    if (!p || p->n_threads == 1 || n_items <= 1) {
        for (size_t i = 0; i < n_items; i++) fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&p->run_mu);
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->n_items = n_items;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->active = p->n_threads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->cv_work);
    pthread_mutex_unlock(&p->mu);
    drain(p);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0) pthread_cond_wait(&p->cv_done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->run_mu);
}
