#!/usr/bin/python3
"""Sampled generations over the schema corpus from the random-weight demo model.

Default: `k3 sample` (the engine on the embedded demo checkpoint, each schema as a bare JSON
grammar, n=20 at temperature 1.0). With --via-http: `k3 serve` on the same checkpoint, one chat
request per schema with response_format json_schema (strict), n=20, temperature 1.0, thinking
disabled (Kimi's K3 chat syntax around the JSON; slower: the prompt carries the schema).
Either way the outputs go to a generations file that validate.py checks with jsonschema (Draft
2020-12): every output must have finished by itself (EOS / finish_reason "stop"), be compact and
valid.

    sample_corpus.py --k3 PATH/TO/k3 --work DIR [--corpus FILE] [--n 20] [--limit N] [--every K]
                     [--max-tokens M] [--via-http]
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
    ap.add_argument("--every", type=int, default=1, help="only every K-th schema (subset runs)")
    ap.add_argument("--max-tokens", type=int, default=3000)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--via-http", action="store_true")
    ap.add_argument("--max-unfinished", default="0", help="fraction of outputs allowed to be cut")
    args = ap.parse_args()
    if not args.via_http:
        os.makedirs(args.work, exist_ok=True)
        out = os.path.join(args.work, "generations.jsonl")
        start = time.time()
        cmd = [args.k3, "sample", "--schemas", args.corpus, "--out", out, "--n", str(args.n),
               "--max-tokens", str(args.max_tokens), "--every", str(args.every),
               "--limit", str(args.limit)]
        if subprocess.call(cmd, env=dict(os.environ, HOME=args.work)) != 0:
            return 1
        print("k3 sample took %.0f s" % (time.time() - start))
        return subprocess.call([sys.executable, os.path.join(HERE, "validate.py"), "generations", out,
                                "--max-unfinished", args.max_unfinished])
    os.makedirs(args.work, exist_ok=True)
    cases = [json.loads(l) for l in open(args.corpus, encoding="utf-8") if l.strip()]
    cases = cases[:: args.every]
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
