#!/usr/bin/env python3
"""`k3 train-vocab` end to end: a corpus in, a K3 tokenizer folder out that the rest of k3 reads.

The written folder tokenizes the corpus's words in fewer ids than the demo's vocabulary and
decodes every text back; its config.json puts bos/eos/pad at K3's offsets after the learned ranks
(top level and text_config, vocab_size = ranks + 256); `k3 render --model` renders a chat with it
and ends the completion on its own <|end_of_msg|>. Bad input is refused with a clear message and
a non-zero exit: a corpus that is not UTF-8, a --vocab-size below its floor.

Usage: train_vocab_cli_test.py K3_BINARY WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def k3(binary, *args, stdin=None):
    return subprocess.run([binary, *args], input=stdin, capture_output=True, text=True, timeout=120)


def main():
    binary, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    corpus = os.path.join(work, "corpus.txt")
    lines = [f"What's the weather in Paris on 2026-07-{d:02d}? call tool=\"get_weather\"" for d in range(1, 29)]
    with open(corpus, "w") as f:
        f.write("\n".join(lines * 20) + "\nh\u00e9llo \u4e16\u754c\n")
    out = os.path.join(work, "vocab")
    run = k3(binary, "train-vocab", "--corpus", corpus, "--out", out, "--vocab-size", "1024")
    check(run.returncode == 0, f"train-vocab exit {run.returncode}: {run.stderr[-400:]}")
    check("ranks + 256 specials" in run.stderr, "it says what it wrote")
    config = json.load(open(os.path.join(out, "config.json")))
    ranks = sum(1 for _ in open(os.path.join(out, "tiktoken.model")))
    for level in (config, config["text_config"]):
        check(level["vocab_size"] == ranks + 256 and level["bos_token_id"] == ranks and
              level["eos_token_id"] == ranks + 2 and level["pad_token_id"] == ranks + 255,
              f"config ids at K3's offsets after {ranks} ranks: {level.get('eos_token_id')}")
    check(json.load(open(os.path.join(out, "generation_config.json")))["eos_token_id"] == ranks + 2,
          "generation_config.json stops at <|end_of_msg|>")
    text = "What's the weather in Paris on 2026-07-14? call tool=\"get_weather\""
    mine = k3(binary, "tokenize", "--model", out, stdin=text).stdout.split()
    demo = k3(binary, "tokenize", stdin=text).stdout.split()
    check(0 < len(mine) < len(demo), f"fewer ids than the demo vocabulary: {len(mine)} vs {len(demo)}")
    for sample in (text, "h\u00e9llo \u4e16\u754c zzz", "never seen: Qwxz 9981"):
        ids = k3(binary, "tokenize", "--model", out, stdin=sample).stdout
        back = k3(binary, "detokenize", "--model", out, stdin=ids).stdout
        check(back == sample, f"round trip {sample!r} -> {back!r}")
    chat = {"request": {"messages": [{"role": "user", "content": "Hi"}]},
            "completion": {"role": "assistant", "content": "Hello!"}}
    rendered = k3(binary, "render", "--model", out, stdin=json.dumps(chat) + "\n")
    check(rendered.returncode == 0, f"k3 render --model: {rendered.stderr[-300:]}")
    if rendered.returncode == 0:
        check(json.loads(rendered.stdout)["completion_ids"][-1] == ranks + 2, "the completion ends on <|end_of_msg|>")
    bad = os.path.join(work, "bad.txt")
    with open(bad, "wb") as f:
        f.write(b"fine text \xff\xfe broken")
    refused = k3(binary, "train-vocab", "--corpus", bad, "--out", os.path.join(work, "bad"))
    check(refused.returncode != 0 and "not UTF-8 at byte 10" in refused.stderr,
          f"a non-UTF-8 corpus is refused by byte: {refused.stderr[-200:]}")
    small = k3(binary, "train-vocab", "--corpus", corpus, "--out", os.path.join(work, "s"), "--vocab-size", "300")
    check(small.returncode != 0 and "--vocab-size" in small.stderr, "a too-small --vocab-size is refused by name")
    print("PASS" if not FAILURES else f"{len(FAILURES)} FAILURES")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
