/*
 * The token matcher against a plain reference: at each step of walks through
 * grammars, every checked token's mask bit must equal what the Earley
 * recognizer says of the accepted bytes plus the token's bytes (a prefix of
 * some sentence, byte for byte), over every shipped vocabulary (byte-level
 * BPE, SentencePiece with byte fallback, WordPiece, Unigram, tiktoken).
 * Then the API's promises: rollback and clone round trips, forced bytes,
 * end-of-generation and termination, token references, failed calls that
 * change nothing, limits hit on purpose, allocation failures, threads.
 */
#include "harness.h"
#include "base64.h"
#include "fail_alloc.h"

#include "common/file.h"
#include "grammar/grammar_internal.h"
#include "nextok.h"

#include <pthread.h>
#include <stdlib.h>

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static struct nextok_vocab *load_vocab(const char *rel)
{
    char path[1024];
    struct nextok_vocab *v = NULL;
    struct nextok_error err;
    nextok_status st = nextok_vocab_load_file(&v, fixture_path(path, sizeof path, rel), &err);
    CHECK_MSG(st == NEXTOK_OK, "%s: %s", rel, err.msg);
    return v;
}

static struct nextok_grammar *gbnf(const char *src, const struct nextok_vocab *v)
{
    struct nextok_grammar_params p = nextok_grammar_default_params();
    p.vocab = v;
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    nextok_status st = nextok_grammar_init_gbnf(&g, src, strlen(src), &p, &err);
    CHECK_MSG(st == NEXTOK_OK, "%s\n    in: %s", err.msg, src);
    return g;
}

static struct nextok_grammar *gbnf_file(const char *name)
{
    char rel[128], path[1024];
    snprintf(rel, sizeof rel, "grammars/%s", name);
    char *text = NULL;
    size_t n = 0;
    struct nextok_error err;
    if (nextok__read_file(&nextok__mem_libc, fixture_path(path, sizeof path, rel), &text, &n,
                          &err) != NEXTOK_OK) {
        CHECK_MSG(0, "%s: %s", path, err.msg);
        return NULL;
    }
    struct nextok_grammar *g = NULL;
    CHECK_OK(nextok_grammar_init_gbnf(&g, text, n, NULL, &err));
    free(text);
    return g;
}

/* The token table of v, made once per vocabulary and kept until the test
 * ends (drop_tables). */
static struct {
    const struct nextok_vocab *v;
    struct nextok_token_table *tt;
} tables[16];

static struct nextok_token_table *table_of(const struct nextok_vocab *v)
{
    size_t i = 0;
    for (; i < 16 && tables[i].v; i++)
        if (tables[i].v == v) return tables[i].tt;
    struct nextok_error err;
    if (i == 16) return NULL;
    CHECK_OK(nextok_token_table_init(&tables[i].tt, v, NULL, &err));
    tables[i].v = v;
    return tables[i].tt;
}

static void drop_tables(void)
{
    for (size_t i = 0; i < 16; i++) {
        nextok_token_table_free(tables[i].tt);
        tables[i].v = NULL, tables[i].tt = NULL;
    }
}

static struct nextok_compiled_grammar *compile(const struct nextok_grammar *g,
                                               const struct nextok_vocab *v)
{
    struct nextok_compiled_grammar *cg = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_compiled_grammar_init(&cg, g, table_of(v), NULL, &err));
    return cg;
}

static bool bit(const int32_t *w, int32_t id) { return (w[id >> 5] >> (id & 31)) & 1; }

/* ---- the brute-force check ------------------------------------------------------- */

struct walk {
    const struct nextok_grammar *g;
    const struct nextok_vocab *v;
    const char *what;
    char prefix[4096];
    size_t len;
    long checked, allowed_seen;
};

/* What the reference says of token id after w->prefix. */
static bool expected(struct walk *w, int32_t id)
{
    uint32_t attrs = nextok_vocab_token_attrs(w->v, id);
    size_t n = 0;
    const char *b = nextok_vocab_token_bytes(w->v, id, &n);
    bool ok = false;
    struct nextok_error err;
    if (attrs & NEXTOK_TOKEN_ATTR_ABSENT) return false;
    if (nextok_vocab_is_eog(w->v, id)) {
        /* a prefix ending inside a character is no sentence */
        if (nextok_grammar_accepts(w->g, w->prefix, w->len, &ok, &err) != NEXTOK_OK)
            CHECK_MSG(strstr(err.msg, "invalid UTF-8"), "%s", err.msg);
        return ok;
    }
    if (attrs & NEXTOK_TOKEN_ATTR_SPECIAL) return false;
    if (n == 0 || w->len + n > sizeof w->prefix) return false;
    char buf[sizeof w->prefix];
    memcpy(buf, w->prefix, w->len);
    memcpy(buf + w->len, b, n);
    CHECK_OK(nextok__earley_viable(w->g, buf, w->len + n, &ok, &err));
    return ok;
}

/* Check the mask bit of `samples` random ids and of `samples` random
 * allowed ids (every id when the vocabulary is small). */
static void check_mask(struct walk *w, const int32_t *mask, int32_t n_vocab, int samples)
{
    int32_t *allowed = malloc((size_t)n_vocab * sizeof *allowed);
    int32_t n_allowed = 0;
    for (int32_t id = 0; id < n_vocab; id++)
        if (bit(mask, id)) allowed[n_allowed++] = id;
    bool all = n_vocab <= 2 * samples;
    for (int k = 0; k < (all ? n_vocab : 2 * samples); k++) {
        int32_t id = all                         ? k
                     : k < samples || !n_allowed ? (int32_t)(rnd() % (uint64_t)n_vocab)
                                                 : allowed[rnd() % (uint64_t)n_allowed];
        bool want = expected(w, id);
        w->checked++;
        w->allowed_seen += want;
        size_t n = 0;
        const char *b = nextok_vocab_token_bytes(w->v, id, &n);
        CHECK_MSG(bit(mask, id) == want,
                  "%s: after \"%.*s\" token %d \"%.*s\": mask %d, reference %d", w->what,
                  (int)(w->len > 60 ? 60 : w->len), w->prefix + (w->len > 60 ? w->len - 60 : 0), id,
                  (int)n, b, bit(mask, id), want);
        if (bit(mask, id) != want) break;
    }
    free(allowed);
}

/* Walk `steps` tokens: each step checks the mask, then accepts a token of
 * `script` (ids) while it lasts, else a random allowed text token. */
static void walk_check(const struct nextok_grammar *g, const struct nextok_vocab *v,
                       const char *what, const int32_t *script, size_t n_script, bool must,
                       int steps, int samples)
{
    struct nextok_compiled_grammar *cg = compile(g, v);
    struct nextok_matcher *m = NULL;
    struct nextok_error err;
    if (!cg) return;
    CHECK_OK(nextok_matcher_init(&m, cg, &err));
    int32_t n_vocab = nextok_vocab_n_tokens(v);
    size_t words = NEXTOK_BITMASK_WORDS(n_vocab);
    int32_t *mask = malloc(words * sizeof *mask);
    struct walk *w = calloc(1, sizeof *w);
    w->g = g, w->v = v, w->what = what;
    for (int s = 0; s < steps; s++) {
        size_t n_allowed = 0;
        CHECK_OK(nextok_matcher_fill_bitmask(m, mask, words, &n_allowed, &err));
        check_mask(w, mask, n_vocab, samples);
        int32_t next = -1;
        if ((size_t)s < n_script) {
            /* a valid text's tokens are allowed one after another; WordPiece
             * puts spaces between words, which JSON allows only in places */
            next = script[s];
            CHECK_MSG(!must || bit(mask, next), "%s: step %d: scripted token %d not allowed", what,
                      s, next);
            if (!bit(mask, next)) n_script = 0, next = -1;
        }
        if (next < 0) {
            for (int tries = 0; tries < 10000 && next < 0; tries++) {
                int32_t id = (int32_t)(rnd() % (uint64_t)n_vocab);
                size_t n = 0;
                nextok_vocab_token_bytes(v, id, &n);
                if (bit(mask, id) && !nextok_vocab_is_eog(v, id) && n && w->len + n < 2000)
                    next = id;
            }
        }
        if (next < 0) break;
        size_t n = 0;
        const char *b = nextok_vocab_token_bytes(v, next, &n);
        CHECK_OK(nextok_matcher_accept_token(m, next, &err));
        memcpy(w->prefix + w->len, b, n);
        w->len += n;
    }
    bool acc = false; /* a walk may end inside a character: no sentence then */
    if (nextok_grammar_accepts(g, w->prefix, w->len, &acc, &err) != NEXTOK_OK)
        CHECK_MSG(strstr(err.msg, "invalid UTF-8"), "%s: %s", what, err.msg);
    CHECK_MSG(nextok_matcher_is_accepting(m) == acc, "%s: is_accepting %d, reference %d", what,
              nextok_matcher_is_accepting(m), acc);
    /* WordPiece pieces start with a space: some grammars allow none */
    CHECK_MSG(w->allowed_seen > 0 || nextok_vocab_get_type(v) == NEXTOK_VOCAB_TYPE_WPM,
              "%s: no allowed token was checked", what);
    printf("  %-34s %6ld tokens checked, %ld allowed\n", what, w->checked, w->allowed_seen);
    free(w);
    free(mask);
    nextok_matcher_free(m);
    nextok_compiled_grammar_free(cg);
}

/* A tokenization of text: the vocabulary's own, or where it cannot encode
 * (builds without PCRE2, the small synthetic vocabularies) greedy longest
 * match over the text tokens' bytes: any tokenization that spells the text
 * will do for walking a grammar. 0 when some byte has no token. */
static size_t encode(const struct nextok_vocab *v, const char *text, int32_t *ids, size_t cap)
{
    size_t n = 0, len = strlen(text);
    struct nextok_encode_params p = nextok_encode_default_params();
    p.add_bos = p.add_eos = 0;
    if (nextok_vocab_encode(v, text, len, &p, ids, cap, &n, NULL) == NEXTOK_OK) return n;
    n = 0;
    for (size_t at = 0; at < len && n < cap;) {
        size_t best = 0;
        int32_t best_id = -1;
        for (int32_t id = 0; id < nextok_vocab_n_tokens(v); id++) {
            size_t k = 0;
            const char *b = nextok_vocab_token_bytes(v, id, &k);
            uint32_t attrs = nextok_vocab_token_attrs(v, id);
            if (k <= best || k > len - at ||
                (attrs & (NEXTOK_TOKEN_ATTR_SPECIAL | NEXTOK_TOKEN_ATTR_ABSENT)) ||
                nextok_vocab_is_eog(v, id) || memcmp(b, text + at, k) != 0)
                continue;
            best = k, best_id = id;
        }
        if (best_id < 0) return 0;
        ids[n++] = best_id;
        at += best;
    }
    return n;
}

static const char *const vocab_files[] = {
    "vocab/hf/gpt2/tokenizer.json",     "vocab/hf/mistral-7b-v0.1/tokenizer.json",
    "vocab/gguf/ggml-vocab-phi-3.gguf", "vocab/synthetic/wordpiece-bert.json",
    "vocab/synthetic/unigram.json",     "vocab/tiktoken/o200k_base.tiktoken",
};

static const char multibyte_gbnf[] =
    "root ::= \" \"? [α-ω]+ \" é \" [😀-🙏]* (\"ü\" | [^\\x00-\\x7F€])? \"!\"\n";

/* Counted repetition: a string of 3 to 200 characters (deep inside it the
 * matcher shares masks between states, tested here against the reference
 * all the way), an exact count and bounded whitespace. The optional space
 * first is SentencePiece's dummy prefix. */
static const char bounded_gbnf[] =
    "root ::= \" \"? \"{\\\"s\\\": \\\"\" c{3,200} \"\\\", \\\"h\\\": \\\"\" [0-9a-f]{8} "
    "\"\\\", \\\"w\\\": [\" ws \"1\" ws \"]}\"\n"
    "c ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
    "ws ::= [ ]{0,30}\n";
static const char bounded_text[] =
    "{\"s\": \"The quick brown fox, said Zoë, \\\"jumps\\\" over the lazy dog\\n and then "
    "walks 23 km back home before tea; it is a long way (ﬁne) but worth it, every single "
    "time\", \"h\": \"deadbeef\", \"w\": [ 1  ]}";

/* A lazy grammar: free text, a trigger word or token, then the grammar. */
static struct nextok_grammar *lazy(const char *src, const int32_t *tokens, size_t n_tokens)
{
    struct nextok_grammar *g = gbnf(src, NULL), *lz = NULL;
    static const char *const words[] = {"<tool_call>", "</think>"};
    struct nextok_lazy_params lp = nextok_lazy_default_params();
    struct nextok_error err;
    lp.words = words, lp.n_words = 2, lp.tokens = tokens, lp.n_tokens = n_tokens;
    if (g) CHECK_OK(nextok_grammar_init_lazy(&lz, g, &lp, NULL, &err));
    nextok_grammar_free(g);
    return lz;
}

/* Lazy grammars with trigger patterns: where a pattern fires, against a
 * table, and the masks along a reply against the recognizer. */
TEST(lazy_patterns)
{
    static const char src[] = "root ::= \"{\\\"n\\\": \" [0-9]+ \"}\"\n";
    struct nextok_grammar *g = gbnf(src, NULL), *lz = NULL;
    static const char *const pats[] = {"<call:[a-z]{1,8}>", "\\[TOOL_[0-9]+\\]\\s*"};
    static const char *const words[] = {"</think>"};
    struct nextok_lazy_params lp = nextok_lazy_default_params();
    struct nextok_error err;
    lp.patterns = pats, lp.n_patterns = 2, lp.words = words, lp.n_words = 1;
    if (g) CHECK_OK(nextok_grammar_init_lazy(&lz, g, &lp, NULL, &err));
    static const struct {
        const char *text;
        bool ok;
    } cases[] = {
        {"", true},
        {"plain text, no call", true},
        {"<call:get>{\"n\": 1}", true},
        {"x <call:abcdefgh>{\"n\": 12}", true},
        {"<call:abcdefghi>", true},  /* nine letters: no match, still free */
        {"<call:get>", false},       /* fired: the sentence must follow */
        {"<call:get> {\"n\": 1}", false},
        {"<call:>{\"n\": 1}", true}, /* no letter: not a trigger */
        {"<<call:x>{\"n\": 5}", true},
        {"[TOOL_7]{\"n\": 3}", true},
        {"[TOOL_7] {\"n\": 3}", false}, /* \s* fired empty: the earliest end wins */
        {"[TOOL_]{\"n\": 3}", true},
        {"done</think>{\"n\": 0}", true},
        {"done</think>nope", false},
        {"<call:Get>x", true}, /* upper case: no match */
    };
    for (size_t i = 0; lz && i < sizeof cases / sizeof *cases; i++) {
        bool ok = false;
        CHECK_OK(nextok_grammar_accepts(lz, cases[i].text, strlen(cases[i].text), &ok, &err));
        CHECK_MSG(ok == cases[i].ok, "lazy patterns: \"%s\": %d", cases[i].text, ok);
    }
    struct nextok_vocab *v = load_vocab("vocab/hf/gpt2/tokenizer.json");
    int32_t ids[64];
    size_t n = encode(v, "I will call it: <call:lookup>{\"n\": 2026}", ids, 64);
    if (lz) walk_check(lz, v, "lazy, patterns: gpt2", ids, n, true, (int)n + 1, 150);
    nextok_grammar_free(lz);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

TEST(lazy_grammars)
{
    static const char src[] = "root ::= \"{\\\"n\\\": \" [0-9]+ \"}\"\n";
    struct nextok_grammar *lz = lazy(src, NULL, 0);
    static const struct {
        const char *text;
        bool ok;
    } cases[] = {
        {"", true},
        {"I will look it up.", true},
        {"I will call <tool_call>{\"n\": 42}", true},
        {"<tool_call>{\"n\": 4x}", false},
        {"<tool_call>", false}, /* triggered: the grammar's sentence must follow */
        {"<tool_cal>{\"n\": 1}", true},
        {"x</think>{\"n\": 7}", true},
        {"<tool_call>{\"n\": 1} and more", false},
        {"<<tool_call>{\"n\": 2}", true},
        {"</thin", true},
    };
    for (size_t i = 0; lz && i < sizeof cases / sizeof *cases; i++) {
        bool ok = false;
        struct nextok_error err;
        CHECK_OK(nextok_grammar_accepts(lz, cases[i].text, strlen(cases[i].text), &ok, &err));
        CHECK_MSG(ok == cases[i].ok, "lazy: \"%s\": %d", cases[i].text, ok);
    }
    /* masks against the recognizer, walking a scripted reply */
    struct nextok_vocab *v = load_vocab("vocab/hf/gpt2/tokenizer.json");
    int32_t ids[64];
    size_t n = encode(v, "Let me check. <tool_call>{\"n\": 12345}", ids, 64);
    walk_check(lz, v, "lazy, words: gpt2", ids, n, true, (int)n + 1, 150);
    nextok_grammar_free(lz);
    /* a token trigger: Mistral's <s> (special, not text) stands in for a
     * tool-call token */
    struct nextok_vocab *mv = load_vocab("vocab/hf/mistral-7b-v0.1/tokenizer.json");
    int32_t trig = 1;
    lz = lazy(src, &trig, 1);
    struct nextok_compiled_grammar *cg = lz ? compile(lz, mv) : NULL;
    struct nextok_matcher *m = NULL;
    struct nextok_error err;
    if (cg) CHECK_OK(nextok_matcher_init(&m, cg, &err));
    if (m) {
        CHECK_OK(nextok_matcher_accept_bytes(m, "thinking", 8, &err));
        CHECK_OK(nextok_matcher_accept_token(m, trig, &err));
        CHECK(!nextok_matcher_is_accepting(m) && !nextok_matcher_is_terminated(m));
        char fb[8];
        size_t nb = 0;
        CHECK_OK(nextok_matcher_forced_bytes(m, fb, sizeof fb, &nb, &err));
        CHECK(nb == 6 && memcmp(fb, "{\"n\": ", 6) == 0);
        CHECK(nextok_matcher_accept_bytes(m, "{\"n\": x", 8, &err) == NEXTOK_ERR_REJECTED);
        CHECK_OK(nextok_matcher_accept_bytes(m, "{\"n\": 9}", 8, &err));
        CHECK(nextok_matcher_is_complete(m));
    }
    nextok_matcher_free(m);
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(lz);
    /* refusals */
    struct nextok_grammar *g = gbnf(src, NULL);
    struct nextok_lazy_params lp = nextok_lazy_default_params();
    const char *anchored[] = {"^<call>"}, *empty[] = {"a*"}, *broken[] = {"(ab"};
    lp.patterns = anchored, lp.n_patterns = 1;
    CHECK(nextok_grammar_init_lazy(&lz, g, &lp, NULL, &err) == NEXTOK_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "anchors") != NULL);
    lp.patterns = empty;
    CHECK(nextok_grammar_init_lazy(&lz, g, &lp, NULL, &err) == NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "empty string") != NULL);
    lp.patterns = broken;
    CHECK(nextok_grammar_init_lazy(&lz, g, &lp, NULL, &err) == NEXTOK_ERR_FORMAT);
    CHECK(strstr(err.msg, "column") != NULL);
    lp = nextok_lazy_default_params();
    CHECK(nextok_grammar_init_lazy(&lz, g, &lp, NULL, &err) == NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "no trigger") != NULL);
    const char *bad[] = {"a\xff"};
    lp.words = bad, lp.n_words = 1;
    CHECK(nextok_grammar_init_lazy(&lz, g, &lp, NULL, &err) == NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "UTF-8") != NULL);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
    nextok_vocab_free(mv);
}

TEST(masks_match_reference)
{
    rng_state = 42;
    struct nextok_grammar *json = NULL, *arith = gbnf_file("arithmetic.gbnf");
    struct nextok_grammar *list = gbnf_file("list.gbnf"), *jp = gbnf_file("japanese.gbnf");
    struct nextok_grammar *mb = gbnf(multibyte_gbnf, NULL), *bd = gbnf(bounded_gbnf, NULL);
    bool ok = false;
    struct nextok_error e2;
    CHECK_OK(nextok_grammar_accepts(bd, bounded_text, strlen(bounded_text), &ok, &e2));
    CHECK_MSG(ok, "the bounded grammar's text is no sentence of it");
    struct nextok_error err;
    CHECK_OK(nextok_grammar_init_json(&json, NULL, &err));
    const char *sample =
        "{\"name\": \"Zoë\", \"tags\": [\"a\\n\", -1.5e3, true, null],\n \"ok\": {}}";
    for (size_t i = 0; i < sizeof vocab_files / sizeof *vocab_files; i++) {
        struct nextok_vocab *v = load_vocab(vocab_files[i]);
        if (!v) continue;
        int32_t ids[256];
        char what[128];
        bool must = i != 3 && i != 4; /* not WordPiece (spaces) nor the tiny Unigram */
        size_t n = encode(v, sample, ids, 256);
        snprintf(what, sizeof what, "json, script: %s", strrchr(vocab_files[i], '/') + 1);
        walk_check(json, v, what, ids, n, must, (int)n, 60);
        snprintf(what, sizeof what, "json, random: %s", strrchr(vocab_files[i], '/') + 1);
        walk_check(json, v, what, NULL, 0, false, 12, 100);
        snprintf(what, sizeof what, "arithmetic: %s", strrchr(vocab_files[i], '/') + 1);
        walk_check(arith, v, what, NULL, 0, false, 10, 100);
        snprintf(what, sizeof what, "list: %s", strrchr(vocab_files[i], '/') + 1);
        walk_check(list, v, what, NULL, 0, false, 10, 100);
        snprintf(what, sizeof what, "japanese: %s", strrchr(vocab_files[i], '/') + 1);
        walk_check(jp, v, what, NULL, 0, false, 8, 100);
        n = encode(v, "αβγ é 😀🙏ü!", ids, 256);
        snprintf(what, sizeof what, "multibyte: %s", strrchr(vocab_files[i], '/') + 1);
        walk_check(mb, v, what, ids, n, must, (int)n + 1, 100);
        drop_tables();
        n = encode(v, bounded_text, ids, 256);
        snprintf(what, sizeof what, "counted: %s", strrchr(vocab_files[i], '/') + 1);
        walk_check(bd, v, what, ids, n, must, (int)n + 1, 25);
        drop_tables();
        nextok_vocab_free(v);
    }
    nextok_grammar_free(bd);
    nextok_grammar_free(json);
    nextok_grammar_free(arith);
    nextok_grammar_free(list);
    nextok_grammar_free(jp);
    nextok_grammar_free(mb);
}

/* A tiktoken vocabulary of the 256 bytes and n_extra distinct random tokens
 * of 2 to 10 characters over a few ASCII ones, tab, newline and é: short
 * words that counted repetitions of wide classes take in part. */
static struct nextok_vocab *random_tiktoken(int n_extra)
{
    static const char *const alph[] = {" ", "!", "a", "b", "c", "x", "y", "z", "0", "1", "9",
                                       "-", ".", "A", "B", "\"", "\n", "\t", "\xc3\xa9", ":",
                                       ",", "{", "}", "[", "]", "@"};
    size_t n_alph = sizeof alph / sizeof *alph, cap = (size_t)(256 + n_extra) * 48, n = 0;
    char *text = malloc(cap), *toks = malloc((size_t)n_extra * 24), line[48];
    for (int i = 0; i < 256 + n_extra; i++) {
        unsigned char one = (unsigned char)i, *p = &one;
        size_t len = 1;
        if (i >= 256) {
            p = (unsigned char *)toks + (size_t)(i - 256) * 24;
            do { /* a token not made before */
                len = 0;
                for (int k = 0, want = 2 + (int)(rnd() % 9); k < want; k++) {
                    const char *c = alph[rnd() % n_alph];
                    memcpy(p + len, c, strlen(c));
                    len += strlen(c);
                }
                p[len] = 0;
                for (int j = 256; j < i && len; j++)
                    if (!strcmp((char *)toks + (size_t)(j - 256) * 24, (char *)p)) len = 0;
            } while (!len);
        }
        size_t k = h_base64(p, len, line);
        n += (size_t)snprintf(text + n, cap - n, "%.*s %d\n", (int)k, line, i);
    }
    struct nextok_vocab *v = NULL;
    struct nextok_error e = {NEXTOK_OK, ""};
    CHECK_MSG(nextok_vocab_load_tiktoken_mem(&v, text, n, NULL, 0, &e) == NEXTOK_OK, "%s", e.msg);
    free(toks);
    free(text);
    return v;
}

/* Counted repetitions of wide classes followed by what takes some of the
 * same characters: deep in the repetition a looping character may lead
 * elsewhere than one repetition on (the repetition may end there), and
 * past its last repetition it always may. Every token's mask bit against
 * the reference along random walks; each of these once had wrong bits
 * (the schemas were found by a differential fuzz). */
TEST(counted_then_more)
{
    static const char *const res[] = {
        "[^\"\\\\]{2,5}[ -~]{0,2}b[!-~]{4,8}(aé)?", "[^\"\\\\]{1,9}a*[^a]{4,8}(a\\t)?",
        "[A-Za-z0-9 -]* *[A-Za-z0-9 -]{1,3}(a\\t)?", "\"[ -~]{4,5}(aé)?[ -~]{2,7} *",
        "\".{3,6}\"[a-z0-9 .!-]*[ -~]{0,2}b",         "\".{0,11} *",
        "[A-Za-z0-9 -]{2,9}a[^\"\\\\]{1,9}a*",        "\"[^\"\\\\]{3,6}x?y[!-~]{4,12}(a\\t)?",
        "x[ -~]{3} *\"",                              "\"[a-z0-9 .!-]{0,3}[ -~]{2,30}\"",
        "[^/\\\\]+\\.[A-Za-z0-9]{1,5}\"",            "(x[^\"]*|[a-c]+)*y",
        "x[!-~]{1,8} *[!-~]{2,6}\"",                  "x[!-~]{1,8}[^\\x00-\\x7F]*[!-~]{2,6}\"",
        "[^\"\\\\]{4}!",                               "x([^\"\\\\]{2,4})!y",
    };
    static const char *const schemas[] = {
        "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"pattern\": "
        "\"^[A-Za-z0-9 -]{3,10}$\"}}, \"additionalProperties\": false}",
        "{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"array\", \"items\": {\"type\": "
        "\"string\", \"maxLength\": 13, \"minLength\": 4}, \"maxItems\": 28}}, "
        "\"additionalProperties\": false, \"required\": [\"id\"]}",
        "{\"type\": \"object\", \"properties\": {\"email\": {\"type\": \"string\", \"maxLength\": 19, "
        "\"minLength\": 11}, \"tags\": {\"type\": \"string\", \"pattern\": \"^[A-Za-z0-9 -]{3,10}$\"}, "
        "\"name\": {\"type\": \"string\", \"pattern\": \"^.{2,5}$\"}}, \"required\": [\"email\"]}",
        "{\"type\": \"object\", \"properties\": {\"tags\": {\"type\": \"string\"}, \"name\": {\"type\": "
        "\"array\", \"items\": {\"type\": \"string\", \"maxLength\": 29, \"minLength\": 16}, "
        "\"maxItems\": 17}, \"email\": {\"type\": \"string\", \"pattern\": \"^[ -~]{0,6}b$\"}}, "
        "\"additionalProperties\": false}",
    };
    static const char *const instances[] = {
        "{\"name\": \"ab-12 xyz\"}",
        "{\"id\": [\"abcd\", \"abcdefghijklm\", \"a:b,c{d}e\"]}",
        "{\"email\": \"abcdefghijk\", \"tags\": \"a b-c\", \"name\": \"x\\\"é\"}",
        "{\"tags\": \"q\", \"name\": [\"abcdefghijklmnop\"], \"email\": \"   zab\"}",
    };
    struct nextok_vocab *v = random_tiktoken(1500);
    for (size_t i = 0; v && i < sizeof res / sizeof *res; i++) {
        struct nextok_grammar *g = NULL;
        struct nextok_error err;
        CHECK_OK(nextok_grammar_init_regex(&g, res[i], strlen(res[i]), NULL, &err));
        if (g) walk_check(g, v, res[i], NULL, 0, false, 8, 1000);
        nextok_grammar_free(g);
        drop_tables();
    }
    for (size_t i = 0; v && i < sizeof schemas / sizeof *schemas; i++) {
        struct nextok_grammar *g = NULL;
        struct nextok_error err;
        char what[32];
        snprintf(what, sizeof what, "schema %zu", i + 1);
        CHECK_OK(nextok_grammar_init_json_schema(&g, schemas[i], strlen(schemas[i]), NULL, NULL,
                                                 &err));
        int32_t ids[128];
        size_t n = encode(v, instances[i], ids, 128);
        CHECK(n > 0);
        if (g) walk_check(g, v, what, ids, n, true, (int)n + 1, 150);
        nextok_grammar_free(g);
        drop_tables();
    }
    nextok_vocab_free(v);
}

/* ---- the API's promises ---------------------------------------------------------------- */

static struct nextok_vocab *gpt2(void) { return load_vocab("vocab/hf/gpt2/tokenizer.json"); }

/* A JSON Schema with properties in any order: masks along an instance
 * written out of schema order, against the reference. */
TEST(any_order_masks)
{
    static const char schema[] =
        "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"age\":"
        "{\"type\":\"integer\"},\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"b\"]}},"
        "\"ok\":{\"type\":\"boolean\"}},\"required\":[\"name\",\"ok\"],"
        "\"additionalProperties\":false}";
    static const char text[] = "{\"ok\": true, \"tags\": [\"b\"], \"name\": \"Zoë\", \"age\": 41}";
    rng_state = 11;
    struct nextok_vocab *v = gpt2();
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.order = NEXTOK_JSON_ORDER_ANY;
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_grammar_init_json_schema(&g, schema, strlen(schema), &sp, NULL, &err));
    int32_t ids[128];
    size_t n = v ? encode(v, text, ids, 128) : 0;
    if (g && n) walk_check(g, v, "any order: gpt2", ids, n, true, (int)n + 1, 100);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

static int32_t find(const struct nextok_vocab *v, const char *bytes)
{
    for (int32_t id = 0; id < nextok_vocab_n_tokens(v); id++) {
        size_t n = 0;
        const char *b = nextok_vocab_token_bytes(v, id, &n);
        if (n == strlen(bytes) && memcmp(b, bytes, n) == 0 &&
            !(nextok_vocab_token_attrs(v, id) & NEXTOK_TOKEN_ATTR_SPECIAL))
            return id;
    }
    CHECK_MSG(0, "no token \"%s\"", bytes);
    return 0;
}

TEST(rollback_and_clone)
{
    struct nextok_vocab *v = gpt2();
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_grammar_init_json(&g, NULL, &err));
    struct nextok_compiled_grammar *cg = compile(g, v);
    struct nextok_matcher *m = NULL, *c = NULL;
    CHECK_OK(nextok_matcher_init(&m, cg, &err));
    int32_t ids[64];
    size_t n = encode(v, "{\"a\": [1, 2.5], \"bé\": \"x\\\"y\"}", ids, 64);
    CHECK(n > 8);
    size_t words = NEXTOK_BITMASK_WORDS(nextok_vocab_n_tokens(v));
    int32_t *masks = malloc((n + 1) * words * sizeof *masks), *cur = malloc(words * sizeof *cur);
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(nextok_matcher_fill_bitmask(m, masks + i * words, words, NULL, &err));
        CHECK_OK(nextok_matcher_accept_token(m, ids[i], &err));
        if (i == 4) CHECK_OK(nextok_matcher_clone(&c, m, &err));
    }
    CHECK(nextok_matcher_is_accepting(m));
    CHECK_EQ_INT((int)nextok_matcher_n_steps(m), (int)n);
    /* roll back in uneven strides; each state's mask is the one recorded */
    size_t at = n;
    for (size_t k = 1; at > 0; k++) {
        size_t back = k < at ? k : at;
        CHECK_OK(nextok_matcher_rollback(m, back, &err));
        at -= back;
        CHECK_OK(nextok_matcher_fill_bitmask(m, cur, words, NULL, &err));
        CHECK_MSG(memcmp(cur, masks + at * words, words * sizeof *cur) == 0,
                  "mask after rollback to step %zu differs", at);
    }
    CHECK(nextok_matcher_rollback(m, 1, &err) == NEXTOK_ERR_INVALID_ARG);
    /* the clone went on from step 5 alone, and agrees */
    for (size_t i = 5; c && i < n; i++) {
        CHECK_OK(nextok_matcher_fill_bitmask(c, cur, words, NULL, &err));
        CHECK(memcmp(cur, masks + i * words, words * sizeof *cur) == 0);
        CHECK_OK(nextok_matcher_accept_token(c, ids[i], &err));
    }
    CHECK(c && nextok_matcher_is_accepting(c));
    nextok_matcher_reset(c);
    CHECK_EQ_INT((int)nextok_matcher_n_steps(c), 0);
    CHECK_OK(nextok_matcher_fill_bitmask(c, cur, words, NULL, &err));
    CHECK(memcmp(cur, masks, words * sizeof *cur) == 0);
    nextok_matcher_free(c); /* the shared cache outlives one of its matchers */
    CHECK_OK(nextok_matcher_accept_token(m, ids[0], &err));
    nextok_matcher_free(m);
    free(masks);
    free(cur);
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

TEST(failed_calls_change_nothing)
{
    struct nextok_vocab *v = gpt2();
    struct nextok_grammar *g = gbnf("root ::= \"ab\" [0-9]+ \"c\"\n", NULL);
    struct nextok_compiled_grammar *cg = compile(g, v);
    struct nextok_matcher *m = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_matcher_init(&m, cg, &err));
    int32_t eot = 50256;
    CHECK(nextok_matcher_accept_token(m, find(v, "x"), &err) == NEXTOK_ERR_REJECTED);
    CHECK(strstr(err.msg, "not allowed") != NULL);
    CHECK(nextok_matcher_accept_token(m, eot, &err) == NEXTOK_ERR_REJECTED);
    CHECK(nextok_matcher_accept_token(m, -1, &err) == NEXTOK_ERR_TOKEN_RANGE);
    CHECK(nextok_matcher_accept_token(m, 50257, &err) == NEXTOK_ERR_TOKEN_RANGE);
    CHECK(nextok_matcher_accept_bytes(m, "abx", 3, &err) == NEXTOK_ERR_REJECTED);
    CHECK(strstr(err.msg, "byte 3 of 3") != NULL);
    CHECK_EQ_INT((int)nextok_matcher_n_steps(m), 0);
    int32_t w[2];
    CHECK(nextok_matcher_fill_bitmask(m, w, 2, NULL, &err) == NEXTOK_ERR_INVALID_ARG);
    /* forced bytes: "ab" at the start, nothing after (a digit of ten), "c"
     * never alone (more digits may come) */
    char fb[16];
    size_t n = 0;
    CHECK_OK(nextok_matcher_forced_bytes(m, fb, sizeof fb, &n, &err));
    CHECK(n == 2 && memcmp(fb, "ab", 2) == 0);
    CHECK_OK(nextok_matcher_forced_bytes(m, fb, 1, &n, &err));
    CHECK(n == 1 && fb[0] == 'a');
    CHECK_OK(nextok_matcher_accept_bytes(m, "ab", 2, &err));
    CHECK_OK(nextok_matcher_forced_bytes(m, fb, sizeof fb, &n, &err));
    CHECK_EQ_INT((int)n, 0);
    CHECK_OK(nextok_matcher_accept_token(m, find(v, "12"), &err));
    CHECK(!nextok_matcher_is_accepting(m));
    bool ok = true;
    CHECK_OK(nextok_matcher_is_allowed(m, eot, &ok, &err));
    CHECK(!ok);
    CHECK_OK(nextok_matcher_accept_token(m, find(v, "c"), &err));
    CHECK(nextok_matcher_is_accepting(m) && !nextok_matcher_is_terminated(m));
    size_t words = NEXTOK_BITMASK_WORDS(50257);
    int32_t *mask = calloc(words + 3, sizeof *mask);
    size_t n_allowed = 0;
    mask[words + 2] = -1;
    CHECK_OK(nextok_matcher_fill_bitmask(m, mask, words + 3, &n_allowed, &err));
    CHECK_EQ_INT((int)n_allowed, 1); /* only the end of text */
    CHECK(bit(mask, eot) && mask[words + 2] == 0);
    CHECK_OK(nextok_matcher_accept_token(m, eot, &err));
    CHECK(nextok_matcher_is_terminated(m) && nextok_matcher_is_accepting(m));
    CHECK(nextok_matcher_accept_token(m, eot, &err) == NEXTOK_ERR_STATE);
    CHECK(nextok_matcher_fill_bitmask(m, mask, words, NULL, &err) == NEXTOK_ERR_STATE);
    CHECK_OK(nextok_matcher_rollback(m, 1, &err));
    CHECK(!nextok_matcher_is_terminated(m));
    free(mask);
    nextok_matcher_free(m);
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

TEST(token_references)
{
    struct nextok_vocab *v = gpt2();
    /* "<|endoftext|>" by reference, then text; !<[11]> any token but "," */
    struct nextok_grammar *g = gbnf("root ::= <[50256]> \"x\" !<[11]> \"y\"\n", v);
    struct nextok_compiled_grammar *cg = compile(g, v);
    struct nextok_matcher *m = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_matcher_init(&m, cg, &err));
    size_t words = NEXTOK_BITMASK_WORDS(50257), n = 0;
    int32_t *mask = calloc(words, sizeof *mask);
    CHECK_OK(nextok_matcher_fill_bitmask(m, mask, words, &n, &err));
    CHECK(n == 1 && bit(mask, 50256));
    CHECK(nextok_matcher_accept_bytes(m, "<|endoftext|>", 13, &err) == NEXTOK_ERR_REJECTED);
    CHECK_OK(nextok_matcher_accept_token(m, 50256, &err));
    CHECK(!nextok_matcher_is_terminated(m));
    CHECK_OK(nextok_matcher_accept_token(m, find(v, "x"), &err));
    CHECK_OK(nextok_matcher_fill_bitmask(m, mask, words, &n, &err));
    CHECK(n == 50256 && !bit(mask, 11) && bit(mask, 12));
    CHECK(nextok_matcher_accept_token(m, 11, &err) == NEXTOK_ERR_REJECTED);
    CHECK_OK(nextok_matcher_accept_token(m, find(v, "hello"), &err));
    CHECK_OK(nextok_matcher_accept_token(m, find(v, "y"), &err));
    CHECK(nextok_matcher_is_accepting(m));
    free(mask);
    nextok_matcher_free(m);
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

TEST(dead_ends_are_never_allowed)
{
    /* "x" a: a never ends, so "x" is no prefix of any sentence; an empty
     * class is nothing; the root's only way out is "ok" */
    struct nextok_vocab *v = gpt2();
    struct nextok_grammar *g = gbnf("root ::= \"o\" (\"x\" a | [^\\x00-\\U0010FFFF] | \"k\")\n"
                                    "a ::= \"y\" a\n",
                                    NULL);
    struct nextok_compiled_grammar *cg = compile(g, v);
    struct nextok_matcher *m = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_matcher_init(&m, cg, &err));
    CHECK(nextok_matcher_accept_bytes(m, "ox", 2, &err) == NEXTOK_ERR_REJECTED);
    char fb[8];
    size_t n = 0;
    CHECK_OK(nextok_matcher_forced_bytes(m, fb, sizeof fb, &n, &err));
    CHECK(n == 2 && memcmp(fb, "ok", 2) == 0);
    nextok_matcher_free(m);
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(g);
    g = gbnf("root ::= \"x\" a\na ::= \"y\" a\n", NULL);
    struct nextok_compiled_grammar *none = NULL;
    CHECK(nextok_compiled_grammar_init(&none, g, table_of(v), NULL, &err) == NEXTOK_ERR_FORMAT);
    CHECK(none == NULL && strstr(err.msg, "matches nothing"));
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

TEST(limits)
{
    struct nextok_vocab *v = gpt2();
    struct nextok_error err;
    /* after n "x", 2^n stacks: each "x" may close with "y" or with "z" */
    struct nextok_grammar *g =
        gbnf("root ::= a\na ::= \"x\" a \"y\" | \"x\" a \"z\" | \"x\"\n", NULL);
    struct nextok_compile_params p = nextok_compile_default_params();
    p.max_stacks = 64;
    struct nextok_compiled_grammar *cg = NULL;
    CHECK_OK(nextok_compiled_grammar_init(&cg, g, table_of(v), &p, &err));
    struct nextok_matcher *m = NULL;
    CHECK_OK(nextok_matcher_init(&m, cg, &err));
    CHECK_OK(nextok_matcher_accept_bytes(m, "xxxx", 4, &err));
    CHECK(nextok_matcher_accept_bytes(m, "x", 1, &err) == NEXTOK_ERR_LIMIT);
    CHECK(strstr(err.msg, "max_stacks") != NULL);
    CHECK_EQ_INT((int)nextok_matcher_n_steps(m), 1);
    nextok_matcher_free(m);
    nextok_compiled_grammar_free(cg);
    /* a cache too small for one mask */
    p = nextok_compile_default_params();
    p.max_cache_bytes = 64 << 10;
    CHECK_OK(nextok_compiled_grammar_init(&cg, g, table_of(v), &p, &err));
    CHECK_OK(nextok_matcher_init(&m, cg, &err));
    size_t words = NEXTOK_BITMASK_WORDS(50257);
    int32_t *mask = calloc(words, sizeof *mask);
    nextok_status st = NEXTOK_OK;
    for (int i = 0; i < 64 && st == NEXTOK_OK; i++) {
        st = nextok_matcher_fill_bitmask(m, mask, words, NULL, &err);
        if (st == NEXTOK_OK) st = nextok_matcher_accept_bytes(m, "x", 1, &err);
    }
    CHECK(st == NEXTOK_ERR_LIMIT && strstr(err.msg, "max_cache_bytes"));
    size_t steps = nextok_matcher_n_steps(m);
    CHECK(nextok_matcher_fill_bitmask(m, mask, words, NULL, &err) == NEXTOK_ERR_LIMIT);
    CHECK(nextok_matcher_n_steps(m) == steps);
    p.max_work = 0;
    struct nextok_compiled_grammar *bad = NULL;
    CHECK(nextok_compiled_grammar_init(&bad, g, table_of(v), &p, &err) == NEXTOK_ERR_INVALID_ARG);
    free(mask);
    nextok_matcher_free(m);
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

/* ---- allocation failures ------------------------------------------------------------- */


TEST(every_allocation_failing)
{
    struct nextok_vocab *v = load_vocab("vocab/synthetic/unigram.json");
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_grammar_init_json(&g, NULL, &err));
    const struct nextok_allocator a = {f_alloc, f_realloc, f_free, NULL};
    struct nextok_compile_params p = nextok_compile_default_params();
    p.allocator = &a;
    size_t words = NEXTOK_BITMASK_WORDS(nextok_vocab_n_tokens(v));
    int32_t *mask = calloc(words, sizeof *mask);
    long points = 0;
    for (fail_at = 1;; fail_at++, points++) {
        calls = live = 0;
        struct nextok_token_table *tt = NULL;
        struct nextok_compiled_grammar *cg = NULL;
        struct nextok_matcher *m = NULL, *c = NULL;
        nextok_status st = nextok_token_table_init(&tt, v, &a, &err);
        if (st == NEXTOK_OK) st = nextok_compiled_grammar_init(&cg, g, tt, &p, &err);
        if (st == NEXTOK_OK) st = nextok_matcher_init(&m, cg, &err);
        if (st == NEXTOK_OK) st = nextok_matcher_fill_bitmask(m, mask, words, NULL, &err);
        if (st == NEXTOK_OK) st = nextok_matcher_accept_bytes(m, "{\"a\": [1", 8, &err);
        if (st == NEXTOK_OK) st = nextok_matcher_clone(&c, m, &err);
        if (st == NEXTOK_OK) st = nextok_matcher_fill_bitmask(c, mask, words, NULL, &err);
        nextok_matcher_free(c);
        nextok_matcher_free(m);
        nextok_compiled_grammar_free(cg);
        nextok_token_table_free(tt);
        CHECK_MSG(live == 0, "allocation %ld failing: %ld blocks left", fail_at, live);
        if (calls < fail_at) {
            CHECK(st == NEXTOK_OK);
            break;
        }
        CHECK_MSG(st == NEXTOK_ERR_NOMEM && strstr(err.msg, "out of memory"),
                  "allocation %ld failing: %s %s", fail_at, nextok_status_name(st), err.msg);
    }
    CHECK(points > 20);
    printf("  %ld failure points\n", points);
    free(mask);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

/* ---- threads --------------------------------------------------------------------------- */

struct job {
    struct nextok_matcher *m;
    const int32_t *ids;
    size_t n, words;
    const int32_t *want; /* the masks a lone matcher gave */
    int bad;
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    int32_t *mask = malloc(j->words * sizeof *mask);
    struct nextok_error err;
    for (int rep = 0; rep < 20; rep++) {
        nextok_matcher_reset(j->m);
        for (size_t i = 0; i < j->n; i++) {
            if (nextok_matcher_fill_bitmask(j->m, mask, j->words, NULL, &err) != NEXTOK_OK ||
                memcmp(mask, j->want + i * j->words, j->words * sizeof *mask) != 0 ||
                nextok_matcher_accept_token(j->m, j->ids[i], &err) != NEXTOK_OK)
                j->bad++;
        }
    }
    free(mask);
    return NULL;
}

TEST(threads_share_a_compiled_grammar)
{
    struct nextok_vocab *v = gpt2();
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    CHECK_OK(nextok_grammar_init_json(&g, NULL, &err));
    struct nextok_compiled_grammar *cg = compile(g, v);
    int32_t ids[64];
    size_t n = encode(v, "[{\"k\": \"v\"}, 12, \"é\"]", ids, 64);
    size_t words = NEXTOK_BITMASK_WORDS(50257);
    int32_t *want = malloc(n * words * sizeof *want);
    struct nextok_matcher *m0 = NULL;
    CHECK_OK(nextok_matcher_init(&m0, cg, &err));
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(nextok_matcher_fill_bitmask(m0, want + i * words, words, NULL, &err));
        CHECK_OK(nextok_matcher_accept_token(m0, ids[i], &err));
    }
    nextok_matcher_reset(m0);
    /* two fresh matchers and two clones of one (sharing its cache) */
    struct job jobs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        jobs[t] = (struct job){NULL, ids, n, words, want, 0};
        if (t < 2)
            CHECK_OK(nextok_matcher_init(&jobs[t].m, cg, &err));
        else
            CHECK_OK(nextok_matcher_clone(&jobs[t].m, m0, &err));
        pthread_create(&th[t], NULL, run_job, &jobs[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK_EQ_INT(jobs[t].bad, 0);
        nextok_matcher_free(jobs[t].m);
    }
    nextok_matcher_free(m0);
    free(want);
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(g);
    drop_tables();
    nextok_vocab_free(v);
}

int main(int argc, char **argv)
{
    harness_init(argc, argv);
    if (GROUP("threads")) { /* alone, for the TSan tier */
        RUN(threads_share_a_compiled_grammar);
        return harness_done();
    }
    RUN(masks_match_reference);
    RUN(counted_then_more);
    RUN(any_order_masks);
    RUN(lazy_grammars);
    RUN(lazy_patterns);
    RUN(rollback_and_clone);
    RUN(failed_calls_change_nothing);
    RUN(token_references);
    RUN(dead_ends_are_never_allowed);
    RUN(limits);
    RUN(every_allocation_failing);
    RUN(threads_share_a_compiled_grammar);
    return harness_done();
}
