/*
 * Fused top-p (docs/semantics.md: integer masses, exact in any order): the
 * crossing found without sorting the vocabulary. See fused.c for the frame
 * (struct run, overrides, the dense weights) and docs/performance.md.
 */
#include "fused_internal.h"

#include <math.h>
#include <string.h>

/* ---- top-p by exact masses ------------------------------------------------------------- */

/*
 * top-p (docs/semantics.md): the candidates' masses q = floor(w 2^s) are
 * integers, so every sum of them is exact in any order and this path reaches
 * the chain's cut (top_p.c, a sorted walk) without sorting. Three routes,
 * cheapest first; each proves the chain's cut or hands over to the next
 * (fuse_top_p):
 *  - tp_heavy_cross: the few heavy candidates, sorted, with a bound on the
 *    total mass from Z instead of a pass (peaked rows);
 *  - tp_band_cross: one interval of an estimate (tp_window) in one SIMD pass
 *    (mass_band: the exact total, the masses above both ends, the interval's
 *    candidates), then the outer interval on the side the crossing lies;
 *  - the four thresholds of the estimate: one SIMD pass of masses
 *    (tp_masses), then the crossing interval's candidates (tp_gather).
 * The gathered candidates are narrowed (tp_narrow) and refined by buckets
 * over their own key range (tp_refine_all) to one logit value L; its
 * candidates in id order complete the walk. The cut is "v > L, or v == L and
 * id <= cut" (keep-ties: every id of L). The SIMD passes skip the 256-id
 * groups whose maximum is below what they look for (active_run), which on
 * peaked rows is most of the row. Estimates only decide speed.
 */

bool tp_reserve(struct nextok__fused *f)
{
    if (!dense_reserve(f)) return false;
    if (!f->cq) f->cq = malloc(((size_t)f->n_vocab + SLACK) * sizeof *f->cq);
    if (!f->hq) f->hq = malloc(2 * sizeof *f->hq); /* typical interleaves two */
    if (!f->tpw) f->tpw = calloc(2 * HBINS, sizeof *f->tpw); /* tp_window keeps it zero */
    if (!f->hn) f->hn = malloc(2 * sizeof *f->hn);
    return f->cq && f->hq && f->hn && f->tpw;
}

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
    float x = (v - f->cref.c) * NEXTOK__EXPW_LOG2E16;
    if (!(x >= -1e6f)) x = -1e6f; /* also NaN */
    if (x > 1e6f) x = 1e6f;
    return (int32_t)x;
}

static int32_t tp_kbase(const struct nextok__fused *f)
{
    return tp_k(f, f->dmax) - (HBINS - 2);
}

static inline uint32_t tp_bucket(const struct nextok__fused *f, int32_t kbase, float v)
{
    const int32_t b = tp_k(f, v) - kbase;
    return b < 0 ? 0 : b >= HBINS ? HBINS - 1 : (uint32_t)b;
}

static float tp_bucket_floor(const struct nextok__fused *f, int32_t kb, uint32_t B);

/* The processed value whose canonical weight is Z / 4096: at most about
 * 4096 candidates reach it (+inf when Z is 0 or inf: nothing is heavy). */
static double tp_heavy_value(const struct nextok__fused *f)
{
    const double vh = (double)f->dref.c + (double)f->dref.n * 0.6931471805599453 + log(f->dz / 4096.0);
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
static double tp_window_heavy(struct run *r)
{
    struct nextok__fused *f = r->f;
    const double vh = tp_heavy_value(f);
    const size_t ng = (r->V + NEXTOK__BMAX_IDS - 1) / NEXTOK__BMAX_IDS;
    if (ng < 64 || vh == INFINITY) return vh;
    float *gm = f->sample; /* SAMPLE_N >= 128 floats of scratch */
    const size_t m = ng < 128 ? ng : 128;
    for (size_t g = 0; g < m; g++) gm[g] = f->dbmax[g * ng / m];
    const double q = (double)kth_largest(gm, m, m / 4);
    const double lo = (double)f->dref.c + (double)f->dref.n * 0.6931471805599453 + log(f->dz / 16384.0);
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
static void tp_window(struct run *r, float p, float th[4])
{
    struct nextok__fused *f = r->f;
    const int32_t kb = tp_kbase(f);
    /* heavy (exact) and light (sampled) weight per bucket; zero between
     * calls (tp_reserve clears them once, the end of this function clears
     * the buckets it used) */
    double *h = f->tpw, *hl = f->tpw + HBINS;
    uint32_t bmin = HBINS - 1, bmax = 0;
    const double z = f->dz;
    const double vh = tp_window_heavy(r);
    dense_compact(r, vh);
    double heavy = 0.0;
    for (size_t i = 0; i < r->nc; i++) {
        const double w = (double)f->dw[f->cids[i]];
        const uint32_t b = tp_bucket(f, kb, P(f->cvals[i], r->t));
        h[b] += w;
        heavy += w;
        bmin = b < bmin ? b : bmin;
        bmax = b > bmax ? b : bmax;
    }
    const float vhf = float_ceil(vh);
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
            const float v = P(nextok__row_get(r->row, r->dt, id), r->t);
            if (v >= vhf) continue; /* counted exactly */
            const uint32_t b = tp_bucket(f, kb, v);
            hl[b] += (double)f->dw[id];
            lt[i & 3] += (double)f->dw[id];
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
static void tp_masses(const struct run *r, float scale, const float th[4], uint64_t q[5],
                      uint64_t cnt[5], bool counts)
{
    struct nextok__fused *f = r->f;
    float raw[4];
    for (int j = 0; j < 4; j++) raw[j] = preimage(th[j], r->t);
    const uint64_t c1 = counts; /* without counts cnt stays 0 */
    memset(cnt, 0, 5 * sizeof *cnt);
    /* the group maxima of the row's processed values (dense_prepare): a
     * group below th[3] holds no x >= raw[3] (P is monotone), so the kernel
     * only adds its total */
    r->fk->mass_above(r->row, r->dt, r->V, f->dw, scale, raw, f->dbmax, th[3], q, counts ? cnt : NULL);
    for (size_t t = 0; t < r->n_touched; t++) {
        const size_t id = (size_t)f->touched[t];
        const float x = nextok__row_get(r->row, r->dt, id);
        const uint64_t m = nextok__mass_q(f->dw[id], scale);
        q[0] -= m, cnt[0] -= c1;
        for (int j = 0; j < 4; j++)
            if (x >= raw[j]) q[1 + j] -= m, cnt[1 + j] -= c1;
    }
    for (size_t t = 0; t < f->n_ov; t++) {
        const float v = P(f->ov[t].logit, r->t);
        const uint64_t m = nextok__mass_q(f->dw[f->ov[t].id], scale);
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
 * sum of the weights (in dw's units), S 2^s - n < Q <= S 2^s (each floor
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
 * *L, *cut, *n_keep as fuse_top_p's walk leaves them.
 */
static bool tp_heavy_cross(struct run *r, float p, float scale, bool keep_ties, float *L,
                           int32_t *cut, size_t *n_keep)
{
    struct nextok__fused *f = r->f;
    const double zs = f->dz * (double)scale; /* Z in mass units, < 2^62 */
    if (!(zs > 0.0 && zs < 0x1p62)) return false;
    const double vh = tp_heavy_value(f);
    dense_compact(r, vh);
    const float vhf = float_ceil(vh);
    size_t extra = 0;
    for (size_t j = 0; j < f->n_ov; j++) extra += P(f->ov[j].logit, r->t) >= vhf;
    const size_t n = r->nc + extra;
    if (n == 0 || n > TP_HEAVY_MAX) return false;
    for (size_t i = 0; i < r->nc; i++) f->cvals[i] = P(f->cvals[i], r->t);
    size_t i = r->nc, k = n; /* the overrides merged in id order, from the back */
    for (size_t j = f->n_ov; j-- > 0 && extra > 0;) {
        const float x = P(f->ov[j].logit, r->t);
        if (!(x >= vhf)) continue;
        for (; i > 0 && f->cids[i - 1] > f->ov[j].id; k--, i--) {
            f->cids[k - 1] = f->cids[i - 1];
            f->cvals[k - 1] = f->cvals[i - 1];
        }
        k--;
        f->cids[k] = f->ov[j].id;
        f->cvals[k] = x;
        extra--;
    }
    /* sorted order: value descending, then id ascending (= index ascending) */
    for (size_t j = 0; j < n; j++) f->cq[j] = (uint64_t)~vkey(f->cvals[j]) << 32 | j;
    nextok__sort(f->cq, n, sizeof *f->cq, cmp_u64);
    const double lo = zs * (1.0 - 0x1p-19) - (double)r->n_set - 1.0, hi = zs * (1.0 + 0x1p-19) + 1.0;
    const uint64_t t_lo = nextok__mass_target(p, lo > 0.0 ? (uint64_t)lo : 0);
    const uint64_t t_hi = nextok__mass_target(p, (uint64_t)hi);
    uint64_t above = 0;
    for (size_t j = 0; j < n; j++) {
        const size_t at = (uint32_t)f->cq[j];
        const uint64_t m = nextok__mass_q(f->dw[f->cids[at]], scale);
        if (above + m < t_hi) {
            above += m;
            continue;
        }
        if (above >= t_lo) return false; /* a target in the interval crosses earlier */
        *L = f->cvals[at];
        *cut = keep_ties ? INT32_MAX : f->cids[at];
        size_t e = j + 1; /* keep-ties: every candidate of the value L */
        while (keep_ties && e < n && f->cvals[(uint32_t)f->cq[e]] == *L) e++;
        *n_keep = e;
        return true;
    }
    return false;
}

/* The crossing bucket: from the top, the first bucket b with above + hq[b] >=
 * target; *above and *n_above get the mass and count of the buckets over it. */
static unsigned tp_cross(const uint64_t *hq, const uint32_t *hn, unsigned nbins, uint64_t target,
                         uint64_t *above, size_t *n_above)
{
    for (unsigned b = nbins; b-- > 0;) {
        if (*above + hq[b] >= target) return b;
        *above += hq[b];
        *n_above += hn[b];
    }
    return 0; /* not reached: the total mass is >= target */
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

/* Largest raw value whose processed value is < v (v > -inf). */
static float tp_raw_below(float v, float t)
{
    const float p = preimage(v, t); /* smallest raw with P(raw) >= v */
    return nextafterf(p, -INFINITY);
}

/* Candidates with processed values in [vlo, vhi): ids (ascending) in cids,
 * values in cvals, masses in cq. Returns the count. The untouched ones come
 * from one range compaction of the raw values that map into it. */
static size_t tp_take_interval(struct run *r, size_t n, float vlo, float vhi, float scale);

static size_t tp_gather(struct run *r, float vlo, float vhi, float scale)
{
    struct nextok__fused *f = r->f;
    const float rlo = preimage(vlo, r->t), rhi = vhi == INFINITY ? INFINITY : tp_raw_below(vhi, r->t);
    /* only the groups that reach vlo: on peaked rows the crossing is among
     * a few high values, held by a few groups */
    const size_t esz = nextok_dtype_size(r->dt);
    size_t nc = 0, g = 0, lo, hi;
    while (active_run(r, vlo, &g, &lo, &hi))
        nc += r->fk->compact_range((const char *)r->row + lo * esz, r->dt, hi - lo, rlo, rhi, (int32_t)lo,
                                   f->cids + nc, f->cvals + nc, r->V - nc);
    return tp_take_interval(r, nc, vlo, vhi, scale);
}

/* The overrides with processed values in [vlo, vhi) merged, in id order
 * from the back, into the n gathered candidates (cids, cvals, cq). Returns
 * the count. */
static size_t tp_merge_overrides(struct run *r, size_t n, float vlo, float vhi, float scale)
{
    struct nextok__fused *f = r->f;
    size_t extra = 0;
    for (size_t j = 0; j < f->n_ov; j++) {
        const float x = P(f->ov[j].logit, r->t);
        extra += x >= vlo && x < vhi;
    }
    const size_t total = n + extra;
    size_t i = n, k = total;
    for (size_t j = f->n_ov; j-- > 0 && extra > 0;) {
        const float x = P(f->ov[j].logit, r->t);
        if (!(x >= vlo && x < vhi)) continue;
        for (; i > 0 && f->cids[i - 1] > f->ov[j].id; k--, i--) {
            f->cids[k - 1] = f->cids[i - 1];
            f->cvals[k - 1] = f->cvals[i - 1];
            f->cq[k - 1] = f->cq[i - 1];
        }
        k--;
        f->cids[k] = f->ov[j].id;
        f->cvals[k] = x;
        f->cq[k] = nextok__mass_q(nextok__expw(x, &f->dref), scale);
        extra--;
    }
    return total;
}

/* The n compacted candidates of [vlo, vhi) (cids, raw cvals) as the
 * refinement takes them: touched ids dropped, processed values, masses
 * (independent iterations), the overrides in the interval merged. Returns
 * the count. */
static size_t tp_take_interval(struct run *r, size_t n, float vlo, float vhi, float scale)
{
    struct nextok__fused *f = r->f;
    n = drop_touched(f->cids, f->cvals, n, f->touched, r->n_touched);
    for (size_t i = 0; i < n; i++) {
        f->cvals[i] = P(f->cvals[i], r->t);
        f->cq[i] = nextok__mass_q(f->dw[f->cids[i]], scale);
    }
    return tp_merge_overrides(r, n, vlo, vhi, scale);
}

/* Refine the gathered candidates by bucket (key - *base) >> shift, nb <=
 * HBINS of them (every key is below *base + (nb << shift)): keep only the
 * crossing bucket's candidates (in place, order kept) and move *base to
 * that bucket's first key. Returns the count. */
static size_t tp_refine(struct nextok__fused *f, size_t n, uint32_t *base, unsigned shift,
                        unsigned nb, uint64_t target, uint64_t *above, size_t *n_above)
{
    uint64_t *hq = f->hq[0];
    uint32_t *hn = f->hn[0];
    const uint32_t b0 = *base;
    memset(hq, 0, nb * sizeof *hq);
    memset(hn, 0, nb * sizeof *hn);
    for (size_t i = 0; i < n; i++) {
        const uint32_t k = (vkey(f->cvals[i]) - b0) >> shift;
        hq[k] += f->cq[i];
        hn[k]++;
    }
    const unsigned B = tp_cross(hq, hn, nb, target, above, n_above);
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if ((vkey(f->cvals[i]) - b0) >> shift != B) continue;
        f->cids[j] = f->cids[i];
        f->cvals[j] = f->cvals[i];
        f->cq[j++] = f->cq[i];
    }
    *base = b0 + ((uint32_t)B << shift);
    return j;
}

#define TP_SMALL 32 /* candidates few enough to order directly */

/* tp_refine_all's end for n <= TP_SMALL candidates: their keys ordered
 * (insertion), the walk by value from the top to L, then L's candidates
 * kept in place (id order). */
static size_t tp_refine_small(struct nextok__fused *f, size_t n, uint64_t target, uint64_t *above,
                              size_t *n_above)
{
    uint64_t ord[TP_SMALL]; /* key << 32 | index, descending */
    for (size_t i = 0; i < n; i++) {
        const uint64_t o = (uint64_t)vkey(f->cvals[i]) << 32 | i;
        size_t j = i;
        for (; j > 0 && ord[j - 1] < o; j--) ord[j] = ord[j - 1];
        ord[j] = o;
    }
    uint32_t lk = (uint32_t)(ord[n - 1] >> 32); /* not reached: the mass reaches the target */
    for (size_t i = 0; i < n;) {
        const uint32_t k = (uint32_t)(ord[i] >> 32);
        uint64_t m = 0;
        size_t e = i;
        for (; e < n && (uint32_t)(ord[e] >> 32) == k; e++) m += f->cq[(uint32_t)ord[e]];
        if (*above + m >= target) {
            lk = k;
            break;
        }
        *above += m;
        *n_above += e - i;
        i = e;
    }
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (vkey(f->cvals[i]) != lk) continue;
        f->cids[j] = f->cids[i];
        f->cvals[j] = f->cvals[i];
        f->cq[j++] = f->cq[i];
    }
    return j;
}

/* Refine the gathered candidates (n >= 1) down to the one value L where the
 * mass from the top crosses target: buckets over the keys' own range, about
 * one per four candidates (at most 11 key bits a level), until few enough
 * are left to order directly. */
static size_t tp_refine_all(struct nextok__fused *f, size_t n, uint64_t target, uint64_t *above,
                            size_t *n_above)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t k = vkey(f->cvals[i]);
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    unsigned bits = 0; /* bit length of the keys' range */
    while (bits < 32 && ((hi - lo) >> bits) != 0) bits++;
    uint32_t span = hi - lo; /* the keys lie in [lo, lo + span] */
    for (;;) {
        if (n <= TP_SMALL) return tp_refine_small(f, n, target, above, n_above);
        unsigned b = 4; /* bits of this level: 2^b buckets, about n / 4 */
        while (b < 11 && ((size_t)1 << (b + 2)) < n) b++;
        const unsigned shift = bits > b ? bits - b : 0;
        n = tp_refine(f, n, &lo, shift, (span >> shift) + 1, target, above, n_above);
        if (shift == 0) return n;
        span = ((uint32_t)1 << shift) - 1;
        bits = shift;
    }
}

/* The candidates (row values and overrides, processed, in id order) that
 * the cut keeps, into c->work; returns the count. One pass over the row,
 * 64 values at a time; the cut's kind is the same for every value, so its
 * branch always predicts. */
size_t emit_kept(struct nextok_chain *c, const struct run *r, const struct kept *k)
{
    const struct nextok__fused *f = r->f;
    size_t n = 0, o = 0;
    float vb[64];
    for (size_t b = 0; b < r->V; b += 64) {
        const size_t len = r->V - b < 64 ? r->V - b : 64;
        const float *v = tp_vals(r, b, len, vb);
        for (size_t i = 0; i < len; i++) {
            const int32_t id = (int32_t)(b + i);
            float x = v[i];
            if (f->tmask[id]) {
                while (o < f->n_ov && f->ov[o].id < id) o++;
                if (o == f->n_ov || f->ov[o].id != id) continue;
                x = P(f->ov[o].logit, r->t);
            }
            const bool keep = k->typical ? ty_keep(x, id, k->center, k->ls, k->lv, k->id)
                                         : tp_keep(x, id, k->L, k->id);
            if (keep) c->work[n++] = (struct nextok_token_data){id, x, 0.0f};
        }
    }
    return n;
}

/* Survivors in sorted order into c->work (the chain's top-p output). */
static void tp_emit(struct nextok_chain *c, const struct run *r, float L, int32_t cut)
{
    set_last(c, emit_kept(c, r, &(struct kept){.L = L, .id = cut}), true);
}

/* dist right after the cut: the dense weights with every non-survivor at 0
 * (the chain's dist sees only survivors; zeros change no sum; the survivors'
 * maximum is m), their block sums and the canonical walk, as fuse_dist. */
static void tp_dense_draw(struct nextok_chain *c, const struct run *r, float L,
                          int32_t cut, uint64_t seed)
{
    struct nextok__fused *f = r->f;
    const size_t V = r->V, nb = (V + 63) / 64;
    /* keep P(x) > L, or P(x) == L and id <= cut: raw x >= gt, or x >= eq */
    const float gt = preimage(nextafterf(L, INFINITY), r->t), eq = preimage(L, r->t);
    /* only the groups that reach L hold survivors; the others' blocks sum
     * to 0 and their weights are left unwritten (no walk enters a block of
     * sum 0, and cut_draw ends the set at its last block with a survivor) */
    const size_t esz = nextok_dtype_size(r->dt);
    size_t done = 0, g = 0, lo, hi;
    while (active_run(r, L, &g, &lo, &hi)) {
        for (size_t b = (done + 63) / 64; b < lo / 64; b++) f->dbs[b] = 0.0;
        r->fk->cut_weights((const char *)r->row + lo * esz, r->dt, hi - lo, gt, eq,
                           cut == INT32_MAX ? INT32_MAX : cut - (int32_t)lo, f->dw + lo, f->dbs + lo / 64);
        done = hi;
    }
    for (size_t b = (done + 63) / 64; b < nb; b++) f->dbs[b] = 0.0; /* hi == V may end mid-block */
    cut_draw(c, r, L, cut, false, seed);
}

static void tp_full_cross(struct run *r, const struct nextok__p_top_p *q, float scale, size_t mk,
                          float *L, int32_t *cut, size_t *n_keep);

#define TP_NARROW_MIN 256 /* fewer gathered candidates: straight to the buckets */

/* The interval the candidates were gathered from: processed values [lo,
 * hi) and the sum of their masses. */
struct tp_interval {
    float lo, hi;
    uint64_t mass;
};

/*
 * One interpolation step before the buckets: the crossing's place in the
 * gathered interval [lo, hi) (mass: its candidates' masses), taken as if
 * that mass were spread evenly over the values, and a window of 6 % of the
 * range around it. One branch-free pass sums the masses above the window and copies the window's
 * candidates behind the list (which stays whole); when the crossing is
 * inside, the window becomes the list (a few % of it, with above / n_above
 * moved past what lies over it), else the list is kept. Only speed depends
 * on the guess.
 */
static size_t tp_narrow(struct nextok__fused *f, size_t n, const struct tp_interval *iv,
                        uint64_t target, uint64_t *above, size_t *n_above)
{
    const float lo = iv->lo, hi = iv->hi;
    const uint64_t mass = iv->mass;
    if (n < TP_NARROW_MIN || n > (size_t)f->n_vocab / 2) return n; /* the copies need room behind */
    if (!(hi > lo && lo > -INFINITY && hi < INFINITY) || mass == 0 || target <= *above) return n;
    const double phi = (double)(target - *above) / (double)mass; /* in (0, 1] */
    const double at = (double)hi - phi * ((double)hi - (double)lo), half = 0.03 * ((double)hi - (double)lo);
    const float whi = (float)(at + half), wlo = (float)(at - half);
    uint64_t m_over = 0, m_in = 0;
    size_t c_over = 0, m = n;
    for (size_t i = 0; i < n; i++) {
        const float v = f->cvals[i];
        const uint64_t q = f->cq[i];
        const bool over = v >= whi, in = !over && v >= wlo;
        m_over += over ? q : 0;
        c_over += over;
        m_in += in ? q : 0;
        f->cids[m] = f->cids[i];
        f->cvals[m] = v;
        f->cq[m] = q;
        m += in;
    }
    if (!(*above + m_over < target && *above + m_over + m_in >= target)) return n;
    memmove(f->cids, f->cids + n, (m - n) * sizeof *f->cids);
    memmove(f->cvals, f->cvals + n, (m - n) * sizeof *f->cvals);
    memmove(f->cq, f->cq + n, (m - n) * sizeof *f->cq);
    *above += m_over;
    *n_above += c_over;
    return m - n;
}

/* The gathered candidates of the crossing's interval (n >= 1; `above` /
 * `n_above`: the mass and count over it) refined to the value L, and the
 * walk through L's candidates (ids ascending, equal masses). */
static void tp_finish(struct nextok__fused *f, size_t n, const struct tp_interval *iv,
                      uint64_t target, uint64_t above, size_t n_above, bool keep_ties, float *L,
                      int32_t *cut, size_t *n_keep)
{
    n = tp_narrow(f, n, iv, target, &above, &n_above);
    n = tp_refine_all(f, n, target, &above, &n_above);
    *L = f->cvals[0];
    *cut = INT32_MAX;
    *n_keep = n_above + n;
    if (!keep_ties) {
        size_t j = 0;
        while (above + f->cq[j] < target) above += f->cq[j++];
        *cut = f->cids[j];
        *n_keep = n_above + j + 1;
    }
}

/*
 * One interval [vlo, vhi) of the estimate in one pass (the usual case on
 * rows whose crossing lies in the bulk): the exact total, the masses above
 * both ends, and the interval's candidates (mass_band), then tp_masses' and
 * tp_gather's corrections for the touched ids. Returns 0 when the crossing
 * is inside (and finished), 1 when it lies above vhi, -1 below vlo, 2 when
 * the interval is empty or unbounded (not tried).
 */
static int tp_band_cross(struct run *r, const struct nextok__p_top_p *q, float scale, size_t mk,
                         float vhi, float vlo, float *L, int32_t *cut, size_t *n_keep)
{
    struct nextok__fused *f = r->f;
    if (!(vlo < vhi) || vlo == -INFINITY) return 2;
    const float rhi = preimage(vhi, r->t), rlo = preimage(vlo, r->t);
    uint64_t qb[3], cb[3] = {0, 0, 0};
    const size_t got = r->fk->mass_band(r->row, r->dt, r->V, f->dw, scale, rhi, rlo, f->dbmax, vlo,
                                        qb, mk > 1 ? cb : NULL, 0, f->cids, f->cvals, r->V);
    const uint64_t c1 = mk > 1;
    for (size_t t = 0; t < r->n_touched; t++) { /* as tp_masses */
        const size_t id = (size_t)f->touched[t];
        const float x = nextok__row_get(r->row, r->dt, id);
        const uint64_t m = nextok__mass_q(f->dw[id], scale);
        qb[0] -= m, cb[0] -= c1;
        if (x >= rhi) qb[1] -= m, cb[1] -= c1;
        if (x >= rlo) qb[2] -= m, cb[2] -= c1;
    }
    for (size_t t = 0; t < f->n_ov; t++) {
        const float v = P(f->ov[t].logit, r->t);
        const uint64_t m = nextok__mass_q(f->dw[f->ov[t].id], scale);
        qb[0] += m, cb[0] += c1;
        if (v >= vhi) qb[1] += m, cb[1] += c1;
        if (v >= vlo) qb[2] += m, cb[2] += c1;
    }
    const uint64_t target = nextok__mass_target(q->p, qb[0]);
    if (qb[1] >= target) return 1;
    if (qb[2] < target) return -1;
    const size_t n = tp_take_interval(r, got, vlo, vhi, scale);
    const struct tp_interval iv = {vlo, vhi, qb[2] - qb[1]};
    tp_finish(f, n, &iv, target, qb[1], (size_t)cb[1], q->ties == NEXTOK_TIES_KEEP, L, cut, n_keep);
    return 0;
}

/* top-p as the first filter; `dist_seed` non-NULL: dist follows and ends the
 * chain (drawn densely). Fewer survivors than min_keep: the top min_keep (and
 * ties in keep mode), as top_p.c. */
bool fuse_top_p(struct nextok_chain *c, struct run *r, const struct nextok__p_top_p *q,
                       const uint64_t *dist_seed, bool *drawn)
{
    struct nextok__fused *f = r->f;
    *drawn = false;
    if (!tp_reserve(f) || !dense_prepare(r, true, true)) return false;
    /* masses of the canonical weights: dw is them times 2^dN */
    const float scale = ldexpf(1.0f, (int)nextok__mass_shift(r->n_set) - (int)f->dN);
    const size_t mk = q->min_keep ? q->min_keep : 1;
    float L;
    int32_t cut;
    size_t n_keep;
    if (!tp_heavy_cross(r, q->p, scale, q->ties == NEXTOK_TIES_KEEP, &L, &cut, &n_keep))
        tp_full_cross(r, q, scale, mk, &L, &cut, &n_keep);
    if (n_keep < mk) {
        return fuse_top_k(c, r, mk < r->n_set ? mk : r->n_set, q->ties == NEXTOK_TIES_KEEP);
    }
    if (!dist_seed) {
        tp_emit(c, r, L, cut);
        return true;
    }
    tp_dense_draw(c, r, L, cut, *dist_seed);
    *drawn = true;
    return true;
}

/* The crossing by the estimate's thresholds, the exact masses above them,
 * and the refinement of the band they leave (the top of this file). */
static void tp_full_cross(struct run *r, const struct nextok__p_top_p *q, float scale, size_t mk,
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
    const struct tp_interval iv = {j0 < 4 ? th[j0] : -INFINITY, j0 ? th[j0 - 1] : INFINITY,
                                   (j0 < 4 ? qa[1 + j0] : qa[0]) - above};
    const size_t n = tp_gather(r, iv.lo, iv.hi, scale);
    tp_finish(f, n, &iv, target, above, n_above, q->ties == NEXTOK_TIES_KEEP, Lo, cuto, n_keepo);
}

