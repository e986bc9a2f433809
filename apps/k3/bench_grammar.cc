#include "apps/k3/bench_grammar.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>

#include "structured/matcher.h"

namespace k3::app::grammar_bench {
namespace {

using Clock = std::chrono::steady_clock;

double MicrosSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// Process-wide, so a broken library does not flood the terminal.
size_t violations_printed = 0;

void ReportViolation(const ReplayInput& in, size_t index, const std::string& what) {
  if (violations_printed++ >= 20) return;
  const auto& vocab = in.grammar->vocab();
  std::string bytes;
  if (index < in.tokens.size() && vocab.IsOrdinary(in.tokens[index])) {
    bytes = std::string(vocab.Bytes(in.tokens[index]));
  }
  std::fprintf(stderr, "VIOLATION %.*s token %zu/%zu (id %d '%s'): %s\n",
               static_cast<int>(in.label.size()), in.label.data(), index, in.tokens.size(),
               index < in.tokens.size() ? in.tokens[index] : in.end_token, bytes.c_str(),
               what.c_str());
}

// Keeps the kSlowest slowest masks, with where they were taken (built only for those).
void NoteIfSlow(const ReplayInput& in, size_t accepted, ReplayStats* stats) {
  constexpr size_t kSlowest = 5;
  const double us = stats->mask_us.back();
  auto& slow = stats->slowest;
  if (slow.size() == kSlowest && us <= slow.back().us) return;
  std::string prefix;
  for (size_t k = 0; k < accepted; ++k) prefix += in.grammar->vocab().Bytes(in.tokens[k]);
  if (prefix.size() > 40) prefix = "..." + prefix.substr(prefix.size() - 40);
  const auto at = std::find_if(slow.begin(), slow.end(), [&](const auto& s) { return s.us < us; });
  slow.insert(at, {us, std::string(in.label) + " after '" + prefix + "'"});
  if (slow.size() > kSlowest) slow.pop_back();
}

}  // namespace

base::Result<std::vector<CorpusSchema>> LoadCorpus(const std::string& path, size_t limit) {
  std::ifstream in(path);
  if (!in) return base::NotFound("cannot open schema corpus " + path + " (see --corpus)");
  std::vector<CorpusSchema> out;
  std::string line;
  while (std::getline(in, line) && (limit == 0 || out.size() < limit)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("schema") || !j.value("valid", nlohmann::json()).is_array()) {
      return base::InvalidArgument(path + ":" + std::to_string(out.size() + 1) +
                                   ": not a corpus line {name, schema, valid, invalid}");
    }
    out.push_back({j.value("name", ""), j.at("schema"), j.at("valid")});
  }
  return out;
}

Summary Summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  // Nearest rank: the smallest sample with at least p of the samples at or below it.
  auto rank = [&](double p) {
    const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size())));
    return samples[std::clamp<size_t>(k, 1, samples.size()) - 1];
  };
  s.n = samples.size();
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.max = samples.back();
  const double sum = std::accumulate(samples.begin(), samples.end(), 0.0);
  s.mean = sum / static_cast<double>(s.n);
  const auto slow = std::upper_bound(samples.begin(), samples.end(), 1000.0);
  s.over_1ms = static_cast<size_t>(samples.end() - slow);
  s.over_1ms_share = sum > 0 ? std::accumulate(slow, samples.end(), 0.0) / sum : 0;
  return s;
}

void ApplyMask(const structured::TokenSet& mask, std::span<float> logits) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const std::span<const uint64_t> words = mask.words();
  const size_t full_words = std::min(words.size(), logits.size() / 64);
  for (size_t w = 0; w < full_words; ++w) {
    const uint64_t bits = words[w];
    if (bits == ~uint64_t{0}) continue;
    float* row = logits.data() + w * 64;
    if (bits == 0) {
      for (int i = 0; i < 64; ++i) row[i] = kMinusInf;
      continue;
    }
    for (uint64_t zeros = ~bits; zeros != 0; zeros &= zeros - 1) {
      row[__builtin_ctzll(zeros)] = kMinusInf;
    }
  }
  for (size_t i = full_words * 64; i < logits.size(); ++i) {  // a ragged tail, if any
    if (i >= mask.size() || !mask.Test(i)) logits[i] = kMinusInf;
  }
}

void Replay(const ReplayInput& in, ReplayStats* stats, std::span<float> logits) {
  structured::Matcher m(in.grammar);
  // Sized up front so no FillMask below allocates.
  structured::TokenSet mask(in.grammar->vocab().size());
  auto timed_mask = [&] {
    const auto t = Clock::now();
    m.FillMask(&mask);
    stats->mask_us.push_back(MicrosSince(t));
    NoteIfSlow(in, m.accepted_tokens(), stats);
    if (logits.empty()) return;
    const auto a = Clock::now();
    ApplyMask(mask, logits);
    stats->apply_us.push_back(MicrosSince(a));
  };
  for (size_t i = 0; i < in.tokens.size(); ++i) {
    timed_mask();
    const int32_t token = in.tokens[i];
    if (!mask.Test(static_cast<size_t>(token))) {
      ++stats->violations;
      ReportViolation(in, i, "not in the mask");
    }
    if (!m.Accept(token)) {
      ++stats->violations;
      ReportViolation(in, i, "Accept refused it; rest of the instance skipped");
      return;
    }
    ++stats->tokens;
  }
  timed_mask();
  if (!mask.Test(static_cast<size_t>(in.end_token)) || !m.CanEnd()) {
    ++stats->violations;
    ReportViolation(in, in.tokens.size(), "end token not allowed after the last token");
  }
}

}  // namespace k3::app::grammar_bench
