/*
 * Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3",
 * SC'11): a counter-based generator, so a draw is a pure function of its key
 * and counter. Constants are the paper's.
 */
#include "internal.h"

#include <stdio.h>
#include <time.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static inline void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

void nextok_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint32_t hi0, lo0, hi1, lo1;
        mulhilo(PHILOX_M0, c0, &hi0, &lo0);
        mulhilo(PHILOX_M1, c2, &hi1, &lo1);
        uint32_t n0 = hi1 ^ c1 ^ k0;
        uint32_t n2 = hi0 ^ c3 ^ k1;
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

static uint64_t draw53(uint64_t seed, uint64_t step, uint32_t purpose, uint32_t index)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {index, purpose, (uint32_t)step, (uint32_t)(step >> 32)};
    uint32_t out[4];
    nextok_philox4x32_10(ctr, key, out);
    return (((uint64_t)out[0] << 21) ^ (out[1] >> 11)) & ((UINT64_C(1) << 53) - 1);
}

double nextok_rng_uniform(uint64_t seed, uint64_t step, uint32_t purpose, uint32_t index)
{
    return (double)draw53(seed, step, purpose, index) * 0x1p-53;
}

double nextok_rng_uniform_open(uint64_t seed, uint64_t step, uint32_t purpose, uint32_t index)
{
    /* 52 bits so that (k + 0.5) * 2^-52 is exact: the largest value is
     * 1 - 2^-53 < 1 and the smallest 2^-53 > 0 (with 53 bits the top value
     * would round to exactly 1.0). */
    return ((double)(draw53(seed, step, purpose, index) >> 1) + 0.5) * 0x1p-52;
}

uint64_t nextok__seed_from_os(void)
{
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&s, sizeof s, 1, f) != 1) s = 0;
        fclose(f);
    }
    if (s == 0 || s == NEXTOK_DEFAULT_SEED) {
        struct timespec ts;
        timespec_get(&ts, TIME_UTC);
        s = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&s;
    }
    return s == NEXTOK_DEFAULT_SEED ? 1 : s;
}
