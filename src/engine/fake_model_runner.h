// A model runner for scheduler tests. It computes nothing real but checks every access the way a
// real model would depend on it, and fails loudly where a real model would silently go wrong:
// - each cache position stores (token, position); a sequence's state is a running hash of the
//   tokens it has consumed, and before a step the runner re-hashes the tokens it finds in the
//   sequence's blocks for [0, start) and requires the state to match (KV and state agree);
// - a slot's state must be at exactly start_position (a resumed or restored sequence);
// - two sequences of one batch may not write the same block;
// - logits are a pseudo-random function of the hash of the whole token history, so an output is
//   right only if every earlier step was;
// - it counts the logit rows it computed (a prefill in chunks must ask for one row in all).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/model_runner.h"

namespace k3::engine::testing {

inline uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t HashStep(uint64_t h, int32_t token, int64_t position) {
  return Mix(h ^
             (static_cast<uint64_t>(token) * 0x100000001B3ull + static_cast<uint64_t>(position)));
}

// Logits of the fake model after the history whose hash is h.
inline void FakeLogits(uint64_t h, int64_t vocab, float* out) {
  for (int64_t i = 0; i < vocab; ++i) {
    out[i] = static_cast<float>(Mix(h + static_cast<uint64_t>(i)) >> 40) / float(1 << 24) * 8.0f;
  }
}

inline uint64_t HistoryHash(std::span<const int32_t> tokens) {
  uint64_t h = 0;
  for (size_t i = 0; i < tokens.size(); ++i) h = HashStep(h, tokens[i], static_cast<int64_t>(i));
  return h;
}

class FakeModelRunner : public ModelRunner {
 public:
  explicit FakeModelRunner(int64_t vocab = 64, bool has_state = true,
                           int64_t max_position = 1 << 20)
      : vocab_(vocab), has_state_(has_state), max_position_(max_position) {}

  RunnerInfo info() const override {
    return {.vocab_size = vocab_,
            .eos_token_id = static_cast<int32_t>(vocab_ - 1),
            .max_position = max_position_,
            .has_recurrent_state = has_state_,
            .cache_bytes_per_token = 64,
            .state_bytes_per_slot = has_state_ ? 1024 : 0};
  }

  base::Status AllocateCache(int num_blocks, int block_size, int num_state_slots) override {
    block_size_ = block_size;
    num_blocks_ = num_blocks;
    kv_token_.assign(static_cast<size_t>(num_blocks) * block_size, -1);
    kv_position_.assign(kv_token_.size(), -1);
    slot_hash_.assign(num_state_slots, 0);
    slot_position_.assign(num_state_slots, -1);
    return base::Status::Ok();
  }

  base::Status Forward(std::span<const RunnerSequence> batch, std::vector<float>* logits) override {
    ++forward_calls;
    logits->clear();
    std::vector<int32_t> written;
    for (const RunnerSequence& s : batch) {
      if (auto st = Check(s, &written); !st.ok()) return st;
    }
    for (const RunnerSequence& s : batch) {
      uint64_t h = s.start_position == 0 ? 0 : slot_hash_[s.state_slot];
      for (size_t i = 0; i < s.tokens.size(); ++i) {
        const int64_t pos = s.start_position + static_cast<int64_t>(i);
        const size_t at = static_cast<size_t>(s.blocks[pos / block_size_]) * block_size_ +
                          static_cast<size_t>(pos % block_size_);
        kv_token_[at] = s.tokens[i];
        kv_position_[at] = pos;
        h = HashStep(h, s.tokens[i], pos);
      }
      slot_hash_[s.state_slot] = h;
      slot_position_[s.state_slot] = s.start_position + static_cast<int64_t>(s.tokens.size());
      // Only the last row's history is tracked: a fake asked for more rows fails loudly.
      if (s.num_logit_rows > 1) return base::Internal("fake runner: one logit row at most");
      if (s.num_logit_rows == 1) {
        ++logit_rows;
        logits->resize(logits->size() + vocab_);
        FakeLogits(h, vocab_, logits->data() + logits->size() - vocab_);
      }
    }
    return base::Status::Ok();
  }

  void CopyState(int from_slot, int to_slot) override {
    slot_hash_.at(to_slot) = slot_hash_.at(from_slot);
    slot_position_.at(to_slot) = slot_position_.at(from_slot);
    ++state_copies;
  }

  int64_t forward_calls = 0;
  int64_t state_copies = 0;
  int64_t logit_rows = 0;

 private:
  base::Status Check(const RunnerSequence& s, std::vector<int32_t>* written) {
    auto fail = [](const std::string& m) { return base::Internal("fake runner: " + m); };
    if (s.tokens.empty()) return fail("no tokens");
    const int64_t end = s.start_position + static_cast<int64_t>(s.tokens.size());
    if (static_cast<int64_t>(s.blocks.size()) * block_size_ < end) return fail("too few blocks");
    for (int32_t b : s.blocks) {
      if (b < 0 || b >= num_blocks_) return fail("block id out of range");
    }
    for (int64_t b = s.start_position / block_size_; b * block_size_ < end; ++b) {
      for (int32_t other : *written) {
        if (other == s.blocks[b]) return fail("two sequences write one block");
      }
    }
    for (int64_t b = s.start_position / block_size_; b * block_size_ < end; ++b) {
      written->push_back(s.blocks[b]);
    }
    if (s.start_position == 0) return base::Status::Ok();
    if (has_state_ && slot_position_.at(s.state_slot) != s.start_position) {
      return fail("state slot is at position " + std::to_string(slot_position_[s.state_slot]) +
                  ", the step starts at " + std::to_string(s.start_position));
    }
    uint64_t h = 0;
    for (int64_t pos = 0; pos < s.start_position; ++pos) {
      const size_t at = static_cast<size_t>(s.blocks[pos / block_size_]) * block_size_ +
                        static_cast<size_t>(pos % block_size_);
      if (kv_position_[at] != pos) return fail("cache entry holds another position");
      h = HashStep(h, kv_token_[at], pos);
    }
    if (has_state_ && h != slot_hash_[s.state_slot]) return fail("KV and state disagree");
    if (!has_state_) slot_hash_[s.state_slot] = h;  // attention-only: history comes from the KV
    return base::Status::Ok();
  }

  int64_t vocab_;
  bool has_state_;
  int64_t max_position_;
  int block_size_ = 1, num_blocks_ = 0;
  std::vector<int32_t> kv_token_;
  std::vector<int64_t> kv_position_;
  std::vector<uint64_t> slot_hash_;
  std::vector<int64_t> slot_position_;
};

}  // namespace k3::engine::testing
