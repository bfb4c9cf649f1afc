/*
 * nextok grammar check | accepts: compile a GBNF grammar and say whether it
 * is valid, or whether a text is a sentence of it.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *const CMD = "grammar";

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: nextok grammar check --gbnf FILE [--vocab FILE]\n"
        "       nextok grammar accepts --gbnf FILE (--text STR | --text-file FILE) [--vocab FILE]\n"
        "\n"
        "check: compile the grammar (GBNF as llama.cpp reads it); exit 0 when it is\n"
        "valid, else one line with the place (line, column) and exit 2.\n"
        "accepts: print \"accepted\" (exit 0) when the text is a sentence of the root\n"
        "rule, \"rejected\" (exit 1) when not; exit 2 on bad input.\n"
        "\n"
        "  --gbnf FILE         the grammar (- is stdin)\n"
        "  --text STR          the text (accepts)\n"
        "  --text-file FILE    the text from a file, exactly its bytes (accepts)\n"
        "  --vocab FILE        a vocabulary, for <token> references in the grammar\n");
}

struct grammar_opts {
    bool accepts;
    const char *gbnf, *text, *text_file, *vocab;
};

static int parse(struct grammar_opts *o, int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "accepts") != 0))
        return cli_fail(CMD, "expecting check or accepts (see nextok grammar --help)");
    o->accepts = strcmp(argv[1], "accepts") == 0;
    for (int i = 2; i < argc; i++) {
        static const char *const VALUED[] = {"--gbnf", "--text", "--text-file", "--vocab"};
        const char **dst[] = {&o->gbnf, &o->text, &o->text_file, &o->vocab};
        size_t k = 0;
        while (k < 4 && !cli_is_flag(argv[i], VALUED[k])) k++;
        if (k == 4 || (!o->accepts && (k == 1 || k == 2))) {
            cli_unknown_flag(CMD, argv[i]);
            return CLI_EXIT_USAGE;
        }
        if (!(*dst[k] = cli_flag_value(CMD, argc, argv, &i))) return CLI_EXIT_USAGE;
    }
    if (!o->gbnf) return cli_fail(CMD, "--gbnf FILE is required");
    if (o->accepts && !o->text == !o->text_file)
        return cli_fail(CMD, "give one of --text STR and --text-file FILE");
    return 0;
}

static int compile(const struct grammar_opts *o, struct nextok_vocab **v, struct nextok_grammar **g)
{
    char *src = NULL;
    size_t len = 0;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    if (o->vocab && nextok_vocab_load_file(v, o->vocab, &err) != NEXTOK_OK)
        return cli_fail(CMD, "--vocab %s: %s", o->vocab, err.msg);
    if (cli_read_all(CMD, "--gbnf", o->gbnf, &src, &len) != 0) return CLI_EXIT_USAGE;
    struct nextok_grammar_params p = nextok_grammar_default_params();
    p.vocab = *v;
    nextok_status st = nextok_grammar_init_gbnf(g, src, len, &p, &err);
    free(src);
    if (st != NEXTOK_OK) return cli_fail(CMD, "--gbnf %s: %s", o->gbnf, err.msg);
    return 0;
}

static int accepts(const struct grammar_opts *o, const struct nextok_grammar *g)
{
    char *file = NULL;
    size_t len = o->text ? strlen(o->text) : 0;
    if (o->text_file && cli_read_all(CMD, "--text-file", o->text_file, &file, &len) != 0)
        return CLI_EXIT_USAGE;
    bool yes = false;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    nextok_status st = nextok_grammar_accepts(g, file ? file : o->text, len, &yes, &err);
    free(file);
    if (st != NEXTOK_OK) return cli_fail(CMD, "%s", err.msg);
    puts(yes ? "accepted" : "rejected");
    if (fflush(stdout) != 0) return cli_fail(CMD, "writing to stdout failed");
    return yes ? 0 : 1;
}

int nextok_cmd_grammar(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct grammar_opts o;
    memset(&o, 0, sizeof o);
    struct nextok_vocab *v = NULL;
    struct nextok_grammar *g = NULL;
    int rc = parse(&o, argc, argv);
    if (rc == 0) rc = compile(&o, &v, &g);
    if (rc == 0 && o.accepts) rc = accepts(&o, g);
    nextok_grammar_free(g);
    nextok_vocab_free(v);
    return rc;
}
