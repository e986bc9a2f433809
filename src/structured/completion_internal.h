// What completion.cc (costs) and completion_walk.cc (the walk) share.
#pragma once

#include <cstdint>
#include <vector>

#include "structured/grammar.h"

namespace k3::structured {

// "Cannot finish": larger than any real cost, small enough that sums never overflow.
inline constexpr int64_t kCompletionInf = int64_t{1} << 40;

// Bytes (roughly) of the shortest value of `type` the node allows, given the node costs so far.
int64_t CompletionTypeCost(const Grammar& g, const std::vector<int64_t>& cost, int32_t node,
                           uint8_t type);

}  // namespace k3::structured
