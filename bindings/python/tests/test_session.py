"""nextok.Session: parity with `nextok replay` (the C session) on the same rows,
seeds and stop rules; parity with a Sampler + Vocab.decode loop; text deltas
that never split a character; finish reasons; clone/reset/prompt; grammars;
bad inputs; reference counts and threads."""
import json
import os
import sys
import threading

import numpy as np
import pytest

import nextok
from conftest import DATA

GPT2 = os.path.join(DATA, "vocab", "hf", "gpt2", "tokenizer.json")
EOS = 50256


@pytest.fixture(scope="module")
def vocab():
    return nextok.Vocab.load(GPT2)


def random_rows(seed, steps, n_vocab=50257):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((steps, n_vocab)) * 3).astype(np.float32)


def scripted_rows(ids, n_vocab=50257, seed=0):
    """Rows whose argmax is ids[i] by far (greedy follows the script)."""
    rows = random_rows(seed, len(ids), n_vocab)
    for i, t in enumerate(ids):
        rows[i, t] = 40.0
    return rows


def replay(cli, tmp_path, rows, *flags):
    """`nextok replay --json`: the token events [(token, text)] and the finish event."""
    path = tmp_path / "rows.npy"
    np.save(path, rows)
    out = cli("replay", "--vocab", GPT2, "--logits", path, "--json", *flags)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert "finish" in events[-1]
    return events[:-1], events[-1]


def run(session, rows):
    """Step through the rows until finished: [(token, text, reason)]."""
    out = []
    for row in rows:
        out.append(session.step(row))
        if out[-1][2] is not None:
            break
    return out


# ---- parity with the CLI ------------------------------------------------------------


@pytest.mark.parametrize("fields,flags", [
    (dict(seed=7, temperature=0.8, top_p=0.9), ["--seed", 7, "--temp", 0.8, "--top-p", 0.9]),
    (dict(seed=3, temperature=1.2, top_k=40, min_p=0.02, profile="llama"),
     ["--seed", 3, "--temp", 1.2, "--top-k", 40, "--min-p", 0.02, "--profile", "llama"]),
    (dict(seed=11, selector="gumbel"), ["--seed", 11, "--sampler", "gumbel"]),
])
def test_sampled_stream_matches_replay(cli, tmp_path, vocab, fields, flags):
    rows = random_rows(1, 24)
    params = nextok.SamplingParams(max_tokens=20, logprobs=3, **fields)
    events, fin = replay(cli, tmp_path, rows, "--max-tokens", 20, "--logprobs", 3, *flags)
    s = nextok.Session(vocab, params)
    got = []
    for row in rows:
        token, text, reason = s.step(row)
        lp, rank, top = s.last_logprobs
        got.append((token, text, lp, rank, [t[0] for t in top], [t[2] for t in top]))
        if reason:
            break
    assert [(e["token"], e["text"]) for e in events] == [g[:2] for g in got]
    for e, g in zip(events, got):
        assert g[2] == pytest.approx(e["logprob"], rel=1e-5, abs=1e-5)
        assert g[3] == e["rank"]
        assert g[4] == [t["id"] for t in e["top"]]
        assert g[5] == [bytes(t["bytes"]) for t in e["top"]]
    assert fin["finish"] == s.finish_reason == "length" and s.finish_detail == "length"
    assert s.n_tokens == 20


def test_stop_rules_match_replay(cli, tmp_path, vocab):
    text = "Hello world 🦀, this is a test. STOP here and more <|endoftext|> tail"
    ids = vocab.encode(text, parse_special=True)
    assert EOS in ids
    rows = scripted_rows(ids)
    greedy = dict(temperature=0.0)
    cases = [
        (dict(stop=["STOP"]), ["--stop", "STOP"], "stop", "stop_string", "STOP"),
        (dict(stop=["STOP", "his"], include_stop_str_in_output=True),
         ["--stop", "STOP", "--stop", "his", "--include-stop"], "stop", "stop_string", "his"),
        (dict(stop_token_ids=[ids[5]]), ["--stop-token-ids", ids[5]], "stop", "stop_token", ids[5]),
        (dict(), [], "stop", "eos", None),
        (dict(ignore_eos=True), ["--ignore-eos"], None, None, None),
        (dict(max_tokens=4), ["--max-tokens", 4], "length", "length", None),
        (dict(min_tokens=len(ids), stop=["zzz"]), ["--min-tokens", len(ids), "--stop", "zzz"],
         None, None, None),
    ]
    for fields, flags, reason, detail, stop_reason in cases:
        events, fin = replay(cli, tmp_path, rows, "--temp", 0, *flags)
        s = nextok.Session(vocab, nextok.SamplingParams(**greedy, **fields))
        got = list(s.stream(rows))
        assert [(e["token"], e["text"]) for e in events] == \
            [(-1 if t is None else t, x) for t, x in got], fields
        assert s.finish_reason == reason, fields
        assert s.finish_detail == detail
        assert s.stop_reason == stop_reason
        if reason is not None:
            assert fin["finish"] == {"eos": "eos"}.get(detail, reason)
            assert fin["reason"] == detail
        else:
            assert fin["finish"] == "length" and s.finished
    # the stop string is left out, and nothing after it comes
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0, stop="STOP"))
    assert "".join(t for _, t in s.stream(rows)) == "Hello world 🦀, this is a test. "


def test_prompt_penalties_skip_special_and_grammar_match_replay(cli, tmp_path, vocab):
    prompt = vocab.encode("The cat sat on the mat. The cat")
    rows = random_rows(2, 16)
    for t in prompt[:6]:  # make the prompt's tokens tempting: the penalty must matter
        rows[:, t] += 9.0
    rows[3, EOS] = 50.0
    flags = ["--seed", 5, "--temp", 0.9, "--repeat-penalty", 1.5, "--frequency-penalty", 0.5,
             "--prompt-tokens", ",".join(map(str, prompt)), "--skip-special", "--ignore-eos"]
    events, _ = replay(cli, tmp_path, rows, *flags)
    params = nextok.SamplingParams(seed=5, temperature=0.9, repetition_penalty=1.5,
                                   frequency_penalty=0.5, ignore_eos=True)
    s = nextok.Session(vocab, params, prompt=prompt, skip_special_tokens=True)
    assert [(e["token"], e["text"]) for e in events] == [(t, x) for t, x in s.stream(rows)]
    unpenalized = nextok.Session(vocab, nextok.SamplingParams(seed=5, temperature=0.9,
                                                              ignore_eos=True))
    assert [t for t, _ in unpenalized.stream(rows)] != [e["token"] for e in events]

    gbnf = os.path.join(DATA, "grammars", "json.gbnf")
    rows = random_rows(3, 60)
    events, fin = replay(cli, tmp_path, rows, "--seed", 9, "--gbnf", gbnf)
    g = nextok.Grammar.gbnf(open(gbnf).read())
    s = nextok.Session(vocab, nextok.SamplingParams(seed=9), grammar=g.compile(vocab))
    got = list(s.stream(rows))
    assert [(e["token"], e["text"]) for e in events] == [(t, x) for t, x in got]
    text = "".join(x for _, x in got)
    assert text.startswith("{")
    if s.finish_detail == "grammar":
        assert g.accepts(text) and fin["reason"] == "grammar"


# ---- parity with a Sampler loop --------------------------------------------------------


def test_same_tokens_as_sampler_and_text_as_decode(vocab):
    rows = random_rows(4, 40)
    params = nextok.SamplingParams(seed=42, temperature=0.7, top_p=0.95,
                                   presence_penalty=0.3, ignore_eos=True)
    sampler = nextok.Sampler(params, vocab.n_vocab)
    want = []
    for row in rows:
        t = sampler.sample(row)
        sampler.accept(t)
        want.append(t)
    s = nextok.Session(vocab, params)
    got = list(s.stream(rows))
    tokens = [t for t, _ in got if t is not None]
    assert tokens == want
    assert "".join(x for _, x in got) == vocab.decode(want).decode()
    assert s.finished and s.finish_reason is None  # ran out of rows: finish() was called


def test_text_deltas_never_split_a_character(vocab):
    text = "go 🦀 now: naïve café — “quoted” 日本語 🦀🧬 end"
    ids = vocab.encode(text)
    rows = scripted_rows(ids)
    # the library holds partial characters itself: deltas are whole characters
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0))
    deltas = [x for _, x in s.stream(rows)]
    assert len(deltas) == len(ids) and "" in deltas  # some tokens end inside a character
    assert "".join(deltas) == text and "\ufffd" not in "".join(deltas)
    # a stop string given as bytes, starting with a continuation byte: the stop
    # matcher holds b"\x80" and releases b"\xf0\x9f\xa6", half a character; the
    # binding holds that tail until the character completes
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0, stop=[b"\x80abc"]))
    deltas = [x for _, x in s.stream(rows)]
    assert "".join(deltas) == text and not any("\ufffd" in d for d in deltas)
    # a stream cut inside a character: U+FFFD at the end, as the library does
    cut = ids.index(vocab.encode(" 🦀")[1]) + 1
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0))
    assert "".join(x for _, x in s.stream(rows[:cut])).endswith("\ufffd")


# ---- finishing, reset, clone, prompt -------------------------------------------------------


def test_finish_and_step_after_finish(vocab):
    ids = vocab.encode("one two three")
    rows = scripted_rows(ids + [EOS])
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0))
    assert run(s, rows)[-1] == (EOS, "", "stop")
    assert s.finished and s.finish_detail == "eos" and s.stop_reason is None
    with pytest.raises(nextok.Error) as e:
        s.step(rows[0])
    assert e.value.status == "ERR_STATE"
    assert s.finish() == ("", "stop")
    # finish() mid-stream releases what is held: here a prefix of the stop string
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0, stop=" three four"))
    assert [x for _, x, _ in run(s, rows[:3])] == ["one", " two", ""]
    assert s.finish() == (" three", None)
    assert s.finished and s.finish_reason is None
    with pytest.raises(nextok.Error):
        s.step(rows[3])


def test_reset_keeps_prompt_and_clone_is_independent(vocab):
    rows = random_rows(5, 30)
    prompt = vocab.encode("A B C D")
    rows[:, prompt] += 9.0  # tempting: the penalty on the prompt's tokens matters
    params = nextok.SamplingParams(seed=1, temperature=1.0, repetition_penalty=1.3,
                                   ignore_eos=True)
    s = nextok.Session(vocab, params, prompt=prompt)
    first = run(s, rows)
    s.reset()
    assert s.n_tokens == 0 and not s.finished
    assert run(s, rows) == first
    # the prompt matters, and set_prompt([]) drops it
    s.reset()
    s.set_prompt([])
    assert run(s, rows) != first

    s = nextok.Session(vocab, params, prompt=prompt)
    head = run(s, rows[:10])
    c = s.clone()
    assert c.n_tokens == s.n_tokens == 10
    tail_c = run(c, rows[10:])
    assert s.n_tokens == 10  # the original did not move
    assert run(s, rows[10:]) == tail_c
    assert head + tail_c == first
    with pytest.raises(nextok.Error) as e:
        s.set_prompt(prompt)
    assert e.value.status == "ERR_STATE"


def test_prompt_sets_detokenizer_context():
    mistral = nextok.Vocab.load(os.path.join(DATA, "vocab", "hf", "mistral-7b-v0.1"))
    ids = mistral.encode("Hello world", add_special_tokens=False)  # ▁Hello ▁world
    rows = scripted_rows(ids, mistral.n_vocab)
    s = nextok.Session(mistral, nextok.SamplingParams(temperature=0))
    assert "".join(x for _, x in s.stream(rows)) == "Hello world"
    s = nextok.Session(mistral, nextok.SamplingParams(temperature=0),
                       prompt=mistral.encode("Say:"))
    assert "".join(x for _, x in s.stream(rows)) == " Hello world"  # a continuation


def test_stream_without_finish_and_from_a_generator(vocab):
    ids = vocab.encode("alpha beta gamma delta")
    rows = scripted_rows(ids)
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0, stop="delta"))
    a = list(s.stream(rows[:2], finish=False))
    assert not s.finished
    b = list(s.stream(row for row in rows[2:]))
    assert [t for t, _ in a + b] == ids
    assert "".join(x for _, x in a + b) == "alpha beta gamma "
    assert s.finish_reason == "stop" and s.stop_reason == "delta"
    assert list(s.stream(rows)) == []  # finished: nothing more


# ---- row shapes, dtypes, wider rows, errors -------------------------------------------


def test_row_kinds_and_wider_rows(vocab):
    torch = pytest.importorskip("torch")
    rows16 = random_rows(6, 12).astype(np.float16)
    params = nextok.SamplingParams(seed=3, temperature=0.8, ignore_eos=True)
    want = [t for t, _ in nextok.Session(vocab, params).stream(rows16.astype(np.float32))]
    assert [t for t, _ in nextok.Session(vocab, params).stream(rows16)] == want
    assert [t for t, _ in nextok.Session(vocab, params).stream(torch.from_numpy(rows16))] == want
    bf = torch.from_numpy(random_rows(6, 12)).to(torch.bfloat16)
    want_bf = [t for t, _ in nextok.Session(vocab, params).stream(bf.to(torch.float32))]
    assert [t for t, _ in nextok.Session(vocab, params).stream(bf)] == want_bf
    s = nextok.Session(vocab, params)
    assert s.step(rows16[0][None, :])[0] == want[0]  # a [1, V] row

    # a model whose rows are wider than the tokenizer: ids past it decode to nothing
    wide = vocab.n_vocab + 64
    rows = scripted_rows([15496, vocab.n_vocab + 10, 995], wide)
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0), n_vocab=wide)
    assert s.n_vocab == wide
    assert list(s.stream(rows)) == [(15496, "Hello"), (vocab.n_vocab + 10, ""), (995, " world")]


def test_bad_inputs_raise_and_change_nothing(vocab):
    params = nextok.SamplingParams(seed=2, temperature=0.9)
    rows = random_rows(7, 3)
    s = nextok.Session(vocab, params)
    with pytest.raises(ValueError, match="50257"):
        s.step(rows[0][:-1])
    with pytest.raises(TypeError):
        s.step(rows[0].astype(np.float64))
    with pytest.raises(TypeError):
        s.step([0.0] * vocab.n_vocab)
    bad = rows[0].copy()
    bad[123] = np.nan
    with pytest.raises(nextok.Error) as e:
        s.step(bad)
    assert e.value.status == "ERR_NAN"
    assert s.n_tokens == 0 and not s.finished
    assert [s.step(r)[0] for r in rows] == \
        [t for t, _ in nextok.Session(vocab, params).stream(rows, finish=False)]
    with pytest.raises(nextok.Error) as e:
        nextok.Session(vocab, nextok.SamplingParams(top_p=1.5))
    assert e.value.status == "ERR_INVALID_ARG" and "top_p" in str(e.value)
    with pytest.raises(TypeError):
        nextok.Session(vocab, {"temperature": 0.5})
    with pytest.raises(TypeError):
        nextok.Session("gpt2", params)
    with pytest.raises(ValueError):
        nextok.Session(vocab, params, n_vocab=0)
    with pytest.raises(ValueError):
        nextok.Session(vocab, params, logprobs_source="softmax")
    with pytest.raises(nextok.Error):
        nextok.Session(vocab, params, prompt=[vocab.n_vocab + 5])


# ---- logprobs, masks, grammars -----------------------------------------------------


def test_logprobs_sources(vocab):
    rows = random_rows(8, 4)
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0))
    s.step(rows[0])
    assert s.last_logprobs is None
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0, logprobs=0))
    token, _, _ = s.step(rows[0])
    lp, rank, top = s.last_logprobs
    row = rows[0].astype(np.float64)
    raw = row - row.max() - np.log(np.exp(row - row.max()).sum())
    assert rank == 1 and top == [] and token == int(row.argmax())
    assert lp == pytest.approx(raw[token], abs=1e-4)
    s = nextok.Session(vocab, nextok.SamplingParams(temperature=0, logprobs=2),
                       logprobs_source="processed")
    s.step(rows[0])
    lp, rank, top = s.last_logprobs
    assert lp == 0.0 and rank == 1 and len(top) == 1  # greedy: one token with p = 1


def test_token_bitmask(vocab):
    params = nextok.SamplingParams(seed=4, temperature=1.0, token_bitmask=True)
    s = nextok.Session(vocab, params)
    rows = random_rows(9, 3)
    with pytest.raises(nextok.Error) as e:
        s.step(rows[0])
    assert e.value.status == "ERR_STATE"
    words = np.zeros((vocab.n_vocab + 31) // 32, np.int32)
    words[995 // 32] |= 1 << (995 % 32)
    s.set_token_bitmask(words)
    words[:] = -1  # copied: changing it now does not matter
    c = s.clone()  # the clone gets the pending mask too
    assert s.step(rows[0])[:2] == (995, " world")
    assert c.step(rows[0])[0] == 995
    with pytest.raises(nextok.Error):
        s.step(rows[1])  # the mask is used up
    with pytest.raises(ValueError):
        s.set_token_bitmask(np.zeros(3, np.int32))
    with pytest.raises(nextok.Error) as e:
        nextok.Session(vocab, nextok.SamplingParams()).set_token_bitmask(words)
    assert e.value.status == "ERR_STATE"


def test_grammar_session(vocab):
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 99}},
              "required": ["n"]}
    g = nextok.Grammar.json_schema(schema, whitespace="compact", strict=True)
    rows = random_rows(10, 200)
    s = nextok.Session(vocab, nextok.SamplingParams(seed=1, temperature=0.7), grammar=g)
    assert s.grammar.vocab is vocab
    text = "".join(x for _, x in s.stream(rows))
    assert s.finish_detail in ("grammar", "eos") and s.finish_reason == "stop"
    assert g.accepts(text), text
    assert json.loads(text)["n"] == int(json.loads(text)["n"])
    other = nextok.Vocab.load(GPT2)
    with pytest.raises(ValueError, match="another Vocab"):
        nextok.Session(vocab, nextok.SamplingParams(), grammar=g.compile(other))
    with pytest.raises(TypeError):
        nextok.Session(vocab, nextok.SamplingParams(), grammar="root ::= x")


# ---- reference counts and threads ----------------------------------------------------


def test_refcounts_do_not_leak(vocab):
    rows = random_rows(11, 2)
    row = rows[0]
    params = nextok.SamplingParams(seed=1, logprobs=2, stop=["xyz"], ignore_eos=True)
    prompt = [1, 2, 3]
    before = [sys.getrefcount(x) for x in (row, params, vocab, prompt)]
    for _ in range(200):
        s = nextok.Session(vocab, params, prompt=prompt)
        for _ in range(5):
            s.step(row)
            s.last_logprobs
        s.clone().step(row)
        s.reset()
        list(s.stream(rows))
        try:
            s.step(row[:10])
        except ValueError:
            pass
    del s
    after = [sys.getrefcount(x) for x in (row, params, vocab, prompt)]
    assert before == after


def test_sessions_on_threads(vocab):
    rows = random_rows(12, 40)
    seeds = list(range(6))
    want = [list(nextok.Session(vocab, nextok.SamplingParams(seed=k, ignore_eos=True))
                 .stream(rows)) for k in seeds]
    got = [None] * len(seeds)

    def work(k):
        s = nextok.Session(vocab, nextok.SamplingParams(seed=k, ignore_eos=True))
        got[k] = list(s.stream(rows))

    threads = [threading.Thread(target=work, args=(k,)) for k in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == want
    assert len({tuple(g) for g in got}) == len(seeds)  # the seeds differ
