// Which regime MatMulWithIsa's kAuto picks: where the decode tiles stop beating the GEMM; and
// which product paths this machine runs (MatMulPaths).
#include <atomic>
#include <cstdint>
#include <string>

#include "base/cpu_info.h"
#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"

namespace k3::kernels::detail {

namespace {

// Intel's AVX-512 cores (Skylake-SP to Emerald Rapids) issue 512-bit FMAs, shuffles and
// conversions on the same two ports (shuffles on port 5 alone; vcvtph2ps takes two µops), where
// AMD's Zen 4 and Zen 5 have four vector pipes. An FP8 decode tile widens each 16 weights in ~5
// µops next to its FMAs, once per tile of at most 6 tokens; the GEMM converts each weight once per
// call.
bool VectorPortsAreShared() {
  static const bool intel = base::ReadCpuIdentity().vendor == "GenuineIntel";
  return intel;
}

}  // namespace

// Measured with kernels_benchmark's Decode rows (4096 x 2048, weights streamed; Zen 5, 2 threads)
// at 10-96 tokens under both limits. AVX-512: the decode tiles lead the FP32 GEMM for FP8 and
// 4-bit weights up to ~64 tokens (12 tokens 0.55-0.64 of the FP32 peak against the GEMM's ~0.3;
// 16-32 tokens 1.2-1.9x; 48-64 1.1-1.2x; 96 even), BF16 up to 32. AVX2 (16 registers, smaller
// tiles): the GEMM leads from 16 tokens (FP8, MXFP4 1.2x). kInt8Block runs its own kernel.
// On an Intel Xeon (Emerald Rapids VM, 2 threads; decode tiles vs GEMM, as kernels_benchmark's
// Regime rows time them on any machine): FP8 at 8 tokens 146-154 vs 96-112 GFLOP/s, at 16 166 vs
// 134, at 32 166-178 vs 206-254, at 64 167-176 vs 253-319, so FP8 takes the GEMM from 17 tokens:
// the K2 bench model's prefill of 512 tokens (~64 per routed expert) 188-194 -> 199-204 tokens/s
// and batch-32 decode (its dense products) 122-125 -> 129-130. 4-bit weights stay at 64: INT4 at 64
// tokens is 1.18x on the GEMM, but with the GEMM from 33 tokens the K2.5 bench model did not move
// (prefill 218-219 vs 213-218 tokens/s, batch 32 167-168 vs 169-170). Since 4-bit calls of
// several tiles widen their weights once there (DecodeWidening), the decode tiles lead the GEMM
// at 64 tokens too: MXFP4 276 vs 261, INT4 276 vs 258.
int64_t DecodeMaxTokens(Isa isa, WeightFormat format) {
  if (isa == Isa::kScalar) return 0;
  switch (format) {
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
    case WeightFormat::kF16:
      return 32;
    case WeightFormat::kFp8Block:
      if (isa == Isa::kAvx512 && VectorPortsAreShared()) return 16;
      [[fallthrough]];
    case WeightFormat::kMxfp4:
    case WeightFormat::kInt4:
      return isa == Isa::kAvx512 ? 64 : 12;
    default:
      return 12;
  }
}

namespace {

// Under GemmPrecision::kBf16 with a BF16 GEMM, from how many tokens a product of FP8 or 4-bit
// weights (BF16 too on AMX) takes it rather than the FP32 decode tiles (0: never below
// DecodeMaxTokens).
// AMX, from kernels_benchmark's Precision rows on a 2-thread Xeon VM with AMX (4096 x 2048
// streamed; AMX / FP32 tiles): BF16 1.15x / 1.70x / 2.39x at 8 / 16 / 32 tokens (1.13x over the
// vdpbf16ps decode kernel at 8), so from 8; FP8, dequantised to FP32 before it is packed, 0.48x
// at 8 and 1.33x at 32 (packing is most of the call, so its rate grows ~linearly with tokens:
// even near 21), so from 24; INT4 1.22x at 16, MXFP4 1.58x on a 16-token K3 expert: from 13.
// vdpbf16ps: where its packing is cheap enough, from kernels_benchmark's
// Precision rows (2 threads, Zen 5; vdpbf16ps GEMM / FP32 tiles, 4096 x 2048 streamed unless
// said): MXFP4, looked up straight into BF16, 0.89x at 16 tokens (1.11-1.17x on a K3 expert,
// 16 x 1024 x 768 in cache), 1.24x at 32, 1.69x at 64: from 13 as before; INT4, dequantised to
// FP32 first, 0.51x / 0.78-0.88x / 1.23x at 16 / 32 / 64; FP8 likewise 0.56x at 32, 0.80x at 64
// (1.25x at 128, the GEMM regime either way). FP8 from 13 tokens made K2's batch-32 step slower
// with the flag than without it.
int64_t Bf16GemmFromTokens(WeightFormat format) {
  if (MatMulHasAmx()) {
    if (format == WeightFormat::kBF16) return 8;
    if (format == WeightFormat::kFp8Block) return 24;
    return IsFourBit(format) ? 13 : 0;
  }
  switch (format) {
    case WeightFormat::kMxfp4:
      return 13;
    case WeightFormat::kInt4:
      return 49;
    default:
      return 0;
  }
}

}  // namespace

bool Bf16GemmTakes(Isa isa, int64_t tokens, const WeightMatrix& w) {
  if (isa != Isa::kAvx512 || GetGemmPrecision() != GemmPrecision::kBf16) return false;
  if (!MatMulHasAmx() && !CpuHasAvx512Bf16()) return false;
  const int64_t from = Bf16GemmFromTokens(w.format);
  return from > 0 && tokens >= from;
}

namespace {
std::atomic<DecodeWidening> decode_widening{DecodeWidening::kAuto};
}  // namespace

void SetDecodeWidening(DecodeWidening widening) { decode_widening.store(widening); }

bool DecodeWidensOnce(Isa isa) {
  switch (decode_widening.load(std::memory_order_relaxed)) {
    case DecodeWidening::kOnce:
      return true;
    case DecodeWidening::kPerTile:
      return false;
    case DecodeWidening::kAuto:
      break;
  }
  return isa == Isa::kAvx512 && VectorPortsAreShared();
}

bool AutoPicksDecode(Isa isa, int64_t tokens, const WeightMatrix& w) {
  return (tokens <= DecodeMaxTokens(isa, w.format) && !Bf16GemmTakes(isa, tokens, w)) ||
         UseDpbf16Decode(isa, tokens, w);
}

}  // namespace k3::kernels::detail

namespace k3::kernels {

std::string MatMulPaths() {
  return std::string("matmul ") + MatMulIsa() + ", int8 dots " + MatMulInt8DotName() + ", bf16 " +
         MatMulBf16Path() +
         (detail::DecodeWidensOnce(detail::BestIsa()) ? ", decode tiles widen once per call" : "");
}

}  // namespace k3::kernels
