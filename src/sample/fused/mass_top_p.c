/*
 * Fused top-p (docs/semantics.md): the candidates' masses q = floor(w 2^s) are
 * integers, so every sum of them is exact in any order and this path reaches
 * the chain's cut (top_p.c, a sorted walk) without sorting. Three routes,
 * cheapest first; each proves the chain's cut or hands over to the next
 * (top_p):
 *  - tp_heavy_cross: the few heavy candidates, sorted, with a bound on the
 *    total mass from Z instead of a pass (peaked rows);
 *  - tp_band_cross: one interval of an estimate (tp_window) in one SIMD pass
 *    (mass_band: the exact total, the masses above both ends, the interval's
 *    candidates), then the outer interval on the side the crossing lies;
 *  - the four thresholds of the estimate: one SIMD pass of masses
 *    (tp_masses), then the crossing interval's candidates (gather).
 * The gathered candidates are narrowed and refined by buckets over their
 * own key range (mass_cut.c) to one logit value L; its
 * candidates in id order complete the walk. The cut is "v > L, or v == L and
 * id <= cut" (keep-ties: every id of L). The SIMD passes skip the 256-id
 * groups whose maximum is below what they look for (active_run), which on
 * peaked rows is most of the row. Estimates only decide speed.
 */
#include "internal.h"

/* Smallest value whose key is >= k (-inf/+inf where k falls among NaN keys). */
static float tp_unkey(uint32_t k)
{
    const uint32_t u = (k & 0x80000000u) ? (k ^ 0x80000000u) : ~k;
    float v;
    memcpy(&v, &u, sizeof v);
    if (isnan(v)) return (k & 0x80000000u) ? INFINITY : -INFINITY;
    return v;
}

/* Buckets of the estimate (tp_window): 16 per factor 2 of weight (a
 * truncated 16 log2(e) (v - c); any non-decreasing function of v would do,
 * the thresholds are looked up back by tp_bucket_floor), so a bucket is a
 * narrow band of values. kbase puts the maximum in the second-highest
 * bucket; values far below it share bucket 0. */
static int32_t tp_k(const struct nextok__fused *f, float v)
{
    float x = (v - f->dist.cref.c) * NEXTOK__EXPW_LOG2E16;
    if (!(x >= -1e6f)) x = -1e6f; /* also NaN */
    if (x > 1e6f) x = 1e6f;
    return (int32_t)x;
}

static int32_t tp_kbase(const struct nextok__fused *f)
{
    return tp_k(f, f->dist.max) - (NEXTOK__FZ_HBINS - 2);
}

static inline uint32_t tp_bucket(const struct nextok__fused *f, int32_t kbase, float v)
{
    const int32_t b = tp_k(f, v) - kbase;
    return b < 0 ? 0 : b >= NEXTOK__FZ_HBINS ? NEXTOK__FZ_HBINS - 1 : (uint32_t)b;
}

static float tp_bucket_floor(const struct nextok__fused *f, int32_t kb, uint32_t B);

/* The processed value whose canonical weight is Z / 4096: at most about
 * 4096 candidates reach it (+inf when Z is 0 or inf: nothing is heavy). */
static double tp_heavy_value(const struct nextok__fused *f)
{
    const double vh = (double)f->dist.ref.c + (double)f->dist.ref.n * 0.6931471805599453 + log(f->dist.z / 4096.0);
    return vh == vh ? vh : INFINITY;
}

/* The value above which tp_window counts candidates exactly: weight >=
 * Z / 4096, or lower, down to the top quarter of the 256-id groups' maxima
 * (128 of them sampled), but not below weight Z / 16384 (so at most 16384
 * candidates). On peaked rows at V 256000 most of the mass lies in the
 * noise's upper tail, which 4096 sampled values see too little of: taken
 * exactly, it cuts the first interval's misses there from 16 to 12 of 46
 * rows (the first 64 rows of the bench's generator; 18 take the heavy
 * route). */
static double tp_window_heavy(struct nextok__fz_run *r)
{
    struct nextok__fused *f = r->f;
    const double vh = tp_heavy_value(f);
    const size_t ng = (r->V + NEXTOK__BMAX_IDS - 1) / NEXTOK__BMAX_IDS;
    if (ng < 64 || vh == INFINITY) return vh;
    float *gm = f->sample; /* NEXTOK__FZ_SAMPLE_N >= 128 floats of scratch */
    const size_t m = ng < 128 ? ng : 128;
    for (size_t g = 0; g < m; g++) gm[g] = f->dist.gmax[g * ng / m];
    const double q = (double)nextok__fz_kth_largest(gm, m, m / 4);
    const double lo = (double)f->dist.ref.c + (double)f->dist.ref.n * 0.6931471805599453 + log(f->dist.z / 16384.0);
    const double v = q > lo ? q : lo;
    return v < vh ? v : vh;
}

/* Four processed thresholds, descending, around the value where the mass
 * from the top crosses p, from an estimate of the mass above each bucket:
 * the heavy candidates (tp_window_heavy, found from the group maxima: on
 * peaked rows they hold most of the mass) exactly, the others by a sample
 * of 4096 scaled to the mass they leave. The thresholds are where the
 * estimate reaches p - 0.04, p - 0.014, p + 0.006 and p + 0.03 of Z. Only
 * speed depends on them: the masses above them are then summed exactly. */
static void tp_window(struct nextok__fz_run *r, float p, float th[4])
{
    struct nextok__fused *f = r->f;
    const int32_t kb = tp_kbase(f);
    /* heavy (exact) and light (sampled) weight per bucket; zero between
     * calls (mass_reserve clears them once, the end of this function clears
     * the buckets it used) */
    double *h = f->tpw, *hl = f->tpw + NEXTOK__FZ_HBINS;
    uint32_t bmin = NEXTOK__FZ_HBINS - 1, bmax = 0;
    const double z = f->dist.z;
    const double vh = tp_window_heavy(r);
    nextok__fz_dense_compact(r, vh);
    double heavy = 0.0;
    for (size_t i = 0; i < r->nc; i++) {
        const double w = (double)f->dist.w[f->cids[i]];
        const uint32_t b = tp_bucket(f, kb, fz_P(f->cvals[i], r->t));
        h[b] += w;
        heavy += w;
        bmin = b < bmin ? b : bmin;
        bmax = b > bmax ? b : bmax;
    }
    const float vhf = nextok__fz_float_ceil(vh);
    /* 128 runs of 32 consecutive ids spread over the row (a few cache lines
     * a run, where single ids at a stride would cost a line each); the
     * whole row when it is that short. 4096 values put the crossing of 64
     * of 64 flat rows inside the inner interval (2048: 57 of 64), and a miss
     * costs one more pass. Four partial sums: no chain of dependent
     * additions. */
    const size_t runs = r->V <= 4096 ? 1 : 128, len = r->V <= 4096 ? r->V : 32, gap = r->V / runs;
    double lt[4] = {0.0, 0.0, 0.0, 0.0};
    for (size_t k = 0; k < runs; k++)
        for (size_t i = 0; i < len; i++) {
            const size_t id = k * gap + i;
            const float v = fz_P(nextok__row_get(r->row, r->dt, id), r->t);
            if (v >= vhf) continue; /* counted exactly */
            const uint32_t b = tp_bucket(f, kb, v);
            hl[b] += (double)f->dist.w[id];
            lt[i & 3] += (double)f->dist.w[id];
            bmin = b < bmin ? b : bmin;
            bmax = b > bmax ? b : bmax;
        }
    const double light = (lt[0] + lt[1]) + (lt[2] + lt[3]);
    const double up = light > 0.0 && z > heavy ? (z - heavy) / light : 0.0;
    const double frac[4] = {p - 0.04, p - 0.014, p + 0.006, p + 0.03};
    double cum = 0.0;
    int j = 0;
    for (uint32_t b = bmax + 1; b-- > bmin && j < 4;) {
        cum += h[b] + hl[b] * up;
        while (j < 4 && cum >= frac[j] * z) th[j++] = tp_bucket_floor(f, kb, b);
    }
    while (j < 4) th[j++] = -INFINITY;
    if (bmin <= bmax) {
        memset(h + bmin, 0, (bmax - bmin + 1) * sizeof *h);
        memset(hl + bmin, 0, (bmax - bmin + 1) * sizeof *hl);
    }
}

/* Exact masses (and counts) above th[0..3] over the candidates: the SIMD
 * sums over the row, whose weights (dense_prepare patched them) are the
 * candidates' but classified by the row values; the touched ids then move
 * their term from the row value's place to the override's (integers: exact;
 * a removed id weighs 0 and only leaves its count). */
static void tp_masses(const struct nextok__fz_run *r, float scale, const float th[4], uint64_t q[5],
                      uint64_t cnt[5], bool counts)
{
    struct nextok__fused *f = r->f;
    float raw[4];
    for (int j = 0; j < 4; j++) raw[j] = nextok__fz_preimage(th[j], r->t);
    const uint64_t c1 = counts; /* without counts cnt stays 0 */
    memset(cnt, 0, 5 * sizeof *cnt);
    /* the group maxima of the row's processed values (dense_prepare): a
     * group below th[3] holds no x >= raw[3] (P is monotone), so the kernel
     * only adds its total */
    r->fk->mass_above(r->row, r->dt, r->V, f->dist.w, scale, raw, f->dist.gmax, th[3], q, counts ? cnt : NULL);
    for (size_t t = 0; t < r->n_touched; t++) {
        const size_t id = (size_t)f->ovr.touched[t];
        const float x = nextok__row_get(r->row, r->dt, id);
        const uint64_t m = nextok__mass_q(f->dist.w[id], scale);
        q[0] -= m, cnt[0] -= c1;
        for (int j = 0; j < 4; j++)
            if (x >= raw[j]) q[1 + j] -= m, cnt[1 + j] -= c1;
    }
    for (size_t t = 0; t < f->ovr.n_ov; t++) {
        const float v = fz_P(f->ovr.ov[t].logit, r->t);
        const uint64_t m = nextok__mass_q(f->dist.w[f->ovr.ov[t].id], scale);
        q[0] += m, cnt[0] += c1;
        for (int j = 0; j < 4; j++)
            if (v >= th[j]) q[1 + j] += m, cnt[1 + j] += c1;
    }
}

static int cmp_u64(const void *pa, const void *pb)
{
    const uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

#define TP_HEAVY_MAX 512 /* heavy candidates worth sorting for the shortcut */

/*
 * The crossing among the heavy candidates, without the mass pass. Q enters
 * the cut only through target = ceil(p Q), and Z bounds Q: with S the exact
 * sum of the weights (in dist.w's units), S 2^s - n < Q <= S 2^s (each floor
 * loses less than 1), and Z differs from S by the float lane sums' rounding
 * (3 roundings of a lane's 4 terms, 2^-22 relative) and the double sums'
 * (below 2^-28 for any vocabulary): |Z - S| < 2^-21 S. So target lies in
 * [t_lo, t_hi] from bounds with a margin of 2^-19. The heavy candidates
 * (weight >= Z / 4096: every candidate at or above a value, so they are the
 * head of the sorted order) are sorted and walked with exact masses; when the first prefix whose mass
 * reaches t_hi is also the first that reaches t_lo, every target in the
 * interval crosses at the same candidate, the chain's. On peaked rows (the
 * mass in a few high values) that is the usual case and the row needs no
 * pass beyond the weights; otherwise false, and the full path runs.
 * *L, *cut, *n_keep as top_p's walk leaves them.
 */
static bool tp_heavy_cross(struct nextok__fz_run *r, float p, float scale, bool keep_ties, float *L,
                           int32_t *cut, size_t *n_keep)
{
    struct nextok__fused *f = r->f;
    const double zs = f->dist.z * (double)scale; /* Z in mass units, < 2^62 */
    if (!(zs > 0.0 && zs < 0x1p62)) return false;
    const double vh = tp_heavy_value(f);
    nextok__fz_dense_compact(r, vh);
    const float vhf = nextok__fz_float_ceil(vh);
    size_t extra = 0;
    for (size_t j = 0; j < f->ovr.n_ov; j++) extra += fz_P(f->ovr.ov[j].logit, r->t) >= vhf;
    const size_t n = r->nc + extra;
    if (n == 0 || n > TP_HEAVY_MAX) return false;
    for (size_t i = 0; i < r->nc; i++) f->cvals[i] = fz_P(f->cvals[i], r->t);
    size_t i = r->nc, k = n; /* the overrides merged in id order, from the back */
    for (size_t j = f->ovr.n_ov; j-- > 0 && extra > 0;) {
        const float x = fz_P(f->ovr.ov[j].logit, r->t);
        if (!(x >= vhf)) continue;
        for (; i > 0 && f->cids[i - 1] > f->ovr.ov[j].id; k--, i--) {
            f->cids[k - 1] = f->cids[i - 1];
            f->cvals[k - 1] = f->cvals[i - 1];
        }
        k--;
        f->cids[k] = f->ovr.ov[j].id;
        f->cvals[k] = x;
        extra--;
    }
    /* sorted order: value descending, then id ascending (= index ascending) */
    for (size_t j = 0; j < n; j++) f->cq[j] = (uint64_t)~fz_vkey(f->cvals[j]) << 32 | j;
    nextok__sort(f->cq, n, sizeof *f->cq, cmp_u64);
    const double lo = zs * (1.0 - 0x1p-19) - (double)r->n_set - 1.0, hi = zs * (1.0 + 0x1p-19) + 1.0;
    const uint64_t t_lo = nextok__mass_target(p, lo > 0.0 ? (uint64_t)lo : 0);
    const uint64_t t_hi = nextok__mass_target(p, (uint64_t)hi);
    uint64_t above = 0;
    for (size_t j = 0; j < n; j++) {
        const size_t at = (uint32_t)f->cq[j];
        const uint64_t m = nextok__mass_q(f->dist.w[f->cids[at]], scale);
        if (above + m < t_hi) {
            above += m;
            continue;
        }
        if (above >= t_lo) return false; /* a target in the interval crosses earlier */
        *L = f->cvals[at];
        /* INT32_MAX when the cut keeps every id of L (as mass_finish) */
        const bool split = j + 1 < n && f->cvals[(uint32_t)f->cq[j + 1]] == *L;
        *cut = keep_ties || !split ? INT32_MAX : f->cids[at];
        size_t e = j + 1; /* keep-ties: every candidate of the value L */
        while (keep_ties && e < n && f->cvals[(uint32_t)f->cq[e]] == *L) e++;
        *n_keep = e;
        return true;
    }
    return false;
}

/* The smallest value v with tp_bucket(v) >= B (monotone: a search over the
 * order-preserving keys of the floats). */
static float tp_bucket_floor(const struct nextok__fused *f, int32_t kb, uint32_t B)
{
    uint32_t lo = 0, hi = 0xffffffffu; /* keys: the answer is in [lo, hi] */
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        const float v = tp_unkey(mid);
        if (tp_bucket(f, kb, v) >= B) hi = mid;
        else lo = mid + 1;
    }
    return tp_unkey(lo);
}

/* Survivors in sorted order into r->work (the chain's top-p output). */
static void tp_emit(struct nextok__fz_run *r, float L, int32_t cut)
{
    const size_t n = nextok__fz_emit_kept(r, &(struct nextok__fz_kept){.L = L, .id = cut}, true);
    nextok__fz_sort_many(r->f, r->work, n); /* emit_kept leaves them in id order */
    r->out = (struct nextok_token_data_array){r->work, n, -1, true};
}

/* dist right after the cut: the dense weights with every non-survivor at 0
 * (the chain's dist sees only survivors; zeros change no sum; the survivors'
 * maximum is m), their block sums and the canonical walk, as fuse_dist. */
static void tp_dense_draw(struct nextok__fz_run *r, float L,
                          int32_t cut, uint64_t seed)
{
    struct nextok__fused *f = r->f;
    const size_t V = r->V, nb = (V + 63) / 64;
    /* keep P(x) > L, or P(x) == L and id <= cut: raw x >= gt, or x >= eq */
    const float gt = nextok__fz_preimage(nextafterf(L, INFINITY), r->t), eq = nextok__fz_preimage(L, r->t);
    /* only the groups that reach L hold survivors; the others' blocks sum
     * to 0 and their weights are left unwritten (no walk enters a block of
     * sum 0, and cut_draw ends the set at its last block with a survivor) */
    const size_t esz = nextok_dtype_size(r->dt);
    size_t done = 0, g = 0, lo, hi;
    while (nextok__fz_active_run(r, L, &g, &lo, &hi)) {
        for (size_t b = (done + 63) / 64; b < lo / 64; b++) f->dist.bsum[b] = 0.0;
        r->fk->cut_weights((const char *)r->row + lo * esz, r->dt, hi - lo, gt, eq,
                          cut == INT32_MAX ? INT32_MAX : cut - (int32_t)lo, f->dist.w + lo, f->dist.bsum + lo / 64);
        done = hi;
    }
    for (size_t b = (done + 63) / 64; b < nb; b++) f->dist.bsum[b] = 0.0; /* hi == V may end mid-block */
    nextok__fz_cut_draw(r, L, cut, false, seed);
}

/* At most 1 in 64 of the row's sampled values reach L (r->t is 1 here). */
static bool few_survivors(const struct nextok__fz_run *r, float L)
{
    if (r->V <= NEXTOK__FZ_SAMPLE_N) return true;
    const float *sm = nextok__fz_load_sample(r);
    size_t n = 0;
    for (size_t i = 0; i < NEXTOK__FZ_SAMPLE_N; i++) n += sm[i] >= L;
    return n * 64 <= NEXTOK__FZ_SAMPLE_N;
}

/*
 * dist after a temperature that follows the cut (llama.cpp's order: top-p,
 * temperature, dist; no temperature before top-p, so the cut's values are
 * the raw ones): the survivors' weights at their final values, x / t_after,
 * from one weights_ge pass keeping x >= L (every id of value L); when the
 * cut keeps only some of L's ids (exact ties), cut_weights zeroes the
 * others and sums the blocks again. Then the walk, as tp_dense_draw.
 */
static void tp_dense_draw_after(struct nextok__fz_run *r, float L, int32_t cut, uint64_t seed)
{
    struct nextok__dist *d = &r->f->dist;
    const float m = fz_P(d->max, r->t_after), lo = fz_P(L, r->t_after);
    const bool un = nextok__wref_unscaled_ok(lo, m);
    d->cref = nextok__wref_of(m);
    d->ref = un ? nextok__wref_unscaled : d->cref;
    d->N = un ? d->cref.n : 0;
    d->max = m;
    r->fk->weights_ge(r->row, r->dt, r->V, r->t_after, &d->ref, L, d->w, d->bsum, d->cum);
    if (cut != INT32_MAX) r->fk->cut_weights(r->row, r->dt, r->V, nextafterf(L, INFINITY), L, cut, d->w, d->bsum);
    nextok__fz_cut_draw(r, L, cut, cut == INT32_MAX, seed);
}

static void tp_full_cross(struct nextok__fz_run *r, const struct nextok__p_top_p *q, float scale, size_t mk,
                          float *L, int32_t *cut, size_t *n_keep);

/*
 * One interval [vlo, vhi) of the estimate in one pass (the usual case on
 * rows whose crossing lies in the bulk): the exact total, the masses above
 * both ends, and the interval's candidates (mass_band), then tp_masses' and
 * tp_gather's corrections for the touched ids. Returns 0 when the crossing
 * is inside (and finished), 1 when it lies above vhi, -1 below vlo, 2 when
 * the interval is empty or unbounded (not tried).
 */
static int tp_band_cross(struct nextok__fz_run *r, const struct nextok__p_top_p *q, float scale, size_t mk,
                         float vhi, float vlo, float *L, int32_t *cut, size_t *n_keep)
{
    struct nextok__fused *f = r->f;
    if (!(vlo < vhi) || vlo == -INFINITY) return 2;
    const float rhi = nextok__fz_preimage(vhi, r->t), rlo = nextok__fz_preimage(vlo, r->t);
    uint64_t qb[3], cb[3] = {0, 0, 0};
    const size_t got = r->fk->mass_band(r->row, r->dt, r->V, f->dist.w, scale, rhi, rlo, f->dist.gmax, vlo,
                                       qb, mk > 1 ? cb : NULL, 0, f->cids, f->cvals, r->V);
    const uint64_t c1 = mk > 1;
    for (size_t t = 0; t < r->n_touched; t++) { /* as tp_masses */
        const size_t id = (size_t)f->ovr.touched[t];
        const float x = nextok__row_get(r->row, r->dt, id);
        const uint64_t m = nextok__mass_q(f->dist.w[id], scale);
        qb[0] -= m, cb[0] -= c1;
        if (x >= rhi) qb[1] -= m, cb[1] -= c1;
        if (x >= rlo) qb[2] -= m, cb[2] -= c1;
    }
    for (size_t t = 0; t < f->ovr.n_ov; t++) {
        const float v = fz_P(f->ovr.ov[t].logit, r->t);
        const uint64_t m = nextok__mass_q(f->dist.w[f->ovr.ov[t].id], scale);
        qb[0] += m, cb[0] += c1;
        if (v >= vhi) qb[1] += m, cb[1] += c1;
        if (v >= vlo) qb[2] += m, cb[2] += c1;
    }
    const uint64_t target = nextok__mass_target(q->p, qb[0]);
    if (qb[1] >= target) return 1;
    if (qb[2] < target) return -1;
    const size_t n = nextok__fz_take_interval(r, got, vlo, vhi, scale);
    const struct nextok__fz_interval iv = {vlo, vhi, qb[2] - qb[1]};
    nextok__fz_mass_finish(f, n, &iv, target, qb[1], (size_t)cb[1], q->ties == NEXTOK_TIES_KEEP, L, cut, n_keep);
    return 0;
}

/* top-p as the first filter; `dist_seed` non-NULL: dist follows and ends the
 * chain (drawn densely). Fewer survivors than min_keep: the top min_keep (and
 * ties in keep mode), as top_p.c. */
static bool top_p(struct nextok__fz_run *r, const struct nextok__p_top_p *q,
                       const uint64_t *dist_seed, bool *drawn)
{
    struct nextok__fused *f = r->f;
    *drawn = false;
    if (!nextok__fz_mass_reserve(f) || !nextok__fz_dense_prepare(r, true, true)) return false;
    /* masses of the canonical weights: dist.w is them times 2^N */
    const float scale = ldexpf(1.0f, (int)nextok__mass_shift(r->n_set) - (int)f->dist.N);
    const size_t mk = q->min_keep ? q->min_keep : 1;
    float L;
    int32_t cut;
    size_t n_keep;
    if (!tp_heavy_cross(r, q->p, scale, q->ties == NEXTOK_TIES_KEEP, &L, &cut, &n_keep))
        tp_full_cross(r, q, scale, mk, &L, &cut, &n_keep);
    if (n_keep < mk) {
        return nextok__fz_top_k(r, mk < r->n_set ? mk : r->n_set, q->ties == NEXTOK_TIES_KEEP);
    }
    /* with a temperature between the cut and dist, few survivors (peaked
     * rows: 8 or fewer of the 512 sampled values) are cheaper listed for the
     * chain's tail than weighed again over the whole row (n_keep counts
     * only L's ids when min_keep is 1) */
    if (!dist_seed || (r->t_after != 1.0f && few_survivors(r, L))) {
        tp_emit(r, L, cut);
        return true;
    }
    if (r->t_after != 1.0f) tp_dense_draw_after(r, L, cut, *dist_seed);
    else tp_dense_draw(r, L, cut, *dist_seed);
    *drawn = true;
    return true;
}

/* The crossing by the estimate's thresholds, the exact masses above them,
 * and the refinement of the band they leave (the top of this file). */
static void tp_full_cross(struct nextok__fz_run *r, const struct nextok__p_top_p *q, float scale, size_t mk,
                          float *Lo, int32_t *cuto, size_t *n_keepo)
{
    struct nextok__fused *f = r->f;
    float th[4];
    uint64_t qa[5], ca[5];
    tp_window(r, q->p, th);
    /* the inner interval, then the outer one on the side the crossing lies */
    const int side = tp_band_cross(r, q, scale, mk, th[1], th[2], Lo, cuto, n_keepo);
    if (side == 0) return;
    if (side == 1 && tp_band_cross(r, q, scale, mk, th[0], th[1], Lo, cuto, n_keepo) == 0) return;
    if (side == -1 && tp_band_cross(r, q, scale, mk, th[2], th[3], Lo, cuto, n_keepo) == 0) return;
    tp_masses(r, scale, th, qa, ca, mk > 1); /* with min_keep 1 the counts are not needed */
    const uint64_t target = nextok__mass_target(q->p, qa[0]);
    int j0 = 0; /* the crossing is in [th[j0], th[j0 - 1]) (th[-1] = +inf, th[4] = -inf) */
    while (j0 < 4 && qa[1 + j0] < target) j0++;
    uint64_t above = j0 ? qa[j0] : 0;
    size_t n_above = j0 ? (size_t)ca[j0] : 0;
    const struct nextok__fz_interval iv = {j0 < 4 ? th[j0] : -INFINITY, j0 ? th[j0 - 1] : INFINITY,
                                   (j0 < 4 ? qa[1 + j0] : qa[0]) - above};
    const size_t n = nextok__fz_gather(r, iv.lo, iv.hi, scale);
    nextok__fz_mass_finish(f, n, &iv, target, above, n_above, q->ties == NEXTOK_TIES_KEEP, Lo, cuto, n_keepo);
}

size_t nextok__fz_route_top_p(struct nextok__fz_run *r, size_t i)
{
    const struct nextok__p_top_p *q = r->stages[i]->ctx;
    if (nextok__fz_n_set(r) <= 1) return NEXTOK__FZ_NEXT; /* the masses use the count */
    const struct nextok__fz_step *st = &r->f->plan.steps[i];
    r->t_after = st->draw_after ? st->draw_t : 1.0f;
    bool drawn = false;
    if (!top_p(r, q, st->draw_after ? &st->draw_seed : NULL, &drawn)) return NEXTOK__FZ_HANDBACK;
    return drawn ? r->n_stages : i + 1;
}
