#!/usr/bin/env node
// cross_check.mjs - check the files in tests/data/encode/ against independent
// implementations (not the ones that made them):
//   - @huggingface/tokenizers (tokenizers.js, pure JavaScript) for tokenizer.json vocabularies;
//   - js-tiktoken (pure JavaScript) for o200k, loaded from the repo's o200k_base.tiktoken.
// Every line of every corpus is re-encoded; each .digest block and each .ids line must match,
// and so must all three columns of strings.json.
//
//   node tools/refs/cross_check.mjs --data ../shared/data [--out tests/data/encode] [--modules DIR]
//
// Packages: the devDependencies of tools/refs/package.json (`cd tools/refs && npm ci`), or
// --modules DIR holding them. Exit status 1 on any mismatch. Takes about 2 minutes.

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const SCRIPT_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(SCRIPT_DIR, '..', '..');
const opt = { data: path.resolve(REPO, '..', 'shared', 'data'), out: path.join(REPO, 'tests', 'data', 'encode'), modules: SCRIPT_DIR };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--data') opt.data = path.resolve(process.argv[++i]);
  else if (a === '--out') opt.out = path.resolve(process.argv[++i]);
  else if (a === '--modules') opt.modules = path.resolve(process.argv[++i]);
  else { console.error(`cross_check: unknown argument ${a}`); process.exit(2); }
}
const req = createRequire(path.join(opt.modules, 'package.json'));
let JsTokenizer, JsTiktoken, o200kJs;
try {
  ({ Tokenizer: JsTokenizer } = req('@huggingface/tokenizers'));
  ({ Tiktoken: JsTiktoken } = req('js-tiktoken/lite'));
  o200kJs = req('js-tiktoken/ranks/o200k_base');
  o200kJs = o200kJs.default ?? o200kJs;
} catch (e) {
  console.error(`cross_check: packages missing in ${opt.modules}/node_modules (cd tools/refs && npm ci): ${e.message}`);
  process.exit(2);
}
const version = (n) => JSON.parse(fs.readFileSync(path.join(opt.modules, 'node_modules', n, 'package.json'), 'utf8')).version;

const HF = {
  gpt2: 'vocab/hf/gpt2/tokenizer.json', 'mistral-7b-v0.1': 'vocab/hf/mistral-7b-v0.1/tokenizer.json',
  llama3: 'vocab/hf/llama3/tokenizer.json', qwen3: 'vocab/hf/qwen3/tokenizer.json', gemma3: 'vocab/hf/gemma3/tokenizer.json',
};
const CORPORA = ['austen-all', 'spa-rv1909-nt', 'proverbaro', 'emoji-test'];
const find = (rel) => [path.join(REPO, 'tests', 'data', rel), path.join(opt.data, rel)].find((p) => fs.existsSync(p)) ?? null;
const readJson = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));

// encoders: name -> { plain, special, addSpecial }
const enc = {};
for (const [name, rel] of Object.entries(HF)) {
  const f = find(rel);
  if (!f) { console.log(`SKIP ${name}: ${rel} not found`); continue; }
  const json = readJson(f);
  const cf = f.replace(/tokenizer\.json$/, 'tokenizer_config.json');
  const cfg = fs.existsSync(cf) ? readJson(cf) : {};
  const full = new JsTokenizer(json, cfg);
  // tokenizers.js takes added-token ids from the file, so dropping the special ones is plain text.
  const plainCfg = { ...cfg, additional_special_tokens: [] };
  delete plainCfg.added_tokens_decoder;
  const plain = new JsTokenizer({ ...json, added_tokens: json.added_tokens.filter((t) => !t.special) }, plainCfg);
  enc[name] = {
    plain: (t) => plain.encode(t, { add_special_tokens: false }).ids,
    special: (t) => full.encode(t, { add_special_tokens: false }).ids,
    addSpecial: (t) => full.encode(t, { add_special_tokens: true }).ids,
  };
}
{
  const f = find('vocab/tiktoken/o200k_base.tiktoken');
  if (!f) console.log('SKIP o200k: vocab/tiktoken/o200k_base.tiktoken not found');
  else {
    // the ranks file "base64 rank" per line, in js-tiktoken's "! rank base64" form
    const ranks = fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => { const [b, r] = l.split(' '); return `! ${r} ${b}`; }).join('\n');
    const specials = { '<|endoftext|>': 199999, '<|endofprompt|>': 200018 };
    const t = new JsTiktoken({ pat_str: o200kJs.pat_str, special_tokens: specials, bpe_ranks: ranks });
    enc.o200k = { plain: (s) => t.encode(s, [], []), special: (s) => t.encode(s, 'all'), addSpecial: (s) => t.encode(s, 'all') };
  }
}

function fnvBlock(lines) {
  let h = 0xcbf29ce484222325n;
  const P = 0x100000001b3n, M = (1n << 64n) - 1n;
  const b4 = Buffer.alloc(4);
  for (const ids of lines) {
    for (const id of [...ids, -1]) {
      b4.writeInt32LE(id);
      for (const b of b4) { h ^= BigInt(b); h = (h * P) & M; }
    }
  }
  return h.toString(16).padStart(16, '0');
}

let bad = 0, checked = 0;
const t0 = Date.now();
console.log(`cross-check with @huggingface/tokenizers ${version('@huggingface/tokenizers')} and js-tiktoken ${version('js-tiktoken')}`);
for (const [name, e] of Object.entries(enc)) {
  for (const c of CORPORA) {
    const dig = path.join(opt.out, `${name}.${c}.digest`), idsf = path.join(opt.out, `${name}.${c}.ids`);
    const cf = find(`corpus/${c}.txt`);
    if (!fs.existsSync(dig) || !cf) { console.log(`  ${name} x ${c}: SKIP (no ${fs.existsSync(dig) ? 'corpus' : '.digest'})`); continue; }
    const s = fs.readFileSync(cf, 'utf8');
    const lines = s.split('\n').map((l, i, a) => (i < a.length - 1 ? l + '\n' : l));
    if (lines[lines.length - 1] === '') lines.pop();
    const blocks = fs.readFileSync(dig, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(' '));
    const idsLines = fs.readFileSync(idsf, 'utf8').split('\n').filter((l, i, a) => !l.startsWith('#') && i < a.length - 1);
    let nb = 0, nl = 0;
    if (blocks.reduce((n, b) => n + Number(b[1]), 0) !== lines.length) { nb++; console.log(`  ${name} x ${c}: digest covers a different number of lines`); }
    for (const [first, n, nIds, hash] of blocks) {
      const got = [];
      for (let i = Number(first); i < Number(first) + Number(n); i++) got.push(e.plain(lines[i]));
      const cnt = got.reduce((a, x) => a + x.length, 0);
      if (cnt !== Number(nIds) || fnvBlock(got) !== hash) { nb++; if (nb <= 3) console.log(`  ${name} x ${c}: block ${first} differs`); }
      got.forEach((ids, k) => { const i = Number(first) + k; if (i < idsLines.length && idsLines[i] !== ids.join(' ')) { nl++; if (nl <= 3) console.log(`  ${name} x ${c}: .ids line ${i} differs`); } });
    }
    checked++;
    bad += nb + nl;
    console.log(`  ${name} x ${c}: ${lines.length} lines, ${blocks.length} blocks: ${nb} blocks and ${nl} .ids lines differ`);
  }
}
const sj = path.join(opt.out, 'strings.json');
if (fs.existsSync(sj)) {
  const S = readJson(sj);
  const cols = { ids: 'plain', ids_special: 'special', ids_add_special: 'addSpecial' };
  let ns = 0, nc = 0;
  for (const cs of S.cases) for (const [col, fn] of Object.entries(cols)) for (const [v, ids] of Object.entries(cs[col])) {
    if (!enc[v]) continue;
    nc++;
    const got = enc[v][fn](cs.text);
    if (got.join(' ') !== ids.join(' ')) { ns++; if (ns <= 5) console.log(`  strings.json ${col} ${v} ${JSON.stringify(cs.text).slice(0, 40)}: ${got.join(' ').slice(0, 80)} vs ${ids.join(' ').slice(0, 80)}`); }
  }
  bad += ns;
  console.log(`  strings.json: ${nc} (case, column, vocab) entries, ${ns} differ`);
}
console.log(`${bad ? 'MISMATCHES: ' + bad : 'all match'} (${checked} corpus files, ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
process.exit(bad ? 1 : 0);
