#!/usr/bin/env python3
"""Writes the inputs of the C++ model tests: for each family a tiny checkpoint and the float64
reference outputs on a fixed prompt.

    /usr/bin/python3 reference/make_parity_refs.py OUT_DIR

OUT_DIR/<family>/model/            the checkpoint (make_checkpoint.py)
OUT_DIR/<family>/ref.*             exact path: prefill logits, 64 greedy decode steps, metadata
OUT_DIR/<family>/ref_mxfp8.*       the MXFP8-expert emulation (prefill logits and one step)
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Seeds whose greedy continuations have no logit near-ties (margins >= 1e-2 across 64 steps).
FAMILIES = {"k3": 1, "kimi_linear": 1, "k2": 1, "k25": 1}
PROMPT = ("1 5 9 13 100 200 300 400 17 33 65 129 257 511 3 4 "
          "77 78 79 80 250 251 252 253 42 43 44 45 490 300 12 8")
NEW_TOKENS = 64


def run(args):
    subprocess.run([sys.executable] + args, check=True)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for family, seed in FAMILIES.items():
        start = time.time()
        family_dir = os.path.join(out, family)
        model = os.path.join(family_dir, "model")
        os.makedirs(family_dir, exist_ok=True)
        run([os.path.join(HERE, "make_checkpoint.py"), "--family", family, "--seed", str(seed),
             "--out", model])
        run([os.path.join(HERE, "kimi_ref.py"), "--model", model, "--prompt-ids", PROMPT,
             "--max-new-tokens", str(NEW_TOKENS), "--out", os.path.join(family_dir, "ref")])
        run([os.path.join(HERE, "kimi_ref.py"), "--model", model, "--prompt-ids", PROMPT,
             "--max-new-tokens", "1", "--mxfp8-experts",
             "--out", os.path.join(family_dir, "ref_mxfp8")])
        print(f"{family}: checkpoint + reference outputs in {time.time() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
