#!/usr/bin/env node
// make_regex_refs.mjs - regenerate tests/data/grammars/regex-cases.txt, the
// acceptance table of the regex front end (tests/test_regex.c), with Node's
// own RegExp as the reference: V8's RegExp with the `u` flag is ECMA-262.
//
//   node tools/refs/make_regex_refs.mjs [--out tests/data/grammars/regex-cases.txt]
//
// Needs nothing but Node (20 or later). The output is deterministic (a fixed
// seed, no dates): a rerun leaves `git diff` empty.
//
// Format: lines starting with '#' are comments; every other line is one
// pattern as a JSON object {"p": PATTERN, "t": [[TEXT, FULL, SEARCH], ...]}:
//   FULL    1 when the whole TEXT matches: new RegExp('^(?:' + p + ')$', 'u')
//           (the pattern's own ^ and $, at the ends of its alternatives, are
//           assertions inside the group, as they are there)
//   SEARCH  1 when PATTERN matches somewhere in TEXT: new RegExp(p, 'u').test,
//           JSON Schema's `pattern` semantics.
// The texts of a pattern: the ones listed here, each of them mutated three
// times (a code point inserted, deleted or replaced, from the pattern's
// alphabet), random strings over the alphabet, and random strings that match
// as a whole; texts never hold lone surrogates.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(SCRIPT_DIR, '..', '..');
const SEED = 20240601;
const N_RANDOM = 16;   // random texts per pattern (fewer with a tiny alphabet)
const N_POSITIVE = 6;  // random texts that match as a whole, at most
const MAX_RANDOM = 8;  // their length, at most (code points)

// [pattern, alphabet, texts] -- the alphabet's code points make the random
// texts and the mutations; listed texts cover each pattern's edge cases.
const x = (s, n) => s.repeat(n);
const CASES = [
  // literals, the empty pattern, '.'
  ['abc', 'abcx', ['abc', 'ab', 'abcc', 'xabc', 'abcx', '']],
  ['', 'ab', ['', 'a']],
  ['a|b|', 'abc', ['', 'a', 'b', 'ab', 'c']],
  ['a.c', 'abc\n\r\u2028\u2029\u0085€😀', ['abc', 'a\nc', 'a\rc', 'a\u2028c', 'a\u2029c', 'a\u0085c', 'a€c', 'a😀c', 'ac', 'abbc']],
  ['..', 'a😀\n€\t', ['a😀', '😀😀', '😀', '\n\n', 'ab', '\t\t']],
  ['é+ü?', 'éüeu', ['é', 'éé', 'éü', 'ü', 'éüü', 'e']],
  ['😀{2}|🙂', '😀🙂a', ['😀😀', '🙂', '😀', '😀😀😀', '🙂🙂']],
  ['\\u{1F600}\\uD83D\\uDE01', '😀😁a', ['😀😁', '😁😀', '😀']],
  ['\\x41\\u0042\\u{43}\\u{000044}', 'ABCDa', ['ABCD', 'ABC', 'abcd']],
  ['\\t\\n\\r\\v\\f\\0', '\t\n\r\v\f\0 a', ['\t\n\r\v\f\0', '\t\n\r\v\f', '\t\n\r\v\f0']],
  ['\\cJ\\cm\\cI', '\n\r\t a', ['\n\r\t', '\n\r', 'JmI']],
  ['\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\\\/', '.*+?()[]{}|^$\\/a', ['.*+?()[]{}|^$\\/', '.*+?()[]{}|^$\\', 'a']],
  ['a\\/b', 'a/b\\', ['a/b', 'a\\/b', 'ab']],
  ['^abc$', 'abcx', ['abc', 'xabc', 'abcx', 'ab']],
  ['^\\t$', '\tt ', ['\t', 't', '\t\t']],
  ['^\\cC$', '\x03cC', ['\x03', 'C', 'cC']],
  ['^\\cc$', '\x03cC', ['\x03', 'c']],
  ['^🐲*$', '🐲a', ['', '🐲', '🐲🐲', '🐲a']],
  ['f.*o', 'fo\nx', ['fo', 'fxo', 'f\no', 'foo']],
  ['[0-9]{2,}', '0a1', ['0', '01', 'a01b', '012']],

  // classes
  ['[abc]+', 'abcd', ['a', 'abcabc', '', 'abd']],
  ['[a-z0-9_]{2,4}', 'az09_A-', ['az', 'a_9z', 'a', 'abcde', 'aA']],
  ['[^a-z]*', 'az09A\n😀', ['', '09A', '\n😀', 'a', '0a']],
  ['[^\\n]*', 'ab\n\r', ['ab\r', 'a\nb', '']],
  ['[\\d\\s]+', '0 9\t\u00a0\u3000\u180ea', ['0 9', '\u00a0\u3000', '\u180e', 'a']],
  ['[\\D][\\W\\d][\\S]', 'a0 _!\n', ['a0a', '0aa', 'a a', 'a!!', 'a_a', '\n0\n']],
  ['\\d{3}-\\d{4}', '0123-a', ['012-3456', '0123-456', '012-345', '012-34567']],
  ['\\w+@\\w+\\.com', 'ab_9@.comé', ['a@b.com', 'a_9@b9.com', '@b.com', 'é@b.com']],
  ['\\s*', ' \t\n\v\f\r\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\u180e\u200bx', [' \t\n\v\f\r', '\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff', '\u180e', '\u200b', '\u0085']],
  ['\\S+', ' a\t\u00a0é😀', ['aé😀', 'a b', '\u00a0']],
  ['\\W', 'a_ !éZ9', ['a', '_', ' ', '!', 'é', 'Z', '9']],
  ['^\\w$', 'a_ !éZ9\u017f\u212a', ['a', '\u017f', '\u212a']],
  ['^\\d$', '0٣a', ['0', '٣']],
  ['^\\s$', ' \u00a0\ufeff\u2029\u180ex', []],
  ['[-a][a-][a\\-z]', 'a-zb', ['-a-', 'a-z', '--b', 'aa-']],
  ['[\\b]', '\bb', ['\b', 'b']],
  ['[]', 'a', ['', 'a']],
  ['a[]*b', 'ab', ['ab', 'a', 'b']],
  ['[^]', 'a\n😀', ['a', '\n', '😀', '']],
  ['[😀-😂]+', '😀😁😂😃a', ['😀', '😁😂', '😃', '😀a']],
  ['[^😀]', '😀😁a', ['😀', '😁', 'a', '\n']],
  ['[\\u{10000}-\\u{10FFFF}]+', 'a😀\u{10FFFF}\u{10000}\uffff€', ['😀', '\u{10FFFF}\u{10000}', '\uffff']],
  ['[α-ω]+ς?', 'αβωςaΑ', ['αβω', 'ας', 'Α', 'a']],
  ['[\\x00-\\x1F]', '\0\x01\x1f a', ['\0', '\x1f', ' ']],
  ['[\\]\\[\\\\^]+', '][\\^a', ['][\\^', 'a']],
  ['[.*+?]', '.*+?a', ['.', '?', 'a']],
  ['[^\\s\\S]?x', 'x ', ['x', ' x']],
  ['[\\s\\S]{2}', 'a\n😀', ['a\n', '😀😀', 'a']],
  ['[\\u0041-\\u005A][^\\u0041-\\u005A]', 'AZaz', ['Aa', 'aA', 'AZ']],
  ['[\\0-\\cZ]', '\0\x1a\x1b', ['\0', '\x1a', '\x1b']],
  ['[\\t-\\r]+', '\t\n\v\f\r ', ['\t\n\v\f\r', ' ']],
  ['[a-c\\d-]+', 'ac0-d', ['a-0', 'd']],

  // groups
  ['(ab)+', 'abx', ['ab', 'abab', 'aba', '']],
  ['(?:a|bc)*d', 'abcd', ['d', 'abcd', 'bcad', 'bd']],
  ['(?<year>\\d{4})-(?<m>\\d\\d)', '09-', ['2024-01', '24-01', '2024-1']],
  ['((a|b)c)*', 'abc', ['', 'acbc', 'ab', 'c']],
  ['(a(b(c)?)?)?', 'abc', ['', 'a', 'ab', 'abc', 'ac', 'bc']],
  ['()', 'a', ['', 'a']],
  ['(|a)+', 'ab', ['', 'a', 'aaa', 'b']],
  ['(a|)*b', 'ab', ['b', 'aab', 'a']],
  ['(?:)', 'a', ['', 'a']],
  ['x(?:(?:(?:y)))z', 'xyz', ['xyz', 'xz']],

  // quantifiers
  ['a{3}', 'ab', ['aaa', 'aa', 'aaaa']],
  ['a{2,}', 'ab', ['a', 'aa', 'aaaaa']],
  ['a{2,4}', 'ab', ['a', 'aa', 'aaaa', 'aaaaa']],
  ['a{0}b', 'ab', ['b', 'ab']],
  ['a{0,1}b{1,1}', 'ab', ['b', 'ab', 'aab']],
  ['a*?b', 'ab', ['b', 'aab']],
  ['a+?', 'ab', ['a', 'aa', '']],
  ['a??b', 'ab', ['b', 'ab']],
  ['a{2,3}?', 'ab', ['aa', 'aaa', 'aaaa']],
  ['a{2,}?b', 'ab', ['aab', 'ab']],
  ['(a?b?)*', 'abc', ['', 'abba', 'c', 'ba']],
  ['(a*)*', 'ab', ['', 'aaa', 'b']],
  ['(a*b*)+c', 'abc', ['c', 'abbac', 'ab']],
  ['(a?){3}', 'ab', ['', 'aaa', 'aaaa']],
  ['(a|b?){2,}', 'abc', ['', 'abab', 'c']],
  ['((a?)?)*b', 'ab', ['b', 'aab']],
  ['(a{0,2}b?){2,4}c', 'abc', ['c', 'aabaabc', 'aaaaaaaac', 'aaaaaaaaac']],
  ['(abc){2,3}', 'abc', ['abcabc', 'abc', 'abcabcabc', 'abcabcabcabc']],
  ['(a{0}|b)*', 'ab', ['', 'bb', 'a']],
  ['(?:a+|b)*?c', 'abc', ['c', 'aabc']],
  ['\\d{1,3}(,\\d{3})*', '0,', ['1', '1,000', '1000', '12,34', ',000']],
  ['a{300}', 'ab', [x('a', 299), x('a', 300), x('a', 301), x('a', 150) + 'b' + x('a', 149)]],
  ['a{0,1500}b', 'ab', ['b', 'ab', x('a', 20) + 'b']],          // counts over 1000 are
  ['(?:ab|c){3,2000}', 'abc', ['abcc', 'ccc', 'cc', 'abab']],   // written in two parts
  ['x{1999,}|y{0,2000}', 'xy', ['', 'yyy', 'x']],
  ['(ab){2,}c', 'abc', [x('ab', 2) + 'c', 'abc', x('ab', 30) + 'c']],

  ['(?:(?:a|b)?(?:c|d)?)*e', 'abcde', ['e', 'acbde', 'ce', 'ea']],
  ['((a?)(b?))+c', 'abc', ['c', 'abbac', 'bc']],
  ['(a*|b)*c', 'abc', ['c', 'abaac', 'ca']],
  ['((ab)*)+c', 'abc', ['c', 'ababc', 'abac']],
  ['(a{0,3}){2,}b', 'ab', ['b', 'aaaaaaab', 'ba']],
  ['(a?){5}b', 'ab', ['b', 'aaaaab', 'aaaaaab']], // (V8 backtracks: keep the counts small)
  ['(?:\\s*,?\\s*)*x', ' ,x', ['x', ' , ,x', ',,x', 'x,']],
  ['a(?:)*b', 'ab', ['ab', 'b']],
  ['(|)+a', 'ab', ['a', 'aa']],
  ['(?:a|b|)+?c', 'abc', ['c', 'abc', 'ac', 'cc']],
  ['a{2}?b', 'ab', ['aab', 'ab']],
  ['(?:[a-c]|\\d)+?x', 'ac0x', ['ax', 'a0cx', 'x']],
  ['\\w{2}\\W{2}', 'a_ -é', ['a_ -', '__é-', 'ab c']],
  ['.*', 'a\n\u2028', ['', 'aa', 'a\na']],
  ['.+', 'a\r', ['a', '\r', 'a\ra']],
  ['[\\S\\s]*?x', 'a\nx', ['x', 'a\nx', 'xa']],

  // more classes and escapes
  ['[\\uD7FF-\\uE000]+', '\uD7FF\uE000\uE001a', ['\uD7FF\uE000', '\uE001']],
  ['[^\\uD800-\\uDFFF]', 'a😀\n', ['a', '😀', '\n', '']],
  ['a\\uD83D?b', 'ab😀', ['ab', 'a😀b']],
  ['[\\u{1F600}-\\u{1F64F}\\u2600-\\u26FF]+', '😀🙏☀⛿a🚀', ['😀☀', '🚀', '⛿🙏']],
  ['^[^\\x00-\\x7F]+$', 'aé😀\x7f\x80', ['é😀', 'éa', '\x80']],
  ['[\\x20-\\x7E]{1,5}', ' ~a\x7f\x1f', [' ~', '~~~~~~', '\x7f']],
  ['[--/]+', '-./,0', ['-./', ',', '0']],
  ['[\\--\\/]', '-./,0', ['.', ',']],
  ['[a-a][\\s-][^-]', 'a -b', ['a a', 'a-b', 'a -', 'aa ']],
  ['[\\u00e9\\u0065\\u0301]+', 'e\u0301\u00e9a', ['e\u0301', '\u00e9', 'a']],
  ['\\u{0}\\u{00000041}\\0', '\0Aa', ['\0A\0', 'A\0']],
  ['\\cA\\ca\\cz', '\x01\x1aa', ['\x01\x01\x1a', 'cAca']],
  ['😀+🙂*', '😀🙂', ['😀', '😀🙂🙂', '🙂']],
  ['ab|cd|ef|', 'abcdef', ['', 'ab', 'cd', 'ef', 'ace']],
  ['(a|b)|(c)', 'abc', ['a', 'c', 'ac']],
  ['^(a)$|^(b)$', 'ab', ['a', 'b', 'ab']],
  ['^(?<a>x)|(?<b>y)$', 'xy', ['x', 'y', 'xy', 'yx']],

  // alternation and anchors
  ['^abc', 'abcx', ['abc', 'abcx', 'xabc']],
  ['abc$', 'abcx', ['abc', 'abcx', 'xabc']],
  ['^a|b$', 'abx', ['a', 'ax', 'xa', 'b', 'xb', 'bx', 'ab']],
  ['^a|^b', 'abx', ['a', 'b', 'xa', 'bx']],
  ['a$|b$', 'abx', ['a', 'b', 'xa', 'ax']],
  ['^$', 'a', ['', 'a']],
  ['^', 'a', ['', 'a']],
  ['$', 'a', ['', 'a']],
  ['^(a|b)$', 'abx', ['a', 'b', 'ab', 'xa']],
  ['^a|b|c$', 'abcx', ['ax', 'xbx', 'xc', 'cx']],
  ['x|^y$', 'xy', ['y', 'yy', 'axa']],
  ['^(?:a|b)+$|^c', 'abcx', ['abab', 'cx', 'xc']],
  ['cat|dog', 'catdog ', ['cat', 'dog', 'a cat', 'catdog', 'do']],

  // patterns met in JSON Schemas
  ['^[A-Z]{2}\\d{6}$', 'AZ09a', ['AB123456', 'AB12345', 'ab123456', 'AB1234567']],
  ['^\\+?[1-9]\\d{1,14}$', '+0123', ['+12', '12345', '+0123', '1']],
  ['^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$', 'az.@_-%+9', ['john.doe@example.com', 'a@b.c', 'a@b.cd', '@b.cd', 'a b@c.de']],
  ['^(\\([0-9]{3}\\))?[0-9]{3}-[0-9]{4}$', '(0)-9', ['555-1212', '(888)555-1212', '(888)555-1212 ext. 532', '(800)FLOWERS']],
  ['^\\d{4}-\\d{2}-\\d{2}$', '0-9', ['2024-01-31', '2024-1-31']],
  ['^#?([a-fA-F0-9]{6}|[a-fA-F0-9]{3})$', '#aF0g', ['#aabbcc', 'abc', '#abcd', 'ggg']],
  ['^[a-z0-9]+(?:-[a-z0-9]+)*$', 'az9-', ['a-b-c', 'a--b', '-a', 'abc']],
  ['^(?:[01]\\d|2[0-3]):[0-5]\\d$', '0123:59', ['23:59', '24:00', '09:05', '9:05']],
  ['^https?://[^\\s/$.?#].[^\\s]*$', 'hp:/s.a ', ['http://a.b', 'https://x', 'http:///a', 'http://a b']],
  ['^v?(\\d+)\\.(\\d+)\\.(\\d+)$', 'v0.1', ['v1.2.3', '1.2.3', '1.2', 'v1.2.3.4']],
  ['^[^@\\s]+@[^@\\s]+$', 'a@ b', ['a@b', 'a@@b', 'a b@c']],

  ['^[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$', '0f9a-8', ['123e4567-e89b-12d3-a456-426614174000', '123e4567-e89b-62d3-a456-426614174000', '123e4567e89b12d3a456426614174000']],
  ['^(\\d{1,3}\\.){3}\\d{1,3}$', '0.9', ['1.2.3.4', '1.2.3', '1234.1.1.1', '255.255.255.255']],
  ['^(?:(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)$', '0125.', ['1.2.3.4', '256.1.1.1', '255.249.199.09', '1.1.1']],
  ['^[A-Za-z]+(?: [A-Za-z]+)*$', 'aZ ', ['Ada Lovelace', 'Ada  L', ' Ada', 'Ada']],
  ['^\\S+$', 'a \u3000', ['a', 'a a', 'a\u3000']],
  ['^\\s*$', ' \ta', ['', ' \t ', ' a']],
  ['^P(?:\\d+Y)?(?:\\d+M)?(?:\\d+D)?$', 'P1YMD', ['P', 'P1Y2M3D', 'P1D', 'P1Y1Y', 'PYM']],
  ['^[a-z]{2}(-[A-Z]{2})?$', 'enUS-', ['en', 'en-US', 'en-us', 'eng']],

  // what the JSON string mode has to escape
  ['a"b', 'a"b\\', ['a"b', 'a\\"b', 'ab']],
  ['\\\\', '\\a"', ['\\', '\\\\', 'a']],
  ['["\\\\]+', '"\\a', ['"\\', '"', 'a']],
  ['[^"]*', 'a"\\\n', ['a\\\n', 'a"', '']],
  ['[\\0-\\x1F"\\\\]+', '\0\x01\b\t\n\v\f\r\x1b\x1f"\\ a', ['\0\x1f"\\', '\b\t\n\v\f\r', ' ']],
  ['.+', 'a\x01\b"\\\n\u2028', ['a\x01\b"\\', 'a\n', '\u2028']],
  ['\\s', ' \t\n\v\f\r\u00a0', []],
  ['\\u0000|\\x7F', '\0\x7f', ['\0', '\x7f', '\0\0']],
  ['[^a-z]"', 'a"\n\\', ['\n"', '\\"', '""', 'a"']],
];

// ---------------------------------------------------------------- generation
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(rand, text, alphabet) {
  const cps = Array.from(text);
  const pick = () => alphabet[Math.floor(rand() * alphabet.length)];
  const at = Math.floor(rand() * (cps.length + 1));
  const op = cps.length === 0 ? 0 : Math.floor(rand() * 3);
  if (op === 0) cps.splice(at, 0, pick());
  else if (op === 1) cps.splice(Math.min(at, cps.length - 1), 1);
  else cps[Math.min(at, cps.length - 1)] = pick();
  return cps.join('');
}

// The listed texts, their mutations (three each), random texts, and up to
// N_POSITIVE random texts that match as a whole (found among many tries:
// random texts seldom do).
function texts(rand, alphabet, listed, whole) {
  const out = new Set(listed);
  for (const t of listed) {
    if (t.length > 100) continue; // the long ones are edge cases already
    for (let k = 0; k < 3; k++) out.add(mutate(rand, t, alphabet));
  }
  const random = () => {
    const n = Math.floor(rand() * (MAX_RANDOM + 1));
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
    return s;
  };
  const tries = alphabet.length < 3 ? N_RANDOM / 2 : N_RANDOM;
  for (let k = 0; k < tries; k++) out.add(random());
  for (let k = 0, found = 0; k < 3000 && found < N_POSITIVE; k++) {
    const s = random();
    if (!out.has(s) && whole.test(s)) out.add(s), found++;
  }
  return [...out];
}

function main() {
  let out = path.join(REPO, 'tests', 'data', 'grammars', 'regex-cases.txt');
  for (let i = 2; i < process.argv.length; i++) {
    if (process.argv[i] === '--out' && i + 1 < process.argv.length) out = path.resolve(process.argv[++i]);
    else { console.error('usage: make_regex_refs.mjs [--out FILE]'); process.exit(2); }
  }
  const rand = mulberry32(SEED);
  const lines = [
    '# Regex acceptance table for tests/test_regex.c, written by tools/refs/make_regex_refs.mjs',
    '# (Node ' + process.versions.node.split('.')[0] + ', V8 RegExp with the u flag). One pattern per line:',
    '# {"p": PATTERN, "t": [[TEXT, FULL, SEARCH], ...]}: FULL = the whole text matches,',
    '# SEARCH = the pattern matches somewhere in it (JSON Schema "pattern").',
  ];
  let rows = 0, full = 0, search = 0;
  for (const [p, alphabet, listed] of CASES) {
    const whole = new RegExp('^(?:' + p + ')$', 'u');
    const some = new RegExp(p, 'u');
    const t = texts(rand, Array.from(alphabet), listed, whole).map((s) => {
      const f = whole.test(s) ? 1 : 0, m = some.test(s) ? 1 : 0;
      rows++, full += f, search += m;
      return [s, f, m];
    });
    lines.push(JSON.stringify({ p, t }));
  }
  fs.writeFileSync(out, lines.join('\n') + '\n');
  const size = fs.statSync(out).size;
  console.log(`${path.relative(REPO, out)}: ${CASES.length} patterns, ${rows} rows ` +
    `(${full} full matches, ${search} search matches), ${size} bytes`);
}

main();
