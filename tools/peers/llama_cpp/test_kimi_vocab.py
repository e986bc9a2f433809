"""Checks the vocabulary stand-in that lets llama.cpp's converter read k3's benchmark checkpoints.

Usage: /usr/bin/python3 tools/peers/llama_cpp/test_kimi_vocab.py K3_BINARY KIMI_TOKENIZER_DIR
Exits 1 on the first failed check.
"""
import hashlib
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kimi_vocab  # noqa: E402

# llama.cpp's converter encodes this text and hashes str(ids) with SHA-256 to recognise a
# pre-tokenizer; the value it records for moonshotai/Kimi-K2-Base (convert_hf_to_gguf_update.py)
# is below. Our encode must reproduce it, or the converter refuses the vocabulary.
CHECK_TEXT = (
    "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) 😶\u200d🌫️ (multiple emojis "
    "concatenated) ✅ 🦙🦙 3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 "
    "កាន់តែពិសេសអាច😁 ?我想在apple工作1314151天～ ------======= нещо на Български "
    "''''''```````\"\"\"\"......!!!!!!?????? I've been 'told he's there, 'RE you sure? "
    "'M not sure I'll make it, 'D you like some tea? We'Ve a'lL")
KIMI_K2_CHECK_HASH = "81212dc7cdb7e0c1074ca62c5aeab0d43c9f52b8a737be7b12a777c953027890"


def check(condition, what):
    print(("PASS " if condition else "FAIL ") + what)
    if not condition:
        sys.exit(1)


def split_by_bpe(ranks, token, max_rank):
    """The two-part split BPE reaches for `token` using only merges below its own rank."""
    parts = [bytes([b]) for b in token]
    while True:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < max_rank and (best is None or rank < best[1]):
                best = (i, rank)
        if best is None:
            return parts
        i = best[0]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def main():
    k3, kimi_dir = sys.argv[1], sys.argv[2]
    table = kimi_vocab.bytes_to_unicode()
    check(len(table) == 256 and len(set(table.values())) == 256, "bytes_to_unicode is a bijection")
    check(all(table[b] == chr(b) for b in range(ord("!"), ord("~") + 1)),
          "printable ASCII maps to itself")
    with tempfile.TemporaryDirectory() as folder:
        kimi_vocab.write_truncated_tokenizer(kimi_dir, folder, 32768)
        vocab = kimi_vocab.KimiVocab(folder, kimi_dir, k3)
        ranks = vocab.model._mergeable_ranks
        check(sorted(ranks.values()) == list(range(32512)), "ranks 0..32511, each once")
        closed = all(len(t) == 1 or len(split_by_bpe(ranks, t, r)) == 2 for t, r in ranks.items())
        check(closed, "every multi-byte token is one merge of two lower-ranked tokens")
        specials = vocab.special_tokens
        check(min(specials.values()) == 32512 and max(specials.values()) < 32768,
              "special tokens sit in the top 256 ids")
        check(specials["[BOS]"] == 32512 and vocab.eos_id == specials["[EOS]"] == 32513,
              "[BOS] and [EOS] keep their offsets from Kimi's first special id")
        ids = vocab.encode(CHECK_TEXT)
        digest = hashlib.sha256(str(ids).encode()).hexdigest()
        check(digest == KIMI_K2_CHECK_HASH,
              f"k3's encode of llama.cpp's check text hashes to Kimi-K2's ({len(ids)} ids)")


if __name__ == "__main__":
    main()
