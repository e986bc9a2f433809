// Fuzzes the tokenizer_config.json path of Tokenizer::FromKimiFiles: random bytes as the config
// over a tiny 256-byte vocabulary. Loading must either fail with DATA_LOSS or give a tokenizer
// whose 256 special ids all decode and whose names encode back to their ids; never crash.
#include <string>
#include <string_view>

#include "fuzz_common.h"

namespace {

const std::string& ByteRanks() {
  static const std::string* ranks = [] {
    static const char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    auto* out = new std::string;
    for (int b = 0; b < 256; ++b) {  // base64 of one byte: two characters and "=="
      *out += kAlphabet[b >> 2];
      *out += kAlphabet[(b & 3) << 4];
      *out += "== " + std::to_string(b) + "\n";
    }
    return out;
  }();
  return *ranks;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view config(reinterpret_cast<const char*>(data), size);
  auto tokenizer = k3::text::Tokenizer::FromKimiFiles(ByteRanks(), config);
  if (!tokenizer.ok()) {
    K3_CHECK(tokenizer.status().code() == k3::base::StatusCode::kDataLoss)
        << tokenizer.status().ToString();
    return 0;
  }
  const auto& t = **tokenizer;
  K3_CHECK(t.vocab_size() == 512) << t.vocab_size();
  for (k3::text::TokenId id = 256; id < 512; ++id) {
    auto bytes = t.TokenBytes(id);
    K3_CHECK(bytes.ok()) << id;
    std::string name(*bytes);
    auto ids = t.Encode(name, k3::text::SpecialMode::kAll);
    if (!ids.ok()) continue;  // a name that is not valid UTF-8 cannot be encoded as text
    // The name must come back as one id: its own, or (when another name is a prefix match that
    // wins the leftmost-longest scan) at least start with a special id.
    K3_CHECK(!ids->empty() && (*ids)[0] >= 256) << k3::fuzz::Escaped(name);
  }
  return 0;
}
