#!/usr/bin/env bash
# Tests the llama.cpp adapter (adapters/llama.cpp) against real llama.cpp.
#
# usage: tests/llama/run.sh [NEXTOK_BUILD_DIR]
#   NEXTOK_BUILD_DIR  a CMake build of nextok (default build; relative to the
#                     repository root): its libnextok.a is brought up to date
#                     first (the folder is configured, RelWithDebInfo, if it
#                     is not a build yet). A build made with
#                     -DNEXTOK_SANITIZE=ON (build-asan) compiles the adapter,
#                     the test and the example with ASan+UBSan too.
#
# 1. bench/llama_cpp/build.sh builds libllama (CPU, Release, static) from the
#    llama.cpp source in the npm package node-llama-cpp@3.21.1, under
#    $LLAMA_DIR (default build/llama.cpp); cached: a second run rebuilds
#    nothing.
# 2. The interface check: nextok_llama.c must refuse to compile against a
#    llama.h it does not know (a fake one with the 2024-2025 six-member
#    llama_sampler_i, one with a thirteenth member, one with no
#    LLAMA_DEFAULT_SEED), each with its message.
# 3. Compiles nextok_llama.c as C11 (-Werror) and as C++, the header from
#    C++, then tests/llama/test_llama_adapter.c and examples/llama_chain.c
#    against llama.cpp's llama.h, libllama and the ggml libraries, and
#    libnextok.a from NEXTOK_BUILD_DIR; runs both.
# Exits non-zero on any failure; nothing is skipped.
#
# Environment: CC (default cc), CXX (default c++), LLAMA_DIR, JOBS (parallel
# compile jobs for nextok and build.sh, default 2). Outputs: NEXTOK_BUILD_DIR/
# llama-adapter/ (the test, the example and its output).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
abspath() { case $1 in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }

nb=$(abspath "${1:-build}")
llama=$(abspath "${LLAMA_DIR:-build/llama.cpp}")
CC=${CC:-cc}
CXX=${CXX:-c++}

# libnextok.a, brought up to date (configured first, as `make` does, if the
# folder is not a build yet)
if [ ! -f "$nb/CMakeCache.txt" ]; then
    echo "== configuring nextok in $nb"
    cmake -S "$root" -B "$nb" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
echo "== nextok: cmake --build $nb --target nextok_static"
cmake --build "$nb" --target nextok_static -j "${JOBS:-2}" >/dev/null
[ -f "$nb/libnextok.a" ] || { echo "run.sh: $nb/libnextok.a not built" >&2; exit 1; }

need=("$CC" "$CXX" cmake pkg-config)
# the first build of llama.cpp fetches it with npm and clones it with git
[ -f "$llama/build/src/libllama.a" ] || need+=(npm git)
for t in "${need[@]}"; do
    command -v "$t" >/dev/null || {
        echo "run.sh: '$t' not found (Debian/Ubuntu: apt-get install gcc g++ cmake pkg-config npm git)" >&2
        exit 1; }
done

echo "== llama.cpp (bench/llama_cpp/build.sh $llama)"
bash "$root/bench/llama_cpp/build.sh" "$llama"

out=$nb/llama-adapter
mkdir -p "$out"

inc=(-I"$root/include" -I"$root/adapters/llama.cpp" -I"$llama/src/include" -I"$llama/src/ggml/include")
warn=(-Wall -Wextra -Wpedantic -Wshadow -Werror)
san=()
env_run=()
if grep -q '^NEXTOK_SANITIZE:BOOL=ON' "$nb/CMakeCache.txt" 2>/dev/null; then
    # shellcheck disable=SC2054 # one flag, its comma included
    san=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    env_run=(env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
    echo "== $nb is a sanitizer build: ASan+UBSan for the adapter, the test and the example"
fi

# What libnextok.a needs (its pkg-config file: Requires.private, Libs.private).
nextok_libs=("$nb/libnextok.a")
req=$(sed -n 's/^Requires.private:[[:space:]]*//p' "$nb/nextok.pc" 2>/dev/null || true)
if [ -n "$req" ]; then
    # shellcheck disable=SC2086 # a list of module names
    read -r -a more <<<"$(pkg-config --libs $req)"
    nextok_libs+=("${more[@]}")
fi
nextok_libs+=(-lpthread -lm)

# What libllama.a needs: the ggml libraries, the C++ runtime, OpenMP when on.
llama_libs=("$llama/build/src/libllama.a" "$llama/build/ggml/src/libggml.a"
            "$llama/build/ggml/src/libggml-cpu.a" "$llama/build/ggml/src/libggml-base.a")
for l in "${llama_libs[@]}"; do
    [ -f "$l" ] || { echo "run.sh: missing $l" >&2; exit 1; }
done
if grep -q '^GGML_OPENMP:BOOL=ON' "$llama/build/CMakeCache.txt" &&
   grep -q '^OpenMP_C_FLAGS:STRING=.' "$llama/build/CMakeCache.txt"; then
    llama_libs+=(-fopenmp)
fi
llama_libs+=(-lstdc++ -ldl -lm -lpthread)

# ---- 2. the interface check ------------------------------------------------
echo "== interface check: unknown llama.h versions are refused"
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
# fake_header NAME SEED_MACRO MEMBERS: a minimal llama.h
fake_header() {
    local dir=$fake/$1
    mkdir -p "$dir"
    {
        echo '#ifndef LLAMA_H'
        echo '#define LLAMA_H'
        echo '#include <stdbool.h>'
        echo '#include <stddef.h>'
        echo '#include <stdint.h>'
        [ "$2" = seed ] && echo '#define LLAMA_DEFAULT_SEED 0xFFFFFFFF'
        echo '#define LLAMA_TOKEN_NULL -1'
        echo 'typedef int32_t llama_token;'
        echo 'typedef struct llama_token_data { llama_token id; float logit; float p; } llama_token_data;'
        echo 'typedef struct llama_token_data_array { llama_token_data * data; size_t size; int64_t selected; bool sorted; } llama_token_data_array;'
        echo 'typedef void * llama_sampler_context_t;'
        echo 'struct llama_sampler;'
        echo 'struct llama_sampler_i {'
        echo '    const char * (*name)(const struct llama_sampler * smpl);'
        echo '    void (*accept)(struct llama_sampler * smpl, llama_token token);'
        echo '    void (*apply)(struct llama_sampler * smpl, llama_token_data_array * cur_p);'
        echo '    void (*reset)(struct llama_sampler * smpl);'
        echo '    struct llama_sampler * (*clone)(const struct llama_sampler * smpl);'
        echo '    void (*free)(struct llama_sampler * smpl);'
        echo "$3"
        echo '};'
        echo 'struct llama_sampler { struct llama_sampler_i * iface; llama_sampler_context_t ctx; };'
        echo 'struct llama_sampler * llama_sampler_init(struct llama_sampler_i * iface, llama_sampler_context_t ctx);'
        echo 'struct llama_sampler * llama_sampler_chain_get(struct llama_sampler * chain, int32_t i);'
        echo 'int llama_sampler_chain_n(const struct llama_sampler * chain);'
        echo 'void llama_sampler_accept(struct llama_sampler * smpl, llama_token token);'
        echo 'struct llama_context; struct llama_model; struct llama_vocab;'
        echo 'llama_token llama_sampler_sample(struct llama_sampler * smpl, struct llama_context * ctx, int32_t idx);'
        echo 'float * llama_get_logits_ith(struct llama_context * ctx, int32_t i);'
        echo 'llama_token llama_get_sampled_token_ith(struct llama_context * ctx, int32_t i);'
        echo 'float * llama_get_sampled_probs_ith(struct llama_context * ctx, int32_t i);'
        echo 'float * llama_get_sampled_logits_ith(struct llama_context * ctx, int32_t i);'
        echo 'const struct llama_model * llama_get_model(const struct llama_context * ctx);'
        echo 'const struct llama_vocab * llama_model_get_vocab(const struct llama_model * model);'
        echo 'int32_t llama_vocab_n_tokens(const struct llama_vocab * vocab);'
        echo '#endif'
    } >"$dir/llama.h"
}
backend='    void (*backend_init)(void); void (*backend_accept)(void); void (*backend_apply)(void);
    void (*backend_set_input)(void); void (*backend_reset)(void);
    void (*copy_state)(const struct llama_sampler * src, struct llama_sampler * dst);'
fake_header six seed ''
fake_header thirteen seed "$backend
    void (*something_new)(struct llama_sampler * smpl);"
fake_header noseed noseed "$backend"
fake_header twelve seed "$backend" # the known interface: must compile
expect_refusal() { # NAME MESSAGE
    local log=$fake/$1.log
    if "$CC" -std=c11 -fsyntax-only -I"$fake/$1" -I"$root/include" -I"$root/adapters/llama.cpp" \
        "$root/adapters/llama.cpp/nextok_llama.c" >"$log" 2>&1; then
        echo "FAIL: nextok_llama.c compiled against the fake llama.h '$1'" >&2; exit 1
    fi
    grep -q "$2" "$log" || {
        echo "FAIL: the '$1' refusal does not say '$2':" >&2; head -20 "$log" >&2; exit 1; }
    echo "ok   refused llama.h '$1': $(grep -m1 -o "error: .*$2[^\"]*" "$log" | cut -c1-110)..."
}
expect_refusal six 'unknown llama.h'
expect_refusal thirteen 'unknown llama.h'
expect_refusal noseed 'predates the llama_sampler API'
"$CC" -std=c11 -fsyntax-only "${warn[@]}" -I"$fake/twelve" -I"$root/include" \
    -I"$root/adapters/llama.cpp" "$root/adapters/llama.cpp/nextok_llama.c" ||
    { echo "FAIL: nextok_llama.c does not compile against the known interface (fake)" >&2; exit 1; }
echo "ok   compiles against the known twelve-member interface"

# ---- 3. build and run -----------------------------------------------------
echo "== compiling the adapter (C11 and C++), the test and the example"
"$CC" -std=c11 -O2 -g "${warn[@]}" -Wmissing-prototypes "${san[@]}" "${inc[@]}" \
    -c "$root/adapters/llama.cpp/nextok_llama.c" -o "$out/nextok_llama.o"
"$CXX" -std=c++17 -x c++ -fsyntax-only -Wall -Wextra -Werror "${inc[@]}" \
    "$root/adapters/llama.cpp/nextok_llama.c"
printf '#include "nextok_llama.h"\nint main() { return (int)nextok_llama_sampler_default_params().mode; }\n' |
    "$CXX" -std=c++11 -x c++ -fsyntax-only -Wall -Wextra -Werror "${inc[@]}" -
"$CC" -std=c11 -O2 -g "${warn[@]}" -Wno-unused-function "${san[@]}" "${inc[@]}" -I"$root/tests" \
    -I"$here" -DNEXTOK_FIXTURE_DIR="\"$root/tests/data\"" \
    "$root/tests/llama/test_llama_adapter.c" "$out/nextok_llama.o" -o "$out/test_llama_adapter" \
    "${nextok_libs[@]}" "${llama_libs[@]}"
"$CC" -std=c11 -O2 -g "${warn[@]}" "${san[@]}" "${inc[@]}" \
    "$root/examples/llama_chain.c" "$out/nextok_llama.o" -o "$out/llama_chain" \
    "${nextok_libs[@]}" "${llama_libs[@]}"

echo "== $out/test_llama_adapter"
"${env_run[@]}" "$out/test_llama_adapter"

echo "== $out/llama_chain"
"${env_run[@]}" "$out/llama_chain" 42 12 | tee "$out/llama_chain.out"
[ "$(grep -c '^step ' "$out/llama_chain.out")" = 12 ] || {
    echo "FAIL: llama_chain did not print 12 steps" >&2; exit 1; }
echo "== llama adapter: all passed"
