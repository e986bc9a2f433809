// K3 "XTML" output scripts for the test-only request field k3_forced_output, and stream
// reassembly helpers shared by the client tests.

// The prompt ends inside <|open|>think<|sep|> (thinking on) or <|open|>response<|sep|> (off).
export const K3 = {
  think: (reasoning) => `${reasoning}<|close|>think<|sep|>`,
  response: (content) => `<|open|>response<|sep|>${content}<|close|>response<|sep|>`,
  // Content when the output starts inside the response block (thinking disabled).
  inResponse: (content) => `${content}<|close|>response<|sep|>`,
  call: (name, args) =>
    `<|open|>call tool="${name}" index="1"<|sep|>` +
    Object.entries(args)
      .map(([k, v]) => `<|open|>argument key="${k}" type="string"<|sep|>${v}<|close|>argument<|sep|>`)
      .join('') +
    '<|close|>call<|sep|>',
  tools: (...calls) => `<|open|>tools<|sep|>${calls.join('')}<|close|>tools<|sep|>`,
  end: '<|close|>message<|sep|>',
};

export const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

export const WEATHER_TOOL_ANTHROPIC = {
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: WEATHER_TOOL.function.parameters,
};

// Reasoning, content and one get_weather call.
export const TOOL_SCRIPT =
  K3.think('The user wants the weather; call the tool.') +
  K3.response('Let me look that up.') +
  K3.tools(K3.call('get_weather', { city: 'Paris' })) +
  K3.end;

// Folds OpenAI chat.completion.chunk objects into {choices: Map(index -> {message,
// finish_reason, finishChunks}), usage, ids}.
export function assembleChat(chunks) {
  const choices = new Map();
  let usage = null;
  const ids = new Set();
  for (const chunk of chunks) {
    ids.add(chunk.id);
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (!choices.has(c.index)) {
        choices.set(c.index, {
          message: { role: undefined, content: '', reasoning_content: '', tool_calls: [] },
          finish_reason: null,
          finishChunks: 0,
          logprobs: [],
        });
      }
      const slot = choices.get(c.index);
      const d = c.delta ?? {};
      if (d.role) slot.message.role = d.role;
      if (typeof d.content === 'string') slot.message.content += d.content;
      if (typeof d.reasoning_content === 'string') slot.message.reasoning_content += d.reasoning_content;
      for (const tc of d.tool_calls ?? []) {
        slot.message.tool_calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
        const call = slot.message.tool_calls[tc.index];
        if (tc.id) call.id = tc.id;
        if (tc.type) call.type = tc.type;
        if (tc.function?.name) call.function.name += tc.function.name;
        if (tc.function?.arguments) call.function.arguments += tc.function.arguments;
      }
      if (c.logprobs?.content) slot.logprobs.push(...c.logprobs.content);
      if (c.finish_reason) {
        slot.finish_reason = c.finish_reason;
        slot.finishChunks++;
      }
    }
  }
  return { choices, usage, ids };
}

// A non-streamed message in the shape assembleChat builds (null/absent -> empty).
export function normalizeMessage(message) {
  return {
    role: message.role,
    content: message.content ?? '',
    reasoning_content: message.reasoning_content ?? '',
    tool_calls: (message.tool_calls ?? []).map((c) => ({
      id: c.id,
      type: c.type,
      function: { name: c.function.name, arguments: c.function.arguments },
    })),
  };
}
