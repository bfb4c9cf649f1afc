#!/usr/bin/env node
// make_synthetic_vocabs.mjs - build two small synthetic tokenizer.json files, a Unigram and a
// WordPiece model, from vocabularies the repo already ships (no Unigram or WordPiece vocabulary
// with a licence that allows shipping was at hand), and their reference encodings with Hugging
// Face tokenizers (npm `tokenizers`, pinned in package.json), in the formats of
// make_encode_refs.mjs (tests/data/README.md):
//
//   node tools/refs/make_synthetic_vocabs.mjs [--modules /tmp/refs-node]
//
// Writes (deterministic: a rerun with the same inputs leaves `git diff` empty):
//   tests/data/vocab/synthetic/unigram.json      from tests/data/vocab/hf/mistral-7b-v0.1/tokenizer.json
//   tests/data/vocab/synthetic/wordpiece.json    from tests/data/vocab/hf/gpt2/tokenizer.json
//   tests/data/vocab/synthetic/hf-char-classes.txt  BertPreTokenizer's whitespace and punctuation
//                                                sets and Lowercase's expansions, probed code point by
//                                                code point from the reference
//   tests/data/encode/{unigram,wordpiece}.<corpus>.{ids,digest}, strings-synthetic.json,
//   tests/data/encode/unigram-probes.json, wordpiece-probes.json
//
// Options:
//   --modules DIR   folder whose node_modules holds the pinned packages (default tools/refs;
//                   installed there with `npm ci` when missing, as make_encode_refs.mjs does)
//   --no-install    never run npm
//   --vocab-out DIR output folder of the tokenizer.json files (default tests/data/vocab/synthetic)
//   --out DIR       output folder of the reference ids (default tests/data/encode)
//   --vocabs-only   only the files in --vocab-out
//   --check         write nothing: re-encode everything (corpora, strings, probes) with two
//                   independent implementations and compare with the files written: this
//                   script's own plain-JS models (UnigramJs, WordPieceJs below; exit status 1 on
//                   any mismatch) and tokenizers.js (@huggingface/tokenizers, a devDependency;
//                   its known deviations are listed, not fatal: see check())
//
// The construction (formulas) is documented in tests/data/README.md ("Synthetic vocabularies").

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  loadPackages, makeHf, doCorpus, strings, stringsJsonText, jstr, sha256, shortPath, findFile, splitLines,
  Fnv1a64, fnvSelfTest, CORPORA,
} from './make_encode_refs.mjs';

const SCRIPT_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(SCRIPT_DIR, '..', '..');
const DATA = path.join(REPO, 'tests', 'data');

function parseArgs(argv) {
  const o = { modules: SCRIPT_DIR, install: true, vocabOut: path.join(DATA, 'vocab', 'synthetic'),
    out: path.join(DATA, 'encode'), vocabsOnly: false, check: false };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    const next = () => { if (i + 1 >= argv.length) die(`${a} needs a value`); return argv[++i]; };
    if (a === '--modules') o.modules = path.resolve(next());
    else if (a === '--no-install') o.install = false;
    else if (a === '--vocab-out') o.vocabOut = path.resolve(next());
    else if (a === '--out') o.out = path.resolve(next());
    else if (a === '--vocabs-only') o.vocabsOnly = true;
    else if (a === '--check') o.check = true;
    else if (a === '-h' || a === '--help') {
      const lines = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1);
      console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith('//'))).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
      process.exit(0);
    } else die(`unknown argument ${a} (see --help)`);
  }
  // make_encode_refs' helpers look corpora up in tests/data first, then in opt.data: only the repo here.
  o.data = DATA;
  return o;
}
function die(msg) { console.error(`make_synthetic_vocabs: ${msg}`); process.exit(1); }
const log = (...a) => console.log(...a);
const readJson = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));

const MISTRAL = path.join(DATA, 'vocab', 'hf', 'mistral-7b-v0.1', 'tokenizer.json');
const GPT2 = path.join(DATA, 'vocab', 'hf', 'gpt2', 'tokenizer.json');
const WORDPIECE_MAX = 30000;

// ---------------------------------------------------------------- Unigram
// Pieces: Mistral 7B v0.1's 32000 pieces in id order (<unk> <s> </s>, <0x00>..<0xFF>, then the
// merged pieces). Score of piece i: 0.0 for i <= 258 (specials and byte pieces); otherwise
//   -ln(i - 256) - 0.01 * (code points in the piece)
// rounded to 4 decimals (Math.round(x * 1e4) / 1e4, written in JavaScript's shortest form, so at
// most 4 decimals and exactly parsed by any correct strtod / serde_json). Exact ties between
// segmentations are possible in principle (ln a + ln b = ln c + ln d when a*b = c*d); --check
// reports the smallest gap between the best and the second-best candidate of every Viterbi step
// on a chosen path over all the test inputs, so that a tie would be seen (there is none).
function unigramScore(id, piece) {
  if (id <= 258) return 0;
  const x = -Math.log(id - 256) - 0.01 * [...piece].length;
  return Math.round(x * 1e4) / 1e4;
}
const fmtScore = (x) => (Number.isInteger(x) ? x.toFixed(1) : String(x));

const ADDED = (list) => list.map(([id, content]) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
const addedJson = (list) => ' "added_tokens": [\n' + list.map((t) => '  ' + JSON.stringify(t).replace(/,"/g, ', "').replace(/":/g, '": ')).join(',\n') + '\n ],';

function buildUnigram() {
  const src = readJson(MISTRAL);
  const pieces = Object.entries(src.model.vocab).sort((a, b) => a[1] - b[1]);
  pieces.forEach(([p, id], i) => { if (id !== i) die(`mistral vocab: id ${id} at position ${i}`); });
  const vocab = pieces.filter(([p]) => p.length > 0).map(([p], i) => [p, unigramScore(i, p)]);
  if (vocab.length !== pieces.length) die('mistral vocab has empty pieces: ids would shift');
  const ms = { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true };
  const L = ['{', ' "version": "1.0",', ' "truncation": null,', ' "padding": null,'];
  L.push(addedJson(ADDED([[0, '<unk>'], [1, '<s>'], [2, '</s>']])));
  L.push(' "normalizer": null,');
  L.push(` "pre_tokenizer": ${fmtObj(ms)},`);
  L.push(' "post_processor": null,');
  L.push(` "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, ${fmtObj(ms)}]},`);
  L.push(' "model": {');
  L.push('  "type": "Unigram",');
  L.push('  "unk_id": 0,');
  L.push('  "vocab": [');
  L.push(vocab.map(([p, s]) => `   [${JSON.stringify(p)}, ${fmtScore(s)}]`).join(',\n'));
  L.push('  ],');
  L.push('  "byte_fallback": true');
  L.push(' }');
  L.push('}');
  return { text: L.join('\n') + '\n', vocab };
}
function fmtObj(o) { return '{' + Object.entries(o).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ') + '}'; }

// ---------------------------------------------------------------- WordPiece
// GPT-2's byte-to-unicode map (bytes 33..126, 161..172, 174..255 stand for themselves, the other
// 68 bytes for U+0100.. in byte order), inverted: token text -> raw bytes.
function gpt2ByteDecoder() {
  const keep = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const dec = new Map();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (keep.includes(b)) dec.set(String.fromCodePoint(b), b);
    else dec.set(String.fromCodePoint(256 + n++), b);
  }
  return dec;
}
const lowerPerChar = (s) => [...s].map((c) => c.toLowerCase()).join(''); // = Rust char::to_lowercase per char (checked for every code point, hf-char-classes.txt)
const utf8Fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function buildWordPiece() {
  const src = readJson(GPT2);
  const dec = gpt2ByteDecoder();
  const out = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  for (let cp = 0x21; cp <= 0x7e; cp++) { const c = String.fromCodePoint(cp); if (!/[A-Za-z]/.test(c)) out.push(c); } // 32 punctuation + 10 digits, in code order
  const seen = new Set(out);
  const tokens = Object.entries(src.model.vocab).sort((a, b) => a[1] - b[1]);
  let lastId = -1;
  for (const [tok, id] of tokens) {
    if (out.length >= WORDPIECE_MAX) break;
    lastId = id;
    let text;
    try { text = utf8Fatal.decode(Uint8Array.from([...tok].map((c) => dec.get(c)))); } catch { continue; } // not whole UTF-8
    let piece;
    if (/^ \p{L}+$/u.test(text)) piece = lowerPerChar(text.slice(1));
    else if (/^\p{L}+$/u.test(text)) piece = '##' + lowerPerChar(text);
    else continue;
    if (seen.has(piece)) continue;
    seen.add(piece);
    out.push(piece);
  }
  const L = ['{', ' "version": "1.0",', ' "truncation": null,', ' "padding": null,'];
  L.push(addedJson(ADDED(out.slice(0, 5).map((t, i) => [i, t]))));
  L.push(' "normalizer": {"type": "Lowercase"},');
  L.push(' "pre_tokenizer": {"type": "BertPreTokenizer"},');
  L.push(' "post_processor": null,');
  L.push(' "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},');
  L.push(' "model": {');
  L.push('  "type": "WordPiece",');
  L.push('  "unk_token": "[UNK]",');
  L.push('  "continuing_subword_prefix": "##",');
  L.push('  "max_input_chars_per_word": 100,');
  L.push('  "vocab": {');
  L.push(out.map((p, i) => `   ${JSON.stringify(p)}: ${i}`).join(',\n'));
  L.push('  }');
  L.push(' }');
  L.push('}');
  return { text: L.join('\n') + '\n', vocab: out, lastId };
}

// ---------------------------------------------------------------- character classes of the reference
// Probed through the reference's own components: bertPreTokenizer() on "a" + c + "b" for every code
// point c (2 pieces: c is whitespace, removed; 3 pieces: c is punctuation, isolated) and
// lowercase() on c.
export function charClasses(tk) {
  const pre = tk.bertPreTokenizer();
  const low = tk.lowercase();
  const ws = [], punct = [], multi = [], lowDiff = [];
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    const r = pre.preTokenizeString('a' + c + 'b');
    if (r.length === 2) ws.push(cp);
    else if (r.length === 3) punct.push(cp);
    else if (r.length !== 1) die(`BertPreTokenizer: unexpected split of U+${cp.toString(16)}`);
    const l = low.normalizeString(c);
    if (l !== c.toLowerCase()) lowDiff.push(cp);
    if ([...l].length !== 1) multi.push([cp, l]);
  }
  const hex = (cp) => cp.toString(16).toUpperCase().padStart(4, '0');
  const ranges = (cps) => {
    const r = [];
    for (const cp of cps) { const last = r[r.length - 1]; if (last && last[1] === cp - 1) last[1] = cp; else r.push([cp, cp]); }
    return r;
  };
  const L = [
    '# nextok: character classes of Hugging Face tokenizers (npm `tokenizers`, Rust), probed code point by code point',
    '# by tools/refs/make_synthetic_vocabs.mjs (see tests/data/README.md, "Synthetic vocabularies"). Surrogates are not probed.',
    '# W first last: BertPreTokenizer whitespace (split, removed) = Rust char::is_whitespace (White_Space)',
    '# P first last: BertPreTokenizer punctuation (isolated) = char::is_ascii_punctuation || unicode_categories 0.1.1',
    '#               is_punctuation (Pc Pd Pe Pf Pi Po Ps of an old Unicode version, not the current one)',
    '# X cp lower...: Lowercase normalizer (NormalizedString::lowercase = char::to_lowercase per code point, no',
    '#               context, so no final sigma) where the result is not one code point',
    `# counts: ${ws.length} W, ${punct.length} P, ${multi.length} X; every other code point lowercases as ECMAScript`,
    `# String.prototype.toLowerCase does on that code point alone (${lowDiff.length} differ, Node ${process.version}, Unicode ${process.versions.unicode})`,
    '# format: hex code points, ranges inclusive',
  ];
  for (const [a, b] of ranges(ws)) L.push(`W ${hex(a)} ${hex(b)}`);
  for (const [a, b] of ranges(punct)) L.push(`P ${hex(a)} ${hex(b)}`);
  for (const [cp, l] of multi) L.push(`X ${hex(cp)} ${[...l].map((c) => hex(c.codePointAt(0))).join(' ')}`);
  if (lowDiff.length) die(`Lowercase differs from per-code-point toLowerCase on ${lowDiff.length} code points (${lowDiff.slice(0, 5).map(hex)}): lowerPerChar() would build wrong pieces`);
  return { text: L.join('\n') + '\n', ws: new Set(ws), punct: new Set(punct) };
}

// ---------------------------------------------------------------- probes (unigram-probes.json, wordpiece-probes.json)
// Crafted strings for the rules documented in tests/data/README.md; encoded like strings.json.
function probes(name) {
  const w = (n, c = 'a') => c.repeat(n);
  if (name === 'wordpiece') {
    return [
      'Hello, World!', 'HELLO hello HeLLo', 'unaffable unbelievably xylophonist', 'a.b a,b a-b a_b a\'b',
      'the then thee theatre', 'don\'t', '\u0130stanbul \u0130', 'I\u0307', '\u03a3\u039f\u03a3 \u03c3\u03bf\u03c2', 'STRASSE stra\u00dfe \u1e9e',
      '\u01c5 \u01c4 \u01c6', 'Caf\u00e9 CAF\u00c9 cafe\u0301', 'na\u00efve \u00c9cole', 'M\u00fcnchen \u00dcber',
      'a\u00a0b', 'a\u0085b', 'a\u2028b a\u2029b', 'a\u200bb', 'a\ufeffb', 'a\u3000b', 'a\u1680b a\u180eb', 'a\u000bb\u000cc', 'a\u001cb\u001fc',
      '\u00bfQu\u00e9? \u00a1S\u00ed!', 'wait\u2026 \u2014 \u2013 \u201cquoted\u201d \u2018x\u2019', '\u00ab\u00bb \u00b7 \u00a7 \u00b6', '$5 + 3 = 8 ^ ~ | ` < >',
      '\u00a9 \u00ae \u2122 \u20ac \u00a3 \u00b0', 'a\u166db a\u{111C9}b a\u2e43b a\u061db', '\u3002\u3001\uff01\uff1f\uff08\uff09',
      w(100), w(101), w(99) + 'b', 'x' + w(100, '\u00e9'), w(100, '\u00c9'), w(50, 'ab'), 'the' + w(97, 's'), 'the' + w(98, 's'),
      '0 1 12 123 9.5 1,000 3rd 2nd', 'abc123 x1 1x', '\ud83d\ude00 a\ud83d\ude00b', '\u4e2d\u6587 \u65e5\u672c\u8a9e',
      '[CLS] hello [SEP]', '[cls] [MASK]x [UNK] [PAD][PAD]', '##ing ## #', 'tab\there\nnewline\r\nend', '   ', '',
    ];
  }
  return [
    'Hello world', 'hello  world   end', ' leading space', 'trailing space ', '\u2581 literal \u2581\u2581 meta',
    '<unk>', '<unk><unk>', 'a<unk>b', '\ud83d\ude00<unk>', '<s>', '</s>x', '<s></s>', '<0x41>', '<0x41><0x42>', '<0xZZ>',
    '\ud83d\ude00', '\ud83d\ude00\ud83d\ude01', 'a\ud83d\ude00b', '\u4e2d\u6587', 'caf\u00e9 cafe\u0301', '\t\ttab', 'line\n', '\r\n',
    'unaffable', 'internationalization', 'the the the', w(30), w(31, 'ab'), 'x'.repeat(17), '\u00e9'.repeat(9),
    '', ' ', '  ', '\u00a0', '\u3000x',
  ];
}

// ---------------------------------------------------------------- own plain-JS models (for --check)
// Unigram exactly as tokenizers' Unigram::encode_optimized + tokenize (models/unigram/model.rs):
// per pre-token, best path over byte positions, candidates visited by start position and then by
// increasing length (the trie's common-prefix order), a later candidate replacing the best only
// when strictly greater; a start with no one-character piece gets an unk candidate scored
// min_score - 10; consecutive path nodes with id unk_id are fused; a fused string that is not a
// piece becomes its UTF-8 bytes <0xXX>. Returns ids and the smallest best-vs-second gap along the
// chosen path (tie report).
export class UnigramJs {
  constructor(vocab) {
    this.ids = new Map(vocab.map(([p], i) => [p, i]));
    this.scores = vocab.map(([, s]) => s);
    this.maxLen = Math.max(...vocab.map(([p]) => p.length));
    this.unkScore = Math.min(...this.scores) - 10;
    this.minGap = Infinity;     // smallest best-minus-second gap > 1e-9 on a chosen path
    this.tieWords = new Map();  // pre-token -> count, where a chosen step had a gap <= 1e-9 (a tie)
  }
  word(s) {
    // positions are UTF-16 offsets at code point boundaries (same order as byte positions)
    const n = s.length;
    const best = new Array(n + 1).fill(null); // {score, start, id, second}
    best[0] = { score: 0, start: -1, id: -1, second: -Infinity };
    for (let i = 0; i < n; ) {
      const cpLen = s.codePointAt(i) > 0xffff ? 2 : 1;
      const here = best[i].score;
      let single = false;
      for (let len = 1; len <= this.maxLen && i + len <= n; len++) {
        const id = this.ids.get(s.slice(i, i + len));
        if (id === undefined) continue;
        if (len === cpLen) single = true;
        this.offer(best, i + len, here + this.scores[id], i, id);
      }
      if (!single) this.offer(best, i + cpLen, this.unkScore + here, i, 0);
      i += cpLen;
    }
    const pieces = [];
    let fused = [];
    for (let e = n; e > 0; ) {
      const b = best[e];
      const gap = b.score - b.second;
      if (gap > 1e-9) this.minGap = Math.min(this.minGap, gap);
      else this.tieWords.set(s, (this.tieWords.get(s) ?? 0) + 1);
      const str = s.slice(b.start, e);
      if (b.id === 0) fused.push(str);
      else { if (fused.length) { pieces.push(fused.reverse().join('')); fused = []; } pieces.push(str); }
      e = b.start;
    }
    if (fused.length) pieces.push(fused.reverse().join(''));
    pieces.reverse();
    const out = [];
    for (const p of pieces) {
      const id = this.ids.get(p);
      if (id !== undefined) out.push(id);
      else for (const byte of Buffer.from(p, 'utf8')) out.push(3 + byte);
    }
    return out;
  }
  offer(best, end, score, start, id) {
    const t = best[end];
    if (t === null) best[end] = { score, start, id, second: -Infinity };
    else if (score > t.score) { t.second = t.score; t.score = score; t.start = start; t.id = id; }
    else if (score > t.second) t.second = score;
  }
  // Metaspace (replacement U+2581, prepend always, split): per segment of text between added tokens
  segment(t) {
    if (t === '') return [];
    let s = t.replaceAll(' ', '\u2581');
    if (!s.startsWith('\u2581')) s = '\u2581' + s;
    const out = [];
    let a = 0;
    for (let i = 1; i <= s.length; i++) {
      if (i === s.length || s[i] === '\u2581') { out.push(...this.word(s.slice(a, i))); a = i; }
    }
    return out;
  }
}
export class WordPieceJs {
  constructor(vocab, classes) { this.ids = new Map(Object.entries(vocab)); this.cls = classes; } // vocab: {piece: id}
  word(w) {
    if ([...w].length > 100) return [1];
    const out = [];
    for (let start = 0; start < w.length; ) {
      let end = w.length, id;
      while (start < end) {
        id = this.ids.get((start > 0 ? '##' : '') + w.slice(start, end));
        if (id !== undefined) break;
        end -= w.codePointAt(end - 1) >= 0xdc00 && w.codePointAt(end - 1) <= 0xdfff ? 2 : 1;
      }
      if (id === undefined || start === end) return [1];
      out.push(id);
      start = end;
    }
    return out;
  }
  segment(t) {
    const s = lowerPerChar(t);
    const out = [];
    let cur = '';
    const flush = () => { if (cur) out.push(...this.word(cur)); cur = ''; };
    for (const c of s) {
      const cp = c.codePointAt(0);
      if (this.cls.ws.has(cp)) flush();
      else if (this.cls.punct.has(cp)) { flush(); out.push(...this.word(c)); }
      else cur += c;
    }
    flush();
    return out;
  }
}
// added tokens (all special here, matched on the raw text, longest first at each position), then
// the model's pipeline on each segment between them
export function withSpecials(model, specials, t) {
  if (!specials) return model.segment(t);
  const out = [];
  let a = 0;
  for (let i = 0; i < t.length; ) {
    const hit = specials.filter(([s]) => t.startsWith(s, i)).sort((x, y) => y[0].length - x[0].length)[0];
    if (!hit) { i++; continue; }
    if (i > a) out.push(...model.segment(t.slice(a, i)));
    out.push(hit[1]);
    i += hit[0].length;
    a = i;
  }
  if (a < t.length || t.length === 0) out.push(...model.segment(t.slice(a)));
  return out;
}

// ---------------------------------------------------------------- outputs
const VOCABS = [
  { name: 'unigram', file: 'unigram.json' },
  { name: 'wordpiece', file: 'wordpiece.json' },
];
const COLUMNS = {
  ids: 'plain text, no BOS/EOS: encode(text, add_special_tokens=false) with special-token matching off (Rust encode_special_tokens=true; done as in make_encode_refs.mjs by loading the tokenizer.json with each special added token\'s content replaced by a never-matching placeholder): special-token text is tokenized as ordinary text (unigram: "<s>", "</s>", "<unk>" and "<0xXX>" are also ordinary pieces of its model and can be matched as such).',
  ids_special: 'HF default: encode(text, add_special_tokens=false) on the unmodified tokenizer.json: the special added tokens (unigram <unk> <s> </s>; wordpiece [PAD] [UNK] [CLS] [SEP] [MASK], matched before the Lowercase normalizer, normalized=false) become their ids.',
  ids_add_special: 'encode(text, add_special_tokens=true): both files have post_processor null, so this is the same as ids_special.',
};

async function encodersFor(opt, pk) {
  const enc = {};
  for (const v of VOCABS) {
    const file = path.join(opt.vocabOut, v.file);
    enc[v.name] = await makeHf(v, file, pk);
  }
  return enc;
}

async function writeStrings(file, texts, encoders, names, pk, opt, what) {
  const cases = [];
  for (const t of texts) {
    const c = { text: t, ids: {}, ids_special: {}, ids_add_special: {} };
    for (const n of names) {
      c.ids[n] = await encoders[n].plain(t);
      c.ids_special[n] = await encoders[n].special(t);
      c.ids_add_special[n] = await encoders[n].addSpecial(t);
    }
    cases.push(c);
  }
  const vocabInfo = {};
  for (const n of names) vocabInfo[n] = { file: shortPath(encoders[n].source, opt), sha256: encoders[n].sha, tool: encoders[n].tool };
  const tool = `make_synthetic_vocabs.mjs with tokenizers ${pk.pins.tokenizers} (npm, Hugging Face's Rust tokenizers)`;
  fs.writeFileSync(file, stringsJsonText(tool, COLUMNS, vocabInfo, cases, texts, what));
  log(`  ${what}: ${cases.length} cases x ${names.length} vocabularies x 3 columns`);
}

// Facts the brief asks to hold; printed, and fatal if wrong.
async function sanity(enc, pk) {
  const { Tokenizer } = pk.tokenizers;
  const mistral = Tokenizer.fromFile(MISTRAL);
  const ids = async (tok, t) => (await tok.encode(t, null, { addSpecialTokens: false })).getIds();
  const austen = splitLines(fs.readFileSync(path.join(DATA, 'corpus', 'austen-all.txt'))).slice(0, 200).map((b) => b.toString('utf8'));
  let same = 0;
  for (const l of austen) if ((await enc.unigram.plain(l)).join() === (await ids(mistral, l)).join()) same++;
  log(`  check: unigram and mistral-7b-v0.1 (BPE, same pieces) agree on ${same} of the first ${austen.length} austen lines`);
  if (same === austen.length) die('unigram gives the same ids as the BPE on every line: suspicious');
  // U+1F980 is not a piece (U+1F600 is): byte fallback; "<unk>" text is the piece <unk>
  const emoji = await enc.unigram.plain('\u{1F980}');
  log(`  check: unigram "\u{1F980}" -> ${emoji.join(' ')}`);
  if (emoji.join() !== '28705,243,162,169,131') die('unigram: U+1F980 is not "\u2581" + 4 byte pieces');
  const unk = await enc.unigram.plain('\u{1F980}\u{1F9EC} <unk>');
  log(`  check: unigram "\u{1F980}\u{1F9EC} <unk>" -> ${unk.join(' ')}`);
  const wp = await enc.wordpiece.plain('Hello, World! unaffable \ud83d\ude00');
  log(`  check: wordpiece "Hello, World! unaffable \u{1F600}" -> ${wp.join(' ')}`);
}

async function main() {
  const opt = parseArgs(process.argv);
  const t0 = Date.now();
  fnvSelfTest();
  const pk = loadPackages({ modules: opt.modules, install: opt.install });
  log(`reference: tokenizers ${pk.pins.tokenizers} (node ${process.version}); vocabularies -> ${shortPath(opt.vocabOut, opt)}, ids -> ${shortPath(opt.out, opt)}`);
  if (opt.check) return check(opt, pk);

  fs.mkdirSync(opt.vocabOut, { recursive: true });
  const uni = buildUnigram();
  const wp = buildWordPiece();
  const cls = charClasses(pk.tokenizers);
  fs.writeFileSync(path.join(opt.vocabOut, 'unigram.json'), uni.text);
  fs.writeFileSync(path.join(opt.vocabOut, 'wordpiece.json'), wp.text);
  fs.writeFileSync(path.join(opt.vocabOut, 'hf-char-classes.txt'), cls.text);
  log(`  unigram.json: ${uni.vocab.length} pieces, ${uni.text.length} chars; wordpiece.json: ${wp.vocab.length} pieces (${wp.vocab.filter((p) => p.startsWith('##')).length} with ##, from GPT-2 ids 0..${wp.lastId}); hf-char-classes.txt: ${cls.ws.size} whitespace, ${cls.punct.size} punctuation code points`);
  if (opt.vocabsOnly) { log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`); return; }

  const enc = await encodersFor(opt, pk);
  await sanity(enc, pk);
  fs.mkdirSync(opt.out, { recursive: true });
  for (const v of VOCABS) {
    log(`${v.name} (${shortPath(enc[v.name].source, opt)})`);
    for (const c of CORPORA) await doCorpus(v, enc[v.name], c, opt);
  }
  await writeStrings(path.join(opt.out, 'strings-synthetic.json'), strings(), enc, VOCABS.map((v) => v.name), pk, opt, 'strings-synthetic.json');
  for (const v of VOCABS) await writeStrings(path.join(opt.out, `${v.name}-probes.json`), probes(v.name), enc, [v.name], pk, opt, `${v.name}-probes.json`);
  log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

// ---------------------------------------------------------------- --check
// Own models: must agree with every file exactly (exit status 1 otherwise). tokenizers.js: its
// mismatches are listed, not fatal; 0.2.0 has no Unigram byte_fallback (an unknown run is one
// <unk>), so for unigram it is compared with the reference ids in which each maximal run of
// byte pieces (ids 3..258) is replaced by one <unk> (0), and the corpus lines are compared with
// the reference re-encoded live (the .digest files hash the uncollapsed ids).
async function check(opt, pk) {
  const req = createRequire(path.join(opt.modules, 'package.json'));
  let JsTokenizer;
  try { ({ Tokenizer: JsTokenizer } = req('@huggingface/tokenizers')); } catch (e) { die(`@huggingface/tokenizers missing in ${opt.modules}/node_modules: ${e.message}`); }
  const jsVersion = JSON.parse(fs.readFileSync(path.join(opt.modules, 'node_modules', '@huggingface', 'tokenizers', 'package.json'), 'utf8')).version;
  const cls = charClasses(pk.tokenizers);
  const ref = await encodersFor(opt, pk);
  const collapse = (ids) => ids.filter((id, i) => !(id >= 3 && id <= 258 && i > 0 && ids[i - 1] >= 3 && ids[i - 1] <= 258)).map((id) => (id >= 3 && id <= 258 ? 0 : id));
  const impls = {};
  for (const v of VOCABS) {
    const json = readJson(path.join(opt.vocabOut, v.file));
    const specials = json.added_tokens.map((t) => [t.content, t.id]);
    const model = v.name === 'unigram' ? new UnigramJs(json.model.vocab) : new WordPieceJs(json.model.vocab, cls);
    // tokenizers.js 0.2.0 ignores Metaspace's "split": true; it gets the same split as a Split step
    const tjsJson = v.name !== 'unigram' ? json : { ...json, pre_tokenizer: { type: 'Sequence', pretokenizers: [json.pre_tokenizer, { type: 'Split', pattern: { Regex: '\u2581[^\u2581]*' }, behavior: 'Isolated', invert: false }] } };
    const full = new JsTokenizer(tjsJson, {});
    const plain = new JsTokenizer({ ...tjsJson, added_tokens: [] }, {});
    impls[v.name] = {
      model,
      'tokenizers.js': { plain: (t) => plain.encode(t, { add_special_tokens: false }).ids, special: (t) => full.encode(t, { add_special_tokens: false }).ids },
      own: { plain: (t) => withSpecials(model, null, t), special: (t) => withSpecials(model, specials, t) },
    };
  }
  const tally = {};
  const note = (key, ok, detail) => {
    const t = (tally[key] ??= { n: 0, bad: 0, ex: [] });
    t.n++;
    if (!ok) { t.bad++; if (t.ex.length < 12) t.ex.push(detail); }
  };
  const short = (t) => jstr(t.length > 40 ? t.slice(0, 30) + `...(${t.length})` : t);
  for (const v of VOCABS) {
    const tjsCollapse = v.name === 'unigram' ? collapse : (x) => x;
    for (const c of CORPORA) {
      const stem = path.basename(c).replace(/\.txt$/, '');
      const texts = splitLines(fs.readFileSync(findFile(c, opt))).map((b) => b.toString('utf8'));
      const digest = fs.readFileSync(path.join(opt.out, `${v.name}.${stem}.digest`), 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
      const idsLines = fs.readFileSync(path.join(opt.out, `${v.name}.${stem}.ids`), 'utf8').split('\n').slice(1, -1);
      const f = impls[v.name].own.plain, g = impls[v.name]['tokenizers.js'].plain;
      const blocks = [];
      for (let i = 0; i < texts.length; i++) {
        if (i % 512 === 0) blocks.push({ first: i, n: 0, ids: 0, h: new Fnv1a64() });
        const b = blocks[blocks.length - 1];
        const ids = f(texts[i]);
        for (const id of ids) b.h.int32(id);
        b.h.int32(-1);
        b.n++; b.ids += ids.length;
        if (i < idsLines.length) note(`${v.name} own: .ids lines`, ids.join(' ') === idsLines[i], `${stem} line ${i}`);
        const r = await ref[v.name].plain(texts[i]);
        note(`${v.name} tokenizers.js: corpus lines${v.name === 'unigram' ? ' (byte runs as <unk>)' : ''}`, g(texts[i]).join() === tjsCollapse(r).join(), `${stem} line ${i} ${short(texts[i])}`);
      }
      blocks.forEach((b, k) => note(`${v.name} own: .digest blocks`, `${b.first} ${b.n} ${b.ids} ${b.h.hex()}` === digest[k], `${stem} block ${k}`));
    }
    for (const f of ['strings-synthetic.json', `${v.name}-probes.json`]) {
      const j = readJson(path.join(opt.out, f));
      for (const [k, c] of j.cases.entries()) {
        const m = impls[v.name].own, t = impls[v.name]['tokenizers.js'];
        note(`${v.name} own: ${f} cases`, m.plain(c.text).join() === c.ids[v.name].join() && m.special(c.text).join() === c.ids_special[v.name].join() && c.ids_add_special[v.name].join() === c.ids_special[v.name].join(), `case ${k} ${short(c.text)}`);
        const okP = t.plain(c.text).join() === tjsCollapse(c.ids[v.name]).join(), okS = t.special(c.text).join() === tjsCollapse(c.ids_special[v.name]).join();
        note(`${v.name} tokenizers.js: ${f} cases${v.name === 'unigram' ? ' (byte runs as <unk>)' : ''}`, okP && okS, `case ${k} ${short(c.text)}${okP ? ' (ids_special)' : okS ? ' (ids)' : ''}`);
      }
    }
  }
  let bad = 0;
  log(`independent implementations: tokenizers.js = @huggingface/tokenizers ${jsVersion}; own = this script's UnigramJs / WordPieceJs`);
  for (const [k, t] of Object.entries(tally)) {
    if (k.includes(' own:')) bad += t.bad;
    log(`  ${k}: ${t.n - t.bad}/${t.n} agree${t.bad ? `; mismatches: ${t.ex.join('; ')}${t.bad > t.ex.length ? '; ...' : ''}` : ''}`);
  }
  const um = impls.unigram.model;
  log(`  unigram Viterbi (own model, every input above): smallest non-zero gap between the best and the second-best candidate of a step on the chosen path: ${um.minGap}`);
  log(`  unigram Viterbi ties (gap <= 1e-9) on the chosen path, in ${um.tieWords.size} distinct pre-tokens: ${[...um.tieWords.keys()].map(short).join(' ')}`);
  if (bad) { console.error(`make_synthetic_vocabs --check: ${bad} mismatches of the own models`); process.exit(1); }
  log('own models: all agree');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => { console.error(e); process.exit(1); });
}
