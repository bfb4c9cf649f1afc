#!/usr/bin/env bash
# Builds the llama.cpp peer for bench/llama_cpp/compare.sh, from scratch, from
# the llama.cpp source that the npm package node-llama-cpp@3.21.1 bundles
# (package/llama/gitRelease.bundle): npm pack, extract, git clone the bundle,
# configure with CMake (Release, CPU backend, static, no tools, tests,
# examples, server or common library), build only the `llama` library target
# (and the ggml libraries it links), then compile tokenize_bench.cpp against
# it. No llama.cpp code is copied into this repository.
#
# usage: bench/llama_cpp/build.sh [DIR]
#   DIR  where everything goes (default build/llama.cpp, relative to the
#        repository root; a relative DIR is taken from the repository root)
# Idempotent: a second run reuses the tarball, the clone, the CMake cache and
# the objects, and only recompiles what changed.
# Environment: JOBS (default 2) parallel compile jobs.
#
# Layout of DIR afterwards:
#   node-llama-cpp-3.21.1.tgz   the npm tarball
#   package/                    its contents
#   src/                        git clone of package/llama/gitRelease.bundle
#   build/                      CMake build of src (build/src/libllama.a ...)
#   bin/tokenize_bench          the encoding benchmark driver
#   bin/grammar_bench           the grammar-mask benchmark driver
#   commit                      the llama.cpp commit (full hash)
set -euo pipefail

NLC_VERSION=3.21.1
JOBS=${JOBS:-2}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:-build/llama.cpp}
case $dir in /*) ;; *) dir=$root/$dir ;; esac
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$dir"

start=$(date +%s)
tgz=node-llama-cpp-$NLC_VERSION.tgz

# 1. the npm tarball
if [ ! -s "$tgz" ]; then
    echo "== npm pack node-llama-cpp@$NLC_VERSION"
    npm pack "node-llama-cpp@$NLC_VERSION" --pack-destination "$dir" --loglevel=warn >/dev/null
    [ -s "$tgz" ] || { echo "npm pack did not produce $tgz" >&2; exit 1; }
else
    echo "== reusing $dir/$tgz"
fi

# 2. extract it
if [ ! -s package/llama/gitRelease.bundle ]; then
    echo "== extracting $tgz"
    rm -rf package
    tar -xzf "$tgz"
fi
[ -s package/llama/gitRelease.bundle ] || {
    echo "package/llama/gitRelease.bundle missing from $tgz" >&2; exit 1; }

# 3. clone the bundle
if ! git -C src rev-parse --verify -q HEAD >/dev/null 2>&1; then
    echo "== git clone package/llama/gitRelease.bundle src"
    rm -rf src
    git -c advice.detachedHead=false clone -q package/llama/gitRelease.bundle src
fi
commit=$(git -C src rev-parse HEAD)
echo "$commit" >commit
tag=$(sed -n 's/.*"tag"[^"]*"\([^"]*\)".*/\1/p' package/llama/llama.cpp.info.json 2>/dev/null || true)

# 4. configure (once; cmake re-runs itself when its inputs change)
if [ ! -f build/CMakeCache.txt ]; then
    echo "== configuring"
    cmake -S src -B build \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_COMMON=OFF \
        -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_TOOLS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=OFF \
        -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DGGML_CCACHE=OFF \
        >build.configure.log 2>&1 || { tail -40 build.configure.log >&2; exit 1; }
fi

# 5. build only libllama (and the ggml libraries it depends on)
echo "== building target llama (-j$JOBS)"
cmake --build build --target llama -j "$JOBS" >build.log 2>&1 || {
    tail -40 build.log >&2; exit 1; }

# 6. the benchmark driver, linked statically against what was just built
libs=(build/src/libllama.a build/ggml/src/libggml.a build/ggml/src/libggml-cpu.a
      build/ggml/src/libggml-base.a)
for l in "${libs[@]}"; do
    [ -f "$l" ] || { echo "missing $dir/$l" >&2; exit 1; }
done
extra=()
# ggml-base/ggml-cpu use OpenMP when GGML_OPENMP is on (the default) and found
if grep -q '^GGML_OPENMP:BOOL=ON' build/CMakeCache.txt &&
   grep -q '^OpenMP_C_FLAGS:STRING=.' build/CMakeCache.txt; then
    extra+=(-fopenmp)
fi
mkdir -p bin
# the drivers: tokenize_bench (encoding, compare.sh) and grammar_bench (grammar
# masks, grammar_compare.sh); each recompiled when it or a library is newer
for driver in tokenize_bench grammar_bench; do
    src=$here/$driver.cpp
    need=0
    [ -x "bin/$driver" ] || need=1
    for f in "$src" "${libs[@]}"; do
        [ "$f" -nt "bin/$driver" ] && need=1
    done
    [ $need = 1 ] || continue
    echo "== compiling bin/$driver"
    "${CXX:-c++}" -std=c++17 -O2 -Wall -Wextra \
        -DLLAMA_BENCH_COMMIT="\"$commit\"" -DLLAMA_BENCH_TAG="\"$tag\"" \
        -Isrc/include -Isrc/ggml/include \
        "$src" -o "bin/$driver.tmp" \
        "${libs[@]}" "${extra[@]}" -lpthread -ldl -lm
    mv "bin/$driver.tmp" "bin/$driver"
done

echo "== done in $(( $(date +%s) - start )) s"
echo "node-llama-cpp: $NLC_VERSION (llama.cpp release tag in the package: ${tag:-?})"
echo "llama.cpp commit: $commit"
echo "drivers: $dir/bin/tokenize_bench $dir/bin/grammar_bench"
