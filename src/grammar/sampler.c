/*
 * The grammar as a chain stage: a token-bitmask stage whose mask source is
 * a matcher (the stage asks it for each step's mask, passes it every
 * accepted token, resets and clones it with the chain). The fused path
 * then applies the mask inside its passes like any token bitmask.
 */
#include "matcher_internal.h"

static nextok_status src_fill(void *user, int32_t *words, size_t n_words, struct nextok_error *err)
{
    return nextok_matcher_fill_bitmask(user, words, n_words, NULL, err);
}

static nextok_status src_accept(void *user, int32_t token, struct nextok_error *err)
{
    return nextok_matcher_accept_token(user, token, err);
}

static void src_reset(void *user) { nextok_matcher_reset(user); }

static nextok_status src_allows(void *user, int32_t token, bool *allowed, struct nextok_error *err)
{
    if (token >= nextok_compiled_grammar_n_vocab(((struct nextok_matcher *)user)->cg)) {
        *allowed = false; /* a padding row of the model */
        return NEXTOK_OK;
    }
    return nextok_matcher_is_allowed(user, token, allowed, err);
}

static nextok_status src_clone(void *user, void **out, struct nextok_error *err)
{
    return nextok_matcher_clone((struct nextok_matcher **)out, user, err);
}

static void src_free(void *user) { nextok_matcher_free(user); }

void nextok_matcher_mask_source(struct nextok_matcher *m, struct nextok_mask_source *out)
{
    *out = (struct nextok_mask_source){m,         src_fill, src_accept, src_reset,
                                       src_clone, src_free, false,      src_allows};
}

struct nextok_matcher *nextok_mask_source_matcher(const struct nextok_mask_source *src)
{
    return src && src->fill == src_fill ? src->user : NULL;
}

nextok_status nextok_sampler_init_grammar(struct nextok_sampler **out,
                                          const struct nextok_compiled_grammar *cg, int32_t n_vocab,
                                          struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out || !cg, err, NEXTOK_ERR_INVALID_ARG, "out and cg: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(n_vocab < cg->n_vocab, err, NEXTOK_ERR_VOCAB_SIZE,
                     "n_vocab %d: fewer logits than the grammar's vocabulary has tokens (%d)",
                     n_vocab, cg->n_vocab);
    struct nextok_matcher *m = NULL;
    struct nextok_sampler *s = NULL;
    NEXTOK_FORWARD(nextok_matcher_init(&m, cg, err));
    nextok_status rc = nextok_sampler_init_token_bitmask(&s, n_vocab, err);
    struct nextok_mask_source src;
    nextok_matcher_mask_source(m, &src);
    if (rc == NEXTOK_OK && (rc = nextok_sampler_set_mask_source(s, &src)) != NEXTOK_OK)
        nextok__err(err, rc, "%s", nextok_sampler_errmsg(s));
    if (rc != NEXTOK_OK) {
        nextok_sampler_free(s);
        nextok_matcher_free(m);
        return rc;
    }
    *out = s;
    return NEXTOK_OK;
}
