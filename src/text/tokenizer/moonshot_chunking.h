// The chunking Moonshot's tokenization_kimi.py applies before calling tiktoken, reproduced for
// exact token parity: the text is cut every 400,000 code points, then each cut is split wherever a
// run of whitespace or of non-whitespace (Python str.isspace) would exceed 25,000 code points.
// The pieces are encoded independently, so these cuts can change the ids. Thread-safe.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace k3::text {

inline constexpr size_t kMoonshotMaxEncodeChars = 400'000;
inline constexpr size_t kMoonshotMaxRunChars = 25'000;

// Byte offsets where the chunks of `text` (well-formed UTF-8) end, in order; the last is
// text.size(). Empty text gives no chunks.
std::vector<size_t> MoonshotChunkEnds(std::string_view text,
                                      size_t max_encode_chars = kMoonshotMaxEncodeChars,
                                      size_t max_run_chars = kMoonshotMaxRunChars);

}  // namespace k3::text
