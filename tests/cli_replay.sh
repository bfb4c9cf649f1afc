#!/usr/bin/env bash
# CLI tests for `nextok detok` and `nextok replay`.
# Usage: bash cli_replay.sh <path-to-nextok-cli> <source-dir> <fixture-dir>
# Logits files are made here with python3's standard library (struct + the
# .npy header format); the vocabulary is a fixture (tests/data). Prints
# "N passed, N failed" and exits non-zero on failure.
set -u

CLI=${1:?usage: cli_replay.sh CLI SOURCE_DIR FIXTURE_DIR}
DATA=${3:?usage: cli_replay.sh CLI SOURCE_DIR FIXTURE_DIR}
GPT2="$DATA/vocab/gguf/ggml-vocab-gpt-2.gguf"
PASS=0
FAIL=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok()   { PASS=$((PASS + 1)); }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL $1"; }

# Both are always there (the fixture is in the repo, python3 is a documented
# test requirement): missing is a failure, never a skip.
if [ ! -f "$GPT2" ]; then
    echo "FAIL cli_replay: fixture $GPT2 is missing"
    exit 1
fi
if ! command -v python3 >/dev/null; then
    echo "FAIL cli_replay: python3 is required"
    exit 1
fi

# npy FILE V ROW... : one float32 row per ROW; ROW is "id" (logit 100 at id)
# or "id:id2" (100 at id, 50 at id2) or "nan" (a NaN at id 3).
npy() {
    python3 - "$@" <<'EOF'
import struct, sys
path, V, rows = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), V)
hdr += ' ' * (63 - (10 + len(hdr)) % 64) + '\n'
with open(path, 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
    for r in rows:
        row = [0.0] * V
        if r == 'nan':
            row[3] = float('nan')
        else:
            ids = [int(x) for x in r.split(':')]
            row[ids[0]] = 100.0
            if len(ids) > 1:
                row[ids[1]] = 50.0
        f.write(struct.pack('<%df' % V, *row))
EOF
}

# expect_out NAME WANT_BYTES CMD...: exit 0 and stdout exactly WANT_BYTES.
expect_out() {
    local name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    printf '%s' "$want" >"$TMP/want"
    if [ $rc -eq 0 ] && cmp -s "$TMP/out" "$TMP/want"; then ok; else
        bad "$name (rc $rc): got '$(cat "$TMP/out")' want '$want' $(head -c 300 "$TMP/err")"
    fi
}

# expect_bad NAME CMD...: exit 2, nothing on stdout, exactly one line on stderr.
expect_bad() {
    local name=$1
    shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    local lines
    lines=$(wc -l <"$TMP/err")
    if [ $rc -eq 2 ] && [ ! -s "$TMP/out" ] && [ "$lines" -eq 1 ]; then ok; else
        bad "$name: rc $rc, stdout $(wc -c <"$TMP/out") bytes, stderr $lines lines: $(head -c 300 "$TMP/err")"
    fi
}

# expect_json NAME PYTHON_CHECK CMD...: exit 0, every line is JSON, and the
# check (a Python expression over `ev`, the list of events) is true.
expect_json() {
    local name=$1 check=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ $rc -eq 0 ] && python3 - "$TMP/out" "$check" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
    then ok; else bad "$name (rc $rc): $(head -c 400 "$TMP/out") $(head -c 200 "$TMP/err")"; fi
}

V=50257
HELLO=15496; WORLD=995; BANG=0; EOS=50256; QUOTE=1; NL=198; X=87; A_TILDE=127; COPY=102

# ---- detok -----------------------------------------------------------------
expect_out detok_basic "Hello world!" "$CLI" detok --vocab "$GPT2" --tokens $HELLO,$WORLD,$BANG
expect_out detok_special "Hello<|endoftext|>" "$CLI" detok --vocab "$GPT2" --tokens $HELLO,$EOS
expect_out detok_skip_special "Hello" "$CLI" detok --vocab "$GPT2" --tokens $HELLO,$EOS --skip-special
expect_out detok_empty "" "$CLI" detok --vocab "$GPT2" --tokens ""
expect_out detok_utf8 "é" "$CLI" detok --vocab "$GPT2" --tokens=$A_TILDE,$COPY
expect_out detok_newline $'"\n' "$CLI" detok --vocab "$GPT2" --tokens $QUOTE,$NL
"$CLI" detok --help >/dev/null 2>&1 && ok || bad detok_help
expect_bad detok_range "$CLI" detok --vocab "$GPT2" --tokens 1,99999
expect_bad detok_bad_list "$CLI" detok --vocab "$GPT2" --tokens 1,x
expect_bad detok_no_vocab "$CLI" detok --tokens 1
expect_bad detok_no_tokens "$CLI" detok --vocab "$GPT2"
expect_bad detok_missing_file "$CLI" detok --vocab "$TMP/nope.gguf" --tokens 1
printf 'GGUF\3\0\0\0garbage' >"$TMP/broken.gguf"
expect_bad detok_broken_file "$CLI" detok --vocab "$TMP/broken.gguf" --tokens 1
expect_bad detok_unknown_flag "$CLI" detok --vocab "$GPT2" --tokens 1 --frobnicate

# ---- replay ----------------------------------------------------------------
npy "$TMP/hello.npy" $V $HELLO $WORLD $BANG $EOS
npy "$TMP/noeos.npy" $V $HELLO $WORLD $BANG
npy "$TMP/min.npy" $V $EOS:$X $EOS:$X $EOS:$X
npy "$TMP/quote.npy" $V $QUOTE $NL $A_TILDE
npy "$TMP/nan.npy" $V $HELLO nan
npy "$TMP/utf8.npy" $V $HELLO $A_TILDE $COPY $BANG

expect_out replay_text "Hello world!" "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy"
expect_out replay_stream "Hello world!" "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --stream
expect_out replay_stop "Hell" "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --stop "o w"
expect_out replay_stop_include "Hello w" "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" \
    --stop "o w" --include-stop
expect_out replay_two_stops "Hello" "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" \
    --stop "!" --stop " wor"
expect_out replay_max "Hello world" "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --max-tokens 2
expect_out replay_out_of_rows "Hello world!" "$CLI" replay --vocab "$GPT2" --logits "$TMP/noeos.npy"
expect_out replay_ignore_eos "Hello world!<|endoftext|>" "$CLI" replay --vocab "$GPT2" \
    --logits "$TMP/hello.npy" --ignore-eos
expect_out replay_skip_special "Hello world!" "$CLI" replay --vocab "$GPT2" \
    --logits "$TMP/hello.npy" --ignore-eos --skip-special
expect_out replay_min_tokens "xx" "$CLI" replay --vocab "$GPT2" --logits "$TMP/min.npy" --min-tokens 2
expect_out replay_stop_token "Hello" "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" \
    --stop-token-ids $WORLD
expect_out replay_utf8_stop "Hello" "$CLI" replay --vocab "$GPT2" --logits "$TMP/utf8.npy" --stop "é"
expect_out replay_greedy "Hello world!" "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" \
    --temp 0 --top-k 40 --top-p 0.9 --seed 7

expect_json replay_json \
    'ev == [{"token": 15496, "text": "Hello"}, {"token": 995, "text": " world"}, {"token": 0, "text": "!"}, {"token": 50256, "text": ""}, {"finish": "eos", "stop": None, "reason": "eos"}]' \
    "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --json
expect_json replay_json_stop \
    'ev[-1] == {"finish": "stop", "stop": "o w", "reason": "stop_string"} and "".join(e.get("text", "") for e in ev) == "Hell"' \
    "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --json --stop "o w" --stream
expect_json replay_json_escape \
    '"".join(e.get("text", "") for e in ev) == "\"\n\ufffd" and ev[-1]["finish"] == "length"' \
    "$CLI" replay --vocab "$GPT2" --logits "$TMP/quote.npy" --json
expect_json replay_json_length \
    'ev[-1] == {"finish": "length", "stop": None, "reason": "length"} and len(ev) == 3' \
    "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --json --max-tokens 2
expect_json replay_json_stop_token \
    'ev[-1] == {"finish": "stop", "stop": 995, "reason": "stop_token"}' \
    "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --json --stop-token-ids 5,995
expect_json replay_logprobs \
    'ev[0]["rank"] == 1 and abs(ev[0]["logprob"]) < 1e-3 and ev[0]["top"][0] == {"id": 15496, "logprob": 0, "bytes": list(b"Hello")} and len(ev[0]["top"]) == 2' \
    "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --json --logprobs 2

# the regex needs PCRE2: either it works or it says why, with status 2
"$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --stop-regex 'w[a-z]+' >"$TMP/out" 2>"$TMP/err"
rc=$?
if { [ $rc -eq 0 ] && [ "$(cat "$TMP/out")" = "Hello " ]; } ||
   { [ $rc -eq 2 ] && grep -q PCRE2 "$TMP/err"; }; then ok; else bad "replay_regex: rc $rc $(cat "$TMP/err")"; fi

"$CLI" replay --help >/dev/null 2>&1 && ok || bad replay_help

# ---- replay: bad input -------------------------------------------------------
expect_bad replay_no_vocab "$CLI" replay --logits "$TMP/hello.npy"
expect_bad replay_no_logits "$CLI" replay --vocab "$GPT2"
expect_bad replay_missing_logits "$CLI" replay --vocab "$GPT2" --logits "$TMP/none.npy"
printf 'not a numpy file' >"$TMP/junk.npy"
expect_bad replay_junk_logits "$CLI" replay --vocab "$GPT2" --logits "$TMP/junk.npy"
expect_bad replay_missing_vocab "$CLI" replay --vocab "$TMP/none.gguf" --logits "$TMP/hello.npy"
expect_bad replay_nan "$CLI" replay --vocab "$GPT2" --logits "$TMP/nan.npy"
grep -q NaN "$TMP/err" && ok || bad "replay_nan_message: $(cat "$TMP/err")"
expect_bad replay_empty_stop "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --stop ""
expect_bad replay_bad_regex "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --stop-regex 'a('
expect_bad replay_max_zero "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --max-tokens 0
expect_bad replay_min_gt_max "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" \
    --min-tokens 5 --max-tokens 2
expect_bad replay_logprobs_no_json "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --logprobs 2
expect_bad replay_bad_top_p "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --top-p 2
expect_bad replay_unknown_flag "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --bogus
expect_bad replay_missing_value "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" --stop
expect_bad replay_output_tokens "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" \
    --output-tokens 1,2
expect_bad replay_bad_prompt "$CLI" replay --vocab "$GPT2" --logits "$TMP/hello.npy" \
    --prompt-tokens 1,99999999

# Rows shorter than the vocabulary are rejected as probs and explain reject
# them (the same message); longer rows (a padded output layer) are fine.
npy "$TMP/short.npy" 16000 $HELLO $WORLD
npy "$TMP/padded.npy" $((V + 7)) $HELLO $WORLD $BANG $EOS
expect_bad replay_short_rows "$CLI" replay --vocab "$GPT2" --logits "$TMP/short.npy"
sed 's/^nextok replay: //' "$TMP/err" >"$TMP/replay_msg"
grep -q "logits length 16000 does not match --vocab .* (50257 tokens)" "$TMP/replay_msg" && ok ||
    bad "replay_short_rows message: $(cat "$TMP/err")"
for c in probs explain; do
    expect_bad "${c}_short_rows" "$CLI" $c --vocab "$GPT2" --logits "$TMP/short.npy"
    sed "s/^nextok $c: //" "$TMP/err" | cmp -s - "$TMP/replay_msg" && ok ||
        bad "replay and $c word it differently: $(cat "$TMP/err") / $(cat "$TMP/replay_msg")"
done
expect_out replay_padded_rows "Hello world!" "$CLI" replay --vocab "$GPT2" --logits "$TMP/padded.npy"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
