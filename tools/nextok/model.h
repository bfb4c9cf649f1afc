/*
 * model.h - the demo language model of the `nextok` CLI (not part of libnextok).
 *
 * An interpolated modified Kneser-Ney n-gram model over a token vocabulary
 * (the shipped one: GPT-2's 50257 ids, trained on Jane Austen's novels by
 * tools/demo_model/train.py; file format in tools/demo_model/FORMAT.md). It
 * gives a finite log-probability for every id of the vocabulary, so the
 * samplers see a full, realistic distribution at every step.
 *
 * Errors: the loaders return 0, or -1 with a one-line message in err (when
 * err is not NULL and err_len > 0); they never print and never exit. Every
 * offset and size in the data is checked: a truncated or corrupt model is an
 * error, never an out-of-bounds read.
 *
 * Threads: a model holds the scratch space of demo_model_logits, so a model
 * is used by one thread at a time (one model per thread).
 */
#ifndef NEXTOK_DEMO_MODEL_H
#define NEXTOK_DEMO_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* The longest n-gram a model file may have (FORMAT.md). */
#define DEMO_MODEL_MAX_ORDER 8

struct demo_model;

/* The model built into the CLI (tools/nextok/model_blob.S embeds
 * tools/demo_model/austen-gpt2.ngram). */
extern const unsigned char nextok_demo_model[];
extern const size_t nextok_demo_model_size;
/* Its vocabulary, GPT-2's tokenizer.json (examples/gpt2-tokenizer.json). */
extern const unsigned char nextok_demo_vocab[];
extern const size_t nextok_demo_vocab_size;

/* Load a model from `size` bytes at `data`, which stay owned by the caller
 * and must outlive the model (nothing is copied; any alignment will do).
 * On success *out is the model; on failure *out is NULL. */
int demo_model_load_mem(struct demo_model **out, const void *data, size_t size, char *err,
                        size_t err_len);

/* Load a model from a file (read whole; the model owns the copy). */
int demo_model_load_file(struct demo_model **out, const char *path, char *err, size_t err_len);

/* Free a model; NULL is a no-op. */
void demo_model_free(struct demo_model *m);

int32_t demo_model_n_vocab(const struct demo_model *m);
int demo_model_order(const struct demo_model *m);

/* logits[w] = log P(w | ctx) for every id w in [0, n_vocab): natural logs of
 * probabilities that sum to 1, all finite. Only the last order-1 ids of ctx
 * are used; ctx may be shorter (the start of a text) or empty (n_ctx 0, ctx
 * may then be NULL). An id outside [0, n_vocab) in ctx counts as a token the
 * model never saw. Allocates nothing; changes only the model's scratch. */
void demo_model_logits(struct demo_model *m, const int32_t *ctx, size_t n_ctx, float *logits);

#endif
