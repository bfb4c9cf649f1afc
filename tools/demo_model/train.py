#!/usr/bin/python3
"""Train nextok's demo language model: an interpolated modified Kneser-Ney
n-gram model over the GPT-2 vocabulary, written in the binary format of
tools/demo_model/FORMAT.md (read by tools/nextok/model.c).

Only the Python standard library is used. Training has no randomness: the
same ids give a byte-identical model file (its sha256 is printed). The
sampler that prints example text is seeded (--seed).

Input: the corpus as GPT-2 token ids, either
  --ids FILE        one line of space-separated ids per corpus line (each
                    corpus line encoded on its own, its trailing "\\n"
                    included, no special tokens), or
  --nextok PATH --vocab TOKENIZER_JSON --corpus TEXT
                    tokenize each corpus line with one run of
                    `nextok encode --lines` (--write-ids keeps the result
                    for --ids next time).
The lines are concatenated into one token stream; the last --holdout share
of it is held out: the model is trained on the rest and its perplexity on
the held-out part is reported.

tools/demo_model/README.md has the exact commands that made the shipped
model and the numbers they printed.
"""

import argparse
import bisect
import hashlib
import json
import math
import os
import random
import struct
import subprocess
import sys
import time

MAGIC = b"NXTKNGRM"
VERSION = 1
HEADER_SIZE = 288
MAX_ORDER = 8
ID_BITS = 16                  # ids and counts are 16-bit in format version 1
ID_MASK = (1 << ID_BITS) - 1
START = ID_MASK               # the virtual token before the stream (never an id)
MAX_COUNT = 0xFFFF


def fail(msg):
    sys.exit("train.py: " + msg)


# ---------------------------------------------------------------- input

def read_ids_file(path):
    lines = []
    with open(path, "r", encoding="ascii") as f:
        for line in f:
            lines.append([int(x) for x in line.replace(",", " ").split()])
    return lines


def tokenize_with_nextok(nextok, vocab, corpus):
    # Each line is encoded on its own (`--lines`): encoding the file in one
    # piece would let the pre-tokenizer join a line's "\n" with the next
    # line's start.
    out = subprocess.run([nextok, "encode", "--vocab", vocab, "--text-file", corpus, "--lines"],
                         check=True, capture_output=True).stdout.decode("ascii")
    return [[int(x) for x in line.split(",") if x] for line in out.split("\n")[:-1]]


def write_ids_file(path, lines):
    with open(path, "w", encoding="ascii", newline="\n") as f:
        for ids in lines:
            f.write(" ".join(str(t) for t in ids) + "\n")


# ---------------------------------------------------------------- counting
#
# An n-gram is packed into one int, ID_BITS per id, the first id in the high
# bits: ints of the same length then sort in the n-grams' lexicographic order,
# and key >> ID_BITS is the n-gram's prefix, key & mask its suffix.

def kgram_keys(stream, k):
    """Every k-gram of the stream as a packed key, in stream order."""
    mask = (1 << (ID_BITS * k)) - 1
    key = 0
    for i, t in enumerate(stream):
        key = ((key << ID_BITS) | t) & mask
        if i >= k - 1:
            yield key


def count_ngrams(train, order):
    """counts[k] = {packed k-gram: count} for k = 1..order.

    The highest order keeps raw counts; lower orders keep Kneser-Ney
    continuation counts: the number of distinct tokens seen before the
    k-gram. A virtual START token stands before the stream, so every k-gram
    has a left context and a continuation count of at least 1."""
    counts = [None] * (order + 1)
    raw = {}
    for key in kgram_keys(train, order):
        raw[key] = raw.get(key, 0) + 1
    counts[order] = raw
    with_start = [START] + train
    for k in range(1, order):
        suffix_mask = (1 << (ID_BITS * k)) - 1
        cont = {}
        for key in set(kgram_keys(with_start, k + 1)):
            suffix = key & suffix_mask
            cont[suffix] = cont.get(suffix, 0) + 1
        counts[k] = cont
    return counts


def discounts(count_table):
    """Modified Kneser-Ney discounts D1, D2, D3+ for one order (Chen and
    Goodman 1998), from the counts of counts 1..4."""
    n = [0] * 5
    for c in count_table.values():
        if c <= 4:
            n[c] += 1
    if min(n[1:]) == 0:
        # Too little data for the estimate: a common fixed choice.
        return (0.5, 1.0, 1.5)
    y = n[1] / (n[1] + 2 * n[2])
    d = (1 - 2 * y * n[2] / n[1], 2 - 3 * y * n[3] / n[2], 3 - 4 * y * n[4] / n[3])
    # The format requires 0 < Di <= i: no count goes below zero, and every
    # order keeps some mass for the one below it.
    return tuple(min(max(v, 0.01), float(i + 1)) for i, v in enumerate(d))


# ---------------------------------------------------------------- the model in Python
#
# The same arithmetic as tools/nextok/model.c, for the held-out perplexity and
# the example text: P1 is the unigram distribution interpolated with the
# uniform one; each higher order k whose context (the last k-1 ids) was seen
# with followers gives
#     P_k(w) = max(c(hw) - D(c(hw)), 0) / T(h) + gamma(h) * P_{k-1}(w)
#     gamma(h) = (D1 N1(h) + D2 N2(h) + D3 N3+(h)) / T(h)
# where T(h) sums the followers' counts and Ni(h) counts followers of count i.
# An order whose context was never seen leaves P_{k-1} as it is.

class Model:
    def __init__(self, counts, disc, n_vocab):
        self.order = len(counts) - 1
        self.counts = counts
        self.disc = disc
        self.n_vocab = n_vocab
        self.stats = [None] + [self._context_stats(k) for k in range(1, self.order + 1)]
        self.unigram = self._unigram()
        self._sorted = None  # sorted keys per order, made when sampling needs them

    def _context_stats(self, k):
        """{packed context: (T, gamma)} for order k (context of k-1 ids)."""
        d1, d2, d3 = self.disc[k]
        acc = {}
        for key, c in self.counts[k].items():
            h = key >> ID_BITS
            s = acc.setdefault(h, [0, 0, 0, 0])
            s[0] += c
            s[min(c, 3)] += 1
        return {h: (t, (d1 * n1 + d2 * n2 + d3 * n3) / t) for h, (t, n1, n2, n3) in acc.items()}

    def _alpha(self, k, c, total):
        return max(c - self.disc[k][min(c, 3) - 1], 0.0) / total

    def _unigram(self):
        total, gamma = self.stats[1][0]
        p = [gamma / self.n_vocab] * self.n_vocab
        for w, c in self.counts[1].items():
            p[w] += self._alpha(1, c, total)
        return p

    def _contexts(self, ctx):
        """(k, packed context) for each order k >= 2 the context reaches."""
        key = 0
        for j in range(1, min(self.order - 1, len(ctx)) + 1):
            key |= ctx[-j] << (ID_BITS * (j - 1))
            yield j + 1, key

    def prob(self, ctx, w):
        p = self.unigram[w]
        for k, h in self._contexts(ctx):
            st = self.stats[k].get(h)
            if st is None:
                continue
            total, gamma = st
            c = self.counts[k].get((h << ID_BITS) | w, 0)
            p = (self._alpha(k, c, total) if c else 0.0) + gamma * p
        return p

    def distribution(self, ctx):
        """P(w | ctx) for every w, as the C code computes it: the highest
        order first, the sparse terms scaled by the gammas above them."""
        mult, acc = 1.0, {}
        for k, h in sorted(self._contexts(ctx), reverse=True):
            st = self.stats[k].get(h)
            if st is None:
                continue
            total, gamma = st
            lo, hi = h << ID_BITS, (h + 1) << ID_BITS
            for key, c in self._followers(k, lo, hi):
                acc[key & ID_MASK] = acc.get(key & ID_MASK, 0.0) + mult * self._alpha(k, c, total)
            mult *= gamma
        p = [mult * u for u in self.unigram]
        for w, a in acc.items():
            p[w] += a
        return p

    def _followers(self, k, lo, hi):
        if self._sorted is None:
            self._sorted = [None] + [sorted(self.counts[j]) for j in range(1, self.order + 1)]
        keys = self._sorted[k]
        i = bisect.bisect_left(keys, lo)
        while i < len(keys) and keys[i] < hi:
            yield keys[i], self.counts[k][keys[i]]
            i += 1


def perplexity(model, history, heldout):
    ctx = list(history[-(model.order - 1):]) if model.order > 1 else []
    logsum = 0.0
    for w in heldout:
        logsum += math.log(model.prob(ctx, w))
        ctx.append(w)
        if len(ctx) > model.order - 1:
            ctx.pop(0)
    return math.exp(-logsum / len(heldout))


# ---------------------------------------------------------------- the file

def pad8(b):
    return b + b"\0" * (-len(b) % 8)


def build_file(counts, disc, n_vocab):
    """The model file's bytes (FORMAT.md): header, then for each depth
    d = 1..order its ids, counts and (below the last depth) child offsets."""
    order = len(counts) - 1
    keys = [None] + [sorted(counts[d]) for d in range(1, order + 1)]
    header = bytearray(HEADER_SIZE)
    struct.pack_into("<8sIIII", header, 0, MAGIC, VERSION, n_vocab, order, 0)
    for d in range(1, order + 1):
        struct.pack_into("<Q", header, 24 + 8 * (d - 1), len(keys[d]))
        struct.pack_into("<3d", header, 88 + 24 * (d - 1), *disc[d])
    body = []
    for d in range(1, order + 1):
        ids = [k & ID_MASK for k in keys[d]]
        cnt = [counts[d][k] for k in keys[d]]
        if max(cnt) > MAX_COUNT:
            fail("a count of order %d is %d, over the format's 16 bits" % (d, max(cnt)))
        body.append(pad8(struct.pack("<%dH" % len(ids), *ids)))
        body.append(pad8(struct.pack("<%dH" % len(cnt), *cnt)))
        if d < order:
            body.append(pad8(struct.pack("<%dI" % (len(keys[d]) + 1),
                                         *child_offsets(keys[d], keys[d + 1]))))
    return bytes(header) + b"".join(body)


def child_offsets(parents, children):
    """off[i]..off[i+1]: the children of parents[i] (children whose key
    without its last id is parents[i]); both lists are sorted."""
    off = [0] * (len(parents) + 1)
    j = 0
    for i, p in enumerate(parents):
        while j < len(children) and (children[j] >> ID_BITS) < p:
            fail("an n-gram whose prefix is not in the table")
        while j < len(children) and (children[j] >> ID_BITS) == p:
            j += 1
        off[i + 1] = j
    if j != len(children):
        fail("an n-gram whose prefix is not in the table")
    return off


# ---------------------------------------------------------------- example text

def byte_decoder():
    """GPT-2's byte-level alphabet, inverted: the printable Latin-1 bytes
    stand for themselves, the others for 256 + n in byte order."""
    keep = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    dec, n = {}, 0
    for b in range(256):
        if b in keep:
            dec[chr(b)] = b
        else:
            dec[chr(256 + n)] = b
            n += 1
    return dec


def load_detok(vocab_path):
    with open(vocab_path, "r", encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    dec = byte_decoder()
    pieces = {i: bytes(dec[ch] for ch in tok) for tok, i in vocab.items()}
    return lambda ids: b"".join(pieces[i] for i in ids).decode("utf-8", "replace")


def generate(model, prompt, n, temperature, rng):
    ctx, out = list(prompt), []
    for _ in range(n):
        p = model.distribution(ctx)
        if temperature == 0:
            w = max(range(len(p)), key=lambda i: (p[i], -i))
        else:
            weights = [x ** (1.0 / temperature) for x in p]
            r = rng.random() * sum(weights)
            w, acc = len(p) - 1, 0.0
            for i, x in enumerate(weights):
                acc += x
                if r < acc:
                    w = i
                    break
        out.append(w)
        ctx.append(w)
    return out


# ---------------------------------------------------------------- main

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ids", help="corpus ids, one line of space-separated ids per corpus line")
    ap.add_argument("--nextok", help="the nextok CLI, to tokenize --corpus with --vocab")
    ap.add_argument("--corpus", help="corpus text (with --nextok)")
    ap.add_argument("--vocab",
                    help="GPT-2 tokenizer.json (with --nextok; also decodes the samples)")
    ap.add_argument("--write-ids", help="write the ids made by --nextok to this file")
    ap.add_argument("--order", type=int, default=4, help="n-gram order (default 4)")
    ap.add_argument("--n-vocab", type=int, default=50257, help="vocabulary size (default 50257)")
    ap.add_argument("--holdout", type=float, default=0.02,
                    help="share of the stream's end held out (default 0.02)")
    ap.add_argument("--out", help="the model file to write")
    ap.add_argument("--max-bytes", type=int, default=16_000_000,
                    help="refuse to write a bigger model (default 16000000)")
    ap.add_argument("--prompt-ids", default="5246,13,7491,948",
                    help='ids of the example text\'s prompt (default: "Mr. Darcy")')
    ap.add_argument("--sample-tokens", type=int, default=0,
                    help="print this many example tokens, greedy and at temperature 0.8 "
                         "(needs --vocab)")
    ap.add_argument("--seed", type=int, default=42, help="seed of the example sampler")
    a = ap.parse_args()
    if bool(a.ids) == bool(a.nextok):
        ap.error("give either --ids or --nextok (with --vocab and --corpus)")
    if a.nextok and not (a.vocab and a.corpus):
        ap.error("--nextok needs --vocab and --corpus")
    if a.sample_tokens and not a.vocab:
        ap.error("--sample-tokens needs --vocab")
    if not 1 <= a.order <= MAX_ORDER:
        ap.error("--order must be 1..%d" % MAX_ORDER)
    if not 1 <= a.n_vocab <= ID_MASK:
        ap.error("--n-vocab must be 1..%d (16-bit ids)" % ID_MASK)
    if not 0 <= a.holdout < 1:
        ap.error("--holdout must be in [0, 1)")
    return a


def load_stream(a):
    if a.ids:
        lines = read_ids_file(a.ids)
    else:
        lines = tokenize_with_nextok(a.nextok, a.vocab, a.corpus)
        if a.write_ids:
            write_ids_file(a.write_ids, lines)
    stream = [t for ids in lines for t in ids]
    bad = [t for t in stream if not 0 <= t < a.n_vocab]
    if bad:
        fail("id %d is outside the vocabulary of %d" % (bad[0], a.n_vocab))
    return lines, stream


def main():
    a = parse_args()
    t0 = time.time()
    lines, stream = load_stream(a)
    cut = len(stream) - int(len(stream) * a.holdout)
    train, heldout = stream[:cut], stream[cut:]
    if len(train) < a.order:
        fail("the training part has fewer tokens than the order")
    print("corpus: %d lines, %d tokens; training on %d, holding out %d"
          % (len(lines), len(stream), len(train), len(heldout)))

    counts = count_ngrams(train, a.order)
    disc = [None] + [discounts(counts[k]) for k in range(1, a.order + 1)]
    for k in range(1, a.order + 1):
        print("order %d: %8d n-grams, discounts %.4f %.4f %.4f" % ((k, len(counts[k])) + disc[k]))
    blob = build_file(counts, disc, a.n_vocab)
    t_train = time.time() - t0
    print("model: %d bytes, sha256 %s (%.1f s)"
          % (len(blob), hashlib.sha256(blob).hexdigest(), t_train))

    model = Model(counts, disc, a.n_vocab)
    if heldout:
        print("held-out perplexity: %.2f (%d tokens)"
              % (perplexity(model, train, heldout), len(heldout)))
    if a.out:
        if len(blob) > a.max_bytes:
            fail("the model is %d bytes, over --max-bytes %d" % (len(blob), a.max_bytes))
        with open(a.out, "wb") as f:
            f.write(blob)
        print("wrote", a.out)
    if a.sample_tokens:
        print_samples(a, model)


def print_samples(a, model):
    detok = load_detok(a.vocab)
    prompt = [int(x) for x in a.prompt_ids.split(",")]
    for temp in (0.0, 0.8):
        ids = generate(model, prompt, a.sample_tokens, temp, random.Random(a.seed))
        label = "greedy" if temp == 0 else "temperature %.1f, seed %d" % (temp, a.seed)
        print("--- %s:\n%s" % (label, detok(prompt + ids)))


if __name__ == "__main__":
    main()
