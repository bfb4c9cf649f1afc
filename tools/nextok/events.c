/*
 * JSON strings for every command (cli_json_string: bytes as they are;
 * cli_json_text: invalid UTF-8 as U+FFFD) and the events of the streaming
 * commands (replay, generate): token events, finish words.
 */
#include "cli.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at p[0..n), 0 if it is not one. */
static size_t utf8_valid_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    size_t len = c < 0x80                 ? 1
                 : c >= 0xC2 && c <= 0xDF ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (len == 0 || len > n) return 0;
    for (size_t k = 1; k < len; k++)
        if ((p[k] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
    if (c == 0xED && p[1] > 0x9F) return 0; /* surrogate */
    if (c == 0xF0 && p[1] < 0x90) return 0; /* overlong */
    if (c == 0xF4 && p[1] > 0x8F) return 0; /* > U+10FFFF */
    return len;
}

static void json_ascii(FILE *f, unsigned char c)
{
    if (c == '"' || c == '\\')
        fprintf(f, "\\%c", c);
    else if (c == '\n')
        fputs("\\n", f);
    else if (c == '\r')
        fputs("\\r", f);
    else if (c == '\t')
        fputs("\\t", f);
    else if (c < 0x20 || c == 0x7f)
        fprintf(f, "\\u%04x", c);
    else
        fputc(c, f);
}

void cli_json_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t k = 0; k < n; k++) json_ascii(f, (unsigned char)s[k]);
    fputc('"', f);
}

/* A JSON string literal of s[0..n); invalid UTF-8 bytes become \ufffd. */
void cli_json_text(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        size_t len = utf8_valid_len(p + i, n - i);
        if (len == 0) {
            fputs("\\ufffd", f);
            i++;
        } else if (len > 1) {
            fwrite(p + i, 1, len, f);
            i += len;
        } else {
            json_ascii(f, p[i]);
            i++;
        }
    }
    fputc('"', f);
}

void cli_json_token_event(FILE *f, const struct nextok_step_result *r, bool logprobs)
{
    fprintf(f, "{\"token\": %ld, \"text\": ", (long)r->token);
    cli_json_text(f, r->text, r->text_len);
    if (logprobs) {
        fprintf(f, ", \"logprob\": %.6g, \"rank\": %ld, \"top\": [", (double)r->logprob,
                (long)r->rank);
        for (size_t k = 0; k < r->n_top; k++) {
            const struct nextok_top_logprob *t = &r->top[k];
            fprintf(f, "%s{\"id\": %ld, \"logprob\": %.6g, \"bytes\": [", k ? ", " : "",
                    (long)t->id, (double)t->logprob);
            for (size_t b = 0; b < t->len; b++)
                fprintf(f, "%s%u", b ? ", " : "", (unsigned)(unsigned char)t->bytes[b]);
            fputs("]}", f);
        }
        fputc(']', f);
    }
    fputs("}\n", f);
}

const char *cli_finish_word(enum nextok_finish f)
{
    switch (f) {
    case NEXTOK_FINISH_EOS: return "eos";
    case NEXTOK_FINISH_LENGTH:
    case NEXTOK_FINISH_NONE: return "length";
    default: return "stop";
    }
}
