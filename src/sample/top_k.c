/*
 * Top-k (Fan et al. 2018, "Hierarchical Neural Story Generation"): keep the k
 * highest logits. Two tie rules, as engines differ: EXACT keeps exactly k in
 * sorted order (llama.cpp); KEEP also keeps every candidate tied with the
 * k-th logit (vLLM, HF, FlashInfer compare against the k-th value).
 */
#include "builtin.h"

static int cmp_id(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

/*
 * The first k candidates are the sorted top k; move the others tied with the
 * k-th logit right behind them. All have the same logit, so id ascending
 * keeps the whole prefix sorted. Returns the new prefix length.
 */
static size_t gather_ties(struct nextok_token_data_array *cur, size_t k)
{
    const float v = cur->data[k - 1].logit;
    size_t n = k;
    for (size_t i = k; i < cur->size; i++) {
        if (cur->data[i].logit != v) continue;
        struct nextok_token_data t = cur->data[n];
        cur->data[n++] = cur->data[i];
        cur->data[i] = t;
    }
    if (n - k > 1) nextok__sort(cur->data + k, n - k, sizeof *cur->data, cmp_id);
    return n;
}

static nextok_status top_k_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                 uint64_t step)
{
    (void)step;
    const struct nextok__p_top_k *c = s->ctx;
    if (c->k <= 0 || (size_t)c->k >= cur->size) return NEXTOK_OK;
    const size_t k = (size_t)c->k;
    nextok__cand_partial_sort(cur, k);
    const size_t n = c->ties == NEXTOK_TIES_KEEP ? gather_ties(cur, k) : k;
    cur->size = n;
    cur->sorted = true;
    cur->selected = -1;
    return NEXTOK_OK;
}

static const char *top_k_name(const struct nextok_sampler *s)
{
    (void)s;
    return "top-k";
}

static nextok_status top_k_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct nextok__p_top_k), out);
}

const struct nextok_sampler_i nextok__iface_top_k = {
    .name = top_k_name,
    .apply = top_k_apply,
    .clone = top_k_clone,
    .free = nextok__free_ctx,
};

nextok_status nextok__init_top_k(struct nextok_sampler **out, const struct nextok__mem *mem,
                                 int32_t k, enum nextok_ties ties, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(ties != NEXTOK_TIES_KEEP && ties != NEXTOK_TIES_EXACT, err,
                     NEXTOK_ERR_INVALID_ARG, "ties: unknown value %d", (int)ties);
    struct nextok__p_top_k *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "top_k: out of memory");
    *c = (struct nextok__p_top_k){k, ties};
    return nextok__builtin_new(out, mem, &nextok__iface_top_k, NEXTOK__K_TOP_K, NULL, c, err);
}

nextok_status nextok_sampler_init_top_k(struct nextok_sampler **out, int32_t k,
                                        enum nextok_ties ties, struct nextok_error *err)
{
    return nextok__init_top_k(out, &nextok__mem_libc, k, ties, err);
}
