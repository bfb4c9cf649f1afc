/* Fuzz target: arbitrary bytes as tokenizer.json; after a first NUL byte comes
 * tokenizer_config.json, after a second generation_config.json. A file that
 * loads must answer every query and decode the same whole and streamed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"
#include "fuzz_vocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *part[3] = {(const char *)data, NULL, NULL};
    size_t len[3] = {size, 0, 0};
    for (int k = 1; k < 3; k++) {
        const char *nul = memchr(part[k - 1], 0, len[k - 1]);
        if (!nul) break;
        part[k] = nul + 1;
        len[k] = len[k - 1] - (size_t)(nul + 1 - part[k - 1]);
        len[k - 1] = (size_t)(nul - part[k - 1]);
    }
    struct nextok_hf_json_mem m = {part[0] ? part[0] : "", len[0], part[1], len[1], part[2], len[2]};
    struct nextok_vocab *v = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status rc = nextok_vocab_load_hf_json_mem(&v, &m, &err);
    if (rc != NEXTOK_OK) {
        if (v || err.msg[0] == '\0') abort(); /* failures carry a message */
        return 0;
    }
    fuzz_reached("loaded");
    fuzz_exercise_vocab(v);
    nextok_vocab_free(v);
    return 0;
}
