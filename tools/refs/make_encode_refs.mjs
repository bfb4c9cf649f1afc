#!/usr/bin/env node
// make_encode_refs.mjs - regenerate tests/data/encode/ (reference token ids for
// the encoder tests) with real reference tokenizers:
//   - Hugging Face `tokenizers` (the Rust library, through its official Node
//     bindings, npm package `tokenizers`) for every tokenizer.json vocabulary;
//   - `tiktoken` (npm; the Rust tiktoken compiled to wasm) for o200k.
//
//   node tools/refs/make_encode_refs.mjs --data /work/shared/data --out tests/data/encode
//
// Options:
//   --data DIR      the shared data folder (vocab/..., corpus/...); files the repo
//                   ships (tests/data/<same sub-path>) are taken from the repo first
//   --out DIR       output folder (default tests/data/encode)
//   --modules DIR   folder whose node_modules holds the pinned reference packages
//                   (default tools/refs). If they are missing there, the script
//                   copies package.json + package-lock.json from tools/refs into DIR
//                   and runs `npm ci` in it.
//   --no-install    never run npm; fail if the packages are missing
//   --only a,b      only these vocabularies (names as below)
//
// Vocabularies that cannot be found are skipped with a message. The output is
// deterministic (no dates): rerunning it must leave `git diff` empty.
// File formats: see tests/data/README.md ("encode/").

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The helpers marked `export` are shared with make_synthetic_vocabs.mjs, which imports this
// module; main() runs only when this file is the script node was started with.

const SCRIPT_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(SCRIPT_DIR, '..', '..');

// ---------------------------------------------------------------- arguments
function parseArgs(argv) {
  const o = { data: path.resolve(REPO, '..', 'shared', 'data'), out: path.join(REPO, 'tests', 'data', 'encode'),
    modules: SCRIPT_DIR, install: true, only: null };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    const next = () => { if (i + 1 >= argv.length) die(`${a} needs a value`); return argv[++i]; };
    if (a === '--data') o.data = path.resolve(next());
    else if (a === '--out') o.out = path.resolve(next());
    else if (a === '--modules') o.modules = path.resolve(next());
    else if (a === '--no-install') o.install = false;
    else if (a === '--only') o.only = next().split(',').filter(Boolean);
    else if (a === '-h' || a === '--help') {
      console.log(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 22).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
      process.exit(0);
    } else die(`unknown argument ${a} (see --help)`);
  }
  return o;
}
function die(msg) { console.error(`make_encode_refs: ${msg}`); process.exit(1); }
const log = (...a) => console.log(...a);

// ---------------------------------------------------------------- what to generate
const VOCABS = [
  { name: 'gpt2', kind: 'hf', file: 'vocab/hf/gpt2/tokenizer.json' },
  { name: 'mistral-7b-v0.1', kind: 'hf', file: 'vocab/hf/mistral-7b-v0.1/tokenizer.json' },
  { name: 'o200k', kind: 'tiktoken', file: 'vocab/tiktoken/o200k_base.tiktoken' },
  { name: 'llama3', kind: 'hf', file: 'vocab/hf/llama3/tokenizer.json' },
  { name: 'qwen3', kind: 'hf', file: 'vocab/hf/qwen3/tokenizer.json' },
  { name: 'gemma3', kind: 'hf', file: 'vocab/hf/gemma3/tokenizer.json' },
];
export const CORPORA = ['corpus/austen-all.txt', 'corpus/spa-rv1909-nt.txt', 'corpus/proverbaro.txt', 'corpus/emoji-test.txt'];
const IDS_PREFIX_BYTES = 32768; // .ids files: the first corpus lines whose bytes sum to <= this
const BLOCK_LINES = 512;        // .digest files: lines per block

// ---------------------------------------------------------------- reference packages
function pinnedVersions() {
  const pkg = JSON.parse(fs.readFileSync(path.join(SCRIPT_DIR, 'package.json'), 'utf8'));
  return pkg.dependencies;
}
export function loadPackages(opt) {
  const pins = pinnedVersions();
  const installed = (name) => {
    const p = path.join(opt.modules, 'node_modules', name, 'package.json');
    return fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, 'utf8')).version : null;
  };
  const ok = () => Object.entries(pins).every(([n, v]) => installed(n) === v);
  if (!ok()) {
    if (!opt.install) die(`reference packages missing or not the pinned versions in ${opt.modules}/node_modules; run: cd tools/refs && npm ci`);
    fs.mkdirSync(opt.modules, { recursive: true });
    if (path.resolve(opt.modules) !== SCRIPT_DIR) {
      for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(SCRIPT_DIR, f), path.join(opt.modules, f));
    }
    log(`installing the pinned reference packages into ${opt.modules} (npm ci) ...`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: opt.modules, stdio: 'inherit' });
    if (!ok()) die('npm ci did not install the pinned versions');
  }
  const req = createRequire(path.join(opt.modules, 'package.json'));
  const tokenizers = req('tokenizers');
  const tiktokenLite = req('tiktoken/lite');
  const o200kMeta = JSON.parse(fs.readFileSync(req.resolve('tiktoken/encoders/o200k_base.json'), 'utf8'));
  return { pins, tokenizers, tiktokenLite, o200kMeta };
}

// ---------------------------------------------------------------- files
export function findFile(rel, opt) {
  for (const base of [path.join(REPO, 'tests', 'data'), opt.data]) {
    const p = path.join(base, rel);
    if (fs.existsSync(p)) return p;
  }
  return null;
}
export const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');
export const shortPath = (p, opt) => {
  const inRepo = path.relative(REPO, p);
  if (!inRepo.startsWith('..')) return inRepo;
  return '$DATA/' + path.relative(opt.data, p);
};

// Split the corpus bytes on 0x0A; each piece keeps its '\n'; a final empty piece is dropped.
export function splitLines(buf) {
  const out = [];
  let start = 0;
  for (;;) {
    const nl = buf.indexOf(0x0a, start);
    if (nl < 0) { if (start < buf.length) out.push(buf.subarray(start)); break; }
    out.push(buf.subarray(start, nl + 1));
    start = nl + 1;
  }
  return out;
}
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// ---------------------------------------------------------------- FNV-1a 64 (hi/lo 32-bit halves)
export class Fnv1a64 {
  constructor() { this.hi = 0xcbf29ce4; this.lo = 0x84222325; }
  byte(b) {
    // h ^= b; h *= 0x100000001b3 (= 2^40 + 0x1b3) mod 2^64
    const lo = (this.lo ^ b) >>> 0;
    const p = lo * 0x1b3;                       // < 2^41, exact in a double
    const carry = Math.floor(p / 4294967296);
    this.lo = p >>> 0;
    this.hi = (this.hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
  }
  int32(v) { v |= 0; this.byte(v & 0xff); this.byte((v >>> 8) & 0xff); this.byte((v >>> 16) & 0xff); this.byte((v >>> 24) & 0xff); }
  hex() { return this.hi.toString(16).padStart(8, '0') + this.lo.toString(16).padStart(8, '0'); }
}
export function fnvSelfTest() {
  const h = (bytes) => { const f = new Fnv1a64(); for (const b of bytes) f.byte(b); return f.hex(); };
  const vec = [['', 'cbf29ce484222325'], ['a', 'af63dc4c8601ec8c'], ['foobar', '85944171f73967e8']];
  for (const [s, want] of vec) if (h(Buffer.from(s)) !== want) die(`FNV-1a self-test failed on "${s}"`);
}

// ---------------------------------------------------------------- encoders
// Each encoder: { tool, source, plain(text), special(text), addSpecial(text), roundtrip(ids) -> Buffer,
//                 specialTexts: [strings matched as special tokens in ids_special] }
export async function makeHf(v, file, pk) {
  const { Tokenizer } = pk.tokenizers;
  const raw = fs.readFileSync(file);
  const json = JSON.parse(raw.toString('utf8'));
  const special = json.added_tokens.filter((t) => t.special).map((t) => t.content);
  // "plain": the same tokenizer.json with the content of each special added token replaced by a
  // placeholder that cannot occur in any input (it starts and ends with the noncharacter U+FDD0).
  // That is the Rust AddedVocabulary flag encode_special_tokens=true (transformers:
  // split_special_tokens=True), which the Node bindings do not expose: special-token text goes
  // through the normal pipeline; non-special added tokens are still split out, as in every HF
  // encode. The placeholders keep their slots, so every other added token keeps its id (checked
  // below; the Rust loader numbers added tokens that are not in the model's vocab in order).
  const plainJson = { ...json, added_tokens: json.added_tokens.map((t) => (t.special ? { ...t, content: `\ufdd0nextok-disabled-special-${t.id}\ufdd0` } : t)) };
  const tokPlain = Tokenizer.fromString(JSON.stringify(plainJson));
  const tokFull = Tokenizer.fromFile(file);
  for (const t of json.added_tokens) {
    if (tokFull.tokenToId(t.content) !== t.id) die(`${v.name}: added token ${JSON.stringify(t.content)} has id ${tokFull.tokenToId(t.content)}, not ${t.id}`);
    if (!t.special && tokPlain.tokenToId(t.content) !== t.id) die(`${v.name}: plain tokenizer moved added token ${JSON.stringify(t.content)} to id ${tokPlain.tokenToId(t.content)}`);
  }
  const enc = async (tok, text, add) => (await tok.encode(text, null, { addSpecialTokens: add })).getIds();
  return {
    tool: `tokenizers ${pk.pins.tokenizers} (npm: Hugging Face tokenizers, Rust, official Node bindings)`,
    source: file, sha: sha256(raw),
    specialTexts: special,
    nonSpecialAdded: json.added_tokens.length - special.length,
    plain: (t) => enc(tokPlain, t, false),
    special: (t) => enc(tokFull, t, false),
    addSpecial: (t) => enc(tokFull, t, true),
    decode: async (ids) => Buffer.from(await tokPlain.decode(ids, false), 'utf8'),
    plainRule: 'encode(text, add_special_tokens=false) with special-token matching off (= Rust encode_special_tokens=true: special-token text is plain text; non-special added tokens are still split out)',
  };
}
async function makeTiktoken(v, file, pk) {
  const { Tiktoken } = pk.tiktokenLite;
  const raw = fs.readFileSync(file);
  const meta = pk.o200kMeta; // OpenAI's o200k_base pattern and special tokens, as bundled in the tiktoken package
  const enc = new Tiktoken(raw.toString('utf8'), meta.special_tokens, meta.pat_str);
  const arr = (u) => Array.from(u);
  return {
    tool: `tiktoken ${pk.pins.tiktoken} (npm: OpenAI's Rust tiktoken as wasm) with the ranks file below, pat_str and special tokens ${JSON.stringify(meta.special_tokens)} of its bundled o200k_base`,
    source: file, sha: sha256(raw),
    specialTexts: Object.keys(meta.special_tokens),
    nonSpecialAdded: 0,
    plain: (t) => arr(enc.encode_ordinary(t)),
    special: (t) => arr(enc.encode(t, 'all')),
    addSpecial: (t) => arr(enc.encode(t, 'all')),
    decode: (ids) => Buffer.from(enc.decode(Uint32Array.from(ids))),
    plainRule: 'encode_ordinary(text) (special-token text is plain text)',
  };
}

// ---------------------------------------------------------------- corpus outputs
export async function doCorpus(v, encdr, corpusRel, opt) {
  const file = findFile(corpusRel, opt);
  const stem = path.basename(corpusRel).replace(/\.txt$/, '');
  if (!file) { log(`  ${v.name} x ${stem}: SKIP, corpus ${corpusRel} not found`); return null; }
  const buf = fs.readFileSync(file);
  const pieces = splitLines(buf);
  const texts = pieces.map((p) => utf8.decode(p)); // throws on invalid UTF-8
  const specialHits = encdr.specialTexts.filter((s) => texts.some((t) => t.includes(s)));
  const t0 = Date.now();
  let nIds = 0, nBad = 0, firstBad = -1, idsLines = [], prefixBytes = 0, prefixLines = 0;
  const blocks = [];
  let blk = null;
  for (let i = 0; i < texts.length; i++) {
    const ids = await encdr.plain(texts[i]);
    if (i % BLOCK_LINES === 0) { blk = { first: i, n: 0, ids: 0, h: new Fnv1a64() }; blocks.push(blk); }
    for (const id of ids) blk.h.int32(id);
    blk.h.int32(-1);
    blk.n++; blk.ids += ids.length; nIds += ids.length;
    if (prefixLines === i && prefixBytes + pieces[i].length <= IDS_PREFIX_BYTES) {
      prefixBytes += pieces[i].length; prefixLines++; idsLines.push(ids.join(' '));
    }
    const back = await encdr.decode(ids);
    if (!back.equals(pieces[i])) { nBad++; if (firstBad < 0) firstBad = i; }
  }
  const secs = (Date.now() - t0) / 1000;
  const fields = [
    `nextok encode reference: vocab ${v.name} x corpus ${stem}`,
    `vocab ${shortPath(encdr.source, opt)} sha256 ${encdr.sha}`,
    `corpus ${shortPath(file, opt)} sha256 ${sha256(buf)}`,
    `tool ${encdr.tool}`,
    `rules: corpus bytes split on 0x0A, each piece keeps its trailing \\n, a final empty piece is skipped; each piece encoded on its own: ${encdr.plainRule}; no BOS/EOS`,
    specialHits.length ? `special-token text in this corpus: ${JSON.stringify(specialHits)}` : 'no special-token text occurs in this corpus, so parsing special tokens would give the same ids',
  ];
  const stemOut = `${v.name}.${stem}`;
  const idsText = `# ${fields.join(' | ')} | this file: the first ${prefixLines} of ${texts.length} lines (${prefixBytes} bytes), one output line per corpus line, ids in decimal separated by single spaces\n` + idsLines.map((l) => l + '\n').join('');
  const dig = [
    ...fields.map((f) => `# ${f}`),
    `# totals: ${texts.length} lines, ${nIds} ids, ${blocks.length} blocks of ${BLOCK_LINES} lines (the last may be shorter)`,
    `# format: one line per block: <first_line_index (0-based)> <n_lines> <n_ids> <hash>; hash = FNV-1a 64-bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over, for each line of the block in order, each id as 4 bytes little-endian int32 followed by the 4 bytes of int32 -1 (ff ff ff ff); 16 lowercase hex digits`,
    ...blocks.map((b) => `${b.first} ${b.n} ${b.ids} ${b.h.hex()}`),
  ].join('\n') + '\n';
  fs.writeFileSync(path.join(opt.out, `${stemOut}.ids`), idsText);
  fs.writeFileSync(path.join(opt.out, `${stemOut}.digest`), dig);
  log(`  ${v.name} x ${stem}: ${texts.length} lines, ${nIds} ids, ${prefixLines} lines in .ids, ${secs.toFixed(1)} s; decode(encode(line)) != line: ${nBad}${nBad ? ` (first at line ${firstBad})` : ''}${specialHits.length ? `; special-token text present: ${specialHits.join(' ')}` : ''}`);
  return { lines: texts.length, ids: nIds, roundtripMismatch: nBad };
}

// ---------------------------------------------------------------- hand-picked strings
export function strings() {
  const S = [
    '', ' ', '  ', '                 ', '\n', '\n\n\n', '\t', '\t\t\tx', ' \t \n \r\n', '\r\n\r\n', '  \n  ',
    '  leading', 'trailing  ', '  both  ', 'a  b   c    d', 'Hello world', ' Hello world', '    Hello\n    Hello',
    '1234567890', '12,345.67', '3.14159 -42 1e10 0x1F 007',
    "I'm you're they'LL we've she'd it's", "DON'T Won't I'M", "rock 'n' roll ''quoted''",
    '中文测试：你好，世界。', '日本語のテキストとカタカナ、ひらがな', 'مرحبا بالعالم', 'नमस्ते दुनिया', 'สวัสดีชาวโลก',
    '안녕하세요 세상', '\u110b\u1161\u11ab\u1102\u1167\u11bc', 'Hello世界مرحبا123नमस्ते',
    'caf\u00e9 na\u00efve', 'cafe\u0301 nai\u0308ve', 'e\u0301\u0301 a\u0323\u0302', '\u2126 \u212b \ufb01 \u1e9b\u0323',
    '\u01c5 \u01c8 Titlecase', '\u2167 \u2460 \u00b2\u00b3 \u0661\u0662\u0663 \uff11\uff12',
    '\ud835\udc07\ud835\udc1e\ud835\udc25\ud835\udc25\ud835\udc28 \ud840\udf0e',
    '👍🏽 👋🏿', '👨‍👩‍👧‍👦', '🏳️‍🌈 ❤️', '🇯🇵🇺🇸', '😀😃😄😁',
    '<|endoftext|>', 'a<|endoftext|>b', '<s>', '</s>', '<s>Hello</s>', '<unk>', '<0x41>',
    '<|im_start|>user\nhi<|im_end|>', '<|begin_of_text|>x<|eot_id|>', '<start_of_turn>user\nhi<end_of_turn>',
    '<table><tr><td>x</td></tr></table>', '<think>\nok\n</think>', '<|endofprompt|>',
    '\u00a0non-breaking\u00a0space', 'zero\u200bwidth\u200cnon\u200djoiner', '\ufeffBOM at start',
    '\ufffd \ufffe \uffff \udbff\udfff', 'ctrl \u0001\u001f\u007f \u0085', 'nul a\u0000b',
    '\u2581meta \u2581\u2581space', '\u0120hello \u010a', 'a'.repeat(2000), '1234567890'.repeat(300),
    'def f(x):\n    if x:\n        return x  # c\n\treturn None\n',
    'int main(void) {\n\tprintf("%d\\n", 42);\n}\n',
    'https://example.com/path?q=1&r=a%20b#frag', 'mailto:someone@example.org http://日本.jp/パス',
    'ALLCAPS camelCase snake_case kebab-case', '!!!!!!??????......------======', 'Ĉiu ĵaŭdo ŝi manĝas', '¿Dónde está? ¡Allí!',
  ];
  return S;
}

// JSON string with \uXXXX escapes for everything not printable (controls, format characters,
// separators other than ' ', private use, unassigned/noncharacters) and, for legibility,
// combining diacritics U+0300..U+036F, conjoining Hangul jamo U+1100..U+11FF and variation
// selectors U+FE00..U+FE0F (so that NFC and NFD spellings look different).
const ESC = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Zs}\u0300-\u036f\u1100-\u11ff\ufe00-\ufe0f]/u;
export function jstr(s) {
  let o = '"';
  for (const ch of s) {
    if (ch === '"') o += '\\"';
    else if (ch === '\\') o += '\\\\';
    else if (ch !== ' ' && ESC.test(ch)) {
      for (let k = 0; k < ch.length; k++) o += '\\u' + ch.charCodeAt(k).toString(16).padStart(4, '0');
    } else o += ch;
  }
  return o + '"';
}

// The text of a strings.json-style file: {"tool", "columns" {col: description}, "vocabs" {name:
// {file, sha256, tool}}, "cases" [{"text", col: {vocab: [ids]}}]}, one member per line as above.
export function stringsJsonText(tool, columns, vocabInfo, cases, texts, what) {
  const cols = Object.keys(columns);
  const L = [];
  L.push('{');
  L.push(` "tool": ${jstr(tool)},`);
  L.push(' "columns": {');
  cols.forEach((col, i) => L.push(`  ${jstr(col)}: ${jstr(columns[col])}${i + 1 < cols.length ? ',' : ''}`));
  L.push(' },');
  L.push(` "vocabs": {${Object.entries(vocabInfo).map(([k, x]) => `\n  ${jstr(k)}: {"file": ${jstr(x.file)}, "sha256": ${jstr(x.sha256)}, "tool": ${jstr(x.tool)}}`).join(',')}\n },`);
  L.push(' "cases": [');
  cases.forEach((c, i) => {
    const parts = cols.map((col) => `   ${jstr(col)}: {${Object.entries(c[col]).map(([k, ids]) => `\n    ${jstr(k)}: [${ids.join(',')}]`).join(',')}\n   }`);
    L.push(`  {\n   "text": ${jstr(c.text)},\n${parts.join(',\n')}\n  }${i + 1 < cases.length ? ',' : ''}`);
  });
  L.push(' ]');
  L.push('}');
  const out = L.join('\n') + '\n';
  const back = JSON.parse(out); // must be valid JSON and round-trip the texts
  back.cases.forEach((c, i) => { if (c.text !== texts[i]) die(`${what}: case ${i} does not round-trip`); });
  return out;
}

async function doStrings(encoders, opt, pk) {
  const texts = strings();
  const file = path.join(opt.out, 'strings.json');
  let old = null;
  const missing = VOCABS.map((v) => v.name).filter((n) => !encoders[n]);
  if (missing.length && fs.existsSync(file)) {
    try { old = JSON.parse(fs.readFileSync(file, 'utf8')); } catch { old = null; }
    const same = old && old.cases.length === texts.length && old.cases.every((c, i) => c.text === texts[i]);
    if (!same) old = null;
    log(`  strings.json: ${missing.join(', ')} not available; ${old ? 'keeping their ids from the existing strings.json' : 'they are left out'}`);
  }
  const cols = ['ids', 'ids_special', 'ids_add_special'];
  const fn = { ids: 'plain', ids_special: 'special', ids_add_special: 'addSpecial' };
  const cases = [];
  for (const t of texts) {
    const c = { text: t };
    for (const col of cols) {
      c[col] = {};
      for (const v of VOCABS) {
        if (encoders[v.name]) c[col][v.name] = await encoders[v.name][fn[col]](t);
        else if (old) { const oc = old.cases[cases.length]; if (oc[col][v.name]) c[col][v.name] = oc[col][v.name]; }
      }
    }
    cases.push(c);
  }
  const vocabInfo = {};
  for (const v of VOCABS) {
    const e = encoders[v.name];
    if (e) vocabInfo[v.name] = { file: shortPath(e.source, opt), sha256: e.sha, tool: e.tool };
    else if (old && old.vocabs && old.vocabs[v.name]) vocabInfo[v.name] = old.vocabs[v.name];
  }
  const tool = `make_encode_refs.mjs with tokenizers ${pk.pins.tokenizers} (npm, Hugging Face's Rust tokenizers) for tokenizer.json vocabularies and tiktoken ${pk.pins.tiktoken} (npm, wasm build of OpenAI's Rust tiktoken) for o200k`;
  const columns = {
    ids: 'plain text, no BOS/EOS. HF: encode(text, add_special_tokens=false) with special-token matching off, i.e. the Rust encode_special_tokens=true / transformers split_special_tokens=True (done by loading the tokenizer.json with the content of each special added token replaced by a never-matching placeholder, ids unchanged): special-token text is tokenized as ordinary text; non-special added tokens (qwen3 <think> etc., gemma3 \\n runs, tabs, HTML tags, <unusedN>) are still split out as in every HF encode. tiktoken: encode_ordinary(text).',
    ids_special: 'special tokens parsed, no BOS/EOS. HF default: encode(text, add_special_tokens=false) on the unmodified tokenizer.json: every added token (special or not) found in the text becomes its id. tiktoken: encode(text, allowed_special="all").',
    ids_add_special: 'HF default with the post-processor: encode(text, add_special_tokens=true) on the unmodified tokenizer.json (mistral-7b-v0.1 prepends <s>=1, gemma3 <bos>=2; gpt2, llama3 and qwen3 add nothing with these tokenizer.json files). tiktoken has no such step: same as ids_special.',
  };
  const out = stringsJsonText(tool, columns, vocabInfo, cases, texts, 'strings.json');
  fs.writeFileSync(file, out);
  log(`  strings.json: ${cases.length} cases x ${Object.keys(vocabInfo).length} vocabularies x ${cols.length} columns`);
}

// ---------------------------------------------------------------- main
async function main() {
  const opt = parseArgs(process.argv);
  const t0 = Date.now();
  fnvSelfTest();
  const pk = loadPackages(opt);
  fs.mkdirSync(opt.out, { recursive: true });
  log(`reference tools: tokenizers ${pk.pins.tokenizers}, tiktoken ${pk.pins.tiktoken} (node ${process.version}); data ${opt.data}; out ${opt.out}`);
  const encoders = {};
  for (const v of VOCABS) {
    if (opt.only && !opt.only.includes(v.name)) continue;
    const file = findFile(v.file, opt);
    if (!file) { log(`SKIP ${v.name}: ${v.file} not found in tests/data/ or ${opt.data} (external vocabulary?)`); continue; }
    encoders[v.name] = v.kind === 'hf' ? await makeHf(v, file, pk) : await makeTiktoken(v, file, pk);
  }
  for (const v of VOCABS) {
    if (!encoders[v.name]) continue;
    log(`${v.name} (${shortPath(encoders[v.name].source, opt)})`);
    for (const c of CORPORA) await doCorpus(v, encoders[v.name], c, opt);
  }
  await doStrings(encoders, opt, pk);
  log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => { console.error(e); process.exit(1); });
}
