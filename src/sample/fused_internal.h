/*
 * Internals of the fused path, shared by its files: fused.c (plan,
 * processors as overrides, candidate collection, the first filters, the
 * dense dist, the driver), fused_top_p.c and fused_typical.c. Not part of
 * the library's interface.
 */
#ifndef NEXTOK_FUSED_INTERNAL_H
#define NEXTOK_FUSED_INTERNAL_H

#include "chain_internal.h"
#include "builtin.h"
#include "arch/kernels.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

/* Shared under short names; the symbols carry the library's internal prefix
 * (a static library must not export generic names such as `preimage`). */
#define preimage nextok__fz_preimage
#define float_ceil nextok__fz_float_ceil
#define dense_reserve nextok__fz_dense_reserve
#define dense_prepare nextok__fz_dense_prepare
#define dense_compact nextok__fz_dense_compact
#define drop_touched nextok__fz_drop_touched
#define kth_largest nextok__fz_kth_largest
#define emit_kept nextok__fz_emit_kept
#define dense_value nextok__fz_dense_value
#define fuse_top_k nextok__fz_fuse_top_k
#define set_last nextok__fz_set_last
#define clear_mask nextok__fz_clear_mask
#define tp_reserve nextok__fz_tp_reserve
#define fuse_top_p nextok__fz_fuse_top_p
#define fuse_typical nextok__fz_fuse_typical
#define cmp_sorted nextok__fz_cmp_sorted
#define sort_sorted nextok__fz_sort_sorted
#define dense_draw nextok__fz_dense_draw
#define cut_draw nextok__fz_cut_draw
#define resum_touched_blocks nextok__fz_resum_touched_blocks
#define active_run nextok__fz_active_run
#define mark_touched nextok__fz_mark_touched

#define HBINS 2048 /* histogram buckets of fuse_top_p: at most 11 key bits a level */

enum filt { F_NONE = 0, F_TOP1, F_GREEDY, F_TOP_K, F_MIN_P, F_SIGMA };

struct nextok__fused {
    int32_t n_vocab;
    size_t n_proc;      /* leading processors                                  */
    bool has_allowed;   /* one of them is a whitelist                          */
    bool fusable;       /* the chain starts with something worth fusing        */

    uint8_t *tmask;     /* n_vocab bytes: 1 = touched by a processor (kept 0   */
                        /* between rows; marked on demand: mark_touched)      */
    bool tmarked;       /* this row's touched ids are marked                   */
    int32_t *touched;   /* touched ids (union), grown geometrically            */
    size_t touched_cap;
    struct nextok_token_data *ov; /* overrides: processors applied to touched  */
    size_t ov_cap;
    size_t n_ov;        /* surviving touched ids (sorted by id)                */
    size_t n_removed;   /* touched ids removed by a processor                  */

    int32_t *cids;      /* compaction output, n_vocab entries + slack          */
    float *cvals;
    float *sample;      /* SAMPLE_N floats: threshold guesses, top-p scratch    */
    float *sel;         /* n_vocab + slack floats: selection scratch (emit_top)   */
    float *blkmax;      /* the row's block maxima (NEXTOK__BLK ids a block)     */
    struct nextok__catdraw *draw; /* nextok_chain_sample_n's scratch (lazy)    */

    /* dense distribution of the last call (fuse_dist), allocated on first use */
    float *dw;          /* n_vocab weights, index = id (0: not a candidate):    */
    double *dbs;        /* the canonical ones times 2^dN exactly, block sums,   */
    double *dcum;       /* running sums of dbs                                  */
    double dz;          /* Z (times 2^dN)                                       */
    struct nextok__wref dref; /* the reference dw was computed with           */
    struct nextok__wref cref; /* the canonical reference of the set           */
    int32_t dN;         /* dref unscaled: cref.n, else 0                        */
    float dmax;         /* the candidates' maximum (processed)                  */
    float *dbmax;       /* per 256 ids: the row's largest processed value       */
    float dt;           /* the temperature divisor used                         */
    size_t d_touched;   /* touched ids of that call (f->touched)               */
    size_t d_n;         /* the set's ids are below it: dw is valid up to there  */
                        /* in every block with a positive sum (top-p leaves     */
                        /* weights of blocks it proved empty unwritten)         */
    bool d_cut;         /* a top-p cut applies: candidates are keep(v, id)     */
    float d_cut_v;      /* ... v > d_cut_v, or v == d_cut_v and id <= d_cut_id */
    int32_t d_cut_id;

    /* top-p by histogram of mass (fuse_top_p), allocated on first use */
    uint64_t *cq;       /* masses of the crossing bucket's candidates          */
    uint64_t (*hq)[HBINS]; /* 2 mass histograms of a refinement level          */
    double *tpw;        /* 2 x HBINS: estimated weight per bucket (tp_window)   */
    uint32_t (*hn)[HBINS]; /* and counts                                       */

    /* typical-p (fuse_typical): S's block sums, allocated on first use; the
     * scores live in sel. A dense draw after it keeps ty_keep(v, id, c, s, v, id). */
    double *tys;
    bool d_typ;
    float d_typ_c, d_typ_s, d_typ_v;
    int32_t d_typ_id;
};

#define SAMPLE_N 512
#define SLACK 16

struct run {
    struct nextok__fused *f;
    const struct nextok__kernels *k;
    const struct nextok__fused_kernels *fk;
    const void *row;
    enum nextok_dtype dt;
    size_t V;       /* row length                                          */
    size_t n_set;   /* current candidate set size (V - removed)            */
    float t;        /* temperature divisor (1 = none)                      */
    size_t nc;      /* compacted untouched candidates in cids/cvals        */
    float tau;      /* raw threshold of the compaction                     */
    size_t n_touched; /* ids touched by processors (f->touched)            */
    size_t nblk;    /* blocks in f->blkmax for this row (0: not computed)  */
};

static inline float P(float x, float t) { return t == 1.0f ? x : nextok__sat(x / t); }

/* Processed values of ids i0 .. i0+n-1 (n <= 64): the row itself for f32
 * without temperature, else converted into buf. */
static inline const float *tp_vals(const struct run *r, size_t i0, size_t n, float *buf)
{
    if (r->dt == NEXTOK_DTYPE_F32 && r->t == 1.0f) return (const float *)r->row + i0;
    for (size_t i = 0; i < n; i++) buf[i] = P(nextok__row_get(r->row, r->dt, i0 + i), r->t);
    return buf;
}


static inline bool tp_keep(float v, int32_t id, float L, int32_t cut)
{
    return v > L || (v == L && id <= cut);
}


static inline bool ty_keep(float v, int32_t id, float c, float ls, float lv, int32_t lid)
{
    const float s = fabsf(v - c);
    return s < ls || (s == ls && (v > lv || (v == lv && id <= lid)));
}

/* A top-p cut (tp_keep(v, id, L, cut)) or a typical one (ty_keep(v, id,
 * center, ls, lv, lid)), as emit_kept applies it. */
struct kept {
    bool typical;
    float L, center, ls, lv;
    int32_t id; /* cut (top-p) or lid (typical) */
};

size_t emit_kept(struct nextok_chain *c, const struct run *r, const struct kept *k);


float preimage(float th, float t);
float float_ceil(double d);
bool dense_reserve(struct nextok__fused *f);
bool dense_prepare(struct run *r, bool patch, bool bmax);
void dense_compact(struct run *r, double thr);
size_t drop_touched(int32_t *ids, float *vals, size_t n, const int32_t *touched, size_t nt);
float kth_largest(float *a, size_t n, size_t rank);
bool active_run(const struct run *r, float v, size_t *g, size_t *lo, size_t *hi);
void mark_touched(const struct run *r);
float dense_value(const struct nextok__fused *f, const void *row, enum nextok_dtype dt,
                         float t, size_t i);
bool fuse_top_k(struct nextok_chain *c, struct run *r, size_t k, bool keep);
void set_last(struct nextok_chain *c, size_t n, bool sorted);
void clear_mask(struct nextok__fused *f, size_t n_touched);
bool tp_reserve(struct nextok__fused *f);
void dense_draw(struct nextok_chain *c, const struct run *r, uint64_t seed);
void cut_draw(struct nextok_chain *c, const struct run *r, float L, int32_t cut, bool all_written,
              uint64_t seed);
size_t resum_touched_blocks(const struct run *r);
/* Sorted order of candidates: logit descending, then id ascending. */
int cmp_sorted(const void *pa, const void *pb);
/* a[0..n) into cmp_sorted's order. */
void sort_sorted(struct nextok_token_data *a, size_t n);

/* Order-preserving unsigned key of a non-NaN float (-0 just below +0), no
 * branch. */
static inline uint32_t fkey(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u ^ ((uint32_t)(-(int32_t)(u >> 31)) | 0x80000000u);
}

/* The key of a processed value: -0 as +0 (they compare equal as logits). */
static inline uint32_t vkey(float v) { return fkey(v + 0.0f); }
bool fuse_top_p(struct nextok_chain *c, struct run *r, const struct nextok__p_top_p *q,
                       const uint64_t *dist_seed, bool *drawn);
bool fuse_typical(struct nextok_chain *c, struct run *r, const struct nextok__p_typical *q,
                         const uint64_t *dist_seed, bool *drawn);

#endif
