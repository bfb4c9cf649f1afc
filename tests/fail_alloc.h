/* An allocator hook that fails the fail_at-th call (counting alloc and
 * realloc) and counts the blocks alive, for the tests that make every
 * allocation of a run fail in turn: set fail_at, zero calls and live, run,
 * then live must be 0, and calls < fail_at means nothing failed (the run
 * is complete). One copy per test program (static). */
#ifndef NEXTOK_TEST_FAIL_ALLOC_H
#define NEXTOK_TEST_FAIL_ALLOC_H

#include "nextok.h"

#include <stdlib.h>

static long fail_at, calls, live;

static void *f_alloc(void *u, size_t n)
{
    (void)u;
    if (++calls == fail_at) return NULL;
    void *p = malloc(n);
    if (p) live++;
    return p;
}

static void *f_realloc(void *u, void *p, size_t n)
{
    (void)u;
    if (++calls == fail_at) return NULL;
    void *q = realloc(p, n);
    if (q && !p) live++;
    return q;
}

static void f_free(void *u, void *p)
{
    (void)u;
    if (p) live--;
    free(p);
}

#endif
