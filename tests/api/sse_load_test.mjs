// SSE load test of `k3 serve`: N concurrent clients (plain node:http, one keep-alive agent with
// a socket per client) each send streaming chat requests back to back for D seconds (short
// prompts, 16-32 tokens, half scripted with a per-request text that must come back exactly, half
// sampled) and read every chunk to [DONE]. Passes when no request failed and, after a short
// settle, /metrics shows no pending request, no running sequence and no referenced cache block.
//
//   node tests/api/sse_load_test.mjs --k3 build/apps/k3/k3 --work /tmp/k3-load \
//        [--clients 1000] [--seconds 60] [--max-running 256] [--cache-memory 1GiB]
//        [--url http://127.0.0.1:PORT]   (load a server started by hand instead; --k3 unused)
import http from 'node:http';
import path from 'node:path';

import { metrics, parseArgs, readSse, sleep, startServer } from './lib.mjs';

const options = parseArgs(process.argv.slice(2), {
  k3: '', work: '', clients: '1000', seconds: '60', 'max-running': '256',
  'cache-memory': '1GiB', 'io-threads': '1', 'request-timeout': '300', url: '',
});
if (!options.url && (!options.k3 || !options.work)) throw new Error('give --k3 and --work (or --url)');
const clients = Number(options.clients);
const seconds = Number(options.seconds);
const requestTimeoutMs = Number(options['request-timeout']) * 1000;

const stats = { requests: 0, ok: 0, chunks: 0, scripted: 0, ttft: [], e2e: [], errors: new Map() };
const countError = (type) => stats.errors.set(type, (stats.errors.get(type) ?? 0) + 1);

function requestBody(client, n) {
  const scripted = (client + n) % 2 === 0;
  // Thinking off keeps the prompt short (no thinking-effort system message) and starts the
  // output in the response block, so a scripted request's content is exactly its script.
  const body = {
    model: 'k3-demo',
    messages: [{ role: 'user', content: `Client ${client}, request ${n}: say something short.` }],
    max_tokens: 16 + ((client * 7 + n) % 17),
    stream: true,
    thinking: { type: 'disabled' },
  };
  if (scripted) {
    body.k3_forced_output = `ok ${client}-${n}<|close|>response<|sep|><|close|>message<|sep|>`;
  } else {
    body.temperature = 0.8;
  }
  return { body, expected: scripted ? `ok ${client}-${n}` : null };
}

// One streaming request; resolves to an error type or null, and records timings.
function streamOnce(url, agent, client, n) {
  const { body, expected } = requestBody(client, n);
  const data = JSON.stringify(body);
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (error) => {
      if (settled) return;
      settled = true;
      if (error) countError(error);
      resolve(error);
    };
    const request = http.request(`${url}/v1/chat/completions`, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
    }, async (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        return finish(`http_${response.statusCode}`);
      }
      let first = null;
      let done = false;
      let finishes = 0;
      let content = '';
      try {
        for await (const { data: event } of readSse(response)) {
          if (done) return finish('data_after_done');
          if (event === '[DONE]') {
            done = true;
            continue;
          }
          stats.chunks++;
          first ??= performance.now();
          const chunk = JSON.parse(event);
          if (chunk.error) return finish('error_event');
          for (const choice of chunk.choices) {
            content += choice.delta?.content ?? '';
            if (choice.finish_reason) finishes++;
          }
        }
      } catch (e) {
        return finish(`read_${e.code ?? e.name}`);
      }
      if (!done) return finish('no_done');
      if (finishes !== 1) return finish('finish_reason_count');
      if (expected !== null && content !== expected) return finish('scripted_content_mismatch');
      stats.ttft.push(first - started);
      stats.e2e.push(performance.now() - started);
      if (expected !== null) stats.scripted++;
      stats.ok++;
      finish(null);
    });
    request.setTimeout(requestTimeoutMs, () => {
      request.destroy();
      finish('timeout');
    });
    request.on('error', (e) => finish(`socket_${e.code ?? e.name}`));
    request.end(data);
  });
}

async function clientLoop(url, agent, client, deadline) {
  for (let n = 0; Date.now() < deadline; n++) {
    stats.requests++;
    await streamOnce(url, agent, client, n);
  }
}

const percentile = (values, p) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

// --url: load an already running server (started by hand, e.g. under gdb) instead.
const server = options.url
  ? { url: options.url.replace(/\/$/, ''), exited: new Promise(() => {}), stop: async () => {}, log: '(external)' }
  : await startServer({
    k3: path.resolve(options.k3),
    work: path.resolve(options.work),
    name: 'load',
    args: ['--max-pending', String(Math.max(2 * clients, 64)), '--max-running', options['max-running'],
      '--cache-memory', options['cache-memory'], '--io-threads', options['io-threads']],
  });
let serverExit = null;
server.exited.then((e) => (serverExit = e));

// The gauges after the run, polled until they reach 0 or 5 s pass; null when /metrics fails.
async function settledMetrics() {
  await sleep(1000);
  let m = null;
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(100)) {
    try {
      m = await metrics(server);
    } catch {
      return null;
    }
    if (['k3_requests_pending', 'k3_running_sequences', 'k3_cache_usage_ratio'].every((g) => m.get(g) === 0)) break;
  }
  return m;
}

const GAUGES = ['k3_requests_pending', 'k3_running_sequences', 'k3_queue_depth', 'k3_cache_usage_ratio'];
const failures = [];
try {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients + 16 });
  const t0 = performance.now();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(Array.from({ length: clients }, (_, i) => clientLoop(server.url, agent, i, deadline)));
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  const m = await settledMetrics();
  const get = (name) => (m ? m.get(name) : 'n/a');
  const served = get('k3_requests_total{endpoint="/v1/chat/completions",status="200"}') ?? 0;

  const rows = [
    ['clients', clients], ['duration (s)', elapsed.toFixed(1)],
    ['requests (ok / sent)', `${stats.ok} / ${stats.requests}`], ['scripted ok (exact text)', stats.scripted],
    ['requests/s', (stats.ok / elapsed).toFixed(1)], ['chunks', stats.chunks],
    ['chunks/s', (stats.chunks / elapsed).toFixed(0)],
    ['TTFT p50 / p90 / p99 (ms)', [50, 90, 99].map((p) => percentile(stats.ttft, p).toFixed(0)).join(' / ')],
    ['latency p50 / p99 (ms)', [50, 99].map((p) => percentile(stats.e2e, p).toFixed(0)).join(' / ')],
    ['server 200s (chat)', served],
    ['server generated tokens', get('k3_generation_tokens_total')],
    ['errors', stats.errors.size === 0 ? 0 : [...stats.errors].map(([k, v]) => `${k}=${v}`).join(', ')],
    ['after settle: pending / running / queue / cache', GAUGES.map(get).join(' / ')],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log('SSE load test');
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);

  if (serverExit) failures.push(`the server exited during the run (code ${serverExit.code}, signal ${serverExit.signal}); see ${server.log}`);
  if (stats.errors.size > 0) failures.push('requests failed');
  if (stats.ok === 0) failures.push('no request completed');
  if (m === null) {
    failures.push('/metrics did not answer after the run');
  } else {
    if (served < stats.ok) failures.push(`the server counted ${served} successful chat requests, the clients ${stats.ok}`);
    for (const g of GAUGES) {
      if (m.get(g) !== 0) failures.push(`${g} is ${m.get(g)} after the settle`);
    }
  }
} catch (e) {
  failures.push(`${e.stack ?? e}`);
} finally {
  await server.stop();
}
console.log(failures.length === 0 ? 'sse_load_test: PASS' : `sse_load_test: FAIL: ${failures.join('; ')}`);
process.exitCode = failures.length === 0 ? 0 : 1;
