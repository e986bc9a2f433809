#include "loadgen/workload.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

namespace k3::loadgen {
namespace {

// splitmix64: a fast, well-mixed sequence from any seed.
uint64_t Mix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Word k of the lexicon: 2-4 letters derived from k (pronounceable enough for a tokenizer).
std::string LexiconWord(uint64_t k) {
  static constexpr char kConsonants[] = "bcdfghjklmnprstvwz";
  static constexpr char kVowels[] = "aeiou";
  std::string word;
  const int syllables = 1 + static_cast<int>(k % 2);
  for (int s = 0; s < syllables; ++s) {
    word += kConsonants[(k >> (3 + 4 * s)) % 18];
    word += kVowels[(k >> (7 + 4 * s)) % 5];
  }
  if (k % 3 == 0) word += kConsonants[(k >> 13) % 18];
  return word;
}

base::Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::NotFound("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int Workload::requests() const {
  int n = 0;
  for (const Conversation& c : conversations) n += static_cast<int>(c.user_turns.size());
  return n;
}

std::string Words(uint64_t seed, int words) {
  uint64_t state = seed * 0xD1B54A32D192ED03ull + 1;
  std::string text;
  for (int i = 0; i < words; ++i) {
    if (i > 0) text += (i % 17 == 16) ? ". " : " ";
    text += LexiconWord(Mix(state) % 4096);
  }
  return text;
}

Workload RandomWorkload(const RandomOptions& o) {
  Workload w{"random", {}};
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<int> input(o.input_words_min,
                                           std::max(o.input_words_min, o.input_words_max));
  std::uniform_int_distribution<int> output(o.output_min, std::max(o.output_min, o.output_max));
  for (int i = 0; i < o.conversations; ++i) {
    Conversation c;
    c.user_turns.push_back(Words(rng(), input(rng)));
    c.max_tokens = output(rng);
    w.conversations.push_back(std::move(c));
  }
  return w;
}

base::Result<Workload> ShareGptWorkload(const std::string& path, int conversations, int max_output,
                                        uint64_t seed) {
  K3_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array()) return base::InvalidArgument(path + ": not a ShareGPT JSON list");
  std::vector<Conversation> all;
  for (const auto& item : json) {
    const auto turns = item.find("conversations");
    if (turns == item.end() || !turns->is_array() || turns->empty()) continue;
    const auto& first = (*turns)[0];
    if (!first.is_object() || first.find("from") == first.end() || first["from"] != "human" ||
        !first.contains("value") || !first["value"].is_string() ||
        first["value"].get<std::string>().empty()) {
      continue;
    }
    Conversation c;
    c.user_turns.push_back(first["value"].get<std::string>());
    c.max_tokens = max_output;  // files without replies (the filtered set): the cap
    if (turns->size() > 1 && (*turns)[1].is_object() && (*turns)[1].contains("value") &&
        (*turns)[1]["value"].is_string()) {
      const std::string answer = (*turns)[1]["value"].get<std::string>();
      const auto words = std::count(answer.begin(), answer.end(), ' ') + 1;
      c.max_tokens = std::clamp(static_cast<int>(double(words) * 1.3), 4, max_output);
    }
    all.push_back(std::move(c));
  }
  if (all.empty()) return base::InvalidArgument(path + ": no usable conversations");
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  Workload w{"sharegpt", {}};
  for (int i = 0; i < conversations; ++i) w.conversations.push_back(all[size_t(i) % all.size()]);
  return w;
}

Workload MultiTurnWorkload(const MultiTurnOptions& o) {
  Workload w{"multi-turn", {}};
  for (int i = 0; i < o.conversations; ++i) {
    const uint64_t base = o.seed * 1000003 + uint64_t(i) * 7919;
    Conversation c;
    c.system = Words(base, o.system_words);
    for (int t = 0; t < o.turns; ++t)
      c.user_turns.push_back(Words(base + 101 + t, o.question_words));
    c.max_tokens = o.output;
    w.conversations.push_back(std::move(c));
  }
  return w;
}

base::Result<Workload> MooncakeWorkload(const MooncakeOptions& o) {
  std::ifstream in(o.path);
  if (!in) return base::NotFound("cannot read " + o.path);
  Workload w{"mooncake", {}};
  std::string line;
  for (int n = 1; static_cast<int>(w.conversations.size()) < o.requests && std::getline(in, line);
       ++n) {
    if (line.empty()) continue;
    const auto json = nlohmann::json::parse(line, nullptr, false);
    const auto bad = [&](const std::string& why) {
      return base::InvalidArgument(o.path + ":" + std::to_string(n) + ": " + why);
    };
    if (!json.is_object()) return bad("not a JSON object");
    const auto ids = json.find("hash_ids");
    const auto stamp = json.find("timestamp");
    const auto output = json.find("output_length");
    if (ids == json.end() || !ids->is_array() || ids->empty()) return bad("no hash_ids");
    if (stamp == json.end() || !stamp->is_number() || *stamp < 0) return bad("bad timestamp");
    if (output == json.end() || !output->is_number_integer() || *output < 1) {
      return bad("bad output_length");
    }
    std::string prompt;
    for (const auto& id : *ids) {
      if (!id.is_number_unsigned()) return bad("hash_ids must be non-negative integers");
      if (!prompt.empty()) prompt += ' ';
      prompt += Words(id.get<uint64_t>() * 2654435761u + 17, o.words_per_block);
    }
    Conversation c;
    c.user_turns.push_back(std::move(prompt));
    c.max_tokens = std::min(output->get<int>(), o.max_output);
    c.arrival_s = stamp->get<double>() / 1000.0 * o.time_scale;
    w.conversations.push_back(std::move(c));
  }
  if (w.conversations.empty()) return base::InvalidArgument(o.path + ": no requests");
  return w;
}

}  // namespace k3::loadgen
