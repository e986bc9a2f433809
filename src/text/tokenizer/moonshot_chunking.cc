#include "text/tokenizer/moonshot_chunking.h"

#include <cstring>

#include "text/tokenizer/char_class.h"

namespace k3::text {
namespace {

constexpr uint64_t kHighBits = 0x8080808080808080ull;
constexpr uint64_t kLowBits = 0x0101010101010101ull;

uint64_t LoadWord(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
// Nonzero when some byte of w equals b.
uint64_t HasByte(uint64_t w, uint8_t b) {
  uint64_t x = w ^ (kLowBits * b);
  return (x - kLowBits) & ~x & kHighBits;
}
// Nonzero when some byte of w is 0x21..0x7F: ASCII that is certainly not whitespace.
uint64_t HasAsciiNonSpace(uint64_t w) {
  return ((w & ~kHighBits) + kLowBits * 0x5F) & ~w & kHighBits;
}
bool IsContinuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// Byte offsets that end each window of max_chars code points (the last is text.size()).
std::vector<size_t> WindowEnds(std::string_view text, size_t max_chars) {
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  const size_t size = text.size();
  std::vector<size_t> ends;
  size_t chars = 0;
  size_t pos = 0;
  while (pos < size) {
    if (pos + 8 <= size && chars + 8 < max_chars) {  // a whole word cannot reach the limit
      uint64_t w = LoadWord(data + pos);
      chars += 8 - __builtin_popcountll(w & ~(w << 1) & kHighBits);
      pos += 8;
      continue;
    }
    if (!IsContinuation(data[pos])) {
      if (chars == max_chars) {
        ends.push_back(pos);
        chars = 0;
      }
      ++chars;
    }
    ++pos;
  }
  ends.push_back(size);
  return ends;
}

// Conservative: false only when no whitespace or non-whitespace run in [begin, end) can exceed
// max_run code points. Word by word, a run of spaces is ended by any ASCII byte 0x21..0x7F and a
// run of non-spaces by ' ' or '\n'; bytes count as code points, which over-estimates runs.
bool MayHaveLongRun(const uint8_t* data, size_t begin, size_t end, size_t max_run) {
  if (max_run < 32) return true;
  const size_t limit = max_run - 16;
  size_t space_gap = 0, nonspace_gap = 0;
  size_t pos = begin;
  for (; pos + 8 <= end; pos += 8) {
    uint64_t w = LoadWord(data + pos);
    nonspace_gap = (HasByte(w, ' ') | HasByte(w, '\n')) ? 0 : nonspace_gap + 8;
    space_gap = HasAsciiNonSpace(w) ? 0 : space_gap + 8;
    if (nonspace_gap > limit || space_gap > limit) return true;
  }
  return nonspace_gap + (end - pos) > limit || space_gap + (end - pos) > limit;
}

// tokenization_kimi.py `_split_whitespaces_or_nonwhitespaces` over one window [begin, end), exact:
// the run counter restarts when the space-ness flips, and a cut goes before the character that
// would make a run longer than max_run.
void SplitRuns(std::string_view text, size_t begin, size_t end, size_t max_run,
               std::vector<size_t>* ends) {
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  size_t run_length = 0;
  bool run_is_space = false;
  for (size_t pos = begin; pos < end;) {
    uint8_t bits;
    size_t len = 1;
    if (data[pos] < 0x80) {
      bits = kCharClassStage2[data[pos]];  // block 0 covers ASCII
    } else {
      len = ClassAt(data + pos, text.size() - pos, &bits);
    }
    bool is_space = bits & kClassPyIsSpace;
    if (pos == begin || is_space != run_is_space) {
      run_length = 1;
      run_is_space = is_space;
    } else if (++run_length > max_run) {
      ends->push_back(pos);
      run_length = 1;
    }
    pos += len;
  }
  ends->push_back(end);
}

}  // namespace

std::vector<size_t> MoonshotChunkEnds(std::string_view text, size_t max_encode_chars,
                                      size_t max_run_chars) {
  std::vector<size_t> ends;
  if (text.empty()) return ends;
  // Texts no longer (in bytes, an upper bound on code points) than both limits are never cut.
  if (text.size() <= max_run_chars && text.size() <= max_encode_chars) return {text.size()};
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  size_t begin = 0;
  for (size_t window_end : WindowEnds(text, max_encode_chars)) {
    if (MayHaveLongRun(data, begin, window_end, max_run_chars)) {
      SplitRuns(text, begin, window_end, max_run_chars, &ends);
    } else {
      ends.push_back(window_end);
    }
    begin = window_end;
  }
  return ends;
}

}  // namespace k3::text
