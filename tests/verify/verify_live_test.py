#!/usr/bin/python3
"""`k3 verify` end to end (ctest verify_live).

1. Against `k3 serve --api-key testkey` on the embedded demo checkpoint: exit status 0 and
   every check PASS, or SKIP with a reason.
2. Against a deliberately non-conforming stub (this file's StubHandler: 200 for an out-of-range
   temperature, a wrong error shape, a stream without [DONE], usage totals that do not add up):
   a non-zero exit naming exactly those failures, so the suite is shown to be able to fail.

Usage: verify_live_test.py --k3 PATH --work DIR (stdlib only).
"""
import argparse
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time

SERVE_START_TIMEOUT_S = 120
VERIFY_TIMEOUT_S = 300


def start_serve(k3, work):
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    log = open(os.path.join(work, "serve.log"), "w")
    proc = subprocess.Popen(
        [k3, "serve", "--port", "0", "--api-key", "testkey", "--cache-memory", "256MiB"],
        stdout=subprocess.PIPE, stderr=log, env=env, text=True)
    deadline = time.time() + SERVE_START_TIMEOUT_S
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        match = re.search(r"listening on (http://\S+)", line)
        if match:
            # Keep draining stdout so the server never blocks on a full pipe.
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, match.group(1).rstrip("/")
    proc.kill()
    sys.exit(f"k3 serve did not start; see {log.name}")


def run_verify(k3, url, out_json, extra):
    cmd = [k3, "verify", url, "--json", out_json, *extra]
    started = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=VERIFY_TIMEOUT_S)
    print(f"$ {' '.join(cmd)}  ({time.time() - started:.1f} s, exit {done.returncode})")
    print(done.stdout, end="")
    if done.stderr.strip():
        print(done.stderr[-2000:], file=sys.stderr)
    with open(out_json) as f:
        return done.returncode, json.load(f)


class StubHandler(http.server.BaseHTTPRequestHandler):
    """An OpenAI-ish server that breaks four contracts on purpose and otherwise answers 200."""

    def log_message(self, *args):
        pass

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/v1/models":
            return self.send_json(200, {"object": "list", "data": [{"id": "stub-model", "object": "model"}]})
        self.send_json(404, {"error": "no such endpoint"})  # broken: a string, not the error object

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        try:
            body = json.loads(raw)
        except ValueError:
            return self.send_json(400, {"detail": "bad json"})  # broken: not the OpenAI error shape
        if self.path != "/v1/chat/completions":
            return self.send_json(404, {"error": "no such endpoint"})
        if body.get("stream"):
            return self.send_stream()
        # Broken: any temperature is accepted, and total_tokens is not the sum.
        self.send_json(200, {
            "id": "chatcmpl-stub", "object": "chat.completion", "created": 1, "model": "stub-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 99}})

    def send_stream(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for delta, finish in (({"role": "assistant", "content": "hel"}, None), ({"content": "lo"}, "stop")):
            chunk = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": 1,
                     "model": "stub-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        # Broken: no "data: [DONE]" terminator.


def check_conforming(k3, work):
    serve, url = start_serve(k3, work)
    try:
        code, report = run_verify(k3, url, os.path.join(work, "serve_report.json"), ["--api-key", "testkey"])
    finally:
        serve.kill()
        serve.wait()
    problems = [f"{c['area']}/{c['name']}: {c['status']} {c['detail']}" for c in report["checks"]
                if c["status"] == "FAIL" or (c["status"] == "SKIP" and not c["detail"])]
    if len(report["checks"]) < 50:
        problems.append(f"only {len(report['checks'])} checks ran")
    if code != 0:
        problems.append(f"k3 verify exited {code} against k3 serve")
    return problems


def check_stub(k3, work):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StubHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        code, report = run_verify(k3, f"http://127.0.0.1:{server.server_address[1]}",
                                  os.path.join(work, "stub_report.json"), [])
    finally:
        server.shutdown()
    status = {c["name"]: c["status"] for c in report["checks"]}
    problems = [] if code == 1 else [f"k3 verify exited {code} against the stub, expected 1"]
    for name in ("chat.temperature_above_2", "chat.body_not_json", "unknown_endpoint_404",
                 "usage_totals", "chat_stream_well_formed"):
        if status.get(name) != "FAIL":
            problems.append(f"the stub breaks {name} but the check says {status.get(name)}")
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--k3", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    problems = check_conforming(args.k3, args.work) + check_stub(args.k3, args.work)
    for problem in problems:
        print("PROBLEM:", problem)
    print("verify_live:", "FAILED" if problems else "ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
