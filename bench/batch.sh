#!/bin/bash
# Every chain of bench/table.sh batched: B = 256 rows of V = 128256, 2 threads, f32
# and f16, peaked and flat rows; three timed processes per row (--no-plain), in the
# format of table.sh, so that bench/table.py turns it into a table.
B=${NEXTOK:-./build-rel/nextok}
PEN="--repeat-penalty 1.1 --frequency-penalty 0.1 --presence-penalty 0.1"
TK="--top-k 40 --top-p 0.95 --min-p 0.05 --temp 0.8"
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for DT in f32 f16; do for D in peaked flat; do
  for C in "$TK" "$TK $PEN" "--temp 1" "--temp 0.8" "--top-p 0.9" "--min-p 0.05 --temp 0.8" "--typical 0.95" "--top-nsigma 1" "--mirostat 2"; do
    r="--dist $D --n-vocab 128256 --dtype $DT --batch 256 --threads 2 $C"
    it=""; case "$r" in *typical*|*top-p\ 0.9*) it="--warmup 3";; esac
    for k in 1 2 3; do echo "RUN|$r|$($B bench $r $it --seed 1 --json --no-plain)"; done
  done
done; done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
