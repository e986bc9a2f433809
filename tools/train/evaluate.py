#!/usr/bin/env python3
"""Scores a trained demo checkpoint on held-out conversations through `k3 serve` (greedy).

    /usr/bin/python3 tools/train/evaluate.py --k3 build/release/apps/k3/k3 --model CKPT \
        --data DATA_DIR/heldout.jsonl [--n 100] [--port 8931]

Starts `k3 serve --model CKPT`, sends each record's request to /v1/chat/completions with
temperature 0, and compares what the server parsed with the record's `expect`:
  tool_calls  the same tool names with the same JSON arguments, in order;
  content     the same text (stripped);
  json        content parses as JSON equal to the expected object.
Prints the rate per kind and overall, and a few failures.
"""
import argparse
import collections
import json
import subprocess
import sys
import time
import urllib.request


def post(port, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def wait_ready(port, proc):
    for _ in range(300):
        if proc.poll() is not None:
            sys.exit("k3 serve exited")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
            return
        except OSError:
            time.sleep(0.2)
    sys.exit("k3 serve did not become ready")


def score(expect, message):
    """-> (passed, what the model produced, short)."""
    if "tool_calls" in expect:
        got = [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"] or "{}")}
               for c in message.get("tool_calls") or []]
        return got == expect["tool_calls"], got
    content = (message.get("content") or "").strip()
    if "json" in expect:
        try:
            return json.loads(content) == expect["json"], content
        except ValueError:
            return False, content
    return content == expect["content"].strip(), content


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k3", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--port", type=int, default=8931)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=256)
    args = ap.parse_args()
    records = [json.loads(x) for x in open(args.data)][:args.n]
    proc = subprocess.Popen([args.k3, "serve", "--model", args.model, "--port", str(args.port), "--threads",
                             str(args.threads)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    totals, fails = collections.defaultdict(lambda: [0, 0]), []
    try:
        wait_ready(args.port, proc)
        for r in records:
            body = dict(r["request"], temperature=0, max_tokens=args.max_tokens)
            try:
                message = post(args.port, body)["choices"][0]["message"]
                ok, got = score(r["expect"], message)
            except Exception as e:  # a refused or failed request counts as a miss
                ok, got = False, f"error: {e}"
            totals[r["kind"]][0] += ok
            totals[r["kind"]][1] += 1
            if not ok and len(fails) < 5:
                fails.append((r["kind"], r["expect"], got))
    finally:
        proc.terminate()
        proc.wait()
    passed = sum(v[0] for v in totals.values())
    for kind, (ok, n) in sorted(totals.items()):
        print(f"{kind:8s} {ok}/{n}")
    print(f"overall  {passed}/{len(records)} ({100.0 * passed / max(1, len(records)):.1f}%)")
    for kind, want, got in fails:
        print(f"miss [{kind}] expected {json.dumps(want)[:160]}\n               got {json.dumps(got)[:160]}")


if __name__ == "__main__":
    main()
