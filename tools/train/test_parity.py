#!/usr/bin/env python3
"""The training code's K3 against the float64 NumPy reference and the C++ runtime.

    /usr/bin/python3 tools/train/test_parity.py --work DIR [--k3 build/release/apps/k3/k3]

Four checkpoints:
  ref     reference/make_checkpoint.py --family k3 --seed 1 (6 layers, 16 experts top-4, MXFP4);
          read by checkpoint.load, so this checks model.py's forward against kimi_ref.py on weights
          model.py did not write.
  export  a model.py model of the training shape (tiny_sizes() with the demo's 1024-token
          vocabulary), randomly initialised (init_weights parity=True) and written by
          checkpoint.export with MXFP4 experts; this checks the writer and the tensor names.
  trained the committed demo model (models/k3-demo, or --trained DIR): the shipped weights, as
          `k3 serve` runs them, give the reference's logits in model.py and in `k3 generate`.
  draft   the committed draft of the demo model (models/k3-demo-draft, or --draft DIR), likewise.
For each: (a) model.py in float64 (chunked KDA, chunk 16 and 5, and the recurrent form) gives the
reference's prompt logits and greedy decode logits within 1e-9 of the largest |logit| and the same
greedy tokens; (b) `k3 generate --ids --ignore-eos --kv-cache-dtype fp32` prints the same tokens
and its float32 logits are within 1e-4 of each row's largest |logit|; (c) for export, reading the
written folder back gives the same tensors (MXFP4 re-packing of dequantised values is exact).
Prints the measured errors; exits non-zero on any failure.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import checkpoint  # noqa: E402
from model import init_weights  # noqa: E402
from sizes import tiny_sizes  # noqa: E402

PY = sys.executable
PROMPT = [1, 5, 9, 13, 100, 200, 300, 400, 17, 33, 65, 129, 257, 511, 3, 4, 77, 78, 79, 80, 250, 251, 42, 43]
NEW = 12
TOL_F64, TOL_K3 = 1e-9, 1e-4


def reference(folder, work):
    out = os.path.join(work, "ref")
    subprocess.run([PY, os.path.join(ROOT, "reference", "kimi_ref.py"), "--model", folder, "--prompt-ids",
                    " ".join(map(str, PROMPT)), "--max-new-tokens", str(NEW), "--out", out],
                   check=True, capture_output=True)
    meta = json.load(open(out + ".json"))
    pre = np.fromfile(out + ".prefill.f64").reshape(len(PROMPT), -1)
    dec = np.fromfile(out + ".decode.f64").reshape(NEW, -1)
    return pre, dec, meta


def rel_err(got, want):
    return float((np.abs(got - want).max(axis=-1) / np.abs(want).max(axis=-1)).max())


@torch.no_grad()
def torch_greedy(model, mode, chunk):
    """-> (prompt logits [T,V], decode rows [NEW,V], generated ids); recomputes each step."""
    model.set_kda(mode, chunk)
    seq, rows = list(PROMPT), []
    pre = None
    for step in range(NEW):
        logits = model(torch.tensor([seq]))[0].numpy()
        if step == 0:
            pre = logits
        rows.append(logits[-1])
        seq.append(int(np.argmax(logits[-1])))
    return pre, np.array(rows), seq[len(PROMPT):]


def k3_generate(k3, folder, work):
    dump = os.path.join(work, "k3.logits.f32")
    out = subprocess.run([k3, "generate", "--model", folder, "--prompt-ids", " ".join(map(str, PROMPT)),
                          "--max-tokens", str(NEW), "--ids", "--ignore-eos", "--dump-logits", dump,
                          "--kv-cache-dtype", "fp32", "--threads", "1"],
                         check=True, capture_output=True, text=True).stdout
    return [int(x) for x in out.split()], np.fromfile(dump, dtype=np.float32).reshape(NEW, -1)


def check_folder(name, folder, work, k3):
    failures = []
    pre, dec, meta = reference(folder, work)
    gap = min(g for g in meta["router_min_gap"] + meta["prefill_router_min_gap"] if g is not None)
    print(f"[{name}] reference: {meta['generated_ids']} (min router gap {gap:.2g}, "
          f"min top-1 margin {min(meta['decode_top1_margin']):.2g})")
    model, _ = checkpoint.load(folder, torch.float64)
    for mode, chunk in (("chunked", 16), ("chunked", 5), ("recurrent", 0)):
        t_pre, t_dec, t_ids = torch_greedy(model, mode, chunk)
        e_pre, e_dec = rel_err(t_pre, pre), rel_err(t_dec, dec)
        ok = t_ids == meta["generated_ids"] and max(e_pre, e_dec) <= TOL_F64
        print(f"[{name}] model.py {mode}{chunk or ''}: prompt logits {e_pre:.2g}, decode logits {e_dec:.2g} "
              f"(relative to max |logit|), tokens {'identical' if t_ids == meta['generated_ids'] else t_ids}")
        if not ok:
            failures.append(f"{name}: model.py {mode} differs from the reference")
    if k3:
        ids, logits = k3_generate(k3, folder, work)
        e = rel_err(logits.astype(np.float64), dec)
        print(f"[{name}] k3 generate: tokens {'identical' if ids == meta['generated_ids'] else ids}, "
              f"logits {e:.2g}")
        if ids != meta["generated_ids"] or e > TOL_K3:
            failures.append(f"{name}: k3 generate differs from the reference")
    return failures


def export_case(work):
    folder = os.path.join(work, "export")
    top = checkpoint.make_config(dict(tiny_sizes(), vocab=1024, bos=768, eos=770, pad=1023))
    model = checkpoint.K3Model(top["text_config"])
    init_weights(model, seed=7, parity=True)
    written = checkpoint.export(model, folder, top)
    again = checkpoint.tensors_of(checkpoint.load(folder, torch.float64)[0])
    same = written.keys() == again.keys() and all(
        written[n][0] == again[n][0] and np.array_equal(written[n][1], again[n][1]) for n in written)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"[export] {n_params} parameters, {os.path.getsize(os.path.join(folder, 'model.safetensors'))} bytes; "
          f"read back {'identical' if same else 'DIFFERENT'}")
    return folder, ([] if same else ["export: the written checkpoint does not read back identically"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True)
    ap.add_argument("--k3", default=None, help="the k3 binary (omit to skip the runtime check)")
    ap.add_argument("--trained", default=os.path.join(ROOT, "models", "k3-demo"),
                    help="the trained checkpoint to check ('' to skip)")
    ap.add_argument("--draft", default=os.path.join(ROOT, "models", "k3-demo-draft"),
                    help="the trained draft to check ('' to skip)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ref_dir = os.path.join(args.work, "ref_ckpt")
    os.makedirs(args.work, exist_ok=True)
    subprocess.run([PY, os.path.join(ROOT, "reference", "make_checkpoint.py"), "--family", "k3", "--seed", "1",
                    "--out", ref_dir], check=True, capture_output=True)
    failures = check_folder("ref", ref_dir, args.work, args.k3)
    folder, bad = export_case(args.work)
    failures += bad + check_folder("export", folder, args.work, args.k3)
    if args.trained:
        failures += check_folder("trained", args.trained, args.work, args.k3)
    if args.draft:
        failures += check_folder("draft", args.draft, args.work, args.k3)
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} FAILURES")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
