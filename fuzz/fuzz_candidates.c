/* Fuzz target: arbitrary bytes as a candidate array through prepare + a chain. */
#include <stdint.h>
#include <string.h>
#include "nextok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct nextok_token_data buf[256];
    size_t n = size / sizeof(float);
    if (n > 256) n = 256;
    for (size_t i = 0; i < n; i++) {
        float f;
        memcpy(&f, data + 4 * i, 4);
        buf[i] = (struct nextok_token_data){(int32_t)i, f, 0.0f};
    }
    struct nextok_token_data_array cur = {buf, n, -1, false};
    (void)nextok_candidates_prepare(&cur, (n & 1) ? NEXTOK_NAN_AS_NEG_INF : NEXTOK_NAN_ERROR);
    return 0;
}
