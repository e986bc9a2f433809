#!/usr/bin/env python3
"""How well a checkpoint copies words it cannot have memorised, through `k3 serve` (greedy).

    /usr/bin/python3 tools/train/copy_probe.py --k3 build/release/apps/k3/k3 --model CKPT [--n 40]

The held-out failures of the demo model are copying failures (a city or a name comes out as its
first letters and a made-up continuation), so this probes the copying circuit alone, with the
user's words and nothing else to go by:
  repeat   "Repeat after me: <3-6 random-letter words>"      -> exactly those words;
  recall   "My code is <Random>. What is my code?"            -> "Your code is <Random>.";
  entity   "Repeat after me: <a held-out city or full name>"  -> exactly it (words never trained on).
Prints each probe's exact-match rate, the mean share of the copied part right from its first
character up to the first mistake, and a few replies. The phrasings are training phrasings, so a
miss is the copy, not the instruction.
"""
import argparse
import random
import subprocess
import sys

from evaluate import post, wait_ready
import data_pools as P


def probes(rng, n):
    """-> {probe: [(question, wanted answer, the answer's fixed frame before the copy)]}, seeded."""
    words = lambda: " ".join(P.letters(rng, 2, 7) for _ in range(rng.randint(3, 6)))
    codes = [P.letters(rng, 3, 8).capitalize() for _ in range(n)]
    held = P.split(P.CITIES, True) + [f"{a} {b}" for a, b in zip(P.split(P.NAMES, True), P.split(P.SURNAMES, True))]
    return {"repeat": [(f"Repeat after me: {w}", w, "") for w in (words() for _ in range(n))],
            "recall": [(f"My code is {c}. What is my code?", f"Your code is {c}.", "Your code is ") for c in codes],
            "entity": [(f"Repeat after me: {e}", e, "") for e in rng.sample(held, min(n, len(held)))]}


def copied_share(got, want, frame):
    """The share of the copied part (want after its fixed frame) that got reproduces from its start."""
    if not got.startswith(frame):
        return 0.0
    same = 0
    for a, b in zip(got[len(frame):], want[len(frame):]):
        if a != b:
            break
        same += 1
    return same / max(1, len(want) - len(frame))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k3", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--n", type=int, default=40, help="prompts per probe")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--port", type=int, default=8933)
    args = ap.parse_args()
    proc = subprocess.Popen([args.k3, "serve", "--model", args.model, "--port", str(args.port), "--threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(args.port, proc)
        for name, cases in probes(random.Random(args.seed), args.n).items():
            exact, share, shown = 0, 0.0, []
            for question, want, frame in cases:
                body = {"messages": [{"role": "user", "content": question}], "temperature": 0, "max_tokens": 96}
                got = (post(args.port, body)["choices"][0]["message"].get("content") or "").strip()
                exact += got == want
                share += copied_share(got, want, frame)
                if got != want and len(shown) < 3:
                    shown.append(f"{want!r} -> {got!r}")
            rate = 100 * share / len(cases)
            print(f"{name:7s} exact {exact}/{len(cases)}  copied characters right from the start {rate:.0f} %"
                  + "".join(f"\n          {s}" for s in shown))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())
