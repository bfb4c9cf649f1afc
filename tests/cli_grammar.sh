#!/usr/bin/env bash
# CLI tests for `nextok grammar check|accepts|mask|bench` and the grammar flags of
# the sampling commands (--gbnf, --json-schema, --regex).
#
#   bash tests/cli_grammar.sh <path-to-nextok> <source-dir> <fixture-dir>
#
# Needs bash and python3 (standard library only). Prints "N passed, N failed"
# and exits non-zero if anything failed.
set -u

NEXTOK=${1:?usage: cli_grammar.sh <nextok> <source-dir> <fixture-dir>}
SRC=${2:?usage: cli_grammar.sh <nextok> <source-dir> <fixture-dir>}
DATA=${3:?usage: cli_grammar.sh <nextok> <source-dir> <fixture-dir>}
case $NEXTOK in /*) ;; *) NEXTOK=$PWD/$NEXTOK ;; esac
[ -x "$NEXTOK" ] || { echo "cli_grammar.sh: $NEXTOK is not executable"; exit 1; }
command -v python3 >/dev/null || { echo "cli_grammar.sh: python3 is required"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/nextok-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASS=0
FAIL=0
pass() { PASS=$((PASS + 1)); }
fail() { FAIL=$((FAIL + 1)); echo "FAIL: $*"; }
run() {
    "$NEXTOK" "$@" >"$T/out" 2>"$T/err"
    RC=$?
}
# expect NAME RC OUT ARGS...: exit status RC and stdout exactly OUT ("-": not checked)
expect() {
    local name=$1 rc=$2 out=$3
    shift 3
    run "$@"
    if [ "$RC" -eq "$rc" ] && { [ "$out" = "-" ] || [ "$(cat "$T/out")" = "$out" ]; }; then pass; else
        fail "$name: exit $RC (want $rc), out '$(head -c 200 "$T/out")', err '$(head -c 300 "$T/err")'"
    fi
}
# bad NAME TEXT ARGS...: exit 2 with TEXT in stderr, nothing on stdout
bad() {
    local name=$1 text=$2
    shift 2
    run "$@"
    if [ "$RC" -eq 2 ] && grep -qF -- "$text" "$T/err" && [ ! -s "$T/out" ]; then pass; else
        fail "$name: exit $RC, err '$(head -c 300 "$T/err")'"
    fi
}

JG="$DATA/grammars/json.gbnf"
GPT2="$DATA/vocab/hf/gpt2/tokenizer.json"

# --- check / accepts ---------------------------------------------------------------
expect "check json.gbnf" 0 "" grammar check --gbnf "$JG"
expect "accepts" 0 accepted grammar accepts --gbnf "$JG" --text '{"a": [1, true]}'
expect "rejects" 1 rejected grammar accepts --gbnf "$JG" --text '{"a": [1, tru]}'
printf 'root ::= "a"\nx ::= \n  ( "b"\n' >"$T/bad.gbnf"
bad "check bad gbnf" "line 4, column 1" grammar check --gbnf "$T/bad.gbnf"
bad "accepts bad gbnf" "line 4" grammar accepts --gbnf "$T/bad.gbnf" --text a
bad "no subcommand" "check, accepts, mask or bench" grammar --gbnf "$JG"
bad "missing file" "nope" grammar check --gbnf "$T/nope.gbnf"
bad "two sources" "one of --gbnf" grammar check --gbnf "$JG" --regex a
bad "no source" "give the grammar" grammar check

cat >"$T/person.json" <<'J'
{"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
 "age": {"type": "integer", "minimum": 0, "maximum": 130}}, "required": ["name"],
 "additionalProperties": false}
J
expect "schema check" 0 "" grammar check --json-schema "$T/person.json"
expect "schema accepts" 0 accepted grammar accepts --json-schema "$T/person.json" --text '{"name": "Ada", "age": 36}'
expect "schema compact" 1 rejected grammar accepts --json-schema "$T/person.json" --json-ws compact --text '{"name": "Ada", "age": 36}'
expect "schema bound" 1 rejected grammar accepts --json-schema "$T/person.json" --text '{"name": "Ada", "age": 131}'
expect "schema maxLength" 1 rejected grammar accepts --json-schema "$T/person.json" --text '{"name": "Adalovelace"}'
echo '{"type": "array", "uniqueItems": true}' >"$T/unique.json"
bad "schema refused" "keyword 'uniqueItems' cannot be enforced" grammar check --json-schema "$T/unique.json"
run grammar check --json-schema "$T/unique.json" --lenient
if [ "$RC" -eq 0 ] && grep -q "ignored 'uniqueItems'" "$T/err"; then pass; else fail "lenient: exit $RC, $(cat "$T/err")"; fi
echo '{"type": "object", "properties": {"a": {"minLength": -1}}}' >"$T/badschema.json"
bad "schema invalid" "/properties/a" grammar check --json-schema "$T/badschema.json"
bad "schema not json" "json-schema" grammar check --json-schema "$T/bad.gbnf"
bad "schema options without schema" "go with --json-schema" grammar check --gbnf "$JG" --strict

expect "regex accepts" 0 accepted grammar accepts --regex '[a-z]+@[a-z]+\.com' --text bob@example.com
expect "regex rejects" 1 rejected grammar accepts --regex '[a-z]+@[a-z]+\.com' --text bob@example.org
bad "regex syntax" "regex column 2" grammar check --regex 'a(b'
bad "regex lookahead" "cannot be a grammar" grammar check --regex 'a(?=b)'

# lazy: free text until a trigger word, then the grammar
expect "lazy accepts" 0 accepted grammar accepts --regex '[0-9]+' --trigger '<n>' --text 'free text <n>42'
expect "lazy untriggered" 0 accepted grammar accepts --regex '[0-9]+' --trigger '<n>' --text 'no trigger here'
expect "lazy rejects" 1 rejected grammar accepts --regex '[0-9]+' --trigger '<n>' --text 'x <n>4a'
expect "lazy pattern accepts" 0 accepted grammar accepts --regex '[0-9]+' --trigger-pattern '<n[a-z]+>' --text 'x <nab>42'
expect "lazy pattern rejects" 1 rejected grammar accepts --regex '[0-9]+' --trigger-pattern '<n[a-z]+>' --text 'x <nab>4a'
expect "lazy pattern untriggered" 0 accepted grammar accepts --regex '[0-9]+' --trigger-pattern '<n[a-z]+>' --text 'x <n>4a'
bad "lazy pattern anchored" "anchors" grammar check --regex '[0-9]+' --trigger-pattern '^<n>'
bad "lazy without grammar" "go with a grammar" grammar check --trigger '<n>'

# --- mask --------------------------------------------------------------------------------
run grammar mask --vocab "$GPT2" --gbnf "$JG" --text '{"a": [1, 2]}' --json
if [ "$RC" -eq 0 ] && python3 - "$T/out" <<'PY'; then pass; else fail "mask --json: exit $RC $(cat "$T/err")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"compile_us", "steps", "accepting"}, d.keys()
assert d["accepting"] is True and len(d["steps"]) >= 5
for s in d["steps"]:
    assert set(s) == {"token", "allowed", "n_allowed", "mask_us"} and s["allowed"] and s["n_allowed"] > 0
PY
# '{', '"', 'a', then a raw newline inside the string: refused, the walk stops (exit 1)
run grammar mask --vocab "$GPT2" --gbnf "$JG" --tokens 90,1,64,198 --json
if [ "$RC" -eq 1 ] && python3 - "$T/out" <<'PY'; then pass; else fail "mask refused: exit $RC $(cat "$T/out")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
st = d["steps"]
assert [s["allowed"] for s in st] == [True, True, True, False], st
assert d["accepting"] is False
PY
bad "mask without vocab" "--vocab FILE is required" grammar mask --gbnf "$JG" --tokens 1
bad "mask bad ids" "--tokens" grammar mask --vocab "$GPT2" --gbnf "$JG" --tokens 1,x

# --- bench ---------------------------------------------------------------------------------
mkdir -p "$T/cases"
cp "$T/person.json" "$T/cases/person.json"
printf '{"name": "Ada", "age": 36}\n{"name":"Grace"}\n' >"$T/cases/person.txt"
cp "$JG" "$T/cases/json.gbnf"
printf '{"x": [1, 2, 3]}\n{"k": "v"}\n' >"$T/cases/json.txt"
printf '[0-9]{3}-[0-9]{4}\n' >"$T/cases/phone.regex"
printf '555-0199\n' >"$T/cases/phone.txt"
for warm in "" --warm; do
    run grammar bench --vocab "$GPT2" --cases "$T/cases" --json $warm
    if [ "$RC" -eq 0 ] && python3 - "$T/out" <<'PY'; then pass; else fail "bench $warm: exit $RC $(cat "$T/out") $(cat "$T/err")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
assert d["grammars"] == 3 and d["refused"] == 0 and d["texts"] == 5 and d["stopped"] == 0, d
assert d["masks"] > 10 and d["mask_us"]["p50"] <= d["mask_us"]["max"]
PY
done
bad "bench with a grammar flag" "reads its grammars" grammar bench --vocab "$GPT2" --cases "$T/cases" --gbnf "$JG"

# --- the sampling commands --------------------------------------------------------------
# uniform logits over GPT-2: the grammar alone decides what may come out
python3 - "$T/u.npy" <<'PY'
import struct, sys
n = 50257
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack("<%df" % n, *([0.0] * n)))
PY
run sample --logits "$T/u.npy" --vocab "$GPT2" --regex 'yes|no' -n 40 --seed 7
if [ "$RC" -eq 0 ] && python3 - "$T/out" "$GPT2" <<'PY'; then pass; else fail "sample --regex: exit $RC $(cat "$T/err")"; fi
import json, sys
ids = [int(x) for x in open(sys.argv[1]).read().split()]
vocab = {v: k for k, v in json.load(open(sys.argv[2]))["model"]["vocab"].items()}
first = {vocab[i] for i in ids}
assert len(ids) == 40 and first <= {"y", "ye", "yes", "n", "no"}, first
assert len(first) >= 3, first
PY
bad "sample grammar without vocab" "need --vocab" sample --logits "$T/u.npy" --regex 'yes|no'
run probs --logits "$T/u.npy" --vocab "$GPT2" --gbnf "$JG"
if [ "$RC" -eq 0 ] && python3 - "$T/out" <<'PY'; then pass; else fail "probs --gbnf: exit $RC $(cat "$T/err")"; fi
import json, sys
rows = json.load(open(sys.argv[1]))
texts = {r["text"] for r in rows}
assert 2 <= len(rows) < 5000 and all(r["p"] > 0 for r in rows)
assert all(t.lstrip(" \t\n\r")[:1] == "{" or t.strip() == "" for t in texts), sorted(texts)[:20]
PY
run generate --prompt 'The answer:' --regex ' (yes|no)\.' --seed 3
if [ "$RC" -eq 0 ] && grep -Eq '^ (yes|no)\.$' "$T/out" && grep -q "finish: grammar" "$T/err"; then pass; else
    fail "generate --regex: exit $RC out '$(cat "$T/out")' err '$(cat "$T/err")'"
fi
run generate --prompt 'Person:' --json-schema "$T/person.json" --json-ws compact --seed 5
if [ "$RC" -eq 0 ] && "$NEXTOK" grammar accepts --json-schema "$T/person.json" --json-ws compact --text "$(cat "$T/out")" >/dev/null; then pass; else
    fail "generate --json-schema: exit $RC out '$(cat "$T/out")' err '$(cat "$T/err")'"
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
