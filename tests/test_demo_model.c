/*
 * The CLI's demo language model (tools/nextok/model.c; the model file and its
 * trainer in tools/demo_model/): the built-in copy is the shipped file; every
 * id of GPT-2's vocabulary gets a finite log-probability and they sum to 1;
 * the numbers match the trainer's Python arithmetic and a small hand-made
 * model worked out by hand; the predictions are plausible Austen; truncated
 * and corrupted files are rejected, or load as models that still give a
 * distribution, and never read out of bounds (`make test-asan` runs this
 * under ASan with exact-size copies).
 */
#include "harness.h"

#include "../tools/nextok/model.h"

#include <stdint.h>

#define GPT2_VOCAB  50257
#define HEADER_SIZE 288 /* tools/demo_model/FORMAT.md */

#ifndef NEXTOK_SOURCE_DIR
#define NEXTOK_SOURCE_DIR "."
#endif
#define MODEL_FILE NEXTOK_SOURCE_DIR "/tools/demo_model/austen-gpt2.ngram"

/* ---- helpers ---------------------------------------------------------------- */

/* Every logit finite and logsumexp 0 (the probabilities sum to 1). */
static void check_distribution(const float *lg, int32_t n, const char *what)
{
    double mx = -INFINITY;
    int32_t bad = -1;
    for (int32_t i = 0; i < n; i++) {
        if (!isfinite(lg[i]) && bad < 0) bad = i;
        if (lg[i] > mx) mx = lg[i];
    }
    CHECK_MSG(bad < 0, "%s: logit of id %d is %g", what, (int)bad, bad < 0 ? 0.0 : lg[bad]);
    double s = 0;
    for (int32_t i = 0; i < n; i++) s += exp(lg[i] - mx);
    CHECK_MSG(fabs(mx + log(s)) <= 1e-4, "%s: logsumexp is %.3g", what, mx + log(s));
}

static int32_t argmax(const float *lg, int32_t n)
{
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++) {
        if (lg[i] > lg[best]) best = i;
    }
    return best;
}

static struct demo_model *load_builtin(void)
{
    char err[256] = "";
    struct demo_model *m = NULL;
    int rc = demo_model_load_mem(&m, nextok_demo_model, nextok_demo_model_size, err, sizeof err);
    CHECK_MSG(rc == 0 && m, "built-in model: %s", err);
    return rc == 0 ? m : NULL;
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = len > 0 ? malloc((size_t)len) : NULL;
    if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = p ? (size_t)len : 0;
    return p;
}

/* xorshift64*: a fixed-seed stream for the corruption trials. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Loads `size` bytes as a model from an exact-size heap copy (so that ASan
 * sees any read past the end); when it loads, every context tried must still
 * give a distribution. Returns whether it loaded. */
static int load_copy_and_check(const unsigned char *data, size_t size, const int32_t *ctxs,
                               size_t n_ctxs, size_t ctx_len, const char *what)
{
    unsigned char *copy = malloc(size ? size : 1);
    float *lg = malloc(65536 * sizeof *lg);
    if (!copy || !lg) {
        CHECK(0);
        free(copy);
        free(lg);
        return 0;
    }
    memcpy(copy, data, size);
    char err[256] = "";
    struct demo_model *m = NULL;
    int rc = demo_model_load_mem(&m, copy, size, err, sizeof err);
    CHECK_MSG((rc == 0) == (m != NULL), "%s: rc %d with model %p", what, rc, (void *)m);
    CHECK_MSG(rc == 0 || err[0], "%s: rejected without a message", what);
    if (rc == 0 && m) {
        int32_t n_vocab = demo_model_n_vocab(m);
        CHECK(n_vocab >= 1 && n_vocab <= 65535);
        demo_model_logits(m, NULL, 0, lg);
        check_distribution(lg, n_vocab, what);
        for (size_t i = 0; i < n_ctxs; i++) {
            demo_model_logits(m, ctxs + i * ctx_len, ctx_len, lg);
            check_distribution(lg, n_vocab, what);
        }
    }
    demo_model_free(m);
    free(copy);
    free(lg);
    return rc == 0;
}

/* ---- the shipped model -------------------------------------------------------- */

TEST(builtin_is_the_shipped_file)
{
    struct demo_model *m = load_builtin();
    if (!m) return;
    CHECK_EQ_INT(demo_model_n_vocab(m), GPT2_VOCAB);
    CHECK_EQ_INT(demo_model_order(m), 4);
    demo_model_free(m);

    size_t n = 0;
    unsigned char *file = read_all(MODEL_FILE, &n);
    CHECK_MSG(file != NULL, "cannot read %s", MODEL_FILE);
    if (!file) return;
    /* A stale build would embed an older model than the one in the tree. */
    CHECK_EQ_INT(n, nextok_demo_model_size);
    CHECK(n == nextok_demo_model_size && memcmp(file, nextok_demo_model, n) == 0);
    CHECK(nextok_demo_model_size <= 16000000); /* the size the issue allows */
    free(file);

    char err[256] = "";
    struct demo_model *f = NULL;
    CHECK_MSG(demo_model_load_file(&f, MODEL_FILE, err, sizeof err) == 0, "%s", err);
    if (f) CHECK_EQ_INT(demo_model_n_vocab(f), GPT2_VOCAB);
    demo_model_free(f);
}

/* Contexts of every kind: the ids were made with the GPT-2 tokenizer.json of
 * tests/data/vocab/hf/gpt2 (the npm package @huggingface/tokenizers, no
 * special tokens): " Mr" = 1770, "Mr. Darcy" = 5246 13 7491 948, " It is a
 * truth universally acknowledged, that a single man in possession of a good
 * fortune, must be in want of a" = 632 318 ... 257. */
TEST(every_id_finite_and_sums_to_one)
{
    static const int32_t mr[] = {1770};
    static const int32_t darcy[] = {5246, 13, 7491, 948};
    static const int32_t truth[] = {632,   318,  257,  3872, 26208, 10810, 11,  326,
                                    257,   2060, 582,  287,  7797,  286,   257, 922,
                                    15807, 11,   1276, 307,  287,   765,   286, 257};
    static const int32_t unseen[] = {50000, 50001, 50002};          /* never in the corpus */
    static const int32_t outside[] = {-1, 50257, 65535, INT32_MAX}; /* not ids at all */
    static const int32_t mixed[] = {1770, 50001, 13};
    static const struct {
        const int32_t *ids;
        size_t n;
        const char *what;
    } cases[] = {
        {NULL, 0, "empty"},
        {mr, 1, "\" Mr\""},
        {darcy, 2, "\"Mr.\""},
        {darcy, 4, "\"Mr. Darcy\""},
        {truth, 24, "a long context"},
        {unseen, 3, "unseen ids"},
        {outside, 4, "ids outside the vocabulary"},
        {mixed, 3, "an unseen id inside the context"},
    };
    struct demo_model *m = load_builtin();
    float *lg = malloc(GPT2_VOCAB * sizeof *lg);
    if (!m || !lg) goto out;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        demo_model_logits(m, cases[i].ids, cases[i].n, lg);
        check_distribution(lg, GPT2_VOCAB, cases[i].what);
    }
out:
    free(lg);
    demo_model_free(m);
}

/* log P(w | ctx) as tools/demo_model/train.py's Model.prob computes it (in
 * double precision, from the counts) for the shipped model. */
TEST(matches_the_trainer)
{
    static const struct {
        int32_t ctx[6];
        size_t n;
        int32_t w;
        double logp;
    } golden[] = {
        {{0}, 0, 11, -3.507425},                               /* "," at the start */
        {{1770}, 1, 13, -0.243011},                            /* " Mr" "." */
        {{287, 1842}, 2, 351, -1.201409},                      /* " in love" " with" */
        {{257, 1049, 1730}, 3, 286, -1.034292},                /* " a great deal" " of" */
        {{1276, 307, 287, 765, 286, 257}, 6, 3656, -3.570806}, /* "... want of a" " wife" */
        {{50000, 50001, 50002}, 3, 50000, -13.307718},         /* unseen everywhere */
        {{43568}, 1, 50256, -13.655267},                       /* "Elizabeth" <|endoftext|> */
    };
    struct demo_model *m = load_builtin();
    float *lg = malloc(GPT2_VOCAB * sizeof *lg);
    if (!m || !lg) goto out;
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        demo_model_logits(m, golden[i].ctx, golden[i].n, lg);
        CHECK_NEAR(lg[golden[i].w], golden[i].logp, 2e-5);
    }
out:
    free(lg);
    demo_model_free(m);
}

/* The most likely next token after a few Austen phrases (ids as above:
 * " Mrs" = 9074, " I am" = 314 716, " with" = 351, " sure" = 1654, " of" =
 * 286, "." = 13). */
TEST(plausible_next_tokens)
{
    static const struct {
        int32_t ctx[3];
        size_t n;
        int32_t top;
        const char *what;
    } cases[] = {
        {{1770}, 1, 13, "\" Mr\" -> \".\""},
        {{9074}, 1, 13, "\" Mrs\" -> \".\""},
        {{287, 1842}, 2, 351, "\" in love\" -> \" with\""},
        {{314, 716}, 2, 1654, "\" I am\" -> \" sure\""},
        {{257, 1049, 1730}, 3, 286, "\" a great deal\" -> \" of\""},
    };
    struct demo_model *m = load_builtin();
    float *lg = malloc(GPT2_VOCAB * sizeof *lg);
    if (!m || !lg) goto out;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        demo_model_logits(m, cases[i].ctx, cases[i].n, lg);
        int32_t top = argmax(lg, GPT2_VOCAB);
        CHECK_MSG(top == cases[i].top, "%s: the top id is %d", cases[i].what, (int)top);
    }
out:
    free(lg);
    demo_model_free(m);
}

/* The scratch space is clean after every step: the same context gives the
 * same logits, bit for bit, whatever came before. */
TEST(steps_are_independent)
{
    static const int32_t a[] = {257, 1049, 1730}, b[] = {11, 290, 262};
    struct demo_model *m = load_builtin();
    float *first = malloc(GPT2_VOCAB * sizeof *first), *again = malloc(GPT2_VOCAB * sizeof *again);
    if (!m || !first || !again) goto out;
    demo_model_logits(m, a, 3, first);
    demo_model_logits(m, b, 3, again);
    demo_model_logits(m, a, 3, again);
    CHECK(memcmp(first, again, GPT2_VOCAB * sizeof *first) == 0);
out:
    free(first);
    free(again);
    demo_model_free(m);
}

/* ---- a hand-made model ------------------------------------------------------------ */

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static void put_f64(unsigned char *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    put64(p, u);
}

/* n little-endian items of `width` bytes at off, then zero padding to a
 * multiple of 8; returns the next offset. */
static size_t put_table(unsigned char *buf, size_t off, const uint32_t *v, size_t n, int width)
{
    for (size_t i = 0; i < n; i++) {
        for (int b = 0; b < width; b++) buf[off++] = (unsigned char)(v[i] >> (8 * b));
    }
    while (off % 8) buf[off++] = 0;
    return off;
}

/* An order-2 model with three unigrams, discounts (0.5, 1, 1.5) at both
 * orders, and n2 bigrams. */
struct order2 {
    uint32_t n_vocab;
    uint32_t ids1[3], counts1[3], child1[4];
    size_t n2;
    uint32_t ids2[4], counts2[4];
};

#define ORDER2_MAX_SIZE 336

/* Writes the model's file (FORMAT.md) into buf; returns its size. */
static size_t build_order2(unsigned char buf[ORDER2_MAX_SIZE], const struct order2 *o)
{
    memset(buf, 0, ORDER2_MAX_SIZE);
    memcpy(buf, "NXTKNGRM", 8);
    put32(buf + 8, 1);
    put32(buf + 12, o->n_vocab);
    put32(buf + 16, 2);
    put64(buf + 24, 3);
    put64(buf + 32, o->n2);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 3; i++) put_f64(buf + 88 + 24 * k + 8 * i, 0.5 * (i + 1));
    }
    size_t off = put_table(buf, HEADER_SIZE, o->ids1, 3, 2);
    off = put_table(buf, off, o->counts1, 3, 2);
    off = put_table(buf, off, o->child1, 4, 4);
    off = put_table(buf, off, o->ids2, o->n2, 2);
    return put_table(buf, off, o->counts2, o->n2, 2);
}

#define TINY_VOCAB 5
#define TINY_SIZE  336

/* The tiny model, over 5 ids:
 *   unigram counts   0:1  1:2  3:4             (2 and 4 never seen)
 *   followers of 0   1:3
 *   followers of 1   none
 *   followers of 3   0:1  4:2                                          */
static size_t build_tiny(unsigned char buf[ORDER2_MAX_SIZE])
{
    static const struct order2 tiny = {
        TINY_VOCAB, {0, 1, 3}, {1, 2, 4}, {0, 1, 1, 3}, 3, {1, 0, 4}, {3, 1, 2},
    };
    return build_order2(buf, &tiny);
}

/* The probabilities of FORMAT.md worked out by hand for the tiny model. */
TEST(handmade_exact)
{
    unsigned char buf[ORDER2_MAX_SIZE + 1];
    size_t size = build_tiny(buf + 1);
    CHECK_EQ_INT(size, TINY_SIZE);
    /* Unigram: T = 7, N1 = N2 = N3+ = 1, gamma = (0.5 + 1 + 1.5) / 7. */
    const double g1 = 3.0 / 7 / TINY_VOCAB;
    const double p1[TINY_VOCAB] = {0.5 / 7 + g1, 1.0 / 7 + g1, g1, 2.5 / 7 + g1, g1};
    /* After 0: T = 3, one follower of count 3: gamma = 1.5 / 3, alpha(1) = 1.5 / 3.
     * After 3: T = 3, counts 1 and 2: gamma = 1.5 / 3, alpha(0) = 0.5 / 3,
     * alpha(4) = 1 / 3. After 1, 2 or a non-id: the unigram. */
    double after0[TINY_VOCAB], after3[TINY_VOCAB];
    for (int w = 0; w < TINY_VOCAB; w++) after0[w] = after3[w] = 0.5 * p1[w];
    after0[1] += 0.5;
    after3[0] += 0.5 / 3;
    after3[4] += 1.0 / 3;
    static const int32_t ctx[][2] = {{9, 0}, {0, 1}, {0, 2}, {4, 3}, {0, -7}};
    const double *want[] = {after0, p1, p1, after3, p1};

    char err[256] = "";
    struct demo_model *m = NULL;
    /* one byte in: the loader reads the data at any alignment */
    CHECK_MSG(demo_model_load_mem(&m, buf + 1, size, err, sizeof err) == 0, "%s", err);
    if (!m) return;
    CHECK_EQ_INT(demo_model_n_vocab(m), TINY_VOCAB);
    CHECK_EQ_INT(demo_model_order(m), 2);
    float lg[TINY_VOCAB];
    demo_model_logits(m, NULL, 0, lg);
    for (int w = 0; w < TINY_VOCAB; w++) CHECK_NEAR(lg[w], log(p1[w]), 1e-6);
    for (size_t c = 0; c < sizeof ctx / sizeof ctx[0]; c++) {
        demo_model_logits(m, ctx[c], 2, lg);
        for (int w = 0; w < TINY_VOCAB; w++) CHECK_NEAR(lg[w], log(want[c][w]), 1e-6);
    }
    demo_model_free(m);
}

/* Every bit of every byte of the tiny model flipped in turn: rejected, or a
 * model that still gives distributions. */
TEST(handmade_every_bit_flipped)
{
    unsigned char buf[ORDER2_MAX_SIZE];
    size_t size = build_tiny(buf);
    int32_t ctxs[TINY_VOCAB + 2];
    for (int i = 0; i < TINY_VOCAB + 2; i++) ctxs[i] = i - 1;
    int loaded = 0;
    for (size_t at = 0; at < size; at++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[at] ^= (unsigned char)(1u << bit);
            char what[64];
            snprintf(what, sizeof what, "byte %zu bit %d", at, bit);
            loaded += load_copy_and_check(buf, size, ctxs, TINY_VOCAB + 2, 1, what);
            buf[at] ^= (unsigned char)(1u << bit);
        }
    }
    /* flips in counts, discounts and padding load; the rest is rejected */
    CHECK(loaded > 0 && loaded < (int)size * 8);
    CHECK(load_copy_and_check(buf, size, ctxs, TINY_VOCAB + 2, 1, "restored"));
}

/* A child offset far past the end, in a file whose bigram ids and then
 * counts keep increasing to its last byte: the loader must reject the
 * offsets before it walks the ids they point at. */
TEST(handmade_wild_child_offset)
{
    struct order2 o = {
        100, {0, 1, 3}, {1, 2, 4}, {0, 1, 1, 4}, 4, {0, 1, 2, 3}, {5, 6, 7, 8},
    };
    unsigned char buf[ORDER2_MAX_SIZE];
    int32_t ctx[] = {3};
    size_t size = build_order2(buf, &o);
    CHECK(load_copy_and_check(buf, size, ctx, 1, 1, "the valid model"));
    o.child1[1] = 0x7fffffff;
    size = build_order2(buf, &o);
    CHECK(!load_copy_and_check(buf, size, ctx, 1, 1, "a wild offset"));
}

/* ---- damaged copies of the shipped model --------------------------------------------- */

/* Every prefix through the header and the first tables, and cuts around
 * the ends of the big tables: always rejected (the size must be exact). */
TEST(truncated)
{
    const unsigned char *p = nextok_demo_model;
    size_t size = nextok_demo_model_size;
    int32_t ctx[] = {257, 1049, 1730};
    for (size_t n = 0; n <= HEADER_SIZE + 64 && n < size; n++) {
        char what[64];
        snprintf(what, sizeof what, "the first %zu bytes", n);
        CHECK_MSG(!load_copy_and_check(p, n, ctx, 1, 3, what), "%s loaded", what);
    }
    static const size_t from_end[] = {1, 2, 7, 8, 9, 4096, 1000000};
    for (size_t i = 0; i < sizeof from_end / sizeof from_end[0]; i++) {
        if (from_end[i] >= size) continue;
        CHECK_MSG(!load_copy_and_check(p, size - from_end[i], ctx, 1, 3, "cut"),
                  "%zu bytes short loaded", from_end[i]);
    }
    /* one byte too many is as wrong as one too few */
    unsigned char *longer = malloc(size + 1);
    if (!longer) return;
    memcpy(longer, p, size);
    longer[size] = 0;
    CHECK(!load_copy_and_check(longer, size + 1, ctx, 1, 3, "one byte more"));
    free(longer);
}

/* Damaged header fields, each of which must be rejected. */
TEST(bad_header_fields)
{
    static const struct {
        size_t off;
        int width; /* 4 or 8: an integer; -8: a double */
        double value;
        const char *what;
    } cases[] = {
        {8, 4, 2, "version 2"},
        {12, 4, 0, "n_vocab 0"},
        {12, 4, 65536, "n_vocab 65536"},
        {16, 4, 0, "order 0"},
        {16, 4, 9, "order 9"},
        {16, 4, 3, "order 3 (the tables are of order 4)"},
        {20, 4, 1, "reserved field"},
        {24, 8, 0, "no unigrams"},
        {24, 8, 15215, "one unigram more"},
        {24, 8, 1ull << 62, "2^62 unigrams"},
        {56, 8, 1, "a depth past the order"},
        {88, -8, 0, "D1 = 0"},
        {96, -8, 2.5, "D2 = 2.5"},
        {104, -8, NAN, "D3+ = NaN"},
        {88 + 24 * 4, -8, 0.5, "a discount past the order"},
        {283, 4, 1, "reserved tail"},
    };
    size_t size = nextok_demo_model_size;
    unsigned char *copy = malloc(size);
    int32_t ctx[] = {11};
    if (!copy) return;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(copy, nextok_demo_model, size);
        if (cases[i].width == 4)
            put32(copy + cases[i].off, (uint32_t)cases[i].value);
        else if (cases[i].width == 8)
            put64(copy + cases[i].off, (uint64_t)cases[i].value);
        else
            put_f64(copy + cases[i].off, cases[i].value);
        CHECK_MSG(!load_copy_and_check(copy, size, ctx, 1, 1, cases[i].what), "%s loaded",
                  cases[i].what);
    }
    memcpy(copy, nextok_demo_model, size);
    copy[0] ^= 0x20;
    CHECK(!load_copy_and_check(copy, size, ctx, 1, 1, "bad magic"));
    free(copy);
}

/* Random bytes of the tables overwritten (a fixed seed): rejected, or loaded
 * as a model that still gives distributions. */
TEST(random_table_damage)
{
    const size_t size = nextok_demo_model_size, trials = 40;
    size_t loaded = 0;
    unsigned char *copy = malloc(size);
    int32_t ctxs[] = {1770, 13, 7491, 262, 1049, 1730, 50000, 11, 198};
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    if (!copy) return;
    memcpy(copy, nextok_demo_model, size);
    for (size_t t = 0; t < trials; t++) {
        size_t at[4];
        int n = 1 + (int)(rng_next(&seed) % 4);
        for (int i = 0; i < n; i++) {
            at[i] = HEADER_SIZE + (size_t)(rng_next(&seed) % (size - HEADER_SIZE));
            copy[at[i]] = (unsigned char)rng_next(&seed);
        }
        char what[64];
        snprintf(what, sizeof what, "trial %zu", t);
        loaded += (size_t)load_copy_and_check(copy, size, ctxs, 3, 3, what);
        for (int i = 0; i < n; i++) copy[at[i]] = nextok_demo_model[at[i]];
    }
    /* both paths taken: damage the loader catches, and counts it cannot tell */
    CHECK(loaded > 0 && loaded < trials);
    free(copy);
}

TEST(load_errors)
{
    char err[256] = "";
    char not_null;
    struct demo_model *m = (struct demo_model *)&not_null; /* a failed load sets NULL */
    CHECK(demo_model_load_file(&m, NEXTOK_SOURCE_DIR "/no/such/model.ngram", err, sizeof err) != 0);
    CHECK(m == NULL);
    CHECK(strstr(err, "no/such/model.ngram") != NULL);
    CHECK(demo_model_load_mem(&m, NULL, 0, err, sizeof err) != 0);
    CHECK(demo_model_load_mem(&m, nextok_demo_model, 100, NULL, 0) != 0); /* no err buffer */
    size_t size = nextok_demo_model_size;
    CHECK(demo_model_load_mem(NULL, nextok_demo_model, size, err, sizeof err) != 0);
    demo_model_free(NULL);
}

int main(void)
{
    RUN(builtin_is_the_shipped_file);
    RUN(every_id_finite_and_sums_to_one);
    RUN(matches_the_trainer);
    RUN(plausible_next_tokens);
    RUN(steps_are_independent);
    RUN(handmade_exact);
    RUN(handmade_every_bit_flipped);
    RUN(handmade_wild_child_offset);
    RUN(truncated);
    RUN(bad_header_fields);
    RUN(random_table_damage);
    RUN(load_errors);
    return harness_done();
}
