#include "text/tokenizer/moonshot_chunking.h"

#include "text/tokenizer/char_class.h"

namespace k3::text {
namespace {

// tokenization_kimi.py `_split_whitespaces_or_nonwhitespaces` over one 400K-char window
// [begin, end): a run counter that restarts when the space-ness flips, and a cut before the
// character that would make a run longer than max_run_chars.
void SplitRuns(std::string_view text, size_t begin, size_t end, size_t max_run_chars,
               std::vector<size_t>* ends) {
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  uint8_t bits;
  ClassAt(data + begin, text.size() - begin, &bits);
  bool run_is_space = bits & kClassPyIsSpace;
  size_t run_length = 0;
  for (size_t pos = begin; pos < end;) {
    size_t len = ClassAt(data + pos, text.size() - pos, &bits);
    bool is_space = bits & kClassPyIsSpace;
    if (is_space != run_is_space) {
      run_length = 1;
      run_is_space = is_space;
    } else if (++run_length > max_run_chars) {
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
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  size_t window_begin = 0;
  while (window_begin < text.size()) {
    // Advance max_encode_chars code points.
    size_t window_end = window_begin;
    for (size_t chars = 0; chars < max_encode_chars && window_end < text.size(); ++chars) {
      uint8_t bits;
      window_end += ClassAt(data + window_end, text.size() - window_end, &bits);
    }
    SplitRuns(text, window_begin, window_end, max_run_chars, &ends);
    window_begin = window_end;
  }
  return ends;
}

}  // namespace k3::text
