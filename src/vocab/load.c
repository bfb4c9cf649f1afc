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

nextok_status nextok_vocab_load_file(struct nextok_vocab **out, const char *path,
                                     struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!path, err, NEXTOK_ERR_INVALID_ARG, "path: must not be NULL");
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return nextok_vocab_load_hf_json(out, path, err);
    char head[8] = {0};
    size_t got = 0;
    NEXTOK_FORWARD(nextok__read_head(path, head, sizeof head, &got, err));
    if (got >= 4 && memcmp(head, "GGUF", 4) == 0) return nextok_vocab_load_gguf(out, path, err);
    size_t i = 0;
    while (i < got && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) i++;
    if ((i < got && head[i] == '{') || ends_with(path, ".json"))
        return nextok_vocab_load_hf_json(out, path, err);
    struct nextok_special_token sp[8];
    size_t n_sp = tiktoken_known_specials(path, sp);
    return nextok_vocab_load_tiktoken(out, path, sp, n_sp, err);
}
