/*
 * nextok detok: decode token ids with a vocabulary and print the text exactly
 * (raw bytes on stdout, no newline added).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *const CMD = "detok";

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: nextok detok --vocab FILE --tokens 1,2,3 [--skip-special]\n"
            "\n"
            "Decode the ids with the vocabulary (GGUF, tokenizer.json or .tiktoken) and\n"
            "write the text to stdout exactly: raw bytes, no newline added. Decoding is\n"
            "HF tokenizers' decode(ids); invalid UTF-8 becomes U+FFFD.\n"
            "\n"
            "  --vocab FILE        vocabulary file (or a directory with tokenizer.json)\n"
            "  --tokens IDS        comma-separated token ids (may be empty)\n"
            "  --skip-special      leave out special tokens (skip_special_tokens)\n"
            "  --spaces-between-special   HF slow-tokenizer spacing around added tokens\n");
}

struct detok_opts {
    const char *vocab;
    bool have_tokens;
    int32_t *ids;
    size_t n;
    struct nextok_decode_params dp;
};

static enum cli_parse parse_one(struct detok_opts *o, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--skip-special") == 0) {
        o->dp.skip_special_tokens = true;
        return CLI_PARSE_OK;
    }
    if (strcmp(arg, "--spaces-between-special") == 0) {
        o->dp.spaces_between_special_tokens = true;
        return CLI_PARSE_OK;
    }
    bool vocab = cli_is_flag(arg, "--vocab");
    if (!vocab && !cli_is_flag(arg, "--tokens")) return CLI_PARSE_NOT_MINE;
    const char *v = cli_flag_value(CMD, argc, argv, i);
    if (!v) return CLI_PARSE_ERROR;
    if (vocab) {
        o->vocab = v;
        return CLI_PARSE_OK;
    }
    free(o->ids);
    o->ids = NULL;
    o->have_tokens = true;
    return cli_parse_ids(CMD, "--tokens", v, &o->ids, &o->n) == 0 ? CLI_PARSE_OK : CLI_PARSE_ERROR;
}

static int parse(struct detok_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        enum cli_parse r = parse_one(o, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = cli_unknown_flag(CMD, argv[i]);
        if (r == CLI_PARSE_ERROR) return CLI_EXIT_USAGE;
    }
    if (!o->vocab) return cli_fail(CMD, "--vocab FILE is required");
    if (!o->have_tokens) return cli_fail(CMD, "--tokens IDS is required");
    return 0;
}

static int load_vocab(const char *path, struct nextok_vocab **v)
{
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    nextok_status st = nextok_vocab_load_file(v, path, &err);
    if (st != NEXTOK_OK)
        return cli_fail(CMD, "--vocab %s: %s", path, err.msg[0] ? err.msg : nextok_strerror(st));
    return 0;
}

static int run(struct detok_opts *o, struct nextok_vocab **v, char **text)
{
    if (load_vocab(o->vocab, v) != 0) return CLI_EXIT_USAGE;
    int32_t n_tokens = nextok_vocab_n_tokens(*v);
    for (size_t k = 0; k < o->n; k++)
        if (o->ids[k] >= n_tokens)
            return cli_fail(CMD, "--tokens: id %ld out of range [0, %ld) for this vocabulary",
                            (long)o->ids[k], (long)n_tokens);
    size_t need = 0;
    nextok_status st = nextok_vocab_decode(*v, o->ids, o->n, &o->dp, NULL, 0, &need);
    if (st != NEXTOK_OK && st != NEXTOK_ERR_BUFFER_TOO_SMALL)
        return cli_fail(CMD, "decode: %s", nextok_strerror(st));
    *text = malloc(need ? need : 1);
    if (!*text) return cli_fail(CMD, "out of memory for %zu bytes of text", need);
    st = nextok_vocab_decode(*v, o->ids, o->n, &o->dp, *text, need, &need);
    if (st != NEXTOK_OK) return cli_fail(CMD, "decode: %s", nextok_strerror(st));
    if (fwrite(*text, 1, need, stdout) != need || fflush(stdout) != 0)
        return cli_fail(CMD, "writing to stdout failed");
    return 0;
}

int nextok_cmd_detok(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct detok_opts o;
    memset(&o, 0, sizeof o);
    o.dp = nextok_decode_default_params();
    struct nextok_vocab *v = NULL;
    char *text = NULL;
    int rc = parse(&o, argc, argv);
    if (rc == 0) rc = run(&o, &v, &text);
    free(text);
    free(o.ids);
    nextok_vocab_free(v);
    return rc;
}
