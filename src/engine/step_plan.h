// The step contract between the scheduler and an executor (docs/engine.md, "One step"):
// the scheduler decides a StepPlan, an executor runs the forward pass and samples, and hands a
// StepResult back. Both are plain data: flat arrays plus offsets, no pointers into scheduler
// state, so a plan can be copied to another process (a multi-process executor samples on one
// rank) or to a device. The scheduler reuses one plan and one result across steps, so steady-state
// steps do not allocate.
//
// Order of effects an executor must keep, per step:
//   1. forget `finished_seq_ids`, then register `new_sequences` (their sampling state);
//   2. run `copies_before` (restore a cached state checkpoint into a running slot);
//   3. the forward pass over `sequences`, in plan order;
//   4. run `copies_after` (save a running slot into a checkpoint slot);
//   5. sample one token for each sequence with `sample` set, from its last logit row, under its
//      grammar mask row (filled by the scheduler while 3 runs: read masks only after it).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/sampler.h"
#include "engine/sampling_params.h"

namespace k3::engine {

// One sequence's part of the step.
struct ScheduledSequence {
  uint64_t seq_id = 0;  // engine-wide, unique for the engine's lifetime
  int state_slot = 0;   // running state slot
  // The new tokens: token_ids[token_offset, token_offset + num_tokens), at positions
  // [start_position, start_position + num_tokens). start_position 0 resets the state.
  int64_t start_position = 0;
  int32_t token_offset = 0, num_tokens = 0;
  // Cache blocks covering [0, start_position + num_tokens): block_ids[block_offset, + num_blocks).
  int32_t block_offset = 0, num_blocks = 0;
  // Logits wanted for the last num_logit_rows new tokens, in [0, num_tokens]. A prefill chunk
  // that does not reach the end of the known tokens asks for none.
  int32_t num_logit_rows = 0;
  // Of the new tokens, how many trailing ones are drafts to verify (speculative decoding; always
  // 0 until a proposer exists). Drafts would each want a logit row.
  int32_t num_draft_tokens = 0;
  // Sampling: one token from the last logit row (num_logit_rows >= 1).
  bool sample = false;
  int64_t sample_step = 0;    // index of the token being generated in its sequence (seed stream)
  int32_t forced_token = -1;  // >= 0: emit this token (scripted output); the draw still runs
  int32_t mask_row = -1;      // grammar: allowed tokens are masks row mask_row; -1 = all
  // Grammar near max_tokens: if the drawn token may leave no room to finish, the scheduler takes
  // a second draw (same seed) from these tokens instead (StepResult's fallback). -1 = none; an
  // inactive row (masks.active) means no redraw can be needed this step.
  int32_t fallback_mask_row = -1;
};

// Sampling state the executor keeps for a sequence from its first plan to its finish.
struct NewSequence {
  uint64_t seq_id = 0;
  SamplingParams params;  // the executor ignores params.grammar (masks come in the plan)
  uint64_t seed = 0;      // this completion's stream
  int64_t prompt_len = 0;
  // The prompt, for the repetition penalty (tokens seen before any output): prompt_ids
  // [prompt_offset, prompt_offset + num_prompt_ids); empty unless repetition_penalty != 1.
  int32_t prompt_offset = 0, num_prompt_ids = 0;
};

struct StateCopy {
  int from_slot = 0, to_slot = 0;
};

// Token masks, one row of words per masked sampling row: bit t of a row set = token t allowed.
struct MaskRows {
  int64_t words_per_row = 0;  // (vocab + 63) / 64
  std::vector<uint64_t> words;
  std::vector<uint8_t> active;  // per row: 1 = filled and in force; 0 = unused this step
  std::span<const uint64_t> row(int32_t r) const {
    return std::span(words).subspan(static_cast<size_t>(r * words_per_row),
                                    static_cast<size_t>(words_per_row));
  }
};

struct StepPlan {
  std::vector<ScheduledSequence> sequences;
  std::vector<int32_t> token_ids;
  std::vector<int32_t> block_ids;
  std::vector<NewSequence> new_sequences;
  std::vector<int32_t> prompt_ids;
  std::vector<uint64_t> finished_seq_ids;  // finished or aborted since the previous plan
  std::vector<StateCopy> copies_before, copies_after;
  MaskRows masks;
  int64_t num_tokens = 0;  // scheduled tokens, all sequences

  bool empty() const { return sequences.empty(); }
  std::span<const int32_t> tokens_of(const ScheduledSequence& s) const {
    return std::span(token_ids).subspan(static_cast<size_t>(s.token_offset),
                                        static_cast<size_t>(s.num_tokens));
  }
  std::span<const int32_t> blocks_of(const ScheduledSequence& s) const {
    return std::span(block_ids).subspan(static_cast<size_t>(s.block_offset),
                                        static_cast<size_t>(s.num_blocks));
  }
  // Empties the plan, keeping every buffer's capacity.
  void Clear();
};

struct SequenceResult {
  // Of the scheduled tokens, how many now have their KV in the blocks and their state in the slot
  // (all of them, unless the step failed or drafts were rejected). Only these are committed to
  // the prefix cache.
  int32_t num_computed_tokens = 0;
  bool sampled = false;
  SampledToken token;
  bool has_fallback = false;  // plan row had fallback_mask_row
  SampledToken fallback;
};

struct StepResult {
  base::Status status;                    // not OK: the step failed; nothing was computed
  std::vector<SequenceResult> sequences;  // parallel to StepPlan::sequences
};

}  // namespace k3::engine
