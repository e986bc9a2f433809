#include "testing/kimi_tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "testing/paths.h"

namespace k3::testing {

const text::Tokenizer& KimiTokenizer(const std::string& model) {
  static std::mutex mutex;
  static auto* loaded = new std::map<std::string, std::unique_ptr<text::Tokenizer>>;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = (*loaded)[model];
  if (!slot) {
    auto tokenizer = text::Tokenizer::FromKimiDirectory(SharedDir() + "/kimi/" + model);
    if (!tokenizer.ok()) {
      std::fprintf(stderr, "cannot load the %s tokenizer: %s\n", model.c_str(),
                   tokenizer.status().ToString().c_str());
      std::abort();
    }
    slot = std::move(*tokenizer);
  }
  return *slot;
}

}  // namespace k3::testing
