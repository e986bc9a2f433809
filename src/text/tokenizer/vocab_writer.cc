#include "text/tokenizer/vocab_writer.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "base/base64.h"
#include "text/tokenizer/pretokenizer.h"

namespace k3::text {
namespace {

using nlohmann::ordered_json;

// A training text as token ids, and how often it stands for text.
struct Piece {
  std::vector<int> ids;
  int64_t weight;
};

// Each word twice, after a space and bare, as single-byte ids with Zipf-like weights.
std::vector<Piece> InitialPieces(std::string_view words) {
  std::vector<Piece> pieces;
  std::istringstream in{std::string(words)};
  int index = 0;
  for (std::string w; in >> w; ++index) {
    const int64_t weight = 10000 / (index + 10);
    for (const std::string& text : {" " + w, w}) {
      Piece p{{}, text == w ? weight / 3 + 1 : weight};
      for (unsigned char c : text) p.ids.push_back(c);
      pieces.push_back(std::move(p));
    }
  }
  return pieces;
}

// The heaviest adjacent pair over all pieces, the smallest (a, b) among equals; nullopt when
// every piece is a single token. The tie rule makes the result independent of hash order.
std::optional<std::pair<int, int>> HeaviestPair(const std::vector<Piece>& pieces) {
  std::unordered_map<uint64_t, int64_t> counts;
  for (const Piece& p : pieces) {
    for (size_t i = 0; i + 1 < p.ids.size(); ++i) {
      counts[(static_cast<uint64_t>(p.ids[i]) << 32) | static_cast<uint32_t>(p.ids[i + 1])] +=
          p.weight;
    }
  }
  if (counts.empty()) return std::nullopt;
  auto best = counts.begin();
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (it->second > best->second || (it->second == best->second && it->first < best->first)) {
      best = it;
    }
  }
  return std::pair<int, int>(static_cast<int>(best->first >> 32),
                             static_cast<int>(best->first & 0xffffffffu));
}

// Replaces every adjacent (a, b) in `ids`, left to right, by `merged` (in place: the write
// position never passes the read position).
void ApplyMerge(int a, int b, int merged, std::vector<int>* ids) {
  std::vector<int>& v = *ids;
  size_t write = 0;
  for (size_t read = 0; read < v.size(); ++read, ++write) {
    const bool pair = read + 1 < v.size() && v[read] == a && v[read + 1] == b;
    v[write] = pair ? merged : v[read];
    if (pair) ++read;
  }
  v.resize(write);
}

// K3's named reserved ids, as offsets from the first special id (tokenizer_config.json of Kimi K3:
// ranks 163584, then [BOS] at 163584, ...). The other offsets are <|reserved_token_{id}|>.
struct NamedSpecial {
  int offset;
  const char* name;
  bool special;  // false for the chat-structure tokens, as in K3's added_tokens_decoder
};
constexpr NamedSpecial kNamedSpecials[] = {
    {kK3BosOffset, "[BOS]", true},
    {1, "[EOS]", true},
    {kK3EndOfMsgOffset, "<|end_of_msg|>", true},
    {3, "<|open|>", false},
    {4, "<|close|>", false},
    {5, "<|sep|>", false},
    {6, "[start_header_id]", true},
    {7, "[end_header_id]", true},
    {9, "[EOT]", true},
    {18, "<|media_begin|>", true},
    {19, "<|media_content|>", true},
    {20, "<|media_end|>", true},
    {kK3MediaPadOffset, "<|media_pad|>", true},
    {65, "<osagent_mode>", true},
    {254, "[UNK]", true},
    {kK3PadOffset, "[PAD]", true},
};

// Whether K3 lists the token under additional_special_tokens.
bool IsAdditional(std::string_view name) {
  return name == "<|end_of_msg|>" || name.find("header_id") != name.npos || name == "[EOT]" ||
         name.starts_with("<|media_") || name == "<osagent_mode>";
}

// The merge loop of both trainers. Pieces that became one token are dropped as it goes (they
// hold no pair), so late merges only scan the pieces still split.
std::vector<std::string> TrainOnPieces(std::vector<Piece> pieces, int num_merges,
                                       const std::function<void(int)>& on_progress) {
  std::vector<std::string> tokens;
  std::unordered_map<std::string, int> ids;
  for (int b = 0; b < 256; ++b) {
    tokens.emplace_back(1, static_cast<char>(b));
    ids[tokens.back()] = b;
  }
  const size_t target = 256 + static_cast<size_t>(std::max(num_merges, 0));
  while (tokens.size() < target) {
    const auto pair = HeaviestPair(pieces);
    if (!pair) break;
    const auto [a, b] = *pair;
    std::string joined = tokens[a] + tokens[b];
    auto [found, inserted] = ids.emplace(joined, static_cast<int>(tokens.size()));
    if (inserted) tokens.push_back(std::move(joined));
    for (Piece& p : pieces) ApplyMerge(a, b, found->second, &p.ids);
    std::erase_if(pieces, [](const Piece& p) { return p.ids.size() < 2; });
    const int merges = static_cast<int>(tokens.size()) - 256;
    if (inserted && on_progress && merges % 256 == 0) on_progress(merges);
  }
  return tokens;
}

}  // namespace

std::vector<std::string> TrainBpeVocabulary(std::string_view words, int num_merges) {
  return TrainOnPieces(InitialPieces(words), num_merges, {});
}

std::vector<std::string> TrainBpeVocabularyOnText(std::string_view text, int num_merges,
                                                  const std::function<void(int)>& on_progress) {
  std::unordered_map<std::string_view, int64_t> counts;
  ForEachPiece(PretokenizerKind::kKimi, text,
               [&](size_t begin, size_t end) { ++counts[text.substr(begin, end - begin)]; });
  // Sorted: the result depends only on the counts and the tie rule, and a fixed piece order keeps
  // the work (and any future change to it) independent of hash order too.
  std::map<std::string_view, int64_t> sorted(counts.begin(), counts.end());
  std::vector<Piece> pieces;
  for (const auto& [piece, count] : sorted) {
    Piece p{{}, count};
    for (unsigned char c : piece) p.ids.push_back(c);
    pieces.push_back(std::move(p));
  }
  return TrainOnPieces(std::move(pieces), num_merges, on_progress);
}

std::string TiktokenModelText(std::span<const std::string> tokens) {
  std::string out;
  for (size_t rank = 0; rank < tokens.size(); ++rank) {
    out += base::Base64Encode(tokens[rank]) + " " + std::to_string(rank) + "\n";
  }
  return out;
}

std::string K3TokenizerConfigJson(int64_t first_special, int64_t model_max_length) {
  ordered_json added = ordered_json::object();
  ordered_json additional = ordered_json::array();
  for (const NamedSpecial& s : kNamedSpecials) {
    added[std::to_string(first_special + s.offset)] = {
        {"content", s.name}, {"lstrip", false},      {"normalized", false},
        {"rstrip", false},   {"single_word", false}, {"special", s.special}};
    if (IsAdditional(s.name)) additional.push_back(s.name);
  }
  const ordered_json config = {{"added_tokens_decoder", added},
                               {"additional_special_tokens", additional},
                               {"bos_token", "[BOS]"},
                               {"clean_up_tokenization_spaces", false},
                               {"eos_token", "[EOS]"},
                               {"extra_special_tokens", ordered_json::object()},
                               {"model_max_length", model_max_length},
                               {"pad_token", "[PAD]"},
                               {"tokenizer_class", "TikTokenTokenizer"},
                               {"unk_token", "[UNK]"}};
  return config.dump(2) + "\n";
}

}  // namespace k3::text
