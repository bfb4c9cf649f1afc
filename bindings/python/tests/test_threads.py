"""Several Python threads sampling at once: each gets what it would get alone
(the GIL is released while a chain runs); one Sampler shared between threads
raises RuntimeError instead of racing."""
import threading

import numpy as np

import nextok
from conftest import logits_row


def run_alone(params, rows):
    s = nextok.Sampler(params, rows.shape[1])
    out = []
    for r in rows:
        t = s.sample(r)
        s.accept(t)
        out.append(t)
    return out


def test_threads_each_with_a_sampler(rng):
    v, n, k = 50000, 40, 4
    rows = np.stack([logits_row(rng, v) for _ in range(n)])
    params = [nextok.SamplingParams(seed=i, temperature=0.9, top_p=0.95, repetition_penalty=1.1)
              for i in range(k)]
    want = [run_alone(p, rows) for p in params]
    got = [None] * k

    def work(i):
        got[i] = run_alone(params[i], rows)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(k)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == want


def test_batches_from_threads(rng):
    b, v = 8, 20000
    batch = np.stack([logits_row(rng, v) for _ in range(b)])
    p = nextok.SamplingParams(seed=4, top_k=50)
    want = nextok.sample_batch(batch, p, threads=1).tolist()
    results, errors = [], []

    def work():
        try:
            for _ in range(20):
                results.append(nextok.sample_batch(batch, p, threads=2).tolist())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 60 and all(r == want for r in results)


def test_one_sampler_two_threads(rng):
    v = 200000
    row = logits_row(rng, v)
    s = nextok.Sampler(nextok.SamplingParams(seed=1), v)
    want = s.sample(row)
    outcomes = []

    def work():
        for _ in range(50):
            try:
                outcomes.append(s.sample(row))
            except RuntimeError as e:
                assert "another thread" in str(e)
                outcomes.append("busy")

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outcomes) == 100
    assert all(o == want or o == "busy" for o in outcomes)
