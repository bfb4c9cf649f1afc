#!/usr/bin/env bash
# Grammar-constrained decoding, per-mask time: llama.cpp's grammar sampler
# (llama_sampler_init_grammar + llama_sampler_apply over the full vocabulary)
# against `nextok grammar mask`, on the same GGUF vocabulary, the same GBNF
# grammar and the SAME token ids, one thread each, in one run.
#
# For each vocabulary: grammar_bench --print-ids gives the ids of TEXT
# (llama_tokenize, no BOS/EOS; see grammar_bench.cpp for the SPM space
# prefix); grammar_bench then walks them ROUNDS times in one process (a fresh
# sampler per walk) and `nextok grammar mask --tokens IDS --json` runs ROUNDS
# times (one process, so one fresh matcher, per walk). Each walk computes the
# full mask before every id, checks the id is allowed and accepts it. The
# per-mask times of all walks are pooled per tool: p50, p90, p99 (nearest
# rank), max and mean in microseconds, and the ratio llama.cpp / nextok
# (> 1: nextok faster). grammar_bench --counts and nextok's n_allowed give
# the number of allowed ids after each mask; the table says at how many steps
# the two agree.
#
# usage: bench/llama_cpp/grammar_compare.sh [options]
#   -r ROUNDS   walks per tool and vocabulary (default 3)
#   -g GRAMMAR  GBNF file (default /work/shared/data/grammars/json.gbnf)
#   -t TEXT     text file (default bench/llama_cpp/grammar_sample.json)
#   -v VOCAB    a GGUF vocabulary; repeat for several (default gpt-2, phi-3
#               from tests/data/vocab/gguf)
#   -d DIR      llama.cpp build folder made by build.sh (default build/llama.cpp)
#   -x NEXTOK   nextok binary (default build/nextok)
#   -p CPU      pin both tools to this CPU (taskset -c CPU)
#   -o FILE     append the raw JSON lines (llama.cpp's, and one summary line
#               per vocabulary for nextok) to FILE
# Paths are relative to the repository root. Run build.sh and
# build_grammar_bench.sh first (this script runs build_grammar_bench.sh when
# DIR/bin/grammar_bench is missing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

rounds=3
grammar=/work/shared/data/grammars/json.gbnf
text=bench/llama_cpp/grammar_sample.json
vocabs=()
dir=build/llama.cpp
nextok=build/nextok
cpu=''
raw=''
while getopts 'r:g:t:v:d:x:p:o:' opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    g) grammar=$OPTARG ;;
    t) text=$OPTARG ;;
    v) vocabs+=("$OPTARG") ;;
    d) dir=$OPTARG ;;
    x) nextok=$OPTARG ;;
    p) cpu=$OPTARG ;;
    o) raw=$OPTARG ;;
    *) sed -n '2,33p' "$0" >&2; exit 2 ;;
    esac
done
[ ${#vocabs[@]} -gt 0 ] || vocabs=(tests/data/vocab/gguf/ggml-vocab-gpt-2.gguf
                                   tests/data/vocab/gguf/ggml-vocab-phi-3.gguf)
py=/usr/bin/python3
[ -x $py ] || py=python3

bench=$dir/bin/grammar_bench
[ -x "$bench" ] || "$here/build_grammar_bench.sh" "$dir"
[ -x "$nextok" ] || { echo "no $nextok: cmake --build build --target nextok" >&2; exit 1; }
for f in "$grammar" "$text" "${vocabs[@]}"; do
    [ -f "$f" ] || { echo "missing $f" >&2; exit 1; }
done

pin=()
if [ -n "$cpu" ]; then
    command -v taskset >/dev/null || { echo "no taskset for -p" >&2; exit 1; }
    pin=(taskset -c "$cpu")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

commit=$(cat "$dir/commit" 2>/dev/null || echo unknown)
echo "llama.cpp $commit (node-llama-cpp 3.21.1); nextok $nextok"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "grammar $grammar, text $text ($(wc -c <"$text") bytes), $rounds walks per tool${cpu:+, pinned to CPU $cpu}"
echo

i=0
for v in "${vocabs[@]}"; do
    i=$((i + 1))
    ids=$("${pin[@]}" "$bench" --print-ids "$v" "$grammar" "$text")
    printf '%s\n' "$ids" >"$tmp/$i.ids"
    "${pin[@]}" "$bench" --counts "$v" "$grammar" "$text" >"$tmp/$i.counts" || true
    "${pin[@]}" "$bench" "$v" "$grammar" "$text" "$rounds" >"$tmp/$i.llama" || true
    for ((r = 0; r < rounds; r++)); do
        "${pin[@]}" "$nextok" grammar mask --vocab "$v" --gbnf "$grammar" --tokens "$ids" --json \
            >"$tmp/$i.nextok.$r" || true
    done
    printf '%s\n' "$v" >"$tmp/$i.vocab"
done

$py - "$tmp" "$i" "$rounds" "$raw" <<'PY'
import json, math, os, sys

tmp, n, rounds, raw = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def pct(s, p):  # nearest rank, s sorted
    if not s:
        return float('nan')
    k = max(1, min(len(s), math.ceil(p / 100 * len(s))))
    return s[k - 1]

def stats(xs):
    s = sorted(xs)
    return {'masks': len(s), 'p50_us': pct(s, 50), 'p90_us': pct(s, 90), 'p99_us': pct(s, 99),
            'max_us': s[-1] if s else float('nan'), 'mean_us': sum(s) / len(s) if s else float('nan')}

def short(path):
    b = os.path.basename(path)
    b = b.rsplit('.', 1)[0]
    return b[len('ggml-vocab-'):] if b.startswith('ggml-vocab-') else b

rows = []
out = open(raw, 'a') if raw else None
for i in range(1, n + 1):
    vocab = open(f'{tmp}/{i}.vocab').read().strip()
    ids = [int(x) for x in open(f'{tmp}/{i}.ids').read().split(',') if x.strip()]
    try:
        la = json.loads(open(f'{tmp}/{i}.llama').read().strip().splitlines()[-1])
    except Exception as e:
        print(f'{vocab}: no llama.cpp result ({e})', file=sys.stderr)
        la = {}
    counts = [int(x) for x in open(f'{tmp}/{i}.counts').read().split(',') if x.strip()]
    times, allowed_all, compile_us, nx_allowed = [], True, [], None
    for r in range(rounds):
        try:
            d = json.load(open(f'{tmp}/{i}.nextok.{r}'))
        except Exception as e:
            print(f'{vocab}: nextok run {r} gave no JSON ({e})', file=sys.stderr)
            allowed_all = False
            continue
        steps = d['steps']
        times += [s['mask_us'] for s in steps]
        compile_us.append(d.get('compile_us', float('nan')))
        if len(steps) != len(ids) or not all(s['allowed'] for s in steps):
            allowed_all = False
        if nx_allowed is None:
            nx_allowed = [s['n_allowed'] for s in steps]
    nx = stats(times)
    nx.update({'impl': 'nextok', 'vocab': vocab, 'allowed_all': allowed_all,
               'compile_us_median': sorted(compile_us)[len(compile_us) // 2] if compile_us else None})
    same = sum(a == b for a, b in zip(counts, nx_allowed or []))
    diffs = sorted({b - a for a, b in zip(nx_allowed or [], counts) if a != b})
    if out:
        if la:
            out.write(json.dumps(la) + '\n')
        out.write(json.dumps(nx) + '\n')
    rows.append((short(vocab), la.get('V', '?'), len(ids), la, nx, same, len(counts), diffs))
    print(f"{short(vocab)}: llama.cpp {json.dumps(la)}")
    print(f"{short(vocab)}: nextok    {json.dumps(nx)}")

def f(x):
    return '-' if x is None or (isinstance(x, float) and math.isnan(x)) else f'{x:.2f}'

def ratio(a, b):
    try:
        return f'{a / b:.0f}' if a / b >= 100 else f'{a / b:.1f}'
    except Exception:
        return '-'

print()
print('Per-mask time in microseconds (pooled over all walks); ratio = llama.cpp / nextok.')
print()
print('| vocab | V | ids | masks llama.cpp / nextok | p50 llama.cpp | p50 nextok | p50 ratio '
      '| p99 llama.cpp | p99 nextok | p99 ratio | mean llama.cpp | mean nextok | mean ratio '
      '| max llama.cpp | max nextok | all allowed | n_allowed same |')
print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|')
for sv, V, nids, la, nx, same, nc, diffs in rows:
    ok = f"{'yes' if la.get('allowed_all') else 'NO'} / {'yes' if nx['allowed_all'] else 'NO'}"
    extra = f" (llama.cpp allows {', '.join('+%d' % d for d in diffs)})" if diffs else ''
    print(f"| {sv} | {V} | {nids} | {la.get('masks', '-')} / {nx['masks']} "
          f"| {f(la.get('p50_us'))} | {f(nx['p50_us'])} | {ratio(la.get('p50_us', 0), nx['p50_us'])} "
          f"| {f(la.get('p99_us'))} | {f(nx['p99_us'])} | {ratio(la.get('p99_us', 0), nx['p99_us'])} "
          f"| {f(la.get('mean_us'))} | {f(nx['mean_us'])} | {ratio(la.get('mean_us', 0), nx['mean_us'])} "
          f"| {f(la.get('max_us'))} | {f(nx['max_us'])} | {ok} | {same}/{nc}{extra} |")
PY
