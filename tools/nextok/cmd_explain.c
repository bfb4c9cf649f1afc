/*
 * nextok explain: what each stage of the chain did to one logits row.
 *
 * The input row is normalised exactly as the chain does it
 * (nextok_candidates_prepare), then the chain runs once with an observer
 * (nextok_chain_set_observer) that compares each stage's candidates with the
 * previous ones: candidates before -> after, probability mass removed (of the
 * distribution before the stage), entropy after, and the top tokens. The
 * report is built in memory and printed only if the whole run succeeded.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "explain";

#define SHOW_DEFAULT 8
#define SHOW_MAX 100
#define TEXT_COLS 32

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: nextok explain --logits FILE [flags]\n"
            "\n"
            "Run the profile's chain once and show, for every stage: candidates before ->\n"
            "after, the probability mass it removed (of the distribution before it), the\n"
            "entropy after it, and its most likely tokens; then the selected token.\n"
            "\n"
            "  --vocab FILE                show token text next to ids\n"
            "  --show N                    tokens listed per stage, 1..%d (default %d)\n"
            "\n",
            SHOW_MAX, SHOW_DEFAULT);
    cli_input_usage(f);
    fputc('\n', f);
    cli_sampling_usage(f);
}

/* ------------------------------------------------------------------------ */
/* The observer's state                                                      */
/* ------------------------------------------------------------------------ */

struct stage_row {
    char name[40];
    size_t before, after;
    double removed; /* probability mass, of the distribution before the stage */
    double entropy; /* nats */
};

struct explain {
    const struct cli_vocab *voc;
    size_t n_vocab;
    int show;
    FILE *detail;                   /* per-stage top tokens (memory stream) */
    /* the distribution before the current stage */
    int32_t *prev_ids;
    size_t prev_n;
    double *p_by_id;                /* [n_vocab] */
    uint32_t *mark;                 /* [n_vocab]: == gen if in the current set */
    uint32_t gen;
    /* scratch for the current stage */
    struct nextok_token_data *sorted;
    double *p;
    struct stage_row *rows;         /* rows[0] is the input */
    size_t n_rows, cap_rows;
    bool failed;                    /* out of memory inside the observer */
};

static int explain_alloc(struct explain *e, size_t n_vocab)
{
    e->n_vocab = n_vocab;
    e->prev_ids = malloc(n_vocab * sizeof *e->prev_ids);
    e->p_by_id = calloc(n_vocab, sizeof *e->p_by_id);
    e->mark = calloc(n_vocab, sizeof *e->mark);
    e->sorted = malloc(n_vocab * sizeof *e->sorted);
    e->p = malloc(n_vocab * sizeof *e->p);
    e->cap_rows = 16;
    e->rows = malloc(e->cap_rows * sizeof *e->rows);
    return e->prev_ids && e->p_by_id && e->mark && e->sorted && e->p && e->rows ? 0 : -1;
}

static void explain_free(struct explain *e)
{
    free(e->prev_ids);
    free(e->p_by_id);
    free(e->mark);
    free(e->sorted);
    free(e->p);
    free(e->rows);
}

/* p of each candidate: the selector's if it set them, else softmax (double). */
static void stage_probs(const struct nextok_token_data_array *cur, double *p)
{
    if (cur->selected >= 0) {
        double z = 0.0;
        for (size_t k = 0; k < cur->size; k++) z += p[k] = cur->data[k].p;
        for (size_t k = 0; k < cur->size && z > 0.0; k++) p[k] /= z;
        return;
    }
    double m = -INFINITY, z = 0.0;
    for (size_t k = 0; k < cur->size; k++)
        if (cur->data[k].logit > m) m = cur->data[k].logit;
    for (size_t k = 0; k < cur->size; k++) z += p[k] = exp((double)cur->data[k].logit - m);
    for (size_t k = 0; k < cur->size; k++) p[k] /= z;
}

static int cmp_p_desc(const void *pa, const void *pb)
{
    const struct nextok_token_data *a = pa, *b = pb;
    if (a->p != b->p) return a->p > b->p ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* Append the display form of one character of s to esc; returns bytes used of s. */
static size_t escape_one(const unsigned char *s, size_t len, char *esc, size_t *n)
{
    size_t u = cli_utf8_len(s, len);
    if (u > 1 || (u == 1 && *s >= 0x20 && *s != 0x7f && *s != '"' && *s != '\\')) {
        memcpy(esc + *n, s, u);
        *n += u;
        return u;
    }
    if (*s == '\n' || *s == '\t' || *s == '"' || *s == '\\') {
        esc[(*n)++] = '\\';
        esc[(*n)++] = *s == '\n' ? 'n' : *s == '\t' ? 't' : (char)*s;
    } else { /* control character or a byte that is not valid UTF-8 alone */
        *n += (size_t)snprintf(esc + *n, 5, "\\x%02x", *s);
    }
    return 1;
}

/* Token text for the table: quoted, escaped, cut after TEXT_COLS bytes
 * (at a character boundary, "..." appended). "" without a vocabulary. */
static void token_label(const struct cli_vocab *v, int32_t id, char *out, size_t cap)
{
    char esc[TEXT_COLS + 16];
    size_t len = 0, n = 0, k = 0;
    const unsigned char *s = (const unsigned char *)cli_vocab_bytes(v, id, &len);
    out[0] = '\0';
    if (!s) return;
    esc[n++] = '"';
    while (k < len && n < TEXT_COLS) k += escape_one(s + k, len - k, esc, &n);
    esc[n++] = '"';
    esc[n] = '\0';
    snprintf(out, cap, "%s%s", esc, k < len ? "..." : "");
}

static void print_top(struct explain *e, size_t n)
{
    size_t show = n < (size_t)e->show ? n : (size_t)e->show;
    double cum = 0.0;
    char text[TEXT_COLS + 32];
    fprintf(e->detail, "     #        id           p       cum.p       logit  %s\n",
            e->voc && e->voc->impl ? "text" : "");
    for (size_t k = 0; k < show; k++) {
        const struct nextok_token_data *t = &e->sorted[k];
        cum += t->p;
        token_label(e->voc, t->id, text, sizeof text);
        fprintf(e->detail, "  %4zu  %8ld  %10.6f  %10.6f  %10.4f  %s\n", k + 1, (long)t->id,
                (double)t->p, cum, (double)t->logit, text);
    }
    if (show < n) fprintf(e->detail, "  ... %zu more\n", n - show);
    fputc('\n', e->detail);
}

/* Record the distribution cur (probabilities in e->p) as the new "before". */
static void remember(struct explain *e, const struct nextok_token_data_array *cur)
{
    for (size_t k = 0; k < e->prev_n; k++) e->p_by_id[e->prev_ids[k]] = 0.0;
    for (size_t k = 0; k < cur->size; k++) {
        e->prev_ids[k] = cur->data[k].id;
        e->p_by_id[cur->data[k].id] = e->p[k];
    }
    e->prev_n = cur->size;
}

static struct stage_row *next_row(struct explain *e)
{
    if (e->n_rows == e->cap_rows) {
        struct stage_row *r = realloc(e->rows, 2 * e->cap_rows * sizeof *r);
        if (!r) return NULL;
        e->rows = r;
        e->cap_rows *= 2;
    }
    return &e->rows[e->n_rows++];
}

/* p of cur into e->p and e->sorted (sorted by p); returns the entropy (nats). */
static double measure(struct explain *e, const struct nextok_token_data_array *cur)
{
    double h = 0.0;
    stage_probs(cur, e->p);
    for (size_t k = 0; k < cur->size; k++) {
        if (e->p[k] > 0.0) h -= e->p[k] * log(e->p[k]);
        e->sorted[k] = cur->data[k];
        e->sorted[k].p = (float)e->p[k];
    }
    qsort(e->sorted, cur->size, sizeof *e->sorted, cmp_p_desc);
    return h < 0.0 ? 0.0 : h;
}

/* Same candidates with the same probabilities as before the stage? */
static bool unchanged(const struct explain *e, const struct nextok_token_data_array *cur)
{
    if (cur->size != e->prev_n) return false;
    for (size_t k = 0; k < cur->size; k++)
        if (fabs(e->p[k] - e->p_by_id[cur->data[k].id]) > 1e-6) return false;
    return true;
}

static void on_stage(size_t i, const char *name, const struct nextok_token_data_array *cur,
                     void *user)
{
    struct explain *e = user;
    struct stage_row *row = next_row(e);
    if (!row) {
        e->failed = true;
        return;
    }
    snprintf(row->name, sizeof row->name, "%s", name ? name : "?");
    row->before = e->prev_n;
    row->after = cur->size;
    e->gen++;
    for (size_t k = 0; k < cur->size; k++) e->mark[cur->data[k].id] = e->gen;
    double removed = 0.0;
    for (size_t k = 0; k < e->prev_n; k++)
        if (e->mark[e->prev_ids[k]] != e->gen) removed += e->p_by_id[e->prev_ids[k]];
    row->removed = removed;
    row->entropy = measure(e, cur);
    fprintf(e->detail, "stage %zu: %s, %zu -> %zu candidates", i + 1, row->name, row->before,
            row->after);
    if (unchanged(e, cur)) {
        fprintf(e->detail, ", distribution unchanged\n\n");
    } else {
        fprintf(e->detail, ", top %zu\n", cur->size < (size_t)e->show ? cur->size
                                                                      : (size_t)e->show);
        print_top(e, cur->size);
    }
    remember(e, cur);
}

/* ------------------------------------------------------------------------ */
/* The report                                                                */
/* ------------------------------------------------------------------------ */

static void print_summary(const struct explain *e)
{
    const double ln2 = 0.69314718055994530942;
    printf("   #  %-14s %18s  %9s   %s\n", "stage", "candidates", "removed",
           "entropy after the stage");
    for (size_t k = 0; k < e->n_rows; k++) {
        const struct stage_row *r = &e->rows[k];
        char cand[40], rem[16];
        if (k == 0) {
            snprintf(cand, sizeof cand, "%zu", r->after);
            snprintf(rem, sizeof rem, "-");
        } else {
            snprintf(cand, sizeof cand, "%zu -> %zu", r->before, r->after);
            if (r->removed > 0.0 && r->removed < 5e-6)
                snprintf(rem, sizeof rem, "<0.001%%");
            else
                snprintf(rem, sizeof rem, "%.3f%%", 100.0 * r->removed);
        }
        printf("  %2zu  %-14s %18s  %9s   %7.4f nats %8.4f bits\n", k, r->name, cand, rem,
               r->entropy, r->entropy / ln2);
    }
    putchar('\n');
}

static void print_header(const struct nextok_sampling_params *p, const struct cli_logits *lg,
                         struct nextok_chain *chain, long long row)
{
    char seed[32];
    if (p->seed == NEXTOK_DEFAULT_SEED)
        snprintf(seed, sizeof seed, "random");
    else
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)p->seed);
    printf("nextok explain: profile %s, %zu logits (%s), row %lld, step %llu, seed %s\n",
           nextok_profile_name(p->profile), lg->n_vocab, cli_dtype_name(lg->dtype), row,
           (unsigned long long)nextok_chain_step(chain), seed);
    printf("chain: ");
    for (size_t k = 0; k < nextok_chain_n(chain); k++)
        printf("%s%s", k ? " -> " : "", nextok_sampler_name(nextok_chain_get(chain, k)));
    printf("\n\n");
}

/* ------------------------------------------------------------------------ */
/* The command                                                               */
/* ------------------------------------------------------------------------ */

struct explain_opts {
    struct cli_sampling smp;
    struct cli_input in;
    const char *vocab;
    long long show;
};

static enum cli_parse parse_own(struct explain_opts *o, int argc, char **argv, int *i)
{
    const char *v;
    if (cli_is_flag(argv[*i], "--vocab")) {
        o->vocab = cli_flag_value(CMD, argc, argv, i);
        return o->vocab ? CLI_PARSE_OK : CLI_PARSE_ERROR;
    }
    if (cli_is_flag(argv[*i], "--show")) {
        if (!(v = cli_flag_value(CMD, argc, argv, i))) return CLI_PARSE_ERROR;
        return cli_parse_int(CMD, "--show", v, 1, SHOW_MAX, &o->show) == 0 ? CLI_PARSE_OK
                                                                           : CLI_PARSE_ERROR;
    }
    return CLI_PARSE_NOT_MINE;
}

static int parse(struct explain_opts *o, int argc, char **argv)
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

/* The input row as candidates, normalised like the chain does. */
static nextok_status input_set(const struct cli_logits *lg, size_t row,
                               enum nextok_nan_policy nan, struct nextok_token_data_array *cur)
{
    struct nextok_token_data *d = malloc(lg->n_vocab * sizeof *d);
    if (!d) return NEXTOK_ERR_NOMEM;
    const void *r = cli_logits_row(lg, row);
    for (size_t k = 0; k < lg->n_vocab; k++) {
        float f;
        uint16_t h;
        if (lg->dtype == NEXTOK_DTYPE_F32) {
            memcpy(&f, (const float *)r + k, sizeof f);
        } else {
            memcpy(&h, (const uint16_t *)r + k, sizeof h);
            f = lg->dtype == NEXTOK_DTYPE_F16 ? nextok_f16_to_f32(h) : nextok_bf16_to_f32(h);
        }
        d[k] = (struct nextok_token_data){(int32_t)k, f, 0.0f};
    }
    *cur = (struct nextok_token_data_array){d, lg->n_vocab, -1, false};
    nextok_status st = nextok_candidates_prepare(cur, nan);
    if (st != NEXTOK_OK) {
        free(d);
        cur->data = NULL;
    }
    return st;
}

struct explain_run {
    struct cli_logits lg;
    struct cli_vocab voc;
    struct nextok_chain *chain;
    struct explain e;
    char *detail;
    size_t detail_len;
};

/* Describe the input and run the chain under the observer. */
static int observe(struct explain_opts *o, struct explain_run *x,
                   const struct nextok_sampling_params *p, int32_t *token)
{
    size_t row = (size_t)o->in.row;
    struct nextok_token_data_array in;
    nextok_status st = input_set(&x->lg, row, p->nan_policy, &in);
    struct stage_row *r0 = st == NEXTOK_OK ? next_row(&x->e) : NULL;
    if (st == NEXTOK_OK && !r0) x->e.failed = true;
    if (r0) {
        snprintf(r0->name, sizeof r0->name, "input");
        r0->before = r0->after = in.size;
        r0->removed = 0.0;
        r0->entropy = measure(&x->e, &in);
        fprintf(x->e.detail, "input: %zu candidates, top %zu\n", in.size,
                in.size < (size_t)x->e.show ? in.size : (size_t)x->e.show);
        print_top(&x->e, in.size);
        remember(&x->e, &in);
        free(in.data);
    }
    nextok_chain_set_observer(x->chain, on_stage, &x->e);
    nextok_status st2 = nextok_chain_sample(x->chain, cli_logits_row(&x->lg, row), x->lg.dtype,
                                            token);
    nextok_chain_set_observer(x->chain, NULL, NULL);
    if (st2 != NEXTOK_OK) return cli_chain_fail(CMD, x->chain, st2, &x->lg, row);
    if (st != NEXTOK_OK)
        return cli_fail(CMD, "logits row %zu: %s", row, nextok_strerror(st));
    if (x->e.failed) return cli_fail(CMD, "out of memory");
    return 0;
}

static void print_selected(const struct explain_run *x, int32_t token)
{
    char text[TEXT_COLS + 32];
    token_label(&x->voc, token, text, sizeof text);
    printf("selected: token %ld%s%s (p = %.6f in the final distribution)\n", (long)token,
           text[0] ? " " : "", text, x->e.p_by_id[token]);
}

static int run(struct explain_opts *o, struct explain_run *x)
{
    struct nextok_sampling_params p;
    if (cli_input_load(&o->in, CMD, &x->lg) != 0) return CLI_EXIT_USAGE;
    if (cli_vocab_open(CMD, o->vocab, x->lg.n_vocab, &x->voc) != 0) return CLI_EXIT_USAGE;
    o->smp.vocab = x->voc.impl;
    if (cli_sampling_params(&o->smp, (int32_t)x->lg.n_vocab, CMD, &p) != 0) return CLI_EXIT_USAGE;
    if (cli_chain_build(&o->smp, (int32_t)x->lg.n_vocab, CMD, &x->chain) != 0)
        return CLI_EXIT_USAGE;
    x->e.voc = &x->voc;
    x->e.show = (int)o->show;
    if (explain_alloc(&x->e, x->lg.n_vocab) != 0) return cli_fail(CMD, "out of memory");
    x->e.detail = open_memstream(&x->detail, &x->detail_len);
    if (!x->e.detail) return cli_fail(CMD, "out of memory");
    int32_t token = -1;
    int rc = observe(o, x, &p, &token);
    fclose(x->e.detail);
    x->e.detail = NULL;
    if (rc != 0) return rc;
    print_header(&p, &x->lg, x->chain, o->in.row);
    print_summary(&x->e);
    fwrite(x->detail, 1, x->detail_len, stdout);
    print_selected(x, token);
    return 0;
}

int nextok_cmd_explain(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    struct explain_opts o = {.vocab = NULL, .show = SHOW_DEFAULT};
    struct explain_run x;
    memset(&x, 0, sizeof x);
    cli_sampling_init(&o.smp);
    cli_input_init(&o.in);
    int rc = parse(&o, argc, argv);
    if (rc == 0) rc = run(&o, &x);
    free(x.detail);
    explain_free(&x.e);
    nextok_chain_free(x.chain);
    cli_vocab_close(&x.voc);
    cli_logits_free(&x.lg);
    cli_sampling_free(&o.smp);
    return rc;
}
