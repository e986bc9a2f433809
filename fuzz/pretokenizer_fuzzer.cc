// pretokenizer_fuzzer: well-formed UTF-8 built from arbitrary bytes, split by every pattern.
// Building the text: valid UTF-8 sequences in the input are kept as they are (so text seeds stay
// readable); each invalid byte b, with the byte n after it, becomes one code point from one of 16
// Unicode ranges the patterns treat specially (marks, Han, titlecase, odd whitespace, emoji, ...),
// chosen by b's low 7 bits and n. Surrogates are skipped, so the text is always well-formed.
// Checks, for each PretokenizerKind:
//  - pieces are non-empty, start and end on code point boundaries, and tile the text exactly;
//  - every position IsSafeSplitPoint accepts is a piece boundary, and for a few of them the two
//    halves split on their own give exactly the pieces of the whole (the claim EncodeParallel
//    relies on to cut long texts).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/utf8.h"
#include "fuzz_common.h"
#include "text/tokenizer/pretokenizer.h"

namespace k3::fuzz {
namespace {

using text::PretokenizerKind;

struct Range {
  char32_t first;
  char32_t size;
};
// Indexed by (b & 0x7f) >> 3; the offset in the range comes from (b & 7) << 8 | n.
constexpr Range kRanges[16] = {
    {0x0000, 0x80},      // ASCII again (control characters, \r \v \f)
    {0x0080, 0x1D0},     // Latin-1 and Latin Extended (NEL, NBSP, ª µ º, × ÷)
    {0x0300, 0x70},      // combining marks (Mn)
    {0x0370, 0x1C0},     // Greek, Cyrillic
    {0x0590, 0x170},     // Hebrew, Arabic (Lo, marks, Arabic-Indic digits)
    {0x0900, 0x80},      // Devanagari (Mc/Mn marks, digits)
    {0x1E00, 0x200},     // Latin Extended Additional, Greek Extended (titlecase Lt)
    {0x2000, 0x70},      // General Punctuation (spaces, ZWJ, U+2028/2029)
    {0x2100, 0x90},      // letterlike symbols, number forms (Nl)
    {0x3000, 0x100},     // CJK symbols (ideographic space), Hiragana, Katakana
    {0x4E00, 0x5200},    // CJK unified ideographs (Han)
    {0xAC00, 0x2BA4},    // Hangul syllables
    {0xFF00, 0xF0},      // fullwidth forms
    {0x1F300, 0x800},    // emoji
    {0x1D400, 0x400},    // mathematical alphanumerics (plane 1 letters and digits)
    {0x0000, 0x110000},  // anything
};

std::string MakeText(const uint8_t* data, size_t size) {
  std::string out;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t pos = 0;
  while (pos < size) {
    char32_t cp;
    bool valid;
    size_t length = base::DecodeUtf8(in.substr(pos), &cp, &valid);
    if (valid) {
      out.append(in.substr(pos, length));
      pos += length;
      continue;
    }
    const uint8_t b = data[pos];
    const uint8_t n = pos + 1 < size ? data[pos + 1] : 0;
    pos += 2;
    const Range& range = kRanges[(b & 0x7f) >> 3];
    cp = range.first + ((char32_t{b & 7u} << 8 | n) * 2654435761u) % range.size;
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates are not scalar values
    base::AppendUtf8(cp, &out);
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> Pieces(PretokenizerKind kind, std::string_view str) {
  std::vector<std::pair<size_t, size_t>> pieces;
  text::ForEachPiece(kind, str, [&](size_t begin, size_t end) { pieces.emplace_back(begin, end); });
  return pieces;
}

bool IsCodePointStart(std::string_view str, size_t pos) {
  return pos == str.size() || (static_cast<uint8_t>(str[pos]) & 0xC0) != 0x80;
}

void CheckKind(PretokenizerKind kind, std::string_view str) {
  const auto pieces = Pieces(kind, str);
  std::vector<bool> boundary(str.size() + 1, false);
  boundary[0] = true;
  size_t expected_begin = 0;
  for (const auto& [begin, end] : pieces) {
    K3_CHECK(begin == expected_begin && end > begin && end <= str.size())
        << "kind " << int(kind) << ": piece [" << begin << ", " << end << ") after "
        << expected_begin << " in \"" << Escaped(str) << "\"";
    K3_CHECK(IsCodePointStart(str, end)) << "kind " << int(kind) << ": piece ends at " << end
                                         << " inside a code point of \"" << Escaped(str) << "\"";
    boundary[end] = true;
    expected_begin = end;
  }
  K3_CHECK(expected_begin == str.size())
      << "pieces cover " << expected_begin << " of " << str.size() << " bytes";

  size_t strong_checks = 0;
  for (size_t pos = 0; pos <= str.size(); ++pos) {
    if (!text::IsSafeSplitPoint(kind, str, pos)) continue;
    K3_CHECK(boundary[pos]) << "kind " << int(kind) << ": safe split point " << pos
                            << " is not a piece boundary of \"" << Escaped(str) << "\"";
    if (pos == 0 || pos == str.size() || strong_checks >= 8) continue;
    ++strong_checks;
    // The halves on their own must give the same pieces as the whole.
    auto halves = Pieces(kind, str.substr(0, pos));
    for (auto [begin, end] : Pieces(kind, str.substr(pos)))
      halves.emplace_back(begin + pos, end + pos);
    K3_CHECK(halves == pieces) << "kind " << int(kind) << ": splitting at safe point " << pos
                               << " changes the pieces of \"" << Escaped(str) << "\"";
  }
}

}  // namespace
}  // namespace k3::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using k3::text::PretokenizerKind;
  const std::string str = k3::fuzz::MakeText(data, size);
  K3_CHECK(k3::base::IsValidUtf8(str));
  for (PretokenizerKind kind :
       {PretokenizerKind::kKimi, PretokenizerKind::kO200k, PretokenizerKind::kCl100k}) {
    k3::fuzz::CheckKind(kind, str);
  }
  return 0;
}
