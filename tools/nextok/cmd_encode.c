/*
 * nextok encode: text to token ids with a vocabulary, printed comma-separated
 * on one line, or as one JSON object with the ids and the tokens' spellings.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "encode";

static void usage(FILE *f)
{
    fprintf(
        f, "Usage: nextok encode --vocab FILE (--text STR | --text-file FILE)\n"
           "                     [--parse-special] [--bos | --no-bos] [--eos | --no-eos] [--json]\n"
           "\n"
           "Encode UTF-8 text with the vocabulary's own tokenizer (tokenizer.json as HF\n"
           "tokenizers does, GGUF as llama.cpp does, .tiktoken as tiktoken does) and print\n"
           "the ids comma-separated on one line.\n"
           "\n"
           "  --vocab FILE        vocabulary file (or a directory with tokenizer.json)\n"
           "  --text STR          the text\n"
           "  --text-file FILE    read the text from FILE (exactly its bytes; - is stdin)\n"
           "  --parse-special     special tokens written in the text (\"<|eot_id|>\") become\n"
           "                      their ids; otherwise they are plain text\n"
           "  --bos, --no-bos     add BOS or not (default: as the vocabulary says)\n"
           "  --eos, --no-eos     add EOS or not (default: as the vocabulary says)\n"
           "  --json              print {\"ids\": [...], \"pieces\": [...]} (pieces: each\n"
           "                      token as the vocabulary spells it)\n"
           "  --bench             time the encoding instead of printing ids: the whole\n"
           "                      text as one string, --runs times with one encoder; prints\n"
           "                      one JSON line with the median and MB/s (10^6 bytes)\n"
           "  --runs N            runs for --bench (default 7)\n"
           "  --lines             encode each line of the text (up to and with its \"\\n\")\n"
           "                      on its own and print one line of ids per line; BOS/EOS\n"
           "                      as above, on each line\n");
}

struct encode_opts {
    const char *vocab, *text, *text_file;
    bool json, bench, lines;
    long long runs;
    struct nextok_encode_params ep;
};

static enum cli_parse parse_switch(struct encode_opts *o, const char *arg)
{
    static const struct {
        const char *name;
        int bos, eos;
    } ends[] = {{"--bos", 1, -2}, {"--no-bos", 0, -2}, {"--eos", -2, 1}, {"--no-eos", -2, 0}};
    if (strcmp(arg, "--parse-special") == 0)
        o->ep.parse_special = true;
    else if (strcmp(arg, "--json") == 0)
        o->json = true;
    else if (strcmp(arg, "--bench") == 0)
        o->bench = true;
    else if (strcmp(arg, "--lines") == 0)
        o->lines = true;
    else {
        for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++) {
            if (strcmp(arg, ends[k].name) != 0) continue;
            if (ends[k].bos != -2) o->ep.add_bos = ends[k].bos;
            if (ends[k].eos != -2) o->ep.add_eos = ends[k].eos;
            return CLI_PARSE_OK;
        }
        return CLI_PARSE_NOT_MINE;
    }
    return CLI_PARSE_OK;
}

static enum cli_parse parse_one(struct encode_opts *o, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    enum cli_parse r = parse_switch(o, arg);
    if (r != CLI_PARSE_NOT_MINE) return r;
    if (cli_is_flag(arg, "--runs")) {
        const char *v = cli_flag_value(CMD, argc, argv, i);
        return v && cli_parse_int(CMD, "--runs", v, 1, 1000, &o->runs) == 0 ? CLI_PARSE_OK
                                                                            : CLI_PARSE_ERROR;
    }
    const char **dst = cli_is_flag(arg, "--vocab")       ? &o->vocab
                       : cli_is_flag(arg, "--text")      ? &o->text
                       : cli_is_flag(arg, "--text-file") ? &o->text_file
                                                         : NULL;
    if (!dst) return CLI_PARSE_NOT_MINE;
    *dst = cli_flag_value(CMD, argc, argv, i);
    return *dst ? CLI_PARSE_OK : CLI_PARSE_ERROR;
}

static int parse(struct encode_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        enum cli_parse r = parse_one(o, argc, argv, &i);
        if (r == CLI_PARSE_NOT_MINE) r = cli_unknown_flag(CMD, argv[i]);
        if (r == CLI_PARSE_ERROR) return CLI_EXIT_USAGE;
    }
    if (!o->vocab) return cli_fail(CMD, "--vocab FILE is required");
    if (!o->text == !o->text_file)
        return cli_fail(CMD, "give one of --text STR and --text-file FILE");
    if (o->lines && (o->json || o->bench))
        return cli_fail(CMD, "--lines goes with neither --json nor --bench");
    return 0;
}

static void print_ids(const struct nextok_vocab *v, const int32_t *ids, size_t n, bool json)
{
    if (!json) {
        for (size_t k = 0; k < n; k++) printf("%s%ld", k ? "," : "", (long)ids[k]);
        putchar('\n');
        return;
    }
    fputs("{\"ids\": [", stdout);
    for (size_t k = 0; k < n; k++) printf("%s%ld", k ? ", " : "", (long)ids[k]);
    fputs("], \"pieces\": [", stdout);
    for (size_t k = 0; k < n; k++) {
        size_t len = 0;
        const char *t = nextok_vocab_token_text(v, ids[k], &len);
        if (k) fputs(", ", stdout);
        cli_json_text(stdout, t ? t : "", len); /* tiktoken: may end inside a character */
    }
    fputs("]}\n", stdout);
}

/* --bench: the whole text, runs times, into a buffer sized by the first run. */
static int bench(struct encode_opts *o, struct nextok_encoder *e, const char *text, size_t len,
                 int32_t *ids, size_t n)
{
    double t[1000];
    for (long long r = 0; r < o->runs; r++) {
        size_t got = 0;
        double t0 = cli_now_s();
        nextok_status st = nextok_encoder_encode(e, text, len, ids, n, &got);
        t[r] = cli_now_s() - t0;
        if (st != NEXTOK_OK) return cli_fail(CMD, "%s", nextok_encoder_errmsg(e));
    }
    cli_sort_doubles(t, (size_t)o->runs);
    double med = o->runs % 2 ? t[o->runs / 2] : 0.5 * (t[o->runs / 2 - 1] + t[o->runs / 2]);
    printf("{\"tool\": \"nextok\", \"vocab\": ");
    cli_json_string(stdout, o->vocab, strlen(o->vocab));
    printf(", \"text\": ");
    const char *name = o->text_file ? o->text_file : "--text";
    cli_json_string(stdout, name, strlen(name));
    printf(", \"bytes\": %zu, \"ids\": %zu, \"runs\": %lld, \"median_s\": %.6f, \"min_s\": %.6f, "
           "\"mb_per_s\": %.2f}\n",
           len, n, o->runs, med, t[0], med > 0 ? (double)len / med / 1e6 : 0.0);
    return 0;
}

/* Encode text[0, len) into *ids (grown as needed); 0 or the error printed. */
static int encode_into(struct nextok_encoder *e, const char *text, size_t len, int32_t **ids,
                       size_t *cap, size_t *n)
{
    nextok_status st = nextok_encoder_encode(e, text, len, *ids, *cap, n);
    if (st == NEXTOK_ERR_BUFFER_TOO_SMALL) {
        int32_t *p = realloc(*ids, (*n + 64) * sizeof *p);
        if (!p) return cli_fail(CMD, "out of memory");
        *ids = p;
        *cap = *n + 64;
        st = nextok_encoder_encode(e, text, len, *ids, *cap, n);
    }
    return st == NEXTOK_OK ? 0 : cli_fail(CMD, "%s", nextok_encoder_errmsg(e));
}

/* --lines: one line of ids per line of the text, each line encoded alone. */
static int encode_lines(struct nextok_encoder *e, const char *text, size_t len)
{
    int32_t *ids = NULL;
    size_t cap = 0, n = 0;
    int rc = 0;
    for (size_t at = 0; at < len && rc == 0;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t k = nl ? (size_t)(nl - (text + at)) + 1 : len - at;
        rc = encode_into(e, text + at, k, &ids, &cap, &n);
        for (size_t j = 0; rc == 0 && j < n; j++) printf("%s%ld", j ? "," : "", (long)ids[j]);
        if (rc == 0) putchar('\n');
        at += k;
    }
    free(ids);
    return rc;
}

static int encode(struct encode_opts *o, const struct nextok_vocab *v, const char *text, size_t len)
{
    struct nextok_encoder *e = NULL;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    nextok_status st = nextok_encoder_init(&e, v, &o->ep, &err);
    if (st != NEXTOK_OK) return cli_fail(CMD, "--vocab %s: %s", o->vocab, err.msg);
    if (o->lines) {
        int rc = encode_lines(e, text, len);
        nextok_encoder_free(e);
        return rc == 0 && fflush(stdout) != 0 ? cli_fail(CMD, "writing to stdout failed") : rc;
    }
    size_t n = 0;
    st = nextok_encoder_encode(e, text, len, NULL, 0, &n);
    int32_t *ids = NULL;
    if (st == NEXTOK_ERR_BUFFER_TOO_SMALL) {
        ids = malloc((n ? n : 1) * sizeof *ids);
        st = ids ? nextok_encoder_encode(e, text, len, ids, n, &n) : NEXTOK_ERR_NOMEM;
    }
    int rc = 0;
    if (st != NEXTOK_OK)
        rc = cli_fail(CMD, "%s",
                      st == NEXTOK_ERR_NOMEM && !ids ? "out of memory" : nextok_encoder_errmsg(e));
    else if (o->bench)
        rc = bench(o, e, text, len, ids, n);
    else
        print_ids(v, ids, n, o->json);
    free(ids);
    nextok_encoder_free(e);
    if (rc == 0 && fflush(stdout) != 0) rc = cli_fail(CMD, "writing to stdout failed");
    return rc;
}

int nextok_cmd_encode(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct encode_opts o;
    memset(&o, 0, sizeof o);
    o.ep = nextok_encode_default_params();
    o.runs = 7;
    int rc = parse(&o, argc, argv);
    if (rc != 0) return rc;
    char *file = NULL;
    size_t len = o.text ? strlen(o.text) : 0;
    if (o.text_file && (rc = cli_read_all(CMD, "--text-file", o.text_file, &file, &len)) != 0)
        return rc;
    struct nextok_vocab *v = NULL;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    nextok_status st = nextok_vocab_load_file(&v, o.vocab, &err);
    if (st != NEXTOK_OK)
        rc = cli_fail(CMD, "--vocab %s: %s", o.vocab, err.msg);
    else
        rc = encode(&o, v, file ? file : o.text, len);
    nextok_vocab_free(v);
    free(file);
    return rc;
}
