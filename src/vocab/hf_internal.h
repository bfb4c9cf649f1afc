/* What the Hugging Face readers share: hf_json.c (tokenizer.json) calls
 * hf_decoder.c (its "decoder") and hf_config.c (tokenizer_config.json,
 * generation_config.json); neither calls back. Not installed, not API. */
#ifndef NEXTOK_HF_INTERNAL_H
#define NEXTOK_HF_INTERNAL_H

#include "../common/json.h"
#include "vocab_internal.h"

/* obj's member key, or NO_NODE when it is absent or null: in these files an
 * explicit null means the same as leaving the member out. */
static inline uint32_t nextok__hf_get(const struct nextok__json *d, uint32_t obj, const char *key)
{
    uint32_t v = nextok__json_get(d, obj, key);
    return nextok__json_type(d, v) == NEXTOK__JSON_NULL ? NEXTOK__JSON_NO_NODE : v;
}

/* Whether v is the string s (byte for byte). */
static inline bool nextok__hf_is(const struct nextok__json *d, uint32_t v, const char *s)
{
    size_t n;
    const char *t = nextok__json_str(d, v, &n);
    return t && n == strlen(s) && memcmp(t, s, n) == 0;
}

static inline bool nextok__hf_true(const struct nextok__json *d, uint32_t v)
{
    return nextok__json_type(d, v) == NEXTOK__JSON_TRUE;
}

static inline bool nextok__hf_bool(const struct nextok__json *d, uint32_t v)
{
    enum nextok__json_type t = nextok__json_type(d, v);
    return t == NEXTOK__JSON_TRUE || t == NEXTOK__JSON_FALSE;
}

/* tokenizer.json's "decoder" (root: the document's top-level object). */
nextok_status nextok__hf_read_decoder(const struct nextok__json *d, uint32_t root,
                                      struct nextok__decoder *dec, struct nextok_error *err);

enum nextok__hf_model { HF_BPE, HF_UNIGRAM, HF_WORDPIECE };

/* The normalizer, pre_tokenizer and model options into v->enc (the
 * Unigram scores are the reader's: hf_json.c). Fails only on NOMEM. */
nextok_status nextok__hf_read_encoder(const struct nextok__json *d, uint32_t root,
                                      enum nextok__hf_model kind, struct nextok_vocab *v,
                                      struct nextok_error *err);

/* tokenizer_config.json: special tokens by name, add_bos/eos_token. */
nextok_status nextok__hf_read_tokenizer_config(struct nextok_vocab *v, const char *text, size_t n,
                                               struct nextok_error *err);

/* generation_config.json: special ids; eos_token_id's ids (up to cap) go to
 * eos[0, *n_eos) for the end-of-generation set. */
nextok_status nextok__hf_read_generation_config(struct nextok_vocab *v, const char *text, size_t n,
                                                int32_t *eos, size_t cap, size_t *n_eos,
                                                struct nextok_error *err);

#endif /* NEXTOK_HF_INTERNAL_H */
