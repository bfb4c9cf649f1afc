/*
 * nextok probs: the final distribution (nextok_chain_probs) as JSON.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *const CMD = "probs";

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: nextok probs --logits FILE [flags]\n"
            "\n"
            "Print the distribution the selector samples from, after every stage of the\n"
            "profile's chain, as a JSON array of {\"id\": int, \"p\": float}: every surviving\n"
            "token, sorted by p descending then id ascending. Greedy gives one token, p = 1.\n"
            "\n");
    cli_input_usage(f);
    fprintf(f, "  --vocab FILE                show each token's text (\"text\" field)\n\n");
    cli_sampling_usage(f);
}

struct probs_opts {
    struct cli_sampling smp;
    struct cli_input in;
    const char *vocab;
};

static int parse(struct probs_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        enum cli_parse r = cli_sampling_parse(&o->smp, CMD, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = cli_input_parse(&o->in, CMD, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE && cli_is_flag(argv[i], "--vocab")) {
            o->vocab = cli_flag_value(CMD, argc, argv, &i);
            r = o->vocab ? CLI_PARSE_OK : CLI_PARSE_ERROR;
        }
        if (r == CLI_PARSE_NOT_MINE) r = cli_unknown_flag(CMD, argv[i]);
        if (r == CLI_PARSE_ERROR) return CLI_EXIT_USAGE;
    }
    return 0;
}

static void print_json(const struct nextok_token_data *d, size_t n, const struct cli_vocab *v)
{
    char text[512];
    fputs("[\n", stdout);
    for (size_t k = 0; k < n; k++) {
        printf("  {\"id\": %ld, \"p\": %.9g", (long)d[k].id, (double)d[k].p);
        if (cli_vocab_text(v, d[k].id, text, sizeof text)) {
            fputs(", \"text\": ", stdout);
            cli_json_string(stdout, text, strlen(text));
        }
        fputs(k + 1 < n ? "},\n" : "}\n", stdout);
    }
    fputs("]\n", stdout);
}

static int run(struct probs_opts *o, struct cli_logits *lg, struct cli_vocab *voc,
               struct nextok_chain **chain, struct nextok_token_data **out)
{
    if (cli_input_load(&o->in, CMD, lg) != 0) return CLI_EXIT_USAGE;
    if (cli_vocab_open(CMD, o->vocab, lg->n_vocab, voc) != 0) return CLI_EXIT_USAGE;
    o->smp.vocab = voc->impl;
    if (cli_chain_build(&o->smp, (int32_t)lg->n_vocab, CMD, chain) != 0) return CLI_EXIT_USAGE;
    *out = malloc(lg->n_vocab * sizeof **out);
    if (!*out) return cli_fail(CMD, "out of memory");
    size_t n = 0;
    size_t row = (size_t)o->in.row;
    nextok_status st = nextok_chain_probs(*chain, cli_logits_row(lg, row), lg->dtype, *out,
                                          lg->n_vocab, &n, NULL);
    if (st != NEXTOK_OK) return cli_chain_fail(CMD, *chain, st, lg, row);
    print_json(*out, n, voc);
    return 0;
}

int nextok_cmd_probs(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct probs_opts o = {.vocab = NULL};
    struct cli_logits lg = {0};
    struct cli_vocab voc = {0};
    struct nextok_chain *chain = NULL;
    struct nextok_token_data *out = NULL;
    cli_sampling_init(&o.smp);
    cli_input_init(&o.in);
    int rc = parse(&o, argc, argv);
    if (rc == 0) rc = run(&o, &lg, &voc, &chain, &out);
    free(out);
    nextok_chain_free(chain);
    cli_vocab_close(&voc);
    cli_logits_free(&lg);
    cli_sampling_free(&o.smp);
    return rc;
}
