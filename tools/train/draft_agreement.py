#!/usr/bin/env python3
"""How often a draft's greedy tokens agree with its target's, per position of a draft chain.

    /usr/bin/python3 tools/train/draft_agreement.py --draft CKPT --data DISTILL_DIR [--n 200] \
        [--target CKPT] [--max-chain 8] [--json OUT]

DISTILL_DIR/heldout.ids.jsonl holds held-out prompts with the target's own greedy replies
(distill.py, through `k3 serve`). The draft reads prompt + reply once (teacher forcing: exactly
what a chain draft sees while its guesses are being accepted) and m_i says whether its argmax at
reply position i equals the target's token. For a chain of length k drafted at position i, the
first k guesses are all accepted iff m_i .. m_{i+k-1} all hold, so
  alpha_k   = mean over positions i of [m_i ... m_{i+k-1}]   (k = 1..max-chain; the chain runs
              off the reply's end count as misses),
  cond_k    = alpha_k / alpha_{k-1}: acceptance of the k-th guess once the first k-1 held,
  tokens/step(L) = greedy chain speculation replayed over each reply with chain length L: at
              position i the target verifies L guesses, keeps the agreeing prefix r = min(run, L)
              and adds its own next token, i += r + 1; = reply tokens / target verification steps.
With --target the target's float32 forward (checkpoint.load, model.py) must reproduce the served
replies' argmax, which checks that the data is the target's.
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checkpoint  # noqa: E402


@torch.no_grad()
def matches(model, prompt, reply):
    """-> bool list: the model's argmax at each reply position equals the reply's token."""
    ids = torch.tensor([prompt + reply])
    logits = model(ids, torch.ones_like(ids, dtype=torch.bool))[0]
    guess = logits[len(prompt) - 1:len(prompt) + len(reply) - 1].argmax(-1)
    return (guess == torch.tensor(reply)).tolist()


def run_lengths(m):
    """run[i] = consecutive True values from i on."""
    run, n = [0] * (len(m) + 1), len(m)
    for i in range(n - 1, -1, -1):
        run[i] = run[i + 1] + 1 if m[i] else 0
    return run[:n]


def replay(m, chain):
    """-> target verification steps of greedy chain speculation over one reply."""
    return replay_runs(run_lengths(m), chain)


def replay_runs(run, chain):
    """The same from run[i] = how many guesses of the chain drafted at reply position i hold."""
    i, steps = 0, 0
    while i < len(run):
        i += min(run[i], chain) + 1
        steps += 1
    return steps


def summarize(all_m, max_chain):
    return summarize_runs([run_lengths(m) for m in all_m], max_chain)


def summarize_runs(all_runs, max_chain):
    """all_runs: per reply, run[i] for each of its positions (a draft that reads tokens only has
    run[i] = consecutive agreements from i; a head that chains its own hidden states its own)."""
    runs = [r for run in all_runs for r in run]
    alpha = [sum(r >= k for r in runs) / len(runs) for k in range(1, max_chain + 1)]
    cond = [alpha[0]] + [alpha[k] / alpha[k - 1] if alpha[k - 1] else 0.0 for k in range(1, max_chain)]
    tokens = len(runs)
    per_step = [tokens / sum(replay_runs(run, L) for run in all_runs) for L in range(1, max_chain + 1)]
    return {"replies": len(all_runs), "tokens": tokens, "alpha": alpha, "cond": cond, "tokens_per_step": per_step}


def print_summary(out, max_chain):
    print(f"{out['replies']} held-out replies, {out['tokens']} target tokens")
    print("chain position k   " + " ".join(f"{k:>6d}" for k in range(1, max_chain + 1)))
    print("alpha_k (all k ok) " + " ".join(f"{a:6.3f}" for a in out["alpha"]))
    print("cond_k (k-th ok)   " + " ".join(f"{c:6.3f}" for c in out["cond"]))
    print("tokens/step (L=k)  " + " ".join(f"{t:6.2f}" for t in out["tokens_per_step"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draft", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--target", default=None)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--max-chain", type=int, default=8)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    with open(os.path.join(args.data, "heldout.ids.jsonl")) as f:
        rows = [json.loads(line) for _, line in zip(range(args.n), f)]
    draft, _ = checkpoint.load(args.draft)
    draft.eval()
    all_m = [matches(draft, r["prompt_ids"], r["completion_ids"]) for r in rows]
    out = summarize(all_m, args.max_chain)
    if args.target:
        target, _ = checkpoint.load(args.target)
        target.eval()
        same = [matches(target, r["prompt_ids"], r["completion_ids"]) for r in rows]
        out["target_reproduces"] = sum(map(sum, same)) / sum(map(len, same))
        print(f"target float32 forward reproduces {out['target_reproduces']:.2%} of the served reply tokens")
    print_summary(out, args.max_chain)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
