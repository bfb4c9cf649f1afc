#!/usr/bin/env python3
"""Checks that llama.cpp and nextok tokenize a text file to the same ids.

usage: check_ids.py TOKENIZE_BENCH NEXTOK VOCAB TEXTFILE

Both tokenize the whole file as one string, no BOS/EOS, special tokens as
plain text: `TOKENIZE_BENCH --dump-ids VOCAB TEXTFILE` against
`NEXTOK encode --vocab VOCAB --text-file TEXTFILE --no-bos --no-eos`.
Prints one line, `same  N ids` or `DIFF at id I of N/M ...` followed by the
text around the first difference (by llama.cpp's byte offsets) and the ids and
pieces of both sides there. Exit status 0 when the ids are equal, 1 when they
differ, 2 when a tool failed.
"""
import json
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write("check_ids: %s failed (%d): %s\n"
                         % (" ".join(cmd), p.returncode,
                            p.stderr.decode("utf-8", "replace").strip()))
        sys.exit(2)
    return p.stdout


def parse_ids(out):
    s = out.decode("ascii").strip()
    return [int(x) for x in s.split(",")] if s else []


def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    bench, nextok, vocab, text = sys.argv[1:]
    nx_cmd = [nextok, "encode", "--vocab", vocab, "--text-file", text,
              "--no-bos", "--no-eos"]
    a = parse_ids(run([bench, "--dump-ids", vocab, text]))
    b = parse_ids(run(nx_cmd))
    if a == b:
        print("same  %d ids" % len(a))
        return 0

    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    la = json.loads(run([bench, "--json-ids", vocab, text]).decode("utf-8", "replace"))
    try:
        nb = json.loads(run(nx_cmd + ["--json"]).decode("utf-8", "replace"))
        npieces = nb.get("pieces", [])
    except (ValueError, SystemExit):
        npieces = []
    data = open(text, "rb").read()
    offs = la["offsets"]
    off = offs[i] if i < len(offs) else len(data)
    print("DIFF at id %d (llama.cpp %d ids, nextok %d ids), near byte %d"
          % (i, len(a), len(b), off))
    lo, hi = max(0, off - 60), min(len(data), off + 60)
    print("  text[%d:%d]  %r" % (lo, off, data[lo:off].decode("utf-8", "replace")))
    print("  text[%d:%d]  %r" % (off, hi, data[off:hi].decode("utf-8", "replace")))
    s, e = max(0, i - 3), i + 6

    def side(name, ids, pieces):
        cells = []
        for k in range(s, min(e, len(ids))):
            p = pieces[k] if k < len(pieces) else "?"
            cells.append("%s%d %r" % ("*" if k == i else "", ids[k], p))
        print("  %-9s [%d..] %s" % (name, s, " | ".join(cells)))

    side("llama.cpp", a, la["pieces"])
    side("nextok", b, npieces)
    return 1


if __name__ == "__main__":
    sys.exit(main())
