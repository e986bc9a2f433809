// Baseline half of the integer-activation path (matmul_int8.h): the process-wide setting,
// activation quantisation, the double-precision definition and the threaded driver.
#include "kernels/matmul_int8.h"

#include <cpuid.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "base/check.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_split.h"
#include "tensor/numeric.h"

namespace k3::kernels {
namespace {

std::atomic<FourBitActivations> g_four_bit_activations{FourBitActivations::kFp32};

// BF16 of v rounded up in magnitude (v > 0 finite): the scale never shrinks below amax / 127.
uint16_t Bf16RoundUp(float v) {
  uint16_t bits = tensor::FloatToBf16(v);
  if (tensor::Bf16ToFloat(bits) < v) ++bits;
  return bits;
}

}  // namespace

void SetFourBitActivations(FourBitActivations activations) {
  g_four_bit_activations.store(activations, std::memory_order_relaxed);
}
FourBitActivations GetFourBitActivations() {
  return g_four_bit_activations.load(std::memory_order_relaxed);
}
bool MatMulHasInt8Dot() { return detail::Int8KernelsFor(detail::BestIsa()) != nullptr; }
const char* MatMulInt8DotName() {
  const detail::Int8Kernels* k = detail::Int8KernelsFor(detail::BestIsa());
  return k != nullptr ? k->name : "none";
}

int64_t Int8BlockOffset(int64_t c, int64_t cols) {
  const int64_t chunk = c / 128, slot = (c % 128) / 32;
  const int64_t blocks = std::min<int64_t>(4, cols / 32 - chunk * 4);
  return chunk * 128 + (c % 2) * 16 * blocks + slot * 16 + (c % 32) / 2;
}

WeightMatrix QuantizeInt8Block(const WeightMatrix& w, uint8_t* data, uint16_t* scales,
                               base::ThreadPool* pool) {
  K3_CHECK(w.cols % 32 == 0) << "int8 block weights need cols % 32 == 0, got " << w.cols;
  const int64_t cols = w.cols;
  detail::SplitRange(w.rows, 1, detail::TaskCount(pool, w.rows * cols * 8), pool,
                     [&](int64_t r0, int64_t r1) {
                       std::vector<float> row(static_cast<size_t>(cols));
                       for (int64_t r = r0; r < r1; ++r) {
                         DequantizeRow(w, r, row.data());
                         for (int64_t b = 0; b < cols / 32; ++b) {
                           float amax = 0.0f;
                           for (int c = 0; c < 32; ++c) {
                             amax = std::max(amax, std::fabs(row[b * 32 + c]));
                           }
                           const uint16_t bits = amax > 0 ? Bf16RoundUp(amax / 127.0f) : 0;
                           scales[r * (cols / 32) + b] = bits;
                           const float scale = tensor::Bf16ToFloat(bits);
                           for (int64_t c = b * 32; c < b * 32 + 32; ++c) {
                             const float q = scale > 0 ? std::nearbyint(row[c] / scale) : 0.0f;
                             data[r * cols + Int8BlockOffset(c, cols)] =
                                 static_cast<uint8_t>(std::clamp(q, -127.0f, 127.0f) + 128.0f);
                           }
                         }
                       }
                     });
  WeightMatrix out;
  out.format = WeightFormat::kInt8Block;
  out.rows = w.rows;
  out.cols = cols;
  out.data = data;
  out.group_scales = scales;
  return out;
}

namespace detail {
namespace {

// The stored-byte offset of the weights' integer values (matmul_int8.h).
int32_t WeightOffset(WeightFormat format) {
  switch (format) {
    case WeightFormat::kInt4:
      return 8;
    case WeightFormat::kInt8Block:
      return 128;
    default:
      return 12;
  }
}

// Weight integer k of W[row, c] and the block's weight scale s_w (matmul_int8.h).
int32_t WeightInteger(const WeightMatrix& w, int64_t row, int64_t c) {
  const auto* bytes = static_cast<const uint8_t*>(w.data);
  if (w.format == WeightFormat::kInt8Block) {
    return int32_t{bytes[row * w.cols + Int8BlockOffset(c, w.cols)]} - 128;
  }
  const uint8_t byte = bytes[row * (w.cols / 2) + c / 2];
  const uint8_t nibble = c % 2 == 0 ? byte & 0xF : byte >> 4;
  if (w.format == WeightFormat::kInt4) return nibble - 8;
  return static_cast<int32_t>(2.0f * tensor::E2M1ToFloat(nibble));
}
double WeightScale(const WeightMatrix& w, int64_t row, int64_t block) {
  const int64_t i = row * (w.cols / 32) + block;
  if (w.format == WeightFormat::kMxfp4) {
    return 0.5 * static_cast<double>(tensor::E8M0ToFloat(w.mx_scales[i]));
  }
  return tensor::Bf16ToFloat(w.group_scales[i]);
}

// One 32-column block of one token: its scale d, and q in column order.
void QuantizeBlock(const float* x, int8_t* q, float* d) {
  float amax = 0.0f;
  bool finite = true;
  for (int c = 0; c < 32; ++c) {
    finite = finite && std::isfinite(x[c]);
    amax = std::max(amax, std::fabs(x[c]));
  }
  if (!finite || amax == 0.0f) {
    *d = finite ? 0.0f : std::numeric_limits<float>::quiet_NaN();
    std::fill(q, q + 32, int8_t{0});
    return;
  }
  *d = amax / 127.0f;
  const float lift = BlockLift(amax);
  const float inverse = 127.0f / (amax * lift);
  for (int c = 0; c < 32; ++c) {
    q[c] = static_cast<int8_t>(std::clamp(std::nearbyint(x[c] * lift * inverse), -127.0f, 127.0f));
  }
}

// Block q (column order) into its slot of a chunk entry (Int8Activations' layout): even columns
// at slot * 16, odd at 64 + slot * 16, biased by 128 or as int8.
void StoreBlock(const int8_t* q, int64_t slot, bool biased, uint8_t* entry) {
  const int bias = biased ? 128 : 0;
  for (int j = 0; j < 16; ++j) {
    entry[slot * 16 + j] = static_cast<uint8_t>(q[2 * j] + bias);
    entry[64 + slot * 16 + j] = static_cast<uint8_t>(q[2 * j + 1] + bias);
  }
}

}  // namespace

bool CpuHasAvx512Vnni() {
  static const bool has = [] {
    __builtin_cpu_init();
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    // CPUID leaf 7 ECX bit 11: AVX512_VNNI (clang 14's __builtin_cpu_supports lacks the name).
    const bool vnni = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 11)) != 0;
    return vnni && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma");
  }();
  return has;
}

bool CpuHasAvxVnni() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    // CPUID leaf 7 subleaf 1 EAX bit 4: AVX-VNNI (the VEX forms of vpdpbusd).
    const bool vnni = __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4)) != 0;
    return vnni && IsaSupported(Isa::kAvx2);
  }();
  return has;
}

const Int8Kernels* Int8KernelsFor(Isa isa) {
  if (isa == Isa::kScalar || !IsaSupported(isa)) return nullptr;
  if (isa == Isa::kAvx512 && CpuHasAvx512Vnni()) return &VnniKernels();
  if (CpuHasAvxVnni()) return &AvxVnniKernels();
  return &Avx2Int8Kernels();
}

namespace {

// Every kernel set this CPU runs, best first.
struct KernelSets {
  const Int8Kernels* sets[3];
  int count = 0;
};
const KernelSets& AvailableKernelSets() {
  static const KernelSets sets = [] {
    KernelSets s;
    if (IsaSupported(Isa::kAvx512) && CpuHasAvx512Vnni()) s.sets[s.count++] = &VnniKernels();
    if (CpuHasAvxVnni()) s.sets[s.count++] = &AvxVnniKernels();
    if (IsaSupported(Isa::kAvx2)) s.sets[s.count++] = &Avx2Int8Kernels();
    return s;
  }();
  return sets;
}

}  // namespace

int Int8KernelSetCount() { return AvailableKernelSets().count; }
const Int8Kernels& Int8KernelSet(int i) {
  K3_CHECK(i >= 0 && i < Int8KernelSetCount()) << "int8 kernel set " << i;
  return *AvailableKernelSets().sets[i];
}

namespace {

// Int8Activations with its arrays allocated and filled (q = 0 everywhere, scales 0) before the
// rows are quantised, and the same arrays writable.
struct NewActivations {
  Int8Activations a;
  uint8_t* q;
  float* scale;
  int32_t* correction;  // nullptr in the biased form
};

NewActivations EmptyActivations(int64_t tokens, int64_t cols, bool allow_biased,
                                base::Arena& arena) {
  K3_CHECK(cols % 32 == 0) << "int8 activations need cols % 32 == 0, got " << cols;
  NewActivations n;
  Int8Activations& a = n.a;
  a.tokens = tokens;
  a.chunks = (cols / 32 + kInt8ChunkBlocks - 1) / kInt8ChunkBlocks;
  a.biased = allow_biased && tokens >= kBiasedFromTokens;
  const int64_t entries = tokens * a.chunks;
  n.q = arena.Allocate<uint8_t>(entries * 128);
  n.scale = arena.Allocate<float>(entries * 16);
  n.correction = a.biased ? nullptr : arena.Allocate<int32_t>(entries * 16);
  std::fill(n.q, n.q + entries * 128, a.biased ? uint8_t{128} : uint8_t{0});
  std::fill(n.scale, n.scale + entries * 16, 0.0f);
  if (n.correction != nullptr) std::fill(n.correction, n.correction + entries * 16, 0);
  a.q = n.q;
  a.scale = n.scale;
  a.correction = n.correction;
  return n;
}

// The signed form's correction: lane 4j + m of each entry = -offset * (sum of the q of columns
// 32j + 8m .. 32j + 8m + 7), read back from the stored bytes.
void FillCorrection(const NewActivations& n, int64_t cols, WeightFormat format) {
  if (n.correction == nullptr) return;
  const Int8Activations& a = n.a;
  const int32_t offset = WeightOffset(format);
  for (int64_t t = 0; t < a.tokens; ++t) {
    for (int64_t b = 0; b < cols / 32; ++b) {
      const int64_t entry = (b / kInt8ChunkBlocks) * a.tokens + t, slot = b % kInt8ChunkBlocks;
      for (int m = 0; m < 4; ++m) {
        int32_t sum = 0;
        for (int64_t c = b * 32 + 8 * m; c < b * 32 + 8 * m + 8; ++c) sum += a.Value(t, c);
        n.correction[entry * 16 + slot * 4 + m] = -offset * sum;
      }
    }
  }
}

}  // namespace

Int8Activations QuantizeActivationsInt8Portable(const float* x, int64_t tokens, int64_t cols,
                                                WeightFormat format, base::Arena& arena,
                                                bool allow_biased) {
  const NewActivations n = EmptyActivations(tokens, cols, allow_biased, arena);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t b = 0; b < cols / 32; ++b) {
      const int64_t entry = (b / kInt8ChunkBlocks) * tokens + t, slot = b % kInt8ChunkBlocks;
      int8_t block[32];
      float d = 0.0f;
      QuantizeBlock(x + t * cols + b * 32, block, &d);
      StoreBlock(block, slot, n.a.biased, n.q + entry * 128);
      std::fill(n.scale + entry * 16 + slot * 4, n.scale + entry * 16 + slot * 4 + 4, d);
    }
  }
  FillCorrection(n, cols, format);
  return n.a;
}

Int8Activations QuantizeActivationsInt8(const float* x, int64_t tokens, int64_t cols,
                                        WeightFormat format, base::Arena& arena,
                                        const Int8Kernels* kernels) {
  if (kernels == nullptr) kernels = Int8KernelsFor(BestIsa());
  const bool biased = kernels != nullptr && kernels->takes_biased;
  if (kernels == nullptr || kernels->quantize_row == nullptr) {
    return QuantizeActivationsInt8Portable(x, tokens, cols, format, arena, biased);
  }
  const NewActivations n = EmptyActivations(tokens, cols, biased, arena);
  const Int8Kernels& k = *kernels;
  for (int64_t t = 0; t < tokens; ++t) {
    k.quantize_row(x + t * cols, cols, t, tokens, WeightOffset(format), n.q, n.scale, n.correction);
  }
  return n.a;
}

void MatMulInt8Definition(const float* x, int64_t tokens, const WeightMatrix& w, float* y) {
  K3_CHECK(IsFourBit(w.format) || w.format == WeightFormat::kInt8Block)
      << "int8 activations apply to 4-bit and int8 weights";
  base::Arena arena;
  const Int8Activations a = QuantizeActivationsInt8(x, tokens, w.cols, w.format, arena);
  for (int64_t r = 0; r < w.rows; ++r) {
    for (int64_t t = 0; t < tokens; ++t) {
      double acc = 0.0;
      for (int64_t b = 0; b < w.cols / 32; ++b) {
        int64_t dot = 0;
        for (int64_t c = b * 32; c < b * 32 + 32; ++c) {
          dot += int64_t{WeightInteger(w, r, c)} * a.Value(t, c);
        }
        acc += WeightScale(w, r, b) * a.Scale(t, b) * static_cast<double>(dot);
      }
      y[t * w.rows + r] = static_cast<float>(acc);
    }
  }
}

void MatMulInt8Decode(const Int8Kernels& k, const float* x, int64_t tokens, const WeightMatrix& w,
                      float* y, base::ThreadPool* pool, base::Arena& scratch) {
  K3_CHECK(IsFourBit(w.format) || w.format == WeightFormat::kInt8Block);
  Int8DecodeArgs args;
  args.x = QuantizeActivationsInt8(x, tokens, w.cols, w.format, scratch, &k);
  args.w = &w;
  args.y = y;
  SplitRange(w.rows, kDecodeRowGroup, TaskCount(pool, tokens * w.rows * w.cols), pool,
             [&](int64_t r0, int64_t r1) { k.decode_rows(args, r0, r1); });
}

}  // namespace detail
}  // namespace k3::kernels
