// Constrained decoding through the official `openai` client on the demo model (random weights,
// sampled at temperature 1.0, so only the grammar makes the replies well formed): tool_choice
// required / named / none, parallel_tool_calls false, response_format json_object and
// json_schema, streamed and not. Arguments and contents are validated by Python jsonschema
// (tests/structured/validate.py), not by this script.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { repoRoot } from './lib.mjs';
import { assembleChat } from './scripts.mjs';

const MODEL = 'k3-demo';
const USER = [{ role: 'user', content: 'Plan my trip.' }];
const NO_THINKING = { thinking: { type: 'disabled' } };

const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, maxLength: 12 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    unit: { enum: ['celsius', 'fahrenheit'] },
    stops: { type: 'array', items: { type: 'string', maxLength: 6 }, maxItems: 3 },
  },
  required: ['city', 'days'],
  additionalProperties: false,
};
const FLIGHT = {
  type: 'object',
  properties: { from: { type: 'string', maxLength: 4 }, to: { type: 'string', maxLength: 4 }, direct: { type: 'boolean' } },
  required: ['from', 'to'],
  additionalProperties: false,
};
const TOOLS = [
  { type: 'function', function: { name: 'get_weather', strict: true, parameters: WEATHER } },
  { type: 'function', function: { name: 'book_flight', strict: true, parameters: FLIGHT } },
];
const SCHEMAS = { get_weather: WEATHER, book_flight: FLIGHT };
const ANSWER = {
  type: 'object',
  properties: { answer: { type: 'string', maxLength: 10 }, score: { type: 'number', minimum: 0, maximum: 1 }, tags: { type: 'array', items: { enum: ['a', 'b'] } } },
  required: ['answer', 'score'],
  additionalProperties: false,
};

async function collect(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

// Non-streamed and streamed choices of `params` in one shape: [{message, finish_reason}].
async function choices(client, params, stream) {
  if (!stream) {
    const r = await client.chat.completions.create(params);
    return r.choices.map((c) => ({ message: c.message, finish_reason: c.finish_reason }));
  }
  const assembled = assembleChat(await collect(await client.chat.completions.create({ ...params, stream: true })));
  return [...assembled.choices.values()];
}

// Runs validate.py on {name, schema, outputs, finished} records; throws with its report on failure.
export function validateWithJsonschema(records, work, label) {
  const file = path.join(work, `${label}.jsonl`);
  fs.mkdirSync(work, { recursive: true });
  fs.writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const run = spawnSync('/usr/bin/python3', [path.join(repoRoot, 'tests/structured/validate.py'), 'generations', file], { encoding: 'utf8' });
  assert.equal(run.status, 0, `jsonschema rejected ${label}:\n${run.stdout}\n${run.stderr}`);
}

export async function structuredCases(check, { server, sdk, args }) {
  const client = new sdk.OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 300000 });
  const work = path.join(args.work, 'structured');
  // Under ASan (--replies short) one call per reply and a smaller budget bound the test's time;
  // the release build runs parallel calls.
  const short = args.replies === 'short';
  const budget = short ? { parallel_tool_calls: false, max_tokens: 400 } : { max_tokens: 1200 };

  await check('structured: tool_choice required gives valid tool_calls, 20 of 20 (not streamed)', async () => {
    const records = [];
    const replies = await Promise.all([0, 1, 2, 3].map((i) => choices(client, { model: MODEL, messages: USER, tools: TOOLS, tool_choice: 'required', n: 5, temperature: 1.0, seed: 100 + i, ...budget, ...NO_THINKING }, false)));
    for (const got of replies) {
      assert.equal(got.length, 5);
      for (const c of got) {
        assert.equal(c.finish_reason, 'tool_calls', JSON.stringify(c));
        assert.ok(c.message.tool_calls.length >= 1, JSON.stringify(c.message));
        for (const call of c.message.tool_calls) {
          assert.ok(call.function.name in SCHEMAS, call.function.name);
          assert.match(call.id, /^functions\.(get_weather|book_flight):\d+$/);
          records.push({ name: call.function.name, schema: SCHEMAS[call.function.name], outputs: [call.function.arguments], finished: [true] });
        }
      }
    }
    validateWithJsonschema(records, work, 'required_body');
  });

  // Streamed too: near max_tokens the grammar allows only the shortest way to finish, so no
  // reply ends in a partial call (deltas cannot be taken back) — every streamed call is complete.
  await check('structured: tool_choice required gives valid tool_calls, 20 of 20 (streamed)', async () => {
    const records = [];
    const streams = await Promise.all([...Array(20).keys()].map(async (i) => collect(await client.chat.completions.create({ model: MODEL, messages: USER, tools: TOOLS, tool_choice: 'required', temperature: 1.0, seed: 200 + i, ...budget, stream: true, stream_options: { include_usage: true }, ...NO_THINKING }))));
    for (const chunks of streams) {
      const assembled = assembleChat(chunks);
      const c = assembled.choices.get(0);
      assert.equal(c.finish_reason, 'tool_calls', JSON.stringify(c));
      assert.ok(assembled.usage.completion_tokens <= budget.max_tokens, JSON.stringify(assembled.usage));
      const calls = c.message.tool_calls;
      assert.ok(calls.length >= 1, JSON.stringify(c.message));
      for (const call of calls) {
        assert.ok(call.function.name in SCHEMAS, call.function.name);
        assert.match(call.id, /^functions\.(get_weather|book_flight):\d+$/);
        records.push({ name: call.function.name, schema: SCHEMAS[call.function.name], outputs: [call.function.arguments], finished: [true] });
      }
    }
    validateWithJsonschema(records, work, 'required_stream');
  });

  await check('structured: named tool_choice and parallel_tool_calls false give exactly that one call', async () => {
    const records = [];
    for (const stream of [false, true]) {
      const got = await choices(client, { model: MODEL, messages: USER, tools: TOOLS, tool_choice: { type: 'function', function: { name: 'book_flight' } }, n: 3, temperature: 1.0, seed: 7, max_tokens: 1000, ...NO_THINKING }, stream);
      for (const c of got) {
        assert.equal(c.message.tool_calls.length, 1, JSON.stringify(c.message));
        assert.equal(c.message.tool_calls[0].function.name, 'book_flight');
        assert.equal(c.finish_reason, 'tool_calls', JSON.stringify(c));
        records.push({ name: 'book_flight', schema: FLIGHT, outputs: [c.message.tool_calls[0].function.arguments], finished: [true] });
      }
      const single = await choices(client, { model: MODEL, messages: USER, tools: TOOLS, tool_choice: 'required', parallel_tool_calls: false, n: 3, temperature: 1.0, seed: 8, max_tokens: 1000, ...NO_THINKING }, stream);
      for (const c of single) assert.equal(c.message.tool_calls.length, 1, JSON.stringify(c.message));
    }
    validateWithJsonschema(records, work, 'named');
  });

  await check('structured: tool_choice none never produces tool calls', async () => {
    for (const stream of [false, true]) {
      const got = await choices(client, { model: MODEL, messages: USER, tools: TOOLS, tool_choice: 'none', n: 4, temperature: 1.0, seed: 9, max_tokens: 120, ...NO_THINKING }, stream);
      for (const c of got) {
        assert.ok(!c.message.tool_calls || c.message.tool_calls.length === 0, JSON.stringify(c.message));
        assert.ok(['stop', 'length'].includes(c.finish_reason), c.finish_reason);
      }
    }
  });

  // Every reply is complete JSON: one the max_tokens budget made end early says "length", but
  // is still validated like the others.
  await check('structured: response_format json_schema and json_object give compact valid JSON', async () => {
    const records = [];
    const complete = (got) => got.map((c) => {
      assert.ok(['stop', 'length'].includes(c.finish_reason), c.finish_reason);
      return true;
    });
    for (const stream of [false, true]) {
      const got = await choices(client, { model: MODEL, messages: USER, n: short ? 4 : 8, temperature: 1.0, seed: 11, max_tokens: short ? 600 : 1500, response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: ANSWER } }, ...NO_THINKING }, stream);
      records.push({ name: 'answer', schema: ANSWER, outputs: got.map((c) => c.message.content), finished: complete(got) });
      const objects = await choices(client, { model: MODEL, messages: USER, n: short ? 2 : 4, temperature: 1.0, seed: 12, max_tokens: short ? 600 : 1500, response_format: { type: 'json_object' }, ...NO_THINKING }, stream);
      records.push({ name: 'json_object', schema: { type: 'object' }, outputs: objects.map((c) => c.message.content), finished: complete(objects) });
    }
    validateWithJsonschema(records, work, 'response_format');
  });

  await check('structured: an unsupported schema keyword or pattern construct is a 400 naming it', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 5, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string', pattern: '^(?=a)b' } } } } } }),
      (e) => e.status === 400 && /pattern/.test(e.message) && /lookahead/.test(e.message));
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 5, tools: [{ type: 'function', function: { name: 'f', strict: true, parameters: { type: 'object', properties: { n: { type: 'number', multipleOf: 2 } } } } }] }),
      (e) => e.status === 400 && /multipleOf/.test(e.message) && /tools\[0\]/.test(e.message));
  });
}
