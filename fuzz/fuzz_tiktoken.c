/* Fuzz target: arbitrary bytes as a tiktoken ranks file; the first byte picks
 * the special tokens. A file that loads must answer every query and decode
 * the same whole and streamed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"
#include "fuzz_vocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct nextok_special_token sp[3] = {
        {"<|endoftext|>", 300}, {"<|x|>", 2}, {"\xe2\x96\x81", 301},
    };
    size_t n_sp = size ? data[0] % 4 : 0;
    struct nextok_vocab *v = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status rc = nextok_vocab_load_tiktoken_mem(&v, size ? data + 1 : data,
                                                      size ? size - 1 : 0, sp, n_sp, &err);
    if (rc != NEXTOK_OK) {
        if (v || err.msg[0] == '\0') abort(); /* failures carry a message */
        return 0;
    }
    fuzz_reached("loaded");
    fuzz_exercise_vocab(v);
    nextok_vocab_free(v);
    return 0;
}
