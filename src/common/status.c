/* Status table, version, error formatting, logging. */
#include "internal.h"

#include <stdio.h>

const char *nextok_version(void)
{
#define NEXTOK_STR_(x) #x
#define NEXTOK_STR(x) NEXTOK_STR_(x)
    return NEXTOK_STR(NEXTOK_VERSION_MAJOR) "." NEXTOK_STR(NEXTOK_VERSION_MINOR) "."
           NEXTOK_STR(NEXTOK_VERSION_PATCH);
}

int nextok_version_number(void) { return NEXTOK_VERSION_NUMBER; }

const char *nextok_strerror(nextok_status status)
{
    switch (status) {
#define NEXTOK_X_TEXT(name, value, text) case NEXTOK_##name: return text;
        NEXTOK_STATUS_LIST(NEXTOK_X_TEXT)
#undef NEXTOK_X_TEXT
    }
    return "unknown status";
}

const char *nextok_status_name(nextok_status status)
{
    switch (status) {
#define NEXTOK_X_NAME(name, value, text) case NEXTOK_##name: return #name;
        NEXTOK_STATUS_LIST(NEXTOK_X_NAME)
#undef NEXTOK_X_NAME
    }
    return "UNKNOWN";
}

void nextok__vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
    if (cap == 0) return;
    int n = vsnprintf(buf, cap, fmt, ap);
    if (n < 0) buf[0] = '\0';
}

void nextok__quote(char *dst, size_t cap, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (size_t i = 0; i < len && n + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
            dst[n++] = (char)c;
            continue;
        }
        dst[n++] = '\\';
        dst[n++] = 'x';
        dst[n++] = hex[c >> 4];
        dst[n++] = hex[c & 15];
    }
    if (cap) dst[n < cap ? n : cap - 1] = '\0';
}

nextok_status nextok__err(struct nextok_error *err, nextok_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        nextok__vfmt(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

void nextok__log(nextok_log_fn fn, void *user, enum nextok_log_level level, const char *fmt, ...)
{
    if (!fn) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    nextok__vfmt(line, sizeof line, fmt, ap);
    va_end(ap);
    fn(level, line, user);
}

nextok_status nextok__check_vocab(int32_t n_vocab, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(n_vocab <= 0, err, NEXTOK_ERR_VOCAB_SIZE,
                     "n_vocab: must be in [1, 2^31-1], got %d", (int)n_vocab);
    return NEXTOK_OK;
}

nextok_status nextok__check_finite(float v, const char *name, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!isfinite(v), err, NEXTOK_ERR_INVALID_ARG, "%s: must be finite, got %g",
                     name, (double)v);
    return NEXTOK_OK;
}

size_t nextok_dtype_size(enum nextok_dtype dtype)
{
    switch (dtype) {
    case NEXTOK_DTYPE_F32: return 4;
    case NEXTOK_DTYPE_F16: return 2;
    case NEXTOK_DTYPE_BF16: return 2;
    }
    return 0;
}
