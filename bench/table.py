#!/usr/bin/env python3
"""Turn the output of bench/table.sh (or batch.sh) into docs/performance.md's
results tables.

Several output files (several runs of the script) are pooled: each row's ratio is the
median over every timed run of it in all files, as are its times. The second table is
the --rows 8 runs (distinct rows) next to the same row's single-row ratio."""
import json, statistics, sys

runs, plain, rows8, order = {}, {}, {}, []
masks, orders = {}, {}  # (row, F) -> {"0": [...], "F": [...]}; (row) -> {samplers: [...]}
lines = []
for path in sys.argv[1:] or ["/dev/stdin"]:
    lines += open(path).read().splitlines()
for line in lines:
    kind, _, rest = line.partition("|")
    if kind in ("MASK", "MASK0", "ORDER"):
        row, key, js = rest.split("|", 2)
        d = json.loads(js)
        if kind == "ORDER":
            orders.setdefault(row, {}).setdefault(key, []).append(d)
        else:
            masks.setdefault((row, key), {}).setdefault(kind, []).append(d)
        continue
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

def med_us(ds):
    return statistics.median(d["ns_per_row"] for d in ds) / 1000

if masks:
    print()
    print("| `nextok bench …` (+ `--seed 1 --json`) | `--allowed-fraction` | µs/row, no mask | µs/row, mask | mask / no mask | target | status |")
    print("|---|---|---|---|---|---|---|")
    for (row, f), m in masks.items():
        a, b = med_us(m["MASK0"]), med_us(m["MASK"])
        fused = all(d["fused"] for d in m["MASK"])
        status = ("met" if b / a <= 1.2 else "**not met**") + ("" if fused else " (not fused)")
        print(f"| `{row}` | {f} | {num(a)} | {num(b)} | {b / a:.2f} | ≤ 1.2× | {status} |")

if orders:
    print()
    print("| `nextok bench …` (+ `--seed 1 --json`) | `--samplers` | µs/row | `--samplers` | µs/row | ratio |")
    print("|---|---|---|---|---|---|")
    for row, o in orders.items():
        (ka, da), (kb, db) = list(o.items())
        a, b = med_us(da), med_us(db)
        print(f"| `{row}` | `{ka}` | {num(a)} | `{kb}` | {num(b)} | {a / b:.2f} |")
