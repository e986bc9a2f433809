// OpenAI Responses API checks (POST /v1/responses) through the official `openai` client's
// client.responses.create: plain, scripted reasoning + text, a scripted function-tool loop that
// feeds the returned output items back as input, the streamed event sequence (sequence numbers,
// deltas that add up to the final items), forced tool calls and text.format json_schema on the
// demo model (validated by Python jsonschema), hosted tools ignored, and the stateless 400s.
import assert from 'node:assert/strict';
import path from 'node:path';

import { K3 } from './scripts.mjs';
import { validateWithJsonschema } from './structured_cases.mjs';

const MODEL = 'k3-demo';
const QUESTION = 'What is the weather in Paris?';
const CITY = { type: 'object', properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false };
const WEATHER = { type: 'function', name: 'get_weather', description: 'Current weather of a city', parameters: CITY };
const ANSWER = {
  type: 'object',
  properties: { answer: { type: 'string', maxLength: 10 }, score: { type: 'number', minimum: 0, maximum: 1 } },
  required: ['answer', 'score'],
  additionalProperties: false,
};
const NO_THINKING = { reasoning: { effort: 'none' } };

// The message items' text (the client adds output_text to non-streamed responses only).
function outputText(r) {
  return r.output.filter((item) => item.type === 'message').flatMap((item) => item.content).map((part) => part.text ?? '').join('');
}

async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  return events;
}

// Checks the streamed sequence and returns the final response (from the terminal event).
function checkStream(events) {
  events.forEach((e, i) => assert.equal(e.sequence_number, i, `event ${i}: ${e.type}`));
  assert.equal(events[0].type, 'response.created');
  assert.equal(events[1].type, 'response.in_progress');
  const last = events.at(-1);
  assert.ok(['response.completed', 'response.incomplete'].includes(last.type), last.type);
  const final = last.response;
  // The deltas add up to each item's final text.
  const text = new Map(), args = new Map(), summary = new Map();
  for (const e of events) {
    if (e.type === 'response.output_text.delta') text.set(e.item_id, (text.get(e.item_id) ?? '') + e.delta);
    if (e.type === 'response.function_call_arguments.delta') args.set(e.item_id, (args.get(e.item_id) ?? '') + e.delta);
    if (e.type === 'response.reasoning_summary_text.delta') summary.set(e.item_id, (summary.get(e.item_id) ?? '') + e.delta);
  }
  const added = events.filter((e) => e.type === 'response.output_item.added').map((e) => e.item.id);
  const done = events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item);
  assert.deepEqual(added, final.output.map((item) => item.id));
  assert.deepEqual(done, final.output);
  for (const item of final.output) {
    if (item.type === 'message') assert.equal(text.get(item.id) ?? '', item.content[0].text);
    if (item.type === 'function_call') assert.equal(args.get(item.id) ?? '', item.arguments);
    if (item.type === 'reasoning') assert.equal(summary.get(item.id) ?? '', item.summary[0].text);
  }
  return final;
}

async function status400(promise, param) {
  await assert.rejects(promise, (e) => {
    assert.equal(e.status, 400, String(e));
    assert.equal(e.error?.param ?? e.param, param, JSON.stringify(e.error));
    assert.ok(e.message.length > 0);
    return true;
  });
}

export async function responsesCases(check, { server, sdk, args }) {
  const client = new sdk.OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 300000 });
  const work = path.join(args.work, 'responses');

  await check('responses: plain', async () => {
    const r = await client.responses.create({ model: MODEL, input: 'hi', instructions: 'Be brief.', max_output_tokens: 8 });
    assert.equal(r.object, 'response');
    assert.match(r.id, /^resp_/);
    assert.equal(r.model, MODEL);
    assert.equal(r.instructions, 'Be brief.');
    assert.equal(r.max_output_tokens, 8);
    assert.ok(['completed', 'incomplete'].includes(r.status), r.status);
    if (r.status === 'incomplete') assert.equal(r.incomplete_details.reason, 'max_output_tokens');
    assert.ok(r.usage.output_tokens > 0 && r.usage.output_tokens <= 8, JSON.stringify(r.usage));
    assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
    assert.equal(typeof r.output_text, 'string');
  });

  await check('responses: scripted reasoning + text', async () => {
    const script = K3.think('I should greet.') + K3.response('Hello there!') + K3.end;
    const r = await client.responses.create({ model: MODEL, input: QUESTION, max_output_tokens: 200, k3_forced_output: script });
    assert.equal(r.status, 'completed');
    assert.deepEqual(r.output.map((item) => item.type), ['reasoning', 'message']);
    assert.deepEqual(r.output[0].summary, [{ type: 'summary_text', text: 'I should greet.' }]);
    assert.equal(r.output[1].role, 'assistant');
    assert.equal(r.output[1].content[0].type, 'output_text');
    assert.equal(r.output_text, 'Hello there!');
    assert.ok(r.usage.output_tokens_details.reasoning_tokens > 0, JSON.stringify(r.usage));
  });

  await check('responses: scripted tool loop feeds the output items back', async () => {
    const input = [{ role: 'user', content: QUESTION }];
    const script1 = K3.think('Need the tool.') + K3.tools(K3.call('get_weather', { city: 'Paris' })) + K3.end;
    const r1 = await client.responses.create({ model: MODEL, input, tools: [WEATHER], max_output_tokens: 300, k3_forced_output: script1 });
    const call = r1.output.find((item) => item.type === 'function_call');
    assert.ok(call, JSON.stringify(r1.output));
    assert.equal(call.name, 'get_weather');
    assert.equal(call.call_id, 'functions.get_weather:0');
    assert.equal(call.status, 'completed');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'Paris' });
    assert.equal(r1.tools[0].strict, true);
    const script2 = K3.think('Got it.') + K3.response('Sunny, 21 C.') + K3.end;
    const r2 = await client.responses.create({
      model: MODEL,
      input: [...input, ...r1.output, { type: 'function_call_output', call_id: call.call_id, output: '{"temp": 21}' }],
      tools: [WEATHER],
      max_output_tokens: 300,
      k3_forced_output: script2,
    });
    assert.equal(r2.output_text, 'Sunny, 21 C.');
    assert.ok(r2.usage.input_tokens > r1.usage.input_tokens);
  });

  await check('responses: streamed scripted reasoning, text and tool call', async () => {
    const script = K3.think('Thinking.') + K3.response('Let me look.') + K3.tools(K3.call('get_weather', { city: 'Paris' })) + K3.end;
    const events = await collect(await client.responses.create({ model: MODEL, input: QUESTION, tools: [WEATHER], max_output_tokens: 300, k3_forced_output: script, stream: true }));
    const final = checkStream(events);
    assert.equal(final.status, 'completed');
    assert.deepEqual(final.output.map((item) => item.type), ['reasoning', 'message', 'function_call']);
    const types = new Set(events.map((e) => e.type));
    for (const t of ['response.reasoning_summary_part.added', 'response.reasoning_summary_text.done', 'response.content_part.added',
      'response.output_text.done', 'response.content_part.done', 'response.function_call_arguments.done']) {
      assert.ok(types.has(t), t);
    }
    assert.ok(final.usage.output_tokens > 0);
  });

  await check('responses: the client\'s responses.stream accumulator rebuilds the completed response', async () => {
    const script = K3.think('Plan.') + K3.response('Checking.') + K3.tools(K3.call('get_weather', { city: 'Oslo' })) + K3.end;
    const stream = client.responses.stream({ model: MODEL, input: QUESTION, tools: [WEATHER], max_output_tokens: 300, k3_forced_output: script });
    let completed;
    stream.on('response.completed', (event) => { completed = event.response; });
    const final = await stream.finalResponse();
    assert.ok(completed, 'no response.completed event');
    // The client's parse helpers add parsed / parsed_arguments; the rest must be the same.
    const plain = (items) => JSON.parse(JSON.stringify(items, (k, v) => (k === 'parsed' || k === 'parsed_arguments' ? undefined : v)));
    assert.deepEqual(plain(final.output), completed.output);
    assert.equal(final.output_text, 'Checking.');
    assert.deepEqual(JSON.parse(final.output.at(-1).arguments), { city: 'Oslo' });
  });

  await check('responses: tool_choice required on the demo model, a tool loop (jsonschema)', async () => {
    const records = [];
    let input = [{ role: 'user', content: QUESTION }];
    for (const stream of [false, true]) {
      const params = { model: MODEL, input, tools: [WEATHER], tool_choice: 'required', max_output_tokens: 400, temperature: 1.0, ...NO_THINKING };
      const r = stream ? checkStream(await collect(await client.responses.create({ ...params, stream: true }))) : await client.responses.create(params);
      const calls = r.output.filter((item) => item.type === 'function_call');
      assert.ok(calls.length >= 1, JSON.stringify(r.output));
      for (const call of calls) {
        assert.equal(call.name, 'get_weather');
        records.push({ name: 'get_weather', schema: CITY, outputs: [call.arguments], finished: [true] });
      }
      input = [...input, ...r.output, ...calls.map((c) => ({ type: 'function_call_output', call_id: c.call_id, output: 'sunny' }))];
    }
    validateWithJsonschema(records, work, 'responses_required');
    const last = await client.responses.create({ model: MODEL, input, tools: [WEATHER], tool_choice: 'none', max_output_tokens: 16, ...NO_THINKING });
    assert.ok(last.output.every((item) => item.type !== 'function_call'), JSON.stringify(last.output));
  });

  await check('responses: text.format json_schema, streamed and not (jsonschema)', async () => {
    const records = [];
    const format = { type: 'json_schema', name: 'answer', schema: ANSWER, strict: true };
    for (const stream of [false, true]) {
      const params = { model: MODEL, input: 'Rate it.', text: { format }, max_output_tokens: 400, temperature: 1.0, ...NO_THINKING };
      const r = stream ? checkStream(await collect(await client.responses.create({ ...params, stream: true }))) : await client.responses.create(params);
      assert.equal(r.status, 'completed', JSON.stringify(r.incomplete_details));
      assert.deepEqual(r.text.format, format);
      if (!stream) assert.equal(r.output_text, outputText(r));
      records.push({ name: 'answer', schema: ANSWER, outputs: [outputText(r)], finished: [true] });
    }
    validateWithJsonschema(records, work, 'responses_json_schema');
  });

  await check('responses: hosted tools are ignored and echoed', async () => {
    const r = await client.responses.create({ model: MODEL, input: 'hi', tools: [{ type: 'web_search' }, WEATHER], max_output_tokens: 4, store: true, metadata: { k: 'v' } });
    assert.deepEqual(r.tools.map((t) => t.type), ['web_search', 'function']);
    assert.deepEqual(r.metadata, { k: 'v' });
  });

  await check('responses: stateless and unknown items are 400s in the OpenAI shape', async () => {
    await status400(client.responses.create({ model: MODEL, input: 'hi', previous_response_id: 'resp_123' }), 'previous_response_id');
    await status400(client.responses.create({ model: MODEL, input: [{ type: 'item_reference', id: 'msg_1' }] }), 'input[0]');
    await status400(client.responses.create({ model: MODEL, input: [{ type: 'teleport' }] }), 'input[0]');
    await status400(client.responses.create({ model: MODEL, input: 'hi', tool_choice: 'required' }), 'tool_choice');
  });
}

// Against `k3 serve --responses-store N`: previous_response_id and item_reference resolve to the
// kept responses; a response sent with store: false is not kept.
export async function responsesStoreCases(check, { server, sdk }) {
  const client = new sdk.OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 300000 });
  const callScript = K3.think('Need the tool.') + K3.tools(K3.call('get_weather', { city: 'Paris' })) + K3.end;
  const textScript = K3.think('Got it.') + K3.response('Sunny.') + K3.end;
  const first = (store) => client.responses.create({ model: MODEL, input: QUESTION, tools: [WEATHER], max_output_tokens: 300, k3_forced_output: callScript, store });

  await check('responses store: previous_response_id continues a kept response', async () => {
    const r1 = await first(true);
    const call = r1.output.find((item) => item.type === 'function_call');
    const r2 = await client.responses.create({
      model: MODEL, previous_response_id: r1.id, tools: [WEATHER], max_output_tokens: 300, k3_forced_output: textScript,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    });
    assert.equal(r2.output_text, 'Sunny.');
    assert.ok(r2.usage.input_tokens > r1.usage.input_tokens, JSON.stringify([r1.usage, r2.usage]));
  });

  await check('responses store: item_reference resolves a kept output item', async () => {
    const r1 = await first(true);
    const call = r1.output.find((item) => item.type === 'function_call');
    const r2 = await client.responses.create({
      model: MODEL, tools: [WEATHER], max_output_tokens: 300, k3_forced_output: textScript,
      input: [{ role: 'user', content: QUESTION }, ...r1.output.map((item) => ({ type: 'item_reference', id: item.id })),
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    });
    assert.equal(r2.output_text, 'Sunny.');
  });

  await check('responses store: store false is not kept', async () => {
    const r1 = await first(false);
    await status400(client.responses.create({ model: MODEL, previous_response_id: r1.id, input: 'and?' }), 'previous_response_id');
  });
}
