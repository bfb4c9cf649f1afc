/* Fuzz target: arbitrary bytes as a GGUF file. A file that loads must answer
 * every query and decode the same whole and streamed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"
#include "fuzz_vocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct nextok_vocab *v = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status rc = nextok_vocab_load_gguf_mem(&v, data, size, &err);
    if (rc != NEXTOK_OK) {
        if (v || err.msg[0] == '\0') abort(); /* failures carry a message */
        return 0;
    }
    fuzz_reached("loaded");
    fuzz_exercise_vocab(v);
    nextok_vocab_free(v);
    return 0;
}
