/* Fuzz target, differential: GBNF text, a NUL byte, then a script. The
 * grammar is compiled against GPT-2's vocabulary and walked: each pair of
 * script bytes picks a token; its mask bit must equal what the Earley
 * reference says of the bytes so far plus the token's (a prefix of some
 * sentence), an allowed token is accepted and a refused one must be
 * refused by accept_token too; some bytes roll back or clone instead.
 * Limits are small so that no input hangs; hitting one is fine. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_reach.h"
#include "grammar/grammar_internal.h"
#include "nextok.h"

#define MAX_TEXT 256

static struct nextok_token_table *table(struct nextok_vocab **vp)
{
    static struct nextok_vocab *v; /* loaded once per process: the target's own cache */
    static struct nextok_token_table *tt;
    if (!tt) {
        const char *path = NEXTOK_FIXTURE_DIR "/vocab/hf/gpt2/tokenizer.json";
        if (nextok_vocab_load_file(&v, path, NULL) != NEXTOK_OK) abort();
        if (nextok_token_table_init(&tt, v, NULL, NULL) != NEXTOK_OK) abort();
    }
    *vp = v;
    return tt;
}

struct run {
    const struct nextok_grammar *g;
    const struct nextok_vocab *v;
    char text[MAX_TEXT + 64];
    size_t len;
};

/* The reference's verdict on token id after r->text; -1: not judged. */
static int reference(struct run *r, int32_t id)
{
    size_t n = 0;
    const char *b = nextok_vocab_token_bytes(r->v, id, &n);
    bool ok = false;
    if (nextok_vocab_is_eog(r->v, id)) {
        if (nextok_grammar_accepts(r->g, r->text, r->len, &ok, NULL) != NEXTOK_OK) ok = false;
        return ok;
    }
    if (!n || r->len + n > sizeof r->text) return -1;
    char buf[sizeof r->text];
    memcpy(buf, r->text, r->len);
    memcpy(buf + r->len, b, n);
    if (nextok__earley_viable(r->g, buf, r->len + n, &ok, NULL) != NEXTOK_OK) return -1;
    return ok;
}

/* Odd first byte: one of the allowed tokens (the k-th set bit); even: any
 * id (mostly refused ones). */
static int32_t pick(const int32_t *mask, int32_t V, uint8_t a, uint8_t b)
{
    uint32_t any = ((uint32_t)a << 8 | b) * 7919u % (uint32_t)V;
    if (!(a & 1)) return (int32_t)any;
    uint32_t n = 0;
    for (int32_t id = 0; id < V; id++) n += (mask[id >> 5] >> (id & 31)) & 1;
    if (!n) return (int32_t)any;
    uint32_t k = ((uint32_t)b * 131u + a) % n;
    for (int32_t id = 0; id < V; id++)
        if (((mask[id >> 5] >> (id & 31)) & 1) && k-- == 0) return id;
    return (int32_t)any;
}

static void walk(struct run *r, struct nextok_matcher *m, const uint8_t *s, size_t n)
{
    int32_t V = nextok_vocab_n_tokens(r->v);
    size_t words = NEXTOK_BITMASK_WORDS(V);
    int32_t *mask = malloc(words * sizeof *mask);
    for (size_t i = 0; mask && i + 1 < n && r->len < MAX_TEXT; i += 2) {
        if (s[i] == 0xFF) { /* a clone takes over */
            struct nextok_matcher *c = NULL;
            if (nextok_matcher_clone(&c, m, NULL) != NEXTOK_OK) break;
            nextok_matcher_free(m);
            m = c;
            continue;
        }
        if (nextok_matcher_fill_bitmask(m, mask, words, NULL, NULL) != NEXTOK_OK)
            break; /* a limit */
        fuzz_reached("masked");
        int32_t id = pick(mask, V, s[i], s[i + 1]);
        int want = reference(r, id);
        bool bit = (mask[id >> 5] >> (id & 31)) & 1;
        if (want >= 0 && bit != (want == 1)) abort(); /* the mask and the reference disagree */
        nextok_status rc = nextok_matcher_accept_token(m, id, NULL);
        if (!bit && rc == NEXTOK_OK) abort(); /* accepted what the mask refused */
        if (bit && rc != NEXTOK_OK && rc != NEXTOK_ERR_LIMIT) abort();
        if (rc != NEXTOK_OK) continue;
        fuzz_reached("accepted");
        if (nextok_matcher_is_terminated(m)) break;
        size_t len = 0;
        const char *b = nextok_vocab_token_bytes(r->v, id, &len);
        memcpy(r->text + r->len, b, len);
        r->len += len;
    }
    free(mask);
    nextok_matcher_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    if (!nul || size > 4096) return 0;
    struct nextok_vocab *v;
    struct nextok_token_table *tt = table(&v);
    struct run r = {NULL, v, {0}, 0};
    struct nextok_grammar *g = NULL;
    if (nextok_grammar_init_gbnf(&g, (const char *)data, (size_t)(nul - data), NULL, NULL) !=
        NEXTOK_OK)
        return 0;
    r.g = g;
    struct nextok_compile_params p = nextok_compile_default_params();
    p.max_cache_bytes = 32u << 20;
    p.max_stacks = 256;
    p.max_work = 100000;
    struct nextok_compiled_grammar *cg = NULL;
    struct nextok_matcher *m = NULL;
    if (nextok_compiled_grammar_init(&cg, g, tt, &p, NULL) == NEXTOK_OK) {
        fuzz_reached("compiled");
        if (nextok_matcher_init(&m, cg, NULL) == NEXTOK_OK)
            walk(&r, m, nul + 1, size - (size_t)(nul - data) - 1);
    }
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(g);
    return 0;
}
