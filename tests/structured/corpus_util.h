// Reading the schema corpus (tests/structured/schema_corpus.jsonl, made by make_corpus.py) and
// the Kimi vocabulary for structured-output tests.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/constraints.h"
#include "structured/vocabulary.h"
#include "testing/kimi_tokenizer.h"

namespace k3::structured::testing {

struct CorpusCase {
  std::string name;
  nlohmann::json schema;
  std::vector<std::string> valid, invalid;
};

inline std::vector<CorpusCase> LoadCorpus() {
  std::ifstream in(std::string(K3_SOURCE_DIR) + "/tests/structured/schema_corpus.jsonl");
  std::vector<CorpusCase> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    out.push_back({j.at("name"), j.at("schema"), j.at("valid"), j.at("invalid")});
  }
  return out;
}

// A full Kimi vocabulary (163,840 ids: ordinary ranks plus the named specials) of
// ../shared/kimi/<model>; "k3" (XTML specials) or "k25" (K2-family specials).
inline std::shared_ptr<const Vocabulary> KimiVocabulary(const std::string& model = "k3") {
  static std::map<std::string, std::shared_ptr<const Vocabulary>> cache;
  auto& slot = cache[model];
  if (slot) return slot;
  slot = [&] {
    const text::Tokenizer& tok = k3::testing::KimiTokenizer(model);
    return serve::StructuredVocabulary(tok, static_cast<int64_t>(tok.vocab_size()));
  }();
  return slot;
}

}  // namespace k3::structured::testing
