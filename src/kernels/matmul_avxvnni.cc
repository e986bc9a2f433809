// The integer-activation kernels on AVX-VNNI (VEX vpdpbusd on 256-bit vectors: Alder Lake and
// later Intel cores, Zen 5): matmul_int8_avx2.h over one vpdpbusd per 32 byte pairs. Compiled with
// the AVX2 + AVX-VNNI flags (CMakeLists.txt), reached only after CpuHasAvxVnni().
#include "kernels/matmul_int8_avx2.h"

namespace k3::kernels::detail {
namespace {

struct VnniDot {
  template <WeightFormat F>
  static constexpr bool StartsAtCorrection() {
    return true;
  }
  // dot + the 4-byte dot products of unsigned u and signed q per lane (exact, no saturation).
  template <WeightFormat F>
  K3_INLINE static __m256i Add(__m256i dot, __m256i u, const uint8_t* q) {
    return _mm256_dpbusd_avx_epi32(dot, u, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
  }
  template <WeightFormat F>
  K3_INLINE static __m256i AddTwo(__m256i dot, __m256i u0, const uint8_t* q0, __m256i u1,
                                  const uint8_t* q1) {
    return Add<F>(Add<F>(dot, u0, q0), u1, q1);
  }
};

constexpr Int8Kernels kKernels = {&Avx2DecodeRows<VnniDot>, &Avx2QuantizeRow, &Avx2DotLoop<VnniDot>,
                                  "avx-vnni", false};

}  // namespace

const Int8Kernels& AvxVnniKernels() { return kKernels; }

}  // namespace k3::kernels::detail
