// Micro-benchmarks of the tokenizer stages (google-benchmark). Not a test: run
//   build/release/src/text/tokenizer_benchmark [--benchmark_filter=...]
// Inputs: the 500K-character mixed golden text, generated pathological runs, and the file named
// by $K3_BENCH_TEXT if set (e.g. a document kept by `k3 bench tokenizer --keep-inputs`).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>

#include "testing/kimi_tokenizer.h"
#include "testing/paths.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::text {
namespace {

const Tokenizer& Kimi() { return testing::KimiTokenizer("k25"); }

const std::string& MixedText() {
  static auto* text = new std::string(
      testing::ReadFileOrDie(testing::SharedDir() + "/goldens/tokenizer/long_mixed_500k.txt"));
  return *text;
}

const std::string& RandomLetters() {
  static auto* text = [] {
    std::mt19937 rng(1);
    auto* s = new std::string;
    for (int i = 0; i < (1 << 20); ++i) s->push_back(static_cast<char>('a' + rng() % 26));
    return s;
  }();
  return *text;
}

void Encode(benchmark::State& state, const std::string& text, size_t threads) {
  base::ThreadPool pool(threads);
  std::vector<TokenId> ids;
  for (auto _ : state) {
    ids.clear();
    benchmark::DoNotOptimize(Kimi().Encode(text, EncodeOptions{SpecialMode::kAll, &pool}, &ids));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(ids.size());
}

void BM_EncodeMixed(benchmark::State& state) { Encode(state, MixedText(), state.range(0)); }
void BM_EncodeLettersNoWhitespace(benchmark::State& state) {
  Encode(state, RandomLetters(), state.range(0));
}
void BM_EncodeFile(benchmark::State& state) {
  static const char* path = std::getenv("K3_BENCH_TEXT");
  if (path == nullptr) {
    state.SkipWithError("set K3_BENCH_TEXT to a UTF-8 text file");
    return;
  }
  static auto* text = new std::string(testing::ReadFileOrDie(path));
  Encode(state, *text, state.range(0));
}
void BM_LoadKimiVocabulary(benchmark::State& state) {
  for (auto _ : state) {
    auto tokenizer = Tokenizer::FromKimiDirectory(testing::SharedDir() + "/kimi/k25");
    benchmark::DoNotOptimize(tokenizer);
  }
}

BENCHMARK(BM_EncodeMixed)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeLettersNoWhitespace)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeFile)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadKimiVocabulary)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace k3::text

BENCHMARK_MAIN();
