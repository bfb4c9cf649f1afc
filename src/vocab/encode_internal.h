/* The encoder's description of a vocabulary (text -> ids), filled by the
 * loaders and built once at load; immutable afterwards, so any number of
 * encoders (one per thread) share it. Not installed, not API.
 *
 * The pipeline, as HF tokenizers and llama.cpp run it:
 *   added-token split -> normalizer -> pre-tokenizer -> model, per word.
 * Files: encode.c (the encoder object and the added-token split),
 * normalize.c, pretok.c (regex and string splits), bpe.c (the merge loop),
 * enc_build.c (what the loaders call to build this description). */
#ifndef NEXTOK_ENCODE_INTERNAL_H
#define NEXTOK_ENCODE_INTERNAL_H

#include "../common/buf.h"
#include "../common/internal.h"

#include <stdbool.h>
#include <stdint.h>

struct nextok_vocab;

/* How a word's first symbols are made. */
enum nextok__syms {
    NEXTOK__SYMS_BYTE_LEVEL, /* each byte -> the token of its GPT-2 byte-to-unicode char */
    NEXTOK__SYMS_BYTES,      /* each byte -> the token of that raw byte (tiktoken)      */
    NEXTOK__SYMS_CHARS,      /* each UTF-8 character (SentencePiece); byte fallback    */
};

/* Which merges apply and in what order. */
enum nextok__merge_by {
    NEXTOK__MERGE_NONE,  /* no encoder for this vocabulary (message in unsupported) */
    NEXTOK__MERGE_RANKS, /* the merges list: lower index first (HF BPE, GGUF gpt2)  */
    NEXTOK__MERGE_TOKEN, /* any pair whose bytes are a token: lower id first (tiktoken) */
    NEXTOK__MERGE_SCORES, /* any pair whose text is a token: higher score first (SentencePiece BPE, llama.cpp) */
    NEXTOK__MODEL_UNIGRAM,   /* not merges: the Viterbi path over piece scores (unigram.c) */
    NEXTOK__MODEL_WORDPIECE, /* not merges: greedy longest match (wordpiece.c)             */
};

enum nextok__norm_op {
    NEXTOK__NORM_PREPEND, /* a before the text (when the text is not empty) */
    NEXTOK__NORM_REPLACE, /* every a -> b                                    */
    NEXTOK__NORM_NFC,     /* Unicode normalization forms (utf8proc)          */
    NEXTOK__NORM_NFD,
    NEXTOK__NORM_NFKC,
    NEXTOK__NORM_NFKD,
    NEXTOK__NORM_LOWERCASE, /* Unicode lowercase per character (utf8proc; U+0130 as Rust does) */
    NEXTOK__NORM_BERT_CLEAN,  /* BertNormalizer's clean_text (a_len bit 0), chinese chars (bit 1) */
    NEXTOK__NORM_STRIP_MARKS, /* a_len 1: NFD, drop Mn (BertNormalizer); 0: drop M* (StripAccents) */
};

#define NEXTOK__ENC_STR_MAX   16
#define NEXTOK__ENC_MAX_STEPS 8

struct nextok__norm_step {
    enum nextok__norm_op op;
    bool first_only;     /* PREPEND: only to the text's first segment (Metaspace "first") */
    bool unless_present; /* PREPEND: not when the text already starts with a (ByteLevel)   */
    uint8_t a_len, b_len;
    char a[NEXTOK__ENC_STR_MAX], b[NEXTOK__ENC_STR_MAX];
};

/* HF Split behaviours (what happens to each match). */
enum nextok__split_how {
    NEXTOK__SPLIT_ISOLATED,    /* matches and the text between them are words     */
    NEXTOK__SPLIT_REMOVED,     /* the text between matches are words             */
    NEXTOK__SPLIT_MERGED_PREV, /* a match ends the word before it                */
    NEXTOK__SPLIT_MERGED_NEXT, /* a match starts the word after it               */
};

enum nextok__pre_op {
    NEXTOK__PRE_REGEX,      /* split at the matches of a regex (regex[i])       */
    NEXTOK__PRE_STRING,     /* split at each occurrence of the string a         */
    NEXTOK__PRE_SPACE_RUNS, /* a word starts at each run of a ("▁"): how
                             * SentencePiece splits; added only when no token
                             * has a inside after another character, so it
                             * cannot change the result (enc_build.c) */
};

struct nextok__pre_step {
    enum nextok__pre_op op;
    enum nextok__split_how how;
    uint8_t a_len;
    char a[NEXTOK__ENC_STR_MAX];
    int regex; /* index into nextok__enc.rx */
};

struct nextok__pre_rx_set; /* pretok.c: compiled regexes (PCRE2) */

/* Added tokens, as a byte trie for the leftmost-longest split. */
struct nextok__trie_node {
    int32_t first; /* first child in nodes[], -1: none */
    int32_t next;  /* next sibling, -1: none           */
    int32_t id;    /* token ending here, -1: none      */
    uint8_t byte;
};

struct nextok__enc {
    enum nextok__merge_by merge_by;
    enum nextok__syms syms;
    bool ignore_merges;   /* a word that is a token is that token (Llama 3)        */
    bool byte_fallback;   /* unknown characters -> <0xNN> tokens                   */
    bool fuse_unk;        /* consecutive unknowns -> one unk                        */
    char unsupported[128]; /* why text cannot be encoded (merge_by NONE) */

    struct nextok__norm_step norm[NEXTOK__ENC_MAX_STEPS];
    int n_norm;
    struct nextok__pre_step pre[NEXTOK__ENC_MAX_STEPS];
    int n_pre;
    bool spm_words; /* SYMS_CHARS: try the SPACE_RUNS split (enc_build decides) */
    const char *patterns[NEXTOK__ENC_MAX_STEPS]; /* regex sources, NUL-terminated */
    char *owned[NEXTOK__ENC_MAX_STEPS];          /* the ones copied from the file (freed with v) */
    int n_patterns;
    struct nextok__pre_rx_set *rx;

    int32_t byte_tok[256]; /* the first symbol of each byte (-1: none) */
    char bl_utf8[256][2];  /* GPT-2's byte-to-unicode character of each byte, UTF-8 */
    uint8_t bl_len[256];
    int32_t unk;

    /* MERGE_RANKS: (left id, right id) -> rank and result, open addressing. */
    uint64_t *pair_key; /* (left << 32 | right) + 1; 0 = empty */
    int32_t *pair_rank;
    int32_t *pair_out;
    uint32_t pair_mask;

    /* Unigram: each model piece's score as the file gives it (double, as
     * HF keeps it: float sums could tie where HF's do not); NAN for ids
     * that are not model pieces. unk_score = min score - 10 (HF's
     * kUnkPenalty). max_piece: the longest piece, bytes. */
    double *uscore;
    double unk_score;
    uint32_t max_piece;
    /* WordPiece: the continuation prefix ("##") and the longest word (chars). */
    char wp_prefix[NEXTOK__ENC_STR_MAX];
    uint8_t wp_prefix_len;
    char wp_start[NEXTOK__ENC_STR_MAX]; /* a word's first piece's prefix (GGUF bert: "▁") */
    uint8_t wp_start_len;
    int32_t wp_max_chars;

    struct nextok__trie_node *trie; /* root is node 0 */
    size_t n_trie;
    uint8_t trie_first[32]; /* bit b: some added token starts with byte b */
    uint32_t max_added;     /* longest added token, bytes */
};

static inline uint32_t nextok__pair_hash(uint64_t key)
{
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 32;
    return (uint32_t)key;
}

/* ---- output ids --------------------------------------------------------- */

/* The caller's buffer; counting goes on past cap (the size needed). */
struct nextok__ids {
    int32_t *ids;
    size_t cap, n;
    size_t word_start; /* where the current word's ids start (fuse_unk) */
    int32_t last;      /* the last id pushed, -1 before any             */
};

static inline void nextok__ids_push(struct nextok__ids *o, int32_t id)
{
    if (o->n < o->cap) o->ids[o->n] = id;
    o->n++;
    o->last = id;
}

/* ---- bpe.c --------------------------------------------------------------- */

struct nextok__sym {
    int32_t start, len; /* bytes of the word; len 0: merged into its left neighbour */
    int32_t id;         /* -1: no token (yet)                                        */
    int32_t prev, next; /* -1: none                                                  */
};

struct nextok__merge_ent {
    uint64_t key;       /* priority << 32 | left symbol index */
    int32_t llen, rlen; /* the pair's lengths when pushed     */
    int32_t out;        /* the merged token                   */
};

/* An encoder's scratch for the merge loop (grows, never shrinks). */
struct nextok__bpe_scratch {
    const struct nextok__mem *mem;
    struct nextok__sym *sym;
    size_t sym_cap;
    struct nextok__merge_ent *heap;
    size_t heap_cap, n_heap;
    struct nextok__buf mapped; /* a byte-level word as the vocabulary spells it */
    struct nextok__lattice *lat; /* Unigram: best path per end position */
    size_t lat_cap;
};

struct nextok__lattice {
    double score;  /* best path to this position; -INFINITY: not reached */
    int32_t start; /* where its last piece starts                        */
    int32_t id;    /* that piece; -1 before a path is known             */
};

/* ---- unigram.c, wordpiece.c ------------------------------------------------ */

/* The same contract as nextok__bpe_word, for the other models. */
nextok_status nextok__unigram_word(const struct nextok_vocab *v, struct nextok__bpe_scratch *s,
                                   const char *w, size_t n, struct nextok__ids *out);
nextok_status nextok__wordpiece_word(const struct nextok_vocab *v, struct nextok__bpe_scratch *s,
                                     const char *w, size_t n, struct nextok__ids *out);

/* Encode one pre-tokenized word w[0, n) and push its ids. NOMEM;
 * UNSUPPORTED when a character has no token, no byte fallback and the
 * vocabulary has no unknown token; INVALID_ARG for a word over 2^29 bytes. */
nextok_status nextok__bpe_word(const struct nextok_vocab *v, struct nextok__bpe_scratch *s,
                               const char *w, size_t n, struct nextok__ids *out);
void nextok__bpe_scratch_free(struct nextok__bpe_scratch *s);

/* ---- enc_build.c: what loaders call ------------------------------------- */

/* Build the pair table, first symbols, regexes and added-token trie once the
 * loader has filled merge_by, syms, norm, pre and patterns (vocab finish
 * calls it). NOMEM fails the load; a description that cannot be built
 * (a regex PCRE2 refuses, a build without PCRE2) leaves merge_by NONE with
 * the reason in unsupported. */
nextok_status nextok__enc_build(struct nextok_vocab *v, struct nextok_error *err);
void nextok__enc_free(struct nextok_vocab *v);
/* Mark the vocabulary as not encodable, saying why. */
void nextok__enc_refuse(struct nextok__enc *e, const char *why);

/* Well-known pre-tokenizer regexes (facts from the published tokenizers). */
extern const char nextok__re_gpt2[];
extern const char nextok__re_llama3[];
extern const char nextok__re_qwen2[];
extern const char nextok__re_cl100k[];
extern const char nextok__re_o200k[];
extern const char nextok__re_bert_space[];
extern const char nextok__re_bert_punct[];

/* Add a regex split step (pattern must outlive the vocabulary). */
void nextok__enc_add_regex(struct nextok__enc *e, const char *pattern, enum nextok__split_how how);
/* The same with a copy of pattern[0, len) (NOMEM fails the load). */
nextok_status nextok__enc_add_regex_copy(struct nextok_vocab *v, const char *pattern, size_t len,
                                         enum nextok__split_how how, struct nextok_error *err);
/* Add a normalizer step; false when the chain is full or a string is too
 * long (then the vocabulary is refused for encoding). */
bool nextok__enc_add_norm(struct nextok__enc *e, const struct nextok__norm_step *step);
/* HF's BertNormalizer as its steps, in HF's order (clean_text and
 * handle_chinese_chars, strip_accents, lowercase), and BertPreTokenizer
 * (whitespace removed, each punctuation character alone). */
void nextok__enc_add_bert(struct nextok__enc *e, bool clean, bool cjk, bool strip, bool lower);
void nextok__enc_add_bert_split(struct nextok__enc *e);
bool nextok__enc_add_split_string(struct nextok__enc *e, const char *s, size_t len,
                                  enum nextok__split_how how);

/* ---- normalize_unicode.c ------------------------------------------------ */

/* A step of op NFC..STRIP_MARKS over valid UTF-8 in[0, len) into out (cps:
 * scratch). NOMEM; UNSUPPORTED in builds without utf8proc. */
nextok_status nextok__norm_unicode(const struct nextok__norm_step *s, const char *in, size_t len,
                                   struct nextok__buf *out, struct nextok__buf *cps);

/* ---- hf_unicode8.c: HF's Unicode 8.0 classes where utf8proc's differ ---- */

bool nextok__hf8_new_format(uint32_t c);                  /* Cf now, not in 8.0: kept  */
bool nextok__hf8_nonspacing(uint32_t c, bool utf8proc_mn); /* Mn as HF has it          */

/* ---- normalize.c --------------------------------------------------------- */

/* Run the normalizer over text[0, len) into bufs[0] or [1] (bufs[2]:
 * scratch), or return text itself when no step changes it; *out and
 * *out_len receive the result. at_start: this segment starts the text.
 * NOMEM. */
nextok_status nextok__normalize(const struct nextok__enc *e, const char *text, size_t len,
                                bool at_start, struct nextok__buf bufs[3], const char **out,
                                size_t *out_len);

/* ---- pretok.c ---------------------------------------------------------- */

nextok_status nextok__pre_rx_compile(struct nextok__pre_rx_set **out, const struct nextok__mem *mem,
                                     const char *const *patterns, int n, char *why, size_t why_cap);
void nextok__pre_rx_free(const struct nextok__mem *mem, struct nextok__pre_rx_set *rx);

/* Per-encoder matching state (PCRE2 match data). */
struct nextok__pre_rx_state;
nextok_status nextok__pre_rx_state_new(struct nextok__pre_rx_state **out,
                                       const struct nextok__mem *mem,
                                       const struct nextok__pre_rx_set *rx);
void nextok__pre_rx_state_free(const struct nextok__mem *mem, struct nextok__pre_rx_state *st);

/* The next match of regex k in s[from, len): 1 and [*ms, *me), 0 when none,
 * -1 on a matcher error (resource limit). */
int nextok__pre_rx_next(struct nextok__pre_rx_state *st, int k, const char *s, size_t len,
                        size_t from, size_t *ms, size_t *me);

#endif /* NEXTOK_ENCODE_INTERNAL_H */
