/* Fuzz target: arbitrary bytes as a regular expression. Every mode (whole
 * text, search, JSON string body, both) converts it, or every mode refuses
 * it with the same status and a message, leaving the output as it was. A
 * pattern that converts compiles (or is refused as too large) and answers
 * for a few texts within the work limit, the modes agreeing: a whole match
 * is a search match, and a text's JSON-quoted form is accepted in a JSON
 * mode exactly when the text is accepted in the plain one. The same
 * pattern as a lazy grammar's trigger agrees with the search mode
 * (check_lazy). Nothing may crash, hang or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "grammar/grammar_internal.h"
#include "nextok.h"
#include "fuzz_reach.h"

#define N_MODES 4 /* the flags: 0 whole text, SEARCH, JSON_STRING, both */

static const char *const texts[] = {
    "",       "a",     "ab",    "abc",    "aaaa",
    "a\"b\\", "0-9_x", " \t\n", "xyzxyz", "\xc3\xa9\xf0\x9f\x98\x80",
    "\x01}]"};

/* Compile mode flags's GBNF (JSON modes between quotes); the whole-text
 * mode through the public function. OK, or FORMAT: too large. */
static nextok_status compile(struct nextok_grammar **g, const char *re, size_t len, unsigned flags,
                             const struct nextok__buf *text)
{
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status rc;
    if (flags == 0) {
        rc = nextok_grammar_init_regex(g, re, len, NULL, &err);
    } else {
        struct nextok__buf b = nextok__buf_of(&nextok__mem_libc);
        const char *wrap = "root ::= \"\\\"\" r \"\\\"\"\n";
        rc = nextok__buf_append(&b, text->data, text->len);
        if (rc == NEXTOK_OK && (flags & NEXTOK__RE_JSON_STRING))
            rc = nextok__buf_append(&b, wrap, strlen(wrap));
        if (rc == NEXTOK_OK) rc = nextok_grammar_init_gbnf(g, b.data, b.len, NULL, &err);
        nextok__buf_free(&b);
    }
    if (rc != NEXTOK_OK && (rc != NEXTOK_ERR_FORMAT || err.msg[0] == '\0')) abort();
    return rc;
}

static size_t json_quote(const char *s, size_t n, char *out)
{
    size_t k = 0;
    out[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\')
            k += (size_t)sprintf(out + k, "\\u%04x", c);
        else
            out[k++] = (char)c;
    }
    out[k++] = '"';
    return k;
}

/* 0 or 1; -1 past the work limit */
static int accepts(const struct nextok_grammar *g, const char *text, size_t len)
{
    bool yes = false;
    struct nextok_error err;
    nextok_status rc = nextok_grammar_accepts(g, text, len, &yes, &err);
    if (rc != NEXTOK_OK && rc != NEXTOK_ERR_INVALID_ARG) abort();
    return rc == NEXTOK_OK ? yes : -1;
}

/* The regex as a lazy grammar's trigger pattern, before an empty grammar:
 * a text with no match anywhere (the search grammar rejects it) must be
 * accepted as free text; one it rejects must hold a match. Anchors, empty
 * matches and the automaton's limits are refused with a message. */
static void check_lazy(const char *re, size_t size, const struct nextok_grammar *search)
{
    struct nextok_grammar *inner = NULL, *lz = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    if (nextok_grammar_init_gbnf(&inner, "root ::= \"\"", 11, NULL, &err) != NEXTOK_OK) abort();
    const char *pats[] = {re};
    struct nextok_lazy_params lp = nextok_lazy_default_params();
    lp.patterns = pats, lp.pattern_lens = &size, lp.n_patterns = 1;
    nextok_status rc = nextok_grammar_init_lazy(&lz, inner, &lp, NULL, &err);
    if (rc != NEXTOK_OK && err.msg[0] == '\0') abort();
    if (rc != NEXTOK_OK && rc != NEXTOK_ERR_UNSUPPORTED && rc != NEXTOK_ERR_INVALID_ARG &&
        rc != NEXTOK_ERR_LIMIT && rc != NEXTOK_ERR_FORMAT)
        abort();
    if (rc == NEXTOK_OK) fuzz_reached("lazy");
    for (size_t i = 0; lz && i < sizeof texts / sizeof texts[0]; i++) {
        size_t n = strlen(texts[i]);
        int found = accepts(search, texts[i], n), free_text = accepts(lz, texts[i], n);
        if (found == 0 && free_text == 0) abort();
    }
    nextok_grammar_free(lz);
    nextok_grammar_free(inner);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    const char *re = (const char *)data;
    struct nextok__buf text[N_MODES];
    nextok_status rc[N_MODES];
    for (unsigned f = 0; f < N_MODES; f++) {
        struct nextok_error err = {NEXTOK_OK, ""};
        text[f] = nextok__buf_of(&nextok__mem_libc);
        rc[f] = nextok__regex_to_gbnf(&text[f], f & NEXTOK__RE_JSON_STRING ? "r" : "root", re, size,
                                      f, &err);
        if (rc[f] != rc[0]) abort(); /* the parse does not depend on the mode */
        if (rc[f] != NEXTOK_OK && (err.msg[0] == '\0' || text[f].len != 0)) abort();
    }
    struct nextok_grammar *g[N_MODES] = {NULL};
    bool ok = rc[0] == NEXTOK_OK;
    if (!ok) fuzz_reached("refused");
    for (unsigned f = 0; f < N_MODES && ok; f++)
        ok = compile(&g[f], re, size, f, &text[f]) == NEXTOK_OK;
    if (ok) fuzz_reached("compiled");
    char quoted[128];
    for (size_t i = 0; ok && i < sizeof texts / sizeof texts[0]; i++) {
        size_t n = strlen(texts[i]), q = json_quote(texts[i], n, quoted);
        int full = accepts(g[0], texts[i], n), search = accepts(g[NEXTOK__RE_SEARCH], texts[i], n);
        int jfull = accepts(g[NEXTOK__RE_JSON_STRING], quoted, q);
        int jsearch = accepts(g[NEXTOK__RE_JSON_STRING | NEXTOK__RE_SEARCH], quoted, q);
        if (full == 1) fuzz_reached("accepted");
        if (full == 1 && search == 0) abort();
        if (full >= 0 && jfull >= 0 && full != jfull) abort();
        if (search >= 0 && jsearch >= 0 && search != jsearch) abort();
    }
    if (ok) check_lazy(re, size, g[NEXTOK__RE_SEARCH]);
    for (unsigned f = 0; f < N_MODES; f++) {
        nextok_grammar_free(g[f]);
        nextok__buf_free(&text[f]);
    }
    return 0;
}
