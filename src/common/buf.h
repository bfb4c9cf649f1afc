/* A growable byte buffer, for load-time work (readers, builders). Not
 * installed, not API. */
#ifndef NEXTOK_BUF_H
#define NEXTOK_BUF_H

#include "internal.h"

struct nextok__buf {
    char  *data;
    size_t len;
    size_t cap;
    const struct nextok__mem *mem; /* set before the first use; must outlive the buffer */
};

/* An empty buffer that allocates with mem. */
static inline struct nextok__buf nextok__buf_of(const struct nextok__mem *mem)
{
    return (struct nextok__buf){NULL, 0, 0, mem};
}

/* Make room for extra more bytes by reallocating (the slow path of
 * nextok__buf_reserve). NOMEM leaves b as it was. */
nextok_status nextok__buf_grow(struct nextok__buf *b, size_t extra);
/* Release the storage; b is empty (and reusable, with the same mem) afterwards. */
void          nextok__buf_free(struct nextok__buf *b);

/* Make room for extra more bytes. Inline: readers append millions of short
 * strings. */
static inline nextok_status nextok__buf_reserve(struct nextok__buf *b, size_t extra)
{
    return extra <= b->cap - b->len ? NEXTOK_OK : nextok__buf_grow(b, extra);
}

static inline nextok_status nextok__buf_append(struct nextok__buf *b, const void *src, size_t n)
{
    nextok_status rc = nextok__buf_reserve(b, n);
    if (rc != NEXTOK_OK) return rc;
    if (n) memcpy(b->data + b->len, src, n);
    b->len += n;
    return NEXTOK_OK;
}

#endif /* NEXTOK_BUF_H */
