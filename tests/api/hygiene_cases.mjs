// HTTP and output hygiene: HEAD, GET /v1/models/{id} in both API shapes, bounded /metrics
// labels, CORS preflights (--allow-origin), the access log, and special tokens kept out of the
// text (skip_special_tokens). Node's own HTTP parser and the official clients are the judges.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';

import { metrics, rawRequest, sleep, startServer } from './lib.mjs';
import { K3 } from './scripts.mjs';

const MODEL = 'k3-demo';
const ORIGIN = 'http://app.example:3000';
const USER = [{ role: 'user', content: 'hi' }];

// HEAD through a keep-alive agent, then a GET on the same socket: a body after a HEAD answer
// would be read as the next response and break the second request (Node's parser rejects it).
async function headThenGet(server, path) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const head = await rawRequest(`${server.url}${path}`, { method: 'HEAD', agent });
    const get = await rawRequest(`${server.url}${path}`, { agent });
    return { head, get };
  } finally {
    agent.destroy();
  }
}

export async function hygieneCases(check, { args, sdk }) {
  const server = await startServer({ ...args, name: 'hygiene', args: ['--allow-origin', ORIGIN] });
  const openai = new sdk.OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const anthropic = new sdk.Anthropic({ baseURL: server.url, apiKey: 'sk-ant-test', maxRetries: 0 });
  try {
    await check('hygiene: HEAD is GET without a body (keep-alive survives)', async () => {
      for (const path of ['/v1/models', '/health', '/metrics', `/v1/models/${MODEL}`]) {
        const { head, get } = await headThenGet(server, path);
        assert.equal(head.status, get.status, path);
        assert.equal(head.body, '', `${path}: HEAD has no body`);
        assert.equal(get.status, 200, path);
        if (path !== '/metrics') assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.body)), path);
      }
      const missing = await rawRequest(`${server.url}/nowhere`, { method: 'HEAD' });
      assert.equal(missing.status, 404);
      assert.equal(missing.body, '');
    });
    await check('hygiene: GET /v1/models/{id}: one model or 404, OpenAI and Anthropic forms', async () => {
      const one = await openai.models.retrieve(MODEL);
      assert.equal(one.id, MODEL);
      assert.equal(one.object, 'model');
      await assert.rejects(openai.models.retrieve('gpt-nope'), (e) => e instanceof sdk.openai.NotFoundError && /gpt-nope/.test(e.message));
      const a = await anthropic.models.retrieve(MODEL);
      assert.equal(a.type, 'model');
      assert.equal(a.id, MODEL);
      assert.ok(a.display_name && a.created_at);
      const list = await anthropic.models.list();
      assert.deepEqual(list.data.map((m) => m.id), [MODEL]);
      assert.equal(list.data[0].type, 'model');
      await assert.rejects(anthropic.models.retrieve('claude-nope'), (e) => e instanceof sdk.anthropic.NotFoundError);
      const raw = await rawRequest(`${server.url}/v1/models/claude-nope`, { headers: { 'anthropic-version': '2023-06-01' } });
      assert.equal(JSON.parse(raw.body).type, 'error');
      assert.equal(JSON.parse(raw.body).error.type, 'not_found_error');
    });
    await check('hygiene: /metrics labels only known routes', async () => {
      for (let i = 0; i < 5; ++i) await rawRequest(`${server.url}/probe/${i}/x`);
      await rawRequest(`${server.url}/v1/models/unknown-${Date.now()}`);
      const m = await metrics(server);
      const labels = [...m.keys()].filter((k) => k.startsWith('k3_requests_total'));
      assert.ok(labels.some((k) => k.includes('endpoint="other"') && k.includes('status="404"')), labels.join('\n'));
      assert.ok(!labels.some((k) => k.includes('/probe/') || k.includes('unknown-')), labels.join('\n'));
    });
    await check('hygiene: CORS preflight and Access-Control-Allow-Origin with --allow-origin', async () => {
      const pre = await rawRequest(`${server.url}/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], ORIGIN);
      assert.match(pre.headers['access-control-allow-methods'], /POST/);
      assert.match(pre.headers['access-control-allow-headers'], /x-stainless-os/);
      assert.equal(pre.body, '');
      const get = await rawRequest(`${server.url}/v1/models`, { headers: { origin: ORIGIN } });
      assert.equal(get.headers['access-control-allow-origin'], ORIGIN);
      const other = await rawRequest(`${server.url}/v1/models`, { headers: { origin: 'http://evil.example' } });
      assert.equal(other.headers['access-control-allow-origin'], undefined);
    });
    await check('hygiene: special tokens never reach content (skip_special_tokens, default on)', async () => {
      const forced = K3.think('I<|media_content|>think') + K3.response('before<|media_content|>after') + K3.end;
      const r = await openai.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 60, k3_forced_output: forced });
      assert.equal(r.choices[0].message.content, 'beforeafter');
      assert.equal(r.choices[0].message.reasoning_content, 'Ithink');
      const kept = await openai.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 60, k3_forced_output: forced, skip_special_tokens: false });
      assert.match(kept.choices[0].message.content, /<\|media_content\|>/);
      const c = await openai.completions.create({ model: MODEL, prompt: 'hi', max_tokens: 40, k3_forced_output: 'before<|media_content|>after' });
      assert.equal(c.choices[0].text, 'beforeafter');
      await assert.rejects(openai.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 4, skip_special_tokens: 'no' }),
        (e) => e instanceof sdk.openai.BadRequestError && /skip_special_tokens/.test(e.message));
    });
    await check('hygiene: one access log line per request (method, path, status, tokens, TTFT); the machine at start', async () => {
      await openai.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 3, k3_forced_output: 'a b c' });
      await sleep(200);
      const log = fs.readFileSync(server.log, 'utf8');
      assert.match(log, /GET \/v1\/models 200 [0-9.]+ms/);
      assert.match(log, /POST \/v1\/chat\/completions 200 prompt=\d+ completion=\d+ ttft=[0-9.]+ms [0-9.]+ms/);
      assert.match(log, /OPTIONS \/v1\/chat\/completions 204/);
      // The start names the machine (the processor, its threads, the product paths), for reports.
      assert.match(log, /machine: .+ \d+ threads; kernels: matmul \w+/);
    });
  } finally {
    await server.stop();
  }
  const quiet = await startServer({ ...args, name: 'hygiene-quiet', args: ['--disable-access-log'] });
  try {
    await check('hygiene: --disable-access-log; without --allow-origin OPTIONS is not an endpoint', async () => {
      await rawRequest(`${quiet.url}/v1/models`);
      const pre = await rawRequest(`${quiet.url}/v1/models`, { method: 'OPTIONS', headers: { origin: ORIGIN } });
      assert.equal(pre.status, 404);
      assert.equal(pre.headers['access-control-allow-origin'], undefined);
      await sleep(200);
      assert.doesNotMatch(fs.readFileSync(quiet.log, 'utf8'), /GET \/v1\/models 200/);
    });
  } finally {
    await quiet.stop();
  }
}
