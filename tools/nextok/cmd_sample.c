/*
 * nextok sample: N draws from one logits row, one token id per line.
 * Draw i runs at step base + i with nothing accepted in between, where base is
 * the number of --output-tokens accepted, so each line is what the chain
 * would pick at that step from the same logits and state.
 */
#include "cli.h"

#include <stdlib.h>

static const char *const CMD = "sample";

#define SAMPLE_MAX_N 100000000LL

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: nextok sample --logits FILE [flags] [--seed S] [-n N]\n"
            "\n"
            "Draw N tokens (default 1) from the same logits and sampler state at steps\n"
            "base, base+1, ..., base+N-1 (base = number of --output-tokens) and print one\n"
            "token id per line. Same seed, same lines.\n"
            "\n"
            "  -n N                        number of draws, 1..%lld (default 1)\n"
            "  --vocab FILE                the vocabulary (needed by a grammar flag)\n"
            "\n",
            SAMPLE_MAX_N);
    cli_input_usage(f);
    fputc('\n', f);
    cli_sampling_usage(f);
}

struct sample_opts {
    struct cli_sampling smp;
    struct cli_input in;
    long long n;
    const char *vocab; /* for a grammar */
};

static enum cli_parse parse_own(struct sample_opts *o, int argc, char **argv, int *i)
{
    if (cli_is_flag(argv[*i], "--vocab")) {
        o->vocab = cli_flag_value(CMD, argc, argv, i);
        return o->vocab ? CLI_PARSE_OK : CLI_PARSE_ERROR;
    }
    if (!cli_is_flag(argv[*i], "-n") && !cli_is_flag(argv[*i], "--n")) return CLI_PARSE_NOT_MINE;
    const char *v = cli_flag_value(CMD, argc, argv, i);
    if (!v || cli_parse_int(CMD, "-n", v, 1, SAMPLE_MAX_N, &o->n) != 0) return CLI_PARSE_ERROR;
    return CLI_PARSE_OK;
}

static int parse(struct sample_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        enum cli_parse r = cli_sampling_parse(&o->smp, CMD, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = cli_input_parse(&o->in, CMD, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = parse_own(o, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = cli_unknown_flag(CMD, argv[i]);
        if (r == CLI_PARSE_ERROR) return CLI_EXIT_USAGE;
    }
    return 0;
}

static int run(struct sample_opts *o, struct cli_logits *lg, struct cli_vocab *voc,
               struct nextok_chain **chain, int32_t **toks)
{
    if (cli_input_load(&o->in, CMD, lg) != 0) return CLI_EXIT_USAGE;
    if (cli_vocab_open(CMD, o->vocab, lg->n_vocab, voc) != 0) return CLI_EXIT_USAGE;
    o->smp.vocab = voc->impl;
    if (cli_chain_build(&o->smp, (int32_t)lg->n_vocab, CMD, chain) != 0) return CLI_EXIT_USAGE;
    *toks = malloc((size_t)o->n * sizeof **toks);
    if (!*toks) return cli_fail(CMD, "out of memory for %lld draws", o->n);
    size_t row = (size_t)o->in.row;
    const void *logits = cli_logits_row(lg, row);
    uint64_t base = nextok_chain_step(*chain);
    for (long long k = 0; k < o->n; k++) {
        nextok_chain_set_step(*chain, base + (uint64_t)k);
        nextok_status st = nextok_chain_sample(*chain, logits, lg->dtype, &(*toks)[k]);
        if (st != NEXTOK_OK) return cli_chain_fail(CMD, *chain, st, lg, row);
    }
    for (long long k = 0; k < o->n; k++) printf("%ld\n", (long)(*toks)[k]);
    return 0;
}

int nextok_cmd_sample(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct sample_opts o = {.n = 1};
    struct cli_logits lg = {0};
    struct nextok_chain *chain = NULL;
    struct cli_vocab voc = {0};
    int32_t *toks = NULL;
    cli_sampling_init(&o.smp);
    cli_input_init(&o.in);
    int rc = parse(&o, argc, argv);
    if (rc == 0) rc = run(&o, &lg, &voc, &chain, &toks);
    free(toks);
    nextok_chain_free(chain);
    cli_vocab_close(&voc);
    cli_logits_free(&lg);
    cli_sampling_free(&o.smp);
    return rc;
}
