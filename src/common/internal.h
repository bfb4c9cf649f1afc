/* Internal helpers shared by every module. Not installed, not API. */
#ifndef NEXTOK_INTERNAL_H
#define NEXTOK_INTERNAL_H

#include "nextok.h"
#include "alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------- */

/* Fill err (may be NULL) and return status. */
nextok_status nextok__err(struct nextok_error *err, nextok_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

void nextok__vfmt(char *buf, size_t cap, const char *fmt, va_list ap);

/* Copy up to len bytes of s into dst (cap bytes, NUL-terminated) for a
 * message: printable ASCII kept, quotes, backslashes and other bytes as \xNN. */
void nextok__quote(char *dst, size_t cap, const char *s, size_t len);

#define NEXTOK_RETURN_IF(cond, err, status, ...)          \
    do {                                                  \
        if (cond) return nextok__err((err), (status), __VA_ARGS__); \
    } while (0)

#define NEXTOK_FORWARD(expr)                              \
    do {                                                  \
        nextok_status rc_fwd_ = (expr);                   \
        if (rc_fwd_ != NEXTOK_OK) return rc_fwd_;         \
    } while (0)

/* ---- bytes --------------------------------------------------------------- */

/* The first occurrence of needle[0, m) in hay[0, n) (m > 0), or NULL: memmem,
 * which C and POSIX lack. */
static inline const char *nextok__memfind(const char *hay, size_t n, const char *needle, size_t m)
{
    for (const char *p = hay, *end = hay + n; m <= (size_t)(end - p);) {
        p = memchr(p, needle[0], (size_t)(end - p) - m + 1);
        if (!p) return NULL;
        if (memcmp(p, needle, m) == 0) return p;
        p++;
    }
    return NULL;
}

/* ---- samplers ----------------------------------------------------------- */

struct nextok__stage_ops; /* sample/builtin.h: what the fused path calls on a built-in stage */

struct nextok_sampler {
    const struct nextok_sampler_i *iface;
    void *ctx;
    int   kind;                          /* enum nextok__kind; 0 for user samplers */
    const struct nextok__stage_ops *ops; /* NULL for user samplers                 */
    struct nextok__mem mem;              /* this struct's, and a built-in's ctx's  */
    char  errmsg[NEXTOK_ERRMSG_MAX];
};

/* clone and free for built-in samplers whose ctx is one plain parameter
 * struct of `size` bytes (no pointers): a bitwise copy is a full clone. */
nextok_status nextok__clone_params(const struct nextok_sampler *s, size_t size,
                                   struct nextok_sampler **out);
void nextok__free_ctx(struct nextok_sampler *s);

/* Validation helpers for constructors: each returns OK or fills err. */
nextok_status nextok__check_vocab(int32_t n_vocab, struct nextok_error *err);
nextok_status nextok__check_finite(float v, const char *name, struct nextok_error *err);

/* ---- candidate arrays --------------------------------------------------- */

/* Order used wherever an order is needed: logit descending, then id ascending. */
static inline int nextok__cand_before(const struct nextok_token_data *a,
                                      const struct nextok_token_data *b)
{
    if (a->logit != b->logit) return a->logit > b->logit;
    return a->id < b->id;
}

/* Sort cur by (logit desc, id asc) unless already sorted; sets cur->sorted. */
void nextok__cand_sort(struct nextok_token_data_array *cur);
/* Partially order so the first k are the top k in sorted order (k <= size). */
void nextok__cand_partial_sort(struct nextok_token_data_array *cur, size_t k);
/* Index of the maximum candidate (highest logit, lowest id on ties); size > 0. */
size_t nextok__cand_argmax(const struct nextok_token_data_array *cur);
/* max logit over cur (size > 0). */
float nextok__cand_max_logit(const struct nextok_token_data_array *cur);
/* p_i = softmax(logit_i) in double precision, stored as float. Returns the
 * normaliser sum_i exp(logit_i - max) (>= 1). */
double nextok__cand_softmax(struct nextok_token_data_array *cur);
/* Keep only candidates with keep[i] != 0 (stable); updates size and selected=-1. */
void nextok__cand_filter(struct nextok_token_data_array *cur, const unsigned char *keep);
/* Truncate a sorted array to n (n <= size). */
static inline void nextok__cand_truncate(struct nextok_token_data_array *cur, size_t n)
{
    if (n < cur->size) cur->size = n;
}

/* ---- sorting ------------------------------------------------------------ */

/* qsort() without allocation (glibc's qsort mallocs for arrays over 1 KiB).
 * Unstable; elements of at most 64 bytes sort in O(n log n). */
void nextok__sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* ---- randomness --------------------------------------------------------- */

uint64_t nextok__seed_from_os(void);
/* Resolve NEXTOK_DEFAULT_SEED to an OS seed; other values pass through. */
static inline uint64_t nextok__resolve_seed(uint64_t seed)
{
    return seed == NEXTOK_DEFAULT_SEED ? nextok__seed_from_os() : seed;
}

/* ---- logging ------------------------------------------------------------ */

void nextok__log(nextok_log_fn fn, void *user, enum nextok_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ---- rows --------------------------------------------------------------- */

/* Read element i of a row as float. */
static inline float nextok__row_get(const void *row, enum nextok_dtype dtype, size_t i)
{
    switch (dtype) {
    case NEXTOK_DTYPE_F16:  return nextok_f16_to_f32(((const uint16_t *)row)[i]);
    case NEXTOK_DTYPE_BF16: return nextok_bf16_to_f32(((const uint16_t *)row)[i]);
    default:                return ((const float *)row)[i];
    }
}

#endif /* NEXTOK_INTERNAL_H */
