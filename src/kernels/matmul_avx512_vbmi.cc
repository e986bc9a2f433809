// The AVX-512 kernel table with AVX512-VBMI's two-register byte permute (vpermi2b) decoding FP8
// weights: a batch-1 FP8 product needs ~4 weight conversions per FMA, and the F16 widening of
// the plain AVX-512 traits (sign-extend, shift, mask, vcvtph2ps per 16 weights) caps it near the
// memory stream a core can pull; the table decode does 64 weights in 10 shuffle/logic operations.
// Only the decode regime's kFp8Block rows differ from Avx512Kernels(); everything else is that
// table. Compiled with the AVX-512 + VBMI flags (CMakeLists.txt), reached only after
// CpuHasAvx512Vbmi(); follows the ODR rule of matmul_simd_base.h.
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_simd_decode.h"
#include "kernels/matmul_vec_avx512.h"

namespace k3::kernels::detail {
namespace {

// The BF16 bits of (E4M3 magnitude code m) / 256, for m in [0, 128): exact, since an E4M3 value
// has 4 significant bits and / 256 keeps it a normal BF16 (the smallest, 2^-9 / 256, is 2^-17).
// 0x7F is NaN. The sign bit is OR-ed in separately.
constexpr uint16_t Bf16OfE4M3Over256(int m) {
  if (m == 0x7F) return 0x7FC0;
  const int e = m >> 3, mant = m & 7;
  if (e > 0) return static_cast<uint16_t>(((e - 15 + 127) << 7) | (mant << 4));
  if (mant == 0) return 0;
  // Subnormal: mant * 2^-9 / 256 = mant * 2^-17; normalise on mant's leading bit k.
  const int k = mant >= 4 ? 2 : mant >= 2 ? 1 : 0;
  return static_cast<uint16_t>(((k - 17 + 127) << 7) | ((mant << (7 - k)) & 0x7F));
}

// Byte tables for vpermi2b: kE4M3High[m] / kE4M3Low[m] = the high / low byte of
// Bf16OfE4M3Over256(m), 128 entries each (two registers).
struct E4M3ByteTables {
  alignas(64) uint8_t high[128];
  alignas(64) uint8_t low[128];
};
constexpr E4M3ByteTables MakeE4M3ByteTables() {
  E4M3ByteTables t{};
  for (int m = 0; m < 128; ++m) {
    t.high[m] = static_cast<uint8_t>(Bf16OfE4M3Over256(m) >> 8);
    t.low[m] = static_cast<uint8_t>(Bf16OfE4M3Over256(m) & 0xFF);
  }
  return t;
}
alignas(64) constexpr E4M3ByteTables kE4M3Bytes = MakeE4M3ByteTables();

// The byte order that makes the in-lane unpacks below return columns in order: within 64 bytes,
// position 16 L + 4 q + j takes byte 16 q + 4 L + j (a 4 x 4 transpose of 4-byte groups).
struct ChunkOrder {
  alignas(64) uint8_t index[64];
};
constexpr ChunkOrder MakeChunkOrder() {
  ChunkOrder o{};
  for (int lane = 0; lane < 4; ++lane) {
    for (int q = 0; q < 4; ++q) {
      for (int j = 0; j < 4; ++j) o.index[16 * lane + 4 * q + j] = 16 * q + 4 * lane + j;
    }
  }
  return o;
}
alignas(64) constexpr ChunkOrder kChunkOrder = MakeChunkOrder();

struct Avx512Vbmi : Avx512 {
  // Table decode for kFp8Block tiles of 1..3 tokens. kernels_benchmark, 4096 x 2048 FP8 weights
  // streamed by 2 threads (Zen 5), best-call GB/s table / widening: 1 token 51 / 41, 2 tokens
  // 43 / 40, 3 tokens 39 / 34; tiles of 4 tokens fell to 20 / 32, so they keep widening.
  static constexpr int kFp8LutMaxTokens = 3;

  struct Fp8Lut {
    __m512i high0, high1, low0, low1, order;
  };
  K3_INLINE static Fp8Lut MakeFp8Lut() {
    return {_mm512_load_si512(kE4M3Bytes.high), _mm512_load_si512(kE4M3Bytes.high + 64),
            _mm512_load_si512(kE4M3Bytes.low), _mm512_load_si512(kE4M3Bytes.low + 64),
            _mm512_load_si512(kChunkOrder.index)};
  }

  // 64 E4M3 bytes at p -> w[s] lane l = value(p[16 s + l]) / 256, exactly; NaN codes as NaN.
  // Reordered bytes, BF16 high byte (magnitude table, then the sign OR-ed in) and low byte, then
  // the in-lane unpacks build each float as (high << 24 | low << 16).
  K3_INLINE static void E4M3x64Over256(const uint8_t* p, const Fp8Lut& t, Vec* w) {
    const __m512i b = _mm512_permutexvar_epi8(t.order, _mm512_loadu_si512(p));
    __m512i high = _mm512_permutex2var_epi8(t.high0, b, t.high1);  // index bit 7 is ignored
    high = _mm512_ternarylogic_epi32(high, b, _mm512_set1_epi8(static_cast<char>(0x80)),
                                     0xF8);  // high | (b & 0x80)
    const __m512i low = _mm512_permutex2var_epi8(t.low0, b, t.low1);
    const __m512i zero = _mm512_setzero_si512();
    const __m512i words0 = _mm512_unpacklo_epi8(low, high);
    const __m512i words1 = _mm512_unpackhi_epi8(low, high);
    w[0] = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, words0));
    w[1] = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, words0));
    w[2] = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, words1));
    w[3] = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, words1));
  }
};

// IsaKernels::decode_rows: kFp8Block with folded scales on the table decode, the rest as
// Avx512Kernels() does it.
void DecodeRowsVbmi(const DecodeArgs& a, int64_t r0, int64_t r1, float* scratch) {
  if (a.w->format == WeightFormat::kFp8Block && a.fp8_fast) {
    return DecodeRowsIn<Avx512Vbmi, WeightFormat::kFp8Block>(a, r0, r1, scratch);
  }
  Avx512Kernels().decode_rows(a, r0, r1, scratch);
}

IsaKernels MakeVbmiKernels() {
  IsaKernels k = Avx512Kernels();
  k.decode_rows = DecodeRowsVbmi;
  return k;
}

}  // namespace

const IsaKernels& Avx512VbmiKernels() {
  static const IsaKernels kKernels = MakeVbmiKernels();
  return kKernels;
}

}  // namespace k3::kernels::detail
