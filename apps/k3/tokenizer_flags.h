// Flags shared by every subcommand that needs a tokenizer: a Moonshot checkpoint folder, or a
// general tiktoken ranks file with a named pattern and explicit special tokens.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::app {

struct TokenizerFlags {
  std::string model;                  // checkpoint folder with tiktoken.model
  std::string ranks;                  // or: a .tiktoken ranks file ...
  std::string pattern = "kimi";       // ... with this pre-tokenizer (kimi, o200k_base, cl100k_base)
  std::vector<std::string> specials;  // ... and these NAME=ID special tokens
  bool no_moonshot_chunking = false;
};

void AddTokenizerFlags(CLI::App& app, TokenizerFlags* flags);
base::Result<std::unique_ptr<text::Tokenizer>> LoadTokenizer(const TokenizerFlags& flags);
// The folder used when neither --model nor --ranks is given: the Kimi K3 tokenizer in shared/.
std::string DefaultModelDir();

}  // namespace k3::app
