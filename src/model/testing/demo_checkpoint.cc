#include "model/testing/demo_checkpoint.h"

#include <unistd.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/staged_folder.h"
#include "model/testing/bench_checkpoint.h"
#include "model/testing/synthetic_checkpoint.h"
#include "text/tokenizer/vocab_writer.h"

namespace k3::model::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// K3 has no positional encoding in MLA (NoPE) and KDA is recurrent: 128K, as agent clients need.
constexpr int kMaxPosition = 131072;
constexpr int kTargetMerges = 512;  // ranks = 256 bytes + 512 merges = 768; vocab = 1024
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

// The bench config of DemoShape, pointed at the demo vocabulary's specials and context length.
json DemoModelConfig(int first_special) {
  json config = BenchModelConfig(DemoShape(first_special + text::kK3NumReservedSpecials));
  for (json* j : {&config, &config["text_config"]}) {
    (*j)["bos_token_id"] = first_special + text::kK3BosOffset;
    (*j)["eos_token_id"] = first_special + text::kK3EndOfMsgOffset;  // K3's stop token
    (*j)["pad_token_id"] = first_special + text::kK3PadOffset;
    (*j)["dtype"] = "bfloat16";
    (*j)["tie_word_embeddings"] = false;
  }
  config["text_config"]["max_position_embeddings"] = kMaxPosition;
  config["media_placeholder_token_id"] = first_special + text::kK3MediaPadOffset;
  config["k3serve_demo_version"] = kDemoCheckpointVersion;
  return config;
}

using base::ReadFileBytes;
using base::WriteFileBytes;

// Writes every file of the demo, the marker included, into the empty folder `dir`.
base::Status WriteAllFiles(const fs::path& dir) {
  const std::vector<std::string> tokens = text::TrainBpeVocabulary(kWords, kTargetMerges);
  const int first = static_cast<int>(tokens.size());
  K3_RETURN_IF_ERROR(WriteSyntheticCheckpoint(DemoModelConfig(first).dump(2) + "\n", dir));
  K3_RETURN_IF_ERROR(WriteFileBytes(dir / "tiktoken.model", text::TiktokenModelText(tokens)));
  K3_RETURN_IF_ERROR(WriteFileBytes(dir / "tokenizer_config.json",
                                    text::K3TokenizerConfigJson(first, kMaxPosition)));
  const json generation = {{"max_length", kMaxPosition},
                           {"eos_token_id", first + text::kK3EndOfMsgOffset}};
  K3_RETURN_IF_ERROR(WriteFileBytes(dir / "generation_config.json", generation.dump(2) + "\n"));
  // The marker lists every file with its size; HasDemoCheckpoint checks them all.
  json files = json::object();
  for (const auto& entry : fs::directory_iterator(dir)) {
    files[entry.path().filename().string()] = entry.file_size();
  }
  const json marker = {{"version", kDemoCheckpointVersion}, {"files", files}};
  return WriteFileBytes(dir / kMarkerName, marker.dump(2) + "\n");
}

}  // namespace

bool HasDemoCheckpoint(const fs::path& dir) {
  auto text = ReadFileBytes(dir / kMarkerName);
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
  return base::PublishStagedFolder(dir, kMarkerName, WriteAllFiles);
}

fs::path DemoCacheDir(const DemoDirEnvironment& env) {
  return CacheDirFor(env, "demo-v" + std::to_string(kDemoCheckpointVersion));
}

fs::path CacheDirFor(const DemoDirEnvironment& env, const std::string& leaf) {
  fs::path root;
  if (!env.xdg_cache_home.empty() && fs::path(env.xdg_cache_home).is_absolute()) {
    root = env.xdg_cache_home;
  } else if (!env.home.empty()) {
    root = fs::path(env.home) / ".cache";
  }
  if (!root.empty()) {
    std::error_code ec;
    fs::create_directories(root / "k3serve", ec);
    if (!ec && access((root / "k3serve").c_str(), W_OK) == 0) return root / "k3serve" / leaf;
  }
  return env.temp / "k3serve" / leaf;
}

}  // namespace k3::model::testing
