#!/usr/bin/env bash
# The Python bindings' overhead over the C calls, side by side in one run
# (docs/performance.md, "Python bindings"). Builds the Release library, the
# extension against it and bench_c, then runs bench.py with /usr/bin/python3.
# usage: bench/python/bench.sh [BUILD_DIR]   (default build-rel)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build-rel}
cd "$root"
log=$(mktemp)
make -s python BUILD="$build" CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Release" >"$log" 2>&1 || {
    cat "$log" >&2; exit 1; }
rm -f "$log"
cc -O2 -std=c11 -Iinclude bench/python/bench_c.c "$build/libnextok.a" -lpthread -lm \
    $(pkg-config --libs libpcre2-8 libutf8proc 2>/dev/null) -o "$build/bench_python_c"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(/usr/bin/python3 --version)"
PYTHONPATH="$build/python" /usr/bin/python3 bench/python/bench.py "$build/bench_python_c"
