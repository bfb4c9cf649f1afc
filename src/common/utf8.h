/* UTF-8 encoding and decoding of single characters. Not installed, not API. */
#ifndef NEXTOK_UTF8_H
#define NEXTOK_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1..4; s has len > 0 bytes) and
 * its code point in *cp; 0 when the bytes there are not valid UTF-8
 * (overlong forms, surrogates and code points past U+10FFFF included). */
size_t nextok__utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* Write code point cp (at most U+10FFFF, not a surrogate) as UTF-8 to out;
 * returns the number of bytes (1..4). */
size_t nextok__utf8_encode(uint32_t cp, char out[4]);

/* The sequence length a lead byte announces (1 for ASCII), without
 * validating it: for "is this one character" checks on trusted text. */
static inline size_t nextok__utf8_lead_len(unsigned char c)
{
    return c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
}

/* Length of the UTF-8 byte order mark some editors put at the start of a
 * file: 3 when text[0, n) starts with one, else 0. */
static inline size_t nextok__utf8_bom_len(const char *text, size_t n)
{
    return n >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
                   (unsigned char)text[2] == 0xBF
               ? 3
               : 0;
}

#endif /* NEXTOK_UTF8_H */
