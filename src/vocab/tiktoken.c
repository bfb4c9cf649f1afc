/*
 * tiktoken ranks file: one line per token, "base64(token bytes) rank", the
 * rank being the token id. Special tokens are not in the file; the caller
 * names them. Tokens are raw bytes, so decoding is plain concatenation.
 */
#include "../common/file.h"
#include "vocab_internal.h"

struct tt_entry {
    uint32_t off, len; /* decoded bytes in the arena */
    int32_t  rank;
    uint32_t line;
};

struct tt_list {
    struct tt_entry *e;
    size_t n, cap;
    int32_t max_rank;
};

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Strict standard base64 with padding. Returns the decoded length, or -1. */
static long b64_decode(const char *s, size_t len, unsigned char *out)
{
    if (len == 0 || len % 4 != 0) return -1;
    size_t pad = s[len - 1] == '=' ? (s[len - 2] == '=' ? 2 : 1) : 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = 0;
        for (size_t k = 0; k < 4; k++) {
            bool is_pad = i + k >= len - pad;
            int d = is_pad ? 0 : b64_value((unsigned char)s[i + k]);
            if (d < 0 || (is_pad && s[i + k] != '=')) return -1;
            v = (v << 6) | (uint32_t)d;
        }
        out[n++] = (unsigned char)(v >> 16);
        out[n++] = (unsigned char)(v >> 8);
        out[n++] = (unsigned char)v;
    }
    return (long)(n - pad);
}

static nextok_status line_err(struct nextok_error *err, nextok_status st, uint32_t line,
                              const char *what, const char *s, size_t len)
{
    char q[48];
    nextok__quote(q, sizeof q, s, len < 32 ? len : 32);
    return nextok__err(err, st, "tiktoken: line %u: %s \"%s%s\"", (unsigned)line, what, q,
                       len > 32 ? "..." : "");
}

static nextok_status parse_rank(const char *s, size_t len, uint32_t line, int32_t *rank,
                                struct nextok_error *err)
{
    long long v = 0;
    bool ok = len > 0 && len <= 9;
    for (size_t i = 0; i < len && ok; i++) {
        ok = s[i] >= '0' && s[i] <= '9';
        v = v * 10 + (s[i] - '0');
    }
    if (!ok || v >= NEXTOK__VOCAB_MAX_TOKENS)
        return line_err(err, NEXTOK_ERR_FORMAT, line, "rank must be an integer in [0, 2^24), got",
                        s, len);
    *rank = (int32_t)v;
    return NEXTOK_OK;
}

static nextok_status list_push(const struct nextok__mem *mem, struct tt_list *l,
                               const struct tt_entry *e, struct nextok_error *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        struct tt_entry *p = nextok__realloc(mem, l->e, cap * sizeof *p);
        NEXTOK_RETURN_IF(!p, err, NEXTOK_ERR_NOMEM, "tiktoken: out of memory");
        l->e = p;
        l->cap = cap;
    }
    l->e[l->n++] = *e;
    if (e->rank > l->max_rank) l->max_rank = e->rank;
    return NEXTOK_OK;
}

static nextok_status parse_line(struct nextok_vocab *v, const char *s, size_t len, uint32_t line,
                                struct tt_list *l, struct nextok_error *err)
{
    const char *sp = memchr(s, ' ', len);
    if (!sp) return line_err(err, NEXTOK_ERR_FORMAT, line, "expected \"base64 rank\", got", s, len);
    size_t b64_len = (size_t)(sp - s);
    struct tt_entry e = {0, 0, 0, line};
    NEXTOK_FORWARD(parse_rank(sp + 1, len - b64_len - 1, line, &e.rank, err));
    if (b64_len > NEXTOK__TOKEN_MAX_BYTES)
        return line_err(err, NEXTOK_ERR_FORMAT, line, "token longer than 64 KiB:", s, b64_len);
    nextok_status rc = nextok__buf_reserve(&v->arena, b64_len);
    NEXTOK_RETURN_IF(rc != NEXTOK_OK, err, rc, "tiktoken: out of memory");
    long n = b64_decode(s, b64_len, (unsigned char *)v->arena.data + v->arena.len);
    if (n <= 0) return line_err(err, NEXTOK_ERR_FORMAT, line, "invalid base64", s, b64_len);
    NEXTOK_RETURN_IF(v->arena.len + (size_t)n > NEXTOK__ARENA_MAX, err, NEXTOK_ERR_FORMAT,
                     "tiktoken: line %u: vocabulary text exceeds 4 GiB", (unsigned)line);
    e.off = (uint32_t)v->arena.len;
    e.len = (uint32_t)n;
    v->arena.len += (size_t)n;
    return list_push(&v->mem, l, &e, err);
}

static nextok_status parse_lines(struct nextok_vocab *v, const char *data, size_t size,
                                 struct tt_list *l, struct nextok_error *err)
{
    uint32_t line = 0;
    for (size_t pos = 0; pos < size;) {
        const char *s = data + pos;
        const char *nl = memchr(s, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - s) : size - pos;
        pos += len + 1;
        line++;
        if (len && s[len - 1] == '\r') len--;
        if (len) NEXTOK_FORWARD(parse_line(v, s, len, line, l, err));
    }
    NEXTOK_RETURN_IF(l->n == 0, err, NEXTOK_ERR_FORMAT, "tiktoken: no tokens");
    return NEXTOK_OK;
}

static uint32_t line_of_rank(const struct tt_list *l, int32_t rank)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->e[i].rank == rank) return l->e[i].line;
    return 0;
}

static nextok_status place_ranks(struct nextok_vocab *v, const struct tt_list *l,
                                 struct nextok_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct tt_entry *e = &l->e[i];
        struct nextok__tok *t = &v->toks[e->rank];
        NEXTOK_RETURN_IF(!(t->attrs & NEXTOK_TOKEN_ATTR_ABSENT), err, NEXTOK_ERR_FORMAT,
                         "tiktoken: line %u: rank %ld already used on line %u", (unsigned)e->line,
                         (long)e->rank, (unsigned)line_of_rank(l, e->rank));
        t->text_off = t->piece_off = t->first_off = e->off;
        t->text_len = t->piece_len = t->first_len = e->len;
        t->type = NEXTOK_TOKEN_TYPE_NORMAL;
        t->attrs = 0;
    }
    return NEXTOK_OK;
}

static nextok_status check_specials(const struct nextok_special_token *sp, size_t n,
                                    struct nextok_error *err)
{
    NEXTOK_RETURN_IF(n && !sp, err, NEXTOK_ERR_INVALID_ARG, "specials: NULL with n_specials %zu", n);
    for (size_t i = 0; i < n; i++) {
        NEXTOK_RETURN_IF(!sp[i].text || !sp[i].text[0], err, NEXTOK_ERR_INVALID_ARG,
                         "specials[%zu].text: must be a non-empty string", i);
        NEXTOK_RETURN_IF(strlen(sp[i].text) > NEXTOK__TOKEN_MAX_BYTES, err, NEXTOK_ERR_INVALID_ARG,
                         "specials[%zu].text: longer than 64 KiB", i);
        NEXTOK_RETURN_IF(sp[i].id < 0 || sp[i].id >= NEXTOK__VOCAB_MAX_TOKENS, err,
                         NEXTOK_ERR_INVALID_ARG, "specials[%zu].id: must be in [0, 2^24), got %ld",
                         i, (long)sp[i].id);
        for (size_t j = 0; j < i; j++)
            NEXTOK_RETURN_IF(sp[j].id == sp[i].id, err, NEXTOK_ERR_INVALID_ARG,
                             "specials[%zu].id: %ld repeats specials[%zu].id", i, (long)sp[i].id, j);
    }
    return NEXTOK_OK;
}

static nextok_status place_specials(struct nextok_vocab *v, const struct nextok_special_token *sp,
                                    size_t n, const struct tt_list *l, struct nextok_error *err)
{
    for (size_t i = 0; i < n; i++) {
        struct nextok__tok *t = &v->toks[sp[i].id];
        NEXTOK_RETURN_IF(!(t->attrs & NEXTOK_TOKEN_ATTR_ABSENT), err, NEXTOK_ERR_INVALID_ARG,
                         "specials[%zu].id: %ld is the rank of line %u", i, (long)sp[i].id,
                         (unsigned)line_of_rank(l, sp[i].id));
        NEXTOK_FORWARD(nextok__vocab_set_text(v, sp[i].id, sp[i].text, strlen(sp[i].text), err));
        t->type = NEXTOK_TOKEN_TYPE_CONTROL;
        t->attrs = NEXTOK_TOKEN_ATTR_SPECIAL | NEXTOK_TOKEN_ATTR_ADDED;
    }
    return NEXTOK_OK;
}

/* tiktoken itself refuses two ranks with the same bytes (its encoder and
 * decoder maps would differ in size). */
static nextok_status check_unique(const struct nextok_vocab *v, const struct tt_list *l,
                                  struct nextok_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct tt_entry *e = &l->e[i];
        int32_t first = nextok__vocab_lookup(v, v->arena.data + e->off, e->len);
        if (first == e->rank || first < 0) continue;
        if (v->toks[first].attrs & NEXTOK_TOKEN_ATTR_SPECIAL) continue;
        return nextok__err(err, NEXTOK_ERR_FORMAT,
                           "tiktoken: line %u: same bytes as rank %ld (line %u)", (unsigned)e->line,
                           (long)first, (unsigned)line_of_rank(l, first));
    }
    return NEXTOK_OK;
}

/* The split pattern of OpenAI's published encodings, known by their rank
 * counts (a ranks file does not name its regex). Others cannot encode. */
static void set_encoder(struct nextok_vocab *v, size_t n_ranks)
{
    struct nextok__enc *e = &v->enc;
    const char *re = n_ranks == 199998 ? nextok__re_o200k
                   : n_ranks == 100256 ? nextok__re_cl100k
                   : n_ranks == 50256 || n_ranks == 50280 ? nextok__re_gpt2 : NULL;
    if (!re) {
        nextok__enc_refuse(e, "tiktoken: the split pattern of a file with this many ranks is not known "
                              "(o200k, cl100k, p50k and r50k are)");
        return;
    }
    e->merge_by = NEXTOK__MERGE_TOKEN;
    e->syms = NEXTOK__SYMS_BYTES;
    nextok__enc_add_regex(e, re, NEXTOK__SPLIT_ISOLATED);
}

static nextok_status build(struct nextok_vocab *v, const char *data, size_t size,
                           const struct nextok_special_token *sp, size_t n_sp,
                           struct tt_list *l, struct nextok_error *err)
{
    static const struct nextok__decoder raw = {.n = 0};
    v->type = NEXTOK_VOCAB_TYPE_TIKTOKEN;
    NEXTOK_FORWARD(parse_lines(v, data, size, l, err));
    int32_t max_id = l->max_rank;
    for (size_t i = 0; i < n_sp; i++)
        if (sp[i].id > max_id) max_id = sp[i].id;
    /* Ids far past the tokens defined would only make a huge, empty table. */
    NEXTOK_RETURN_IF((size_t)max_id >= 2 * (l->n + n_sp) + 65536, err, NEXTOK_ERR_FORMAT,
                     "tiktoken: id %ld is absurdly far beyond the %zu tokens defined", (long)max_id,
                     l->n + n_sp);
    NEXTOK_FORWARD(nextok__vocab_alloc_tokens(v, max_id + 1, err));
    NEXTOK_FORWARD(place_ranks(v, l, err));
    NEXTOK_FORWARD(place_specials(v, sp, n_sp, l, err));
    set_encoder(v, l->n);
    NEXTOK_FORWARD(nextok__vocab_finish(v, &raw, NULL, 0, err));
    return check_unique(v, l, err);
}

nextok_status nextok__load_tiktoken_mem(struct nextok_vocab **out, const struct nextok__mem *mem,
                                        const void *data, size_t size,
                                        const struct nextok_special_token *specials,
                                        size_t n_specials, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!data && size, err, NEXTOK_ERR_INVALID_ARG, "data: must not be NULL");
    NEXTOK_FORWARD(check_specials(specials, n_specials, err));
    struct nextok_vocab *v;
    NEXTOK_FORWARD(nextok__vocab_new(&v, mem, err));
    struct tt_list l = {NULL, 0, 0, -1};
    nextok_status rc = build(v, data ? data : "", size, specials, n_specials, &l, err);
    nextok__free(mem, l.e);
    if (rc != NEXTOK_OK) {
        nextok_vocab_free(v);
        return rc;
    }
    *out = v;
    return NEXTOK_OK;
}

nextok_status nextok_vocab_load_tiktoken_mem(struct nextok_vocab **out, const void *data,
                                             size_t size,
                                             const struct nextok_special_token *specials,
                                             size_t n_specials, struct nextok_error *err)
{
    return nextok__load_tiktoken_mem(out, &nextok__mem_libc, data, size, specials, n_specials, err);
}

nextok_status nextok__load_tiktoken(struct nextok_vocab **out, const struct nextok__mem *mem,
                                    const char *path, const struct nextok_special_token *specials,
                                    size_t n_specials, struct nextok_error *err)
{
    NEXTOK_RETURN_IF(!out, err, NEXTOK_ERR_INVALID_ARG, "out: must not be NULL");
    *out = NULL;
    NEXTOK_RETURN_IF(!path, err, NEXTOK_ERR_INVALID_ARG, "path: must not be NULL");
    char *data;
    size_t size;
    NEXTOK_FORWARD(nextok__read_file(mem, path, &data, &size, err));
    nextok_status rc = nextok__load_tiktoken_mem(out, mem, data, size, specials, n_specials, err);
    nextok__free(mem, data);
    return rc;
}

nextok_status nextok_vocab_load_tiktoken(struct nextok_vocab **out, const char *path,
                                         const struct nextok_special_token *specials,
                                         size_t n_specials, struct nextok_error *err)
{
    return nextok__load_tiktoken(out, &nextok__mem_libc, path, specials, n_specials, err);
}
