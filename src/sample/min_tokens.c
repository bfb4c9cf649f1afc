/*
 * min tokens (docs/semantics.md, Processors; vLLM's and HF's min_tokens /
 * MinNewTokensLengthLogitsProcessor): while fewer than min_tokens output tokens
 * were accepted, remove the end-of-generation ids.
 *
 * The eog list is short (a handful of ids), so it is kept sorted with a 64-bit
 * filter on id & 63: the O(size) fallback pass rejects almost every candidate
 * with one bit test and binary-searches the rest.
 */
#include "proc_common.h"

static nextok_status min_tokens_check(struct nextok_sampler *s, int32_t token);
static nextok_status min_tokens_set_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n);

/* accept and set_prompt only check ids before counting: the checks are the
 * reserve steps. */
static const struct nextok__stage_ops min_tokens_ops = {
    .touched = nextok__min_tokens_touched,
    .reserve = min_tokens_check,
    .reserve_prompt = min_tokens_set_prompt,
};

struct min_tokens_ctx {
    struct nextok__p_min_tokens p; /* first: read by the fused planner            */
    int32_t *eog;                  /* ascending, unique                           */
    size_t   n_eog;
    uint64_t filter;               /* bit (id & 63) set for every eog id          */
};

static int cmp_i32(const void *pa, const void *pb)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

static bool is_eog(const struct min_tokens_ctx *c, int32_t id)
{
    if (!((c->filter >> ((uint32_t)id & 63)) & 1)) return false;
    size_t lo = 0, hi = c->n_eog;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->eog[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n_eog && c->eog[lo] == id;
}

static bool gated(const struct min_tokens_ctx *c)
{
    return c->n_eog > 0 && c->p.n_accepted < c->p.min_tokens;
}

static const char *min_tokens_name(const struct nextok_sampler *s)
{
    (void)s;
    return "min_tokens";
}

static nextok_status min_tokens_check(struct nextok_sampler *s, int32_t token)
{
    const struct min_tokens_ctx *c = s->ctx;
    return nextok__proc_check_token(s, c->p.n_vocab, token);
}

static nextok_status min_tokens_accept(struct nextok_sampler *s, int32_t token)
{
    struct min_tokens_ctx *c = s->ctx;
    NEXTOK_FORWARD(min_tokens_check(s, token));
    if (c->p.n_accepted < INT32_MAX) c->p.n_accepted++; /* saturate: past min_tokens it no longer matters */
    return NEXTOK_OK;
}

/* The prompt does not count towards min_tokens; only check its ids. */
static nextok_status min_tokens_set_prompt(struct nextok_sampler *s, const int32_t *ids, size_t n)
{
    const struct min_tokens_ctx *c = s->ctx;
    return nextok__proc_check_prompt(s, c->p.n_vocab, ids, n);
}

static bool all_at_identity(const struct min_tokens_ctx *c, const struct nextok_token_data_array *cur)
{
    for (size_t k = 0; k < c->n_eog; k++)
        if (!nextok__at_identity(cur, c->eog[k])) return false;
    return true;
}

static nextok_status min_tokens_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                      uint64_t step)
{
    (void)step;
    const struct min_tokens_ctx *c = s->ctx;
    if (!gated(c)) return NEXTOK_OK;
    if (all_at_identity(c, cur)) {
        for (size_t k = 0; k < c->n_eog; k++) cur->data[c->eog[k]].id = NEXTOK__REMOVED;
        nextok__compact_marked(cur, (size_t)c->eog[0]);
        return NEXTOK_OK;
    }
    size_t w = 0;
    for (size_t i = 0; i < cur->size; i++)
        if (!is_eog(c, cur->data[i].id)) cur->data[w++] = cur->data[i];
    cur->size = w;
    cur->selected = -1;
    return NEXTOK_OK;
}

static void min_tokens_reset(struct nextok_sampler *s)
{
    struct min_tokens_ctx *c = s->ctx;
    c->p.n_accepted = 0;
}

static void min_tokens_free(struct nextok_sampler *s)
{
    struct min_tokens_ctx *c = s->ctx;
    if (!c) return;
    nextok__free(&s->mem, c->eog);
    nextok__free(&s->mem, c);
}

static nextok_status min_tokens_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    const struct min_tokens_ctx *c = s->ctx;
    struct min_tokens_ctx *d = nextok__alloc(&s->mem, sizeof *d);
    int32_t *eog = nextok__memdup(&s->mem, c->eog, c->n_eog * sizeof *eog);
    if (!d || !eog) {
        nextok__free(&s->mem, d);
        nextok__free(&s->mem, eog);
        return NEXTOK_ERR_NOMEM;
    }
    *d = *c;
    d->eog = eog;
    return nextok__builtin_new(out, &s->mem, s->iface, (enum nextok__kind)s->kind, s->ops, d, NULL);
}

const struct nextok_sampler_i nextok__iface_min_tokens = {
    min_tokens_name, min_tokens_accept, min_tokens_apply, min_tokens_reset,
    min_tokens_clone, min_tokens_free, min_tokens_set_prompt,
};

static nextok_status check_eog(int32_t n_vocab, const int32_t *eog_ids, size_t n_eog,
                               struct nextok_error *err)
{
    NEXTOK_FORWARD(nextok__check_vocab(n_vocab, err));
    NEXTOK_RETURN_IF(!eog_ids && n_eog > 0, err, NEXTOK_ERR_INVALID_ARG,
                     "eog_ids: NULL with n_eog = %zu", n_eog);
    for (size_t i = 0; i < n_eog; i++)
        NEXTOK_RETURN_IF(eog_ids[i] < 0 || eog_ids[i] >= n_vocab, err, NEXTOK_ERR_TOKEN_RANGE,
                         "eog_ids[%zu]: %d outside [0, %d)", i, (int)eog_ids[i], (int)n_vocab);
    return NEXTOK_OK;
}

/* Sort and dedupe the eog ids into c->eog and build the bit filter. */
static void set_eog(struct min_tokens_ctx *c, const int32_t *eog_ids, size_t n_eog)
{
    if (n_eog) memcpy(c->eog, eog_ids, n_eog * sizeof *c->eog);
    nextok__sort(c->eog, n_eog, sizeof *c->eog, cmp_i32);
    size_t u = 0;
    for (size_t i = 0; i < n_eog; i++)
        if (u == 0 || c->eog[i] != c->eog[u - 1]) c->eog[u++] = c->eog[i];
    c->n_eog = u;
    c->filter = 0;
    for (size_t k = 0; k < u; k++) c->filter |= (uint64_t)1 << ((uint32_t)c->eog[k] & 63);
}

nextok_status nextok__init_min_tokens(struct nextok_sampler **out, const struct nextok__mem *mem,
                                      int32_t n_vocab, int32_t min_tokens, const int32_t *eog_ids,
                                      size_t n_eog, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(check_eog(n_vocab, eog_ids, n_eog, err));
    struct min_tokens_ctx *c = nextok__calloc(mem, 1, sizeof *c);
    int32_t *eog = nextok__alloc_array(mem, n_eog ? n_eog : 1, sizeof *eog);
    if (!c || !eog) {
        nextok__free(mem, c);
        nextok__free(mem, eog);
        return nextok__err(err, NEXTOK_ERR_NOMEM, "out of memory creating min_tokens");
    }
    c->p.n_vocab = n_vocab;
    c->p.min_tokens = min_tokens; /* <= 0: never gated */
    c->p.n_accepted = 0;
    c->eog = eog;
    set_eog(c, eog_ids, n_eog);
    return nextok__builtin_new(out, mem, &nextok__iface_min_tokens, NEXTOK__K_MIN_TOKENS,
                               &min_tokens_ops, c, err);
}

nextok_status nextok_sampler_init_min_tokens(struct nextok_sampler **out, int32_t n_vocab,
                                             int32_t min_tokens, const int32_t *eog_ids,
                                             size_t n_eog, struct nextok_error *err)
{
    return nextok__init_min_tokens(out, &nextok__mem_libc, n_vocab, min_tokens, eog_ids, n_eog,
                                   err);
}

size_t nextok__min_tokens_touched(const struct nextok_sampler *s, int32_t *ids, size_t cap)
{
    if (!s || s->iface != &nextok__iface_min_tokens) return 0;
    const struct min_tokens_ctx *c = s->ctx;
    if (!gated(c)) return 0;
    size_t m = c->n_eog < cap ? c->n_eog : cap;
    if (m) memcpy(ids, c->eog, m * sizeof *ids);
    return c->n_eog;
}
