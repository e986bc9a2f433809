// tokenizer_decode_fuzzer: arbitrary bytes as a sequence of little-endian uint32 token ids.
// Most ids are reduced modulo 163,900 (a little above Kimi's 163,840 ids, so a few are unknown);
// one in eight is kept raw (almost always unknown). Checks:
//  - TokenBytes(id) is OK exactly for id < vocab_size() (Kimi's ids are contiguous), else
//    OUT_OF_RANGE; Decode/DecodeBytes fail with OUT_OF_RANGE when any id is unknown, never crash.
//  - For the known ids: DecodeBytes is the concatenated token bytes and Decode is that with
//    U+FFFD replacement (so always valid UTF-8).
//  - A StreamDetokenizer fed every id (unknown ones must be rejected without changing it) never
//    holds more than 3 bytes, and its outputs plus Finish() equal Decode() of the known ids: what
//    a streaming client sees must be exactly the non-streamed text.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "fuzz_common.h"
#include "text/tokenizer/stream_detokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using k3::base::StatusCode;
  using k3::fuzz::Escaped;
  using k3::text::TokenId;
  static const k3::text::Tokenizer& tok = k3::fuzz::KimiTokenizer();

  std::vector<TokenId> ids;
  for (size_t i = 0; i + 4 <= size; i += 4) {
    uint32_t raw = uint32_t{data[i]} | uint32_t{data[i + 1]} << 8 | uint32_t{data[i + 2]} << 16 |
                   uint32_t{data[i + 3]} << 24;
    ids.push_back((raw >> 29) == 7 ? raw : raw % 163900);
  }

  std::vector<TokenId> known;
  std::string known_bytes;
  for (TokenId id : ids) {
    auto bytes = tok.TokenBytes(id);
    K3_CHECK(bytes.ok() == (id < tok.vocab_size()))
        << "TokenBytes(" << id << ") " << bytes.status().ToString();
    if (!bytes.ok()) {
      K3_CHECK(bytes.status().code() == StatusCode::kOutOfRange) << bytes.status().ToString();
      continue;
    }
    known.push_back(id);
    known_bytes.append(*bytes);
  }

  // All ids, unknown ones included.
  const bool all_known = known.size() == ids.size();
  auto all_text = tok.Decode(ids);
  auto all_bytes = tok.DecodeBytes(ids);
  K3_CHECK(all_text.ok() == all_known && all_bytes.ok() == all_known);
  if (!all_known) {
    K3_CHECK(all_text.status().code() == StatusCode::kOutOfRange);
    K3_CHECK(all_bytes.status().code() == StatusCode::kOutOfRange);
  }

  // Known ids only.
  auto bytes = tok.DecodeBytes(known);
  K3_CHECK(bytes.ok() && *bytes == known_bytes) << "DecodeBytes is not the concatenated tokens";
  auto text = tok.Decode(known);
  K3_CHECK(text.ok()) << text.status().ToString();
  K3_CHECK(*text == k3::base::Utf8Replace(known_bytes))
      << "Decode \"" << Escaped(*text) << "\" of \"" << Escaped(known_bytes)
      << "\" is not Utf8Replace of its bytes";
  K3_CHECK(k3::base::IsValidUtf8(*text)) << "Decode produced invalid UTF-8";

  k3::text::StreamDetokenizer stream(tok);
  std::string streamed;
  for (TokenId id : ids) {
    const size_t pending = stream.pending_bytes();
    const size_t streamed_size = streamed.size();
    k3::base::Status status = stream.Push(id, &streamed);
    if (id >= tok.vocab_size()) {
      K3_CHECK(status.code() == StatusCode::kOutOfRange) << status.ToString();
      K3_CHECK(stream.pending_bytes() == pending && streamed.size() == streamed_size)
          << "a rejected id changed the stream";
      continue;
    }
    K3_CHECK(status.ok()) << "Push(" << id << "): " << status.ToString();
    K3_CHECK(stream.pending_bytes() <= 3) << stream.pending_bytes() << " bytes held back";
  }
  stream.Finish(&streamed);
  K3_CHECK(stream.pending_bytes() == 0);
  K3_CHECK(streamed == *text) << "streamed \"" << Escaped(streamed) << "\" but Decode gave \""
                              << Escaped(*text) << "\" for bytes \"" << Escaped(known_bytes)
                              << "\"";
  return 0;
}
