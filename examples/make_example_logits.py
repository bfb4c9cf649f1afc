#!/usr/bin/env python3
"""Write examples/logits-example.npy: made-up GPT-2 logits for the next token of
"The cat sat on the".

float32, shape (50257,), GPT-2 token ids. A fixed-seed normal background plus
hand-picked logits for plausible next words, so that `nextok explain` has a
readable distribution to show. Standard library only; the .npy header is
written by hand (format version 1.0).

    python3 examples/make_example_logits.py [tokenizer.json] [out.npy]
"""
import json
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
N_VOCAB = 50257
SEED = 20240521

# next words after "The cat sat on the" and their logits (background ~ N(-2, 1.5))
WORDS = [
    (" mat", 13.0), (" floor", 12.4), (" couch", 12.0), (" bed", 11.6),
    (" roof", 11.2), (" table", 10.9), (" windows", 10.5), (" chair", 10.3),
    (" sofa", 10.1), (" edge", 9.9), (" ground", 9.7), (" porch", 9.5),
    (" carpet", 9.3), (" rug", 9.1), (" window", 8.9), (" lap", 8.7),
    (" desk", 8.5), (" fence", 8.3), (" keyboard", 8.1), (" steps", 7.9),
    (" pillow", 7.7), (" bench", 7.5), (" grass", 7.3), (" ledge", 7.1),
    (" top", 7.0), (" back", 6.8), (" sidewalk", 6.6), (" shelf", 6.4),
    (" laptop", 6.2), (" blanket", 6.0), (" counter", 5.8), (" doorstep", 5.6),
]


def token_ids(tokenizer_path):
    with open(tokenizer_path, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    if len(vocab) != N_VOCAB:
        sys.exit(f"{tokenizer_path}: {len(vocab)} tokens, expected GPT-2's {N_VOCAB}")
    ids = []
    for word, logit in WORDS:
        key = word.replace(" ", "\u0120")  # byte-level BPE writes a space as 'Ġ'
        if key not in vocab:
            sys.exit(f"{tokenizer_path}: {word!r} is not a single GPT-2 token")
        ids.append((vocab[key], logit))
    return ids


def npy_bytes(values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    # pad with spaces so that magic + version + length + header is a multiple of 64
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")
            + struct.pack("<%df" % len(values), *values))


def main():
    tok = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "gpt2-tokenizer.json")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "logits-example.npy")
    rng = random.Random(SEED)
    logits = [rng.gauss(-2.0, 1.5) for _ in range(N_VOCAB)]
    for tid, logit in token_ids(tok):
        logits[tid] = logit
    logits[50256] = -4.0  # <|endoftext|>: unlikely mid-sentence
    with open(out, "wb") as f:
        f.write(npy_bytes(logits))
    print(f"wrote {out}: float32 [{N_VOCAB}]")


if __name__ == "__main__":
    main()
