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
    /* A mask source (nextok_sampler_set_mask_source): asked for the step's
     * mask when none was set, into own; told of every accepted token. */
    struct nextok_mask_source src;
    bool has_src;
    uint32_t *own;
    uint32_t *all; /* every bit set: the unmasked first try of check_first */
    struct nextok__mem mem;
};

/* The source's mask for this step into c->own, made the step's words. */
static nextok_status fill_from_source(struct nextok_sampler *s, struct bitmask_ctx *c)
{
    struct nextok_error err;
    err.msg[0] = '\0';
    size_t n_words = ((size_t)c->n_vocab + 31) / 32;
    nextok_status rc = c->src.fill(c->src.user, (int32_t *)(void *)c->own, n_words, &err);
    if (rc != NEXTOK_OK)
        return nextok_sampler_set_error(s, rc, "token_bitmask: mask source: %s", err.msg);
    c->words = c->own;
    return NEXTOK_OK;
}

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
    struct bitmask_ctx *c = s->ctx;
    if (!c->words && c->has_src) NEXTOK_FORWARD(fill_from_source(s, c));
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

/* A new step needs its own mask; the source follows the token. */
static nextok_status bitmask_accept(struct nextok_sampler *s, int32_t token)
{
    struct bitmask_ctx *c = s->ctx;
    if (c->has_src) {
        struct nextok_error err;
        err.msg[0] = '\0';
        nextok_status rc = c->src.accept(c->src.user, token, &err);
        if (rc != NEXTOK_OK)
            return nextok_sampler_set_error(s, rc, "token_bitmask: mask source: %s", err.msg);
    }
    c->words = NULL;
    return NEXTOK_OK;
}

static void bitmask_reset(struct nextok_sampler *s)
{
    struct bitmask_ctx *c = s->ctx;
    c->words = NULL;
    if (c->has_src && c->src.reset) c->src.reset(c->src.user);
}

static void drop_source(struct bitmask_ctx *c)
{
    if (c->has_src && c->src.free) c->src.free(c->src.user);
    nextok__free(&c->mem, c->own);
    nextok__free(&c->mem, c->all);
    c->has_src = false;
    c->own = c->all = NULL;
}

static void bitmask_free(struct nextok_sampler *s)
{
    drop_source(s->ctx);
    nextok__free_ctx(s);
}

static nextok_status bitmask_clone(const struct nextok_sampler *s, struct nextok_sampler **out)
{
    const struct bitmask_ctx *c = s->ctx;
    if (c->has_src && !c->src.clone)
        return nextok_sampler_set_error((struct nextok_sampler *)s, NEXTOK_ERR_UNSUPPORTED,
                                        "token_bitmask: the mask source cannot be cloned");
    struct bitmask_ctx *d = NULL;
    nextok_status rc = nextok__clone_params(s, sizeof *c, out);
    if (rc != NEXTOK_OK || !c->has_src) return rc;
    d = (*out)->ctx;
    d->has_src = false, d->own = d->all = NULL, d->words = NULL; /* the clone's own, below */
    struct nextok_error err;
    err.msg[0] = '\0';
    void *user = NULL;
    size_t n_words = ((size_t)c->n_vocab + 31) / 32;
    d->own = nextok__alloc_array(&c->mem, n_words, sizeof *d->own);
    d->all = c->all ? nextok__memdup(&c->mem, c->all, n_words * sizeof *d->all) : NULL;
    rc = d->own && (d->all || !c->all) ? c->src.clone(c->src.user, &user, &err) : NEXTOK_ERR_NOMEM;
    if (rc != NEXTOK_OK) {
        nextok_sampler_free(*out);
        *out = NULL;
        return nextok_sampler_set_error((struct nextok_sampler *)s, rc,
                                        "token_bitmask: cloning the mask source: %s",
                                        rc == NEXTOK_ERR_NOMEM && !err.msg[0] ? "out of memory" : err.msg);
    }
    d->src = c->src;
    d->src.user = user;
    d->has_src = true;
    if (c->words == c->all) {
        d->words = d->all;
    } else if (c->words == c->own) { /* this step's mask, already filled */
        memcpy(d->own, c->own, n_words * sizeof *d->own);
        d->words = d->own;
    } else {
        d->words = c->words;
    }
    return NEXTOK_OK;
}

const struct nextok_sampler_i nextok__iface_token_bitmask = {
    .name = bitmask_name,
    .accept = bitmask_accept,
    .apply = bitmask_apply,
    .reset = bitmask_reset,
    .clone = bitmask_clone,
    .free = bitmask_free,
};

/* The words of this step, or NULL (the fused path reads them). A stage
 * with a mask source fills them here; a failure leaves NULL and the plain
 * chain's apply reports it. */
const uint32_t *nextok__bitmask_words(const struct nextok_sampler *s)
{
    struct bitmask_ctx *c = s->ctx;
    if (!c->words && c->has_src) (void)fill_from_source((struct nextok_sampler *)s, c);
    return c->words;
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
    memset(c, 0, sizeof *c);
    c->n_vocab = n_vocab;
    c->mem = *mem;
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

nextok_status nextok_sampler_set_mask_source(struct nextok_sampler *s,
                                             const struct nextok_mask_source *src)
{
    if (!s || nextok__sampler_kind(s) != NEXTOK__K_TOKEN_BITMASK) return NEXTOK_ERR_INVALID_ARG;
    struct bitmask_ctx *c = s->ctx;
    if (src && (!src->fill || !src->accept))
        return nextok_sampler_set_error(s, NEXTOK_ERR_INVALID_ARG,
                                        "token_bitmask: a mask source needs fill and accept");
    if (src && src->check_first && !src->allows)
        return nextok_sampler_set_error(s, NEXTOK_ERR_INVALID_ARG,
                                        "token_bitmask: check_first needs allows");
    uint32_t *own = NULL, *all = NULL;
    size_t n_words = ((size_t)c->n_vocab + 31) / 32;
    if (src) {
        own = nextok__alloc_array(&c->mem, n_words, sizeof *own);
        all = src->check_first ? nextok__alloc_array(&c->mem, n_words, sizeof *all) : NULL;
        if (!own || (src->check_first && !all)) {
            nextok__free(&c->mem, own);
            nextok__free(&c->mem, all);
            return nextok_sampler_set_error(s, NEXTOK_ERR_NOMEM, "token_bitmask: out of memory");
        }
        if (all) memset(all, 0xFF, n_words * sizeof *all);
    }
    drop_source(c);
    c->words = NULL;
    if (src) c->src = *src, c->has_src = true, c->own = own, c->all = all;
    return NEXTOK_OK;
}

const struct nextok_mask_source *nextok_sampler_mask_source(const struct nextok_sampler *s)
{
    if (!s || nextok__sampler_kind(s) != NEXTOK__K_TOKEN_BITMASK) return NULL;
    const struct bitmask_ctx *c = s->ctx;
    return c->has_src ? &c->src : NULL;
}

/* check_first (chain.c): whether this step may be tried unmasked (a source
 * asks for it and no mask was set or filled yet). */
bool nextok__bitmask_check_first(const struct nextok_sampler *s)
{
    const struct bitmask_ctx *c = s->ctx;
    return c->has_src && c->src.check_first && !c->words;
}

/* Make this step's mask all ones (on) or none again (off). */
void nextok__bitmask_unmasked(struct nextok_sampler *s, bool on)
{
    struct bitmask_ctx *c = s->ctx;
    c->words = on ? c->all : NULL;
}

/* The source's verdict on one token (check_first). */
nextok_status nextok__bitmask_allows(struct nextok_sampler *s, int32_t token, bool *allowed)
{
    struct bitmask_ctx *c = s->ctx;
    struct nextok_error err;
    err.msg[0] = '\0';
    nextok_status rc = c->src.allows(c->src.user, token, allowed, &err);
    if (rc != NEXTOK_OK)
        return nextok_sampler_set_error(s, rc, "token_bitmask: mask source: %s", err.msg);
    return NEXTOK_OK;
}
