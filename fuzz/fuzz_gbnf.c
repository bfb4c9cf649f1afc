/* Fuzz target: arbitrary bytes as GBNF. A grammar that compiles is asked
 * whether it accepts a few texts (bounded); one that does not compile says
 * why. Neither may crash, hang or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status rc = nextok_grammar_init_gbnf(&g, (const char *)data, size, NULL, &err);
    if (rc != NEXTOK_OK) {
        if (g || err.msg[0] == '\0') abort(); /* failures carry a message */
        fuzz_reached("refused");
        return 0;
    }
    fuzz_reached("compiled");
    static const char *const texts[] = {
        "", "a", "{}", "{\"a\": 1}", "abcabc", "1+2=3\n", "\xc3\xa9\xe2\x82\xac"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        bool yes = false;
        rc = nextok_grammar_accepts(g, texts[i], strlen(texts[i]), &yes, &err);
        if (rc != NEXTOK_OK && rc != NEXTOK_ERR_INVALID_ARG) abort(); /* work limit only */
        if (yes) fuzz_reached("accepted");
    }
    nextok_grammar_free(g);
    return 0;
}
