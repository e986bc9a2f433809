// Anthropic Messages as Claude Code uses it, through the official `@anthropic-ai/sdk` client:
// adaptive thinking with output_config.effort, system messages inside `messages`, and the shared
// effort vocabulary on OpenAI's reasoning_effort.
import assert from 'node:assert/strict';

import { K3 } from './scripts.mjs';

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
}
