/*
 * The loop path of mask making: a state most bytes lead back to (the inside
 * of a string), or one repetition further inside counted repetition, or
 * into such a state (the first character of "S+"), takes every token made
 * only of such bytes at once, by bitmask algebra over the token table's
 * per-byte token sets, and walks only the tokens holding another byte,
 * from after their leading looping characters.
 */
#include "matcher_internal.h"

#include "../common/utf8.h"

/* Whether every top of s holds all non-ASCII code points or none (so one
 * such character stands for them all). */
static bool high_uniform(struct nextok__pcache *pc, int32_t s)
{
    const struct nextok_compiled_grammar *cg = pc->cg;
    for (uint32_t k = 0; k < pc->st[s].n; k++) {
        uint32_t top = pc->pool[pc->st[s].off + k];
        if (top <= NEXTOK__EXIT) continue; /* complete, or the frame's end: no character */
        int32_t c = cg->el_cset[pc->node[2 * top]];
        if (c < 0) continue;
        const struct nextok__cset *x = cg->cset + c;
        uint32_t n = x->r1 - x->r0;
        const uint32_t *r = cg->ranges + 2 * x->r0;
        bool all = n == 2 && r[0] == 0x80 && r[1] == 0xD7FF && r[2] == 0xE000 && r[3] == 0x10FFFF;
        if (n && !all) return false;
    }
    return true;
}

/* A looping state: the bytes that lead back to it (or, inside counted
 * repetition, to it one repetition further: `counted`), and the states
 * after j repetitions, made as needed in pc->walk[0, n_same]. */
struct loop {
    int32_t s;
    const bool *loops;
    bool high, counted;
    uint32_t n_same;   /* counted: pc->walk[0, n_same] are the states j
                        * repetitions on, which any j looping characters
                        * lead to                                        */
    bool same_end;     /* counted: the level after n_same is not uniform */
    unsigned rep;      /* counted: a byte one repetition on */
    int32_t entry;     /* the looping state the first character leads to, or -1 */
    const bool *first; /* entry: the first bytes that lead there */
    bool first_high;   /* entry: and non-ASCII first characters */
};

/* How many of a spread of common printable bytes s does not refuse (-1 on
 * a cache error): a quick "no" before looking at every byte. A state
 * looping on most bytes is let through by at least half of them unless
 * its bytes avoid these on purpose; then it takes the exact trie walk. */
int nextok__live_sample(struct nextok__pcache *pc, int32_t s)
{
    static const char sample[] = "etaoinsr dlu0159.-_/,A";
    int n = 0;
    for (const char *c = sample; *c; c++) {
        int32_t t = nextok__pcache_next(pc, s, (unsigned char)*c);
        if (t == NEXTOK__ST_UNKNOWN) return -1;
        n += t >= 0;
    }
    return n >= (int)(sizeof sample - 1) / 2 ? 1 : 0;
}

/* Whether every non-ASCII character leads from s back to s (unless
 * only_next) or to next:
 * U+0100 (C4 80) stands for them all when each top holds all or none of
 * them. 1 yes, 0 no, -1 on a cache error. */
static int high_loops(struct nextok__pcache *pc, int32_t s, int32_t next, bool only_next)
{
    if (!high_uniform(pc, s)) return 0;
    int32_t t = nextok__pcache_next(pc, s, 0xC4);
    if (t >= 0) t = nextok__pcache_next(pc, t, 0x80);
    if (t == NEXTOK__ST_UNKNOWN) return -1;
    return (t == s && !only_next) || (t == next && t >= 0);
}

/* The bytes m loops on, into loops; *high whether non-ASCII characters do.
 * 1 when most do, 0 when not (no loop path), -1 on a cache error. */
static int loop_set(struct nextok__pcache *pc, int32_t m, bool *loops, bool *high)
{
    int n = 0;
    for (unsigned b = 0; b < 128; b++) {
        int32_t t = nextok__pcache_next(pc, m, b);
        if (t == NEXTOK__ST_UNKNOWN) return -1;
        n += loops[b] = t == m;
    }
    int h = high_loops(pc, m, NEXTOK__ST_DEAD, false);
    if (h < 0) return -1;
    *high = h;
    return n >= 64;
}

/* w: the text tokens holding an ASCII byte not in loops, or a non-ASCII
 * one (only invalid UTF-8 when `high`: every character loops). */
static void walk_set(const struct nextok_token_table *tt, const bool *loops, bool high, uint32_t *w)
{
    size_t nw = tt->n_words;
    memcpy(w, high ? tt->bad_utf8 : tt->has_high, nw * sizeof *w);
    for (unsigned b = 0; b < 128; b++) {
        if (loops[b]) continue;
        const uint32_t *m = tt->has_byte + b * nw;
        for (size_t k = 0; k < nw; k++) w[k] |= m[k];
    }
}

/* Add to w the text tokens whose first byte is not in first (a non-ASCII
 * first byte unless `high`). */
static void walk_first(const struct nextok_token_table *tt, const bool *first, bool high,
                       uint32_t *w)
{
    size_t nw = tt->n_words;
    for (size_t k = 0; k < nw && !high; k++) w[k] |= tt->first_high[k];
    for (unsigned b = 0; b < 128; b++) {
        if (first[b]) continue;
        const uint32_t *m = tt->first_byte + b * nw;
        for (size_t k = 0; k < nw; k++) w[k] |= m[k];
    }
}

/* The state other than s most printable bytes lead to, when at least 32
 * do: inside counted repetition the state one repetition further (at the
 * last required repetition the first optional one, which may also end
 * there); *rep one such byte. DEAD when no state has such a majority. */
static int32_t one_further(struct nextok__pcache *pc, int32_t s, unsigned *rep)
{
    int32_t best = NEXTOK__ST_DEAD;
    unsigned n_best = 0;
    for (unsigned b = 0x20; b < 0x7F; b++)
        if (nextok__pcache_next(pc, s, b) == NEXTOK__ST_UNKNOWN) return NEXTOK__ST_UNKNOWN;
    const int32_t *tr = pc->st[s].trans;
    for (unsigned b = 0x20; b < 0x7F; b++) {
        if (tr[b] < 0 || tr[b] == s || tr[b] == best) continue;
        unsigned n = 0;
        for (unsigned c = b; c < 0x7F; c++) n += tr[c] == tr[b];
        if (n > n_best) best = tr[b], n_best = n, *rep = b;
    }
    return n_best >= 32 ? best : NEXTOK__ST_DEAD;
}

/* Whether every looping byte (and every non-ASCII character, when they
 * loop) leads from `from` to `to`: 1 yes, 0 no, -1 on a cache error. */
static int level_same(struct nextok__pcache *pc, const struct loop *lp, int32_t from, int32_t to)
{
    for (unsigned b = 0; b < 128; b++) {
        if (!lp->loops[b]) continue;
        int32_t t = nextok__pcache_next(pc, from, b);
        if (t == NEXTOK__ST_UNKNOWN) return -1;
        if (t != to) return 0;
    }
    return lp->high ? high_loops(pc, from, to, true) : 1;
}

/* Counted repetition: whether any j looping characters lead to the state
 * j repetitions on (pc->walk[j], made by rep); -1 on a cache error. They
 * do one level on from s by construction. Further on they may not: where
 * what follows the repetition may start, or past its last repetition, a
 * byte that it takes leads elsewhere than rep does. So each level is
 * checked, once, when a token first reaches it. */
static int same_upto(struct nextok__pcache *pc, struct loop *lp, uint32_t j)
{
    while (lp->n_same < j && !lp->same_end) {
        int32_t from = pc->walk[lp->n_same];
        int32_t to = nextok__pcache_next(pc, from, lp->rep);
        if (to == NEXTOK__ST_UNKNOWN) return -1;
        int same = to >= 0 ? level_same(pc, lp, from, to) : 0;
        if (same < 0) return -1;
        if (same)
            pc->walk[++lp->n_same] = to;
        else
            lp->same_end = true;
    }
    return j <= lp->n_same;
}

/* The state after j looping characters (same_upto(j) said yes). */
static int32_t shifted_by(struct nextok__pcache *pc, const struct loop *lp, uint32_t j)
{
    if (lp->entry >= 0) return j ? lp->entry : lp->s;
    return lp->counted ? pc->walk[j] : lp->s;
}

/* Note where token id may leave the frame after its first i bytes, when
 * state t (reached there) may end the frame and bytes follow. */
static bool note_exit(struct nextok__pcache *pc, int32_t t, int32_t id, uint32_t i, uint32_t n)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    return !(i < n && pc->st[t].has_exit) ||
           nextok__pcache_exit(pc, tt->tok_pos[id], tt->tok_pos[id] + 1, i);
}

/* Walk one token from a looping state: its leading looping characters are
 * skipped (j of them lead to the state j repetitions on), the rest walked
 * byte by byte; where it may leave the frame is noted. */
static int32_t walk_candidate(struct nextok__pcache *pc, struct loop *lp, int32_t id)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    const unsigned char *p = (const unsigned char *)tt->tok_bytes + tt->tok_off[id];
    uint32_t n = tt->tok_off[id + 1] - tt->tok_off[id], i = 0, j = 0;
    while (i < n) {
        uint32_t cp, len = 1;
        const bool *set = i == 0 && lp->first ? lp->first : lp->loops;
        bool high = i == 0 && lp->first ? lp->first_high : lp->high;
        if (p[i] < 0x80 ? !set[p[i]]
                        : !high || !(len = (uint32_t)nextok__utf8_decode(p + i, n - i, &cp)))
            break;
        if (lp->counted) {
            int same = same_upto(pc, lp, j + 1);
            if (same <= 0) {
                if (same < 0) return NEXTOK__ST_UNKNOWN;
                break;
            }
        }
        i += len, j++;
        if (!note_exit(pc, shifted_by(pc, lp, j), id, i, n)) return NEXTOK__ST_UNKNOWN;
    }
    int32_t t = shifted_by(pc, lp, j);
    while (i < n && t >= 0) {
        t = nextok__pcache_next(pc, t, p[i++]);
        if (t >= 0 && !note_exit(pc, t, id, i, n)) return NEXTOK__ST_UNKNOWN;
    }
    return t;
}

/* Tokens at least this many start with a byte: dropping them at once by
 * bitmask pays; fewer are walked (refused at their first byte). */
#define GONE_MIN 256

/* pc->gone: text tokens whose first byte s refuses (of the first bytes
 * that start many tokens), which need no walk. false on a cache error. */
static bool refused_first(struct nextok__pcache *pc, int32_t s)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    size_t nw = tt->n_words;
    uint32_t *gone = pc->gone;
    bool high_dead = tt->n_first[128] >= GONE_MIN;
    for (unsigned b = 0x80; b < 0x100 && high_dead; b++) {
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) return false;
        high_dead = t < 0;
    }
    if (high_dead)
        memcpy(gone, tt->first_high, nw * sizeof *gone);
    else
        memset(gone, 0, nw * sizeof *gone);
    for (unsigned b = 0; b < 128; b++) {
        if (tt->n_first[b] < GONE_MIN) continue;
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) return false;
        if (t >= 0) continue;
        const uint32_t *m = tt->first_byte + b * nw;
        for (size_t k = 0; k < nw; k++) gone[k] |= m[k];
    }
    return true;
}

/* Whether state t takes some looping character (1), none (0), -1 on a
 * cache error. */
static int takes_loops(struct nextok__pcache *pc, const struct loop *lp, int32_t t)
{
    for (unsigned b = 0; b < 256; b++) {
        if (b < 0x80 ? !lp->loops[b] : !lp->high || b < 0xC2 || b > 0xF4) continue;
        int32_t u = nextok__pcache_next(pc, t, b);
        if (u == NEXTOK__ST_UNKNOWN) return -1;
        if (u >= 0) return 1;
    }
    return 0;
}

/* Levels checked at once where the repetition is not sure (below). */
#define CHECK_LEVELS 16

/* Counted repetition. Tokens made only of looping characters are allowed
 * as they are (not in w) while they are shorter than `lim`: `rank` when
 * the repetition is sure (the lowest-ranked chain takes them), else one
 * more than the levels checked. Longer tokens may reach the end, so they
 * are added to the walk set w. Except, when every level up to `rank` is
 * checked, none may end the frame and the state after the last takes no
 * looping character: then such tokens of `rank` characters are allowed as
 * they are, longer ones are refused (put in pc->gone), and neither is
 * walked. false on a cache error. */
static bool mark_long(struct nextok__pcache *pc, struct loop *lp, uint32_t rank, bool sure,
                      uint32_t *w)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    uint32_t lim = rank;
    if (!sure) {
        if (same_upto(pc, lp, rank < CHECK_LEVELS ? rank : CHECK_LEVELS) < 0) return false;
        lim = lp->n_same + 1;
    }
    int past = rank <= tt->max_depth && (sure || lim > rank) ? same_upto(pc, lp, rank) : 0;
    /* and no level on the way may end the frame: a longer token could
     * leave it there and go on in the caller */
    for (uint32_t j = 1; past > 0 && j <= rank; j++) past = !pc->st[pc->walk[j]].has_exit;
    if (past > 0) past = !takes_loops(pc, lp, pc->walk[rank]) ? 1 : 0;
    if (past < 0 || pc->failed) return false;
    if (lim > rank) lim = rank;
    for (uint32_t i = 0; i < tt->n_text && tt->cp_len[tt->by_cp[i]] >= lim; i++) {
        int32_t id = tt->by_cp[i];
        bool only_loops = !((w[id >> 5] >> (id & 31)) & 1);
        if (past && only_loops) {
            if (tt->cp_len[id] == rank) continue;
            nextok__set_bit(pc->gone, id);
        }
        nextok__set_bit(w, id);
    }
    return true;
}

/* w: the tokens to walk, in; the allowed ones, out: those not to walk,
 * and those walked to a live state (none of pc->gone). 1, or -1 on a cache
 * error. */
static int walk_marked(struct nextok__pcache *pc, struct loop *lp, uint32_t *w)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    for (size_t k = 0; k < tt->n_words; k++) {
        uint32_t walk = w[k];
        w[k] = tt->text[k] & ~walk;
        for (walk &= ~pc->gone[k]; walk; walk &= walk - 1) {
            int32_t id = (int32_t)(k * 32 + (unsigned)__builtin_ctz(walk));
            int32_t t = walk_candidate(pc, lp, id);
            if (t == NEXTOK__ST_UNKNOWN) return -1;
            if (t >= 0) w[k] |= 1u << (id & 31);
        }
    }
    return 1;
}

/* The loop path, for a state most bytes lead back to (the inside of a
 * string): every text token made only of such bytes is allowed at once
 * (bitmask algebra over the token table's per-byte sets); only the tokens
 * holding another byte are walked. Returns 0 when s is not such a state,
 * 1 when w is filled, -1 on a cache error. */
int nextok__loop_bits(struct nextok__pcache *pc, int32_t s, uint32_t *w)
{
    const struct nextok_token_table *tt = pc->cg->tt;
    bool loops[128];
    int n_loop = 0;
    if (pc->st[s].pneed) return 0;
    int live = nextok__live_sample(pc, s);
    if (live <= 0) return live; /* most bytes are refused: no loop (the trie walk is cheap) */
    /* inside counted repetition a looping byte leads to s one repetition
     * further: fine for tokens shorter than the repetitions left */
    uint32_t rank = nextok__pcache_rank(pc, s);
    unsigned rep = 0;
    int32_t shifted = one_further(pc, s, &rep);
    if (shifted == NEXTOK__ST_UNKNOWN) return -1;
    /* one repetition on, surely, when the majority byte takes the lowest
     * rank down: that chain then takes `rank` more looping characters */
    bool sure = rank && shifted >= 0 && nextok__pcache_rank(pc, shifted) < rank;
    /* else a first character that leads into a looping state (the first
     * character of "S+", of a key that is not one of the declared names),
     * or, where that state does not loop but some outer chain has a rank
     * (a string of at most 50 characters in an array of at most 10), one
     * repetition on as far as checked */
    bool entry = false, high = false, inner[128];
    if (shifted >= 0 && !sure) {
        int r = loop_set(pc, shifted, inner, &high);
        if (r < 0 || (r == 0 && !rank)) return r;
        entry = r > 0;
    }
    for (unsigned b = 0; b < 128; b++) {
        int32_t t = nextok__pcache_next(pc, s, b);
        if (t == NEXTOK__ST_UNKNOWN) return -1;
        /* into the looping state, or one repetition on; a byte back to s
         * (a loop beside the repetition: " *" in "[!-~]{1,8} *") is
         * no repetition */
        n_loop += loops[b] = shifted >= 0 ? t == shifted : t == s;
    }
    if (n_loop < 64) return 0;
    int h = high_loops(pc, s, shifted, shifted >= 0);
    if (h < 0) return -1;
    bool first[128];
    if (entry) { /* the first byte leads in, the others must loop there */
        memcpy(first, loops, sizeof first);
        memcpy(loops, inner, sizeof loops);
        walk_set(tt, loops, high, w);
        walk_first(tt, first, h, w);
    } else {
        high = h;
        walk_set(tt, loops, high, w);
    }
    struct loop lp = {
        s, loops, high, !entry && rank && shifted >= 0, 0, false, rep, entry ? shifted : -1,
        entry ? first : NULL, h};
    pc->walk[0] = s;
    /* tokens made only of looping characters start with a byte s takes:
     * the tokens whose first byte s refuses are among the others */
    if (!refused_first(pc, s) || (lp.counted && !mark_long(pc, &lp, rank, sure, w))) return -1;
    return walk_marked(pc, &lp, w);
}
