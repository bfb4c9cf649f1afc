/*
 * model.c - the demo n-gram language model of the CLI (model.h).
 *
 * Interpolated modified Kneser-Ney (Chen and Goodman 1998, "An empirical
 * study of smoothing techniques for language modeling", Harvard TR-10-98); the
 * file format and the formulas are in tools/demo_model/FORMAT.md, and
 * tools/demo_model/train.py computes the same numbers in Python.
 *
 * One step costs one pass over the vocabulary plus a walk over the sparse
 * followers of each context. Written out, the interpolation is
 *
 *     P(w) = G * P_1(w) + sum over orders k of (gammas above k) * alpha_k(w)
 *
 * with G the product of the gammas of every order whose context was seen
 * and alpha_k(w) the discounted count term, non-zero only for followers of
 * the order-k context. So the orders are walked from the highest down,
 * collecting the scaled alphas in a sparse scratch array, and every id that
 * no context has as a follower gets log P_1(w) + log G: an add per id, no
 * log per id.
 */
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE    288
#define FORMAT_VERSION 1
#define MAX_VOCAB      65535 /* ids are 16-bit */

static const char MAGIC[8] = {'N', 'X', 'T', 'K', 'N', 'G', 'R', 'M'};

/* One depth of the trie. The tables point into the model data and are read
 * byte by byte (rd16, rd32), so the data may have any alignment and the host
 * any byte order; compilers turn these reads into plain loads. */
struct level {
    const unsigned char *ids;    /* u16[n]: each n-gram's last id */
    const unsigned char *counts; /* u16[n] */
    const unsigned char *child;  /* u32[n + 1]; NULL at the last depth */
    size_t n;
};

/* Nodes [begin, end) of one depth: the followers of a context. */
struct span {
    size_t begin, end;
};

struct demo_model {
    int32_t n_vocab;
    int order;
    struct level level[DEMO_MODEL_MAX_ORDER]; /* depth d at [d - 1] */
    double discount[DEMO_MODEL_MAX_ORDER][3]; /* order k at [k - 1]: D1, D2, D3+ */
    double *unigram;                          /* P_1(w), n_vocab */
    float *log_unigram;                       /* log P_1(w), n_vocab */
    double *acc;      /* scratch: the sparse terms of a step; all zero between steps */
    int32_t *touched; /* scratch: the ids whose acc is not zero */
    void *owned;      /* the bytes read by demo_model_load_file, else NULL */
};

static int set_err(char *err, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int set_err(char *err, size_t cap, const char *fmt, ...)
{
    if (err && cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static inline uint32_t rd16(const unsigned char *p, size_t i)
{
    p += 2 * i;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t rd32(const unsigned char *p, size_t i)
{
    p += 4 * i;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p, 0) | (uint64_t)rd32(p, 1) << 32;
}

static double rd_f64(const unsigned char *p)
{
    uint64_t u = rd64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* ------------------------------------------------------------------------ */
/* Loading                                                                   */
/* ------------------------------------------------------------------------ */

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i]) return 0;
    }
    return 1;
}

/* Discounts of order k (1-based) at p: 0 < Di <= i keeps every discounted
 * count at or above zero and leaves every order some mass for the one
 * below, which is what makes every log-probability finite. */
static int read_discounts(struct demo_model *m, int k, const unsigned char *p, char *err,
                          size_t cap)
{
    for (int i = 0; i < 3; i++) {
        double d = rd_f64(p + 8 * i);
        if (!(d > 0 && d <= i + 1)) {
            return set_err(err, cap, "model: discount D%d of order %d is %g, outside (0, %d]",
                           i + 1, k, d, i + 1);
        }
        m->discount[k - 1][i] = d;
    }
    return 0;
}

static int parse_header(struct demo_model *m, const unsigned char *p, size_t size,
                        uint64_t n_nodes[DEMO_MODEL_MAX_ORDER], char *err, size_t cap)
{
    if (size < HEADER_SIZE)
        return set_err(err, cap, "model: %zu bytes, shorter than the %d-byte header", size,
                       HEADER_SIZE);
    if (memcmp(p, MAGIC, sizeof MAGIC) != 0)
        return set_err(err, cap, "model: not a nextok n-gram model (bad magic)");
    if (rd32(p + 8, 0) != FORMAT_VERSION)
        return set_err(err, cap, "model: format version %u (this build reads %d)",
                       (unsigned)rd32(p + 8, 0), FORMAT_VERSION);
    uint32_t n_vocab = rd32(p + 12, 0), order = rd32(p + 16, 0);
    if (n_vocab < 1 || n_vocab > MAX_VOCAB)
        return set_err(err, cap, "model: n_vocab %u outside 1..%d", (unsigned)n_vocab, MAX_VOCAB);
    if (order < 1 || order > DEMO_MODEL_MAX_ORDER)
        return set_err(err, cap, "model: order %u outside 1..%d", (unsigned)order,
                       DEMO_MODEL_MAX_ORDER);
    if (!all_zero(p + 20, 4) || !all_zero(p + 280, 8))
        return set_err(err, cap, "model: reserved header bytes are not zero");
    m->n_vocab = (int32_t)n_vocab;
    m->order = (int)order;
    for (int d = 1; d <= DEMO_MODEL_MAX_ORDER; d++) {
        const unsigned char *disc = p + 88 + 24 * (d - 1);
        n_nodes[d - 1] = rd64(p + 24 + 8 * (d - 1));
        if (d > m->order) {
            if (n_nodes[d - 1] != 0 || !all_zero(disc, 24))
                return set_err(err, cap, "model: depth %d is past the order %d but not empty", d,
                               m->order);
            continue;
        }
        if (read_discounts(m, d, disc, err, cap) != 0) return -1;
    }
    if (n_nodes[0] == 0) return set_err(err, cap, "model: no unigrams");
    return 0;
}

/* The table of n_items items of item_size bytes at *off; *off then moves past
 * it and its padding to a multiple of 8. NULL when the data end first. */
static const unsigned char *take(const unsigned char *base, size_t size, size_t *off,
                                 uint64_t n_items, size_t item_size)
{
    size_t avail = size - *off; /* *off <= size always */
    if (n_items > avail / item_size) return NULL;
    size_t bytes = (size_t)n_items * item_size;
    size_t padded = bytes + ((8 - bytes % 8) % 8);
    if (padded > avail) return NULL;
    const unsigned char *t = base + *off;
    *off += padded;
    return t;
}

/* Points the levels at their tables (FORMAT.md, "Tables"); the data must end
 * exactly after the last one. */
static int map_tables(struct demo_model *m, const unsigned char *p, size_t size,
                      const uint64_t n_nodes[DEMO_MODEL_MAX_ORDER], char *err, size_t cap)
{
    size_t off = HEADER_SIZE;
    for (int d = 1; d <= m->order; d++) {
        struct level *lv = &m->level[d - 1];
        uint64_t n = n_nodes[d - 1];
        lv->ids = take(p, size, &off, n, 2);
        lv->counts = lv->ids ? take(p, size, &off, n, 2) : NULL;
        lv->child = NULL;
        if (lv->counts && d < m->order) lv->child = take(p, size, &off, n + 1, 4);
        if (!lv->counts || (d < m->order && !lv->child))
            return set_err(err, cap, "model: truncated: %zu bytes end inside the depth-%d tables",
                           size, d);
        lv->n = (size_t)n; /* take() succeeded, so n <= size */
    }
    if (off != size)
        return set_err(err, cap, "model: %zu bytes, the header describes %zu", size, off);
    return 0;
}

/* Ids of nodes s of lv: below n_vocab and strictly increasing, so a binary
 * search over them finds what is there. */
static int check_ids(const struct level *lv, struct span s, int32_t n_vocab)
{
    for (size_t j = s.begin; j < s.end; j++) {
        uint32_t id = rd16(lv->ids, j);
        if (id >= (uint32_t)n_vocab) return -1;
        if (j > s.begin && rd16(lv->ids, j - 1) >= id) return -1;
    }
    return 0;
}

/* The children of depth d's nodes (1-based, d < order): offsets that
 * partition depth d+1 in order, each run of ids checked. All offsets are
 * checked first: only then is every run known to lie inside depth d+1. */
static int check_children(const struct demo_model *m, int d)
{
    const struct level *lv = &m->level[d - 1], *next = &m->level[d];
    if (rd32(lv->child, 0) != 0 || rd32(lv->child, lv->n) != next->n) return -1;
    for (size_t i = 0; i < lv->n; i++) {
        if (rd32(lv->child, i + 1) < rd32(lv->child, i)) return -1;
    }
    for (size_t i = 0; i < lv->n; i++) {
        struct span s = {rd32(lv->child, i), rd32(lv->child, i + 1)};
        if (check_ids(next, s, m->n_vocab) != 0) return -1;
    }
    return 0;
}

static int check_tables(const struct demo_model *m, char *err, size_t cap)
{
    struct span all = {0, m->level[0].n};
    if (check_ids(&m->level[0], all, m->n_vocab) != 0)
        return set_err(err, cap, "model: unigram ids out of order or out of the vocabulary");
    for (int d = 1; d <= m->order; d++) {
        const struct level *lv = &m->level[d - 1];
        for (size_t j = 0; j < lv->n; j++) {
            if (rd16(lv->counts, j) == 0)
                return set_err(err, cap, "model: a zero count at depth %d", d);
        }
        if (d < m->order && check_children(m, d) != 0)
            return set_err(err, cap, "model: bad child table at depth %d", d);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The arithmetic (FORMAT.md, "The probabilities")                           */
/* ------------------------------------------------------------------------ */

struct ctx_stats {
    double inv_total; /* 1 / T(h) */
    double gamma;     /* the mass order k leaves to order k-1 */
};

/* Order k's statistics of a context whose followers are s (at depth k). */
static struct ctx_stats span_stats(const struct demo_model *m, int k, struct span s)
{
    const struct level *lv = &m->level[k - 1];
    const double *D = m->discount[k - 1];
    uint64_t total = 0, n[4] = {0, 0, 0, 0};
    for (size_t j = s.begin; j < s.end; j++) {
        uint32_t c = rd16(lv->counts, j);
        total += c;
        n[c < 3 ? c : 3]++;
    }
    struct ctx_stats st;
    st.inv_total = 1.0 / (double)total;
    st.gamma = (D[0] * (double)n[1] + D[1] * (double)n[2] + D[2] * (double)n[3]) * st.inv_total;
    return st;
}

/* max(c - D(c), 0) for a count c >= 1 (the loader rejects zeros). */
static double discounted(const double D[3], uint32_t c)
{
    double d = D[c < 3 ? c - 1 : 2];
    return (double)c > d ? (double)c - d : 0.0;
}

static int alloc_arrays(struct demo_model *m)
{
    size_t v = (size_t)m->n_vocab;
    m->unigram = malloc(v * sizeof *m->unigram);
    m->log_unigram = malloc(v * sizeof *m->log_unigram);
    m->acc = calloc(v, sizeof *m->acc);
    m->touched = malloc(v * sizeof *m->touched);
    return m->unigram && m->log_unigram && m->acc && m->touched ? 0 : -1;
}

/* P_1: the unigram (continuation) counts interpolated with the uniform
 * distribution, so that every id of the vocabulary, seen or not, gets a
 * probability above zero. */
static void compute_unigram(struct demo_model *m)
{
    const struct level *lv = &m->level[0];
    struct span all = {0, lv->n};
    struct ctx_stats st = span_stats(m, 1, all);
    double floor = st.gamma / (double)m->n_vocab;
    for (int32_t w = 0; w < m->n_vocab; w++) m->unigram[w] = floor;
    for (size_t j = 0; j < lv->n; j++) {
        m->unigram[rd16(lv->ids, j)] +=
            discounted(m->discount[0], rd16(lv->counts, j)) * st.inv_total;
    }
    for (int32_t w = 0; w < m->n_vocab; w++) m->log_unigram[w] = (float)log(m->unigram[w]);
}

int demo_model_load_mem(struct demo_model **out, const void *data, size_t size, char *err,
                        size_t err_len)
{
    uint64_t n_nodes[DEMO_MODEL_MAX_ORDER];
    if (!out) return set_err(err, err_len, "model: no place for the result");
    *out = NULL;
    if (!data && size > 0) return set_err(err, err_len, "model: no data");
    struct demo_model *m = calloc(1, sizeof *m);
    if (!m) return set_err(err, err_len, "model: out of memory");
    const unsigned char *p = data;
    if (parse_header(m, p, size, n_nodes, err, err_len) != 0) goto out_free_model;
    if (map_tables(m, p, size, n_nodes, err, err_len) != 0) goto out_free_model;
    if (check_tables(m, err, err_len) != 0) goto out_free_model;
    if (alloc_arrays(m) != 0) {
        set_err(err, err_len, "model: out of memory");
        goto out_free_model;
    }
    compute_unigram(m);
    *out = m;
    return 0;

out_free_model:
    demo_model_free(m);
    return -1;
}

/* The whole file in one malloc'd buffer. */
static int read_file(const char *path, unsigned char **out, size_t *n, char *err, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) return set_err(err, cap, "model: %s: %s", path, strerror(errno));
    size_t len = 0, size = 1 << 20;
    unsigned char *buf = malloc(size);
    while (buf) {
        len += fread(buf + len, 1, size - len, f);
        if (len < size) break; /* end of file or an error: ferror says which */
        unsigned char *bigger = size <= SIZE_MAX / 2 ? realloc(buf, size * 2) : NULL;
        if (!bigger) free(buf);
        buf = bigger;
        size *= 2;
    }
    const char *why = !buf ? "out of memory" : ferror(f) ? "read error" : NULL;
    fclose(f);
    if (why) {
        free(buf);
        return set_err(err, cap, "model: %s: %s", path, why);
    }
    *out = buf;
    *n = len;
    return 0;
}

int demo_model_load_file(struct demo_model **out, const char *path, char *err, size_t err_len)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    if (!out) return set_err(err, err_len, "model: no place for the result");
    *out = NULL;
    if (read_file(path, &buf, &n, err, err_len) != 0) return -1;
    if (demo_model_load_mem(out, buf, n, err, err_len) != 0) {
        free(buf);
        return -1;
    }
    (*out)->owned = buf;
    return 0;
}

void demo_model_free(struct demo_model *m)
{
    if (!m) return;
    free(m->unigram);
    free(m->log_unigram);
    free(m->acc);
    free(m->touched);
    free(m->owned);
    free(m);
}

int32_t demo_model_n_vocab(const struct demo_model *m) { return m->n_vocab; }

int demo_model_order(const struct demo_model *m) { return m->order; }

/* ------------------------------------------------------------------------ */
/* One step                                                                  */
/* ------------------------------------------------------------------------ */

/* Binary search for id among the nodes s of lv (their ids increase). */
static int find_id(const struct level *lv, struct span s, int32_t id, size_t *at)
{
    if (id < 0 || id > MAX_VOCAB) return 0;
    size_t lo = s.begin, hi = s.end;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t v = rd16(lv->ids, mid);
        if (v == (uint32_t)id) {
            *at = mid;
            return 1;
        }
        if (v < (uint32_t)id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The followers (at depth len+1) of the context h[0..len), len < order:
 * one binary search per id from the root down. 0 when the context was
 * never seen or has no followers. */
static int find_followers(const struct demo_model *m, const int32_t *h, size_t len,
                          struct span *out)
{
    struct span s = {0, m->level[0].n};
    for (size_t i = 0; i < len; i++) {
        size_t j;
        if (!find_id(&m->level[i], s, h[i], &j)) return 0;
        s.begin = rd32(m->level[i].child, j);
        s.end = rd32(m->level[i].child, j + 1);
    }
    *out = s;
    return s.begin < s.end;
}

/* acc[w] += scale * max(c(hw) - D, 0) for the followers s of order k; returns
 * the new number of touched ids. Each id enters touched once: its acc stays
 * above zero until the step ends. */
static size_t add_followers(struct demo_model *m, int k, struct span s, double scale,
                            size_t n_touched)
{
    const struct level *lv = &m->level[k - 1];
    for (size_t j = s.begin; j < s.end; j++) {
        double a = scale * discounted(m->discount[k - 1], rd16(lv->counts, j));
        uint32_t w = rd16(lv->ids, j);
        if (a <= 0) continue;
        if (m->acc[w] == 0) m->touched[n_touched++] = (int32_t)w;
        m->acc[w] += a;
    }
    return n_touched;
}

void demo_model_logits(struct demo_model *m, const int32_t *ctx, size_t n_ctx, float *logits)
{
    size_t n_touched = 0;
    double mult = 1.0; /* the product of the gammas of the orders above */
    int k_max = n_ctx < (size_t)m->order ? (int)n_ctx + 1 : m->order;
    for (int k = k_max; k >= 2; k--) {
        struct span s;
        if (!find_followers(m, ctx + n_ctx - (size_t)(k - 1), (size_t)(k - 1), &s)) continue;
        struct ctx_stats st = span_stats(m, k, s);
        n_touched = add_followers(m, k, s, mult * st.inv_total, n_touched);
        mult *= st.gamma;
    }
    float log_mult = (float)log(mult);
    for (int32_t w = 0; w < m->n_vocab; w++) logits[w] = m->log_unigram[w] + log_mult;
    for (size_t i = 0; i < n_touched; i++) {
        int32_t w = m->touched[i];
        logits[w] = (float)log(mult * m->unigram[w] + m->acc[w]);
        m->acc[w] = 0;
    }
}
