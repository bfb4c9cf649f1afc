#!/usr/bin/env bash
# Side-by-side A/B of two nextok CLI binaries on the `nextok bench` rows of
# the kernel rework (issue 14): for every row, the two binaries run
# alternately (A B A B ...) N times each, one process per run, and the table
# gives the median ns_per_row of each and the ratio B / A (> 1: B slower),
# then the same for the fastest process of each. Alternating processes
# spread a shared machine's load over both sides; on a noisy machine rerun
# the rows that look slower (-r) with more runs (-n). Some rows are bimodal
# by process (the same binary runs at one of two speeds some 8 % apart, by
# where its buffers land), so a median of few runs can move by that much;
# the fastest processes compare like with like there.
#
# usage: bench/ab.sh [-n RUNS] [-r REGEX] A_BIN B_BIN
#   -n RUNS   processes per binary and row (default 5)
#   -r REGEX  only the rows whose label matches (grep -E)
#   -l        list the rows and exit
# example: bench/ab.sh /work/baseline/nextok build-rel/nextok   (a binary from
#          before the --n-vocab spelling gets --vocab)
#          bench/ab.sh -n 11 -r 'top-p.*f16' /work/baseline/nextok build-rel/nextok
set -euo pipefail

runs=5
filter=''
list=0
while getopts 'n:r:l' opt; do
    case $opt in
    n) runs=$OPTARG ;;
    r) filter=$OPTARG ;;
    l) list=1 ;;
    *) sed -n '2,15p' "$0" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

# label | environment (or -) | bench flags
rows() {
    local dist v f
    local -a filters=(
        'temp 1|--temp 1'
        'temp 0.8|--temp 0.8'
        'top-p 0.9|--top-p 0.9'
        'typical 0.95|--typical 0.95 --iters 200 --warmup 3'
        'min-p 0.05 T0.8|--min-p 0.05 --temp 0.8'
        'top-nsigma 1|--top-nsigma 1'
        'mirostat 2|--mirostat 2'
        'k40 p.95 min-p T0.8|--top-k 40 --top-p 0.95 --min-p 0.05 --temp 0.8'
    )
    for dist in peaked flat; do
        for v in 128256 256000; do
            for f in "${filters[@]}"; do
                echo "$dist V$v ${f%%|*}|-|--dist $dist --n-vocab $v ${f#*|}"
            done
        done
    done
    for f in 'temp 1|--temp 1' 'top-p 0.9|--top-p 0.9' 'min-p 0.05 T0.8|--min-p 0.05 --temp 0.8' \
             'top-nsigma 1|--top-nsigma 1' 'typical 0.95|--typical 0.95 --iters 200 --warmup 3' \
             'k40 p.95 min-p T0.8|--top-k 40 --top-p 0.95 --min-p 0.05 --temp 0.8'; do
        echo "flat V128256 f16 ${f%%|*}|-|--dist flat --n-vocab 128256 --dtype f16 ${f#*|}"
    done
    echo "peaked V128256 f16 k40 p.95 min-p T0.8|-|--dist peaked --n-vocab 128256 --dtype f16 --top-k 40 --top-p 0.95 --min-p 0.05 --temp 0.8"
    for f in 'temp 0.8|--temp 0.8' 'top-p 0.9|--top-p 0.9' 'typical 0.95|--typical 0.95 --iters 200 --warmup 3' \
             'min-p 0.05 T0.8|--min-p 0.05 --temp 0.8' 'top-nsigma 1|--top-nsigma 1' \
             'k40 p.95 min-p T0.8|--top-k 40 --top-p 0.95 --min-p 0.05 --temp 0.8'; do
        echo "AVX2 flat V128256 ${f%%|*}|NEXTOK_FORCE_AVX2=1|--dist flat --n-vocab 128256 ${f#*|}"
    done
    echo "AVX2 peaked V128256 k40 p.95 min-p T0.8|NEXTOK_FORCE_AVX2=1|--dist peaked --n-vocab 128256 --top-k 40 --top-p 0.95 --min-p 0.05 --temp 0.8"
    echo "AVX2 flat V128256 f16 top-p 0.9|NEXTOK_FORCE_AVX2=1|--dist flat --n-vocab 128256 --dtype f16 --top-p 0.9"
    echo "AVX2 flat V128256 f16 min-p 0.05 T0.8|NEXTOK_FORCE_AVX2=1|--dist flat --n-vocab 128256 --dtype f16 --min-p 0.05 --temp 0.8"
}

if [ "$list" = 1 ]; then rows | cut -d'|' -f1; exit 0; fi
[ $# -eq 2 ] || { sed -n '2,15p' "$0" >&2; exit 2; }
a=$1
b=$2

# ns_per_row of one run (a binary from before --n-vocab gets --vocab)
one() {
    local bin=$1 envs=$2 flags=$3 out
    if ! "$bin" bench --help | grep -q -- --n-vocab; then flags=${flags//--n-vocab/--vocab}; fi
    # shellcheck disable=SC2086
    if [ "$envs" = - ]; then out=$("$bin" bench $flags --seed 1 --json --no-plain)
    else out=$(env $envs "$bin" bench $flags --seed 1 --json --no-plain); fi
    sed -n 's/.*"ns_per_row":\([0-9.]*\).*/\1/p' <<<"$out"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-44s %9s %9s %6s %9s %9s %6s\n' row "A med" "B med" "B/A" "A min" "B min" "B/A"
rows | while IFS='|' read -r label envs flags; do
    if [ -n "$filter" ] && ! grep -Eq -- "$filter" <<<"$label"; then continue; fi
    ta=() tb=()
    for ((i = 0; i < runs; i++)); do
        ta+=("$(one "$a" "$envs" "$flags")")
        tb+=("$(one "$b" "$envs" "$flags")")
    done
    ma=$(printf '%s\n' "${ta[@]}" | median)
    mb=$(printf '%s\n' "${tb[@]}" | median)
    la=$(printf '%s\n' "${ta[@]}" | sort -g | head -1)
    lb=$(printf '%s\n' "${tb[@]}" | sort -g | head -1)
    printf '%-44s %9.0f %9.0f %6.3f %9.0f %9.0f %6.3f\n' "$label" "$ma" "$mb" \
        "$(awk -v a="$ma" -v b="$mb" 'BEGIN { print b / a }')" "$la" "$lb" \
        "$(awk -v a="$la" -v b="$lb" 'BEGIN { print b / a }')"
done
