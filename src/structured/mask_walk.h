// Mask computation over the vocabulary trie (see mask_cache.h for the scheme).
#pragma once

#include <memory>
#include <vector>

#include "structured/frame.h"
#include "structured/mask_cache.h"
#include "structured/token_set.h"

namespace k3::structured {

class Grammar;

// The entry for top frame `top`, from the grammar's or the vocabulary's cache, or computed (and
// cached if the frame is cacheable). Thread-safe.
std::shared_ptr<const MaskEntry> EntryFor(const Grammar& g, const Frame& top);

// The entry for top frame `top`, computed without any cache: by the fastest method for the frame
// (ComputeEntry), or by walking the whole vocabulary trie (ComputeEntryByWalk, the reference the
// specialised methods are tested against).
std::shared_ptr<MaskEntry> ComputeEntry(const Grammar& g, const Frame& top);
std::shared_ptr<MaskEntry> ComputeEntryByWalk(const Grammar& g, const Frame& top);

// Feeds `event` to every stack, splitting stacks at ambiguous anyOf values and dropping the ones
// that reject it (duplicates merged). False when none is left (then `stacks` is empty).
bool AdvanceAll(const Grammar& g, std::vector<FrameStack>& stacks, int32_t event);

// Replaces every stack whose top is a value frame of an anyOf node by one stack per alternative
// (recursively), so masks are computed from deterministic top frames.
void ExpandAlternatives(const Grammar& g, std::vector<FrameStack>& stacks);

// Adds to `mask` the ordinary tokens allowed after `stack` (specials and end tokens excluded).
void AddOrdinaryAllowed(const Grammar& g, const FrameStack& stack, TokenSet* mask);

}  // namespace k3::structured
