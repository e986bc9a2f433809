// Completion: a short way to finish a constrained output from any matcher state — the events
// (bytes of ordinary tokens, special tokens, the end) that close open strings, spell the missing
// required keys, pick the cheapest values, close brackets and tool-call sections, and end.
//
// Used to end an output inside its token budget (Matcher::FillBudgetedMask): a random or
// rambling model can keep an open-ended value going forever; near the end of max_tokens only
// tokens that follow the completion stay allowed, so the output still ends complete and valid.
//
// It is a greedy walk, not a search: each frame lists its events best-first (closing ones
// first; for a value, the start of its cheapest type by CompletionCosts), and the first event the
// stacks accept is taken. Every listed preference strictly shortens the way to the end (keys:
// required ones first; branches: toward the end), so the walk ends. Cost: one AdvanceAll per
// tried event, a few µs per event.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "structured/frame.h"

namespace k3::structured {

class Grammar;

// Lower bounds, in bytes/events, of finishing each schema node's value and each program from
// each pc (ordering only: they pick the cheapest alternative, type or branch).
struct CompletionCosts {
  std::vector<int64_t> node;
  std::vector<std::vector<int64_t>> program;  // [program][pc]
  // How much one token may lengthen the completion, about: twice the costliest value a token
  // can open (an object with its required keys, an array with minItems), plus room for brackets.
  int64_t growth_margin = 24;
};
CompletionCosts ComputeCompletionCosts(const Grammar& g);

// The events that finish `stacks` (the last one is kEventEnd), at most `max_events`; empty if
// the walk found no way within that. With several stacks, the walk with the lowest `score`
// (default: the number of events; the matcher counts tokens).
using CompletionScore = std::function<size_t(const std::vector<int32_t>&)>;
std::vector<int32_t> ShortCompletion(const Grammar& g, std::vector<FrameStack> stacks,
                                     size_t max_events, const CompletionScore& score = nullptr);

}  // namespace k3::structured
