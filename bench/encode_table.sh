#!/bin/sh
# Encoding speed of every vocabulary family on the shipped corpora: one JSON
# line per (vocabulary, corpus) from `nextok encode --bench` (the whole file
# as one string, no BOS/EOS, median of --runs), then a table of MB/s.
#   sh bench/encode_table.sh [NEXTOK] [RUNS]      (external vocabularies from $NEXTOK_DATA_DIR)
NEXTOK=${1:-build/nextok}
RUNS=${2:-5}
DATA=${NEXTOK_DATA_DIR:-../shared/data}
T=tests/data
for v in "$T/vocab/hf/gpt2/tokenizer.json" "$T/vocab/gguf/ggml-vocab-gpt-2.gguf" \
         "$DATA/vocab/hf/llama3/tokenizer.json" "$DATA/vocab/hf/qwen3/tokenizer.json" \
         "$T/vocab/tiktoken/o200k_base.tiktoken" "$T/vocab/hf/mistral-7b-v0.1/tokenizer.json" \
         "$T/vocab/gguf/ggml-vocab-phi-3.gguf" "$DATA/vocab/hf/gemma3/tokenizer.json" \
         "$T/vocab/synthetic/unigram.json" "$T/vocab/synthetic/wordpiece.json"; do
    [ -f "$v" ] || { echo "skip $v (not found)" >&2; continue; }
    for c in austen-all spa-rv1909-nt proverbaro emoji-test; do
        "$NEXTOK" encode --vocab "$v" --text-file "$T/corpus/$c.txt" --no-bos --no-eos --bench --runs "$RUNS"
    done
done | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
names = ["austen-all", "spa-rv1909-nt", "proverbaro", "emoji-test"]
print("| vocabulary | " + " | ".join(names) + " |")
print("|---|" + "---:|" * len(names))
by = {}
for r in rows:
    by.setdefault(r["vocab"], {})[r["text"].split("/")[-1][:-4]] = r["mb_per_s"]
for v, d in by.items():
    print("| `" + v.split("/vocab/")[-1] + "` | " + " | ".join("%.1f" % d[n] if n in d else "-" for n in names) + " |")
'
