/*
 * The threshold filters: top-k, top-1 (greedy, temperature <= 0), min-p and
 * top-n-sigma as the first reducing stage. Each finds a raw threshold that
 * provably keeps every survivor (collect.c), compacts the row at it and
 * applies the stage's exact rule to the few candidates left, in the order
 * the chain's own stage leaves them. min-p before dist on a flat row draws
 * from a dense set instead (its survivors' weights, 0 below the cut).
 */
#include "internal.h"

/* Top k in sorted order (plus every candidate tied with the k-th when keep).
 * Exactness: the compacted set holds >= k untouched elements, so the k-th
 * largest processed value L over it is the global one (anything outside is
 * <= all of them); then everything with P >= L is collected again from
 * preimage(L), so ties created by the temperature's rounding are all seen. */
bool nextok__fz_top_k_finish(struct nextok__fz_run *r, size_t n, size_t k, bool keep)
{
    const float L = r->work[k - 1].logit;
    const float tau = nextok__fz_preimage(L, r->t);
    if (tau < r->tau) {
        if (!nextok__fz_compact(r, tau)) return false;
        n = nextok__fz_emit_top(r, k);
    }
    size_t keep_n = k;
    if (keep)
        while (keep_n < n && r->work[keep_n].logit == L) keep_n++;
    r->out = (struct nextok_token_data_array){r->work, keep_n, -1, true};
    return true;
}

bool nextok__fz_top_k(struct nextok__fz_run *r, size_t k, bool keep)
{
    if (!nextok__fz_collect_top(r, k)) return false;
    const size_t n = nextok__fz_emit_top(r, k);
    return nextok__fz_top_k_finish(r, n, k, keep);
}

/* The top candidate (temperature <= 0 keeps its logit; greedy sets p = 1). */
static bool top1(struct nextok__fz_run *r, bool greedy)
{
    if (!nextok__fz_top_k(r, 1, false)) return false;
    if (greedy) {
        r->work[0].p = 1.0f;
        r->out.selected = 0;
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
 * tau: min-p's survivors among 512 (V > NEXTOK__FZ_SAMPLE_N). */
static size_t sample_count_ge(const struct nextok__fz_run *r, float tau)
{
    const float *sm = nextok__fz_load_sample(r);
    size_t n = 0;
    for (size_t i = 0; i < NEXTOK__FZ_SAMPLE_N; i++) n += sm[i] >= tau;
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
static bool minp_dense_draw(struct nextok__fz_run *r, float thf, float tau, uint64_t seed)
{
    struct nextok__fused *f = r->f;
    if (!nextok__fz_dense_reserve(f)) return false; /* nothing here tests ids against tmask */
    /* the final values: after the temperature before min-p or the one
     * between it and dist (r->t_after; one of the two is 1) */
    const float t_all = r->t * r->t_after;
    const float m = fz_P(nextok__fz_processed_max(r), r->t_after), lo = fz_P(thf, r->t_after);
    /* the survivors' values lie in [lo, m], so unscaled weights are the
     * canonical ones times 2^N exactly when that range allows (dense_prepare) */
    const bool un = nextok__wref_unscaled_ok(lo, m);
    f->dist.cref = nextok__wref_of(m);
    f->dist.ref = un ? nextok__wref_unscaled : f->dist.cref;
    f->dist.N = un ? f->dist.cref.n : 0;
    f->dist.max = m;
    r->fk->weights_ge(r->row, r->dt, r->V, t_all, &f->dist.ref, tau, f->dist.w, f->dist.bsum, f->dist.cum);
    nextok__fz_cut_draw(r, thf, INT32_MAX, true, seed);
    return true;
}

/* min-p: keep (double)l >= max + ln p. For floats that is l >= float_ceil(thr),
 * and in raw space x >= preimage(float_ceil(thr)). Fewer than min_keep: the
 * top min_keep in sorted order (as min_p.c). dist_seed (not NULL when dist
 * follows and ends the chain): rows where more than 1 in 64 sampled
 * elements survive are drawn densely (*drawn). */
static bool min_p(struct nextok__fz_run *r, const struct nextok__p_min_p *p,
                       bool collected, const uint64_t *dist_seed, bool *drawn)
{
    *drawn = false;
    if (!collected && !nextok__fz_collect_top(r, 1)) return false;
    const double thr = (double)nextok__fz_processed_max(r) + log((double)p->p);
    const float thf = nextok__fz_float_ceil(thr); /* for a float v: (double)v >= thr iff v >= thf */
    const float tau = nextok__fz_preimage(thf, r->t);
    size_t mk = p->min_keep ? p->min_keep : 1;
    if (!nextok__fz_n_set_gt(r, mk)) mk = nextok__fz_n_set(r);
    /* min_keep: the candidates' maximum always survives, which meets 1; a
     * larger one is met when the sampled survivors less the touched ids
     * (which may have been lowered or removed) reach it */
    if (dist_seed && r->V >= MINP_DENSE_V && !r->mask) { /* (weights_ge knows no bitmask) */
        const size_t ns = sample_count_ge(r, tau);
        if (ns * MINP_DENSE_DIV > NEXTOK__FZ_SAMPLE_N && (mk <= 1 || ns >= mk + r->n_touched)) {
            *drawn = true;
            return minp_dense_draw(r, thf, tau, *dist_seed);
        }
    }
    if (tau < r->tau && !nextok__fz_compact(r, tau)) return false;
    /* the records in one SIMD pass (flat rows keep thousands: 4 % of a 128k
     * row at p = 0.05), the overrides merged in */
    const size_t n = nextok__fz_emit_ge(r, thr);
    if (n < mk && nextok__fz_n_set_gt(r, n)) return nextok__fz_top_k(r, mk, false);
    nextok__fz_set_out(r, n, false);
    return true;
}

/* Candidates (compacted set and overrides) with raw value >= th. */
static size_t count_raw_ge(const struct nextok__fz_run *r, float th)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nc; i++) n += r->f->cvals[i] >= th;
    for (size_t j = 0; j < r->f->ovr.n_ov; j++) n += r->f->ovr.ov[j].logit >= th;
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
static int min_p_top_k(struct nextok__fz_run *r, const struct nextok__p_min_p *mp,
                            const struct nextok_sampler *next)
{
    if (!next || nextok__sampler_kind(next) != NEXTOK__K_TOP_K) return 2;
    const struct nextok__p_top_k *q = next->ctx;
    if (q->k <= 0 || !nextok__fz_n_set_gt(r, (size_t)q->k + 1) || mp->min_keep > (size_t)q->k + 1) return 2;
    const size_t k = (size_t)q->k;
    if (!nextok__fz_collect_top(r, k + 1)) return -1;
    const double thr = (double)nextok__fz_processed_max(r) + log((double)mp->p);
    /* min-p keeps more than k iff at least k + 1 candidates have P >= thr,
     * i.e. raw x >= preimage(float_ceil(thr)) (as fuse_min_p). Counted over
     * the compacted set and the overrides first: when it holds fewer, every
     * element outside it is below all of its members (or it is the whole
     * set), so min-p keeps <= k; on peaked rows this is the usual case and
     * the selection and sort of emit_top would be thrown away. */
    if (count_raw_ge(r, nextok__fz_preimage(nextok__fz_float_ceil(thr), r->t)) < k + 1) return 0;
    const size_t n = nextok__fz_emit_top(r, k + 1); /* work[k] is needed */
    if (!((double)r->work[k].logit >= thr)) return 0; /* min-p keeps <= k: general path */
    return nextok__fz_top_k_finish(r, n, k, q->ties == NEXTOK_TIES_KEEP) ? 1 : -1;
}

/* The chain's σ exactly: two passes over the set in id order, as top_n_sigma.c. */
static double exact_sigma(const struct nextok__fz_run *r)
{
    nextok__fz_mark_touched(r);
    const struct nextok__fused *f = r->f;
    double mean = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        double acc = 0.0;
        size_t j = 0;
        for (size_t i = 0; i < r->V; i++) {
            float v;
            if (j < f->ovr.n_ov && f->ovr.ov[j].id == (int32_t)i) v = fz_P(f->ovr.ov[j++].logit, r->t);
            else if (f->ovr.tmask[i]) continue;
            else v = fz_P(nextok__row_get(r->row, r->dt, i), r->t);
            if (pass == 0) acc += v;
            else acc += ((double)v - mean) * ((double)v - mean);
        }
        if (pass == 0) mean = acc / (double)r->n_set;
        else return sqrt(acc / (double)r->n_set);
    }
    return 0.0;
}

/* A center for the σ sums: the mean of the finite values x over a strided
 * sample of the row (the 16 runs of 32 elements guess_tau reads; every
 * element of a short row), divided by t once, as a float; 0 when that is not
 * finite. Any finite center is correct (sigma_bounds holds for every center);
 * one near the mean of v = x / t keeps Σ(v - c)² near n σ², which keeps the
 * bound tight. Each run is summed on its own: one short chain of additions
 * per run, no division per element. */
static float sigma_center(const struct nextok__fz_run *r)
{
    const size_t runs = r->V <= NEXTOK__FZ_SAMPLE_N ? 1 : NEXTOK__FZ_SAMPLE_N / 32;
    const size_t len = r->V <= NEXTOK__FZ_SAMPLE_N ? r->V : 32, gap = r->V / runs;
    double acc = 0.0;
    size_t ns = 0;
    for (size_t b = 0; b < runs; b++) {
        double run = 0.0;
        for (size_t i = b * gap; i < b * gap + len; i++) {
            const float x = nextok__row_get(r->row, r->dt, i);
            if (!isfinite(x)) continue;
            run += x;
            ns++;
        }
        acc += run;
    }
    const float c = ns ? (float)(acc / (double)ns / (double)r->t) : 0.0f;
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
static bool sigma_bounds(const struct nextok__fz_run *r, size_t n_touched, double c, double s_row, double q_row,
                         double kf, double ua, double *lo, double *hi)
{
    const struct nextok__fused *f = r->f;
    const double n = (double)r->n_set, u = 0x1p-53;
    double s = s_row, q = q_row, T = q_row;
    for (size_t j = 0; j < n_touched; j++) {
        const double d = (double)(nextok__row_get(r->row, r->dt, (size_t)f->ovr.touched[j]) / r->t) - c;
        s -= d;
        q -= d * d;
        T += d * d;
    }
    for (size_t j = 0; j < f->ovr.n_ov; j++) {
        const double d = (double)fz_P(f->ovr.ov[j].logit, r->t) - c;
        s += d;
        q += d * d;
        T += d * d;
    }
    if (!isfinite(s) || !isfinite(q) || !isfinite(T)) return false;
    const double N = (double)(r->V + n_touched + f->ovr.n_ov);
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
static bool sigma(struct nextok__fz_run *r, const struct nextok__p_sigma *p,
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
        touched_max = nextok__row_get(r->row, r->dt, (size_t)f->ovr.touched[j]) == mx;
    float m;
    r->nc = 0;
    r->tau = INFINITY; /* nothing compacted yet */
    if (touched_max) {
        if (!nextok__fz_collect_top(r, 1)) return false;
        m = nextok__fz_processed_max(r);
    } else {
        m = fz_P(mx, r->t);
        for (size_t j = 0; j < f->ovr.n_ov; j++) m = fmaxf(m, fz_P(f->ovr.ov[j].logit, r->t));
    }
    const double nsig = (double)p->n;
    double slo, shi;
    bool exact = !sigma_bounds(r, n_touched, (double)center, s_row, q_row,
                               (NEXTOK__SUMSQ_BLOCK + 2) * 0x1p-24, 0x1p-149, &slo, &shi);
    if (!exact) {
        double tlo, thi;
        sigma_threshold(nsig, m, slo, shi, &tlo, &thi);
        const float tlf = nextok__fz_float_ceil(tlo); /* for a float v: (double)v >= tlo iff v >= tlf */
        const float tau = nextok__fz_preimage(tlf, r->t);
        if (tau < r->tau && !nextok__fz_compact(r, tau)) return false;
        size_t n = f->ovr.n_ov == 0 ? r->k->cands_ge(f->cids, f->cvals, r->nc, r->t, tlf, r->work)
                                : nextok__fz_emit_ge(r, tlo);
        for (size_t i = 0; i < n && !exact; i++)
            exact = (double)r->work[i].logit < thi;
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
                    const double v = (double)r->work[i].logit;
                    if (!(v >= tlo)) continue;
                    exact |= v < thi;
                    r->work[j++] = r->work[i];
                }
                n = j;
            }
        }
        if (!exact) {
            nextok__fz_set_out(r, n, false);
            return true;
        }
    }
    const double thr = (double)m - nsig * exact_sigma(r);
    const float tau = nextok__fz_preimage(nextok__fz_float_ceil(thr), r->t);
    if (tau < r->tau && !nextok__fz_compact(r, tau)) return false;
    nextok__fz_set_out(r, nextok__fz_emit_ge(r, thr), false);
    return true;
}

/* ---- routes ----------------------------------------------------------------- */

/* Whether the plan found a dist ending the chain after stage i (its seed
 * then; r->t_after: the temperature between them). */
static const uint64_t *draw_seed(struct nextok__fz_run *r, size_t i)
{
    const struct nextok__fz_step *st = &r->f->plan.steps[i];
    r->t_after = st->draw_after ? st->draw_t : 1.0f;
    return st->draw_after ? &st->draw_seed : NULL;
}

size_t nextok__fz_route_top_k(struct nextok__fz_run *r, size_t i)
{
    const struct nextok__p_top_k *q = r->stages[i]->ctx;
    if (!nextok__fz_n_set_gt(r, (size_t)q->k)) return NEXTOK__FZ_NEXT;
    return nextok__fz_top_k(r, (size_t)q->k, q->ties == NEXTOK_TIES_KEEP) ? i + 1 : NEXTOK__FZ_HANDBACK;
}

/* The greedy selector: the top candidate with p = 1. */
size_t nextok__fz_route_greedy(struct nextok__fz_run *r, size_t i)
{
    return top1(r, true) ? i + 1 : NEXTOK__FZ_HANDBACK;
}

/* A temperature <= 0: the top candidate, its logit kept. */
size_t nextok__fz_route_temp0(struct nextok__fz_run *r, size_t i)
{
    return top1(r, false) ? i + 1 : NEXTOK__FZ_HANDBACK;
}

size_t nextok__fz_route_min_p(struct nextok__fz_run *r, size_t i)
{
    const struct nextok__p_min_p *q = r->stages[i]->ctx;
    if (!nextok__fz_n_set_gt(r, 1)) return NEXTOK__FZ_NEXT;
    /* both: 1 done, 0 not applicable but the max is collected, -1 fail, 2 not tried */
    const int both = min_p_top_k(r, q, i + 1 < r->n_stages ? r->stages[i + 1] : NULL);
    if (both < 0) return NEXTOK__FZ_HANDBACK;
    if (both == 1) return i + 2;
    bool drawn = false;
    if (!min_p(r, q, both == 0, draw_seed(r, i), &drawn)) return NEXTOK__FZ_HANDBACK;
    return drawn ? r->n_stages : i + 1;
}

size_t nextok__fz_route_sigma(struct nextok__fz_run *r, size_t i)
{
    const struct nextok__p_sigma *q = r->stages[i]->ctx;
    if (nextok__fz_n_set(r) <= 1) return NEXTOK__FZ_NEXT; /* sigma's sums use the count */
    return sigma(r, q, r->n_touched) ? i + 1 : NEXTOK__FZ_HANDBACK;
}
