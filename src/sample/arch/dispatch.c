/*
 * Kernel dispatch: one ISA is chosen once (pthread_once) from cpuid and the
 * environment, and both its tables (generic and fused) are then only read.
 * AVX-512 needs F, BW, VL and DQ; the kernels compiled for it are used only
 * when all four are present (GCC's __builtin_cpu_supports also checks that
 * the OS saves the wide registers). NEXTOK_FORCE_REF=1 selects the scalar
 * reference and NEXTOK_FORCE_AVX2=1 the AVX2 tables on an AVX-512 machine
 * (for testing and triage).
 *
 * The x86 tables exist where the build compiled them (NEXTOK_X86_KERNELS:
 * x86-64 with NEXTOK_SIMD=ON); elsewhere their accessors return NULL and the
 * reference is used. A NEON table would be chosen here on aarch64.
 */
#include "kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static const struct nextok__kernels *g_table;
static const struct nextok__fused_kernels *g_fused;

#if defined(__x86_64__) || defined(__i386__)
static bool has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt");
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

#if !defined(NEXTOK_X86_KERNELS)
const struct nextok__kernels *nextok__kernels_avx2(void) { return NULL; }
const struct nextok__kernels *nextok__kernels_avx512(void) { return NULL; }
const struct nextok__fused_kernels *nextok__fused_kernels_avx2(void) { return NULL; }
const struct nextok__fused_kernels *nextok__fused_kernels_avx512(void) { return NULL; }
#endif

static bool env_on(const char *name)
{
    const char *e = getenv(name);
    return e && e[0] && strcmp(e, "0") != 0;
}

static void pick(void)
{
    g_table = nextok__kernels_ref();
    g_fused = nextok__fused_kernels_ref();
    if (env_on("NEXTOK_FORCE_REF")) return;
    if (nextok__kernels_avx512() && has_avx512() && !env_on("NEXTOK_FORCE_AVX2")) {
        g_table = nextok__kernels_avx512();
        g_fused = nextok__fused_kernels_avx512();
    } else if (nextok__kernels_avx2() && has_avx2()) {
        g_table = nextok__kernels_avx2();
        g_fused = nextok__fused_kernels_avx2();
    }
}

const struct nextok__kernels *nextok__kernels(void)
{
    pthread_once(&g_once, pick);
    return g_table;
}

const struct nextok__fused_kernels *nextok__fused_kernels(void)
{
    pthread_once(&g_once, pick);
    return g_fused;
}

bool nextok_cpu_has_avx2(void) { return has_avx2(); }
bool nextok_cpu_has_avx512(void) { return has_avx512(); }
