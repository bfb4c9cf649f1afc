/*
 * Sessions end to end on real vocabularies (the fixtures in tests/data/):
 * synthetic logits force the chosen token at each step (one huge logit), and
 * the text deltas, finish reasons, logprobs, prompt context, clone, reset and
 * failed steps are checked. With NEXTOK_BENCH=1 it also measures the
 * detokenizer + stop matcher throughput (16 stop strings) on the Austen corpus
 * from the data folder outside the repo (NEXTOK_DATA_DIR).
 */
#include "harness.h"
#include "nextok.h"

#include <stdint.h>
#include <time.h>

/* A fixture from tests/data/; missing or unreadable is a failure. */
static struct nextok_vocab *load_vocab(const char *rel)
{
    char path[1024];
    fixture_path(path, sizeof path, rel);
    struct nextok_vocab *v = NULL;
    struct nextok_error err = {0};
    nextok_status rc = nextok_vocab_load_file(&v, path, &err);
    CHECK_MSG(rc == NEXTOK_OK, "loading %s: %s", path, err.msg);
    return v;
}

#define GPT2 "vocab/gguf/ggml-vocab-gpt-2.gguf"
#define PHI3 "vocab/gguf/ggml-vocab-phi-3.gguf"

static int32_t tok(const struct nextok_vocab *v, const char *stored)
{
    int32_t id = nextok_vocab_find(v, stored, strlen(stored));
    CHECK_MSG(id >= 0, "token '%s' not in the vocabulary", stored);
    return id;
}

/* ---- a driver: one row per step that forces a token ----------------------- */

struct driver {
    struct nextok_vocab *v;
    struct nextok_session *s;
    float *row;
    int32_t n_vocab;
    char text[4096];   /* every delta, concatenated */
    size_t n_text;
    struct nextok_step_result last;
};

struct setup {
    const char *const *stops;
    size_t n_stops;
    const char *regex;
    int32_t max_tokens, min_tokens;
    bool include_stop, skip_special;
    size_t top_logprobs;
    enum nextok_profile profile;
};

static bool driver_init(struct driver *d, struct nextok_vocab *v, const struct setup *su)
{
    memset(d, 0, sizeof *d);
    d->v = v;
    d->n_vocab = nextok_vocab_n_tokens(v);
    d->row = calloc((size_t)d->n_vocab, sizeof *d->row);
    struct nextok_sampling_params sp = nextok_sampling_default_params(su->profile);
    sp.n_vocab = d->n_vocab;
    sp.seed = 42;
    sp.temperature = 0.0f; /* greedy: the forced token always wins */
    struct nextok_stop_params stop = nextok_stop_default_params();
    stop.strings = su->stops;
    stop.n_strings = su->n_stops;
    stop.regex = su->regex;
    stop.max_tokens = su->max_tokens;
    stop.min_tokens = su->min_tokens;
    stop.include_stop = su->include_stop;
    struct nextok_decode_params dp = nextok_decode_default_params();
    dp.skip_special_tokens = su->skip_special;
    struct nextok_session_params p = nextok_session_default_params();
    p.sampling = &sp;
    p.stop = &stop;
    p.decode = &dp;
    p.vocab = v;
    p.logprobs = true;
    p.top_logprobs = su->top_logprobs;
    struct nextok_error err = {0};
    nextok_status rc = nextok_session_init(&d->s, &p, &err);
    CHECK_MSG(rc == NEXTOK_OK, "session_init: %s", err.msg);
    return rc == NEXTOK_OK && d->row;
}

static void driver_free(struct driver *d)
{
    nextok_session_free(d->s);
    free(d->row);
}

/* A row where `id` has logit 30, `second` (if >= 0) 20, the rest 0. */
static void set_row(struct driver *d, int32_t id, int32_t second)
{
    memset(d->row, 0, (size_t)d->n_vocab * sizeof *d->row);
    if (id >= 0) d->row[id] = 30.0f;
    if (second >= 0) d->row[second] = 20.0f;
}

static nextok_status step2(struct driver *d, int32_t id, int32_t second)
{
    set_row(d, id, second);
    nextok_status rc = nextok_session_step(d->s, d->row, NEXTOK_DTYPE_F32, &d->last);
    if (rc == NEXTOK_OK) {
        memcpy(d->text + d->n_text, d->last.text, d->last.text_len);
        d->n_text += d->last.text_len;
    }
    return rc;
}

static nextok_status step(struct driver *d, int32_t id) { return step2(d, id, -1); }

static bool text_is(const struct driver *d, const char *want)
{
    return d->n_text == strlen(want) && memcmp(d->text, want, d->n_text) == 0;
}

#define CHECK_TEXT(d, want) \
    CHECK_MSG(text_is(d, want), "text = '%.*s', want '%s'", (int)(d)->n_text, (d)->text, want)
#define CHECK_DELTA(d, want)                                                                   \
    CHECK_MSG((d)->last.text_len == strlen(want) && memcmp((d)->last.text, want,               \
                                                           strlen(want)) == 0,                 \
              "delta = '%.*s', want '%s'", (int)(d)->last.text_len, (d)->last.text, want)

#define NEED_VOCAB(var, rel)                                               \
    struct nextok_vocab *var = load_vocab(rel);                            \
    if (!var) return /* load_vocab reported why */

/* ---- tests --------------------------------------------------------------- */

TEST(stop_string_across_tokens)
{
    NEED_VOCAB(v, GPT2);
    const char *stops[] = {"lo wor"};
    struct setup su = {.stops = stops, .n_stops = 1};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "Hel")));
        CHECK_DELTA(&d, "He");   /* "l" could start "lo wor" */
        CHECK_OK(step(&d, tok(v, "lo")));
        CHECK_DELTA(&d, "l");    /* "lo" is held now */
        CHECK_OK(step(&d, tok(v, "Ġwor")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_STOP_STRING);
        CHECK_EQ_INT(d.last.which, 0);
        CHECK_TEXT(&d, "Hel");
        CHECK_EQ_INT(nextok_session_n_tokens(d.s), 3);
        /* a step after the end is refused and changes nothing */
        CHECK_EQ_INT(step(&d, tok(v, "ld")), NEXTOK_ERR_STATE);
        CHECK(strstr(nextok_session_errmsg(d.s), "reset") != NULL);
        CHECK_EQ_INT(nextok_session_n_tokens(d.s), 3);
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

TEST(eos_and_length)
{
    NEED_VOCAB(v, GPT2);
    struct setup su = {.max_tokens = 3};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "Hello")));
        CHECK_OK(step(&d, tok(v, "<|endoftext|>")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_EOS);
        CHECK_TEXT(&d, "Hello");
        nextok_session_reset(d.s);
        d.n_text = 0;
        CHECK_OK(step(&d, tok(v, "Hello")));
        CHECK_OK(step(&d, tok(v, "Ġworld")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_NONE);
        CHECK_OK(step(&d, tok(v, "!")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_LENGTH);
        CHECK_TEXT(&d, "Hello world!");
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

/* "é" = C3 A9 is two byte tokens in GPT-2: the first gives no text. */
TEST(utf8_split_tokens)
{
    NEED_VOCAB(v, GPT2);
    const char *stops[] = {"\xC3\xA9"};
    struct setup su = {.stops = stops, .n_stops = 1};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "ĠCaf")));
        CHECK_DELTA(&d, " Caf");
        CHECK_OK(step(&d, tok(v, "\xC3\x83"))); /* "Ã": byte C3 */
        CHECK_DELTA(&d, "");
        CHECK_OK(step(&d, tok(v, "\xC2\xA9"))); /* "©": byte A9 */
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_STOP_STRING);
        CHECK_TEXT(&d, " Caf");
    }
    driver_free(&d);

    /* length in the middle of a character: the flush gives U+FFFD */
    su = (struct setup){.max_tokens = 2};
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "ĠCaf")));
        CHECK_OK(step(&d, tok(v, "\xC3\x83")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_LENGTH);
        CHECK_TEXT(&d, " Caf\xEF\xBF\xBD");
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

TEST(byte_fallback_emoji)
{
    NEED_VOCAB(v, PHI3);
    /* 😀 = F0 9F 98 80 as four <0xNN> tokens; stop on it, text before kept */
    const char *stops[] = {"\xF0\x9F\x98\x80"};
    struct setup su = {.stops = stops, .n_stops = 1};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "\xE2\x96\x81Hi")));
        CHECK_OK(step(&d, tok(v, "<0xF0>")));
        CHECK_OK(step(&d, tok(v, "<0x9F>")));
        CHECK_OK(step(&d, tok(v, "<0x98>")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_NONE);
        CHECK_OK(step(&d, tok(v, "<0x80>")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_STOP_STRING);
        CHECK_TEXT(&d, "Hi");
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

TEST(include_stop_and_regex)
{
    NEED_VOCAB(v, GPT2);
    const char *stops[] = {"world"};
    struct setup su = {.stops = stops, .n_stops = 1, .include_stop = true};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "Hello")));
        CHECK_OK(step(&d, tok(v, "Ġworld")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_STOP_STRING);
        CHECK_TEXT(&d, "Hello world");
    }
    driver_free(&d);
#if defined(NEXTOK_HAVE_PCRE2)
    su = (struct setup){.regex = "[0-9]+!"};
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "Hello")));
        CHECK_OK(step(&d, tok(v, "Ġ12")));
        CHECK_DELTA(&d, " ");
        CHECK_OK(step(&d, tok(v, "!")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_STOP_REGEX);
        CHECK_TEXT(&d, "Hello ");
    }
    driver_free(&d);
#endif
    nextok_vocab_free(v);
}

/* min_tokens: end ids are suppressed in the logits, so the runner-up wins. */
TEST(min_tokens_suppresses_eos)
{
    NEED_VOCAB(v, GPT2);
    struct setup su = {.min_tokens = 2};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        int32_t eos = tok(v, "<|endoftext|>"), x = tok(v, "x");
        CHECK_OK(step2(&d, eos, x));
        CHECK_EQ_INT(d.last.token, x);
        CHECK_OK(step2(&d, eos, x));
        CHECK_EQ_INT(d.last.token, x);
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_NONE);
        CHECK_OK(step2(&d, eos, x));
        CHECK_EQ_INT(d.last.token, eos);
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_EOS);
        CHECK_TEXT(&d, "xx");
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

TEST(logprobs_with_bytes)
{
    NEED_VOCAB(v, GPT2);
    struct setup su = {.top_logprobs = 3};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        int32_t a = tok(v, "Ġworld"), b = tok(v, "Ġthere");
        CHECK_OK(step2(&d, a, b));
        CHECK_EQ_INT(d.last.token, a);
        CHECK_EQ_INT(d.last.rank, 1);
        CHECK_NEAR(d.last.logprob, 0.0, 1e-3);
        CHECK_EQ_INT(d.last.n_top, 3);
        if (d.last.n_top == 3) {
            CHECK_EQ_INT(d.last.top[0].id, a);
            CHECK_EQ_INT(d.last.top[1].id, b);
            CHECK_NEAR(d.last.top[1].logprob, -10.0, 1e-3);
            CHECK(d.last.top[0].len == 6 && memcmp(d.last.top[0].bytes, " world", 6) == 0);
            CHECK(d.last.top[1].len == 6 && memcmp(d.last.top[1].bytes, " there", 6) == 0);
            CHECK_EQ_INT(d.last.top[2].id, 0); /* the rest tie at 0: lowest id */
        }
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

/* The last prompt token is context: a SentencePiece "▁Hello" keeps its space. */
TEST(prompt_context)
{
    NEED_VOCAB(v, PHI3);
    struct setup su = {0};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        int32_t hello = tok(v, "\xE2\x96\x81Hello");
        CHECK_OK(step(&d, hello));
        CHECK_TEXT(&d, "Hello"); /* the start of a text: as HF decode([id]) */
        nextok_session_reset(d.s);
        d.n_text = 0;
        int32_t prompt[] = {1, tok(v, "\xE2\x96\x81Say")};
        CHECK_OK(nextok_session_set_prompt(d.s, prompt, 2));
        CHECK_OK(step(&d, hello));
        CHECK_TEXT(&d, " Hello");
        CHECK_EQ_INT(nextok_session_set_prompt(d.s, prompt, 2), NEXTOK_ERR_STATE);
        int32_t bad = -4;
        nextok_session_reset(d.s);
        CHECK_EQ_INT(nextok_session_set_prompt(d.s, &bad, 1), NEXTOK_ERR_TOKEN_RANGE);
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

TEST(failed_step_changes_nothing)
{
    NEED_VOCAB(v, GPT2);
    const char *stops[] = {"lo wor"};
    struct setup su = {.stops = stops, .n_stops = 1};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "Hel")));
        CHECK_OK(step(&d, tok(v, "\xC3\x83")));
        set_row(&d, 5, -1);
        d.row[7] = NAN;
        struct nextok_step_result r;
        CHECK_EQ_INT(nextok_session_step(d.s, d.row, NEXTOK_DTYPE_F32, &r), NEXTOK_ERR_NAN);
        CHECK(strstr(nextok_session_errmsg(d.s), "NaN") != NULL);
        CHECK_EQ_INT(nextok_session_step(d.s, NULL, NEXTOK_DTYPE_F32, &r), NEXTOK_ERR_INVALID_ARG);
        CHECK_EQ_INT(nextok_session_n_tokens(d.s), 2);
        CHECK_EQ_INT(nextok_chain_step(nextok_session_chain(d.s)), 2);
        CHECK_OK(step(&d, tok(v, "\xC2\xA9")));
        CHECK_DELTA(&d, "l\xC3\xA9"); /* held "l" and the completed é */
        CHECK_OK(nextok_session_finish(d.s, &d.last));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_NONE);
        CHECK_EQ_INT(d.last.token, -1);
        CHECK_TEXT(&d, "Hel\xC3\xA9");
        CHECK_EQ_INT(nextok_session_finish(d.s, &d.last), NEXTOK_ERR_STATE);
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

/* A sampler whose accept fails on one token: makes a step fail after the
 * detokenizer and the stop matcher have already run. */
struct refuser {
    int32_t refuse;
};

static const char *refuser_name(const struct nextok_sampler *s)
{
    (void)s;
    return "refuser";
}

static nextok_status refuser_accept(struct nextok_sampler *s, int32_t token)
{
    const struct refuser *r = nextok_sampler_ctx(s);
    if (token == r->refuse)
        return nextok_sampler_set_error(s, NEXTOK_ERR_INTERNAL, "refusing token %d", (int)token);
    return NEXTOK_OK;
}

static nextok_status refuser_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                   uint64_t step)
{
    (void)s, (void)cur, (void)step;
    return NEXTOK_OK;
}

static const struct nextok_sampler_i REFUSER = {
    .name = refuser_name, .accept = refuser_accept, .apply = refuser_apply,
};

/* Put the refuser first in the session's chain. */
static void add_refuser(struct nextok_session *s, struct refuser *r)
{
    struct nextok_chain *c = nextok_session_chain(s);
    struct nextok_sampler *keep[32], *ref = NULL;
    size_t n = nextok_chain_n(c);
    for (size_t i = 0; i < n && i < 32; i++) keep[i] = nextok_chain_remove(c, 0);
    CHECK_OK(nextok_sampler_init(&ref, &REFUSER, r));
    CHECK_OK(nextok_chain_add(c, ref));
    for (size_t i = 0; i < n && i < 32; i++) CHECK_OK(nextok_chain_add(c, keep[i]));
}

TEST(failed_accept_rolls_back)
{
    NEED_VOCAB(v, GPT2);
    const char *stops[] = {"lo wor"};
    struct setup su = {.stops = stops, .n_stops = 1};
    struct driver d;
    struct refuser r = {.refuse = tok(v, "\xC2\xA9")};
    if (driver_init(&d, v, &su)) {
        add_refuser(d.s, &r);
        CHECK_OK(step(&d, tok(v, "Hel")));
        CHECK_OK(step(&d, tok(v, "\xC3\x83")));
        CHECK_TEXT(&d, "He");
        for (int k = 0; k < 2; k++) { /* twice: the spare must be rebuilt */
            CHECK_EQ_INT(step(&d, r.refuse), NEXTOK_ERR_INTERNAL);
            CHECK(strstr(nextok_session_errmsg(d.s), "refusing") != NULL);
            CHECK_EQ_INT(nextok_session_n_tokens(d.s), 2);
            CHECK_EQ_INT(nextok_chain_step(nextok_session_chain(d.s)), 2);
        }
        r.refuse = -1;
        CHECK_OK(step(&d, tok(v, "\xC2\xA9")));
        CHECK_DELTA(&d, "l\xC3\xA9"); /* the held "l" and the byte C3 survived */
        CHECK_OK(step(&d, tok(v, "lo")));
        CHECK_OK(step(&d, tok(v, "Ġwor")));
        CHECK_EQ_INT(d.last.finish, NEXTOK_FINISH_STOP_STRING);
        CHECK_TEXT(&d, "Hel\xC3\xA9");
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

TEST(finish_flushes_held_text)
{
    NEED_VOCAB(v, GPT2);
    const char *stops[] = {"lo wor"};
    struct setup su = {.stops = stops, .n_stops = 1};
    struct driver d;
    if (driver_init(&d, v, &su)) {
        CHECK_OK(step(&d, tok(v, "Hel")));
        CHECK_OK(step(&d, tok(v, "lo")));
        CHECK_OK(step(&d, tok(v, "\xC3\x83")));
        CHECK_TEXT(&d, "Hel");
        struct nextok_step_result r;
        CHECK_OK(nextok_session_finish(d.s, &r));
        CHECK(r.text_len == 5 && memcmp(r.text, "lo\xEF\xBF\xBD", 5) == 0);
    }
    driver_free(&d);
    nextok_vocab_free(v);
}

TEST(clone_and_reset)
{
    NEED_VOCAB(v, GPT2);
    const char *stops[] = {" !"};
    struct setup su = {.stops = stops, .n_stops = 1, .max_tokens = 10};
    struct driver a;
    if (driver_init(&a, v, &su)) {
        int32_t seq[] = {tok(v, "Hello"), tok(v, "Ġworld"), tok(v, "!")};
        CHECK_OK(step(&a, seq[0]));
        struct driver b = a;
        b.row = calloc((size_t)a.n_vocab, sizeof *b.row);
        CHECK_OK(nextok_session_clone(a.s, &b.s));
        CHECK_OK(step(&a, seq[1]));
        CHECK_OK(step(&b, seq[1]));
        CHECK_OK(step(&b, seq[2]));
        CHECK_TEXT(&a, "Hello world");
        CHECK_TEXT(&b, "Hello world!");
        CHECK_EQ_INT(nextok_session_n_tokens(a.s), 2);
        CHECK_EQ_INT(nextok_session_n_tokens(b.s), 3);
        driver_free(&b);
        nextok_session_reset(a.s);
        a.n_text = 0;
        CHECK_EQ_INT(nextok_session_n_tokens(a.s), 0);
        for (int k = 0; k < 3; k++) CHECK_OK(step(&a, seq[k]));
        CHECK_TEXT(&a, "Hello world!");
    }
    driver_free(&a);
    nextok_vocab_free(v);
}

TEST(invalid_session_params)
{
    NEED_VOCAB(v, GPT2);
    struct nextok_session *s = NULL;
    struct nextok_error err = {0};
    struct nextok_session_params p = nextok_session_default_params();
    CHECK_EQ_INT(nextok_session_init(&s, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "sampling") != NULL);
    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    sp.n_vocab = nextok_vocab_n_tokens(v);
    p.sampling = &sp;
    CHECK_EQ_INT(nextok_session_init(&s, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "vocab") != NULL);
    p.vocab = v;
    sp.top_p = 7.0f;
    CHECK(nextok_session_init(&s, &p, &err) != NEXTOK_OK);
    CHECK(s == NULL);
    sp.top_p = 1.0f;
    struct nextok_stop_params stop = nextok_stop_default_params();
    const char *empty[] = {""};
    stop.strings = empty;
    stop.n_strings = 1;
    p.stop = &stop;
    CHECK_EQ_INT(nextok_session_init(&s, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "strings[0]") != NULL);
    nextok_session_free(NULL);
    CHECK(strcmp(nextok_session_errmsg(NULL), "") == 0);
    nextok_vocab_free(v);
}

/* ---- benchmark: detokenizer + stop matcher ------------------------------- */

/* CPU time of this thread: on a shared machine wall time also counts the
 * time other processes held the core. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- a greedy longest-match encoder over token bytes (bench input only) --- */

#define ENC_SLOTS (1u << 18)
#define ENC_MAX_LEN 24

struct encoder {
    const struct nextok_vocab *v;
    int32_t *slot; /* open addressing on token bytes; -1 empty */
};

static uint32_t fnv(const char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

static int32_t enc_find(const struct encoder *e, const char *p, size_t n)
{
    for (uint32_t h = fnv(p, n) & (ENC_SLOTS - 1);; h = (h + 1) & (ENC_SLOTS - 1)) {
        int32_t id = e->slot[h];
        size_t len = 0;
        if (id < 0) return -1;
        const char *b = nextok_vocab_token_bytes(e->v, id, &len);
        if (len == n && memcmp(b, p, n) == 0) return id;
    }
}

static bool enc_init(struct encoder *e, const struct nextok_vocab *v)
{
    e->v = v;
    e->slot = malloc(ENC_SLOTS * sizeof *e->slot);
    if (!e->slot) return false;
    memset(e->slot, 0xff, ENC_SLOTS * sizeof *e->slot);
    for (int32_t id = 0; id < nextok_vocab_n_tokens(v); id++) {
        size_t len = 0;
        const char *b = nextok_vocab_token_bytes(v, id, &len);
        bool special = nextok_vocab_token_attrs(v, id) & NEXTOK_TOKEN_ATTR_SPECIAL;
        if (!b || len == 0 || len > ENC_MAX_LEN || special || enc_find(e, b, len) >= 0) continue;
        uint32_t h = fnv(b, len) & (ENC_SLOTS - 1);
        while (e->slot[h] >= 0) h = (h + 1) & (ENC_SLOTS - 1);
        e->slot[h] = id;
    }
    return true;
}

/* Greedy longest match; *n ids into a malloc'd array. */
static int32_t *enc_text(const struct encoder *e, const char *t, size_t len, size_t *n)
{
    int32_t *ids = malloc((len + 1) * sizeof *ids);
    *n = 0;
    for (size_t i = 0; ids && i < len;) {
        size_t k = len - i < ENC_MAX_LEN ? len - i : ENC_MAX_LEN;
        int32_t id = -1;
        while (k > 0 && (id = enc_find(e, t + i, k)) < 0) k--;
        if (id < 0) { /* a byte no token covers alone: skip it */
            i++;
            continue;
        }
        ids[(*n)++] = id;
        i += k;
    }
    return ids;
}

/* The first `cap` bytes of the Austen corpus as GPT-2 ids. */
static int32_t *bench_ids(const struct nextok_vocab *v, size_t cap, size_t *n)
{
    char path[1024];
    external_path(path, sizeof path, "corpus/austen-all.txt");
    FILE *f = fopen(path, "rb");
    char *text = malloc(cap);
    size_t len = f && text ? fread(text, 1, cap, f) : 0;
    if (f) fclose(f);
    struct encoder e;
    int32_t *ids = NULL;
    *n = 0;
    if (len && enc_init(&e, v)) {
        ids = enc_text(&e, text, len, n);
        free(e.slot);
    }
    free(text);
    return ids;
}

static const char *const BENCH_STOPS[16] = {
    "\n\nUser:", "\n\nHuman:", "</s>", "<|im_end|>", "###", "END OF TEXT", "Observation:",
    "```\n\n", "<|eot_id|>", "\nQ:", "[DONE]", "STOP HERE", "</answer>", "\n---\n", "Assistant:",
    "<|endoftext|>",
};

struct bench {
    const int32_t *ids;
    size_t n;
    struct nextok_detok *dt;
    struct nextok_stop *st;   /* NULL: detokenizer alone */
    char *raw, *out;
    size_t raw_cap;
    size_t bytes, stops;
};

/* One pass over the ids; a stop that matches by chance restarts the matcher. */
static double bench_pass(struct bench *b)
{
    nextok_detok_reset(b->dt);
    if (b->st) nextok_stop_reset(b->st);
    b->bytes = b->stops = 0;
    double t0 = now_s();
    for (size_t i = 0; i < b->n; i++) {
        size_t m = 0;
        nextok_detok_feed(b->dt, &b->ids[i], 1, b->raw, b->raw_cap, &m);
        b->bytes += m;
        if (!b->st) continue;
        struct nextok_text_out o = {b->out, b->raw_cap + 64, 0};
        struct nextok_stop_result r;
        nextok_stop_push(b->st, b->ids[i], b->raw, m, NEXTOK_STOP_CONTINUE, &o, &r);
        if (r.finish != NEXTOK_FINISH_NONE) {
            nextok_stop_reset(b->st);
            b->stops++;
        }
    }
    return now_s() - t0;
}

static double bench_best(struct bench *b, int reps)
{
    double best = 1e30;
    for (int k = 0; k < reps; k++) {
        double t = bench_pass(b);
        if (t < best) best = t;
    }
    return best;
}

TEST(bench_detok_stop)
{
    NEED_VOCAB(v, GPT2);
    struct bench b = {0};
    int32_t *ids = bench_ids(v, 4u << 20, &b.n);
    b.ids = ids;
    if (!ids || b.n == 0) {
        CHECK_MSG(0, "no corpus/austen-all.txt under NEXTOK_DATA_DIR (%s)", external_dir());
        free(ids);
        nextok_vocab_free(v);
        return;
    }
    struct nextok_stop *st = NULL;
    struct nextok_stop_params sp = nextok_stop_default_params();
    sp.strings = BENCH_STOPS;
    sp.n_strings = 16;
    CHECK_OK(nextok_detok_init(&b.dt, v, NULL, NULL));
    CHECK_OK(nextok_stop_init(&st, &sp, NULL));
    b.raw_cap = nextok_detok_bound(b.dt, 1);
    b.raw = malloc(b.raw_cap);
    b.out = malloc(b.raw_cap + 64);
    if (ids && b.raw && b.out && st) {
        double t_detok = bench_best(&b, 7);
        b.st = st;
        double t_both = bench_best(&b, 7);
        printf("  bench: detok alone: %.1f M tokens/s; detok + stop (16 stop strings): "
               "%.1f M tokens/s, %.0f MB/s; Austen as %zu GPT-2 ids (%.2f bytes/token), "
               "%zu stops, best of 7 (thread CPU time)\n",
               (double)b.n / t_detok / 1e6, (double)b.n / t_both / 1e6,
               (double)b.bytes / t_both / 1e6, b.n, (double)b.bytes / (double)b.n, b.stops);
        CHECK(b.bytes >= b.n);
    }
    free(b.raw);
    free(b.out);
    free(ids);
    nextok_stop_free(st);
    nextok_detok_free(b.dt);
    nextok_vocab_free(v);
}

int main(void)
{
    RUN(stop_string_across_tokens);
    RUN(eos_and_length);
    RUN(utf8_split_tokens);
    RUN(byte_fallback_emoji);
    RUN(include_stop_and_regex);
    RUN(min_tokens_suppresses_eos);
    RUN(logprobs_with_bytes);
    RUN(prompt_context);
    RUN(failed_step_changes_nothing);
    RUN(failed_accept_rolls_back);
    RUN(finish_flushes_held_text);
    RUN(clone_and_reset);
    RUN(invalid_session_params);
    /* A benchmark, not a test: it runs when asked for (docs/text.md). */
    if (getenv("NEXTOK_BENCH")) RUN(bench_detok_stop);
    return harness_done();
}
