// SpecialTokens: the control tokens that live above the BPE ranks (for Kimi 163584..163839), by id
// and by name, plus a matcher that finds the next special-token string in text (used when specials
// are allowed in the text). Immutable after construction; thread-safe for readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/tokenizer/bpe_ranks.h"

namespace k3::text {

struct SpecialToken {
  std::string name;  // e.g. "<|im_end|>"
  TokenId id;
  bool special;  // the config's "special" flag (false for tool-call markers and <think>)
};

// A special-token occurrence in text.
struct SpecialMatch {
  size_t begin;
  size_t end;
  TokenId id;
};

class SpecialTokens {
 public:
  SpecialTokens() = default;
  // Names must be non-empty and unique; ids unique.
  explicit SpecialTokens(std::vector<SpecialToken> tokens);
  // Move-only: by_name_ holds views into tokens_ (a moved vector keeps its elements in place).
  SpecialTokens(SpecialTokens&&) = default;
  SpecialTokens& operator=(SpecialTokens&&) = default;
  SpecialTokens(const SpecialTokens&) = delete;
  SpecialTokens& operator=(const SpecialTokens&) = delete;

  const std::vector<SpecialToken>& tokens() const { return tokens_; }
  // The name for `id`, or nullptr when it is not a special token.
  const std::string* NameOf(TokenId id) const;
  // The id of exactly this name.
  std::optional<TokenId> IdOf(std::string_view name) const;
  bool empty() const { return tokens_.empty(); }
  // True when some name contains one of these bytes.
  bool AnyNameContainsAnyOf(std::string_view bytes) const;

  // The leftmost special-token string in text at or after `from` (the longest one if several
  // start there), or nullopt. Cost: one table probe per byte plus a trie walk at bytes that can
  // start a name.
  std::optional<SpecialMatch> FindNext(std::string_view text, size_t from) const;

 private:
  // Longest name starting exactly at pos; 0 when none.
  size_t MatchAt(std::string_view text, size_t pos, TokenId* id) const;

  struct TrieNode {
    std::vector<std::pair<uint8_t, uint32_t>> children;  // (byte, node index), sorted by byte
    TokenId id = kNoRank;                                // set when a name ends here
  };
  std::vector<SpecialToken> tokens_;
  std::unordered_map<TokenId, size_t> by_id_;
  std::unordered_map<std::string_view, TokenId> by_name_;  // views into tokens_ names
  std::vector<TrieNode> trie_;                             // node 0 is the root
  bool starts_name_[256] = {};
  std::string first_bytes_;  // the distinct first bytes of the names
};

}  // namespace k3::text
