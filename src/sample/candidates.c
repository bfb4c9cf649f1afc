/* Candidate-array helpers: ordering, softmax, filtering, input preparation. */
#include "../common/internal.h"

static int cmp_cand(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    if (a->logit != b->logit) return a->logit > b->logit ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

void nextok__cand_sort(struct nextok_token_data_array *cur)
{
    if (!cur->sorted && cur->size > 1)
        nextok__sort(cur->data, cur->size, sizeof *cur->data, cmp_cand);
    cur->sorted = true;
}

/* Min-heap on "before" order, so the root is the worst of the current top k. */
static void heap_sift_down(struct nextok_token_data *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && nextok__cand_before(&h[m], &h[l])) m = l;
        if (r < n && nextok__cand_before(&h[m], &h[r])) m = r;
        if (m == i) return;
        struct nextok_token_data t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

void nextok__cand_partial_sort(struct nextok_token_data_array *cur, size_t k)
{
    if (cur->sorted || k == 0) return;
    if (k >= cur->size / 4) { /* cheaper to sort everything */
        nextok__cand_sort(cur);
        return;
    }
    struct nextok_token_data *d = cur->data;
    for (size_t i = k / 2; i-- > 0;) heap_sift_down(d, k, i);
    for (size_t i = k; i < cur->size; i++) {
        if (nextok__cand_before(&d[i], &d[0])) {
            struct nextok_token_data t = d[0];
            d[0] = d[i];
            d[i] = t;
            heap_sift_down(d, k, 0);
        }
    }
    nextok__sort(d, k, sizeof *d, cmp_cand);
}

size_t nextok__cand_argmax(const struct nextok_token_data_array *cur)
{
    size_t best = 0;
    for (size_t i = 1; i < cur->size; i++)
        if (nextok__cand_before(&cur->data[i], &cur->data[best])) best = i;
    return best;
}

float nextok__cand_max_logit(const struct nextok_token_data_array *cur)
{
    float m = cur->data[0].logit;
    for (size_t i = 1; i < cur->size; i++)
        if (cur->data[i].logit > m) m = cur->data[i].logit;
    return m;
}

double nextok__cand_softmax(struct nextok_token_data_array *cur)
{
    if (cur->size == 0) return 0.0;
    const double m = cur->sorted ? cur->data[0].logit : nextok__cand_max_logit(cur);
    double sum = 0.0;
    for (size_t i = 0; i < cur->size; i++) sum += exp((double)cur->data[i].logit - m);
    for (size_t i = 0; i < cur->size; i++)
        cur->data[i].p = (float)(exp((double)cur->data[i].logit - m) / sum);
    return sum;
}

void nextok__cand_filter(struct nextok_token_data_array *cur, const unsigned char *keep)
{
    size_t j = 0;
    for (size_t i = 0; i < cur->size; i++)
        if (keep[i]) cur->data[j++] = cur->data[i];
    cur->size = j;
    cur->selected = -1;
}

nextok_status nextok_candidates_prepare(struct nextok_token_data_array *cur,
                                        enum nextok_nan_policy nan_policy)
{
    if (!cur || (!cur->data && cur->size > 0)) return NEXTOK_ERR_INVALID_ARG;
    size_t n_pos_inf = 0, n_finite = 0;
    for (size_t i = 0; i < cur->size; i++) {
        float l = cur->data[i].logit;
        if (isnan(l)) {
            if (nan_policy == NEXTOK_NAN_ERROR) return NEXTOK_ERR_NAN;
        } else if (isinf(l)) {
            n_pos_inf += l > 0;
        } else {
            n_finite++;
        }
    }
    if (n_pos_inf + n_finite == 0) return NEXTOK_ERR_NO_CANDIDATES;
    if (n_pos_inf == 0 && n_finite == cur->size) return NEXTOK_OK; /* common case */
    size_t j = 0;
    for (size_t i = 0; i < cur->size; i++) {
        struct nextok_token_data d = cur->data[i];
        bool keep = n_pos_inf ? (isinf(d.logit) && d.logit > 0) : isfinite(d.logit);
        if (!keep) continue;
        if (n_pos_inf) d.logit = 0.0f;
        cur->data[j++] = d;
    }
    cur->size = j;
    cur->selected = -1;
    return NEXTOK_OK;
}
