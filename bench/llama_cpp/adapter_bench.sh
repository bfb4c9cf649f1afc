#!/usr/bin/env bash
# Builds and runs adapter_bench.c: time per token of the nextok llama.cpp
# adapter, of the bare nextok chain and of llama.cpp's own chain on the same
# rows (what each number includes: the comment at the top of adapter_bench.c).
#
# usage: bench/llama_cpp/adapter_bench.sh [V ...]     (default: 32000 128256)
#   (part 1, synthetic rows, at each V; part 2, a small random-weight model
#   through llama_sampler_sample, at V = 50257 and 128256)
#   NEXTOK_BUILD  nextok build with libnextok.a (default build-rel: Release)
#   LLAMA_DIR     where build.sh builds llama.cpp (default build/llama.cpp)
#   ITERS, ROWS   passed to the benchmark (default 2000, 8)
#   CC            the C compiler (default cc)
# Run it alone: nothing else on the machine (no builds, no other benchmark).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
abspath() { case $1 in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }
nb=$(abspath "${NEXTOK_BUILD:-build-rel}")
llama=$(abspath "${LLAMA_DIR:-build/llama.cpp}")
CC=${CC:-cc}

[ -f "$nb/libnextok.a" ] || {
    echo "adapter_bench.sh: $nb/libnextok.a not found (cmake -S . -B $nb -DCMAKE_BUILD_TYPE=Release && cmake --build $nb)" >&2
    exit 1
}
grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$nb/CMakeCache.txt" ||
    echo "adapter_bench.sh: warning: $nb is not a Release build" >&2

bash "$here/build.sh" "$llama" >/dev/null

libs=("$llama/build/src/libllama.a" "$llama/build/ggml/src/libggml.a"
      "$llama/build/ggml/src/libggml-cpu.a" "$llama/build/ggml/src/libggml-base.a")
if grep -q '^GGML_OPENMP:BOOL=ON' "$llama/build/CMakeCache.txt" &&
   grep -q '^OpenMP_C_FLAGS:STRING=.' "$llama/build/CMakeCache.txt"; then
    libs+=(-fopenmp)
fi
req=$(sed -n 's/^Requires.private:[[:space:]]*//p' "$nb/nextok.pc" 2>/dev/null || true)
more=()
# shellcheck disable=SC2086 # a list of module names
[ -z "$req" ] || read -r -a more <<<"$(pkg-config --libs $req)"

mkdir -p "$llama/bin"
bin=$llama/bin/adapter_bench
"$CC" -std=c11 -O2 -Wall -Wextra -Werror -Wno-unused-function \
    -I"$root/include" -I"$root/adapters/llama.cpp" -I"$root/tests/llama" \
    -I"$llama/src/include" -I"$llama/src/ggml/include" \
    "$here/adapter_bench.c" "$root/adapters/llama.cpp/nextok_llama.c" -o "$bin" \
    "$nb/libnextok.a" "${more[@]}" "${libs[@]}" -lstdc++ -ldl -lm -lpthread

echo "llama.cpp commit $(cat "$llama/commit" 2>/dev/null || echo ?); nextok $nb; $(lscpu | sed -n 's/^Model name:[[:space:]]*//p')"
"$bin" "$root/tests/data/vocab/gguf/ggml-vocab-gpt-2.gguf" "$@"
