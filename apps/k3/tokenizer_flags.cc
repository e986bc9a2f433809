#include "apps/k3/tokenizer_flags.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace k3::app {

std::string DefaultModelDir() {
  const char* shared = std::getenv("K3_SHARED_DIR");
  return std::string(shared && *shared ? shared : K3_DEFAULT_SHARED_DIR) + "/kimi/k3";
}

void AddTokenizerFlags(CLI::App& app, TokenizerFlags* flags) {
  app.add_option("--model", flags->model,
                 "Checkpoint folder with tiktoken.model and tokenizer_config.json "
                 "(default: the Kimi K3 tokenizer in $K3_SHARED_DIR/kimi/k3)");
  app.add_option("--ranks", flags->ranks, "A tiktoken ranks file instead of --model");
  app.add_option("--pattern", flags->pattern,
                 "Pre-tokenizer for --ranks: kimi, o200k_base or cl100k_base")
      ->capture_default_str();
  app.add_option("--special", flags->specials, "NAME=ID special token for --ranks (repeatable)");
  app.add_flag("--no-moonshot-chunking", flags->no_moonshot_chunking,
               "Skip tokenization_kimi.py's 400K/25K-character chunking (raw tiktoken behaviour)");
}

base::Result<std::unique_ptr<text::Tokenizer>> LoadTokenizer(const TokenizerFlags& flags) {
  if (!flags.ranks.empty()) {
    std::ifstream in(flags.ranks, std::ios::binary);
    if (!in) return base::NotFound("cannot open ranks file " + flags.ranks);
    std::ostringstream contents;
    contents << in.rdbuf();
    text::TokenizerOptions options;
    if (!text::PretokenizerKindFromName(flags.pattern, &options.pretokenizer))
      return base::InvalidArgument("unknown --pattern '" + flags.pattern + "'");
    options.moonshot_chunking =
        !flags.no_moonshot_chunking && options.pretokenizer == text::PretokenizerKind::kKimi;
    std::vector<text::SpecialToken> specials;
    for (const std::string& spec : flags.specials) {
      size_t eq = spec.rfind('=');
      if (eq == std::string::npos || eq == 0)
        return base::InvalidArgument("--special wants NAME=ID, got '" + spec + "'");
      char* end = nullptr;
      unsigned long id = std::strtoul(spec.c_str() + eq + 1, &end, 10);
      if (*end != '\0' || end == spec.c_str() + eq + 1)
        return base::InvalidArgument("--special id is not a number in '" + spec + "'");
      specials.push_back({spec.substr(0, eq), static_cast<text::TokenId>(id), true});
    }
    return text::Tokenizer::FromTiktoken(contents.str(), std::move(specials), options);
  }
  std::string dir = flags.model.empty() ? DefaultModelDir() : flags.model;
  text::TokenizerOptions options;
  options.moonshot_chunking = !flags.no_moonshot_chunking;
  auto loaded = text::Tokenizer::FromKimiDirectory(dir, options);
  if (!loaded.ok()) return loaded.status().WithContext("loading tokenizer from " + dir);
  return std::move(*loaded);
}

}  // namespace k3::app
