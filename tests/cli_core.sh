#!/usr/bin/env bash
# CLI tests for `nextok probs|sample|explain|bench` and the shared flag/file handling
# (grammars: cli_grammar.sh).
#
#   bash tests/cli_core.sh <path-to-nextok> <source-dir> <fixture-dir>
#
# Needs bash and python3 (standard library only). Logits files (.npy, .f32,
# .f16, .bf16) are generated into a temporary directory; vocabularies come from
# <fixture-dir> (tests/data). Prints "N passed, N failed" and exits non-zero if
# anything failed.
set -u

NEXTOK=${1:?usage: cli_core.sh <nextok> <source-dir> <fixture-dir>}
SRC=${2:?usage: cli_core.sh <nextok> <source-dir> <fixture-dir>}
DATA=${3:?usage: cli_core.sh <nextok> <source-dir> <fixture-dir>}
case $NEXTOK in /*) ;; *) NEXTOK=$PWD/$NEXTOK ;; esac
[ -x "$NEXTOK" ] || { echo "cli_core.sh: $NEXTOK is not executable"; exit 1; }
command -v python3 >/dev/null || { echo "cli_core.sh: python3 is required"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/nextok-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASS=0
FAIL=0

pass() { PASS=$((PASS + 1)); }
fail() { FAIL=$((FAIL + 1)); echo "FAIL: $*"; }

# run ARGS...: run nextok, keeping stdout/stderr/status in $T/out, $T/err, $RC
run() {
    "$NEXTOK" "$@" >"$T/out" 2>"$T/err"
    RC=$?
}

# ---------------------------------------------------------------------------
# Python helper: fixtures and JSON checks
# ---------------------------------------------------------------------------
cat >"$T/h.py" <<'PY'
import json, math, os, struct, sys

def npy(path, values, shape=None, descr="<f4", fortran=False, extra=b"", header=None,
        version=1, cut=0):
    shape = shape if shape is not None else (len(values),)
    fmt = {"<f4": "<%df", ">f4": ">%df", "<f2": "<%de", "<f8": "<%dd"}[descr]
    data = struct.pack(fmt % len(values), *values)
    if header is None:
        sh = "(%s)" % "".join("%d, " % d for d in shape) if len(shape) != 1 else "(%d,)" % shape[0]
        sh = sh.replace(", )", ")")
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
            descr, "True" if fortran else "False", sh)
    pre = 10 if version == 1 else 12
    header += " " * ((64 - (pre + len(header) + 1) % 64) % 64) + "\n"
    hb = header.encode("latin1")
    lenb = struct.pack("<H", len(hb)) if version == 1 else struct.pack("<I", len(hb))
    blob = b"\x93NUMPY" + bytes([version, 0]) + lenb + hb + data + extra
    with open(path, "wb") as f:
        f.write(blob[:len(blob) - cut] if cut else blob)

def raw(path, values, fmt):
    with open(path, "wb") as f:
        if fmt == "bf16":
            for v in values:
                f.write(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:])
        else:
            f.write(struct.pack("<%d%s" % (len(values), {"f32": "f", "f16": "e"}[fmt]), *values))

def gen(d):
    a4 = [1.0, 2.0, 3.0, 0.5]
    j = lambda n: os.path.join(d, n)
    npy(j("a4.npy"), a4)
    npy(j("a4_f16.npy"), a4, descr="<f2")
    npy(j("a4_v2.npy"), a4, version=2)
    raw(j("a4.f32"), a4, "f32")
    raw(j("a4.f16"), a4, "f16")
    raw(j("a4.bf16"), a4, "bf16")
    npy(j("ties.npy"), [3.0, 2.0, 2.0, 1.0])
    npy(j("eq.npy"), [1.0, 3.0, 3.0, 2.0])
    npy(j("v60.npy"), [0.1 * i for i in range(60)])
    npy(j("flat64.npy"), [0.0] * 64)
    npy(j("rows.npy"), [0.0, 1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 0.0, 5.0, 0.0, 0.0, 0.0], shape=(3, 4))
    npy(j("posinf.npy"), [0.0, float("inf"), 1.0, float("inf")])
    raw(j("nan.f32"), [1.0, 2.0, float("nan"), 0.5], "f32")
    raw(j("neginf.f32"), [float("-inf")] * 4, "f32")
    # malformed
    npy(j("fortran.npy"), a4, fortran=True)
    npy(j("f8.npy"), a4, descr="<f8")
    npy(j("be.npy"), a4, descr=">f4")
    npy(j("trunc.npy"), a4, cut=3)
    npy(j("trailing.npy"), a4, extra=b"\0\0\0\0")
    npy(j("3d.npy"), a4, shape=(1, 2, 2))
    npy(j("empty.npy"), [], shape=(0,))
    npy(j("baddict.npy"), a4, header="{'descr': '<f4', 'fortran_order': False, 'shape': (4,) ")
    npy(j("nokey.npy"), a4, header="{'descr': '<f4', 'shape': (4,), }")
    npy(j("badshape.npy"), a4, header="{'descr': '<f4', 'fortran_order': False, 'shape': (4x,), }")
    # control bytes in the header: an ESC sequence, BEL and a C1 CSI
    npy(j("ctl_descr.npy"), a4,
        header="{'descr': '\x1b[31m<f4\x07', 'fortran_order': False, 'shape': (4,), }")
    npy(j("ctl_key.npy"), a4, header="{'\x1b]0;owned\x07': 1, }")
    npy(j("c1_descr.npy"), a4, header="{'descr': '>\x9b2J', 'fortran_order': False, 'shape': (4,), }")
    with open(j("magic.npy"), "wb") as f:
        f.write(b"NOTNUMPY" + b"\0" * 64)
    with open(j("hdrlen.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\xff\x7f{'descr'")
    open(j("empty.f32"), "wb").close()
    with open(j("odd.f32"), "wb") as f:
        f.write(b"\0" * 5)
    with open(j("logits.txt"), "w") as f:
        f.write("1 2 3\n")
    with open(j("garbage-vocab.txt"), "w") as f:
        f.write("hello world\n")
    g = [0.0] * 50257
    g[447], g[198], g[50256] = 10.0, 9.0, 8.0   # GPT-2: b"\xe2\x80" (part of a char), "\n", <|endoftext|>
    npy(j("gpt2ish.npy"), g)

def load(path):
    with open(path) as f:
        doc = json.load(f)
    assert isinstance(doc, list) and doc, "not a non-empty JSON array"
    for e in doc:
        assert set(e) >= {"id", "p"} and isinstance(e["id"], int), "bad entry %r" % (e,)
    for a, b in zip(doc, doc[1:]):
        assert a["p"] > b["p"] or (a["p"] == b["p"] and a["id"] < b["id"]), "not sorted: %r %r" % (a, b)
    assert abs(sum(e["p"] for e in doc) - 1.0) < 1e-5, "p does not sum to 1"
    return doc

def softmax(ls):
    m = max(ls)
    e = [math.exp(x - m) for x in ls]
    z = sum(e)
    return [x / z for x in e]

def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]

def llama60():
    """llama profile defaults on v60: top_k 40 (exact) -> top_p 0.95 -> min_p 0.05 -> temp 0.8"""
    c = sorted(((f32(0.1 * i), i) for i in range(60)), key=lambda t: (-t[0], t[1]))[:40]
    p = softmax([l for l, _ in c])
    cum, keep = 0.0, 0
    for q in p:
        cum += q
        keep += 1
        if cum >= 0.95:
            break
    c = c[:keep]
    c = [(l, i) for l, i in c if l >= c[0][0] + math.log(f32(0.05))]
    return [i for _, i in c], softmax([l / f32(0.8) for l, _ in c])

def expect(path, ids, ps):
    doc = load(path)
    got = [e["id"] for e in doc]
    assert got == ids, "ids %r, want %r" % (got, ids)
    for e, p in zip(doc, ps):
        assert abs(e["p"] - p) <= 1e-6 + 1e-5 * p, "id %d: p %r, want %r" % (e["id"], e["p"], p)

def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(args[0])
    elif cmd == "json":      # json OUT: valid, sorted, sums to 1
        load(args[0])
    elif cmd == "count":     # count OUT N
        n = len(load(args[0]))
        assert n == int(args[1]), "%d entries, want %s" % (n, args[1])
    elif cmd == "expect":    # expect OUT ids logits [temp]: p = softmax(logits / temp)
        ids = [int(x) for x in args[1].split(",")]
        ls = [float(x) for x in args[2].split(",")]
        t = float(args[3]) if len(args) > 3 else 1.0
        expect(args[0], ids, softmax([l / t for l in ls]))
    elif cmd == "llama60":
        ids, ps = llama60()
        expect(args[0], ids, ps)
    elif cmd == "top":       # top OUT ID: the most likely token is ID
        doc = load(args[0])
        assert doc[0]["id"] == int(args[1]), "top id %d, want %s" % (doc[0]["id"], args[1])
    elif cmd == "text":      # text OUT KEY: "text" fields against a built-in table
        want = {"mat": {2603: " mat", 4314: " floor"},
                "bytes": {447: "\\xe2\\x80", 198: "\n", 50256: "<|endoftext|>"}}[args[1]]
        got = {e["id"]: e.get("text") for e in load(args[0])}
        for i, t in want.items():
            assert got.get(i) == t, "id %d: text %r, want %r" % (i, got.get(i), t)
    elif cmd == "explain":   # explain OUT: every stage of the "chain:" line has a section
        text = open(args[0]).read()
        chain = [l for l in text.splitlines() if l.startswith("chain: ")]
        assert chain, "no chain: line"
        names = chain[0][len("chain: "):].split(" -> ")
        for k, name in enumerate(names):
            assert ("stage %d: %s," % (k + 1, name)) in text, "no section for stage %s" % name
            assert any(l.split()[1:2] == [name] for l in text.splitlines()
                       if l.strip().startswith(str(k + 1) + " ")), "no summary row for %s" % name
        assert "removed" in text and "entropy" in text and "\nselected: token " in text
        if len(args) > 1:
            want = args[1].split(",")
            assert names == want, "chain %r, want %r" % (names, want)
    elif cmd == "bench":     # bench OUT ROWS: one JSON object, the keys issue 3 names
        doc = json.loads(open(args[0]).read())
        for k in ("ns_per_row", "read_pass_ns", "ratio_to_read_pass", "rows_per_s", "gb_per_s"):
            assert isinstance(doc.get(k), (int, float)) and doc[k] > 0, "%s: %r" % (k, doc.get(k))
        assert abs(doc["ratio_to_read_pass"] - doc["ns_per_row"] / doc["read_pass_ns"]) < 1e-3 * doc["ratio_to_read_pass"] + 1e-3
        assert doc["rows"] == int(args[1]) and doc["fused"] is True, "rows %r fused %r" % (doc["rows"], doc["fused"])
        if len(args) > 2:
            assert doc["vocab"] == int(args[2]), "vocab %r, want %s" % (doc["vocab"], args[2])
        if len(args) > 3:
            assert doc["allowed_fraction"] == float(args[3]), "allowed_fraction %r" % doc.get("allowed_fraction")
    else:
        sys.exit("unknown helper command " + cmd)

try:
    main()
except AssertionError as e:
    print(e)
    sys.exit(1)
PY

py() { python3 "$T/h.py" "$@"; }
python3 "$T/h.py" gen "$T" || { echo "cli_core.sh: could not generate fixtures"; exit 1; }

# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

# ok NAME ARGS...: exit 0, empty stderr
ok() {
    local name=$1
    shift
    run "$@"
    if [ "$RC" -ne 0 ]; then
        fail "$name: exit $RC: $(head -c 300 "$T/err")"
        return 1
    fi
    if [ -s "$T/err" ]; then
        fail "$name: unexpected stderr: $(head -c 300 "$T/err")"
        return 1
    fi
    return 0
}

# probs_check NAME HELPER-ARGS -- NEXTOK-ARGS...: `probs` then `h.py HELPER OUT ...`
probs_check() {
    local name=$1
    shift
    local helper=()
    while [ "$1" != "--" ]; do helper+=("$1"); shift; done
    shift
    ok "$name" probs "$@" || return
    local why
    if why=$(py "${helper[0]}" "$T/out" "${helper[@]:1}"); then pass; else fail "$name: $why"; fi
}

# bad NAME ARGS...: exit 2, exactly one stderr line, empty stdout
bad() {
    local name=$1
    shift
    run "$@"
    local lines
    lines=$(wc -l <"$T/err")
    if [ "$RC" -ne 2 ]; then
        fail "$name: exit $RC, want 2 (stderr: $(head -c 200 "$T/err"))"
    elif [ "$lines" -ne 1 ]; then
        fail "$name: $lines stderr lines, want 1: $(head -c 300 "$T/err")"
    elif [ -s "$T/out" ]; then
        fail "$name: stdout not empty: $(head -c 200 "$T/out")"
    elif ! grep -q '^nextok' "$T/err"; then
        fail "$name: stderr does not start with 'nextok': $(cat "$T/err")"
    else
        pass
    fi
}

# bad_msg NAME REGEX ARGS...: like bad, and stderr matches REGEX (grep -E -i)
bad_msg() {
    local name=$1 re=$2
    shift 2
    local before=$FAIL
    bad "$name" "$@"
    if [ "$FAIL" -eq "$before" ] && ! grep -Eqi -- "$re" "$T/err"; then
        PASS=$((PASS - 1))
        fail "$name: stderr does not match /$re/: $(cat "$T/err")"
    fi
}

A4="$T/a4.npy"
V60="$T/v60.npy"

# --- program -----------------------------------------------------------------
if ok version --version && grep -Eq '^nextok [0-9]+\.[0-9]+\.[0-9]+$' "$T/out"; then pass; else fail "--version: $(cat "$T/out")"; fi
if ok help --help && grep -q probs "$T/out" && grep -q sample "$T/out" && grep -q explain "$T/out"; then pass; else fail "--help lists the commands"; fi
for c in probs sample explain; do
    if ok "$c --help" "$c" --help && grep -q -- '--top-p' "$T/out" && grep -q -- '--logits' "$T/out"; then pass; else fail "$c --help"; fi
done
if ok "help probs" help probs && grep -q -- '--logits' "$T/out"; then pass; else fail "help probs"; fi
bad "no command"
bad_msg "unknown command" "unknown command" frobnicate
bad "unknown top-level flag" --frob

# --- probs: hand-computed cases ---------------------------------------------------
probs_check "probs default (vllm): full softmax, sorted" expect 2,1,0,3 3,2,1,0.5 -- --logits "$A4"
probs_check "probs --top-k 2" expect 2,1 3,2 -- --logits "$A4" --top-k 2
probs_check "probs --top-k=2 (inline value)" expect 2,1 3,2 -- --logits="$A4" --top-k=2
probs_check "probs --top-p 0.5 keeps the crossing token" expect 2 3 -- --logits "$A4" --top-p 0.5
probs_check "probs --top-p 0.7" expect 2,1 3,2 -- --logits "$A4" --top-p 0.7
probs_check "probs --min-p 0.2" expect 2,1 3,2 -- --logits "$A4" --min-p 0.2
probs_check "probs --temp 2" expect 2,1,0,3 3,2,1,0.5 2 -- --logits "$A4" --temp 2
probs_check "probs --temp 0 is greedy (one token, p=1)" expect 2 0 -- --logits "$A4" --temp 0
probs_check "probs --sampler greedy" expect 2 0 -- --logits "$A4" --sampler greedy
probs_check "probs --sampler gumbel: same distribution" expect 2,1,0,3 3,2,1,0.5 -- --logits "$A4" --sampler gumbel
probs_check "probs ties sorted by id" expect 1,2,3,0 3,3,2,1 -- --logits "$T/eq.npy"
probs_check "probs top-k keeps ties (vllm)" expect 0,1,2 3,2,2 -- --logits "$T/ties.npy" --top-k 2
probs_check "probs --top-k-ties exact" expect 0,1 3,2 -- --logits "$T/ties.npy" --top-k 2 --top-k-ties exact
probs_check "probs +inf logits share p" expect 1,3 0,0 -- --logits "$T/posinf.npy"
probs_check "probs --nan-as-neg-inf masks NaN" expect 1,0,3 2,1,0.5 -- --logits "$T/nan.f32" --nan-as-neg-inf
probs_check "probs --logit-bias 3+5" expect 3,2,1,0 5.5,3,2,1 -- --logits "$A4" --logit-bias 3+5
probs_check "probs --logit-bias ID-inf bans" expect 1,0,3 2,1,0.5 -- --logits "$A4" --logit-bias 2-inf
probs_check "probs --logit-bias repeatable" expect 0,3 1,0.5 -- --logits "$A4" --logit-bias 2-inf --logit-bias 1-inf
probs_check "probs --logit-bias 0-1.5" expect 2,1,3,0 3,2,0.5,-0.5 -- --logits "$A4" --logit-bias 0-1.5
probs_check "probs --repeat-penalty over --prompt-tokens" expect 1,0,2,3 2,1,1,0.5 -- --logits "$A4" --prompt-tokens 2 --repeat-penalty 3
probs_check "probs --presence-penalty over --output-tokens" expect 1,2,0,3 2,2,1,0.5 -- --logits "$A4" --output-tokens 2 --presence-penalty 1
probs_check "probs --frequency-penalty counts outputs" expect 1,0,3,2 2,1,0.5,0 -- --logits "$A4" --output-tokens 2,2,2 --frequency-penalty 1
probs_check "probs --row 1 of a [3, 4] file" expect 0,1,2,3 3,2,1,0 -- --logits "$T/rows.npy" --row 1
probs_check "probs [3, 4] file defaults to row 0" expect 3,2,1,0 3,2,1,0 -- --logits "$T/rows.npy"

# --- profiles ---------------------------------------------------------------------
probs_check "--profile vllm: no filter by default" count 60 -- --logits "$V60" --profile vllm
probs_check "--profile hf: top_k 50 by default" count 50 -- --logits "$V60" --profile hf
probs_check "--profile llama: top_k 40, top_p .95, min_p .05, temp .8" llama60 -- --logits "$V60" --profile llama
probs_check "--profile after other flags still takes flags" count 5 -- --logits "$V60" --top-k 5 --profile hf
probs_check "--profile llama: top-k ties exact" expect 0,1 3,2 -- --logits "$T/ties.npy" --profile llama --top-k 2 --top-p 1 --min-p 0 --temp 1
probs_check "--profile llama accepts --temp -1 (greedy)" expect 59 0 -- --logits "$V60" --profile llama --temp -1
probs_check "--samplers min_p;temperature" count 7 -- --logits "$V60" --profile llama --top-k 0 --top-p 1 --min-p 0.5 --temp 0.5 --samplers "min_p;temperature"
probs_check "--samplers temperature;min_p" count 4 -- --logits "$V60" --profile llama --top-k 0 --top-p 1 --min-p 0.5 --temp 0.5 --samplers "temperature;min_p"
probs_check "--mirostat 2 (llama)" json -- --logits "$V60" --profile llama --mirostat 2 --mirostat-ent 3 --mirostat-lr 0.2
probs_check "other flags parse" json -- --logits "$V60" --typical 0.9 --top-nsigma 2 --xtc-probability 0.5 --xtc-threshold 0.1 --min-keep 2 --seed 3 --dry-multiplier 0.8 --dry-base 1.75 --dry-allowed-length 2 --dry-penalty-last-n -1 --prompt-tokens 1,2,1,2 --output-tokens 1
probs_check "llama dynatemp + penalties window" json -- --logits "$V60" --profile llama --dynatemp-range 0.5 --dynatemp-exp 1.5 --repeat-last-n 4 --repeat-penalty 1.2 --prompt-tokens 59,58
probs_check "example logits: ' mat' on top" top 2603 -- --logits "$SRC/examples/logits-example.npy"

# --- input formats agree ------------------------------------------------------------
ok "probs f32 npy" probs --logits "$A4" && cp "$T/out" "$T/ref.json" && pass
for f in a4.f32 a4.f16 a4.bf16 a4_f16.npy a4_v2.npy; do
    if ok "probs $f" probs --logits "$T/$f" && cmp -s "$T/out" "$T/ref.json"; then pass; else fail "probs $f differs from a4.npy"; fi
done

# --- sample -------------------------------------------------------------------------
FLAT="$T/flat64.npy"
: >"$T/s42a"; : >"$T/s42b"; : >"$T/s43"; : >"$T/g1"
if ok "sample -n 5" sample --logits "$FLAT" --seed 42 -n 5 && [ "$(wc -l <"$T/out")" -eq 5 ] \
    && ! grep -vqE '^[0-9]+$' "$T/out"; then pass; else fail "sample -n 5 gives 5 id lines"; fi
ok "sample seed 42" sample --logits "$FLAT" --seed 42 -n 20 && cp "$T/out" "$T/s42a"
ok "sample seed 42 again" sample --logits "$FLAT" --seed 42 -n 20 && cp "$T/out" "$T/s42b"
ok "sample seed 43" sample --logits "$FLAT" --seed 43 -n 20 && cp "$T/out" "$T/s43"
if cmp -s "$T/s42a" "$T/s42b"; then pass; else fail "same seed gives different draws"; fi
if ! cmp -s "$T/s42a" "$T/s43"; then pass; else fail "different seeds give the same 20 draws"; fi
if [ "$(sort -u "$T/s42a" | wc -l)" -gt 1 ]; then pass; else fail "20 draws from a flat distribution are all equal"; fi
if ! grep -qvE '^(6[0-3]|[1-5]?[0-9])$' "$T/s42a"; then pass; else fail "sample ids out of [0, 64)"; fi
if ok "sample default -n" sample --logits "$FLAT" --seed 42 && [ "$(wc -l <"$T/out")" -eq 1 ]; then pass; else fail "sample prints 1 line by default"; fi
ok "sample --output-tokens 1,2" sample --logits "$FLAT" --seed 42 -n 3 --output-tokens 1,2 \
    && if [ "$(cat "$T/out")" = "$(sed -n 3,5p "$T/s42a")" ]; then pass; else fail "--output-tokens: base step is the number of outputs"; fi
ok "sample --sampler gumbel" sample --logits "$FLAT" --seed 42 -n 20 --sampler gumbel && cp "$T/out" "$T/g1"
ok "sample --sampler gumbel again" sample --logits "$FLAT" --seed 42 -n 20 --sampler gumbel \
    && if cmp -s "$T/out" "$T/g1"; then pass; else fail "gumbel not deterministic"; fi
if ok "sample --temp 0" sample --logits "$A4" --temp 0 -n 4 && [ "$(sort -u "$T/out")" = 2 ]; then pass; else fail "sample --temp 0 always argmax"; fi
if ok "sample --top-k 1" sample --logits "$V60" --top-k 1 -n 3 --seed 1 && [ "$(sort -u "$T/out")" = 59 ]; then pass; else fail "sample --top-k 1"; fi

# --- explain ------------------------------------------------------------------------
explain_check() {
    local name=$1 want=$2
    shift 2
    ok "$name" explain "$@" || return
    local why
    if why=$(py explain "$T/out" $want); then pass; else fail "$name: $why"; fi
}
explain_check "explain vllm stages" "temp,min-p,top-k,top-p,dist" --logits "$V60" --temp 0.7 --top-k 20 --top-p 0.9 --min-p 0.01 --seed 1
explain_check "explain llama --samplers order" "min-p,temp,dist" --logits "$V60" --profile llama --top-k 0 --top-p 1 --min-p 0.5 --temp 0.5 --samplers "min_p;temperature"
explain_check "explain default chain" "" --logits "$A4"
explain_check "explain greedy" "" --logits "$A4" --temp 0
explain_check "explain with penalties and bias" "" --logits "$V60" --profile hf --logit-bias 59-inf --prompt-tokens 58 --repeat-penalty 1.3 --show 3
run explain --logits "$SRC/examples/logits-example.npy" --vocab "$SRC/examples/gpt2-tokenizer.json" --temp 0.8 --top-k 40 --top-p 0.9 --seed 42
if [ "$RC" -eq 0 ] && { [ ! -s "$T/err" ] || ! grep -qv "note:" "$T/err"; } && grep -q "selected: token" "$T/out" \
    && [ "$(awk '{ if (length($0) > 100) n++ } END { print n + 0 }' "$T/out")" -eq 0 ]; then
    pass
else
    fail "explain of the example (make run): runs, lines <= 100 columns: $(head -c 300 "$T/err")"
fi
if ok "explain --show 3" explain --logits "$V60" --show 3 && ! grep -qE '^ +4  ' "$T/out"; then pass; else fail "explain --show 3 lists 3 tokens"; fi

# --- token text (--vocab) --------------------------------------------------------------
EX="$SRC/examples/logits-example.npy"
TOKJ="$SRC/examples/gpt2-tokenizer.json"
GGUF="$DATA/vocab/gguf/ggml-vocab-gpt-2.gguf"
VOCABS=()
run probs --logits "$A4" --vocab "$TOKJ"    # mismatched on purpose: is the file readable here?
# Every build reads tokenizer.json (the JSON reader is the project's own): the
# file loads, and only then does its size not match the 4 logits.
if grep -q "does not match" "$T/err" && ! grep -q "note:" "$T/err"; then pass; else fail "tokenizer.json not readable: $(cat "$T/err")"; fi
VOCABS+=("$TOKJ")
if [ -f "$GGUF" ]; then VOCABS+=("$GGUF"); else fail "fixture $GGUF is missing"; fi
for voc in "${VOCABS[@]}"; do
    vn=$(basename "$voc")
    probs_check "probs --vocab $vn: text" text mat -- --logits "$EX" --top-k 5 --vocab "$voc"
    probs_check "probs --vocab $vn: partial UTF-8, newline, special" text bytes -- --logits "$T/gpt2ish.npy" --top-k 3 --vocab "$voc"
    if ok "explain --vocab $vn" explain --logits "$EX" --vocab "$voc" --top-k 5 && grep -q '" mat"' "$T/out"; then pass; else fail "explain --vocab $vn shows \" mat\""; fi
    bad_msg "--vocab $vn with 4 logits" "does not match" probs --logits "$A4" --vocab "$voc"
done
bad_msg "--vocab malformed" "vocab" probs --logits "$A4" --vocab "$T/garbage-vocab.txt"
bad_msg "--vocab missing" "vocab" probs --logits "$A4" --vocab "$T/nope.json"

# --- encode -----------------------------------------------------------------------------
MIS="$DATA/vocab/hf/mistral-7b-v0.1/tokenizer.json"
expect_out() { # name want args...: ok and stdout is exactly want
    local name=$1 want=$2
    shift 2
    if ok "$name" "$@" && [ "$(cat "$T/out")" = "$want" ]; then pass; else fail "$name: got $(head -c 200 "$T/out")"; fi
}
expect_out "encode gpt2" "15496,995,0" encode --vocab "$TOKJ" --text "Hello world!"
expect_out "encode GGUF gpt-2" "15496,995,0" encode --vocab "$GGUF" --text "Hello world!"
expect_out "encode special as text" "27,91,437,1659,5239,91,29" encode --vocab "$TOKJ" --text "<|endoftext|>"
expect_out "encode --parse-special" "50256" encode --vocab "$TOKJ" --text "<|endoftext|>" --parse-special
expect_out "encode mistral adds BOS" "1,22557" encode --vocab "$MIS" --text "Hello"
expect_out "encode --no-bos --eos" "22557,2" encode --vocab "$MIS" --text "Hello" --no-bos --eos
expect_out "encode --json" '{"ids": [15496, 995], "pieces": ["Hello", "Ġworld"]}' encode --vocab "$TOKJ" --text "Hello world" --json
printf 'Hello world!' >"$T/enc.txt"
expect_out "encode --text-file" "15496,995,0" encode --vocab "$TOKJ" --text-file "$T/enc.txt"
expect_out "encode stdin" "15496,995,0" encode --vocab "$TOKJ" --text-file - <"$T/enc.txt"
if ok "encode --bench" encode --vocab "$TOKJ" --text-file "$T/enc.txt" --bench --runs 3 &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ids"]==3 and d["runs"]==3 and d["bytes"]==12' "$T/out"; then
    pass; else fail "encode --bench: $(cat "$T/out")"; fi
printf 'ab\377cd' >"$T/bad-utf8.txt"
bad_msg "encode invalid UTF-8" "invalid UTF-8 at byte 2" encode --vocab "$TOKJ" --text-file "$T/bad-utf8.txt"
bad_msg "encode without --text" "--text" encode --vocab "$TOKJ"
bad_msg "encode with both texts" "one of" encode --vocab "$TOKJ" --text a --text-file "$T/enc.txt"
bad_msg "encode missing file" "nope" encode --vocab "$TOKJ" --text-file "$T/nope.txt"
bad "encode --runs 0" encode --vocab "$TOKJ" --text a --bench --runs 0
printf 'Hello world!\n\nBye' >"$T/lines.txt"
expect_out "encode --lines" "$(printf '15496,995,0,198\n198\n3886,68\n')" encode --vocab "$TOKJ" --text-file "$T/lines.txt" --lines
bad_msg "encode --lines --json" "--lines" encode --vocab "$TOKJ" --text a --lines --json

# --- generate (the built-in demo model) --------------------------------------------------
# gen_ok NAME ARGS...: exit 0 (the summary line goes to stderr)
gen_ok() {
    local name=$1
    shift
    run "$@"
    [ "$RC" -eq 0 ] || { fail "$name: exit $RC: $(head -c 300 "$T/err")"; return 1; }
}
GEN=(generate --prompt "It is a truth universally acknowledged" --temp 0.8 --top-k 40 --seed 7 --max-tokens 30)
if gen_ok "generate" "${GEN[@]}" && [ -s "$T/out" ]; then cp "$T/out" "$T/gen1"; pass; else fail "generate printed nothing"; fi
if gen_ok "generate again" "${GEN[@]}" && cmp -s "$T/out" "$T/gen1"; then pass; else fail "generate with a fixed seed differs between runs"; fi
if grep -q "30 tokens" "$T/err" && grep -q "finish: length" "$T/err"; then pass; else fail "generate summary: $(cat "$T/err")"; fi
if ok "generate --json" "${GEN[@]}" --json && python3 - "$T/out" "$T/gen1" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
toks, fin = ev[:-1], ev[-1]
assert fin["finish"] == "length" and fin["tokens"] == len(toks) == 30, fin
assert all("token" in e and "logprob" in e and e["logprob"] <= 0 for e in toks)
text = "".join(e["text"] for e in toks)
assert text == open(sys.argv[2], encoding="utf-8").read(), "json text differs from the plain run"
PY
then pass; else fail "generate --json events"; fi
if gen_ok "generate --stop" generate --prompt "Mr" --temp 0 --stop "." --max-tokens 50 && [ "$(cat "$T/out")" = "" ]; then pass; else fail "generate --stop: $(cat "$T/out")"; fi
bad_msg "generate without --prompt" "--prompt" generate --temp 0.8
bad_msg "generate --model alone" "together" generate --prompt a --model "$T/nope.ngram"
bad_msg "generate bad --model" "nope" generate --prompt a --model "$T/nope.ngram" --vocab "$TOKJ"
bad_msg "generate invalid UTF-8 prompt" "UTF-8" generate --prompt "$(printf 'a\377')"


# --- bench (a small row, so it is quick; the timings themselves are not checked) -------
for r in 1 3; do
    if ok "bench --rows $r" bench --n-vocab 4096 --iters 200 --warmup 2 --no-plain --json --rows $r --top-k 40 --temp 0.8 &&
        why=$(py bench "$T/out" $r 4096); then pass; else fail "bench --rows $r: ${why:-}"; fi
done
# --allowed-fraction: a token bitmask per row, still on the fused path, in a batch too
for f in 0.5 0.01; do
    if ok "bench --allowed-fraction $f" bench --n-vocab 4096 --iters 200 --warmup 2 --json --rows 2 --top-k 40 --temp 0.8 --allowed-fraction $f &&
        why=$(py bench "$T/out" 2 4096 $f); then pass; else fail "bench --allowed-fraction $f: ${why:-}"; fi
done
if ok "bench --allowed-fraction in a batch" bench --n-vocab 4096 --batch 3 --iters 200 --warmup 2 --json --no-plain --temp 1 --allowed-fraction 0.5 &&
    why=$(py bench "$T/out" 1 4096 0.5); then pass; else fail "bench --allowed-fraction in a batch: ${why:-}"; fi
bad_msg "bench --allowed-fraction 0" "allowed-fraction" bench --n-vocab 4096 --allowed-fraction 0
bad "bench --allowed-fraction 1.5" bench --n-vocab 4096 --allowed-fraction 1.5
# The size is --n-vocab; --vocab (a file in every other command) errors and names it.
bad_msg "bench --vocab N names --n-vocab" "--n-vocab" bench --vocab 4096 --no-plain
bad_msg "bench --vocab=N names --n-vocab" "--n-vocab" bench --vocab=4096 --no-plain
bad_msg "bench --rows with a batch" "rows" bench --n-vocab 4096 --batch 2 --rows 2 --no-plain
bad "bench --rows 0" bench --n-vocab 4096 --rows 0
bad "bench --iters 10" bench --n-vocab 4096 --iters 10

# --- bad input: exit 2, one line on stderr, nothing on stdout -------------------------
bad_msg "unknown flag" "unknown flag '--bogus'" probs --logits "$A4" --bogus
bad_msg "stray argument" "unexpected argument" probs --logits "$A4" stray
bad_msg "missing value" "--top-p: missing value" probs --logits "$A4" --top-p
bad_msg "--top-p abc" "top-p.*not a number" probs --logits "$A4" --top-p abc
bad_msg "--top-p 1.5" "top-p.*1.5" probs --logits "$A4" --top-p 1.5
bad "--top-p 0.5x" probs --logits "$A4" --top-p 0.5x
bad "--top-p ''" probs --logits "$A4" --top-p ""
bad "--top-k 1.5" probs --logits "$A4" --top-k 1.5
bad "--top-k 99999999999" probs --logits "$A4" --top-k 99999999999
bad "--temp nan" probs --logits "$A4" --temp nan
bad "--temp inf" probs --logits "$A4" --temp inf
bad_msg "--temp -1 (vllm)" "temperature" probs --logits "$A4" --temp -1
bad_msg "--repeat-penalty 0" "repeat_penalty" probs --logits "$A4" --repeat-penalty 0
bad "--min-p -0.1" probs --logits "$A4" --min-p -0.1
bad "--mirostat 3" probs --logits "$A4" --mirostat 3
bad "--min-keep -1" probs --logits "$A4" --min-keep -1
bad "--repeat-last-n -1" probs --logits "$A4" --repeat-last-n -1
bad "--seed abc" probs --logits "$A4" --seed abc
bad "--seed -2" probs --logits "$A4" --seed -2
bad_msg "--profile foo" "profile" probs --logits "$A4" --profile foo
bad "--top-k-ties maybe" probs --logits "$A4" --top-k-ties maybe
bad "--sampler foo" probs --logits "$A4" --sampler foo
bad_msg "--samplers with an unknown name" "bogus" probs --logits "$A4" --profile llama --samplers "top_k;bogus"
bad_msg "--logit-bias id out of range" "99" probs --logits "$A4" --logit-bias 99+1
bad "--logit-bias abc" probs --logits "$A4" --logit-bias abc
bad "--logit-bias 1*2" probs --logits "$A4" --logit-bias '1*2'
bad "--logit-bias 1+" probs --logits "$A4" --logit-bias 1+
bad "--logit-bias 1+inf" probs --logits "$A4" --logit-bias 1+inf
bad "--logit-bias 1+nan" probs --logits "$A4" --logit-bias 1+nan
bad "--logit-bias -1+1" probs --logits "$A4" --logit-bias -1+1
bad_msg "--prompt-tokens out of range" "prompt-tokens" probs --logits "$A4" --prompt-tokens 1,4
bad "--prompt-tokens 1,x" probs --logits "$A4" --prompt-tokens 1,x
bad "--prompt-tokens 1,,2" probs --logits "$A4" --prompt-tokens 1,,2
bad "--prompt-tokens -1" probs --logits "$A4" --prompt-tokens=-1
bad_msg "--output-tokens out of range" "output-tokens" probs --logits "$A4" --output-tokens 7
bad_msg "missing --logits" "logits" probs --top-k 2
bad_msg "missing file" "no such file" probs --logits "$T/nope.npy"
mkdir -p "$T/dir.npy"
bad "directory as logits" probs --logits "$T/dir.npy"
bad_msg "unknown extension" "\.txt" probs --logits "$T/logits.txt"
bad_msg "empty .f32" "empty" probs --logits "$T/empty.f32"
bad_msg "odd-sized .f32" "multiple" probs --logits "$T/odd.f32"
bad_msg "npy bad magic" "magic" probs --logits "$T/magic.npy"
bad_msg "npy fortran order" "fortran" probs --logits "$T/fortran.npy"
bad_msg "npy float64" "<f8" probs --logits "$T/f8.npy"
bad_msg "npy big-endian" "big-endian" probs --logits "$T/be.npy"
bad_msg "npy truncated data" "truncated" probs --logits "$T/trunc.npy"
bad_msg "npy trailing bytes" "after" probs --logits "$T/trailing.npy"
bad_msg "npy 3-D" "dimensions" probs --logits "$T/3d.npy"
bad_msg "npy empty array" "empty" probs --logits "$T/empty.npy"
bad_msg "npy unterminated dict" "header" probs --logits "$T/baddict.npy"
bad_msg "npy missing key" "fortran_order" probs --logits "$T/nokey.npy"
bad_msg "npy bad shape" "shape" probs --logits "$T/badshape.npy"
bad_msg "npy header past the end" "truncated" probs --logits "$T/hdrlen.npy"
# Bytes from the file reach the error line escaped, never raw (no terminal
# escape sequences): only printable ASCII and the final newline on stderr.
for f in ctl_descr:1b ctl_key:1b c1_descr:9b; do
    bad "npy ${f%:*}: one error line" probs --logits "$T/${f%:*}.npy"
    if LC_ALL=C grep -aqF "\\x${f#*:}" "$T/err"; then pass; else
        fail "npy ${f%:*}: \\x${f#*:} not in the message: $(cat -v "$T/err")"
    fi
    if [ "$(LC_ALL=C tr -d '\n[:print:]' <"$T/err" | wc -c)" -eq 0 ]; then pass; else
        fail "npy ${f%:*}: raw control bytes on stderr: $(cat -v "$T/err")"
    fi
done
bad_msg "NaN logits" "nan" probs --logits "$T/nan.f32"
bad_msg "all -inf" "candidate" probs --logits "$T/neginf.f32"
bad_msg "--row out of range" "row" probs --logits "$T/rows.npy" --row 3
bad "--row -1" probs --logits "$T/rows.npy" --row -1
bad_msg "sample -n 0" "-n" sample --logits "$A4" -n 0
bad "sample -n abc" sample --logits "$A4" -n abc
bad "sample -n missing" sample --logits "$A4" -n
bad "sample NaN logits" sample --logits "$T/nan.f32" -n 3
bad "sample bad file" sample --logits "$T/trunc.npy"
bad "sample unknown flag" sample --logits "$A4" --show 3
bad "explain NaN logits" explain --logits "$T/nan.f32"
bad "explain all -inf" explain --logits "$T/neginf.f32"
bad "explain --show 0" explain --logits "$A4" --show 0
bad_msg "explain missing --vocab file" "vocab" explain --logits "$A4" --vocab "$T/nope.json"
bad "explain bad --top-p" explain --logits "$A4" --top-p 2
bad "probs --vocab missing value" probs --logits "$A4" --vocab

echo "cli_core: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
