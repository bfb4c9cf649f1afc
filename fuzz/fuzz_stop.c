/*
 * Fuzz target: the stop matcher. The first bytes pick the parameters (stop
 * strings, include flag, min/max tokens, eos/stop ids, a regex from a fixed
 * list), the rest is a stream of pushes. Checks the streaming invariants:
 * released + held == pushed while running, released bytes are a prefix of
 * the pushed text, and nothing is released after the end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"

struct reader {
    const uint8_t *p;
    size_t n;
};

static uint8_t take(struct reader *r)
{
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

static const char *const REGEXES[] = {
    NULL, "[0-9]{3}-[0-9]{4}", "\n\n+", "a.*b", "(?<=x)yz", "\\bend\\b",
};

struct fuzz_setup {
    char strs[8][16];
    const char *ptrs[8];
    size_t lens[8];
    int32_t eog, stop_id;
    struct nextok_stop_params p;
};

static void setup(struct reader *r, struct fuzz_setup *f)
{
    uint8_t flags = take(r);
    size_t n = take(r) % 8;
    for (size_t i = 0; i < n; i++) {
        f->lens[i] = 1 + take(r) % 15;
        for (size_t j = 0; j < f->lens[i]; j++) f->strs[i][j] = (char)take(r);
        f->ptrs[i] = f->strs[i];
    }
    f->eog = 2;
    f->stop_id = 3;
    f->p = nextok_stop_default_params();
    f->p.strings = f->ptrs;
    f->p.string_lens = f->lens;
    f->p.n_strings = n;
    f->p.include_stop = flags & 1;
    f->p.ignore_eos = flags & 2;
    f->p.eog_ids = &f->eog;
    f->p.n_eog = 1;
    f->p.stop_ids = &f->stop_id;
    f->p.n_stop_ids = 1;
    f->p.min_tokens = take(r) % 4;
    f->p.max_tokens = take(r) % 32;
    if (f->p.max_tokens && f->p.max_tokens < f->p.min_tokens) f->p.max_tokens = f->p.min_tokens;
    f->p.regex = REGEXES[(flags >> 2) % (sizeof REGEXES / sizeof *REGEXES)];
    f->p.max_hold = (flags >> 5) * 8;
}

static char text[1 << 16], out[1 << 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct reader r = {data, size};
    struct fuzz_setup f;
    setup(&r, &f);
    struct nextok_stop *s = NULL;
    if (nextok_stop_init(&s, &f.p, NULL) != NEXTOK_OK) return 0;
    size_t pushed = 0, pos = 0;
    bool ended = false;
    while (r.n > 0 && pushed + 64 < sizeof text) {
        uint8_t tok = take(&r);
        size_t len = take(&r) % 16;
        if (len > r.n) len = r.n;
        memcpy(text + pushed, r.p, len);
        r.p += len;
        r.n -= len;
        enum nextok_stop_directive d =
            (tok & 0xf0) == 0xf0 ? NEXTOK_STOP_END : NEXTOK_STOP_CONTINUE;
        int32_t token = tok == 0xff ? NEXTOK_NO_TOKEN : (int32_t)(tok & 7);
        struct nextok_stop_result res;
        size_t before = pos;
        struct nextok_text_out o = {out, sizeof out, pos};
        nextok_status rc = nextok_stop_push(s, token, text + pushed, len, d, &o, &res);
        pos = o.pos;
        if (ended != (rc == NEXTOK_ERR_STATE)) abort();
        if (rc != NEXTOK_OK && pos != before) abort();
        if (rc != NEXTOK_OK) continue;
        pushed += len;
        fuzz_reached("pushed");
        if (res.finish != NEXTOK_FINISH_NONE) fuzz_reached("stopped");
        if (memcmp(out, text, pos) != 0) abort();
        if (res.finish == NEXTOK_FINISH_NONE && !ended && d == NEXTOK_STOP_CONTINUE &&
            pos + res.held != pushed)
            abort();
        ended = res.finish != NEXTOK_FINISH_NONE || d == NEXTOK_STOP_END;
        if (ended && res.held != 0) abort();
    }
    nextok_stop_free(s);
    return 0;
}
