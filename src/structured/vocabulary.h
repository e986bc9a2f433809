// Vocabulary: what the structured-output matcher needs to know about a tokenizer — the bytes of
// every ordinary token, the ids and names of the special ones — plus a byte trie over the ordinary
// tokens laid out in depth-first order, which is what mask computation walks.
//
// Immutable after Build and shared by every grammar compiled for it (thread-safe for readers).
// Cost: one node per distinct token prefix (~0.5 M nodes, 12 bytes each, for Kimi's 163,840).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "structured/mask_cache.h"
#include "structured/string_content.h"
#include "structured/string_profile.h"
#include "structured/token_set.h"

namespace k3::text {
class BpeRanks;
}

namespace k3::structured {

struct SpecialToken {
  int32_t id = 0;
  std::string name;
};

// One trie node: the byte on the edge into it, its depth (1 = a token's first byte), the index
// just past its subtree (to skip it), and the token whose bytes end here (or -1).
struct TrieNode {
  uint8_t byte = 0;
  uint16_t depth = 0;
  uint32_t next = 0;
  int32_t token = -1;
};

class Vocabulary {
 public:
  // `ordinary[i]` are the bytes of id i (empty: not an ordinary token); ids of `specials` must be
  // < vocab_size and have empty ordinary bytes. vocab_size is the logits width.
  static std::shared_ptr<const Vocabulary> Build(size_t vocab_size,
                                                 std::vector<std::string> ordinary,
                                                 std::vector<SpecialToken> specials);
  // Ordinary ids are the BPE ranks.
  static std::shared_ptr<const Vocabulary> FromRanks(const text::BpeRanks& ranks, size_t vocab_size,
                                                     std::vector<SpecialToken> specials);

  size_t size() const { return ordinary_.size(); }
  bool IsOrdinary(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < size() && !ordinary_[id].empty();
  }
  std::string_view Bytes(int32_t id) const { return ordinary_[id]; }
  // -1 when this vocabulary has no special token of that name.
  int32_t SpecialId(std::string_view name) const;
  const std::vector<SpecialToken>& specials() const { return specials_; }
  const std::vector<TrieNode>& trie() const { return trie_; }
  const TokenSet& ordinary_set() const { return ordinary_set_; }
  // The length of the longest ordinary token.
  size_t max_token_bytes() const { return max_token_bytes_; }
  // Calls fn(id) for every ordinary token whose bytes are a prefix of `bytes` (shortest first).
  template <typename Fn>
  void ForEachPrefixToken(std::string_view bytes, Fn fn) const {
    if (bytes.empty()) return;
    size_t i = root_child_[static_cast<uint8_t>(bytes[0])];  // siblings scanned below the root
    size_t end = i < trie_.size() ? i + 1 : i;
    for (unsigned char c : bytes) {
      while (i < end && trie_[i].byte != c) i = trie_[i].next;
      if (i >= end) return;
      if (trie_[i].token >= 0) fn(trie_[i].token);
      end = trie_[i].next;
      ++i;
    }
  }
  // The id of the single-byte token b, or -1.
  int32_t ByteToken(uint8_t b) const { return byte_tokens_[b]; }
  // Masks of frames that mean the same in every grammar (any value, plain strings and numbers).
  MaskCache& shared_cache() const { return shared_cache_; }
  // Built on first use; thread-safe.
  const StringProfile& string_profile() const;
  // How tokens read inside a canonical string (an object key) from lexer state `state`; built on
  // first use per state, then shared. Thread-safe.
  const StringContent& key_content(StringLexer state) const;

 private:
  void BuildTrie();

  std::vector<std::string> ordinary_;
  std::vector<SpecialToken> specials_;
  std::unordered_map<std::string, int32_t> special_ids_;
  std::vector<TrieNode> trie_;
  TokenSet ordinary_set_;
  int32_t byte_tokens_[256];
  uint32_t root_child_[256];  // trie node of each first byte (trie size: none)
  size_t max_token_bytes_ = 0;
  mutable MaskCache shared_cache_;
  mutable std::once_flag profile_once_;
  mutable std::unique_ptr<StringProfile> profile_;
  mutable std::mutex key_content_mu_;
  mutable std::unordered_map<uint64_t, std::unique_ptr<const StringContent>> key_content_;
};

}  // namespace k3::structured
