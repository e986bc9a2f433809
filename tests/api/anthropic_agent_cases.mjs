// Anthropic Messages as Claude Code uses it, through the official `@anthropic-ai/sdk` client:
// adaptive thinking with output_config.effort, system messages inside `messages`, and the shared
// effort vocabulary on OpenAI's reasoning_effort.
import assert from 'node:assert/strict';

import { K3, WEATHER_TOOL_ANTHROPIC } from './scripts.mjs';

const MODEL = 'k3-demo';
const USER = [{ role: 'user', content: 'What is the weather in Paris?' }];

export async function anthropicAgentCases(check, { server, sdk }) {
  const client = new sdk.Anthropic({ baseURL: server.url, apiKey: 'sk-ant-test', maxRetries: 0, timeout: 120000 });
  const count = async (params) => (await client.messages.countTokens({ model: MODEL, messages: USER, ...params })).input_tokens;

  await check('anthropic: adaptive thinking with output_config.effort', async () => {
    const script = K3.think('Think a little.') + K3.response('Hi!') + K3.end;
    for (const effort of ['low', 'medium', 'high', 'max']) {
      const r = await client.messages.create({
        model: MODEL, max_tokens: 200, messages: USER, thinking: { type: 'adaptive' },
        output_config: { effort }, context_management: { edits: [] }, metadata: { user_id: 'u' },
        k3_forced_output: script,
      });
      assert.deepEqual(r.content.map((b) => b.type), ['thinking', 'text'], effort);
      assert.equal(r.content[0].thinking, 'Think a little.');
    }
    // K3 renders the effort note only with thinking on: "none" turns it off, so fewer tokens.
    const none = await count({ thinking: { type: 'adaptive' }, output_config: { effort: 'none' } });
    const medium = await count({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } });
    assert.ok(none < medium, `${none} < ${medium}`);
  });

  await check('anthropic: a system message inside messages is kept in place', async () => {
    const messages = [...USER, { role: 'assistant', content: 'Which unit?' },
      { role: 'system', content: 'Answer in Celsius.' }, { role: 'user', content: 'Celsius.' }];
    const r = await client.messages.create({ model: MODEL, max_tokens: 8, messages });
    assert.equal(r.type, 'message');
    const without = messages.filter((m) => m.role !== 'system');
    assert.ok((await client.messages.countTokens({ model: MODEL, messages })).input_tokens >
      (await client.messages.countTokens({ model: MODEL, messages: without })).input_tokens);
  });

  await check('openai: reasoning_effort vocabulary none..max is accepted', async () => {
    const openai = new sdk.OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120000 });
    for (const effort of ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']) {
      const r = await openai.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 4, reasoning_effort: effort });
      assert.equal(r.object, 'chat.completion', effort);
    }
  });

  await check('anthropic: context-limit 400s in Anthropic wording (OpenAI keeps its own)', async () => {
    const rejects = (params, pattern) => assert.rejects(client.messages.create({ model: MODEL, messages: USER, ...params }), (e) => {
      assert.ok(e instanceof sdk.anthropic.BadRequestError, `${e.constructor.name}: ${e.message}`);
      assert.equal(e.error?.error?.type, 'invalid_request_error');
      assert.match(e.error.error.message, pattern);
      return true;
    });
    const input = /^input length and max_tokens exceed context limit: (\d+) \+ 1000000 > (\d+), decrease input length or max_tokens and try again$/;
    await rejects({ max_tokens: 1000000 }, input);
    const long = [{ role: 'user', content: 'word '.repeat(300000) }];
    await rejects({ max_tokens: 8, messages: long }, /^prompt is too long: \d+ tokens > \d+ maximum$/);
    const openai = new sdk.OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120000 });
    await assert.rejects(openai.chat.completions.create({ model: MODEL, messages: USER, max_tokens: 1000000 }),
      (e) => e.status === 400 && /maximum context length/.test(e.message));
  });

  // 1x1 PNG.
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const afterCall = (content) => [...USER,
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01AbC', name: 'get_weather', input: { city: 'Paris' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01AbC', content }] }];
  const tools = [WEATHER_TOOL_ANTHROPIC];

  await check('anthropic: tool_result with an image, a document and a search result', async () => {
    const image = [{ type: 'text', text: 'The radar:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/radar.png' } }];
    const r = await client.messages.create({ model: MODEL, max_tokens: 8, messages: afterCall(image), tools });
    assert.equal(r.type, 'message');
    const tokens = async (content) => (await client.messages.countTokens({ model: MODEL, messages: afterCall(content), tools })).input_tokens;
    const plain = await tokens('sunny');
    const doc = await tokens([{ type: 'text', text: 'sunny' },
      { type: 'document', title: 'Forecast', source: { type: 'text', media_type: 'text/plain', data: 'Sunny all week, 21 C.' } },
      { type: 'search_result', source: 'https://example.com/w', title: 'Weather', content: [{ type: 'text', text: '21 C' }] }]);
    assert.ok(doc > plain, `${doc} > ${plain}`);
    const top = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: [
      { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'A long report about Paris.' }] } },
      { type: 'text', text: 'Summarise it.' }] }] });
    assert.ok(top.input_tokens > 0);
  });

  await check('anthropic: a PDF document is a 400 naming it', async () => {
    const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } };
    for (const messages of [afterCall([pdf]), [{ role: 'user', content: [pdf, { type: 'text', text: 'Read it.' }] }]]) {
      await assert.rejects(client.messages.create({ model: MODEL, max_tokens: 8, messages, tools }), (e) => {
        assert.ok(e instanceof sdk.anthropic.BadRequestError, `${e.constructor.name}: ${e.message}`);
        assert.equal(e.error?.error?.type, 'invalid_request_error');
        assert.match(e.error.error.message, /application\/pdf.*PDF/);
        return true;
      });
    }
  });

  await check('anthropic: output_config.format json_schema constrains the text', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
    const r = await client.messages.create({ model: MODEL, max_tokens: 64, messages: USER, thinking: { type: 'disabled' },
      output_config: { format: { type: 'json_schema', schema } } });
    const text = r.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
    assert.equal(r.stop_reason, 'end_turn', text);
    assert.equal(typeof JSON.parse(text).ok, 'boolean', text);
  });
}
