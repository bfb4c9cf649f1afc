/*
 * tiny_model.h - writes a small llama-architecture GGUF model with random
 * weights, so that the adapter tests can run llama.cpp's real decode loop
 * (llama_decode, llama_sampler_sample) without a model file in the repo.
 *
 * The vocabulary (tokenizer.* keys) is copied from a vocabulary-only GGUF
 * file (tests/data/vocab/gguf/ggml-vocab-gpt-2.gguf: 50257 tokens); the
 * network is one block of width 32, all F32, weights uniform in
 * [-scale, scale] from a fixed seed, the output layer scaled so that the
 * logits spread like a model's (a few units). The text it writes is
 * meaningless; the logits are real llama.cpp outputs.
 *
 * Header-only, C11, over ggml.h and gguf.h (llama.cpp's own headers).
 */
#ifndef NEXTOK_TEST_TINY_MODEL_H
#define NEXTOK_TEST_TINY_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"

#define TINY_EMBD 32
#define TINY_HEAD 4
#define TINY_FF   64

/* > the vocabulary file's size: pad the vocabulary to this many tokens
 * (the benchmark's V = 128256 row); 0: the file's vocabulary. */
static int64_t tiny_vocab_pad = 0;

static uint64_t tiny_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A 1-D or 2-D F32 tensor named name, filled: value `fill` if scale is 0,
 * else uniform in [-scale, scale]. */
static struct ggml_tensor *tiny_tensor(struct ggml_context *g, struct gguf_context *out,
                                       const char *name, int64_t ne0, int64_t ne1, float fill,
                                       float scale, uint64_t *rng)
{
    struct ggml_tensor *t = ne1 ? ggml_new_tensor_2d(g, GGML_TYPE_F32, ne0, ne1)
                                : ggml_new_tensor_1d(g, GGML_TYPE_F32, ne0);
    ggml_set_name(t, name);
    float *d = (float *)t->data;
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++)
        d[i] =
            scale == 0 ? fill : (float)(((double)(tiny_rng(rng) >> 11) * 0x1p-53 * 2 - 1) * scale);
    gguf_add_tensor(out, t);
    return t;
}

/* Write the model to path. nan_token >= 0: that token's row of the output
 * layer is NaN, so its logit is NaN at every step (for the error tests).
 * Returns 0 on success, -1 (with a message on stderr) on failure. */
static int tiny_model_write(const char *vocab_path, const char *path, uint64_t seed,
                            int32_t nan_token)
{
    struct gguf_init_params vp = {true, NULL};
    struct gguf_context *voc = gguf_init_from_file(vocab_path, vp);
    if (!voc) {
        fprintf(stderr, "tiny_model: cannot read %s\n", vocab_path);
        return -1;
    }
    const int64_t kt = gguf_find_key(voc, "tokenizer.ggml.tokens");
    if (kt < 0) {
        fprintf(stderr, "tiny_model: %s has no tokenizer.ggml.tokens\n", vocab_path);
        gguf_free(voc);
        return -1;
    }
    int64_t n_vocab = (int64_t)gguf_get_arr_n(voc, kt);

    struct gguf_context *out = gguf_init_empty();
    gguf_set_kv(out, voc); /* the tokenizer (and the vocabulary file's other keys) */
    gguf_free(voc);
    if (tiny_vocab_pad > n_vocab) { /* more tokens: "<|pad_N|>" after the real ones */
        const int64_t n = tiny_vocab_pad;
        const char **tok = (const char **)malloc((size_t)n * sizeof *tok);
        char *text = (char *)malloc((size_t)n * 32);
        int32_t *type = (int32_t *)malloc((size_t)n * sizeof *type);
        struct gguf_init_params vp2 = {true, NULL};
        voc = gguf_init_from_file(vocab_path, vp2);
        for (int64_t i = 0; i < n; i++) {
            if (i < n_vocab) {
                tok[i] = gguf_get_arr_str(voc, kt, (size_t)i);
            } else {
                snprintf(text + i * 32, 32, "<|pad_%d|>", (int)i);
                tok[i] = text + i * 32;
            }
            type[i] = i < n_vocab ? 1 : 5; /* normal; unused */
        }
        gguf_set_arr_str(out, "tokenizer.ggml.tokens", tok, (size_t)n);
        gguf_set_arr_data(out, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, type, (size_t)n);
        gguf_free(voc);
        free(tok), free(text), free(type);
        n_vocab = n;
    }
    gguf_set_val_str(out, "general.architecture", "llama");
    gguf_set_val_str(out, "general.name", "nextok tiny random model (tests only)");
    gguf_set_val_u32(out, "llama.context_length", 256);
    gguf_set_val_u32(out, "llama.embedding_length", TINY_EMBD);
    gguf_set_val_u32(out, "llama.block_count", 1);
    gguf_set_val_u32(out, "llama.feed_forward_length", TINY_FF);
    gguf_set_val_u32(out, "llama.attention.head_count", TINY_HEAD);
    gguf_set_val_u32(out, "llama.attention.head_count_kv", TINY_HEAD);
    gguf_set_val_u32(out, "llama.rope.dimension_count", TINY_EMBD / TINY_HEAD);
    gguf_set_val_f32(out, "llama.attention.layer_norm_rms_epsilon", 1e-5f);

    const size_t mem = (size_t)(2 * n_vocab * TINY_EMBD + 4 * TINY_EMBD * TINY_EMBD +
                                3 * TINY_EMBD * TINY_FF + 8 * TINY_EMBD) *
                           sizeof(float) +
                       32 * ggml_tensor_overhead();
    struct ggml_init_params gp = {mem, NULL, false};
    struct ggml_context *g = ggml_init(gp);
    uint64_t rng = seed;
    const float w = 0.3f;
    tiny_tensor(g, out, "token_embd.weight", TINY_EMBD, n_vocab, 0, 1.0f, &rng);
    tiny_tensor(g, out, "output_norm.weight", TINY_EMBD, 0, 1.0f, 0, &rng);
    struct ggml_tensor *o = tiny_tensor(g, out, "output.weight", TINY_EMBD, n_vocab, 0, 0.6f, &rng);
    if (nan_token >= 0 && nan_token < n_vocab)
        for (int i = 0; i < TINY_EMBD; i++)
            ((float *)o->data)[(int64_t)nan_token * TINY_EMBD + i] = NAN;
    tiny_tensor(g, out, "blk.0.attn_norm.weight", TINY_EMBD, 0, 1.0f, 0, &rng);
    tiny_tensor(g, out, "blk.0.attn_q.weight", TINY_EMBD, TINY_EMBD, 0, w, &rng);
    tiny_tensor(g, out, "blk.0.attn_k.weight", TINY_EMBD, TINY_EMBD, 0, w, &rng);
    tiny_tensor(g, out, "blk.0.attn_v.weight", TINY_EMBD, TINY_EMBD, 0, w, &rng);
    tiny_tensor(g, out, "blk.0.attn_output.weight", TINY_EMBD, TINY_EMBD, 0, w, &rng);
    tiny_tensor(g, out, "blk.0.ffn_norm.weight", TINY_EMBD, 0, 1.0f, 0, &rng);
    tiny_tensor(g, out, "blk.0.ffn_gate.weight", TINY_EMBD, TINY_FF, 0, w, &rng);
    tiny_tensor(g, out, "blk.0.ffn_up.weight", TINY_EMBD, TINY_FF, 0, w, &rng);
    tiny_tensor(g, out, "blk.0.ffn_down.weight", TINY_FF, TINY_EMBD, 0, w, &rng);
    const bool ok = gguf_write_to_file(out, path, false);
    ggml_free(g);
    gguf_free(out);
    if (!ok) {
        fprintf(stderr, "tiny_model: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

#endif /* NEXTOK_TEST_TINY_MODEL_H */
