"""nextok.Grammar, CompiledGrammar and Matcher: recognizers and masks against
the CLI (`nextok grammar accepts` / `grammar mask --json`), every front end,
errors with their places, the Matcher's all-or-nothing calls, zero-copy
masks into numpy and torch, reference counts and threads."""
import json
import os
import sys
import threading

import numpy as np
import pytest

import nextok
from nextok import _nextok
from conftest import DATA

GPT2 = os.path.join(DATA, "vocab", "hf", "gpt2", "tokenizer.json")
GRAMMARS = os.path.join(DATA, "grammars")

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
    },
    "required": ["name", "age"],
}


@pytest.fixture(scope="module")
def vocab():
    return nextok.Vocab.load(GPT2)


@pytest.fixture(scope="module")
def json_cg(vocab):
    return nextok.Grammar.gbnf(read(os.path.join(GRAMMARS, "json.gbnf"))).compile(vocab)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def bits(words, n_vocab):
    """The allowed ids of a mask."""
    b = np.unpackbits(np.asarray(words, np.int32).view(np.uint8), bitorder="little")
    return np.flatnonzero(b[:n_vocab])


def walk(matcher, ids):
    """n_allowed before each id, accepting each."""
    out = []
    for t in ids:
        mask = matcher.fill_bitmask()
        assert matcher.last_n_allowed == len(bits(mask, matcher.n_vocab))
        out.append(matcher.last_n_allowed)
        matcher.accept_token(t)
    return out


# ---- front ends and recognizers ----------------------------------------------------


@pytest.mark.parametrize("name,text", [
    ("json.gbnf", '{"a": [1, 2.5e3, "x"], "b": null}'),
    ("json.gbnf", '{"a": }'),
    ("arithmetic.gbnf", "(1+2)*3\n"),
    ("arithmetic.gbnf", "1+*2\n"),
    ("list.gbnf", "- one\n- two\n"),
    ("chess.gbnf", "1. e4 e5 2. Nf3 Nc6 "),
])
def test_accepts_matches_cli(cli, name, text):
    path = os.path.join(GRAMMARS, name)
    g = nextok.Grammar.gbnf(read(path))
    out = cli("grammar", "accepts", "--gbnf", path, "--text", text, check=False)
    assert out.returncode in (0, 1)
    assert g.accepts(text) == (out.stdout.strip() == "accepted")
    assert g.accepts(text.encode()) == g.accepts(text)
    assert g.kind == "gbnf" and g.n_rules > 0


def test_every_example_grammar_compiles(vocab):
    names = sorted(f for f in os.listdir(GRAMMARS) if f.endswith(".gbnf"))
    assert len(names) == 8
    for name in names:
        cg = nextok.Grammar.gbnf(read(os.path.join(GRAMMARS, name))).compile(vocab)
        assert isinstance(cg, _nextok.CompiledGrammar)
        assert cg.n_vocab == vocab.n_vocab and cg.vocab is vocab
        assert len(bits(nextok.Matcher(cg).fill_bitmask(), cg.n_vocab)) > 0, name


def test_gbnf_errors_name_the_place():
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.gbnf('root ::= "a" (\n')
    assert e.value.status == "ERR_FORMAT"
    assert "line 2, column 1" in str(e.value)
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.gbnf('root ::= "a" b')
    assert e.value.status == "ERR_FORMAT" and "'b'" in str(e.value)
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.gbnf('start ::= "a"')
    assert "root" in str(e.value)
    with pytest.raises(TypeError):
        nextok.Grammar.gbnf(5)
    with pytest.raises(TypeError):
        nextok.Grammar()


def test_gbnf_root_option():
    text = 'root ::= "x"\nnum ::= [0-9]+ ("." [0-9]+)?\n'
    g = nextok.Grammar.gbnf(text, root="num")
    assert g.accepts("12.5") and not g.accepts("x")
    assert nextok.Grammar.gbnf(text).accepts("x")
    # without a root rule of its own
    assert nextok.Grammar.gbnf('num ::= [0-9]+', root="num").accepts("42")
    with pytest.raises(ValueError, match="root"):
        nextok.Grammar.gbnf(text, root="num ::= x")
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.gbnf(text, root="nosuch")
    assert "nosuch" in str(e.value)


def test_json_schema_front_end(tmp_path, cli, vocab):
    g = nextok.Grammar.json_schema(SCHEMA)
    g2 = nextok.Grammar.json_schema(json.dumps(SCHEMA))
    assert g.kind == "json_schema"
    good = '{"name": "Ann", "age": 31, "tags": ["a", "b"]}'
    for text, ok in ((good, True), ('{"name": "Ann"}', False), ('{"age": 3, "name": "x"}', False),
                     ('{"name": "Ann", "age": -1}', False), ('{"name":"Ann","age":1}', True)):
        assert g.accepts(text) == g2.accepts(text) == ok, text
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    out = cli("grammar", "mask", "--vocab", GPT2, "--json-schema", path, "--text", good, "--json")
    want = [s["n_allowed"] for s in json.loads(out.stdout)["steps"]]
    assert walk(g.compile(vocab).matcher(), vocab.encode(good)) == want
    # options
    compact = nextok.Grammar.json_schema(SCHEMA, whitespace="compact")
    assert compact.accepts('{"name":"Ann","age":1}') and not compact.accepts(good)
    assert nextok.Grammar.json_schema(SCHEMA, whitespace=1).accepts(good)
    assert not nextok.Grammar.json_schema(SCHEMA, whitespace=0).accepts(good)
    with pytest.raises(ValueError):
        nextok.Grammar.json_schema(SCHEMA, whitespace=65)
    extra = '{"name": "A", "age": 1, "x": 2}'
    assert g.accepts(extra)
    assert not nextok.Grammar.json_schema(SCHEMA, strict=True).accepts(extra)
    # properties in any order, as the CLI's --json-order any
    anyo = nextok.Grammar.json_schema(SCHEMA, property_order="any")
    swapped = '{"age": 3, "name": "x"}'
    assert anyo.accepts(swapped) and anyo.accepts(good) and not g.accepts(swapped)
    assert not anyo.accepts('{"age": 3, "name": "x", "age": 4}')
    assert cli("grammar", "accepts", "--json-schema", path, "--json-order", "any",
               "--text", swapped).stdout.strip() == "accepted"
    with pytest.raises(ValueError):
        nextok.Grammar.json_schema(SCHEMA, property_order="sorted")
    many = {"type": "object", "properties": {"k%d" % i: {} for i in range(11)}}
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.json_schema(many, property_order="any")
    assert e.value.status == "ERR_LIMIT" and "at most 10" in str(e.value)


def test_json_schema_errors_and_lenient():
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.json_schema({"type": "string", "minLength": -1})
    assert e.value.status == "ERR_FORMAT" and "/minLength" in str(e.value)
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.json_schema('{"type": ')
    assert e.value.status == "ERR_FORMAT"
    schema = {"type": "array", "uniqueItems": True}
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.json_schema(schema)
    assert e.value.status == "ERR_UNSUPPORTED" and "uniqueItems" in str(e.value)
    g = nextok.Grammar.json_schema(schema, lenient=True)
    assert g.ignored == [("", "uniqueItems")]
    assert g.accepts("[1, 1]")
    assert nextok.Grammar.json_schema(SCHEMA).ignored == []


def test_regex_json_and_lazy(cli, vocab):
    r = nextok.Grammar.regex(r"[a-c]+-\d{2}")
    assert r.kind == "regex" and r.accepts("abc-12") and not r.accepts("abc-1")
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.regex("a)b")
    assert e.value.status == "ERR_FORMAT" and "column" in str(e.value)
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.regex(r"(a)\1")
    assert e.value.status == "ERR_UNSUPPORTED"
    out = cli("grammar", "mask", "--vocab", GPT2, "--regex", r"[a-c]+-\d{2}", "--text", "abc-12",
              "--json")
    want = [s["n_allowed"] for s in json.loads(out.stdout)["steps"]]
    assert walk(r.compile(vocab).matcher(), vocab.encode("abc-12")) == want

    j = nextok.Grammar.json()
    assert j.kind == "json" and j.accepts(' [1, {"a": null}] ') and not j.accepts("[1,]")

    lazy = nextok.Grammar.lazy(nextok.Grammar.json_schema(SCHEMA), triggers=["<tool>"])
    assert lazy.kind == "lazy"
    assert lazy.accepts("Let me call it.")
    assert lazy.accepts('Sure. <tool>{"name": "A", "age": 1}')
    assert not lazy.accepts('Sure. <tool>{"name": "A"}')
    lt = nextok.Grammar.lazy(j, triggers=["<x>"], trigger_tokens=[50255], vocab=vocab)
    m = lt.compile(vocab).matcher()
    assert m.is_allowed(50255) and m.is_allowed(vocab.encode("Hi")[0])
    c = m.clone()
    c.accept_token(50255)  # the trigger token (also text here: GPT-2 has no special one)
    assert c.is_allowed(vocab.encode("[")[0])
    m.accept_bytes("Hi <x>")  # the trigger word: JSON from here on
    assert not m.is_allowed(vocab.encode("Hi")[0]) and m.is_allowed(vocab.encode("[")[0])
    with pytest.raises(nextok.Error):
        nextok.Grammar.lazy(j)  # no trigger
    with pytest.raises(TypeError):
        nextok.Grammar.lazy("root ::= x", triggers=["a"])


def test_lazy_trigger_tokens_alone(vocab):
    lt = nextok.Grammar.lazy(nextok.Grammar.json(), trigger_tokens=[50255], vocab=vocab)
    m = lt.compile(vocab).matcher()
    assert m.is_allowed(50255) and m.is_allowed(vocab.encode("Hello")[0])
    m.accept_token(50255)  # JSON may start here (50255 is also plain text in GPT-2)
    assert m.is_allowed(vocab.encode("[")[0]) and not m.is_terminated()


def test_lazy_trigger_patterns(vocab):
    lt = nextok.Grammar.lazy(nextok.Grammar.regex("[0-9]+;"),
                             trigger_patterns=[r"<call id=[a-z]+>"])
    assert lt.accepts("text <call id=ab>12;") and lt.accepts("no call here")
    assert not lt.accepts("text <call id=ab>x")
    assert lt.accepts("<call id=>is not a trigger")
    m = lt.compile(vocab).matcher()
    m.accept_bytes("so <call id=q>")
    assert m.is_allowed(vocab.encode("7")[0]) and not m.is_allowed(vocab.encode(" the")[0])
    with pytest.raises(nextok.Error) as e:
        nextok.Grammar.lazy(nextok.Grammar.json(), trigger_patterns=["^x"])
    assert e.value.status == "ERR_UNSUPPORTED"


def test_several_grammars_share_a_vocab():
    """The token table is built once per Vocab and shared (no timing asserted here:
    speed is for benchmarks); every compiled grammar still works."""
    v = nextok.Vocab.load(GPT2)
    c1 = nextok.Grammar.json().compile(v)
    c2 = nextok.Grammar.regex("[0-9]+").compile(v)
    assert c1.matcher().is_allowed(v.encode("[")[0]) and not c2.matcher().is_allowed(v.encode("[")[0])
    assert c2.matcher().is_allowed(v.encode("42")[0])


# ---- masks against the CLI ------------------------------------------------------------


@pytest.mark.parametrize("text", ['{"a": [1, 2]}', '{"key": "välue 🦀", "n": -0.5e+3}',
                                  '{"x": [true, false, null, {}]}'])
def test_masks_match_cli(cli, vocab, json_cg, text):
    out = cli("grammar", "mask", "--vocab", GPT2, "--gbnf", os.path.join(GRAMMARS, "json.gbnf"),
              "--text", text, "--json")
    res = json.loads(out.stdout)
    ids = vocab.encode(text)
    assert [s["token"] for s in res["steps"]] == ids
    m = nextok.Matcher(json_cg)
    assert walk(m, ids) == [s["n_allowed"] for s in res["steps"]]
    assert m.is_accepting() == res["accepting"] is True
    assert m.n_steps == len(ids)


def test_mask_bits_agree_with_is_allowed(vocab, json_cg):
    m = json_cg.matcher()
    m.accept_bytes('{"a": ')
    allowed = set(bits(m.fill_bitmask(), vocab.n_vocab).tolist())
    assert 0 < len(allowed) < vocab.n_vocab
    for t in list(range(0, vocab.n_vocab, 97)) + sorted(allowed)[:200]:
        assert m.is_allowed(t) == (t in allowed)
    # every allowed token keeps the text a prefix of JSON; a refused one does not
    for t in sorted(allowed)[:50]:
        c = m.clone()
        c.accept_token(t)
    for t in [t for t in range(0, 3000) if t not in allowed][:50]:
        with pytest.raises(nextok.Error) as e:
            m.clone().accept_token(t)
        assert e.value.status == "ERR_REJECTED"


# ---- the Matcher's calls -----------------------------------------------------------------


def test_rejected_token_changes_nothing(vocab, json_cg):
    m = json_cg.matcher()
    m.accept_token(vocab.encode("{")[0])
    before = m.fill_bitmask().copy()
    steps = m.n_steps
    bad = vocab.encode("}}")[0]
    assert not m.is_allowed(bad)
    with pytest.raises(nextok.Error) as e:
        m.accept_token(bad)
    assert e.value.status == "ERR_REJECTED"
    assert m.n_steps == steps
    assert np.array_equal(m.fill_bitmask(), before)
    with pytest.raises(nextok.Error) as e:
        m.accept_bytes(b'"a" x')  # all or nothing: '"a" ' would be fine alone
    assert e.value.status == "ERR_REJECTED"
    assert np.array_equal(m.fill_bitmask(), before)
    with pytest.raises(nextok.Error) as e:
        m.accept_token(vocab.n_vocab)
    assert e.value.status == "ERR_TOKEN_RANGE"
    assert np.array_equal(m.fill_bitmask(), before) and m.n_steps == steps


def test_rollback_reset_clone(vocab, json_cg):
    m = json_cg.matcher()
    start = m.fill_bitmask().copy()
    ids = vocab.encode('{"a": [1, 2')
    masks = []
    for t in ids:
        masks.append(m.fill_bitmask().copy())
        m.accept_token(t)
    assert m.n_steps == len(ids)
    c = m.clone()
    m.rollback(3)
    assert m.n_steps == len(ids) - 3
    assert np.array_equal(m.fill_bitmask(), masks[-3])
    assert c.n_steps == len(ids)  # the clone did not move
    c.accept_bytes("]}")
    assert c.is_accepting() and c.is_complete() is False  # JSON may be followed by spaces
    with pytest.raises(nextok.Error) as e:
        m.rollback(100)
    assert e.value.status == "ERR_INVALID_ARG"
    m.reset()
    assert m.n_steps == 0 and np.array_equal(m.fill_bitmask(), start)
    with pytest.raises(ValueError):
        m.rollback(-1)


def test_forced_bytes_termination_and_completion(vocab):
    cg = nextok.Grammar.gbnf('root ::= "hello, " [a-z] [a-z] "!"').compile(vocab)
    m = nextok.Matcher(cg)
    assert m.forced_bytes() == b"hello, "
    assert m.forced_bytes(limit=3) == b"hel"
    m.accept_bytes(m.forced_bytes())
    assert m.forced_bytes() == b""
    m.accept_bytes("ab")
    assert m.forced_bytes() == b"!"
    assert not m.is_accepting()
    m.accept_token(vocab.encode("!")[0])
    assert m.is_accepting() and m.is_complete() and not m.is_terminated()
    assert bits(m.fill_bitmask(), vocab.n_vocab).tolist() == [50256]  # only the end
    m.accept_token(50256)
    assert m.is_terminated()
    with pytest.raises(nextok.Error) as e:
        m.fill_bitmask()
    assert e.value.status == "ERR_STATE"
    with pytest.raises(TypeError):
        nextok.Matcher(nextok.Grammar.json())  # not compiled


# ---- zero copy ------------------------------------------------------------------


def test_fill_bitmask_out_is_written_in_place(vocab, json_cg):
    m = json_cg.matcher()
    want = m.fill_bitmask()
    w = m.n_words
    assert want.dtype == np.int32 and want.shape == (w,) == ((vocab.n_vocab + 31) // 32,)
    out = np.full(w, 0x5A5A5A5A, np.int32)
    ptr = out.__array_interface__["data"][0]
    got = m.fill_bitmask(out)
    assert got is out and out.__array_interface__["data"][0] == ptr
    assert np.array_equal(out, want)
    # a row of a [B, W] batch, by index= and as a view
    batch = np.full((4, w), -1, np.int32)
    assert m.fill_bitmask(batch, index=2) is batch
    assert np.array_equal(batch[2], want)
    assert (batch[[0, 1, 3]] == -1).all()
    row = batch[1]
    m.fill_bitmask(row)
    assert np.array_equal(batch[1], want)
    # wider rows (a model with more logits than tokens): the words past are zeroed
    wide = np.full(w + 3, -1, np.int32)
    m.fill_bitmask(wide)
    assert np.array_equal(wide[:w], want) and (wide[w:] == 0).all()
    with pytest.raises(ValueError, match="need at least"):
        m.fill_bitmask(np.zeros(w - 1, np.int32))
    with pytest.raises(ValueError, match="index"):
        m.fill_bitmask(np.zeros((2, w), np.int32))
    with pytest.raises(IndexError):
        m.fill_bitmask(batch, index=4)
    with pytest.raises(TypeError):
        m.fill_bitmask(np.zeros(w, np.int64))
    ro = np.zeros(w, np.int32)
    ro.flags.writeable = False
    with pytest.raises((ValueError, BufferError)):
        m.fill_bitmask(ro)
    assert (ro == 0).all()


def test_fill_bitmask_into_torch(vocab, json_cg):
    torch = pytest.importorskip("torch")
    m = json_cg.matcher()
    want = m.fill_bitmask()
    t = torch.full((2, m.n_words), -1, dtype=torch.int32)
    assert m.fill_bitmask(t, index=1) is t
    assert np.array_equal(t[1].numpy(), want) and (t[0] == -1).all()
    t1 = torch.zeros(m.n_words, dtype=torch.int32)
    m.fill_bitmask(t1)
    assert np.array_equal(t1.numpy(), want)


# ---- reference counts and threads --------------------------------------------------


def test_refcounts_do_not_leak(vocab, json_cg):
    m = json_cg.matcher()
    out = np.zeros(m.n_words, np.int32)
    batch = np.zeros((2, m.n_words), np.int32)
    text = '{"a": 1}'
    before = [sys.getrefcount(x) for x in (out, batch, text, json_cg, vocab)]
    for _ in range(500):
        m.fill_bitmask(out)
        m.fill_bitmask(batch, index=1)
        m.fill_bitmask()
        m.accept_bytes(text)
        try:
            m.accept_token(0)  # '!' after a complete value
        except nextok.Error:
            pass
        m.clone()
        m.reset()
        try:
            m.fill_bitmask(np.zeros(3, np.int32))
        except ValueError:
            pass
    after = [sys.getrefcount(x) for x in (out, batch, text, json_cg, vocab)]
    assert before == after


def test_clones_on_threads(vocab, json_cg):
    texts = ['{"t%d": [%d, "x"], "b": true}' % (i, i) for i in range(6)]
    root = json_cg.matcher()

    def masks_of(m, text):
        res = []
        for t in vocab.encode(text):
            res.append(m.fill_bitmask().copy())
            m.accept_token(t)
        return res

    want = [masks_of(root.clone(), t) for t in texts]
    got = [None] * len(texts)

    def work(i):
        got[i] = masks_of(root.clone(), texts[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g, w in zip(got, want):
        assert g is not None and len(g) == len(w)
        assert all(np.array_equal(a, b) for a, b in zip(g, w))
