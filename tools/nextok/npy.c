/*
 * npy.c - logits files: NumPy .npy (float32/float16) and raw .f32/.f16/.bf16.
 * See struct cli_logits in cli.h for the formats accepted.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NPY_MAX_DIMS 8

static int set_err(char *err, size_t cap, const char *fmt, ...) CLI_PRINTF(3, 4);

static int set_err(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Text taken from the file, made safe for an error line: bytes outside
 * printable ASCII (control bytes, escape sequences, C1 controls, invalid
 * UTF-8) are written as \xNN, so a crafted header cannot reach the terminal. */
static const char *printable(const char *s, char *buf, size_t cap)
{
    static const char HEX[] = "0123456789abcdef";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 5 <= cap; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
            buf[n++] = (char)*p;
            continue;
        }
        buf[n++] = '\\';
        buf[n++] = 'x';
        buf[n++] = HEX[*p >> 4];
        buf[n++] = HEX[*p & 15];
    }
    buf[n] = '\0'; /* the loop leaves room for it */
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Whole-file reading                                                        */
/* ------------------------------------------------------------------------ */

static int read_file(const char *path, unsigned char **out, size_t *n, char *err, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) return set_err(err, cap, "%s", strerror(errno));
    size_t len = 0, size = 1 << 16;
    unsigned char *buf = malloc(size);
    while (buf) {
        len += fread(buf + len, 1, size - len, f);
        if (len < size) break;
        unsigned char *nb = size > SIZE_MAX / 2 ? NULL : realloc(buf, size * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        size *= 2;
    }
    int e = errno;
    bool bad = ferror(f) != 0;
    fclose(f);
    if (!buf) return set_err(err, cap, "out of memory reading the file");
    if (bad) {
        free(buf);
        return set_err(err, cap, "read error: %s", strerror(e ? e : EIO));
    }
    *out = buf;
    *n = len;
    return 0;
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Copy little-endian elements of esz bytes into a new host-order buffer. */
static void *copy_le(const unsigned char *src, size_t count, size_t esz)
{
    size_t bytes = count * esz;
    void *dst = malloc(bytes ? bytes : 1);
    if (!dst) return NULL;
    memcpy(dst, src, bytes);
    if (!host_is_little_endian()) {
        unsigned char *d = dst;
        for (size_t k = 0; k < count; k++, d += esz)
            for (size_t a = 0, b = esz - 1; a < b; a++, b--) {
                unsigned char t = d[a];
                d[a] = d[b];
                d[b] = t;
            }
    }
    return dst;
}

/* ------------------------------------------------------------------------ */
/* .npy header: a Python dict literal                                        */
/* ------------------------------------------------------------------------ */

struct hdr {
    const char *p, *end;
    char descr[32];
    bool have_descr, have_fortran, have_shape;
    bool fortran;
    size_t shape[NPY_MAX_DIMS];
    int ndim;
};

static void skip_ws(struct hdr *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static bool eat(struct hdr *h, char c)
{
    skip_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return true;
    }
    return false;
}

static int parse_str(struct hdr *h, char *buf, size_t cap, char *err, size_t ecap)
{
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return set_err(err, ecap, "bad .npy header: expected a string");
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q && *h->p != '\\') {
        if (n + 1 < cap) buf[n++] = *h->p;
        h->p++;
    }
    if (h->p >= h->end || *h->p != q)
        return set_err(err, ecap, "bad .npy header: unterminated or escaped string");
    h->p++;
    buf[n] = '\0';
    return 0;
}

static int parse_bool(struct hdr *h, bool *out, char *err, size_t ecap)
{
    skip_ws(h);
    size_t left = (size_t)(h->end - h->p);
    if (left >= 4 && memcmp(h->p, "True", 4) == 0) {
        h->p += 4;
        *out = true;
        return 0;
    }
    if (left >= 5 && memcmp(h->p, "False", 5) == 0) {
        h->p += 5;
        *out = false;
        return 0;
    }
    return set_err(err, ecap, "bad .npy header: fortran_order must be True or False");
}

static int parse_dim(struct hdr *h, size_t *out, char *err, size_t ecap)
{
    skip_ws(h);
    size_t v = 0;
    const char *start = h->p;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
        size_t d = (size_t)(*h->p - '0');
        if (v > (SIZE_MAX - d) / 10) return set_err(err, ecap, "bad .npy header: shape too large");
        v = v * 10 + d;
        h->p++;
    }
    if (h->p == start) return set_err(err, ecap, "bad .npy header: shape must hold integers");
    if (h->p < h->end && *h->p == 'L') h->p++; /* Python 2 longs */
    *out = v;
    return 0;
}

static int parse_shape(struct hdr *h, char *err, size_t ecap)
{
    if (!eat(h, '(')) return set_err(err, ecap, "bad .npy header: shape must be a tuple");
    h->ndim = 0;
    while (!eat(h, ')')) {
        if (h->ndim == NPY_MAX_DIMS)
            return set_err(err, ecap, "shape has more than %d dimensions (need [V] or [steps, V])",
                           NPY_MAX_DIMS);
        if (parse_dim(h, &h->shape[h->ndim++], err, ecap) != 0) return -1;
        if (!eat(h, ',')) {
            if (!eat(h, ')')) return set_err(err, ecap, "bad .npy header: malformed shape tuple");
            break;
        }
    }
    return 0;
}

static int parse_entry(struct hdr *h, char *err, size_t ecap)
{
    char key[32], safe[4 * sizeof key + 1];
    if (parse_str(h, key, sizeof key, err, ecap) != 0) return -1;
    if (!eat(h, ':'))
        return set_err(err, ecap, "bad .npy header: expected ':' after '%s'",
                       printable(key, safe, sizeof safe));
    bool *seen = strcmp(key, "descr") == 0          ? &h->have_descr
               : strcmp(key, "fortran_order") == 0  ? &h->have_fortran
               : strcmp(key, "shape") == 0          ? &h->have_shape : NULL;
    if (!seen)
        return set_err(err, ecap, "bad .npy header: unexpected key '%s'",
                       printable(key, safe, sizeof safe));
    if (*seen) return set_err(err, ecap, "bad .npy header: key '%s' given twice", key);
    *seen = true;
    if (seen == &h->have_descr) return parse_str(h, h->descr, sizeof h->descr, err, ecap);
    if (seen == &h->have_fortran) return parse_bool(h, &h->fortran, err, ecap);
    return parse_shape(h, err, ecap);
}

static int parse_header(struct hdr *h, char *err, size_t ecap)
{
    if (!eat(h, '{')) return set_err(err, ecap, "bad .npy header: expected a '{' dict");
    while (!eat(h, '}')) {
        if (parse_entry(h, err, ecap) != 0) return -1;
        if (!eat(h, ',')) {
            if (!eat(h, '}')) return set_err(err, ecap, "bad .npy header: expected ',' or '}'");
            break;
        }
    }
    skip_ws(h);
    if (h->p != h->end) return set_err(err, ecap, "bad .npy header: text after the dict");
    if (!h->have_descr || !h->have_fortran || !h->have_shape)
        return set_err(err, ecap, "bad .npy header: missing key '%s'",
                       !h->have_descr ? "descr" : !h->have_fortran ? "fortran_order" : "shape");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* .npy                                                                      */
/* ------------------------------------------------------------------------ */

static int npy_dtype(const char *descr, enum nextok_dtype *dt, char *err, size_t ecap)
{
    if (strcmp(descr, "<f4") == 0) {
        *dt = NEXTOK_DTYPE_F32;
        return 0;
    }
    if (strcmp(descr, "<f2") == 0) {
        *dt = NEXTOK_DTYPE_F16;
        return 0;
    }
    char safe[4 * 32 + 1];
    if (descr[0] == '>')
        return set_err(err, ecap, "big-endian dtype '%s' is not supported (need '<f4' float32 or "
                       "'<f2' float16)", printable(descr, safe, sizeof safe));
    return set_err(err, ecap, "dtype '%s' is not supported (need '<f4' float32 or '<f2' float16)",
                   printable(descr, safe, sizeof safe));
}

static void shape_text(const struct hdr *h, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int k = 0; k < h->ndim && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%zu", k ? ", " : "", h->shape[k]);
    if (n < cap) snprintf(buf + n, cap - n, h->ndim == 1 ? ",)" : ")");
}

static int npy_shape(const struct hdr *h, struct cli_logits *out, char *err, size_t ecap)
{
    char st[128];
    shape_text(h, st, sizeof st);
    if (h->fortran)
        return set_err(err, ecap, "fortran_order is True: only C-order arrays are supported "
                       "(save np.ascontiguousarray(x))");
    if (h->ndim < 1 || h->ndim > 2)
        return set_err(err, ecap, "shape %s has %d dimensions (need [V] or [steps, V])", st,
                       h->ndim);
    size_t rows = h->ndim == 2 ? h->shape[0] : 1;
    size_t v = h->shape[h->ndim - 1];
    if (rows == 0 || v == 0) return set_err(err, ecap, "empty array (shape %s)", st);
    if (v > NEXTOK_VOCAB_MAX)
        return set_err(err, ecap, "rows of %zu logits exceed the largest vocabulary (%zu)", v,
                       (size_t)NEXTOK_VOCAB_MAX);
    if (rows > SIZE_MAX / v / 4) return set_err(err, ecap, "shape %s is too large", st);
    out->rows = rows;
    out->n_vocab = v;
    out->ndim = h->ndim;
    return 0;
}

static int load_npy(const unsigned char *b, size_t n, struct cli_logits *out, char *err,
                    size_t ecap)
{
    if (n < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        return set_err(err, ecap, "not a .npy file (no \\x93NUMPY magic)");
    size_t hlen, hstart;
    if (b[6] == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if ((b[6] == 2 || b[6] == 3) && n >= 12) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        return set_err(err, ecap, "unsupported .npy format version %d.%d", b[6], b[7]);
    }
    if (hlen > n - hstart)
        return set_err(err, ecap, "truncated .npy header (%zu bytes announced, %zu present)", hlen,
                       n - hstart);
    struct hdr h;
    memset(&h, 0, sizeof h);
    h.p = (const char *)b + hstart;
    h.end = h.p + hlen;
    if (parse_header(&h, err, ecap) != 0) return -1;
    if (npy_dtype(h.descr, &out->dtype, err, ecap) != 0) return -1;
    if (npy_shape(&h, out, err, ecap) != 0) return -1;
    size_t esz = nextok_dtype_size(out->dtype);
    size_t need = out->rows * out->n_vocab * esz, have = n - hstart - hlen;
    if (have < need)
        return set_err(err, ecap, "truncated data: %zu x %zu %s values need %zu bytes, file has %zu",
                       out->rows, out->n_vocab, cli_dtype_name(out->dtype), need, have);
    if (have > need)
        return set_err(err, ecap, "%zu unexpected bytes after the %zu bytes of data", have - need,
                       need);
    out->data = copy_le(b + hstart + hlen, out->rows * out->n_vocab, esz);
    if (!out->data) return set_err(err, ecap, "out of memory");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Raw files                                                                 */
/* ------------------------------------------------------------------------ */

static int load_raw(const unsigned char *b, size_t n, enum nextok_dtype dt,
                    struct cli_logits *out, char *err, size_t ecap)
{
    size_t esz = nextok_dtype_size(dt);
    if (n == 0) return set_err(err, ecap, "empty file");
    if (n % esz)
        return set_err(err, ecap, "size %zu bytes is not a multiple of %zu (%s elements)", n, esz,
                       cli_dtype_name(dt));
    if (n / esz > NEXTOK_VOCAB_MAX)
        return set_err(err, ecap, "%zu logits exceed the largest vocabulary", n / esz);
    out->dtype = dt;
    out->rows = 1;
    out->n_vocab = n / esz;
    out->ndim = 1;
    out->data = copy_le(b, out->n_vocab, esz);
    if (!out->data) return set_err(err, ecap, "out of memory");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public                                                                    */
/* ------------------------------------------------------------------------ */

const char *cli_dtype_name(enum nextok_dtype dtype)
{
    switch (dtype) {
    case NEXTOK_DTYPE_F32: return "float32";
    case NEXTOK_DTYPE_F16: return "float16";
    case NEXTOK_DTYPE_BF16: return "bfloat16";
    }
    return "unknown";
}

int cli_logits_load(const char *path, struct cli_logits *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash : path, '.');
    const char *ext = dot ? dot + 1 : "";
    int kind = strcasecmp(ext, "npy") == 0 ? 0 : strcasecmp(ext, "f32") == 0 ? 1
             : strcasecmp(ext, "f16") == 0 ? 2 : strcasecmp(ext, "bf16") == 0 ? 3 : -1;
    if (kind < 0 && !dot)
        return set_err(err, errcap, "no file extension to tell the format (want .npy, .f32, "
                       ".f16 or .bf16)");
    if (kind < 0)
        return set_err(err, errcap, "unknown logits file type '.%s' (want .npy, .f32, .f16 or "
                       ".bf16)", ext);
    unsigned char *buf = NULL;
    size_t n = 0;
    if (read_file(path, &buf, &n, err, errcap) != 0) return -1;
    static const enum nextok_dtype RAW[] = {NEXTOK_DTYPE_F32, NEXTOK_DTYPE_F32, NEXTOK_DTYPE_F16,
                                            NEXTOK_DTYPE_BF16};
    int rc = kind == 0 ? load_npy(buf, n, out, err, errcap)
                       : load_raw(buf, n, RAW[kind], out, err, errcap);
    free(buf);
    if (rc != 0) cli_logits_free(out);
    return rc;
}

const void *cli_logits_row(const struct cli_logits *l, size_t row)
{
    return (const char *)l->data + row * l->n_vocab * nextok_dtype_size(l->dtype);
}

void cli_logits_free(struct cli_logits *l)
{
    free(l->data);
    memset(l, 0, sizeof *l);
}

long long cli_logits_find_nan(const struct cli_logits *l, size_t row)
{
    const void *r = cli_logits_row(l, row);
    for (size_t k = 0; k < l->n_vocab; k++) {
        uint16_t h = 0;
        float f = 0.0f;
        if (l->dtype == NEXTOK_DTYPE_F32)
            memcpy(&f, (const float *)r + k, sizeof f);
        else
            memcpy(&h, (const uint16_t *)r + k, sizeof h);
        bool nan = l->dtype == NEXTOK_DTYPE_F32 ? isnan(f)
                 : l->dtype == NEXTOK_DTYPE_F16 ? (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu)
                                                : (h & 0x7f80u) == 0x7f80u && (h & 0x007fu);
        if (nan) return (long long)k;
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* --logits / --row                                                          */
/* ------------------------------------------------------------------------ */

void cli_input_init(struct cli_input *in)
{
    in->path = NULL;
    in->row = 0;
}

enum cli_parse cli_input_parse(struct cli_input *in, const char *cmd, int argc, char **argv,
                               int *i)
{
    const char *v;
    if (cli_is_flag(argv[*i], "--logits")) {
        if (!(v = cli_flag_value(cmd, argc, argv, i))) return CLI_PARSE_ERROR;
        in->path = v;
        return CLI_PARSE_OK;
    }
    if (cli_is_flag(argv[*i], "--row")) {
        if (!(v = cli_flag_value(cmd, argc, argv, i))) return CLI_PARSE_ERROR;
        return cli_parse_int(cmd, "--row", v, 0, LLONG_MAX, &in->row) == 0 ? CLI_PARSE_OK
                                                                          : CLI_PARSE_ERROR;
    }
    return CLI_PARSE_NOT_MINE;
}

int cli_input_load(const struct cli_input *in, const char *cmd, struct cli_logits *out)
{
    char err[512];
    memset(out, 0, sizeof *out);
    if (!in->path) return cli_fail(cmd, "missing --logits FILE (.npy, .f32, .f16 or .bf16)");
    if (cli_logits_load(in->path, out, err, sizeof err) != 0)
        return cli_fail(cmd, "--logits %s: %s", in->path, err);
    if ((unsigned long long)in->row >= out->rows) {
        cli_fail(cmd, "--row %lld out of range: %s has %zu row%s", in->row, in->path, out->rows,
                 out->rows == 1 ? "" : "s");
        cli_logits_free(out);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

void cli_input_usage(FILE *f)
{
    fprintf(f,
            "Input:\n"
            "  --logits FILE               .npy (float32/float16, [V] or [steps, V]),\n"
            "                              or raw little-endian .f32 / .f16 / .bf16 ([V])\n"
            "  --row N                     row of a [steps, V] file (default 0)\n");
}
