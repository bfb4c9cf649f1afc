/* The token matcher's internals: a grammar compiled against a vocabulary
 * (compiled.c), the parser-state cache (pda.c) and the matcher (matcher.c).
 * Not installed, not API.
 *
 * The parser is a set of pushdown stacks over the grammar's elements, as in
 * llama.cpp: a stack's top is a character set (or a token reference) still
 * to match; below it are return positions. Stacks are hash-consed into nodes
 * (position, parent), so a stack is one node id and equal stacks are equal
 * ids. A parser state is a sorted set of such tops plus, between the bytes
 * of one UTF-8 character, the part of the character read so far. States are
 * interned too, so the matcher is a lazily built DFA over bytes: each state
 * keeps its 256 transitions and its token mask once computed. */
#ifndef NEXTOK_MATCHER_INTERNAL_H
#define NEXTOK_MATCHER_INTERNAL_H

#include "grammar_internal.h"

#include <pthread.h>

/* A character set, normalised: ASCII as a bitmap, the rest as sorted,
 * disjoint [lo, hi] ranges without surrogates. */
struct nextok__cset {
    uint64_t ascii[2];
    uint32_t r0, r1; /* pairs in cg->ranges[2 * r0 .. 2 * r1) */
};

/* One node of the token trie, in preorder: the tokens whose bytes are the
 * path to it, and where its subtree ends. */
struct nextok__tnode {
    uint32_t end;   /* index after the subtree                 */
    uint32_t depth; /* bytes on the path (1 for a root child)  */
    uint32_t tok0;  /* tokens ending here: trie_tok[tok0, tok1) */
    uint32_t tok1;
    uint8_t byte;
};

enum nextok__tokkind {
    NEXTOK__TK_NONE = 0, /* no token or no bytes: never allowed */
    NEXTOK__TK_TEXT,     /* matched by its bytes                */
    NEXTOK__TK_SPECIAL,  /* matched only by token references    */
    NEXTOK__TK_EOG,      /* allowed where the grammar may end   */
};

/* Length levels for counted repetition: every 16 bytes up to the longest
 * token (at most this many). */
#define NEXTOK__LEVELS 16

/* A vocabulary prepared for masks (token_table.c): built once, shared by
 * every grammar compiled against it. */
struct nextok_token_table {
    struct nextok__mem mem;
    int32_t n_vocab;
    size_t n_words;
    uint8_t *kind;     /* enum nextok__tokkind per id */
    uint32_t *tok_off; /* id -> its bytes in tok_bytes[tok_off[id], tok_off[id + 1]) */
    char *tok_bytes;
    int32_t *eog;
    size_t n_eog;
    struct nextok__tnode *trie;
    uint32_t n_trie;
    uint32_t root_child[256]; /* the first-level node of byte b, UINT32_MAX: none */
    int32_t *trie_tok;
    uint32_t *tok_pos;  /* text token id -> its index in trie_tok */
    uint32_t max_depth; /* longest token */
    /* Bitmasks over ids (n_words each): has_byte[b] the text tokens holding
     * ASCII byte b; has_high those holding a byte >= 0x80; bad_utf8 those
     * whose bytes are not UTF-8 (a character cut at the end is fine);
     * text every text token. */
    uint32_t *has_byte; /* 128 masks */
    uint32_t *has_high, *bad_utf8, *text;
    /* first_byte[b]: the text tokens whose first byte is ASCII b; first_high:
     * those whose first byte is not ASCII (one block with the masks above) */
    uint32_t *first_byte, *first_high;
    uint32_t n_first[129]; /* how many: first_byte[b] for b < 128, first_high */
    /* Tokens by length, for states inside counted repetition: cp_len[id]
     * its code points (at most 255); level[k] a byte length, short_mask[k]
     * the text tokens of at most that many bytes, longer[k] the others
     * (n_longer[k] ids). The last level is the longest token. */
    uint8_t *cp_len;
    int32_t *by_cp; /* text ids, longest (in code points) first */
    uint32_t n_text;
    uint32_t n_levels;
    uint32_t level[NEXTOK__LEVELS];
    uint32_t *short_mask[NEXTOK__LEVELS];
    int32_t *longer[NEXTOK__LEVELS];
    uint32_t n_longer[NEXTOK__LEVELS];
};

struct nextok_compiled_grammar {
    struct nextok__mem mem;
    /* the grammar */
    struct nextok__gel *el;
    uint32_t n_el;
    uint32_t *alt;      /* live alternatives' first elements, rule by rule */
    uint32_t *rule_alt; /* rule r: alt[rule_alt[r], rule_alt[r + 1])        */
    uint32_t n_rules, root;
    int32_t *el_cset;  /* element -> character set index, or -1           */
    uint32_t *el_next; /* element -> the element after it (sets skipped)  */
    struct nextok__cset *cset;
    uint32_t n_cset;
    uint32_t *ranges;
    /* counted repetition (chains.c) */
    uint32_t *rule_start; /* rule -> its first element                          */
    uint32_t *el_rule;    /* element -> its rule                                */
    uint32_t *rule_rank;  /* rule -> its rank in a chain (at most that many more
                           * repetitions), 0 outside chains                     */
    uint32_t *rule_chain; /* rule -> its chain: chain_rules[rule_chain + k - 1]
                           * is the chain's rule of rank k                      */
    uint32_t *rule_body;  /* rule -> its repeated body's first element          */
    uint32_t *rule_nopt;  /* rule -> its chain's optional ranks (1..n_opt)      */
    uint32_t *chain_rules;
    /* the vocabulary */
    const struct nextok_token_table *tt;
    int32_t n_vocab;
    size_t n_words;
    /* limits */
    size_t max_cache_bytes;
    uint32_t max_stacks, max_work;
};

/* ---- the state cache (pda.c) ---------------------------------------------- */

/* Node 1 stands for "the caller": a state whose stacks all share a caller
 * P is cached relative to P (the same inside of a string wherever the
 * string is), with P replaced by this node; a stack popping into it has
 * left the frame. */
#define NEXTOK__EXIT 1u

#define NEXTOK__ST_DEAD    (-1)
#define NEXTOK__ST_UNKNOWN (-2)

struct nextok__pstate {
    uint32_t off, n;     /* tops: pc->pool[off, off + n), sorted; 0 = "complete" */
    uint32_t pval;       /* the character's bits read so far                     */
    uint8_t pneed, plen; /* continuation bytes still due; bytes read             */
    bool accept;         /* a complete top and no partial character               */
    bool has_tokref;     /* some top is a token reference                         */
    bool has_exit;       /* some top is NEXTOK__EXIT: the frame can end here       */
    bool frame_known;    /* rel and resume are set                                 */
    int32_t rel, resume; /* the state relative to its frame, and the caller's state
                          * after the frame ends; DEAD when s has no frame         */
    uint32_t *exits;     /* a relative state's tokens that leave the frame inside:
                          * triples (from, to, k): trie_tok[from, to) go on from
                          * byte k in the caller                                   */
    uint32_t n_exits;
    bool rank_known;
    uint32_t rank;  /* nextok__pcache_rank */
    int32_t *trans; /* 256 next states, NEXTOK__ST_*; NULL until needed      */
    uint32_t *mask; /* NULL until computed                                   */
    uint32_t n_allowed;
};

struct nextok__pcache {
    const struct nextok_compiled_grammar *cg;
    struct nextok__mem mem;
    pthread_mutex_t lock;
    uint32_t refs; /* matchers sharing it (under lock) */
    /* nodes: (pos, parent) */
    uint32_t *node; /* 2 per node; node 0 is the empty stack */
    uint32_t n_node, cap_node;
    uint32_t *nhash;
    uint32_t nhash_cap;
    /* states */
    struct nextok__pstate *st;
    uint32_t n_st, cap_st;
    uint32_t *shash;
    uint32_t shash_cap;
    uint32_t *pool;
    size_t n_pool, cap_pool;
    /* scratch */
    uint32_t *tops, *work;
    size_t cap_tops, cap_work;
    int32_t *walk;   /* trie walk: state per depth */
    uint32_t *gone;  /* loop path: tokens refused at their first byte (n_words) */
    uint32_t *chain; /* a stack\'s nodes while it is rebuilt */
    size_t cap_chain;
    uint32_t *ex; /* exits being collected (triples) */
    size_t n_ex, cap_ex;
    size_t bytes;         /* what the cache holds, against max_cache_bytes */
    nextok_status failed; /* sticky status of the last failed build step */
    char errmsg[NEXTOK_ERRMSG_MAX];
    int32_t start;
};

nextok_status nextok__pcache_new(struct nextok__pcache **out,
                                 const struct nextok_compiled_grammar *cg,
                                 struct nextok_error *err);
void nextok__pcache_release(struct nextok__pcache *pc);
/* The state after byte b from state s (NEXTOK__ST_DEAD when none); on a
 * limit or NOMEM returns NEXTOK__ST_UNKNOWN and sets pc->failed/errmsg. */
int32_t nextok__pcache_step(struct nextok__pcache *pc, int32_t s, unsigned b);
/* The state after whole token `id` through a token reference from s (the
 * union with its byte path is made by the caller), or DEAD. */
int32_t nextok__pcache_token_step(struct nextok__pcache *pc, int32_t s, int32_t id);
/* The union of two states' tops (neither partial). */
int32_t nextok__pcache_union(struct nextok__pcache *pc, int32_t a, int32_t b);

static inline int32_t nextok__pcache_next(struct nextok__pcache *pc, int32_t s, unsigned b)
{
    const int32_t *t = pc->st[s].trans;
    if (t && t[b] != NEXTOK__ST_UNKNOWN) return t[b];
    return nextok__pcache_step(pc, s, b);
}

/* The frame of s, `up` callers above the deepest one its stacks share: *rel
 * (s relative to that caller) and *resume (the caller's state once the
 * frame ends), both DEAD when s has none. false on a cache error. */
bool nextok__pcache_frame(struct nextok__pcache *pc, int32_t s, uint32_t up, int32_t *rel,
                          int32_t *resume);

/* Free a block from nextok__pcache_alloc (NULL: nothing). */
void nextok__pcache_unalloc(struct nextok__pcache *pc, void *p, size_t size);

/* Counted repetition (chains.c): the lowest chain rank in s's stacks (at
 * most that many more repetitions; 0: none, or s is inside a character);
 * s with every rank above cap lowered to cap (UNKNOWN on a cache error). */
uint32_t nextok__pcache_rank(struct nextok__pcache *pc, int32_t s);
int32_t nextok__pcache_cap(struct nextok__pcache *pc, int32_t s, uint32_t cap);

/* Note tokens trie_tok[from, to) leaving the frame after byte k (pc->ex). */
bool nextok__pcache_exit(struct nextok__pcache *pc, uint32_t from, uint32_t to, uint32_t k);

/* pda.c, for pda_remap.c: grow an array counted against the cache's bound;
 * the node (pos, parent) (0 on a cache error); expand (pos, parent) into
 * pc->tops[*n...]; intern pc->tops[0, n) as a state (sorted first). */
bool nextok__pcache_grow(struct nextok__pcache *pc, void **p, size_t *cap, size_t need, size_t sz);
uint32_t nextok__pcache_cons(struct nextok__pcache *pc, uint32_t pos, uint32_t parent);
bool nextok__pcache_expand(struct nextok__pcache *pc, uint32_t pos, uint32_t parent, size_t *n);
int32_t nextok__pcache_intern_tops(struct nextok__pcache *pc, size_t n);

/* A zeroed block counted against max_cache_bytes (NULL: pc->failed set). */
void *nextok__pcache_alloc(struct nextok__pcache *pc, size_t size);

/* matcher.c: one generation's path, as the state after each accept call. */
struct nextok_matcher {
    const struct nextok_compiled_grammar *cg;
    struct nextok__pcache *pc;
    int32_t *hist; /* hist[0]: the start state; one entry per accept call */
    size_t n_hist, cap_hist;
};

/* masks.c: compute s's mask into pc->st[s] (false: pc->failed says why). */
bool nextok__compute_mask(struct nextok__pcache *pc, int32_t s);
/* loop.c: s's text tokens into w by the loop path: 1 done, 0 s is no
 * looping state, -1 on a cache error. Exits are noted in pc->ex. */
int nextok__loop_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w);
/* loop.c: whether s refuses few of a spread of common bytes (1), so that it
 * may loop; 0 when it refuses most, -1 on a cache error. */
int nextok__live_sample(struct nextok__pcache *pc, int32_t s);

/* ---- small helpers of the mask code (masks.c, loop.c, matcher.c) ---------- */

/* Bits set in x, without a libgcc call where the target lacks popcnt. */
static inline uint32_t nextok__pop32(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

static inline void nextok__set_bit(uint32_t *w, int32_t id)
{
    w[(uint32_t)id >> 5] |= 1u << ((uint32_t)id & 31);
}

/* The state after bytes from s: DEAD when refused, UNKNOWN on a cache error. */
static inline int32_t nextok__walk_bytes(struct nextok__pcache *pc, int32_t s,
                                         const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n && s >= 0; i++) s = nextok__pcache_next(pc, s, b[i]);
    return s;
}

/* chains.c */
nextok_status nextok__find_chains(struct nextok_compiled_grammar *cg);
/* Element p (in a chain rule) at the same place in the chain's rule of rank. */
uint32_t nextok__chain_pos(const struct nextok_compiled_grammar *cg, uint32_t p, uint32_t rank);

/* compiled.c */
bool nextok__cset_has(const struct nextok_compiled_grammar *cg, uint32_t k, uint32_t cp);
bool nextok__cset_any(const struct nextok_compiled_grammar *cg, uint32_t k, uint32_t lo,
                      uint32_t hi);

#endif /* NEXTOK_MATCHER_INTERNAL_H */
