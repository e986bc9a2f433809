// GemmPrecision: the process-wide setting, AMX detection (CPU, XCR0 and the Linux tile-data
// permission) and the driver of the AMX kernels in matmul_amx.cc.
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cstdint>

#include "base/aligned_buffer.h"
#include "base/check.h"
#include "kernels/matmul.h"
#include "kernels/matmul_detail.h"
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_split.h"

namespace k3::kernels {
namespace {

std::atomic<GemmPrecision> precision{GemmPrecision::kFp32};

// CPUID leaf 7: subleaf 0 EDX bit 22 AMX-BF16 and bit 24 AMX-TILE; subleaf 1 EAX bit 5
// AVX512-BF16 (the packing's vcvtne2ps2bf16).
bool CpuHasAmxBf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const unsigned max_subleaf = eax;
  if ((edx & (1u << 22)) == 0 || (edx & (1u << 24)) == 0 || max_subleaf < 1) return false;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  return (eax & (1u << 5)) != 0;
}

// Whether the OS enabled XTILECFG and XTILEDATA state (XCR0 bits 17 and 18); reads XCR0 only when
// CPUID leaf 1 reports OSXSAVE (ECX bit 27), which makes xgetbv legal.
bool OsEnabledTileState() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || (ecx & (1u << 27)) == 0) return false;
  uint32_t lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const uint64_t xcr0 = (uint64_t{hi} << 32) | lo;
  constexpr uint64_t kTileState = (uint64_t{1} << 17) | (uint64_t{1} << 18);
  return (xcr0 & kTileState) == kTileState;
}

// Linux (5.16+) gives a process tile data only on request; without it the first tile
// instruction raises SIGILL. The grant is process-wide and covers threads started before it.
bool RequestTileData() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  unsigned long permitted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &permitted) != 0) return false;
  return (permitted & (1ul << kXfeatureXtiledata)) != 0;
#else
  return false;
#endif
}

bool DetectAmx() {
  return detail::IsaSupported(detail::Isa::kAvx512) && CpuHasAmxBf16() && OsEnabledTileState() &&
         RequestTileData();
}

}  // namespace

void SetGemmPrecision(GemmPrecision p) { precision.store(p, std::memory_order_relaxed); }

GemmPrecision GetGemmPrecision() { return precision.load(std::memory_order_relaxed); }

bool MatMulHasAmx() {
  static const bool has_amx = DetectAmx();
  return has_amx;
}

namespace detail {

// Cost: one pass over x (to BF16), one conversion of W per call, and per panel one pass over the
// packed x per kGemmKc columns (from L2 or L3 when x is large), so the tile units see about
// 32 x 32 x 32 multiply-adds per 4 KiB of tile loads.
void MatMulAmx(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
               base::ThreadPool* pool) {
  K3_CHECK(MatMulHasAmx()) << "AMX-BF16 unavailable";
  K3_CHECK(tokens > 0 && w.rows > 0 && w.cols > 0 && x != nullptr && y != nullptr);
  const AmxKernels& k = AmxBf16Kernels();
  const int64_t padded_tokens = (tokens + 15) / 16 * 16;
  AmxGemmArgs args;
  args.ldx = (w.cols + 31) / 32 * 32 + 32;
  args.tokens = tokens;
  args.w = &w;
  args.y = y;
  args.dequantize_range = Avx512Kernels().dequantize_range;
  // [padded_tokens][ldx] BF16; AlignedBuffer needs a trivially copyable element, so uint16_t.
  base::AlignedBuffer<uint16_t> xb(static_cast<size_t>(padded_tokens * args.ldx), 0);
  args.xb = xb.data();
  SplitRange(padded_tokens, 16, TaskCount(pool, padded_tokens * args.ldx * 8), pool,
             [&](int64_t t0, int64_t t1) { k.pack_tokens(args, x, t0, t1); });
  const int64_t panels = (w.rows + k.panel_rows - 1) / k.panel_rows;
  const size_t scratch_floats = static_cast<size_t>(k.gemm_scratch(tokens));
  SplitRange(panels, 1, TaskCount(pool, tokens * w.rows * w.cols), pool,
             [&](int64_t p0, int64_t p1) {
               base::AlignedBuffer<float> scratch(scratch_floats, 0.0f);
               for (int64_t p = p0; p < p1; ++p) {
                 k.gemm_panel(args, p * k.panel_rows, scratch.data());
               }
             });
}

}  // namespace detail
}  // namespace k3::kernels
