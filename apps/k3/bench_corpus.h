// Benchmark inputs for the tokenizer: distinct "mixed" documents (prose, chat, code, CJK, other
// scripts, emoji) drawn without repetition from the shared data, the C++ standard headers on this
// machine and a seeded multilingual generator; and a pathological set (long runs with no
// whitespace, digits, punctuation, CJK, emoji). Deterministic for a given machine image.
// Sources: ShareGPT chats, the shared specs and goldens, the C++ standard headers and Debian's
// licence texts, with one paragraph in eight from a seeded multilingual generator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace k3::app {

// Hands out paragraphs round-robin from the sources, never the same one twice.
class MixedTextSource {
 public:
  MixedTextSource(const std::string& shared_dir, uint64_t seed);
  // The next paragraph (ends with a newline).
  std::string Next();

 private:
  std::string NextSynthetic();
  std::vector<std::vector<std::string>> pools_;  // per source, consumed from the back
  size_t turn_ = 0;
  size_t next_pool_ = 0;
  uint64_t rng_state_;
};

struct Document {
  std::string name;
  std::string text;
};

// Appends paragraphs until count_tokens(text) reaches target_tokens (checked per paragraph).
Document BuildDocument(const std::string& name, size_t target_tokens, MixedTextSource& source,
                       const std::function<size_t(const std::string&)>& count_tokens);

// The pathological inputs, each `bytes` long (rounded to whole characters).
std::vector<Document> PathologicalDocuments(size_t bytes, uint64_t seed);

}  // namespace k3::app
