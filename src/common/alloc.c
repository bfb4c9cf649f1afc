/*
 * The allocator hook (see alloc.h). The only file of the library that calls
 * malloc, realloc and free: everything else goes through a struct
 * nextok__mem, so a caller's allocator sees (and may fail) every block.
 */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *libc_alloc(void *user, size_t size)
{
    (void)user;
    return malloc(size);
}

static void *libc_realloc(void *user, void *ptr, size_t size)
{
    (void)user;
    return realloc(ptr, size);
}

static void libc_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

const struct nextok__mem nextok__mem_libc = {libc_alloc, libc_realloc, libc_free, NULL};

nextok_status nextok__mem_resolve(struct nextok__mem *out, const struct nextok_allocator *a)
{
    if (!a || (!a->alloc && !a->realloc && !a->free)) {
        *out = nextok__mem_libc;
        return NEXTOK_OK;
    }
    if (!a->alloc || !a->realloc || !a->free) return NEXTOK_ERR_INVALID_ARG;
    *out = (struct nextok__mem){a->alloc, a->realloc, a->free, a->user};
    return NEXTOK_OK;
}

nextok_status nextok__mem_resolve_err(struct nextok__mem *out, const struct nextok_allocator *a,
                                      struct nextok_error *err)
{
    NEXTOK_RETURN_IF(nextok__mem_resolve(out, a) != NEXTOK_OK, err, NEXTOK_ERR_INVALID_ARG,
                     "allocator: alloc, realloc and free must be all set or all NULL");
    return NEXTOK_OK;
}

void *nextok__alloc(const struct nextok__mem *m, size_t size)
{
    return m->alloc(m->user, size ? size : 1);
}

void *nextok__alloc_array(const struct nextok__mem *m, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    return nextok__alloc(m, n * size);
}

void *nextok__calloc(const struct nextok__mem *m, size_t n, size_t size)
{
    void *p = nextok__alloc_array(m, n, size);
    if (p && n && size) memset(p, 0, n * size);
    return p;
}

void *nextok__realloc(const struct nextok__mem *m, void *p, size_t size)
{
    if (!p) return nextok__alloc(m, size);
    return m->realloc(m->user, p, size ? size : 1);
}

void nextok__free(const struct nextok__mem *m, void *p)
{
    if (p) m->free(m->user, p);
}

void *nextok__memdup(const struct nextok__mem *m, const void *p, size_t size)
{
    void *q = nextok__alloc(m, size);
    if (q && size) memcpy(q, p, size);
    return q;
}
