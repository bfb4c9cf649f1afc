/*
 * The stop regex: PCRE2 in UTF mode with invalid UTF-8 tolerated (the matcher
 * sees arbitrary byte windows, possibly cut inside a character). Partial
 * matching (PCRE2_PARTIAL_HARD) tells the stop matcher how much text a match
 * that is still growing needs held back. Builds without PCRE2 keep the same
 * entry points and refuse the regex at init.
 */
#include "stop_internal.h"

#include <stdio.h>

#if defined(NEXTOK_HAVE_PCRE2)

#include <pcre2.h>

struct nextok__rx {
    struct nextok__mem mem;      /* PCRE2's memory_data: the hook it allocates through */
    pcre2_general_context *gctx; /* PCRE2's allocations (compile, match data, match)   */
    pcre2_code *code;
    pcre2_match_data *md;
    size_t lookbehind; /* bytes before a match start a lookbehind may inspect */
};

/* PCRE2's private_malloc / private_free: the matcher's allocator. */
static void *rx_malloc(PCRE2_SIZE size, void *data) { return nextok__alloc(data, size); }

static void rx_free(void *p, void *data) { nextok__free(data, p); }

static nextok_status rx_finish(struct nextok__rx *rx, struct nextok_error *err)
{
    uint32_t lb = 0;
    if (pcre2_pattern_info(rx->code, PCRE2_INFO_MAXLOOKBEHIND, &lb) == 0)
        rx->lookbehind = (size_t)lb * 4; /* characters -> UTF-8 bytes, at most */
    rx->md = pcre2_match_data_create_from_pattern(rx->code, rx->gctx);
    if (!rx->md) return nextok__err(err, NEXTOK_ERR_NOMEM, "regex: out of memory for match data");
    return NEXTOK_OK;
}

static nextok_status rx_compile(struct nextok__rx *rx, const char *pattern,
                                struct nextok_error *err)
{
    int code = 0;
    PCRE2_SIZE off = 0;
    pcre2_compile_context *cc = pcre2_compile_context_create(rx->gctx);
    if (!cc) return nextok__err(err, NEXTOK_ERR_NOMEM, "regex: out of memory compiling it");
    rx->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                             PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code, &off, cc);
    pcre2_compile_context_free(cc);
    if (rx->code) return NEXTOK_OK;
    if (code == PCRE2_ERROR_HEAP_FAILED)
        return nextok__err(err, NEXTOK_ERR_NOMEM, "regex: out of memory compiling it");
    PCRE2_UCHAR text[128];
    if (pcre2_get_error_message(code, text, sizeof text) < 0) text[0] = 0;
    return nextok__err(err, NEXTOK_ERR_FORMAT, "regex: %s at offset %zu", (const char *)text,
                       (size_t)off);
}

nextok_status nextok__rx_init(struct nextok__rx **out, const struct nextok__mem *mem,
                              const char *pattern, struct nextok_error *err)
{
    *out = NULL;
    struct nextok__rx *rx = nextok__calloc(mem, 1, sizeof *rx);
    if (!rx) return nextok__err(err, NEXTOK_ERR_NOMEM, "regex: out of memory compiling it");
    rx->mem = *mem;
    /* every PCRE2 block of this regex, the general context too, goes through rx->mem */
    rx->gctx = pcre2_general_context_create(rx_malloc, rx_free, &rx->mem);
    nextok_status rc =
        rx->gctx ? rx_compile(rx, pattern, err)
                 : nextok__err(err, NEXTOK_ERR_NOMEM, "regex: out of memory compiling it");
    if (rc == NEXTOK_OK) rc = rx_finish(rx, err);
    if (rc != NEXTOK_OK) {
        nextok__rx_free(rx);
        return rc;
    }
    *out = rx;
    return NEXTOK_OK;
}

void nextok__rx_free(struct nextok__rx *rx)
{
    if (!rx) return;
    pcre2_match_data_free(rx->md);
    pcre2_code_free(rx->code);
    pcre2_general_context_free(rx->gctx);
    const struct nextok__mem mem = rx->mem;
    nextok__free(&mem, rx);
}

nextok_status nextok__rx_search(struct nextok__rx *rx, const char *subj, size_t n, bool partial,
                                enum nextok__rx_outcome *outcome, size_t *start, size_t *end,
                                char *msg, size_t msgcap)
{
    uint32_t opts = PCRE2_NOTEMPTY | (partial ? PCRE2_PARTIAL_HARD : 0);
    /* PCRE2 wants a non-NULL subject even when it is empty */
    PCRE2_SPTR p = (PCRE2_SPTR)(subj ? subj : "");
    int rc = pcre2_match(rx->code, p, n, 0, opts, rx->md, NULL);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(rx->md);
    *outcome = NEXTOK__RX_NONE;
    if (rc == PCRE2_ERROR_NOMATCH) return NEXTOK_OK;
    if (rc == PCRE2_ERROR_PARTIAL) {
        *outcome = NEXTOK__RX_PARTIAL;
        *start = ov[0] > rx->lookbehind ? ov[0] - rx->lookbehind : 0;
        return NEXTOK_OK;
    }
    if (rc >= 0) {
        *outcome = NEXTOK__RX_MATCH;
        *start = ov[0];
        *end = ov[1];
        return NEXTOK_OK;
    }
    PCRE2_UCHAR text[128];
    if (pcre2_get_error_message(rc, text, sizeof text) < 0) text[0] = 0;
    snprintf(msg, msgcap, "PCRE2 error %d: %s", rc, (const char *)text);
    return rc == PCRE2_ERROR_NOMEMORY ? NEXTOK_ERR_NOMEM : NEXTOK_ERR_INTERNAL;
}

#else /* no PCRE2 */

struct nextok__rx {
    int unused;
};

nextok_status nextok__rx_init(struct nextok__rx **out, const struct nextok__mem *mem,
                              const char *pattern, struct nextok_error *err)
{
    (void)mem;
    (void)pattern;
    *out = NULL;
    return nextok__err(err, NEXTOK_ERR_UNSUPPORTED,
                       "regex: this build has no PCRE2 (install libpcre2-dev and rebuild)");
}

void nextok__rx_free(struct nextok__rx *rx) { (void)rx; /* never made: init refuses */ }

nextok_status nextok__rx_search(struct nextok__rx *rx, const char *subj, size_t n, bool partial,
                                enum nextok__rx_outcome *outcome, size_t *start, size_t *end,
                                char *msg, size_t msgcap)
{
    (void)rx, (void)subj, (void)n, (void)partial, (void)start, (void)end;
    *outcome = NEXTOK__RX_NONE;
    snprintf(msg, msgcap, "no PCRE2 in this build");
    return NEXTOK_ERR_UNSUPPORTED;
}

#endif
