/*
 * The canonical categorical draw over weights (docs/semantics.md,
 * Probabilities and Selectors: categorical), top-p's integer masses and
 * Mirostat v2's threshold, shared by the chain (dist, top-p, mirostat,
 * sample_n) and the fused path.
 *
 * Weights come from nextok__expw and blocks from nextok__wblock
 * (arch/kernels.h). A block is 64 consecutive token ids; a sparse candidate
 * set (the chain) and a dense row whose non-candidates weigh 0 (the fused
 * path) give the same block sums bit for bit, because adding +0 changes no
 * double sum. Everything here is plain sequential double arithmetic, the same
 * for both engines.
 */
#include "canonical.h"

/* Group w (weights of ids ascending) into blocks of 64 ids: running sums
 * cum[k] of the block sums, and the index bstart[k] of block k's first
 * element. Returns the number of blocks. */
size_t nextok__wset_sparse(const int32_t *ids, const float *w, size_t n, double *cum,
                           size_t *bstart)
{
    size_t nb = 0;
    double acc = 0.0;
    for (size_t i = 0; i < n;) {
        const int32_t blk = ids[i] >> 6;
        bstart[nb] = i;
        size_t e = i + 1;
        while (e < n && ids[e] >> 6 == blk) e++;
        /* Blocks of one or two candidates (common on sparse sets) without
         * the 16-lane tree, with the same bits: weights are >= +0, and every
         * addition of +0 in the lanes and in the tree returns its other
         * operand exactly, so one weight's block sum is (double)w, and two
         * weights' is their float sum (same lane, added in id order from +0)
         * or the double sum of both (different lanes: the one tree node
         * where they meet; addition is commutative). */
        double bs;
        if (e - i == 1) {
            bs = (double)w[i];
        } else if (e - i == 2) {
            bs = (ids[i] & 15) == (ids[i + 1] & 15) ? (double)(w[i] + w[i + 1])
                                                    : (double)w[i] + (double)w[i + 1];
        } else {
            float a[16] = {0};
            /* ids ascend, so each lane sees its elements in id order, as in
             * the dense nextok__wblock */
            for (; i < e; i++) a[ids[i] & 15] += w[i];
            double d[16];
            for (int l = 0; l < 16; l++) d[l] = (double)a[l];
            bs = nextok__wtree(d);
        }
        i = e;
        cum[nb++] = acc += bs;
    }
    return nb;
}

/* Running sums from block `from` on: cum[k] = cum[k-1] + bsum[k]. Returns Z.
 * Runs of blocks of sum 0 (a cut row: most of it) only copy the running sum:
 * adding +0 to a sum >= +0 returns it unchanged, and the copies do not wait
 * on the chain of additions. */
double nextok__wset_cum(const double *bsum, size_t from, size_t nb, double *cum)
{
    double acc = from ? cum[from - 1] : 0.0;
    size_t k = from;
    for (; k + 8 <= nb; k += 8) {
        uint64_t any = 0; /* the bits of eight sums or-ed: 0 iff all are +0 */
        for (size_t j = k; j < k + 8; j++) {
            uint64_t u;
            memcpy(&u, &bsum[j], sizeof u);
            any |= u;
        }
        if (any == 0) {
            for (size_t j = k; j < k + 8; j++) cum[j] = acc;
            continue;
        }
        for (size_t j = k; j < k + 8; j++) cum[j] = acc += bsum[j];
    }
    for (; k < nb; k++) cum[k] = acc += bsum[k];
    return nb ? cum[nb - 1] : 0.0;
}

static size_t block_begin(const struct nextok__wset *s, size_t k)
{
    return s->bstart ? s->bstart[k] : k * 64;
}

static size_t block_end(const struct nextok__wset *s, size_t k)
{
    if (k + 1 < s->nb) return block_begin(s, k + 1);
    return s->n;
}

/* Last index in [b, e) with a positive weight (b if none). */
static size_t last_positive(const float *w, size_t b, size_t e)
{
    for (size_t i = e; i > b; i--)
        if (w[i - 1] > 0.0f) return i - 1;
    return b;
}

/*
 * target = u Z. The running sums cum (the very additions that formed Z) do
 * not decrease, so the first block k with cum[k] > target is found by binary
 * search: the result of a sequential walk. Inside block k, starting from
 * cum[k-1], add weights in id order and take the first index where the sum
 * exceeds target. When rounding leaves none (the lane-tree block sum and the
 * sequential walk differ in the last bits), the block's last positive weight;
 * when no block exceeds (u Z rounded up to Z), the last positive weight of the
 * set. Returns an index into w.
 */
size_t nextok__wset_draw(const struct nextok__wset *s, double u)
{
    const double target = u * s->z;
    size_t lo = 0, hi = s->nb; /* first k in [lo, hi) with cum[k] > target */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (s->cum[mid] > target) hi = mid;
        else lo = mid + 1;
    }
    if (lo == s->nb) return last_positive(s->w, 0, s->n);
    const size_t b = block_begin(s, lo), e = block_end(s, lo);
    double a = lo ? s->cum[lo - 1] : 0.0;
    for (size_t i = b; i < e; i++) {
        a += (double)s->w[i];
        if (a > target) return i;
    }
    return last_positive(s->w, b, e);
}

/* Top-p mass scale: the largest s with n 2^s <= 2^61 (w < 2, so any sum of
 * n masses fits in 63 bits). */
unsigned nextok__mass_shift(size_t n)
{
    unsigned b = 0; /* ceil(log2 n) */
    while (b < 61 && ((size_t)1 << b) < n) b++;
    return 61 - b;
}

/* ceil(p Q) exactly: p = mant 2^-k (mant < 2^24, k >= 24), so p Q = mant Q /
 * 2^k with mant Q < 2^86 held as hi:lo (64-bit halves). */
uint64_t nextok__mass_target(float p, uint64_t q)
{
    int e = 0;
    const float f = frexpf(p, &e); /* p = f 2^e, f in [0.5, 1) */
    const uint64_t mant = (uint64_t)(f * 16777216.0f);
    const int k = 24 - e;
    const uint64_t a = mant * (q & 0xffffffffu), b = mant * (q >> 32);
    uint64_t lo = a + (b << 32);
    uint64_t hi = (b >> 32) + (lo < a);
    if (k >= 128) return (hi | lo) ? 1 : 0;
    uint64_t fl, rem;
    if (k >= 64) {
        fl = hi >> (k - 64);
        rem = lo | (k > 64 ? hi & ((UINT64_C(1) << (k - 64)) - 1) : 0);
    } else {
        fl = (lo >> k) | (hi << (64 - k)); /* k >= 24, the quotient fits */
        rem = lo & ((UINT64_C(1) << k) - 1);
    }
    return fl + (rem != 0);
}

/* -log2(w / Z) <= mu with w = exp(l - c) 2^-N (canonical weights):
 * l >= c + N ln 2 + ln Z - mu ln 2, in double, in this order. */
double nextok__miro2_threshold(const struct nextok__wref *ref, double z, float mu)
{
    const double ln2 = 0.693147180559945309417;
    return (double)ref->c + (double)ref->n * ln2 + log(z) - (double)mu * ln2;
}
