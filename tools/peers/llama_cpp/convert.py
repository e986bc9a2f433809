"""Converts a k3 benchmark checkpoint to GGUF with llama.cpp's own convert_hf_to_gguf.py.

`k3 bench model --vs-llama-cpp DIR` runs this once per benchmark model. The converter is llama.cpp's,
unchanged; this wrapper only supplies what it imports and Debian does not package:

* `transformers`: llama.cpp's Kimi converters read the vocabulary through
  `AutoTokenizer.from_pretrained(..., trust_remote_code=True)` (Moonshot's tiktoken tokenizer class)
  and the config through `AutoConfig`. kimi_vocab.py stands in for both with the same attributes
  (`model._mergeable_ranks`, `special_tokens`, `eos_id`, `encode`); AutoConfig raises, so the
  converter takes its documented fallback of reading config.json.
* torch: Debian's python3-torch is 1.13, which has no float8 dtypes; the converter names them in a
  class-level table. They are aliased to uint8 before the import. No FP8 tensor reaches the
  converter: FP8-block checkpoints (K2) are dequantized to BF16 here first (reference/formats.py),
  then llama.cpp quantizes them to Q8_0, the format llama.cpp users run K2 in. INT4 experts
  (K2-Thinking / K2.5) go through the converter's own dequantization to F16 (eagerly: its lazy
  path needs torch 2), then llama.cpp's llama-quantize makes the experts Q4_0 and the rest BF16.

The benchmark checkpoints have a 32768-entry vocabulary and no tokenizer files, so a staging folder
links the checkpoint's files and adds the first 32512 ranks of Kimi's tiktoken.model (a BPE
vocabulary truncated by rank stays closed under its merges) with the 256 special tokens moved to
ids 32512..32767. Token identity does not matter to a speed benchmark; the shapes do.

Usage: /usr/bin/python3 tools/peers/llama_cpp/convert.py --llama-cpp DIR --model CKPT --out F.gguf
       [--outtype auto|bf16|q8_0|q4_0-experts] [--kimi-tokenizer DIR] [--k3 PATH]
"""
import argparse
import json
import os
import runpy
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(REPO, "reference"))
sys.path.insert(0, HERE)

import formats  # noqa: E402  (reference/formats.py)
import kimi_vocab  # noqa: E402
import safetensors_io  # noqa: E402  (reference/safetensors_io.py)


def text_config(config):
    return config.get("text_config", config)


def is_fp8_blocks(config):
    q = text_config(config).get("quantization_config") or config.get("quantization_config") or {}
    return q.get("quant_method") == "fp8"


def dequantize_fp8_folder(src, dst, config):
    """Writes every tensor of `src` to `dst` with FP8-block weights (and their weight_scale_inv)
    replaced by BF16 weights, one shard at a time, and a config without quantization_config."""
    block = (text_config(config).get("quantization_config") or config["quantization_config"])
    b = block.get("weight_block_size", [128, 128])
    if b[0] != b[1]:
        sys.exit(f"FP8 blocks {b}: only square blocks are supported")
    b = b[0]
    index = json.load(open(os.path.join(src, "model.safetensors.index.json")))
    shards = sorted(set(index["weight_map"].values()))
    weight_map = {}
    for shard in shards:
        tensors = safetensors_io.read_file(os.path.join(src, shard))
        specs = []
        for name, (dtype, array) in tensors.items():
            if name.endswith(".weight_scale_inv"):
                continue
            if dtype == "F8_E4M3":
                scale = tensors[name + "_scale_inv"][1]  # <base>.weight -> <base>.weight_scale_inv
                w = formats.fp8_block_dequantize(array, scale, b)
                dtype, array = "BF16", formats.f32_to_bf16_bits(w.astype(np.float32))
            specs.append(safetensors_io.Spec(name, dtype, array.shape, array))
            weight_map[name] = shard
        safetensors_io.write_file(os.path.join(dst, shard), specs)
        print(f"dequantized {shard}", file=sys.stderr, flush=True)
    json.dump({"metadata": {}, "weight_map": weight_map},
              open(os.path.join(dst, "model.safetensors.index.json"), "w"))
    config = json.loads(json.dumps(config))
    config.pop("quantization_config", None)
    text_config(config).pop("quantization_config", None)

    json.dump(config, open(os.path.join(dst, "config.json"), "w"), indent=2)


def stage(model, staging, args):
    """Fills `staging` with what the converter reads; returns the checkpoint's own config."""
    config = json.load(open(os.path.join(model, "config.json")))
    # Published Kimi configs carry num_key_value_heads (= the MLA head count), which llama.cpp's
    # converter splits kv_b_proj by, and max_position_embeddings, which it stores as the context
    # length; k3 needs neither, so the benchmark configs may lack them.
    staged = json.loads(json.dumps(config))
    text = text_config(staged)
    text.setdefault("num_key_value_heads", text["num_attention_heads"])
    text.setdefault("max_position_embeddings", 131072)
    if is_fp8_blocks(config):
        dequantize_fp8_folder(model, staging, staged)
    else:
        for name in os.listdir(model):
            if name != "config.json":
                os.symlink(os.path.join(os.path.abspath(model), name), os.path.join(staging, name))
        json.dump(staged, open(os.path.join(staging, "config.json"), "w"), indent=2)
    kimi_vocab.write_truncated_tokenizer(args.kimi_tokenizer, staging, text["vocab_size"])
    return config


def is_int4_experts(config):
    q = text_config(config).get("quantization_config") or config.get("quantization_config") or {}
    return q.get("format") == "pack-quantized"


def outtype_for(config, requested):
    """auto: what llama.cpp users run each published format as: Q8_0 for FP8 blocks (K2), BF16
    dense with Q4_0 routed experts for INT4 experts (K2-Thinking / K2.5), else BF16."""
    if requested != "auto":
        return requested
    if is_fp8_blocks(config):
        return "q8_0"
    return "q4_0-experts" if is_int4_experts(config) else "bf16"


def quantize_experts_q4_0(llama_cpp, f16_gguf, out):
    """llama.cpp's converter dequantizes INT4 experts; its llama-quantize makes the routed experts
    Q4_0 again (group 32, one F16 scale: the INT4 grid when a group's extreme is -8 * scale) and
    the rest BF16 (exact from the F16 copy for weights inside F16's range)."""
    binary = next((p for p in (os.path.join(llama_cpp, "build", "bin", "llama-quantize"),
                               os.path.join(llama_cpp, "bin", "llama-quantize"))
                   if os.path.isfile(p)), None)
    if binary is None:
        sys.exit(f"no llama-quantize under {llama_cpp}: build it (--target llama-quantize)")
    # Per-tensor overrides apply only under a quantized file type, so the base is Q8_0 and every
    # tensor is named: the first matching pattern wins.
    types = ["--tensor-type", "_exps=q4_0", "--tensor-type", "weight=bf16"]
    subprocess.run([binary, "--pure", *types, f16_gguf, out, "Q8_0"], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llama-cpp", required=True, help="llama.cpp source folder")
    parser.add_argument("--model", required=True, help="HF-format checkpoint folder")
    parser.add_argument("--out", required=True, help="GGUF file to write")
    parser.add_argument("--outtype", default="auto",
                        help="auto (q8_0 for FP8 blocks, q4_0-experts for INT4 experts, else "
                             "bf16), bf16, q8_0, q4_0-experts")
    parser.add_argument("--kimi-tokenizer", default=os.path.join(
        os.environ.get("K3_SHARED_DIR", os.path.join(REPO, "..", "shared")), "kimi", "k3"))
    parser.add_argument("--k3", default=os.path.join(REPO, "build", "release", "apps", "k3", "k3"))
    args = parser.parse_args()
    converter = os.path.join(args.llama_cpp, "convert_hf_to_gguf.py")
    if not os.path.isfile(converter):
        sys.exit(f"no {converter}: --llama-cpp must be a llama.cpp source folder")
    with tempfile.TemporaryDirectory(prefix="k3-gguf-", dir=os.path.dirname(
            os.path.abspath(args.out))) as staging:
        config = stage(args.model, staging, args)
        kimi_vocab.install(args.kimi_tokenizer, staging, args.k3)
        sys.path.insert(0, os.path.join(args.llama_cpp, "gguf-py"))
        sys.path.insert(0, args.llama_cpp)
        tmp_out = args.out + ".partial"
        outtype = outtype_for(config, args.outtype)
        sys.argv = [converter, staging, "--outfile", tmp_out,
                    "--outtype", "f16" if outtype == "q4_0-experts" else outtype]
        if outtype == "q4_0-experts":
            # Its lazy INT4 dequantization mixes meta and CPU tensors, which torch 1.13 refuses.
            sys.argv.append("--no-lazy")
        runpy.run_path(converter, run_name="__main__")
        if outtype == "q4_0-experts":
            quantize_experts_q4_0(args.llama_cpp, tmp_out, tmp_out + ".q4")
            os.replace(tmp_out + ".q4", tmp_out)
        os.replace(tmp_out, args.out)


if __name__ == "__main__":
    main()
