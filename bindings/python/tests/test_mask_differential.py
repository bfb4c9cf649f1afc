"""Masks against byte-by-byte acceptance, on random grammars and vocabularies.

Every token's bit in Matcher.fill_bitmask() must equal whether a clone of
the matcher accepts the token's bytes (accept_bytes walks the parser one
byte at a time; the mask comes from the loop path, frames, counted
repetition and the trie walk). The grammars are the shapes those paths
once got wrong: counted repetitions of wide classes beside loops and other
classes (regexes), and JSON Schemas with bounded strings, patterns, formats
and bounded arrays. Fixed seeds: the same grammars every run.
"""
import base64
import json
import random

import pytest

import nextok

ALPHABET = list(' !abcxyz019-.AB"\n\t:,{}[]@/_') + ["é", "\\"]
CLASSES = ["[ -~]", "[!-~]", '[^"\\\\]', "[A-Za-z0-9 -]", "[a-z0-9 .!-]", ".", "[^a]", "[ -z]"]
TAILS = ["", "a", "ab", "a*", " *", "[a-c]+", "(a\\t)?", "(aé)?", "!", '"', "x?y",
         "[ -~]{0,2}b", "\\n"]
PATTERNS = ["^[A-Za-z0-9 -]{3,10}$", "^[^/\\\\]+\\.[A-Za-z0-9]{1,5}$", "^[a-z]+$",
            "^x[0-9]{2,4}$", "^[ -~]{0,6}b$", "^.{2,5}$"]
FORMATS = ["email", "hostname", "uri", "date", "uuid", "ipv4"]


def random_vocab(rng, tmp_path, extra=2000):
    toks = {bytes([b]) for b in range(256)}
    while len(toks) < 256 + extra:
        toks.add("".join(rng.choice(ALPHABET) for _ in range(rng.randint(2, 12))).encode())
    path = tmp_path / "random.tiktoken"
    path.write_text("".join("%s %d\n" % (base64.b64encode(t).decode(), i)
                            for i, t in enumerate(sorted(toks))))
    return nextok.Vocab.load(str(path))


def random_regex(rng):
    parts = [rng.choice(["", '"', "x"])]
    for _ in range(rng.randint(1, 2)):
        c = rng.choice(CLASSES)
        m = rng.randint(0, 4)
        parts.append("%s{%d,%d}" % (c, m, m + rng.randint(0, 12)) if rng.random() < 0.8 else c + "*")
        parts.append(rng.choice(TAILS))
    return "".join(parts)


def random_value(rng, depth):
    r = rng.random()
    if depth < 2 and r < 0.25:
        return {"type": "array", "items": random_value(rng, depth + 1), "maxItems": rng.randint(1, 60)}
    if depth < 2 and r < 0.45:
        return random_object(rng, depth + 1)
    if r < 0.55:
        return {"type": "integer", "minimum": 0, "maximum": rng.randint(1, 5000)}
    s, r = {"type": "string"}, rng.random()
    if r < 0.3:
        s["pattern"] = rng.choice(PATTERNS)
    elif r < 0.5:
        s["format"] = rng.choice(FORMATS)
    elif r < 0.8:
        s["maxLength"] = rng.randint(1, 40)
        s["minLength"] = rng.randint(0, s["maxLength"])
    return s


def random_object(rng, depth=0):
    props = {k: random_value(rng, depth) for k in rng.sample(["name", "email", "tags", "x", "id"],
                                                             rng.randint(1, 3))}
    obj = {"type": "object", "properties": props}
    if rng.random() < 0.5:
        obj["additionalProperties"] = False
    if rng.random() < 0.5:
        obj["required"] = list(props)[:1]
    return obj


def check_walk(grammar, vocab, rng, steps):
    """Masks against accept_bytes along a random walk; the mismatches."""
    pieces = [vocab.token_bytes(i) for i in range(vocab.n_vocab)]
    m = grammar.compile(vocab).matcher()
    bad = []
    for step in range(steps):
        mask = m.fill_bitmask()
        allowed = []
        for t, piece in enumerate(pieces):
            bit = (int(mask[t >> 5]) >> (t & 31)) & 1
            c = m.clone()
            try:
                c.accept_bytes(piece)
                ref = 1
            except nextok.Error:
                ref = 0
            if bit != ref:
                bad.append((step, piece, bit))
            if ref:
                allowed.append(t)
        if not allowed or bad:
            break
        m.accept_token(rng.choice(allowed))
    return bad


@pytest.mark.parametrize("seed", [1, 53])
def test_counted_regexes(tmp_path, seed):
    rng = random.Random(seed)
    vocab = random_vocab(rng, tmp_path)
    for _ in range(12):
        pattern = random_regex(rng)
        bad = check_walk(nextok.Grammar.regex(pattern), vocab, rng, 10)
        assert not bad, (pattern, bad[:3])


@pytest.mark.parametrize("seed", [4, 6])
def test_schema_objects(tmp_path, seed):
    rng = random.Random(seed)
    vocab = random_vocab(rng, tmp_path)
    for _ in range(8):
        schema = random_object(rng)
        order = rng.choice(["schema", "any"])
        grammar = nextok.Grammar.json_schema(schema, property_order=order)
        bad = check_walk(grammar, vocab, rng, 20)
        assert not bad, (json.dumps(schema), order, bad[:3])
