/* Vocabulary internals shared by the loaders (src/vocab) and the detokenizer
 * (src/text/detok.c). Not installed, not API. */
#ifndef NEXTOK_VOCAB_INTERNAL_H
#define NEXTOK_VOCAB_INTERNAL_H

#include "../common/buf.h"
#include "../common/internal.h"
#include "encode_internal.h"

#include <stdint.h>

/* Sanity caps for untrusted input. Real vocabularies have < 300k tokens of
 * < 1 KiB each; anything far beyond is a corrupt or hostile file, and taking
 * it at its word would mean multi-gigabyte allocations. */
#define NEXTOK__VOCAB_MAX_TOKENS  (1 << 24)
#define NEXTOK__TOKEN_MAX_BYTES   (1 << 16)
#define NEXTOK__ARENA_MAX         ((size_t)UINT32_MAX)

/* ---- tokens -------------------------------------------------------------- */

/* One token. Offsets point into the vocabulary's arena. `piece` is what the
 * token contributes to decoded text anywhere but first; `first` is what it
 * contributes as the first decoded token (differs for Metaspace, WordPiece,
 * the null decoder). Both are already through the per-token decoder steps. */
struct nextok__tok {
    uint32_t text_off, text_len;
    uint32_t piece_off, piece_len;
    uint32_t first_off, first_len;
    float    score;
    uint8_t  type;   /* enum nextok_token_type */
    uint8_t  attrs;  /* enum nextok_token_attr bits */
};

/* What is left of the decoder once the per-token steps ran: a Strip on the
 * whole text (HF Strip after Fuse). content_len == 0: none. */
struct nextok__strip {
    char     content[4];
    uint8_t  content_len;
    uint32_t start, stop;
};

struct nextok_vocab {
    struct nextok__mem mem;        /* every block of the vocabulary (arena.mem points here) */
    enum nextok_vocab_type type;
    int32_t  n_tokens;
    struct nextok__tok *toks;
    struct nextok__buf  arena;     /* token texts and pieces, merges */
    uint32_t *merges;              /* 3 per merge: offset, left length, right length */
    size_t    n_merges;
    int32_t  *hash;                /* open addressing over text -> id, -1 = empty */
    uint32_t  hash_mask;
    int32_t   special[NEXTOK_VOCAB_SPECIAL_COUNT];
    int32_t  *eog;                 /* sorted, unique */
    size_t    n_eog, eog_cap;
    bool      add_bos, add_eos;
    struct nextok__strip strip;
    uint32_t  max_piece;           /* longest text/piece/first, for output bounds */
    uint32_t  special_given;       /* bit k: role k came from the file (maybe as none) */
    struct nextok__enc enc;        /* text -> ids (encode_internal.h); loaders fill its description */
};

static inline const char *nextok__tok_text(const struct nextok_vocab *v, const struct nextok__tok *t)
{
    return v->arena.data + t->text_off;
}

/* ---- decoder description ------------------------------------------------- */

/* The decoder steps nextok can apply. Steps before the first FUSE,
 * BYTE_LEVEL or JOIN_SPACE work per token (HF decode_chain over the token
 * list); after it only STRIP (on the whole text) and FUSE may follow. */
enum nextok__dec_op {
    NEXTOK__DEC_REPLACE,       /* a: pattern, b: content                     */
    NEXTOK__DEC_BYTE_FALLBACK, /* "<0xNN>" -> byte NN                        */
    NEXTOK__DEC_METASPACE,     /* a: replacement char; flag: strip on first  */
    NEXTOK__DEC_STRIP,         /* a: content char; n1: start, n2: stop       */
    NEXTOK__DEC_WORDPIECE,     /* a: prefix; flag: cleanup                   */
    NEXTOK__DEC_BYTE_LEVEL,    /* GPT-2 unicode -> bytes, then fuse          */
    NEXTOK__DEC_FUSE,          /* join the tokens                            */
    NEXTOK__DEC_JOIN_SPACE,    /* no decoder: tokens joined with " "         */
};

#define NEXTOK__DEC_STR_MAX 16
#define NEXTOK__DEC_MAX_STEPS 16

struct nextok__dec_step {
    enum nextok__dec_op op;
    uint8_t  a_len, b_len;
    char     a[NEXTOK__DEC_STR_MAX];
    char     b[NEXTOK__DEC_STR_MAX];
    uint32_t n1, n2;
    bool     flag;
};

struct nextok__decoder {
    struct nextok__dec_step steps[NEXTOK__DEC_MAX_STEPS];
    int n;
};

/* Append a step; FORMAT/UNSUPPORTED with a message when the chain is full. */
nextok_status nextok__dec_push(struct nextok__decoder *d, const struct nextok__dec_step *s,
                               struct nextok_error *err);

/* ---- building a vocabulary (loaders) ------------------------------------- */

/* Allocate an empty vocabulary (special ids -1) that allocates with mem. */
nextok_status nextok__vocab_new(struct nextok_vocab **out, const struct nextok__mem *mem,
                                struct nextok_error *err);
/* Allocate v->toks for n tokens, all ABSENT/UNUSED with empty text. */
nextok_status nextok__vocab_alloc_tokens(struct nextok_vocab *v, int32_t n, struct nextok_error *err);
/* Copy text into the arena and make it token id's text. */
nextok_status nextok__vocab_set_text(struct nextok_vocab *v, int32_t id, const char *text, size_t len,
                                     struct nextok_error *err);
/* Append bytes to the arena; *off receives their offset. */
nextok_status nextok__arena_add(struct nextok_vocab *v, const char *s, size_t len, uint32_t *off,
                                struct nextok_error *err);
/* Add merge "left right" (already in the arena as left immediately followed by right). */
nextok_status nextok__vocab_add_merge(struct nextok_vocab *v, uint32_t off, uint32_t left_len,
                                      uint32_t right_len, struct nextok_error *err);
/* Split "left right" at the first space after position 0 and add it
 * (NEXTOK_ERR_FORMAT without a location when there is no such space). */
nextok_status nextok__vocab_add_merge_str(struct nextok_vocab *v, const char *s, size_t len,
                                          struct nextok_error *err);

/* Run the decoder over every token (pieces), build the text hash unless the
 * loader already did (texts must not change after that), fill the
 * special ids that the file did not give from well-known names, build the
 * end-of-generation set. Last step of every loader. */
nextok_status nextok__vocab_finish(struct nextok_vocab *v, const struct nextok__decoder *dec,
                                   const int32_t *extra_eog, size_t n_extra_eog,
                                   struct nextok_error *err);
/* Like nextok_vocab_find but usable during loading once the hash exists. */
int32_t nextok__vocab_lookup(const struct nextok_vocab *v, const char *text, size_t len);
/* Build the hash (done by finish; loaders that need lookups earlier call it). */
nextok_status nextok__vocab_build_hash(struct nextok_vocab *v, struct nextok_error *err);

/* Apply the per-token steps of dec to one text (first: as the first decoded
 * token); the result replaces out's contents. tmp is scratch. text must not
 * point into out or tmp. */
nextok_status nextok__dec_apply(const struct nextok__decoder *dec, const char *text, size_t len,
                                bool first, struct nextok__buf *out, struct nextok__buf *tmp,
                                struct nextok_error *err);
/* Whether any per-token step treats the first token differently. */
bool nextok__dec_first_matters(const struct nextok__decoder *dec);
/* The global Strip of dec (after fusing), if any; UNSUPPORTED for steps that
 * cannot act on a stream. */
nextok_status nextok__dec_global(const struct nextok__decoder *dec, struct nextok__strip *strip,
                                 struct nextok_error *err);

/* ---- the loaders with an allocator (the public ones pass nextok__mem_libc;
 * the vocabulary and every block of the load come from mem) ------------- */

nextok_status nextok__load_file(struct nextok_vocab **out, const struct nextok__mem *mem,
                                const char *path, struct nextok_error *err);
nextok_status nextok__load_gguf(struct nextok_vocab **out, const struct nextok__mem *mem,
                                const char *path, struct nextok_error *err);
nextok_status nextok__load_gguf_mem(struct nextok_vocab **out, const struct nextok__mem *mem,
                                    const void *data, size_t size, struct nextok_error *err);
nextok_status nextok__load_hf_json(struct nextok_vocab **out, const struct nextok__mem *mem,
                                   const char *path, struct nextok_error *err);
nextok_status nextok__load_hf_json_mem(struct nextok_vocab **out, const struct nextok__mem *mem,
                                       const struct nextok_hf_json_mem *files,
                                       struct nextok_error *err);
nextok_status nextok__load_tiktoken(struct nextok_vocab **out, const struct nextok__mem *mem,
                                    const char *path, const struct nextok_special_token *specials,
                                    size_t n_specials, struct nextok_error *err);
nextok_status nextok__load_tiktoken_mem(struct nextok_vocab **out, const struct nextok__mem *mem,
                                        const void *data, size_t size,
                                        const struct nextok_special_token *specials,
                                        size_t n_specials, struct nextok_error *err);

/* GPT-2's byte-to-unicode map: the code point that stands for byte b
 * (decoder.c, beside its inverse). */
uint32_t nextok__byte_level_cp(unsigned b);

/* HF-style ByteFallback token "<0xNN>": the byte, or -1. */
int nextok__byte_token(const char *s, size_t len);

#endif /* NEXTOK_VOCAB_INTERNAL_H */
