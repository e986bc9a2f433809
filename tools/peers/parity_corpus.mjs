// The corpus of the tokenizer parity test (parity_test.mjs): deterministic (a seeded PRNG, sorted
// file lists, no Math.random), about `mb` MiB of distinct documents of mixed text plus a
// pathological set. Every document is valid Unicode (no lone surrogates), so its UTF-8 is valid.
//
//   import { corpusDocuments } from "./parity_corpus.mjs";
//   for (const doc of corpusDocuments({ shared: "../shared", mb: 10 })) ...  // {id, kind, text}
//
// or, from the command line, one JSON string per line (what `k3 tokenize --jsonl` reads):
//   node tools/peers/parity_corpus.mjs --shared ../shared [--mb 10] [--out FILE]
//
// Sources, in the order they are produced:
//   long     documents longer than 400,000 code points and documents with runs of more than 25,000
//            whitespace or non-whitespace code points, for Moonshot's chunking. Their regex pieces
//            stay short (words, 3-digit groups, punctuation-separated units) so the peer's
//            quadratic merge loop stays fast, except one real 25,001-space run.
//   path     pathological runs (one letter, random letters, digits, punctuation, whitespace, CJK,
//            emoji/ZWJ, marks...), each at most `runBytes` (50,000 bytes; smaller with small mb).
//   special  special-token strings (<|im_end|>, <|reserved_token_163600|>, K3's <|open|>...) and
//            near misses, in chat markup and in running text.
//   sharegpt ShareGPT conversations rendered as plain text, K2.5 markup, K3 markup, CRLF, JSON.
//   spec     the markdown under shared/spec.
//   mixed    shared/goldens/tokenizer/long_mixed_500k.txt.
//   cpp      C++ standard library headers under /usr/include/c++ (sorted file list).
//   synth    synthetic multilingual text, code, numbers, emoji and odd whitespace, filling the rest.
// Documents are cut at line boundaries to at most 64 KiB (the long ones excepted).
// Two more generators, which parity_test.mjs appends: denseFuzzDocuments (many short documents
// drawn densely from boundary characters) and codepointSweepDocuments (every code point of
// planes 0-3 and 14 in class-revealing contexts; only with --sweep).
import fs from "fs";
import path from "path";
import { fileURLToPath } from "url";

const MiB = 1 << 20;
export const MAX_DOC_BYTES = 64 * 1024;

// ---------------------------------------------------------------------------------------------
// Deterministic PRNG: a 32-bit xorshift state stepped through a multiply-xorshift output mix.
export class Rng {
  constructor(seed) {
    this.s = (seed >>> 0) || 0x9e3779b9;
    for (let i = 0; i < 4; i++) this.u32();
  }
  u32() {
    let x = this.s;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    let z = Math.imul(this.s ^ (this.s >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  }
  float() { return this.u32() / 4294967296; }
  int(lo, hi) { return lo + Math.floor(this.float() * (hi - lo + 1)); }  // inclusive
  chance(p) { return this.float() < p; }
  pick(arr) { return arr[Math.floor(this.float() * arr.length)]; }
  cp(lo, hi) { return String.fromCodePoint(this.int(lo, hi)); }
  // Weighted choice: entries are [weight, value].
  weighted(entries) {
    let total = 0;
    for (const [w] of entries) total += w;
    let r = this.float() * total;
    for (const [w, v] of entries) if ((r -= w) < 0) return v;
    return entries[entries.length - 1][1];
  }
}

function hashSeed(str) {
  let h = 2166136261;
  for (let i = 0; i < str.length; i++) h = Math.imul(h ^ str.charCodeAt(i), 16777619);
  return h >>> 0;
}

const bytesOf = (s) => Buffer.byteLength(s, "utf8");
// The first n code points of s (never splits a surrogate pair).
const cut = (s, n) => Array.from(s).slice(0, n).join("");
const cps = (...list) => String.fromCodePoint(...list);

// ---------------------------------------------------------------------------------------------
// Script generators. Each returns one "word" (no spaces).
const ACCENTED = "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿāăąćčďđēėęěğīįıķĺľłńňőœŕřśşšţťůűųźżžșțẞß";
const ACCENTED_UP = "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞĀĂĄĆČĎĐĒĖĘĚĞĪĮİĶĹĽŁŃŇŐŒŔŘŚŞŠŢŤŮŰŲŹŻŽȘȚ";
const LATIN_SYL = ["ka", "lo", "mi", "ne", "to", "ra", "shi", "ver", "con", "str", "ing", "tion", "pre",
  "ab", "el", "qu", "ou", "ei", "sch", "th", "ck", "y", "x", "z", "w", "er", "an", "de", "un"];
const TITLECASE_DIGRAPHS = ["ǅ", "ǈ", "ǋ", "ǲ", "ᾈ", "ᾩ"];  // Lt

function latinWord(r) {
  let w = "";
  const n = r.int(1, 4);
  for (let i = 0; i < n; i++) w += r.pick(LATIN_SYL);
  if (r.chance(0.3)) {
    const i = r.int(0, w.length - 1);
    w = w.slice(0, i) + r.pick(Array.from(ACCENTED)) + w.slice(i + 1);
  }
  if (r.chance(0.08)) w += r.pick(["\u0301", "\u0308", "\u0327", "\u030c", "\u0323\u0302"]);  // NFD
  const c = r.float();
  if (c < 0.2) w = w[0].toUpperCase() + w.slice(1);
  else if (c < 0.25) w = w.toUpperCase();
  else if (c < 0.28) w = r.pick(Array.from(ACCENTED_UP)) + w;
  else if (c < 0.30) w = r.pick(TITLECASE_DIGRAPHS) + w;
  else if (c < 0.36) w = w + latinWord(r)[0].toUpperCase() + "ser" + r.pick(["Name", "ID", "Id", "s"]);
  return w;
}
function rangeWord(r, lo, hi, min, max, { marks = null, markP = 0, upper = null } = {}) {
  let w = "";
  const n = r.int(min, max);
  for (let i = 0; i < n; i++) {
    w += r.cp(lo, hi);
    if (marks && r.chance(markP)) w += r.cp(marks[0], marks[1]);
  }
  if (upper && r.chance(0.25)) w = r.cp(upper[0], upper[1]) + w;
  return w;
}
const cyrillicWord = (r) => rangeWord(r, 0x430, 0x44f, 2, 10, { upper: [0x410, 0x42f] }) + (r.chance(0.05) ? "ё" : "");
const greekWord = (r) => rangeWord(r, 0x3b1, 0x3c9, 2, 9, { upper: [0x391, 0x3a9] }) + (r.chance(0.2) ? "ά" : "");
const arabicWord = (r) => rangeWord(r, 0x628, 0x64a, 2, 8, { marks: [0x64b, 0x652], markP: 0.3 });
const hebrewWord = (r) => rangeWord(r, 0x5d0, 0x5ea, 2, 7, { marks: [0x5b0, 0x5bc], markP: 0.3 });
const armenianWord = (r) => rangeWord(r, 0x561, 0x586, 2, 8, { upper: [0x531, 0x556] });
const georgianWord = (r) => rangeWord(r, 0x10d0, 0x10fa, 2, 8);
function devanagariWord(r) {
  let w = "";
  const n = r.int(1, 4);
  for (let i = 0; i < n; i++) {
    w += r.cp(0x915, 0x939);
    const t = r.float();
    if (t < 0.4) w += r.cp(0x93e, 0x94c);
    else if (t < 0.5) w += "\u094d";
    else if (t < 0.55) w += "\u0902";
  }
  return w;
}
function thaiRun(r) {  // Thai is written without spaces between words
  let w = "";
  const n = r.int(3, 30);
  for (let i = 0; i < n; i++) {
    w += r.cp(0xe01, 0xe2e);
    if (r.chance(0.3)) w += r.pick(["\u0e31", "\u0e34", "\u0e35", "\u0e38", "\u0e32", "\u0e33", "\u0e40"]);
    if (r.chance(0.15)) w += r.cp(0xe48, 0xe4b);
  }
  return w;
}
const hangulWord = (r) => rangeWord(r, 0xac00, 0xd7a3, 1, 5) + (r.chance(0.1) ? cps(0x1100 + r.int(0, 18), 0x1161 + r.int(0, 20)) : "");
const hiraganaWord = (r) => rangeWord(r, 0x3041, 0x3096, 1, 6);
const katakanaWord = (r) => rangeWord(r, 0x30a1, 0x30fa, 2, 6) + (r.chance(0.3) ? "ー" : "");
function hanRun(r) {
  let w = "";
  const n = r.int(1, 8);
  for (let i = 0; i < n; i++) {
    w += r.weighted([
      [70, () => r.cp(0x4e00, 0x9fff)],
      [6, () => r.cp(0x3400, 0x4dbf)],      // Ext-A
      [6, () => r.cp(0x20000, 0x2a6df)],    // Ext-B (astral)
      [2, () => r.cp(0x2b740, 0x2b81d)],    // Ext-D
      [2, () => r.cp(0x2ebf0, 0x2ee5d)],    // Ext-I
      [3, () => r.cp(0xf900, 0xfa6d)],      // compatibility ideographs
      [4, () => "々"],                        // U+3005, Lm and Script=Han
      [4, () => "〇"],                        // U+3007, Nl and Script=Han
      [2, () => r.pick(["〆", "〻", "⺀", "⼀", "㐀"])],
    ])();
  }
  return w;
}
function japaneseSentence(r) {
  let s = "";
  const n = r.int(2, 10);
  for (let i = 0; i < n; i++) s += r.pick([hanRun, hiraganaWord, katakanaWord, hanRun])(r);
  return s + r.pick(["。", "、", "！", "？", "」", "「", "…", "・"]);
}
function chineseSentence(r) {
  let s = "";
  const n = r.int(2, 12);
  for (let i = 0; i < n; i++) {
    s += hanRun(r);
    if (r.chance(0.15)) s += r.pick(["，", "、", "：", "；", "（", "）", "《", "》", "“", "”"]);
    if (r.chance(0.06)) s += r.pick(["iPhone", "GPU", "AI", "2024年", "Kimi", "K3"]);
  }
  return s + r.pick(["。", "！", "？", "……"]);
}

// ---------------------------------------------------------------------------------------------
// Inline elements.
const ZWJ = "\u200d";
const EMOJI_BASIC = [[0x1f300, 0x1f5ff], [0x1f600, 0x1f64f], [0x1f680, 0x1f6ff], [0x1f900, 0x1f9ff],
  [0x2600, 0x26ff], [0x2700, 0x27bf], [0x1fa70, 0x1faff]];
const SKIN_BASES = [0x1f44b, 0x1f44d, 0x1f64f, 0x1f9d1, 0x1f468, 0x1f469, 0x1f44f, 0x270c];
export function emoji(r) {
  return r.weighted([
    [40, () => { const [lo, hi] = r.pick(EMOJI_BASIC); return r.cp(lo, hi); }],
    [10, () => cps(r.pick(SKIN_BASES), r.int(0x1f3fb, 0x1f3ff))],
    [8, () => cps(0x1f468, 0x200d, 0x1f469, 0x200d, 0x1f467, 0x200d, 0x1f466)],   // family
    [6, () => cps(0x1f469, r.int(0x1f3fb, 0x1f3ff), 0x200d, 0x1f4bb)],            // technologist
    [5, () => cps(0x1f3f3, 0xfe0f, 0x200d, 0x1f308)],                             // rainbow flag
    [4, () => cps(0x2764, 0xfe0f, 0x200d, 0x1f525)],                              // heart on fire
    [4, () => cps(0x1f9d1, 0x200d, 0x1f91d, 0x200d, 0x1f9d1)],
    [10, () => cps(r.int(0x1f1e6, 0x1f1ff), r.int(0x1f1e6, 0x1f1ff))],            // flag
    [8, () => r.pick(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "#", "*"]) + "\ufe0f\u20e3"],
    [3, () => cps(0x1f3f4, 0xe0067, 0xe0062, 0xe0073, 0xe0063, 0xe0074, 0xe007f)], // tag sequence
    [4, () => r.pick(["☺\ufe0e", "☺\ufe0f", "❤", "❤️", "✔️", "©️", "™"])],
  ])();
}
export function digits(r) {
  const n = r.int(1, 12);
  return r.weighted([
    [50, () => { let s = ""; for (let i = 0; i < n; i++) s += String.fromCharCode(48 + r.int(0, 9)); return s; }],
    [5, () => rangeWord(r, 0x660, 0x669, 1, n)],      // Arabic-Indic
    [3, () => rangeWord(r, 0x6f0, 0x6f9, 1, n)],      // Extended Arabic-Indic
    [5, () => rangeWord(r, 0x966, 0x96f, 1, n)],      // Devanagari
    [3, () => rangeWord(r, 0x9e6, 0x9ef, 1, n)],      // Bengali
    [3, () => rangeWord(r, 0xe50, 0xe59, 1, n)],      // Thai
    [5, () => rangeWord(r, 0xff10, 0xff19, 1, n)],    // fullwidth
    [2, () => rangeWord(r, 0x1d7ce, 0x1d7ff, 1, n)],  // mathematical digits (astral)
    [3, () => r.pick(["¹", "²", "³", "½", "¾", "⅓", "Ⅻ", "ⅷ", "①", "⑳", "〇", "〡", "𝟘"]).repeat(r.int(1, 4))],
    [6, () => `${r.int(1, 999)},${String(r.int(0, 999)).padStart(3, "0")},${String(r.int(0, 999)).padStart(3, "0")}.${r.int(0, 99)}`],
    [4, () => `0x${r.u32().toString(16).toUpperCase()}`],
    [4, () => `${r.int(1990, 2030)}-${String(r.int(1, 12)).padStart(2, "0")}-${String(r.int(1, 28)).padStart(2, "0")}T${r.int(10, 23)}:${r.int(10, 59)}:${r.int(10, 59)}Z`],
    [3, () => `${r.float() * 1000}`],
    [3, () => `${r.int(1, 9)}.${r.int(0, 99)}e-${r.int(1, 30)}`],
  ])();
}
// Whitespace between words: mostly one space, sometimes the characters regex \s, Python isspace()
// and the pattern's [\r\n] classes disagree on.
export function gap(r) {
  return r.weighted([
    [200, () => " "],
    [6, () => "  "],
    [4, () => "\t"],
    [5, () => "\n"],
    [3, () => "\n\n"],
    [3, () => "\r\n"],
    [2, () => "\r"],              // lone CR
    [2, () => " \n "],
    [2, () => "\u00a0"],          // NBSP
    [2, () => "\u3000"],          // ideographic space
    [1, () => "\u2028"],          // line separator
    [1, () => "\u2029"],
    [1, () => "\u0085"],          // NEL
    [1, () => "\u001f"],          // unit separator: Python isspace() but not regex \s
    [1, () => "\u001c"],
    [1, () => "\u000b"],
    [1, () => "\u000c"],
    [1, () => "\u2009"],          // thin space
    [1, () => "\u202f"],
    [1, () => "\u1680"],
    [1, () => "\u200b"],          // zero-width space: not whitespace at all
    [1, () => "\ufeff"],
    [1, () => "\u180e"],          // Mongolian vowel separator: not White_Space since Unicode 6.3
    [1, () => " \t \u00a0\u3000 "],
    [1, () => "   \r\n\t\r\n  "],
  ])();
}
const CONTRACTIONS = ["s", "t", "re", "ve", "m", "ll", "d", "S", "T", "RE", "Re", "rE", "VE", "vE", "M",
  "LL", "lL", "D", "ſ", "ſ", "x", "", "'", "Ll"];
export function contraction(r) {
  const base = r.weighted([
    [5, () => latinWord(r)], [1, () => "I"], [1, () => "WE"], [1, () => digits(r)], [1, () => hanRun(r)],
    [1, () => ""], [1, () => cyrillicWord(r)], [1, () => "ſ"],
  ])();
  const apos = r.weighted([[10, "'"], [1, "’"], [1, "''"], [1, "ʼ"]]);
  return base + apos + r.pick(CONTRACTIONS) + (r.chance(0.2) ? latinWord(r) : "");
}
const MARK_RANGES = [[0x300, 0x36f], [0x1ab0, 0x1ace], [0x1dc0, 0x1dff], [0x20d0, 0x20f0], [0xfe20, 0xfe2f]];
export function marked(r) {
  let s = r.weighted([[5, () => r.cp(0x61, 0x7a)], [1, () => r.cp(0x41, 0x5a)], [1, () => ""],
    [1, () => hanRun(r)], [1, () => r.cp(0x30, 0x39)], [1, () => "*"], [1, () => " "]])();
  const n = r.int(1, 4);
  for (let i = 0; i < n; i++) { const [lo, hi] = r.pick(MARK_RANGES); s += r.cp(lo, hi); }
  return s;
}
// Random Unicode scalar values: assigned or not, any plane (no surrogates).
export function soupChar(r) {
  for (;;) {
    const plane = r.weighted([[60, 0], [20, 1], [8, 2], [3, 3], [3, 14], [2, 15], [1, 16]]);
    const cp = plane * 0x10000 + r.int(plane === 0 ? 0x20 : 0, 0xffff);
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    return String.fromCodePoint(cp);
  }
}
const URLS = ["https://example.com/path?q=1&lang=zh-CN#frag", "http://localhost:8080/v1/chat/completions",
  "mailto:someone@example.org", "https://ja.wikipedia.org/wiki/東京都", "ftp://[::1]:21/pub/file.tar.gz",
  "https://github.com/openai/tiktoken/issues/195", "www.пример.рф", "C:\\Users\\José\\Documents\\file (1).txt",
  "/usr/include/c++/12/bits/stl_vector.h:1234:5"];

// Special-token strings: real names (k2.5 and k3 tables), reserved ids and near misses.
const SPECIAL_REAL = ["[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "<|im_assistant|>", "<|im_system|>",
  "<|im_middle|>", "<|start_header_id|>", "<|end_header_id|>", "[EOT]", "<|tool_calls_section_begin|>",
  "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
  "<|media_begin|>", "<|media_content|>", "<|media_end|>", "<|media_pad|>", "<think>", "</think>", "[UNK]",
  "[PAD]", "<|end_of_msg|>", "<|open|>", "<|close|>", "<|sep|>", "[start_header_id]", "<osagent_mode>",
  "<|reserved_token_163600|>", "<|reserved_token_163589|>", "<|reserved_token_163592|>", "<|reserved_token_163837|>",
  "<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>"];
const SPECIAL_NEAR = ["<|im_end|", "<|im_end>", "|im_end|>", "<| im_end|>", "<|im_end |>", "<|IM_END|>",
  "<|im_End|>", "<||im_end||>", "<<|im_end|>>", "<|im_end|><|im_end|>", "<|im_end|>|>", "<|<|im_end|>",
  "<|reserved_token_163583|>", "<|reserved_token_163840|>", "<|reserved_token_1636000|>",
  "<|reserved_token_163600|", "<|reserved_token_16360|>", "<|reserved_token_-1|>", "<|reserved_token_|>",
  "[BOS", "BOS]", "[bos]", "[ BOS ]", "<think >", "< think>", "<THINK>", "</think", "<|open|", "<|sep| >",
  "<|end_of_msg|>\n", "\u200b<|im_end|>", "<|im_\u200bend|>", "＜|im_end|＞", "<|im_end|>'s", "[EOS]'t"];
export function specialString(r) {
  if (r.chance(0.5)) return r.pick(SPECIAL_REAL);
  if (r.chance(0.15)) return `<|reserved_token_${r.int(163584, 163839)}|>`;
  return r.pick(SPECIAL_NEAR);
}

// ---------------------------------------------------------------------------------------------
// Synthetic documents.
function sentence(r, script) {
  const spaced = {
    latin: latinWord, cyrillic: cyrillicWord, greek: greekWord, arabic: arabicWord, hebrew: hebrewWord,
    armenian: armenianWord, georgian: georgianWord, devanagari: devanagariWord, hangul: hangulWord,
  }[script];
  if (script === "japanese") return japaneseSentence(r);
  if (script === "chinese") return chineseSentence(r);
  if (script === "thai") { let s = thaiRun(r); if (r.chance(0.5)) s += " " + thaiRun(r); return s; }
  let s = "";
  const n = r.int(3, 18);
  for (let i = 0; i < n; i++) {
    if (i) s += gap(r);
    s += r.weighted([
      [100, () => spaced(r)],
      [3, () => digits(r)],
      [2, () => contraction(r)],
      [2, () => emoji(r)],
      [1, () => marked(r)],
      [1, () => r.pick(["(", "[", "\"", "«", "“", "‘", "¿", "¡"]) + spaced(r) + r.pick([")", "]", "\"", "»", "”", "’", "?", "!"])],
      [1, () => spaced(r) + r.pick(["-", "–", "—", "/", "·", "@", "_"]) + spaced(r)],
      [1, () => hanRun(r)],
    ])();
  }
  const end = { arabic: ["؟", ".", "،", "!"], devanagari: ["।", "॥", "?"], greek: [".", ";", "\u037e", "·"],
    armenian: ["։", "՞", "."], hebrew: [".", "?", "׃"] }[script] ?? [".", "!", "?", "...", ":", ";", "…"];
  return s + r.pick(end);
}
const SCRIPTS = ["latin", "latin", "latin", "latin", "cyrillic", "greek", "arabic", "hebrew", "armenian",
  "georgian", "devanagari", "thai", "hangul", "japanese", "chinese", "chinese"];

function proseParagraph(r, scripts) {
  let p = "";
  const n = r.int(1, 8);
  for (let i = 0; i < n; i++) {
    if (i) p += r.chance(0.8) ? " " : gap(r);
    p += sentence(r, r.pick(scripts));
    if (r.chance(0.05)) p += " " + emoji(r) + emoji(r);
    if (r.chance(0.03)) p += " " + r.pick(URLS);
    if (r.chance(0.03)) p += " " + contraction(r);
  }
  return p;
}

const IDENT_PARTS = ["get", "set", "user", "name", "id", "buffer", "size", "count", "token", "ids", "http",
  "URL", "json", "parse", "max", "min", "value", "index", "k", "v", "cache", "kv", "attn", "head", "dim"];
function ident(r) {
  const parts = [];
  const n = r.int(1, 4);
  for (let i = 0; i < n; i++) parts.push(r.pick(IDENT_PARTS));
  const style = r.int(0, 4);
  if (style === 0) return parts.join("_");
  if (style === 1) return parts.map((p, i) => (i ? p[0].toUpperCase() + p.slice(1) : p)).join("");
  if (style === 2) return parts.map((p) => p[0].toUpperCase() + p.slice(1)).join("");
  if (style === 3) return parts.join("_").toUpperCase();
  return "k" + parts.map((p) => p[0].toUpperCase() + p.slice(1)).join("") + (r.chance(0.3) ? "_" : "");
}
function codeLine(r, indent) {
  const lit = () => r.weighted([
    [4, () => digits(r)],
    [4, () => JSON.stringify(cut(sentence(r, r.pick(SCRIPTS)), 60))],
    [1, () => `'${r.pick(["\\n", "\\t", "\\\\", "\\'", "\\u00e9", "\\x1b[0m"])}'`],
    [1, () => "nullptr"], [1, () => "true"], [1, () => "None"],
  ])();
  return indent + r.weighted([
    [5, () => `${r.pick(["auto", "int", "size_t", "const std::string&", "let", "var", "const"])} ${ident(r)} = ${ident(r)}(${ident(r)}, ${lit()});`],
    [3, () => `if (${ident(r)} ${r.pick(["==", "!=", "<=", ">=", "&&", "||", "<<", ">>=", "->", "::", "!=="])} ${lit()}) {`],
    [2, () => `}`],
    [2, () => `return ${ident(r)}${r.pick(["()", "[0]", ".size()", "->next", "?.value ?? 0", "!"])};`],
    [2, () => `// ${sentence(r, r.pick(SCRIPTS))}`],
    [1, () => `# ${sentence(r, "latin")} ${r.pick(["TODO", "FIXME", "NOTE(kimi):", "XXX"])}`],
    [2, () => `def ${ident(r)}(self, ${ident(r)}: ${r.pick(["int", "str", "list[int]", "dict[str, Any]"])} = ${lit()}) -> None:`],
    [2, () => `"${ident(r)}": ${lit()},`],
    [1, () => `for (size_t i = 0; i < ${ident(r)}.size(); ++i) ${ident(r)}[i] += ${digits(r)};`],
    [1, () => `#include <${ident(r)}.h>`],
    [1, () => `${ident(r)} = [x**2 for x in range(${r.int(0, 999)}) if x % ${r.int(2, 9)} == 0]`],
    [1, () => `<div class="${ident(r)}">${sentence(r, "latin")}</div>`],
    [1, () => `SELECT ${ident(r)}, COUNT(*) FROM ${ident(r)} WHERE ${ident(r)} >= '${r.int(2000, 2030)}-01-01' GROUP BY 1;`],
  ])() + (r.chance(0.05) ? r.pick([" ", "\t", "  "]) : "");  // trailing whitespace
}
function codeBlock(r) {
  const lines = [];
  const n = r.int(3, 40);
  let depth = 0;
  const unit = r.pick(["  ", "    ", "\t", "\t\t"]);
  for (let i = 0; i < n; i++) {
    const line = codeLine(r, unit.repeat(depth));
    lines.push(line);
    if (line.endsWith("{") || line.endsWith(":")) depth = Math.min(depth + 1, 6);
    else if (line.trim() === "}") depth = Math.max(depth - 1, 0);
    if (r.chance(0.05)) lines.push("");
  }
  const eol = r.chance(0.1) ? "\r\n" : "\n";
  return lines.join(eol);
}
function tableBlock(r) {
  const cols = r.int(2, 6);
  const rows = r.int(2, 12);
  const out = ["| " + Array.from({ length: cols }, () => latinWord(r)).join(" | ") + " |",
    "|" + "---|".repeat(cols)];
  for (let i = 0; i < rows; i++) out.push("| " + Array.from({ length: cols }, () => (r.chance(0.5) ? digits(r) : cut(sentence(r, r.pick(SCRIPTS)), 20))).join(" | ") + " |");
  return out.join("\n");
}
function chatMarkup(r, k3Style) {
  const parts = [];
  const turns = r.int(1, 6);
  for (let i = 0; i < turns; i++) {
    const role = r.pick(["system", "user", "assistant", "tool"]);
    const body = r.chance(0.2) ? codeBlock(r) : proseParagraph(r, SCRIPTS);
    if (k3Style) {
      parts.push(`<|open|>${role}<|sep|>${body}<|close|>${role}<|sep|>${r.chance(0.3) ? "<|end_of_msg|>" : ""}`);
    } else {
      const tag = role === "user" ? "<|im_user|>" : role === "assistant" ? "<|im_assistant|>" : "<|im_system|>";
      let msg = `${tag}${role}<|im_middle|>${body}`;
      if (role === "assistant" && r.chance(0.4)) {
        msg = `${tag}${role}<|im_middle|><think>${proseParagraph(r, ["latin"])}</think>${body}` +
          `<|tool_calls_section_begin|><|tool_call_begin|>functions.${ident(r)}:${i}<|tool_call_argument_begin|>` +
          `{"city": "${sentence(r, "chinese")}"}<|tool_call_end|><|tool_calls_section_end|>`;
      }
      parts.push(msg + "<|im_end|>");
    }
  }
  return parts.join(r.chance(0.7) ? "" : "\n");
}
function specialsText(r) {
  let s = "";
  const n = r.int(5, 60);
  for (let i = 0; i < n; i++) {
    s += r.weighted([
      [4, () => specialString(r)],
      [3, () => sentence(r, r.pick(SCRIPTS))],
      [2, () => gap(r)],
      [1, () => specialString(r) + specialString(r)],
      [1, () => latinWord(r) + specialString(r) + latinWord(r)],
      [1, () => digits(r) + specialString(r) + "'s"],
      [1, () => emoji(r) + specialString(r)],
    ])();
  }
  return s;
}
function soupText(r, n) {
  let s = "";
  for (let i = 0; i < n; i++) s += r.chance(0.1) ? gap(r) : soupChar(r);
  return s;
}

// One synthetic document of about `target` bytes in one of several flavors.
function synthDoc(r, target) {
  const flavor = r.weighted([
    [30, "multilingual"], [12, "single-script"], [12, "code"], [6, "markdown"], [5, "emoji"],
    [5, "whitespace"], [5, "numbers"], [4, "contractions"], [3, "marks"], [3, "soup"], [3, "chat"],
  ]);
  const single = [r.pick(SCRIPTS)];
  const blocks = [];
  let bytes = 0;
  while (bytes < target) {
    let b;
    switch (flavor) {
      case "multilingual": b = proseParagraph(r, SCRIPTS); break;
      case "single-script": b = proseParagraph(r, single); break;
      case "code": b = r.chance(0.85) ? codeBlock(r) : proseParagraph(r, ["latin"]); break;
      case "markdown":
        b = r.weighted([[3, () => `${"#".repeat(r.int(1, 4))} ${sentence(r, r.pick(SCRIPTS))}`],
          [4, () => proseParagraph(r, SCRIPTS)], [2, () => "```" + r.pick(["cpp", "python", "", "json"]) + "\n" + codeBlock(r) + "\n```"],
          [2, () => tableBlock(r)], [2, () => `- ${sentence(r, r.pick(SCRIPTS))}\n  - **${latinWord(r)}**: \`${ident(r)}\``],
          [1, () => `> ${proseParagraph(r, ["latin", "chinese"])}`]])();
        break;
      case "emoji": { b = ""; const n = r.int(5, 80); for (let i = 0; i < n; i++) b += r.chance(0.6) ? emoji(r) : r.chance(0.5) ? " " : latinWord(r) + " "; break; }
      case "whitespace": { b = ""; const n = r.int(5, 60); for (let i = 0; i < n; i++) b += r.chance(0.5) ? gap(r) + gap(r) + gap(r) : latinWord(r); break; }
      case "numbers": { b = ""; const n = r.int(5, 80); for (let i = 0; i < n; i++) b += digits(r) + r.pick([" ", ", ", "\t", "\n", "+", "*", "=", "%", "$", "€", "¥", "年", "km", ""]); break; }
      case "contractions": { b = ""; const n = r.int(5, 50); for (let i = 0; i < n; i++) b += contraction(r) + gap(r); break; }
      case "marks": { b = ""; const n = r.int(5, 80); for (let i = 0; i < n; i++) b += marked(r) + (r.chance(0.4) ? gap(r) : ""); break; }
      case "soup": b = soupText(r, r.int(20, 400)); break;
      case "chat": b = chatMarkup(r, r.chance(0.4)); break;
    }
    if (r.chance(0.02)) b += specialString(r);
    blocks.push(b);
    bytes += bytesOf(b) + 2;
  }
  const sep = r.weighted([[8, "\n\n"], [2, "\n"], [1, "\r\n\r\n"], [1, " "]]);
  let text = blocks.join(sep);
  if (r.chance(0.05)) text = " " + text;
  if (r.chance(0.05)) text += r.pick(["\n", " ", "\n\n\n", "\r", "\t"]);
  return { flavor, text };
}

// ---------------------------------------------------------------------------------------------
// Pathological runs. Each regex piece the peer sees stays at most about runBytes bytes.
function pathologicalDocs(r, runBytes) {
  const L = runBytes;
  const rep = (s, bytes) => s.repeat(Math.max(1, Math.floor(bytes / bytesOf(s))));
  const fill = (bytes, fn) => { let s = ""; while (bytesOf(s) < bytes) s += fn(); return s; };  // small fn outputs
  const build = (bytes, fn) => { const parts = []; let b = 0; while (b < bytes) { const p = fn(); parts.push(p); b += bytesOf(p); } return parts.join(""); };
  const lower = () => String.fromCharCode(97 + r.int(0, 25));
  const docs = [
    ["one-letter-a", rep("a", L)],
    ["one-letter-upper-Z", rep("Z", Math.floor(L * 0.6))],
    ["random-lowercase", build(Math.floor(L * 0.6), lower)],
    ["random-mixed-case", build(L, () => (r.chance(0.5) ? lower() : lower().toUpperCase()))],
    ["alternating-case", rep("aB", L)],
    ["alternating-case-upper-first", rep("AbC", L)],
    ["digits-random", build(L, () => String.fromCharCode(48 + r.int(0, 9)))],
    ["digits-zero", rep("0", L)],
    ["digits-mixed-scripts", build(L, () => digits(r))],
    ["punctuation-random", build(Math.floor(L * 0.6), () => r.pick(Array.from("!@#$%^&*()-=+[]{};:,.<>/?~`|\\\"'")))],
    ["punctuation-dashes", rep("-", Math.floor(L * 0.5)) + "\n" + rep("=", Math.floor(L * 0.3))],
    ["spaces-then-word", rep(" ", Math.floor(L * 0.6)) + "word"],
    ["newlines", rep("\n", Math.floor(L * 0.4))],
    ["crlf-then-lone-cr", rep("\r\n", Math.floor(L * 0.3)) + "x" + rep("\r", Math.floor(L * 0.3))],
    ["mixed-whitespace", build(Math.floor(L * 0.6), () => r.pick([" ", "\t", "\n", "\r", "\u00a0", "\u3000", "\u2028", "\u0085", "\u000b", "\u000c", "\u2009", "\r\n"]))],
    ["whitespace-with-separators", build(L, () => r.pick([" ", " ", "\t", "\u001f", "\u001c", "\u001d", "\u001e", "\u00a0"]))],
    ["cjk-no-spaces", build(Math.floor(L * 0.6), () => r.cp(0x4e00, 0x9fff))],
    ["cjk-astral-ext-b", build(Math.floor(L * 0.5), () => r.cp(0x20000, 0x2a6df))],
    ["cjk-kana-mixed", build(L, () => japaneseSentence(r))],
    ["han-iteration-marks", build(Math.floor(L * 0.4), () => r.pick(["々", "〇", "人", "〻", "𠀀"]))],
    ["thai-no-spaces", build(Math.floor(L * 0.5), () => thaiRun(r))],
    ["hangul-no-spaces", build(Math.floor(L * 0.5), () => r.cp(0xac00, 0xd7a3))],
    ["emoji-run", build(Math.floor(L * 0.6), () => emoji(r))],
    ["emoji-zwj-family-run", rep(cps(0x1f468, 0x200d, 0x1f469, 0x200d, 0x1f467, 0x200d, 0x1f466), Math.floor(L * 0.6))],
    ["zero-width-run", rep("\u200b\u200d", Math.floor(L * 0.5))],
    ["long-word-with-marks", rep("e\u0301", Math.floor(L * 0.6))],
    ["long-word-stacked-marks", build(Math.floor(L * 0.6), () => lower() + r.cp(0x300, 0x36f) + (r.chance(0.5) ? r.cp(0x1dc0, 0x1dff) : ""))],
    ["marks-only", rep("\u0301\u0327", Math.floor(L * 0.5))],
    ["contraction-run", rep("'s", L / 2) + " " + rep("'ſ", L / 4) + " " + rep("'LL", L / 4)],
    ["apostrophes", rep("'", Math.floor(L * 0.5)) + "s"],
    ["special-token-run", rep("<|im_end|>", L)],
    ["special-near-miss-run", rep("<|im_end|", L / 2) + rep("<|reserved_token_163600|>", L / 2)],
    ["number-separators", build(L, () => `${r.int(0, 999)},`)],
    ["codepoint-soup", soupText(r, Math.floor(L / 4))],
    ["soup-no-spaces", build(Math.floor(L * 0.5), () => soupChar(r))],
    ["letter-space-pairs", rep("a ", L)],
    ["space-letter-pairs", rep(" a", L)],
  ];
  return docs.map(([name, text]) => ({ id: `path/${name}`, kind: "path", text }));
}

// ---------------------------------------------------------------------------------------------
// Long documents for Moonshot's chunking (400,000-code-point windows, 25,000-code-point runs).
// Runs are built from units that the regex splits into short pieces.
function runOfLength(r, n, unitFn) {
  const out = [];
  let count = 0;
  while (count < n) {
    const u = Array.from(unitFn());
    const take = Math.min(u.length, n - count);
    out.push(u.slice(0, take).join(""));
    count += take;
  }
  return out.join("");
}
const punctWordUnit = (r) => () => noSpace(latinWord(r)).replace(/\s/gu, "") + r.pick([".", ",", ";", ":", "-", "_", "/", "|", "+", "=", "(", ")", "\"", "'s"]);
const digitUnit = (r) => () => String(r.int(100, 999));
const hanKanaUnit = (r) => () => cut(hanRun(r), 6) + hiraganaWord(r);
const astralUnit = (r) => () => r.pick([cps(0x1f600 + r.int(0, 60)), cps(r.int(0x20000, 0x2a6df))]) + lower1(r);
const lower1 = (r) => String.fromCharCode(97 + r.int(0, 25));
const sepSpaceUnit = (r) => () => r.pick([" ", "  ", "\t", " \u001c", "\u001f ", "\u001d", "\u001e"]);
const noSpace = (s) => s.replace(/[\s\u001c-\u001f]/gu, "");

function wordsText(r, nCodePoints, scripts) {
  // Words separated by single spaces (or the odd gap); pieces stay short.
  const parts = [];
  let count = 0;
  while (count < nCodePoints) {
    const w = r.weighted([
      [60, () => latinWord(r)], [6, () => cyrillicWord(r)], [4, () => greekWord(r)], [4, () => arabicWord(r)],
      [6, () => hanRun(r)], [3, () => hangulWord(r)], [3, () => digits(r)], [2, () => emoji(r)],
      [2, () => devanagariWord(r)], [2, () => contraction(r)], [1, () => specialString(r)],
      [1, () => katakanaWord(r)],
    ])();
    const g = r.chance(0.95) ? " " : gap(r);
    const piece = (scripts === "ascii" ? noSpace(latinWord(r)).replace(/[^\x00-\x7f]/gu, "e") : noSpace(w)) + g;
    parts.push(piece);
    count += Array.from(piece).length;
  }
  return Array.from(parts.join("")).slice(0, nCodePoints).join("");
}

function longDocs(r, full) {
  const docs = [];
  const optional = [];  // only in full-size corpora
  // Runs of exactly 25,000 (no cut), 25,001 (one cut) and 50,001 (two cuts) non-space code points.
  docs.push(["runs-25000-25001-50001",
    "start " + runOfLength(r, 25000, punctWordUnit(r)) + " " + runOfLength(r, 25001, punctWordUnit(r)) + "\n" +
    runOfLength(r, 50001, digitUnit(r)) + " end"]);
  // Han/kana, astral and special-token-laden runs; a special token straddles the 25,000 cut and
  // Python-only whitespace (U+001C..U+001F) sits at the run boundary.
  {
    const a = runOfLength(r, 24995, hanKanaUnit(r));
    const b = runOfLength(r, 24999, astralUnit(r));
    optional.push(["runs-cjk-astral-special",
      a + "<|im_end|>" + runOfLength(r, 3000, hanKanaUnit(r)) + "\n" + b + "\u001c" + runOfLength(r, 26000, astralUnit(r)) +
      " x" + runOfLength(r, 24999, punctWordUnit(r)) + "\u0085" + runOfLength(r, 25500, punctWordUnit(r)) + "."]);
  }
  // Whitespace runs: one real 25,001-space run (a single regex piece), and Python-isspace runs
  // made of spaces and U+001C..U+001F (which regex \s does not match, so the pieces stay short).
  optional.push(["runs-whitespace",
    "a" + " ".repeat(25001) + "b\n" + runOfLength(r, 30000, sepSpaceUnit(r)) + "c" +
    runOfLength(r, 25000, sepSpaceUnit(r)) + "d" + runOfLength(r, 25002, sepSpaceUnit(r)) + "e"]);
  // More than 400,000 code points: a special token straddles the 400,000 cut and starts a
  // 26,000-code-point non-space run in the second window.
  {
    const head = wordsText(r, 399995, full ? "mixed" : "ascii");
    const tail = wordsText(r, full ? 30000 : 10000, "mixed");
    docs.push(["window-410k-special-at-cut",
      head + "<|im_end|>" + runOfLength(r, 26000, punctWordUnit(r)) + " " + tail]);
  }
  if (full) {
    docs.splice(0, 0, ...optional);
    // Astral characters around the 400,000 cut (UTF-16 and code point counts differ there).
    // Code points 399,985.. are "ab cd 😀𠀀𠀁𠂂😀": U+20082 is code point 399,999, 😀 is 400,000.
    docs.push(["window-astral-at-cut",
      wordsText(r, 399985, "mixed") + "ab cd 😀𠀀𠀁𠂂😀" + wordsText(r, 60000, "mixed") + runOfLength(r, 25001, astralUnit(r))]);
    // Two cuts in plain ASCII-ish words (cheap for the peer): a whitespace run across the
    // 400,000 cut (code points 399,995..400,009), the 800,000 cut inside a word.
    docs.push(["window-810k-words",
      wordsText(r, 399994, "ascii") + "x   \t\t  \u3000\u3000\u0085  \u00a0 y" + wordsText(r, 410000, "ascii")]);
  }
  return docs.map(([name, text]) => ({ id: `long/${name}`, kind: "long", text }));
}

// ---------------------------------------------------------------------------------------------
// Files.
export function splitDoc(text, maxBytes = MAX_DOC_BYTES) {
  if (bytesOf(text) <= maxBytes) return [text];
  const out = [];
  let cur = "";
  let curBytes = 0;
  for (const line of text.split(/(?<=\n)/u)) {
    const lb = bytesOf(line);
    if (curBytes + lb > maxBytes && cur) { out.push(cur); cur = ""; curBytes = 0; }
    if (lb > maxBytes) {
      const chars = Array.from(line);
      let piece = "";
      let pb = 0;
      for (const ch of chars) {
        const cb = bytesOf(ch);
        if (pb + cb > maxBytes) { out.push(piece); piece = ""; pb = 0; }
        piece += ch; pb += cb;
      }
      cur = piece; curBytes = pb;
    } else {
      cur += line; curBytes += lb;
    }
  }
  if (cur) out.push(cur);
  return out;
}

function listFiles(dir) {
  const out = [];
  const walk = (d) => {
    let entries;
    try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  walk(dir);
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function readUtf8(file) {
  const buf = fs.readFileSync(file);
  const text = buf.toString("utf8");
  return Buffer.from(text, "utf8").equals(buf) ? text : null;  // skip invalid UTF-8
}

function renderConversation(conv, style, r) {
  const msgs = conv.conversations ?? [];
  const role = (m) => ({ human: "user", gpt: "assistant", system: "system" }[m.from] ?? m.from);
  switch (style) {
    case 0: return msgs.map((m) => `${m.from === "human" ? "Human" : m.from === "gpt" ? "Assistant" : m.from}: ${m.value}`).join("\n\n");
    case 1: return "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>" +
      msgs.map((m) => `<|im_${role(m) === "assistant" ? "assistant" : role(m) === "user" ? "user" : "system"}|>${role(m)}<|im_middle|>${m.value}<|im_end|>`).join("") +
      "<|im_assistant|>assistant<|im_middle|>";
    case 2: return msgs.map((m) => `<|open|>${role(m)}<|sep|>${m.value}<|close|>${role(m)}<|sep|>`).join("\n") + "<|end_of_msg|>";
    case 3: return msgs.map((m) => `${m.from}:\r\n${m.value.replace(/\n/g, "\r\n")}`).join("\r\n\r\n");
    default: return JSON.stringify({ model: "kimi-k3", messages: msgs.map((m) => ({ role: role(m), content: m.value })), temperature: r.float() }, null, r.pick([0, 2, "\t"]));
  }
}

// ---------------------------------------------------------------------------------------------
// The corpus: yields {id, kind, text}. Distinct documents only (exact duplicates are skipped).
export function* corpusDocuments({ shared, mb = 10, seed = 0x6b33 } = {}) {
  if (!shared) throw new Error("corpusDocuments: `shared` (the ../shared folder) is required");
  const full = mb >= 4;
  const target = Math.round(mb * MiB);
  const runBytes = Math.max(2000, Math.min(50000, Math.round(mb * 5000)));
  const seen = new Set();
  let total = 0;
  const rng = (name) => new Rng(hashSeed(`${seed}:${name}`));
  function* emit(docs) {
    for (const d of docs) {
      if (!d.text && d.text !== "") continue;
      const key = `${d.text.length}:${hashSeed(d.text)}:${hashSeed(d.text.slice(0, 64) + d.text.slice(-64))}`;
      if (seen.has(key)) continue;
      seen.add(key);
      total += bytesOf(d.text);
      yield d;
    }
  }
  yield* emit(longDocs(rng("long"), full));
  // The other sources share what the long documents left (at least 60% of the target).
  const rest = Math.max(target - total, Math.round(0.6 * target));
  const budget = (fraction) => Math.round(fraction * rest);
  yield* emit(pathologicalDocs(rng("path"), runBytes));

  // Special-token documents (chat markup and dense specials with near misses).
  {
    const r = rng("special");
    const docs = [{ id: "special/empty", kind: "special", text: "" }];
    let b = 0;
    for (let i = 0; b < budget(0.03); i++) {
      const text = i % 3 === 0 ? chatMarkup(r, i % 2 === 0) : specialsText(r);
      docs.push({ id: `special/${i}`, kind: "special", text });
      b += bytesOf(text);
    }
    yield* emit(docs);
  }

  // ShareGPT conversations.
  {
    const r = rng("sharegpt");
    const convs = JSON.parse(fs.readFileSync(path.join(shared, "data/sharegpt/sharegpt_v3_filtered_500.json"), "utf8"));
    const docs = [];
    let b = 0;
    for (let i = 0; i < convs.length && b < budget(0.12); i++) {
      const parts = splitDoc(renderConversation(convs[i], i % 5, r));
      parts.forEach((text, j) => {
        docs.push({ id: `sharegpt/${convs[i].id ?? i}${parts.length > 1 ? "#" + j : ""}`, kind: "sharegpt", text });
        b += bytesOf(text);
      });
    }
    yield* emit(docs);
  }

  // Markdown specs and the long mixed golden text.
  for (const [kind, files, frac] of [
    ["spec", listFiles(path.join(shared, "spec")).filter((f) => f.endsWith(".md")), 0.05],
    ["mixed", [path.join(shared, "goldens/tokenizer/long_mixed_500k.txt")], 0.08],
  ]) {
    const docs = [];
    let b = 0;
    for (const f of files) {
      const text = readUtf8(f);
      if (text === null) continue;
      splitDoc(text).forEach((part, j) => {
        if (b >= budget(frac)) return;
        docs.push({ id: `${kind}/${path.basename(f)}#${j}`, kind, text: part });
        b += bytesOf(part);
      });
    }
    yield* emit(docs);
  }

  // C++ standard library headers, in sorted path order, up to 22% of the target.
  {
    const root = "/usr/include/c++";
    let b = 0;
    for (const f of listFiles(root)) {
      if (b >= budget(0.22)) break;
      const text = readUtf8(f);
      if (text === null || text.length === 0) continue;
      const parts = splitDoc(text);
      const docs = parts.map((part, j) => ({ id: `cpp/${path.relative(root, f)}${parts.length > 1 ? "#" + j : ""}`, kind: "cpp", text: part }));
      for (const d of emit(docs)) { b += bytesOf(d.text); yield d; }
    }
  }

  // Synthetic multilingual documents fill the rest (at least 30% of it).
  {
    const r = rng("synth");
    const start = total;
    for (let i = 0; total < target || total - start < budget(0.3); i++) {
      const size = r.weighted([[40, () => r.int(100, 2000)], [40, () => r.int(2000, 16000)], [20, () => r.int(16000, 60000)]])();
      const { flavor, text } = synthDoc(r, size);
      for (const [j, part] of splitDoc(text).entries()) {
        yield* emit([{ id: `synth/${i}-${flavor}${j ? "#" + j : ""}`, kind: "synth", text: part }]);
      }
    }
  }
}

// Short documents drawn densely from the characters and strings where the pre-tokenizer's
// alternatives meet: case classes (Lu, Lt, Ll, Lm, Lo), Han and its Lm/Nl members, marks, the
// number classes, apostrophe contractions (with U+017F and U+212A), the whitespace classes,
// special-token fragments, emoji joiners. Each is a separate document, so a mismatch is small.
const DENSE_ALPHABET = ["a", "b", "s", "t", "A", "S", "T", "Z", "ǅ", "ß", "İ", "ı", "ſ", "\u212a", "é", "E\u0301",
  "\u0301", "\u0903", "\u20dd", "々", "〇", "中", "文", "𠀀", "ー", "あ", "ア", "한", "ก", "\u0e31", "д", "Ж", "ω",
  "ا", "\u064b", "א", "1", "2", "0", "١", "²", "½", "Ⅻ", "𝟘", "'", "'", "’", "re", "ve", "ll", "LL", "m", "d", "D",
  " ", " ", " ", "  ", "\t", "\n", "\n", "\r", "\r\n", "\u000b", "\u000c", "\u00a0", "\u0085", "\u001c", "\u001f",
  "\u2028", "\u3000", "\u200b", "\u200d", "\ufe0f", "\ufeff", "!", ".", ",", "/", "-", "_", "#", "$", "<", ">", "|",
  "<|", "|>", "<|im_end|>", "<|im_end|", "im_end", "[BOS]", "<think>", "<|open|>", "<|reserved_token_163600|>",
  "😀", "👍", "\ud83c\udffd", "\ud83c\uddef", "1\ufe0f\u20e3", "\u0000", "\u007f", "\ue000", "\udb40\udc67"];
export function* denseFuzzDocuments({ count = 20000, seed = 0x6b33 } = {}) {
  const r = new Rng(hashSeed(`${seed}:dense`));
  for (let i = 0; i < count; i++) {
    let text = "";
    const n = r.int(1, r.chance(0.8) ? 12 : 40);
    for (let j = 0; j < n; j++) text += r.pick(DENSE_ALPHABET);
    yield { id: `dense/${i}`, kind: "dense", text };
  }
}

// Every Unicode scalar value of planes 0-3 and 14 (plus samples of the others), each in a few
// contexts that expose its character class through the ids (a leading space, doubled, after and
// before letters and digits, before a contraction), in documents of `perDoc` code points. Optional
// (parity_test.mjs --sweep): about 9 MB more.
export function* codepointSweepDocuments({ perDoc = 1024 } = {}) {
  const ranges = [[0x0, 0x3ffff], [0xe0000, 0xeffff], [0x40000, 0x400ff], [0xf0000, 0xf00ff], [0x10ff00, 0x10ffff]];
  for (const [lo, hi] of ranges) {
    for (let start = lo; start <= hi; start += perDoc) {
      const lines = [];
      for (let cp = start; cp < Math.min(start + perDoc, hi + 1); cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        const c = String.fromCodePoint(cp);
        lines.push(` ${c}${c}a${c} A${c}a 1${c}2 ${c}'s`);
      }
      if (lines.length) yield { id: `sweep/U+${start.toString(16).toUpperCase().padStart(4, "0")}`, kind: "sweep", text: lines.join("\n") };
    }
  }
}

// JSON line for a document: JSON.stringify plus \u2028/\u2029 escaped, so no line reader splits it.
export function jsonLine(text) {
  return JSON.stringify(text).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029") + "\n";
}

// Command line: write the corpus as JSONL (one JSON string per line).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const get = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
  const shared = get("--shared", path.join(path.dirname(fileURLToPath(import.meta.url)), "../../../shared"));
  const mb = Number(get("--mb", "10"));
  const outPath = get("--out", null);
  const fd = outPath ? fs.openSync(outPath, "w") : 1;
  const stats = {};
  for (const d of corpusDocuments({ shared, mb })) {
    fs.writeSync(fd, jsonLine(d.text));
    const s = (stats[d.kind] ??= { docs: 0, bytes: 0 });
    s.docs++;
    s.bytes += bytesOf(d.text);
  }
  if (outPath) fs.closeSync(fd);
  let docs = 0, bytes = 0;
  for (const [kind, s] of Object.entries(stats)) {
    process.stderr.write(`${kind.padEnd(9)} ${String(s.docs).padStart(6)} docs ${(s.bytes / 1e6).toFixed(2).padStart(8)} MB\n`);
    docs += s.docs; bytes += s.bytes;
  }
  process.stderr.write(`total     ${String(docs).padStart(6)} docs ${(bytes / 1e6).toFixed(2).padStart(8)} MB\n`);
}
