#!/usr/bin/env python3
"""train.py end to end in seconds (CI does not train; this checks the loop, QAT, export, resume).

    /usr/bin/python3 tools/train/test_train.py --k3 build/release/apps/k3/k3 --work DIR

A few dozen conversations (make_data.py), a narrow model (--sizes), 4 steps with MXFP4 QAT from
step 2, then --resume to step 6.  The exported folder must load in `k3 generate`, whose greedy
tokens on a held-out prompt must equal model.py's (float64) on the same checkpoint.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checkpoint  # noqa: E402

SMALL = {"hidden": 64, "layers": 4, "kda_heads": 2, "mla_heads": 2, "q_lora": 32, "kv_lora": 32,
         "dense_inter": 128, "experts": 4, "moe_inter": 64, "latent": 32}


def train(data, out, steps, resume=None):
    cmd = [sys.executable, os.path.join(HERE, "train.py"), "--data", data, "--out", out, "--steps", str(steps),
           "--warmup", "2", "--qat-from", "0.5", "--batch-tokens", "2048", "--eval-rows", "4", "--log-every", "1",
           "--sizes", json.dumps(SMALL), "--seed", "3"]
    subprocess.run(cmd + (["--resume", resume] if resume else []), check=True, capture_output=True)
    return [json.loads(x) for x in open(out + ".log.jsonl")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k3", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    data, out = os.path.join(args.work, "data"), os.path.join(args.work, "ckpt")
    subprocess.run([sys.executable, os.path.join(HERE, "make_data.py"), "--k3", args.k3, "--out", data,
                    "--train", "40", "--heldout", "4"], check=True, capture_output=True)
    first = train(data, out, 4)
    resumed = train(data, out, 6, resume=out + ".train_state.pt")
    failures = []
    # --resume appends to the log: one file holds the whole run.
    steps = [r["step"] for r in first if "step" in r], [r["step"] for r in resumed if "step" in r]
    if steps != ([0, 1, 2, 3], [0, 1, 2, 3, 4, 5]):
        failures.append(f"logged steps {steps}, expected 0..3, then 0..5 in the same log after --resume")
    if [r["qat"] for r in first if "step" in r] != [False, False, True, True]:
        failures.append("QAT must start at step 2 (--qat-from 0.5 of 4)")
    final = resumed[-1]
    print(f"train: losses {[r['loss'] for r in first + resumed if 'loss' in r]}; held-out completion loss "
          f"{final['heldout_completion_loss_exact']} exact, {final['heldout_completion_loss_mxfp4']} MXFP4")
    prompt = json.loads(open(os.path.join(data, "heldout.ids.jsonl")).readline())["prompt_ids"]
    n = 16
    got = subprocess.run([args.k3, "generate", "--model", out, "--prompt-ids", " ".join(map(str, prompt)),
                          "--max-tokens", str(n), "--ids", "--ignore-eos", "--kv-cache-dtype", "fp32", "--threads", "1"],
                         check=True, capture_output=True, text=True).stdout.split()
    model, _ = checkpoint.load(out, torch.float64)
    seq = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            seq.append(int(np.argmax(model(torch.tensor([seq]))[0, -1].numpy())))
    same = [int(x) for x in got] == seq[len(prompt):]
    print(f"k3 generate on the trained export: {'same tokens as model.py' if same else 'DIFFERENT tokens'}")
    if not same:
        failures.append("k3 generate and model.py differ on the exported checkpoint")
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} FAILURES")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
