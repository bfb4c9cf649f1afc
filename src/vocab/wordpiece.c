/*
 * The WordPiece model (BERT's, as HF tokenizers runs it): greedy longest
 * match from the left, continuation pieces spelled with the prefix ("##";
 * GGUF spells first pieces with "▁" and continuations bare instead).
 * A word longer than max_input_chars_per_word characters, or one with a part
 * no piece matches, is a single unknown token.
 */
#include "vocab_internal.h"

#include "../common/utf8.h"

/* The longest piece at w[start, n) (prefixed after the word's start): its
 * id and end, or -1. Shrinks a character at a time, as HF does. */
static int32_t longest(const struct nextok_vocab *v, struct nextok__buf *tmp, const char *w,
                       size_t start, size_t n, size_t *end)
{
    const struct nextok__enc *e = &v->enc;
    size_t pre = start > 0 ? e->wp_prefix_len : e->wp_start_len;
    tmp->len = 0;
    if (nextok__buf_reserve(tmp, pre + n - start) != NEXTOK_OK) return -2;
    memcpy(tmp->data, start > 0 ? e->wp_prefix : e->wp_start, pre);
    memcpy(tmp->data + pre, w + start, n - start);
    for (size_t stop = n; stop > start;) {
        int32_t id = nextok__vocab_lookup(v, tmp->data, pre + stop - start);
        if (id >= 0) {
            *end = stop;
            return id;
        }
        do stop--; /* back to the start of the last character */
        while (stop > start && ((unsigned char)w[stop] & 0xC0) == 0x80);
    }
    return -1;
}

nextok_status nextok__wordpiece_word(const struct nextok_vocab *v, struct nextok__bpe_scratch *s,
                                     const char *w, size_t n, struct nextok__ids *out)
{
    const struct nextok__enc *e = &v->enc;
    if (n == 0) return NEXTOK_OK;
    if (e->unk < 0) return NEXTOK_ERR_UNSUPPORTED;
    size_t chars = 0;
    for (size_t i = 0; i < n; i++) chars += ((unsigned char)w[i] & 0xC0) != 0x80;
    size_t first = out->n;
    if (chars <= (size_t)e->wp_max_chars) {
        for (size_t start = 0, end = 0; start < n; start = end) {
            int32_t id = longest(v, &s->mapped, w, start, n, &end);
            if (id == -2) return NEXTOK_ERR_NOMEM;
            if (id < 0) goto unknown;
            nextok__ids_push(out, id);
        }
        return NEXTOK_OK;
    }
unknown: /* the whole word, whatever was pushed for it */
    out->n = first;
    nextok__ids_push(out, e->unk);
    return NEXTOK_OK;
}
