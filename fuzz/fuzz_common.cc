#include "fuzz_common.h"

#include <cstdio>

#include "testing/paths.h"

namespace k3::fuzz {

const text::Tokenizer& KimiTokenizer() {
  static const text::Tokenizer* tokenizer = [] {
    std::string dir = testing::SharedDir() + "/kimi/k25";
    auto loaded = text::Tokenizer::FromKimiDirectory(dir);
    K3_CHECK(loaded.ok()) << "cannot load the Kimi tokenizer from " << dir << ": "
                          << loaded.status().ToString() << " (set K3_SHARED_DIR)";
    return loaded->release();  // deliberately never freed: lives for the whole fuzzing run
  }();
  return *tokenizer;
}

std::string Escaped(std::string_view bytes, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < max_bytes; ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (bytes.size() > max_bytes) out += "...(" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

}  // namespace k3::fuzz
