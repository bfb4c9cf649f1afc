/*
 * The incremental detokenizer's state, shared with sessions. The whole state
 * of a struct nextok_detok is this small value (plus its immutable vocabulary
 * and options), so a session undoes a failed step by saving it before the
 * step and restoring it afterwards: no undo log, no second detokenizer.
 */
#ifndef NEXTOK_DETOK_INTERNAL_H
#define NEXTOK_DETOK_INTERNAL_H

#include "../common/internal.h"

#include <stdint.h>

struct nextok__dstate {
    uint8_t  pend[4];    /* partial UTF-8 character        */
    uint8_t  n_pend, need;
    bool     started;    /* first-token rules already used */
    bool     raw;        /* inside an added-token segment  */
    bool     seg_out;    /* this segment wrote something   */
    bool     any_out;    /* some segment wrote something   */
    uint32_t strip_left; /* Strip start: chars still to drop  */
    uint32_t held;       /* Strip stop: content chars held    */
};

void nextok__detok_save(const struct nextok_detok *d, struct nextok__dstate *out);
void nextok__detok_restore(struct nextok_detok *d, const struct nextok__dstate *in);

#endif
