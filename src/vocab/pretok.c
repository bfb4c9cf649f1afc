/*
 * Pre-tokenizer regexes through PCRE2 (UTF + UCP, so \s, \p{L} and \p{N} are
 * Unicode's), JIT-compiled when PCRE2 has a JIT for this machine. The
 * compiled code belongs to the vocabulary and is shared read-only; each
 * encoder has its own match data. The encoder checks that its text is valid
 * UTF-8 once, so matching skips PCRE2's own check.
 *
 * Builds without PCRE2 compile no regex: a vocabulary that needs one cannot
 * encode, and says so.
 */
#include "encode_internal.h"

#include <stdio.h>

#if defined(NEXTOK_HAVE_PCRE2)

#include <pcre2.h>

struct nextok__pre_rx_set {
    int n;
    pcre2_general_context *gctx;
    struct nextok__mem mem; /* PCRE2's memory_data */
    pcre2_code *code[NEXTOK__ENC_MAX_STEPS];
    bool jit[NEXTOK__ENC_MAX_STEPS];
};

struct nextok__pre_rx_state {
    const struct nextok__pre_rx_set *rx;
    pcre2_match_data *md;
};

static void *rx_malloc(PCRE2_SIZE size, void *data) { return nextok__alloc(data, size); }

static void rx_free(void *p, void *data) { nextok__free(data, p); }

static nextok_status compile_one(struct nextok__pre_rx_set *rx, int k, const char *pattern,
                                 char *why, size_t why_cap)
{
    int ec = 0;
    PCRE2_SIZE at = 0;
    pcre2_compile_context *cc = pcre2_compile_context_create(rx->gctx);
    if (!cc) return NEXTOK_ERR_NOMEM;
    rx->code[k] = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                &ec, &at, cc);
    pcre2_compile_context_free(cc);
    if (!rx->code[k]) {
        if (ec == PCRE2_ERROR_HEAP_FAILED) return NEXTOK_ERR_NOMEM;
        char msg[64];
        pcre2_get_error_message(ec, (PCRE2_UCHAR *)msg, sizeof msg);
        snprintf(why, why_cap, "pre-tokenizer regex: %s at offset %zu", msg, (size_t)at);
        return NEXTOK_ERR_UNSUPPORTED;
    }
    /* No JIT on this machine: the interpreter gives the same matches. No
     * memory for it is a failed load, as any other allocation. */
    int jr = pcre2_jit_compile(rx->code[k], PCRE2_JIT_COMPLETE);
    if (jr == PCRE2_ERROR_NOMEMORY) return NEXTOK_ERR_NOMEM;
    rx->jit[k] = jr == 0;
    return NEXTOK_OK;
}

nextok_status nextok__pre_rx_compile(struct nextok__pre_rx_set **out, const struct nextok__mem *mem,
                                     const char *const *patterns, int n, char *why, size_t why_cap)
{
    *out = NULL;
    if (n == 0) return NEXTOK_OK;
    struct nextok__pre_rx_set *rx = nextok__calloc(mem, 1, sizeof *rx);
    if (!rx) return NEXTOK_ERR_NOMEM;
    rx->mem = *mem;
    rx->gctx = pcre2_general_context_create(rx_malloc, rx_free, &rx->mem);
    nextok_status rc = rx->gctx ? NEXTOK_OK : NEXTOK_ERR_NOMEM;
    for (int k = 0; k < n && rc == NEXTOK_OK; k++, rx->n++)
        rc = compile_one(rx, k, patterns[k], why, why_cap);
    if (rc != NEXTOK_OK) {
        nextok__pre_rx_free(mem, rx);
        return rc;
    }
    *out = rx;
    return NEXTOK_OK;
}

void nextok__pre_rx_free(const struct nextok__mem *mem, struct nextok__pre_rx_set *rx)
{
    if (!rx) return;
    for (int k = 0; k < rx->n; k++) pcre2_code_free(rx->code[k]);
    pcre2_general_context_free(rx->gctx);
    nextok__free(mem, rx);
}

nextok_status nextok__pre_rx_state_new(struct nextok__pre_rx_state **out,
                                       const struct nextok__mem *mem,
                                       const struct nextok__pre_rx_set *rx)
{
    *out = NULL;
    if (!rx) return NEXTOK_OK;
    struct nextok__pre_rx_state *st = nextok__calloc(mem, 1, sizeof *st);
    if (!st) return NEXTOK_ERR_NOMEM;
    st->rx = rx;
    /* One pair of offsets is all a split needs, whatever the pattern's groups. */
    st->md = pcre2_match_data_create(1, rx->gctx);
    if (!st->md) {
        nextok__free(mem, st);
        return NEXTOK_ERR_NOMEM;
    }
    *out = st;
    return NEXTOK_OK;
}

void nextok__pre_rx_state_free(const struct nextok__mem *mem, struct nextok__pre_rx_state *st)
{
    if (!st) return;
    pcre2_match_data_free(st->md);
    nextok__free(mem, st);
}

int nextok__pre_rx_next(struct nextok__pre_rx_state *st, int k, const char *s, size_t len,
                        size_t from, size_t *ms, size_t *me)
{
    const struct nextok__pre_rx_set *rx = st->rx;
    int r = rx->jit[k] ? pcre2_jit_match(rx->code[k], (PCRE2_SPTR)s, len, from, 0, st->md, NULL)
                       : pcre2_match(rx->code[k], (PCRE2_SPTR)s, len, from, PCRE2_NO_UTF_CHECK,
                                     st->md, NULL);
    if (r == PCRE2_ERROR_NOMATCH) return 0;
    if (r < 0 && r != 0) return -1;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(st->md);
    *ms = ov[0];
    *me = ov[1];
    return 1;
}

#else /* !NEXTOK_HAVE_PCRE2 */

nextok_status nextok__pre_rx_compile(struct nextok__pre_rx_set **out, const struct nextok__mem *mem,
                                     const char *const *patterns, int n, char *why, size_t why_cap)
{
    (void)mem;
    (void)patterns;
    *out = NULL;
    if (n == 0) return NEXTOK_OK;
    snprintf(why, why_cap,
             "this vocabulary's pre-tokenizer needs PCRE2 (built with NEXTOK_WITH_PCRE2=OFF)");
    return NEXTOK_ERR_UNSUPPORTED;
}

void nextok__pre_rx_free(const struct nextok__mem *mem, struct nextok__pre_rx_set *rx)
{
    (void)mem;
    (void)rx;
}

nextok_status nextok__pre_rx_state_new(struct nextok__pre_rx_state **out,
                                       const struct nextok__mem *mem,
                                       const struct nextok__pre_rx_set *rx)
{
    (void)mem;
    (void)rx;
    *out = NULL;
    return NEXTOK_OK;
}

void nextok__pre_rx_state_free(const struct nextok__mem *mem, struct nextok__pre_rx_state *st)
{
    (void)mem;
    (void)st;
}

int nextok__pre_rx_next(struct nextok__pre_rx_state *st, int k, const char *s, size_t len,
                        size_t from, size_t *ms, size_t *me)
{
    (void)st, (void)k, (void)s, (void)len, (void)from, (void)ms, (void)me;
    return -1;
}

#endif
