/*
 * A small pull scanner for JSON (RFC 8259), used where json-c is too slow:
 * tokenizer.json's model.vocab and model.merges hold hundreds of thousands of
 * strings, and a json-c tree of Llama 3's file takes ~100 ms to build and
 * ~25 ms to free. The scanner builds nothing: strings are decoded straight into the
 * caller's buffer, everything else is validated and skipped.
 * Each function returns false on a syntax error and records where and why.
 */
#ifndef NEXTOK_JSCAN_H
#define NEXTOK_JSCAN_H

#include "vocab_internal.h"

/* Same nesting limit as json-c's default, so both accept the same documents. */
#define NEXTOK__JS_MAX_DEPTH 32

struct nextok__js {
    const char *base, *p, *end;
    int depth;
    const char *err_at;   /* where the error was found         */
    const char *err_what; /* static text, NULL while no error  */
    bool nomem;           /* the error was a failed allocation */
};

void nextok__js_init(struct nextok__js *s, const char *data, size_t size);
/* The next non-space character, or -1 at the end (does not consume it). */
int  nextok__js_peek(struct nextok__js *s);
/* Decode the string at the cursor and append its bytes to out. */
bool nextok__js_string(struct nextok__js *s, struct nextok__buf *out);
/* Skip one value of any kind. */
bool nextok__js_skip(struct nextok__js *s);
/* An integer value (no fraction or exponent). */
bool nextok__js_int(struct nextok__js *s, int64_t *v);
/* Any number value. */
bool nextok__js_number(struct nextok__js *s, double *v);
/* Enter the object or array at the cursor ('{' or '['). */
bool nextok__js_enter(struct nextok__js *s, char open);
/* Next object member: 1 (key appended to key, which may be NULL; ':'
 * consumed), 0 at the closing '}' (consumed), -1 on error. */
int  nextok__js_member(struct nextok__js *s, bool *first, struct nextok__buf *key);
/* Next array element: 1 (cursor on it), 0 at the closing ']', -1 on error. */
int  nextok__js_element(struct nextok__js *s, bool *first);
/* Only whitespace left. */
bool nextok__js_at_end(struct nextok__js *s);
/* Byte offset of the cursor or of the error. */
size_t nextok__js_offset(const struct nextok__js *s);

#endif /* NEXTOK_JSCAN_H */
