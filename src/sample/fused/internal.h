/*
 * Internals shared by the files of the fused path (src/sample/fused/). Not
 * part of the library's interface; the chain sees only fused.h.
 *
 * The layers, each a file (no file calls a layer above it):
 *   plan.c        the route table: which stage kinds fuse and how (the one
 *                 place that decides), built once per chain configuration
 *   overrides.c   processors as touched ids, applied to a small array
 *   collect.c     candidate collection: thresholds, SIMD compaction, the
 *                 sorted top of the set
 *   dense.c       the dense canonical weights of the whole row
 *   thresholds.c  top-k, top-1, min-p, top-n-sigma
 *   mass_top_p.c  top-p by exact integer masses
 *   mass_typical.c typical-p by exact integer masses
 *   miro2.c       Mirostat v2
 *   draw.c        the categorical draw over a dense set
 *   dist.c        the distribution object: the dense result, as readers see it
 *   driver.c      a row through the plan
 */
#ifndef NEXTOK_FUSED_INTERNAL_H
#define NEXTOK_FUSED_INTERNAL_H

#include "fused.h"
#include "../builtin.h"
#include "../arch/kernels.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

#define NEXTOK__FZ_SAMPLE_N 512 /* threshold guesses: sampled elements      */
#define NEXTOK__FZ_SLACK 16     /* room past n_vocab for vector stores      */
#define NEXTOK__FZ_HBINS 2048   /* mass histograms: at most 11 key bits a level */

/* ---- the plan ------------------------------------------------------------ */

struct nextok__fz_run;

/*
 * A fused route: runs stage i of the chain on r. Returns the index of the
 * first stage the chain still has to run (i + 1, or further when the route
 * also did the stages after it: a dense draw does the dist), or
 * NEXTOK__FZ_NEXT when the stage turned out to change nothing on this row
 * (the walk goes on with stage i + 1), or NEXTOK__FZ_HANDBACK to leave the
 * row to the plain chain.
 */
#define NEXTOK__FZ_NEXT ((size_t)-2)
#define NEXTOK__FZ_HANDBACK ((size_t)-1)
typedef size_t (*nextok__fz_route_fn)(struct nextok__fz_run *r, size_t i);

/* What the plan decided for one stage. */
enum nextok__fz_action {
    NEXTOK__FZ_PROCESS, /* a processor: applied to the touched ids         */
    NEXTOK__FZ_SKIP,    /* disabled by its parameters: changes nothing     */
    NEXTOK__FZ_TEMP,    /* a temperature t > 0: folded into later stages   */
    NEXTOK__FZ_ROUTE,   /* a reducing stage with a fused route             */
    NEXTOK__FZ_STOP,    /* the fused prefix ends before this stage         */
};

struct nextok__fz_step {
    enum nextok__fz_action action;
    nextok__fz_route_fn route;  /* NEXTOK__FZ_ROUTE                        */
    bool masked;                /* the route applies a token bitmask       */
    float t;                    /* NEXTOK__FZ_TEMP: the divisor            */
    /* A dist ends the chain after this stage, with at most a monotone
     * temperature between them and then none before this stage: the stage
     * may draw from a dense set (the dist's seed, and the temperature
     * applied after the stage's cut, 1 for none). */
    bool draw_after;
    uint64_t draw_seed;
    float draw_t;
};

struct nextok__fz_plan {
    bool valid;
    size_t n_proc;       /* leading processors                              */
    bool has_allowed;    /* one of them is a whitelist                      */
    bool has_mask;       /* one of them is a token bitmask (mask_stage)      */
    size_t mask_stage;
    bool mask_kernels;   /* the first route applies a token bitmask in its   */
                         /* passes (else the allowed ids are gathered)        */
    bool fusable;        /* a route may be reached                          */
    struct nextok__fz_step *steps; /* one per stage                         */
    size_t cap;
};

/* ---- processors as overrides --------------------------------------------- */

struct nextok__fz_ov {
    uint8_t *tmask;     /* n_vocab bytes: 1 = touched (kept 0 between rows;  */
                        /* marked on demand: mark_touched)       */
    bool tmarked;       /* this row's touched ids are marked                 */
    int32_t *touched;   /* touched ids (union, ascending), grown geometrically */
    size_t touched_cap;
    size_t n_touched;
    struct nextok_token_data *ov; /* the processors applied to the touched ids */
    size_t ov_cap;
    size_t n_ov;        /* surviving touched ids (ascending)                 */
    size_t n_removed;   /* touched ids a processor removed                   */
};

/* ---- the distribution object --------------------------------------------- */

/* Which candidates a dense set holds besides the weights (for readers that
 * list them: nextok__dist_materialize). */
enum nextok__dist_rule {
    NEXTOK__DIST_ALL,     /* every candidate (dist over the whole set)       */
    NEXTOK__DIST_CUT,     /* keep v > cut_v, or v == cut_v and id <= cut_id  */
    NEXTOK__DIST_TYPICAL, /* typical's (score, v, id) <= (typ_s, typ_v, typ_id) */
};

struct nextok__dist {
    bool valid;          /* the last row's result is this dense set          */
    size_t n_vocab;
    float *w;            /* n_vocab weights, index = id (0: not a candidate): */
    double *bsum;        /* the canonical ones times 2^N exactly; block sums */
    double *cum;         /* running sums of bsum                            */
    float *gmax;         /* per 256 ids: the row's largest processed value   */
    double z;            /* Z (times 2^N)                                    */
    size_t n;            /* ids below n: w is valid in every block of        */
                         /* positive sum (blocks a cut proved empty may hold */
                         /* unwritten weights)                               */
    struct nextok__wref ref;  /* the reference w was computed with           */
    struct nextok__wref cref; /* the canonical reference of the set          */
    int32_t N;           /* ref unscaled: cref.n, else 0                     */
    float max;           /* the candidates' largest (final) value            */
    float t;             /* temperature divisor of the final values          */
    float cut_t;         /* ... of the values the cut applies to (the rule)  */
    enum nextok__dist_rule rule;
    float cut_v;
    int32_t cut_id;
    float typ_c, typ_s;
    const struct nextok__fz_ov *ov; /* the overrides of that row            */
    const uint32_t *mask; /* that row's token bitmask (NULL: none)            */
    size_t n_touched;    /* touched ids of that row (ov->touched)            */
    int32_t token;       /* the draw                                         */
};

/* ---- the workspace ------------------------------------------------------- */

struct nextok__fused {
    struct nextok__mem mem; /* the chain's: every buffer here is allocated with it */
    int32_t n_vocab;
    struct nextok__fz_plan plan;
    struct nextok__fz_ov ovr;

    int32_t *cids;      /* compaction output, n_vocab + slack entries        */
    float *cvals;
    float *sample;      /* NEXTOK__FZ_SAMPLE_N floats: guesses, scratch      */
    float *sel;         /* n_vocab + slack floats: selection scratch, scores */
    float *blkmax;      /* the row's block maxima (NEXTOK__BLK ids a block)  */

    struct nextok__dist dist;

    /* top-p and typical by histograms of mass, allocated on first use */
    uint64_t *cq;       /* masses of the gathered candidates; sort keys      */
    uint64_t *cq2;      /* the radix sort's second key buffer (lazy)         */
    uint64_t (*hq)[NEXTOK__FZ_HBINS]; /* 2 mass histograms                   */
    uint32_t (*hn)[NEXTOK__FZ_HBINS]; /* and counts                          */
    double *tpw;        /* 2 x HBINS: top-p's estimated weight per bucket    */
    double *tys;        /* typical's S, per block                            */
};

/* ---- one row ------------------------------------------------------------- */

struct nextok__fz_run {
    struct nextok__fused *f;
    const struct nextok__kernels *k;        /* row primitives                  */
    const struct nextok__fused_kernels *fk; /* the fused path's own steps      */
    const void *row;
    enum nextok_dtype dt;
    size_t V;          /* row length                                          */
    size_t n_set;      /* candidate set size (V - removed): read it through   */
                       /* nextok__fz_n_set / _gt (a bitmask's is counted late) */
    bool n_set_known;  /* n_set holds the count                               */
    float t;           /* temperature divisor applied so far (1 = none)       */
    float t_after;     /* ... after the reducing stage's cut, before a dense  */
                       /* draw (1 = none; one of t and t_after is 1)          */
    size_t nc;         /* compacted untouched candidates in cids/cvals        */
    float tau;         /* raw threshold of the compaction                     */
    size_t n_touched;  /* ids touched by processors (ovr.touched)              */
    size_t n_mask_touched; /* touched ids a token bitmask allows           */
    const uint32_t *mask; /* a token bitmask the passes apply (NULL: none)    */
    size_t nblk;       /* blocks in f->blkmax for this row (0: not computed)  */
    struct nextok_sampler *const *stages;
    size_t n_stages;
    uint64_t step;
    struct nextok_token_data *work; /* n_vocab candidates                    */
    struct nextok_token_data_array out; /* what the chain's tail starts from */
};

/* The temperature stage's value (temp.c): x / t in float, saturated. */
static inline float fz_P(float x, float t) { return t == 1.0f ? x : nextok__sat(x / t); }

/* A top-p or min-p cut on values: v > L, or v == L and id <= cut. */
static inline bool fz_cut_keep(float v, int32_t id, float L, int32_t cut)
{
    return v > L || (v == L && id <= cut);
}

/* Typical's cut: score |v - c| below ls, or equal with (larger v, lower id)
 * first up to (lv, lid). */
static inline bool fz_typ_keep(float v, int32_t id, float c, float ls, float lv, int32_t lid)
{
    const float s = fabsf(v - c);
    return s < ls || (s == ls && (v > lv || (v == lv && id <= lid)));
}

/* Order-preserving unsigned key of a non-NaN float (-0 just below +0), no
 * branch. */
static inline uint32_t fz_fkey(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u ^ ((uint32_t)(-(int32_t)(u >> 31)) | 0x80000000u);
}

/* The key of a processed value: -0 as +0 (they compare equal as logits). */
static inline uint32_t fz_vkey(float v) { return fz_fkey(v + 0.0f); }

/* Processed values of ids i0 .. i0+n-1 (n <= 64): the row itself for f32
 * without temperature, else converted into buf. */
static inline const float *fz_vals(const struct nextok__fz_run *r, size_t i0, size_t n,
                                           float *buf)
{
    if (r->dt == NEXTOK_DTYPE_F32 && r->t == 1.0f) return (const float *)r->row + i0;
    for (size_t i = 0; i < n; i++)
        buf[i] = fz_P(nextok__row_get(r->row, r->dt, i0 + i), r->t);
    return buf;
}

/* Grow *p (elements of elem bytes) to hold need, geometrically. */
bool nextok__fz_grow(const struct nextok__mem *mem, void **p, size_t *cap, size_t need, size_t elem);

/* Build the plan of a chain's stages (plan.c). false: out of memory. */
bool nextok__fz_plan_build(const struct nextok__mem *mem, struct nextok__fz_plan *pl,
                           struct nextok_sampler *const *st, size_t n);

/* ---- overrides.c ----------------------------------------------------------- */

/* Gather the touched ids and run the processors (stages 0 .. n_proc-1) on
 * them. false: hand the row to the plain chain (a processor failed, a
 * touched value is not finite, or memory ran out). */
bool nextok__fz_overrides(struct nextok__fz_run *r);
/* Mark the touched ids in tmask (the paths that test ids against it);
 * clear_mask clears them after the row. */
void nextok__fz_mark_touched(const struct nextok__fz_run *r);
void nextok__fz_clear_mask(struct nextok__fz_ov *o, size_t n_touched);

/* ---- collect.c ----------------------------------------------------------- */

/* Smallest float x with P(x, t) >= th; smallest float f with (double)f >= d. */
float nextok__fz_preimage(float th, float t);
float nextok__fz_float_ceil(double d);
/* Drop the ids listed in touched[0..nt) (ascending) from ids/vals[0..n)
 * (ascending). Returns the new count. */
size_t nextok__fz_drop_touched(int32_t *ids, float *vals, size_t n, const int32_t *touched,
                               size_t nt);
/* The rank-th largest (1-based) of n floats (quickselect, in place). */
float nextok__fz_kth_largest(float *a, size_t n, size_t rank);
/* Compact raw >= tau into cids/cvals, touched ids dropped. false: the row
 * holds a non-finite value. */
bool nextok__fz_compact(struct nextok__fz_run *r, float tau);
/* The row's strided sample (16 runs of 32 elements) into f->sample. */
float *nextok__fz_load_sample(const struct nextok__fz_run *r);
/* The candidate count (untouched candidates plus overrides). Without a
 * token bitmask it is known from the start; with one it is a pass over the
 * mask words, made on first use. */
size_t nextok__fz_n_set(struct nextok__fz_run *r);
/* n_set > m, reading only the mask words it takes: the routes' "keeps
 * everything" tests compare it with small numbers (k, min_keep, 1). */
bool nextok__fz_n_set_gt(struct nextok__fz_run *r, size_t m);

/* A compacted set holding at least need untouched elements (or all). */
bool nextok__fz_collect_top(struct nextok__fz_run *r, size_t need);
/* Largest processed value over the compacted set and the overrides. */
float nextok__fz_processed_max(const struct nextok__fz_run *r);
/* Candidates with processed value >= th from the compacted set and the
 * overrides, in id order, into r->work. Returns the count. */
size_t nextok__fz_emit_ge(struct nextok__fz_run *r, double th);
/* r->work = the first need candidates in sorted order, and every candidate
 * tied with the need-th (possibly a few more). Returns the count. */
size_t nextok__fz_emit_top(struct nextok__fz_run *r, size_t need);
/* a[0..n) in sorted order (value descending, -0 equal to +0, id ascending). */
void nextok__fz_sort(struct nextok_token_data *a, size_t n);
/* The same for a[0..n) in id order, many of them (a radix sort through the
 * workspace; cq, cids, cvals and sel are clobbered). */
void nextok__fz_sort_many(struct nextok__fused *f, struct nextok_token_data *a, size_t n);
/* r->out = r->work[0..n), sorted first when sorted. */
void nextok__fz_set_out(struct nextok__fz_run *r, size_t n, bool sorted);

/* ---- dense.c ------------------------------------------------------------- */

/* The dense set's buffers (allocated on first use). */
bool nextok__fz_dense_reserve(struct nextok__fused *f);
/* Every candidate's canonical weight into dist.w (times 2^N), block sums,
 * running sums, Z, the touched ids patched; mass: they will become masses
 * (the scale 2^(s - N) must be a float); gmax: fill dist.gmax. false: a
 * non-finite value is in the row. */
bool nextok__fz_dense_prepare(struct nextok__fz_run *r, bool mass, bool gmax);
/* The next run of 256-id groups whose largest processed value reaches v. */
bool nextok__fz_active_run(const struct nextok__fz_run *r, float v, size_t *g, size_t *lo,
                           size_t *hi);
/* compact() for a processed threshold after dense_prepare (gmax filled). */
void nextok__fz_dense_compact(struct nextok__fz_run *r, double thr);
/* Block sums of the blocks holding touched ids again; the first such block. */
size_t nextok__fz_resum_touched(const struct nextok__fz_run *r);

/* ---- the routes (thresholds.c, mass_top_p.c, mass_typical.c, miro2.c, draw.c) */

size_t nextok__fz_route_top_k(struct nextok__fz_run *r, size_t i);
size_t nextok__fz_route_greedy(struct nextok__fz_run *r, size_t i);
size_t nextok__fz_route_temp0(struct nextok__fz_run *r, size_t i);
size_t nextok__fz_route_min_p(struct nextok__fz_run *r, size_t i);
size_t nextok__fz_route_sigma(struct nextok__fz_run *r, size_t i);
size_t nextok__fz_route_top_p(struct nextok__fz_run *r, size_t i);
size_t nextok__fz_route_typical(struct nextok__fz_run *r, size_t i);
size_t nextok__fz_route_miro2(struct nextok__fz_run *r, size_t i);
size_t nextok__fz_route_dist(struct nextok__fz_run *r, size_t i);

/* Top k in sorted order (plus ties with the k-th when keep) into r->out. */
bool nextok__fz_top_k(struct nextok__fz_run *r, size_t k, bool keep);
/* The end of top-k once r->work holds the n candidates of emit_top(k). */
bool nextok__fz_top_k_finish(struct nextok__fz_run *r, size_t n, size_t k, bool keep);

/* ---- mass_cut.c: the exact-mass cut of top-p and typical ------------------ */

/* The mass histograms' buffers (allocated on first use). */
bool nextok__fz_mass_reserve(struct nextok__fused *f);

/* The interval candidates were gathered from: processed values [lo, hi)
 * and the sum of their masses. */
struct nextok__fz_interval {
    float lo, hi;
    uint64_t mass;
};

/* Candidates with processed values in [vlo, vhi): ids (ascending) in cids,
 * values in cvals, masses in cq. Returns the count. */
size_t nextok__fz_gather(struct nextok__fz_run *r, float vlo, float vhi, float scale);
/* The n compacted candidates of [vlo, vhi) (cids, raw cvals) as the
 * refinement takes them: touched ids dropped, processed values, masses, the
 * overrides in the interval merged. Returns the count. */
size_t nextok__fz_take_interval(struct nextok__fz_run *r, size_t n, float vlo, float vhi, float scale);
/* The gathered candidates of the crossing's interval (n >= 1; above /
 * n_above: the mass and count over it) refined to the value L, and the walk
 * through L's candidates: the cut (v > L, or v == L and id <= *cut) and the
 * number of candidates it keeps. */
void nextok__fz_mass_finish(struct nextok__fused *f, size_t n, const struct nextok__fz_interval *iv,
                            uint64_t target, uint64_t above, size_t n_above, bool keep_ties,
                            float *L, int32_t *cut, size_t *n_keep);

/* A top-p cut (cut_keep(v, id, L, id)) or a typical one (typ_keep(v,
 * id, center, ls, lv, id)), as emit_kept applies it. */
struct nextok__fz_kept {
    bool typical;
    float L, center, ls, lv;
    int32_t id; /* cut (top-p) or lid (typical) */
};
/* The candidates (row values and overrides, processed, in id order) the cut
 * keeps, into r->work; returns the count. by_groups: a top-p cut with
 * dist.gmax filled, whose groups below L are skipped. */
size_t nextok__fz_emit_kept(struct nextok__fz_run *r, const struct nextok__fz_kept *k, bool by_groups);

/* ---- draw.c -------------------------------------------------------------- */

/* The canonical walk over the dense set (its rule set by the caller);
 * r->out holds just the token, the set stays dense for readers. */
void nextok__fz_dense_draw(struct nextok__fz_run *r, uint64_t seed);
/* The end of a dense draw after a cut on values (top-p's, min-p's): the
 * touched ids patched, Z, the walk. */
void nextok__fz_cut_draw(struct nextok__fz_run *r, float L, int32_t cut, bool all_written,
                         uint64_t seed);

/* ---- dist.c -------------------------------------------------------------- */

/* Processed (final) value of candidate id i of the dense set. */
float nextok__dist_value(const struct nextok__dist *d, const void *row, enum nextok_dtype dt,
                         size_t i);

#endif
