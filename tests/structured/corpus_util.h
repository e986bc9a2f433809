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
#include "structured/grammar.h"
#include "structured/schema.h"
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

// 256 single bytes, a few JSON multi-byte tokens (`":`, `},{`, `true`, ...) and an end token
// (id 299): cheap vocabularies for random walks over grammars.
inline std::shared_ptr<const Vocabulary> SmallVocabulary(int32_t* eos) {
  std::vector<std::string> bytes(300);
  for (int b = 0; b < 256; ++b) bytes[b] = std::string(1, static_cast<char>(b));
  const char* extra[] = {"\":", "\",\"", "\"}", "},{", "true", "null", "12", "0.", "-1", "\"]"};
  for (size_t i = 0; i < std::size(extra); ++i) bytes[256 + i] = extra[i];
  *eos = 299;
  return Vocabulary::Build(300, bytes, {{*eos, "<eos>"}});
}

// A schema's JSON grammar in exact mode and in generation mode (closed objects, unique
// additional keys), as random-walk tests alternate them.
struct GrammarPair {
  std::shared_ptr<Grammar> exact, generation;
};
inline GrammarPair ExactAndGeneration(std::shared_ptr<const Vocabulary> vocab,
                                      const nlohmann::json& schema, int32_t eos) {
  GrammarPair g;
  g.exact = JsonGrammar(vocab, *CompileSchema(schema), {eos});
  g.generation = JsonGrammar(vocab, *CompileSchema(schema, {.closed_objects = true}), {eos});
  g.generation->set_unique_additional_keys(true);
  return g;
}

}  // namespace k3::structured::testing
