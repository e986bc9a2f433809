#!/usr/bin/env python3
"""Checks of the draft tooling: distill.py, draft_agreement.py and the committed draft.

    /usr/bin/python3 tools/train/test_draft.py [--k3 build/release/apps/k3/k3 --work DIR]

Without --k3: draft_agreement's chain statistics against brute force on random agreement lists
(alpha_k as the share of positions whose next k guesses all agree; the replayed greedy chain
speculation as a step-by-step simulation of draft, verify, keep the agreeing prefix plus the
target's token).
With --k3: make_data.py renders a few held-out conversations; distill.py sends them through
`k3 serve --model models/k3-demo`, and each reply must equal `k3 generate --ids` on the same
prompt (the data is the target's greedy output, ids exact); draft_agreement.py on them with the
committed draft (models/k3-demo-draft) must find the target's float32 forward reproducing the
replies (>= 99 % of tokens: near-ties may flip) and the draft agreeing on the first guess at least
MIN_ALPHA1 of the time (a random-weight draft agrees on almost none); so must the committed EAGLE-3
head (models/k3-demo-eagle3, train_eagle3.py --eval) on the same replies.
"""
import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import draft_agreement as DA  # noqa: E402

MIN_ALPHA1 = 0.5
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def simulate(m, chain):
    """Greedy chain speculation step by step: -> target verification steps."""
    i, steps = 0, 0
    while i < len(m):
        k = 0
        while k < chain and i + k < len(m) and m[i + k]:
            k += 1
        i += k + 1  # the accepted guesses, then the target's own token
        steps += 1
    return steps


def math_checks():
    rng = random.Random(5)
    for _ in range(200):
        m = [rng.random() < rng.choice([0.2, 0.7, 0.95]) for _ in range(rng.randint(1, 40))]
        for chain in (1, 3, 8):
            check(DA.replay(m, chain) == simulate(m, chain), f"replay {m} chain {chain}")
        s = DA.summarize([m], 8)
        for k in range(1, 9):
            want = sum(all(m[i:i + k]) and i + k <= len(m) for i in range(len(m))) / len(m)
            check(abs(s["alpha"][k - 1] - want) < 1e-12, f"alpha_{k} of {m}")
    check(DA.summarize([[True] * 10], 2)["tokens_per_step"] == [10 / 5, 10 / 4], "all-agree tokens per step")


def live_checks(k3, work):
    data, out = os.path.join(work, "data"), os.path.join(work, "distill")
    py = sys.executable
    subprocess.run([py, os.path.join(HERE, "make_data.py"), "--k3", k3, "--out", data, "--train", "2",
                    "--heldout", "12", "--seed", "3"], check=True, capture_output=True)
    target, draft = os.path.join(ROOT, "models", "k3-demo"), os.path.join(ROOT, "models", "k3-demo-draft")
    subprocess.run([py, os.path.join(HERE, "distill.py"), "--k3", k3, "--target", target, "--data", data,
                    "--out", out, "--train", "2", "--heldout", "12", "--port", "8941"], check=True)
    with open(os.path.join(out, "heldout.ids.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    check(len(rows) == 12, f"{len(rows)} distilled held-out replies, want 12")
    for r in rows[:4]:
        got = subprocess.run([k3, "--log-level", "warning", "generate", "--model", target, "--prompt-ids",
                              " ".join(map(str, r["prompt_ids"])), "--ids", "--max-tokens", "400"],
                             capture_output=True, text=True, check=True).stdout.split()
        check([int(x) for x in got] == r["completion_ids"], "a distilled reply differs from k3 generate's")
    stats = os.path.join(work, "agreement.json")
    subprocess.run([py, os.path.join(HERE, "draft_agreement.py"), "--draft", draft, "--target", target,
                    "--data", out, "--n", "12", "--json", stats], check=True)
    with open(stats) as f:
        s = json.load(f)
    check(s["target_reproduces"] >= 0.99, f"target reproduces {s['target_reproduces']:.3f} of its replies")
    check(s["alpha"][0] >= MIN_ALPHA1, f"draft alpha_1 {s['alpha'][0]:.3f} < {MIN_ALPHA1}")
    head_stats = os.path.join(work, "eagle3_agreement.json")
    subprocess.run([py, os.path.join(HERE, "train_eagle3.py"), "--target", target, "--data", out, "--eval",
                    os.path.join(ROOT, "models", "k3-demo-eagle3"), "--n", "12", "--json", head_stats], check=True)
    with open(head_stats) as f:
        s = json.load(f)
    check(s["alpha"][0] >= MIN_ALPHA1, f"EAGLE-3 head alpha_1 {s['alpha'][0]:.3f} < {MIN_ALPHA1}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k3", default=None)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    math_checks()
    if args.k3:
        os.makedirs(args.work, exist_ok=True)
        live_checks(os.path.abspath(args.k3), args.work)
    print("PASS" if not FAILURES else f"{len(FAILURES)} FAILURES")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
