#!/usr/bin/env python3
"""train.py end to end in seconds (CI does not train; this checks the loop, QAT, export, resume).

    /usr/bin/python3 tools/train/test_train.py --k3 build/release/apps/k3/k3 --work DIR

A few dozen conversations (make_data.py), a narrow model (--sizes), 4 steps with MXFP4 QAT from
step 2, then --resume to step 6.  The exported folder must load in `k3 generate`, whose greedy
tokens on a held-out prompt must equal model.py's (float64) on the same checkpoint.  Then a warm
restart (--init) at learning rate 0 must export the very same values (the export's values load
and re-export exactly), from xz-compressed training data that must read as the plain file does,
and plot_loss.py must put the two runs of the appended log on one step axis.  Last, a vocabulary
learned from the data (make_vocab.py, `k3 train-vocab`) renders the same records in fewer tokens, and
a model trained on it (--tokenizer) exports with that tokenizer and generates as model.py does.
"""
import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checkpoint  # noqa: E402
import make_vocab  # noqa: E402
import plot_loss  # noqa: E402
import train as train_py  # noqa: E402

SMALL = {"hidden": 64, "layers": 4, "kda_heads": 2, "mla_heads": 2, "q_lora": 32, "kv_lora": 32,
         "dense_inter": 128, "experts": 4, "moe_inter": 64, "latent": 32}


def train(data, out, steps, resume=None, extra=()):
    cmd = [sys.executable, os.path.join(HERE, "train.py"), "--data", data, "--out", out, "--steps", str(steps),
           "--warmup", "2", "--qat-from", "0.5", "--batch-tokens", "2048", "--eval-rows", "4", "--log-every", "1",
           "--sizes", json.dumps(SMALL), "--seed", "3", *extra]
    subprocess.run(cmd + (["--resume", resume] if resume else []), check=True, capture_output=True)
    return [json.loads(x) for x in open(out + ".log.jsonl")]


def warm_restart(data, out, work):
    """--init from `out` at learning rate 0 (no router-bias moves) over xz data -> failures."""
    failures = []
    xz = os.path.join(work, "data_xz")
    shutil.rmtree(xz, ignore_errors=True)  # a re-run in the same work folder starts clean
    shutil.copytree(data, xz)
    plain = os.path.join(xz, "train.ids.jsonl")
    with open(plain, "rb") as src, lzma.open(plain + ".xz", "wb") as dst:
        dst.write(src.read())
    os.remove(plain)
    a, b = train_py.load_split(os.path.join(data, "train.ids.jsonl"), 2048), train_py.load_split(plain, 2048)
    if a[1] != b[1] or [(list(x), n) for x, n in a[0]] != [(list(x), n) for x, n in b[0]]:
        failures.append("train.ids.jsonl.xz reads differently from train.ids.jsonl")
    again = os.path.join(work, "again")
    train(xz, again, 1, extra=["--init", out, "--lr", "0", "--bias-rate", "0"])
    # Values, not bytes: an MXFP4 nibble may flip between -0 and +0 on the way.
    before, after = checkpoint.load(out, torch.float64)[0].state_dict(), checkpoint.load(again, torch.float64)[0].state_dict()
    if any(not torch.equal(before[k], after[k]) for k in before):
        failures.append("--init at learning rate 0 did not re-export the values it started from")
    both = os.path.join(work, "both.log.jsonl")
    with open(both, "w") as f:
        f.write(open(out + ".log.jsonl").read() + open(again + ".log.jsonl").read())
    rows, restarts, final = plot_loss.read(both)
    if restarts != [6] or rows[-1]["step"] != 6 or final["steps"] != 7:
        failures.append(f"plot_loss.read of two runs: restarts {restarts}, last step {rows[-1]['step']}, "
                        f"final steps {final['steps']} (expected [6], 6, 7)")
    print(f"warm restart: {'exact' if not failures else 'FAILED'}")
    return failures


def greedy_same(k3, ckpt, prompt, n):
    """Whether `k3 generate` and model.py (float64) give the same n greedy tokens after prompt."""
    got = subprocess.run([k3, "generate", "--model", ckpt, "--prompt-ids", " ".join(map(str, prompt)),
                          "--max-tokens", str(n), "--ids", "--ignore-eos", "--kv-cache-dtype", "fp32", "--threads", "1"],
                         check=True, capture_output=True, text=True).stdout.split()
    model, _ = checkpoint.load(ckpt, torch.float64)
    seq = list(prompt)
    with torch.no_grad():
        for _ in range(n):
            seq.append(int(np.argmax(model(torch.tensor([seq]))[0, -1].numpy())))
    return [int(x) for x in got] == seq[len(prompt):]


def learned_vocabulary(k3, data, work):
    """make_vocab.py on the data, the same records rendered with it, a short run on them -> failures."""
    failures, vocab, data_v = [], os.path.join(work, "vocab"), os.path.join(work, "data_vocab")
    subprocess.run([sys.executable, os.path.join(HERE, "make_vocab.py"), "--k3", k3, "--data", data, "--out", vocab,
                    "--vocab-size", "1024"], check=True, capture_output=True)
    subprocess.run([sys.executable, os.path.join(HERE, "make_data.py"), "--k3", k3, "--out", data_v, "--model", vocab,
                    "--train", "40", "--heldout", "4"], check=True, capture_output=True)
    if open(os.path.join(data, "train.jsonl")).read() != open(os.path.join(data_v, "train.jsonl")).read():
        failures.append("--model changed the records, not only their ids")
    count = lambda d: sum(len(r["prompt_ids"]) + len(r["completion_ids"])  # noqa: E731
                          for r in map(json.loads, open(os.path.join(d, "train.ids.jsonl"))))
    before, after = count(data), count(data_v)
    if not after < 0.8 * before:
        failures.append(f"the learned vocabulary did not shorten the data: {before} -> {after} tokens")
    out = os.path.join(work, "ckpt_vocab")
    train(data_v, out, 2, extra=["--tokenizer", vocab])
    if open(os.path.join(out, "tiktoken.model")).read() != open(os.path.join(vocab, "tiktoken.model")).read():
        failures.append("the export does not carry the learned tokenizer")
    prompt = json.loads(open(os.path.join(data_v, "heldout.ids.jsonl")).readline())["prompt_ids"]
    if not greedy_same(k3, out, prompt, 8):
        failures.append("k3 generate and model.py differ on the learned-vocabulary export")
    plain, _ = make_vocab.corpus_text(k3, data, 40)
    neutral, _ = make_vocab.corpus_text(k3, data, 40, neutral_entities=True)
    entity = make_vocab.entity_pattern()
    if not entity.search(plain) or entity.search(neutral) or "get_weather" not in neutral:
        failures.append("--neutral-entities must cut the pools' words (and only those) out of the corpus")
    print(f"learned vocabulary: {before} -> {after} tokens for the same 40 conversations; "
          f"{'trains and generates' if not failures else 'FAILED'}")
    return failures


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
    same = greedy_same(args.k3, out, prompt, 16)
    print(f"k3 generate on the trained export: {'same tokens as model.py' if same else 'DIFFERENT tokens'}")
    if not same:
        failures.append("k3 generate and model.py differ on the exported checkpoint")
    failures += warm_restart(data, out, args.work)
    failures += learned_vocabulary(args.k3, data, args.work)
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} FAILURES")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
