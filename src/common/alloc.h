/*
 * Allocation through the caller's hook (struct nextok_allocator). Not
 * installed, not API.
 *
 * Every object resolves its nextok_allocator once, at init, into a
 * struct nextok__mem it keeps (a copy: the caller's struct need not
 * outlive the call), and allocates, grows and frees only through it. This
 * module is the only place in src/ that calls the C library's malloc
 * family: nextok__mem_libc is that allocator as a hook.
 */
#ifndef NEXTOK_ALLOC_H
#define NEXTOK_ALLOC_H

#include "nextok.h"

#include <stddef.h>

/* A resolved allocator: all three functions are set. */
struct nextok__mem {
    void *(*alloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *ptr, size_t size);
    void  (*free)(void *user, void *ptr);
    void  *user;
};

/* malloc, realloc and free of the C library. */
extern const struct nextok__mem nextok__mem_libc;

/* a NULL: the C library's; all three functions: a copy of them. Some but not
 * all three: NEXTOK_ERR_INVALID_ARG (out untouched). */
nextok_status nextok__mem_resolve(struct nextok__mem *out, const struct nextok_allocator *a);
/* The same, saying what is wrong in err (for a constructor's params). */
nextok_status nextok__mem_resolve_err(struct nextok__mem *out, const struct nextok_allocator *a,
                                      struct nextok_error *err);

/* size bytes (at least 1: the hook never sees 0); NULL on failure. */
void *nextok__alloc(const struct nextok__mem *m, size_t size);
/* n * size zeroed bytes; NULL on failure or when n * size overflows. */
void *nextok__calloc(const struct nextok__mem *m, size_t n, size_t size);
/* n * size bytes, uninitialised; NULL when n * size overflows. */
void *nextok__alloc_array(const struct nextok__mem *m, size_t n, size_t size);
/* Resize p (NULL: allocate) to size bytes (at least 1). NULL on failure,
 * and then p is still valid and unchanged. */
void *nextok__realloc(const struct nextok__mem *m, void *p, size_t size);
/* Free p (NULL: nothing). */
void  nextok__free(const struct nextok__mem *m, void *p);
/* A copy of p[0..size) (size 0: a 1-byte block); NULL on failure. */
void *nextok__memdup(const struct nextok__mem *m, const void *p, size_t size);

#endif /* NEXTOK_ALLOC_H */
