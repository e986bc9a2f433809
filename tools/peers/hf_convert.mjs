// Builds a Hugging Face tokenizer.json from a tiktoken ranks file, so HF `tokenizers` can run the
// same vocabulary: byte-level BPE whose merges are every split of a token into two tokens, ordered
// by the merged token's rank (the standard tiktoken -> HF conversion), a Split pre-tokenizer with
// the same regex, and ignore_merges so whole-vocabulary words map directly as in tiktoken.
import fs from "fs";

// GPT-2's reversible byte -> printable character map.
function bytesToUnicode() {
  const bs = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  }
  const map = new Array(256);
  bs.forEach((b, i) => { map[b] = String.fromCodePoint(cs[i]); });
  return map;
}

export function tiktokenToHfJson(ranksText, pattern, specials) {
  const byteChar = bytesToUnicode();
  const toStr = (buf) => { let s = ""; for (const b of buf) s += byteChar[b]; return s; };
  const tokens = [];  // [Buffer, rank]
  for (const line of ranksText.split("\n")) {
    if (!line) continue;
    const [b64, rank] = line.split(" ");
    tokens.push([Buffer.from(b64, "base64"), Number(rank)]);
  }
  const rankOf = new Map(tokens.map(([buf, rank]) => [buf.toString("latin1"), rank]));
  const vocab = {};
  const merges = [];
  for (const [buf, rank] of tokens) {
    vocab[toStr(buf)] = rank;
    if (buf.length < 2) continue;
    const local = [];
    for (let i = 1; i < buf.length; i++) {
      const l = rankOf.get(buf.subarray(0, i).toString("latin1"));
      const r = rankOf.get(buf.subarray(i).toString("latin1"));
      if (l !== undefined && r !== undefined) local.push([l, r, buf.subarray(0, i), buf.subarray(i)]);
    }
    local.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (const [, , lb, rb] of local) merges.push([rank, toStr(lb), toStr(rb)]);
  }
  merges.sort((a, b) => a[0] - b[0]);
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: Object.entries(specials).map(([content, id]) => ({
      id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: pattern }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: true,
      vocab, merges: merges.map(([, l, r]) => [l, r]),
    },
  };
}

// Writes (once) and returns the path of a tokenizer.json for the given ranks file.
export function ensureHfTokenizerJson(ranksPath, pattern, specials, cachePath) {
  if (fs.existsSync(cachePath)) return cachePath;
  const json = tiktokenToHfJson(fs.readFileSync(ranksPath, "utf8"), pattern, specials);
  fs.writeFileSync(cachePath, JSON.stringify(json));
  return cachePath;
}
