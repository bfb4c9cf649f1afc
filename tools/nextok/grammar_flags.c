/*
 * The grammar flags every command that constrains takes: --gbnf FILE,
 * --json-schema FILE or --regex RE (one of them), and the JSON Schema
 * options --json-ws, --json-order, --strict and --lenient.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

void cli_grammar_init(struct cli_grammar *g) { memset(g, 0, sizeof *g); }

bool cli_grammar_given(const struct cli_grammar *g)
{
    return g->gbnf || g->json_schema || g->regex;
}

enum cli_parse cli_grammar_parse(struct cli_grammar *g, const char *cmd, int argc, char **argv,
                                 int *i)
{
    static const char *const VALUED[] = {"--gbnf", "--json-schema", "--regex", "--json-ws",
                                         "--json-order"};
    const char **dst[] = {&g->gbnf, &g->json_schema, &g->regex, &g->ws, &g->order};
    const char *a = argv[*i];
    if (strcmp(a, "--strict") == 0) return g->strict = true, CLI_PARSE_OK;
    if (strcmp(a, "--lenient") == 0) return g->lenient = true, CLI_PARSE_OK;
    if (strcmp(a, "--check-first") == 0) return g->check_first = true, CLI_PARSE_OK;
    if (cli_is_flag(a, "--trigger") || cli_is_flag(a, "--trigger-pattern")) {
        bool pattern = cli_is_flag(a, "--trigger-pattern");
        size_t *n = pattern ? &g->n_patterns : &g->n_triggers;
        if (*n == 16) return cli_fail(cmd, "%s: at most 16", a), CLI_PARSE_ERROR;
        const char *v = cli_flag_value(cmd, argc, argv, i);
        if (!v) return CLI_PARSE_ERROR;
        (pattern ? g->patterns : g->triggers)[(*n)++] = v;
        return CLI_PARSE_OK;
    }
    if (cli_is_flag(a, "--trigger-tokens"))
        return (g->trigger_tokens = cli_flag_value(cmd, argc, argv, i)) ? CLI_PARSE_OK
                                                                        : CLI_PARSE_ERROR;
    for (size_t k = 0; k < sizeof VALUED / sizeof *VALUED; k++) {
        if (!cli_is_flag(a, VALUED[k])) continue;
        if (!(*dst[k] = cli_flag_value(cmd, argc, argv, i))) return CLI_PARSE_ERROR;
        return CLI_PARSE_OK;
    }
    return CLI_PARSE_NOT_MINE;
}

int cli_grammar_check(const struct cli_grammar *g, const char *cmd)
{
    int given = (g->gbnf != NULL) + (g->json_schema != NULL) + (g->regex != NULL);
    if (given > 1) return cli_fail(cmd, "give one of --gbnf, --json-schema and --regex");
    if ((g->ws || g->order || g->strict || g->lenient) && !g->json_schema)
        return cli_fail(cmd, "--json-ws, --json-order, --strict and --lenient go with "
                             "--json-schema");
    if ((g->n_triggers || g->n_patterns || g->trigger_tokens) && !given)
        return cli_fail(cmd, "--trigger, --trigger-pattern and --trigger-tokens go with a grammar");
    return 0;
}

static void print_ignored(void *user, const char *pointer, const char *keyword)
{
    fprintf(stderr, "nextok %s: --lenient: ignored '%s' at %s\n", (const char *)user, keyword,
            pointer[0] ? pointer : "(root)");
}

static int schema_params(const struct cli_grammar *g, const char *cmd,
                         struct nextok_json_schema_params *sp)
{
    *sp = nextok_json_schema_default_params();
    sp->strict = g->strict;
    sp->lenient = g->lenient;
    sp->on_ignored = print_ignored;
    sp->user = (void *)cmd;
    if (g->order && strcmp(g->order, "any") != 0 && strcmp(g->order, "schema") != 0)
        return cli_fail(cmd, "--json-order: schema or any, not '%s'", g->order), CLI_EXIT_USAGE;
    if (g->order && strcmp(g->order, "any") == 0) sp->order = NEXTOK_JSON_ORDER_ANY;
    if (!g->ws) return 0;
    if (strcmp(g->ws, "compact") == 0) {
        sp->whitespace = NEXTOK_JSON_WS_COMPACT;
        return 0;
    }
    long long n = 0;
    if (cli_parse_int(cmd, "--json-ws", g->ws, 0, 64, &n) != 0) return CLI_EXIT_USAGE;
    sp->whitespace = NEXTOK_JSON_WS_FLEXIBLE;
    sp->max_ws = (unsigned)n;
    return 0;
}

/* *out made lazy: free text until a --trigger word, a --trigger-pattern
 * match or a --trigger-tokens id. */
static int make_lazy(const struct cli_grammar *g, const char *cmd,
                     const struct nextok_grammar_params *p, struct nextok_grammar **out)
{
    int32_t *ids = NULL;
    size_t n_ids = 0;
    if (g->trigger_tokens &&
        cli_parse_ids(cmd, "--trigger-tokens", g->trigger_tokens, &ids, &n_ids) != 0)
        return CLI_EXIT_USAGE;
    struct nextok_lazy_params lp = nextok_lazy_default_params();
    lp.words = g->triggers, lp.n_words = g->n_triggers, lp.tokens = ids, lp.n_tokens = n_ids;
    lp.patterns = g->patterns, lp.n_patterns = g->n_patterns;
    struct nextok_grammar *lz = NULL;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    nextok_status st = nextok_grammar_init_lazy(&lz, *out, &lp, p, &err);
    free(ids);
    nextok_grammar_free(*out);
    *out = lz;
    return st == NEXTOK_OK ? 0 : cli_fail(cmd, "lazy grammar: %s", err.msg);
}

int cli_grammar_compile(const struct cli_grammar *g, const char *cmd, const struct nextok_vocab *v,
                        struct nextok_grammar **out)
{
    *out = NULL;
    struct nextok_grammar_params p = nextok_grammar_default_params();
    p.vocab = v;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    nextok_status st;
    const char *flag = g->gbnf ? "--gbnf" : g->json_schema ? "--json-schema" : "--regex";
    if (g->regex) {
        st = nextok_grammar_init_regex(out, g->regex, strlen(g->regex), &p, &err);
    } else {
        char *src = NULL;
        size_t len = 0;
        const char *path = g->gbnf ? g->gbnf : g->json_schema;
        if (cli_read_all(cmd, flag, path, &src, &len) != 0) return CLI_EXIT_USAGE;
        if (g->gbnf) {
            st = nextok_grammar_init_gbnf(out, src, len, &p, &err);
        } else {
            struct nextok_json_schema_params sp;
            if (schema_params(g, cmd, &sp) != 0) {
                free(src);
                return CLI_EXIT_USAGE;
            }
            st = nextok_grammar_init_json_schema(out, src, len, &sp, &p, &err);
        }
        free(src);
    }
    if (st != NEXTOK_OK) return cli_fail(cmd, "%s: %s", flag, err.msg);
    return g->n_triggers || g->n_patterns || g->trigger_tokens ? make_lazy(g, cmd, &p, out) : 0;
}

int cli_grammar_bind(const char *cmd, const struct nextok_grammar *g, const struct nextok_vocab *v,
                     struct nextok_token_table **tt, struct nextok_compiled_grammar **cg)
{
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    *cg = NULL;
    if (!*tt && nextok_token_table_init(tt, v, NULL, &err) != NEXTOK_OK)
        return cli_fail(cmd, "token table: %s", err.msg);
    if (nextok_compiled_grammar_init(cg, g, *tt, NULL, &err) != NEXTOK_OK)
        return cli_fail(cmd, "grammar: %s", err.msg);
    return 0;
}

void cli_grammar_usage(FILE *f)
{
    fputs("Grammar (one of; constrains every step to what the grammar allows):\n"
          "  --gbnf FILE          a GBNF grammar (llama.cpp's format; - is stdin)\n"
          "  --json-schema FILE   a JSON Schema (draft 2020-12; draft-07 and -04 spellings)\n"
          "  --regex RE           a regular expression the whole text must match\n"
          "  --json-ws compact|N  JSON Schema: no whitespace, or at most N characters per\n"
          "                       place (default 20)\n"
          "  --json-order O       JSON Schema: properties in schema order (default) or\n"
          "                       any (each once; at most 10 per object)\n"
          "  --strict             JSON Schema: no properties beyond those listed unless\n"
          "                       additionalProperties says so\n"
          "  --lenient            JSON Schema: ignore keywords that cannot be enforced\n"
          "                       (each is printed), instead of refusing the schema\n"
          "  --check-first        sample unmasked, make the mask only when the token is\n"
          "                       refused (llama.cpp's shortcut; exact without filters)\n"
          "  --trigger WORD       a lazy grammar: free text until WORD (repeatable), then\n"
          "                       the grammar\n"
          "  --trigger-pattern RE the same with a regex: the grammar starts where the text\n"
          "                       first ends with a match (repeatable)\n"
          "  --trigger-tokens IDS the same with token ids as triggers (1,2,3)\n",
          f);
}

int cli_sampling_grammar(struct cli_sampling *s, const char *cmd,
                         const struct nextok_compiled_grammar **cg)
{
    *cg = s->cg;
    if (s->cg || !cli_grammar_given(&s->grammar)) return 0;
    if (cli_grammar_check(&s->grammar, cmd) != 0) return CLI_EXIT_USAGE;
    if (!s->vocab)
        return cli_fail(cmd,
                        "--gbnf, --json-schema and --regex need --vocab FILE (the tokens' bytes)");
    if (cli_grammar_compile(&s->grammar, cmd, s->vocab, &s->g) != 0) return CLI_EXIT_USAGE;
    if (cli_grammar_bind(cmd, s->g, s->vocab, &s->tt, &s->cg) != 0) return CLI_EXIT_USAGE;
    *cg = s->cg;
    return 0;
}

int cli_chain_attach_grammar(struct cli_sampling *s, const char *cmd, struct nextok_chain *c)
{
    const struct nextok_compiled_grammar *cg = NULL;
    if (cli_sampling_grammar(s, cmd, &cg) != 0) return CLI_EXIT_USAGE;
    if (!cg) return 0;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    if (nextok_compiled_grammar_n_vocab(cg) > nextok_chain_n_vocab(c))
        return cli_fail(cmd, "the vocabulary has %d tokens, the logits rows %d",
                        nextok_compiled_grammar_n_vocab(cg), nextok_chain_n_vocab(c));
    struct nextok_matcher *m = NULL;
    if (nextok_matcher_init(&m, cg, &err) != NEXTOK_OK) return cli_fail(cmd, "%s", err.msg);
    struct nextok_mask_source src;
    nextok_matcher_mask_source(m, &src);
    src.check_first = s->grammar.check_first;
    if (nextok_chain_set_mask_source(c, &src) != NEXTOK_OK) {
        nextok_matcher_free(m);
        return cli_fail(cmd, "grammar: %s", nextok_chain_errmsg(c));
    }
    return 0;
}
