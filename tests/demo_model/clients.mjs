// Sends a held-out record (an OpenAI Chat Completions body) through the official clients:
// `openaiReply` as it is, `anthropicReply` converted to an Anthropic Messages request the way an
// Anthropic user would write it. Both resolve {content, toolCalls: [{name, arguments}]} with the
// arguments parsed (undefined when they are not JSON).

function parseArguments(text) {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return undefined;
  }
}

export async function openaiReply(client, record, sampling, maxTokens) {
  const response = await client.chat.completions.create({
    model: 'k3-demo', ...record.request, ...sampling, max_tokens: maxTokens,
  });
  const message = response.choices[0].message;
  return {
    content: message.content ?? '',
    toolCalls: (message.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: parseArguments(c.function.arguments) })),
  };
}

// Whether the record has an Anthropic form: json_object has none (Messages structured outputs
// take a schema), so those records are OpenAI-only.
export function hasAnthropicForm(record) {
  return record.request.response_format?.type !== 'json_object';
}

function anthropicMessages(messages) {
  const out = [];
  const push = (role, block) => {
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(block);
    else out.push({ role, content: [block] });
  };
  for (const m of messages) {
    if (m.role === 'system') continue;
    if (m.role === 'tool') {
      push('user', { type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content });
    } else if (m.role === 'assistant') {
      if (m.content) push('assistant', { type: 'text', text: m.content });
      for (const c of m.tool_calls ?? []) {
        push('assistant', { type: 'tool_use', id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) });
      }
    } else {
      push('user', { type: 'text', text: m.content });
    }
  }
  return out;
}

// The OpenAI body as Anthropic Messages params: system prompt, tools with input_schema,
// tool_use / tool_result blocks, thinking disabled or output_config.effort, and json_schema
// response formats as output_config.format.
export function toAnthropic(request) {
  const params = { model: 'k3-demo', messages: anthropicMessages(request.messages) };
  const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content);
  if (system.length) params.system = system.join('\n');
  if (request.tools) {
    params.tools = request.tools.map((t) => ({
      name: t.function.name, description: t.function.description, input_schema: t.function.parameters,
    }));
  }
  const outputConfig = {};
  if (request.thinking?.type === 'disabled') params.thinking = { type: 'disabled' };
  if (request.reasoning_effort) outputConfig.effort = request.reasoning_effort;
  if (request.response_format?.type === 'json_schema') {
    outputConfig.format = { type: 'json_schema', schema: request.response_format.json_schema.schema };
  }
  if (Object.keys(outputConfig).length) params.output_config = outputConfig;
  return params;
}

export async function anthropicReply(client, record, sampling, maxTokens) {
  const message = await client.messages.create({ ...toAnthropic(record.request), ...sampling, max_tokens: maxTokens });
  const text = message.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  const toolCalls = message.content.filter((b) => b.type === 'tool_use').map((b) => ({ name: b.name, arguments: b.input }));
  return { content: text, toolCalls };
}
