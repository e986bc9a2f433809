// Shared helpers of the k3 serve API tests: argument parsing, starting and stopping
// `k3 serve` processes, /metrics parsing, a raw SSE reader, and the official client packages
// (tools/peers/node_modules).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
const peersDir = path.join(repoRoot, 'tools', 'peers');

// The official clients, loaded from tools/peers/node_modules (fails loudly when missing).
export function loadClients() {
  const require = createRequire(path.join(peersDir, 'package.json'));
  let openai, anthropic;
  try {
    openai = require('openai');
    anthropic = require('@anthropic-ai/sdk');
  } catch (e) {
    throw new Error(
      `the official clients are not installed in ${peersDir}/node_modules ` +
        `(run \`npm ci --prefix tools/peers\`): ${e.message}`,
    );
  }
  return { openai, anthropic, OpenAI: openai.OpenAI, Anthropic: anthropic.Anthropic };
}

// --name value pairs; `defaults` gives the known names and their default values.
export function parseArgs(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].replace(/^--/, '');
    if (!argv[i].startsWith('--') || !(name in defaults) || i + 1 >= argv.length) {
      throw new Error(`bad argument '${argv[i]}'; known: ${Object.keys(defaults).join(', ')}`);
    }
    out[name] = argv[++i];
  }
  for (const [name, value] of Object.entries(out)) {
    if (value === undefined) throw new Error(`--${name} is required`);
  }
  return out;
}

const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

// Starts `k3 serve` on a free port and resolves once it prints its address. The demo checkpoint
// goes to WORK/cache (XDG_CACHE_HOME), the server's stderr to WORK/NAME.log.
// `command: 'route'` starts `k3 route --listen 127.0.0.1:0 ARGS` (the router) the same way.
// `scripted: false` leaves out --scripted-output (the tests that judge what the model writes).
export async function startServer({ k3, work, name, args = [], startTimeoutMs = 120000, command = 'serve',
                                    scripted = true }) {
  fs.mkdirSync(work, { recursive: true });
  const log = path.join(work, `${name}.log`);
  const logStream = fs.createWriteStream(log);
  const defaults = args.includes('--cache-memory') ? [] : ['--cache-memory', '256MiB'];
  const argv =
    command === 'route'
      ? ['route', '--listen', '127.0.0.1:0', ...args]
      : ['serve', '--port', '0', ...(scripted ? ['--scripted-output'] : []), ...defaults, ...args];
  const child = spawn(k3, argv, {
    env: { ...process.env, XDG_CACHE_HOME: path.join(work, 'cache') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.stderr.pipe(logStream);
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, at: Date.now() });
    });
  });
  let stdout = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no address within ${startTimeoutMs} ms; see ${log}`)), startTimeoutMs);
    child.stdout.on('data', (data) => {
      stdout += data.toString();
      const m = stdout.match(/listening on (http:\/\/[^\s]+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ''));
      }
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n') : '';
      reject(new Error(`${name}: k3 ${command} exited (code ${code}, signal ${signal}) before listening; ${log}:\n${tail}`));
    });
  });
  child.stdout.on('data', () => {});  // keep draining
  const server = {
    name,
    url,
    port: Number(new URL(url).port),
    child,
    exited,
    log,
    // Why the server is gone ('' while it runs), for error messages.
    gone() {
      if (child.exitCode === null && child.signalCode === null) return '';
      return `k3 ${command} '${name}' is not running (exit code ${child.exitCode}, signal ${child.signalCode}); see ${log}`;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  return server;
}

// Prometheus text -> Map of "name{labels}" (as written) -> number.
export function parseMetrics(text) {
  const series = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

export async function metrics(server) {
  let response;
  try {
    response = await fetch(`${server.url}/metrics`);
  } catch (e) {
    await sleep(100);  // let a dying server's exit be seen
    throw new Error(server.gone?.() || `/metrics: ${e.cause?.code ?? e.message}`);
  }
  if (response.status !== 200) throw new Error(`/metrics: HTTP ${response.status}`);
  return parseMetrics(await response.text());
}

// Polls /metrics until every named gauge equals its wanted value; resolves with the last
// sample, rejects with the values seen when `timeoutMs` passes first.
export async function waitForGauges(server, wanted, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await metrics(server);
    if (Object.entries(wanted).every(([name, value]) => last.get(name) === value)) return last;
    if (Date.now() > deadline) {
      const seen = Object.keys(wanted).map((name) => `${name}=${last.get(name)}`).join(', ');
      throw new Error(`gauges did not settle within ${timeoutMs} ms: ${seen}`);
    }
    await sleep(50);
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Reads an SSE response body (a Node http.IncomingMessage or a fetch body) and yields
// {event, data} per event; `data` is the raw data string.
export async function* readSse(body) {
  const decoder = new TextDecoder();
  let buffer = '';
  const parse = (block) => {
    let event = null;
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    return data.length || event ? { event, data: data.join('\n') } : null;
  };
  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    buffer = buffer.replace(/\r\n/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (event) yield event;
    }
  }
  if (buffer.trim() !== '') {
    const event = parse(buffer);
    if (event) yield event;
  }
}

// One plain HTTP request with node:http; resolves {status, headers, body} (body as text).
export function rawRequest(url, { method = 'GET', body, headers = {}, agent } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const request = http.request(
      url,
      {
        method,
        agent,
        headers: data === undefined ? headers : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (c) => (text += c));
        response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body: text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    if (data !== undefined) request.write(data);
    request.end();
  });
}
