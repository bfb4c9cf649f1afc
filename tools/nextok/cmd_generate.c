/*
 * nextok generate: the whole loop on the built-in demo model. The prompt is
 * encoded, the model gives a full row of logits per step, a session samples
 * (the prompt ids go to the penalties), decodes and applies the stop rules,
 * and the text streams to stdout as it becomes final.
 */
#include "cli.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>

static const char *const CMD = "generate";

static void usage(FILE *f)
{
    fprintf(f, "Usage: nextok generate --prompt TEXT [--model FILE --vocab FILE] [flags]\n"
               "\n"
               "Generate text with the demo language model: encode the prompt, then per step\n"
               "the model's logits -> the sampling chain -> detokenizer -> stop rules, the\n"
               "text streamed to stdout as it is produced. A summary line (tokens, tokens/s,\n"
               "finish reason) goes to stderr.\n"
               "\n"
               "  --prompt TEXT               the prompt (UTF-8)\n"
               "  --model FILE                an n-gram model file (tools/demo_model/FORMAT.md);\n"
               "                              default: the built-in one (Jane Austen, GPT-2 ids)\n"
               "  --vocab FILE                the model's vocabulary; default: the built-in GPT-2\n"
               "  --parse-special             special-token text in the prompt becomes its id\n"
               "  --echo                      print the prompt before the generated text\n"
               "  --stop STR                  stop string (repeatable)\n"
               "  --max-tokens N              at most N tokens (default 100)\n"
               "  --ignore-eos                <|endoftext|> does not stop\n"
               "  --json                      one JSON event per step {\"token\", \"text\",\n"
               "                              \"logprob\", ...}, then {\"finish\", \"reason\",\n"
               "                              \"tokens\", \"tokens_per_s\"}\n"
               "\n");
    cli_sampling_usage(f);
}

struct gen_opts {
    struct cli_sampling smp;
    const char *prompt, *model, *vocab;
    const char **stops;
    size_t n_stops;
    long long max_tokens;
    bool json, ignore_eos, parse_special, echo;
};

struct gen_run {
    struct demo_model *model;
    struct nextok_vocab *vocab;
    struct nextok_session *session;
    int32_t *ctx; /* prompt ids, then the generated ones */
    size_t n_ctx, n_prompt;
    float *logits;
};

/* ---- flags --------------------------------------------------------------- */

static enum cli_parse parse_own(struct gen_opts *o, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--json") == 0) return o->json = true, CLI_PARSE_OK;
    if (strcmp(arg, "--ignore-eos") == 0) return o->ignore_eos = true, CLI_PARSE_OK;
    if (strcmp(arg, "--parse-special") == 0) return o->parse_special = true, CLI_PARSE_OK;
    if (strcmp(arg, "--echo") == 0) return o->echo = true, CLI_PARSE_OK;
    static const char *const VALUED[] = {"--prompt", "--model", "--vocab", "--stop",
                                         "--max-tokens"};
    size_t k = 0;
    while (k < sizeof VALUED / sizeof *VALUED && !cli_is_flag(arg, VALUED[k])) k++;
    if (k == sizeof VALUED / sizeof *VALUED) return CLI_PARSE_NOT_MINE;
    const char *v = cli_flag_value(CMD, argc, argv, i);
    if (!v) return CLI_PARSE_ERROR;
    if (k == 0)
        o->prompt = v;
    else if (k == 1)
        o->model = v;
    else if (k == 2)
        o->vocab = v;
    else if (k == 4)
        return cli_parse_int(CMD, "--max-tokens", v, 1, 1 << 20, &o->max_tokens) ? CLI_PARSE_ERROR
                                                                                 : CLI_PARSE_OK;
    else {
        const char **p = realloc(o->stops, (o->n_stops + 1) * sizeof *p);
        if (!p) return cli_fail(CMD, "out of memory for --stop"), CLI_PARSE_ERROR;
        o->stops = p;
        o->stops[o->n_stops++] = v;
    }
    return CLI_PARSE_OK;
}

static int parse(struct gen_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        enum cli_parse r = cli_sampling_parse(&o->smp, CMD, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = parse_own(o, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = cli_unknown_flag(CMD, argv[i]);
        if (r == CLI_PARSE_ERROR) return CLI_EXIT_USAGE;
    }
    if (!o->prompt) return cli_fail(CMD, "--prompt TEXT is required");
    if (!o->model != !o->vocab) return cli_fail(CMD, "--model and --vocab go together");
    if (o->smp.n_prompt || o->smp.n_output)
        return cli_fail(CMD, "--prompt-tokens/--output-tokens: the prompt is --prompt TEXT here");
    return 0;
}

/* ---- set-up --------------------------------------------------------------- */

static int load(const struct gen_opts *o, struct gen_run *r)
{
    char why[256] = "";
    int bad = o->model ? demo_model_load_file(&r->model, o->model, why, sizeof why)
                       : demo_model_load_mem(&r->model, nextok_demo_model, nextok_demo_model_size,
                                             why, sizeof why);
    if (bad) return cli_fail(CMD, "--model %s: %s", o->model ? o->model : "(built-in)", why);
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    struct nextok_hf_json_mem m = {
        (const char *)nextok_demo_vocab, nextok_demo_vocab_size, NULL, 0, NULL, 0};
    nextok_status st = o->vocab ? nextok_vocab_load_file(&r->vocab, o->vocab, &err)
                                : nextok_vocab_load_hf_json_mem(&r->vocab, &m, &err);
    if (st != NEXTOK_OK)
        return cli_fail(CMD, "--vocab %s: %s", o->vocab ? o->vocab : "(built-in)", err.msg);
    if (nextok_vocab_n_tokens(r->vocab) != demo_model_n_vocab(r->model))
        return cli_fail(CMD, "the model has %ld ids, the vocabulary %ld",
                        (long)demo_model_n_vocab(r->model), (long)nextok_vocab_n_tokens(r->vocab));
    return 0;
}

static int encode_prompt(const struct gen_opts *o, struct gen_run *r)
{
    struct nextok_encode_params ep = nextok_encode_default_params();
    ep.parse_special = o->parse_special;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    size_t len = strlen(o->prompt), n = 0;
    nextok_status st = nextok_vocab_encode(r->vocab, o->prompt, len, &ep, NULL, 0, &n, &err);
    if (st != NEXTOK_OK && st != NEXTOK_ERR_BUFFER_TOO_SMALL)
        return cli_fail(CMD, "--prompt: %s", err.msg);
    size_t cap = n + (size_t)o->max_tokens + 1;
    r->ctx = malloc(cap * sizeof *r->ctx);
    r->logits = malloc((size_t)demo_model_n_vocab(r->model) * sizeof *r->logits);
    if (!r->ctx || !r->logits) return cli_fail(CMD, "out of memory");
    st = nextok_vocab_encode(r->vocab, o->prompt, len, &ep, r->ctx, cap, &n, &err);
    if (st != NEXTOK_OK) return cli_fail(CMD, "--prompt: %s", err.msg);
    r->n_ctx = r->n_prompt = n;
    return 0;
}

static int build_session(struct gen_opts *o, struct gen_run *r)
{
    struct nextok_sampling_params sp;
    const struct nextok_compiled_grammar *cg = NULL;
    o->smp.vocab = r->vocab;
    if (cli_sampling_grammar(&o->smp, CMD, &cg) != 0) return CLI_EXIT_USAGE;
    if (cli_sampling_params(&o->smp, nextok_vocab_n_tokens(r->vocab), CMD, &sp) != 0)
        return CLI_EXIT_USAGE;
    struct nextok_stop_params stop = nextok_stop_default_params();
    stop.strings = o->stops;
    stop.n_strings = o->n_stops;
    stop.max_tokens = (int32_t)o->max_tokens;
    stop.ignore_eos = o->ignore_eos;
    struct nextok_session_params p = nextok_session_default_params();
    p.sampling = &sp;
    p.stop = &stop;
    p.vocab = r->vocab;
    p.grammar = cg;
    p.logprobs = o->json;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    if (nextok_session_init(&r->session, &p, &err) != NEXTOK_OK)
        return cli_fail(CMD, "invalid parameters: %s", err.msg);
    if (r->n_prompt && nextok_session_set_prompt(r->session, r->ctx, r->n_prompt) != NEXTOK_OK)
        return cli_fail(CMD, "prompt: %s", nextok_session_errmsg(r->session));
    return 0;
}

/* ---- the loop --------------------------------------------------------------- */

static void emit(const struct gen_opts *o, const struct nextok_step_result *res)
{
    if (o->json && res->token >= 0)
        cli_json_token_event(stdout, res, true);
    else if (!o->json)
        fwrite(res->text, 1, res->text_len, stdout);
    fflush(stdout);
}

static int generate(const struct gen_opts *o, struct gen_run *r)
{
    struct nextok_step_result res;
    memset(&res, 0, sizeof res);
    size_t n_tokens = 0;
    if (o->echo && !o->json) fputs(o->prompt, stdout);
    double t0 = cli_now_s();
    while (res.finish == NEXTOK_FINISH_NONE) {
        demo_model_logits(r->model, r->ctx, r->n_ctx, r->logits);
        if (nextok_session_step(r->session, r->logits, NEXTOK_DTYPE_F32, &res) != NEXTOK_OK)
            return cli_fail(CMD, "step %zu: %s", n_tokens, nextok_session_errmsg(r->session));
        if (res.token >= 0) r->ctx[r->n_ctx++] = res.token, n_tokens++;
        emit(o, &res);
    }
    double dt = cli_now_s() - t0, rate = dt > 0 ? (double)n_tokens / dt : 0.0;
    const char *reason = nextok_finish_name(res.finish);
    if (o->json)
        printf(
            "{\"finish\": \"%s\", \"reason\": \"%s\", \"tokens\": %zu, \"tokens_per_s\": %.1f}\n",
            cli_finish_word(res.finish), reason, n_tokens, rate);
    else
        fprintf(stderr, "\n[%zu tokens, %.1f tokens/s, finish: %s]\n", n_tokens, rate, reason);
    return fflush(stdout) == 0 ? 0 : cli_fail(CMD, "writing to stdout failed");
}

int nextok_cmd_generate(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct gen_opts o;
    memset(&o, 0, sizeof o);
    o.max_tokens = 100;
    cli_sampling_init(&o.smp);
    struct gen_run r;
    memset(&r, 0, sizeof r);
    int rc = parse(&o, argc, argv);
    if (rc == 0) rc = load(&o, &r);
    if (rc == 0) rc = encode_prompt(&o, &r);
    if (rc == 0) rc = build_session(&o, &r);
    if (rc == 0) rc = generate(&o, &r);
    nextok_session_free(r.session);
    nextok_vocab_free(r.vocab);
    demo_model_free(r.model);
    free(r.ctx);
    free(r.logits);
    cli_sampling_free(&o.smp);
    free(o.stops);
    return rc;
}
