/*
 * sampling_flags.c - the sampling flags (llama.cpp names) shared by every
 * nextok command: parsed into struct cli_sampling, applied to struct
 * nextok_sampling_params at the end of the command line. See cli.h.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The numeric sampling flags                                                */
/* ------------------------------------------------------------------------ */

enum num_kind {
    NK_F32,   /* float field           */
    NK_I32,   /* int32_t field         */
    NK_SIZE,  /* size_t field          */
};

struct num_flag {
    const char *name;
    const char *metavar;
    enum num_kind kind;
    size_t off;          /* offsetof(struct nextok_sampling_params, field) */
    double lo, hi;       /* inclusive range checked by the CLI              */
    const char *help;
};

#define P_OFF(f) offsetof(struct nextok_sampling_params, f)
#define ANY (-HUGE_VAL), HUGE_VAL
#define I32_ANY (double)INT32_MIN, (double)INT32_MAX

static const struct num_flag NUM_FLAGS[] = {
    {"--temp", "T", NK_F32, P_OFF(temperature), ANY,
     "temperature; <= 0 is greedy"},
    {"--top-k", "K", NK_I32, P_OFF(top_k), I32_ANY, "keep the K most likely tokens; <= 0 off"},
    {"--top-p", "P", NK_F32, P_OFF(top_p), 0, 1, "nucleus sampling; 1 off"},
    {"--min-p", "P", NK_F32, P_OFF(min_p), 0, 1, "keep p >= P * p_max; 0 off"},
    {"--typical", "P", NK_F32, P_OFF(typical_p), 0, 1, "locally typical sampling; 1 off"},
    {"--top-nsigma", "N", NK_F32, P_OFF(top_n_sigma), ANY,
     "keep logits >= max - N * stddev; <= 0 off"},
    {"--xtc-probability", "P", NK_F32, P_OFF(xtc_probability), 0, 1,
     "XTC: chance of excluding top choices; 0 off"},
    {"--xtc-threshold", "P", NK_F32, P_OFF(xtc_threshold), 0, 1,
     "XTC: probability a top choice must reach"},
    {"--epsilon-cutoff", "E", NK_F32, P_OFF(epsilon_cutoff), 0, 1, "HF epsilon cutoff; 0 off"},
    {"--eta-cutoff", "E", NK_F32, P_OFF(eta_cutoff), 0, 1, "HF eta cutoff; 0 off"},
    {"--min-keep", "N", NK_SIZE, P_OFF(min_keep), 0, (double)INT32_MAX,
     "filters keep at least N tokens"},
    {"--repeat-last-n", "N", NK_I32, P_OFF(penalty_last_n), 0, (double)INT32_MAX,
     "llama profile: penalty window; 0 off"},
    {"--repeat-penalty", "R", NK_F32, P_OFF(repeat_penalty), ANY,
     "repetition penalty (> 0); 1 off"},
    {"--frequency-penalty", "F", NK_F32, P_OFF(frequency_penalty), ANY,
     "subtract F * count; 0 off"},
    {"--presence-penalty", "F", NK_F32, P_OFF(presence_penalty), ANY,
     "subtract F if seen; 0 off"},
    {"--dry-multiplier", "M", NK_F32, P_OFF(dry_multiplier), 0, HUGE_VAL, "DRY strength; 0 off"},
    {"--dry-base", "B", NK_F32, P_OFF(dry_base), ANY, "DRY exponential base (> 1)"},
    {"--dry-allowed-length", "N", NK_I32, P_OFF(dry_allowed_length), I32_ANY,
     "DRY: repeats up to N tokens are free"},
    {"--dry-penalty-last-n", "N", NK_I32, P_OFF(dry_penalty_last_n), -1, (double)INT32_MAX,
     "DRY: tokens scanned; -1 all, 0 off"},
    {"--dynatemp-range", "D", NK_F32, P_OFF(dynatemp_range), ANY,
     "dynamic temperature range; 0 off"},
    {"--dynatemp-exp", "E", NK_F32, P_OFF(dynatemp_exponent), ANY,
     "dynamic temperature exponent"},
    {"--mirostat", "N", NK_I32, P_OFF(mirostat), 0, 2, "mirostat version 1 or 2; 0 off"},
    {"--mirostat-lr", "ETA", NK_F32, P_OFF(mirostat_eta), ANY, "mirostat learning rate"},
    {"--mirostat-ent", "TAU", NK_F32, P_OFF(mirostat_tau), ANY, "mirostat target entropy"},
    {"--no-repeat-ngram", "N", NK_I32, P_OFF(no_repeat_ngram), I32_ANY,
     "HF no_repeat_ngram_size; <= 0 off"},
};

#define N_NUM_FLAGS (sizeof NUM_FLAGS / sizeof NUM_FLAGS[0])

static int parse_num(const struct num_flag *d, const char *cmd, const char *v, union cli_num *out)
{
    if (d->kind == NK_F32) return cli_parse_float(cmd, d->name, v, d->lo, d->hi, &out->f);
    return cli_parse_int(cmd, d->name, v, (long long)d->lo, (long long)d->hi, &out->i);
}

static void apply_num(const struct num_flag *d, union cli_num v, struct nextok_sampling_params *p)
{
    char *field = (char *)p + d->off;
    switch (d->kind) {
    case NK_F32: memcpy(field, &v.f, sizeof v.f); break;
    case NK_I32: {
        int32_t x = (int32_t)v.i;
        memcpy(field, &x, sizeof x);
        break;
    }
    case NK_SIZE: {
        size_t x = (size_t)v.i;
        memcpy(field, &x, sizeof x);
        break;
    }
    }
}

/* ------------------------------------------------------------------------ */
/* Flags with their own syntax                                               */
/* ------------------------------------------------------------------------ */

/* "15043+1", "15043-1.5", "15043-inf" */
static int parse_bias(const char *cmd, const char *s, struct nextok_logit_bias *out)
{
    size_t nd = strspn(s, "0123456789");
    const char *why = NULL;
    long long id = -1;
    char idbuf[24];
    if (nd == 0 || nd >= sizeof idbuf || (s[nd] != '+' && s[nd] != '-')) {
        why = "want TOKEN_ID+BIAS or TOKEN_ID-BIAS, e.g. 15043+1 or 15043-inf";
    } else {
        memcpy(idbuf, s, nd);
        idbuf[nd] = '\0';
        errno = 0;
        id = strtoll(idbuf, NULL, 10); /* digits only: no sign, no base prefix */
        if (errno == ERANGE || id > INT32_MAX) why = "token id out of range";
    }
    const char *b = s + nd + 1;
    char *end = NULL;
    double v = 0.0;
    if (!why) {
        v = (*b == '+' || *b == '-' || *b == ' ' || *b == '\0') ? NAN : strtod(b, &end);
        if (isnan(v) || !end || *end != '\0') why = "bias is not a number";
    }
    if (!why && s[nd] == '-') v = -v;
    if (!why && v == HUGE_VAL) why = "a bias of +inf is not allowed (use ID-inf to ban a token)";
    if (why) {
        cli_fail(cmd, "--logit-bias: %s: '%s'", why, s);
        return -1;
    }
    out->token = (int32_t)id;
    out->bias = (float)v;
    return 0;
}

static enum cli_parse add_bias(struct cli_sampling *s, const char *cmd, const char *v)
{
    struct nextok_logit_bias b;
    if (parse_bias(cmd, v, &b) != 0) return CLI_PARSE_ERROR;
    struct nextok_logit_bias *nb = realloc(s->bias, (s->n_bias + 1) * sizeof *nb);
    if (!nb) {
        cli_fail(cmd, "--logit-bias: out of memory");
        return CLI_PARSE_ERROR;
    }
    s->bias = nb;
    s->bias[s->n_bias++] = b;
    return CLI_PARSE_OK;
}

static enum cli_parse parse_choice(const char *cmd, const char *flag, const char *v,
                                   const char *const *names, int n, int *out)
{
    for (int k = 0; k < n; k++) {
        if (strcmp(v, names[k]) == 0) {
            *out = k;
            return CLI_PARSE_OK;
        }
    }
    char list[128] = "";
    for (int k = 0; k < n; k++) {
        strncat(list, names[k], sizeof list - strlen(list) - 1);
        if (k + 1 < n) strncat(list, k + 2 == n ? " or " : ", ", sizeof list - strlen(list) - 1);
    }
    cli_fail(cmd, "%s: unknown value '%s' (want %s)", flag, v, list);
    return CLI_PARSE_ERROR;
}

static enum cli_parse set_profile(struct cli_sampling *s, const char *cmd, const char *flag,
                                  const char *v)
{
    if (nextok_profile_from_name(v, &s->profile) == NEXTOK_OK) return CLI_PARSE_OK;
    cli_fail(cmd, "%s: unknown profile '%s' (want vllm, hf or llama)", flag, v);
    return CLI_PARSE_ERROR;
}

static enum cli_parse set_ties(struct cli_sampling *s, const char *cmd, const char *flag,
                               const char *v)
{
    static const char *const NAMES[] = {"keep", "exact"};
    int k = 0;
    if (parse_choice(cmd, flag, v, NAMES, 2, &k) != CLI_PARSE_OK) return CLI_PARSE_ERROR;
    s->ties_set = true;
    s->ties = k == 0 ? NEXTOK_TIES_KEEP : NEXTOK_TIES_EXACT;
    return CLI_PARSE_OK;
}

static enum cli_parse set_selector(struct cli_sampling *s, const char *cmd, const char *flag,
                                   const char *v)
{
    static const char *const NAMES[] = {"categorical", "gumbel", "greedy"};
    static const enum nextok_selector SEL[] = {NEXTOK_SELECTOR_CATEGORICAL,
                                               NEXTOK_SELECTOR_GUMBEL, NEXTOK_SELECTOR_GREEDY};
    int k = 0;
    if (parse_choice(cmd, flag, v, NAMES, 3, &k) != CLI_PARSE_OK) return CLI_PARSE_ERROR;
    s->selector_set = true;
    s->selector = SEL[k];
    return CLI_PARSE_OK;
}

static enum cli_parse set_samplers(struct cli_sampling *s, const char *cmd, const char *flag,
                                   const char *v)
{
    (void)cmd;
    (void)flag;
    s->samplers = v; /* names are checked by nextok_chain_init_sampling */
    return CLI_PARSE_OK;
}

/* llama.cpp: -1 means "random". */
static enum cli_parse set_seed(struct cli_sampling *s, const char *cmd, const char *flag,
                               const char *v)
{
    if (strcmp(v, "-1") == 0)
        s->seed = NEXTOK_DEFAULT_SEED;
    else if (cli_parse_u64(cmd, flag, v, &s->seed) != 0)
        return CLI_PARSE_ERROR;
    s->seed_set = true;
    return CLI_PARSE_OK;
}

/* --prompt-tokens / --output-tokens: the last one given wins. */
static enum cli_parse set_ids(struct cli_sampling *s, const char *cmd, const char *flag,
                              const char *v)
{
    bool prompt = strcmp(flag, "--prompt-tokens") == 0;
    int32_t **ids = prompt ? &s->prompt : &s->output;
    size_t *n = prompt ? &s->n_prompt : &s->n_output;
    free(*ids);
    *ids = NULL;
    *n = 0;
    return cli_parse_ids(cmd, flag, v, ids, n) == 0 ? CLI_PARSE_OK : CLI_PARSE_ERROR;
}

static enum cli_parse add_bias_flag(struct cli_sampling *s, const char *cmd, const char *flag,
                                    const char *v)
{
    (void)flag;
    return add_bias(s, cmd, v);
}

/* Flags with a value of their own syntax. */
static const struct {
    const char *name;
    enum cli_parse (*set)(struct cli_sampling *s, const char *cmd, const char *flag,
                          const char *v);
} SPECIAL_FLAGS[] = {
    {"--profile", set_profile},           {"--top-k-ties", set_ties},
    {"--sampler", set_selector},          {"--samplers", set_samplers},
    {"--seed", set_seed},                 {"--logit-bias", add_bias_flag},
    {"--prompt-tokens", set_ids},         {"--output-tokens", set_ids},
};

_Static_assert(sizeof NUM_FLAGS / sizeof NUM_FLAGS[0] <= CLI_MAX_NUM_FLAGS,
               "raise CLI_MAX_NUM_FLAGS");

/* ------------------------------------------------------------------------ */
/* Public: struct cli_sampling                                               */
/* ------------------------------------------------------------------------ */

void cli_sampling_init(struct cli_sampling *s)
{
    memset(s, 0, sizeof *s);
    s->profile = NEXTOK_PROFILE_VLLM;
    cli_grammar_init(&s->grammar);
}

void cli_sampling_free(struct cli_sampling *s)
{
    free(s->bias);
    free(s->prompt);
    free(s->output);
    nextok_compiled_grammar_free(s->cg);
    nextok_token_table_free(s->tt);
    nextok_grammar_free(s->g);
    cli_sampling_init(s);
}

enum cli_parse cli_sampling_parse(struct cli_sampling *s, const char *cmd, int argc, char **argv,
                                  int *i)
{
    const char *arg = argv[*i];
    enum cli_parse g = cli_grammar_parse(&s->grammar, cmd, argc, argv, i);
    if (g != CLI_PARSE_NOT_MINE) return g;
    if (strcmp(arg, "--nan-as-neg-inf") == 0) {
        s->nan_as_neg_inf = true;
        return CLI_PARSE_OK;
    }
    for (size_t k = 0; k < N_NUM_FLAGS; k++) {
        if (!cli_is_flag(arg, NUM_FLAGS[k].name)) continue;
        const char *v = cli_flag_value(cmd, argc, argv, i);
        if (!v || parse_num(&NUM_FLAGS[k], cmd, v, &s->num[k]) != 0) return CLI_PARSE_ERROR;
        s->num_set[k] = true;
        return CLI_PARSE_OK;
    }
    for (size_t k = 0; k < sizeof SPECIAL_FLAGS / sizeof SPECIAL_FLAGS[0]; k++) {
        if (!cli_is_flag(arg, SPECIAL_FLAGS[k].name)) continue;
        const char *v = cli_flag_value(cmd, argc, argv, i);
        if (!v) return CLI_PARSE_ERROR;
        return SPECIAL_FLAGS[k].set(s, cmd, SPECIAL_FLAGS[k].name, v);
    }
    return CLI_PARSE_NOT_MINE;
}

static int check_ids(const char *cmd, const char *flag, const int32_t *ids, size_t n,
                     int32_t n_vocab)
{
    for (size_t k = 0; k < n; k++)
        if (ids[k] < 0 || ids[k] >= n_vocab)
            return cli_fail(cmd, "%s: token id %ld out of range [0, %ld) for these logits", flag,
                            (long)ids[k], (long)n_vocab);
    return 0;
}

int cli_sampling_params(const struct cli_sampling *s, int32_t n_vocab, const char *cmd,
                        struct nextok_sampling_params *out)
{
    struct nextok_sampling_params p = nextok_sampling_default_params(s->profile);
    p.profile = s->profile;
    p.n_vocab = n_vocab;
    for (size_t k = 0; k < N_NUM_FLAGS; k++)
        if (s->num_set[k]) apply_num(&NUM_FLAGS[k], s->num[k], &p);
    if (s->seed_set) p.seed = s->seed;
    if (s->ties_set) p.top_k_ties = s->ties;
    if (s->selector_set) p.selector = s->selector;
    if (s->nan_as_neg_inf) p.nan_policy = NEXTOK_NAN_AS_NEG_INF;
    if (s->samplers) p.samplers = s->samplers;
    if (s->token_bitmask || cli_grammar_given(&s->grammar)) p.token_bitmask = true;
    for (size_t k = 0; k < s->n_bias; k++) {
        if (s->bias[k].token >= n_vocab)
            return cli_fail(cmd, "--logit-bias: token id %ld out of range [0, %ld) for these logits",
                            (long)s->bias[k].token, (long)n_vocab);
    }
    if (check_ids(cmd, "--prompt-tokens", s->prompt, s->n_prompt, n_vocab)) return CLI_EXIT_USAGE;
    if (check_ids(cmd, "--output-tokens", s->output, s->n_output, n_vocab)) return CLI_EXIT_USAGE;
    if (s->n_bias) {
        p.logit_bias = s->bias;
        p.n_logit_bias = s->n_bias;
    }
    *out = p;
    return 0;
}

int cli_chain_build(struct cli_sampling *s, int32_t n_vocab, const char *cmd,
                    struct nextok_chain **out)
{
    struct nextok_sampling_params p;
    *out = NULL;
    if (cli_sampling_params(s, n_vocab, cmd, &p) != 0) return CLI_EXIT_USAGE;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    struct nextok_chain *c = NULL;
    nextok_status st = nextok_chain_init_sampling(&c, &p, &err);
    if (st != NEXTOK_OK)
        return cli_fail(cmd, "invalid sampling parameters (profile %s): %s",
                        nextok_profile_name(s->profile), err.msg[0] ? err.msg : nextok_strerror(st));
    if (cli_chain_attach_grammar(s, cmd, c) != 0) { /* before the outputs: they go through it */
        nextok_chain_free(c);
        return CLI_EXIT_USAGE;
    }
    if (s->n_prompt) {
        st = nextok_chain_set_prompt(c, s->prompt, s->n_prompt);
        if (st != NEXTOK_OK) {
            cli_fail(cmd, "--prompt-tokens: %s", nextok_chain_errmsg(c)[0]
                     ? nextok_chain_errmsg(c) : nextok_strerror(st));
            nextok_chain_free(c);
            return CLI_EXIT_USAGE;
        }
    }
    for (size_t k = 0; k < s->n_output; k++) {
        st = nextok_chain_accept(c, s->output[k]);
        if (st != NEXTOK_OK) {
            cli_fail(cmd, "--output-tokens: accepting token %ld: %s", (long)s->output[k],
                     nextok_chain_errmsg(c)[0] ? nextok_chain_errmsg(c) : nextok_strerror(st));
            nextok_chain_free(c);
            return CLI_EXIT_USAGE;
        }
    }
    *out = c;
    return 0;
}

void cli_sampling_usage(FILE *f)
{
    fprintf(f,
            "Sampling flags (llama.cpp names; defaults come from the profile):\n"
            "  --profile vllm|hf|llama     engine whose choices to reproduce (default vllm)\n"
            "  --seed S                    random seed (-1: random)\n"
            "  --sampler categorical|gumbel|greedy   the final selector\n"
            "  --samplers \"a;b;c\"          stage order, e.g. \"top_k;min_p;temperature\"\n"
            "  --top-k-ties keep|exact     ties at the top-k / top-p cut\n");
    for (size_t k = 0; k < N_NUM_FLAGS; k++) {
        char head[64];
        snprintf(head, sizeof head, "%s %s", NUM_FLAGS[k].name, NUM_FLAGS[k].metavar);
        fprintf(f, "  %-26s  %s\n", head, NUM_FLAGS[k].help);
    }
    fprintf(f,
            "  --logit-bias ID(+|-)BIAS    add BIAS to token ID (repeatable; ID-inf bans it)\n"
            "  --prompt-tokens 1,2,3       prompt ids (penalties, DRY, n-grams)\n"
            "  --output-tokens 4,5         outputs accepted in order before sampling\n"
            "  --nan-as-neg-inf            treat NaN logits as -inf (default: error)\n");
}
