// BpeRanks: the mergeable ranks of a tiktoken-format vocabulary ("base64-token rank" per line):
// rank -> token bytes and token bytes -> rank. Immutable after Parse; thread-safe for readers.
// Memory for Kimi: the token bytes once (~1 MB), 8 bytes per rank, a 16-byte-per-slot index at
// load factor <= 0.5 (8 MB), the pair table (6 MB) and its filter (512 KB).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/result.h"

namespace k3::text {

using TokenId = uint32_t;
inline constexpr TokenId kNoRank = UINT32_MAX;

class BpeRanks {
 public:
  // Parses the contents of a .tiktoken / tiktoken.model file. Fails with DATA_LOSS naming the
  // line on bad base64, a bad or duplicate rank, a duplicate token, or a missing single byte.
  static base::Result<BpeRanks> Parse(std::string_view file_contents);

  // Unique per parsed vocabulary in this process (never 0, never reused), so per-thread caches
  // of token ids can tell which vocabulary they hold.
  uint64_t instance_id() const { return instance_id_; }
  // Number of rank slots: one more than the largest rank.
  size_t size() const { return spans_.size(); }
  // Number of tokens (slots minus gaps).
  size_t num_tokens() const { return num_tokens_; }
  // Rank of exactly these bytes, or kNoRank.
  TokenId Find(std::string_view bytes) const { return Find(bytes, HashBytes(bytes)); }
  // The same with the bytes' HashBytes() already computed (callers reuse it for their caches).
  TokenId Find(std::string_view bytes, uint64_t hash) const;
  // Starts loading the index slot that Find(bytes, hash) probes first.
  void PrefetchFind(uint64_t hash) const {
    __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
  }
  // A polynomial hash, so the hashes of all prefixes and suffixes of a token come in one pass
  // (see BuildPairs): h = (h + byte + 1) * kHashMul per byte, then a finaliser.
  static uint64_t HashBytes(std::string_view bytes) {
    uint64_t h = 0;
    for (unsigned char c : bytes) h = (h + c + 1) * kHashMul;
    return FinishHash(h);
  }
  // True when `rank` names a token (ranks may have gaps).
  bool Has(TokenId rank) const { return rank < spans_.size() && spans_[rank].length != kGapLength; }
  // The token's bytes; precondition Has(rank).
  std::string_view Bytes(TokenId rank) const {
    return std::string_view(bytes_.data() + spans_[rank].offset, spans_[rank].length);
  }
  size_t max_token_bytes() const { return max_token_bytes_; }
  // Rank of the single byte b; every vocabulary we accept has all 256.
  TokenId ByteRank(uint8_t b) const { return byte_ranks_[b]; }
  // MergedRank of two single bytes, from a 256 KB table (cheap to keep in cache).
  TokenId BytePairRank(uint8_t first, uint8_t second) const {
    return byte_pair_ranks_[(size_t{first} << 8) | second];
  }
  // Starts loading the pair table slot of (left, right), so that a MergedRank soon after does not
  // wait for memory; the table is megabytes and mostly misses the caches.
  void PrefetchPair(TokenId left, TokenId right) const {
    uint64_t key = (uint64_t{left} << 32) | right;
    __builtin_prefetch(&pair_filter_[FilterWord(key)]);
    __builtin_prefetch(&pairs_[PairSlot(key) & (pairs_.size() - 1)]);
  }
  // Rank of the token whose bytes are Bytes(left) + Bytes(right), or kNoRank. Exact: that
  // concatenation is a token iff (left, right) is one of its splits into two tokens, and every
  // such split is in the table. One hash probe on two integers, no byte hashing.
  TokenId MergedRank(TokenId left, TokenId right) const {
    uint64_t key = (uint64_t{left} << 32) | right;
    // Most probes while merging find nothing; the filter (cache-resident) answers them.
    const uint64_t bits = FilterBits(key);
    if ((pair_filter_[FilterWord(key)] & bits) != bits) return kNoRank;
    size_t mask = pairs_.size() - 1;
    for (size_t slot = PairSlot(key) & mask;; slot = (slot + 1) & mask) {
      const PairEntry& e = pairs_[slot];
      if (e.merged == kNoRank) return kNoRank;
      if (e.left == left && e.right == right) return e.merged;
    }
  }

  // The first 8 bytes, zero padded, little-endian; reads no byte outside `bytes`. With the
  // length, it identifies a piece of up to 8 bytes exactly.
  static uint64_t Prefix8(std::string_view bytes) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    size_t n = bytes.size();
    if (n >= 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    if (n >= 4) {  // two overlapping 4-byte loads
      uint32_t lo, hi;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + n - 4, 4);
      return lo | (uint64_t{hi} << (8 * (n - 4)));
    }
    if (n == 0) return 0;
    return p[0] | (uint64_t{p[n / 2]} << (8 * (n / 2))) | (uint64_t{p[n - 1]} << (8 * (n - 1)));
  }

 private:
  static constexpr uint32_t kGapLength = UINT32_MAX;
  struct Span {
    uint32_t offset;
    uint32_t length;
  };
  struct PairEntry {
    TokenId left;
    TokenId right;
    TokenId merged;  // kNoRank marks an empty slot
  };
  static size_t PairSlot(uint64_t key) { return (key * 0x9E3779B97F4A7C15ull) >> 32; }
  // The pair filter: a blocked Bloom filter; each pair sets two bits of one 64-bit word, from a
  // second multiplicative hash. 512 KB for Kimi's 296K pairs: about 2% false positives.
  static uint64_t FilterHash(uint64_t key) { return key * 0xD6E8FEB86659FD93ull; }
  size_t FilterWord(uint64_t key) const {
    return (FilterHash(key) >> 32) & (pair_filter_.size() - 1);
  }
  static uint64_t FilterBits(uint64_t key) {
    const uint64_t h = FilterHash(key);
    return (uint64_t{1} << (h & 63)) | (uint64_t{1} << ((h >> 6) & 63));
  }
  // Builds slots_; fails when two ranks share the same bytes.
  base::Status BuildIndex();
  // Builds pairs_ from every split of every token into two tokens.
  void BuildPairs();
  // Appends the (left, right, merged) splits of the tokens with ranks in [begin, end).
  void CollectPairs(TokenId begin, TokenId end, std::vector<PairEntry>* found) const;

  std::vector<char> bytes_;  // all token bytes, in file order
  std::vector<Span> spans_;  // [size()] where each rank's bytes are
  // One index slot: the token's first 8 bytes (zero padded) and length are stored inline, so a
  // probe touches one cache line and tokens of <= 8 bytes (most of them) need no other read.
  struct Slot {
    uint64_t prefix;
    TokenId rank;  // kNoRank = empty
    uint32_t length;
  };
  static constexpr uint64_t kHashMul = 0x9E3779B97F4A7C15ull;
  static uint64_t FinishHash(uint64_t h) {  // MurmurHash3's fmix64
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 33);
  }
  base::AlignedBuffer<Slot> slots_;       // open-addressing index, power-of-two size, load <= 0.5
  std::vector<TokenId> byte_pair_ranks_;  // [256 * 256]
  base::AlignedBuffer<PairEntry> pairs_;  // (left, right) -> merged; power-of-two size, load <= 0.6
  base::AlignedBuffer<uint64_t> pair_filter_;  // power-of-two size, >= 1 word per 8 pairs
  TokenId byte_ranks_[256];
  size_t num_tokens_ = 0;
  size_t max_token_bytes_ = 0;
  uint64_t instance_id_ = 0;
};

}  // namespace k3::text
