/*
 * Building a vocabulary's encoder description at load: the first symbol of
 * each byte, the merge-pair table, the pre-tokenizer regexes and the trie of
 * added tokens. Loaders say what the file asks for (merge_by, syms, norm,
 * pre, patterns); this file turns it into tables.
 */
#include "vocab_internal.h"

#include "../common/utf8.h"

#include <stdio.h>

/* The split patterns of the published tokenizers (facts: GPT-2's encoder.py,
 * Meta's and Qwen's tokenizer.json, OpenAI's tiktoken encodings). */
const char nextok__re_gpt2[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const char nextok__re_llama3[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
                                 "{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                                 "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char nextok__re_qwen2[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
                                " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                                "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char nextok__re_cl100k[] = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}"
                                 "+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+"
                                 "|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";
const char nextok__re_o200k[] =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* BertPreTokenizer's classes, as HF's Rust code has them. Whitespace is
 * char::is_whitespace (the White_Space property; PCRE2's \s also takes
 * U+180E). Punctuation is ASCII punctuation or unicode_categories 0.1.1's
 * P* table, which is older than PCRE2's: U+166D and U+111C9 were P* then,
 * and the characters excluded below were made P* by later Unicode versions:
 * the 106 differences from PCRE2 10.42's tables (Unicode 14), found by
 * probing HF code point by code point (tests/data/vocab/synthetic/
 * hf-char-classes.txt). A PCRE2 with a newer Unicode may add more. */
const char nextok__re_bert_space[] =
    "[\\t-\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}]+";
const char nextok__re_bert_punct[] =
    "[!-/:-@\\[-`{-~\\x{166D}\\x{111C9}]|(?![\\x{61D}\\x{9FD}\\x{A76}\\x{C77}\\x{C84}\\x{1B7D}-\\x{1B7E}"
    "\\x{2E43}-\\x{2E4F}\\x{2E52}-\\x{2E5D}\\x{10EAD}\\x{10F55}-\\x{10F59}\\x{10F86}-\\x{10F89}"
    "\\x{1144B}-\\x{1144F}\\x{1145A}-\\x{1145B}\\x{1145D}\\x{11660}-\\x{1166C}\\x{116B9}\\x{1183B}"
    "\\x{11944}-\\x{11946}\\x{119E2}\\x{11A3F}-\\x{11A46}\\x{11A9A}-\\x{11A9C}\\x{11A9E}-\\x{11AA2}"
    "\\x{11C41}-\\x{11C45}\\x{11C70}-\\x{11C71}\\x{11EF7}-\\x{11EF8}\\x{11FFF}\\x{12FF1}-\\x{12FF2}"
    "\\x{16E97}-\\x{16E9A}\\x{16FE2}\\x{1E95E}-\\x{1E95F}])\\p{P}";

void nextok__enc_refuse(struct nextok__enc *e, const char *why)
{
    e->merge_by = NEXTOK__MERGE_NONE;
    snprintf(e->unsupported, sizeof e->unsupported, "%s", why);
}

void nextok__enc_add_regex(struct nextok__enc *e, const char *pattern, enum nextok__split_how how)
{
    if (e->n_pre == NEXTOK__ENC_MAX_STEPS || e->n_patterns == NEXTOK__ENC_MAX_STEPS) {
        nextok__enc_refuse(e, "pre-tokenizer: more than 8 steps");
        return;
    }
    struct nextok__pre_step *s = &e->pre[e->n_pre++];
    memset(s, 0, sizeof *s);
    s->op = NEXTOK__PRE_REGEX;
    s->how = how;
    s->regex = e->n_patterns;
    e->patterns[e->n_patterns++] = pattern;
}

nextok_status nextok__enc_add_regex_copy(struct nextok_vocab *v, const char *pattern, size_t len,
                                         enum nextok__split_how how, struct nextok_error *err)
{
    struct nextok__enc *e = &v->enc;
    if (e->n_patterns == NEXTOK__ENC_MAX_STEPS) {
        nextok__enc_refuse(e, "pre-tokenizer: more than 8 steps");
        return NEXTOK_OK;
    }
    char *copy = nextok__alloc(&v->mem, len + 1);
    NEXTOK_RETURN_IF(!copy, err, NEXTOK_ERR_NOMEM, "out of memory for a pre-tokenizer regex");
    memcpy(copy, pattern, len);
    copy[len] = '\0';
    e->owned[e->n_patterns] = copy;
    nextok__enc_add_regex(e, copy, how);
    return NEXTOK_OK;
}

void nextok__enc_add_bert(struct nextok__enc *e, bool clean, bool cjk, bool strip, bool lower)
{
    struct nextok__norm_step st = {.op = NEXTOK__NORM_BERT_CLEAN};
    st.a_len = (uint8_t)((clean ? 1 : 0) | (cjk ? 2 : 0));
    if (clean || cjk) nextok__enc_add_norm(e, &st);
    st.op = NEXTOK__NORM_STRIP_MARKS;
    st.a_len = 1;
    if (strip) nextok__enc_add_norm(e, &st);
    st.op = NEXTOK__NORM_LOWERCASE;
    st.a_len = 0;
    if (lower) nextok__enc_add_norm(e, &st);
}

void nextok__enc_add_bert_split(struct nextok__enc *e)
{
    nextok__enc_add_regex(e, nextok__re_bert_space, NEXTOK__SPLIT_REMOVED);
    nextok__enc_add_regex(e, nextok__re_bert_punct, NEXTOK__SPLIT_ISOLATED);
}

bool nextok__enc_add_norm(struct nextok__enc *e, const struct nextok__norm_step *step)
{
    if (e->n_norm == NEXTOK__ENC_MAX_STEPS) {
        nextok__enc_refuse(e, "normalizer: more than 8 steps");
        return false;
    }
    e->norm[e->n_norm++] = *step;
    return true;
}

bool nextok__enc_add_split_string(struct nextok__enc *e, const char *s, size_t len,
                                  enum nextok__split_how how)
{
    if (e->n_pre == NEXTOK__ENC_MAX_STEPS || len == 0 || len > NEXTOK__ENC_STR_MAX) {
        nextok__enc_refuse(
            e,
            "pre-tokenizer: a Split string that is empty or over 16 bytes, or more than 8 steps");
        return false;
    }
    struct nextok__pre_step *p = &e->pre[e->n_pre++];
    memset(p, 0, sizeof *p);
    p->op = NEXTOK__PRE_STRING;
    p->how = how;
    p->a_len = (uint8_t)len;
    memcpy(p->a, s, len);
    return true;
}

/* ---- first symbols --------------------------------------------------------- */

static void first_symbols(struct nextok_vocab *v, struct nextok__enc *e)
{
    for (unsigned b = 0; b < 256; b++) {
        char s[8];
        size_t n = 1;
        s[0] = (char)b;
        char u[4];
        size_t bl = nextok__utf8_encode(nextok__byte_level_cp(b), u); /* < U+0800: two bytes at most */
        memcpy(e->bl_utf8[b], u, 2);
        e->bl_len[b] = (uint8_t)bl;
        if (e->syms == NEXTOK__SYMS_BYTE_LEVEL) {
            memcpy(s, u, bl);
            n = bl;
        } else if (e->syms == NEXTOK__SYMS_CHARS)
            n = (size_t)snprintf(s, sizeof s, "<0x%02X>", b);
        e->byte_tok[b] = nextok__vocab_lookup(v, s, n);
    }
}

/* ---- the merge-pair table ------------------------------------------------------ */

static void pair_put(struct nextok__enc *e, int32_t l, int32_t r, int32_t rank, int32_t out)
{
    uint64_t key = ((uint64_t)(uint32_t)l << 32 | (uint32_t)r) + 1;
    uint32_t h = nextok__pair_hash(key) & e->pair_mask;
    for (; e->pair_key[h]; h = (h + 1) & e->pair_mask)
        if (e->pair_key[h] == key) return; /* a repeated merge keeps its first rank */
    e->pair_key[h] = key;
    e->pair_rank[h] = rank;
    e->pair_out[h] = out;
}

static nextok_status build_pairs(struct nextok_vocab *v, struct nextok__enc *e,
                                 struct nextok_error *err)
{
    size_t slots = 16;
    while (slots < 2 * v->n_merges) slots *= 2;
    e->pair_key = nextok__calloc(&v->mem, slots, sizeof *e->pair_key);
    e->pair_rank = nextok__alloc_array(&v->mem, slots, sizeof *e->pair_rank);
    e->pair_out = nextok__alloc_array(&v->mem, slots, sizeof *e->pair_out);
    NEXTOK_RETURN_IF(!e->pair_key || !e->pair_rank || !e->pair_out, err, NEXTOK_ERR_NOMEM,
                     "out of memory for the merge table");
    e->pair_mask = (uint32_t)(slots - 1);
    for (size_t i = 0; i < v->n_merges; i++) {
        const uint32_t *m = v->merges + 3 * i;
        const char *s = v->arena.data + m[0];
        int32_t l = nextok__vocab_lookup(v, s, m[1]);
        int32_t r = nextok__vocab_lookup(v, s + m[1], m[2]);
        int32_t out = nextok__vocab_lookup(v, s, (size_t)m[1] + m[2]);
        /* A merge of or into a string that is not a token can never apply. */
        if (l >= 0 && r >= 0 && out >= 0) pair_put(e, l, r, (int32_t)i, out);
    }
    return NEXTOK_OK;
}

/* ---- added tokens -------------------------------------------------------------- */

/* Tokens the split looks for: added tokens (tokenizer.json, tiktoken's
 * specials) and GGUF's control, user-defined and unknown tokens, as
 * llama.cpp partitions text. Invalid UTF-8 ones are left out so that a
 * split never cuts a character. */
static bool splittable(const struct nextok_vocab *v, int32_t id)
{
    const struct nextok__tok *t = &v->toks[id];
    if (t->text_len == 0 || (t->attrs & NEXTOK_TOKEN_ATTR_ABSENT)) return false;
    bool added = (t->attrs & NEXTOK_TOKEN_ATTR_ADDED) || t->type == NEXTOK_TOKEN_TYPE_CONTROL ||
                 t->type == NEXTOK_TOKEN_TYPE_USER_DEFINED || t->type == NEXTOK_TOKEN_TYPE_UNKNOWN;
    if (!added) return false;
    const unsigned char *s = (const unsigned char *)nextok__tok_text(v, t);
    for (size_t i = 0; i < t->text_len;) {
        uint32_t cp;
        size_t k = nextok__utf8_decode(s + i, t->text_len - i, &cp);
        if (!k) return false;
        i += k;
    }
    return true;
}

static int32_t trie_child(struct nextok__enc *e, int32_t node, uint8_t b)
{
    for (int32_t c = e->trie[node].first; c >= 0; c = e->trie[c].next)
        if (e->trie[c].byte == b) return c;
    return -1;
}

static nextok_status trie_add(struct nextok_vocab *v, struct nextok__enc *e, int32_t id,
                              size_t *cap, struct nextok_error *err)
{
    const struct nextok__tok *t = &v->toks[id];
    const unsigned char *s = (const unsigned char *)nextok__tok_text(v, t);
    int32_t node = 0;
    for (uint32_t i = 0; i < t->text_len; i++) {
        int32_t c = trie_child(e, node, s[i]);
        if (c < 0) {
            if (e->n_trie == *cap) {
                size_t nc = *cap * 2;
                void *p = nextok__realloc(&v->mem, e->trie, nc * sizeof *e->trie);
                NEXTOK_RETURN_IF(!p, err, NEXTOK_ERR_NOMEM, "out of memory for added tokens");
                e->trie = p;
                *cap = nc;
            }
            c = (int32_t)e->n_trie++;
            e->trie[c] = (struct nextok__trie_node){-1, e->trie[node].first, -1, s[i]};
            e->trie[node].first = c;
        }
        node = c;
    }
    if (e->trie[node].id < 0) e->trie[node].id = id; /* the same text twice: the lower id */
    e->trie_first[s[0] >> 3] |= (uint8_t)(1u << (s[0] & 7));
    if (t->text_len > e->max_added) e->max_added = t->text_len;
    return NEXTOK_OK;
}

static nextok_status build_trie(struct nextok_vocab *v, struct nextok__enc *e,
                                struct nextok_error *err)
{
    size_t cap = 64;
    e->trie = nextok__alloc_array(&v->mem, cap, sizeof *e->trie);
    NEXTOK_RETURN_IF(!e->trie, err, NEXTOK_ERR_NOMEM, "out of memory for added tokens");
    e->trie[0] = (struct nextok__trie_node){-1, -1, -1, 0};
    e->n_trie = 1;
    for (int32_t id = 0; id < v->n_tokens; id++)
        if (splittable(v, id)) NEXTOK_FORWARD(trie_add(v, e, id, &cap, err));
    return NEXTOK_OK;
}

/* ---- SentencePiece words ------------------------------------------------------------ */

/* Whether some token has "▁" right after a character that is not "▁". If
 * none has, no merge can join the text before a run of "▁" to the run, so
 * splitting there first (as SentencePiece itself does) gives the same ids
 * and keeps the merge loop's input short. */
static bool space_inside_tokens(const struct nextok_vocab *v)
{
    static const char sp[] = "\xe2\x96\x81";
    for (int32_t id = 0; id < v->n_tokens; id++) {
        const struct nextok__tok *t = &v->toks[id];
        const char *s = nextok__tok_text(v, t);
        for (uint32_t i = 1; i + 3 <= t->text_len; i++) {
            if (memcmp(s + i, sp, 3) != 0) continue;
            if (i < 3 || memcmp(s + i - 3, sp, 3) != 0) return true;
        }
    }
    return false;
}

static void add_space_runs(struct nextok_vocab *v, struct nextok__enc *e)
{
    if (!e->spm_words || e->n_pre != 0 || e->syms != NEXTOK__SYMS_CHARS || space_inside_tokens(v))
        return;
    struct nextok__pre_step *p = &e->pre[e->n_pre++];
    memset(p, 0, sizeof *p);
    p->op = NEXTOK__PRE_SPACE_RUNS;
    p->how = NEXTOK__SPLIT_MERGED_NEXT;
    p->a_len = 3;
    memcpy(p->a, "\xe2\x96\x81", 3);
}

/* ---- the whole build ------------------------------------------------------------ */

nextok_status nextok__enc_build(struct nextok_vocab *v, struct nextok_error *err)
{
    struct nextok__enc *e = &v->enc;
    e->unk = v->special[NEXTOK_VOCAB_UNK];
    NEXTOK_FORWARD(build_trie(v, e, err));
    if (e->merge_by == NEXTOK__MERGE_NONE) {
        if (!e->unsupported[0]) nextok__enc_refuse(e, "this vocabulary has no encoder");
        return NEXTOK_OK;
    }
    first_symbols(v, e);
    add_space_runs(v, e);
    if (e->merge_by == NEXTOK__MERGE_RANKS) NEXTOK_FORWARD(build_pairs(v, e, err));
    char why[sizeof e->unsupported];
    nextok_status rc =
        nextok__pre_rx_compile(&e->rx, &v->mem, e->patterns, e->n_patterns, why, sizeof why);
    NEXTOK_RETURN_IF(rc == NEXTOK_ERR_NOMEM, err, rc, "out of memory compiling the pre-tokenizer");
    if (rc != NEXTOK_OK) nextok__enc_refuse(e, why);
    return NEXTOK_OK;
}

void nextok__enc_free(struct nextok_vocab *v)
{
    struct nextok__enc *e = &v->enc;
    nextok__pre_rx_free(&v->mem, e->rx);
    nextok__free(&v->mem, e->pair_key);
    nextok__free(&v->mem, e->pair_rank);
    nextok__free(&v->mem, e->pair_out);
    nextok__free(&v->mem, e->trie);
    nextok__free(&v->mem, e->uscore);
    for (int k = 0; k < NEXTOK__ENC_MAX_STEPS; k++) nextok__free(&v->mem, e->owned[k]);
}
