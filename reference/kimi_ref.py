#!/usr/bin/env python3
"""Independent float64 NumPy forward pass of Kimi K3, Kimi-Linear and Kimi K2 (spec model.md §1-7, §13).

  python3 reference/kimi_ref.py --model DIR --prompt-ids "3 17 42" --max-new-tokens N --out PREFIX [--mxfp8-experts]

Outputs: PREFIX.prefill.f64  raw little-endian float64 [T_prompt, vocab], logits of every prompt
                             position from one forward over the prompt;
         PREFIX.decode.f64   raw float64 [N, vocab]; row i = logits that chose generated token i
                             (row 0 = last prompt position); greedy argmax, no EOS stop;
         PREFIX.json         family, vocab_size, prompt_ids, generated_ids, router_min_gap (per
                             decode step, last position), prefill_router_min_gap (per prompt
                             position), decode_top1_margin, seconds.
Every step recomputes the whole sequence from scratch (no cache), so the result does not depend on
any incremental-state logic.  Weights are dequantised exactly from the stored bytes (BF16, F32,
MXFP4 weight_packed/weight_scale, INT4 I32 weight_packed/BF16 weight_scale, FP8 E4M3
weight/weight_scale_inv).
"""
import argparse
import json
import os
import time

import numpy as np

import formats as F
import ops
from safetensors_io import read_folder


def load_config(folder):
    """-> (family, text config).  K3 keeps its text model under text_config (spec §0); so do K2.5
    and K2-Thinking (a kimi_k2 text_config, checkpoints.md A1), whose tensors are then nested
    under "language_model." as K3's are."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    mt = cfg.get("model_type")
    if mt == "kimi_k3":
        return "k3", cfg["text_config"]
    if mt == "kimi_linear":
        return "kimi_linear", cfg
    if mt in ("kimi_k2", "deepseek_v3"):
        return "k2", cfg
    text = cfg.get("text_config") or {}
    if text.get("model_type") in ("kimi_k2", "deepseek_v3"):
        return "k2", dict(text, _nested=True)
    raise ValueError(f"unsupported model_type {mt}")


class Weights:
    """Dequantising, caching view of the checkpoint tensors; records which names were used."""

    def __init__(self, folder, fp8_block):
        self.raw, self.fp8_block, self.cache, self.used = read_folder(folder), fp8_block, {}, set()

    def __contains__(self, name):
        return name in self.raw

    def _take(self, name):
        if name not in self.raw:
            raise KeyError(f"tensor {name} missing from checkpoint")
        self.used.add(name)
        return self.raw[name]

    def _plain(self, name):
        """A BF16/F32/F16/F64 tensor, exactly, as float32 (or float64 for F64)."""
        dt, a = self._take(name)
        if dt == "BF16":
            return F.bf16_bits_to_f64(a).astype(np.float32)  # exact
        if dt in ("F32", "F16", "F64"):
            return np.array(a, dtype=np.float64 if dt == "F64" else np.float32)
        raise TypeError(f"{name}: unexpected dtype {dt}")

    def get(self, name):
        """A small (norm, bias, conv, AttnRes) tensor as float64."""
        if name not in self.cache:
            self.cache[name] = self._plain(name).astype(np.float64)
        return self.cache[name]

    def linear(self, base):
        """Linear weight [out, in] from base.weight (BF16 or F8_E4M3 + weight_scale_inv) or
        base.weight_packed + base.weight_scale (MXFP4)."""
        if base not in self.cache:
            if base + ".weight_packed" in self.raw and self.raw[base + ".weight_packed"][0] == "I32":
                v = F.int4_dequantize(self._take(base + ".weight_packed")[1],
                                      self._take(base + ".weight_scale")[1])  # exact, float64
                shape = self._take(base + ".weight_shape")[1]
                assert list(np.asarray(shape).reshape(-1)) == list(v.shape), f"{base}.weight_shape"
            elif base + ".weight_packed" in self.raw:
                v = F.mxfp4_dequantize(self._take(base + ".weight_packed")[1],
                                       self._take(base + ".weight_scale")[1]).astype(np.float32)  # exact
            elif self.raw.get(base + ".weight", ("",))[0] == "F8_E4M3":
                v = F.fp8_block_dequantize(self._take(base + ".weight")[1],
                                           self._take(base + ".weight_scale_inv")[1], self.fp8_block)
            else:
                v = self._plain(base + ".weight")  # float32 holds BF16 exactly; matmuls promote to float64
            self.cache[base] = v
        return self.cache[base]

    def unused(self):
        """Tensors never read, ignoring routed experts no token picked and the layer-0
        self_attention_res_* pair (the bank is empty there, spec §5.2; real K3 still ships it)."""
        skip = (".experts.", "layers.0.self_attention_res_")
        return sorted(n for n in set(self.raw) - self.used if not any(s in n for s in skip))


class Model:
    def __init__(self, folder, mxfp8_experts=False):
        self.family, c = load_config(folder)
        self.c, self.mx = c, mxfp8_experts
        k3, k2 = self.family == "k3", self.family == "k2"
        q = c.get("quantization_config") or {}
        self.w = Weights(folder, q.get("weight_block_size", [None])[0] if q.get("quant_method") == "fp8" else None)
        nested = k3 or c.get("_nested", False)
        self.pre = "language_model.model." if nested else "model."
        self.head = "language_model.lm_head" if nested else "lm_head"
        self.eps = c["rms_norm_eps"]
        self.kv_eps = 1e-6 if self.family == "kimi_linear" else self.eps  # spec §13.2
        self.act = ops.glu_act(c.get("hidden_act", "silu"), c.get("activation_situ_beta", 4.0),
                               c.get("activation_situ_linear_beta", 25.0))
        if k2:
            self.n_exp, self.top_k = c["n_routed_experts"], c["num_experts_per_tok"]
            self.n_group, self.topk_group = c.get("n_group", 1), c.get("topk_group", 1)
            self.renorm, self.n_shared = c["norm_topk_prob"], c.get("n_shared_experts", 0)
            assert c.get("scoring_func", "sigmoid") == "sigmoid"
        else:
            self.n_exp, self.top_k = c["num_experts"], c["num_experts_per_token"]
            grouped = c.get("use_grouped_topk", False)
            self.n_group = c.get("num_expert_group", 1) if grouped else 1
            self.topk_group = c.get("topk_group", 1) if grouped else 1
            self.renorm, self.n_shared = c.get("moe_renormalize", True), c.get("num_shared_experts", 0)
            assert c.get("moe_router_activation_func", "sigmoid") == "sigmoid"
        self.scale = (c["qk_nope_head_dim"] + c["qk_rope_head_dim"]) ** -0.5
        self.rope = None
        if k2:  # YaRN RoPE (spec §3.1), HF/DeepSeek semantics, always applied when rope_scaling is yarn
            rs = c.get("rope_scaling")
            self.inv_freq = ops.yarn_inv_freq(c["qk_rope_head_dim"], c.get("rope_theta", 10000.0), rs)
            amp = 1.0
            if rs:
                f = float(rs["factor"])
                # cos/sin amplitude (HF DeepseekV3YarnRotaryEmbedding._mscale); 1 when mscale == mscale_all_dim
                amp = ops.yarn_mscale(f, rs.get("mscale", 1.0)) / ops.yarn_mscale(f, rs.get("mscale_all_dim", 0.0))
                if rs.get("mscale_all_dim"):
                    self.scale *= ops.yarn_mscale(f, rs["mscale_all_dim"]) ** 2
            self.rope_amp = amp
            self.rope = True
        else:
            assert c.get("mla_use_nope", False), "Kimi MLA layers are NoPE (spec §3.2)"

    # ------------------------------------------------------------ blocks
    def is_kda(self, i):
        return self.family != "k2" and (i + 1) in self.c["linear_attn_config"]["kda_layers"]  # 1-based lists

    def is_moe(self, i):
        return i >= self.c["first_k_dense_replace"] and i % self.c.get("moe_layer_freq", 1) == 0

    def kda(self, x, a):
        """Kimi Delta Attention layer (spec §2.3), recurrent form from a zero state."""
        la, w = self.c["linear_attn_config"], self.w
        h, hd = la["num_heads"], la["head_dim"]
        t = x.shape[0]
        q, k, v = (ops.silu(ops.causal_conv(x @ w.linear(a + n + "_proj").T, w.get(a + n + "_conv1d.weight")))
                   for n in "qkv")
        graw = ((x @ w.linear(a + "f_a_proj").T) @ w.linear(a + "f_b_proj").T + w.get(a + "dt_bias")).reshape(t, h, hd)
        a_log = w.get(a + "A_log").reshape(-1)[:h].astype(np.float64)[None, :, None]  # K3: [head_dim], first H
        if "gate_lower_bound" in la:  # K3 safe gate
            g = la["gate_lower_bound"] * ops.sigmoid(np.exp(a_log) * graw)
        else:                         # Kimi-Linear
            g = -np.exp(a_log) * ops.softplus(graw)
        beta = ops.sigmoid(x @ w.linear(a + "b_proj").T)
        q = ops.l2norm(q.reshape(t, h, hd)) * hd ** -0.5
        k = ops.l2norm(k.reshape(t, h, hd))
        o, _ = ops.kda_recurrent(q, k, v.reshape(t, h, hd), g, beta)
        if la.get("use_full_rank_gate"):
            gate = x @ w.linear(a + "g_proj").T
        else:
            gate = (x @ w.linear(a + "g_a_proj").T) @ w.linear(a + "g_b_proj").T
        o = ops.rms_norm(o, w.get(a + "o_norm.weight"), self.eps) * ops.sigmoid(gate.reshape(t, h, hd))
        return o.reshape(t, h * hd) @ w.linear(a + "o_proj").T

    def mla(self, x, a):
        """MLA, naive form over the whole causal sequence (spec §3)."""
        c, w, t = self.c, self.w, x.shape[0]
        h, dn, dr, dv, r = (c["num_attention_heads"], c["qk_nope_head_dim"], c["qk_rope_head_dim"],
                            c["v_head_dim"], c["kv_lora_rank"])
        if c.get("q_lora_rank"):
            cq = ops.rms_norm(x @ w.linear(a + "q_a_proj").T, w.get(a + "q_a_layernorm.weight"), self.eps)
            q = cq @ w.linear(a + "q_b_proj").T
        else:
            q = x @ w.linear(a + "q_proj").T
        q = q.reshape(t, h, dn + dr)
        q_nope, q_pe = q[..., :dn], q[..., dn:]
        kv = x @ w.linear(a + "kv_a_proj_with_mqa").T
        ckv, k_pe = ops.rms_norm(kv[:, :r], w.get(a + "kv_a_layernorm.weight"), self.kv_eps), kv[:, r:]
        kvb = (ckv @ w.linear(a + "kv_b_proj").T).reshape(t, h, dn + dv)
        if self.rope:
            pos = np.arange(t, dtype=np.float64)
            q_pe = ops.rope_adjacent(q_pe, pos, self.inv_freq, self.rope_amp)
            k_pe = ops.rope_adjacent(k_pe, pos, self.inv_freq, self.rope_amp)
        o = ops.mla_naive(q_nope, q_pe, kvb[..., :dn], k_pe, kvb[..., dn:], self.scale).reshape(t, h * dv)
        if c.get("mla_use_output_gate"):
            o = o * ops.sigmoid(x @ w.linear(a + "g_proj").T)
        return o @ w.linear(a + "o_proj").T

    def glu(self, x, base, names, mx=False):
        g, u, d = (self.w.linear(f"{base}.{n}") for n in names)
        if mx:
            x = F.mxfp8_emulate(x)
        y = self.act(x @ g.T, x @ u.T)
        if mx:
            y = F.mxfp8_emulate(y)
        return y @ d.T

    def mlp(self, x, i):
        """Dense GLU or MoE (spec §4).  Returns (y, router gap per token)."""
        lp = f"{self.pre}layers.{i}."
        dense = ("gate_proj", "up_proj", "down_proj")
        if not self.is_moe(i):
            return self.glu(x, lp + "mlp", dense), np.full(x.shape[0], np.inf)
        k2, k3 = self.family == "k2", self.family == "k3"
        m = lp + ("mlp." if k2 else "block_sparse_moe.")
        idx, wts, gap = ops.route(x, self.w.linear(m + "gate"), self.w.get(m + "gate.e_score_correction_bias"),
                                  self.top_k, self.n_group, self.topk_group, self.renorm,
                                  self.c["routed_scaling_factor"])
        names = dense if k2 else ("w1", "w3", "w2")
        z = x @ self.w.linear(m + "routed_expert_down_proj").T if k3 else x  # latent MoE (spec §4.3)
        y = np.zeros_like(z)
        for e in np.unique(idx):
            rows, slot = np.nonzero(idx == e)
            y[rows] += wts[rows, slot, None] * self.glu(z[rows], f"{m}experts.{e}", names, self.mx)
        if k3 and self.c.get("latent_moe_use_norm", True):
            y = ops.rms_norm(y, self.w.get(m + "routed_expert_norm.weight"), self.eps)
        if k3:
            y = y @ self.w.linear(m + "routed_expert_up_proj").T
        if self.n_shared:
            y = y + self.glu(x, m + "shared_experts", dense)
        return y, gap

    # ------------------------------------------------------------ model
    def forward(self, ids):
        """ids [T] -> (logits [T, vocab] float64, min router gap over MoE layers [T])."""
        w, pre, eps = self.w, self.pre, self.eps
        x = w.linear(pre + "embed_tokens")[np.asarray(ids)].astype(np.float64)
        gaps = np.full(len(ids), np.inf)

        def attn(hn, i):
            a = f"{pre}layers.{i}.self_attn."
            return self.kda(hn, a) if self.is_kda(i) else self.mla(hn, a)

        def norm(h, name):
            return ops.rms_norm(h, w.get(name), eps)

        def mix(prefix, bank, site):  # AttnRes (spec §5.2)
            return ops.attn_res(prefix, bank, w.get(site + "_norm.weight"), w.get(site + "_proj.weight"), eps)

        prefix, bank = x, []  # AttnRes state (K3 only)
        for i in range(self.c["num_hidden_layers"]):
            lp = f"{pre}layers.{i}."
            if self.family == "k3":
                h = mix(prefix, bank, lp + "self_attention_res") if bank else prefix
                if i % self.c["attn_res_block_size"] == 0:
                    bank.append(prefix)  # snapshot the raw prefix, restart the block
                    prefix = None
                h = attn(norm(h, lp + "input_layernorm.weight"), i)
                prefix = h if prefix is None else prefix + h
                h = mix(prefix, bank, lp + "mlp_res")
                h, gap = self.mlp(norm(h, lp + "post_attention_layernorm.weight"), i)
                prefix = prefix + h
            else:  # plain pre-norm residuals
                x = x + attn(norm(x, lp + "input_layernorm.weight"), i)
                h, gap = self.mlp(norm(x, lp + "post_attention_layernorm.weight"), i)
                x = x + h
            gaps = np.minimum(gaps, gap)
        if self.family == "k3":
            x = mix(prefix, bank, pre + "output_attn_res")
        x = norm(x, pre + "norm.weight")
        return x @ w.linear(self.head).T, gaps


def top1_margin(row):
    s = np.sort(row)
    return float(s[-1] - s[-2])


def generate(model, prompt, n_new):
    """Greedy: returns prefill logits/gaps, decode logits [n_new, V], generated ids, decode gaps."""
    pre_logits, pre_gaps = model.forward(prompt)
    seq, rows, gaps = list(prompt), [], []
    logits, g = pre_logits, pre_gaps
    for step in range(n_new):
        if step > 0:
            logits, g = model.forward(seq)
        rows.append(logits[-1])
        gaps.append(float(g[-1]))
        seq.append(int(np.argmax(logits[-1])))
    dec = np.array(rows).reshape(n_new, pre_logits.shape[1])
    return pre_logits, pre_gaps, dec, seq[len(prompt):], gaps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--prompt-ids", required=True)
    ap.add_argument("--max-new-tokens", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mxfp8-experts", action="store_true",
                    help="MXFP8-emulate the input of every routed-expert matmul (spec §7.1)")
    args = ap.parse_args()
    t0 = time.time()
    model = Model(args.model, args.mxfp8_experts)
    prompt = [int(s) for s in args.prompt_ids.split()]
    pre, pre_gaps, dec, gen, gaps = generate(model, prompt, args.max_new_tokens)
    pre.astype("<f8").tofile(args.out + ".prefill.f64")
    dec.astype("<f8").tofile(args.out + ".decode.f64")
    fin = lambda v: v if np.isfinite(v) else None  # JSON has no inf (no MoE layer -> null)
    meta = {"family": model.family, "vocab_size": int(pre.shape[1]), "prompt_ids": prompt, "generated_ids": gen,
            "router_min_gap": [fin(g) for g in gaps], "prefill_router_min_gap": [fin(float(g)) for g in pre_gaps],
            "decode_top1_margin": [top1_margin(r) for r in dec], "mxfp8_experts": args.mxfp8_experts,
            "seconds": round(time.time() - t0, 3)}
    with open(args.out + ".json", "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    unused = model.w.unused()
    if unused:
        print(f"warning: {len(unused)} checkpoint tensors unused, e.g. {unused[:3]}")
    print(f"{model.family}: generated {gen} in {meta['seconds']} s")


if __name__ == "__main__":
    main()
