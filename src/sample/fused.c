/*
 * Fused fast path. The chain calls nextok__fused_run() before its plain path;
 * when the chain starts with stages this file knows, the row is never loaded
 * as n_vocab candidates. Instead:
 *
 *   1. Processors (bias, banned, min-tokens, penalties, DRY, n-gram) list the
 *      ids they touch; those few ids are gathered from the row into a small
 *      array and the processors' own apply runs on it, in chain order. The
 *      results are "overrides"; every other id keeps its row value, and the
 *      row is never copied or scanned for them. (A whitelist makes its ids
 *      the whole candidate set: they are gathered and the chain runs on them.)
 *   2. A temperature t > 0 before the first filter is a monotone map
 *      P(x) = sat(x / t) evaluated in float, exactly as temp.c does; any
 *      threshold θ on P maps back to an exact raw threshold preimage(θ), the
 *      smallest float x with P(x) >= θ.
 *   3. The first effective filter, when it is top-k, min-p, top-n-sigma or a
 *      top-1 (greedy selector, temperature <= 0), runs as a threshold pass
 *      over the row (SIMD compaction of x >= τ, src/sample/arch/), never a
 *      sort. τ is chosen so the compacted set provably contains every
 *      survivor (for a few candidates: the k-th largest of the 512-id blocks'
 *      maxima, one branch-free pass, and only the blocks reaching it are
 *      compacted); the filter's exact rule then runs on that small set.
 *   4. The survivors are written to c->work in exactly the order the plain
 *      chain would leave them (id order after a stable filter, sorted order
 *      after a sorting one), with `sorted` as the chain would set it, and every
 *      later stage runs its ordinary apply on them. Later stages therefore see
 *      the very array the plain chain gives them, so the result is identical
 *      bit for bit (same survivors, same p, same token), including stages this
 *      file does not know (XTC, user samplers, mirostat).
 *
 *   5. A chain that is only processors, at most one temperature and dist
 *      (dist over the whole vocabulary) computes the canonical weights of
 *      docs/semantics.md with one SIMD pass over the row, before it knows
 *      the maximum (dense_prepare; a power-of-two scale makes that exact): the
 *      same weights, block sums and walk as the chain's dist, so the same
 *      token and p; the distribution stays dense until probs asks for it.
 *
 *   5a. min-p directly before dist on a row where more than 1 in 64 sampled
 *      elements survive (flat rows): the survivors' canonical weights as a
 *      dense set, 0 below the cut, in one SIMD pass after the maximum
 *      (weights_ge), then the walk as in 5 (minp_dense_draw, cut_draw).
 *
 *   6. top-p as the first filter (fused_top_p.c): exact integer masses above
 *      four estimated thresholds in one SIMD pass, then only the crossing
 *      interval refined; dist right after it draws densely, as in 5.
 *
 *   7. Mirostat v2 first: its logit threshold from the dense Z, the survivors
 *      from the 256-id groups whose maximum reaches it, its own draw on them
 *      (fuse_miro2).
 *
 *   8. typical-p first (fused_typical.c): c = S / Z from the dense weights and
 *      a SIMD pass for S, then one SIMD scan of the score |v - c| and integer
 *      mass with a bracket from a sample: exact mass under it, its candidates
 *      refined by histograms down to the cut; dist after it draws densely.
 *
 * Chains whose first reducing stage is Mirostat v1 are still
 * handed back to the plain chain (see docs/performance.md). Rows holding NaN or ±inf are handed back too; the
 * plain chain owns those rules (docs/semantics.md, Input rows).
 *
 * No allocation per call in steady state: the plan and all buffers live in
 * struct nextok__fused (c->fused), sized at plan time; only the touched-id
 * buffer grows (geometrically) when a processor's history grows.
 */
#include "fused_internal.h"


/* ---- plan ---------------------------------------------------------------------- */

static bool is_processor(enum nextok__kind k)
{
    return k == NEXTOK__K_LOGIT_BIAS || k == NEXTOK__K_ALLOWED || k == NEXTOK__K_BANNED ||
           k == NEXTOK__K_PENALTIES || k == NEXTOK__K_DRY || k == NEXTOK__K_NO_REPEAT_NGRAM ||
           k == NEXTOK__K_MIN_TOKENS;
}

void nextok__fused_free(struct nextok__fused *f)
{
    if (!f) return;
    free(f->tmask);
    free(f->touched);
    free(f->ov);
    free(f->cids);
    free(f->cvals);
    free(f->sample);
    free(f->sel);
    free(f->blkmax);
    nextok__catdraw_free(f->draw);
    free(f->dw);
    free(f->dbs);
    free(f->dbmax);
    free(f->dcum);
    free(f->cq);
    free(f->hq);
    free(f->tpw);
    free(f->hn);
    free(f->tys);
    free(f);
}

static struct nextok__fused *fused_alloc(int32_t n_vocab)
{
    struct nextok__fused *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    const size_t v = (size_t)n_vocab;
    f->n_vocab = n_vocab;
    f->tmask = calloc(v, 1);
    f->cids = malloc((v + SLACK) * sizeof *f->cids);
    f->cvals = malloc((v + SLACK) * sizeof *f->cvals);
    f->sample = malloc(SAMPLE_N * sizeof *f->sample);
    f->sel = malloc((v + SLACK) * sizeof *f->sel);
    f->blkmax = malloc((v / NEXTOK__BLK + 1) * sizeof *f->blkmax);
    if (!f->tmask || !f->cids || !f->cvals || !f->sample || !f->sel || !f->blkmax) {
        nextok__fused_free(f);
        return NULL;
    }
    return f;
}

/*
 * Can run_prefix reach a stage it fuses? Decided once per plan from the stage
 * kinds and their parameters, mirroring run_prefix's switch, so that a chain
 * that would be handed back anyway (XTC, epsilon, a user sampler
 * first) does not gather and apply its processors' overrides on every call
 * before the plain chain applies them again.
 */
static bool prefix_may_fuse(const struct nextok_chain *c, size_t i)
{
    bool have_t = false;
    for (; i < c->n; i++) {
        const void *p = nextok_sampler_ctx(c->samplers[i]);
        switch (nextok__sampler_kind(c->samplers[i])) {
        case NEXTOK__K_TEMP_EXT: /* range <= 0 is plain temperature (both start with t) */
        case NEXTOK__K_TEMP:
            if (nextok__sampler_kind(c->samplers[i]) == NEXTOK__K_TEMP_EXT &&
                ((const struct nextok__p_temp_ext *)p)->range > 0.0f)
                return false;
            if (*(const float *)p <= 0.0f) return true;
            if (have_t) return false;
            have_t = true;
            continue;
        case NEXTOK__K_TOP_K:
            if (((const struct nextok__p_top_k *)p)->k <= 0) continue;
            return true;
        case NEXTOK__K_MIN_P:
            if (((const struct nextok__p_min_p *)p)->p <= 0.0f) continue;
            return true;
        case NEXTOK__K_TOP_P:
            if (((const struct nextok__p_top_p *)p)->p >= 1.0f) continue;
            return true;
        case NEXTOK__K_TOP_N_SIGMA:
            if (((const struct nextok__p_sigma *)p)->n <= 0.0f) continue;
            return true;
        case NEXTOK__K_TYPICAL:
            if (((const struct nextok__p_typical *)p)->p >= 1.0f) continue;
            return true;
        case NEXTOK__K_DIST:
            return i + 1 == c->n;
        case NEXTOK__K_GREEDY:
        case NEXTOK__K_MIROSTAT_V2:
            return true;
        default:
            return false;
        }
    }
    return false;
}

/* Which stages lead the chain. Anything is allowed after the fused prefix. */
static void plan_build(struct nextok__fused *f, const struct nextok_chain *c)
{
    size_t i = 0;
    f->has_allowed = false;
    while (i < c->n && is_processor(nextok__sampler_kind(c->samplers[i]))) {
        f->has_allowed |= nextok__sampler_kind(c->samplers[i]) == NEXTOK__K_ALLOWED;
        i++;
    }
    f->n_proc = i;
    f->fusable = f->has_allowed || prefix_may_fuse(c, i);
}

static nextok_status plan_get(struct nextok_chain *c, struct nextok__fused **out)
{
    if (!c->fused) {
        c->fused = fused_alloc(c->params.n_vocab);
        if (!c->fused) return NEXTOK_ERR_NOMEM;
        c->plan_valid = false;
    }
    if (!c->plan_valid) {
        plan_build(c->fused, c);
        c->plan_valid = true;
    }
    *out = c->fused;
    return NEXTOK_OK;
}

struct nextok__catdraw *nextok__fused_catdraw(struct nextok_chain *c)
{
    struct nextok__fused *f;
    if (plan_get(c, &f) != NEXTOK_OK) return NULL;
    if (!f->draw) f->draw = nextok__catdraw_new((size_t)f->n_vocab);
    return f->draw;
}

/* ---- processors as overrides ------------------------------------------------------- */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

static int cmp_cand_id(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

/* Ascending ids: insertion sort for the usual few (a history of ~64),
 * nextok__sort beyond. */
static int cmp_i32(const void *pa, const void *pb)
{
    const int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

static void sort_ids(int32_t *ids, size_t n)
{
    if (n > 256) {
        nextok__sort(ids, n, sizeof *ids, cmp_i32);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        const int32_t v = ids[i];
        size_t j = i;
        for (; j > 0 && ids[j - 1] > v; j--) ids[j] = ids[j - 1];
        ids[j] = v;
    }
}

void clear_mask(struct nextok__fused *f, size_t n_touched)
{
    for (size_t i = 0; i < n_touched; i++) f->tmask[f->touched[i]] = 0;
}

/* The touched ids in f->tmask, for the paths that test ids against it (the
 * dense ones, the exact σ); nextok__fused_run clears it after the row. The
 * top-k and min-p paths merge with the sorted list instead and never mark:
 * in a batch, each row's mask is cold, and marking costs a cache miss per id. */
void mark_touched(const struct run *r)
{
    struct nextok__fused *f = r->f;
    if (f->tmarked) return;
    for (size_t i = 0; i < r->n_touched; i++) f->tmask[f->touched[i]] = 1;
    f->tmarked = true;
}

/* The union of the ids every processor touches, ascending (sorted, then
 * duplicates dropped). Returns the count, or (size_t)-1 on NOMEM. */
static size_t collect_touched(struct nextok__fused *f, struct nextok_chain *c, const void *row,
                              enum nextok_dtype dt)
{
    const size_t esz = nextok_dtype_size(dt);
    size_t n = 0;
    for (size_t s = 0; s < f->n_proc; s++) {
        size_t got = 0, room = f->touched_cap - n;
        if (!nextok__processor_touched(c->samplers[s], f->touched + n, room, &got)) continue;
        if (got > room) {
            if (!grow((void **)&f->touched, &f->touched_cap, n + got, sizeof *f->touched))
                return (size_t)-1;
            nextok__processor_touched(c->samplers[s], f->touched + n, got, &got);
        }
        const size_t base = n;
        for (size_t j = 0; j < got; j++) {
            const int32_t id = f->touched[base + j];
            if (id < 0 || id >= f->n_vocab) continue;
            /* the gather's loads start now, under the sort */
            __builtin_prefetch((const char *)row + (size_t)id * esz);
            f->touched[n++] = id;
        }
    }
    sort_ids(f->touched, n);
    size_t u = 0;
    for (size_t j = 0; j < n; j++)
        if (u == 0 || f->touched[j] != f->touched[u - 1]) f->touched[u++] = f->touched[j];
    return u;
}

/* Ask for the cache lines of [p, p + bytes). */
static void prefetch_bytes(const void *p, size_t bytes)
{
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch((const char *)p + o);
}

/* Request the lines of `row` that the next call's processors will read (the
 * touched ids' logits) and, on the way, the chain's own state. For a batch,
 * whose thread issues it for the row it samples next: in a batch the rows
 * come from DRAM, and the touched ids' loads would otherwise stall the call's
 * start one after another. Writes only f->touched, which the call refills,
 * so only the thread that samples c next may call it; no allocation (ids
 * beyond the buffer's room are not requested). */
void nextok__fused_prefetch(struct nextok_chain *c, const void *row, enum nextok_dtype dt)
{
    struct nextok__fused *f = c->fused;
    if (!f || !c->plan_valid || !f->fusable || f->has_allowed) return;
    const size_t esz = nextok_dtype_size(dt), nb = ((size_t)f->n_vocab + NEXTOK__BLK - 1) / NEXTOK__BLK;
    /* the workspace a row's call starts on: each a DRAM miss in a batch,
     * whose rows stream every other line out of the caches */
    prefetch_bytes(f, sizeof *f);
    prefetch_bytes(c->samplers, c->n * sizeof *c->samplers);
    for (size_t s = 0; s < c->n; s++) {
        prefetch_bytes(c->samplers[s], 64);
        prefetch_bytes(c->samplers[s]->ctx, 128);
    }
    prefetch_bytes(f->blkmax, nb * sizeof *f->blkmax);
    prefetch_bytes(f->cids, 256);
    prefetch_bytes(f->cvals, 256);
    prefetch_bytes(f->ov, f->ov_cap < 64 ? f->ov_cap * sizeof *f->ov : 64 * sizeof *f->ov);
    prefetch_bytes(c->work, 64 * sizeof *c->work);
    for (size_t s = 0; s < f->n_proc; s++) {
        size_t got = 0;
        if (!nextok__processor_touched(c->samplers[s], f->touched, f->touched_cap, &got)) continue;
        if (got > f->touched_cap) got = f->touched_cap;
        for (size_t j = 0; j < got; j++) {
            const int32_t id = f->touched[j];
            if (id >= 0 && id < f->n_vocab) __builtin_prefetch((const char *)row + (size_t)id * esz);
        }
    }
}

/* Gather the touched ids and run the processors on them. false: hand the row
 * to the plain chain (a processor failed, a touched value is not finite, or
 * memory ran out); the mask is then clean. */
static bool apply_overrides(struct nextok__fused *f, struct nextok_chain *c, const void *row,
                            enum nextok_dtype dt, size_t *n_touched)
{
    size_t n = collect_touched(f, c, row, dt);
    if (n == (size_t)-1) return false;
    *n_touched = n;
    if (!grow((void **)&f->ov, &f->ov_cap, n ? n : 1, sizeof *f->ov)) return false;
    /* the touched ids ascend: ov is gathered in id order */
    for (size_t j = 0; j < n; j++) {
        float x = nextok__row_get(row, dt, (size_t)f->touched[j]);
        if (!isfinite(x)) goto fail;
        f->ov[j] = (struct nextok_token_data){f->touched[j], x, 0.0f};
    }
    struct nextok_token_data_array a = {f->ov, n, -1, false};
    for (size_t s = 0; s < f->n_proc && a.size > 0; s++) {
        struct nextok_sampler *sp = c->samplers[s];
        if (nextok__sampler_kind(sp) == NEXTOK__K_ALLOWED) continue; /* not in whitelist mode */
        a.selected = -1;
        if (sp->iface->apply(sp, &a, c->step) != NEXTOK_OK) goto fail;
    }
    bool by_id = true; /* processors keep the order; sort only if one did not */
    for (size_t j = 1; j < a.size && by_id; j++) by_id = f->ov[j - 1].id < f->ov[j].id;
    if (!by_id) nextok__sort(f->ov, a.size, sizeof *f->ov, cmp_cand_id);
    f->n_ov = a.size;
    f->n_removed = n - a.size;
    return true;
fail:
    return false;
}

/* ---- the temperature map P and its inverse -------------------------------------- */


/* Smallest float x with P(x) >= th (-inf: every x; +inf: none). P is monotone
 * non-decreasing, so {x : P(x) >= th} is [preimage, +inf). */
float preimage(float th, float t)
{
    if (isnan(th)) return INFINITY; /* no x has P(x) >= NaN */
    if (t == 1.0f || isinf(th)) return th;
    if (th <= -FLT_MAX) return -INFINITY;
    if (th > FLT_MAX) return INFINITY;
    double g = (double)th * (double)t;
    float x = g > FLT_MAX ? FLT_MAX : g < -FLT_MAX ? -FLT_MAX : (float)g;
    while (P(x, t) < th) {
        if (x == FLT_MAX) return INFINITY;
        x = nextafterf(x, INFINITY);
    }
    for (;;) {
        if (x == -FLT_MAX) return -INFINITY;
        float y = nextafterf(x, -INFINITY);
        if (P(y, t) < th) return x;
        x = y;
    }
}

/* Smallest float f with (double)f >= d. */
float float_ceil(double d)
{
    if (d > FLT_MAX) return INFINITY;
    if (d < -FLT_MAX) return -FLT_MAX;
    float f = (float)d;
    if ((double)f < d) f = nextafterf(f, INFINITY);
    while (f > -FLT_MAX && (double)nextafterf(f, -INFINITY) >= d) f = nextafterf(f, -INFINITY);
    return f;
}

/* ---- candidate collection ---------------------------------------------------------- */

/* drop_touched for a few compacted ids (top-k's): one merge of both sorted
 * lists without a branch on the data (each step moves past the smaller id,
 * or both when equal, and keeps ids[i] only when it is the smaller), in
 * place. In a batch each galloping search's compares mispredict. */
static size_t drop_merge(int32_t *ids, float *vals, size_t n, const int32_t *touched, size_t nt)
{
    size_t i = 0, t = 0, o = 0;
    while (i < n && t < nt) {
        const int32_t a = ids[i], b = touched[t];
        const float v = vals[i];
        ids[o] = a;
        vals[o] = v;
        o += a < b;
        i += a <= b;
        t += b <= a;
    }
    for (; i < n; i++, o++) {
        ids[o] = ids[i];
        vals[o] = vals[i];
    }
    return o;
}

/* Drop the ids listed in touched[0..nt) (ascending; they come from the
 * overrides) from ids/vals[0..n) (ascending). Few ids: drop_merge. Many
 * (flat rows compact thousands of candidates): per touched id, a galloping
 * search in the compacted ids and one block move of the run before it,
 * O(nt log n) compares and no per-candidate branch or mask lookup. Returns
 * the new count. */
size_t drop_touched(int32_t *ids, float *vals, size_t n, const int32_t *touched, size_t nt)
{
    if (n <= 4 * nt) return drop_merge(ids, vals, n, touched, nt);
    size_t j = 0, i = 0;
    for (size_t t = 0; t < nt && i < n; t++) {
        const int32_t id = touched[t];
        if (ids[n - 1] < id) break;
        size_t lo = i, step = 1;
        while (lo + step < n && ids[lo + step] < id) {
            lo += step;
            step *= 2;
        }
        size_t hi = lo + step < n ? lo + step : n; /* ids[hi] >= id or hi == n */
        if (ids[lo] >= id) hi = lo;
        else
            while (hi - lo > 1) {
                const size_t mid = lo + (hi - lo) / 2;
                if (ids[mid] < id) lo = mid;
                else hi = mid;
            }
        /* [i, hi) < id; hi == n or ids[hi] >= id */
        if (hi == n || ids[hi] != id) continue;
        if (j != i) {
            memmove(ids + j, ids + i, (hi - i) * sizeof *ids);
            memmove(vals + j, vals + i, (hi - i) * sizeof *vals);
        }
        j += hi - i;
        i = hi + 1;
    }
    if (j != i) {
        memmove(ids + j, ids + i, (n - i) * sizeof *ids);
        memmove(vals + j, vals + i, (n - i) * sizeof *vals);
    }
    return j + (n - i);
}

/* Compact raw >= tau, drop touched ids (they come from the overrides).
 * false: a non-finite value is in the row. */
static bool compact(struct run *r, float tau)
{
    struct nextok__fused *f = r->f;
    int nf = 0;
    /* with the block maxima of this row, only the blocks that reach tau */
    size_t n = r->nblk
                   ? r->k->compact_blocks(r->row, r->dt, r->V, tau, f->blkmax, f->cids, f->cvals, r->V, &nf)
                   : r->k->compact_ge(r->row, r->dt, r->V, tau, 0, f->cids, f->cvals, r->V, &nf);
    if (nf) return false;
    r->nc = drop_touched(f->cids, f->cvals, n, f->touched, r->n_touched);
    r->tau = tau;
    return true;
}

/* The r-th largest (1-based) of n floats, r <= n (quickselect, in place). */
float kth_largest(float *a, size_t n, size_t rank)
{
    size_t lo = 0, hi = n - 1, want = rank - 1;
    while (lo < hi) {
        float pv = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pv) i++;
            while (a[j] < pv) j--;
            if (i <= j) {
                float t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else break;
    }
    return a[want];
}

/*
 * A threshold with at least rank (1 <= rank <= n) of the n finite floats a
 * at or above it, at most 2^-12 of the keys' spread below the rank-th
 * largest (that value itself when the keys agree below those 12 bits): the
 * largest key K, built bit by bit from the highest bit in which the keys
 * differ, with at least rank keys >= K. Up to twelve counting passes over
 * the keys (key: scratch of n), vectorised by the compiler, cost no
 * mispredicted branch per element, where a quickselect's partition
 * mispredicts about every other compare; a slightly lower threshold only
 * keeps a few more candidates. The keys are fkey's with the top bit flipped,
 * as int32: signed compares and 32-bit counts are what SSE2 does in one
 * instruction each. Once exactly rank keys reach K, the passes stop: a
 * higher K keeps the same keys, so only elements below the rank-th largest
 * in their blocks could still be left out, and the caller's compaction
 * meets those few anyway.
 */
static float rank_threshold(const float *a, size_t n, size_t rank, int32_t *key)
{
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        key[i] = (int32_t)(fkey(a[i]) ^ 0x80000000u);
        lo = key[i] < lo ? key[i] : lo;
        hi = key[i] > hi ? key[i] : hi;
    }
    const uint32_t ulo = (uint32_t)lo ^ 0x80000000u, uhi = (uint32_t)hi ^ 0x80000000u;
    uint32_t k = uhi; /* as fkey */
    int bit = -1;
    if (ulo != uhi) { /* the bits above the highest differing one are hi's */
        bit = 31 - __builtin_clz(ulo ^ uhi);
        k = bit == 31 ? 0 : uhi & ~((UINT32_C(2) << bit) - 1);
    }
    for (int stop = bit - 12; bit >= 0 && bit > stop; bit--) {
        const uint32_t t = k | UINT32_C(1) << bit;
        const int32_t st = (int32_t)(t ^ 0x80000000u);
        uint32_t c = 0;
        for (size_t i = 0; i < n; i++) c += key[i] >= st;
        if (c < rank) continue;
        k = t;
        if (c == rank) break;
    }
    const uint32_t u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Ask for the lines guess_tau reads all at once: a row not in cache then
 * costs about one memory latency, not sixteen in a row. */
static void prefetch_sample(const void *row, enum nextok_dtype dt, size_t V)
{
    const size_t runs = SAMPLE_N / 32, gap = V / runs, esz = nextok_dtype_size(dt);
    for (size_t b = 0; b < runs; b++)
        for (size_t o = 0; o < 32 * esz; o += 64) __builtin_prefetch((const char *)row + b * gap * esz + o);
}

/* The row's strided sample into f->sample (V > SAMPLE_N): 16 runs of 32
 * contiguous elements spread over the row, a few cache lines each, so a row
 * that is not in cache costs 16 misses, not 512; widened by the SIMD kernel
 * (exact values: the same sample as element-wise nextok__row_get, without a
 * conversion call per element). */
static float *load_sample(const struct run *r)
{
    const size_t runs = SAMPLE_N / 32, gap = r->V / runs;
    prefetch_sample(r->row, r->dt, r->V);
    float *const sm = r->f->sample;
    for (size_t b = 0; b < runs; b++) {
        if (r->dt == NEXTOK_DTYPE_F32) memcpy(sm + 32 * b, (const float *)r->row + b * gap, 32 * sizeof *sm);
        else r->k->widen((const uint16_t *)r->row + b * gap, r->dt, 32, sm + 32 * b);
    }
    return sm;
}

/* A raw threshold expected to leave about 2 * need + 32 elements above it,
 * from a strided sample of the row (NaN skipped); -inf for small rows. */
static float guess_tau(struct run *r, size_t need, unsigned widen)
{
    if (r->V <= SAMPLE_N) return -INFINITY;
    /* the sample's NaNs are dropped below in order, without a branch */
    float *const sm = load_sample(r);
    /* the rank sought among ns sampled values is per * ns + 1 */
    const double per = (double)(2 * need + 32) / (double)r->V * (double)(1u << widen);
    if (per * SAMPLE_N < 1.0) {
        /* rank 1 (a few candidates of a large row, off the block route):
         * the largest non-NaN value, by the kernel; NaNs only lower the
         * count, so the rank stays 1 */
        int nf = 0;
        return r->k->max(sm, NEXTOK_DTYPE_F32, SAMPLE_N, &nf);
    }
    size_t ns = 0;
    for (size_t i = 0; i < SAMPLE_N; i++) {
        const float x = sm[i];
        sm[ns] = x;
        ns += !isnan(x);
    }
    double want = per * (double)ns + 1.0;
    if (ns == 0 || want >= (double)ns) return -INFINITY;
    const size_t rank = (size_t)want;
    if (rank <= 8) {
        /* a small rank (the usual case: top-k 40 of a large row): the rank
         * largest by one scan with a sorted top list, cheaper than a
         * quickselect over the whole sample; the same value */
        float top[8];
        size_t nt = 0;
        for (size_t i = 0; i < ns; i++) {
            const float x = r->f->sample[i];
            if (nt == rank && !(x > top[rank - 1])) continue;
            size_t p = nt < rank ? nt++ : rank - 1;
            while (p > 0 && top[p - 1] < x) {
                top[p] = top[p - 1];
                p--;
            }
            top[p] = x;
        }
        return top[rank - 1];
    }
    return kth_largest(r->f->sample, ns, rank);
}

/*
 * The block route of collect_top, for a few candidates of a large row: the
 * maximum of every block of NEXTOK__BLK ids (one branch-free pass, which
 * also finds a non-finite row), then a tau with at least need block maxima
 * >= tau (rank_threshold: the need-th largest or a little below). Those
 * maxima are distinct elements, so the need-th largest element is >= tau
 * and {x >= tau} is a valid compacted set; it is read from the blocks whose
 * maximum reaches tau only (about need of them), and it holds about need
 * elements, not the hundreds a sampled guess keeps.
 * On a row the branch predictors have not seen, each of those costs a
 * mispredicted branch or two (nextok bench --rows). Returns 1 with the set
 * complete, 0 when touched ids among those maxima leave fewer than need
 * untouched (the caller goes on with a guess; the maxima stay, so its
 * compactions skip blocks), -1 to hand the row over (not finite).
 */
static int collect_by_blocks(struct run *r, size_t need)
{
    struct nextok__fused *f = r->f;
    int nf = 0;
    const size_t nb = r->k->block_max(r->row, r->dt, r->V, f->blkmax, &nf);
    if (nf) return -1;
    r->nblk = nb;
    if (!compact(r, rank_threshold(f->blkmax, nb, need, f->cids))) return -1;
    return r->nc >= need;
}

/* Compacted set holding at least `need` untouched elements (or all of them):
 * every untouched element outside it is <= each of those in raw value. */
static bool collect_top(struct run *r, size_t need)
{
    const size_t untouched = r->V - (r->f->n_ov + r->f->n_removed);
    if (need > untouched) need = untouched;
    /* a few candidates from many blocks (top-k 40 or a maximum of a
     * 128256-id row: 251 blocks) */
    if (need > 0 && r->V >= 8 * NEXTOK__BLK && need <= r->V / NEXTOK__BLK / 4) {
        const int got = collect_by_blocks(r, need);
        if (got != 0) return got > 0;
    }
    for (unsigned w = 0;; w += 3) {
        float tau = guess_tau(r, need, w);
        if (!compact(r, tau)) return false;
        if (r->nc >= need || tau == -INFINITY) return true;
    }
}

/* Largest processed value over the compacted set and the overrides: P of
 * the largest pre-temperature value, as P is monotone (one division). */
static float processed_max(const struct run *r)
{
    /* the compacted values are finite; the kernel's independent lanes, not
     * one chain of compares (a low threshold guess keeps a thousand) */
    int nf = 0;
    float m = r->nc ? r->k->max(r->f->cvals, NEXTOK_DTYPE_F32, r->nc, &nf) : -INFINITY;
    for (size_t i = 0; i < r->f->n_ov; i++) m = r->f->ov[i].logit > m ? r->f->ov[i].logit : m;
    return P(m, r->t);
}

/* ---- building c->work ---------------------------------------------------------------- */

/* Candidates with processed value >= th (double compare) from the compacted
 * set and the overrides, merged in id order into c->work. Returns the count. */
static size_t emit_ge(struct nextok_chain *c, const struct run *r, double th)
{
    const struct nextok__fused *f = r->f;
    struct nextok_token_data *w = c->work;
    /* for a float v: (double)v >= th iff v >= float_ceil(th). The compacted
     * set's survivors by the SIMD kernel (same P, same test), in id order */
    const float thf = float_ceil(th);
    const size_t n = r->k->cands_ge(f->cids, f->cvals, r->nc, r->t, thf, w);
    size_t m = 0; /* the overrides' survivors, merged in from the back */
    for (size_t j = 0; j < f->n_ov; j++) m += P(f->ov[j].logit, r->t) >= thf;
    size_t a = n, k = n + m;
    for (size_t j = f->n_ov; j-- > 0 && k > a;) {
        const float v = P(f->ov[j].logit, r->t);
        if (!(v >= thf)) continue;
        while (a > 0 && w[a - 1].id > f->ov[j].id) w[--k] = w[--a];
        w[--k] = (struct nextok_token_data){f->ov[j].id, v, 0.0f};
    }
    return n + m;
}

int cmp_sorted(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    if (a->logit != b->logit) return a->logit > b->logit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* a[0..n) in cmp_sorted's order (processed value descending, -0 equal to
 * +0, then id ascending). A few (top-k's 40): 64-bit keys (the value's
 * order key inverted, then the id) sorted by insertion with their indices,
 * then the records permuted; no comparator call per compare and no
 * 12-byte moves. More: nextok__sort. */
#define SORT_FEW 64
void sort_sorted(struct nextok_token_data *a, size_t n)
{
    if (n > SORT_FEW) {
        nextok__sort(a, n, sizeof *a, cmp_sorted);
        return;
    }
    uint64_t k[SORT_FEW];
    uint8_t at[SORT_FEW];
    for (size_t i = 0; i < n; i++) {
        const uint64_t key = (uint64_t)~vkey(a[i].logit) << 32 | (uint32_t)a[i].id;
        size_t j = i;
        for (; j > 0 && k[j - 1] > key; j--) {
            k[j] = k[j - 1];
            at[j] = at[j - 1];
        }
        k[j] = key;
        at[j] = (uint8_t)i;
    }
    struct nextok_token_data t[SORT_FEW];
    memcpy(t, a, n * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = t[at[i]];
}

/* emit_top's selection set in f->sel: the compacted values and the
 * overrides' logits (raw), those below r->tau left out when floored. */
static void sel_fill(const struct run *r, bool floored)
{
    const struct nextok__fused *f = r->f;
    memcpy(f->sel, f->cvals, r->nc * sizeof *f->sel);
    size_t m = r->nc;
    for (size_t j = 0; j < f->n_ov; j++) {
        f->sel[m] = f->ov[j].logit;
        m += !floored || f->ov[j].logit >= r->tau;
    }
}

/*
 * c->work = the first `need` candidates (of the compacted set and the
 * overrides) in sorted order, followed by every candidate tied with the
 * need-th processed value, and possibly a few more; returns the count.
 * Exact: P is monotone, so the need-th largest processed value is L = P(the
 * need-th largest pre-temperature value) (quickselect on a copy), and
 * emit_ge keeps {P(x) >= L}; a candidate outside it comes after all of them
 * in sorted order, so the sorted prefix of the kept set is the sorted prefix
 * of the whole set, ties with L included. Only ~need candidates get written
 * and sorted.
 */
static size_t emit_top(struct nextok_chain *c, const struct run *r, size_t need)
{
    const struct nextok__fused *f = r->f;
    /* With at least `need` compacted values (every one >= r->tau, raw), the
     * need-th largest candidate is >= r->tau too: an override below r->tau
     * is not among the top need, so it is left out of the selection, and
     * P(r->tau) is a floor for emit_ge. On flat rows the 64 penalised ids of
     * a history, which lie far below, then no longer more than double the
     * selected set (flat V 128256 top-k chain with penalties, one row, 9.64
     * -> 9.23 us/row, nine processes each). collect_top leaves at least
     * `need` compacted values; the test keeps this function exact without
     * it. */
    const bool floored = r->nc >= need;
    size_t m = r->nc;
    for (size_t j = 0; j < f->n_ov; j++) m += !floored || f->ov[j].logit >= r->tau;
    double th = floored ? (double)P(r->tau, r->t) : -INFINITY; /* processed */
    if (need < m && m > 2 * need + 16) {
        sel_fill(r, floored);
        size_t ms = m;
        const size_t want = 2 * need + 16;
        if (m >= 8 * want && m / 4 <= SAMPLE_N) {
            /* many candidates (flat rows): a quarter-sample's order statistic
             * expected to leave ~want above it; keep only those >= it (one
             * branch-free pass) and select among them. Exact when at least
             * `need` remain (the need-th largest is then >= the cut);
             * otherwise the whole set, as before. */
            const size_t ns = m / 4;
            for (size_t i = 0; i < ns; i++) f->sample[i] = f->sel[4 * i];
            const size_t rk = want / 4 > 0 ? want / 4 : 1;
            const float cut = kth_largest(f->sample, ns, rk);
            size_t n2 = 0;
            for (size_t i = 0; i < m; i++) {
                const float x = f->sel[i];
                f->sel[n2] = x;
                n2 += x >= cut;
            }
            if (n2 >= need) ms = n2;
            else sel_fill(r, floored);
        }
        th = P(kth_largest(f->sel, ms, need), r->t);
    }
    const size_t n = emit_ge(c, r, th);
    sort_sorted(c->work, n);
    return n;
}

void set_last(struct nextok_chain *c, size_t n, bool sorted)
{
    if (sorted) sort_sorted(c->work, n);
    c->last = (struct nextok_token_data_array){c->work, n, -1, sorted};
}

/* ---- the first filter, exactly ---------------------------------------------------------- */

/* Top k in sorted order (plus every candidate tied with the k-th when keep).
 * Exactness: the compacted set holds >= k untouched elements, so the k-th
 * largest processed value L over it is the global one (anything outside is
 * <= all of them); then everything with P >= L is collected again from
 * preimage(L), so ties created by the temperature's rounding are all seen. */
static bool top_k_finish(struct nextok_chain *c, struct run *r, size_t n, size_t k, bool keep)
{
    const float L = c->work[k - 1].logit;
    const float tau = preimage(L, r->t);
    if (tau < r->tau) {
        if (!compact(r, tau)) return false;
        n = emit_top(c, r, k);
    }
    size_t keep_n = k;
    if (keep)
        while (keep_n < n && c->work[keep_n].logit == L) keep_n++;
    c->last = (struct nextok_token_data_array){c->work, keep_n, -1, true};
    return true;
}

bool fuse_top_k(struct nextok_chain *c, struct run *r, size_t k, bool keep)
{
    if (!collect_top(r, k)) return false;
    const size_t n = emit_top(c, r, k);
    return top_k_finish(c, r, n, k, keep);
}

/* The top candidate (temperature <= 0 keeps its logit; greedy sets p = 1). */
static bool fuse_top1(struct nextok_chain *c, struct run *r, bool greedy)
{
    if (!fuse_top_k(c, r, 1, false)) return false;
    if (greedy) {
        c->work[0].p = 1.0f;
        c->last.selected = 0;
    }
    return true;
}

/* min-p draws densely when more than 1 in MINP_DENSE_DIV sampled elements
 * survive (ns >= 9 of 512), on rows of at least MINP_DENSE_V: from about
 * there on (where the sparse route's compaction, once more than 1 in 64
 * survive, stores every vector) the dense pass, whose cost does not depend
 * on the density, costs less. Side by side, read passes, sparse / dense,
 * flat V 128256 rows at T = 1: 1.1 % surviving 2.68 / 4.28, 1.8 % 4.55 /
 * 4.03, 3.4 % 6.83 / 4.48 (seven processes each; over eight rows 2.96 /
 * 4.08 and 5.64 / 4.63); at p = 0.05, T = 0.8, 4.2 %: 6.5 / 4.9. Flat V
 * 256000 rows at T = 0.8, where the dense pass's row and weights no longer
 * fit in L2: 1.3 % 3.15 / 4.70 (over eight rows 7.27 / 5.29), 3.4 % 5.78 /
 * 4.70, 6.7 % 8.0 / 4.72. */
#define MINP_DENSE_DIV 64
#define MINP_DENSE_V 4096

/* Sampled elements (load_sample, as guess_tau reads them) with raw x >=
 * tau: min-p's survivors among 512 (V > SAMPLE_N). */
static size_t sample_count_ge(const struct run *r, float tau)
{
    const float *sm = load_sample(r);
    size_t n = 0;
    for (size_t i = 0; i < SAMPLE_N; i++) n += sm[i] >= tau;
    return n;
}

/*
 * min-p directly before dist on a row where many survive (flat rows: 4 % of
 * a 128k row at p = 0.05, about 2.7 in every 64-id block): the survivors'
 * weights as a dense set in one SIMD pass (weights_ge: 0 below the cut), the
 * touched ids patched, the canonical walk (cut_draw). The same set, the same
 * sums and the same token as the chain's dist over min-p's survivors (a
 * sparse set gives the dense row's sums). The sparse route compacts the
 * survivors and the draw sums them block by block, a few per block with a
 * mispredicted branch or two each: about twice this pass on such rows
 * (docs/performance.md). thf: the processed cut, tau: its raw preimage.
 */
static bool minp_dense_draw(struct nextok_chain *c, struct run *r, float thf, float tau, uint64_t seed)
{
    struct nextok__fused *f = r->f;
    if (!dense_reserve(f)) return false; /* nothing here tests ids against tmask */
    const float m = processed_max(r);
    /* the survivors' values lie in [thf, m], so unscaled weights are the
     * canonical ones times 2^N exactly when that range allows (dense_prepare) */
    const bool un = nextok__wref_unscaled_ok(thf, m);
    f->cref = nextok__wref_of(m);
    f->dref = un ? nextok__wref_unscaled : f->cref;
    f->dN = un ? f->cref.n : 0;
    f->dmax = m;
    r->fk->weights_ge(r->row, r->dt, r->V, r->t, &f->dref, tau, f->dw, f->dbs, f->dcum);
    cut_draw(c, r, thf, INT32_MAX, true, seed);
    return true;
}

/* min-p: keep (double)l >= max + ln p. For floats that is l >= float_ceil(thr),
 * and in raw space x >= preimage(float_ceil(thr)). Fewer than min_keep: the
 * top min_keep in sorted order (as min_p.c). dist_seed (not NULL when dist
 * follows and ends the chain): rows where more than 1 in 64 sampled
 * elements survive are drawn densely (*drawn). */
static bool fuse_min_p(struct nextok_chain *c, struct run *r, const struct nextok__p_min_p *p,
                       bool collected, const uint64_t *dist_seed, bool *drawn)
{
    *drawn = false;
    if (!collected && !collect_top(r, 1)) return false;
    const double thr = (double)processed_max(r) + log((double)p->p);
    const float thf = float_ceil(thr); /* for a float v: (double)v >= thr iff v >= thf */
    const float tau = preimage(thf, r->t);
    size_t mk = p->min_keep ? p->min_keep : 1;
    if (mk > r->n_set) mk = r->n_set;
    /* min_keep: the candidates' maximum always survives, which meets 1; a
     * larger one is met when the sampled survivors less the touched ids
     * (which may have been lowered or removed) reach it */
    if (dist_seed && r->V >= MINP_DENSE_V) {
        const size_t ns = sample_count_ge(r, tau);
        if (ns * MINP_DENSE_DIV > SAMPLE_N && (mk <= 1 || ns >= mk + r->n_touched)) {
            *drawn = true;
            return minp_dense_draw(c, r, thf, tau, *dist_seed);
        }
    }
    if (tau < r->tau && !compact(r, tau)) return false;
    /* the records in one SIMD pass (flat rows keep thousands: 4 % of a 128k
     * row at p = 0.05), the overrides merged in */
    const size_t n = emit_ge(c, r, thr);
    if (n < mk && n < r->n_set) return fuse_top_k(c, r, mk, false);
    set_last(c, n, false);
    return true;
}

/* Candidates (compacted set and overrides) with raw value >= th. */
static size_t count_raw_ge(const struct run *r, float th)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nc; i++) n += r->f->cvals[i] >= th;
    for (size_t j = 0; j < r->f->n_ov; j++) n += r->f->ov[j].logit >= th;
    return n;
}

/*
 * min-p directly followed by an effective top-k (the vllm order). The min-p
 * survivors {l >= thr} are a prefix of the sorted order; when the (k+1)-th
 * candidate is in it, min-p keeps more than k and top-k then keeps the global
 * top k (plus ties at the k-th value, which are >= thr too), in sorted order:
 * exactly fuse_top_k's result. Returns 1 when both stages were done; 0 when
 * min-p keeps <= k (the compacted set, which holds the maximum, is left for
 * fuse_min_p); 2 when the shortcut does not apply; -1 to hand the row back.
 */
static int fuse_min_p_top_k(struct nextok_chain *c, struct run *r, const struct nextok__p_min_p *mp,
                            const struct nextok_sampler *next)
{
    if (!next || nextok__sampler_kind(next) != NEXTOK__K_TOP_K) return 2;
    const struct nextok__p_top_k *q = nextok_sampler_ctx(next);
    if (q->k <= 0 || (size_t)q->k + 1 >= r->n_set || mp->min_keep > (size_t)q->k + 1) return 2;
    const size_t k = (size_t)q->k;
    if (!collect_top(r, k + 1)) return -1;
    const double thr = (double)processed_max(r) + log((double)mp->p);
    /* min-p keeps more than k iff at least k + 1 candidates have P >= thr,
     * i.e. raw x >= preimage(float_ceil(thr)) (as fuse_min_p). Counted over
     * the compacted set and the overrides first: when it holds fewer, every
     * element outside it is below all of its members (or it is the whole
     * set), so min-p keeps <= k; on peaked rows this is the usual case and
     * the selection and sort of emit_top would be thrown away. */
    if (count_raw_ge(r, preimage(float_ceil(thr), r->t)) < k + 1) return 0;
    const size_t n = emit_top(c, r, k + 1); /* work[k] is needed */
    if (!((double)c->work[k].logit >= thr)) return 0; /* min-p keeps <= k: general path */
    return top_k_finish(c, r, n, k, q->ties == NEXTOK_TIES_KEEP) ? 1 : -1;
}

/* The chain's σ exactly: two passes over the set in id order, as top_n_sigma.c. */
static double exact_sigma(const struct run *r)
{
    mark_touched(r);
    const struct nextok__fused *f = r->f;
    double mean = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        double acc = 0.0;
        size_t j = 0;
        for (size_t i = 0; i < r->V; i++) {
            float v;
            if (j < f->n_ov && f->ov[j].id == (int32_t)i) v = P(f->ov[j++].logit, r->t);
            else if (f->tmask[i]) continue;
            else v = P(nextok__row_get(r->row, r->dt, i), r->t);
            if (pass == 0) acc += v;
            else acc += ((double)v - mean) * ((double)v - mean);
        }
        if (pass == 0) mean = acc / (double)r->n_set;
        else return sqrt(acc / (double)r->n_set);
    }
    return 0.0;
}

/* A center for the σ sums: the mean of v = x / t over a strided sample of
 * the row (the 16 runs of 32 elements guess_tau reads; every element of a
 * short row), finite quotients only, as a float; 0 when there is none. Any
 * finite center is correct (sigma_bounds holds for every center); one near
 * the mean keeps Σ(v - c)² near n σ², which keeps the bound tight. */
static float sigma_center(const struct run *r)
{
    const size_t runs = r->V <= SAMPLE_N ? 1 : SAMPLE_N / 32;
    const size_t len = r->V <= SAMPLE_N ? r->V : 32, gap = r->V / runs;
    double acc = 0.0;
    size_t ns = 0;
    for (size_t b = 0; b < runs; b++)
        for (size_t i = b * gap; i < b * gap + len; i++) {
            const float v = nextok__row_get(r->row, r->dt, i) / r->t;
            if (!isfinite(v)) continue;
            acc += v;
            ns++;
        }
    const float c = ns ? (float)(acc / (double)ns) : 0.0f;
    return isfinite(c) ? c : 0.0f;
}

/*
 * Bounds lo <= σ_chain <= hi from ONE pass of centred sums.
 *
 * The set's values v_i (floats, exact in double; the chain's processed
 * logits), n = |set|, mean μ, σ² = Σ(v - μ)²/n. For any center c the identity
 *     σ² = Qe/n - (Se/n)²,   Se = Σ(v - c),  Qe = Σ(v - c)²
 * holds exactly. The kernel (sum_sq) returns the sums over the whole row;
 * the touched ids' row terms are subtracted and the overrides' terms added
 * in double (exact in real arithmetic: the set is the untouched ids plus
 * the overrides), N = V + touched + overrides terms in all. Each kernel term
 * d = fl32(v - c) is within 2^-24 |v - c|, its square is added by an fma into
 * a float partial of at most B = NEXTOK__SUMSQ_BLOCK terms (at most B - 1
 * more roundings of 2^-24 on it), the partials are widened exactly and
 * added in double with the correction terms (at most N + 8 roundings of u =
 * 2^-53, the double corrections' own roundings included). Hence
 *     |Q - Qe| <= K T + N 2^-149,  |S - Se| <= K Σ|v - c| <= K sqrt(N T),
 *     K = (B + 2) 2^-24 + (N + 8) u
 * (the N 2^-149: a float square or partial that underflows into the
 * subnormals is off by up to 2^-150 per rounding, not relatively; a sum or
 * difference that is subnormal is exact),
 * T = the sum of every term's square (computed; K < 2e-6, so T's own error
 * is inside the factor-2 margin below). With M = Q/n, s = S/n and var = M -
 * s² (a few more roundings of u):
 *     |var - σ²| <= E = (K T + N 2^-149)/n + e_s (2|s| + e_s) + 4u (M + s²),
 *     e_s = K sqrt(N T)/n + u|s|.
 * The chain (top_n_sigma.c) sums in double, in id order: its mean has
 * |mean_c - μ| <= e_m = (n + 2) u A with A = Σ|v|/n <= |c| + sqrt(Qe/n), and
 * var_c = Σ fl(v - mean_c)²/n = (σ² + (μ - mean_c)²)(1 ± (n + 4) u). So
 *     var_c in [(var - E)(1 - (n+4)u), (var + E + e_m²)(1 + (n+4)u)];
 * every error term is doubled below as margin, and the square roots get
 * (1 ± 8u). The float partials make σ known to about 1e-6 relative (about
 * n σ 1e-6 on the threshold): a candidate inside that interval is rare (for
 * n = 2 on a Gaussian 128k row about 2 %), and then fuse_sigma sums again
 * with every term in double (sum_sq_dbl: kf = 0, the underflow term 2^-1074
 * instead of 2^-149, the same argument), about 1e-13 relative; only a
 * candidate inside that interval too needs the exact σ. kf = the float
 * part of K ((B + 2) 2^-24, or 0), ua = the underflow unit. A center far from μ only widens E
 * (cancellation); a non-finite sum (a quotient, a difference or a partial
 * overflowed) returns false: exact σ.
 */
static bool sigma_bounds(const struct run *r, size_t n_touched, double c, double s_row, double q_row,
                         double kf, double ua, double *lo, double *hi)
{
    const struct nextok__fused *f = r->f;
    const double n = (double)r->n_set, u = 0x1p-53;
    double s = s_row, q = q_row, T = q_row;
    for (size_t j = 0; j < n_touched; j++) {
        const double d = (double)(nextok__row_get(r->row, r->dt, (size_t)f->touched[j]) / r->t) - c;
        s -= d;
        q -= d * d;
        T += d * d;
    }
    for (size_t j = 0; j < f->n_ov; j++) {
        const double d = (double)P(f->ov[j].logit, r->t) - c;
        s += d;
        q += d * d;
        T += d * d;
    }
    if (!isfinite(s) || !isfinite(q) || !isfinite(T)) return false;
    const double N = (double)(r->V + n_touched + f->n_ov);
    const double K = kf + (N + 8.0) * u;
    const double M = q / n, sm = s / n;
    const double es = K * sqrt(N * T) / n + u * fabs(sm);
    const double E = (K * T + N * ua) / n + es * (2.0 * fabs(sm) + es) + 4.0 * u * (M + sm * sm);
    const double A = fabs(c) + sqrt((M > 0.0 ? M : 0.0) + (K * T + N * ua) / n);
    const double em = (n + 2.0) * u * A;
    const double var = M - sm * sm, g = 2.0 * (n + 4.0) * u;
    const double vlo = (var - 2.0 * E) * (1.0 - g);
    const double vhi = (var + 2.0 * E + 4.0 * em * em) * (1.0 + g) + 1e-300;
    if (!isfinite(vhi)) return false;
    *lo = sqrt(vlo > 0.0 ? vlo : 0.0) * (1.0 - 8.0 * u);
    *hi = sqrt(vhi) * (1.0 + 8.0 * u);
    return true;
}

/* The chain computes thr = fl(m - fl(n σ_c)) in double: within 2^-50 of
 * (|m| + n σ) of the real value for any σ_c in [lo, hi]. */
static void sigma_threshold(double nsig, float m, double slo, double shi, double *tlo, double *thi)
{
    const double ulp = (fabs((double)m) + nsig * shi) * 0x1p-50;
    *tlo = (double)m - nsig * shi - ulp;
    *thi = (double)m - nsig * slo + ulp;
}

/* top-n-sigma: keep (double)l >= max - n σ (stable filter). One row pass
 * gives the row's maximum and the centred sums (sigma_bounds); the chain's
 * threshold is then known within [tlo, thi], and the decision is the chain's
 * whenever no candidate value lies in that interval (for floats: unless a
 * value v has tlo <= v < thi); one compaction at tlo collects the survivors.
 * Otherwise the interval is narrowed by a second pass in double, and if a
 * candidate is still inside it, σ is recomputed exactly as the chain does it
 * (exact_sigma). */
static bool fuse_sigma(struct nextok_chain *c, struct run *r, const struct nextok__p_sigma *p,
                       size_t n_touched)
{
    const struct nextok__fused *f = r->f;
    const float center = sigma_center(r);
    int nf = 0;
    double s_row = 0.0, q_row = 0.0;
    const float mx = r->fk->sum_sq(r->row, r->dt, r->V, r->t, center, &nf, &s_row, &q_row);
    if (nf) return false;
    /* the chain's m, as dense_max: P of the row maximum unless a touched id
     * holds it (its override may be lower, or it may be removed) */
    bool touched_max = false;
    for (size_t j = 0; j < n_touched && !touched_max; j++)
        touched_max = nextok__row_get(r->row, r->dt, (size_t)f->touched[j]) == mx;
    float m;
    r->nc = 0;
    r->tau = INFINITY; /* nothing compacted yet */
    if (touched_max) {
        if (!collect_top(r, 1)) return false;
        m = processed_max(r);
    } else {
        m = P(mx, r->t);
        for (size_t j = 0; j < f->n_ov; j++) m = fmaxf(m, P(f->ov[j].logit, r->t));
    }
    const double nsig = (double)p->n;
    double slo, shi;
    bool exact = !sigma_bounds(r, n_touched, (double)center, s_row, q_row,
                               (NEXTOK__SUMSQ_BLOCK + 2) * 0x1p-24, 0x1p-149, &slo, &shi);
    if (!exact) {
        double tlo, thi;
        sigma_threshold(nsig, m, slo, shi, &tlo, &thi);
        const float tlf = float_ceil(tlo); /* for a float v: (double)v >= tlo iff v >= tlf */
        const float tau = preimage(tlf, r->t);
        if (tau < r->tau && !compact(r, tau)) return false;
        size_t n = f->n_ov == 0 ? r->k->cands_ge(f->cids, f->cvals, r->nc, r->t, tlf, c->work)
                                : emit_ge(c, r, tlo);
        for (size_t i = 0; i < n && !exact; i++)
            exact = (double)c->work[i].logit < thi;
        if (exact) {
            /* a candidate in [tlo, thi): the sums again, every term in
             * double; both intervals hold the chain's threshold, so their
             * intersection does, and work holds every candidate >= tlo */
            double s2 = 0.0, q2 = 0.0, lo2, hi2;
            r->fk->sum_sq_dbl(r->row, r->dt, r->V, r->t, (double)center, &s2, &q2);
            if (sigma_bounds(r, n_touched, (double)center, s2, q2, 0.0, 0x1p-1074, &lo2, &hi2)) {
                double tlo2, thi2;
                sigma_threshold(nsig, m, lo2, hi2, &tlo2, &thi2);
                tlo = tlo2 > tlo ? tlo2 : tlo;
                thi = thi2 < thi ? thi2 : thi;
                size_t j = 0;
                exact = false;
                for (size_t i = 0; i < n; i++) {
                    const double v = (double)c->work[i].logit;
                    if (!(v >= tlo)) continue;
                    exact |= v < thi;
                    c->work[j++] = c->work[i];
                }
                n = j;
            }
        }
        if (!exact) {
            set_last(c, n, false);
            return true;
        }
    }
    const double thr = (double)m - nsig * exact_sigma(r);
    const float tau = preimage(float_ceil(thr), r->t);
    if (tau < r->tau && !compact(r, tau)) return false;
    set_last(c, emit_ge(c, r, thr), false);
    return true;
}

/* ---- a categorical draw over the whole (processed) vocabulary -------------------------- */

bool dense_reserve(struct nextok__fused *f)
{
    const size_t v = (size_t)f->n_vocab;
    if (!f->dw) f->dw = malloc(v * sizeof *f->dw);
    if (!f->dbs) f->dbs = malloc(((v + 63) / 64) * sizeof *f->dbs);
    if (!f->dcum) f->dcum = malloc(((v + 63) / 64) * sizeof *f->dcum);
    if (!f->dbmax) f->dbmax = malloc(((v + 63) / 64) * sizeof *f->dbmax);
    return f->dw && f->dbs && f->dcum && f->dbmax;
}

/* The chain's m, the largest processed candidate value, given hi = the
 * largest processed value of the row (P is monotone, so max P = P(max)):
 * hi and the overrides, unless a touched id holds the row's maximum (its
 * override may be lower, or it may be removed): then the collect-the-top
 * route. false: a non-finite value is in the row. */
static bool cand_max(struct run *r, float hi, float *m)
{
    const struct nextok__fused *f = r->f;
    bool touched_max = false;
    for (size_t j = 0; j < r->n_touched && !touched_max; j++)
        touched_max = P(nextok__row_get(r->row, r->dt, (size_t)f->touched[j]), r->t) == hi;
    if (touched_max) {
        if (!collect_top(r, 1)) return false;
        *m = processed_max(r);
        return true;
    }
    float v = hi;
    for (size_t j = 0; j < f->n_ov; j++) v = fmaxf(v, P(f->ov[j].logit, r->t));
    *m = v;
    return true;
}

/* The chain's m by one SIMD max pass. false: a non-finite value is in the row. */
static bool dense_max(struct run *r, float *m)
{
    int nf = 0;
    const float mx = r->k->max(r->row, r->dt, r->V, &nf);
    return !nf && cand_max(r, P(mx, r->t), m);
}

/* Processed value of id i (its override when touched; i must be a candidate). */
float dense_value(const struct nextok__fused *f, const void *row, enum nextok_dtype dt,
                         float t, size_t i)
{
    for (size_t j = 0; j < f->n_ov; j++)
        if (f->ov[j].id == (int32_t)i) return P(f->ov[j].logit, t);
    return P(nextok__row_get(row, dt, i), t);
}

/* Block sums of the blocks holding touched ids again, from f->dw (each block
 * once: the touched ids ascend). Returns the first such block (the number of
 * blocks when none). */
size_t resum_touched_blocks(const struct run *r)
{
    struct nextok__fused *f = r->f;
    const size_t V = r->V, nb = (V + 63) / 64;
    size_t first = nb, last = nb;
    for (size_t j = 0; j < r->n_touched; j++) {
        const size_t b = (size_t)f->touched[j] >> 6;
        if (b == last) continue;
        f->dbs[b] = nextok__wblock(f->dw + 64 * b, V - 64 * b < 64 ? V - 64 * b : 64);
        if (b < first) first = b;
        last = b;
    }
    return first;
}

/* Whether the overrides' values keep the unscaled pass exact (their weights
 * are computed with the same reference): [lo, hi] widened by them. */
static bool ov_unscaled_ok(const struct run *r, float lo, float hi)
{
    const struct nextok__fused *f = r->f;
    for (size_t j = 0; j < f->n_ov; j++) {
        const float v = P(f->ov[j].logit, r->t);
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
    }
    return nextok__wref_unscaled_ok(lo, hi);
}

/*
 * The canonical weights of every candidate into f->dw, up to the exact factor
 * 2^dN, with block sums, running sums and f->dz = Z (times 2^dN).
 * One SIMD pass computes them unscaled (nextok__wref_unscaled) and reports
 * the row's smallest and largest processed values; when those (and the
 * overrides') lie where unscaled weights are the canonical ones times 2^N
 * exactly (nextok__wref_unscaled_ok: the usual case), that pass is the
 * result and the maximum only fixes N. Otherwise the exact maximum and a
 * second pass with the canonical reference. patch: the touched ids get their
 * override's weight (0 when removed) and their blocks are summed again (top-p
 * patches by itself). bmax: fill f->dbmax (for dense_compact). false: a
 * non-finite value is in the row.
 */
bool dense_prepare(struct run *r, bool patch, bool bmax)
{
    struct nextok__fused *f = r->f;
    mark_touched(r); /* the dense paths test ids against the mask */
    const size_t V = r->V, nb = (V + 63) / 64;
    if (!dense_reserve(f)) return false;
    float lo, hi, m;
    r->fk->weights(r->row, r->dt, V, r->t, &nextok__wref_unscaled, f->dw, f->dbs, f->dcum, bmax ? f->dbmax : NULL, &lo, &hi);
    if (nextok__wref_unscaled_ok(lo, hi) && ov_unscaled_ok(r, lo, hi)) {
        if (!isfinite(f->dcum[nb - 1])) return false; /* in range, so a NaN */
        if (!cand_max(r, hi, &m)) return false;
        f->cref = nextok__wref_of(m);
        f->dref = nextok__wref_unscaled;
        f->dN = f->cref.n;
    } else {
        if (!dense_max(r, &m)) return false;
        f->cref = f->dref = nextok__wref_of(m);
        f->dN = 0;
        r->fk->weights(r->row, r->dt, V, r->t, &f->dref, f->dw, f->dbs, f->dcum, bmax ? f->dbmax : NULL, &lo, &hi);
    }
    f->dz = f->dcum[nb - 1];
    f->dmax = m;
    f->d_n = V;
    if (!patch) return true;
    for (size_t j = 0; j < r->n_touched; j++) f->dw[f->touched[j]] = 0.0f;
    for (size_t j = 0; j < f->n_ov; j++) f->dw[f->ov[j].id] = nextok__expw(P(f->ov[j].logit, r->t), &f->dref);
    const size_t dirty = resum_touched_blocks(r);
    if (dirty < nb) f->dz = nextok__wset_cum(f->dbs, dirty, nb, f->dcum);
    return true;
}

/* The next run of consecutive 256-id groups, from group *g on, whose largest
 * processed row value (f->dbmax, from dense_prepare) reaches v: ids [*lo,
 * *hi). false when none is left. Every row element with P(x) >= v lies in
 * such a run (P is monotone). */
bool active_run(const struct run *r, float v, size_t *g, size_t *lo, size_t *hi)
{
    const float *bm = r->f->dbmax;
    const size_t G = NEXTOK__BMAX_IDS, ng = (r->V + G - 1) / G;
    while (*g < ng && !(bm[*g] >= v)) (*g)++;
    if (*g == ng) return false;
    size_t e = *g;
    while (e < ng && bm[e] >= v) e++;
    *lo = *g * G;
    *hi = e * G < r->V ? e * G : r->V;
    *g = e;
    return true;
}

/* compact() for a threshold thr on processed values after dense_prepare:
 * only the 256-id groups whose maximum (f->dbmax) reaches it are scanned, so
 * a high threshold costs a few groups instead of a pass over the row. Same
 * result: the untouched x with P(x) >= float_ceil(thr), in id order. */
void dense_compact(struct run *r, double thr)
{
    struct nextok__fused *f = r->f;
    const float th = float_ceil(thr), tau = preimage(th, r->t);
    const size_t esz = nextok_dtype_size(r->dt);
    size_t n = 0, g = 0, lo, hi;
    while (active_run(r, th, &g, &lo, &hi)) {
        int nf = 0; /* the row is finite (dense_prepare) */
        n += r->k->compact_ge((const char *)r->row + lo * esz, r->dt, hi - lo, tau, (int32_t)lo,
                              f->cids + n, f->cvals + n, hi - lo, &nf);
    }
    r->nc = drop_touched(f->cids, f->cvals, n, f->touched, r->n_touched);
    r->tau = tau;
}

/*
 * Mirostat v2 (mirostat.c): keep (double)l >= m + ln Z - μ ln 2 with the
 * canonical Z, which one SIMD weights pass gives (dense_prepare); the kept
 * set {l >= thr} is then one threshold compaction (raw preimage of the float
 * ceiling of thr), in id order as the chain leaves it; none kept: the top
 * candidate. Mirostat's own draw runs on it (and remembers it for accept).
 */
static bool fuse_miro2(struct nextok_chain *c, struct run *r, struct nextok_sampler *s)
{
    struct nextok__fused *f = r->f;
    if (!dense_prepare(r, true, true)) return false;
    const double thr = nextok__miro2_threshold(&f->cref, ldexp(f->dz, -f->dN),
                                               ((const struct nextok__p_mirostat *)nextok_sampler_ctx(s))->mu);
    dense_compact(r, thr);
    const size_t n = emit_ge(c, r, thr);
    if (n == 0) { /* the top candidate: the maximum's ids, the lowest first */
        dense_compact(r, (double)f->dmax);
        if (!top_k_finish(c, r, emit_top(c, r, 1), 1, false)) return false;
    } else {
        set_last(c, n, false);
    }
    c->last.selected = -1;
    return nextok__mirostat_draw(s, &c->last, c->step) == NEXTOK_OK;
}

/*
 * dist over every candidate (processors, at most a temperature before it).
 * The chain computes w = expw(l, wref_of(m)) for its candidates in id order, their
 * 64-id block sums, Z and the walk (weights.c). Here the same weights come
 * from one SIMD pass over the row (kernels' weights: bit-identical to
 * nextok__expw and nextok__wblock), with non-candidates at weight 0, which
 * changes no sum; the touched ids get their override's weight (or 0 when a
 * processor removed them) and their blocks are summed again. Same Z, same
 * walk, same token, same p. The distribution stays dense in f->dw (c->last
 * holds just the token) until probs asks for it (nextok__fused_materialize).
 */
/* The canonical walk over the dense set f->dw / f->dcum / f->dz (the caller
 * has set its cut: d_cut, d_typ and their values); c->last holds just the
 * token, and the set stays dense for probs (nextok__fused_materialize). */
void dense_draw(struct nextok_chain *c, const struct run *r, uint64_t seed)
{
    struct nextok__fused *f = r->f;
    f->dt = r->t;
    f->d_touched = r->n_touched;
    const struct nextok__wset set = {f->dw, f->d_n, f->dcum, NULL, (f->d_n + 63) / 64, f->dz, f->dbs};
    const size_t id = nextok__wset_draw(&set, nextok_rng_uniform(seed, c->step, NEXTOK_RNG_DIST, 0));
    c->work[0] = (struct nextok_token_data){(int32_t)id, dense_value(f, r->row, r->dt, r->t, id),
                                            (float)((double)f->dw[id] / f->dz)};
    c->last = (struct nextok_token_data_array){c->work, 1, 0, false};
    c->last_dense = true;
}

static bool fuse_dist(struct nextok_chain *c, struct run *r, uint64_t seed)
{
    struct nextok__fused *f = r->f;
    if (!dense_prepare(r, true, false)) return false;
    f->d_cut = false;
    f->d_typ = false;
    dense_draw(c, r, seed);
    return true;
}

/*
 * The end of a dense draw after a cut (top-p's, min-p's), the cut's weights
 * and block sums in f->dw / f->dbs: the touched ids at 0, or at their
 * override's weight when it survives (keep v > L, or v == L and id <= cut),
 * their blocks summed again, Z, the set ended at its last block with a
 * survivor (a walk that rounds past the end picks a survivor), and the
 * canonical walk. all_written: every block of dw was written, with its
 * running sums in f->dcum; else only the 256-id groups whose maximum
 * (f->dbmax) reaches L were, and no running sums (tp_dense_draw).
 */
void cut_draw(struct nextok_chain *c, const struct run *r, float L, int32_t cut, bool all_written,
              uint64_t seed)
{
    struct nextok__fused *f = r->f;
    const size_t V = r->V, nb = (V + 63) / 64;
    for (size_t j = 0; j < r->n_touched; j++) {
        const size_t id = (size_t)f->touched[j];
        if (!all_written && !(f->dbmax[id / NEXTOK__BMAX_IDS] >= L)) { /* an unwritten block */
            const size_t b0 = id & ~(size_t)63;
            memset(f->dw + b0, 0, (V - b0 < 64 ? V - b0 : 64) * sizeof *f->dw);
        }
        f->dw[id] = 0.0f;
    }
    for (size_t j = 0; j < f->n_ov; j++) {
        const float x = P(f->ov[j].logit, r->t);
        if (tp_keep(x, f->ov[j].id, L, cut)) f->dw[f->ov[j].id] = nextok__expw(x, &f->dref);
    }
    /* the running sums: from the first re-summed block when the pass gave them */
    const size_t dirty = resum_touched_blocks(r);
    f->dz = nextok__wset_cum(f->dbs, all_written ? dirty : 0, nb, f->dcum);
    size_t last = nb;
    while (last > 0 && !(f->dbs[last - 1] > 0.0)) last--;
    f->d_n = last * 64 < V ? last * 64 : V;
    f->d_cut = true;
    f->d_typ = false;
    f->d_cut_v = L;
    f->d_cut_id = cut;
    dense_draw(c, r, seed);
}

/* ---- the tail: ordinary stages ---------------------------------------------------------- */

static nextok_status run_tail(struct nextok_chain *c, size_t from)
{
    struct nextok_token_data_array *cur = &c->last;
    for (size_t i = from; i < c->n; i++) {
        struct nextok_sampler *s = c->samplers[i];
        cur->selected = -1;
        nextok_status rc = s->iface->apply(s, cur, c->step);
        if (rc != NEXTOK_OK)
            return nextok__chain_fail(c, rc, "%s: %s", nextok_sampler_name(s),
                                      s->errmsg[0] ? s->errmsg : nextok_strerror(rc));
        if (cur->size == 0)
            return nextok__chain_fail(c, NEXTOK_ERR_NO_CANDIDATES,
                                      "%s: no candidate left (every token masked)",
                                      nextok_sampler_name(s));
    }
    return NEXTOK_OK;
}

/* ---- driver ------------------------------------------------------------------------------ */

/* The seed of a dist that directly follows stage i and ends the chain (the
 * stages that can then draw densely); NULL otherwise. */
static const uint64_t *dist_seed_after(const struct nextok_chain *c, size_t i)
{
    const struct nextok_sampler *nx = i + 2 == c->n ? c->samplers[i + 1] : NULL;
    return nx && nextok__sampler_kind(nx) == NEXTOK__K_DIST
               ? &((const struct nextok__p_seed *)nextok_sampler_ctx(nx))->seed
               : NULL;
}

/* Run the prefix from stage i; returns the index the tail starts at, or
 * (size_t)-1 to hand the row back to the plain chain. */
static size_t run_prefix(struct nextok_chain *c, struct run *r, size_t i)
{
    bool have_t = false;
    for (; i < c->n; i++) {
        const struct nextok_sampler *s = c->samplers[i];
        const void *p = nextok_sampler_ctx(s);
        switch (nextok__sampler_kind(s)) {
        case NEXTOK__K_TEMP_EXT:
        case NEXTOK__K_TEMP: {
            /* temp_ext with range <= 0 is plain temperature (both start with t) */
            if (nextok__sampler_kind(s) == NEXTOK__K_TEMP_EXT &&
                ((const struct nextok__p_temp_ext *)p)->range > 0.0f)
                goto stop;
            float t = *(const float *)p;
            if (t <= 0.0f) return fuse_top1(c, r, false) ? i + 1 : (size_t)-1;
            if (have_t) goto stop;
            have_t = true;
            r->t = t;
            continue;
        }
        case NEXTOK__K_GREEDY:
            return fuse_top1(c, r, true) ? i + 1 : (size_t)-1;
        case NEXTOK__K_TOP_K: {
            const struct nextok__p_top_k *q = p;
            if (q->k <= 0 || (size_t)q->k >= r->n_set) continue;
            return fuse_top_k(c, r, (size_t)q->k, q->ties == NEXTOK_TIES_KEEP) ? i + 1 : (size_t)-1;
        }
        case NEXTOK__K_MIN_P: {
            const struct nextok__p_min_p *q = p;
            if (q->p <= 0.0f || r->n_set <= 1) continue;
            /* both: 1 done, 0 not applicable but the max is collected, -1 fail, 2 not tried */
            int both = fuse_min_p_top_k(c, r, q, i + 1 < c->n ? c->samplers[i + 1] : NULL);
            if (both < 0) return (size_t)-1;
            if (both == 1) return i + 2;
            bool drawn = false;
            if (!fuse_min_p(c, r, q, both == 0, dist_seed_after(c, i), &drawn)) return (size_t)-1;
            return drawn ? c->n : i + 1;
        }
        case NEXTOK__K_DIST:
            if (i + 1 != c->n) goto stop; /* a stage after the selector needs the array */
            return fuse_dist(c, r, ((const struct nextok__p_seed *)p)->seed) ? c->n : (size_t)-1;
        case NEXTOK__K_TOP_P: {
            const struct nextok__p_top_p *q = p;
            if (q->p >= 1.0f || r->n_set <= 1) continue;
            bool drawn = false;
            if (!fuse_top_p(c, r, q, dist_seed_after(c, i), &drawn)) return (size_t)-1;
            return drawn ? c->n : i + 1;
        }
        case NEXTOK__K_TYPICAL: {
            const struct nextok__p_typical *q = p;
            if (q->p >= 1.0f || r->n_set <= 1 || q->min_keep >= r->n_set) continue; /* no-op */
            bool drawn = false;
            if (!fuse_typical(c, r, q, dist_seed_after(c, i), &drawn)) return (size_t)-1;
            return drawn ? c->n : i + 1;
        }
        case NEXTOK__K_MIROSTAT_V2:
            return fuse_miro2(c, r, c->samplers[i]) ? i + 1 : (size_t)-1;
        case NEXTOK__K_TOP_N_SIGMA: {
            const struct nextok__p_sigma *q = p;
            if (q->n <= 0.0f || r->n_set <= 1) continue;
            return fuse_sigma(c, r, q, r->n_touched) ? i + 1 : (size_t)-1;
        }
        default:
            goto stop;
        }
    }
stop:
    /* nothing reduced the set: the plain chain loads the row as fast as
     * materialising it here would, so hand it back */
    return (size_t)-1;
}

/* Whitelist mode: the allowed ids are the candidate set; gather them (id
 * order, as the chain's stable filters leave them) and run every stage. */
static nextok_status run_allowed(struct nextok_chain *c, struct nextok__fused *f, const void *row,
                                 enum nextok_dtype dt, bool *handled)
{
    int nf = 0;
    (void)nextok__kernels()->max(row, dt, (size_t)c->params.n_vocab, &nf);
    if (nf) return NEXTOK_OK;
    const struct nextok_sampler *al = NULL;
    for (size_t s = 0; s < f->n_proc; s++)
        if (nextok__sampler_kind(c->samplers[s]) == NEXTOK__K_ALLOWED) al = c->samplers[s];
    size_t n = 0;
    const int32_t *ids = nextok__allowed_ids(al, &n);
    for (size_t j = 0; j < n; j++)
        c->work[j] = (struct nextok_token_data){ids[j], nextok__row_get(row, dt, (size_t)ids[j]), 0.0f};
    c->last = (struct nextok_token_data_array){c->work, n, -1, false};
    *handled = true;
    return run_tail(c, 0);
}

nextok_status nextok__fused_run(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype,
                                bool *handled)
{
    *handled = false;
    struct nextok__fused *f;
    if (plan_get(c, &f) != NEXTOK_OK || !f->fusable) return NEXTOK_OK;
    if (f->has_allowed) return run_allowed(c, f, logits, dtype, handled);
    size_t n_touched = 0;
    if (!apply_overrides(f, c, logits, dtype, &n_touched)) return NEXTOK_OK;
    struct run r = {f, nextok__kernels(), nextok__fused_kernels(), logits, dtype, (size_t)c->params.n_vocab,
                    0, 1.0f, 0, 0, n_touched, 0};
    r.n_set = r.V - f->n_removed;
    f->tmarked = false;
    size_t tail = r.n_set ? run_prefix(c, &r, f->n_proc) : (size_t)-1;
    if (f->tmarked) clear_mask(f, n_touched);
    f->tmarked = false;
    if (tail == (size_t)-1) return NEXTOK_OK;
    *handled = true;
    return run_tail(c, tail);
}
