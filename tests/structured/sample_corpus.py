#!/usr/bin/python3
"""Sampled generations over the schema corpus through a live `k3 serve`.

Starts `k3 serve` on the embedded demo checkpoint (a random-weight tiny K3 model with Kimi's
chat syntax), sends one chat request per corpus schema with
response_format json_schema (strict), n=20, temperature 1.0, thinking disabled, and writes the
choices to a generations file that validate.py checks with jsonschema (Draft 2020-12): every
output must have finished by itself (finish_reason "stop"), be compact and valid.

    sample_corpus.py --k3 PATH/TO/k3 --work DIR [--corpus FILE] [--n 20] [--limit N]
"""

import argparse
import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body, timeout=1800):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def wait_ready(base, proc):
    for _ in range(600):
        if proc.poll() is not None:
            sys.exit("k3 serve exited early with %d" % proc.returncode)
        try:
            with urllib.request.urlopen(base + "/ready", timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.2)
    sys.exit("k3 serve did not become ready")


def sample(base, case, n, max_tokens):
    # The API takes an object schema (as OpenAI's does); `true` means the same as {}.
    schema = {} if case["schema"] is True else case["schema"]
    started = time.time()
    body = {
        "model": "k3-demo",
        "messages": [{"role": "user", "content": "Answer with JSON for case " + case["name"]}],
        "n": n,
        "temperature": 1.0,
        "max_tokens": max_tokens,
        "seed": 1234,
        "thinking": {"type": "disabled"},
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "case", "schema": schema, "strict": True}},
    }
    reply = post(base + "/v1/chat/completions", body)
    choices = sorted(reply["choices"], key=lambda c: c["index"])
    return {
        "name": case["name"],
        "schema": case["schema"],
        "outputs": [c["message"].get("content") or "" for c in choices],
        "finished": [c["finish_reason"] == "stop" for c in choices],
        "tokens": reply["usage"]["completion_tokens"],
        "seconds": time.time() - started,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k3", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--corpus", default=os.path.join(HERE, "schema_corpus.jsonl"))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--max-tokens", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cases = [json.loads(l) for l in open(args.corpus, encoding="utf-8") if l.strip()]
    if args.limit:
        cases = cases[: args.limit]
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    log = open(os.path.join(args.work, "serve.log"), "w")
    proc = subprocess.Popen([args.k3, "serve", "--port", str(port), "--max-pending", "64"],
                            stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, HOME=args.work))
    try:
        wait_ready(base, proc)
        start = time.time()
        results, tokens = [], 0
        with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
            futures = [pool.submit(sample, base, c, args.n, args.max_tokens) for c in cases]
            for i, f in enumerate(futures):
                r = f.result()
                tokens += r.pop("tokens")
                seconds = r.pop("seconds")
                if seconds > 60:
                    print("  slow: %s took %.0f s" % (r["name"], seconds), flush=True)
                results.append(r)
                if (i + 1) % 25 == 0:
                    print("  %d/%d schemas, %d tokens, %.0f s" % (i + 1, len(cases), tokens,
                                                               time.time() - start), flush=True)
        out = os.path.join(args.work, "generations.jsonl")
        with open(out, "w", encoding="utf-8") as f:
            for r in results:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print("sampled %d schemas x %d in %.0f s (%d tokens)" % (len(cases), args.n,
                                                                 time.time() - start, tokens))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return subprocess.call([sys.executable, os.path.join(HERE, "validate.py"), "generations", out])


if __name__ == "__main__":
    sys.exit(main())
