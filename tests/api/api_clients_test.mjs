// End-to-end checks of `k3 serve` through the official OpenAI and Anthropic Node clients
// (tools/peers/node_modules), streamed and not, plus auth, cancellation, overload, graceful
// shutdown and the plain endpoints. Starts its own servers on the embedded demo checkpoint.
//
//   node tests/api/api_clients_test.mjs --k3 build/apps/k3/k3 --work /tmp/k3-api
//
// Exits non-zero when any check fails; the last line is a summary.
import path from 'node:path';
import { test } from 'node:test';

import { anthropicCases } from './anthropic_cases.mjs';
import { signingKeyCases } from './anthropic_signature_cases.mjs';
import { hygieneCases } from './hygiene_cases.mjs';
import { loadClients, parseArgs, startServer } from './lib.mjs';
import { authCases, cancellationCases, endpointCases, overloadCases, shutdownCases } from './lifecycle_cases.mjs';
import { openaiCases } from './openai_cases.mjs';
import { responsesCases, responsesStoreCases } from './responses_cases.mjs';
import { structuredCases } from './structured_cases.mjs';

// --replies full|short: how long the sampled structured-output replies may run (short under
// ASan+UBSan, where the model is several times slower).
const options = parseArgs(process.argv.slice(2), { k3: undefined, work: undefined, replies: 'full' });
const args = { k3: path.resolve(options.k3), work: path.resolve(options.work), replies: options.replies };
const sdk = loadClients();

const results = [];
// One node:test test per check, run one after another; outcomes are kept for the summary.
function check(name, fn) {
  return test(name, async () => {
    const started = Date.now();
    try {
      await fn();
      results.push({ name, ok: true, ms: Date.now() - started });
    } catch (e) {
      results.push({ name, ok: false, ms: Date.now() - started, error: e });
      throw e;
    }
  });
}

process.on('exit', () => {
  const failed = results.filter((r) => !r.ok);
  for (const r of failed) console.log(`FAILED: ${r.name}: ${String(r.error?.message ?? r.error).split('\n')[0]}`);
  console.log(`api_clients_test: ${results.length - failed.length} passed, ${failed.length} failed ` +
    `(of ${results.length} checks)`);
  if (failed.length > 0 || results.length === 0) process.exitCode = 1;
});

// Each server's checks run in turn; a server that dies fails its own remaining checks only.
async function withServer(name, serverArgs, body) {
  const server = await startServer({ ...args, name, args: serverArgs });
  try {
    await body({ server, sdk, args });
  } finally {
    await server.stop();
  }
}

// The main server caps the context at 4096 tokens so the context-limit checks stay small (the demo
// itself declares 131072).
await withServer('main', ['--max-model-len', '4096'], async (ctx) => {
  await openaiCases(check, ctx);
  await responsesCases(check, ctx);
  await anthropicCases(check, ctx);
  await endpointCases(check, ctx);
  await structuredCases(check, ctx);
});
await withServer('responses-store', ['--responses-store', '8'], (ctx) => responsesStoreCases(check, ctx));
await withServer('cancel', [], (ctx) => cancellationCases(check, ctx));
await hygieneCases(check, { args, sdk });
await authCases(check, { args, sdk });
await signingKeyCases(check, { args, sdk });
await overloadCases(check, { args, sdk });
await shutdownCases(check, { args, sdk });
