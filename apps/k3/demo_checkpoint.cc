#include "apps/k3/demo_checkpoint.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "apps/k3/bench_model_checkpoint.h"
#include "base/base64.h"
#include "base/result.h"

namespace k3::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

constexpr int kMaxPosition = 4096;
constexpr int kTargetMerges = 512;  // ranks = 256 bytes + 512 merges = 768; vocab = 1024
constexpr int kNumReservedSpecials = 256;
constexpr char kMarkerName[] = "k3serve_demo.json";

// Common English words, most frequent first (plus a few words of chat prompts and, as in real
// LLM vocabularies, the punctuation runs of JSON: a model writing JSON can close a string or an
// object in one token). The merges are learned from them, so English text takes fewer tokens
// than bytes; any text still encodes.
constexpr std::string_view kWords =
    "the \", \":\" of \": and \"} to \"], a {\" in \":[ is \":{ you }, that [{\" it \"},{\" he "
    "null was true for false on \"] are }] as }} with ]] his ], they [] I {} at \"\" be \",\" this "
    "have from "
    "or one had by word but not what all were we when your can said there use an each which she "
    "do how their if will up other about out many then them these so some her would make like him "
    "into time has look two more write go see number no way could people my than first water been "
    "call who its now find long down day did get come made may part over new sound take only "
    "little work know place year live me back give most very after thing our just name good "
    "sentence man think say great where help through much before line right too mean old any same "
    "tell boy follow came want show also around form three small set put end does another well "
    "large must big even such because turn here why ask went men read need land different home us "
    "move try kind hand picture again change off play spell air away animal house point page "
    "letter mother answer found study still learn should world hello model message user assistant "
    "system tool server token question thanks please sure story today";

// K3's named reserved ids, as offsets from the first special id (tokenizer_config.json of Kimi K3:
// ranks 163584, then [BOS] at 163584, ...). The other offsets are <|reserved_token_{id}|>.
struct NamedSpecial {
  int offset;
  const char* name;
  bool special;  // false for the chat-structure tokens, as in K3's added_tokens_decoder
};
constexpr NamedSpecial kNamedSpecials[] = {
    {0, "[BOS]", true},
    {1, "[EOS]", true},
    {2, "<|end_of_msg|>", true},
    {3, "<|open|>", false},
    {4, "<|close|>", false},
    {5, "<|sep|>", false},
    {6, "[start_header_id]", true},
    {7, "[end_header_id]", true},
    {9, "[EOT]", true},
    {18, "<|media_begin|>", true},
    {19, "<|media_content|>", true},
    {20, "<|media_end|>", true},
    {21, "<|media_pad|>", true},
    {65, "<osagent_mode>", true},
    {254, "[UNK]", true},
    {255, "[PAD]", true},
};
constexpr int kBosOffset = 0, kEndOfMsgOffset = 2, kMediaPadOffset = 21, kPadOffset = 255;

// A training text as token ids, and how often it stands for text.
struct Piece {
  std::vector<int> ids;
  int64_t weight;
};

// Replaces every adjacent (a, b) in `ids`, left to right, by `merged`.
void ApplyMerge(int a, int b, int merged, std::vector<int>* ids) {
  std::vector<int> out;
  for (size_t i = 0; i < ids->size(); ++i) {
    const bool pair = i + 1 < ids->size() && (*ids)[i] == a && (*ids)[i + 1] == b;
    out.push_back(pair ? merged : (*ids)[i]);
    if (pair) ++i;
  }
  *ids = std::move(out);
}

// Byte-pair training on the word list: every learned token is the concatenation of two earlier
// tokens, so tiktoken-style BPE can reach it. Returns all token byte strings in rank order
// (ranks 0..255 are the single bytes). Deterministic: ties go to the smallest pair of ids.
std::vector<std::string> TrainVocabulary() {
  std::vector<std::string> tokens;
  std::unordered_map<std::string, int> ids;
  for (int b = 0; b < 256; ++b) {
    tokens.emplace_back(1, static_cast<char>(b));
    ids[tokens.back()] = b;
  }
  std::vector<Piece> pieces;
  std::istringstream words{std::string(kWords)};
  int index = 0;
  for (std::string w; words >> w; ++index) {
    const int64_t weight = 10000 / (index + 10);  // Zipf-like
    for (const std::string& text : {" " + w, w}) {
      Piece p{{}, text == w ? weight / 3 + 1 : weight};
      for (unsigned char c : text) p.ids.push_back(c);
      pieces.push_back(std::move(p));
    }
  }
  while (tokens.size() < size_t{256 + kTargetMerges}) {
    std::map<std::pair<int, int>, int64_t> counts;  // ordered: ties resolve the same everywhere
    for (const Piece& p : pieces) {
      for (size_t i = 0; i + 1 < p.ids.size(); ++i) counts[{p.ids[i], p.ids[i + 1]}] += p.weight;
    }
    if (counts.empty()) break;  // every piece is a single token
    auto best = counts.begin();
    for (auto it = counts.begin(); it != counts.end(); ++it) {
      if (it->second > best->second) best = it;
    }
    const auto [a, b] = best->first;
    std::string joined = tokens[a] + tokens[b];
    auto [found, inserted] = ids.emplace(joined, static_cast<int>(tokens.size()));
    if (inserted) tokens.push_back(std::move(joined));
    for (Piece& p : pieces) ApplyMerge(a, b, found->second, &p.ids);
  }
  return tokens;
}

// tiktoken.model: one "base64(token bytes) rank" line per rank.
std::string TiktokenText(const std::vector<std::string>& tokens) {
  std::string out;
  for (size_t rank = 0; rank < tokens.size(); ++rank) {
    out += base::Base64Encode(tokens[rank]) + " " + std::to_string(rank) + "\n";
  }
  return out;
}

// K3's tokenizer_config.json with the added tokens moved to start at `first` (= number of ranks).
// auto_map is left out: the demo ships no tokenization_kimi.py.
ordered_json TokenizerConfig(int first) {
  ordered_json added = ordered_json::object();
  ordered_json additional = ordered_json::array();
  for (const NamedSpecial& s : kNamedSpecials) {
    added[std::to_string(first + s.offset)] = {{"content", s.name},    {"lstrip", false},
                                               {"normalized", false},  {"rstrip", false},
                                               {"single_word", false}, {"special", s.special}};
    const std::string_view name = s.name;
    if (name == "<|end_of_msg|>" || name.find("header_id") != name.npos || name == "[EOT]" ||
        name.starts_with("<|media_") || name == "<osagent_mode>") {
      additional.push_back(s.name);
    }
  }
  return {{"added_tokens_decoder", added},
          {"additional_special_tokens", additional},
          {"bos_token", "[BOS]"},
          {"clean_up_tokenization_spaces", false},
          {"eos_token", "[EOS]"},
          {"extra_special_tokens", ordered_json::object()},
          {"model_max_length", kMaxPosition},
          {"pad_token", "[PAD]"},
          {"tokenizer_class", "TikTokenTokenizer"},
          {"unk_token", "[UNK]"}};
}

// Points WriteBenchModel's config at the demo vocabulary's specials and context length.
void PatchModelConfig(int first, json* config) {
  for (json* j : {config, &(*config)["text_config"]}) {
    (*j)["bos_token_id"] = first + kBosOffset;
    (*j)["eos_token_id"] = first + kEndOfMsgOffset;  // <|end_of_msg|>: K3's stop token
    (*j)["pad_token_id"] = first + kPadOffset;
    (*j)["dtype"] = "bfloat16";
    (*j)["tie_word_embeddings"] = false;
  }
  (*config)["text_config"]["max_position_embeddings"] = kMaxPosition;
  (*config)["media_placeholder_token_id"] = first + kMediaPadOffset;
  (*config)["k3serve_demo_version"] = kDemoCheckpointVersion;
}

base::Status WriteTextFile(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return base::Internal("cannot write " + path.string());
  return base::Status::Ok();
}

base::Result<std::string> ReadTextFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::NotFound("cannot open " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The model shape: K3's layer pattern (KDA, KDA, KDA, gated MLA), a dense first layer, latent MoE
// with MXFP4 routed experts, Attention Residual blocks; widths small enough to load in
// milliseconds.
BenchModelShape DemoShape(int vocab) {
  BenchModelShape s;
  s.hidden = 256;
  s.vocab = vocab;
  s.layers = 4;
  s.kda_heads = 2;
  s.mla_heads = 2;
  s.dense_intermediate = 512;
  s.experts = 8;
  s.top_k = 2;
  s.moe_intermediate = 128;
  s.latent = 128;
  s.shared = 1;
  s.attn_res_block = 2;
  s.mxfp4_experts = true;
  return s;
}

// Writes every file of the demo, the marker included, into the empty folder `dir`.
base::Status WriteAllFiles(const fs::path& dir) {
  const std::vector<std::string> tokens = TrainVocabulary();
  const int first = static_cast<int>(tokens.size());
  K3_RETURN_IF_ERROR(WriteBenchModel(DemoShape(first + kNumReservedSpecials), dir));
  K3_RETURN_IF_ERROR(WriteTextFile(dir / "tiktoken.model", TiktokenText(tokens)));
  K3_RETURN_IF_ERROR(
      WriteTextFile(dir / "tokenizer_config.json", TokenizerConfig(first).dump(2) + "\n"));
  const json generation = {{"max_length", kMaxPosition}, {"eos_token_id", first + kEndOfMsgOffset}};
  K3_RETURN_IF_ERROR(WriteTextFile(dir / "generation_config.json", generation.dump(2) + "\n"));
  K3_ASSIGN_OR_RETURN(std::string config_text, ReadTextFile(dir / "config.json"));
  json config = json::parse(config_text, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return base::Internal("the generated config.json does not parse");
  PatchModelConfig(first, &config);
  K3_RETURN_IF_ERROR(WriteTextFile(dir / "config.json", config.dump(2) + "\n"));
  // The marker lists every file with its size; HasDemoCheckpoint checks them all.
  json files = json::object();
  for (const auto& entry : fs::directory_iterator(dir)) {
    files[entry.path().filename().string()] = entry.file_size();
  }
  const json marker = {{"version", kDemoCheckpointVersion}, {"files", files}};
  return WriteTextFile(dir / kMarkerName, marker.dump(2) + "\n");
}

// Renames every file of `staging` into `dir`, the marker last: a reader that finds the marker
// finds every other file complete. rename() replaces atomically, so a process that mapped an
// older copy keeps its (identical) bytes.
base::Status Publish(const fs::path& staging, const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(staging)) {
    const fs::path name = entry.path().filename();
    if (name == kMarkerName) continue;
    fs::rename(entry.path(), dir / name, ec);
    if (ec) return base::Internal("cannot move " + name.string() + " into " + dir.string());
  }
  fs::rename(staging / kMarkerName, dir / kMarkerName, ec);
  if (ec) return base::Internal("cannot write " + (dir / kMarkerName).string());
  return base::Status::Ok();
}

// Removes the staging folder however WriteDemoCheckpoint returns.
struct RemoveOnExit {
  fs::path path;
  ~RemoveOnExit() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

bool HasDemoCheckpoint(const fs::path& dir) {
  auto text = ReadTextFile(dir / kMarkerName);
  if (!text.ok()) return false;
  json marker = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!marker.is_object() || marker.value("version", -1) != kDemoCheckpointVersion ||
      !marker.contains("files") || !marker["files"].is_object()) {
    return false;
  }
  for (const auto& [name, size] : marker["files"].items()) {
    std::error_code ec;
    if (!size.is_number_unsigned() || fs::file_size(dir / name, ec) != size.get<uintmax_t>() || ec)
      return false;
  }
  return true;
}

base::Status WriteDemoCheckpoint(const fs::path& dir) {
  if (HasDemoCheckpoint(dir)) return base::Status::Ok();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return base::Internal("cannot create " + dir.string() + ": " + ec.message());
  // Unique per process and call: concurrent writers (two servers starting) never share a staging.
  const auto nonce = std::chrono::steady_clock::now().time_since_epoch().count();
  RemoveOnExit staging{dir /
                       (".staging-" + std::to_string(getpid()) + "-" + std::to_string(nonce))};
  fs::create_directory(staging.path, ec);
  if (ec) return base::Internal("cannot create " + staging.path.string() + ": " + ec.message());
  K3_RETURN_IF_ERROR(WriteAllFiles(staging.path));
  return Publish(staging.path, dir);
}

fs::path DefaultDemoDir() {
  const std::string leaf = "demo-v" + std::to_string(kDemoCheckpointVersion);
  fs::path root;
  // The XDG spec says a relative XDG_CACHE_HOME is to be ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && fs::path(xdg).is_absolute()) {
    root = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    root = fs::path(home) / ".cache";
  }
  std::error_code ec;
  if (!root.empty()) {
    fs::create_directories(root / "k3serve", ec);
    if (!ec && access((root / "k3serve").c_str(), W_OK) == 0) return root / "k3serve" / leaf;
  }
  fs::path temp = fs::temp_directory_path(ec);
  if (ec) temp = "/tmp";
  return temp / "k3serve" / leaf;
}

}  // namespace k3::app
