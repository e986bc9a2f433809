#include "text/tokenizer/bpe_ranks.h"

#include <xxhash.h>

#include <charconv>
#include <cstring>
#include <string>

namespace k3::text {
namespace {

using base::DataLoss;

// Standard base64 alphabet value of c, or -1.
int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Decodes padded base64 onto out; false on malformed input.
bool DecodeBase64(std::string_view in, std::vector<char>* out) {
  if (in.empty() || in.size() % 4 != 0) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int padding = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      bool last_group = i + 4 == in.size();
      if (c == '=' && last_group && k >= 2) {
        v[k] = 0;
        ++padding;
        continue;
      }
      if (padding) return false;  // data after '='
      v[k] = Base64Value(c);
      if (v[k] < 0) return false;
    }
    uint32_t triple = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | v[3];
    out->push_back(static_cast<char>(triple >> 16));
    if (padding < 2) out->push_back(static_cast<char>((triple >> 8) & 0xFF));
    if (padding < 1) out->push_back(static_cast<char>(triple & 0xFF));
  }
  return true;
}

inline uint64_t HashBytes(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::string LineError(size_t line_no, std::string_view what) {
  return "tiktoken ranks line " + std::to_string(line_no) + ": " + std::string(what);
}

}  // namespace

base::Result<BpeRanks> BpeRanks::Parse(std::string_view contents) {
  constexpr uint32_t kMaxRank = 1u << 24;  // far above any real vocabulary; bounds memory on junk
  BpeRanks ranks;
  ranks.bytes_.reserve(contents.size() * 3 / 4);
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < contents.size()) {
    size_t eol = contents.find('\n', pos);
    if (eol == std::string_view::npos) eol = contents.size();
    std::string_view line = contents.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    size_t space = line.find(' ');
    if (space == std::string_view::npos) return DataLoss(LineError(line_no, "expected 'base64 rank'"));
    std::string_view rank_text = line.substr(space + 1);
    uint32_t rank = 0;
    auto [end, ec] = std::from_chars(rank_text.data(), rank_text.data() + rank_text.size(), rank);
    if (ec != std::errc() || end != rank_text.data() + rank_text.size() || rank >= kMaxRank)
      return DataLoss(LineError(line_no, "bad rank '" + std::string(rank_text) + "'"));
    size_t offset = ranks.bytes_.size();
    if (!DecodeBase64(line.substr(0, space), &ranks.bytes_))
      return DataLoss(LineError(line_no, "bad base64 token"));
    if (rank >= ranks.spans_.size()) ranks.spans_.resize(rank + 1, Span{0, kGapLength});
    if (ranks.spans_[rank].length != kGapLength)
      return DataLoss(LineError(line_no, "duplicate rank " + std::to_string(rank)));
    uint32_t length = static_cast<uint32_t>(ranks.bytes_.size() - offset);
    ranks.spans_[rank] = Span{static_cast<uint32_t>(offset), length};
    ranks.max_token_bytes_ = std::max<size_t>(ranks.max_token_bytes_, length);
    ++ranks.num_tokens_;
  }
  if (ranks.num_tokens_ == 0) return DataLoss("tiktoken ranks file has no tokens");
  K3_RETURN_IF_ERROR(ranks.BuildIndex());
  for (int b = 0; b < 256; ++b) {
    char byte = static_cast<char>(b);
    ranks.byte_ranks_[b] = ranks.Find(std::string_view(&byte, 1));
    if (ranks.byte_ranks_[b] == kNoRank)
      return DataLoss("tiktoken ranks: no token for the single byte " + std::to_string(b) +
                      "; every byte needs one so that any text can be encoded");
  }
  return ranks;
}

base::Status BpeRanks::BuildIndex() {
  size_t capacity = 16;
  while (capacity < 2 * num_tokens_) capacity *= 2;
  slots_.assign(capacity, kNoRank);
  size_t mask = capacity - 1;
  for (TokenId rank = 0; rank < spans_.size(); ++rank) {
    if (!Has(rank)) continue;
    std::string_view token = Bytes(rank);
    for (size_t slot = HashBytes(token) & mask;; slot = (slot + 1) & mask) {
      if (slots_[slot] == kNoRank) {
        slots_[slot] = rank;
        break;
      }
      if (Bytes(slots_[slot]) == token)
        return DataLoss("tiktoken ranks: token of rank " + std::to_string(rank) +
                        " duplicates rank " + std::to_string(slots_[slot]));
    }
  }
  return base::Status::Ok();
}

TokenId BpeRanks::Find(std::string_view bytes) const {
  if (bytes.size() > max_token_bytes_) return kNoRank;
  size_t mask = slots_.size() - 1;
  for (size_t slot = HashBytes(bytes) & mask;; slot = (slot + 1) & mask) {
    TokenId rank = slots_[slot];
    if (rank == kNoRank) return kNoRank;
    const Span& span = spans_[rank];
    if (span.length == bytes.size() &&
        std::memcmp(bytes_.data() + span.offset, bytes.data(), bytes.size()) == 0)
      return rank;
  }
}

}  // namespace k3::text
