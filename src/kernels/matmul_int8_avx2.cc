// The integer-activation kernels on plain AVX2 (any AVX2 core without a VNNI extension):
// matmul_int8_avx2.h over vpmaddubsw + vpmaddwd, as llama.cpp's AVX2 dots. Compiled with the AVX2
// flags (CMakeLists.txt), reached only after the AVX2 level is checked.
#include "kernels/matmul_int8_avx2.h"

namespace k3::kernels::detail {
namespace {

// vpmaddubsw adds two u8 x s8 products into an int16 with saturation, so its operands must keep
// |u0 q0 + u1 q1| <= 32767. 4-bit weights as unsigned (k + offset <= 24) times |q| <= 127 do
// (<= 6096): the dot starts from the activations' correction as with vpdpbusd. kInt8Block's
// unsigned bytes (up to 255) do not; there the signed k = u - 128 (|k| <= 127) goes in as |k|
// with its sign moved onto q (vpsignb), which keeps every pair within 2 * 127 * 127 = 32258, and
// the dot starts from 0 (sum k q directly).
struct MaddubsDot {
  template <WeightFormat F>
  static constexpr bool StartsAtCorrection() {
    return F != WeightFormat::kInt8Block;
  }
  template <WeightFormat F>
  K3_INLINE static __m256i Add(__m256i dot, __m256i u, const uint8_t* q) {
    __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    if constexpr (F == WeightFormat::kInt8Block) {
      const __m256i k = _mm256_xor_si256(u, _mm256_set1_epi8(static_cast<char>(0x80)));
      u = _mm256_abs_epi8(k);
      qv = _mm256_sign_epi8(qv, k);
    }
    const __m256i pairs = _mm256_maddubs_epi16(u, qv);
    return _mm256_add_epi32(dot, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  // Add(Add(dot, u0, q0), u1, q1). 4-bit weights: the two 16-bit pair sums are added before
  // widening (|each| <= 6096, so the sum stays in an int16 and every lane's integer is the same).
  template <WeightFormat F>
  K3_INLINE static __m256i AddTwo(__m256i dot, __m256i u0, const uint8_t* q0, __m256i u1,
                                  const uint8_t* q1) {
    if constexpr (F == WeightFormat::kInt8Block) return Add<F>(Add<F>(dot, u0, q0), u1, q1);
    const __m256i pairs = _mm256_add_epi16(
        _mm256_maddubs_epi16(u0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q0))),
        _mm256_maddubs_epi16(u1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q1))));
    return _mm256_add_epi32(dot, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

constexpr Int8Kernels kKernels = {&Avx2DecodeRows<MaddubsDot>, &Avx2QuantizeRow,
                                  &Avx2DotLoop<MaddubsDot>, "avx2", false};

}  // namespace

const Int8Kernels& Avx2Int8Kernels() { return kKernels; }

}  // namespace k3::kernels::detail
