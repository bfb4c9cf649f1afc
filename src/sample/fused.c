/* Fused fast path: placeholder until the fused engine lands (never handles a row). */
#include "chain_internal.h"

nextok_status nextok__fused_run(struct nextok_chain *c, const void *logits, enum nextok_dtype dtype,
                                bool *handled)
{
    (void)c;
    (void)logits;
    (void)dtype;
    *handled = false;
    return NEXTOK_OK;
}

void nextok__fused_free(struct nextok__fused *f) { (void)f; }
