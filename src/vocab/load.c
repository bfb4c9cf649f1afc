/*
 * Loading a vocabulary by content: nextok_vocab_load_file looks at the file
 * (a directory, the GGUF magic, a JSON object, else a tiktoken ranks file)
 * and hands it to the loader for its format. The only file that calls every
 * loader; no loader calls it.
 */
#include "../common/file.h"
#include "vocab_internal.h"

#include <sys/stat.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Whether the first non-space byte of s[0..n) (after a UTF-8 byte order
 * mark) opens a JSON object. Only the first 8 bytes are looked at: what
 * load_file reads of a file's head. */
static bool starts_object(const char *s, size_t n)
{
    if (n > 8) n = 8;
    size_t i = n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) i++;
    return i < n && s[i] == '{';
}

/* OpenAI's published special tokens for its tiktoken encodings. */
static size_t tiktoken_known_specials(const char *path, struct nextok_special_token *sp)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = 0;
    if (strncmp(base, "o200k_base", 10) == 0) {
        sp[n++] = (struct nextok_special_token){"<|endoftext|>", 199999};
        sp[n++] = (struct nextok_special_token){"<|endofprompt|>", 200018};
    } else if (strncmp(base, "cl100k_base", 11) == 0) {
        sp[n++] = (struct nextok_special_token){"<|endoftext|>", 100257};
        sp[n++] = (struct nextok_special_token){"<|fim_prefix|>", 100258};
        sp[n++] = (struct nextok_special_token){"<|fim_middle|>", 100259};
        sp[n++] = (struct nextok_special_token){"<|fim_suffix|>", 100260};
        sp[n++] = (struct nextok_special_token){"<|endofprompt|>", 100276};
    } else if (strncmp(base, "r50k_base", 9) == 0 || strncmp(base, "p50k_base", 9) == 0) {
        sp[n++] = (struct nextok_special_token){"<|endoftext|>", 50256};
    }
    return n;
}

nextok_status nextok__load_file(struct nextok_vocab **out, const struct nextok__mem *mem,
                                const char *path, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!path, err, NEXTOK_ERR_INVALID_ARG, "path: must not be NULL");
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return nextok__load_hf_json(out, mem, path, err);
    char head[8] = {0};
    size_t got = 0;
    NEXTOK_FORWARD(nextok__read_head(path, head, sizeof head, &got, err));
    if (got >= 4 && memcmp(head, "GGUF", 4) == 0) return nextok__load_gguf(out, mem, path, err);
    if (starts_object(head, got) || ends_with(path, ".json"))
        return nextok__load_hf_json(out, mem, path, err);
    struct nextok_special_token sp[8];
    size_t n_sp = tiktoken_known_specials(path, sp);
    return nextok__load_tiktoken(out, mem, path, sp, n_sp, err);
}

nextok_status nextok_vocab_load_file(struct nextok_vocab **out, const char *path,
                                     struct nextok_error *err)
{
    return nextok__load_file(out, &nextok__mem_libc, path, err);
}

struct nextok_vocab_load_params nextok_vocab_load_default_params(void)
{
    struct nextok_vocab_load_params p;
    memset(&p, 0, sizeof p);
    return p;
}

/* The allocator of params (NULL: defaults), or INVALID_ARG. */
static nextok_status resolve(struct nextok__mem *mem, const struct nextok_vocab_load_params *params,
                             struct nextok_error *err)
{
    NEXTOK_FORWARD(nextok__mem_resolve_err(mem, params ? params->allocator : NULL, err));
    return NEXTOK_OK;
}

nextok_status nextok_vocab_load_file_ex(struct nextok_vocab **out, const char *path,
                                        const struct nextok_vocab_load_params *params,
                                        struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    struct nextok__mem mem;
    NEXTOK_FORWARD(resolve(&mem, params, err));
    return nextok__load_file(out, &mem, path, err);
}

nextok_status nextok_vocab_load_mem_ex(struct nextok_vocab **out, const void *data, size_t size,
                                       const struct nextok_vocab_load_params *params,
                                       struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!data && size, err, NEXTOK_ERR_INVALID_ARG, "data: must not be NULL");
    struct nextok__mem mem;
    NEXTOK_FORWARD(resolve(&mem, params, err));
    const char *p = data ? data : "";
    if (size >= 4 && memcmp(p, "GGUF", 4) == 0)
        return nextok__load_gguf_mem(out, &mem, p, size, err);
    if (starts_object(p, size)) {
        const struct nextok_hf_json_mem files = {p, size, NULL, 0, NULL, 0};
        return nextok__load_hf_json_mem(out, &mem, &files, err);
    }
    return nextok__load_tiktoken_mem(out, &mem, p, size, NULL, 0, err);
}
