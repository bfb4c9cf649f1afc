/*
 * Stop criteria: stop strings across pushes, overlaps, prefixes, UTF-8,
 * include/exclude, holdback exactness, token criteria, min/max tokens, the
 * regex, and random property tests against a naive reference matcher.
 */
#include "harness.h"
#include "nextok.h"

#include <stdint.h>

/* ---- a client: pushes steps, collects released text ---------------------- */

#define CAP 4096

struct client {
    struct nextok_stop *s;
    char out[CAP];      /* released so far (dst of every push) */
    size_t pos;
    char all[CAP];      /* every byte pushed                   */
    size_t n_all;
    struct nextok_stop_result res;
    nextok_status rc;
};

static void client_init(struct client *c, const struct nextok_stop_params *p)
{
    memset(c, 0, sizeof *c);
    struct nextok_error err = {0};
    c->rc = nextok_stop_init(&c->s, p, &err);
    CHECK_MSG(c->rc == NEXTOK_OK, "init: %s", err.msg);
}

static nextok_status client_push(struct client *c, int32_t token, const char *text, size_t len,
                                 enum nextok_stop_directive d)
{
    memcpy(c->all + c->n_all, text, len);
    c->n_all += len;
    struct nextok_text_out out = {c->out, CAP, c->pos};
    c->rc = nextok_stop_push(c->s, token, text, len, d, &out, &c->res);
    c->pos = out.pos;
    return c->rc;
}

static nextok_status push_str(struct client *c, int32_t token, const char *text)
{
    return client_push(c, token, text, strlen(text), NEXTOK_STOP_CONTINUE);
}

static bool out_is(const struct client *c, const char *want)
{
    return c->pos == strlen(want) && memcmp(c->out, want, c->pos) == 0;
}

#define CHECK_OUT(c, want) \
    CHECK_MSG(out_is(c, want), "out = '%.*s', want '%s'", (int)(c)->pos, (c)->out, want)

static struct nextok_stop_params strings_params(const char *const *strs, size_t n)
{
    struct nextok_stop_params p = nextok_stop_default_params();
    p.strings = strs;
    p.n_strings = n;
    return p;
}

/* ---- naive reference ----------------------------------------------------- */

struct ref_stop {
    const char *const *strs;
    const size_t *lens;
    size_t n;
};

/* First byte offset e (1-based end) where some stop string ends in t[0..n);
 * the longest such string (lowest index on ties). Returns -1 if none. */
static long ref_first_match(const struct ref_stop *r, const char *t, size_t n, size_t from,
                            int *which)
{
    for (size_t e = from + 1; e <= n; e++) {
        size_t best = 0;
        *which = -1;
        for (size_t i = 0; i < r->n; i++) {
            size_t l = r->lens[i];
            if (l <= e && l > best && memcmp(t + e - l, r->strs[i], l) == 0) {
                best = l;
                *which = (int)i;
            }
        }
        if (*which >= 0) return (long)e;
    }
    return -1;
}

/* Longest suffix of t[0..n) that is a proper prefix of some stop string. */
static size_t ref_hold(const struct ref_stop *r, const char *t, size_t n)
{
    size_t best = 0;
    for (size_t i = 0; i < r->n; i++)
        for (size_t k = r->lens[i] - 1; k > best; k--)
            if (k <= n && memcmp(t + n - k, r->strs[i], k) == 0) {
                best = k;
                break;
            }
    return best;
}

/* ---- tests --------------------------------------------------------------- */

TEST(finish_names)
{
    CHECK(strcmp(nextok_finish_name(NEXTOK_FINISH_NONE), "none") == 0);
    CHECK(strcmp(nextok_finish_name(NEXTOK_FINISH_STOP_STRING), "stop_string") == 0);
    CHECK(strcmp(nextok_finish_name(NEXTOK_FINISH_LENGTH), "length") == 0);
    CHECK(strcmp(nextok_finish_name((enum nextok_finish)99), "unknown") == 0);
}

/* "Hello END world" split into every 2- and 3-piece partition. */
TEST(split_across_tokens)
{
    const char *strs[] = {"END"};
    const char *text = "Hello END world";
    size_t n = strlen(text);
    struct nextok_stop_params p = strings_params(strs, 1);
    for (size_t a = 0; a <= n; a++) {
        for (size_t b = a; b <= n; b++) {
            struct client c;
            client_init(&c, &p);
            size_t cuts[4] = {0, a, b, n};
            for (int k = 0; k < 3 && c.res.finish == NEXTOK_FINISH_NONE; k++)
                CHECK_OK(client_push(&c, k, text + cuts[k], cuts[k + 1] - cuts[k],
                                     NEXTOK_STOP_CONTINUE));
            CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
            CHECK_EQ_INT(c.res.which, 0);
            CHECK_OUT(&c, "Hello ");
            nextok_stop_free(c.s);
        }
    }
}

/* One byte per push: each push of the stop string's bytes is held. */
TEST(split_one_byte_per_token)
{
    const char *strs[] = {"</end>"};
    struct nextok_stop_params p = strings_params(strs, 1);
    struct client c;
    client_init(&c, &p);
    const char *text = "ok </en</end>tail";
    size_t held_want[] = {0, 0, 0, 1, 2, 3, 4, 1, 2, 3, 4, 5};
    for (size_t i = 0; i < 12; i++) {
        CHECK_OK(client_push(&c, (int32_t)i, text + i, 1, NEXTOK_STOP_CONTINUE));
        CHECK_EQ_INT(c.res.held, held_want[i]);
        CHECK_EQ_INT(c.pos + c.res.held, i + 1);
    }
    CHECK_OK(client_push(&c, 12, text + 12, 1, NEXTOK_STOP_CONTINUE));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&c, "ok </en");
    nextok_stop_free(c.s);
}

TEST(overlapping_strings)
{
    /* "bc" ends before "abcd" does: it wins even in one push */
    const char *s1[] = {"abcd", "bc"};
    struct nextok_stop_params p = strings_params(s1, 2);
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "xabcdy"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_EQ_INT(c.res.which, 1);
    CHECK_OUT(&c, "xa");
    nextok_stop_free(c.s);

    /* failure links: "aab" inside "aaab"; "aba" overlapping itself */
    const char *s2[] = {"aab", "abab"};
    p = strings_params(s2, 2);
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "aa"));
    CHECK_EQ_INT(c.res.held, 2);
    CHECK_OK(push_str(&c, 1, "a"));
    CHECK_EQ_INT(c.res.held, 2);
    CHECK_OUT(&c, "a");
    CHECK_OK(push_str(&c, 2, "bab"));
    CHECK_EQ_INT(c.res.which, 0);
    CHECK_OUT(&c, "a");
    nextok_stop_free(c.s);

    /* same end byte: the longer one (starts earlier) wins */
    const char *s3[] = {"c", "abc"};
    p = strings_params(s3, 2);
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "zab"));
    CHECK_OK(push_str(&c, 1, "cd"));
    CHECK_EQ_INT(c.res.which, 1);
    CHECK_OUT(&c, "z");
    nextok_stop_free(c.s);
}

TEST(prefix_of_another)
{
    const char *strs[] = {"abc", "ab"};
    struct nextok_stop_params p = strings_params(strs, 2);
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "xa"));
    CHECK_EQ_INT(c.res.held, 1);
    CHECK_OK(push_str(&c, 1, "bc"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_EQ_INT(c.res.which, 1); /* "ab" is complete first */
    CHECK_OUT(&c, "x");
    nextok_stop_free(c.s);

    /* duplicates: the first index names the match */
    const char *dup[] = {"q", "zz", "zz"};
    p = strings_params(dup, 3);
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "azzb"));
    CHECK_EQ_INT(c.res.which, 1);
    nextok_stop_free(c.s);
}

TEST(utf8_multibyte)
{
    /* "é" = C3 A9 arrives split over two tokens */
    const char *s1[] = {"\xC3\xA9"};
    struct nextok_stop_params p = strings_params(s1, 1);
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "caf\xC3"));
    CHECK_EQ_INT(c.res.held, 1);
    CHECK_OUT(&c, "caf");
    CHECK_OK(push_str(&c, 1, "\xA9!"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&c, "caf");
    nextok_stop_free(c.s);

    /* "a" never matches inside "ä" (C3 A4): UTF-8 is self-synchronising */
    const char *s2[] = {"a"};
    p = strings_params(s2, 1);
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "\xC3\xA4\xC3\xA4"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_EQ_INT(c.res.held, 0);
    nextok_stop_free(c.s);

    /* matching is on bytes: a continuation byte as a stop string cuts the
     * character (documented; valid UTF-8 stop strings cannot do this) */
    const char *s3[] = {"\xA4"};
    p = strings_params(s3, 1);
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "x\xC3\xA4y"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&c, "x\xC3");
    nextok_stop_free(c.s);

    /* a 4-byte emoji stop string held over four pushes */
    const char *s4[] = {"\xF0\x9F\x98\x80"};
    p = strings_params(s4, 1);
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "hi \xF0"));
    CHECK_OK(push_str(&c, 1, "\x9F"));
    CHECK_OK(push_str(&c, 2, "\x98"));
    CHECK_EQ_INT(c.res.held, 3);
    CHECK_OK(push_str(&c, 3, "\x81")); /* 😁: not the stop string */
    CHECK_EQ_INT(c.res.held, 0);
    CHECK_OUT(&c, "hi \xF0\x9F\x98\x81");
    nextok_stop_free(c.s);
}

TEST(include_stop_string)
{
    const char *strs[] = {"STOP"};
    struct nextok_stop_params p = strings_params(strs, 1);
    p.include_stop = true;
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "go ST"));
    CHECK_OUT(&c, "go ");
    CHECK_OK(push_str(&c, 1, "OP and more"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&c, "go STOP");
    CHECK_EQ_INT(c.res.held, 0);
    nextok_stop_free(c.s);
}

TEST(stop_vs_max_tokens_same_step)
{
    const char *strs[] = {"xy"};
    struct nextok_stop_params p = strings_params(strs, 1);
    p.max_tokens = 2;
    int32_t eog = 9;
    p.eog_ids = &eog;
    p.n_eog = 1;
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "ax"));
    CHECK_OK(push_str(&c, 1, "yz"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING); /* text stop beats length */
    CHECK_OUT(&c, "a");
    nextok_stop_free(c.s);

    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "ax"));
    CHECK_EQ_INT(c.res.held, 1);
    CHECK_OK(push_str(&c, 1, "q"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_LENGTH); /* length flushes the held "x" */
    CHECK_OUT(&c, "axq");
    CHECK_EQ_INT(c.res.held, 0);
    nextok_stop_free(c.s);

    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "ax"));
    CHECK_OK(push_str(&c, 9, "</s>"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_EOS); /* eos beats length; its text is dropped */
    CHECK_EQ_INT(c.res.which, 0);
    CHECK_OUT(&c, "ax");
    nextok_stop_free(c.s);
}

TEST(min_tokens_gating)
{
    const char *strs[] = {"ab"};
    int32_t eog = 9, stop_id = 7;
    struct nextok_stop_params p = strings_params(strs, 1);
    p.eog_ids = &eog;
    p.n_eog = 1;
    p.stop_ids = &stop_id;
    p.n_stop_ids = 1;
    p.min_tokens = 3;
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "xa"));
    CHECK_EQ_INT(c.res.held, 0); /* gated text is released at once */
    CHECK_OK(push_str(&c, 9, "b"));  /* eos while gated: an ordinary token */
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_OK(push_str(&c, 7, "ab")); /* third token: still gated */
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_OUT(&c, "xabab");
    CHECK_OK(push_str(&c, 1, "a")); /* gating over: matching starts fresh here */
    CHECK_EQ_INT(c.res.held, 1);
    CHECK_OK(push_str(&c, 2, "b"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&c, "xabab");
    CHECK_EQ_INT(nextok_stop_n_tokens(c.s), 5);
    nextok_stop_free(c.s);

    /* a match cannot start in gated text */
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "1"));
    CHECK_OK(push_str(&c, 1, "2"));
    CHECK_OK(push_str(&c, 2, "a"));
    CHECK_OK(push_str(&c, 3, "b"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_OK(push_str(&c, 9, ""));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_EOS);
    CHECK_OUT(&c, "12ab");
    nextok_stop_free(c.s);

    /* max_tokens still applies while gated (min == max) */
    p.max_tokens = 2;
    p.min_tokens = 2;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 9, "e"));
    CHECK_OK(push_str(&c, 9, "e"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_LENGTH);
    CHECK_OUT(&c, "ee");
    nextok_stop_free(c.s);
}

/* One push whose text holds a stop string and whose token is an end id. */
TEST(text_stop_beats_token_stop)
{
    const char *strs[] = {"ab"};
    int32_t eog = 9;
    struct nextok_stop_params p = strings_params(strs, 1);
    p.eog_ids = &eog;
    p.n_eog = 1;
    p.include_stop = true;
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 9, "xabyz"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&c, "xab");
    nextok_stop_free(c.s);
}

TEST(eos_and_stop_tokens)
{
    int32_t eog[] = {2, 3}, stops[] = {50, 51};
    struct nextok_stop_params p = nextok_stop_default_params();
    p.eog_ids = eog;
    p.n_eog = 2;
    p.stop_ids = stops;
    p.n_stop_ids = 2;
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 10, "hi"));
    CHECK_OK(push_str(&c, 51, "<|stop|>"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_TOKEN);
    CHECK_EQ_INT(c.res.which, 1);
    CHECK_OUT(&c, "hi");
    int32_t which = 0;
    CHECK_EQ_INT(nextok_stop_finish(c.s, &which), NEXTOK_FINISH_STOP_TOKEN);
    CHECK_EQ_INT(which, 1);
    nextok_stop_free(c.s);

    p.include_stop = true;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 3, "<eot>"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_EOS);
    CHECK_EQ_INT(c.res.which, 1);
    CHECK_OUT(&c, "<eot>");
    nextok_stop_free(c.s);

    p.ignore_eos = true;
    p.include_stop = false;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 3, "<eot>"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_OK(push_str(&c, 50, "x"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_TOKEN);
    CHECK_OUT(&c, "<eot>");
    nextok_stop_free(c.s);
}

TEST(stop_sequences)
{
    int32_t ids[] = {5, 6, 7, 6, 6};
    size_t off[] = {0, 3, 5};
    struct nextok_stop_params p = nextok_stop_default_params();
    p.seq_ids = ids;
    p.seq_off = off;
    p.n_seqs = 2;
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 1, "a"));
    CHECK_OK(push_str(&c, 5, "Hu"));
    CHECK_EQ_INT(c.res.held, 2); /* [5] is a prefix of [5 6 7] */
    CHECK_OK(push_str(&c, 6, "man"));
    CHECK_EQ_INT(c.res.held, 5);
    CHECK_OUT(&c, "a");
    CHECK_OK(push_str(&c, 7, ":"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_SEQUENCE);
    CHECK_EQ_INT(c.res.which, 0);
    CHECK_OUT(&c, "a"); /* the whole sequence's text is left out */
    nextok_stop_free(c.s);

    /* a broken prefix releases its text; [6 6] matches after [5 6] */
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 5, "x"));
    CHECK_OK(push_str(&c, 6, "y"));
    CHECK_OK(push_str(&c, 8, "z"));
    CHECK_EQ_INT(c.res.held, 0);
    CHECK_OUT(&c, "xyz");
    CHECK_OK(push_str(&c, 6, "1"));
    CHECK_OK(push_str(&c, 6, "2"));
    CHECK_EQ_INT(c.res.which, 1);
    CHECK_OUT(&c, "xyz");
    nextok_stop_free(c.s);

    /* holdback of a sequence is capped at max_hold bytes */
    p.max_hold = 4;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 5, "abc"));
    CHECK_OK(push_str(&c, 6, "def"));
    CHECK_EQ_INT(c.res.held, 4);
    CHECK_OK(push_str(&c, 7, "!"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_SEQUENCE);
    CHECK_OUT(&c, "ab"); /* only what was still held is left out */
    nextok_stop_free(c.s);
}

TEST(end_directive_and_state)
{
    const char *strs[] = {"xyz"};
    struct nextok_stop_params p = strings_params(strs, 1);
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "abxy"));
    CHECK_EQ_INT(c.res.held, 2);
    CHECK_OK(client_push(&c, NEXTOK_NO_TOKEN, "", 0, NEXTOK_STOP_END));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_EQ_INT(c.res.held, 0);
    CHECK_OUT(&c, "abxy");
    /* after the end every push is refused and changes nothing */
    CHECK_EQ_INT(push_str(&c, 1, "z"), NEXTOK_ERR_STATE);
    CHECK(strstr(nextok_stop_errmsg(c.s), "reset") != NULL);
    CHECK_OUT(&c, "abxy");
    nextok_stop_reset(c.s);
    c.pos = 0;
    CHECK_OK(push_str(&c, 0, "xyz"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    nextok_stop_free(c.s);
}

TEST(bad_calls_change_nothing)
{
    const char *strs[] = {"abc"};
    struct nextok_stop_params p = strings_params(strs, 1);
    struct nextok_stop *s = NULL;
    CHECK_OK(nextok_stop_init(&s, &p, NULL));
    char buf[8];
    struct nextok_text_out out = {buf, sizeof buf, 0};
    struct nextok_stop_result r;
    CHECK_OK(nextok_stop_push(s, 0, "xab", 3, NEXTOK_STOP_CONTINUE, &out, &r));
    CHECK_EQ_INT(out.pos, 1);
    CHECK_EQ_INT(nextok_stop_out_bound(s, 7), 9);
    CHECK_EQ_INT(nextok_stop_push(s, 1, "1234567", 7, NEXTOK_STOP_CONTINUE, &out, &r),
                 NEXTOK_ERR_BUFFER_TOO_SMALL);
    CHECK(strstr(nextok_stop_errmsg(s), "needed") != NULL);
    CHECK_EQ_INT(nextok_stop_push(s, -5, "c", 1, NEXTOK_STOP_CONTINUE, &out, &r),
                 NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_stop_push(s, 1, NULL, 1, NEXTOK_STOP_CONTINUE, &out, &r),
                 NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_stop_push(s, 1, "c", 1, NEXTOK_STOP_CONTINUE, NULL, &r),
                 NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(out.pos, 1);
    CHECK_EQ_INT(nextok_stop_held(s), 2);
    CHECK_EQ_INT(nextok_stop_n_tokens(s), 1);
    CHECK_OK(nextok_stop_push(s, 1, "c", 1, NEXTOK_STOP_CONTINUE, &out, &r));
    CHECK_EQ_INT(r.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_EQ_INT(out.pos, 1);
    nextok_stop_free(s);
    nextok_stop_free(NULL);
}

TEST(invalid_params)
{
    struct nextok_stop *s = (struct nextok_stop *)1;
    struct nextok_error err = {0};
    const char *empty[] = {"ok", ""};
    struct nextok_stop_params p = strings_params(empty, 2);
    CHECK_EQ_INT(nextok_stop_init(&s, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(s == NULL);
    CHECK(strstr(err.msg, "strings[1]") != NULL);

    p = nextok_stop_default_params();
    p.min_tokens = 5;
    p.max_tokens = 3;
    CHECK_EQ_INT(nextok_stop_init(&s, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "min_tokens") != NULL);

    int32_t bad = -3;
    p = nextok_stop_default_params();
    p.stop_ids = &bad;
    p.n_stop_ids = 1;
    CHECK_EQ_INT(nextok_stop_init(&s, &p, &err), NEXTOK_ERR_TOKEN_RANGE);

    size_t off[] = {0, 0};
    p = nextok_stop_default_params();
    p.seq_ids = &bad;
    p.seq_off = off;
    p.n_seqs = 1;
    CHECK_EQ_INT(nextok_stop_init(&s, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK(strstr(err.msg, "empty") != NULL);

    static char big[NEXTOK_STOP_MAX_BYTES + 2];
    memset(big, 'a', sizeof big - 1);
    const char *bigs[] = {big};
    p = strings_params(bigs, 1);
    CHECK_EQ_INT(nextok_stop_init(&s, &p, &err), NEXTOK_ERR_INVALID_ARG);
    CHECK_EQ_INT(nextok_stop_init(NULL, &p, &err), NEXTOK_ERR_INVALID_ARG);
}

TEST(explicit_lengths_and_nul_bytes)
{
    const char strs0[] = {'a', '\0', 'b'};
    const char *strs[] = {strs0};
    size_t lens[] = {3};
    struct nextok_stop_params p = strings_params(strs, 1);
    p.string_lens = lens;
    struct client c;
    client_init(&c, &p);
    CHECK_OK(client_push(&c, 0, "xa\0", 3, NEXTOK_STOP_CONTINUE));
    CHECK_EQ_INT(c.res.held, 2);
    CHECK_OK(client_push(&c, 1, "b", 1, NEXTOK_STOP_CONTINUE));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&c, "x");
    size_t len = 0;
    CHECK(memcmp(nextok_stop_string(c.s, 0, &len), strs0, 3) == 0 && len == 3);
    CHECK(nextok_stop_string(c.s, 1, &len) == NULL);
    nextok_stop_free(c.s);
}

TEST(clone_continues_identically)
{
    const char *strs[] = {"the end", "fin"};
    struct nextok_stop_params p = strings_params(strs, 2);
    struct client a, b;
    client_init(&a, &p);
    CHECK_OK(push_str(&a, 0, "so the e"));
    b = a;
    CHECK_OK(nextok_stop_clone(a.s, &b.s));
    nextok_stop_free(a.s);               /* the clone owns its own tables */
    CHECK_OK(push_str(&b, 1, "nd"));
    CHECK_EQ_INT(b.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&b, "so ");
    nextok_stop_free(b.s);
}

/* ---- random property tests against the reference ------------------------- */

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static const char ALPHA[] = {'a', 'b', 'c', '\xC3', '\xA9'};

static void random_bytes(uint64_t *r, char *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = ALPHA[rng_next(r) % sizeof ALPHA];
}

struct prop_case {
    char strs_buf[8][8];
    const char *strs[8];
    size_t lens[8];
    size_t n_strs;
    char text[64];
    size_t n_text;
    bool include;
};

static void prop_make(uint64_t *r, struct prop_case *pc)
{
    pc->n_strs = 1 + rng_next(r) % 6;
    for (size_t i = 0; i < pc->n_strs; i++) {
        pc->lens[i] = 1 + rng_next(r) % 5;
        random_bytes(r, pc->strs_buf[i], pc->lens[i]);
        pc->strs[i] = pc->strs_buf[i];
    }
    pc->n_text = rng_next(r) % 48;
    random_bytes(r, pc->text, pc->n_text);
    pc->include = rng_next(r) & 1;
}

/* Push pc->text in random pieces; compare every step with the reference.
 * *matched counts cases where the reference finds a stop string. */
static int prop_run(uint64_t *r, const struct prop_case *pc, int *matched)
{
    struct nextok_stop_params p = strings_params(pc->strs, pc->n_strs);
    p.string_lens = pc->lens;
    p.include_stop = pc->include;
    struct client c;
    client_init(&c, &p);
    struct ref_stop ref = {pc->strs, pc->lens, pc->n_strs};
    int which = -1;
    long e = ref_first_match(&ref, pc->text, pc->n_text, 0, &which);
    *matched += e >= 0;
    int bad = 0;
    size_t at = 0;
    while (c.res.finish == NEXTOK_FINISH_NONE && at < pc->n_text) {
        size_t k = rng_next(r) % 6;
        if (k > pc->n_text - at) k = pc->n_text - at;
        client_push(&c, (int32_t)at, pc->text + at, k, NEXTOK_STOP_CONTINUE);
        at += k;
        if (c.rc != NEXTOK_OK) return 1;
        if (c.res.finish != NEXTOK_FINISH_NONE) break;
        bad |= e >= 0 && (size_t)e <= at;                               /* missed a match  */
        bad |= c.pos + c.res.held != at;                                 /* lost bytes      */
        bad |= memcmp(c.out, pc->text, c.pos) != 0;                      /* wrong bytes     */
        bad |= c.res.held != ref_hold(&ref, pc->text, at);               /* inexact hold    */
    }
    if (e < 0) {
        bad |= c.res.finish != NEXTOK_FINISH_NONE;
    } else {
        size_t start = (size_t)e - pc->lens[which];
        size_t want = pc->include ? (size_t)e : start;
        bad |= c.res.finish != NEXTOK_FINISH_STOP_STRING || c.res.which != which;
        bad |= c.pos != want || memcmp(c.out, pc->text, want) != 0;
    }
    nextok_stop_free(c.s);
    return bad;
}

TEST(random_vs_reference)
{
    uint64_t r = 0x9E3779B97F4A7C15ull;
    int failures = 0, matched = 0;
    for (int t = 0; t < 20000; t++) {
        struct prop_case pc;
        prop_make(&r, &pc);
        if (prop_run(&r, &pc, &matched)) {
            if (failures++ < 3)
                printf("  case %d: %zu strings, text %zu bytes failed\n", t, pc.n_strs, pc.n_text);
        }
    }
    CHECK_EQ_INT(failures, 0);
    CHECK_MSG(matched > 5000 && matched < 19000, "%d of 20000 cases match: not a useful mix",
              matched);
}

/* Many stop strings: same reference, bigger automaton. */
TEST(random_many_strings)
{
    uint64_t r = 12345;
    static char bufs[300][6];
    const char *strs[300];
    size_t lens[300];
    for (int i = 0; i < 300; i++) {
        lens[i] = 2 + rng_next(&r) % 4;
        random_bytes(&r, bufs[i], lens[i]);
        strs[i] = bufs[i];
    }
    struct ref_stop ref = {strs, lens, 300};
    struct nextok_stop_params p = strings_params(strs, 300);
    p.string_lens = lens;
    int failures = 0;
    for (int t = 0; t < 300; t++) {
        char text[64];
        size_t n = rng_next(&r) % 64;
        random_bytes(&r, text, n);
        struct client c;
        client_init(&c, &p);
        for (size_t i = 0; i < n && c.res.finish == NEXTOK_FINISH_NONE; i++) {
            client_push(&c, (int32_t)i, text + i, 1, NEXTOK_STOP_CONTINUE);
            if (c.res.finish == NEXTOK_FINISH_NONE)
                failures += c.res.held != ref_hold(&ref, text, i + 1);
        }
        int which = -1;
        long e = ref_first_match(&ref, text, n, 0, &which);
        failures += e < 0 ? c.res.finish != NEXTOK_FINISH_NONE
                          : (c.res.which != which || c.pos != (size_t)e - lens[which]);
        nextok_stop_free(c.s);
    }
    CHECK_EQ_INT(failures, 0);
}

/* Stop strings that use all 256 byte values (one class per byte). */
TEST(all_byte_values)
{
    static char bufs[128][2];
    const char *strs[128];
    size_t lens[128];
    for (int i = 0; i < 128; i++) {
        bufs[i][0] = (char)(2 * i);
        bufs[i][1] = (char)(255 - 2 * i);
        strs[i] = bufs[i];
        lens[i] = 2;
    }
    struct ref_stop ref = {strs, lens, 128};
    struct nextok_stop_params p = strings_params(strs, 128);
    p.string_lens = lens;
    uint64_t r = 777;
    int failures = 0;
    for (int t = 0; t < 200; t++) {
        char text[200];
        size_t n = 1 + rng_next(&r) % sizeof text;
        for (size_t i = 0; i < n; i++) text[i] = (char)(rng_next(&r) & 0xff);
        struct client c;
        client_init(&c, &p);
        for (size_t i = 0; i < n && c.res.finish == NEXTOK_FINISH_NONE; i++) {
            client_push(&c, (int32_t)i, text + i, 1, NEXTOK_STOP_CONTINUE);
            if (c.res.finish == NEXTOK_FINISH_NONE)
                failures += c.res.held != ref_hold(&ref, text, i + 1);
        }
        int which = -1;
        long e = ref_first_match(&ref, text, n, 0, &which);
        failures += e < 0 ? c.res.finish != NEXTOK_FINISH_NONE
                          : (c.res.which != which || c.pos != (size_t)e - 2);
        nextok_stop_free(c.s);
    }
    CHECK_EQ_INT(failures, 0);
}

/* ---- regex ---------------------------------------------------------------- */

#if defined(NEXTOK_HAVE_PCRE2)
static struct nextok_stop_params regex_params(const char *re)
{
    struct nextok_stop_params p = nextok_stop_default_params();
    p.regex = re;
    return p;
}
#endif

TEST(regex_partial_holdback)
{
#if !defined(NEXTOK_HAVE_PCRE2)
    struct nextok_stop_params p = nextok_stop_default_params();
    p.regex = "a+";
    struct nextok_stop *s = NULL;
    struct nextok_error err = {0};
    CHECK_EQ_INT(nextok_stop_init(&s, &p, &err), NEXTOK_ERR_UNSUPPORTED);
    CHECK(strstr(err.msg, "PCRE2") != NULL);
#else
    struct nextok_stop_params p = regex_params("[0-9]{3}-[0-9]{4}");
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "call 555-"));
    CHECK_EQ_INT(c.res.held, 4); /* "555-" can still become a match */
    CHECK_OUT(&c, "call ");
    CHECK_OK(push_str(&c, 1, "12"));
    CHECK_EQ_INT(c.res.held, 6);
    CHECK_OK(push_str(&c, 2, "34 now"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_REGEX);
    CHECK_EQ_INT(c.res.which, -1);
    CHECK_OUT(&c, "call ");
    nextok_stop_free(c.s);

    /* a partial match that fails releases its text */
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "555-1"));
    CHECK_EQ_INT(c.res.held, 5);
    CHECK_OK(push_str(&c, 1, "x"));
    CHECK_EQ_INT(c.res.held, 0);
    CHECK_OUT(&c, "555-1x");
    nextok_stop_free(c.s);

    /* include; text after the match is dropped */
    p = regex_params("\n\n");
    p.include_stop = true;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "para\n"));
    CHECK_EQ_INT(c.res.held, 1);
    CHECK_OK(push_str(&c, 1, "\nnext"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_REGEX);
    CHECK_OUT(&c, "para\n\n");
    nextok_stop_free(c.s);
#endif
}

TEST(regex_details)
{
#if defined(NEXTOK_HAVE_PCRE2)
    struct nextok_stop *s = NULL;
    struct nextok_error err = {0};
    struct nextok_stop_params p = regex_params("a(b");
    CHECK_EQ_INT(nextok_stop_init(&s, &p, &err), NEXTOK_ERR_FORMAT);
    CHECK(strstr(err.msg, "offset") != NULL);

    /* an open-ended repetition waits for the next byte; END completes it */
    p = regex_params("x+");
    struct client c;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "ab xx"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_EQ_INT(c.res.held, 2);
    CHECK_OK(client_push(&c, 1, "", 0, NEXTOK_STOP_END));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_REGEX);
    CHECK_OUT(&c, "ab ");
    nextok_stop_free(c.s);

    /* empty matches never stop */
    p = regex_params("z*");
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "abc"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_OK(push_str(&c, 0, "z!"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_REGEX);
    CHECK_OUT(&c, "abc");
    nextok_stop_free(c.s);

    /* regex holdback is capped by max_hold */
    p = regex_params("<tool>.*</tool>");
    p.max_hold = 8;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "<tool>abcdefgh"));
    CHECK_EQ_INT(c.res.held, 8);
    CHECK_OUT(&c, "<tool>");
    nextok_stop_free(c.s);

    /* stop string vs regex in one push: the one that ends first */
    const char *strs[] = {"END"};
    p = regex_params("[0-9]+!");
    p.strings = strs;
    p.n_strings = 1;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "a 12! END"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_REGEX);
    CHECK_OUT(&c, "a ");
    nextok_stop_free(c.s);
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "a END 12!"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_STRING);
    CHECK_OUT(&c, "a ");
    nextok_stop_free(c.s);

    /* min_tokens: gated text is never part of a regex match */
    p = regex_params("ab");
    p.min_tokens = 1;
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "xa"));
    CHECK_EQ_INT(c.res.held, 0);
    CHECK_OK(push_str(&c, 1, "b"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_NONE);
    CHECK_OK(push_str(&c, 2, "ab"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_REGEX);
    CHECK_OUT(&c, "xab");
    nextok_stop_free(c.s);

    /* invalid UTF-8 in the text does not break matching */
    p = regex_params("\xC3\xA9t\xC3\xA9");
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "\xFF\xC3 \xC3\xA9t"));
    CHECK_OK(push_str(&c, 1, "\xC3\xA9!"));
    CHECK_EQ_INT(c.res.finish, NEXTOK_FINISH_STOP_REGEX);
    CHECK_OUT(&c, "\xFF\xC3 ");
    nextok_stop_free(c.s);

    /* clone keeps the regex */
    p = regex_params("ab");
    client_init(&c, &p);
    CHECK_OK(push_str(&c, 0, "xa"));
    struct nextok_stop *d = NULL;
    CHECK_OK(nextok_stop_clone(c.s, &d));
    char buf[16];
    struct nextok_text_out out = {buf, sizeof buf, 0};
    struct nextok_stop_result r;
    CHECK_OK(nextok_stop_push(d, 1, "b", 1, NEXTOK_STOP_CONTINUE, &out, &r));
    CHECK_EQ_INT(r.finish, NEXTOK_FINISH_STOP_REGEX);
    CHECK_EQ_INT(out.pos, 0);
    nextok_stop_free(d);
    nextok_stop_free(c.s);
#else
    SKIP("built without PCRE2");
#endif
}

int main(int argc, char **argv)
{
    harness_init(argc, argv);
    if (GROUP("")) {
        RUN(finish_names);
        RUN(split_across_tokens);
        RUN(split_one_byte_per_token);
        RUN(overlapping_strings);
        RUN(prefix_of_another);
        RUN(utf8_multibyte);
        RUN(include_stop_string);
        RUN(stop_vs_max_tokens_same_step);
        RUN(min_tokens_gating);
        RUN(text_stop_beats_token_stop);
        RUN(eos_and_stop_tokens);
        RUN(stop_sequences);
        RUN(end_directive_and_state);
        RUN(bad_calls_change_nothing);
        RUN(invalid_params);
        RUN(explicit_lengths_and_nul_bytes);
        RUN(clone_continues_identically);
        RUN(random_vs_reference);
        RUN(random_many_strings);
        RUN(all_byte_values);
        RUN(regex_partial_holdback); /* with PCRE2 or without: both are checked */
    }
    /* Skipped (77) in a build without PCRE2. */
    if (GROUP("pcre2")) RUN(regex_details);
    return harness_done();
}
