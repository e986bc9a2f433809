// Which regime MatMulWithIsa's kAuto picks: where the decode tiles stop beating the GEMM; and
// which product paths this machine runs (MatMulPaths).
#include <cstdint>
#include <string>

#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"

namespace k3::kernels::detail {

// Measured with kernels_benchmark's Decode rows (4096 x 2048, weights streamed; Zen 5, 2 threads)
// at 10-96 tokens under both limits. AVX-512: the decode tiles lead the FP32 GEMM for FP8 and
// 4-bit weights up to ~64 tokens (12 tokens 0.55-0.64 of the FP32 peak against the GEMM's ~0.3;
// 16-32 tokens 1.2-1.9x; 48-64 1.1-1.2x; 96 even), BF16 up to 32. AVX2 (16 registers, smaller
// tiles): the GEMM leads from 16 tokens (FP8, MXFP4 1.2x). kInt8Block runs its own kernel.
int64_t DecodeMaxTokens(Isa isa, WeightFormat format) {
  if (isa == Isa::kScalar) return 0;
  switch (format) {
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
    case WeightFormat::kF16:
      return 32;
    case WeightFormat::kFp8Block:
    case WeightFormat::kMxfp4:
    case WeightFormat::kInt4:
      return isa == Isa::kAvx512 ? 64 : 12;
    default:
      return 12;
  }
}

namespace {

// Under GemmPrecision::kBf16 with a BF16 GEMM, from how many tokens a FP8 or 4-bit product takes
// it rather than the FP32 decode tiles (0: never below DecodeMaxTokens). AMX: from 13, as the flag
// was measured there. vdpbf16ps: where its packing is cheap enough, from kernels_benchmark's
// Precision rows (2 threads, Zen 5; vdpbf16ps GEMM / FP32 tiles, 4096 x 2048 streamed unless
// said): MXFP4, looked up straight into BF16, 0.89x at 16 tokens (1.11-1.17x on a K3 expert,
// 16 x 1024 x 768 in cache), 1.24x at 32, 1.69x at 64: from 13 as before; INT4, dequantised to
// FP32 first, 0.51x / 0.78-0.88x / 1.23x at 16 / 32 / 64; FP8 likewise 0.56x at 32, 0.80x at 64
// (1.25x at 128, the GEMM regime either way). FP8 from 13 tokens made K2's batch-32 step slower
// with the flag than without it.
int64_t Bf16GemmFromTokens(WeightFormat format) {
  if (MatMulHasAmx()) return format == WeightFormat::kFp8Block || IsFourBit(format) ? 13 : 0;
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

bool AutoPicksDecode(Isa isa, int64_t tokens, const WeightMatrix& w) {
  return (tokens <= DecodeMaxTokens(isa, w.format) && !Bf16GemmTakes(isa, tokens, w)) ||
         UseDpbf16Decode(isa, tokens, w);
}

}  // namespace k3::kernels::detail

namespace k3::kernels {

std::string MatMulPaths() {
  return std::string("matmul ") + MatMulIsa() + ", int8 dots " +
         (MatMulHasInt8Dot() ? "avx512-vnni" : "none") + ", bf16 " + MatMulBf16Path();
}

}  // namespace k3::kernels
