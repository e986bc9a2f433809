#!/usr/bin/env python3
"""The target's own greedy replies, for training and judging its draft (distillation data).

    /usr/bin/python3 tools/train/distill.py --k3 build/release/apps/k3/k3 --target models/k3-demo \
        --data DATA_DIR --out DISTILL_DIR [--train 3000] [--heldout 200] [--concurrency 8]

Starts `k3 serve --model TARGET` and sends every record's prompt (DATA_DIR/{train,heldout}.ids.jsonl,
the exact ids `k3 serve` runs for the chat request) to /v1/completions as token ids, temperature 0,
with logprobs so the reply comes back token by token; each token's text is mapped back to its id
through the target's tokenizer files (ranks are distinct byte strings, special tokens distinct
names), and a reply that stopped ends with the end-of-message id the server stopped on. Writes
DISTILL_DIR/{train,heldout}.ids.jsonl in make_data.py's form ({prompt_ids, completion_ids}: the
completion is now what the target said, not what the data wanted) and links DISTILL_DIR/demo to
the target's tokenizer, so `train.py --data DISTILL_DIR` trains a draft on it.
"""
import argparse
import base64
import concurrent.futures
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from evaluate import wait_ready  # noqa: E402


def vocabulary(folder):
    """-> ({token text: id}, eos id) from tiktoken.model, tokenizer_config.json and config.json."""
    ids = {}
    with open(os.path.join(folder, "tiktoken.model")) as f:
        for line in f:
            b64, rank = line.split()
            try:  # a rank that is not whole UTF-8 cannot be told apart in the reply's text
                ids[base64.b64decode(b64).decode("utf-8")] = int(rank)
            except UnicodeDecodeError:
                pass
    with open(os.path.join(folder, "tokenizer_config.json")) as f:
        for i, tok in json.load(f)["added_tokens_decoder"].items():
            ids[tok["content"]] = int(i)
    with open(os.path.join(folder, "config.json")) as f:
        top = json.load(f)
    return ids, top.get("text_config", top)["eos_token_id"]


def complete(port, model, prompt_ids, max_tokens):
    body = {"model": model, "prompt": prompt_ids, "max_tokens": max_tokens, "temperature": 0, "logprobs": 0}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        choice = json.loads(r.read())["choices"][0]
    return choice["logprobs"]["tokens"], choice["finish_reason"]


def reply_ids(tokens, finish, ids, eos):
    """-> the reply's ids, or None when a token does not map back (a split UTF-8 sequence)."""
    out = [ids.get(t) for t in tokens]
    if any(i is None for i in out):
        return None
    stopped_here = finish == "stop" and (not out or out[-1] != eos)  # the list may carry the stop token
    return out + ([eos] if stopped_here else [])


def distill_split(port, model, rows, ids, eos, max_tokens, concurrency):
    done, unmapped = [], 0
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        jobs = [pool.submit(complete, port, model, r["prompt_ids"], max_tokens) for r in rows]
        for n, (row, job) in enumerate(zip(rows, jobs)):
            reply = reply_ids(*job.result(), ids, eos)
            if reply is None:
                unmapped += 1
            else:
                done.append({"prompt_ids": row["prompt_ids"], "completion_ids": reply})
            if (n + 1) % 250 == 0:
                print(f"  {n + 1}/{len(rows)} replies", flush=True)
    return done, unmapped


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k3", required=True)
    ap.add_argument("--target", required=True, help="the target checkpoint folder")
    ap.add_argument("--data", required=True, help="make_data.py's output folder")
    ap.add_argument("--out", required=True)
    ap.add_argument("--train", type=int, default=3000)
    ap.add_argument("--heldout", type=int, default=200)
    ap.add_argument("--max-tokens", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0, help="k3 serve worker threads (0 = all cores)")
    ap.add_argument("--port", type=int, default=8937)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ids, eos = vocabulary(args.target)
    tok_link = os.path.join(args.out, "demo")
    if not os.path.exists(tok_link):
        os.symlink(os.path.abspath(args.target), tok_link)
    server = subprocess.Popen([args.k3, "--log-level", "warning", "serve", "--model", args.target, "--port",
                               str(args.port), "--threads", str(args.threads)])
    try:
        wait_ready(args.port, server)
        with urllib.request.urlopen(f"http://127.0.0.1:{args.port}/v1/models") as r:
            model = json.loads(r.read())["data"][0]["id"]
        for split, n in (("train", args.train), ("heldout", args.heldout)):
            with open(os.path.join(args.data, f"{split}.ids.jsonl")) as f:
                rows = [json.loads(line) for _, line in zip(range(n), f)]
            done, unmapped = distill_split(args.port, model, rows, ids, eos, args.max_tokens, args.concurrency)
            with open(os.path.join(args.out, f"{split}.ids.jsonl"), "w") as f:
                f.writelines(json.dumps(x) + "\n" for x in done)
            mean = sum(len(x["completion_ids"]) for x in done) / max(1, len(done))
            print(f"{split}: {len(done)} target replies (mean {mean:.0f} tokens), {unmapped} not mappable to ids",
                  flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
