#!/usr/bin/env python3
"""Trains an EAGLE-3 head (eagle3.py) for the demo target on the target's own replies, and measures
how many of its chained guesses the target would accept.

    /usr/bin/python3 tools/train/train_eagle3.py --target models/k3-demo --data DISTILL_DIR \
        --out OUT [--minutes 40] [--ttt-steps 4] [--draft-vocab 512] [--seed 0]
    /usr/bin/python3 tools/train/train_eagle3.py --target models/k3-demo --data DISTILL_DIR \
        --eval OUT [--n 200] [--max-chain 8] [--json OUT/agreement.json]

DISTILL_DIR is distill.py's output (prompts with the target's greedy replies as token ids).
Training: the target (float32, exactly its checkpoint) runs each batch once for its features and
its next-token distributions; the head runs `--ttt-steps` chained passes (eagle3.unroll, the
training-time test) and learns the target's distribution restricted to the draft vocabulary
(soft cross-entropy) at every chain step of every anchor in the reply, step k weighted 0.8^k.
The draft vocabulary is the --draft-vocab target ids most frequent in the training replies.
Writes OUT/config.json, OUT/model.safetensors and OUT/training_log.jsonl (plot_loss.py draws it).

--eval: the exported head (BF16 as stored) drafts chains of up to --max-chain tokens at every
position of each held-out reply; run_i = how many of the chain's guesses, first guess at reply
position i, equal the target's tokens in a row (a chain running off the reply's end stops there).
Prints draft_agreement.py's figures from those runs (alpha_k, cond_k, tokens/step).
"""
import argparse
import collections
import json
import math
import os
import random
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checkpoint  # noqa: E402
import draft_agreement as DA  # noqa: E402
import eagle3  # noqa: E402
from train import batches, load_split, tensors  # noqa: E402

STEP_DECAY = 0.8


def hot_tokens(rows, n, vocab):
    """The n target ids most frequent in the replies (ties and ids never seen: smaller id first)."""
    count = collections.Counter(int(x) for ids, n_prompt in rows for x in ids[n_prompt:])
    return sorted(sorted(range(vocab), key=lambda i: (-count[i], i))[:n])


def anchors(batch):
    """-> rows [B,R]: the anchors whose chains draft the reply (first guess ids[t+2], t from
    n_prompt-2 to len-2; short rows repeat their last anchor), real [B,R] (not a repeat), lens [B]."""
    r = max(len(ids) - n + 1 for ids, n in batch)
    rows = torch.zeros(len(batch), r, dtype=torch.long)
    real = torch.zeros(len(batch), r, dtype=torch.bool)
    for b, (ids, n) in enumerate(batch):
        a = torch.arange(n - 2, len(ids) - 1)
        rows[b, :len(a)], rows[b, len(a):], real[b, :len(a)] = a, a[-1], True
    return rows, real, torch.tensor([len(ids) for ids, _ in batch])


def step_losses(head, target, batch, steps):
    """-> (TTT loss, [per-step loss], step-0 accuracy) over the reply.  Step k of anchor t learns
    the target's distribution at position t+1+k (what ids[t+2+k] is drawn from), restricted to the
    draft vocabulary; guesses past the reply's end are not scored."""
    ids, _, _, _ = tensors(batch, 0, 0.0)
    rows, real, lens = anchors(batch)
    t_logits, feats = eagle3.capture(target, ids)
    hot = head.hot()
    at = lambda x, k: x.gather(1, (rows + 1 + k).clamp(max=x.shape[1] - 1)[..., None].expand(-1, -1, x.shape[-1]))
    outs = head.unroll(target.model.embed_tokens, feats, ids, steps, rows)
    total, norm, per_step, acc = 0.0, 0.0, [], 0.0
    for k, logits in enumerate(outs):
        soft = torch.softmax(at(t_logits[..., hot], k), -1)
        ce = -(soft * torch.log_softmax(logits, -1)).sum(-1)
        wk = (real & (rows + 1 + k <= lens[:, None] - 2)).float()
        loss_k = (ce * wk).sum() / wk.sum().clamp(min=1)
        total, norm = total + STEP_DECAY ** k * loss_k, norm + STEP_DECAY ** k
        per_step.append(float(loss_k))
        if k == 0:
            best = at(t_logits, 0).argmax(-1)
            acc = float(((hot[logits.argmax(-1)] == best).float() * wk).sum() / wk.sum().clamp(min=1))
    return total / norm, per_step, acc


def train(args):
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    target, top = checkpoint.load(args.target)
    target.eval().requires_grad_(False)
    rows, dropped = load_split(os.path.join(args.data, "train.ids.jsonl"), args.max_len)
    held, _ = load_split(os.path.join(args.data, "heldout.ids.jsonl"), args.max_len)
    held = held[:args.eval_rows]
    head = eagle3.Eagle3Head(eagle3.head_config(top["text_config"], args.draft_vocab))
    hot = hot_tokens(rows, args.draft_vocab, top["text_config"]["vocab_size"])
    head.set_vocab(hot)
    with torch.no_grad():  # start from the target's own output rows for the draft vocabulary
        head.lm_head.weight.copy_(target.lm_head.weight[head.hot()])
    covered = sum(int(x) in set(hot) for ids, n in held for x in ids[n:]) / sum(len(ids) - n for ids, n in held)
    print(f"{len(rows)} training conversations ({dropped} longer than {args.max_len} dropped); draft vocabulary "
          f"{len(hot)} ids covers {covered:.2%} of held-out reply tokens", flush=True)
    opt = torch.optim.AdamW(head.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "training_log.jsonl"), "w")
    start, tokens, step = time.time(), 0, 0
    stream = batches(rows, args.batch_tokens, rng)
    while True:
        progress = (time.time() - start) / (60 * args.minutes)
        if progress >= 1 or step >= args.steps:
            break
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (0.1 + 0.45 * (1 + math.cos(math.pi * progress)))
        for g in opt.param_groups:
            g["lr"] = lr
        batch = next(stream)
        loss, per_step, acc = step_losses(head, target, batch, args.ttt_steps)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
        opt.step()
        tokens += sum(len(ids) for ids, _ in batch)
        if step % args.log_every == 0:
            rec = {"step": step, "loss": round(float(loss), 4), "completion_loss": round(per_step[0], 4),
                   "step_losses": [round(x, 4) for x in per_step], "acc0": round(acc, 4), "lr": round(lr, 6),
                   "minutes": round((time.time() - start) / 60, 2), "tokens_per_s": round(tokens / (time.time() - start))}
            if step % args.eval_every == 0:
                with torch.no_grad():
                    rec["heldout_completion_loss"] = round(held_loss(head, target, held, args), 4)
            print(json.dumps(rec), flush=True)
            log.write(json.dumps(rec) + "\n")
            log.flush()
        step += 1
    with torch.no_grad():
        final = {"final": True, "steps": step, "minutes": round((time.time() - start) / 60, 2), "tokens": tokens,
                 "heldout_completion_loss": round(held_loss(head, target, held, args), 4)}
    print(json.dumps(final), flush=True)
    log.write(json.dumps(final) + "\n")
    eagle3.export(head, args.out)


def held_loss(head, target, held, args):
    """Step-0 reply-token loss over the held-out rows."""
    losses = [step_losses(head, target, held[i:i + 8], 1)[1][0] for i in range(0, len(held), 8)]
    return sum(losses) / max(1, len(losses))


@torch.no_grad()
def chain_runs(head, target, prompt, reply, max_chain):
    """run[i] for every reply position i: how many guesses in a row hold of the chain whose first
    guess is reply[i] (anchored after the token before it, on the target's features of the token
    before that); a chain stops at the reply's end."""
    ids = torch.tensor([prompt + reply])
    rows, _, _ = anchors([(ids[0], len(prompt))])
    _, feats = eagle3.capture(target, ids)
    outs = head.unroll(target.model.embed_tokens, feats, ids, max_chain, rows)
    hot = head.hot()
    guess = torch.stack([hot[o[0].argmax(-1)] for o in outs]).tolist()  # [k][i]: guesses ids[n_prompt+i+k]
    seq, runs = prompt + reply, []
    for i in range(len(reply)):
        r = 0
        while r < max_chain and len(prompt) + i + r < len(seq) and guess[r][i] == seq[len(prompt) + i + r]:
            r += 1
        runs.append(r)
    return runs


def evaluate(args):
    target, _ = checkpoint.load(args.target)
    target.eval()
    head = eagle3.load(args.eval)
    head.eval()
    with open(os.path.join(args.data, "heldout.ids.jsonl")) as f:
        rows = [json.loads(line) for _, line in zip(range(args.n), f)]
    all_runs = [chain_runs(head, target, r["prompt_ids"], r["completion_ids"], args.max_chain) for r in rows]
    out = DA.summarize_runs(all_runs, args.max_chain)
    DA.print_summary(out, args.max_chain)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--eval", default=None, help="an exported head: measure its chain agreement")
    ap.add_argument("--minutes", type=float, default=40)
    ap.add_argument("--steps", type=int, default=1_000_000)
    ap.add_argument("--ttt-steps", type=int, default=4)
    ap.add_argument("--draft-vocab", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--max-len", type=int, default=2048)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--eval-rows", type=int, default=48)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--max-chain", type=int, default=8)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.eval:
        evaluate(args)
    elif args.out:
        train(args)
    else:
        ap.error("--out (train) or --eval (measure) is needed")


if __name__ == "__main__":
    main()
