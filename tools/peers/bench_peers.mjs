// Times the peer tokenizers on the files `k3 bench tokenizer` prepared, and prints one JSON line
// per (peer, file): bytes, tokens, the ids' hash (so the caller can check agreement), the first
// ("cold") encode time and the best of the following ("warm") encodes: `repeats` of them, or more
// until `min_warm_ms` is spent.
//   node bench_peers.mjs MANIFEST.json
// Manifest: {"kimi_dir": DIR, "cl100k_ranks": FILE, "cache_dir": DIR, "repeats": N, "min_warm_ms": MS,
//            "jobs": [{"peer": "tiktoken-wasm"|"hf-tokenizers"|"tiktoken-node",
//                      "encoding": "kimi"|"cl100k_base", "files": [PATH, ...]}]}
// The Kimi peers apply Moonshot's chunking, as tokenization_kimi.py does around tiktoken.
import fs from "fs";
import path from "path";
import { createRequire } from "module";
import { get_encoding } from "tiktoken";
import { KIMI_PATTERN, kimiSpecials, loadKimiTiktoken, kimiEncode, idsHash, moonshotChunks }
  from "./kimi_reference.mjs";
import { ensureHfTokenizerJson } from "./hf_convert.mjs";

const require = createRequire(import.meta.url);
const manifest = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const repeats = manifest.repeats ?? 3;
const minWarmMs = manifest.min_warm_ms ?? 0;
const CL100K_PATTERN = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

function timed(fn) {
  const t0 = process.hrtime.bigint();
  const result = fn();
  return [result, Number(process.hrtime.bigint() - t0) / 1e6];
}
async function timedAsync(fn) {
  const t0 = process.hrtime.bigint();
  const result = await fn();
  return [result, Number(process.hrtime.bigint() - t0) / 1e6];
}

// Each loader returns {loadMs, encode(text) -> Promise<ids>}.
async function loadPeer(peer, encoding) {
  if (peer === "tiktoken-wasm" && encoding === "kimi") {
    const [enc, loadMs] = timed(() => loadKimiTiktoken(manifest.kimi_dir));
    return { loadMs, encode: async (text) => kimiEncode(enc, text) };
  }
  if (peer === "tiktoken-wasm" && encoding === "cl100k_base") {
    const [enc, loadMs] = timed(() => get_encoding("cl100k_base"));
    return { loadMs, encode: async (text) => Array.from(enc.encode_ordinary(text)) };
  }
  if (peer === "tiktoken-node") {
    const tn = require("tiktoken-node");
    const [enc, loadMs] = timed(() => tn.getEncoding(encoding));
    return { loadMs, encode: async (text) => enc.encode(text) };
  }
  if (peer === "hf-tokenizers") {
    const { Tokenizer } = require("@anush008/tokenizers");
    const kimi = encoding === "kimi";
    const ranksPath = kimi ? path.join(manifest.kimi_dir, "tiktoken.model") : manifest.cl100k_ranks;
    const specials = kimi ? kimiSpecials(manifest.kimi_dir, 163584) : {};
    const cache = path.join(manifest.cache_dir, `hf_${encoding}.json`);
    ensureHfTokenizerJson(ranksPath, kimi ? KIMI_PATTERN : CL100K_PATTERN, specials, cache);
    const [tok, loadMs] = timed(() => Tokenizer.fromFile(cache));
    const opts = { addSpecialTokens: false };
    const encodeChunk = async (chunk) => (await tok.encode(chunk, null, opts)).getIds();
    return {
      loadMs,
      encode: async (text) => {
        const ids = [];
        for (const chunk of kimi ? moonshotChunks(text) : [text]) {
          for (const id of await encodeChunk(chunk)) ids.push(id);
        }
        return ids;
      },
    };
  }
  throw new Error(`unknown peer ${peer}/${encoding}`);
}

for (const job of manifest.jobs) {
  let peer;
  try {
    peer = await loadPeer(job.peer, job.encoding);
  } catch (e) {
    console.log(JSON.stringify({ peer: job.peer, encoding: job.encoding, error: String(e) }));
    continue;
  }
  for (const file of job.files) {
    const text = fs.readFileSync(file, "utf8");
    const [ids, coldMs] = await timedAsync(() => peer.encode(text));
    // Best of at least `repeats` runs and at least minWarmMs of runs (the same rule as k3's).
    let warmMs = Infinity, spentMs = 0;
    for (let r = 0; r < repeats || (repeats > 0 && spentMs < minWarmMs); r++) {
      const ms = (await timedAsync(() => peer.encode(text)))[1];
      warmMs = Math.min(warmMs, ms);
      spentMs += ms;
    }
    console.log(JSON.stringify({
      peer: job.peer, encoding: job.encoding, file, bytes: Buffer.byteLength(text),
      tokens: ids.length, hash: idsHash(ids), load_ms: peer.loadMs, cold_ms: coldMs, warm_ms: warmMs,
    }));
  }
}
