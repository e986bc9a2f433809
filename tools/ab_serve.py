# Behaviour A/B: the same seeded requests (penalties, n > 1, logprobs, json_schema near its budget,
# strict tools, completions, Anthropic) against two `k3 serve` binaries on the demo checkpoint;
# prints every response that differs. Usage: python3 tools/ab_serve.py OLD_K3 NEW_K3
import json, subprocess, sys, time, urllib.request, os, signal
A, B = sys.argv[1], sys.argv[2]
def start(binary, port):
    p = subprocess.Popen([binary, "serve", "--port", str(port), "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1); return p
        except Exception: time.sleep(0.1)
    raise SystemExit("server did not start")
def post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=600) as r: return json.loads(r.read())
    except urllib.error.HTTPError as e: return {"http_error": e.code, "body": e.read().decode()}
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k not in ("id", "created", "system_fingerprint")}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
msgs = [{"role": "user", "content": "Hello there, what is the weather in Paris today?"}]
tool = {"type": "function", "function": {"name": "get_weather", "strict": True, "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city", "days"], "additionalProperties": False}}}
schema = {"type": "json_schema", "json_schema": {"name": "x", "strict": True, "schema": {"type": "object", "properties": {"items": {"type": "array", "items": {}}}, "required": ["items"]}}}
cases = []
for seed in range(6):
    cases.append(("/v1/chat/completions", {"messages": msgs, "temperature": 1, "seed": seed, "max_tokens": 40, "n": 2, "logprobs": True, "top_logprobs": 3}))
    cases.append(("/v1/chat/completions", {"messages": msgs, "temperature": 1.3, "seed": seed, "max_tokens": 24 + seed, "response_format": schema}))
    cases.append(("/v1/chat/completions", {"messages": msgs, "temperature": 1, "seed": seed, "max_tokens": 60, "tools": [tool], "tool_choice": "required"}))
    cases.append(("/v1/chat/completions", {"messages": msgs, "temperature": 0.8, "seed": seed, "max_tokens": 30, "presence_penalty": 1.0, "frequency_penalty": 0.5, "repetition_penalty": 1.3}))
    cases.append(("/v1/completions", {"prompt": "The story of the", "temperature": 1, "seed": seed, "max_tokens": 30, "top_k": 20, "top_p": 0.9, "min_p": 0.05, "logprobs": 2}))
    cases.append(("/v1/messages", {"model": "k3", "messages": msgs, "max_tokens": 30, "temperature": 1, "top_k": 50}))
pa, pb = start(A, 18101), start(B, 18102)
try:
    diffs = 0
    for path, body in cases:
        ra, rb = strip(post(18101, path, body)), strip(post(18102, path, body))
        if path == "/v1/messages": ra.pop("content", None); rb.pop("content", None)  # unseeded
        if ra != rb:
            diffs += 1; print("DIFF", path, json.dumps(body)[:200]); print(" A", json.dumps(ra)[:600]); print(" B", json.dumps(rb)[:600])
    print(f"{len(cases)} cases, {diffs} differ")
finally:
    for p in (pa, pb): p.send_signal(signal.SIGTERM); p.wait()
