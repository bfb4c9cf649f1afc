#!/usr/bin/env python3
"""Turn the output of bench/issue3_table.sh (or issue3_batch.sh) into docs/performance.md's
results tables.

Several output files (several runs of the script) are pooled: each row's ratio is the
median over every timed run of it in all files, as are its times. The second table is
the --rows 8 runs (distinct rows) next to the same row's single-row ratio."""
import json, statistics, sys

runs, plain, rows8, order = {}, {}, {}, []
lines = []
for path in sys.argv[1:] or ["/dev/stdin"]:
    lines += open(path).read().splitlines()
for line in lines:
    kind, _, rest = line.partition("|")
    if kind not in ("RUN", "PLAIN", "ROWS8"):
        continue
    row, _, js = rest.rpartition("|")
    d = json.loads(js)
    if kind == "RUN":
        if row not in runs:
            runs[row] = []
            order.append(row)
        runs[row].append(d)
    elif kind == "ROWS8":
        rows8.setdefault(row, []).append(d)
    else:
        plain.setdefault(row, []).append(d)

def target(row):
    if "--batch" in row:  # the target names one batched chain; the others are reported
        if "--top-k 40" in row and "--repeat-penalty" in row:
            return 1.43, "≤ 1.43×"
        return None, "—"
    if "--top-k 40" in row:
        return 2.5, "≤ 2.5×"
    return 4.0, "≤ 4×"

def num(x):
    return f"{x:.1f}" if x < 1000 else f"{x:.0f}"

print("| `nextok bench …` (+ `--seed 1 --json`) | fused path | µs/row | read pass µs | ratio | plain chain µs/row | target | status |")
print("|---|---|---|---|---|---|---|---|")
for row in order:
    ds = runs[row]
    ratio = statistics.median(d["ratio_to_read_pass"] for d in ds)
    us = statistics.median(d["ns_per_row"] for d in ds) / 1000
    rp = statistics.median(d["read_pass_ns"] for d in ds) / 1000
    lim, tgt = target(row)
    thr = " (2 thr)" if "--threads 2" in row else ""
    p = num(statistics.median(d["plain_ns_per_row"] for d in plain[row]) / 1000) if row in plain else "—"
    fused = "yes" if all(d["fused"] for d in ds) else "no"
    status = "—" if lim is None else "met" if ratio <= lim else "**not met**"
    print(f"| `{row}` | {fused} | {num(us)} | {rp:.1f}{thr} | {ratio:.2f} | {p} | {tgt} | {status} |")

if rows8:
    print()
    print("| `nextok bench …` (+ `--seed 1 --json`) | µs/row, `--rows 8` | read pass µs | ratio, `--rows 8` | ratio, one row | target |")
    print("|---|---|---|---|---|---|")
    for row in order:
        if row not in rows8:
            continue
        ds = rows8[row]
        ratio = statistics.median(d["ratio_to_read_pass"] for d in ds)
        us = statistics.median(d["ns_per_row"] for d in ds) / 1000
        rp = statistics.median(d["read_pass_ns"] for d in ds) / 1000
        one = statistics.median(d["ratio_to_read_pass"] for d in runs[row])
        print(f"| `{row}` | {num(us)} | {rp:.1f} | {ratio:.2f} | {one:.2f} | {target(row)[1]} |")
