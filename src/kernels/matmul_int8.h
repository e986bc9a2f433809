// The integer-activation path of MatMul for 4-bit weights (FourBitActivations::kInt8): x is
// quantised per 32 columns to int8 once per call, and each block's product is an exact integer
// dot scaled by weight scale x activation scale in float32. Baseline code sees only this header;
// the kernels live in ISA-flagged units: matmul_vnni.cc (AVX512-VNNI vpdpbusd), matmul_avxvnni.cc
// (AVX-VNNI, 256-bit) and matmul_int8_avx2.cc (vpmaddubsw + vpmaddwd), the last two over
// matmul_int8_avx2.h.
//
// Integer form of a 4-bit block (checkpoints.md A1.6): every weight is an integer k times the
// block's weight scale s_w:
//   INT4:  k = u - 8 (u the nibble), s_w = the BF16 scale;
//   MXFP4: k = 2 * E2M1 value in {0, ±1, ±2, ±3, ±4, ±6, ±8, ±12} (by a 16-byte table),
//          s_w = E8M0 scale / 2;
//   kInt8Block: k = the stored byte - 128, s_w = the BF16 scale.
// The activation block is q * d with d = amax / 127 and q = round(x / d) in [-127, 127]. So
//   sum_c W[r, c] x[c] ~ sum_blocks s_w d sum_c k_c q_c,
// where vpdpbusd (unsigned x signed bytes) computes each integer sum with one side offset to
// unsigned and a starting value that takes the offset's share back out (Int8Activations' two
// forms). All integer sums are exact (|partial| < 2^24).
#pragma once

#include <cstdint>

#include "base/arena.h"
#include "kernels/matmul.h"

namespace k3::kernels::detail {

enum class Isa : uint8_t;

// Blocks of 32 columns per chunk: one 64-byte load of 4-bit weights.
inline constexpr int64_t kInt8ChunkBlocks = 4;

// Calls of at least this many tokens store q biased (see Int8Activations): their tiles share one
// weight-side correction per row and chunk among the tile's tokens instead of loading one per
// token; a single token keeps the activation-side correction, one load per chunk.
inline constexpr int64_t kBiasedFromTokens = 2;

// x quantised for the kernels, per 128-column chunk k (blocks 4k .. 4k + 3, slot j = block - 4k;
// blocks past cols / 32 in the last chunk are all zero) and token t, chunk-major: entry (k, t) is
// entry k * tokens + t of each array, so a tile of tokens reads one stretch per chunk.
//
// vpdpbusd lane l (= 4j + m) of a chunk sums the products of columns 32j + 8m .. 32j + 8m + 7 of
// slot j (four even columns from the low half, four odd from the high). Both forms below make
// every lane's integer the exact sum of k * q over its own 8 columns, so the float32 results are
// the same bits whichever form a call uses (a token's output does not depend on its batch).
// - Signed (tokens < kBiasedFromTokens, and always for the 256-bit kernels): q as int8, weights
//   as the unsigned k + offset, and the dot starts from `correction` = -offset * (sum of the
//   lane's 8 q).
// - Biased (`biased`): q + 128 as unsigned bytes, weights as signed k, and the dot starts from
//   -128 * (sum of the lane's 8 k), which the kernels compute once per row and chunk.
struct Int8Activations {
  // [chunks][tokens][128] bytes: the even columns of slots 0..3 (16 bytes each), then their odd
  // columns: the order the kernels split a 64-byte row chunk into low and high nibbles.
  const uint8_t* q = nullptr;
  // Signed form only (else nullptr): [chunks][tokens][16], the lanes' starting values.
  const int32_t* correction = nullptr;
  // [chunks][tokens][16]: d of slot j in lanes 4j .. 4j + 3.
  const float* scale = nullptr;
  int64_t tokens = 0;
  int64_t chunks = 0;
  bool biased = false;

  // The integer q of token t's column c (either form).
  int32_t Value(int64_t t, int64_t c) const {
    const int64_t at =
        ((c / 128) * tokens + t) * 128 + (c % 2) * 64 + (c % 128) / 32 * 16 + (c % 32) / 2;
    return biased ? int32_t{q[at]} - 128 : int32_t{static_cast<int8_t>(q[at])};
  }
  // Token t's scale d of block b.
  float Scale(int64_t t, int64_t b) const { return scale[((b / 4) * tokens + t) * 16 + b % 4 * 4]; }
};

// 127 / amax overflows for amax below ~2^-121, and x * inf is inf or NaN: the blocks' quantizers
// compute q = round(x * lift * (127 / (amax * lift))) with this power of two, which is 1 for
// every amax where nothing overflows (scaling by a power of two is exact there, so q is the
// same) and lifts tiny blocks into range.
constexpr float BlockLift(float amax) { return amax < 0x1p-64f ? 0x1p64f : 1.0f; }

struct Int8Kernels;
// Quantises x [tokens, cols] (cols % 32 == 0) for weights of `format` into arena memory, in the
// form `kernels` read (nullptr: the kernels of BestIsa()). A block with a non-finite value gets
// scale NaN (its products are NaN, as the exact path's would be).
Int8Activations QuantizeActivationsInt8(const float* x, int64_t tokens, int64_t cols,
                                        WeightFormat format, base::Arena& arena,
                                        const Int8Kernels* kernels = nullptr);
// The same in portable scalar code (what the AVX-512 quantizer must reproduce bit for bit); the
// biased form from kBiasedFromTokens tokens only where `allow_biased`.
Int8Activations QuantizeActivationsInt8Portable(const float* x, int64_t tokens, int64_t cols,
                                                WeightFormat format, base::Arena& arena,
                                                bool allow_biased = true);

struct Int8DecodeArgs {
  Int8Activations x;
  const WeightMatrix* w = nullptr;  // kMxfp4 or kInt4
  float* y = nullptr;               // [tokens, rows]
};

struct Int8Kernels {
  // y[:, r0 .. r1) for every token.
  void (*decode_rows)(const Int8DecodeArgs& args, int64_t r0, int64_t r1);
  // Token t's q, scale and (signed form: correction != nullptr, for weights stored with
  // `offset`) correction entries, of `tokens`, from its row x [cols]: the same values as
  // QuantizeActivationsInt8Portable. The biased form is taken when correction is nullptr.
  void (*quantize_row)(const float* x, int64_t cols, int64_t t, int64_t tokens, int32_t offset,
                       uint8_t* q, float* scale, int32_t* correction);
  // Register-resident dot chains (the roofline's integer peak); returns the operations run.
  double (*dot_loop)(int64_t iterations);
  // What the logs call the integer dots: "avx512-vnni", "avx-vnni" or "avx2".
  const char* name;
  // Whether calls of kBiasedFromTokens or more tokens hand these kernels the biased form; the
  // others read only the signed form. quantize_row may be nullptr: the portable quantizer then.
  bool takes_biased;
};

// AVX512-VNNI kernels; call only when CpuHasAvx512Vnni().
const Int8Kernels& VnniKernels();
bool CpuHasAvx512Vnni();
// AVX-VNNI kernels (VEX vpdpbusd on 256-bit vectors); call only when CpuHasAvxVnni().
const Int8Kernels& AvxVnniKernels();
bool CpuHasAvxVnni();
// Plain AVX2 kernels (vpmaddubsw + vpmaddwd); call only where the AVX2 level is supported.
const Int8Kernels& Avx2Int8Kernels();

// The integer kernels MatMulWithIsa uses at SIMD level `isa` on this CPU: AVX512-VNNI at the
// AVX-512 level where present, else AVX-VNNI, else plain AVX2; nullptr for the scalar level.
const Int8Kernels* Int8KernelsFor(Isa isa);
// Every integer kernel set this CPU can run (tests compare each with the definition).
int Int8KernelSetCount();
const Int8Kernels& Int8KernelSet(int i);

// The integer form above computed in double from the same quantised activations: what the
// kernels compute up to float32 accumulation (tests).
void MatMulInt8Definition(const float* x, int64_t tokens, const WeightMatrix& w, float* y);

// MatMul through integer dots on `kernels` (4-bit or kInt8Block w), every token count.
void MatMulInt8Decode(const Int8Kernels& kernels, const float* x, int64_t tokens,
                      const WeightMatrix& w, float* y, base::ThreadPool* pool,
                      base::Arena& scratch);

}  // namespace k3::kernels::detail
