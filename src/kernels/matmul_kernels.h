// The per-ISA kernels behind MatMul; matmul.cc owns dispatch, threading and the per-call
// preparation of x, and calls the kernels only through the tables below, after the CPU check.
//
// Source layout. The SIMD kernels are written once, as templates over a vector-traits type:
// matmul_simd_decode.h (decode regime), matmul_simd_gemm.h (exact dequantisation, GEMM regime)
// and matmul_simd.h (MakeIsaKernels, which fills an IsaKernels table). One traits header per ISA
// (matmul_vec_avx2.h, matmul_vec_avx512.h) says what differs: lanes, tile sizes, loads and masks,
// the weight conversions and transposes, and the few algorithm choices (loop order, BF16 and
// E2M1 decoding). matmul_avx2.cc and matmul_avx512.cc are the ~15-line translation units that
// instantiate them with their ISA's flags; matmul_amx.cc (AMX tiles, GemmPrecision::kBf16) shares
// the AVX-512 traits header. Adding an ISA is one traits header plus one such file (see
// matmul_simd.h).
//
// ODR safety. Everything those headers define has internal linkage (an anonymous namespace) and
// they use no standard-library templates, so the linker can never hand baseline code a copy of
// an inline function or template compiled for a wider ISA (matmul_simd_base.h states the rule and
// refuses to compile without ISA flags). Baseline code sees only this header.
//
// Decode regime (few tokens, memory-bound): a thread walks its rows in groups of kDecodeRowGroup,
// streams each row once (software-prefetching ahead), converts 16 (AVX-512) or 8 (AVX2) weights
// in registers and applies them to a tile of up to 6 (3) tokens, with one accumulator per row and
// token and a horizontal sum at the end. More tokens take more tiles over the same, now cached,
// rows.
// Gemm regime (many tokens, compute-bound): a panel of 32 (16) weight rows is converted and
// transposed kGemmKc columns at a time into [k][32] floats, and a micro-kernel accumulates a
// tile of up to 14 (6) tokens x 32 (16) rows in 28 (12) vector registers: per k, two vector loads
// of the panel, one broadcast per token, two FMAs per token.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/matmul.h"

namespace k3::kernels::detail {

// E8M0 scale byte -> float (2^(e-127); 0xFF is NaN), built at compile time.
struct E8M0Table {
  float value[256];
};
constexpr E8M0Table MakeE8M0Table() {
  E8M0Table table{};
  table.value[127] = 1.0f;
  for (int e = 128; e < 255; ++e) table.value[e] = table.value[e - 1] * 2.0f;
  for (int e = 126; e >= 0; --e) table.value[e] = table.value[e + 1] * 0.5f;
  table.value[255] = std::numeric_limits<float>::quiet_NaN();
  return table;
}
inline constexpr E8M0Table kE8M0 = MakeE8M0Table();

// Decode regime: each call computes y[:, r0..r1) for all tokens.
struct DecodeArgs {
  // [tokens, cols] row-major. For kMxfp4 and kBF16, each whole group of `pair_group` columns is
  // permuted so that its even columns come first, then its odd ones (a trailing partial group
  // stays in order): the kernels then split weight pairs without shuffling them back.
  const float* x = nullptr;
  int64_t tokens = 0;
  const WeightMatrix* w = nullptr;
  float* y = nullptr;  // [tokens, rows]
  // kFp8Block: the block is a multiple of the vector width and every scale * 256 is finite, so the
  // kernel may fold each tile's scale and the 256 of its E4M3 conversion into the activations,
  // scaled into `scratch` (tokens * cols floats) once per block row. Otherwise each row group is
  // dequantised into `scratch` (kDecodeRowGroup * cols floats) first.
  bool fp8_fast = false;
  // kMxfp4 / kInt4 calls of more tokens than one tile: widen each row group's weights once and
  // run every tile from the widened copy (DecodeWidensOnce; the same bits either way).
  bool widen_once = false;
};
inline constexpr int kDecodeRowGroup = 4;

// Gemm regime: x is packed once per call into token tiles; tile j holds tokens
// [tile_start[j], tile_start[j + 1]) as [cols][tile size] at xpacked + tile_start[j] * cols.
struct GemmArgs {
  const float* xpacked = nullptr;
  const int64_t* tile_start = nullptr;
  int64_t num_tiles = 0;
  const WeightMatrix* w = nullptr;
  float* y = nullptr;  // [tokens, rows]
  // kFp8Block whose rows hold no NaN code (WeightMatrix::fp8_nan_free), whose block is a multiple
  // of the vector width and whose scales times 256 are finite: packed by PackPanelFp8Folded.
  bool fp8_folded = false;
};
// Columns per packed weight panel block (a multiple of 32 so MXFP4 blocks never straddle).
inline constexpr int64_t kGemmKc = 256;

// Products against a matrix R [n, cols] given as a table of row pointers (row_table.h): row j's
// elements, kF32, kBF16 or kF16, start at rows[j].
struct RowTableArgs {
  // Dots: [tokens, cols], kBF16 permuted as DecodeArgs::x. Combine: [tokens, ldx], ldx >= n.
  const float* x = nullptr;
  int64_t ldx = 0;
  int64_t tokens = 0;
  const void* const* rows = nullptr;
  int64_t n = 0;
  int64_t cols = 0;
  WeightFormat format = WeightFormat::kF32;
  float* y = nullptr;  // [tokens, ldy]; dots: ldy >= n, combine: ldy >= cols
  int64_t ldy = 0;
};

struct IsaKernels {
  int lanes;             // floats per vector
  int pair_group;        // x permutation group of the decode MXFP4 and BF16 kernels
  int panel_rows;        // weight rows per GEMM panel
  int max_tile_tokens;   // tokens per GEMM micro-tile
  int64_t gemm_scratch;  // floats of scratch GemmPanel needs
  void (*decode_rows)(const DecodeArgs& args, int64_t r0, int64_t r1, float* scratch);
  // Computes y[:, r0..r0 + panel_rows) (clipped to rows).
  void (*gemm_panel)(const GemmArgs& args, int64_t r0, float* scratch);
  // dst[c * mr + i] = x[i * cols + c] for i < mr (<= max_tile_tokens), c < cols.
  void (*pack_tokens)(const float* x, int64_t cols, int64_t mr, float* dst);
  void (*dequantize_range)(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out);
  // Runs `iterations` of register-resident FMA chains; returns the floating-point operations done.
  double (*fma_loop)(int64_t iterations);
  // y[t, j] = x[t] . R[j] on the decode tiles (matmul_simd_rows.h).
  void (*row_table_dots)(const RowTableArgs& args);
  // y[t, c] = sum_j x[t, j] R[j, c], each sum by FMAs in increasing j.
  void (*row_table_combine)(const RowTableArgs& args);
};

const IsaKernels& Avx2Kernels();
const IsaKernels& Avx512Kernels();
// Avx512Kernels() with kFp8Block decode rows on AVX512-VBMI byte tables (matmul_avx512_vbmi.cc);
// call only when HasAvx512VbmiKernels().
const IsaKernels& Avx512VbmiKernels();
bool HasAvx512VbmiKernels();
enum class Isa : uint8_t;
// The table of a supported SIMD level (not kScalar); checks support. kAvx512 is
// Avx512VbmiKernels() where the CPU has VBMI.
const IsaKernels& Kernels(Isa isa);
// MatMul's decode regime on the given table (tests: each AVX-512 table on one CPU).
void MatMulDecodeWithKernels(const IsaKernels& k, const float* x, int64_t tokens,
                             const WeightMatrix& w, float* y, base::ThreadPool* pool);

// x [tokens, cols] with, within each whole group of `group` columns, the even columns first, then
// the odd ones (a trailing partial group as it is): the decode kernels' kBF16 and 4-bit x layout
// (group = IsaKernels::pair_group). From `scratch`.
float* PermuteEvenOdd(const float* x, int64_t tokens, int64_t cols, int group,
                      base::Arena& scratch);

// The scalar conversion (matmul.cc, baseline code): the SIMD kernels call it for kInt8Block,
// whose products run on the integer kernels (matmul_int8.h) or through row-group scratch.
void DequantizeRange(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1, float* out);

// GemmPrecision::kBf16 GEMM on AMX tiles (matmul_amx.cc; driven by matmul_bf16.cc). x is packed
// once per call to BF16 rows; each task converts a panel of 32 weight rows kGemmKc columns at a
// time into the pair-interleaved tile layout tdpbf16ps reads (B[k/2][n] = W[n][k..k+1]) and runs
// every token block over it, accumulating the C tiles in a per-panel float buffer.
struct AmxGemmArgs {
  // [tokens rounded up to 16][ldx] BF16 (nearest even) of x; columns >= cols and rows >= tokens
  // are zero, so ragged edges contribute nothing.
  uint16_t* xb = nullptr;
  int64_t ldx = 0;  // cols rounded up to 32, plus 32 (keeps a tile's 16 rows off one L1 set)
  int64_t tokens = 0;
  const WeightMatrix* w = nullptr;
  float* y = nullptr;  // [tokens, rows]
  // Exact float32 conversion of W[row, c0..c1) (the AVX-512 one), rounded to BF16 by the packing.
  void (*dequantize_range)(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1,
                           float* out) = nullptr;
};

struct AmxKernels {
  int panel_rows;  // weight rows per gemm_panel call
  // Floats of 64-byte-aligned scratch gemm_panel needs for `tokens`.
  int64_t (*gemm_scratch)(int64_t tokens);
  // Writes xb rows [t0, t1) (t1 <= tokens rounded up to 16) from x [tokens, cols].
  void (*pack_tokens)(const AmxGemmArgs& args, const float* x, int64_t t0, int64_t t1);
  // Computes y[:, r0..r0 + panel_rows) (clipped to rows). Configures the calling thread's tiles
  // on its first call (thread_local); the process must hold tile-data permission.
  void (*gemm_panel)(const AmxGemmArgs& args, int64_t r0, float* scratch);
  // Register-resident tdpbf16ps chains (the roofline's AMX-BF16 peak); returns the flops run.
  double (*dot_loop)(int64_t iterations);
};

const AmxKernels& AmxBf16Kernels();

// GemmPrecision::kBf16 on AVX512-BF16 without AMX (matmul_avx512_bf16.cc; driven by
// matmul_bf16.cc): vdpbf16ps, which adds to each fp32 lane the products of one pair of BF16
// values along the reduction dim. GEMM: the panels of matmul_bf16_pack.h (32 weight rows, one
// zmm per 16 rows and column pair) times broadcast activation pairs, MR tokens x 32 rows of
// accumulators in registers. Decode (BF16 weights only): the stored rows are already pairs in
// column order, so each 32-column chunk is one load and one vdpbf16ps per row and token.
struct Dpbf16GemmArgs {
  // Token tile j holds tokens [tile_start[j], tile_start[j + 1]) (mr of them) as [pairs][mr]
  // uint32 at xpacked + tile_start[j] * pairs: the BF16 pair (x[i][2p], x[i][2p + 1]) of token i
  // (nearest even); pairs = cols rounded up to 32, halved, and columns >= cols are zero.
  const uint32_t* xpacked = nullptr;
  const int64_t* tile_start = nullptr;
  int64_t num_tiles = 0;
  int64_t pairs = 0;
  const WeightMatrix* w = nullptr;
  float* y = nullptr;  // [tokens, rows]
  // Exact float32 conversion of W[row, c0..c1) (the AVX-512 one), rounded to BF16 by the packing.
  void (*dequantize_range)(const WeightMatrix& w, int64_t row, int64_t c0, int64_t c1,
                           float* out) = nullptr;
};

struct Dpbf16DecodeArgs {
  const uint32_t* xb = nullptr;  // [tokens][pairs]: x as BF16 in column order, zero past cols
  int64_t tokens = 0;
  int64_t pairs = 0;                // cols rounded up to 32, halved
  const WeightMatrix* w = nullptr;  // kBF16
  float* y = nullptr;               // [tokens, rows]
};

struct Dpbf16Kernels {
  int panel_rows;        // weight rows per gemm_panel call
  int max_tile_tokens;   // tokens per GEMM token tile
  int64_t gemm_scratch;  // floats of 64-byte-aligned scratch gemm_panel needs (multiple of 16)
  // dst[p * mr + i] = BF16 pair p of x row i, for i < mr (<= max_tile_tokens), p < pairs.
  void (*pack_tokens)(const float* x, int64_t cols, int64_t mr, uint32_t* dst);
  // Computes y[:, r0..r0 + panel_rows) (clipped to rows) for every token tile.
  void (*gemm_panel)(const Dpbf16GemmArgs& args, int64_t r0, float* scratch);
  // dst[t * pairs + p] = BF16 pair p of x row t, for t < tokens.
  void (*pack_rows)(const float* x, int64_t cols, int64_t tokens, uint32_t* dst);
  // y[:, r0..r1) for every token (kBF16 weights).
  void (*decode_rows)(const Dpbf16DecodeArgs& args, int64_t r0, int64_t r1);
  // Runs `iterations` of register-resident vdpbf16ps chains; returns the floating-point
  // operations done (a BF16 pair's two multiply-adds count 4).
  double (*dot_loop)(int64_t iterations);
};

// Call only when CpuHasAvx512Bf16() (matmul_detail.h).
const Dpbf16Kernels& Avx512Bf16Kernels();

}  // namespace k3::kernels::detail
