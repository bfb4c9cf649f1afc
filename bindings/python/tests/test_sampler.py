"""Sampler and SamplingParams: parity with the CLI (the C library) on the same
rows and seeds, for every profile and dtype; history; clone/reset; errors."""
import json
import os

import numpy as np
import pytest

import nextok
from conftest import logits_row

# (SamplingParams fields, the same as CLI flags)
CONFIGS = [
    (dict(), []),
    (dict(temperature=0.7, top_p=0.9), ["--temp", 0.7, "--top-p", 0.9]),
    (dict(temperature=1.3, top_k=40, min_p=0.05), ["--temp", 1.3, "--top-k", 40, "--min-p", 0.05]),
    (dict(profile="llama"), ["--profile", "llama"]),
    (dict(profile="llama", temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, typical_p=0.9),
     ["--profile", "llama", "--temp", 0.8, "--top-k", 40, "--top-p", 0.95, "--min-p", 0.05,
      "--typical", 0.9]),
    (dict(profile="hf", temperature=0.9, top_k=20, top_p=0.8),
     ["--profile", "hf", "--temp", 0.9, "--top-k", 20, "--top-p", 0.8]),
    (dict(top_n_sigma=1.5, temperature=0.6), ["--top-nsigma", 1.5, "--temp", 0.6]),
    (dict(selector="gumbel", temperature=0.8), ["--sampler", "gumbel", "--temp", 0.8]),
    (dict(temperature=0.0), ["--temp", 0]),
    (dict(xtc_probability=0.5, xtc_threshold=0.05, profile="llama"),
     ["--xtc-probability", 0.5, "--xtc-threshold", 0.05, "--profile", "llama"]),
]


def cli_tokens(cli, path, flags, seed, n):
    out = cli("sample", "--logits", path, "--seed", seed, "-n", n, *flags)
    return [int(x) for x in out.stdout.split()]


@pytest.mark.parametrize("fields,flags", CONFIGS)
def test_parity_with_cli(tmp_path, cli, rng, fields, flags):
    v = 3000
    row = logits_row(rng, v)
    path = tmp_path / "row.npy"
    np.save(path, row)
    for seed in (1, 42, 2**40 + 3):
        want = cli_tokens(cli, path, flags, seed, 16)
        s = nextok.Sampler(nextok.SamplingParams(seed=seed, **fields), v)
        got = []
        for step in range(16):
            s.step = step
            got.append(s.sample(row))
        assert got == want, (fields, seed)


def test_parity_float16(tmp_path, cli, rng):
    v = 2048
    row = logits_row(rng, v).astype(np.float16)
    path = tmp_path / "row16.npy"
    np.save(path, row)
    want = cli_tokens(cli, path, ["--temp", 0.8, "--top-k", 50], 9, 12)
    s = nextok.Sampler(nextok.SamplingParams(seed=9, temperature=0.8, top_k=50), v)
    got = []
    for step in range(12):
        s.step = step
        got.append(s.sample(row))
    assert got == want


@pytest.mark.torch
def test_parity_bfloat16(tmp_path, cli, rng):
    import torch
    v = 2048
    t = torch.from_numpy(logits_row(rng, v)).to(torch.bfloat16)
    path = tmp_path / "row.bf16"
    path.write_bytes(t.view(torch.int16).numpy().tobytes())
    want = cli_tokens(cli, path, ["--temp", 0.8, "--top-p", 0.9], 5, 12)
    s = nextok.Sampler(nextok.SamplingParams(seed=5, temperature=0.8, top_p=0.9), v)
    got = []
    for step in range(12):
        s.step = step
        got.append(s.sample(t))
    assert got == want


def test_history_parity(tmp_path, cli, rng):
    """Penalties over prompt and output: set_prompt/accept == --prompt-tokens/--output-tokens."""
    v = 1000
    row = logits_row(rng, v, scale=1.0)
    path = tmp_path / "row.npy"
    np.save(path, row)
    top = [int(i) for i in np.argsort(-row)[:6]]
    prompt, output = top[:3], top[3:6]
    flags = ["--repeat-penalty", 1.5, "--frequency-penalty", 0.5, "--presence-penalty", 0.3,
             "--prompt-tokens", ",".join(map(str, prompt)),
             "--output-tokens", ",".join(map(str, output))]
    want = cli_tokens(cli, path, flags, 3, 8)
    s = nextok.Sampler(nextok.SamplingParams(seed=3, repetition_penalty=1.5,
                                             frequency_penalty=0.5, presence_penalty=0.3), v)
    s.set_prompt(prompt)
    for t in output:
        s.accept(t)
    assert s.step == 3
    got = []
    for k in range(8):
        s.step = 3 + k
        got.append(s.sample(row))
    assert got == want


def test_probs_match_cli(tmp_path, cli, rng):
    v = 500
    row = logits_row(rng, v)
    path = tmp_path / "row.npy"
    np.save(path, row)
    out = cli("probs", "--logits", path, "--temp", 0.7, "--top-k", 10, "--seed", 1).stdout
    want = {e["id"]: e["p"] for e in json.loads(out)}
    assert len(want) == 10, out
    s = nextok.Sampler(nextok.SamplingParams(temperature=0.7, top_k=10, seed=1), v)
    got = dict(s.probs(row))
    assert set(got) == set(want)
    for k in want:
        assert abs(got[k] - want[k]) < 1e-5


def test_logprobs(rng):
    v = 400
    row = logits_row(rng, v)
    s = nextok.Sampler(nextok.SamplingParams(seed=11, top_k=5), v)
    token, lp, rank, top = s.logprobs(row, 3)
    assert token == s.sample(row)
    assert len(top) == 3 and top[0][1] >= top[1][1] >= top[2][1]
    probs = dict(s.probs(row))
    assert abs(np.exp(lp) - probs[token]) < 1e-5
    assert 1 <= rank <= 5
    # raw: log_softmax of the row itself
    _, lp_raw, _, top_raw = s.logprobs(row, 2, processed=False, token=7)
    ref = row.astype(np.float64) - np.log(np.sum(np.exp(row.astype(np.float64) - row.max()))) - row.max()
    assert abs(lp_raw - ref[7]) < 1e-4
    assert top_raw[0][0] == int(np.argmax(row))
    # a token outside the processed distribution: -inf, rank 0
    outside = int(np.argmin(row))
    _, lp_out, rank_out, _ = s.logprobs(row, 0, token=outside)
    assert lp_out == -np.inf and rank_out == 0


def test_accept_reset_clone(rng):
    v = 800
    rows = [logits_row(rng, v, scale=1.0) for _ in range(12)]
    params = nextok.SamplingParams(seed=77, repetition_penalty=1.3, temperature=0.9)

    def run(s, rs):
        out = []
        for r in rs:
            t = s.sample(r)
            s.accept(t)
            out.append(t)
        return out

    s = nextok.Sampler(params, v)
    first = run(s, rows[:6])
    c = s.clone()
    assert c.step == s.step == 6
    assert run(s, rows[6:]) == run(c, rows[6:])
    s.reset()
    assert s.step == 0
    assert run(s, rows[:6]) == first
    # the params are copied: changing the object afterwards changes nothing
    params.temperature = 0.01
    s.reset()
    assert run(s, rows[:6]) == first
    assert s.params.temperature == 0.9 and params.temperature == 0.01


def test_token_bitmask_is_read_in_place(rng):
    """The mask is borrowed, not copied: a change after set_token_bitmask is seen."""
    v = 100
    row = np.zeros(v, np.float32)
    row[10] = 5.0
    s = nextok.Sampler(nextok.SamplingParams(temperature=0.0, token_bitmask=True), v)
    mask = np.zeros((v + 31) // 32, np.int32)
    mask[0] = 1 << 3  # only token 3
    s.set_token_bitmask(mask)
    assert s.sample(row) == 3
    mask[0] = 1 << 7  # written through the same array
    assert s.sample(row) == 7
    s.accept(7)  # releases it
    with pytest.raises(nextok.Error) as e:
        s.sample(row)  # no mask for this step: an error, never an unmasked sample
    assert e.value.status == "ERR_STATE"
    with pytest.raises(ValueError):
        s.set_token_bitmask(np.zeros(2, np.int32))


def test_params_fields_and_repr():
    p = nextok.SamplingParams(temperature=0.7, top_p=0.9, seed=-1, stop="###",
                              logit_bias={5: -100.0}, allowed_token_ids=[1, 2, 3])
    assert p.temperature == 0.7 and p.top_p == 0.9
    assert p.seed == 2**64 - 1
    assert p.stop == ["###"] and p.logit_bias == {5: -100.0}
    assert p.allowed_token_ids == (1, 2, 3)
    assert "temperature=0.7" in repr(p) and "profile='vllm'" in repr(p)
    assert nextok.SamplingParams(profile="llama").top_k == 40
    assert nextok.SamplingParams(profile="hf").top_k == 50
    p.bad_words_ids = [[4], [9]]
    assert p.banned_token_ids == (4, 9)
    q = p.copy()
    q.top_p = 0.5
    assert p.top_p == 0.9


def test_allowed_banned_bias(rng):
    v = 50
    row = logits_row(rng, v)
    best = int(np.argmax(row))
    s = nextok.Sampler(nextok.SamplingParams(temperature=0, banned_token_ids=[best]), v)
    assert s.sample(row) != best
    s = nextok.Sampler(nextok.SamplingParams(temperature=0, allowed_token_ids=[3, 4]), v)
    assert s.sample(row) in (3, 4)
    s = nextok.Sampler(nextok.SamplingParams(temperature=0, logit_bias={17: 1e4}), v)
    assert s.sample(row) == 17


def test_min_tokens_suppresses_eog(rng):
    v = 30
    row = np.zeros(v, np.float32)
    row[2] = 50.0  # the end token is by far the best
    s = nextok.Sampler(nextok.SamplingParams(temperature=0, min_tokens=2), v, eog_ids=[2])
    assert s.sample(row) != 2
    s.accept(0)
    s.accept(0)
    assert s.sample(row) == 2
    s = nextok.Sampler(nextok.SamplingParams(temperature=0, min_tokens=2, stop_token_ids=[2]), v)
    assert s.sample(row) != 2


@pytest.mark.parametrize("kwargs,field", [
    (dict(top_p=1.5), "top_p"), (dict(min_p=-0.1), "min_p"), (dict(temperature=-1.0), "temperature"),
])
def test_bad_params_raise_with_the_field(kwargs, field):
    with pytest.raises(nextok.Error) as e:
        nextok.Sampler(nextok.SamplingParams(**kwargs), 100)
    assert field in str(e.value) and e.value.status == "ERR_INVALID_ARG"


def test_bad_inputs_raise(rng):
    s = nextok.Sampler(nextok.SamplingParams(seed=1), 100)
    row = logits_row(rng, 100)
    with pytest.raises(TypeError):
        nextok.SamplingParams(temprature=0.5)  # a typo is not silently ignored
    with pytest.raises(TypeError):
        nextok.SamplingParams(top_k="40")
    with pytest.raises(ValueError):
        nextok.SamplingParams(selector="beam")
    with pytest.raises(ValueError):
        nextok.SamplingParams(bad_words_ids=[[1, 2]])  # sequences: not supported, said so
    with pytest.raises(ValueError):
        s.sample(row[:99])
    with pytest.raises(ValueError):
        s.sample(np.tile(row, 2)[::2])  # not contiguous
    with pytest.raises(TypeError):
        s.sample(row.astype(np.float64))
    with pytest.raises(TypeError):
        s.sample([0.0] * 100)
    nan_row = row.copy()
    nan_row[5] = np.nan
    step = s.step
    with pytest.raises(nextok.Error) as e:
        s.sample(nan_row)
    assert e.value.status == "ERR_NAN"
    assert s.step == step  # a failed call changed nothing
    with pytest.raises(nextok.Error) as e:
        s.accept(100)
    assert e.value.status == "ERR_TOKEN_RANGE" and s.step == step
    # NaN as -inf when asked
    s2 = nextok.Sampler(nextok.SamplingParams(seed=1, nan_policy="neg_inf", temperature=0), 100)
    assert s2.sample(nan_row) == int(np.nanargmax(nan_row))


def test_stages_follow_profile():
    s = nextok.Sampler(nextok.SamplingParams(profile="llama"), 10)
    assert s.stages[-1] == "dist" and "top-k" in s.stages
    assert nextok.Sampler(nextok.SamplingParams(temperature=0), 10).stages[-1] == "greedy"


def test_version():
    assert nextok.__version__ == nextok.library_version
    assert os.path.basename(nextok._nextok.__file__).startswith("_nextok.abi3")
