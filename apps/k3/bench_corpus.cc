#include "apps/k3/bench_corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/utf8.h"

namespace k3::app {
namespace {

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Splits text into paragraphs of roughly `size` bytes at line ends. A line longer than 4 * size
// (the golden text has a 26 KB base64 line) is cut at a character boundary instead, so no single
// line makes up most of a small "mixed" document.
std::vector<std::string> Paragraphs(const std::string& text, size_t size) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', std::min(text.size(), begin + size));
    end = end == std::string::npos ? text.size() : end + 1;
    if (end - begin > 4 * size) {
      end = begin + size;
      while (end < text.size() && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) ++end;
    }
    out.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return out;
}

std::vector<std::string> ShareGptMessages(const std::string& shared_dir) {
  std::vector<std::string> out;
  auto json = nlohmann::json::parse(
      ReadAll(shared_dir + "/data/sharegpt/sharegpt_v3_filtered_500.json"), nullptr, false);
  if (!json.is_array()) return out;
  for (const auto& conversation : json) {
    for (const auto& turn : conversation.value("conversations", nlohmann::json::array())) {
      if (turn.contains("value") && turn["value"].is_string())
        out.push_back(turn["value"].get<std::string>() + "\n");
    }
  }
  return out;
}

// Paragraphs of every regular file under `dir` (recursively or not), in sorted path order.
template <typename DirectoryIterator>
std::vector<std::string> FileParagraphs(const char* dir, size_t paragraph_bytes) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : DirectoryIterator(dir, ec)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (const auto& file : files) {
    for (auto& p : Paragraphs(ReadAll(file), paragraph_bytes)) out.push_back(std::move(p));
  }
  return out;
}

// Code: the C++ standard library headers.
std::vector<std::string> CppHeaders() {
  return FileParagraphs<std::filesystem::recursive_directory_iterator>("/usr/include/c++", 3000);
}

// English prose that every Debian machine has: the common licence texts.
std::vector<std::string> LicenseTexts() {
  return FileParagraphs<std::filesystem::directory_iterator>("/usr/share/common-licenses", 2000);
}

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

MixedTextSource::MixedTextSource(const std::string& shared_dir, uint64_t seed) : rng_state_(seed) {
  pools_.push_back(ShareGptMessages(shared_dir));
  pools_.push_back(
      Paragraphs(ReadAll(shared_dir + "/goldens/tokenizer/long_mixed_500k.txt"), 2000));
  std::vector<std::string> specs;
  for (const char* name : {"frontend", "model", "serving", "style"}) {
    for (auto& p : Paragraphs(ReadAll(shared_dir + "/spec/" + name + ".md"), 2000))
      specs.push_back(std::move(p));
  }
  pools_.push_back(std::move(specs));
  pools_.push_back(CppHeaders());
  pools_.push_back(LicenseTexts());
  for (auto& pool : pools_) std::reverse(pool.begin(), pool.end());  // consume in file order
}

std::string MixedTextSource::Next() {
  // Real sources in turn, skipping exhausted ones; every eighth paragraph is synthetic.
  if (turn_++ % 8 == 7) return NextSynthetic();
  for (size_t tries = 0; tries < pools_.size(); ++tries) {
    auto& pool = pools_[next_pool_++ % pools_.size()];
    if (pool.empty()) continue;
    std::string paragraph = std::move(pool.back());
    pool.pop_back();
    return paragraph;
  }
  return NextSynthetic();
}

// A paragraph of words in several scripts, with numbers, punctuation and emoji.
std::string MixedTextSource::NextSynthetic() {
  struct Script {
    char32_t first;
    char32_t count;
    bool spaced;
  };
  static const Script kScripts[] = {
      {U'a', 26, true},          {U'\u00E0', 30, true},  {U'\u0430', 32, true},
      {U'\u03B1', 25, true},     {U'\u0627', 26, true},  {U'\u0915', 36, true},
      {U'\uAC00', 2000, true},   {U'\u3041', 80, false}, {U'\u4E00', 6000, false},
      {U'\U0001F600', 70, true}, {U'0', 10, true},
  };
  std::string out;
  int words = 20 + SplitMix(&rng_state_) % 60;
  for (int w = 0; w < words; ++w) {
    const Script& script = kScripts[SplitMix(&rng_state_) % std::size(kScripts)];
    int length = 1 + SplitMix(&rng_state_) % 8;
    for (int i = 0; i < length; ++i)
      base::AppendUtf8(script.first + SplitMix(&rng_state_) % script.count, &out);
    static const char* kSeparators[] = {" ", " ", " ", ", ", ". ", "\n", "", "! ", " (", ") "};
    out += script.spaced ? kSeparators[SplitMix(&rng_state_) % std::size(kSeparators)] : "";
  }
  return out + "\n";
}

Document BuildDocument(const std::string& name, size_t target_tokens, MixedTextSource& source,
                       const std::function<size_t(const std::string&)>& count_tokens) {
  Document doc{name, {}};
  size_t tokens = 0;
  while (tokens < target_tokens) {
    std::string paragraph = source.Next();
    tokens += count_tokens(paragraph);
    doc.text += paragraph;
  }
  return doc;
}

std::vector<Document> PathologicalDocuments(size_t bytes, uint64_t seed) {
  uint64_t state = seed;
  auto fill = [&](const std::string& name, auto&& next_char) {
    Document doc{name, {}};
    doc.text.reserve(bytes + 8);
    while (doc.text.size() < bytes) base::AppendUtf8(next_char(), &doc.text);
    return doc;
  };
  std::vector<Document> docs;
  docs.push_back(
      fill("letters, no whitespace", [&] { return char32_t('a' + SplitMix(&state) % 26); }));
  docs.push_back(fill("one letter repeated", [] { return U'a'; }));
  docs.push_back(fill("digits", [&] { return char32_t('0' + SplitMix(&state) % 10); }));
  docs.push_back(
      fill("punctuation", [&] { return char32_t("!#$%&*+-./:;<=>?@^_~"[SplitMix(&state) % 20]); }));
  docs.push_back(fill("spaces", [] { return U' '; }));
  docs.push_back(
      fill("CJK, no whitespace", [&] { return char32_t(0x4E00 + SplitMix(&state) % 20000); }));
  docs.push_back(fill("emoji + ZWJ", [&] {
    return SplitMix(&state) % 2 ? char32_t(0x1F466 + SplitMix(&state) % 4) : U'\u200D';
  }));
  return docs;
}

}  // namespace k3::app
