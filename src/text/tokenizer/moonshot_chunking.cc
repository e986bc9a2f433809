#include "text/tokenizer/moonshot_chunking.h"

#include "text/tokenizer/char_class.h"

namespace k3::text {
std::vector<size_t> MoonshotChunkEnds(std::string_view text, size_t max_encode_chars,
                                      size_t max_run_chars) {
  std::vector<size_t> ends;
  if (text.empty()) return ends;
  // Short texts (counted in bytes, an upper bound on code points) are never cut.
  if (text.size() <= max_run_chars && text.size() <= max_encode_chars) return {text.size()};
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  const size_t size = text.size();
  // One pass over the code points. Within each max_encode_chars window, as
  // `_split_whitespaces_or_nonwhitespaces` does: the run counter restarts when the space-ness
  // flips, and a cut goes before the character that would make a run longer than max_run_chars.
  size_t chars_in_window = 0;
  size_t run_length = 0;
  bool run_is_space = false;
  for (size_t pos = 0; pos < size;) {
    bool is_space;
    size_t len = 1;
    if (data[pos] < 0x80) {
      is_space = kCharClassStage2[data[pos]] & kClassPyIsSpace;
    } else {
      uint8_t bits;
      len = ClassAt(data + pos, size - pos, &bits);
      is_space = bits & kClassPyIsSpace;
    }
    if (chars_in_window == max_encode_chars) {  // a new window starts here
      ends.push_back(pos);
      chars_in_window = 0;
    }
    if (chars_in_window++ == 0) {
      run_is_space = is_space;
      run_length = 1;
    } else if (is_space != run_is_space) {
      run_length = 1;
      run_is_space = is_space;
    } else if (++run_length > max_run_chars) {
      ends.push_back(pos);
      run_length = 1;
    }
    pos += len;
  }
  ends.push_back(size);
  return ends;
}

}  // namespace k3::text
