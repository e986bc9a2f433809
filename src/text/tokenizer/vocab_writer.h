// Writing a small Kimi-style vocabulary: byte-pair training on a word list, the tiktoken.model
// file, and a tokenizer_config.json with Kimi K3's reserved special-token layout shifted to sit
// right after the ranks. The demo checkpoint of `k3 serve` (model/testing) is written with these;
// Tokenizer::FromKimiDirectory reads them back.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace k3::text {

// Byte-pair training: ranks 0..255 are the single bytes, then up to `num_merges` merges learned
// from `words` (separated by whitespace, most frequent first: the i-th word weighs
// 10000 / (i + 10), its form after a space that much and the bare form a third of it plus one).
// Every learned token is the concatenation of two earlier tokens, so tiktoken-style BPE can reach
// it. Deterministic: ties go to the smallest pair of ids. Returns every token's bytes in rank
// order. Cost: O(num_merges * total bytes of the words * log pairs).
std::vector<std::string> TrainBpeVocabulary(std::string_view words, int num_merges);

// Byte-pair training on a corpus: `text` (well-formed UTF-8; checked by the caller) is split into
// pre-tokenizer pieces (Kimi's pattern), each distinct piece weighing its count, and merges are
// learned inside pieces only, so every learned token is reachable by tiktoken-style encoding of
// text pre-tokenized the same way. Same order and tie rule as above; `on_progress(merges done)`
// is called every 256 merges. Cost: O(num_merges * bytes of the distinct pieces not yet a
// single token); a few tens of seconds for 4,000 merges over the demo model's corpus.
std::vector<std::string> TrainBpeVocabularyOnText(std::string_view text, int num_merges,
                                                  const std::function<void(int)>& on_progress = {});

// tiktoken.model text: one "base64(token bytes) rank" line per rank.
std::string TiktokenModelText(std::span<const std::string> tokens);

// K3's reserved ids, 256 of them after the ranks (163,584 ranks in K3), as offsets from the first.
inline constexpr int kK3NumReservedSpecials = 256;
inline constexpr int kK3BosOffset = 0;        // [BOS]
inline constexpr int kK3EndOfMsgOffset = 2;   // <|end_of_msg|>: K3's stop token
inline constexpr int kK3MediaPadOffset = 21;  // <|media_pad|>
inline constexpr int kK3PadOffset = 255;      // [PAD]

// K3's tokenizer_config.json (added_tokens_decoder, additional_special_tokens, bos/eos/pad/unk,
// tokenizer_class) with the added tokens moved to start at `first_special` (= the number of
// ranks) and model_max_length set. Unnamed reserved ids are left out (the loader names them
// <|reserved_token_{id}|>, as tokenization_kimi.py does); so is auto_map (no tokenization_kimi.py
// ships with it). Formatted as dump(2) plus a newline.
std::string K3TokenizerConfigJson(int64_t first_special, int64_t model_max_length);

}  // namespace k3::text
