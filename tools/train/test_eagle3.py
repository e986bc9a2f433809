#!/usr/bin/env python3
"""Checks of the EAGLE-3 head (eagle3.py, train_eagle3.py) on the committed target.

    /usr/bin/python3 tools/train/test_eagle3.py

- The training-time test (Eagle3Head.unroll: every anchor's chain at once under the cache/diagonal
  mask) equals drafting one token at a time with a growing cache, as an engine does (float64,
  random head, random sequences, every anchor and step).
- chain_runs (the agreement measure) equals a real greedy chain draft replayed against the
  sequence: the draft feeds its own guesses and stops at the first miss.
- One draft step from the exported file, computed in float64 numpy from the tensors by name
  (the published layout's meaning: concat order, norms, residuals, SiLU GLU, d2t), equals the
  module's.
- The exported file has the published names, shapes and dtypes (BF16 weights, I64 d2t, BOOL t2d),
  d2t and t2d describe the same ids, and the load round trip is exact.
(test_draft.py --k3 measures the committed head, models/k3-demo-eagle3, on live replies.)
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import checkpoint  # noqa: E402
import eagle3  # noqa: E402
import k3io  # noqa: E402
import train_eagle3 as TE  # noqa: E402

FAILURES = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what)
    if not cond:
        FAILURES.append(what)


def random_head(top, seed, vocab=64):
    torch.manual_seed(seed)
    head = eagle3.Eagle3Head(eagle3.head_config(top["text_config"], vocab, heads=2, head_dim=32, intermediate=96))
    with torch.no_grad():
        for p in head.parameters():
            p.normal_(0.0, 1.0 / p.shape[-1] ** 0.5 if p.dim() > 1 else 1.0)
            if p.dim() == 1:
                p.uniform_(0.5, 1.5)
    head.set_vocab(sorted(torch.randperm(top["text_config"]["vocab_size"])[:vocab].tolist()))
    return head


def sequential(head, embed, feats, ids, anchor, steps, own=False):
    """Drafting as an engine does: the cache holds step-0 entries of rows <= anchor, then each
    step appends its own.  own: feed the draft's guesses (else the sequence's tokens).
    -> (logits per step, guessed target ids per step)."""
    fused = head.fc(feats[0])
    cache_k, cache_v = [], []
    for s in range(anchor + 1):
        _, k, v = head.qkv(embed(ids[:, s + 1:s + 2]), fused[None, s:s + 1], torch.tensor([s + 1]))
        cache_k.append(k)
        cache_v.append(v)
    hid, tok, logits, guesses = fused[None, anchor:anchor + 1], ids[:, anchor + 1:anchor + 2], [], []
    for k in range(steps):
        q, kk, v = head.qkv(embed(tok), hid, torch.tensor([anchor + 1 + k]))
        if k > 0:
            cache_k.append(kk)
            cache_v.append(v)
        kc, vc = torch.cat(cache_k, 2), torch.cat(cache_v, 2)
        p = torch.softmax(q @ kc.transpose(-1, -2) / head.hd ** 0.5, -1)
        hid = head.finish(hid, p @ vc)
        logits.append(head.logits(hid)[0, 0])
        guesses.append(int(head.hot()[logits[-1].argmax()]))
        nxt = anchor + 2 + k
        tok = torch.tensor([[guesses[-1]]]) if own else ids[:, min(nxt, ids.shape[1] - 1)].reshape(1, 1)
    return logits, guesses


def check_unroll(target, top):
    head = random_head(top, 1).double()
    gen = torch.Generator().manual_seed(2)
    ids = torch.randint(0, 768, (2, 24), generator=gen)
    _, feats = eagle3.capture(target, ids)
    rows = torch.tensor([[3, 9, 17, 21], [0, 5, 12, 22]])
    steps = 5
    outs = head.unroll(target.model.embed_tokens, feats, ids, steps, rows)
    worst = 0.0
    for b in range(2):
        for r, anchor in enumerate(rows[b].tolist()):
            ref, _ = sequential(head, target.model.embed_tokens, feats[b:b + 1], ids[b:b + 1], anchor, steps)
            for k in range(steps):
                if anchor + 2 + k < ids.shape[1]:
                    worst = max(worst, float((outs[k][b, r] - ref[k]).abs().max()))
    check(worst < 1e-10, f"unroll equals step-by-step drafting with a cache (max |diff| {worst:.1e})")


def check_runs(target, top):
    """A head that copies the target's argmax half the time is not needed: a random head on a
    sequence made of its own greedy chain must get full runs where the chain is its own."""
    head = random_head(top, 3).double()
    prompt = torch.randint(0, 768, (30,), generator=torch.Generator().manual_seed(4)).tolist()
    ids = torch.tensor([prompt + [5]])
    _, feats = eagle3.capture(target, ids)
    _, own = sequential(head, target.model.embed_tokens, feats, ids, len(prompt) - 1, 6, own=True)
    reply = [5] + own[:3] + [(own[3] + 1) % 768, 7, 8]  # the head's own chain, then a miss
    runs = TE.chain_runs(head, target, prompt, reply, 6)
    check(runs[1] == 3, f"chain_runs: a reply made of the head's own chain keeps 3 guesses, then misses ({runs[1]})")
    truth = []
    seq = torch.tensor([prompt + reply])
    _, feats = eagle3.capture(target, seq)
    for i in range(len(reply)):
        _, g = sequential(head, target.model.embed_tokens, feats, seq, len(prompt) + i - 2, 6, own=True)
        r = 0
        while r < 6 and len(prompt) + i + r < seq.shape[1] and g[r] == int(seq[0, len(prompt) + i + r]):
            r += 1
        truth.append(r)
    check(runs == truth, f"chain_runs equals greedy chain drafting replayed ({runs} vs {truth})")


def numpy_step(raw, cfg, emb, feat, pos):
    """One draft step of one token with an empty cache, from the file's tensors (float64)."""
    w = {n: k3io.to_float(dt, a).numpy() if dt == "BF16" else np.array(a) for n, (dt, a) in raw.items()}
    eps = cfg["rms_norm_eps"]
    rms = lambda x, g: x / np.sqrt((x * x).mean() + eps) * g
    hid = w["fc.weight"] @ feat
    x = np.concatenate([rms(emb, w["midlayer.input_layernorm.weight"]), rms(hid, w["midlayer.hidden_norm.weight"])])
    v = w["midlayer.self_attn.v_proj.weight"] @ x  # one key: attention returns its value
    h1 = hid + w["midlayer.self_attn.o_proj.weight"] @ v
    g = rms(h1, w["midlayer.post_attention_layernorm.weight"])
    silu = lambda z: z / (1 + np.exp(-z))
    out = h1 + w["midlayer.mlp.down_proj.weight"] @ (silu(w["midlayer.mlp.gate_proj.weight"] @ g)
                                                     * (w["midlayer.mlp.up_proj.weight"] @ g))
    logits = w["lm_head.weight"] @ rms(out, w["norm.weight"])
    return logits, int(np.argmax(logits)) + int(w["d2t"][np.argmax(logits)])


def check_file(target, top):
    head = random_head(top, 5)
    with tempfile.TemporaryDirectory() as tmp:
        eagle3.export(head, tmp)
        raw = k3io.read_safetensors(tmp)
        again = eagle3.load(tmp, torch.float64)
        with open(os.path.join(tmp, "config.json")) as f:
            cfg = json.load(f)
    d, hh = cfg["hidden_size"], cfg["num_attention_heads"] * cfg["head_dim"]
    want = {"fc.weight": [d, 3 * d], "midlayer.self_attn.q_proj.weight": [hh, 2 * d],
            "midlayer.self_attn.o_proj.weight": [d, hh], "midlayer.hidden_norm.weight": [d],
            "lm_head.weight": [cfg["draft_vocab_size"], d], "d2t": [cfg["draft_vocab_size"]],
            "t2d": [cfg["vocab_size"]]}
    check(all(list(raw[n][1].shape) == s for n, s in want.items()), "published tensor names and shapes")
    check(raw["d2t"][0] == "I64" and raw["t2d"][0] == "BOOL" and raw["fc.weight"][0] == "BF16", "dtypes I64/BOOL/BF16")
    hot = np.arange(cfg["draft_vocab_size"]) + raw["d2t"][1]
    check(sorted(np.nonzero(raw["t2d"][1])[0].tolist()) == hot.tolist(), "t2d marks exactly the ids d2t maps to")
    check(cfg["architectures"] == ["LlamaForCausalLMEagle3"] and cfg["eagle_config"]["eagle_aux_hidden_state_layer_ids"]
          == list(eagle3.AUX_LAYERS), "config: LlamaForCausalLMEagle3 with the aux layer ids")
    same = all(torch.equal(k3io.to_float(*raw[n]).reshape(p.shape), p.double()) for n, p in again.named_parameters())
    check(same, "load returns the stored values exactly")
    ids = torch.tensor([[11, 40, 200]])
    _, feats = eagle3.capture(target, ids)
    emb = target.model.embed_tokens.weight[40].detach()
    out = again.unroll(target.model.embed_tokens, feats, ids, 1, torch.tensor([[0]]))[0][0, 0]
    ref, ref_id = numpy_step(raw, cfg, emb.numpy(), feats[0, 0].detach().numpy(), 1)
    diff = float(np.abs(out.detach().numpy() - ref).max())
    check(diff < 1e-9 and int(again.hot()[out.argmax()]) == ref_id,
          f"one step from the file in numpy equals the module (max |diff| {diff:.1e}, id {ref_id})")


def main():
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    torch.set_num_threads(1)
    target, top = checkpoint.load(os.path.join(ROOT, "models", "k3-demo"), torch.float64)
    target.eval()
    check_unroll(target, top)
    check_runs(target, top)
    check_file(target, top)
    print("FAIL" if FAILURES else "PASS")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
