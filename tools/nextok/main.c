/*
 * nextok - command-line front end of libnextok.
 *
 *   nextok <command> [flags]      see `nextok --help`
 *
 * main() only dispatches: each command is one file (cmd_<name>.c) and gets
 * argv starting at the command name. Shared helpers are in cli.h.
 */
#include "cli.h"

#include <string.h>

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command COMMANDS[] = {
    {"probs", nextok_cmd_probs, "print the final distribution as JSON"},
    {"sample", nextok_cmd_sample, "draw token ids (seeded, reproducible)"},
    {"explain", nextok_cmd_explain, "show what each sampling stage did"},
    {"detok", nextok_cmd_detok, "turn token ids into text"},
    {"encode", nextok_cmd_encode, "turn text into token ids"},
    {"generate", nextok_cmd_generate, "generate text with the built-in demo model"},
    {"grammar", nextok_cmd_grammar, "check grammars (GBNF, JSON Schema, regex), walk and time token masks"},
    {"replay", nextok_cmd_replay, "replay a recorded generation"},
    {"bench", nextok_cmd_bench, "measure sampling speed"},
};

#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *f)
{
    fprintf(f,
            "nextok %s - logits in, next token out\n"
            "\n"
            "Usage: nextok <command> [flags]\n"
            "       nextok <command> --help\n"
            "       nextok --version\n"
            "\n"
            "Commands:\n",
            nextok_version());
    for (size_t k = 0; k < N_COMMANDS; k++)
        fprintf(f, "  %-10s %s\n", COMMANDS[k].name, COMMANDS[k].summary);
    fprintf(f,
            "\n"
            "Example:\n"
            "  nextok explain --logits examples/logits-example.npy \\\n"
            "                 --vocab examples/gpt2-tokenizer.json --top-k 40 --top-p 0.9\n"
            "\n"
            "Bad input exits with status 2 and one line on stderr.\n");
}

static const struct command *find(const char *name)
{
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (strcmp(COMMANDS[k].name, name) == 0) return &COMMANDS[k];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) return cli_fail(NULL, "missing command (see 'nextok --help')");
    const char *a = argv[1];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0) {
        if (argc > 2 && strcmp(a, "help") == 0) {
            const struct command *c = find(argv[2]);
            if (!c) return cli_fail(NULL, "unknown command '%s' (see 'nextok --help')", argv[2]);
            char help[] = "--help";
            char *sub[] = {argv[2], help, NULL};
            return c->run(2, sub);
        }
        usage(stdout);
        return 0;
    }
    if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0 || strcmp(a, "version") == 0) {
        printf("nextok %s\n", nextok_version());
        return 0;
    }
    const struct command *c = find(a);
    if (!c) {
        if (a[0] == '-')
            return cli_fail(NULL, "unknown flag '%s' before the command (see 'nextok --help')", a);
        return cli_fail(NULL, "unknown command '%s' (see 'nextok --help')", a);
    }
    return c->run(argc - 1, argv + 1);
}
