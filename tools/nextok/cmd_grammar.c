/*
 * nextok grammar check | accepts | mask | bench: compile a grammar (GBNF,
 * JSON Schema or regex) and say whether it is valid, whether a text is a
 * sentence of it, walk token ids through its masks as an engine would, or
 * time that walk over many grammars and texts.
 */
#include "cli.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "grammar";

static void usage(FILE *f)
{
    fputs("Usage: nextok grammar check GRAMMAR [--vocab FILE]\n"
          "       nextok grammar accepts GRAMMAR (--text STR | --text-file FILE) [--vocab FILE]\n"
          "       nextok grammar mask --vocab FILE GRAMMAR (--tokens 1,2,3 | --text STR) [--json]\n"
          "       nextok grammar bench --vocab FILE --cases DIR [--warm] [--json]\n"
          "\n"
          "check: compile the grammar; exit 0 when it is valid, else one line with the\n"
          "place (line and column, or the JSON pointer) and exit 2.\n"
          "accepts: print \"accepted\" (exit 0) when the text is a sentence of the\n"
          "grammar, \"rejected\" (exit 1) when not; exit 2 on bad input (a schema that\n"
          "cannot be enforced is bad input).\n"
          "mask: walk the ids as an engine would: before each id compute the full mask\n"
          "and check the id is allowed, then accept it; stop at the first id that is\n"
          "not (exit 1). --text: its ids from the vocabulary's encoder (no BOS/EOS).\n"
          "bench: the same walk for every grammar in DIR (NAME.json a JSON Schema,\n"
          "NAME.gbnf, or NAME.regex holding the expression) over the texts of NAME.txt\n"
          "(one per line, as they are); prints compile and per-mask percentiles.\n"
          "\n",
          f);
    cli_grammar_usage(f);
    fputs("\n  --text STR          the text (accepts, mask)\n"
          "  --text-file FILE    the text from a file, exactly its bytes (accepts)\n"
          "  --tokens 1,2,3      token ids (mask)\n"
          "  --vocab FILE        a vocabulary (mask, bench; <token> references in GBNF)\n"
          "  --cases DIR         grammars and texts (bench)\n"
          "  --json              one JSON object instead of text (mask, bench)\n"
          "  --warm              bench: each text's matcher is a clone of one per grammar\n"
          "                      (their parser states are shared), not a fresh matcher\n",
          f);
}

enum sub {
    SUB_CHECK,
    SUB_ACCEPTS,
    SUB_MASK,
    SUB_BENCH
};

struct grammar_opts {
    enum sub sub;
    struct cli_grammar g;
    const char *text, *text_file, *vocab, *tokens, *cases;
    bool json, warm;
};

static int parse_sub(struct grammar_opts *o, int argc, char **argv)
{
    static const char *const SUBS[] = {"check", "accepts", "mask", "bench"};
    for (size_t k = 0; argc >= 2 && k < 4; k++)
        if (strcmp(argv[1], SUBS[k]) == 0) return o->sub = (enum sub)k, 0;
    return cli_fail(CMD, "expecting check, accepts, mask or bench (see nextok grammar --help)");
}

static int parse(struct grammar_opts *o, int argc, char **argv)
{
    if (parse_sub(o, argc, argv) != 0) return CLI_EXIT_USAGE;
    for (int i = 2; i < argc; i++) {
        enum cli_parse r = cli_grammar_parse(&o->g, CMD, argc, argv, &i);
        if (r == CLI_PARSE_ERROR) return CLI_EXIT_USAGE;
        if (r == CLI_PARSE_OK) continue;
        if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--warm") == 0) {
            *(argv[i][2] == 'j' ? &o->json : &o->warm) = true;
            continue;
        }
        static const char *const VALUED[] = {"--text", "--text-file", "--vocab", "--tokens",
                                             "--cases"};
        const char **dst[] = {&o->text, &o->text_file, &o->vocab, &o->tokens, &o->cases};
        size_t k = 0;
        while (k < 5 && !cli_is_flag(argv[i], VALUED[k])) k++;
        if (k == 5) return cli_unknown_flag(CMD, argv[i]), CLI_EXIT_USAGE;
        if (!(*dst[k] = cli_flag_value(CMD, argc, argv, &i))) return CLI_EXIT_USAGE;
    }
    if (cli_grammar_check(&o->g, CMD) != 0) return CLI_EXIT_USAGE;
    if (o->sub != SUB_BENCH && !cli_grammar_given(&o->g))
        return cli_fail(CMD, "give the grammar: --gbnf FILE, --json-schema FILE or --regex RE");
    if (o->sub == SUB_ACCEPTS && !o->text == !o->text_file)
        return cli_fail(CMD, "give one of --text STR and --text-file FILE");
    if (o->sub == SUB_MASK && !o->text == !o->tokens)
        return cli_fail(CMD, "give one of --tokens 1,2,3 and --text STR");
    if ((o->sub == SUB_MASK || o->sub == SUB_BENCH) && !o->vocab)
        return cli_fail(CMD, "--vocab FILE is required");
    if (o->sub == SUB_BENCH && !o->cases) return cli_fail(CMD, "--cases DIR is required");
    if (o->sub == SUB_BENCH && cli_grammar_given(&o->g))
        return cli_fail(CMD, "bench reads its grammars from --cases DIR");
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

/* ---- the walk ------------------------------------------------------------------ */

struct walk_step {
    int32_t token;
    bool allowed;
    size_t n_allowed;
    double mask_us;
};

/* Walk ids through a new matcher: steps[] filled up to and including the
 * first refused id; *n the count, *accepting after the last accepted id. */
static int walk(const struct nextok_compiled_grammar *cg, const struct nextok_matcher *root,
                const int32_t *ids, size_t n_ids, struct walk_step *steps, size_t *n,
                bool *accepting)
{
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    struct nextok_matcher *m = NULL;
    nextok_status st =
        root ? nextok_matcher_clone(&m, root, &err) : nextok_matcher_init(&m, cg, &err);
    if (st != NEXTOK_OK) return cli_fail(CMD, "%s", err.msg);
    size_t words = NEXTOK_BITMASK_WORDS(nextok_compiled_grammar_n_vocab(cg));
    int32_t *mask = malloc(words * sizeof *mask);
    int rc = mask ? 0 : cli_fail(CMD, "out of memory");
    *n = 0;
    for (size_t i = 0; rc == 0 && i < n_ids; i++) {
        struct walk_step *s = &steps[(*n)++];
        s->token = ids[i];
        double t0 = cli_now_s();
        if (nextok_matcher_fill_bitmask(m, mask, words, &s->n_allowed, &err) != NEXTOK_OK) {
            rc = cli_fail(CMD, "step %zu: %s", i, err.msg);
            break;
        }
        s->mask_us = (cli_now_s() - t0) * 1e6;
        s->allowed = ids[i] >= 0 && (size_t)ids[i] < words * 32 &&
                     ((mask[ids[i] >> 5] >> (ids[i] & 31)) & 1);
        if (!s->allowed) break;
        if (nextok_matcher_accept_token(m, ids[i], &err) != NEXTOK_OK)
            rc = cli_fail(CMD, "step %zu: %s", i, err.msg);
    }
    *accepting = nextok_matcher_is_accepting(m);
    free(mask);
    nextok_matcher_free(m);
    return rc;
}

static int encode_text(const struct nextok_vocab *v, const char *text, size_t len, int32_t **ids,
                       size_t *n)
{
    struct nextok_encode_params p = nextok_encode_default_params();
    p.add_bos = p.add_eos = 0;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    *ids = NULL;
    nextok_status st = nextok_vocab_encode(v, text, len, &p, NULL, 0, n, &err);
    if (st != NEXTOK_OK && st != NEXTOK_ERR_BUFFER_TOO_SMALL) return cli_fail(CMD, "%s", err.msg);
    *ids = malloc((*n ? *n : 1) * sizeof **ids);
    if (!*ids) return cli_fail(CMD, "out of memory");
    if (nextok_vocab_encode(v, text, len, &p, *ids, *n, n, &err) != NEXTOK_OK)
        return cli_fail(CMD, "%s", err.msg);
    return 0;
}

static void print_mask(const struct grammar_opts *o, double compile_us,
                       const struct walk_step *steps, size_t n, bool accepting)
{
    if (o->json) {
        printf("{\"compile_us\": %.1f, \"steps\": [", compile_us);
        for (size_t i = 0; i < n; i++)
            printf("%s{\"token\": %d, \"allowed\": %s, \"n_allowed\": %zu, \"mask_us\": %.2f}",
                   i ? ", " : "", steps[i].token, steps[i].allowed ? "true" : "false",
                   steps[i].n_allowed, steps[i].mask_us);
        printf("], \"accepting\": %s}\n", accepting ? "true" : "false");
        return;
    }
    printf("compile %.1f us\n", compile_us);
    for (size_t i = 0; i < n; i++)
        printf("%4zu  token %7d  %-7s  %7zu allowed  %9.2f us\n", i, steps[i].token,
               steps[i].allowed ? "allowed" : "REFUSED", steps[i].n_allowed, steps[i].mask_us);
    printf("accepting: %s\n", accepting ? "yes" : "no");
}

static int mask(const struct grammar_opts *o, const struct nextok_vocab *v)
{
    int32_t *ids = NULL;
    size_t n_ids = 0, n = 0;
    int rc = o->tokens
                 ? cli_parse_ids(CMD, "--tokens", o->tokens, &ids, &n_ids) != 0 ? CLI_EXIT_USAGE : 0
                 : encode_text(v, o->text, strlen(o->text), &ids, &n_ids);
    struct nextok_token_table *tt = NULL;
    struct nextok_grammar *g = NULL;
    struct nextok_compiled_grammar *cg = NULL;
    struct walk_step *steps = malloc((n_ids ? n_ids : 1) * sizeof *steps);
    bool accepting = false;
    struct nextok_error err;
    if (rc == 0 && nextok_token_table_init(&tt, v, NULL, &err) != NEXTOK_OK)
        rc = cli_fail(CMD, "token table: %s", err.msg);
    double t0 = cli_now_s();
    if (rc == 0) rc = cli_grammar_compile(&o->g, CMD, v, &g);
    if (rc == 0) rc = cli_grammar_bind(CMD, g, v, &tt, &cg);
    double compile_us = (cli_now_s() - t0) * 1e6;
    if (rc == 0 && !steps) rc = cli_fail(CMD, "out of memory");
    if (rc == 0) rc = walk(cg, NULL, ids, n_ids, steps, &n, &accepting);
    if (rc == 0) {
        print_mask(o, compile_us, steps, n, accepting);
        if (fflush(stdout) != 0) rc = cli_fail(CMD, "writing to stdout failed");
    }
    if (rc == 0 && n && !steps[n - 1].allowed) rc = 1;
    free(steps);
    free(ids);
    nextok_compiled_grammar_free(cg);
    nextok_grammar_free(g);
    nextok_token_table_free(tt);
    return rc;
}

/* ---- bench ----------------------------------------------------------------------- */

struct timings {
    double *t;
    size_t n, cap;
};

static int push_time(struct timings *x, double t)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 1024;
        double *p = realloc(x->t, cap * sizeof *p);
        if (!p) return cli_fail(CMD, "out of memory");
        x->t = p, x->cap = cap;
    }
    x->t[x->n++] = t;
    return 0;
}

static double pct(const struct timings *x, double q)
{
    if (!x->n) return 0;
    size_t k = (size_t)(q * (double)(x->n - 1) + 0.5);
    return x->t[k < x->n ? k : x->n - 1];
}

struct bench_totals {
    struct timings compile, masks;
    size_t grammars, refused, texts, walked_tokens, stopped;
};

/* The grammar flags for case file `name` in dir (NULL when it is not one). */
static const char *case_source(const char *dir, const char *name, struct cli_grammar *g, char *path,
                               size_t cap, char **regex)
{
    size_t n = strlen(name);
    cli_grammar_init(g);
    *regex = NULL;
    snprintf(path, cap, "%s/%s", dir, name);
    if (n > 5 && strcmp(name + n - 5, ".json") == 0) return g->json_schema = path, ".json";
    if (n > 5 && strcmp(name + n - 5, ".gbnf") == 0) return g->gbnf = path, ".gbnf";
    if (n > 6 && strcmp(name + n - 6, ".regex") == 0) {
        size_t len = 0;
        if (cli_read_all(CMD, "--cases", path, regex, &len) != 0) return NULL;
        while (len && ((*regex)[len - 1] == '\n' || (*regex)[len - 1] == '\r')) (*regex)[--len] = 0;
        g->regex = *regex;
        return ".regex";
    }
    return NULL;
}

/* Each line of NAME.txt walked through cg. */
static int bench_texts(const struct nextok_vocab *v, const struct nextok_compiled_grammar *cg,
                       const char *txt_path, bool warm, struct bench_totals *b)
{
    /* warm: every text's matcher is a clone of one per grammar, so states
     * and masks made for one text serve the next (a server's way) */
    struct nextok_matcher *root = NULL;
    struct nextok_error err;
    if (warm && nextok_matcher_init(&root, cg, &err) != NEXTOK_OK)
        return cli_fail(CMD, "%s", err.msg);
    char *data = NULL;
    size_t len = 0;
    if (cli_read_all(CMD, "--cases", txt_path, &data, &len) != 0) return CLI_EXIT_USAGE;
    int rc = 0;
    for (char *line = data, *end = data + len; rc == 0 && line < end;) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n_line = nl ? (size_t)(nl - line) : (size_t)(end - line);
        int32_t *ids = NULL;
        size_t n_ids = 0, n = 0;
        bool accepting = false;
        if (n_line && (rc = encode_text(v, line, n_line, &ids, &n_ids)) == 0) {
            struct walk_step *steps = malloc((n_ids ? n_ids : 1) * sizeof *steps);
            rc = steps ? walk(cg, root, ids, n_ids, steps, &n, &accepting)
                       : cli_fail(CMD, "out of memory");
            for (size_t i = 0; rc == 0 && i < n; i++) rc = push_time(&b->masks, steps[i].mask_us);
            b->texts++;
            b->walked_tokens += n;
            b->stopped += n && !steps[n - 1].allowed;
            free(steps);
        }
        free(ids);
        line += n_line + 1;
    }
    free(data);
    nextok_matcher_free(root);
    return rc;
}

static int bench_dir(const struct grammar_opts *o, const struct nextok_vocab *v,
                     struct nextok_token_table **tt, struct bench_totals *b)
{
    DIR *d = opendir(o->cases);
    if (!d) return cli_fail(CMD, "--cases %s: cannot open the folder", o->cases);
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        char path[4096], txt[4096];
        char *regex = NULL;
        struct cli_grammar g;
        const char *ext = case_source(o->cases, e->d_name, &g, path, sizeof path, &regex);
        if (!ext) continue;
        snprintf(txt, sizeof txt, "%s/%.*s.txt", o->cases, (int)(strlen(e->d_name) - strlen(ext)),
                 e->d_name);
        struct nextok_grammar *gr = NULL;
        struct nextok_compiled_grammar *cg = NULL;
        double t0 = cli_now_s();
        int crc = cli_grammar_compile(&g, CMD, v, &gr);
        if (crc == 0) crc = cli_grammar_bind(CMD, gr, v, tt, &cg);
        double us = (cli_now_s() - t0) * 1e6;
        b->grammars++; /* a refusal has printed its reason: counted, not fatal */
        if (crc != 0) {
            b->refused++;
        } else {
            rc = push_time(&b->compile, us);
            FILE *f = fopen(txt, "rb");
            if (f) fclose(f);
            if (rc == 0 && f) rc = bench_texts(v, cg, txt, o->warm, b);
        }
        nextok_compiled_grammar_free(cg);
        nextok_grammar_free(gr);
        free(regex);
    }
    closedir(d);
    return rc;
}

static void print_bench(const struct grammar_opts *o, struct bench_totals *b, double table_us)
{
    cli_sort_doubles(b->compile.t, b->compile.n);
    cli_sort_doubles(b->masks.t, b->masks.n);
    double mean = 0;
    size_t over = 0;
    for (size_t i = 0; i < b->masks.n; i++) mean += b->masks.t[i], over += b->masks.t[i] > 1000;
    mean = b->masks.n ? mean / (double)b->masks.n : 0;
    const struct timings *t[2] = {&b->compile, &b->masks};
    const char *name[2] = {"compile_us", "mask_us"};
    if (o->json) {
        printf("{\"grammars\": %zu, \"refused\": %zu, \"texts\": %zu, \"masks\": %zu, "
               "\"stopped\": %zu, \"token_table_us\": %.1f",
               b->grammars, b->refused, b->texts, b->masks.n, b->stopped, table_us);
        for (int k = 0; k < 2; k++)
            printf(", \"%s\": {\"p50\": %.2f, \"p90\": %.2f, \"p99\": %.2f, \"p99.9\": %.2f, "
                   "\"max\": %.2f}",
                   name[k], pct(t[k], 0.5), pct(t[k], 0.9), pct(t[k], 0.99), pct(t[k], 0.999),
                   pct(t[k], 1.0));
        printf(", \"mask_mean_us\": %.2f, \"masks_over_1ms\": %zu}\n", mean, over);
        return;
    }
    printf("grammars %zu (refused %zu), texts %zu, masks %zu (walks stopped at a refused id: "
           "%zu)\ntoken table %.1f ms\n",
           b->grammars, b->refused, b->texts, b->masks.n, b->stopped, table_us / 1e3);
    for (int k = 0; k < 2; k++)
        printf("%-10s p50 %9.2f  p90 %9.2f  p99 %9.2f  p99.9 %9.2f  max %9.2f us\n", name[k],
               pct(t[k], 0.5), pct(t[k], 0.9), pct(t[k], 0.99), pct(t[k], 0.999), pct(t[k], 1.0));
    printf("mask mean %.2f us, over 1 ms: %zu (%.3f %%)\n", mean, over,
           b->masks.n ? 100.0 * (double)over / (double)b->masks.n : 0.0);
}

static int bench(const struct grammar_opts *o, const struct nextok_vocab *v)
{
    struct bench_totals b;
    memset(&b, 0, sizeof b);
    struct nextok_token_table *tt = NULL;
    struct nextok_error err;
    double t0 = cli_now_s();
    if (nextok_token_table_init(&tt, v, NULL, &err) != NEXTOK_OK)
        return cli_fail(CMD, "token table: %s", err.msg);
    double table_us = (cli_now_s() - t0) * 1e6;
    int rc = bench_dir(o, v, &tt, &b);
    if (rc == 0) {
        print_bench(o, &b, table_us);
        if (fflush(stdout) != 0) rc = cli_fail(CMD, "writing to stdout failed");
    }
    free(b.compile.t);
    free(b.masks.t);
    nextok_token_table_free(tt);
    return rc;
}

int nextok_cmd_grammar(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct grammar_opts o;
    memset(&o, 0, sizeof o);
    cli_grammar_init(&o.g);
    struct nextok_vocab *v = NULL;
    struct nextok_grammar *g = NULL;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    int rc = parse(&o, argc, argv);
    if (rc == 0 && o.vocab && nextok_vocab_load_file(&v, o.vocab, &err) != NEXTOK_OK)
        rc = cli_fail(CMD, "--vocab %s: %s", o.vocab, err.msg);
    if (rc == 0 && (o.sub == SUB_CHECK || o.sub == SUB_ACCEPTS))
        rc = cli_grammar_compile(&o.g, CMD, v, &g);
    if (rc == 0 && o.sub == SUB_ACCEPTS) rc = accepts(&o, g);
    if (rc == 0 && o.sub == SUB_MASK) rc = mask(&o, v);
    if (rc == 0 && o.sub == SUB_BENCH) rc = bench(&o, v);
    nextok_grammar_free(g);
    nextok_vocab_free(v);
    return rc;
}
