#!/usr/bin/env bash
# Tokenization speed, llama.cpp's llama_tokenize against `nextok encode`, on
# the same text and the same GGUF vocabulary file, one thread each.
#
# For every (vocabulary, corpus) pair: first (unless -C) checks that both
# tools give the same ids (check_ids.py), then runs llama.cpp's
# tokenize_bench and `nextok encode --bench` alternately, ROUNDS times each
# (llama, nextok, llama, nextok, ...; one process per run, each timing RUNS
# tokenizations of the whole file as one string, no BOS/EOS (nextok gets
# --no-bos --no-eos), special tokens as plain text, and reporting its
# median), and prints a table: the median over the rounds of each tool's MB/s
# (MB = 10^6 bytes of text) and the ratio nextok / llama.cpp (> 1: nextok
# faster).
#
# usage: bench/llama_cpp/compare.sh [options]
#   -r ROUNDS  processes per tool and pair (default 3)
#   -n RUNS    timed tokenizations per process (default 7)
#   -d DIR     llama.cpp build folder made by build.sh (default build/llama.cpp)
#   -x NEXTOK  nextok binary (default build/nextok)
#   -f REGEX   only the pairs whose "vocab corpus" label matches (grep -E)
#   -p CPU     pin both tools to this CPU (taskset -c CPU)
#   -o FILE    append every raw JSON line to FILE
#   -L         llama.cpp only (also automatic when NEXTOK lacks encode --bench)
#   -C         skip the id check
# Paths are relative to the repository root. Run build.sh first.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

rounds=3
runs=7
dir=build/llama.cpp
nextok=build/nextok
filter=''
cpu=''
raw=''
llama_only=0
check=1
while getopts 'r:n:d:x:f:p:o:LC' opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    n) runs=$OPTARG ;;
    d) dir=$OPTARG ;;
    x) nextok=$OPTARG ;;
    f) filter=$OPTARG ;;
    p) cpu=$OPTARG ;;
    o) raw=$OPTARG ;;
    L) llama_only=1 ;;
    C) check=0 ;;
    *) sed -n '2,24p' "$0" >&2; exit 2 ;;
    esac
done

bench=$dir/bin/tokenize_bench
[ -x "$bench" ] || { echo "no $bench: run bench/llama_cpp/build.sh first" >&2; exit 1; }
commit=$(cat "$dir/commit" 2>/dev/null || echo unknown)

if [ $llama_only = 0 ]; then
    if [ ! -x "$nextok" ]; then
        echo "note: no $nextok; llama.cpp only" >&2
        llama_only=1
    elif ! "$nextok" encode --help 2>&1 | grep -q -- '--bench'; then
        echo "note: $nextok encode has no --bench; llama.cpp only" >&2
        llama_only=1
    fi
fi
[ $llama_only = 1 ] && check=0

pin=()
if [ -n "$cpu" ]; then
    command -v taskset >/dev/null || { echo "no taskset for -p" >&2; exit 1; }
    pin=(taskset -c "$cpu")
fi

vocabs=(tests/data/vocab/gguf/ggml-vocab-gpt-2.gguf
        tests/data/vocab/gguf/ggml-vocab-phi-3.gguf
        "$dir/src/models/ggml-vocab-llama-bpe.gguf")
corpora=(tests/data/corpus/austen-all.txt
         tests/data/corpus/spa-rv1909-nt.txt
         tests/data/corpus/proverbaro.txt
         tests/data/corpus/emoji-test.txt)

field() {  # field NAME JSONLINE
    sed -n "s/.*\"$1\": *\\([-0-9.eE+]*\\).*/\\1/p" <<<"$2"
}
median() {  # median of the arguments
    printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {
        if (NR == 0) print "-"; else if (NR % 2) print v[(NR+1)/2];
        else printf "%.3f\n", (v[NR/2] + v[NR/2+1]) / 2 }'
}
short() {  # ggml-vocab-gpt-2.gguf -> gpt-2 ; austen-all.txt -> austen-all
    local b=${1##*/}; b=${b%.*}; echo "${b#ggml-vocab-}"
}
one() {  # one TOOL VOCAB TEXT -> prints the JSON line
    local out
    if [ "$1" = llama ]; then
        out=$("${pin[@]}" "$bench" "$2" "$3" "$runs")
    else
        out=$("${pin[@]}" "$nextok" encode --vocab "$2" --text-file "$3" --no-bos --no-eos --bench --runs "$runs")
    fi
    out=$(grep -m1 '^{' <<<"$out")
    [ -n "$raw" ] && printf '%s\n' "$out" >>"$raw"
    printf '%s\n' "$out"
}

echo "llama.cpp $commit (node-llama-cpp 3.21.1), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "$rounds rounds x $runs runs per tool and pair${cpu:+, pinned to CPU $cpu}; MB/s = 10^6 bytes of text / median s"
echo
fmt='%-10s %-14s %8s %9s %12s %12s %8s  %s\n'
# shellcheck disable=SC2059  # $fmt is a fixed format
printf "$fmt" vocab corpus MB ids 'llama MB/s' 'nextok MB/s' ratio 'ids check'
fail=0
for v in "${vocabs[@]}"; do
    [ -f "$v" ] || { echo "missing $v" >&2; exit 1; }
    for t in "${corpora[@]}"; do
        [ -f "$t" ] || { echo "missing $t" >&2; exit 1; }
        sv=$(short "$v") st=$(short "$t")
        label="$sv $st"
        if [ -n "$filter" ] && ! grep -Eq -- "$filter" <<<"$label"; then continue; fi
        verdict='-'
        if [ $check = 1 ]; then
            if c=$(python3 "$here/check_ids.py" "$bench" "$nextok" "$v" "$t"); then
                verdict=same
            else
                verdict=DIFF
                fail=1
                printf '%s\n' "$label: $c" >&2
            fi
        fi
        la=() nx=() nids='' bytes=''
        for ((r = 0; r < rounds; r++)); do
            j=$(one llama "$v" "$t")
            la+=("$(field mb_per_s "$j")")
            nids=$(field ids "$j"); bytes=$(field bytes "$j")
            if [ $llama_only = 0 ]; then
                j=$(one nextok "$v" "$t")
                nx+=("$(field mb_per_s "$j")")
                n2=$(field ids "$j")
                if [ "$n2" != "$nids" ] && [[ $verdict != *--bench* ]]; then
                    verdict="$verdict; nextok --bench: $n2 ids"
                fi
            fi
        done
        ml=$(median "${la[@]}")
        if [ $llama_only = 0 ]; then
            mn=$(median "${nx[@]}")
            ratio=$(awk -v a="$mn" -v b="$ml" 'BEGIN { printf "%.2f", a / b }')
        else
            mn='-' ratio='-'
        fi
        mb=$(awk -v b="$bytes" 'BEGIN { printf "%.3f", b / 1e6 }')
        # shellcheck disable=SC2059
        printf "$fmt" "$sv" "$st" "$mb" "$nids" "$ml" "$mn" "$ratio" "$verdict"
    done
done
exit $fail
