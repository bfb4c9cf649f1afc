/*
 * The project's JSON reader (RFC 8259, strict), in two layers:
 *
 * - a pull scanner (json_scan.c) that builds nothing: strings are decoded
 *   straight into the caller's buffer, everything else is validated and
 *   skipped. tokenizer.json's model.vocab and model.merges hold hundreds of
 *   thousands of strings and go through it into the vocabulary's arena.
 * - a small tree (json_tree.c) over the scanner for everything else: one
 *   array of nodes and one buffer of decoded strings, so a document costs
 *   two growing allocations whatever its shape. Values under chosen key
 *   paths can be left as validated spans of the source (NEXTOK__JSON_RAW)
 *   for the scanner to read later.
 *
 * Strict means: no comments, trailing commas, single quotes, NaN/Infinity,
 * leading zeros, raw control characters in strings, lone surrogates in \u
 * escapes, or data after the value. Raw bytes >= 0x80 in strings are passed
 * through as they are (not checked to be UTF-8). Containers nest at most
 * NEXTOK__JS_MAX_DEPTH deep. A failure records where (byte offset) and why
 * (static text); a failed allocation is marked as such (nomem).
 */
#ifndef NEXTOK_JSON_H
#define NEXTOK_JSON_H

#include "buf.h"

#include <stdbool.h>
#include <stdint.h>

/* The nesting limit tokenizer.json has always had (json-c's default depth). */
#define NEXTOK__JS_MAX_DEPTH 32

/* ---- pull scanner ----------------------------------------------------------- */

struct nextok__js {
    const struct nextok__mem *mem; /* for long numbers, and the tree built over it */
    const char *base, *p, *end;
    int depth;
    const char *err_at;   /* where the error was found         */
    const char *err_what; /* static text, NULL while no error  */
    bool nomem;           /* the error was a failed allocation */
};

void nextok__js_init(struct nextok__js *s, const struct nextok__mem *mem, const char *data,
                     size_t size);
/* The next non-space character, or -1 at the end (does not consume it). */
int  nextok__js_peek(struct nextok__js *s);
/* Decode the string at the cursor and append its bytes to out (may be NULL). */
bool nextok__js_string(struct nextok__js *s, struct nextok__buf *out);
/* Skip one value of any kind. */
bool nextok__js_skip(struct nextok__js *s);
/* An integer value (no fraction or exponent) of at most 18 digits. */
bool nextok__js_int(struct nextok__js *s, int64_t *v);
/* Any number value. */
bool nextok__js_number(struct nextok__js *s, double *v);
/* Any number value: *is_int when it has no fraction or exponent; then *iv
 * holds it (saturated to the int64 range), otherwise *dv does. */
bool nextok__js_num(struct nextok__js *s, bool *is_int, int64_t *iv, double *dv);
/* The literal word ("true", "false" or "null") at the cursor. */
bool nextok__js_word(struct nextok__js *s, const char *word);
/* Enter the object or array at the cursor ('{' or '['). */
bool nextok__js_enter(struct nextok__js *s, char open);
/* Next object member: 1 (key appended to key, which may be NULL; ':'
 * consumed), 0 at the closing '}' (consumed), -1 on error. */
int  nextok__js_member(struct nextok__js *s, bool *first, struct nextok__buf *key);
/* Next array element: 1 (cursor on it), 0 at the closing ']', -1 on error. */
int  nextok__js_element(struct nextok__js *s, bool *first);
/* Only whitespace left. */
bool nextok__js_at_end(struct nextok__js *s);
/* Record an error at the cursor (what: static text); returns false. */
bool nextok__js_fail(struct nextok__js *s, const char *what);
/* Record a failed allocation at the cursor; returns false. */
bool nextok__js_nomem(struct nextok__js *s);
/* Byte offset of the cursor or of the error. */
size_t nextok__js_offset(const struct nextok__js *s);

/* ---- tree ------------------------------------------------------------------- */

enum nextok__json_type {
    NEXTOK__JSON_NONE,   /* no value: an absent member, NEXTOK__JSON_NO_NODE */
    NEXTOK__JSON_NULL,
    NEXTOK__JSON_FALSE,
    NEXTOK__JSON_TRUE,
    NEXTOK__JSON_INT,    /* a number without fraction or exponent */
    NEXTOK__JSON_REAL,   /* any other number */
    NEXTOK__JSON_STRING,
    NEXTOK__JSON_ARRAY,
    NEXTOK__JSON_OBJECT,
    NEXTOK__JSON_RAW,    /* validated but not parsed: a span of the source */
};

#define NEXTOK__JSON_NO_NODE UINT32_MAX

/* Nodes are in document order; a container's first element (an object's
 * first key) is the node right after it, and each element (key) links to the
 * next one of the same container. An object member is a STRING key node
 * followed by its value. */
struct nextok__json_node {
    uint8_t  type;        /* enum nextok__json_type */
    uint32_t next;        /* next element / key of the parent, or NO_NODE */
    size_t   len;         /* STRING: bytes; ARRAY, OBJECT: elements, members; RAW: bytes */
    size_t   off;         /* STRING: offset in str; RAW: offset in the source */
    union {
        int64_t i;        /* INT, saturated to the int64 range */
        double  d;        /* REAL */
    } num;
};

struct nextok__json {
    const struct nextok__mem *mem; /* the scanner's, set by the parse */
    struct nextok__json_node *node;
    uint32_t n, cap;
    struct nextok__buf str; /* decoded strings, each followed by a NUL */
};

/* Parse the value at s's cursor into doc (zero-initialised, or reset by
 * nextok__json_free), allocating with s->mem; the caller checks what follows
 * it. raw: NULL, or a
 * NULL-terminated list of key paths (each a NULL-terminated list of keys from
 * the top-level object down) whose values are only validated and kept as RAW
 * spans. false: the error is in s, doc holds what was built (free it). */
bool nextok__json_parse(struct nextok__json *doc, struct nextok__js *s,
                        const char *const *const *raw);
void nextok__json_free(struct nextok__json *doc);
/* Parse the whole of text[0, n) as one document whose top level must be an
 * object (node 0). Errors name the file: FORMAT "<file>: byte N: <why>",
 * NOMEM "<file>: out of memory"; free doc in every case. */
nextok_status nextok__json_parse_object(struct nextok__json *doc, const struct nextok__mem *mem,
                                        const char *text, size_t n,
                                        const char *const *const *raw, const char *file,
                                        struct nextok_error *err);

static inline enum nextok__json_type nextok__json_type(const struct nextok__json *d, uint32_t v)
{
    return v < d->n ? (enum nextok__json_type)d->node[v].type : NEXTOK__JSON_NONE;
}

/* The value of obj's member key (NUL-terminated, compared byte for byte), or
 * NO_NODE when obj is not an object or has no such member. When a key
 * repeats, the last one counts (as in json-c, serde_json, Python). */
uint32_t nextok__json_get(const struct nextok__json *d, uint32_t obj, const char *key);
/* First element of an array, first key of an object; NO_NODE when empty or
 * not a container. */
uint32_t nextok__json_first(const struct nextok__json *d, uint32_t v);
/* The element (key) after e in its container, or NO_NODE. */
static inline uint32_t nextok__json_next(const struct nextok__json *d, uint32_t e)
{
    return e < d->n ? d->node[e].next : NEXTOK__JSON_NO_NODE;
}
/* A STRING's bytes (NUL-terminated; *len excludes the NUL, and the string
 * may hold NULs of its own), or NULL for any other type. */
const char *nextok__json_str(const struct nextok__json *d, uint32_t v, size_t *len);
/* Whether v is an INT; *out receives it. */
bool nextok__json_int(const struct nextok__json *d, uint32_t v, int64_t *out);
/* Elements of an array, members of an object, 0 otherwise. */
size_t nextok__json_len(const struct nextok__json *d, uint32_t v);

#endif /* NEXTOK_JSON_H */
