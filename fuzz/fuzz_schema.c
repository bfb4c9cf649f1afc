/* Fuzz target: arbitrary bytes as a JSON Schema. The first byte picks the
 * parameters (bit 0 compact whitespace, bit 1 strict, bit 2 lenient, bits
 * 3-6 max_ws, bit 7 properties in any order), the rest is the schema. A schema that compiles is asked
 * whether its grammar accepts a few JSON texts (bounded); one that does not
 * compile is refused with a status and a message. Neither may crash, hang or
 * leak, and lenient mode's reports come only with a grammar. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "nextok.h"
#include "fuzz_reach.h"

static void on_ignored(void *user, const char *pointer, const char *keyword)
{
    if (!pointer || !keyword || !keyword[0]) abort();
    (*(int *)user)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 16384) return 0;
    struct nextok_json_schema_params sp = nextok_json_schema_default_params();
    sp.whitespace = data[0] & 1 ? NEXTOK_JSON_WS_COMPACT : NEXTOK_JSON_WS_FLEXIBLE;
    sp.strict = (data[0] & 2) != 0;
    sp.lenient = (data[0] & 4) != 0;
    sp.max_ws = (data[0] >> 3) & 15;
    sp.order = data[0] & 0x80 ? NEXTOK_JSON_ORDER_ANY : NEXTOK_JSON_ORDER_SCHEMA;
    int reports = 0;
    sp.on_ignored = on_ignored;
    sp.user = &reports;
    struct nextok_grammar *g = NULL;
    struct nextok_error err = {NEXTOK_OK, ""};
    nextok_status rc =
        nextok_grammar_init_json_schema(&g, (const char *)data + 1, size - 1, &sp, NULL, &err);
    if (rc != NEXTOK_OK) {
        if (g || err.msg[0] == '\0' || err.status != rc || reports) abort();
        if (rc != NEXTOK_ERR_FORMAT && rc != NEXTOK_ERR_UNSUPPORTED && rc != NEXTOK_ERR_LIMIT)
            abort(); /* NOMEM cannot happen here; anything else is a defect */
        fuzz_reached("refused");
        return 0;
    }
    fuzz_reached("compiled");
    if (reports) fuzz_reached("lenient");
    static const char *const texts[] = {"null",
                                        "true",
                                        "0",
                                        "-1.5e3",
                                        "\"\"",
                                        "\"abc\"",
                                        "[]",
                                        "[1,\"a\",null]",
                                        "{}",
                                        "{\"a\":1}",
                                        "{\"a\":\"x\",\"b\":[{}]}",
                                        "{ \"a\" : [ 1 , 2 ] }",
                                        "\"2024-02-29\""};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        bool yes = false;
        rc = nextok_grammar_accepts(g, texts[i], strlen(texts[i]), &yes, &err);
        if (rc != NEXTOK_OK && rc != NEXTOK_ERR_INVALID_ARG) abort(); /* work limit only */
        if (yes) fuzz_reached("accepted");
    }
    nextok_grammar_free(g);
    return 0;
}
