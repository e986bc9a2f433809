// How each agent client is run against the proxy URL: a temp HOME / config with telemetry and
// updates off, a bounded child process, and what counts as the loop having completed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = (name) => path.join(here, 'node_modules', '.bin', name);

export const DONE = 'K3-AGENT-DONE';
export const MARKER = 'k3-tool-ran';

// The script `k3 serve --script-file` gets: per shell-like tool, first a call that writes the
// marker file (run by the client), then, once one tool result is in the conversation, the final
// answer. Requests without those tools (titles, summaries) get a short text.
export function scriptRules() {
  const shell = `echo ${MARKER} > marker.txt`;
  const loop = (tool, args) => [
    { has_tool: tool, tool_results: 0, reasoning: 'Run the tool.', text: 'Running it.', tool_calls: [{ name: tool, arguments: args }] },
    { has_tool: tool, reasoning: 'The tool ran.', text: `${DONE}: the tool ran.` },
  ];
  return [
    ...loop('get_weather', { city: 'Paris' }),
    ...loop('Bash', { command: shell, description: 'Write the marker file' }),
    ...loop('bash', { command: shell, description: 'Write the marker file' }),
    ...loop('exec_command', { cmd: shell }),
    ...loop('shell_command', { command: shell }),
    ...loop('shell', { command: ['bash', '-lc', shell] }),
    { text: 'k3 agent test' },
  ];
}

const running = new Set();
process.on('exit', () => {
  for (const child of running) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
});

// Runs a command in its own process group; kills the group after timeoutMs.
export function runBounded(command, args, { env, cwd, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, timeoutMs);
    child.on('error', (e) => {
      out += String(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      try {
        process.kill(-child.pid, 'SIGKILL');  // leftovers of the group
      } catch {}
      resolve({ code, signal, timedOut, out });
    });
  });
}

// A clean environment: no inherited proxies, keys or configs; HOME and XDG dirs in `home`.
function baseEnv(home) {
  const keep = ['PATH', 'LANG', 'TERM', 'TMPDIR'];
  const env = {};
  for (const k of keep) if (process.env[k] !== undefined) env[k] = process.env[k];
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    NO_PROXY: '127.0.0.1,localhost',
    CI: '1',
    NO_COLOR: '1',
  });
  return env;
}

export const PROMPT = 'Write the marker file with the shell tool, then say you are done.';

export async function runCodex({ url, dir, timeoutMs }) {
  const home = path.join(dir, 'home');
  const codexHome = path.join(home, 'codex');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(
    path.join(codexHome, 'config.toml'),
    [
      'model = "k3-demo"',
      'model_provider = "k3"',
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      '[feedback]',
      'enabled = false',
      '[otel]',
      'exporter = "none"',
      '[model_providers.k3]',
      'name = "k3"',
      `base_url = "${url}/v1"`,
      'wire_api = "responses"',
      'env_key = "K3_API_KEY"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  const env = { ...baseEnv(home), CODEX_HOME: codexHome, K3_API_KEY: 'k3-test' };
  // No sandbox: the only command is the script's own, in this temp dir (Linux sandboxes need user
  // namespaces that CI containers may not have).
  const args = ['exec', '--skip-git-repo-check', '--sandbox', 'danger-full-access', '-C', dir, PROMPT];
  return runBounded(bin('codex'), args, { env, cwd: dir, timeoutMs });
}

export async function runClaude({ url, dir, timeoutMs }) {
  const home = path.join(dir, 'home');
  fs.mkdirSync(home, { recursive: true });
  const env = {
    ...baseEnv(home),
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: 'k3-test',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  // --allowedTools lets Bash run without a prompt (bypassPermissions is refused as root).
  // --bare, a short system prompt and only the Bash tool keep the first request small enough
  // for the CPU demo to prefill within the time bound (the full prompt is ~26K tokens).
  const args = ['-p', PROMPT, '--bare', '--system-prompt', 'You are a coding agent under test.',
    '--tools', 'Bash', '--allowedTools', 'Bash', '--max-turns', '4'];
  return runBounded(bin('claude'), args, { env, cwd: dir, timeoutMs });
}

export async function runOpencode({ url, dir, timeoutMs }) {
  const home = path.join(dir, 'home');
  fs.mkdirSync(home, { recursive: true });
  const config = path.join(dir, 'opencode.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      model: 'k3/k3-demo',
      small_model: 'k3/k3-demo',
      permission: { bash: 'allow', edit: 'allow', webfetch: 'deny' },
      // Only the bash tool and a short prompt: a smaller first request for the CPU demo.
      tools: { bash: true, read: false, write: false, edit: false, list: false, glob: false, grep: false, patch: false, todowrite: false, todoread: false, webfetch: false, task: false },
      agent: { build: { prompt: 'You are a coding agent under test.' } },
      provider: {
        k3: {
          npm: '@ai-sdk/openai-compatible',
          name: 'k3',
          options: { baseURL: `${url}/v1`, apiKey: 'k3-test' },
          models: { 'k3-demo': { name: 'k3-demo', tool_call: true, limit: { context: 131072, output: 1024 } } },
        },
      },
    }),
  );
  const env = {
    ...baseEnv(home),
    OPENCODE_CONFIG: config,
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
  return runBounded(bin('opencode'), ['run', '--model', 'k3/k3-demo', PROMPT], { env, cwd: dir, timeoutMs });
}

// The AI SDK in this process: a get_weather tool it executes itself; `mode` 'chat' uses
// provider.chat() (chat completions), 'responses' the default provider() (Responses API).
export async function runAiSdk({ url, mode }) {
  const { generateText, tool, stepCountIs } = await import('ai');
  const { createOpenAI } = await import('@ai-sdk/openai');
  const { z } = await import('zod');
  const provider = createOpenAI({ baseURL: `${url}/v1`, apiKey: 'k3-test' });
  const model = mode === 'chat' ? provider.chat('k3-demo') : provider('k3-demo');
  const calls = [];
  try {
    const result = await generateText({
      model,
      maxRetries: 0,
      prompt: 'What is the weather in Paris?',
      tools: {
        get_weather: tool({
          description: 'Current weather of a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            calls.push(city);
            return { city, weather: 'sunny', marker: MARKER };
          },
        }),
      },
      stopWhen: stepCountIs(4),
      providerOptions: { openai: { store: false } },
    });
    const ran = calls.length === 1 && calls[0] === 'Paris';
    return { code: 0, out: result.text, ran };
  } catch (e) {
    return { code: 1, out: String(e?.stack ?? e), ran: calls.length > 0 };
  }
}
