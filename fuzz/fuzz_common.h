// Helpers shared by the fuzz targets. Invariant failures use K3_CHECK (base/check.h), which prints
// file:line and a message and then aborts: libFuzzer records that as a crash and saves the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/check.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::fuzz {

// The Kimi K2.5 tokenizer from <shared>/kimi/k25 (shared dir from $K3_SHARED_DIR or the build's
// K3_SHARED_DIR), loaded once on first use; aborts when it cannot be loaded.
const text::Tokenizer& KimiTokenizer();

// A short printable description of bytes for failure messages ("\xe4" escapes, capped length).
std::string Escaped(std::string_view bytes, size_t max_bytes = 200);

// 64-bit FNV-1a of the input: a deterministic source of "random" choices (cut points, flags) that
// does not consume input bytes, so the whole input stays the text under test.
inline uint64_t InputHash(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace k3::fuzz
