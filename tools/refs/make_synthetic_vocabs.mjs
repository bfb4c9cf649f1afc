#!/usr/bin/env node
// make_synthetic_vocabs.mjs - build small synthetic tokenizer.json files, a Unigram and two
// WordPiece models, from vocabularies the repo already ships (no Unigram or WordPiece vocabulary
// with a licence that allows shipping was at hand), and their reference encodings with Hugging
// Face tokenizers (npm `tokenizers`, pinned in package.json), in the formats of
// make_encode_refs.mjs (tests/data/README.md):
//
//   node tools/refs/make_synthetic_vocabs.mjs [--modules /tmp/refs-node]
//
// Writes (deterministic: a rerun with the same inputs leaves `git diff` empty):
//   tests/data/vocab/synthetic/unigram.json      from tests/data/vocab/hf/mistral-7b-v0.1/tokenizer.json
//   tests/data/vocab/synthetic/wordpiece.json    from tests/data/vocab/hf/gpt2/tokenizer.json
//   tests/data/vocab/synthetic/wordpiece-bert.json  the same with bert-base-uncased's BertNormalizer
//                                                and a few more pieces (CJK ideographs, jamo, ...)
//   tests/data/vocab/synthetic/hf-char-classes.txt  BertPreTokenizer's whitespace and punctuation
//                                                sets and Lowercase's expansions, probed code point by
//                                                code point from the reference
//   tests/data/encode/{unigram,wordpiece,wordpiece-bert}.<corpus>.{ids,digest}, strings-synthetic.json,
//   tests/data/encode/unigram-probes.json, wordpiece-probes.json, wordpiece-bert-probes.json
//
// Options:
//   --modules DIR   folder whose node_modules holds the pinned packages (default tools/refs;
//                   installed there with `npm ci` when missing, as make_encode_refs.mjs does)
//   --no-install    never run npm
//   --vocab-out DIR output folder of the tokenizer.json files (default tests/data/vocab/synthetic)
//   --out DIR       output folder of the reference ids (default tests/data/encode)
//   --vocabs-only   only the files in --vocab-out
//   --bert-classes FILE  also write BertNormalizer's character classes, probed code point by code
//                   point from the reference (format in the file's header; not kept in the repo)
//   --check         write nothing: re-encode everything (corpora, strings, probes) with two
//                   independent implementations and compare with the files written: this
//                   script's own plain-JS models (UnigramJs, WordPieceJs below; exit status 1 on
//                   any mismatch) and tokenizers.js (@huggingface/tokenizers, a devDependency;
//                   its known deviations are listed, not fatal: see check())
//
// The construction (formulas) is documented in tests/data/README.md ("Synthetic vocabularies").

import fs from 'node:fs';
import os from 'node:os';
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
    else if (a === '--bert-classes') o.bertClasses = path.resolve(next());
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
  return { text: wordPieceText(out, '{"type": "Lowercase"}'), vocab: out, lastId };
}
function wordPieceText(out, normalizer) {
  const L = ['{', ' "version": "1.0",', ' "truncation": null,', ' "padding": null,'];
  L.push(addedJson(ADDED(out.slice(0, 5).map((t, i) => [i, t]))));
  L.push(` "normalizer": ${normalizer},`);
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
  return L.join('\n') + '\n';
}

// ---------------------------------------------------------------- WordPiece with BertNormalizer
// wordpiece-bert.json: wordpiece.json's 30000 pieces, model, pre_tokenizer and decoder, with the
// normalizer of bert-base-uncased's tokenizer.json, and these pieces appended (ids 30000..):
//   1. BERT_EXTRA below, in that order;
//   2. every code point of is_chinese_char (HF's ranges, hfChinese) that occurs in the output of
//      the reference's own BertNormalizer (same options) on the four corpora, strings.json's texts
//      and the wordpiece-bert probes, as a word-initial piece, by code point (after NFD, so a
//      compatibility ideograph such as U+F900 contributes its canonical equivalent U+8C48);
//   3. every conjoining Hangul jamo U+1100..U+11FF in that output (NFD turns Hangul syllables into
//      jamo), as the piece c and then ##c, by code point.
const BERT_NORMALIZER = '{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true}';
// Whole-word "ecole" (wordpiece.json has cafe and naive but not ecole); pieces that survive the
// normalizer and prove what it keeps: sharp s, the ligature fi (NFD leaves it), dz digraph (from
// titlecase U+01C5), small roman numeral eight (from U+2167), fullwidth a (from U+FF21),
// Devanagari ka and the spacing vowel sign i (Mc, not removed by strip_accents), Greek "sigma
// alpha sigma" with and without final sigma (lowercase has no final-sigma rule), omega (from OHM
// SIGN U+2126 via NFD), long s (from U+1E9B via NFD).
const BERT_EXTRA = ['ecole', '\u00df', '\ufb01', '##\ufb01', '\u01c6', '\u2177', '\uff41', '\u0915', '##\u093f', '\u03c3\u03b1\u03c3', '\u03c3\u03b1\u03c2', '\u03c9', '\u017f'];
export const hfChinese = (cp) => (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df) ||
  (cp >= 0x2a700 && cp <= 0x2b73f) || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b920 && cp <= 0x2ceaf) ||
  (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f); // tokenizers normalizers/bert.rs is_chinese_char (0x2B920, not 0x2B820)

function buildWordPieceBert(wp, tk, opt) {
  const norm = tk.bertNormalizer({ cleanText: true, handleChineseChars: true, lowercase: true });
  const texts = [];
  for (const c of CORPORA) for (const b of splitLines(fs.readFileSync(findFile(c, opt)))) texts.push(b.toString('utf8'));
  texts.push(...strings(), ...probes('wordpiece-bert'));
  const cjk = new Set(), jamo = new Set();
  for (const t of texts) {
    for (const c of norm.normalizeString(t)) {
      const cp = c.codePointAt(0);
      if (hfChinese(cp)) cjk.add(cp);
      else if (cp >= 0x1100 && cp <= 0x11ff) jamo.add(cp);
    }
  }
  const byCp = (set) => [...set].sort((a, b) => a - b).map((cp) => String.fromCodePoint(cp));
  const added = [...BERT_EXTRA, ...byCp(cjk), ...byCp(jamo).flatMap((c) => [c, '##' + c])];
  const seen = new Set(wp.vocab);
  for (const p of added) { if (seen.has(p)) die(`wordpiece-bert: ${jstr(p)} is already a piece`); seen.add(p); }
  const out = [...wp.vocab, ...added];
  return { text: wordPieceText(out, BERT_NORMALIZER), vocab: out, nCjk: cjk.size, nJamo: jamo.size };
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

// BertNormalizer's classes, probed the same way through the reference's own components: a
// BertNormalizer with only clean_text on "a" + c + "b" ("ab": removed, "a b": made a space), with
// only handle_chinese_chars on c (" c ": Chinese), with only strip_accents on "a" + c for each c
// that the reference's NFD leaves alone ("a": removed after NFD, i.e. in its Mn table), and the
// reference's NFD of c where it differs from ECMAScript's normalize('NFD'). bertNormJs() rebuilds
// the whole normalizer from these sets, ECMAScript's NFD and per-code-point toLowerCase; it is
// compared with the reference on every code point here and on every test input by --check.
export function bertClasses(tk) {
  const only = (o) => tk.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: false, lowercase: false, ...o });
  const clean = only({ cleanText: true }), chin = only({ handleChineseChars: true }), strip = only({ stripAccents: true });
  const full = tk.bertNormalizer({ cleanText: true, handleChineseChars: true, lowercase: true });
  const nfd = tk.nfdNormalizer();
  const removed = new Set(), space = new Set(), chinese = new Set(), mn = new Set(), nfdFix = new Map();
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    const r = clean.normalizeString('a' + c + 'b');
    if (r === 'ab') removed.add(cp); else if (r === 'a b') space.add(cp); else if (r !== 'a' + c + 'b') die(`clean_text: U+${hexCp(cp)} gives ${jstr(r)}`);
    const h = chin.normalizeString(c);
    if (h === ' ' + c + ' ') chinese.add(cp); else if (h !== c) die(`handle_chinese_chars: U+${hexCp(cp)} gives ${jstr(h)}`);
    const d = nfd.normalizeString(c);
    if (d !== c.normalize('NFD')) nfdFix.set(cp, d);
    if (d === c && strip.normalizeString('a' + c) === 'a') mn.add(cp);
  }
  const cls = { removed, space, chinese, mn, nfdFix };
  const norm = bertNormJs(cls);
  const bad = [];
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    if (norm(c) !== full.normalizeString(c) || strip.normalizeString(c) !== stripJs(cls, c)) bad.push(hexCp(cp));
  }
  if (bad.length) die(`bertNormJs differs from the reference BertNormalizer on ${bad.length} code points: ${bad.slice(0, 10).join(' ')}`);
  const rl = (set) => ranges([...set].sort((a, b) => a - b)).map(([a, b]) => `${hexCp(a)} ${hexCp(b)}`);
  const L = [
    '# nextok: BertNormalizer (clean_text, handle_chinese_chars, strip_accents, lowercase all on) of Hugging Face tokenizers',
    '# (npm `tokenizers`, Rust), probed code point by code point by tools/refs/make_synthetic_vocabs.mjs --bert-classes',
    '# (tests/data/README.md, "wordpiece-bert.json"). Surrogates are not probed. Steps in this order:',
    '# R first last: clean_text removes (U+0000, U+FFFD, and Cc Cf Co of unicode_categories 0.1.1 = Unicode 8.0.0, minus \\t \\n \\r)',
    '# S first last: clean_text then makes ASCII space (\\t \\n \\r and Rust char::is_whitespace, for what was not removed)',
    '# C first last: handle_chinese_chars puts a space before and after (is_chinese_char)',
    '# M first last: strip_accents removes after NFD (unicode_categories 0.1.1 is_mark_nonspacing = Mn of Unicode 8.0.0);',
    '#               only code points that the NFD leaves alone are listed',
    '# D cp nfd...: the reference NFD (unicode-normalization-alignments) where it differs from ECMAScript normalize("NFD")',
    `#               (Node ${process.version}, Unicode ${process.versions.unicode}): decompositions newer than its tables`,
    '# lowercase last: per code point, as the Lowercase normalizer (hf-char-classes.txt)',
    `# counts: ${removed.size} R, ${space.size} S, ${chinese.size} C, ${mn.size} M, ${nfdFix.size} D`,
    '# format: hex code points, ranges inclusive',
    ...rl(removed).map((x) => 'R ' + x), ...rl(space).map((x) => 'S ' + x), ...rl(chinese).map((x) => 'C ' + x), ...rl(mn).map((x) => 'M ' + x),
    ...[...nfdFix].map(([cp, d]) => `D ${hexCp(cp)} ${[...d].map((x) => hexCp(x.codePointAt(0))).join(' ')}`),
  ];
  return { ...cls, text: L.join('\n') + '\n' };
}
const hexCp = (cp) => cp.toString(16).toUpperCase().padStart(4, '0');
function ranges(cps) {
  const r = [];
  for (const cp of cps) { const last = r[r.length - 1]; if (last && last[1] === cp - 1) last[1] = cp; else r.push([cp, cp]); }
  return r;
}
// NFD (ECMAScript's, except the code points the reference leaves alone), then drop its Mn
function stripJs(cls, s) {
  let out = '', run = '';
  for (const c of s) {
    const fix = cls.nfdFix.get(c.codePointAt(0));
    if (fix === undefined) { run += c; continue; }
    out += run.normalize('NFD') + fix; run = '';
  }
  out += run.normalize('NFD');
  return [...out].filter((c) => !cls.mn.has(c.codePointAt(0))).join('');
}
// the BertNormalizer in plain JS: clean_text, handle_chinese_chars, strip_accents, lowercase
export function bertNormJs(cls) {
  return (t) => {
    let s = '';
    for (const c of t) {
      const cp = c.codePointAt(0);
      if (cls.removed.has(cp)) continue;
      s += cls.space.has(cp) ? ' ' : cls.chinese.has(cp) ? ' ' + c + ' ' : c;
    }
    return lowerPerChar(stripJs(cls, s));
  };
}

// ---------------------------------------------------------------- probes (unigram-probes.json, wordpiece-probes.json)
// Crafted strings for the rules documented in tests/data/README.md; encoded like strings.json.
function probes(name) {
  const w = (n, c = 'a') => c.repeat(n);
  if (name === 'wordpiece-bert') return [...probes('wordpiece'), ...bertProbes()];
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

// BertNormalizer's edge cases, after the wordpiece probes (tests/data/README.md lists what the
// reference does with each). Most are "a" + X + "b": X removed gives the word "ab" (piece ab), X
// made a space gives a, b, X isolated as a Chinese character gives a, X, b, X kept inside the word
// gives one [UNK] (unless X is punctuation).
function bertProbes() {
  const ab = (cp) => 'a' + String.fromCodePoint(cp) + 'b';
  const clean = [0x0, 0x1, 0x7, 0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe, 0x1c, 0x1f, 0x7f, 0x80, 0x85, 0x9f, 0xa0, 0xad, 0x600, 0x61c, 0x6dd,
    0x8e2, 0x180e, 0x1680, 0x2000, 0x200a, 0x200b, 0x200c, 0x200d, 0x200e, 0x2028, 0x2029, 0x202a, 0x202f, 0x205f, 0x2060, 0x2065,
    0x2066, 0x206f, 0x3000, 0xe000, 0xf8ff, 0xfeff, 0xfff9, 0xfffb, 0xfffc, 0xfffd, 0xfffe, 0x378, 0x110bd, 0x110cd, 0x13430, 0x1bca0,
    0x1d173, 0xe0001, 0xe0020, 0xe007f, 0xf0000, 0x10fffd];
  const chinese = [0x33ff, 0x3400, 0x4dbf, 0x4dc0, 0x4dff, 0x4e00, 0x9fff, 0xa000, 0xf8ff, 0xf900, 0xfa0e, 0xfaff, 0xfb00,
    0x1ffff, 0x20000, 0x2a6df, 0x2a6e0, 0x2a6ff, 0x2a700, 0x2b73f, 0x2b740, 0x2b81f, 0x2b820, 0x2b91f, 0x2b920, 0x2ceaf, 0x2ceb0,
    0x2ebe0, 0x2ebf0, 0x2f7ff, 0x2f800, 0x2fa1d, 0x2fa1f, 0x2fa20, 0x30000, 0x31350, 0x323af,
    0x2e80, 0x2f00, 0x3005, 0x3007, 0x3021, 0x3042, 0x30a2, 0x31f0, 0x3131, 0xac00, 0xff21, 0xff71];
  const marks = [0x300, 0x301, 0x340, 0x344, 0x483, 0x488, 0x591, 0x64b, 0x93c, 0x93f, 0x94d, 0xd00, 0xe31, 0xe33, 0xf73, 0x1734, 0x1885,
    0x1ab0, 0x1ac0, 0x1dfa, 0x1dfb, 0x20d0, 0x20dd, 0x20e3, 0x302a, 0x3099, 0xa9bd, 0xfe00, 0xfe0f, 0xfe20, 0x111c9, 0x1171e,
    0x11938, 0x1d165, 0x1d167, 0xe0100];
  return [
    ...clean.map(ab), 'a\u0000\u0001\u0002b', 'a\t\t b', 'tab\there\nnewline\r\nend', '\u0000', '\ufffd\ufffd', ' \u3000 ', '\u200b',
    ...chinese.map(ab),
    '\u4e2d\u6587\u6d4b\u8bd5\uff1a\u4f60\u597d\uff0c\u4e16\u754c\u3002', 'abc\u4e2ddef', '\u4e2da \u4e16\u754cb', 'Hello\u4e16\u754c!',
    '\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8', '\u{2030e} \u{2a6df}\u{2a700} \u{2b81f}\u{2b820}', '\u4e2d\u0301\u6587\u0000\u4e16',
    '\uf900\uf901 \ufa0e\ufa0f \u{2f800}\u{2fa1d}',
    ...marks.map(ab),
    '\u00e9', '\u00c9', 'e\u0301', 'Caf\u00e9 CAF\u00c9 cafe\u0301 Cafe\u0301', 'na\u00efve NA\u00cfVE nai\u0308ve', '\u00c9cole \u00e9cole E\u0301cole',
    '\u00c5 \u212b A\u030a \u00e5', '\u00f1 \u00d1 n\u0303 Espa\u00f1a', '\u00fc \u00dc \u00dcber M\u00fcnchen', '\u00df STRASSE stra\u00dfe \u1e9e',
    '\ufb01 \ufb01nd \ufb00 \ufb03', '\u01c5 \u01c4 \u01c6 \u01c5ungla', '\u1ec7 \u1ec6 Vi\u1ec7t Nam ti\u1ebfng', '\u1ea0\u0302 a\u0323\u0302 e\u0301\u0301',
    '\u0915\u093f \u0915 \u0915\u093f\u0915 \u0939\u093f\u0928\u094d\u0926\u0940', '\ud55c \ud55c\uad6d\uc5b4 \u1112\u1161\u11ab', '\u1100\u1161 \u3131\u314f',
    '\u00e6 \u00f8 \u0142 \u0111 \u0131 \u0153 \u00fe \u00f0', '\u0130 \u0130stanbul I\u0307stanbul \u0131', '\u03a3\u0391\u03a3 \u03c3\u03b1\u03c2 \u039f\u0394\u039f\u03a3',
    '\u2167 \u2177 \u216b', '\uff21 \uff41 \uff21\uff22\uff23', '\u1e9b\u0323 \u2126 \u212a', '\u0344 \u0340\u0341', '\u0e33 \u0e19\u0e49\u0e33',
    'e\u0301'.repeat(60), 'x' + w(99, '\u00e9'), 'x' + w(100, '\u00e9'), w(100, 'e\u0301'), 'x' + w(49, '\u4e00'),
    '[CLS] Caf\u00e9 [SEP]', '[cls] [Cls]', '[MA\u0000SK] [MASK]\u0000', '[UNK]\u4e2d[PAD]', '\u00e9[SEP]\u00e9',
  ];
  function w(n, c) { return c.repeat(n); }
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
  constructor(vocab, classes, norm = lowerPerChar) { this.ids = new Map(Object.entries(vocab)); this.cls = classes; this.norm = norm; } // vocab: {piece: id}
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
    const s = this.norm(t);
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
  { name: 'wordpiece-bert', file: 'wordpiece-bert.json' },
];
const COLUMNS = {
  ids: 'plain text, no BOS/EOS: encode(text, add_special_tokens=false) with special-token matching off (Rust encode_special_tokens=true; done as in make_encode_refs.mjs by loading the tokenizer.json with each special added token\'s content replaced by a never-matching placeholder): special-token text is tokenized as ordinary text (unigram: "<s>", "</s>", "<unk>" and "<0xXX>" are also ordinary pieces of its model and can be matched as such).',
  ids_special: 'HF default: encode(text, add_special_tokens=false) on the unmodified tokenizer.json: the special added tokens (unigram <unk> <s> </s>; wordpiece [PAD] [UNK] [CLS] [SEP] [MASK], matched before the Lowercase normalizer, normalized=false) become their ids.',
  ids_add_special: 'encode(text, add_special_tokens=true): both files have post_processor null, so this is the same as ids_special.',
};
// the same descriptions, naming wordpiece-bert too, in the files that have it
const columnsFor = (names) => (!names.includes('wordpiece-bert') ? COLUMNS : {
  ...COLUMNS,
  ids_special: COLUMNS.ids_special.replace('wordpiece [PAD] [UNK] [CLS] [SEP] [MASK], matched before the Lowercase normalizer,', 'wordpiece and wordpiece-bert [PAD] [UNK] [CLS] [SEP] [MASK], matched before the Lowercase or BertNormalizer normalizer,'),
  ids_add_special: COLUMNS.ids_add_special.replace('both files have', 'all three files have'),
});

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
  fs.writeFileSync(file, stringsJsonText(tool, columnsFor(names), vocabInfo, cases, texts, what));
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
  // the reference's serializer writes wordpiece-bert.json's normalizer back unchanged
  const file = path.join(path.dirname(enc['wordpiece-bert'].source), 'wordpiece-bert.json');
  const tmp = path.join(os.tmpdir(), `nextok-wordpiece-bert-${process.pid}.json`);
  Tokenizer.fromFile(file).save(tmp, false);
  const back = readJson(tmp);
  fs.rmSync(tmp);
  const want = JSON.parse(BERT_NORMALIZER), orig = readJson(file);
  log(`  check: wordpiece-bert normalizer as saved by the reference: ${JSON.stringify(back.normalizer)}`);
  if (JSON.stringify(back.normalizer) !== JSON.stringify(want)) die('wordpiece-bert: the reference saves a different normalizer');
  for (const k of ['pre_tokenizer', 'decoder', 'post_processor', 'added_tokens']) if (JSON.stringify(back[k]) !== JSON.stringify(orig[k])) die(`wordpiece-bert: the reference saves a different ${k}`);
  const byId = (v) => JSON.stringify(Object.entries(v).sort((a, b) => a[1] - b[1])); // (keys like "0" come first in a JS object)
  if (byId(back.model.vocab) !== byId(orig.model.vocab)) die('wordpiece-bert: the reference saves a different vocab');
  const wb = await enc['wordpiece-bert'].plain('Caf\u00e9 \u4e2d\u6587 \u0130 \ud55c');
  log(`  check: wordpiece-bert "Caf\u00e9 \u4e2d\u6587 \u0130 \ud55c" -> ${wb.join(' ')}`);
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
  const wpb = buildWordPieceBert(wp, pk.tokenizers, opt);
  const cls = charClasses(pk.tokenizers);
  fs.writeFileSync(path.join(opt.vocabOut, 'unigram.json'), uni.text);
  fs.writeFileSync(path.join(opt.vocabOut, 'wordpiece.json'), wp.text);
  fs.writeFileSync(path.join(opt.vocabOut, 'wordpiece-bert.json'), wpb.text);
  fs.writeFileSync(path.join(opt.vocabOut, 'hf-char-classes.txt'), cls.text);
  log(`  unigram.json: ${uni.vocab.length} pieces, ${uni.text.length} chars; wordpiece.json: ${wp.vocab.length} pieces (${wp.vocab.filter((p) => p.startsWith('##')).length} with ##, from GPT-2 ids 0..${wp.lastId}); hf-char-classes.txt: ${cls.ws.size} whitespace, ${cls.punct.size} punctuation code points`);
  log(`  wordpiece-bert.json: ${wpb.vocab.length} pieces (${BERT_EXTRA.length} fixed, ${wpb.nCjk} CJK ideographs, ${wpb.nJamo} jamo x 2 appended)`);
  if (opt.bertClasses) { fs.writeFileSync(opt.bertClasses, bertClasses(pk.tokenizers).text); log(`  BertNormalizer character classes -> ${opt.bertClasses}`); }
  if (opt.vocabsOnly) { log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`); return; }

  const enc = await encodersFor(opt, pk);
  await sanity(enc, pk);
  fs.mkdirSync(opt.out, { recursive: true });
  for (const v of VOCABS) {
    log(`${v.name} (${shortPath(enc[v.name].source, opt)})`);
    for (const c of CORPORA) await doCorpus(v, enc[v.name], c, opt);
  }
  // wordpiece-bert before wordpiece, so that adding it left every earlier line of the file as it was
  await writeStrings(path.join(opt.out, 'strings-synthetic.json'), strings(), enc, ['unigram', 'wordpiece-bert', 'wordpiece'], pk, opt, 'strings-synthetic.json');
  for (const v of VOCABS) await writeStrings(path.join(opt.out, `${v.name}-probes.json`), probes(v.name), enc, [v.name], pk, opt, `${v.name}-probes.json`);
  log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

// ---------------------------------------------------------------- --check
// Own models: must agree with every file exactly (exit status 1 otherwise). tokenizers.js: its
// mismatches are listed, not fatal; 0.2.0 has no Unigram byte_fallback (an unknown run is one
// <unk>), so for unigram it is compared with the reference ids in which each maximal run of
// byte pieces (ids 3..258) is replaced by one <unk> (0), and the corpus lines are compared with
// the reference re-encoded live (the .digest files hash the uncollapsed ids). Its BertNormalizer
// differs on the wordpiece-bert probes only (27 of 242): it misses Chinese characters outside the
// BMP (it tests UTF-16 units), uses today's Cf and Mn instead of Unicode 8.0's, and lowercases
// with String.prototype.toLowerCase (final sigma) before stripping accents.
async function check(opt, pk) {
  const req = createRequire(path.join(opt.modules, 'package.json'));
  let JsTokenizer;
  try { ({ Tokenizer: JsTokenizer } = req('@huggingface/tokenizers')); } catch (e) { die(`@huggingface/tokenizers missing in ${opt.modules}/node_modules: ${e.message}`); }
  const jsVersion = JSON.parse(fs.readFileSync(path.join(opt.modules, 'node_modules', '@huggingface', 'tokenizers', 'package.json'), 'utf8')).version;
  const cls = charClasses(pk.tokenizers);
  const bertNorm = bertNormJs(bertClasses(pk.tokenizers));
  const ref = await encodersFor(opt, pk);
  const collapse = (ids) => ids.filter((id, i) => !(id >= 3 && id <= 258 && i > 0 && ids[i - 1] >= 3 && ids[i - 1] <= 258)).map((id) => (id >= 3 && id <= 258 ? 0 : id));
  const impls = {};
  for (const v of VOCABS) {
    const json = readJson(path.join(opt.vocabOut, v.file));
    const specials = json.added_tokens.map((t) => [t.content, t.id]);
    const model = v.name === 'unigram' ? new UnigramJs(json.model.vocab) : new WordPieceJs(json.model.vocab, cls, v.name === 'wordpiece-bert' ? bertNorm : undefined);
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
