"""The Python side of bench/python/bench.sh: per-call cost of the bindings
against the same C calls (bench_c), measured alternately in one run.

    Sampler.sample(row)            vs nextok_chain_sample       (overhead per call)
    sample_batch(logits, params)   vs nextok_batch_sample       (ratio)

usage: bench.py BENCH_C  (run by bench.sh, with PYTHONPATH set)
"""
import statistics
import subprocess
import sys
import time

import numpy as np

import nextok


def aligned(n):
    """n float32 at a 64-byte boundary, as bench_c allocates them (numpy's own
    arrays start 16 bytes past one, which costs the kernels split loads)."""
    buf = np.empty(n + 16, np.float32)
    off = (-buf.ctypes.data % 64) // 4
    return buf[off:off + n]


def rows(n, seed=7):
    """The LCG of bench_c.c, so both sides sample the same values."""
    out = aligned(n)
    s = seed
    mask = (1 << 64) - 1
    for i in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & mask
        out[i] = np.float32(((s >> 40) % 20000) / 1000.0 - 10.0)
    return out


def params():
    return nextok.SamplingParams(temperature=0.8, top_p=0.95, seed=1)


def py_sample(v, iters, reps):
    x = rows(v)
    s = nextok.Sampler(params(), v)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            s.sample(x)
        times.append((time.perf_counter_ns() - t0) / iters)
    return statistics.median(times)


def py_batch(v, b, iters, reps, threads):
    x = rows(b * v).reshape(b, v)
    p = params()
    out = np.empty(b, np.int32)
    assert x.ctypes.data % 64 == 0
    nextok.sample_batch(x, p, threads=threads, out=out)  # builds the cached chains
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        for _ in range(iters):
            nextok.sample_batch(x, p, threads=threads, out=out)
        times.append((time.perf_counter_ns() - t0) / iters)
    return statistics.median(times)


def c_run(bench_c, *args):
    out = subprocess.run([bench_c, *map(str, args)], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])


def main():
    bench_c = sys.argv[1]
    rounds = 5
    print("| call | V | B | C (median) | Python (median) | Python - C | Python / C |")
    print("|---|---|---|---|---|---|---|")
    for v, iters in ((16, 200000), (1024, 20000), (128256, 300)):
        c, p = [], []
        for _ in range(rounds):  # alternate, so drift hits both sides alike
            c.append(c_run(bench_c, "sample", v, iters, 5))
            p.append(py_sample(v, iters, 5))
        cm, pm = statistics.median(c), statistics.median(p)
        print(f"| Sampler.sample | {v} | 1 | {cm / 1e3:.3f} µs | {pm / 1e3:.3f} µs | "
              f"{(pm - cm) / 1e3:+.3f} µs | {pm / cm:.3f} |")
    for v, b, iters, threads in ((128256, 256, 3, 1), (128256, 256, 3, 2)):
        c, p = [], []
        for _ in range(rounds):
            c.append(c_run(bench_c, "batch", v, b, iters, 3, threads))
            p.append(py_batch(v, b, iters, 3, threads))
        cm, pm = statistics.median(c), statistics.median(p)
        print(f"| sample_batch, {threads} thread{'s' if threads > 1 else ''} | {v} | {b} | "
              f"{cm / 1e6:.2f} ms | {pm / 1e6:.2f} ms | {(pm - cm) / 1e6:+.3f} ms | {pm / cm:.3f} |")


if __name__ == "__main__":
    main()
