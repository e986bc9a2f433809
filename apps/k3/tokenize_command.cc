// k3 tokenize / k3 detokenize: the tokenizer from the command line. Plain mode reads all of stdin
// as one text; --jsonl reads one JSON string per line (for scripts and the parity tests).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "apps/k3/commands.h"
#include "apps/k3/tokenizer_flags.h"
#include "base/log.h"
#include "base/thread_pool.h"

namespace k3::app {
namespace {

struct TokenizeFlags {
  TokenizerFlags tokenizer;
  std::string specials = "all";
  bool count = false;
  bool jsonl = false;
  bool report_memory = false;
  size_t threads = 0;
};

// Resident memory figures from /proc/self/status, in MB ("VmRSS", "VmHWM"); -1 if unavailable.
double ProcStatusMB(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double kb = -1;
  size_t n = std::strlen(field);
  while (std::fgets(line, sizeof(line), f)) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') kb = std::atof(line + n + 1);
  }
  std::fclose(f);
  return kb < 0 ? -1 : kb / 1024.0;
}

std::string ReadStdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

void PrintIds(const std::vector<text::TokenId>& ids, std::string* out) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out->push_back(' ');
    out->append(std::to_string(ids[i]));
  }
  out->push_back('\n');
}

int RunTokenize(const TokenizeFlags& flags) {
  auto tokenizer = LoadTokenizer(flags.tokenizer);
  if (!tokenizer.ok()) {
    K3_LOG(kError) << tokenizer.status().ToString();
    return 1;
  }
  text::SpecialMode mode =
      flags.specials == "none" ? text::SpecialMode::kNone : text::SpecialMode::kAll;
  base::ThreadPool pool(flags.threads);
  text::EncodeOptions options{mode, &pool};
  std::string input = ReadStdin();
  double rss_before_mb = ProcStatusMB("VmRSS");
  if (flags.report_memory) std::ofstream("/proc/self/clear_refs") << "5";  // reset VmHWM
  std::string out;
  auto encode_one = [&](std::string_view text, int line_no) -> bool {
    std::vector<text::TokenId> ids;
    base::Status status = (*tokenizer)->Encode(text, options, &ids);
    if (!status.ok()) {
      K3_LOG(kError) << (line_no ? "line " + std::to_string(line_no) + ": " : "")
                     << status.ToString();
      return false;
    }
    if (flags.count) {
      out += std::to_string(ids.size()) + "\n";
    } else if (flags.jsonl) {
      out += nlohmann::json(ids).dump() + "\n";
    } else {
      PrintIds(ids, &out);
    }
    return true;
  };
  if (!flags.jsonl) {
    if (!encode_one(input, 0)) return 1;
  } else {
    std::istringstream lines(input);
    std::string line;
    for (int line_no = 1; std::getline(lines, line); ++line_no) {
      if (line.empty()) continue;
      auto value = nlohmann::json::parse(line, nullptr, false);
      if (!value.is_string()) {
        K3_LOG(kError) << "line " << line_no << ": expected a JSON string";
        return 1;
      }
      if (!encode_one(value.get<std::string>(), line_no)) return 1;
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (flags.report_memory) {
    double peak_mb = ProcStatusMB("VmHWM");
    std::fprintf(stderr,
                 "memory: %.1f MB resident before encoding (vocabulary + input), peak %.1f MB, "
                 "encode added %.1f MB\n",
                 rss_before_mb, peak_mb, peak_mb - rss_before_mb);
  }
  return 0;
}

int RunDetokenize(const TokenizerFlags& tokenizer_flags, bool jsonl) {
  auto tokenizer = LoadTokenizer(tokenizer_flags);
  if (!tokenizer.ok()) {
    K3_LOG(kError) << tokenizer.status().ToString();
    return 1;
  }
  std::string input = ReadStdin();
  std::vector<std::vector<text::TokenId>> sequences;
  if (jsonl) {
    std::istringstream lines(input);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      auto value = nlohmann::json::parse(line, nullptr, false);
      if (!value.is_array()) {
        K3_LOG(kError) << "expected a JSON array of ids per line";
        return 1;
      }
      sequences.emplace_back();
      for (const auto& id : value) {
        if (!id.is_number_unsigned()) {
          K3_LOG(kError) << "ids must be non-negative integers";
          return 1;
        }
        sequences.back().push_back(id.get<text::TokenId>());
      }
    }
  } else {
    sequences.emplace_back();
    std::istringstream words(input);
    std::string word;
    while (words >> word) {
      char* end = nullptr;
      unsigned long id = std::strtoul(word.c_str(), &end, 10);
      if (*end != '\0' || word[0] == '-') {
        K3_LOG(kError) << "not a token id: '" << word << "'";
        return 1;
      }
      sequences.back().push_back(static_cast<text::TokenId>(id));
    }
  }
  std::string out;
  for (const auto& ids : sequences) {
    auto decoded = (*tokenizer)->Decode(ids);
    if (!decoded.ok()) {
      K3_LOG(kError) << decoded.status().ToString();
      return 1;
    }
    out += jsonl ? nlohmann::json(*decoded).dump() + "\n" : *decoded;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

CommandFn AddTokenizeCommand(CLI::App& app) {
  auto flags = std::make_shared<TokenizeFlags>();
  AddTokenizerFlags(app, &flags->tokenizer);
  app.add_option("--specials", flags->specials,
                 "all: special-token strings in the text become control ids (Moonshot's "
                 "default); none: they are plain text (for untrusted input)")
      ->check(CLI::IsMember({"all", "none"}))
      ->capture_default_str();
  app.add_flag("--count", flags->count, "Print only the number of tokens");
  app.add_flag("--jsonl", flags->jsonl,
               "Each stdin line is a JSON string; print one JSON array of ids per line");
  app.add_flag("--report-memory", flags->report_memory,
               "Print to stderr how much resident memory the encode added (peak over before)");
  app.add_option("--threads", flags->threads, "Encoding threads for long texts (0 = all cores)")
      ->capture_default_str();
  app.footer("Example: echo 'Hello world' | k3 tokenize --model ../shared/kimi/k3");
  return [flags] { return RunTokenize(*flags); };
}

CommandFn AddDetokenizeCommand(CLI::App& app) {
  auto flags = std::make_shared<TokenizerFlags>();
  auto jsonl = std::make_shared<bool>(false);
  AddTokenizerFlags(app, flags.get());
  app.add_flag("--jsonl", *jsonl, "Each stdin line is a JSON array of ids; print JSON strings");
  app.footer("Example: echo '19180 2695' | k3 detokenize --model ../shared/kimi/k3");
  return [flags, jsonl] { return RunDetokenize(*flags, *jsonl); };
}

}  // namespace k3::app
