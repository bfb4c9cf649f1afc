/*
 * The stop strings' matcher: one Aho–Corasick automaton over all of them,
 * encoded as a dense DFA over byte classes (only the bytes that occur in a
 * stop string get a class of their own), so a scan is one table lookup per
 * byte (nextok__ac_scan in stop_internal.h).
 */
#include "stop_internal.h"

#define AC_NONE UINT32_MAX

void nextok__ac_free(const struct nextok__mem *mem, struct nextok__ac *ac)
{
    nextok__free(mem, ac->next);
    nextok__free(mem, ac->depth);
    nextok__free(mem, ac->match);
    nextok__free(mem, ac->match_len);
    memset(ac, 0, sizeof *ac);
}

/* Byte classes: each byte that occurs in a stop string gets its own class,
 * all others share class 0. The class count is rounded up to a power of two
 * so that a row offset turns back into a state with a shift. */
static void ac_classes(struct nextok__ac *ac, const char *const *strs, const size_t *lens, size_t n)
{
    uint32_t n_cls = 1;
    memset(ac->cls, 0, sizeof ac->cls);
    for (size_t i = 0; i < n && n_cls <= 255; i++)
        for (size_t j = 0; j < lens[i] && n_cls <= 255; j++) {
            unsigned char b = (unsigned char)strs[i][j];
            if (!ac->cls[b]) ac->cls[b] = (uint8_t)n_cls++;
        }
    if (n_cls > 255) /* (almost) every byte occurs: one class per byte */
        for (int b = 0; b < 256; b++) ac->cls[b] = (uint8_t)b;
    ac->shift = 0;
    while ((1u << ac->shift) < n_cls) ac->shift++;
    ac->n_cls = 1u << ac->shift;
}

/* Trie with state indices in next[] (AC_NONE: no edge). Returns the state count. */
static uint32_t ac_trie(struct nextok__ac *ac, const char *const *strs, const size_t *lens,
                        size_t n)
{
    uint32_t n_states = 1;
    ac->depth[0] = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = 0;
        for (size_t j = 0; j < lens[i]; j++) {
            uint32_t *e = &ac->next[(size_t)u * ac->n_cls + ac->cls[(unsigned char)strs[i][j]]];
            if (*e == AC_NONE) {
                ac->depth[n_states] = ac->depth[u] + 1;
                *e = n_states++;
            }
            u = *e;
        }
        if (ac->match[u] < 0) { /* duplicates: the first index names the match */
            ac->match[u] = (int32_t)i;
            ac->match_len[u] = (uint32_t)lens[i];
        }
    }
    return n_states;
}

/* Breadth-first: failure links, missing edges filled from the failure state
 * (making a full DFA), and each state's longest stop-string suffix. */
static void ac_links(struct nextok__ac *ac, uint32_t *fail, uint32_t *queue)
{
    const uint32_t nc = ac->n_cls;
    size_t head = 0, tail = 0;
    fail[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t c = 0; c < nc; c++) {
            uint32_t *e = &ac->next[(size_t)u * nc + c];
            uint32_t via_fail = u == 0 ? 0 : ac->next[(size_t)fail[u] * nc + c];
            if (*e == AC_NONE) {
                *e = via_fail;
                continue;
            }
            uint32_t v = *e;
            fail[v] = via_fail;
            if (ac->match[v] < 0) {
                ac->match[v] = ac->match[fail[v]];
                ac->match_len[v] = ac->match_len[fail[v]];
            }
            queue[tail++] = v;
        }
    }
}

/* State indices -> row offsets, with the "ends a stop string" bit. */
static void ac_encode(struct nextok__ac *ac)
{
    const size_t cells = (size_t)ac->n_states * ac->n_cls;
    for (size_t i = 0; i < cells; i++) {
        uint32_t v = ac->next[i];
        ac->next[i] = ((v << ac->shift) << 1) | (ac->match[v] >= 0 ? 1u : 0u);
    }
}

nextok_status nextok__ac_build(const struct nextok__mem *mem, struct nextok__ac *ac,
                               const char *const *strs, const size_t *lens, size_t n,
                               struct nextok_error *err)
{
    memset(ac, 0, sizeof *ac);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += lens[i];
    ac_classes(ac, strs, lens, n);
    size_t max_states = total + 1;
    ac->next = nextok__alloc_array(mem, max_states * ac->n_cls, sizeof *ac->next);
    ac->depth = nextok__alloc_array(mem, max_states, sizeof *ac->depth);
    ac->match = nextok__alloc_array(mem, max_states, sizeof *ac->match);
    ac->match_len = nextok__calloc(mem, max_states, sizeof *ac->match_len);
    uint32_t *fail = nextok__alloc_array(mem, max_states, sizeof *fail);
    uint32_t *queue = nextok__alloc_array(mem, max_states, sizeof *queue);
    if (!ac->next || !ac->depth || !ac->match || !ac->match_len || !fail || !queue) {
        nextok__free(mem, fail);
        nextok__free(mem, queue);
        nextok__ac_free(mem, ac);
        return nextok__err(err, NEXTOK_ERR_NOMEM,
                           "out of memory building the stop-string automaton");
    }
    memset(ac->next, 0xff, max_states * ac->n_cls * sizeof *ac->next);
    for (size_t i = 0; i < max_states; i++) ac->match[i] = -1;
    ac->n_states = ac_trie(ac, strs, lens, n);
    ac_links(ac, fail, queue);
    ac_encode(ac);
    nextok__free(mem, fail);
    nextok__free(mem, queue);
    return NEXTOK_OK;
}
