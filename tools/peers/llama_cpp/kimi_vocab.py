"""The two `transformers` entry points llama.cpp's Kimi converters call, for convert.py.

`AutoTokenizer.from_pretrained(folder)` returns a KimiVocab with the attributes Moonshot's
TikTokenTokenizer exposes and the converter reads: `model._mergeable_ranks` (bytes -> rank),
`special_tokens` (str -> id), `eos_id`, and `encode(text)`. The converter calls encode once, on a
fixed check text, and hashes the ids to recognise the pre-tokenizer; encode runs k3's own Kimi
tokenizer (`k3 tokenize`, token-identical to tiktoken on Kimi's full vocabulary), so the hash
identifies the Kimi pre-tokenizer exactly as it does for a published checkpoint.
`AutoConfig.from_pretrained` raises, which makes the converter read config.json itself.
`convert_slow_tokenizer.bytes_to_unicode` is GPT-2's reversible byte -> printable character map.
"""
import base64
import json
import os
import subprocess
import sys
import types

NUM_SPECIAL = 256  # Kimi reserves the last 256 ids of its vocabulary for special tokens
KIMI_FIRST_SPECIAL = 163584


def bytes_to_unicode():
    printable = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    chars = list(printable)
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(printable, chars)}


def write_truncated_tokenizer(kimi_dir, out_dir, vocab_size):
    """tiktoken.model with ranks < vocab_size - 256 and a tokenizer_config.json whose special
    tokens sit at the top 256 ids, as Kimi's do in its full vocabulary."""
    regular = vocab_size - NUM_SPECIAL
    with open(os.path.join(kimi_dir, "tiktoken.model")) as src, \
            open(os.path.join(out_dir, "tiktoken.model"), "w") as dst:
        for line in src:
            if line.strip() and int(line.split()[1]) < regular:
                dst.write(line)
    config = json.load(open(os.path.join(kimi_dir, "tokenizer_config.json")))
    decoder = {str(int(i) - KIMI_FIRST_SPECIAL + regular): t
               for i, t in config.get("added_tokens_decoder", {}).items()}
    keep = {k: config[k] for k in ("bos_token", "eos_token", "pad_token", "unk_token")
            if k in config}
    json.dump({"added_tokens_decoder": decoder, **keep},
              open(os.path.join(out_dir, "tokenizer_config.json"), "w"), indent=2)


class _Ranks:
    def __init__(self, ranks):
        self._mergeable_ranks = ranks


class KimiVocab:
    def __init__(self, folder, kimi_dir, k3):
        ranks = {}
        with open(os.path.join(folder, "tiktoken.model")) as f:
            for line in f:
                if line.strip():
                    token, rank = line.split()
                    ranks[base64.b64decode(token)] = int(rank)
        self.model = _Ranks(ranks)
        config = json.load(open(os.path.join(folder, "tokenizer_config.json")))
        self.special_tokens = {t["content"]: int(i)
                               for i, t in config["added_tokens_decoder"].items()}
        self.eos_id = self.special_tokens.get(config.get("eos_token", "[EOS]"))
        self._kimi_dir, self._k3 = kimi_dir, k3

    def encode(self, text):
        run = subprocess.run([self._k3, "tokenize", "--model", self._kimi_dir, "--specials",
                              "none"], input=text.encode(), capture_output=True, check=True)
        return [int(t) for t in run.stdout.split()]


def install(kimi_dir, folder, k3):
    """Registers the `transformers` stand-in in sys.modules and gives torch 1.13 the float8 names
    the converter's dtype tables mention."""
    import torch
    for name in ("float8_e4m3fn", "float8_e5m2"):
        if not hasattr(torch, name):
            setattr(torch, name, torch.uint8)  # only named in tables: FP8 data never reaches it

    class AutoConfig:
        @staticmethod
        def from_pretrained(*_args, **_kwargs):
            raise OSError("no transformers here: the converter reads config.json itself")

    class AutoTokenizer:
        @staticmethod
        def from_pretrained(path, **_kwargs):
            return KimiVocab(str(path), kimi_dir, k3)

    transformers = types.ModuleType("transformers")
    transformers.AutoConfig, transformers.AutoTokenizer = AutoConfig, AutoTokenizer
    slow = types.ModuleType("transformers.convert_slow_tokenizer")
    slow.bytes_to_unicode = bytes_to_unicode
    transformers.convert_slow_tokenizer = slow
    sys.modules["transformers"] = transformers
    sys.modules["transformers.convert_slow_tokenizer"] = slow
