#include "kernels/matmul.h"

#include <cpuid.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "base/arena.h"
#include "base/check.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_int8.h"
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_split.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace detail {
namespace {

int64_t ScaleCols(const WeightMatrix& w) { return (w.cols + w.block - 1) / w.block; }

// tensor::F16ToFloat without its ldexp calls (the scalar path converts every weight).
float F16ToFloatFast(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // exact
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// tensor::E4M3ToFloat for every byte.
const std::array<float, 256>& E4M3Table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t;
    for (int b = 0; b < 256; ++b) t[b] = tensor::E4M3ToFloat(static_cast<uint8_t>(b));
    return t;
  }();
  return table;
}

void CheckWeights(const WeightMatrix& w) {
  K3_CHECK(w.rows >= 0 && w.cols >= 0) << "bad weight shape " << w.rows << " x " << w.cols;
  if (w.rows == 0 || w.cols == 0) return;
  K3_CHECK(w.data != nullptr) << "weight data missing";
  if (IsFourBit(w.format)) {
    K3_CHECK(w.cols % 32 == 0) << "4-bit weights need cols % 32 == 0, got " << w.cols;
  }
  if (w.format == WeightFormat::kMxfp4) K3_CHECK(w.mx_scales != nullptr) << "MXFP4 scales missing";
  if (w.format == WeightFormat::kBf16Panels) {
    K3_CHECK(w.cols % 2 == 0) << "BF16 panels need an even column count, got " << w.cols;
  }
  if (w.format == WeightFormat::kInt8Block) {
    K3_CHECK(w.cols % 32 == 0) << "int8 block weights need cols % 32 == 0, got " << w.cols;
  }
  if (w.format == WeightFormat::kInt4 || w.format == WeightFormat::kInt8Block) {
    K3_CHECK(w.group_scales != nullptr) << "BF16 group scales missing";
  }
  if (w.format == WeightFormat::kFp8Block) {
    K3_CHECK(w.block > 0) << "FP8 block size " << w.block;
    K3_CHECK(w.block_scales != nullptr) << "FP8 block scales missing";
  }
}

// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
bool CpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

bool CpuHasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && CpuHasF16c();
}

bool CpuHasAvx512() {
  __builtin_cpu_init();
  return CpuHasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}

// AVX512-VBMI (CPUID leaf 7, ECX bit 1): vpermi2b, the byte-table FP8 decode.
bool CpuHasAvx512Vbmi() {
  __builtin_cpu_init();
  return CpuHasAvx512() && __builtin_cpu_supports("avx512vbmi");
}

// The portable path: dequantise one row at a time, then float dot products.
void MatMulScalar(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
                  base::ThreadPool* pool, base::Arena& scratch) {
  const int64_t cols = w.cols;
  float* rows_by_slot = scratch.Allocate<float>(SplitSlots(pool) * cols);  // [slots, cols]
  SplitRangeSlots(w.rows, 1, TaskCount(pool, tokens * w.rows * cols), pool,
                  [&](int64_t r0, int64_t r1, size_t slot) {
                    float* row = rows_by_slot + slot * cols;
                    for (int64_t r = r0; r < r1; ++r) {
                      DequantizeRange(w, r, 0, cols, row);
                      for (int64_t t = 0; t < tokens; ++t) {
                        const float* xt = x + t * cols;
                        float acc[4] = {0, 0, 0, 0};
                        int64_t c = 0;
                        for (; c + 4 <= cols; c += 4) {
                          for (int j = 0; j < 4; ++j) acc[j] += xt[c + j] * row[c + j];
                        }
                        for (; c < cols; ++c) acc[0] += xt[c] * row[c];
                        y[t * w.rows + r] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
                      }
                    }
                  });
}

// Whether every block scale times 256 is representable, so the kernels may fold the 256 of their
// E4M3 conversion into it.
bool Fp8ScalesFoldable(const WeightMatrix& w) {
  const int64_t n = (w.rows + w.block - 1) / w.block * ScaleCols(w);
  for (int64_t i = 0; i < n; ++i) {
    const float s = w.block_scales[i];
    if (std::isfinite(s) && std::fabs(s) >= 0x1p120f) return false;
  }
  return true;
}

void MatMulDecode(const IsaKernels& k, const float* x, int64_t tokens, const WeightMatrix& w,
                  float* y, base::ThreadPool* pool, base::Arena& scratch,
                  bool widen_four_bit_once = false) {
  DecodeArgs args;
  args.x = x;
  args.tokens = tokens;
  args.w = &w;
  args.y = y;
  if (IsFourBit(w.format) || w.format == WeightFormat::kBF16) {
    args.x = PermuteEvenOdd(x, tokens, w.cols, k.pair_group, scratch);
  }
  args.widen_once = IsFourBit(w.format) && widen_four_bit_once;
  bool row_groups = w.format == WeightFormat::kInt8Block;  // dequantised per row group
  if (w.format == WeightFormat::kFp8Block) {
    args.fp8_fast = w.block % k.lanes == 0 && Fp8ScalesFoldable(w);
    row_groups = !args.fp8_fast;
  }
  // Per slot: kDecodeRowGroup * cols floats, zeroed per task as the kernels have always received
  // them; or the fast FP8 path's scaled activations (tokens * cols, written before read).
  const int64_t slot_floats = row_groups      ? kDecodeRowGroup * w.cols
                              : args.fp8_fast ? tokens * w.cols
                                              : 0;
  float* slots =
      slot_floats > 0 ? scratch.Allocate<float>(SplitSlots(pool) * slot_floats) : nullptr;
  SplitRangeSlots(w.rows, kDecodeRowGroup, TaskCount(pool, tokens * w.rows * w.cols), pool,
                  [&](int64_t r0, int64_t r1, size_t slot) {
                    float* mine = slots != nullptr ? slots + slot * slot_floats : nullptr;
                    if (row_groups) std::fill(mine, mine + slot_floats, 0.0f);
                    k.decode_rows(args, r0, r1, mine);
                  });
}

void MatMulGemm(const IsaKernels& k, const float* x, int64_t tokens, const WeightMatrix& w,
                float* y, base::ThreadPool* pool, base::Arena& scratch) {
  const int64_t cols = w.cols;
  int64_t* tile_start = nullptr;
  const int64_t num_tiles = SplitTiles(tokens, k.max_tile_tokens, scratch, &tile_start);
  // Tile j as [cols][mr] at tile_start[j] * cols.
  float* packed = scratch.Allocate<float>(tokens * cols);
  SplitRange(num_tiles, 1, TaskCount(pool, tokens * cols * 16), pool, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t t0 = tile_start[j];
      k.pack_tokens(x + t0 * cols, cols, tile_start[j + 1] - t0, packed + t0 * cols);
    }
  });
  GemmArgs args;
  args.xpacked = packed;
  args.tile_start = tile_start;
  args.num_tiles = num_tiles;
  args.w = &w;
  args.y = y;
  args.fp8_folded = w.format == WeightFormat::kFp8Block && w.fp8_nan_free &&
                    w.block % k.lanes == 0 && Fp8ScalesFoldable(w);
  const int64_t panels = (w.rows + k.panel_rows - 1) / k.panel_rows;
  // [slots, gemm_scratch], zeroed per task as the kernels have always received it.
  float* panel_scratch = scratch.Allocate<float>(SplitSlots(pool) * k.gemm_scratch);
  SplitRangeSlots(panels, 1, TaskCount(pool, tokens * w.rows * cols), pool,
                  [&](int64_t p0, int64_t p1, size_t slot) {
                    float* mine = panel_scratch + slot * k.gemm_scratch;
                    std::fill(mine, mine + k.gemm_scratch, 0.0f);
                    for (int64_t p = p0; p < p1; ++p) k.gemm_panel(args, p * k.panel_rows, mine);
                  });
}

}  // namespace

const IsaKernels& Kernels(Isa isa) {
  K3_CHECK(isa != Isa::kScalar && IsaSupported(isa)) << "ISA " << IsaName(isa) << " unavailable";
  if (isa == Isa::kAvx512) return HasAvx512VbmiKernels() ? Avx512VbmiKernels() : Avx512Kernels();
  return Avx2Kernels();
}

bool HasAvx512VbmiKernels() {
  static const bool vbmi = CpuHasAvx512Vbmi();
  return vbmi;
}

void MatMulDecodeWithKernels(const IsaKernels& k, const float* x, int64_t tokens,
                             const WeightMatrix& w, float* y, base::ThreadPool* pool) {
  CheckWeights(w);
  base::Arena arena;
  MatMulDecode(k, x, tokens, w, y, pool, arena);
}

// Within each whole group of `group` columns: the even columns, then the odd ones. A trailing
// partial group is copied as it is.
float* PermuteEvenOdd(const float* x, int64_t tokens, int64_t cols, int group,
                      base::Arena& scratch) {
  float* out = scratch.Allocate<float>(tokens * cols);
  const int half = group / 2;
  const int64_t whole = cols / group * group;
  for (int64_t t = 0; t < tokens; ++t) {
    const float* src = x + t * cols;
    float* dst = out + t * cols;
    for (int64_t g = 0; g < whole; g += group) {
      for (int j = 0; j < half; ++j) {
        dst[g + j] = src[g + 2 * j];
        dst[g + half + j] = src[g + 2 * j + 1];
      }
    }
    std::copy(src + whole, src + cols, dst + whole);
  }
  return out;
}

// W[row, :] with the tensor/numeric.h conversions and nothing else: what MatMulReference means.
void DequantizeByDefinition(const WeightMatrix& w, int64_t row, float* out) {
  const int64_t cols = w.cols;
  for (int64_t c = 0; c < cols; ++c) {
    switch (w.format) {
      case WeightFormat::kF32:
        out[c] = static_cast<const float*>(w.data)[row * cols + c];
        break;
      case WeightFormat::kBF16:
        out[c] = tensor::Bf16ToFloat(static_cast<const uint16_t*>(w.data)[row * cols + c]);
        break;
      case WeightFormat::kF16:
        out[c] = tensor::F16ToFloat(static_cast<const uint16_t*>(w.data)[row * cols + c]);
        break;
      case WeightFormat::kMxfp4: {
        const uint8_t byte = static_cast<const uint8_t*>(w.data)[row * (cols / 2) + c / 2];
        out[c] = tensor::E2M1ToFloat(c % 2 == 0 ? byte & 0xF : byte >> 4) *
                 tensor::E8M0ToFloat(w.mx_scales[row * (cols / 32) + c / 32]);
        break;
      }
      case WeightFormat::kInt4: {
        const uint8_t byte = static_cast<const uint8_t*>(w.data)[row * (cols / 2) + c / 2];
        out[c] = tensor::Int4ToFloat(c % 2 == 0 ? byte & 0xF : byte >> 4) *
                 tensor::Bf16ToFloat(w.group_scales[row * (cols / 32) + c / 32]);
        break;
      }
      case WeightFormat::kBf16Panels:
        out[c] = tensor::Bf16ToFloat(
            static_cast<const uint16_t*>(w.data)[Bf16PanelsOffset(row, c, w.rows, cols)]);
        break;
      case WeightFormat::kInt8Block: {
        const uint8_t byte =
            static_cast<const uint8_t*>(w.data)[row * cols + Int8BlockOffset(c, cols)];
        out[c] = static_cast<float>(int{byte} - 128) *
                 tensor::Bf16ToFloat(w.group_scales[row * (cols / 32) + c / 32]);
        break;
      }
      case WeightFormat::kFp8Block:
        out[c] = tensor::E4M3ToFloat(static_cast<const uint8_t*>(w.data)[row * cols + c]) *
                 w.block_scales[row / w.block * ScaleCols(w) + c / w.block];
        break;
    }
  }
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    default:
      return "scalar";
  }
}

bool IsaSupported(Isa isa) {
  static const bool avx2 = CpuHasAvx2();
  static const bool avx512 = CpuHasAvx512();
  switch (isa) {
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx2:
      return avx2;
    default:
      return true;
  }
}

Isa BestIsa() {
  if (IsaSupported(Isa::kAvx512)) return Isa::kAvx512;
  if (IsaSupported(Isa::kAvx2)) return Isa::kAvx2;
  return Isa::kScalar;
}

std::vector<Isa> SupportedIsas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (IsaSupported(isa)) isas.push_back(isa);
  }
  return isas;
}

// kInt8Block runs W8A8 in every regime (its weights need no decoding, so the token-tiled kernel
// also serves as the GEMM).
bool RunsInt8(Isa isa, Regime regime, const WeightMatrix& w) {
  if (Int8KernelsFor(isa) == nullptr) return false;
  if (w.format == WeightFormat::kInt8Block) return true;
  return regime == Regime::kDecode && IsFourBit(w.format) &&
         GetFourBitActivations() == FourBitActivations::kInt8;
}

void MatMulWithIsa(Isa isa, Regime regime, const float* x, int64_t tokens, const WeightMatrix& w,
                   float* y, base::ThreadPool* pool, base::Arena* scratch) {
  CheckWeights(w);
  K3_CHECK(tokens >= 0) << "tokens " << tokens;
  if (tokens == 0 || w.rows == 0) return;
  if (w.cols == 0) {
    std::fill(y, y + tokens * w.rows, 0.0f);
    return;
  }
  K3_CHECK(x != nullptr && y != nullptr);
  // Per-call buffers come from the caller's arena (given back on return), else from a local one.
  base::Arena local;
  base::Arena& arena = scratch != nullptr ? *scratch : local;
  base::ArenaMark mark(arena);
  if (w.format == WeightFormat::kBf16Panels) {
    return MatMulBf16Panels(isa, x, tokens, w, y, pool, arena);
  }
  if (isa == Isa::kScalar) return MatMulScalar(x, tokens, w, y, pool, arena);
  const IsaKernels& k = Kernels(isa);
  if (regime == Regime::kAuto) {
    regime = AutoPicksDecode(isa, tokens, w) ? Regime::kDecode : Regime::kGemm;
  }
  if (RunsInt8(isa, regime, w)) {
    return MatMulInt8Decode(*Int8KernelsFor(isa), x, tokens, w, y, pool, arena);
  }
  if (regime == Regime::kDecode) {
    if (UseDpbf16Decode(isa, tokens, w))
      return MatMulAvx512Bf16Decode(x, tokens, w, y, pool, arena);
    return MatMulDecode(k, x, tokens, w, y, pool, arena, DecodeWidensOnce(isa));
  }
  // GemmPrecision::kBf16: AMX tiles where present, else vdpbf16ps; without either, the FP32
  // kernels (exact to FP32; MatMulBf16Path() says "none" and the flag's owner warns).
  if (isa == Isa::kAvx512 && GetGemmPrecision() == GemmPrecision::kBf16) {
    if (MatMulHasAmx()) return MatMulAmx(x, tokens, w, y, pool);
    if (CpuHasAvx512Bf16()) return MatMulAvx512Bf16(x, tokens, w, y, pool, arena);
  }
  MatMulGemm(k, x, tokens, w, y, pool, arena);
}

namespace {

// kInt8Block by whole 32-column blocks (each block's 16 even and 16 odd bytes are contiguous:
// Int8BlockOffset), per column at unaligned ends.
void DequantizeInt8BlockRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1,
                              float* out) {
  const int64_t cols = w.cols;
  const uint8_t* p = static_cast<const uint8_t*>(w.data) + row * cols;
  const uint16_t* scales = w.group_scales + row * (cols / 32);
  int64_t c = c0;
  auto one = [&](int64_t col) {
    out[col - c0] = static_cast<float>(int{p[Int8BlockOffset(col, cols)]} - 128) *
                    tensor::Bf16ToFloat(scales[col / 32]);
  };
  for (; c < c1 && c % 32 != 0; ++c) one(c);
  for (; c + 32 <= c1; c += 32) {
    const uint8_t* even = p + Int8BlockOffset(c, cols);
    const uint8_t* odd = p + Int8BlockOffset(c + 1, cols);
    const float scale = tensor::Bf16ToFloat(scales[c / 32]);
    for (int i = 0; i < 16; ++i) {
      out[c - c0 + 2 * i] = static_cast<float>(int{even[i]} - 128) * scale;
      out[c - c0 + 2 * i + 1] = static_cast<float>(int{odd[i]} - 128) * scale;
    }
  }
  for (; c < c1; ++c) one(c);
}

}  // namespace

void DequantizeRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out) {
  const int64_t cols = w.cols;
  switch (w.format) {
    case WeightFormat::kF32: {
      const float* p = static_cast<const float*>(w.data) + row * cols;
      std::copy(p + c0, p + c1, out);
      return;
    }
    case WeightFormat::kBF16: {
      const uint16_t* p = static_cast<const uint16_t*>(w.data) + row * cols;
      for (int64_t c = c0; c < c1; ++c) out[c - c0] = tensor::Bf16ToFloat(p[c]);
      return;
    }
    case WeightFormat::kF16: {
      const uint16_t* p = static_cast<const uint16_t*>(w.data) + row * cols;
      for (int64_t c = c0; c < c1; ++c) out[c - c0] = F16ToFloatFast(p[c]);
      return;
    }
    case WeightFormat::kMxfp4: {
      const uint8_t* p = static_cast<const uint8_t*>(w.data) + row * (cols / 2);
      const uint8_t* scales = w.mx_scales + row * (cols / 32);
      for (int64_t c = c0; c < c1; ++c) {
        const uint8_t byte = p[c / 2];
        const uint8_t nibble = c % 2 == 0 ? byte & 0xF : byte >> 4;
        out[c - c0] = tensor::E2M1ToFloat(nibble) * kE8M0.value[scales[c / 32]];
      }
      return;
    }
    case WeightFormat::kInt4: {
      const uint8_t* p = static_cast<const uint8_t*>(w.data) + row * (cols / 2);
      const uint16_t* scales = w.group_scales + row * (cols / 32);
      for (int64_t c = c0; c < c1; ++c) {
        const uint8_t byte = p[c / 2];
        const uint8_t nibble = c % 2 == 0 ? byte & 0xF : byte >> 4;
        out[c - c0] = tensor::Int4ToFloat(nibble) * tensor::Bf16ToFloat(scales[c / 32]);
      }
      return;
    }
    case WeightFormat::kInt8Block:
      return DequantizeInt8BlockRange(w, row, c0, c1, out);
    case WeightFormat::kBf16Panels:
      return DequantizeBf16PanelsRange(w, row, c0, c1, out);
    case WeightFormat::kFp8Block: {
      const uint8_t* p = static_cast<const uint8_t*>(w.data) + row * cols;
      const float* scales = w.block_scales + row / w.block * ScaleCols(w);
      const std::array<float, 256>& e4m3 = E4M3Table();
      for (int64_t c = c0; c < c1; ++c) out[c - c0] = e4m3[p[c]] * scales[c / w.block];
      return;
    }
  }
}

void DequantizeRowWithIsa(Isa isa, const WeightMatrix& w, int64_t row, float* out) {
  CheckWeights(w);
  K3_CHECK(row >= 0 && row < w.rows) << "row " << row << " of " << w.rows;
  if (isa == Isa::kScalar || w.format == WeightFormat::kBf16Panels) {
    return DequantizeRange(w, row, 0, w.cols, out);
  }
  Kernels(isa).dequantize_range(w, row, 0, w.cols, out);
}

}  // namespace detail

void MatMul(const float* x, int64_t tokens, const WeightMatrix& w, float* y, base::ThreadPool* pool,
            base::Arena* scratch) {
  detail::MatMulWithIsa(detail::BestIsa(), detail::Regime::kAuto, x, tokens, w, y, pool, scratch);
}

bool MatMulRunsInt8(int64_t tokens, const WeightMatrix& w) {
  const detail::Isa isa = detail::BestIsa();
  if (isa == detail::Isa::kScalar || w.format == WeightFormat::kBf16Panels) return false;
  const bool decode = detail::AutoPicksDecode(isa, tokens, w);
  return detail::RunsInt8(isa, decode ? detail::Regime::kDecode : detail::Regime::kGemm, w);
}

void MatMulReference(const float* x, int64_t tokens, const WeightMatrix& w, float* y) {
  detail::CheckWeights(w);
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    detail::DequantizeByDefinition(w, r, row.data());
    for (int64_t t = 0; t < tokens; ++t) {
      double acc = 0.0;
      for (int64_t c = 0; c < w.cols; ++c) {
        acc += static_cast<double>(x[t * w.cols + c]) * static_cast<double>(row[c]);
      }
      y[t * w.rows + r] = static_cast<float>(acc);
    }
  }
}

void DequantizeRow(const WeightMatrix& w, int64_t row, float* out) {
  detail::DequantizeRowWithIsa(detail::Isa::kScalar, w, row, out);
}

const char* MatMulIsa() {
  const detail::Isa isa = detail::BestIsa();
  if (isa == detail::Isa::kAvx512 && detail::HasAvx512VbmiKernels()) return "avx512 (+vbmi fp8)";
  return detail::IsaName(isa);
}

}  // namespace k3::kernels
