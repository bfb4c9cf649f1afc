/*
 * The whole loop through the public API, as `nextok generate` runs it:
 * text -> ids (an encoder), ids -> logits (the demo model built into the
 * CLI, standing in for a real model), logits -> token -> text (a session:
 * sampling chain, detokenizer, stop rules), streamed as it is produced.
 *
 *   usage: demo [prompt]
 */
#include <nextok.h>

#include "../tools/nextok/model.h" /* the demo model: not part of libnextok */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 60

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "demo: %s: %s\n", what, msg);
    return 2;
}

static int run(struct nextok_vocab *vocab, struct demo_model *model, const char *prompt)
{
    /* 1. The prompt as ids: the model's context and the penalties' history. */
    int32_t ctx[4096 + MAX_TOKENS];
    size_t n = 0;
    struct nextok_error err = {NEXTOK_OK, ""};
    if (nextok_vocab_encode(vocab, prompt, strlen(prompt), NULL, ctx, 4096, &n, &err) != NEXTOK_OK)
        return fail("prompt", err.msg);

    /* 2. A session: the chain, the detokenizer and the stop rules together. */
    struct nextok_sampling_params sp = nextok_sampling_default_params(NEXTOK_PROFILE_LLAMA);
    sp.n_vocab = nextok_vocab_n_tokens(vocab);
    sp.seed = 42;
    sp.temperature = 0.8f;
    sp.top_k = 40;
    sp.repeat_penalty = 1.1f;
    const char *stops[] = {"\n\n"};
    struct nextok_stop_params stop = nextok_stop_default_params();
    stop.strings = stops;
    stop.n_strings = 1;
    stop.max_tokens = MAX_TOKENS;
    struct nextok_session_params p = nextok_session_default_params();
    p.sampling = &sp;
    p.stop = &stop;
    p.vocab = vocab;
    struct nextok_session *s = NULL;
    if (nextok_session_init(&s, &p, &err) != NEXTOK_OK) return fail("session", err.msg);
    nextok_session_set_prompt(s, ctx, n);

    /* 3. The loop: logits for the context, one step, the text that is final. */
    static float logits[1 << 17];
    struct nextok_step_result r = {0};
    fputs(prompt, stdout);
    while (r.finish == NEXTOK_FINISH_NONE) {
        demo_model_logits(model, ctx, n, logits);
        if (nextok_session_step(s, logits, NEXTOK_DTYPE_F32, &r) != NEXTOK_OK) {
            int rc = fail("step", nextok_session_errmsg(s));
            nextok_session_free(s);
            return rc;
        }
        if (r.token >= 0) ctx[n++] = r.token;
        fwrite(r.text, 1, r.text_len, stdout); /* never bytes that must be taken back */
    }
    printf("\n[finish: %s]\n", nextok_finish_name(r.finish));
    nextok_session_free(s);
    return 0;
}

int main(int argc, char **argv)
{
    const char *prompt = argc > 1 ? argv[1] : "\"My dear Mr. Bennet,\" said his lady to him one day,";
    struct nextok_vocab *vocab = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    struct nextok_hf_json_mem m = {(const char *)nextok_demo_vocab, nextok_demo_vocab_size, NULL, 0, NULL, 0};
    if (nextok_vocab_load_hf_json_mem(&vocab, &m, &err) != NEXTOK_OK) return fail("vocabulary", err.msg);
    struct demo_model *model = NULL;
    char why[256];
    if (demo_model_load_mem(&model, nextok_demo_model, nextok_demo_model_size, why, sizeof why)) {
        nextok_vocab_free(vocab);
        return fail("model", why);
    }
    int rc = run(vocab, model, prompt);
    demo_model_free(model);
    nextok_vocab_free(vocab);
    return rc;
}
