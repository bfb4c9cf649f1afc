/*
 * cli.h - shared helpers for the `nextok` command-line tool.
 *
 * Every command lives in its own file (tools/nextok/cmd_<name>.c) and exports
 * `int nextok_cmd_<name>(int argc, char **argv)`. main.c dispatches on the
 * first argument and passes the rest, so that argv[0] is the command name
 * ("probs") and flags start at argv[1]. A command returns the process exit
 * status: 0 on success, CLI_EXIT_USAGE (2) on any bad input.
 *
 * Conventions every command follows:
 *   - Bad input prints exactly ONE line to stderr, "nextok <cmd>: <problem>",
 *     prints nothing on stdout, and exits with status 2 (use cli_fail()).
 *     Commands therefore build their whole output before printing it.
 *   - `--help` / `-h` anywhere on the line prints the command's usage on stdout
 *     and exits 0 (use cli_wants_help()).
 *   - Flags take their value as the next argument or inline: `--top-p 0.9` and
 *     `--top-p=0.9` are the same (use cli_flag_value()).
 *
 * A typical command:
 *
 *     struct cli_sampling smp;
 *     struct cli_input in;
 *     cli_sampling_init(&smp);
 *     cli_input_init(&in);
 *     for (int i = 1; i < argc; i++) {
 *         enum cli_parse r = cli_sampling_parse(&smp, "mycmd", argc, argv, &i);
 *         if (r == CLI_PARSE_NOT_MINE) r = cli_input_parse(&in, "mycmd", argc, argv, &i);
 *         if (r == CLI_PARSE_NOT_MINE) r = <the command's own flags>;
 *         if (r == CLI_PARSE_NOT_MINE) r = cli_unknown_flag("mycmd", argv[i]);
 *         if (r == CLI_PARSE_ERROR) goto fail;          // message already printed
 *     }
 *     struct cli_logits lg;
 *     if (cli_input_load(&in, "mycmd", &lg) != 0) goto fail;
 *     struct nextok_chain *chain;
 *     if (cli_chain_build(&smp, (int32_t)lg.n_vocab, "mycmd", &chain) != 0) goto fail;
 *     ... nextok_chain_sample(chain, cli_logits_row(&lg, in.row), lg.dtype, &tok) ...
 *
 * Only the public header nextok.h may be used by the CLI.
 */
#ifndef NEXTOK_CLI_H
#define NEXTOK_CLI_H

#include "nextok.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__GNUC__)
#  define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#  define CLI_NORETURN __attribute__((noreturn))
#else
#  define CLI_PRINTF(f, a)
#  define CLI_NORETURN
#endif

/* Exit status of every bad-input path. */
#define CLI_EXIT_USAGE 2

/* ------------------------------------------------------------------------ */
/* Commands (one file each)                                                  */
/* ------------------------------------------------------------------------ */

int nextok_cmd_probs(int argc, char **argv);   /* cmd_probs.c   */
int nextok_cmd_sample(int argc, char **argv);  /* cmd_sample.c  */
int nextok_cmd_explain(int argc, char **argv); /* cmd_explain.c */
int nextok_cmd_detok(int argc, char **argv);   /* cmd_detok.c   */
int nextok_cmd_encode(int argc, char **argv);  /* cmd_encode.c  */
int nextok_cmd_generate(int argc, char **argv); /* cmd_generate.c */
int nextok_cmd_grammar(int argc, char **argv);  /* cmd_grammar.c  */
int nextok_cmd_replay(int argc, char **argv);  /* cmd_replay.c  */
int nextok_cmd_bench(int argc, char **argv);   /* cmd_bench.c   */

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

/* Print "nextok <cmd>: <message>\n" to stderr (newlines in the message are
 * replaced by spaces, so it stays one line, and other ASCII control bytes by
 * '?') and return CLI_EXIT_USAGE.
 * cmd may be NULL for errors of the top-level program ("nextok: ..."). */
int cli_fail(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* cli_fail(), then exit(CLI_EXIT_USAGE). For paths that own no resources. */
CLI_NORETURN void cli_die(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* ------------------------------------------------------------------------ */
/* Argument helpers                                                          */
/* ------------------------------------------------------------------------ */

/* Outcome of offering argv[*i] to a flag parser. */
enum cli_parse {
    CLI_PARSE_OK = 0,       /* consumed: *i now indexes the last argument used  */
    CLI_PARSE_NOT_MINE = 1, /* not one of this parser's flags; nothing changed   */
    CLI_PARSE_ERROR = 2,    /* a flag of this parser with a bad/missing value;
                               the error line has been printed                  */
};

/* True if argv[1..argc) contains "--help" or "-h". */
bool cli_wants_help(int argc, char **argv);

/* Does arg name flag `name` ("--top-p" or "--top-p=...")? */
bool cli_is_flag(const char *arg, const char *name);

/*
 * The value of the flag at argv[*i] (which cli_is_flag() matched): the text
 * after '=' for "--flag=value", else argv[*i + 1] (then *i is advanced).
 * Missing value: prints "<flag>: missing value" and returns NULL.
 */
const char *cli_flag_value(const char *cmd, int argc, char **argv, int *i);

/* Always CLI_PARSE_ERROR, after printing "unknown flag" or "unexpected
 * argument" for arg (with a pointer to `nextok <cmd> --help`). */
enum cli_parse cli_unknown_flag(const char *cmd, const char *arg);

/*
 * Number parsers: the whole string must be the number (no trailing text),
 * decimal (integers also accept 0x hex). Each returns 0 on success and -1 on a
 * bad value after printing "<flag>: <why>, got '<text>'".
 */
int cli_parse_float(const char *cmd, const char *flag, const char *s, double lo, double hi,
                    float *out);
int cli_parse_int(const char *cmd, const char *flag, const char *s, long long lo, long long hi,
                  long long *out);
int cli_parse_u64(const char *cmd, const char *flag, const char *s, uint64_t *out);

/* Parse "1,2,3" into a malloc'd array (*ids, *n; "" gives n = 0, ids = NULL).
 * Ids must be in [0, INT32_MAX]. Returns 0, or -1 after printing why. */
int cli_parse_ids(const char *cmd, const char *flag, const char *s, int32_t **ids, size_t *n);

/* ------------------------------------------------------------------------ */
/* Grammar flags (grammar_flags.c)                                           */
/* ------------------------------------------------------------------------ */

struct cli_grammar {
    const char *gbnf, *json_schema, *regex; /* one of them                        */
    const char *ws;                         /* --json-ws compact|N                 */
    const char *order;                      /* --json-order schema|any             */
    bool strict, lenient;                   /* JSON Schema options                 */
    bool check_first;                       /* --check-first (sampling commands)   */
    const char *triggers[16];               /* --trigger WORD: a lazy grammar      */
    size_t n_triggers;
    const char *patterns[16];               /* --trigger-pattern RE                */
    size_t n_patterns;
    const char *trigger_tokens;             /* --trigger-tokens 1,2                */
};

void cli_grammar_init(struct cli_grammar *g);
bool cli_grammar_given(const struct cli_grammar *g);
/* Offer argv[*i]; see enum cli_parse. */
enum cli_parse cli_grammar_parse(struct cli_grammar *g, const char *cmd, int argc, char **argv,
                                 int *i);
/* After parsing: at most one source, options only with a schema. 0 or
 * CLI_EXIT_USAGE after printing why. */
int cli_grammar_check(const struct cli_grammar *g, const char *cmd);
/* Compile the source given (v: for <token> references; may be NULL). 0, or
 * CLI_EXIT_USAGE after printing the library's message (line:column or JSON
 * pointer). */
int cli_grammar_compile(const struct cli_grammar *g, const char *cmd, const struct nextok_vocab *v,
                        struct nextok_grammar **out);
/* The token table of v (made when *tt is NULL) and g compiled against it. */
int cli_grammar_bind(const char *cmd, const struct nextok_grammar *g, const struct nextok_vocab *v,
                     struct nextok_token_table **tt, struct nextok_compiled_grammar **cg);
/* Help text for the flags above. */
void cli_grammar_usage(FILE *f);

/* ------------------------------------------------------------------------ */
/* Sampling flags: llama.cpp names, filling struct nextok_sampling_params    */
/* ------------------------------------------------------------------------ */

/* The value of one numeric sampling flag of the table in sampling_flags.c. */
union cli_num {
    float f;
    long long i;
};

#define CLI_MAX_NUM_FLAGS 40

/*
 * Everything the sampling flags say. The profile's defaults are only known at
 * the end of the command line (--profile may come last), so flags are stored
 * as overrides and applied by cli_sampling_params(). Owns its arrays.
 */
struct cli_sampling {
    enum nextok_profile profile;      /* --profile (default vllm)               */
    bool seed_set;                    /* --seed S (-1: NEXTOK_DEFAULT_SEED)      */
    uint64_t seed;
    bool num_set[CLI_MAX_NUM_FLAGS];  /* numeric flags given (sampling_flags.c)   */
    union cli_num num[CLI_MAX_NUM_FLAGS];
    bool ties_set;                    /* --top-k-ties keep|exact                 */
    enum nextok_ties ties;
    bool selector_set;                /* --sampler categorical|gumbel|greedy     */
    enum nextok_selector selector;
    bool nan_as_neg_inf;              /* --nan-as-neg-inf                        */
    const char *samplers;             /* --samplers "a;b;c" (points into argv)   */
    struct nextok_logit_bias *bias;   /* --logit-bias ID(+|-)BIAS, repeatable    */
    size_t n_bias;
    int32_t *prompt;                  /* --prompt-tokens 1,2,3                   */
    size_t n_prompt;
    int32_t *output;                  /* --output-tokens 4,5                     */
    size_t n_output;
    bool token_bitmask;               /* a token-bitmask stage (bench's mask)    */
    struct cli_grammar grammar;       /* --gbnf, --json-schema, --regex          */
    const struct nextok_vocab *vocab; /* the command's: the grammar's tokens     */
    struct nextok_grammar *g;         /* compiled by cli_sampling_grammar        */
    struct nextok_token_table *tt;
    struct nextok_compiled_grammar *cg;
};

void cli_sampling_init(struct cli_sampling *s);
void cli_sampling_free(struct cli_sampling *s);

/* Offer argv[*i]; see enum cli_parse. */
enum cli_parse cli_sampling_parse(struct cli_sampling *s, const char *cmd, int argc, char **argv,
                                  int *i);

/*
 * The profile's defaults (nextok_sampling_default_params), n_vocab, then every
 * flag given. Checks ids (--logit-bias, --prompt-tokens, --output-tokens)
 * against n_vocab. Arrays in *out point into s. Returns 0, or
 * CLI_EXIT_USAGE after printing the problem.
 */
int cli_sampling_params(const struct cli_sampling *s, int32_t n_vocab, const char *cmd,
                        struct nextok_sampling_params *out);

/*
 * cli_sampling_params(), nextok_chain_init_sampling(), the prompt
 * (nextok_chain_set_prompt) and each --output-tokens id accepted in order
 * (nextok_chain_accept), so nextok_chain_step() is the number of outputs.
 * Returns 0 with *out set, or CLI_EXIT_USAGE after printing the problem
 * (with the library's message).
 */
int cli_chain_build(struct cli_sampling *s, int32_t n_vocab, const char *cmd,
                    struct nextok_chain **out);

/* The grammar flags of s compiled against s->vocab, once (*cg NULL when
 * none was given). 0, or CLI_EXIT_USAGE after printing why. */
int cli_sampling_grammar(struct cli_sampling *s, const char *cmd,
                         const struct nextok_compiled_grammar **cg);
/* Give chain c a matcher over s's grammar as its token bitmask's source
 * (nothing when no grammar was given). */
int cli_chain_attach_grammar(struct cli_sampling *s, const char *cmd, struct nextok_chain *c);

/* Help text for every flag cli_sampling_parse() knows, for `--help`. */
void cli_sampling_usage(FILE *f);

/* ------------------------------------------------------------------------ */
/* Logits files                                                              */
/* ------------------------------------------------------------------------ */

/*
 * A logits file in memory. Formats, chosen by extension:
 *   .npy   NumPy v1/v2/v3: '<f4' (float32) or '<f2' (float16), C order,
 *          shape (V,) or (steps, V)
 *   .f32   raw little-endian float32, shape (V,) with V = size / 4
 *   .f16   raw little-endian IEEE float16, V = size / 2
 *   .bf16  raw little-endian bfloat16, V = size / 2
 * Data is stored in host byte order, rows contiguous, ready for
 * nextok_chain_sample(chain, cli_logits_row(l, r), l->dtype, ...).
 */
struct cli_logits {
    void *data;              /* rows * n_vocab elements of dtype (owned)     */
    enum nextok_dtype dtype;
    size_t rows;             /* 1 for a 1-D file                              */
    size_t n_vocab;          /* elements per row (<= NEXTOK_VOCAB_MAX)        */
    int ndim;                /* 1 or 2, as in the file                        */
};

/* Load path. Returns 0, or -1 with a one-line reason in err (no path prefix). */
int cli_logits_load(const char *path, struct cli_logits *out, char *err, size_t errcap);
const void *cli_logits_row(const struct cli_logits *l, size_t row);
void cli_logits_free(struct cli_logits *l);
/* "float32", "float16", "bfloat16". */
const char *cli_dtype_name(enum nextok_dtype dtype);
/* Index of the first NaN in row, or -1. For error messages. */
long long cli_logits_find_nan(const struct cli_logits *l, size_t row);

/* --logits FILE and --row N (which row of a [steps, V] file; default 0). */
struct cli_input {
    const char *path; /* points into argv */
    long long row;
};

void cli_input_init(struct cli_input *in);
enum cli_parse cli_input_parse(struct cli_input *in, const char *cmd, int argc, char **argv,
                               int *i);
/* Load in->path (required) and check in->row. Returns 0 or CLI_EXIT_USAGE
 * after printing "<path>: <reason>". */
int cli_input_load(const struct cli_input *in, const char *cmd, struct cli_logits *out);
void cli_input_usage(FILE *f);

/*
 * The library's message for a failed chain call, with the first NaN token
 * named when status is NEXTOK_ERR_NAN. Prints one line and returns
 * CLI_EXIT_USAGE.
 */
int cli_chain_fail(const char *cmd, struct nextok_chain *chain, nextok_status st,
                   const struct cli_logits *l, size_t row);

/* ------------------------------------------------------------------------ */
/* Token text (--vocab FILE)                                                 */
/* ------------------------------------------------------------------------ */

/*
 * A vocabulary for showing token text next to ids (the library's struct
 * nextok_vocab, loaded with nextok_vocab_load_file: GGUF, HF tokenizer.json or
 * tiktoken, by content). cli_vocab_open() with a NULL path gives an empty
 * vocabulary (no text). Errors (unreadable or malformed file, logits shorter
 * than the vocabulary) print one line and return CLI_EXIT_USAGE; a file this
 * build cannot read (NEXTOK_ERR_UNSUPPORTED) prints a note and gives no text.
 * Logits longer than the vocabulary are fine (padded output layers).
 */
struct cli_vocab {
    const char *path; /* NULL: none given */
    struct nextok_vocab *impl; /* NULL when there is no text */
};

int cli_vocab_open(const char *cmd, const char *path, size_t n_vocab, struct cli_vocab *v);
/* The rule cli_vocab_open applies, for commands that load the vocabulary
 * themselves (replay): rows of n_vocab logits must cover voc's tokens. Prints
 * one line and returns CLI_EXIT_USAGE if they do not, else 0. */
int cli_vocab_check_rows(const char *cmd, const char *path, size_t n_vocab,
                         const struct nextok_vocab *voc);
/* The bytes token id adds to decoded text (nextok_vocab_token_bytes), as
 * NUL-terminated UTF-8 (invalid bytes written as the 4 characters \xNN),
 * truncated to fit cap. False (and "") when there is no text for id. */
bool cli_vocab_text(const struct cli_vocab *v, int32_t id, char *buf, size_t cap);
/* The raw bytes (nextok_vocab_token_bytes: may be invalid UTF-8 alone, not
 * NUL-terminated), or NULL when there is no text for id. */
const char *cli_vocab_bytes(const struct cli_vocab *v, int32_t id, size_t *len);
void cli_vocab_close(struct cli_vocab *v);

/* ------------------------------------------------------------------------ */
/* Output helpers                                                            */
/* ------------------------------------------------------------------------ */

/* Length of the valid UTF-8 character at s[0..len), 0 if s starts with an
 * invalid or incomplete sequence (or len is 0). */
size_t cli_utf8_len(const unsigned char *s, size_t len);

/* Write s as a JSON string literal (with quotes) to f. */
void cli_json_string(FILE *f, const char *s, size_t n);

/* Monotonic clock in seconds, and an ascending sort of timings (the
 * commands that measure: bench, encode --bench, generate). */
double cli_now_s(void);
void cli_sort_doubles(double *t, size_t n);

/* The whole of path ("-": stdin) into a malloc'd buffer (the caller frees
 * it). Returns 0, or CLI_EXIT_USAGE after "<cmd>: <flag> <path>: why". */
int cli_read_all(const char *cmd, const char *flag, const char *path, char **data, size_t *size);

/* events.c: the streaming commands' JSON. cli_json_text is cli_json_string
 * for text that may hold invalid UTF-8 (each such byte becomes \ufffd). */
void cli_json_text(FILE *f, const char *s, size_t n);
/* {"token": id, "text": ...[, "logprob": x, "rank": r, "top": [...]]}\n */
void cli_json_token_event(FILE *f, const struct nextok_step_result *r, bool logprobs);
/* "eos", "length" (also for NEXTOK_FINISH_NONE) or "stop". */
const char *cli_finish_word(enum nextok_finish f);

#endif
