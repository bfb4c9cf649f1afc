/*
 * Standard base64, the encoding side, for tiktoken vocabularies written by
 * tests and fuzz targets (the library only decodes it). Header-only.
 */
#ifndef NEXTOK_TEST_BASE64_H
#define NEXTOK_TEST_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* n bytes into out (4 * ceil(n / 3) characters, no terminator); returns the
 * length. */
static inline size_t h_base64(const unsigned char *s, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = i + 1 < n ? a[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? a[v & 63] : '=';
    }
    return o;
}

#endif /* NEXTOK_TEST_BASE64_H */
