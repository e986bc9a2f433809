// OpenAI API checks through the official `openai` client: chat and completions, streamed and
// not, scripted outputs (reasoning, content, tool calls), sampling options and 400 validation.
import assert from 'node:assert/strict';

import { rawRequest } from './lib.mjs';
import { K3, TOOL_SCRIPT, WEATHER_TOOL, assembleChat, normalizeMessage } from './scripts.mjs';

const MODEL = 'k3-demo';
const USER = [{ role: 'user', content: 'What is the weather in Paris?' }];

async function collect(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

export async function openaiCases(check, { server, sdk }) {
  const client = new sdk.OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120000 });

  await check('openai: models.list', async () => {
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids, [MODEL]);
  });

  await check('openai: chat plain', async () => {
    const r = await client.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 8 });
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.model, MODEL);
    assert.equal(r.choices.length, 1);
    assert.equal(r.choices[0].message.role, 'assistant');
    assert.ok(['length', 'stop'].includes(r.choices[0].finish_reason), r.choices[0].finish_reason);
    assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 8, JSON.stringify(r.usage));
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  });

  await check('openai: chat scripted reasoning + content', async () => {
    const script = K3.think('I should greet.') + K3.response('Hello there!') + K3.end;
    const r = await client.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 200, k3_forced_output: script });
    const m = r.choices[0].message;
    assert.equal(m.reasoning_content, 'I should greet.');
    assert.equal(m.content, 'Hello there!');
    assert.equal(m.tool_calls ?? undefined, undefined);
    assert.equal(r.choices[0].finish_reason, 'stop');
  });

  let firstCall;
  await check('openai: chat scripted tool call', async () => {
    const script = K3.think('Need the tool.') + K3.tools(K3.call('get_weather', { city: 'Paris' })) + K3.end;
    const r = await client.chat.completions.create({ model: MODEL, messages: USER, tools: [WEATHER_TOOL], max_tokens: 300, k3_forced_output: script });
    const m = r.choices[0].message;
    assert.equal(r.choices[0].finish_reason, 'tool_calls');
    assert.equal(m.content, null);
    assert.equal(m.tool_calls.length, 1);
    const call = m.tool_calls[0];
    assert.equal(call.id, 'functions.get_weather:0');
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.equal(typeof call.function.arguments, 'string');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
    firstCall = m;
  });

  await check('openai: chat second turn continues the tool-call ids', async () => {
    assert.ok(firstCall, 'needs the scripted tool call');
    const messages = [
      ...USER,
      { role: 'assistant', content: null, tool_calls: firstCall.tool_calls },
      { role: 'tool', tool_call_id: firstCall.tool_calls[0].id, content: '{"temp": 21, "sky": "clear"}' },
      { role: 'user', content: 'And in Lyon?' },
    ];
    const script = K3.think('Again.') + K3.tools(K3.call('get_weather', { city: 'Lyon' })) + K3.end;
    const r = await client.chat.completions.create({ model: MODEL, messages, tools: [WEATHER_TOOL], max_tokens: 300, k3_forced_output: script });
    const call = r.choices[0].message.tool_calls?.[0];
    assert.ok(call, JSON.stringify(r.choices[0]));
    assert.equal(call.id, 'functions.get_weather:1');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Lyon' });
  });

  await check('openai: parallel_tool_calls false keeps only the first call', async () => {
    const script = K3.think('Two cities.') +
      K3.tools(K3.call('get_weather', { city: 'Paris' }) + K3.call('get_weather', { city: 'Lyon' })) + K3.end;
    const params = { model: MODEL, messages: USER, tools: [WEATHER_TOOL], max_tokens: 400, k3_forced_output: script };
    const both = await client.chat.completions.create(params);
    assert.equal(both.choices[0].message.tool_calls.length, 2);
    assert.equal(both.choices[0].message.tool_calls[1].id, 'functions.get_weather:1');
    const one = await client.chat.completions.create({ ...params, parallel_tool_calls: false });
    assert.equal(one.choices[0].message.tool_calls.length, 1);
    assert.deepEqual(JSON.parse(one.choices[0].message.tool_calls[0].function.arguments), { city: 'Paris' });
    const streamed = assembleChat(await collect(
      await client.chat.completions.create({ ...params, parallel_tool_calls: false, stream: true })));
    assert.equal(streamed.choices.get(0).message.tool_calls.length, 1);
  });

  await check('openai: chat stream (include_usage) reassembles to the non-streamed message', async () => {
    const params = { model: MODEL, messages: USER, tools: [WEATHER_TOOL], max_tokens: 400, k3_forced_output: TOOL_SCRIPT };
    await client.chat.completions.create(params);  // warm the prefix cache: both runs hit it alike
    const whole = await client.chat.completions.create(params);
    const chunks = await collect(
      await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }),
    );
    const { choices, usage, ids } = assembleChat(chunks);
    assert.equal(ids.size, 1, 'one id for all chunks');
    for (const chunk of chunks) assert.equal(chunk.object, 'chat.completion.chunk');
    assert.equal(choices.size, 1);
    const streamed = choices.get(0);
    assert.deepEqual(streamed.message, normalizeMessage(whole.choices[0].message));
    assert.equal(streamed.finish_reason, 'tool_calls');
    assert.equal(streamed.finishChunks, 1, 'exactly one chunk carries finish_reason');
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, [], 'the usage chunk has no choices');
    assert.ok(last.usage, 'usage chunk present');
    for (const chunk of chunks.slice(0, -1)) assert.equal(chunk.usage, null, 'usage is null before the last chunk');
    assert.deepEqual(usage, whole.usage);
  });

  await check('openai: chat n=2 (non-streamed and streamed)', async () => {
    const r = await client.chat.completions.create({ model: MODEL, messages: USER, n: 2, max_tokens: 6, temperature: 1 });
    assert.deepEqual(r.choices.map((c) => c.index), [0, 1]);
    for (const c of r.choices) assert.ok(['length', 'stop'].includes(c.finish_reason));
    const s = assembleChat(await collect(await client.chat.completions.create({
      model: MODEL, messages: USER, n: 2, max_tokens: 6, stream: true, stream_options: { include_usage: true },
    })));
    assert.deepEqual([...s.choices.keys()].sort(), [0, 1]);
    for (const c of s.choices.values()) assert.equal(c.finishChunks, 1);
    assert.ok(s.usage.completion_tokens > 6 && s.usage.completion_tokens <= 12, JSON.stringify(s.usage));
  });

  await check('openai: chat logprobs + top_logprobs (greedy)', async () => {
    const r = await client.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: 3 });
    const content = r.choices[0].logprobs?.content;
    assert.ok(Array.isArray(content), JSON.stringify(r.choices[0]));
    assert.equal(content.length, r.usage.completion_tokens);
    for (const entry of content) {
      assert.equal(typeof entry.token, 'string');
      assert.ok(entry.logprob <= 0);
      assert.ok(Array.isArray(entry.bytes));
      assert.equal(entry.top_logprobs.length, 3);
      for (let i = 1; i < 3; i++) assert.ok(entry.top_logprobs[i - 1].logprob >= entry.top_logprobs[i].logprob);
      assert.equal(entry.token, entry.top_logprobs[0].token, 'greedy picks the most likely token');
      assert.ok(Math.abs(entry.logprob - entry.top_logprobs[0].logprob) < 1e-4);
    }
    const s = assembleChat(await collect(await client.chat.completions.create({
      model: MODEL, messages: USER, max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: 3, stream: true,
    })));
    assert.deepEqual(s.choices.get(0).logprobs, content, 'streamed logprobs equal the non-streamed ones');
  });

  await check('openai: chat stop strings', async () => {
    const script = K3.inResponse('Hello world STOP more text') + K3.end;
    const params = { model: MODEL, messages: USER, thinking: { type: 'disabled' }, max_tokens: 200, stop: ['STOP'], k3_forced_output: script };
    const r = await client.chat.completions.create(params);
    assert.equal(r.choices[0].message.content, 'Hello world ');
    assert.equal(r.choices[0].finish_reason, 'stop');
    const s = assembleChat(await collect(await client.chat.completions.create({ ...params, stream: true })));
    assert.equal(s.choices.get(0).message.content, 'Hello world ');
    assert.equal(s.choices.get(0).finish_reason, 'stop');
  });

  await check('openai: chat seed determinism (sampled)', async () => {
    // Temperature 2: the trained demo model is confident enough that two seeds at temperature 1
    // can agree on a short reply; at 2 (OpenAI's maximum) some of four seeds must differ.
    const text = async (seed) => {
      const r = await client.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 24, temperature: 2, seed });
      const m = r.choices[0].message;
      return `${m.reasoning_content ?? ''}|${m.content ?? ''}`;
    };
    const a = await text(1234);
    assert.equal(await text(1234), a, 'same seed, same text');
    const others = [await text(4321), await text(99), await text(7)];
    assert.ok(others.some((t) => t !== a), `other seeds, other texts: ${JSON.stringify([a, ...others])}`);
  });

  await completionCases(check, client, server);
  await validationCases(check, client, sdk);
}

async function completionCases(check, client, server) {
  const prompt = 'Once upon a time';
  await check('openai: completions string prompt', async () => {
    const r = await client.completions.create({ model: MODEL, prompt, max_tokens: 8, temperature: 0 });
    assert.equal(r.object, 'text_completion');
    assert.equal(typeof r.choices[0].text, 'string');
    const tok = JSON.parse((await rawRequest(`${server.url}/tokenize`, { method: 'POST', body: { prompt } })).body);
    assert.equal(r.usage.prompt_tokens, tok.count);
    assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 8);
  });

  await check('openai: completions echo (scripted) and stream', async () => {
    const params = { model: MODEL, prompt, max_tokens: 50, echo: true, k3_forced_output: ' there was a cat.' };
    const r = await client.completions.create(params);
    assert.equal(r.choices[0].text, 'Once upon a time there was a cat.');
    assert.equal(r.choices[0].finish_reason, 'stop');
    const chunks = await collect(await client.completions.create({ ...params, stream: true }));
    assert.equal(chunks.map((c) => c.choices[0]?.text ?? '').join(''), r.choices[0].text);
    assert.equal(chunks.filter((c) => c.choices[0]?.finish_reason).length, 1);
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  });

  await check('openai: completions logprobs', async () => {
    const r = await client.completions.create({ model: MODEL, prompt, max_tokens: 5, temperature: 0, logprobs: 2 });
    const lp = r.choices[0].logprobs;
    const n = r.usage.completion_tokens;
    assert.equal(lp.tokens.length, n);
    assert.equal(lp.token_logprobs.length, n);
    assert.equal(lp.text_offset.length, n);
    for (const v of lp.token_logprobs) assert.ok(v <= 0);
    for (let i = 1; i < n; i++) assert.ok(lp.text_offset[i] >= lp.text_offset[i - 1]);
    // OpenAI: top_logprobs is a list (one per token) of {token: logprob} with `logprobs` entries.
    assert.ok(Array.isArray(lp.top_logprobs), `top_logprobs must be a list, got ${JSON.stringify(lp.top_logprobs)}`);
    assert.equal(lp.top_logprobs.length, n);
    for (const top of lp.top_logprobs) assert.ok(Object.keys(top).length >= 1 && Object.keys(top).length <= 2);
  });
}

async function validationCases(check, client, sdk) {
  const base = { model: MODEL, messages: USER, max_tokens: 4 };
  const longPrompt = Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' ');
  const cases = [
    ['temperature 3', { temperature: 3 }, /temperature/],
    ['top_p 0', { top_p: 0 }, /top_p/],
    ['n 0', { n: 0 }, /'n'|\bn\b/],
    ['top_logprobs without logprobs', { top_logprobs: 2 }, /logprobs/],
    ['tool_choice required without tools', { tool_choice: 'required' }, /tool_choice|tools/],
    ['tool_choice bogus', { tools: [WEATHER_TOOL], tool_choice: 'bogus' }, /tool_choice/],
    ['response_format json_schema without json_schema', { response_format: { type: 'json_schema' } }, /json_schema/],
    ['duplicate tool names', { tools: [WEATHER_TOOL, WEATHER_TOOL] }, /duplicate|get_weather/],
    ['unknown role', { messages: [{ role: 'wizard', content: 'hi' }] }, /role/],
    ['max_tokens beyond the context', { max_tokens: 100000 }, /4096/],
    ['prompt beyond the context', { messages: [{ role: 'user', content: longPrompt }], max_tokens: undefined }, /4096/],
  ];
  for (const [name, patch, pattern] of cases) {
    await check(`openai: 400 for ${name}`, async () => {
      const body = { ...base, ...patch };
      for (const stream of [false, true]) {
        await assert.rejects(client.chat.completions.create({ ...body, stream }), (e) => {
          assert.ok(e instanceof sdk.openai.BadRequestError, `${e.constructor.name}: ${e.message}`);
          assert.equal(e.status, 400);
          assert.equal(e.type, 'invalid_request_error');
          assert.match(e.error.message, pattern);
          return true;
        });
      }
    });
  }
}
