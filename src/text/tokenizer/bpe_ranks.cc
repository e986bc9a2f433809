#include "text/tokenizer/bpe_ranks.h"

#include <atomic>
#include <charconv>
#include <cstring>
#include <string>

#include "base/thread_pool.h"

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
    uint32_t triple =
        (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | v[3];
    out->push_back(static_cast<char>(triple >> 16));
    if (padding < 2) out->push_back(static_cast<char>((triple >> 8) & 0xFF));
    if (padding < 1) out->push_back(static_cast<char>(triple & 0xFF));
  }
  return true;
}

std::string LineError(size_t line_no, std::string_view what) {
  return "tiktoken ranks line " + std::to_string(line_no) + ": " + std::string(what);
}

}  // namespace

base::Result<BpeRanks> BpeRanks::Parse(std::string_view contents) {
  constexpr uint32_t kMaxRank = 1u << 24;  // far above any real vocabulary; bounds memory on junk
  BpeRanks ranks;
  static std::atomic<uint64_t> next_instance_id{1};
  ranks.instance_id_ = next_instance_id.fetch_add(1);
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
    if (space == std::string_view::npos)
      return DataLoss(LineError(line_no, "expected 'base64 rank'"));
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
  ranks.BuildPairs();
  return ranks;
}

void BpeRanks::CollectPairs(TokenId begin, TokenId end, std::vector<PairEntry>* found) const {
  std::vector<uint64_t> suffix_hash;
  for (TokenId rank = begin; rank < end; ++rank) {
    if (!Has(rank)) continue;
    std::string_view token = Bytes(rank);
    // Unfinished polynomial hashes of every suffix: suffix_hash[j] covers token[j..].
    suffix_hash.assign(token.size() + 1, 0);
    uint64_t power = kHashMul;
    for (size_t j = token.size(); j-- > 0; power *= kHashMul)
      suffix_hash[j] = suffix_hash[j + 1] + (static_cast<uint8_t>(token[j]) + 1) * power;
    uint64_t prefix_hash = 0;
    for (size_t split = 1; split < token.size(); ++split) {
      prefix_hash = (prefix_hash + static_cast<uint8_t>(token[split - 1]) + 1) * kHashMul;
      TokenId left = Find(token.substr(0, split), FinishHash(prefix_hash));
      if (left == kNoRank) continue;
      TokenId right = Find(token.substr(split), FinishHash(suffix_hash[split]));
      if (right != kNoRank) found->push_back({left, right, rank});
    }
  }
}

void BpeRanks::BuildPairs() {
  // The splits are found on all cores (about a million index probes for Kimi), then inserted.
  constexpr TokenId kRanksPerTask = 8192;
  size_t num_tasks = (spans_.size() + kRanksPerTask - 1) / kRanksPerTask;
  std::vector<std::vector<PairEntry>> per_task(num_tasks);
  base::ThreadPool::Default().ParallelFor(num_tasks, [&](size_t task) {
    TokenId begin = static_cast<TokenId>(task * kRanksPerTask);
    TokenId end = static_cast<TokenId>(std::min<size_t>(spans_.size(), begin + kRanksPerTask));
    CollectPairs(begin, end, &per_task[task]);
  });
  std::vector<PairEntry> found;
  for (auto& part : per_task) found.insert(found.end(), part.begin(), part.end());
  size_t capacity = 16;
  while (capacity * 3 < found.size() * 5) capacity *= 2;
  pairs_ = base::AlignedBuffer<PairEntry>(capacity, PairEntry{0, 0, kNoRank});
  size_t filter_words = 64;
  while (filter_words * 8 < found.size()) filter_words *= 2;
  pair_filter_ = base::AlignedBuffer<uint64_t>(filter_words, 0);
  size_t mask = capacity - 1;
  for (const PairEntry& entry : found) {
    uint64_t key = (uint64_t{entry.left} << 32) | entry.right;
    pair_filter_[FilterWord(key)] |= FilterBits(key);
    size_t slot = PairSlot(key) & mask;
    while (pairs_[slot].merged != kNoRank) slot = (slot + 1) & mask;
    pairs_[slot] = entry;
  }
  byte_pair_ranks_.resize(256 * 256);
  for (size_t first = 0; first < 256; ++first) {
    for (size_t second = 0; second < 256; ++second)
      byte_pair_ranks_[first << 8 | second] = MergedRank(byte_ranks_[first], byte_ranks_[second]);
  }
}

base::Status BpeRanks::BuildIndex() {
  size_t capacity = 16;
  while (capacity < 2 * num_tokens_) capacity *= 2;
  slots_ = base::AlignedBuffer<Slot>(capacity, Slot{0, kNoRank, 0});
  size_t mask = capacity - 1;
  for (TokenId rank = 0; rank < spans_.size(); ++rank) {
    if (!Has(rank)) continue;
    std::string_view token = Bytes(rank);
    if (TokenId existing = Find(token); existing != kNoRank)
      return DataLoss("tiktoken ranks: token of rank " + std::to_string(rank) +
                      " duplicates rank " + std::to_string(existing));
    size_t slot = HashBytes(token) & mask;
    while (slots_[slot].rank != kNoRank) slot = (slot + 1) & mask;
    slots_[slot] = Slot{Prefix8(token), rank, static_cast<uint32_t>(token.size())};
  }
  return base::Status::Ok();
}

TokenId BpeRanks::Find(std::string_view bytes, uint64_t hash) const {
  if (bytes.size() > max_token_bytes_) return kNoRank;
  const uint64_t prefix = Prefix8(bytes);
  const size_t mask = slots_.size() - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    const Slot& s = slots_[slot];
    if (s.rank == kNoRank) return kNoRank;
    if (s.length != bytes.size() || s.prefix != prefix) continue;
    if (bytes.size() <= 8) return s.rank;
    const Span& span = spans_[s.rank];
    if (std::memcmp(bytes_.data() + span.offset + 8, bytes.data() + 8, bytes.size() - 8) == 0)
      return s.rank;
  }
}

}  // namespace k3::text
