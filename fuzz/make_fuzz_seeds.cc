// make_fuzz_seeds SHARED_DIR OUT_DIR: writes small seed corpora for the fuzz targets from the
// shared goldens (so no corpus is committed), one folder per target under OUT_DIR, plus
// OUT_DIR/specials.dict, a libFuzzer dictionary of the Kimi special-token names.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testing/paths.h"

namespace {

constexpr size_t kMaxSeedBytes = 4096;  // scripts/fuzz.sh runs with -max_len=4096

struct SeedWriter {
  std::filesystem::path dir;
  int count = 0;
  explicit SeedWriter(std::filesystem::path d) : dir(std::move(d)) {
    std::filesystem::create_directories(dir);
  }
  void Write(const std::string& bytes) {
    std::ofstream out(dir / ("seed_" + std::to_string(count++)), std::ios::binary);
    out << bytes;
  }
};

// The longest prefix of at most kMaxSeedBytes that does not cut a UTF-8 character.
std::string Truncate(const std::string& text) {
  if (text.size() <= kMaxSeedBytes) return text;
  size_t end = kMaxSeedBytes;
  while (end > 0 && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string IdBytes(const nlohmann::json& ids) {
  std::string out;
  for (const auto& id : ids) {
    if (out.size() + 4 > kMaxSeedBytes) break;
    uint32_t v = id.get<uint32_t>();
    for (int k = 0; k < 4; ++k) out += static_cast<char>((v >> (8 * k)) & 0xFF);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SHARED_DIR OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string shared = argv[1];
  const std::filesystem::path out = argv[2];
  const std::string goldens = shared + "/goldens/tokenizer/";

  SeedWriter encode(out / "tokenizer_encode_fuzzer");
  SeedWriter pretokenize(out / "pretokenizer_fuzzer");
  SeedWriter bpe_trainer(out / "bpe_trainer_fuzzer");
  SeedWriter decode(out / "tokenizer_decode_fuzzer");
  SeedWriter ranks(out / "tiktoken_ranks_fuzzer");

  // Texts (encode, pretokenizer) and id sequences (decode) from the goldens.
  for (const char* name : {"kimi_encode.jsonl", "kimi_encode_nospecial.jsonl"}) {
    for (const auto& c : k3::testing::ReadJsonLines(goldens + name)) {
      std::string text = Truncate(c["text"].get<std::string>());
      encode.Write(text);
      pretokenize.Write(text);
      bpe_trainer.Write(text);
      decode.Write(IdBytes(c["ids"]));
    }
  }
  for (const auto& c : k3::testing::ReadJsonLines(goldens + "kimi_decode.jsonl"))
    decode.Write(IdBytes(c["ids"]));
  const std::string mixed = k3::testing::ReadFileOrDie(goldens + "long_mixed_500k.txt");
  for (size_t start = 0; start + kMaxSeedBytes < mixed.size(); start += mixed.size() / 8) {
    size_t begin = start;
    while (begin < mixed.size() && (static_cast<uint8_t>(mixed[begin]) & 0xC0) == 0x80) ++begin;
    std::string text = Truncate(mixed.substr(begin, kMaxSeedBytes));
    encode.Write(text);
    pretokenize.Write(text);
  }

  // Special-token names: a dictionary for the text fuzzers, and names sections for the ranks one.
  std::ifstream config_file(shared + "/kimi/k25/tokenizer_config.json");
  nlohmann::json config = nlohmann::json::parse(config_file, nullptr, false);
  std::string dict;
  std::string names;
  if (config.is_object() && config.contains("added_tokens_decoder")) {
    for (const auto& [id, token] : config["added_tokens_decoder"].items()) {
      std::string name = token.value("content", "");
      if (name.empty()) continue;
      std::string escaped;
      for (char ch : name) {
        if (ch == '"' || ch == '\\') escaped += '\\';
        escaped += ch;
      }
      dict += "\"" + escaped + "\"\n";
      if (names.size() < 200) names += name + "\n";
    }
  }
  std::ofstream(out / "specials.dict") << dict;

  // Ranks seeds: flags byte (see tiktoken_ranks_fuzzer.cc), a few multi-byte Kimi tokens
  // renumbered from 256 (after the 256 single bytes flag bit 0 adds), then special names.
  std::istringstream model(k3::testing::ReadFileOrDie(shared + "/kimi/k25/tiktoken.model"));
  std::vector<std::string> multi_byte;
  std::string first_lines;
  std::string line;
  for (int n = 0; std::getline(model, line); ++n) {
    if (n < 120) first_lines += line + "\n";
    std::string token = line.substr(0, line.find(' '));
    if (n % 997 == 0 && token.size() >= 4 && token.substr(token.size() - 2) != "==")
      multi_byte.push_back(token);
  }
  for (int flags : {0x01, 0x03, 0x05, 0x09, 0x11}) {
    std::string seed(1, static_cast<char>(flags));
    for (size_t i = 0; i < multi_byte.size() && i < 60; ++i)
      seed += multi_byte[i] + " " + std::to_string(256 + i) + "\n";
    ranks.Write(seed + "--\n" + names);
  }
  ranks.Write(std::string(1, '\0') + first_lines);
  ranks.Write(std::string(1, '\1') + "\n--\na\n<|x|>\n");
  std::printf("wrote seeds: encode %d, pretokenizer %d, decode %d, ranks %d\n", encode.count,
              pretokenize.count, decode.count, ranks.count);
  return 0;
}
