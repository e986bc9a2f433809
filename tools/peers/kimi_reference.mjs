// The reference Kimi tokenizer in JavaScript, for tests and benchmarks: npm `tiktoken` (the WASM
// build of OpenAI's Rust core) configured with Kimi's pattern and special tokens, plus the chunking
// that Moonshot's tokenization_kimi.py applies before calling tiktoken. Written from the public
// description of that behaviour (../shared/spec/frontend.md §1.4), not copied.
import fs from "fs";
import { Tiktoken } from "tiktoken/lite";

export const KIMI_PATTERN = String.raw`[\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

// Python str.isspace() (Unicode Zs, or bidi WS/B/S); this set has been stable across versions.
const PY_SPACE = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;

// tokenization_kimi.py: cut every 400,000 code points, then wherever a run of whitespace or of
// non-whitespace would exceed 25,000 code points.
export function moonshotChunks(text, maxChars = 400000, maxRun = 25000) {
  const cps = Array.from(text);
  const out = [];
  for (let w = 0; w < cps.length; w += maxChars) {
    const window = cps.slice(w, w + maxChars);
    let runIsSpace = PY_SPACE.test(window[0]);
    let runLength = 0;
    let start = 0;
    for (let i = 0; i < window.length; i++) {
      const isSpace = PY_SPACE.test(window[i]);
      if (isSpace !== runIsSpace) {
        runLength = 1;
        runIsSpace = isSpace;
      } else if (++runLength > maxRun) {
        out.push(window.slice(start, i).join(""));
        start = i;
        runLength = 1;
      }
    }
    out.push(window.slice(start).join(""));
  }
  return out;
}

// Special tokens of a Kimi checkpoint folder: the 256 ids after the ranks, named from
// tokenizer_config.json's added_tokens_decoder, else <|reserved_token_{id}|>.
export function kimiSpecials(dir, numRanks) {
  const config = JSON.parse(fs.readFileSync(`${dir}/tokenizer_config.json`, "utf8"));
  const added = config.added_tokens_decoder || {};
  const specials = {};
  for (let id = numRanks; id < numRanks + 256; id++) {
    specials[added[id]?.content ?? `<|reserved_token_${id}|>`] = id;
  }
  return specials;
}

export function loadKimiTiktoken(dir) {
  const ranks = fs.readFileSync(`${dir}/tiktoken.model`, "utf8");
  const numRanks = ranks.split("\n").filter((l) => l.length > 0).length;
  return new Tiktoken(ranks, kimiSpecials(dir, numRanks), KIMI_PATTERN);
}

// Encodes like TikTokenTokenizer.encode: chunked, each chunk with all specials allowed (or none).
export function kimiEncode(enc, text, { specials = "all", chunking = true } = {}) {
  const chunks = chunking ? moonshotChunks(text) : [text];
  const ids = [];
  for (const chunk of chunks) {
    const part = specials === "all" ? enc.encode(chunk, "all") : enc.encode_ordinary(chunk);
    for (const id of part) ids.push(id);
  }
  return ids;
}

// A cheap order-sensitive hash of an id sequence (32-bit FNV-1a over the ids), shared with the
// C++ benchmark so both sides can say whether their outputs agree.
export function idsHash(ids) {
  let h = 2166136261;
  for (const id of ids) h = Math.imul(h ^ id, 16777619) >>> 0;
  return h >>> 0;
}
