/* Growable byte buffer (see buf.h). */
#include "buf.h"

#include <stdint.h>

nextok_status nextok__buf_grow(struct nextok__buf *b, size_t extra)
{
    if (extra > SIZE_MAX / 2 - b->len) return NEXTOK_ERR_NOMEM;
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->len < extra) cap *= 2;
    char *p = nextok__realloc(b->mem, b->data, cap);
    if (!p) return NEXTOK_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return NEXTOK_OK;
}

void nextok__buf_free(struct nextok__buf *b)
{
    if (b->data) nextok__free(b->mem, b->data);
    *b = nextok__buf_of(b->mem);
}
