// BpeRanks: the mergeable ranks of a tiktoken-format vocabulary ("base64-token rank" per line):
// rank -> token bytes and token bytes -> rank. Immutable after Parse; thread-safe for readers.
// Memory: the token bytes once (~1 MB for Kimi), 8 bytes per rank, and a 4-byte-per-slot
// open-addressing index at load factor <= 0.5.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace k3::text {

using TokenId = uint32_t;
inline constexpr TokenId kNoRank = UINT32_MAX;

class BpeRanks {
 public:
  // Parses the contents of a .tiktoken / tiktoken.model file. Fails with DATA_LOSS naming the
  // line on bad base64, a bad or duplicate rank, a duplicate token, or a missing single byte.
  static base::Result<BpeRanks> Parse(std::string_view file_contents);

  // Number of rank slots: one more than the largest rank.
  size_t size() const { return spans_.size(); }
  // Number of tokens (slots minus gaps).
  size_t num_tokens() const { return num_tokens_; }
  // Rank of exactly these bytes, or kNoRank.
  TokenId Find(std::string_view bytes) const;
  // True when `rank` names a token (ranks may have gaps).
  bool Has(TokenId rank) const { return rank < spans_.size() && spans_[rank].length != kGapLength; }
  // The token's bytes; precondition Has(rank).
  std::string_view Bytes(TokenId rank) const {
    return std::string_view(bytes_.data() + spans_[rank].offset, spans_[rank].length);
  }
  size_t max_token_bytes() const { return max_token_bytes_; }
  // Rank of the single byte b; every vocabulary we accept has all 256.
  TokenId ByteRank(uint8_t b) const { return byte_ranks_[b]; }

 private:
  static constexpr uint32_t kGapLength = UINT32_MAX;
  struct Span {
    uint32_t offset;
    uint32_t length;
  };
  // Builds slots_; fails when two ranks share the same bytes.
  base::Status BuildIndex();

  std::vector<char> bytes_;     // all token bytes, in file order
  std::vector<Span> spans_;     // [size()] where each rank's bytes are
  std::vector<TokenId> slots_;  // open-addressing index, power-of-two size, kNoRank = empty
  TokenId byte_ranks_[256];
  size_t num_tokens_ = 0;
  size_t max_token_bytes_ = 0;
};

}  // namespace k3::text
