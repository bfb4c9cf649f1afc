#!/usr/bin/env bash
# Builds bin/grammar_bench (bench/llama_cpp/grammar_bench.cpp) with the
# llama.cpp peer: build.sh does both drivers, and only what is out of date.
#
# usage: bench/llama_cpp/build_grammar_bench.sh [DIR]   (DIR as for build.sh)
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/build.sh" "$@"
