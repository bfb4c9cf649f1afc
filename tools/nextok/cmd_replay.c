/*
 * nextok replay: run a session over a [steps, V] logits file, one row per
 * step (each row's own logits; the sampled token is accepted), and print the
 * text as a streaming client would receive it, or JSON events.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "replay";

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: nextok replay --vocab FILE --logits STEPS.npy [flags]\n"
            "\n"
            "Sample each row of a [steps, V] logits file in turn (row i is the logits of\n"
            "step i; the sampled token is accepted before the next row), decode, apply the\n"
            "stop rules and print the text a client receives: raw bytes, nothing added.\n"
            "Running out of rows ends the stream with finish \"length\".\n"
            "\n"
            "  --vocab FILE                vocabulary (GGUF, tokenizer.json, .tiktoken)\n"
            "  --logits FILE               .npy [steps, V] or [V] (float32/float16), .f32, ...\n"
            "  --stop STR                  stop string (repeatable; bytes as given)\n"
            "  --stop-regex RE             stop regex (PCRE2)\n"
            "  --stop-token-ids IDS        comma-separated stop token ids\n"
            "  --include-stop              keep the stop string / token text in the output\n"
            "  --max-tokens N              stop after N tokens (finish \"length\")\n"
            "  --min-tokens N              no stop before N+1 tokens; end ids suppressed\n"
            "  --ignore-eos                end-of-generation ids do not stop\n"
            "  --skip-special              leave special tokens out of the text\n"
            "  --stream                    write each step's text as soon as it is final\n"
            "  --json                      one JSON event per line: {\"token\": id,\n"
            "                              \"text\": ...},\n"
            "                              then {\"finish\": \"stop|eos|length\", \"stop\": ...,\n"
            "                              \"reason\": \"stop_string|...\"}\n"
            "  --logprobs N                with --json: the token's logprob and N alternatives\n"
            "\n"
            "Without --stream nothing is printed until the run succeeded. JSON text is\n"
            "UTF-8; a byte that is not valid UTF-8 is written as \\ufffd.\n"
            "\n");
    cli_sampling_usage(f);
}

struct replay_opts {
    struct cli_sampling smp;
    const char *vocab, *logits, *regex;
    const char **stops;
    size_t n_stops;
    int32_t *stop_ids;
    size_t n_stop_ids;
    long long max_tokens, min_tokens, top_logprobs;
    bool ignore_eos, stream, json, include_stop, skip_special;
};

/* ---- flags --------------------------------------------------------------- */

static enum cli_parse add_stop(struct replay_opts *o, const char *v)
{
    const char **p = realloc(o->stops, (o->n_stops + 1) * sizeof *p);
    if (!p) {
        cli_fail(CMD, "out of memory for --stop");
        return CLI_PARSE_ERROR;
    }
    o->stops = p;
    o->stops[o->n_stops++] = v;
    return CLI_PARSE_OK;
}

static enum cli_parse parse_switch(struct replay_opts *o, const char *arg)
{
    static const char *const NAMES[] = {"--ignore-eos", "--stream", "--json", "--include-stop",
                                        "--skip-special"};
    bool *fields[] = {&o->ignore_eos, &o->stream, &o->json, &o->include_stop, &o->skip_special};
    for (size_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++)
        if (strcmp(arg, NAMES[k]) == 0) {
            *fields[k] = true;
            return CLI_PARSE_OK;
        }
    return CLI_PARSE_NOT_MINE;
}

static enum cli_parse parse_value(struct replay_opts *o, const char *flag, const char *v)
{
    if (strcmp(flag, "--vocab") == 0) o->vocab = v;
    else if (strcmp(flag, "--logits") == 0) o->logits = v;
    else if (strcmp(flag, "--stop-regex") == 0) o->regex = v;
    else if (strcmp(flag, "--stop") == 0) return add_stop(o, v);
    else if (strcmp(flag, "--stop-token-ids") == 0) {
        free(o->stop_ids);
        o->stop_ids = NULL;
        return cli_parse_ids(CMD, flag, v, &o->stop_ids, &o->n_stop_ids) ? CLI_PARSE_ERROR
                                                                        : CLI_PARSE_OK;
    } else if (strcmp(flag, "--max-tokens") == 0) {
        return cli_parse_int(CMD, flag, v, 1, INT32_MAX, &o->max_tokens) ? CLI_PARSE_ERROR
                                                                         : CLI_PARSE_OK;
    } else if (strcmp(flag, "--min-tokens") == 0) {
        return cli_parse_int(CMD, flag, v, 0, INT32_MAX, &o->min_tokens) ? CLI_PARSE_ERROR
                                                                         : CLI_PARSE_OK;
    } else if (strcmp(flag, "--logprobs") == 0) {
        return cli_parse_int(CMD, flag, v, 0, 1000, &o->top_logprobs) ? CLI_PARSE_ERROR
                                                                      : CLI_PARSE_OK;
    }
    return CLI_PARSE_OK;
}

static enum cli_parse parse_own(struct replay_opts *o, int argc, char **argv, int *i)
{
    static const char *const VALUED[] = {"--vocab", "--logits", "--stop", "--stop-regex",
                                         "--stop-token-ids", "--max-tokens", "--min-tokens",
                                         "--logprobs"};
    enum cli_parse r = parse_switch(o, argv[*i]);
    if (r != CLI_PARSE_NOT_MINE) return r;
    for (size_t k = 0; k < sizeof VALUED / sizeof *VALUED; k++) {
        if (!cli_is_flag(argv[*i], VALUED[k])) continue;
        const char *v = cli_flag_value(CMD, argc, argv, i);
        return v ? parse_value(o, VALUED[k], v) : CLI_PARSE_ERROR;
    }
    return CLI_PARSE_NOT_MINE;
}

static int parse(struct replay_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        enum cli_parse r = cli_sampling_parse(&o->smp, CMD, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = parse_own(o, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = cli_unknown_flag(CMD, argv[i]);
        if (r == CLI_PARSE_ERROR) return CLI_EXIT_USAGE;
    }
    if (!o->vocab) return cli_fail(CMD, "--vocab FILE is required");
    if (!o->logits) return cli_fail(CMD, "--logits FILE is required");
    if (o->smp.n_output) return cli_fail(CMD, "--output-tokens: not supported by replay");
    if (o->top_logprobs >= 0 && !o->json) return cli_fail(CMD, "--logprobs needs --json");
    if (o->max_tokens > 0 && o->min_tokens > o->max_tokens)
        return cli_fail(CMD, "--min-tokens %lld is more than --max-tokens %lld", o->min_tokens,
                        o->max_tokens);
    return 0;
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_finish_event(FILE *f, const struct replay_opts *o, enum nextok_finish fin,
                              int32_t which)
{
    fprintf(f, "{\"finish\": \"%s\", \"stop\": ", cli_finish_word(fin));
    if (fin == NEXTOK_FINISH_STOP_STRING && which >= 0 && (size_t)which < o->n_stops)
        cli_json_text(f, o->stops[which], strlen(o->stops[which]));
    else if (fin == NEXTOK_FINISH_STOP_REGEX)
        cli_json_text(f, o->regex, strlen(o->regex));
    else if (fin == NEXTOK_FINISH_STOP_TOKEN && which >= 0 && (size_t)which < o->n_stop_ids)
        fprintf(f, "%ld", (long)o->stop_ids[which]);
    else
        fputs("null", f);
    fprintf(f, ", \"reason\": \"%s\"}\n", nextok_finish_name(fin == NEXTOK_FINISH_NONE
                                                          ? NEXTOK_FINISH_LENGTH : fin));
}

/* ---- the run ------------------------------------------------------------- */

struct replay_run {
    struct cli_logits lg;
    struct nextok_vocab *vocab;
    struct nextok_session *session;
    FILE *out;           /* stdout with --stream, else a memory stream */
    char *buf;           /* the memory stream's buffer                 */
    size_t buf_n;
};

static int load_inputs(const struct replay_opts *o, struct replay_run *r)
{
    char why[256] = "";
    if (cli_logits_load(o->logits, &r->lg, why, sizeof why) != 0)
        return cli_fail(CMD, "--logits %s: %s", o->logits, why);
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    nextok_status st = nextok_vocab_load_file(&r->vocab, o->vocab, &err);
    if (st != NEXTOK_OK)
        return cli_fail(CMD, "--vocab %s: %s", o->vocab,
                        err.msg[0] ? err.msg : nextok_strerror(st));
    /* as probs and explain: a row shorter than the vocabulary can never
     * sample its last tokens, so it is an input error, not a quiet subset */
    return cli_vocab_check_rows(CMD, o->vocab, r->lg.n_vocab, r->vocab);
}

static struct nextok_stop_params stop_params(const struct replay_opts *o)
{
    struct nextok_stop_params p = nextok_stop_default_params();
    p.strings = o->stops;
    p.n_strings = o->n_stops;
    p.regex = o->regex;
    p.stop_ids = o->stop_ids;
    p.n_stop_ids = o->n_stop_ids;
    p.include_stop = o->include_stop;
    p.ignore_eos = o->ignore_eos;
    p.max_tokens = (int32_t)o->max_tokens;
    p.min_tokens = (int32_t)o->min_tokens;
    return p;
}

static int build_session(struct replay_opts *o, struct replay_run *r)
{
    struct nextok_sampling_params sp;
    const struct nextok_compiled_grammar *cg = NULL;
    o->smp.vocab = r->vocab;
    if (cli_sampling_grammar(&o->smp, CMD, &cg) != 0) return CLI_EXIT_USAGE;
    if (cli_sampling_params(&o->smp, (int32_t)r->lg.n_vocab, CMD, &sp) != 0) return CLI_EXIT_USAGE;
    struct nextok_stop_params stop = stop_params(o);
    struct nextok_decode_params dp = nextok_decode_default_params();
    dp.skip_special_tokens = o->skip_special;
    struct nextok_session_params p = nextok_session_default_params();
    p.sampling = &sp;
    p.stop = &stop;
    p.decode = &dp;
    p.vocab = r->vocab;
    p.grammar = cg;
    p.logprobs = o->top_logprobs >= 0;
    p.top_logprobs = o->top_logprobs > 0 ? (size_t)o->top_logprobs : 0;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    nextok_status st = nextok_session_init(&r->session, &p, &err);
    if (st != NEXTOK_OK)
        return cli_fail(CMD, "invalid parameters: %s", err.msg[0] ? err.msg : nextok_strerror(st));
    if (o->smp.n_prompt && nextok_session_set_prompt(r->session, o->smp.prompt, o->smp.n_prompt))
        return cli_fail(CMD, "--prompt-tokens: %s", nextok_session_errmsg(r->session));
    return 0;
}

static void emit(const struct replay_opts *o, struct replay_run *r,
                 const struct nextok_step_result *res)
{
    if (o->json && (res->token >= 0 || res->text_len))
        cli_json_token_event(r->out, res, o->top_logprobs >= 0 && res->token >= 0);
    else if (!o->json)
        fwrite(res->text, 1, res->text_len, r->out);
    if (o->stream) fflush(r->out);
}

static int step_fail(struct replay_run *r, nextok_status st, size_t row)
{
    long long nan = st == NEXTOK_ERR_NAN ? cli_logits_find_nan(&r->lg, row) : -1;
    if (nan >= 0) return cli_fail(CMD, "row %zu: NaN logit at token %lld", row, nan);
    return cli_fail(CMD, "row %zu: %s", row, nextok_session_errmsg(r->session));
}

static int generate(const struct replay_opts *o, struct replay_run *r)
{
    struct nextok_step_result res;
    memset(&res, 0, sizeof res);
    for (size_t row = 0; row < r->lg.rows && res.finish == NEXTOK_FINISH_NONE; row++) {
        nextok_status st = nextok_session_step(r->session, cli_logits_row(&r->lg, row),
                                               r->lg.dtype, &res);
        if (st != NEXTOK_OK) return step_fail(r, st, row);
        emit(o, r, &res);
    }
    if (res.finish == NEXTOK_FINISH_NONE) { /* out of rows: flush what is held */
        nextok_status st = nextok_session_finish(r->session, &res);
        if (st != NEXTOK_OK) return cli_fail(CMD, "finish: %s", nextok_session_errmsg(r->session));
        emit(o, r, &res);
    }
    if (o->json) json_finish_event(r->out, o, res.finish, res.which);
    return 0;
}

static int run(struct replay_opts *o, struct replay_run *r)
{
    if (load_inputs(o, r) != 0 || build_session(o, r) != 0) return CLI_EXIT_USAGE;
    r->out = o->stream ? stdout : open_memstream(&r->buf, &r->buf_n);
    if (!r->out) return cli_fail(CMD, "out of memory for the output");
    int rc = generate(o, r);
    if (o->stream) {
        if (rc == 0 && fflush(stdout) != 0) return cli_fail(CMD, "writing to stdout failed");
        return rc;
    }
    fclose(r->out);
    r->out = NULL;
    if (rc == 0 && (fwrite(r->buf, 1, r->buf_n, stdout) != r->buf_n || fflush(stdout) != 0))
        return cli_fail(CMD, "writing to stdout failed");
    return rc;
}

int nextok_cmd_replay(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct replay_opts o;
    memset(&o, 0, sizeof o);
    o.top_logprobs = -1;
    cli_sampling_init(&o.smp);
    struct replay_run r;
    memset(&r, 0, sizeof r);
    int rc = parse(&o, argc, argv);
    if (rc == 0) rc = run(&o, &r);
    if (r.out && r.out != stdout) fclose(r.out);
    free(r.buf);
    nextok_session_free(r.session);
    nextok_vocab_free(r.vocab);
    cli_logits_free(&r.lg);
    cli_sampling_free(&o.smp);
    free(o.stops);
    free(o.stop_ids);
    return rc;
}
