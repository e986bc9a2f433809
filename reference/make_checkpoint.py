#!/usr/bin/env python3
"""Seeded generator of tiny (or, with --override, larger) HF-format Kimi checkpoints.

  python3 reference/make_checkpoint.py --family {k3,kimi_linear,k2,k25} --seed S --out DIR [--override JSON]

Writes DIR/config.json (field names as the real configs, /work/shared/kimi/*/config.json), sharded
safetensors (>= 2 shards) and model.safetensors.index.json.  Tensor names/layouts: spec model.md
§2.5 (KDA), §3 (MLA), §4.2 (MoE), §5.2/§10 (AttnRes, K3 inventory), §7.2 (MXFP4).
  k3          : prefix "language_model." on every tensor; routed experts MXFP4 (weight_packed /
                weight_scale); conv weights, A_log, dt_bias, e_score_correction_bias F32; rest BF16.
  kimi_linear : prefix "model."; everything BF16 except conv/A_log/dt_bias/e_score bias (F32).
  k2          : DeepSeek-V3 names; FP8 E4M3 block weights (weight + weight_scale_inv) for every
                attention/MLP/expert Linear; router gate, norms, embeddings, lm_head BF16.
  k25         : K2.5 / K2-Thinking as published: the K2 text config under text_config, prefix
                "language_model."; routed experts compressed-tensors pack-quantized INT4
                (weight_packed I32, weight_scale BF16, weight_shape I32); the rest BF16.
Every tensor draws from its own generator seeded by (seed, crc32(name)), so content does not
depend on generation order and tensors are produced one at a time (memory stays small).
"""
import argparse
import copy
import json
import os
import zlib

import numpy as np

import formats as F
from safetensors_io import Spec, write_sharded

K3_QUANT = {
    "config_groups": {"group_0": {
        "format": "mxfp4-pack-quantized", "input_activations": None, "output_activations": None,
        "targets": ["Linear"],
        "weights": {"actorder": None, "block_structure": None, "dynamic": False, "group_size": 32,
                    "num_bits": 4, "observer": "minmax", "observer_kwargs": {}, "scale_dtype": "torch.uint8",
                    "strategy": "group", "symmetric": True, "type": "float", "zp_dtype": None}}},
    "format": "mxfp4-pack-quantized", "global_compression_ratio": None,
    "ignore": ["re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*",
               "re:.*lm_head.*", "re:.*vision_tower.*", "re:.*mm_projector.*"],
    "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"}

_KIMI_COMMON = dict(
    bos_token_id=1, eos_token_id=2, dtype="bfloat16", first_k_dense_replace=1, hidden_size=128,
    initializer_range=0.02, intermediate_size=192, kv_lora_rank=64, max_position_embeddings=4096,
    mla_use_nope=True, model_type="kimi_linear", moe_intermediate_size=64, moe_layer_freq=1,
    moe_renormalize=True, moe_router_activation_func="sigmoid", num_attention_heads=4,
    num_expert_group=1, num_experts=16, num_experts_per_token=4, num_key_value_heads=4,
    num_nextn_predict_layers=0, num_shared_experts=1, qk_nope_head_dim=32, qk_rope_head_dim=16,
    rms_norm_eps=1e-5, tie_word_embeddings=False, topk_group=1, topk_method="noaux_tc", use_cache=True,
    use_grouped_topk=True, v_head_dim=32, vocab_size=512)

K3_TEXT = dict(_KIMI_COMMON,
    activation_situ_beta=4.0, activation_situ_linear_beta=25.0, architectures=["KimiLinearForCausalLM"],
    attn_res_block_size=2, hidden_act="situ", latent_moe_use_norm=True,
    linear_attn_config=dict(full_attn_layers=[3, 6], gate_lower_bound=-5.0, head_dim=32, kda_layers=[1, 2, 4, 5],
                            num_heads=4, short_conv_kernel_size=4, use_full_rank_gate=True),
    mla_use_output_gate=True, num_hidden_layers=6, q_lora_rank=64, quantization_config=K3_QUANT,
    routed_expert_hidden_size=64, routed_scaling_factor=1.5)

KIMI_LINEAR = dict(_KIMI_COMMON,
    architectures=["KimiLinearForCausalLM"], hidden_act="silu",
    linear_attn_config=dict(full_attn_layers=[4, 5], head_dim=32, kda_layers=[1, 2, 3], num_heads=4,
                            short_conv_kernel_size=4),
    num_hidden_layers=5, q_lora_rank=None, routed_scaling_factor=2.446)

K2 = dict(
    architectures=["DeepseekV3ForCausalLM"], model_type="kimi_k2", attention_bias=False, attention_dropout=0.0,
    aux_loss_alpha=0.001, bos_token_id=1, eos_token_id=2, ep_size=1, first_k_dense_replace=1, hidden_act="silu",
    hidden_size=128, initializer_range=0.02, intermediate_size=192, kv_lora_rank=64, max_position_embeddings=2048,
    moe_intermediate_size=64, moe_layer_freq=1, n_group=4, n_routed_experts=16, n_shared_experts=1,
    norm_topk_prob=True, num_attention_heads=4, num_experts_per_tok=4, num_hidden_layers=4,
    num_key_value_heads=4, num_nextn_predict_layers=0, q_lora_rank=64, qk_nope_head_dim=32,
    qk_rope_head_dim=16, quantization_config={"activation_scheme": "dynamic", "fmt": "e4m3",
                                              "quant_method": "fp8", "weight_block_size": [32, 32]},
    rms_norm_eps=1e-6, rope_scaling={"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0, "mscale": 1.0,
                                     "mscale_all_dim": 1.0, "original_max_position_embeddings": 64, "type": "yarn"},
    rope_theta=50000.0, routed_scaling_factor=2.827, scoring_func="sigmoid", seq_aux=True,
    tie_word_embeddings=False, topk_group=2, topk_method="noaux_tc", torch_dtype="bfloat16", use_cache=True,
    v_head_dim=32, vocab_size=512)


def deep_merge(base, over):
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def build_config(family, override):
    text = deep_merge({"k3": K3_TEXT, "kimi_linear": KIMI_LINEAR, "k2": K2}[family], override or {})
    text.setdefault("pad_token_id", text["vocab_size"] - 1)
    if family != "k2":
        la, n = text["linear_attn_config"], text["num_hidden_layers"]
        if sorted(la["kda_layers"] + la["full_attn_layers"]) != list(range(1, n + 1)):
            raise SystemExit("kda_layers and full_attn_layers (1-based) must partition 1..num_hidden_layers")
    if family != "k3":
        return text, text
    top = {"architectures": ["KimiK3ForConditionalGeneration"], "bos_token_id": text["bos_token_id"],
           "dtype": "bfloat16", "eos_token_id": text["eos_token_id"], "ignore_index": -100,
           "model_type": "kimi_k3", "pad_token_id": text["pad_token_id"], "text_config": text,
           "tie_word_embeddings": False}
    return top, text


# K2.5 / K2-Thinking: the K2 architecture under text_config, tensors under "language_model.", routed
# experts compressed-tensors pack-quantized INT4 (the quantization_config of ../shared/kimi/k25),
# everything else BF16 (spec checkpoints.md A1).
K25_QUANT = {
    "config_groups": {"group_0": {
        "input_activations": None, "output_activations": None, "targets": ["Linear"],
        "weights": {"actorder": None, "block_structure": None, "dynamic": False, "group_size": 32,
                    "num_bits": 4, "observer": "minmax", "observer_kwargs": {}, "strategy": "group",
                    "symmetric": True, "type": "int"}}},
    "format": "pack-quantized", "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
                                           "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"],
    "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"}


def build_k25_config(override):
    text = {k: v for k, v in K2.items() if k != "quantization_config"}
    text = deep_merge(dict(text, quantization_config=K25_QUANT), override or {})
    text.setdefault("pad_token_id", text["vocab_size"] - 1)
    top = {"architectures": ["KimiK25ForConditionalGeneration"], "bos_token_id": text["bos_token_id"],
           "dtype": "bfloat16", "eos_token_id": text["eos_token_id"], "ignore_index": -100,
           "model_type": "kimi_k25", "pad_token_id": text["pad_token_id"], "text_config": text,
           "tie_word_embeddings": False}
    return top, text


class Gen:
    """Spec factory: every tensor is N(mean, std) from its own (seed, crc32(name)) stream."""

    def __init__(self, seed, fp8_block=None):
        self.seed, self.fp8_block, self.specs, self._memo = seed, fp8_block, [], {}

    def _draw(self, name, shape, std, mean=0.0):
        rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std) + np.float32(mean))

    def bf16(self, name, shape, std, mean=0.0):
        self.specs.append(Spec(name, "BF16", shape, lambda: F.f32_to_bf16_bits(self._draw(name, shape, std, mean))))

    def f32(self, name, shape, fn):
        seed = [self.seed, zlib.crc32(name.encode())]
        self.specs.append(Spec(name, "F32", shape, lambda: np.asarray(fn(np.random.default_rng(seed)), np.float32)))

    def norm(self, name, dim, spread=0.1):
        self.bf16(name, [dim], spread, 1.0)

    def _pair(self, base, fn):
        """Two tensors computed by one fn() -> (a, b); computed once, dropped after both are taken."""
        def get(i):
            ent = self._memo.setdefault(base, [None, 0])
            if ent[0] is None:
                ent[0] = fn()
            ent[1] += 1
            if ent[1] == 2:
                del self._memo[base]
            return ent[0][i]
        return (lambda: get(0)), (lambda: get(1))

    def linear(self, base, out, inp, gain=1.0, quant="bf16"):
        """A torch Linear weight [out, inp] with std gain/sqrt(inp), stored as quant."""
        std = gain / np.sqrt(inp)
        if quant == "bf16":
            return self.bf16(base + ".weight", [out, inp], std)
        w = lambda: self._draw(base + ".weight", [out, inp], std)
        if quant == "mxfp4":
            a, b = self._pair(base, lambda: F.mxfp4_quantize(w()))
            self.specs += [Spec(base + ".weight_packed", "U8", [out, inp // 2], a),
                           Spec(base + ".weight_scale", "U8", [out, inp // 32], b)]
        elif quant == "int4":
            a, b = self._pair(base, lambda: F.int4_quantize(w()))
            shape = lambda: np.array([out, inp], dtype=np.int32)
            self.specs += [Spec(base + ".weight_packed", "I32", [out, inp // 8], a),
                           Spec(base + ".weight_scale", "BF16", [out, inp // 32], b),
                           Spec(base + ".weight_shape", "I32", [2], shape)]
        elif quant == "fp8":
            blk = self.fp8_block
            a, b = self._pair(base, lambda: F.fp8_block_quantize(w(), blk))
            self.specs += [Spec(base + ".weight", "F8_E4M3", [out, inp], a),
                           Spec(base + ".weight_scale_inv", "F32", [-(-out // blk), -(-inp // blk)], b)]
        else:
            raise ValueError(quant)


# Gains (std * sqrt(fan_in)) chosen so activations stay O(1) while every nonlinearity is exercised:
# SiTU's up branch needs |u| of a few units for 25*tanh(u/25) to differ measurably from u.
GATE, UP, DOWN = 2.0, 2.0, 0.5
SITU_UP, SITU_DOWN = 4.0, 0.3


def glu_specs(g, base, names, d_in, inter, d_out, act, quant):
    up_gain, down_gain = (SITU_UP, SITU_DOWN) if act == "situ" else (UP, DOWN)
    gate_n, up_n, down_n = names
    g.linear(f"{base}.{gate_n}", inter, d_in, GATE, quant)
    g.linear(f"{base}.{up_n}", inter, d_in, up_gain, quant)
    g.linear(f"{base}.{down_n}", d_out, inter, down_gain, quant)


def kimi_layer(g, c, i, pre, k3):
    d, la = c["hidden_size"], c["linear_attn_config"]
    h, hd = la["num_heads"], la["head_dim"]
    p, lp, act = h * hd, f"{pre}layers.{i}.", c["hidden_act"]
    g.norm(lp + "input_layernorm.weight", d)
    g.norm(lp + "post_attention_layernorm.weight", d)
    if k3:  # AttnRes pseudo-queries with real magnitude so depth mixing is far from uniform
        for site in ("self_attention_res", "mlp_res"):
            g.norm(f"{lp}{site}_norm.weight", d, 0.3)
            g.bf16(f"{lp}{site}_proj.weight", [1, d], 1.5 / np.sqrt(d))
    a = lp + "self_attn."
    if i + 1 in la["kda_layers"]:
        for n in "qkv":
            g.linear(f"{a}{n}_proj", p, d)
            g.f32(f"{a}{n}_conv1d.weight", [p, 1, la["short_conv_kernel_size"]],
                  lambda r, s=(p, 1, la["short_conv_kernel_size"]): r.standard_normal(s) * 0.5)
        g.linear(a + "f_a_proj", hd, d)
        g.linear(a + "f_b_proj", p, hd, 0.5)
        g.linear(a + "b_proj", h, d, 1.5)
        if "gate_lower_bound" in la:  # K3 safe gate: A_log [head_dim], first num_heads used, tail zero
            assert h <= hd, "K3 A_log is stored with head_dim entries"
            g.f32(a + "A_log", [hd], lambda r: np.concatenate([np.log(r.uniform(0.5, 2.0, h)), np.zeros(hd - h)]))
            g.f32(a + "dt_bias", [p], lambda r: r.uniform(-4.0, 0.5, p))
        else:  # Kimi-Linear: A_log [1,1,H,1]; dt_bias = inverse softplus of dt in [0.01, 0.3]
            g.f32(a + "A_log", [1, 1, h, 1], lambda r: np.log(r.uniform(0.5, 4.0, (1, 1, h, 1))))
            g.f32(a + "dt_bias", [p], lambda r: np.log(np.expm1(np.exp(r.uniform(np.log(0.01), np.log(0.3), p)))))
        if la.get("use_full_rank_gate"):
            g.linear(a + "g_proj", p, d)
        else:
            g.linear(a + "g_a_proj", hd, d)
            g.linear(a + "g_b_proj", p, hd)
        g.norm(a + "o_norm.weight", hd)
        g.linear(a + "o_proj", d, p)
    else:
        mla_specs(g, c, a, "bf16")
        if c.get("mla_use_output_gate"):
            g.linear(a + "g_proj", c["num_attention_heads"] * c["v_head_dim"], d)
        g.linear(a + "o_proj", d, c["num_attention_heads"] * c["v_head_dim"])
    if i < c["first_k_dense_replace"] or i % c["moe_layer_freq"] != 0:
        return glu_specs(g, lp + "mlp", ("gate_proj", "up_proj", "down_proj"), d, c["intermediate_size"], d, act, "bf16")
    m, e, im = lp + "block_sparse_moe.", c["num_experts"], c["moe_intermediate_size"]
    router_specs(g, m + "gate", e, d)
    width = d
    if k3:  # latent MoE (spec §4.3)
        width = c["routed_expert_hidden_size"]
        g.linear(m + "routed_expert_down_proj", width, d)
        g.norm(m + "routed_expert_norm.weight", width)
        g.linear(m + "routed_expert_up_proj", d, width)
    for j in range(e):
        glu_specs(g, f"{m}experts.{j}", ("w1", "w3", "w2"), width, im, width, act, "mxfp4" if k3 else "bf16")
    glu_specs(g, m + "shared_experts", ("gate_proj", "up_proj", "down_proj"), d, im * c["num_shared_experts"], d,
              act, "bf16")


def router_specs(g, base, e, d):
    g.linear(base, e, d, 2.0)  # BF16 router weight; gain 2 spreads scores (wider top-k gaps)
    g.f32(base + ".e_score_correction_bias", [e], lambda r: r.standard_normal(e) * 0.05)


def mla_specs(g, c, a, quant):
    d, h = c["hidden_size"], c["num_attention_heads"]
    dn, dr, dv, r = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"], c["kv_lora_rank"]
    if c.get("q_lora_rank"):
        g.linear(a + "q_a_proj", c["q_lora_rank"], d, 1.0, quant)
        g.norm(a + "q_a_layernorm.weight", c["q_lora_rank"])
        g.linear(a + "q_b_proj", h * (dn + dr), c["q_lora_rank"], 1.2, quant)
    else:
        g.linear(a + "q_proj", h * (dn + dr), d, 1.2, quant)
    g.linear(a + "kv_a_proj_with_mqa", r + dr, d, 1.0, quant)
    g.norm(a + "kv_a_layernorm.weight", r)
    g.linear(a + "kv_b_proj", h * (dn + dv), r, 1.2, quant)


def k2_layer(g, c, i, pre="model.", dense="fp8", experts="fp8"):
    """K2: FP8 everywhere; K2.5 (pre "language_model.model."): BF16 dense, INT4 routed experts."""
    d, lp = c["hidden_size"], f"{pre}layers.{i}."
    a = lp + "self_attn."
    g.norm(lp + "input_layernorm.weight", d)
    g.norm(lp + "post_attention_layernorm.weight", d)
    mla_specs(g, c, a, dense)
    g.linear(a + "o_proj", d, c["num_attention_heads"] * c["v_head_dim"], 1.0, dense)
    names = ("gate_proj", "up_proj", "down_proj")
    if i < c["first_k_dense_replace"] or i % c["moe_layer_freq"] != 0:
        return glu_specs(g, lp + "mlp", names, d, c["intermediate_size"], d, "silu", dense)
    e, im = c["n_routed_experts"], c["moe_intermediate_size"]
    router_specs(g, lp + "mlp.gate", e, d)
    for j in range(e):
        glu_specs(g, f"{lp}mlp.experts.{j}", names, d, im, d, "silu", experts)
    glu_specs(g, lp + "mlp.shared_experts", names, d, im * c["n_shared_experts"], d, "silu", dense)


def build_specs(family, c, seed):
    blk = c["quantization_config"]["weight_block_size"][0] if family == "k2" else None
    g = Gen(seed, blk)
    d, v = c["hidden_size"], c["vocab_size"]
    nested = family in ("k3", "k25")
    pre = "language_model.model." if nested else "model."
    g.bf16(pre + "embed_tokens.weight", [v, d], 1.0)
    for i in range(c["num_hidden_layers"]):
        if family == "k2":
            k2_layer(g, c, i)
        elif family == "k25":
            k2_layer(g, c, i, pre, "bf16", "int4")
        else:
            kimi_layer(g, c, i, pre, family == "k3")
    if family == "k3":
        g.norm(pre + "output_attn_res_norm.weight", d, 0.3)
        g.bf16(pre + "output_attn_res_proj.weight", [1, d], 1.5 / np.sqrt(d))
    g.norm(pre + "norm.weight", d)
    g.linear(("language_model." if nested else "") + "lm_head", v, d, 4.0)
    return g.specs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", required=True, choices=["k3", "kimi_linear", "k2", "k25"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--override", default=None, help="JSON merged (recursively) into the (text) config")
    ap.add_argument("--max-shard-bytes", type=int, default=1 << 30)
    args = ap.parse_args()
    override = json.loads(args.override) if args.override else None
    top, text = build_k25_config(override) if args.family == "k25" else build_config(args.family, override)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(top, f, indent=2)
        f.write("\n")
    specs = build_specs(args.family, text, args.seed)
    files = write_sharded(args.out, specs, args.max_shard_bytes)
    total = sum(s.nbytes for s in specs)
    print(f"{args.family}: {len(specs)} tensors, {total} bytes in {len(files)} shards -> {args.out}")


if __name__ == "__main__":
    main()
