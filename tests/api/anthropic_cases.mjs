// Anthropic Messages API checks through the official `@anthropic-ai/sdk` client.
import assert from 'node:assert/strict';

import { anthropicAgentCases } from './anthropic_agent_cases.mjs';
import { anthropicSignatureCases } from './anthropic_signature_cases.mjs';
import { readSse } from './lib.mjs';
import { K3, TOOL_SCRIPT, WEATHER_TOOL_ANTHROPIC } from './scripts.mjs';

const MODEL = 'k3-demo';
const USER = [{ role: 'user', content: 'What is the weather in Paris?' }];
const DELTA_OF = { thinking: ['thinking_delta', 'signature_delta'], text: ['text_delta'], tool_use: ['input_json_delta'] };

// message_start, then per block start / delta* / stop with increasing indices, message_delta,
// message_stop, and nothing after (pings are allowed anywhere, as Anthropic sends them).
export function checkEventOrder(events) {
  const list = events.filter((e) => e.type !== 'ping');
  const types = list.map((e) => e.type).join(' ');
  let i = 0;
  assert.equal(list[i++]?.type, 'message_start', types);
  for (let index = 0; list[i]?.type === 'content_block_start'; index++) {
    assert.equal(list[i].index, index, types);
    const allowed = DELTA_OF[list[i].content_block.type];
    assert.ok(allowed, `unknown block type ${list[i].content_block.type}`);
    i++;
    for (; list[i]?.type === 'content_block_delta'; i++) {
      assert.equal(list[i].index, index, types);
      assert.ok(allowed.includes(list[i].delta.type), `${list[i].delta.type} in a block of another type`);
    }
    assert.equal(list[i]?.type, 'content_block_stop', types);
    assert.equal(list[i++].index, index);
  }
  assert.equal(list[i]?.type, 'message_delta', types);
  assert.ok(list[i++].delta.stop_reason, 'message_delta carries the stop_reason');
  assert.equal(list[i++]?.type, 'message_stop', types);
  assert.equal(i, list.length, `nothing after message_stop: ${types}`);
}

function sameMessage(streamed, whole) {
  // tool_use ids are issued per message (toolu_…), so two messages differ there only.
  const content = (m) => m.content.map((b) => (b.type === 'tool_use' ? { ...b, id: 'toolu_' } : b));
  const pick = (m) => ({ type: m.type, role: m.role, model: m.model, content: content(m), stop_reason: m.stop_reason, stop_sequence: m.stop_sequence });
  assert.deepEqual(pick(streamed), pick(whole));
  assert.equal(streamed.usage.output_tokens, whole.usage.output_tokens);
  const input = (u) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  assert.equal(input(streamed.usage), input(whole.usage), 'the same prompt size');
}

export async function anthropicCases(check, { server, sdk }) {
  const client = new sdk.Anthropic({ baseURL: server.url, apiKey: 'sk-ant-test', maxRetries: 0, timeout: 120000 });

  await check('anthropic: messages.create plain', async () => {
    const r = await client.messages.create({ model: MODEL, max_tokens: 8, messages: USER });
    assert.equal(r.type, 'message');
    assert.equal(r.role, 'assistant');
    assert.ok(Array.isArray(r.content));
    assert.ok(['max_tokens', 'end_turn'].includes(r.stop_reason), r.stop_reason);
    assert.ok(r.usage.input_tokens + r.usage.cache_read_input_tokens > 0);
    assert.ok(r.usage.output_tokens > 0 && r.usage.output_tokens <= 8);
  });

  await check('anthropic: scripted thinking + text', async () => {
    const script = K3.think('Greet them.') + K3.response('Hello!') + K3.end;
    const r = await client.messages.create({ model: MODEL, max_tokens: 200, messages: USER, k3_forced_output: script });
    assert.deepEqual(r.content.map((b) => b.type), ['thinking', 'text']);
    assert.equal(r.content[0].thinking, 'Greet them.');
    assert.equal(typeof r.content[0].signature, 'string');
    assert.equal(r.content[1].text, 'Hello!');
    assert.equal(r.stop_reason, 'end_turn');
  });

  const toolParams = { model: MODEL, max_tokens: 400, messages: USER, tools: [WEATHER_TOOL_ANTHROPIC], k3_forced_output: TOOL_SCRIPT };
  let toolMessage;
  await check('anthropic: scripted tool call -> tool_use', async () => {
    const r = await client.messages.create(toolParams);
    assert.deepEqual(r.content.map((b) => b.type), ['thinking', 'text', 'tool_use']);
    const use = r.content[2];
    assert.match(use.id, /^toolu_[a-zA-Z0-9_-]+$/);
    assert.equal(use.name, 'get_weather');
    assert.deepEqual(use.input, { city: 'Paris' });
    assert.equal(r.stop_reason, 'tool_use');
    toolMessage = r;
  });

  await check('anthropic: tool_result round trip', async () => {
    assert.ok(toolMessage, 'needs the scripted tool call');
    const history = (result) => [
      ...USER,
      { role: 'assistant', content: toolMessage.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolMessage.content[2].id, content: result }] },
    ];
    const messages = history('sunny, 21 C');
    const answer = K3.think('It is sunny.') + K3.response('Sunny and 21 C in Paris.') + K3.end;
    const r = await client.messages.create({ model: MODEL, max_tokens: 300, messages, tools: [WEATHER_TOOL_ANTHROPIC], k3_forced_output: answer });
    assert.deepEqual(r.content.map((b) => b.type), ['thinking', 'text']);
    assert.equal(r.content[1].text, 'Sunny and 21 C in Paris.');
    assert.equal(r.stop_reason, 'end_turn');
    const again = K3.think('Lyon too.') + K3.tools(K3.call('get_weather', { city: 'Lyon' })) + K3.end;
    const r2 = await client.messages.create({ model: MODEL, max_tokens: 300, messages, tools: [WEATHER_TOOL_ANTHROPIC], k3_forced_output: again });
    const use = r2.content.find((b) => b.type === 'tool_use');
    assert.match(use?.id ?? '', /^toolu_[a-zA-Z0-9_-]+$/, JSON.stringify(r2.content));
    // The tool result is part of the prompt: a longer result, more input tokens.
    const count = async (m) => (await client.messages.countTokens({ model: MODEL, messages: m, tools: [WEATHER_TOOL_ANTHROPIC] })).input_tokens;
    assert.ok((await count(history('sunny, 21 C and dry with a light breeze'))) > (await count(messages)));
  });

  await check('anthropic: create({stream:true}) event order', async () => {
    const stream = await client.messages.create({ ...toolParams, stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    checkEventOrder(events);
    assert.deepEqual(events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block.type), ['thinking', 'text', 'tool_use']);
    assert.equal(events.find((e) => e.type === 'message_delta').delta.stop_reason, 'tool_use');
  });

  await check('anthropic: raw SSE event names match their data and end at message_stop', async () => {
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...toolParams, stream: true }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type'), /^text\/event-stream/);
    const events = [];
    for await (const { event, data } of readSse(response.body)) {
      const json = JSON.parse(data);
      assert.equal(event, json.type, 'event: line equals data.type');
      events.push(json);
    }
    checkEventOrder(events);
  });

  await check('anthropic: messages.stream finalMessage equals the non-streamed message', async () => {
    for (const params of [toolParams, { model: MODEL, max_tokens: 12, messages: USER, temperature: 0 }]) {
      await client.messages.create(params);  // warm the prefix cache: both runs hit it alike
      const whole = await client.messages.create(params);
      const stream = client.messages.stream(params);
      const events = [];
      stream.on('streamEvent', (e) => events.push(e));
      const final = await stream.finalMessage();
      checkEventOrder(events);
      sameMessage(final, whole);
    }
  });

  await check('anthropic: streamed usage matches the non-streamed usage', async () => {
    await client.messages.create(toolParams);
    const whole = await client.messages.create(toolParams);
    const final = await client.messages.stream(toolParams).finalMessage();
    assert.deepEqual(final.usage, whole.usage);
  });

  await check('anthropic: countTokens equals the prompt of the same request', async () => {
    const { input_tokens } = await client.messages.countTokens({ model: MODEL, messages: USER, tools: [WEATHER_TOOL_ANTHROPIC] });
    const r = await client.messages.create(toolParams);
    const u = r.usage;
    assert.equal(input_tokens, u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, JSON.stringify(u));
    const system = await client.messages.countTokens({ model: MODEL, system: 'Be brief.', messages: USER });
    const plain = await client.messages.countTokens({ model: MODEL, messages: USER });
    assert.notEqual(system.input_tokens, plain.input_tokens, 'the system prompt counts');
  });

  for (const [name, params, pattern] of [
    ['max_tokens missing', { model: MODEL, messages: USER }, /max_tokens/],
    ['temperature 1.5', { model: MODEL, max_tokens: 8, messages: USER, temperature: 1.5 }, /temperature/],
  ]) {
    await check(`anthropic: 400 for ${name}`, async () => {
      for (const stream of [false, true]) {
        await assert.rejects(client.messages.create({ ...params, stream }), (e) => {
          assert.ok(e instanceof sdk.anthropic.BadRequestError, `${e.constructor.name}: ${e.message}`);
          assert.equal(e.status, 400);
          assert.equal(e.error?.type, 'error');
          assert.equal(e.error?.error?.type, 'invalid_request_error');
          assert.match(e.error.error.message, pattern);
          return true;
        });
      }
    });
  }
  await anthropicAgentCases(check, { server, sdk });
  await anthropicSignatureCases(check, { server, sdk });
}
