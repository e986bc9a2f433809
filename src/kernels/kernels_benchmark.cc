// MatMul throughput against the machine's limits (google-benchmark). Not a test: run
//   build/release/src/kernels/kernels_benchmark [--benchmark_filter=...]
// First measures the roofline (read bandwidth; peak FMA rate per ISA), then runs
//   Decode/<format>/<isa>/tokens:N   rows 4096, cols 2048: weight GB/s and its fraction of the
//                                    read bandwidth (weights rotate through as many bytes as the
//                                    bandwidth measurement reads, 4x the LLC, so calls stream them
//                                    from memory);
//   HotDecode[NoVbmi]/FP8/avx512/tokens:1  (CPUs with AVX512-VBMI) the two FP8 decode tables on
//                                    a 512 x 2048 matrix every call re-reads from L2: GB/s of
//                                    weights converted and applied, a compute rate ("of bw" > 1
//                                    is possible);
//   Prefill/<format>/<isa>           tokens 512, rows 2048, cols 2048: GFLOP/s and its fraction of
//                                    that ISA's peak;
//   Precision/<format>/tokens:N/<p>  MatMul under GemmPrecision kFp32 and kBf16 (AMX or
//                                    vdpbf16ps, MatMulBf16Path()): BF16 256x2048x2048, a 16-token
//                                    MXFP4 expert (1024 x 768), 512-token prefills of BF16 and
//                                    MXFP4 (2048 x 2048), and BF16 decode batches of 8/16/32/64
//                                    tokens (4096 x 2048, weights streamed as in Decode rows);
//                                    GFLOP/s and fractions of the FP32 peak and of the bf16
//                                    path's own (vdpbf16ps or AMX tdpbf16ps chains);
//   Regime/<format>/tokens:N/<r>     the same streamed 4096 x 2048 calls forced into the decode
//                                    tiles and into the GEMM, 8-64 tokens, beside the regime
//                                    MatMul's kAuto picks there (matmul_regime.cc's limits);
//   Widening/<fmt>/tokens:N/<w>      4-bit and BF16-panel weights: the same streamed decode calls,
//                                    each row group's weights
//                                    widened once per call or once per token tile
//                                    (detail::DecodeWidening; kAuto picks one per CPU vendor);
// then measures the roofline again (keeping the better numbers: other work on a shared machine
// can disturb either measurement) and prints a summary table of the fastest call of each.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/benchmark_weights.h"
#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_int8.h"
#include "kernels/matmul_kernels.h"
#include "kernels/roofline.h"
#include "kernels/roofline_detail.h"

namespace k3::kernels {
namespace {

using benchmarking::CallTimer;
using benchmarking::DecodeWeights;
using benchmarking::FormatName;
using benchmarking::kHotRows;
using benchmarking::RandomActivations;
using benchmarking::WeightSet;
using detail::Isa;

base::ThreadPool& Pool() {
  static base::ThreadPool pool(0);
  return pool;
}

struct Limits {
  double bandwidth_gbs = 0;
  double peak_gflops[3] = {0, 0, 0};  // by Isa
  double peak_bf16_gflops = 0;        // vdpbf16ps (0 without AVX512-BF16)
  double peak_amx_gflops = 0;         // tdpbf16ps (0 without AMX)
};
Limits limits;

// One summary line; rates are of the fastest call unless named mean.
struct Row {
  std::string name;
  Isa isa;
  double gbs = 0, gbs_mean = 0;  // weight bytes read per second (decode only)
  double gflops = 0, gflops_mean = 0;
};
std::vector<Row> summary;

// google-benchmark calls a benchmark several times while sizing it; keep the last (longest) run.
void Record(Row row) {
  for (Row& r : summary) {
    if (r.name == row.name) {
      r = row;
      return;
    }
  }
  summary.push_back(row);
}

std::string Name(const char* kind, WeightFormat format, Isa isa, int64_t tokens) {
  std::string name = std::string(kind) + "/" + FormatName(format) + "/" + detail::IsaName(isa);
  if (tokens > 0) name += "/tokens:" + std::to_string(tokens);
  return name;
}

// What a Decode benchmark runs besides the format and ISA: kInt8 = FourBitActivations::kInt8 for
// the timed calls (4-bit formats, the ISA's integer set); kPlainAvx512 = the AVX-512 table without
// VBMI (the F16-widening FP8 decode, side by side with the byte-table one Kernels() picks).
enum class DecodePath { kDefault, kInt8, kPlainAvx512 };

const char* DecodeKind(DecodePath path) {
  switch (path) {
    case DecodePath::kInt8:
      return "DecodeInt8";
    case DecodePath::kPlainAvx512:
      return "DecodeNoVbmi";
    default:
      return "Decode";
  }
}

// hot: the cache-resident weights of a "HotDecode" row (DecodeWeights).
void BM_Decode(benchmark::State& state, WeightFormat format, Isa isa, int64_t tokens,
               DecodePath path, bool hot) {
  const bool int8 = path == DecodePath::kInt8;
  const WeightSet& set = DecodeWeights(format, hot);
  const int64_t rows = hot ? kHotRows : 4096, cols = 2048;
  std::vector<float> x = RandomActivations(tokens * cols);
  std::vector<float> y(static_cast<size_t>(tokens * rows));
  CallTimer timer;
  size_t next = 0;
  SetFourBitActivations(int8 ? FourBitActivations::kInt8 : FourBitActivations::kFp32);
  for (auto _ : state) {
    WeightMatrix w = set.Get(next++);
    timer.Time([&] {
      if (path == DecodePath::kPlainAvx512) {
        detail::MatMulDecodeWithKernels(detail::Avx512Kernels(), x.data(), tokens, w, y.data(),
                                        &Pool());
      } else {
        detail::MatMulWithIsa(isa, detail::Regime::kAuto, x.data(), tokens, w, y.data(), &Pool());
      }
    });
    benchmark::DoNotOptimize(y.data());
  }
  SetFourBitActivations(FourBitActivations::kFp32);
  const double bytes = static_cast<double>(set.bytes_per_matrix());
  const double best = bytes / timer.best / 1e9, mean = bytes / timer.Mean() / 1e9;
  state.counters["GB/s"] = best;
  state.counters["GB/s_mean"] = mean;
  state.counters["of_bandwidth"] = best / limits.bandwidth_gbs;
  const double flops = 2.0 * static_cast<double>(tokens * rows * cols);
  state.counters["GFLOP/s"] = flops / timer.best / 1e9;
  const std::string kind = std::string(hot ? "Hot" : "") + DecodeKind(path);
  Record({Name(kind.c_str(), format, isa, tokens), isa, best, mean, flops / timer.best / 1e9,
          flops / timer.Mean() / 1e9});
}

void BM_Prefill(benchmark::State& state, WeightFormat format, Isa isa) {
  const int64_t tokens = 512, rows = 2048, cols = 2048;
  static std::unique_ptr<WeightSet> set;
  set = std::make_unique<WeightSet>(format, rows, cols, 0);
  const WeightMatrix w = set->Get(0);
  std::vector<float> x = RandomActivations(tokens * cols);
  std::vector<float> y(static_cast<size_t>(tokens * rows));
  CallTimer timer;
  for (auto _ : state) {
    timer.Time([&] {
      detail::MatMulWithIsa(isa, detail::Regime::kAuto, x.data(), tokens, w, y.data(), &Pool());
    });
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = 2.0 * static_cast<double>(tokens * rows * cols);
  const double best = flops / timer.best / 1e9, mean = flops / timer.Mean() / 1e9;
  const double peak = limits.peak_gflops[static_cast<int>(isa)];
  state.counters["GFLOP/s"] = best;
  state.counters["GFLOP/s_mean"] = mean;
  state.counters["of_peak"] = best / peak;
  Record({Name("Prefill", format, isa, 0), isa, 0, 0, best, mean});
}

// GFLOP/s of the fastest of the state's calls product(x, w, y), tokens x [rows, cols], w taking
// the set's matrices in turn (a streamed set: each call reads its weights from memory).
template <class Product>
double BestCallGflops(benchmark::State& state, const WeightSet& set, int64_t tokens, int64_t rows,
                      int64_t cols, const Product& product) {
  std::vector<float> x = RandomActivations(tokens * cols);
  std::vector<float> y(static_cast<size_t>(tokens * rows));
  CallTimer timer;
  size_t next = 0;
  for (auto _ : state) {
    const WeightMatrix w = set.Get(next++);
    timer.Time([&] { product(x.data(), w, y.data()); });
    benchmark::DoNotOptimize(y.data());
  }
  const double gflops = 2.0 * static_cast<double>(tokens * rows * cols) / timer.best / 1e9;
  state.counters["GFLOP/s"] = gflops;
  return gflops;
}

// The summary row called `name`, added on first use (google-benchmark sizes each case with
// several runs; the last, longest, one's figures stay).
template <class SummaryRow>
SummaryRow& RowNamed(std::vector<SummaryRow>& rows, const std::string& name) {
  auto it =
      std::find_if(rows.begin(), rows.end(), [&](const SummaryRow& r) { return r.name == name; });
  if (it == rows.end()) it = rows.insert(rows.end(), SummaryRow{name});
  return *it;
}

// GemmPrecision comparison: the same GEMM-regime call under kFp32 and kBf16 (AMX when present).
struct PrecisionRow {
  std::string name;
  double gflops[2] = {0, 0};  // best call, by GemmPrecision
};
std::vector<PrecisionRow> precision_rows;

// stream: the 4096 x 2048 decode weight set, rotated so every call reads its weights from memory.
void BM_Precision(benchmark::State& state, WeightFormat format, int64_t tokens, int64_t rows,
                  int64_t cols, GemmPrecision precision, bool stream) {
  std::unique_ptr<WeightSet> own;
  if (!stream) own = std::make_unique<WeightSet>(format, rows, cols, 0);
  const WeightSet& set = stream ? DecodeWeights(format) : *own;
  SetGemmPrecision(precision);
  const double gflops = BestCallGflops(
      state, set, tokens, rows, cols,
      [&](const float* x, const WeightMatrix& w, float* y) { MatMul(x, tokens, w, y, &Pool()); });
  SetGemmPrecision(GemmPrecision::kFp32);
  const std::string name = std::string(FormatName(format)) + " " + std::to_string(tokens) + "x" +
                           std::to_string(rows) + "x" + std::to_string(cols);
  RowNamed(precision_rows, name).gflops[static_cast<int>(precision)] = gflops;
}

void RegisterPrecision() {
  struct Case {
    WeightFormat format;
    int64_t tokens, rows, cols;
    bool stream = false;
  };
  // Prefill-sized dense GEMMs, one MoE expert's share of a batched decode step (MXFP4; FP8 as in
  // K2 at batch 32), and batched decode of BF16, FP8 and INT4 projections (streamed weights; under
  // bf16, BF16 weights take the vdpbf16ps decode kernel, FP8 ones the FP32 tiles up to 64 tokens
  // and INT4 ones up to 48: matmul_regime.cc).
  constexpr WeightFormat kBf16 = WeightFormat::kBF16, kMx = WeightFormat::kMxfp4,
                         kFp8 = WeightFormat::kFp8Block, kInt4 = WeightFormat::kInt4;
  const Case cases[] = {
      {kBf16, 256, 2048, 2048},      {kMx, 16, 1024, 768},          {kBf16, 512, 2048, 2048},
      {kMx, 512, 2048, 2048},        {kBf16, 8, 4096, 2048, true},  {kBf16, 16, 4096, 2048, true},
      {kBf16, 32, 4096, 2048, true}, {kFp8, 4, 512, 2048},          {kFp8, 4, 4096, 2048, true},
      {kFp8, 8, 4096, 2048, true},   {kFp8, 32, 4096, 2048, true},  {kFp8, 64, 4096, 2048, true},
      {kFp8, 128, 4096, 2048, true}, {kInt4, 16, 4096, 2048, true}, {kInt4, 32, 4096, 2048, true},
      {kInt4, 64, 4096, 2048, true}};
  for (const Case& c : cases) {
    for (GemmPrecision p : {GemmPrecision::kFp32, GemmPrecision::kBf16}) {
      const std::string name = std::string("Precision/") + FormatName(c.format) +
                               "/tokens:" + std::to_string(c.tokens) + "/" +
                               (p == GemmPrecision::kFp32 ? "fp32" : "bf16");
      benchmark::RegisterBenchmark(name.c_str(), BM_Precision, c.format, c.tokens, c.rows, c.cols,
                                   p, c.stream)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
}

// Decode tiles against the GEMM on the same streamed calls: where DecodeMaxTokens belongs on this
// machine (matmul_regime.cc says what was measured where).
struct RegimeRow {
  std::string name;
  double gflops[2] = {0, 0};  // best call: decode tiles, GEMM
  bool auto_decode = false;   // what kAuto picks at this token count
};
std::vector<RegimeRow> regime_rows;

void BM_Regime(benchmark::State& state, WeightFormat format, int64_t tokens,
               detail::Regime regime) {
  const WeightSet& set = DecodeWeights(format);
  const Isa isa = detail::BestIsa();
  const double gflops = BestCallGflops(
      state, set, tokens, 4096, 2048, [&](const float* x, const WeightMatrix& w, float* y) {
        detail::MatMulWithIsa(isa, regime, x, tokens, w, y, &Pool());
      });
  RegimeRow& row =
      RowNamed(regime_rows, std::string(FormatName(format)) + " " + std::to_string(tokens));
  row.gflops[regime == detail::Regime::kDecode ? 0 : 1] = gflops;
  row.auto_decode = detail::AutoPicksDecode(isa, tokens, set.Get(0));
}

void RegisterRegimes() {
  for (WeightFormat format :
       {WeightFormat::kBF16, WeightFormat::kFp8Block, WeightFormat::kMxfp4, WeightFormat::kInt4}) {
    for (int64_t tokens : {8, 16, 32, 64}) {
      for (detail::Regime regime : {detail::Regime::kDecode, detail::Regime::kGemm}) {
        const std::string name = std::string("Regime/") + FormatName(format) +
                                 "/tokens:" + std::to_string(tokens) +
                                 (regime == detail::Regime::kDecode ? "/decode" : "/gemm");
        benchmark::RegisterBenchmark(name.c_str(), BM_Regime, format, tokens, regime)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
      }
    }
  }
}

void BM_Widening(benchmark::State& state, WeightFormat format, int64_t tokens,
                 detail::DecodeWidening widening) {
  const WeightSet& set = DecodeWeights(format);
  const Isa isa = detail::BestIsa();
  detail::SetDecodeWidening(widening);
  BestCallGflops(state, set, tokens, 4096, 2048,
                 [&](const float* x, const WeightMatrix& w, float* y) {
                   detail::MatMulWithIsa(isa, detail::Regime::kDecode, x, tokens, w, y, &Pool());
                 });
  detail::SetDecodeWidening(detail::DecodeWidening::kAuto);
}

void RegisterWidenings() {
  for (WeightFormat format :
       {WeightFormat::kMxfp4, WeightFormat::kInt4, WeightFormat::kBf16Panels}) {
    for (int64_t tokens : {8, 12, 16, 32}) {
      for (auto widening : {detail::DecodeWidening::kOnce, detail::DecodeWidening::kPerTile}) {
        const std::string name =
            std::string("Widening/") + FormatName(format) + "/tokens:" + std::to_string(tokens) +
            (widening == detail::DecodeWidening::kOnce ? "/once" : "/per-tile");
        benchmark::RegisterBenchmark(name.c_str(), BM_Widening, format, tokens, widening)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
      }
    }
  }
}

void RegisterAll() {
  RegisterPrecision();
  const WeightFormat formats[] = {WeightFormat::kBF16,      WeightFormat::kBf16Panels,
                                  WeightFormat::kMxfp4,     WeightFormat::kInt4,
                                  WeightFormat::kInt8Block, WeightFormat::kFp8Block,
                                  WeightFormat::kF16,       WeightFormat::kF32};
  // BF16 panels run AVX-512 tiles; elsewhere scalar std::fma chains (correct, not worth timing).
  auto timed = [](WeightFormat format, Isa isa) {
    return format != WeightFormat::kBf16Panels || isa == Isa::kAvx512;
  };
  for (WeightFormat format : formats) {
    for (Isa isa : detail::SupportedIsas()) {
      if (!timed(format, isa)) continue;
      for (int64_t tokens : {1, 8, 32}) {
        if (isa == Isa::kScalar && tokens > 1) continue;  // minutes, and says nothing new
        std::vector<DecodePath> paths = {DecodePath::kDefault};
        const bool avx512 = isa == Isa::kAvx512;
        if (IsFourBit(format) && detail::Int8KernelsFor(isa) != nullptr) {
          paths.push_back(DecodePath::kInt8);
        }
        if (format == WeightFormat::kFp8Block && avx512 && detail::HasAvx512VbmiKernels() &&
            tokens <= detail::DecodeMaxTokens(isa, format)) {
          paths.push_back(DecodePath::kPlainAvx512);
        }
        for (DecodePath path : paths) {
          benchmark::RegisterBenchmark(Name(DecodeKind(path), format, isa, tokens).c_str(),
                                       BM_Decode, format, isa, tokens, path, false)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
          // The FP8 tables side by side where memory does not hide the conversion.
          if (path == DecodePath::kInt8 || paths.size() == 1 || tokens > 1) continue;
          const std::string hot = std::string("Hot") + DecodeKind(path);
          benchmark::RegisterBenchmark(Name(hot.c_str(), format, isa, tokens).c_str(), BM_Decode,
                                       format, isa, tokens, path, true)
              ->Unit(benchmark::kMicrosecond)
              ->UseRealTime();
        }
      }
    }
  }
  for (WeightFormat format : formats) {
    for (Isa isa : detail::SupportedIsas()) {
      if (isa == Isa::kScalar || !timed(format, isa)) continue;
      benchmark::RegisterBenchmark(Name("Prefill", format, isa, 0).c_str(), BM_Prefill, format, isa)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  if (detail::BestIsa() != Isa::kScalar) {
    RegisterRegimes();
    RegisterWidenings();
  }
}

// Measures the roofline, keeping the best of this and any earlier measurement.
void MeasureLimits() {
  limits.bandwidth_gbs = std::max(limits.bandwidth_gbs, MeasureReadBandwidthGBs(&Pool()));
  for (Isa isa : detail::SupportedIsas()) {
    double& peak = limits.peak_gflops[static_cast<int>(isa)];
    peak = std::max(peak, detail::MeasurePeakFp32GflopsWithIsa(isa, &Pool()));
  }
  limits.peak_bf16_gflops = std::max(limits.peak_bf16_gflops, MeasurePeakBf16Gflops(&Pool()));
  limits.peak_amx_gflops = std::max(limits.peak_amx_gflops, MeasurePeakAmxBf16Gflops(&Pool()));
}

void PrintSummary() {
  std::printf("\nRoofline (%zu threads): read bandwidth %.1f GB/s; peak fp32", Pool().parallelism(),
              limits.bandwidth_gbs);
  for (Isa isa : detail::SupportedIsas()) {
    std::printf(" %s %.1f GFLOP/s", detail::IsaName(isa),
                limits.peak_gflops[static_cast<int>(isa)]);
  }
  std::printf("\n%-30s %8s %8s %7s %9s %9s %7s\n", "benchmark (best call; mean)", "GB/s", "mean",
              "of bw", "GFLOP/s", "mean", "of peak");
  for (const Row& row : summary) {
    if (row.gbs > 0) {
      std::printf("%-30s %8.1f %8.1f %6.1f%%", row.name.c_str(), row.gbs, row.gbs_mean,
                  100 * row.gbs / limits.bandwidth_gbs);
    } else {
      std::printf("%-30s %8s %8s %7s", row.name.c_str(), "", "", "");
    }
    std::printf(" %9.1f %9.1f %6.1f%%\n", row.gflops, row.gflops_mean,
                100 * row.gflops / limits.peak_gflops[static_cast<int>(row.isa)]);
  }
  const double fp32_peak = limits.peak_gflops[static_cast<int>(detail::BestIsa())];
  const std::string path = MatMulBf16Path();
  // What bf16 is judged against: the peak of its path's instruction (none: the FP32 kernels).
  const double bf16_peak = path == "amx"           ? limits.peak_amx_gflops
                           : path == "avx512-bf16" ? limits.peak_bf16_gflops
                                                   : fp32_peak;
  std::printf(
      "\nGemmPrecision (MatMul, best call; bf16 path: %s; peak fp32 %.1f, vdpbf16ps %.1f, AMX "
      "tdpbf16ps %.1f GFLOP/s)\n%-30s %9s %9s %8s %9s %9s\n",
      path.c_str(), fp32_peak, limits.peak_bf16_gflops, limits.peak_amx_gflops,
      "tokens x rows x cols", "fp32", "bf16", "speedup", "fp32 peak", "bf16 peak");
  for (const PrecisionRow& row : precision_rows) {
    std::printf("%-30s %9.1f %9.1f %7.2fx %8.1f%% %8.1f%%\n", row.name.c_str(), row.gflops[0],
                row.gflops[1], row.gflops[1] / row.gflops[0], 100 * row.gflops[0] / fp32_peak,
                100 * row.gflops[1] / bf16_peak);
  }
  if (regime_rows.empty()) return;
  std::printf(
      "\nRegime (%s, 4096 x 2048 streamed, GFLOP/s of the best call)\n%-30s %9s %9s %8s %7s\n",
      detail::IsaName(detail::BestIsa()), "format tokens", "decode", "gemm", "faster", "kAuto");
  for (const RegimeRow& row : regime_rows) {
    const bool decode_faster = row.gflops[0] >= row.gflops[1];
    std::printf("%-30s %9.1f %9.1f %8s %7s\n", row.name.c_str(), row.gflops[0], row.gflops[1],
                decode_faster ? "decode" : "gemm", row.auto_decode ? "decode" : "gemm");
  }
}

}  // namespace
}  // namespace k3::kernels

int main(int argc, char** argv) {
  using namespace k3::kernels;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  MeasureLimits();
  std::printf("%s\nread bandwidth %.1f GB/s, peak fp32 %.1f GFLOP/s (%s)\n",
              MachineLine(Pool().parallelism()).c_str(), limits.bandwidth_gbs,
              limits.peak_gflops[static_cast<int>(detail::BestIsa())],
              detail::IsaName(detail::BestIsa()));
  RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MeasureLimits();  // again: on a shared machine either measurement may have been disturbed
  PrintSummary();
  return 0;
}
