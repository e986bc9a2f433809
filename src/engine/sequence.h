// One completion being generated: its token ids, how far the model has computed them, and the
// cache blocks and state slot it holds. A request with n > 1 owns n sequences. Scheduler-side
// only: sampling state (penalty counts, the seed stream) lives with the executor.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cache/block_hash.h"
#include "cache/hybrid_cache.h"
#include "engine/request.h"
#include "structured/matcher.h"
#include "structured/token_set.h"

namespace k3::engine {

struct Sequence;

struct RequestState {
  uint64_t id = 0;
  std::vector<int32_t> prompt;
  SamplingParams params;
  OutputCallback on_output;
  uint64_t seed = 0;
  int unfinished = 0;                // sequences still running or waiting
  std::vector<Sequence*> sequences;  // the unfinished ones, by index
  bool prompt_cached = false;        // sequence 0 has prefilled the prompt (siblings may start)
};

enum class SequenceState {
  kWaiting,  // queued (new, or preempted: no blocks, no slot)
  kRunning,  // holds a state slot and the blocks of its computed tokens
};

struct Sequence {
  RequestState* request = nullptr;
  uint64_t id = 0;  // engine-wide sequence id (the executor's key)
  int index = 0;
  uint64_t order = 0;  // arrival order: lower runs first and is preempted last
  SequenceState state = SequenceState::kWaiting;
  std::vector<int32_t> tokens;  // prompt, then generated
  int64_t prompt_len = 0;
  int64_t computed = 0;         // leading tokens whose KV and state are in blocks / slot
  std::vector<int32_t> blocks;  // covering at least [0, computed)
  size_t committed = 0;         // leading blocks already offered to the prefix cache
  cache::BlockHashes hashes;    // of the full blocks of `tokens`, extended lazily
  int slot = -1;                // running state slot while running
  bool admitted_once = false;
  bool registered = false;    // the executor holds its sampling state
  int64_t cached_tokens = 0;  // prefix-cache hit at first admission
  int64_t generated = 0;
  int pending_checkpoint = -1;  // checkpoint slot reserved for this step's end, or -1
  // Constrained decoding (request has a grammar): the matcher, the mask for the next token and
  // the completion mask of a budget redraw, filled by the mask worker during the forward pass.
  std::unique_ptr<structured::Matcher> matcher;
  structured::TokenSet mask, fallback_mask;
  bool mask_closing = false;      // `mask` allows only the way to finish within max_tokens
  bool closed_by_budget = false;  // a closing mask or a redraw shaped some token of this output

  int64_t remaining() const { return static_cast<int64_t>(tokens.size()) - computed; }
  cache::SequenceView view() { return {tokens, prompt_len, &hashes}; }
};

}  // namespace k3::engine
