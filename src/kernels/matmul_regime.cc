// Which regime MatMulWithIsa's kAuto picks: where the decode tiles stop beating the GEMM.
#include <cstdint>

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

// Under GemmPrecision::kBf16 with a BF16 GEMM (AMX or vdpbf16ps), FP8 and 4-bit products of more
// than 12 tokens keep taking it, as the flag was measured and documented with, rather than the FP32
// decode tiles the limit above now gives them.
bool Bf16GemmTakes(Isa isa, int64_t tokens, const WeightMatrix& w) {
  const bool raised = w.format == WeightFormat::kFp8Block || IsFourBit(w.format);
  return raised && tokens > 12 && isa == Isa::kAvx512 &&
         GetGemmPrecision() == GemmPrecision::kBf16 && (MatMulHasAmx() || CpuHasAvx512Bf16());
}

bool AutoPicksDecode(Isa isa, int64_t tokens, const WeightMatrix& w) {
  return (tokens <= DecodeMaxTokens(isa, w.format) && !Bf16GemmTakes(isa, tokens, w)) ||
         UseDpbf16Decode(isa, tokens, w);
}

}  // namespace k3::kernels::detail
