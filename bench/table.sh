#!/bin/bash
# One consistent run of docs/performance.md's rows: 3 timed runs (--no-plain) + 1 run for
# the plain chain; each single-row chain once more over 8 distinct rows (--rows 8: rows the
# branch predictors have not learnt, as in real decoding); the token-bitmask rows, each
# next to the same chain without a mask (alternating, 3 runs each); the orders a profile
# produces, each next to the order it is compared with. bench/table.py makes the tables.
B=${NEXTOK:-./build-rel/nextok}
PEN="--repeat-penalty 1.1 --frequency-penalty 0.1 --presence-penalty 0.1"
TK="--top-k 40 --top-p 0.95 --min-p 0.05 --temp 0.8"
rows=()
for V in 128256 256000; do for D in peaked flat; do
  rows+=("--dist $D --n-vocab $V $TK" "--dist $D --n-vocab $V $TK $PEN")
done; done
for V in 128256 256000; do for D in peaked flat; do
  for C in "--temp 1" "--temp 0.8" "--top-p 0.9" "--min-p 0.05 --temp 0.8" "--typical 0.95" "--top-nsigma 1" "--mirostat 2"; do
    rows+=("--dist $D --n-vocab $V $C")
  done
done; done
rows+=("--n-vocab 128256 --dtype f32 --batch 256 --threads 2 $TK $PEN" "--n-vocab 128256 --dtype f16 --batch 256 --threads 2 $TK $PEN")
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in "${rows[@]}"; do
  it=""; case "$r" in *typical*) it="--iters 200 --warmup 3";; esac
  for k in 1 2 3; do echo "RUN|$r|$($B bench $r $it --seed 1 --json --no-plain)"; done
  pi=2; case "$r" in *batch*|*typical*) pi=1;; esac
  echo "PLAIN|$r|$($B bench $r $it --seed 1 --json --plain-iters $pi)"
done
for r in "${rows[@]}"; do
  case "$r" in *batch*) continue;; esac
  it=""; case "$r" in *typical*) it="--iters 200 --warmup 3";; esac
  echo "ROWS8|$r|$($B bench $r --rows 8 $it --seed 1 --json --no-plain)"
done
for V in 128256 256000; do for C in "$TK" "--temp 1"; do for F in 0.5 0.01; do
  r="--dist peaked --n-vocab $V $C"
  for k in 1 2 3; do
    echo "MASK0|$r|$F|$($B bench $r --seed 1 --json --no-plain --iters 1000)"
    echo "MASK|$r|$F|$($B bench $r --allowed-fraction $F --seed 1 --json --no-plain --iters 1000)"
  done
done; done; done
# orders: the llama.cpp order (a temperature after the filter) next to the vllm order
for D in flat peaked; do for pair in "min_p;temperature|temperature;min_p|--min-p 0.05 --temp 0.8" \
    "top_p;temperature|temperature;top_p|--top-p 0.9 --temp 0.8" \
    "top_p;min_p;temperature|temperature;top_p;min_p|--top-p 0.9 --min-p 0.05 --temp 0.8"; do
  IFS='|' read -r a b f <<<"$pair"
  for k in 1 2 3; do
    echo "ORDER|--dist $D --n-vocab 128256 $f|$a|$($B bench --dist $D --n-vocab 128256 $f --samplers "$a" --seed 1 --json --no-plain)"
    echo "ORDER|--dist $D --n-vocab 128256 $f|$b|$($B bench --dist $D --n-vocab 128256 $f --samplers "$b" --seed 1 --json --no-plain)"
  done
done; done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
