#!/usr/bin/env python3
"""A larger BPE vocabulary for the demo model, learned from its own training conversations.

    /usr/bin/python3 tools/train/make_vocab.py --k3 build/release/apps/k3/k3 --data DATA_DIR \
        --out VOCAB_DIR [--vocab-size 4096] [--conversations 20000]

DATA_DIR is make_data.py's output rendered with the demo tokenizer (DATA_DIR/demo). The first
--conversations training conversations are decoded back to text exactly as `k3 serve` renders
them (`k3 detokenize`), the special tokens are cut out (they keep their reserved ids), and
`k3 train-vocab` learns the merges from the rest and writes VOCAB_DIR (a K3 tokenizer folder).
Held-out conversations are never read. With --neutral-entities the entity pools' words (cities,
names, surnames, products, tickers; not the reminder texts, whose words are common) are cut out of
the corpus too, so
no training entity becomes a token of its own and held-out entities split like training ones (the
invented entities, half of the training ones, still teach the syllables). Then render the data with
it and train on it:

    make_data.py --k3 K3 --out DATA2 --model VOCAB_DIR ...   # same records, new token ids
    train.py --data DATA2 --tokenizer VOCAB_DIR ...
"""
import argparse
import json
import os
import re
import subprocess
import sys

import data_pools as P


def special_pattern(tokenizer_dir):
    """A regex matching every added token of the folder's tokenizer_config.json."""
    with open(os.path.join(tokenizer_dir, "tokenizer_config.json")) as f:
        added = json.load(f)["added_tokens_decoder"]
    names = sorted((v["content"] for v in added.values()), key=len, reverse=True)
    return re.compile("|".join(re.escape(n) for n in names) + r"|<\|reserved_token_\d+\|>")


def entity_pattern():
    """A regex matching every word of the name-like entity pools as a whole word."""
    pools = (P.CITIES, P.NAMES, P.SURNAMES, P.PRODUCTS, P.SYMBOLS)
    words = sorted({w for pool in pools for member in pool for w in member.split()}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")


def corpus_text(k3, data, n, neutral_entities=False):
    """The first n training conversations as rendered text, special tokens replaced by newlines
    (and with neutral_entities the entity pools' words removed)."""
    demo = os.path.join(data, "demo")
    with open(os.path.join(data, "train.ids.jsonl")) as f:
        rows = [json.loads(line) for _, line in zip(range(n), f)]
    lines = "".join(json.dumps(r["prompt_ids"] + r["completion_ids"]) + "\n" for r in rows)
    out = subprocess.run([k3, "detokenize", "--model", demo, "--jsonl"], input=lines, capture_output=True,
                         text=True)
    if out.returncode != 0:
        sys.exit(f"k3 detokenize failed: {out.stderr.strip()}")
    cut = special_pattern(demo)
    texts = [cut.sub("\n", json.loads(t)) for t in out.stdout.splitlines()]
    if neutral_entities:
        entity = entity_pattern()
        texts = [entity.sub("", t) for t in texts]
    return "\n".join(texts), len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k3", required=True)
    ap.add_argument("--data", required=True, help="make_data.py output folder (rendered with the demo tokenizer)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--vocab-size", type=int, default=4096)
    ap.add_argument("--conversations", type=int, default=20000)
    ap.add_argument("--neutral-entities", action="store_true",
                    help="cut the entity pools' words out of the corpus (no entity gets a token of its own)")
    args = ap.parse_args()
    text, n = corpus_text(args.k3, args.data, args.conversations, args.neutral_entities)
    os.makedirs(args.out, exist_ok=True)
    corpus = os.path.join(args.out, "corpus.txt")
    with open(corpus, "w") as f:
        f.write(text)
    print(f"corpus: {n} training conversations, {len(text.encode())} bytes", flush=True)
    subprocess.run([args.k3, "train-vocab", "--corpus", corpus, "--out", args.out, "--vocab-size",
                    str(args.vocab_size), "--like", os.path.join(args.data, "demo")], check=True)
    os.remove(corpus)


if __name__ == "__main__":
    main()
