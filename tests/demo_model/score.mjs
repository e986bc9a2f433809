// Scores one reply of the trained demo model against a held-out record (tools/train/make_data.py
// writes the records: kind, request, completion, expect). Independent of the server: the checks
// read only the record and the reply {content, toolCalls: [{name, arguments (parsed)}]}.
//
// Categories (the evaluation):
//   tool_call    tools declared, one fits: the right tools in order, arguments that validate
//                against the declared schema and carry the user's entities;
//   no_tool      tools declared, none fits: no call;
//   tool_result  after tool results: no call, and the answer contains the returned values;
//   multi_turn   a second turn ("and the time there?"): the right tool with the first turn's city;
//   json_schema  response_format json_schema: valid against the schema and equal to the entities
//                of the prompt; json_object: the same without a schema (reported, not a gate);
//   chat         plain short answers (reported, not a gate).

// Free-text arguments the model words itself: they must be non-empty strings, not equal.
const FREE_TEXT = new Set(['body', 'subject', 'text']);

export function categoryOf(record) {
  const { kind, expect, request } = record;
  if (kind === 'followup') return 'multi_turn';
  if (kind === 'call' || (kind === 'multi' && expect.tool_calls)) return 'tool_call';
  if (kind === 'answer' || kind === 'multi') return 'tool_result';
  if (kind === 'no_tool') return 'no_tool';
  if (kind === 'json') return request.response_format?.type === 'json_schema' ? 'json_schema' : 'json_object';
  return 'chat';
}

// The targets on `ok` (fractions of the held-out cases), reported beside the scores.
export const TARGETS = { tool_call: 0.9, no_tool: 0.9, tool_result: 0.8, multi_turn: 0.8, json_schema: 0.8 };

// What the committed checkpoint scores: per category, the rates of `ok` and of `form` over its
// eight t=1 runs on record (stop-33 checkpoint: models/k3-demo/README.md's two, one CI run's two,
// two local runs' four), rounded down to a little under their mean; t=0 scores are the same or
// higher. `form` rates of 100 % are entered as 0.99 so that one miss stays possible.
// Refresh them with a new checkpoint. A random-weight model fails the gates of every category but
// no_tool (where any text without a call counts).
export const EXPECTED = {
  ok: {
    tool_call: 0.78, multi_turn: 0.89, no_tool: 0.94, tool_result: 0.97, json_schema: 0.37, json_object: 0.55,
    chat: 0.32,
  },
  form: {
    tool_call: 0.95, multi_turn: 0.94, no_tool: 0.94, tool_result: 0.99, json_schema: 0.99, json_object: 0.99,
    chat: 0.84,
  },
};

// A run fails a category when the committed checkpoint would score that low or lower with a
// chance under FAIL_ALPHA (the exact binomial tail at the EXPECTED rate, n the category's
// records). The t=1 runs are unseeded: 14 gates x 4 runs then fail a correct server in about one
// CI run of 180, where the earlier fixed floors (about three normal standard deviations under the
// lowest run, too tight where n ~ 50 and the rate nears 1) failed one in a few.
export const FAIL_ALPHA = 1e-4;

// P(X <= k) for X ~ Binomial(n, p), summed in log space (n is a few hundred at most).
export function binomialCdf(k, n, p) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  let logTerm = n * Math.log1p(-p);  // log P(X = 0)
  let sum = Math.exp(logTerm);
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log((n - i + 1) / i) + Math.log(p) - Math.log1p(-p);
    sum += Math.exp(logTerm);
  }
  return Math.min(1, sum);
}

// The fewest successes of n that pass the gate at rate p: the smallest k with P(X <= k) >= alpha.
export function passingCount(n, p, alpha = FAIL_ALPHA) {
  let k = 0;
  while (k < n && binomialCdf(k, n, p) < alpha) k++;
  return k;
}

function typeOk(value, type) {
  if (type === 'string') return typeof value === 'string';
  if (type === 'integer') return Number.isInteger(value);
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value);
  if (type === 'object') return value !== null && typeof value === 'object' && !Array.isArray(value);
  return true;
}

// A small JSON Schema check of what the records use: object, required, property types,
// additionalProperties false. -> '' when valid, else why not.
export function schemaError(value, schema) {
  if (!typeOk(value, 'object')) return 'not an object';
  for (const key of schema.required ?? []) if (!(key in value)) return `missing '${key}'`;
  for (const [key, v] of Object.entries(value)) {
    const prop = schema.properties?.[key];
    if (!prop) {
      if (schema.additionalProperties === false) return `unexpected '${key}'`;
      continue;
    }
    if (!typeOk(v, prop.type)) return `'${key}' is not ${prop.type}`;
  }
  return '';
}

// The arguments carry the user's entities: every expected value equal, free text non-empty.
function entitiesOk(got, want) {
  return Object.entries(want).every(([key, value]) =>
    FREE_TEXT.has(key) ? typeof got[key] === 'string' && got[key].trim() !== '' : got[key] === value);
}

// `entities` false: only the form (the right tools in order, arguments valid against the schema).
function callsOk(record, reply, entities = true) {
  const want = record.expect.tool_calls;
  if (reply.toolCalls.length !== want.length) return `${reply.toolCalls.length} calls, want ${want.length}`;
  const tools = Object.fromEntries(record.request.tools.map((t) => [t.function.name, t.function.parameters]));
  for (let i = 0; i < want.length; i++) {
    const got = reply.toolCalls[i];
    if (got.name !== want[i].name) return `called ${got.name}, want ${want[i].name}`;
    if (got.arguments === undefined) return `${got.name}: arguments are not JSON`;
    const error = schemaError(got.arguments, tools[got.name]);
    if (error) return `${got.name}: ${error}`;
    if (entities && !entitiesOk(got.arguments, want[i].arguments)) return `${got.name}: wrong entities`;
  }
  return '';
}

// The scalar values of the tool results the answer must contain (a bare `status` excluded: the
// answers say "I sent it", not "sent").
function returnedValues(record) {
  const values = [];
  const walk = (v, key) => {
    if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
    else if (key !== 'status') values.push(String(v));
  };
  for (const m of record.request.messages.slice(-4)) if (m.role === 'tool') walk(JSON.parse(m.content), '');
  return values;
}

function jsonOk(record, reply, values = true) {
  let value;
  try {
    value = JSON.parse(reply.content);
  } catch {
    return 'content is not JSON';
  }
  const schema = record.request.response_format?.json_schema?.schema;
  const error = schema ? schemaError(value, schema) : '';
  if (error || !values) return error;
  return JSON.stringify(value) === JSON.stringify(record.expect.json) ? '' : 'wrong values';
}

// The reply's form without its values: the right tools with schema-valid arguments, no call and
// some text where no tool fits or after results, schema-valid JSON. '' when right, else why not.
function formError(record, reply, category, content) {
  if (record.expect.tool_calls) return callsOk(record, reply, false);
  if (reply.toolCalls.length > 0) return `called ${reply.toolCalls[0].name}`;
  if (category === 'json_schema' || category === 'json_object') return jsonOk(record, { content }, false);
  return content === '' ? 'empty answer' : '';
}

// -> {category, ok, form, exact, why}: `ok` is the category's check, `form` the same without
// the values (formError), `exact` whether the reply is exactly the record's completion.
export function score(record, reply) {
  const category = categoryOf(record);
  const content = (reply.content ?? '').trim();
  let why = '';
  if (record.expect.tool_calls) {
    why = callsOk(record, reply);
  } else if (reply.toolCalls.length > 0) {
    why = `called ${reply.toolCalls[0].name}`;
  } else if (category === 'tool_result') {
    const missing = returnedValues(record).filter((v) => !content.includes(v));
    why = missing.length ? `answer lacks ${missing.join(', ')}` : content === '' ? 'empty answer' : '';
  } else if (category === 'json_schema' || category === 'json_object') {
    why = jsonOk(record, { content });
  } else if (category === 'chat') {
    why = content === record.expect.content.trim() ? '' : 'different answer';
  } else if (content === '') {
    why = 'empty answer';
  }
  const exact = record.expect.tool_calls
    ? JSON.stringify(reply.toolCalls) === JSON.stringify(record.expect.tool_calls)
    : record.expect.json
      ? why === ''
      : content === record.expect.content.trim();
  const form = formError(record, reply, category, content) === '';
  return { category, ok: why === '', form, exact, why };
}
