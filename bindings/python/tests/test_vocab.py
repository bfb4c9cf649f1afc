"""nextok.Vocab: loading every format, decode and encode against golden ids
made by the reference tokenizers and against the CLI, token queries, input
kinds (lists, numpy, torch), errors, reference counts and threads."""
import json
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import nextok
from conftest import BUILD, DATA

GPT2_JSON = os.path.join(DATA, "vocab", "hf", "gpt2", "tokenizer.json")
MISTRAL_DIR = os.path.join(DATA, "vocab", "hf", "mistral-7b-v0.1")
GPT2_GGUF = os.path.join(DATA, "vocab", "gguf", "ggml-vocab-gpt-2.gguf")
PHI3_GGUF = os.path.join(DATA, "vocab", "gguf", "ggml-vocab-phi-3.gguf")
BERT_GGUF = os.path.join(DATA, "vocab", "gguf", "ggml-vocab-bert-bge.gguf")
O200K = os.path.join(DATA, "vocab", "tiktoken", "o200k_base.tiktoken")
CLI = os.environ.get("NEXTOK_CLI", os.path.join(BUILD, "nextok"))


@pytest.fixture(scope="module")
def gpt2():
    return nextok.Vocab.load(GPT2_JSON)


@pytest.fixture(scope="module")
def mistral():
    return nextok.Vocab.load(MISTRAL_DIR)


@pytest.fixture(scope="module")
def o200k():
    return nextok.Vocab.load(O200K)


def cli_bytes(*args):
    """The CLI's stdout as bytes (exit status checked)."""
    out = subprocess.run([CLI, *map(str, args)], capture_output=True)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    return out.stdout


# ---- loading ------------------------------------------------------------------------


@pytest.mark.parametrize("path,kind,n_vocab,eog", [
    (GPT2_JSON, "bpe", 50257, [50256]),
    (MISTRAL_DIR, "spm", 32000, [2]),
    (GPT2_GGUF, "bpe", 50257, [50256]),
    (PHI3_GGUF, "spm", 32064, [32000, 32007]),
    (BERT_GGUF, "wpm", 30522, []),
    (O200K, "tiktoken", 200019, [199999]),
])
def test_load_every_format(path, kind, n_vocab, eog):
    v = nextok.Vocab.load(path)
    assert v.vocab_type == kind
    assert v.n_vocab == n_vocab == len(v)
    assert v.eog_ids == eog
    assert all(v.is_eog(i) for i in eog)
    assert repr(v) == f"<nextok.Vocab {kind}, n_vocab={n_vocab}>"


def test_load_forced_type_and_pathlike():
    a = nextok.Vocab.load(pathlib.Path(GPT2_GGUF), type="gguf")
    b = nextok.Vocab.load(GPT2_JSON.encode(), type="hf")
    assert a.n_vocab == b.n_vocab == 50257
    assert a.decode([15496, 995]) == b.decode([15496, 995]) == b"Hello world"
    # the tokenizer.json read as GGUF is not GGUF
    with pytest.raises(nextok.Error) as e:
        nextok.Vocab.load(GPT2_JSON, type="gguf")
    assert e.value.status == "ERR_FORMAT"
    with pytest.raises(ValueError, match="type"):
        nextok.Vocab.load(GPT2_JSON, type="sentencepiece")


def test_load_bad_path_raises_io():
    with pytest.raises(nextok.Error) as e:
        nextok.Vocab.load("/no/such/dir/tokenizer.json")
    assert e.value.status == "ERR_IO"
    assert e.value.code == -8
    assert "/no/such/dir/tokenizer.json" in str(e.value)


def test_load_malformed_names_the_place(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "BPE", "vocab": {"a": "x"}}}')
    with pytest.raises(nextok.Error) as e:
        nextok.Vocab.load(bad)
    assert e.value.status == "ERR_FORMAT"
    assert "model.vocab" in str(e.value)


def test_tiktoken_special_tokens_and_from_bytes(tmp_path):
    # a small ranks file: the first 300 lines of o200k
    with open(O200K, "rb") as f:
        lines = f.read().split(b"\n")[:300]
    path = tmp_path / "small.tiktoken"
    path.write_bytes(b"\n".join(lines) + b"\n")
    v = nextok.Vocab.load(path, special_tokens={"<|end|>": 300})
    assert v.n_vocab == 301
    assert v.is_special(300) and not v.is_special(5)
    assert v.decode([300]) == b"<|end|>"
    # decodes, but cannot encode: the split pattern of a 300-rank file is unknown
    with pytest.raises(nextok.Error) as e:
        v.encode("<|end|>", parse_special=True)
    assert e.value.status == "ERR_UNSUPPORTED"
    assert "split pattern" in str(e.value)
    with pytest.raises(ValueError, match="special_tokens"):
        nextok.Vocab.load(GPT2_JSON, type="gguf", special_tokens={"x": 1})
    w = nextok.Vocab.from_bytes(path.read_bytes())
    assert w.n_vocab == 300
    assert w.decode(range(0, 300, 7)) == v.decode(range(0, 300, 7))
    with open(GPT2_JSON, "rb") as f:
        assert nextok.Vocab.from_bytes(f.read()).encode("Hello world") == [15496, 995]


def test_not_constructible():
    with pytest.raises(TypeError):
        nextok.Vocab()


# ---- decode ------------------------------------------------------------------------


@pytest.mark.parametrize("name,fixture", [("gpt2", "gpt2"), ("mistral-7b-v0.1", "mistral")])
def test_decode_golden(request, name, fixture):
    """Ids made by HF tokenizers decode to their text; token_bytes are each
    token's bytes as the reference lists them."""
    v = request.getfixturevalue(fixture)
    with open(os.path.join(DATA, "vocab", "golden", "encodings.json")) as f:
        cases = json.load(f)["vocabs"][name]
    assert len(cases) >= 10
    for case in cases:
        got = v.decode(case["ids"]).decode()
        want = case["text"]
        if name == "gpt2":
            assert got == want
        elif "</s>" not in want:  # SentencePiece: the text up to the dummy prefix
            assert got.strip() == want.strip()
        assert [v.token_bytes(i).hex() for i in case["ids"]][1:] == case["token_bytes_hex"][1:]


def test_decode_matches_cli(gpt2, mistral, rng):
    for path, v in ((GPT2_JSON, gpt2), (MISTRAL_DIR, mistral)):
        ids = rng.integers(0, v.n_vocab, 300).tolist()
        ids += [v.eog_ids[0], 5, 6]
        arg = ",".join(map(str, ids))
        assert v.decode(ids) == cli_bytes("detok", "--vocab", path, "--tokens", arg)
        assert v.decode(ids, skip_special_tokens=True) == cli_bytes(
            "detok", "--vocab", path, "--tokens", arg, "--skip-special")
        assert v.decode(ids, spaces_between_special_tokens=True) == cli_bytes(
            "detok", "--vocab", path, "--tokens", arg, "--spaces-between-special")


def test_decode_is_valid_utf8_with_replacements(gpt2):
    # 12520 99 are the first two bytes of a 4-byte emoji; alone they are U+FFFD
    assert gpt2.decode([12520, 99, 222]) == " 🦀".encode()
    assert gpt2.decode([12520, 99]) == " \ufffd".encode()
    assert gpt2.decode([]) == b""


def test_decode_input_kinds(gpt2):
    torch = pytest.importorskip("torch")
    ids = [15496, 995, 11, 12520, 99, 222]
    want = gpt2.decode(ids)
    assert want == "Hello world, 🦀".encode()
    for obj in (tuple(ids), np.array(ids, np.int32), np.array(ids, np.int64),
                np.array(ids, np.int32)[None, :], np.repeat(np.array(ids, np.int32), 2)[::2],
                torch.tensor(ids, dtype=torch.int32), torch.tensor(ids), iter(ids),
                [np.int64(i) for i in ids]):
        assert gpt2.decode(obj) == want, type(obj)
    with pytest.raises(TypeError):
        gpt2.decode("Hello")
    with pytest.raises(TypeError):
        gpt2.decode([1, "2"])
    with pytest.raises(TypeError):
        gpt2.decode([1.5])
    with pytest.raises(OverflowError):
        gpt2.decode([2**40])
    with pytest.raises(ValueError):
        gpt2.decode(np.zeros((2, 3), np.int32))
    with pytest.raises(nextok.Error) as e:
        gpt2.decode([5, 50257])
    assert e.value.status == "ERR_TOKEN_RANGE"
    assert "ids[1]" in str(e.value)
    with pytest.raises(nextok.Error):
        gpt2.decode([-1])


def test_decode_long_input_matches_cli(gpt2, rng):
    """Past the first buffer and the GIL threshold."""
    ids = rng.integers(0, 50000, 5000).astype(np.int32)
    whole = gpt2.decode(ids)
    assert len(whole) > 1024
    assert whole == cli_bytes("detok", "--vocab", GPT2_JSON, "--tokens", ",".join(map(str, ids)))


# ---- encode ------------------------------------------------------------------------


def strings_cases():
    with open(os.path.join(DATA, "encode", "strings.json")) as f:
        return json.load(f)["cases"]


@pytest.mark.parametrize("name,fixture", [("gpt2", "gpt2"), ("mistral-7b-v0.1", "mistral"),
                                          ("o200k", "o200k")])
def test_encode_reference_strings(request, name, fixture):
    """The three columns of strings.json: plain text, special tokens parsed,
    and BOS/EOS added as the tokenizer says."""
    v = request.getfixturevalue(fixture)
    cases = strings_cases()
    assert len(cases) == 75
    for case in cases:
        text = case["text"]
        assert v.encode(text, add_special_tokens=False) == case["ids"][name], text
        assert v.encode(text, add_special_tokens=False, parse_special=True) == \
            case["ids_special"][name], text
        assert v.encode(text, parse_special=True) == case["ids_add_special"][name], text


@pytest.mark.parametrize("gguf", ["ggml-vocab-gpt-2.gguf", "ggml-vocab-phi-3.gguf",
                                  "ggml-vocab-bert-bge.gguf"])
def test_encode_llama_cpp_pairs(gguf):
    v = nextok.Vocab.load(os.path.join(DATA, "vocab", "gguf", gguf))
    with open(os.path.join(DATA, "llama.cpp", gguf + ".inp"), encoding="utf-8") as f:
        texts = f.read().split("\n__ggml_vocab_test__\n")[:-1]
    with open(os.path.join(DATA, "llama.cpp", gguf + ".out")) as f:
        outs = f.read().split("\n")
    assert len(texts) == 46
    for text, out in zip(texts, outs):
        assert v.encode(text, add_special_tokens=False) == [int(x) for x in out.split()], text


def test_encode_matches_cli(gpt2, mistral):
    for path, v in ((GPT2_JSON, gpt2), (MISTRAL_DIR, mistral)):
        for text in ("Hello world", "  leading spaces\tand\ttabs\n", "naïve café 🦀 <s> </s>"):
            line = cli_bytes("encode", "--vocab", path, "--text", text).decode().strip()
            assert v.encode(text) == [int(x) for x in line.split(",")]
            line = cli_bytes("encode", "--vocab", path, "--text", text, "--parse-special",
                             "--no-bos").decode().strip()
            assert v.encode(text, parse_special=True, add_special_tokens=False) == \
                [int(x) for x in line.split(",")]


def test_encode_defaults_and_bytes(mistral, gpt2):
    # add_special_tokens=True adds BOS as the tokenizer says; special text is plain text
    assert mistral.adds_bos and not mistral.adds_eos
    ids = mistral.encode("Hello </s>")
    assert ids[0] == mistral.special_id("bos") == 1
    assert 2 not in ids
    assert mistral.encode("Hello </s>", parse_special=True)[-1] == 2
    assert mistral.encode("Hello", add_special_tokens=False)[0] != 1
    text = "héllo wörld 🦀"
    assert gpt2.encode(text.encode()) == gpt2.encode(text) == gpt2.encode(bytearray(text.encode()))
    assert gpt2.decode(gpt2.encode(text)).decode() == text
    long = "The quick brown fox jumps over the lazy dog. " * 400  # past the GIL threshold
    ids = gpt2.encode(long)
    assert len(ids) > 256  # past the first buffer
    assert gpt2.decode(ids).decode() == long
    line = cli_bytes("encode", "--vocab", GPT2_JSON, "--text", long).decode().strip()
    assert ids == [int(x) for x in line.split(",")]
    with pytest.raises(nextok.Error) as e:
        gpt2.encode(b"abc\xff")
    assert e.value.status == "ERR_INVALID_ARG"
    with pytest.raises(TypeError):
        gpt2.encode(123)


# ---- single tokens ------------------------------------------------------------------


def test_token_queries(gpt2, mistral):
    assert gpt2.token_bytes(995) == b" world"
    assert gpt2.token_text(995) == "Ġworld".encode()
    assert gpt2.find("Ġworld") == 995
    assert gpt2.find(b"\xc4\xa0world") == 995
    assert gpt2.find("no such token text") is None
    assert gpt2.special_id("eos") == 50256
    assert gpt2.special_id("pad") is None
    assert gpt2.is_special(50256) and not gpt2.is_special(995)
    assert mistral.token_bytes(13) == b"\n"  # <0x0A>
    assert mistral.token_text(13) == b"<0x0A>"
    assert mistral.special_id("bos") == 1 and mistral.special_id("unk") == 0
    with pytest.raises(ValueError):
        gpt2.special_id("start")
    for bad in (-1, 50257):
        with pytest.raises(nextok.Error) as e:
            gpt2.token_bytes(bad)
        assert e.value.status == "ERR_TOKEN_RANGE"


# ---- reference counts and threads ---------------------------------------------------


def test_refcounts_do_not_leak(gpt2):
    ids = [15496, 995, 11]
    arr = np.array(ids, np.int32)
    text = "Hello world, Hello"
    before = [sys.getrefcount(x) for x in (ids, arr, text, gpt2)]
    for _ in range(2000):
        gpt2.decode(ids)
        gpt2.decode(arr)
        gpt2.encode(text)
        gpt2.token_bytes(5)
        try:
            gpt2.decode([1, -5])
        except nextok.Error:
            pass
    after = [sys.getrefcount(x) for x in (ids, arr, text, gpt2)]
    assert before == after


def test_threads_share_one_vocab(gpt2, rng):
    texts = ["thread %d: The quick brown fox, naïve café 🦀 " % i * 30 for i in range(8)]
    want = [gpt2.encode(t) for t in texts]
    got = [None] * len(texts)
    errors = []

    def work(i):
        try:
            for _ in range(20):
                ids = gpt2.encode(texts[i])
                assert ids == want[i]
                assert gpt2.decode(ids).decode() == texts[i]
            got[i] = ids
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert got == want
