/*
 * AVX2 + FMA + F16C kernels (compiled with -mavx2 -mfma -mf16c; called only
 * after cpuid said so): the bodies of kernels_body.h over simd_avx2.h's
 * mapping (8 lanes). Only the candidate records are AVX2's own.
 */
#include "simd_avx2.h"

/* Candidate records one per set bit: without compress instructions, an
 * interleave of packed ids and values would cost more than the few records
 * a vector holds. */
AI size_t cands_emit(const int32_t *ids, vf v, vm m, struct nextok_token_data *out, size_t k)
{
    float vb[8];
    _mm256_storeu_ps(vb, v);
    for (unsigned b = vm_bits(m); b; b &= b - 1) {
        const unsigned j = (unsigned)__builtin_ctz(b);
        out[k++] = (struct nextok_token_data){ids[j], vb[j], 0.0f};
    }
    return k;
}

#define CMP_U 2         /* compact_ge's sparse loop: 16 elements a branch */

#include "kernels_body.h"

static const struct nextok__kernels avx2_table = {
    .name = "avx2",
    .max = simd_max,
    .block_max = simd_block_max,
    .compact_ge = simd_compact_ge,
    .compact_blocks = simd_compact_blocks,
    .cands_ge = simd_cands_ge,
    .widen = simd_widen,
    .expw = simd_expw,
    .probs = simd_probs,
};

const struct nextok__kernels *nextok__kernels_avx2(void) { return &avx2_table; }
const struct nextok__fused_kernels *nextok__fused_kernels_avx2(void) { return &simd_fused_table; }
