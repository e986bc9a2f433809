"""K3 checkpoints in the Hugging Face layout `k3` loads (spec model.md §2.5, §3.2, §4.2, §7.2, §10):
config.json (model_type kimi_k3, the text model under text_config), one model.safetensors with
every tensor under "language_model.", routed experts as compressed-tensors MXFP4 (weight_packed /
weight_scale), conv kernels, A_log, dt_bias and e_score_correction_bias in F32, the rest BF16.

  load(folder, dtype)                      -> (K3Model, top-level config)
  export(model, folder, top_config, ...)   writes the folder (tokenizer files copied when given)
  make_config(sizes)                       a top-level kimi_k3 config from a few sizes
"""
import json
import os
import re
import shutil

import torch

import k3io
from model import K3Model

PREFIX = "language_model."
F32_NAMES = re.compile(r"(_conv1d\.weight|\.A_log|\.dt_bias|\.e_score_correction_bias)$")
EXPERT = re.compile(r"^(.*)\.experts_(w[123])$")
TOKENIZER_FILES = ("tiktoken.model", "tokenizer_config.json")

# compressed-tensors MXFP4 for the routed experts only (spec §7.2).
QUANT = {
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


def make_config(s):
    """s: dict with vocab, hidden, layers, kda_heads, head_dim, mla_heads, q_lora, kv_lora, nope,
    rope, v_dim, dense_inter, experts, top_k, moe_inter, latent, shared, attn_res_block, and the
    special ids bos, eos, pad.  Every 4th layer (1-based) and the last are MLA, the others KDA
    (K3's pattern: 4, 8, ..., 92 and 93), unless s["mla_layers"] lists the 1-based MLA layers
    (for shape experiments: `train.py --sizes '{"mla_layers": [2, 4, 6]}'`)."""
    mla = sorted(s.get("mla_layers") or {i for i in range(1, s["layers"] + 1) if i % 4 == 0} | {s["layers"]})
    text = {
        "model_type": "kimi_linear", "architectures": ["KimiLinearForCausalLM"],
        "vocab_size": s["vocab"], "hidden_size": s["hidden"], "num_hidden_layers": s["layers"],
        "intermediate_size": s["dense_inter"], "first_k_dense_replace": 1, "moe_layer_freq": 1,
        "rms_norm_eps": 1e-5, "hidden_act": "situ", "activation_situ_beta": 4.0,
        "activation_situ_linear_beta": 25.0, "attn_res_block_size": s["attn_res_block"],
        "num_attention_heads": s["mla_heads"], "num_key_value_heads": s["mla_heads"],
        "q_lora_rank": s["q_lora"], "kv_lora_rank": s["kv_lora"], "qk_nope_head_dim": s["nope"],
        "qk_rope_head_dim": s["rope"], "v_head_dim": s["v_dim"], "mla_use_nope": True,
        "mla_use_output_gate": True, "num_experts": s["experts"], "num_experts_per_token": s["top_k"],
        "num_shared_experts": s["shared"], "moe_intermediate_size": s["moe_inter"],
        "routed_expert_hidden_size": s["latent"], "latent_moe_use_norm": True, "moe_renormalize": True,
        "routed_scaling_factor": 1.0, "moe_router_activation_func": "sigmoid", "use_grouped_topk": True,
        "num_expert_group": 1, "topk_group": 1, "topk_method": "noaux_tc",
        "num_nextn_predict_layers": 0, "max_position_embeddings": s.get("max_position", 131072),
        "tie_word_embeddings": False, "dtype": "bfloat16", "use_cache": True,
        "bos_token_id": s["bos"], "eos_token_id": s["eos"], "pad_token_id": s["pad"],
        "linear_attn_config": {
            "num_heads": s["kda_heads"], "head_dim": s["head_dim"], "short_conv_kernel_size": 4,
            "gate_lower_bound": -5.0, "use_full_rank_gate": True,
            "kda_layers": [i for i in range(1, s["layers"] + 1) if i not in mla], "full_attn_layers": mla},
        "quantization_config": QUANT}
    return {"architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3",
            "bos_token_id": s["bos"], "eos_token_id": s["eos"], "pad_token_id": s["pad"],
            "dtype": "bfloat16", "ignore_index": -100, "tie_word_embeddings": False, "text_config": text}


def load(folder, dtype=torch.float32):
    """A K3Model holding the checkpoint's values exactly (BF16, F32, MXFP4 dequantised)."""
    with open(os.path.join(folder, "config.json")) as f:
        top = json.load(f)
    assert top["model_type"] == "kimi_k3", "only kimi_k3 checkpoints"
    model = K3Model(top["text_config"]).to(dtype)
    raw = k3io.read_safetensors(folder)
    used = set()

    def get(name):
        used.add(name)
        return k3io.to_float(*raw[name])

    state = {}
    for key, value in model.state_dict().items():
        m = EXPERT.match(key)
        if m:
            base = f"{PREFIX}{m.group(1)}.experts."
            mats = []
            for e in range(value.shape[0]):
                n = f"{base}{e}.{m.group(2)}."
                used.update([n + "weight_packed", n + "weight_scale"])
                mats.append(k3io.mxfp4_unpack(raw[n + "weight_packed"][1], raw[n + "weight_scale"][1]))
            state[key] = torch.stack(mats)
        else:
            state[key] = get(PREFIX + key).reshape(value.shape)
    model.load_state_dict({k: v.to(dtype) for k, v in state.items()})
    unused = sorted(set(raw) - used)
    assert not unused, f"checkpoint tensors the model does not have: {unused[:4]}"
    return model, top


def tensors_of(model, mxfp4=True):
    """{checkpoint name: (dtype, numpy storage)} for the model's parameters and buffers."""
    out = {}
    for key, value in model.state_dict().items():
        m = EXPERT.match(key)
        if m:
            for e in range(value.shape[0]):
                n = f"{PREFIX}{m.group(1)}.experts.{e}.{m.group(2)}."
                if mxfp4:
                    packed, scale = k3io.mxfp4_pack(value[e])
                    out[n + "weight_packed"], out[n + "weight_scale"] = ("U8", packed), ("U8", scale)
                else:
                    out[n + "weight"] = ("BF16", k3io.to_bf16_bits(value[e]))
        elif F32_NAMES.search(key):
            out[PREFIX + key] = ("F32", value.detach().float().numpy())
        else:
            out[PREFIX + key] = ("BF16", k3io.to_bf16_bits(value))
    return out


def export(model, folder, top, tokenizer_dir=None, generation=None, mxfp4=True):
    """Writes config.json, model.safetensors, and (from tokenizer_dir) the tokenizer files and a
    generation_config.json whose eos is K3's <|end_of_msg|> (top["eos_token_id"])."""
    os.makedirs(folder, exist_ok=True)
    top = json.loads(json.dumps(top))
    if not mxfp4:
        top["text_config"].pop("quantization_config", None)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(top, f, indent=2)
        f.write("\n")
    tensors = tensors_of(model, mxfp4)
    k3io.write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
    if tokenizer_dir:
        for name in TOKENIZER_FILES:
            shutil.copyfile(os.path.join(tokenizer_dir, name), os.path.join(folder, name))
    gen = generation or {"eos_token_id": top["eos_token_id"],
                         "max_length": top["text_config"]["max_position_embeddings"]}
    with open(os.path.join(folder, "generation_config.json"), "w") as f:
        json.dump(gen, f, indent=2)
        f.write("\n")
    return tensors
