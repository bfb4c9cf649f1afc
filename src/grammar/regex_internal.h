/*
 * The regex to GBNF converter (regex.c, which says what it supports), shared
 * by its files. Not installed, not API. The files use each other one way:
 *
 *   regex.c        the GBNF writer, nextok__regex_to_gbnf and
 *                  nextok_grammar_init_regex                  (uses the two below)
 *   regex_parse.c  the parser into the small tree: nodes, escapes, classes,
 *                  groups, quantifiers, alternatives          (uses regex_sets.c)
 *   regex_sets.c   growing arrays, sets of code points as sorted range
 *                  lists, the class escapes \d \w \s, the line terminators `.`
 *                  leaves out
 */
#ifndef NEXTOK_REGEX_INTERNAL_H
#define NEXTOK_REGEX_INTERNAL_H

#include "grammar_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NEXTOK__RE_INF    UINT32_MAX /* no upper bound */
#define NEXTOK__RE_MAX_CP 0x10FFFFu

enum nextok__re_kind {
    NEXTOK__RE_EMPTY, /* the empty string                                     */
    NEXTOK__RE_SET,   /* one code point of a set: a = first range, n = ranges */
    NEXTOK__RE_CAT,   /* kids in order: a = first kid, n = kids               */
    NEXTOK__RE_ALT,   /* one of the kids                                      */
    NEXTOK__RE_REP,   /* kid a, min to max times                              */
};

enum {
    NEXTOK__RE_ANCHOR_START = 1,
    NEXTOK__RE_ANCHOR_END = 2
};

struct nextok__re_node {
    uint8_t kind;     /* enum nextok__re_kind */
    uint8_t nullable; /* matches the empty string */
    uint8_t anchors;  /* a top-level alternative's ^ and $ */
    uint32_t a, n;
    uint32_t min, max; /* NEXTOK__RE_REP */
};

struct nextok__re_range {
    uint32_t lo, hi;
};

struct nextok__re_parser {
    const char *src, *p, *end;
    const struct nextok__mem *mem;
    struct nextok_error *err;
    struct nextok__re_node *node;
    size_t n_node, cap_node;
    uint32_t *kid; /* the kids of CAT and ALT nodes */
    size_t n_kid, cap_kid;
    uint32_t *tmp; /* kids being collected, innermost list last */
    size_t n_tmp, cap_tmp;
    struct nextok__re_range *rng; /* sets' ranges */
    size_t n_rng, cap_rng;
    int depth;
};

/* ---- regex_sets.c ------------------------------------------------------------ */

nextok_status nextok__re_nomem(struct nextok_error *err);

/* Room for one more element of size bytes in *v (n used of *cap). */
nextok_status nextok__re_reserve(struct nextok__re_parser *r, void **v, size_t n, size_t *cap,
                                 size_t size);

/* [lo, hi] appended to the range list. */
nextok_status nextok__re_rng_push(struct nextok__re_parser *r, uint32_t lo, uint32_t hi);

/* One of \d \D \w \W \s \S: its ranges appended (not normalized). */
nextok_status nextok__re_rng_class_escape(struct nextok__re_parser *r, char c);

/* The line terminators \n \r U+2028 U+2029 appended (`.` is the rest). */
nextok_status nextok__re_rng_line_end(struct nextok__re_parser *r);

/* The ranges from base on as a set has them: normalized, negated if asked,
 * surrogates taken out (UTF-8 text never holds them). */
nextok_status nextok__re_rng_finish(struct nextok__re_parser *r, size_t base, bool negate);

/* ---- regex_parse.c ----------------------------------------------------------- */

/* re[0, len) (len < 2^28: node and range indices stay in 32 bits) parsed
 * into *r, which is zeroed first and is nextok__re_free'd whatever this
 * returns; *root is an ALT of the top-level alternatives. Errors:
 * NEXTOK_ERR_FORMAT, NEXTOK_ERR_UNSUPPORTED, NEXTOK_ERR_NOMEM, in err. */
nextok_status nextok__re_parse(struct nextok__re_parser *r, const char *re, size_t len,
                               const struct nextok__mem *mem, struct nextok_error *err,
                               uint32_t *root);
void nextok__re_free(struct nextok__re_parser *r);

#endif
