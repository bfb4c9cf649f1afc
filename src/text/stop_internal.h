/* The stop matcher's private layout, shared with the session. Not API. */
#ifndef NEXTOK_STOP_INTERNAL_H
#define NEXTOK_STOP_INTERNAL_H

#include "../common/internal.h"

/*
 * Aho–Corasick automaton over all stop strings, compiled to a full DFA over
 * byte classes (bytes that occur in no stop string share class 0), so one
 * byte costs one table load whatever the number of stop strings.
 * A state is stored as its row offset (state << shift, n_cls = 1 << shift);
 * next[] entries are (row << 1) | 1 when the target state ends a stop string.
 */
struct nextok__ac {
    uint8_t   cls[256];
    uint32_t  n_cls;     /* a power of two                                     */
    uint32_t  shift;     /* log2(n_cls)                                        */
    uint32_t  n_states;
    uint32_t *next;      /* n_states * n_cls                                   */
    uint32_t *depth;     /* per state: bytes from the root                     */
    int32_t  *match;     /* per state: stop string ending here (longest), or -1 */
    uint32_t *match_len; /* per state: its length                              */
};

nextok_status nextok__ac_build(const struct nextok__mem *mem, struct nextok__ac *ac,
                               const char *const *strs, const size_t *lens, size_t n,
                               struct nextok_error *err);
void nextok__ac_free(const struct nextok__mem *mem, struct nextok__ac *ac);

/* Run p[0..n) from *row. Returns the offset just past the first byte at which
 * a stop string ends (then *row is that state), or SIZE_MAX (then *row is the
 * state after all n bytes). */
static inline size_t nextok__ac_scan(const struct nextok__ac *ac, uint32_t *row,
                                     const unsigned char *p, size_t n)
{
    const uint32_t *next = ac->next;
    const uint8_t *cls = ac->cls;
    uint32_t st = *row;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = next[st + cls[p[i]]];
        st = v >> 1;
        if (v & 1) {
            *row = st;
            return i + 1;
        }
    }
    *row = st;
    return SIZE_MAX;
}

/* ---- stop regex (stop_regex.c; PCRE2 when built with it) ---------------- */

struct nextok__rx;

enum nextok__rx_outcome {
    NEXTOK__RX_NONE = 0,    /* no match can start in the subject          */
    NEXTOK__RX_PARTIAL = 1, /* a match starting at *start needs more text */
    NEXTOK__RX_MATCH = 2,   /* a complete match [*start, *end)            */
};

/* The regex and PCRE2's memory for it (compiling and matching) come from mem. */
nextok_status nextok__rx_init(struct nextok__rx **out, const struct nextok__mem *mem,
                              const char *pattern, struct nextok_error *err);
void nextok__rx_free(struct nextok__rx *rx);
/* Search subj[0..n) for the leftmost non-empty match. With `partial`, the end
 * of the subject is not the end of the text (PCRE2_PARTIAL_HARD). On failure
 * msg names the PCRE2 error. */
nextok_status nextok__rx_search(struct nextok__rx *rx, const char *subj, size_t n, bool partial,
                                enum nextok__rx_outcome *outcome, size_t *start, size_t *end,
                                char *msg, size_t msgcap);

/* ---- the stop matcher --------------------------------------------------- */

/* Everything a push changes. Buffers are sized at init (hold: hold_cap bytes,
 * ring: seq_max entries), so a state can be saved and restored without
 * allocating (the session does, to keep a failed step free of effects). */
struct nextok__stop_state {
    uint32_t  row;            /* automaton state (row offset)                     */
    int32_t   n_tokens;       /* tokens pushed                                    */
    uint64_t  total;          /* bytes pushed since reset                         */
    uint64_t  emitted;        /* bytes released or dropped (absolute offset)      */
    char     *hold;           /* held bytes: text[emitted .. total)               */
    size_t    held;
    int32_t  *ring_ids;       /* last seq_max ungated tokens                       */
    uint64_t *ring_start;     /* absolute offset where each one's text starts      */
    size_t    ring_n;
    bool      ended;          /* finished or ended: further pushes are refused     */
    enum nextok_finish finish;
    int32_t   which;
};

struct nextok_stop {
    struct nextok__mem mem;   /* every block of the matcher, PCRE2's included     */
    /* configuration (immutable after init) */
    struct nextok__ac ac;
    bool      has_ac;
    struct nextok__rx *rx;
    char     *regex;          /* copy of the pattern (NULL: none)               */
    int32_t  *eog;            /* end-of-generation ids                           */
    size_t    n_eog;
    bool      ignore_eos;
    int32_t  *stop_ids;
    size_t    n_stop_ids;
    int32_t  *seq_ids;        /* sequences, concatenated                          */
    size_t   *seq_off;        /* n_seqs + 1 offsets                               */
    size_t    n_seqs;
    size_t    seq_max;        /* longest sequence (tokens)                        */
    int32_t   max_tokens, min_tokens;
    bool      include_stop;
    size_t    max_hold;       /* cap for regex / sequence holdback                */
    size_t    hold_cap;       /* capacity of hold[]: max(longest string - 1, max_hold) */
    char    **strings;        /* copies of the stop strings (for names, clone)   */
    size_t   *string_lens;
    size_t    n_strings;

    struct nextok__stop_state st;

    char      errmsg[NEXTOK_ERRMSG_MAX];
};

/* What a token would end, judged before its text is known (no state change):
 * EOS, STOP_TOKEN, STOP_SEQUENCE or LENGTH; NONE. Used by the session to flush
 * the detokenizer on the last step. */
enum nextok_finish nextok__stop_token_finish(const struct nextok_stop *s, int32_t token);

/* Save / restore the state of s (st's buffers allocated by state_alloc). */
nextok_status nextok__stop_state_alloc(const struct nextok_stop *s, struct nextok__stop_state *st);
void nextok__stop_state_free(const struct nextok_stop *s, struct nextok__stop_state *st);
void nextok__stop_state_copy(const struct nextok_stop *s, struct nextok__stop_state *dst,
                             const struct nextok__stop_state *src);

#endif
