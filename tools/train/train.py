#!/usr/bin/env python3
"""Trains the demo K3 on make_data.py's conversations and exports it in the HF layout `k3` loads.

    nice -n 19 /usr/bin/python3 tools/train/train.py --data DATA_DIR --out CKPT_DIR \
        [--steps 3000] [--minutes 60] [--threads 2] [--seed 0] [--qat-from 0.8]
    python3 tools/train/train.py --device cuda --shape wide --batch-tokens 65536 --sort-group 4096 ...
        (a GPU: the shipped model's recipe, tools/train/reproduce.sh --gpu)

Seeded end to end (data order, initialisation); float32 AdamW with warmup + cosine decay, gradient
clipping.  The loss is next-token cross-entropy over every position, the completion's tokens
(what the model must generate) weighted 1 and the prompt's --prompt-weight.  MoE balance: K3's
auxiliary-loss-free router bias update (after each step every layer's e_score_correction_bias
moves by --bias-rate towards equal expert loads, DeepSeek-V3 §2.1.2) plus an optional small
sequence-level balance loss (--aux-loss).  From --qat-from (a share of the progress, see sched) the routed
experts train through MXFP4 fake quantisation (straight-through), so the exported MXFP4 experts are
the weights the last steps saw; the log reports the held-out loss with exact and MXFP4 experts.
Writes CKPT_DIR (config.json, model.safetensors, tokenizer files, generation_config.json) and
CKPT_DIR.log.jsonl (one JSON line per logged step) and CKPT_DIR.train_state.pt (weights and
optimizer, for resuming).
"""
import argparse
import json
import lzma
import math
import os
import random
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import checkpoint  # noqa: E402
from model import K3Model, init_weights  # noqa: E402
from sizes import draft_sizes, tiny_sizes, wide_sizes  # noqa: E402


def load_split(path, max_len):
    """-> list of (ids, n_prompt) with len(ids) <= max_len (longer conversations dropped).  Reads
    PATH, or PATH.xz when only that exists; ids are int32 arrays (a few bytes a token, where a list
    of Python ints costs ~36: hundreds of thousands of conversations fit in memory)."""
    rows, dropped = [], 0
    with (open(path) if os.path.exists(path) else lzma.open(path + ".xz", "rt")) as f:
        for line in f:
            x = json.loads(line)
            ids = x["prompt_ids"] + x["completion_ids"]
            if len(ids) > max_len:
                dropped += 1
                continue
            rows.append((np.asarray(ids, dtype=np.int32), len(x["prompt_ids"])))
    return rows, dropped


def batches(rows, batch_tokens, rng, group=64):
    """Endless batches of similar lengths: shuffle, sort groups of `group` by length, cut each
    group into batches whose padded size B * T_max stays within batch_tokens (a group should hold
    several batches' worth of conversations, or every batch is a whole group)."""
    while True:
        order = list(range(len(rows)))
        rng.shuffle(order)
        out = []
        for g in range(0, len(order), group):
            members = sorted(order[g:g + group], key=lambda i: len(rows[i][0]))
            cur = []
            for i in members:
                if cur and (len(cur) + 1) * len(rows[i][0]) > batch_tokens:
                    out.append(cur)
                    cur = []
                cur.append(i)
            out.append(cur)
        rng.shuffle(out)
        for b in out:
            yield [rows[i] for i in b]


def tensors(batch, pad_id, prompt_weight, device="cpu"):
    """-> ids [B,T], targets [B,T], weights [B,T] (0 on padding), valid [B,T], on device."""
    t = max(len(ids) for ids, _ in batch)
    ids = torch.full((len(batch), t), pad_id, dtype=torch.long)
    w = torch.zeros(len(batch), t)
    for b, (seq, n_prompt) in enumerate(batch):
        ids[b, :len(seq)] = torch.from_numpy(np.asarray(seq, dtype=np.int64))
        w[b, :len(seq) - 1] = prompt_weight
        w[b, n_prompt - 1:len(seq) - 1] = 1.0  # targets n_prompt.. are the completion
    targets = torch.cat([ids[:, 1:], torch.full((len(batch), 1), pad_id, dtype=torch.long)], 1)
    valid = torch.zeros(len(batch), t, dtype=torch.bool)
    for b, (seq, _) in enumerate(batch):
        valid[b, :len(seq)] = True
    return tuple(x.to(device, non_blocking=True) for x in (ids, targets, w, valid))


def loss_of(model, batch, pad_id, prompt_weight, aux):
    ids, targets, w, valid = tensors(batch, pad_id, prompt_weight, model.lm_head.weight.device)
    logits = model(ids, valid)
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                           reduction="none").reshape(w.shape)
    loss = (ce * w).sum() / w.sum()
    completion = (w == 1.0)
    comp = (ce * completion).sum() / completion.sum()
    bal = torch.zeros((), device=loss.device)
    for moe in model.moe_layers():  # f_e * P_e, f normalised to 1 under perfect balance
        f = moe.load * moe.load.numel() / moe.load.sum()
        bal = bal + (f.detach() * moe.mean_score).sum()
    return loss + aux * bal, loss.detach(), comp.detach(), int(valid.sum())


@torch.no_grad()
def evaluate(model, rows, pad_id, batch_tokens, qat):
    """Mean completion-token loss over rows (MXFP4 experts when qat)."""
    for moe in model.moe_layers():
        moe.qat = qat
    model.eval()
    total, count = 0.0, 0
    it = batches(rows, batch_tokens, random.Random(0), max(64, batch_tokens // 256))
    seen = 0
    while seen < len(rows):
        b = next(it)
        seen += len(b)
        _, _, comp, _ = loss_of(model, b, pad_id, 0.0, 0.0)
        n = sum(len(ids) - p for ids, p in b)
        total, count = total + float(comp) * n, count + n
    model.train()
    return total / count


def update_router_bias(model, rate):
    """Aux-loss-free balancing: raise the bias of under-loaded experts, lower over-loaded ones."""
    loads = []
    for moe in model.moe_layers():
        load = moe.load
        moe.gate.e_score_correction_bias += rate * torch.sign(load.mean() - load)
        loads.append(round(float(load.max() / load.mean()), 2))
    return loads


class Ranks:
    """Data parallelism over R processes: every rank holds the whole model, draws its own batches
    (seed + rank), and the ranks average gradients and MoE loads each step, so the replicas stay
    bit-identical; rank 0 logs, evaluates and exports.  R = 1 is the plain single-process loop."""

    def __init__(self, rank, world, port):
        self.rank, self.world = rank, world
        if world > 1:
            import torch.distributed as dist
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
            self.dist = dist

    def average(self, tensors):
        """In-place mean over ranks of a list of tensors (one flat all-reduce)."""
        if self.world == 1:
            return
        flat = torch.cat([t.reshape(-1) for t in tensors])
        self.dist.all_reduce(flat)
        flat /= self.world
        at = 0
        for t in tensors:
            t.copy_(flat[at:at + t.numel()].view_as(t))
            at += t.numel()

    def share(self, value):
        """Rank 0's float, on every rank."""
        if self.world == 1:
            return value
        t = torch.tensor([float(value)], dtype=torch.float64)
        self.dist.broadcast(t, 0)
        return float(t.item())

    def agree(self, flag):
        """Rank 0's decision, on every rank."""
        if self.world == 1:
            return flag
        t = torch.tensor([1.0 if flag else 0.0])
        self.dist.broadcast(t, 0)
        return bool(t.item())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", default=None, help="tokenizer folder (default DATA/demo)")
    ap.add_argument("--shape", choices=["target", "wide", "draft"], default="target",
                    help="sizes.tiny_sizes() (the one-hour CPU recipe), sizes.wide_sizes() (the shipped demo "
                         "model, trained on a GPU) or sizes.draft_sizes() (the draft)")
    ap.add_argument("--sizes", default="{}", help="JSON overriding the --shape's sizes")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--minutes", type=float, default=0, help="stop (and export) after this wall time")
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--max-len", type=int, default=2048)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--prompt-weight", type=float, default=0.2)
    ap.add_argument("--bias-rate", type=float, default=1e-3)
    ap.add_argument("--aux-loss", type=float, default=1e-3)
    ap.add_argument("--qat-from", type=float, default=0.8)
    ap.add_argument("--kda-chunk", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    ap.add_argument("--ranks", type=int, default=1,
                    help="data-parallel processes (gloo on loopback); on 2 cores 2 ranks x 1 thread train ~1.7x "
                         "faster than 1 rank x 2 threads, whose step is dominated by small operations")
    ap.add_argument("--port", type=int, default=29517, help="loopback port of the ranks' rendezvous")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu",
                    help="torch device (cuda for a GPU: one rank; the KDA chunk loop and the expert loop "
                         "launch many small kernels, so give it large --batch-tokens)")
    ap.add_argument("--sort-group", type=int, default=64,
                    help="conversations shuffled, then sorted by length in groups of this many before batching "
                         "(raise it with --batch-tokens so a group holds several batches)")
    ap.add_argument("--resume", default=None, help="a CKPT.train_state.pt to continue from (same --steps)")
    ap.add_argument("--init", default=None,
                    help="an exported checkpoint folder to start from (its values as k3 loads them: BF16, MXFP4 "
                         "experts dequantised), with a fresh optimizer and schedule: a warm restart")
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--eval-every", type=int, default=0)
    ap.add_argument("--eval-rows", type=int, default=200)
    args = ap.parse_args()
    if args.ranks > 1 and args.device != "cpu":
        sys.exit("--ranks > 1 averages over gloo on the CPU: use one rank with --device " + args.device)
    if args.ranks > 1:
        import torch.multiprocessing as mp
        mp.spawn(run, args=(args,), nprocs=args.ranks, join=True)
    else:
        run(0, args)


def run(rank, args):
    ranks = Ranks(rank, args.ranks, args.port)
    lead = rank == 0
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    tok_dir = args.tokenizer or os.path.join(args.data, "demo")
    with open(os.path.join(tok_dir, "config.json")) as f:
        tok_cfg = json.load(f)["text_config"]
    base = {"target": tiny_sizes, "wide": wide_sizes, "draft": draft_sizes}[args.shape]()
    sizes = dict(base, **json.loads(args.sizes), vocab=tok_cfg["vocab_size"], bos=tok_cfg["bos_token_id"],
                 eos=tok_cfg["eos_token_id"], pad=tok_cfg["pad_token_id"])
    top = checkpoint.make_config(sizes)
    model = K3Model(top["text_config"])
    init_weights(model, args.seed)
    if args.init:
        start_from, _ = checkpoint.load(args.init)
        model.load_state_dict(start_from.state_dict())
    model.to(args.device)
    model.set_kda("chunked", args.kda_chunk)
    n_params = sum(p.numel() for p in model.parameters())
    train, dropped = load_split(os.path.join(args.data, "train.ids.jsonl"), args.max_len)
    held, _ = load_split(os.path.join(args.data, "heldout.ids.jsonl"), args.max_len)
    held = held[:args.eval_rows]
    if lead:
        print(f"{n_params} parameters; {len(train)} training conversations ({dropped} longer than {args.max_len} "
              f"dropped), {len(held)} held-out, {args.ranks} rank(s)", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "embed" not in n]
    other = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "embed" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": other, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95))
    # The schedule runs on progress in [0, 1]: the larger of the step's share of --steps and the
    # elapsed share of --minutes, so a run stopped by its time limit still ends annealed (cosine
    # down to 0.1x) with its last --qat-from share quantisation-aware. Rank 0's clock decides.
    sched = lambda s, prog: min(1.0, (s + 1) / args.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(prog, 1.0))))
    first = 0
    if args.resume:  # weights, optimizer and step; the data order restarts from a step-derived seed
        state = torch.load(args.resume, map_location=args.device)
        model.load_state_dict(state["model"])  # load_state_dict copies onto the model's device
        opt.load_state_dict(state["optimizer"])
        first = state["step"]
    data_seed = f"{args.seed}-{first}" + (f"-{rank}" if args.ranks > 1 else "")
    it = batches(train, args.batch_tokens, random.Random(data_seed), args.sort_group)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    log = open(args.out + ".log.jsonl", "a" if args.resume else "w") if lead else None
    start, tokens = time.time(), 0
    for step in range(first, args.steps):
        by_time = (time.time() - start) / (args.minutes * 60) if args.minutes else 0.0
        progress = max(step / args.steps, ranks.share(by_time))
        qat = progress >= args.qat_from
        for moe in model.moe_layers():
            moe.qat = qat
        lr = args.lr * sched(step, progress)
        for g in opt.param_groups:
            g["lr"] = lr
        loss, plain, comp, n_tok = loss_of(model, next(it), sizes["pad"], args.prompt_weight, args.aux_loss)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        ranks.average([p.grad if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]
                      + [moe.load for moe in model.moe_layers()])
        gnorm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        opt.step()
        with torch.no_grad():
            loads = update_router_bias(model, args.bias_rate)
        tokens += n_tok * args.ranks  # the ranks' batches are the same size on average
        elapsed = time.time() - start
        last = ranks.agree(step == args.steps - 1 or bool(args.minutes and elapsed > args.minutes * 60))
        if lead and (step % args.log_every == 0 or last):
            rec = {"step": step, "loss": round(float(plain), 4), "completion_loss": round(float(comp), 4),
                   "lr": round(lr, 6), "progress": round(progress, 4), "grad_norm": round(gnorm, 3), "qat": qat,
                   "max_load_over_mean": loads, "tokens": tokens, "s_per_step": round(elapsed / (step + 1 - first), 3),
                   "tokens_per_s": round(tokens / elapsed)}
            if args.eval_every and (step % args.eval_every == 0 or last):
                rec["heldout_completion_loss"] = round(evaluate(model, held, sizes["pad"], args.batch_tokens, qat), 4)
            print(json.dumps(rec), flush=True)
            log.write(json.dumps(rec) + "\n")
            log.flush()
        if last:
            break
    if not lead:
        return
    exact = evaluate(model, held, sizes["pad"], args.batch_tokens, False)
    quant = evaluate(model, held, sizes["pad"], args.batch_tokens, True)
    summary = {"final": True, "steps": step + 1, "minutes": round((time.time() - start) / 60, 2),
               "heldout_completion_loss_exact": round(exact, 4), "heldout_completion_loss_mxfp4": round(quant, 4),
               "parameters": n_params}
    print(json.dumps(summary), flush=True)
    log.write(json.dumps(summary) + "\n")
    model.cpu()
    checkpoint.export(model, args.out, top, tokenizer_dir=tok_dir)
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step + 1, "args": vars(args)},
               args.out + ".train_state.pt")
    print(f"exported {args.out}", flush=True)


if __name__ == "__main__":
    main()
