#!/usr/bin/env bash
# Compiles bench/llama_cpp/grammar_bench.cpp into DIR/bin/grammar_bench,
# linked statically against the llama.cpp peer that bench/llama_cpp/build.sh
# builds (run build.sh first; this script runs it when DIR/build has no
# libllama.a yet). Same flags as build.sh uses for tokenize_bench.
#
# usage: bench/llama_cpp/build_grammar_bench.sh [DIR]
#   DIR  the build.sh folder (default build/llama.cpp, relative to the
#        repository root)
# Recompiles only when grammar_bench.cpp or the libraries are newer.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:-build/llama.cpp}
case $dir in /*) ;; *) dir=$root/$dir ;; esac

if [ ! -f "$dir/build/src/libllama.a" ]; then
    "$here/build.sh" "$dir"
fi
cd "$dir"

commit=$(cat commit 2>/dev/null || git -C src rev-parse HEAD)
tag=$(sed -n 's/.*"tag"[^"]*"\([^"]*\)".*/\1/p' package/llama/llama.cpp.info.json 2>/dev/null || true)
libs=(build/src/libllama.a build/ggml/src/libggml.a build/ggml/src/libggml-cpu.a
      build/ggml/src/libggml-base.a)
for l in "${libs[@]}"; do
    [ -f "$l" ] || { echo "missing $dir/$l (run bench/llama_cpp/build.sh)" >&2; exit 1; }
done
extra=()
if grep -q '^GGML_OPENMP:BOOL=ON' build/CMakeCache.txt &&
   grep -q '^OpenMP_C_FLAGS:STRING=.' build/CMakeCache.txt; then
    extra+=(-fopenmp)
fi
mkdir -p bin
src=$here/grammar_bench.cpp
need=0
[ -x bin/grammar_bench ] || need=1
for f in "$src" "${libs[@]}"; do
    [ "$f" -nt bin/grammar_bench ] && need=1
done
if [ $need = 1 ]; then
    echo "== compiling bin/grammar_bench"
    "${CXX:-c++}" -std=c++17 -O2 -Wall -Wextra \
        -DLLAMA_BENCH_COMMIT="\"$commit\"" -DLLAMA_BENCH_TAG="\"$tag\"" \
        -Isrc/include -Isrc/ggml/include \
        "$src" -o bin/grammar_bench.tmp \
        "${libs[@]}" "${extra[@]}" -lpthread -ldl -lm
    mv bin/grammar_bench.tmp bin/grammar_bench
else
    echo "== bin/grammar_bench is up to date"
fi
echo "llama.cpp commit: $commit"
echo "driver: $dir/bin/grammar_bench"
