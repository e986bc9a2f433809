// `k3 route` end to end: three `k3 serve` replicas (embedded demo checkpoint, KV events on
// ZeroMQ) behind the router, driven through the official OpenAI and Anthropic Node clients.
//
//   node tests/router/route_e2e_test.mjs --k3 build/apps/k3/k3 --work /tmp/k3-route
//
// 1. The same multi-turn workload (conversations with long system prompts, each turn extending
//    the last) under round-robin and then kv routing, on the same replicas with fresh texts:
//    kv must reach a higher prefix hit rate (usage.prompt_tokens_details.cached_tokens) and a
//    lower mean time to first token, and the router's predicted hits must match the workers'.
//    7 conversations on 3 replicas: were it a multiple of 3, round-robin would send every turn of
//    a conversation to the same replica whenever the turns arrive in a regular order, and score
//    like kv by chance (seen: 51% vs 39% for round-robin between two runs with 6).
// 2. Anthropic Messages (streamed and not) through the router.
// 3. A replica is killed (SIGKILL) in the middle of a concurrent run: every request that had not
//    received a streamed event must still succeed (the router retries it on another replica);
//    the dead replica is marked down in /metrics and later requests avoid it.
// 4. A replica started with --register joins the running router.
// Exits non-zero on any failed check; the last line is a summary.
import fs from 'node:fs';
import path from 'node:path';

import { loadClients, metrics, parseArgs, sleep, startServer } from '../api/lib.mjs';

const options = parseArgs(process.argv.slice(2), {
  k3: undefined, work: undefined, conversations: '7', turns: '4', 'system-words': '220',
});
const k3 = path.resolve(options.k3);
const work = path.resolve(options.work);
const conversations = Number(options.conversations);
const turns = Number(options.turns);
const systemWords = Number(options['system-words']);
const sdk = loadClients();

const results = [];
async function check(name, fn) {
  const started = Date.now();
  try {
    const note = await fn();
    results.push({ name, ok: true });
    console.log(`ok   ${name} (${Date.now() - started} ms)${note ? `: ${note}` : ''}`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
  }
}
const assert = (cond, message) => {
  if (!cond) throw new Error(message);
};
// "Connection error." alone says nothing: follow the causes down to the socket's own error
// (e.g. "other side closed", ECONNRESET, a parser error).
function describe(error) {
  const parts = [];
  for (let e = error; e && parts.length < 5; e = e.cause) parts.push(`${e.name ?? 'Error'}: ${e.message ?? e}${e.code ? ` (${e.code})` : ''}`);
  return parts.join(' <- ');
}
// What a server logged besides its successful requests (warnings, errors, non-2xx lines): the
// other half of a failure's story, since CI keeps only this test's output.
function unusualLogLines(server, max = 20) {
  const lines = fs.readFileSync(server.log, 'utf8').split('\n');
  return lines.filter((l) => l && !/ (200|204) [0-9.]+ms$/.test(l)).slice(-max).join('\n');
}

// Deterministic words from a seed (xorshift), so runs are comparable and texts never repeat
// across seeds.
function words(seed, n) {
  let x = (seed * 2654435761) >>> 0 || 1;
  const out = [];
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out.push(`w${(x % 5000).toString(36)}`);
  }
  return out.join(' ');
}

// One streamed chat turn; returns timing, usage and the reply, or the failure and whether any
// event had arrived before it.
async function turn(client, messages) {
  const started = performance.now();
  let ttft = null, usage = null, text = '', events = 0;
  try {
    const stream = await client.chat.completions.create({
      model: 'k3-demo', messages, max_tokens: 8, temperature: 0, stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) {
      events++;
      const delta = chunk.choices?.[0]?.delta ?? {};
      const piece = (delta.content ?? '') + (delta.reasoning_content ?? '');
      if (ttft === null && piece !== '') ttft = performance.now() - started;
      text += delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    return { ok: true, ttft: ttft ?? performance.now() - started, usage, text };
  } catch (error) {
    return { ok: false, error, events };
  }
}

async function conversation(client, seed, nTurns, log, onTurn = () => {}) {
  const messages = [
    { role: 'system', content: words(seed, systemWords) },
    { role: 'user', content: words(seed + 1, 12) },
  ];
  for (let t = 0; t < nTurns; t++) {
    const r = await turn(client, messages);
    log.push({ ...r, turn: t });
    onTurn(r);
    messages.push({ role: 'assistant', content: r.ok && r.text ? r.text : 'ok' });
    messages.push({ role: 'user', content: words(seed + 100 + t, 12) });
  }
}

async function workload(routerUrl, seedBase) {
  const client = new sdk.OpenAI({ baseURL: `${routerUrl}/v1`, apiKey: 'none', maxRetries: 0 });
  const log = [];
  await Promise.all(
    Array.from({ length: conversations }, (_, c) => conversation(client, seedBase + c * 1000, turns, log)),
  );
  const done = log.filter((r) => r.ok);
  const prompt = done.reduce((s, r) => s + r.usage.prompt_tokens, 0);
  const cached = done.reduce((s, r) => s + r.usage.prompt_tokens_details.cached_tokens, 0);
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  return {
    requests: log.length, failed: log.length - done.length, hitRate: cached / Math.max(1, prompt),
    meanTtft: mean(done.map((r) => r.ttft)), laterTtft: mean(done.filter((r) => r.turn > 0).map((r) => r.ttft)),
    cached,
  };
}

const startRouter = (name, urls, policy, extra = []) =>
  startServer({ k3, work, name, command: 'route',
    args: ['--policy', policy, '--quiet-decisions', '--health-interval-ms', '200',
      ...urls.flatMap((u) => ['--worker', u]), ...extra] });

const replicaArgs = ['--threads', '1', '--kv-events', 'tcp://127.0.0.1:*'];
const replicas = [];
for (let i = 0; i < 3; i++) {
  replicas.push(await startServer({ k3, work, name: `replica-${i}`, args: replicaArgs }));
}
const urls = replicas.map((r) => r.url);

const stats = {};
for (const [policy, seed] of [['round-robin', 1], ['kv', 2]]) {
  await check(`${policy}: ${conversations} conversations x ${turns} turns through the router`, async () => {
    const router = await startRouter(`router-${policy}`, urls, policy);
    try {
      const s = await workload(router.url, seed);
      const m = await metrics(router);
      s.predicted = m.get('k3_router_cached_tokens_total');
      stats[policy] = s;
      assert(s.failed === 0, `${s.failed} of ${s.requests} requests failed`);
      return `hit rate ${(100 * s.hitRate).toFixed(1)}%, mean TTFT ${s.meanTtft.toFixed(0)} ms ` +
        `(turns 2+: ${s.laterTtft.toFixed(0)} ms), router predicted ${s.predicted} of ${s.cached} cached tokens`;
    } finally {
      await router.stop();
    }
  });
}

await check('kv beats round-robin on prefix hit rate and mean TTFT', async () => {
  const kv = stats.kv, rr = stats['round-robin'];
  assert(kv && rr, 'a workload did not run');
  assert(kv.hitRate > rr.hitRate * 1.5, `kv hit rate ${kv.hitRate} vs round-robin ${rr.hitRate}`);
  assert(kv.meanTtft < rr.meanTtft, `kv mean TTFT ${kv.meanTtft} ms vs round-robin ${rr.meanTtft} ms`);
  return `hit rate ${(100 * kv.hitRate).toFixed(1)}% vs ${(100 * rr.hitRate).toFixed(1)}% ` +
    `(${(kv.hitRate / Math.max(rr.hitRate, 1e-9)).toFixed(2)}x); mean TTFT ${kv.meanTtft.toFixed(0)} vs ${rr.meanTtft.toFixed(0)} ms`;
});

await check('kv: the router predicts the cached tokens the workers report', async () => {
  const kv = stats.kv;
  assert(kv, 'the kv workload did not run');
  // Exact in a quiet run; an eviction or an event still in flight may make them differ a little.
  assert(Math.abs(kv.predicted - kv.cached) <= 0.05 * kv.cached,
    `predicted ${kv.predicted} vs reported ${kv.cached}`);
  return `${kv.predicted} predicted, ${kv.cached} reported`;
});

const router = await startRouter('router-main', urls, 'kv');

await check('Anthropic Messages through the router (streamed and not)', async () => {
  const client = new sdk.Anthropic({ baseURL: router.url, apiKey: 'none', maxRetries: 0 });
  const body = { model: 'k3-demo', max_tokens: 6, messages: [{ role: 'user', content: words(7, 30) }] };
  const whole = await client.messages.create(body);
  assert(whole.type === 'message' && whole.usage.output_tokens > 0, JSON.stringify(whole));
  const kinds = [];
  for await (const event of await client.messages.create({ ...body, stream: true })) kinds.push(event.type);
  assert(kinds[0] === 'message_start' && kinds.at(-1) === 'message_stop', kinds.join(','));
  return `${kinds.length} events`;
});

await check('a replica killed mid-run loses no request that had not started streaming', async () => {
  const client = new sdk.OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'none', maxRetries: 0 });
  const log = [];
  let completed = 0, killedAt = null;
  const victim = replicas[1];
  const onTurn = () => {
    if (++completed === conversations && killedAt === null) {
      killedAt = Date.now();
      victim.child.kill('SIGKILL');
    }
  };
  await Promise.all(
    Array.from({ length: conversations * 2 }, (_, c) => conversation(client, 50000 + c * 1000, 3, log, onTurn)),
  );
  assert(killedAt !== null, 'the replica was never killed');
  const failed = log.filter((r) => !r.ok);
  const lost = failed.filter((r) => r.events === 0);
  assert(lost.length === 0, `${lost.length} requests failed before any event: ` +
    `${describe(lost[0]?.error)}\nrouter log:\n${unusualLogLines(router)}`);
  const m = await metrics(router);
  const down = m.get(`k3_router_worker_healthy{worker="1",url="${victim.url}"}`);
  assert(down === 0, `the dead replica's health gauge is ${down}`);
  const after = await workload(router.url, 90000);
  assert(after.failed === 0, `${after.failed} requests failed after the kill`);
  return `${log.length} requests, ${failed.length} broken mid-stream (allowed), ` +
    `${m.get('k3_router_retries_total')} retried on another replica, then ${after.requests} more all served`;
});

await check('a replica started with --register joins the router', async () => {
  const joined = await startServer({ k3, work, name: 'replica-registered',
    args: [...replicaArgs, '--register', router.url] });
  replicas.push(joined);
  const deadline = Date.now() + 30000;
  for (;;) {
    const list = await (await fetch(`${router.url}/router/workers`)).json();
    const entry = list.workers.find((w) => w.url === joined.url);
    if (entry?.healthy && entry.kv_events) return `worker ${entry.id} ${entry.url}`;
    assert(Date.now() < deadline, `not registered: ${JSON.stringify(list)}`);
    await sleep(100);
  }
});

await router.stop();
for (const r of replicas) await r.stop();
const failed = results.filter((r) => !r.ok);
console.log(`route_e2e_test: ${results.length - failed.length} passed, ${failed.length} failed (of ${results.length} checks)`);
process.exit(failed.length ? 1 : 0);
