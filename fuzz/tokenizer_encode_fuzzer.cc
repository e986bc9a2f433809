// tokenizer_encode_fuzzer: arbitrary bytes as text for the Kimi K2.5 tokenizer.
// Checks, for every input:
//  - Encode never crashes; malformed UTF-8 gives INVALID_ARGUMENT and appends nothing.
//  - Valid UTF-8 round-trips byte for byte: Decode(Encode(s)) == s, in SpecialMode kAll (special
//    names decode back to themselves) and kNone (which must never produce a special id).
//  - EncodeSegments over 2-3 cuts of the input with mixed allow_special equals the concatenation of
//    Encode of each piece, and fails exactly when some piece is not valid UTF-8.
//  - For some inputs, the input tiled past the parallel threshold encodes to the same ids on a
//    ThreadPool as sequentially (the pool cuts at IsSafeSplitPoint positions; a wrong proof there
//    shows up as different ids).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/thread_pool.h"
#include "base/utf8.h"
#include "fuzz_common.h"

namespace k3::fuzz {
namespace {

using text::EncodeOptions;
using text::Segment;
using text::SpecialMode;
using text::TokenId;
using text::Tokenizer;

// Text length from which Encode with a pool really goes parallel (kMinParallelBytes in
// parallel_encode.cc); shorter texts take the sequential path.
constexpr size_t kParallelBytes = 256 * 1024;

size_t FirstDifference(const std::vector<TokenId>& a, const std::vector<TokenId>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

void CheckDecodesTo(const Tokenizer& tok, const std::vector<TokenId>& ids, std::string_view str) {
  auto decoded = tok.Decode(ids);
  K3_CHECK(decoded.ok()) << decoded.status().ToString();
  K3_CHECK(*decoded == str) << "round trip: \"" << Escaped(str) << "\" decoded as \""
                            << Escaped(*decoded) << "\"";
}

void CheckEncode(const Tokenizer& tok, std::string_view str, bool valid, SpecialMode mode) {
  auto ids = tok.Encode(str, mode);
  std::vector<TokenId> out = {42};  // the out-parameter form appends after what is there
  base::Status status = tok.Encode(str, EncodeOptions{mode, nullptr}, &out);
  if (!valid) {
    K3_CHECK(!ids.ok() && ids.status().code() == base::StatusCode::kInvalidArgument)
        << "malformed UTF-8 \"" << Escaped(str) << "\" gave " << ids.status().ToString();
    K3_CHECK(!status.ok() && out.size() == 1) << "failed Encode appended ids";
    return;
  }
  K3_CHECK(ids.ok()) << "valid UTF-8 \"" << Escaped(str) << "\": " << ids.status().ToString();
  K3_CHECK(status.ok() && out.size() == ids->size() + 1 &&
           std::equal(ids->begin(), ids->end(), out.begin() + 1))
      << "the two Encode overloads disagree";
  if (mode == SpecialMode::kNone) {
    for (TokenId id : *ids) K3_CHECK(id < tok.ranks().size()) << "special id " << id << " in kNone";
  }
  CheckDecodesTo(tok, *ids, str);
}

void CheckSegments(const Tokenizer& tok, std::string_view str, uint64_t h) {
  const size_t n = str.size();
  std::vector<size_t> cuts = {0, (h >> 8) % (n + 1), n};
  if (h & 1) cuts.push_back((h >> 32) % (n + 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<Segment> segments;
  std::vector<TokenId> expected;
  bool all_valid = true;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    Segment segment{str.substr(cuts[i], cuts[i + 1] - cuts[i]), ((h >> (1 + i)) & 1) != 0};
    segments.push_back(segment);
    auto part =
        tok.Encode(segment.text, segment.allow_special ? SpecialMode::kAll : SpecialMode::kNone);
    if (part.ok()) {
      expected.insert(expected.end(), part->begin(), part->end());
    } else {
      all_valid = false;
    }
  }
  auto got = tok.EncodeSegments(segments);
  K3_CHECK(got.ok() == all_valid) << "EncodeSegments status " << got.status().ToString()
                                  << " but pieces valid=" << all_valid;
  if (!got.ok()) return;
  K3_CHECK(*got == expected) << "EncodeSegments differs from per-segment Encode at id "
                             << FirstDifference(*got, expected);
  CheckDecodesTo(tok, *got, str);
}

void CheckParallel(const Tokenizer& tok, std::string_view str, SpecialMode mode) {
  static base::ThreadPool pool(2);  // two workers plus the calling thread
  std::string tiled;
  tiled.reserve(kParallelBytes + str.size());
  while (tiled.size() < kParallelBytes) tiled.append(str);
  auto sequential = tok.Encode(tiled, mode);
  K3_CHECK(sequential.ok()) << sequential.status().ToString();
  std::vector<TokenId> parallel;
  K3_CHECK(tok.Encode(tiled, EncodeOptions{mode, &pool}, &parallel).ok());
  K3_CHECK(parallel == *sequential)
      << "parallel encode of \"" << Escaped(str) << "\" tiled to " << tiled.size()
      << " bytes differs at id " << FirstDifference(parallel, *sequential);
  CheckDecodesTo(tok, parallel, tiled);
}

}  // namespace
}  // namespace k3::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace k3::fuzz;
  static const k3::text::Tokenizer& tok = KimiTokenizer();
  std::string_view str(reinterpret_cast<const char*>(data), size);
  const bool valid = k3::base::IsValidUtf8(str);
  const uint64_t h = InputHash(data, size);
  CheckEncode(tok, str, valid, SpecialMode::kAll);
  CheckEncode(tok, str, valid, SpecialMode::kNone);
  CheckSegments(tok, str, h);
  // Tiling to 256 KiB costs two long encodes (~0.7 s under ASan), so only for about one input in
  // 64; pretokenizer_fuzzer checks the split-point proofs themselves on every input.
  if (valid && size >= 8 && (h >> 58) == 0) {
    CheckParallel(tok, str, (h >> 57) & 1 ? SpecialMode::kAll : SpecialMode::kNone);
  }
  return 0;
}
