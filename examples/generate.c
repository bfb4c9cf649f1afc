/*
 * The README's library usage, compiled and run by the test suite: build a
 * session (sampling chain + detokenizer + stop criteria) over the shipped GPT-2
 * vocabulary, feed it logits step by step and stream the text.
 *
 * A real engine gets a logits row from its model each step; here a toy "model"
 * makes rows that spell a sentence, with noise, so the stream reads as text.
 *
 *   usage: generate [tokenizer.json]     (default: examples/gpt2-tokenizer.json)
 */
#include <nextok.h>

#include <stdio.h>
#include <stdlib.h>

#define V 50257

/* Ids of " The cat sat on the mat.\n\n" in GPT-2's vocabulary. */
static const int32_t script[] = {383, 3797, 3332, 319, 262, 2603, 13, 198, 198};
#define N_SCRIPT (sizeof script / sizeof script[0])

static void toy_model(size_t step, float *row)
{
    uint32_t s = 2463534242u + (uint32_t)step;
    for (int i = 0; i < V; i++) { /* xorshift noise in [-2, 2) */
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        row[i] = (float)(s >> 8) * 0x1p-22f - 2.0f;
    }
    row[script[step % N_SCRIPT]] += 14.0f;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "examples/gpt2-tokenizer.json";
    struct nextok_error err = {NEXTOK_OK, ""};
    struct nextok_vocab *vocab = NULL;
    if (nextok_vocab_load_file(&vocab, path, &err) != NEXTOK_OK) {
        fprintf(stderr, "generate: %s: %s\n", path, err.msg);
        return 2;
    }

    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_VLLM);
    sp.n_vocab = V;
    sp.seed = 42;
    sp.temperature = 0.7f;
    sp.top_p = 0.95f;
    sp.min_p = 0.05f;

    const char *stops[] = {"\n\n"};
    struct nextok_stop_params stop = nextok_stop_default_params();
    stop.strings = stops;
    stop.n_strings = 1;
    stop.max_tokens = 64;

    struct nextok_session_params p = nextok_session_default_params();
    p.sampling = &sp;
    p.stop = &stop;
    p.vocab = vocab;

    struct nextok_session *session = NULL;
    if (nextok_session_init(&session, &p, &err) != NEXTOK_OK) {
        fprintf(stderr, "generate: %s\n", err.msg);
        nextok_vocab_free(vocab);
        return 2;
    }

    static float row[V];
    struct nextok_step_result r;
    int rc = 0;
    for (size_t step = 0;; step++) {
        toy_model(step, row);
        if (nextok_session_step(session, row, NEXTOK_DTYPE_F32, &r) != NEXTOK_OK) {
            fprintf(stderr, "generate: %s\n", nextok_session_errmsg(session));
            rc = 1;
            break;
        }
        fwrite(r.text, 1, r.text_len, stdout); /* never bytes that must be taken back */
        if (r.finish != NEXTOK_FINISH_NONE) {
            printf("\n[finish: %s after %zu tokens]\n", nextok_finish_name(r.finish), step + 1);
            break;
        }
    }
    nextok_session_free(session);
    nextok_vocab_free(vocab);
    return rc;
}
