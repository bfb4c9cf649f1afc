/*
 * Token bitmask (docs/semantics.md, Processors): the allowed tokens of one
 * step as bits, in the layout XGrammar, llguidance and vLLM use: int32
 * words, token i allowed iff bit i % 32 (least significant first) of word
 * i / 32 is set, ceil(n_vocab / 32) words. It means what an allowed-token
 * list of those ids means; bits of ids past n_vocab are ignored.
 *
 * The words are borrowed, not copied (a grammar engine refills its mask
 * every step, and a copy would cost a pass over it): set before the step's
 * first sample, they are read by every sample, probs and apply of that
 * step, and forgotten when the chain accepts a token or resets. A step
 * without a mask is an error, never an unconstrained sample.
 */
#include "builtin.h"

struct bitmask_ctx {
    int32_t n_vocab;
    const uint32_t *words; /* NULL: no mask for this step */
};

static const char *bitmask_name(const struct nextok_sampler *s)
{
    (void)s;
    return "token_bitmask";
}

static inline bool allowed(const uint32_t *w, int32_t id)
{
    return (w[(uint32_t)id >> 5] >> ((uint32_t)id & 31u)) & 1u;
}

static nextok_status bitmask_apply(struct nextok_sampler *s, struct nextok_token_data_array *cur,
                                   uint64_t step)
{
    const struct bitmask_ctx *c = s->ctx;
    if (!c->words)
        return nextok_sampler_set_error(s, NEXTOK_ERR_STATE,
                                        "token_bitmask: no mask for step %llu (set one before each "
                                        "step's sample: nextok_chain_set_token_bitmask)",
                                        (unsigned long long)step);
    size_t w = 0;
    for (size_t i = 0; i < cur->size; i++)
        if (allowed(c->words, cur->data[i].id)) cur->data[w++] = cur->data[i];
    cur->size = w;
    cur->selected = -1;
    return NEXTOK_OK;
}

/* A new step needs its own mask. */
static nextok_status bitmask_accept(struct nextok_sampler *s, int32_t token)
{
    (void)token;
    ((struct bitmask_ctx *)s->ctx)->words = NULL;
    return NEXTOK_OK;
}

static void bitmask_reset(struct nextok_sampler *s) { ((struct bitmask_ctx *)s->ctx)->words = NULL; }

static nextok_status bitmask_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    return nextok__clone_params(s, sizeof(struct bitmask_ctx), out);
}

const struct nextok_sampler_i nextok__iface_token_bitmask = {
    .name = bitmask_name,
    .accept = bitmask_accept,
    .apply = bitmask_apply,
    .reset = bitmask_reset,
    .clone = bitmask_clone,
    .free = nextok__free_ctx,
};

/* The words of this step, or NULL (the fused path reads them). */
const uint32_t *nextok__bitmask_words(const struct nextok_sampler *s)
{
    return ((const struct bitmask_ctx *)s->ctx)->words;
}

static const struct nextok__stage_ops bitmask_ops = {.bitmask = nextok__bitmask_words};

nextok_status nextok__init_token_bitmask(struct nextok_sampler **out, const struct nextok__mem *mem,
                                         int32_t n_vocab, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must be non-NULL");
    *out = NULL;
    NEXTOK_FORWARD(nextok__check_vocab(n_vocab, err));
    struct bitmask_ctx *c = nextok__alloc(mem, sizeof *c);
    NEXTOK_RETURN_IF(!c, err, NEXTOK_ERR_NOMEM, "token_bitmask: out of memory");
    *c = (struct bitmask_ctx){n_vocab, NULL};
    return nextok__builtin_new(out, mem, &nextok__iface_token_bitmask, NEXTOK__K_TOKEN_BITMASK,
                               &bitmask_ops, c, err);
}

nextok_status nextok_sampler_init_token_bitmask(struct nextok_sampler **out, int32_t n_vocab,
                                                struct nextok_error *err)
{
    return nextok__init_token_bitmask(out, &nextok__mem_libc, n_vocab, err);
}

nextok_status nextok_sampler_set_token_bitmask(struct nextok_sampler *s, const int32_t *words,
                                               size_t n_words)
{
    if (!s || nextok__sampler_kind(s) != NEXTOK__K_TOKEN_BITMASK) return NEXTOK_ERR_INVALID_ARG;
    struct bitmask_ctx *c = s->ctx;
    const size_t need = ((size_t)c->n_vocab + 31) / 32;
    if (!words)
        return nextok_sampler_set_error(s, NEXTOK_ERR_INVALID_ARG, "token_bitmask: NULL words");
    if (n_words < need)
        return nextok_sampler_set_error(s, NEXTOK_ERR_INVALID_ARG,
                                        "token_bitmask: %zu words for %d tokens, need %zu", n_words,
                                        (int)c->n_vocab, need);
    c->words = (const uint32_t *)(const void *)words;
    return NEXTOK_OK;
}
