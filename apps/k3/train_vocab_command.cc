// k3 train-vocab: a byte-level BPE vocabulary learned from a text corpus, written as a K3
// tokenizer folder (tiktoken.model, tokenizer_config.json with K3's 256 reserved specials after
// the ranks, config.json and generation_config.json pointing at them). The demo model's training
// (tools/train/make_vocab.py) renders its conversations with such a folder; `k3 render --model`,
// `k3 tokenize --model` and train.py --tokenizer read it.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/k3/commands.h"
#include "apps/k3/demo_checkpoint.h"
#include "base/log.h"
#include "base/staged_folder.h"
#include "base/utf8.h"
#include "text/tokenizer/vocab_writer.h"

namespace k3::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct TrainVocabFlags {
  std::string corpus;
  std::string like;
  std::string out;
  int vocab_size = 4096;
};

// config.json of `like` with every vocabulary field moved to a tokenizer of `ranks` ranks: the
// size, and the special ids at K3's offsets after the ranks (top level and text_config).
json ConfigForVocabulary(json config, int ranks) {
  json* levels[] = {&config, config.contains("text_config") ? &config["text_config"] : nullptr};
  for (json* level : levels) {
    if (level == nullptr) continue;
    (*level)["vocab_size"] = ranks + text::kK3NumReservedSpecials;
    (*level)["bos_token_id"] = ranks + text::kK3BosOffset;
    (*level)["eos_token_id"] = ranks + text::kK3EndOfMsgOffset;
    (*level)["pad_token_id"] = ranks + text::kK3PadOffset;
  }
  if (config.contains("media_placeholder_token_id")) {
    config["media_placeholder_token_id"] = ranks + text::kK3MediaPadOffset;
  }
  return config;
}

base::Result<json> ReadJsonFile(const fs::path& path) {
  K3_ASSIGN_OR_RETURN(std::string text, base::ReadFileBytes(path));
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return base::InvalidArgument(path.string() + ": not a JSON object");
  return parsed;
}

base::Status WriteVocabularyFolder(const TrainVocabFlags& f, const std::string& like,
                                   const std::vector<std::string>& tokens) {
  const int ranks = static_cast<int>(tokens.size());
  K3_ASSIGN_OR_RETURN(json config, ReadJsonFile(fs::path(like) / "config.json"));
  K3_ASSIGN_OR_RETURN(json like_tokenizer, ReadJsonFile(fs::path(like) / "tokenizer_config.json"));
  const int64_t max_length = like_tokenizer.value("model_max_length", int64_t{131072});
  std::error_code ec;
  fs::create_directories(f.out, ec);
  if (ec) return base::InvalidArgument("cannot create " + f.out + ": " + ec.message());
  const fs::path out(f.out);
  K3_RETURN_IF_ERROR(base::WriteFileBytes(out / "tiktoken.model", text::TiktokenModelText(tokens)));
  K3_RETURN_IF_ERROR(base::WriteFileBytes(out / "tokenizer_config.json",
                                          text::K3TokenizerConfigJson(ranks, max_length)));
  K3_RETURN_IF_ERROR(base::WriteFileBytes(
      out / "config.json", ConfigForVocabulary(std::move(config), ranks).dump(2) + "\n"));
  const json generation = {{"eos_token_id", ranks + text::kK3EndOfMsgOffset},
                           {"max_length", max_length}};
  return base::WriteFileBytes(out / "generation_config.json", generation.dump(2) + "\n");
}

int RunTrainVocab(const TrainVocabFlags& f) {
  auto corpus = base::ReadFileBytes(f.corpus);
  if (!corpus.ok()) {
    K3_LOG(kError) << corpus.status().ToString();
    return 1;
  }
  if (const size_t bad = base::FindInvalidUtf8(*corpus); bad != corpus->size()) {
    K3_LOG(kError) << f.corpus << ": not UTF-8 at byte " << bad;
    return 1;
  }
  auto like_dir = FolderOrDemo(f.like);
  if (!like_dir.ok()) {
    K3_LOG(kError) << like_dir.status().ToString();
    return 1;
  }
  const std::string& like = *like_dir;
  const int merges = f.vocab_size - text::kK3NumReservedSpecials - 256;
  K3_LOG(kInfo) << "learning up to " << merges << " merges from " << corpus->size() << " bytes of "
                << f.corpus;
  const std::vector<std::string> tokens = text::TrainBpeVocabularyOnText(
      *corpus, merges, [&](int done) { K3_LOG(kInfo) << "merges " << done << "/" << merges; });
  base::Status written = WriteVocabularyFolder(f, like, tokens);
  if (!written.ok()) {
    K3_LOG(kError) << written.ToString();
    return 1;
  }
  K3_LOG(kInfo) << "wrote " << f.out << ": " << tokens.size() << " ranks + "
                << text::kK3NumReservedSpecials
                << " specials = " << tokens.size() + text::kK3NumReservedSpecials << " ids"
                << (static_cast<int>(tokens.size()) - 256 < merges
                        ? " (fewer than asked: every piece of the corpus is one token)"
                        : "");
  return 0;
}

}  // namespace

CommandFn AddTrainVocabCommand(CLI::App& app) {
  auto f = std::make_shared<TrainVocabFlags>();
  app.add_option("--corpus", f->corpus, "UTF-8 text file to learn the merges from")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--out", f->out, "Folder to write the tokenizer into")->required();
  app.add_option("--vocab-size", f->vocab_size,
                 "Ids in all: 256 bytes + the merges + K3's 256 reserved specials")
      ->check(CLI::Range(768, 1 << 20))
      ->capture_default_str();
  app.add_option("--like", f->like,
                 "K3 checkpoint folder whose config.json to copy, with the vocabulary fields "
                 "rewritten (default: the embedded random-weight demo checkpoint)");
  app.footer(
      "The corpus is split into pieces by Kimi's pre-tokenizer pattern and merges are learned "
      "inside pieces, each piece weighing how often it occurs; the written folder loads with "
      "`k3 tokenize --model`, `k3 render --model` and tools/train/train.py --tokenizer.");
  return [f] { return RunTrainVocab(*f); };
}

}  // namespace k3::app
