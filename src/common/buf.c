/* Growable byte buffer (see buf.h). */
#include "buf.h"

#include <stdint.h>

nextok_status nextok__buf_grow(struct nextok__buf *b, size_t extra)
{
    if (extra > SIZE_MAX / 2 - b->len) return NEXTOK_ERR_NOMEM;
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->len < extra) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return NEXTOK_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return NEXTOK_OK;
}

void nextok__buf_free(struct nextok__buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}
