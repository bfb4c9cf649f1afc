/*
 * Kernel dispatch: the table is chosen once (pthread_once) from cpuid and the
 * environment, then only read. AVX-512 needs F, BW, VL and DQ; the kernels
 * compiled for it are used only when all four are present (GCC's
 * __builtin_cpu_supports also checks that the OS saves the wide registers).
 * NEXTOK_FORCE_REF=1 selects the scalar reference and NEXTOK_FORCE_AVX2=1 the
 * AVX2 table on an AVX-512 machine (for testing and triage).
 * On other ISAs the reference is used; a NEON table would be chosen here.
 */
#include "kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static const struct nextok__kernels *g_table;

#if defined(__x86_64__) || defined(__i386__)
static bool has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static bool has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && has_avx2();
}
#else
static bool has_avx2(void) { return false; }
static bool has_avx512(void) { return false; }
#endif

static bool env_on(const char *name)
{
    const char *e = getenv(name);
    return e && e[0] && strcmp(e, "0") != 0;
}

static void pick(void)
{
    const struct nextok__kernels *t = nextok__kernels_ref();
#if defined(__x86_64__) || defined(__i386__)
    if (!env_on("NEXTOK_FORCE_REF")) {
        if (has_avx512() && !env_on("NEXTOK_FORCE_AVX2")) t = nextok__kernels_avx512();
        else if (has_avx2()) t = nextok__kernels_avx2();
    }
#else
    (void)force_ref;
#endif
    g_table = t;
}

const struct nextok__kernels *nextok__kernels(void)
{
    pthread_once(&g_once, pick);
    return g_table;
}

bool nextok_cpu_has_avx2(void) { return has_avx2(); }
bool nextok_cpu_has_avx512(void) { return has_avx512(); }
