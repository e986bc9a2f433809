// Internal knobs of MatMul for tests and benchmarks: run a chosen SIMD level and kernel family
// instead of the ones MatMul picks. Not for model code.
#pragma once

#include <cstdint>
#include <vector>

#include "base/arena.h"
#include "base/thread_pool.h"
#include "kernels/matmul.h"

namespace k3::kernels::detail {

enum class Isa : uint8_t { kScalar, kAvx2, kAvx512 };

// "scalar", "avx2", "avx512".
const char* IsaName(Isa isa);
// Whether this CPU (and OS) can run `isa`'s kernels. kScalar always can.
bool IsaSupported(Isa isa);
// The fastest supported level; what MatMul uses.
Isa BestIsa();
// Every supported level, scalar first.
std::vector<Isa> SupportedIsas();

// kDecode streams each weight row once and applies it to all tokens (the memory-bound regime);
// kGemm packs weight panels and runs a register-blocked GEMM (the compute-bound regime). kAuto
// picks kDecode up to DecodeMaxTokens tokens. Both work for any shape; kScalar has one kernel and
// ignores the choice.
enum class Regime : uint8_t { kAuto, kDecode, kGemm };
// Where the decode kernels stop beating the GEMM: later for formats that are cheap to convert
// (the decode kernels convert each weight once per token tile, the GEMM once per call).
int64_t DecodeMaxTokens(Isa isa, WeightFormat format);
// Whether kAuto sends `tokens` tokens against w to the GEMM regime below DecodeMaxTokens, for the
// BF16 GEMM of GemmPrecision::kBf16 (matmul_regime.cc: MXFP4 from 13 tokens, INT4 from 49, FP8
// never on vdpbf16ps; FP8 and 4-bit from 13 on AMX).
bool Bf16GemmTakes(Isa isa, int64_t tokens, const WeightMatrix& w);
// Whether decode-regime calls of more tokens than one tile holds widen each row group's weights
// once into an L1 buffer and run every token tile from it, rather than widening them again in
// every tile: the 4-bit tiles (DecodeArgs::widen_once) and the BF16 panel tiles
// (PanelArgs::widen_once). kAuto: AVX-512 on Intel cores (VectorPortsAreShared), where the
// conversion shares the two vector ports with the FMAs (measured there: docs/model.md); elsewhere
// per tile: on Zen 5 (four vector pipes) the same buffer for FP8 tiles measured slower than
// widening per tile, and these forms are not measured there. Both forms give the same bits.
// Process-wide; tests and benchmarks force each form.
enum class DecodeWidening : uint8_t { kAuto, kOnce, kPerTile };
void SetDecodeWidening(DecodeWidening widening);
bool DecodeWidensOnce(Isa isa);
// kAuto's choice: the decode regime up to DecodeMaxTokens unless Bf16GemmTakes, and wherever
// UseDpbf16Decode.
bool AutoPicksDecode(Isa isa, int64_t tokens, const WeightMatrix& w);

// Whether MatMulWithIsa multiplies through integer dots (matmul_int8.h) in the resolved `regime`:
// kInt8Block wherever Int8KernelsFor(isa) has kernels (any AVX2 level), 4-bit formats in the
// decode regime under FourBitActivations::kInt8.
bool RunsInt8(Isa isa, Regime regime, const WeightMatrix& w);

// MatMul on a chosen level and regime. `isa` must be supported.
void MatMulWithIsa(Isa isa, Regime regime, const float* x, int64_t tokens, const WeightMatrix& w,
                   float* y, base::ThreadPool* pool = nullptr, base::Arena* scratch = nullptr);

// GemmPrecision::kBf16 on AMX tiles for any shape (the GEMM regime of MatMul under kBf16).
// Requires MatMulHasAmx().
void MatMulAmx(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
               base::ThreadPool* pool = nullptr);

// AVX512-BF16 (CPUID leaf 7 subleaf 1 EAX bit 5) with the AVX-512 level; checked once.
bool CpuHasAvx512Bf16();
// GemmPrecision::kBf16 on vdpbf16ps for any shape and weight format (the GEMM regime of MatMul
// under kBf16 without AMX). Requires CpuHasAvx512Bf16().
void MatMulAvx512Bf16(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
                      base::ThreadPool* pool, base::Arena& scratch);
// The vdpbf16ps decode kernel for kBF16 weights (any token count). Requires CpuHasAvx512Bf16().
void MatMulAvx512Bf16Decode(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
                            base::ThreadPool* pool, base::Arena& scratch);
// Under GemmPrecision::kBf16, products of kBF16 weights with kDpbf16DecodeMinTokens ..
// kDpbf16DecodeMaxTokens tokens run the vdpbf16ps decode kernel (kAuto picks the decode regime
// for them). Measured on 4096 x 2048 with streamed weights (2-core Zen 4): below 8 tokens the
// call is memory-bound and vdpbf16ps gains ~2% (not worth its error); at 8 / 16 / 32 tokens it
// does 1.2x / 1.4x / 1.5x the FP32 decode kernel, and up to ~128 tokens it beats the vdpbf16ps
// GEMM (which packs the weights first): 336 vs 303 GFLOP/s at 64, 342 vs 341 at 128.
inline constexpr int64_t kDpbf16DecodeMinTokens = 8;
inline constexpr int64_t kDpbf16DecodeMaxTokens = 64;
// Where AMX is present its tiles take these calls instead (Bf16GemmFromTokens, matmul_regime.cc).
// Whether MatMulWithIsa(isa, kDecode or kAuto, ...) takes MatMulAvx512Bf16Decode for this call.
bool UseDpbf16Decode(Isa isa, int64_t tokens, const WeightMatrix& w);

// W[row, :] computed element by element with the tensor/numeric.h conversions (MatMulReference).
void DequantizeByDefinition(const WeightMatrix& w, int64_t row, float* out);
// Writes W[row, c0..c1) as float32 with scalar code; equal to DequantizeByDefinition. For kMxfp4,
// c0 and c1 are multiples of 32 (or c1 == cols).
void DequantizeRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out);
// DequantizeRow with `isa`'s SIMD conversion (what the GEMM packing uses); equal to the scalar one.
void DequantizeRowWithIsa(Isa isa, const WeightMatrix& w, int64_t row, float* out);
// kBf16Panels: W[row, c0..c1) as float32 (matmul_panels.cc).
void DequantizeBf16PanelsRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1,
                               float* out);
// MatMul of kBf16Panels weights: AVX-512 tiles for kAvx512, else scalar std::fma chains (the
// same bits).
void MatMulBf16Panels(Isa isa, const float* x, int64_t tokens, const WeightMatrix& w, float* y,
                      base::ThreadPool* pool, base::Arena& scratch);

}  // namespace k3::kernels::detail
