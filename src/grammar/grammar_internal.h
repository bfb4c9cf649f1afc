/* Grammars: the compiled form every front end (GBNF now; JSON Schema and
 * regex later) produces, and what the recognizer and (later) the matcher
 * read. Not installed, not API.
 *
 * The form is llama.cpp's: a rule is a flat list of elements, alternatives
 * separated by ALT and closed by END; a character set is one CHAR or
 * CHAR_NOT element followed by CHAR_ALT / CHAR_RNG_UPPER elements. Groups
 * and repetitions are rewritten into generated rules while parsing, as
 * llama.cpp rewrites them, so the language of every rule is the same. */
#ifndef NEXTOK_GRAMMAR_INTERNAL_H
#define NEXTOK_GRAMMAR_INTERNAL_H

#include "../common/buf.h"
#include "../common/internal.h"

#include <stdbool.h>
#include <stdint.h>

enum nextok__gtype {
    NEXTOK__G_END,            /* end of the rule                                   */
    NEXTOK__G_ALT,            /* start of another alternative                      */
    NEXTOK__G_RULE_REF,       /* value: rule id                                    */
    NEXTOK__G_CHAR,           /* value: code point; starts a character set         */
    NEXTOK__G_CHAR_NOT,       /* value: code point; starts a negated set           */
    NEXTOK__G_CHAR_RNG_UPPER, /* value: the upper end of the range just before */
    NEXTOK__G_CHAR_ALT,       /* value: one more code point of the set             */
    NEXTOK__G_CHAR_ANY,       /* any code point                                    */
    NEXTOK__G_TOKEN,          /* value: token id                                   */
    NEXTOK__G_TOKEN_NOT,      /* value: token id; any token but it                 */
};

struct nextok__gel {
    uint32_t type; /* enum nextok__gtype */
    uint32_t value;
};

/* Limits: a grammar beyond them is refused with a message, never a hang or
 * unbounded memory. The repetition limit is llama.cpp's. */
#define NEXTOK__G_MAX_REPEAT   2000u
#define NEXTOK__G_MAX_RULES    (1u << 16)
/* trigger_dfa.c: append to out the rules lz<q> of a lazy grammar's free part
 * (lz0 the start): text until it ends with one of lp's words or a match of
 * one of its patterns, or a trigger token, each then followed by the rule
 * grammar_root. Errors: INVALID_ARG (empty word or pattern, bad UTF-8),
 * FORMAT and UNSUPPORTED (a pattern's regex, anchors), LIMIT, NOMEM. */
nextok_status nextok__lazy_free_part(struct nextok__buf *out, const struct nextok__mem *mem,
                                     const struct nextok_lazy_params *lp,
                                     const char *grammar_root, struct nextok_error *err);

/* The same for GBNF made by a front end (JSON Schema, regex): a string of
 * up to 65 536 characters is one counted repetition (one rule per copy),
 * which the matcher keeps cheap; elements stay bounded by the limit below. */
#define NEXTOK__G_MAX_REPEAT_FE (1u << 16)
#define NEXTOK__G_MAX_RULES_FE  (1u << 20)
#define NEXTOK__G_MAX_ELEMENTS (1u << 22)
#define NEXTOK__G_MAX_DEPTH    256 /* nested groups */

struct nextok_grammar {
    struct nextok__mem mem;
    struct nextok__gel *el; /* every rule's elements, one after another */
    size_t n_el;
    uint32_t *rule_start; /* rule id -> its first element in el */
    uint32_t n_rules;
    uint32_t root;
    char *names; /* NUL-separated names of the rules, in id order */
};

/* gbnf.c: parse GBNF text into g (g->mem set, the rest empty); front_end:
 * the front ends' larger repetition and rule bounds. Errors:
 * NEXTOK_ERR_FORMAT "line L, column C: ..." for the text, NOMEM,
 * NEXTOK_ERR_INVALID_ARG for a <token> reference without a vocabulary. */
struct nextok_vocab;
nextok_status nextok__gbnf_parse(struct nextok_grammar *g, const char *src, size_t len,
                                 const struct nextok_vocab *vocab, bool front_end,
                                 struct nextok_error *err);

/* earley.c: whether text[0, len) (valid UTF-8) is a sentence of g's root.
 * NOMEM; NEXTOK_ERR_LIMIT-like failures are NEXTOK_ERR_INVALID_ARG with a
 * message when the work bound is hit. Token elements never match text. */
nextok_status nextok__earley_accepts(const struct nextok_grammar *g, const char *text, size_t len,
                                     bool *accepted, struct nextok_error *err);

/* regex.c: append GBNF rules to out whose rule `name` matches the strings
 * the regex re[0, len) matches (ECMA-262 subset, code points). Other rules
 * it needs are named `name` + "-" + suffix. Flags:
 *  NEXTOK__RE_SEARCH      JSON Schema `pattern` semantics: unanchored search
 *                         (an implicit .* before and after unless ^ / $ pin
 *                         that end); without it the whole text must match.
 *  NEXTOK__RE_JSON_STRING the rule matches the body of a JSON string (no
 *                         quotes) whose decoded value is such a string:
 *                         '"', '\\' and U+0000-U+001F only in escaped form.
 * Errors: NEXTOK_ERR_FORMAT "regex column C: ...", NEXTOK_ERR_UNSUPPORTED
 * "regex column C: backreferences cannot be a grammar", NOMEM. */
#define NEXTOK__RE_SEARCH      1u
#define NEXTOK__RE_JSON_STRING 2u
nextok_status nextok__regex_to_gbnf(struct nextok__buf *out, const char *name, const char *re,
                                    size_t len, unsigned flags, struct nextok_error *err);

/* grammar.c: a grammar from GBNF text made by a front end (regex, schema):
 * parse and check as nextok_grammar_init_gbnf does. */
nextok_status nextok__grammar_from_gbnf(struct nextok_grammar **out, const char *text, size_t len,
                                        const struct nextok_grammar_params *params,
                                        struct nextok_error *err);

/* earley.c, for tests: whether text[0, len) (any bytes) is a prefix of some
 * sentence of g, byte for byte: invalid UTF-8 is not; a final incomplete
 * character is when some completion of it continues a sentence. Slow (it
 * tries every code point for such a character), plain: the reference the
 * matcher's masks are checked against. */
nextok_status nextok__earley_viable(const struct nextok_grammar *g, const char *text, size_t len,
                                    bool *viable, struct nextok_error *err);

/* The name of rule id (for messages). */
const char *nextok__grammar_rule_name(const struct nextok_grammar *g, uint32_t id);

#endif /* NEXTOK_GRAMMAR_INTERNAL_H */
