/*
 * args.c - errors, number parsing, chain errors and vocabulary helpers
 * shared by every nextok command (the sampling flags: sampling_flags.c).
 * See cli.h for the contracts.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static void vfail(const char *cmd, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    /* one line, and no control byte of any origin (a library message may
     * quote a file) can steer the terminal; readers escape what they quote */
    for (char *p = msg; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\n' || c == '\r') *p = ' ';
        else if (c < 0x20 || c == 0x7f) *p = '?';
    }
    fflush(stdout);
    if (cmd)
        fprintf(stderr, "nextok %s: %s\n", cmd, msg);
    else
        fprintf(stderr, "nextok: %s\n", msg);
    fflush(stderr);
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(cmd, fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

void cli_die(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(cmd, fmt, ap);
    va_end(ap);
    exit(CLI_EXIT_USAGE);
}

/* ------------------------------------------------------------------------ */
/* Argument helpers                                                          */
/* ------------------------------------------------------------------------ */

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return true;
    return false;
}

bool cli_is_flag(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

const char *cli_flag_value(const char *cmd, int argc, char **argv, int *i)
{
    const char *eq = strchr(argv[*i], '='); /* the caller matched "--flag" or "--flag=" */
    if (eq) return eq + 1;
    if (*i + 1 >= argc) {
        cli_fail(cmd, "%s: missing value", argv[*i]);
        return NULL;
    }
    *i += 1;
    return argv[*i];
}

enum cli_parse cli_unknown_flag(const char *cmd, const char *arg)
{
    if (arg[0] == '-' && arg[1] != '\0')
        cli_fail(cmd, "unknown flag '%s' (see 'nextok %s --help')", arg, cmd ? cmd : "");
    else
        cli_fail(cmd, "unexpected argument '%s' (see 'nextok %s --help')", arg, cmd ? cmd : "");
    return CLI_PARSE_ERROR;
}

/* The range a value must lie in, for messages: "be in [0, 1]", "be >= 0", ... */
static void range_text(double lo, double hi, char *buf, size_t cap)
{
    if (isinf(lo) && isinf(hi))
        snprintf(buf, cap, "be a finite number");
    else if (isinf(hi))
        snprintf(buf, cap, "be >= %g", lo);
    else if (isinf(lo))
        snprintf(buf, cap, "be <= %g", hi);
    else
        snprintf(buf, cap, "be in [%g, %g]", lo, hi);
}

int cli_parse_float(const char *cmd, const char *flag, const char *s, double lo, double hi,
                    float *out)
{
    char *end = NULL;
    errno = 0;
    double v = (*s && !strchr(" \t\n", *s)) ? strtod(s, &end) : 0.0;
    if (!end || end == s || *end != '\0') {
        cli_fail(cmd, "%s: not a number: '%s'", flag, s);
        return -1;
    }
    float f = (float)v;
    char want[96];
    range_text(lo, hi, want, sizeof want);
    if (!isfinite(f) || v < lo || v > hi) {
        cli_fail(cmd, "%s: must %s, got '%s'", flag, want, s);
        return -1;
    }
    *out = f;
    return 0;
}

/* Decimal, or hexadecimal with 0x; the sign must be leading. */
static int parse_ll(const char *s, long long *out)
{
    const char *p = s;
    bool neg = false;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    int base = (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) ? 16 : 10;
    if (base == 16) p += 2;
    if (!((*p >= '0' && *p <= '9') || (base == 16 && strchr("abcdefABCDEF", *p) && *p)))
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long u = strtoull(p, &end, base);
    if (*end != '\0' || errno == ERANGE) return -1;
    if (u > (unsigned long long)LLONG_MAX + (neg ? 1u : 0u)) return -1;
    *out = neg ? (long long)(0 - u) : (long long)u;
    return 0;
}

int cli_parse_int(const char *cmd, const char *flag, const char *s, long long lo, long long hi,
                  long long *out)
{
    long long v;
    if (parse_ll(s, &v) != 0) {
        cli_fail(cmd, "%s: not an integer: '%s'", flag, s);
        return -1;
    }
    if (v < lo || v > hi) {
        if (hi == LLONG_MAX)
            cli_fail(cmd, "%s: must be >= %lld, got '%s'", flag, lo, s);
        else
            cli_fail(cmd, "%s: must be in [%lld, %lld], got '%s'", flag, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_u64(const char *cmd, const char *flag, const char *s, uint64_t *out)
{
    const char *p = s;
    int base = (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) ? 16 : 10;
    if (base == 16) p += 2;
    char *end = NULL;
    errno = 0;
    unsigned long long u = 0;
    bool digit = (*p >= '0' && *p <= '9') || (base == 16 && *p && strchr("abcdefABCDEF", *p));
    if (digit) u = strtoull(p, &end, base);
    if (!digit || *end != '\0' || errno == ERANGE) {
        cli_fail(cmd, "%s: not an unsigned 64-bit integer: '%s'", flag, s);
        return -1;
    }
    *out = (uint64_t)u;
    return 0;
}

int cli_parse_ids(const char *cmd, const char *flag, const char *s, int32_t **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    if (*s == '\0') return 0;
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    int32_t *a = malloc(cap * sizeof *a);
    if (!a) {
        cli_fail(cmd, "%s: out of memory", flag);
        return -1;
    }
    size_t k = 0;
    for (const char *p = s;; p++) {
        size_t len = strcspn(p, ",");
        char item[32];
        long long v = -1;
        if (len > 0 && len < sizeof item) {
            memcpy(item, p, len);
            item[len] = '\0';
            if (item[0] == '-' || item[0] == '+' || parse_ll(item, &v) != 0) v = -1;
        }
        if (v < 0 || v > INT32_MAX) {
            cli_fail(cmd, "%s: bad token id '%.*s' in '%s' (want ids >= 0 separated by commas)",
                     flag, (int)(len < 40 ? len : 40), p, s);
            free(a);
            return -1;
        }
        a[k++] = (int32_t)v;
        p += len;
        if (*p == '\0') break;
    }
    *ids = a;
    *n = k;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Chain failures                                                            */
/* ------------------------------------------------------------------------ */

int cli_chain_fail(const char *cmd, struct nextok_chain *chain, nextok_status st,
                   const struct cli_logits *l, size_t row)
{
    const char *msg = nextok_chain_errmsg(chain);
    if (!msg || !msg[0]) msg = nextok_strerror(st);
    long long nan_at = st == NEXTOK_ERR_NAN && l ? cli_logits_find_nan(l, row) : -1;
    if (nan_at >= 0)
        return cli_fail(cmd, "%s (first NaN: token %lld of row %zu; --nan-as-neg-inf masks NaN)",
                        msg, nan_at, row);
    return cli_fail(cmd, "%s [%s]", msg, nextok_status_name(st));
}

/* ------------------------------------------------------------------------ */
/* Token text (--vocab)                                                      */
/* ------------------------------------------------------------------------ */

/*
 * Token text comes from the library's vocabulary (nextok_vocab_load_file: GGUF,
 * HF tokenizer.json or tiktoken, by content). The logits may be longer than the
 * vocabulary (models pad their output layer): ids past its end have no text.
 * Shorter logits than the vocabulary mean the two do not belong together.
 * A vocabulary using something the library does not implement
 * (NEXTOK_ERR_UNSUPPORTED, e.g. a regex decoder) is not an input error: a note
 * goes to stderr and ids are shown without text.
 */
int cli_vocab_open(const char *cmd, const char *path, size_t n_vocab, struct cli_vocab *v)
{
    v->path = path;
    v->impl = NULL;
    if (!path) return 0;
    struct nextok_error err;
    memset(&err, 0, sizeof err);
    struct nextok_vocab *voc = NULL;
    nextok_status st = nextok_vocab_load_file(&voc, path, &err);
    if (st == NEXTOK_ERR_UNSUPPORTED) { /* e.g. a tokenizer.json decoder with a regex */
        fflush(stdout);
        fprintf(stderr, "nextok %s: note: --vocab %s: %s; showing ids only\n", cmd, path,
                err.msg[0] ? err.msg : nextok_strerror(st));
        return 0;
    }
    if (st != NEXTOK_OK)
        return cli_fail(cmd, "--vocab %s: %s", path, err.msg[0] ? err.msg : nextok_strerror(st));
    if (cli_vocab_check_rows(cmd, path, n_vocab, voc) != 0) {
        nextok_vocab_free(voc);
        return CLI_EXIT_USAGE;
    }
    v->impl = voc;
    return 0;
}

int cli_vocab_check_rows(const char *cmd, const char *path, size_t n_vocab,
                         const struct nextok_vocab *voc)
{
    size_t n_tok = (size_t)nextok_vocab_n_tokens(voc);
    if (n_vocab < n_tok)
        return cli_fail(cmd, "logits length %zu does not match --vocab %s (%zu tokens)", n_vocab,
                        path, n_tok);
    return 0;
}

/* Append one byte as "\xNN" (an invalid UTF-8 byte). */
static size_t put_hex(char *buf, size_t cap, size_t n, unsigned char c)
{
    static const char HEX[] = "0123456789abcdef";
    if (n + 4 < cap) {
        buf[n++] = '\\';
        buf[n++] = 'x';
        buf[n++] = HEX[c >> 4];
        buf[n++] = HEX[c & 15];
    }
    return n;
}

size_t cli_utf8_len(const unsigned char *s, size_t len)
{
    size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
             : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || n == 0 || n > len) return 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80) return 0;
    uint32_t cp = n == 1 ? s[0] : n == 2 ? (s[0] & 0x1fu) : n == 3 ? (s[0] & 0x0fu) : (s[0] & 0x07u);
    for (size_t k = 1; k < n; k++) cp = cp << 6 | (s[k] & 0x3fu);
    static const uint32_t MIN[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < MIN[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

const char *cli_vocab_bytes(const struct cli_vocab *v, int32_t id, size_t *len)
{
    *len = 0;
    if (!v || !v->impl) return NULL;
    return nextok_vocab_token_bytes(v->impl, id, len);
}

bool cli_vocab_text(const struct cli_vocab *v, int32_t id, char *buf, size_t cap)
{
    if (cap) buf[0] = '\0';
    size_t len = 0;
    const unsigned char *s = (const unsigned char *)cli_vocab_bytes(v, id, &len);
    if (!s || cap == 0) return false;
    size_t n = 0;
    for (size_t k = 0; k < len;) {
        size_t u = cli_utf8_len(s + k, len - k);
        if (u == 0) {
            n = put_hex(buf, cap, n, s[k++]);
            continue;
        }
        if (n + u >= cap) break;
        memcpy(buf + n, s + k, u);
        n += u;
        k += u;
    }
    buf[n] = '\0';
    return true;
}

void cli_vocab_close(struct cli_vocab *v)
{
    nextok_vocab_free(v->impl);
    v->impl = NULL;
    v->path = NULL;
}

/* The whole of path ("-": stdin) into a malloc'd buffer. */
int cli_read_all(const char *cmd, const char *flag, const char *path, char **data, size_t *size)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return cli_fail(cmd, "%s %s: %s", flag, path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *p = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!p) free(buf);
        buf = p;
        cap *= 2;
    }
    bool bad = ferror(f);
    if (f != stdin) fclose(f);
    if (!buf) return cli_fail(cmd, "%s %s: out of memory", flag, path);
    if (bad) {
        free(buf);
        return cli_fail(cmd, "%s %s: read error", flag, path);
    }
    *data = buf;
    *size = n;
    return 0;
}

double cli_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cli_sort_doubles(double *t, size_t n) { qsort(t, n, sizeof *t, cmp_double); }
