#!/usr/bin/env python3
"""Write tests/data/grammars/json-values.txt: every `data` value of the
JSON-Schema-Test-Suite (draft 2020-12) as JSON text, one per line, serialized
by Python's json module (compact; and indented, with its newlines escaped as
they stay inside one line only when compact), for the built-in JSON grammar's
tests. Usage: python3 tools/refs/make_json_values.py SUITE_DIR OUT_FILE"""
import json, os, sys

suite, out = sys.argv[1], sys.argv[2]
texts = set()
for name in sorted(os.listdir(suite)):
    if not name.endswith(".json"):
        continue
    with open(os.path.join(suite, name), encoding="utf-8") as f:
        groups = json.load(f)
    for g in groups:
        texts.add(json.dumps(g["schema"], ensure_ascii=False, separators=(",", ":")))
        for t in g["tests"]:
            texts.add(json.dumps(t["data"], ensure_ascii=False, separators=(",", ":")))
            texts.add(json.dumps(t["data"], ensure_ascii=True, separators=(", ", ": ")))
with open(out, "w", encoding="utf-8", newline="\n") as f:
    f.write("# every data value and schema of JSON-Schema-Test-Suite draft2020-12 (commit in\n")
    f.write("# ../shared/data/json-schema-test-suite/COMMIT), one JSON text per line, by\n")
    f.write("# tools/refs/make_json_values.py (Python's json module); MIT, licenses/JSON-Schema-Test-Suite-LICENSE\n")
    for t in sorted(texts):
        f.write(t + "\n")
print(len(texts), "texts")
