// GemmPrecision: the process-wide setting, AMX detection (CPU, XCR0 and the Linux tile-data
// permission), AVX512-BF16 detection, and the drivers of the AMX kernels (matmul_amx.cc) and the
// vdpbf16ps kernels (matmul_avx512_bf16.cc).
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cstdint>

#include "base/aligned_buffer.h"
#include "base/arena.h"
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

const char* MatMulBf16Path() {
  if (MatMulHasAmx()) return "amx";
  if (detail::CpuHasAvx512Bf16()) return "avx512-bf16";
  return "none";
}

namespace detail {

// CPUID leaf 7 subleaf 1 EAX bit 5: AVX512_BF16 (vcvtne2ps2bf16, vdpbf16ps), on top of the
// AVX-512 F/BW/VL level the kernels share (which includes the OS's AVX-512 state).
bool CpuHasAvx512Bf16() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!IsaSupported(Isa::kAvx512) || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
      return false;
    }
    if (eax < 1 || !__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
    return (eax & (1u << 5)) != 0;
  }();
  return has;
}

bool UseDpbf16Decode(Isa isa, int64_t tokens, const WeightMatrix& w) {
  return isa == Isa::kAvx512 && w.format == WeightFormat::kBF16 &&
         GetGemmPrecision() == GemmPrecision::kBf16 && tokens >= kDpbf16DecodeMinTokens &&
         tokens <= kDpbf16DecodeMaxTokens && CpuHasAvx512Bf16() && !MatMulHasAmx();
}

// Cost: one pass over x (to BF16 pairs, token tiles of 14), one conversion of W per call (per
// panel and kGemmKc columns, into 16 KiB that stays in L1), and per panel one pass over the
// packed x per kGemmKc columns (from L2 or L3 when x is large).
void MatMulAvx512Bf16(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
                      base::ThreadPool* pool, base::Arena& scratch) {
  K3_CHECK(CpuHasAvx512Bf16()) << "AVX512-BF16 unavailable";
  K3_CHECK(tokens > 0 && w.rows > 0 && w.cols > 0 && x != nullptr && y != nullptr);
  const Dpbf16Kernels& k = Avx512Bf16Kernels();
  Dpbf16GemmArgs args;
  int64_t* tile_start = nullptr;
  args.num_tiles = SplitTiles(tokens, k.max_tile_tokens, scratch, &tile_start);
  args.tile_start = tile_start;
  args.pairs = (w.cols + 31) / 32 * 16;
  args.w = &w;
  args.y = y;
  args.dequantize_range = Avx512Kernels().dequantize_range;
  uint32_t* packed = scratch.Allocate<uint32_t>(static_cast<size_t>(tokens * args.pairs));
  args.xpacked = packed;
  SplitRange(
      args.num_tiles, 1, TaskCount(pool, tokens * w.cols * 16), pool, [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
          const int64_t t0 = tile_start[j];
          k.pack_tokens(x + t0 * w.cols, w.cols, tile_start[j + 1] - t0, packed + t0 * args.pairs);
        }
      });
  const int64_t panels = (w.rows + k.panel_rows - 1) / k.panel_rows;
  // [slots, gemm_scratch]; gemm_scratch is a multiple of 16 floats, so every slot is aligned.
  float* panel_scratch = scratch.Allocate<float>(SplitSlots(pool) * k.gemm_scratch);
  SplitRangeSlots(panels, 1, TaskCount(pool, tokens * w.rows * w.cols), pool,
                  [&](int64_t p0, int64_t p1, size_t slot) {
                    float* mine = panel_scratch + slot * k.gemm_scratch;
                    for (int64_t p = p0; p < p1; ++p) k.gemm_panel(args, p * k.panel_rows, mine);
                  });
}

// Cost: x to BF16 once (tokens x cols, on the calling thread), then each weight row streamed
// once and applied to every token tile from cache, as the FP32 decode kernels do.
void MatMulAvx512Bf16Decode(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
                            base::ThreadPool* pool, base::Arena& scratch) {
  K3_CHECK(CpuHasAvx512Bf16()) << "AVX512-BF16 unavailable";
  K3_CHECK(w.format == WeightFormat::kBF16) << "the vdpbf16ps decode kernel reads BF16 weights";
  K3_CHECK(tokens > 0 && w.rows > 0 && w.cols > 0 && x != nullptr && y != nullptr);
  const Dpbf16Kernels& k = Avx512Bf16Kernels();
  Dpbf16DecodeArgs args;
  args.tokens = tokens;
  args.pairs = (w.cols + 31) / 32 * 16;
  args.w = &w;
  args.y = y;
  uint32_t* xb = scratch.Allocate<uint32_t>(static_cast<size_t>(tokens * args.pairs));
  k.pack_rows(x, w.cols, tokens, xb);
  args.xb = xb;
  SplitRange(w.rows, kDecodeRowGroup, TaskCount(pool, tokens * w.rows * w.cols), pool,
             [&](int64_t r0, int64_t r1) { k.decode_rows(args, r0, r1); });
}

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
