"""sample_batch: every row as its own Sampler would sample it, whatever the
thread count; the per-call chain cache never serves stale params."""
import numpy as np
import pytest

import nextok
from conftest import logits_row


def reference(batch, params_list, steps):
    out = []
    for row, p, step in zip(batch, params_list, steps):
        s = nextok.Sampler(p, batch.shape[1])
        s.step = step
        out.append(s.sample(row))
    return out


def test_one_params_all_rows(rng):
    b, v = 16, 4000
    batch = np.stack([logits_row(rng, v) for _ in range(b)])
    p = nextok.SamplingParams(seed=5, temperature=0.8, top_k=100, top_p=0.9)
    steps = list(range(b))
    want = reference(batch, [p] * b, steps)
    for threads in (1, 2, 3):
        got = nextok.sample_batch(batch, p, steps=steps, threads=threads)
        assert got.dtype == np.int32 and got.shape == (b,)
        assert got.tolist() == want


def test_params_per_row_and_cache_invalidation(rng):
    b, v = 8, 1000
    batch = np.stack([logits_row(rng, v) for _ in range(b)])
    ps = [nextok.SamplingParams(seed=i, profile=("vllm", "hf", "llama")[i % 3], temperature=0.5 + i / 10)
          for i in range(b)]
    assert nextok.sample_batch(batch, ps, steps=3).tolist() == reference(batch, ps, [3] * b)
    # change one params object in place: its row must follow (the cache keys on versions)
    ps[2].temperature = 0.0
    got = nextok.sample_batch(batch, ps, steps=3)
    assert got[2] == int(np.argmax(batch[2]))
    assert got.tolist() == reference(batch, ps, [3] * b)
    # a new V rebuilds the chains too
    small = np.ascontiguousarray(batch[:, :500])
    assert nextok.sample_batch(small, ps, steps=3).tolist() == reference(small, ps, [3] * b)


def test_strided_rows_and_dtypes(rng):
    v = 1024
    wide = np.stack([logits_row(rng, v + 64) for _ in range(4)])
    view = wide[:, :v]  # rows 1088 elements apart, not a copy
    p = nextok.SamplingParams(seed=2, top_p=0.8)
    want = reference(np.ascontiguousarray(view), [p] * 4, [0] * 4)
    assert nextok.sample_batch(view, p).tolist() == want
    half = view.astype(np.float16)
    assert nextok.sample_batch(half, p).tolist() == reference(half, [p] * 4, [0] * 4)


def test_out_and_bitmask(rng):
    b, v = 4, 200
    batch = np.stack([logits_row(rng, v) for _ in range(b)])
    out = np.full(b, -7, np.int32)
    r = nextok.sample_batch(batch, nextok.SamplingParams(temperature=0), out=out)
    assert r is out and out.tolist() == np.argmax(batch, axis=1).tolist()
    mask = np.zeros((b, (v + 31) // 32), np.int32)
    for i in range(b):
        mask[i, 1] = 1 << i  # only token 32 + i
    got = nextok.sample_batch(batch, nextok.SamplingParams(seed=1), bitmask=mask)
    assert got.tolist() == [32 + i for i in range(b)]
    with pytest.raises(ValueError):
        nextok.sample_batch(batch, nextok.SamplingParams(), bitmask=mask[:, :3])


def test_errors(rng):
    batch = np.stack([logits_row(rng, 100) for _ in range(3)])
    with pytest.raises(ValueError):
        nextok.sample_batch(batch, [nextok.SamplingParams()] * 2)
    with pytest.raises(ValueError):
        nextok.sample_batch(batch, nextok.SamplingParams(), steps=[1, 2])
    with pytest.raises(ValueError):
        nextok.sample_batch(batch[0], nextok.SamplingParams())  # 1-D: use Sampler
    with pytest.raises(nextok.Error) as e:
        nextok.sample_batch(batch, [nextok.SamplingParams(), nextok.SamplingParams(top_p=2.0),
                                    nextok.SamplingParams()])
    assert "row 1" in str(e.value) and "top_p" in str(e.value)
    bad = batch.copy()
    bad[2, 7] = np.nan
    with pytest.raises(nextok.Error) as e:
        nextok.sample_batch(bad, nextok.SamplingParams())
    assert e.value.status == "ERR_NAN" and "row 2" in str(e.value)
