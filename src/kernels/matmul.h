// Matrix products of float32 activations with weights in their stored format. Weights are never
// converted as a whole: each kernel reads the stored bytes (BF16, F16, F32, MXFP4, block-scaled
// FP8) and accumulates in float32. Dispatch picks AVX-512, AVX2+FMA or the scalar path at run time;
// every SIMD path is tested against MatMulReference over random shapes with odd tails.
#pragma once

#include <cstdint>
#include <string>

#include "base/arena.h"
#include "base/thread_pool.h"

namespace k3::kernels {

enum class WeightFormat : uint8_t {
  kF32,
  kBF16,
  kF16,
  kMxfp4,      // OCP MXFP4: E2M1 nibbles (low nibble = even column), one E8M0 scale per 32 columns
  kFp8Block,   // E4M3 bytes, one float scale per `block` x `block` tile (DeepSeek weight_scale_inv)
  kInt4,       // compressed-tensors pack-quantized INT4 (K2-Thinking / K2.5 routed experts): nibble
               // u (low nibble = even column, the int32 words' byte order) is the value u - 8, one
               // BF16 scale per 32 columns
  kInt8Block,  // int8 weights made at load (--weight-quant int8): byte u is the value u - 128,
               // one BF16 scale per 32 columns, bytes in Int8BlockOffset's order. On
               // any AVX2 core its products always take int8 activations (W8A8, any token count,
               // the FourBitActivations::kInt8 bound below); at the scalar level they are exact.
  kBf16Panels,  // BF16 weights repacked at load (PackBf16Panels) into column-pair panels, whose
                // products run down the columns: see kBf16PanelRows.
};

// MXFP4 and INT4 store two 4-bit weights per byte with one scale per 32 columns.
constexpr bool IsFourBit(WeightFormat f) {
  return f == WeightFormat::kMxfp4 || f == WeightFormat::kInt4;
}

// Bytes per stored element (kMxfp4, kInt4: 1 per two elements, see StoredRowBytes). Baseline code
// only: the ISA-flagged kernels keep their own internal copy (matmul_simd_base.h).
constexpr int64_t StoredElementBytes(WeightFormat f) {
  if (f == WeightFormat::kF32) return 4;
  const bool two =
      f == WeightFormat::kBF16 || f == WeightFormat::kF16 || f == WeightFormat::kBf16Panels;
  return two ? 2 : 1;
}

// W is [rows, cols] ("out" x "in", torch Linear layout), viewed without copying.
struct WeightMatrix {
  WeightFormat format = WeightFormat::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  // kF32/kBF16/kF16/kFp8Block: row-major [rows, cols] elements. kMxfp4/kInt4: [rows, cols / 2]
  // bytes.
  const void* data = nullptr;
  // kMxfp4: E8M0 bytes [rows, cols / 32]. Unused otherwise.
  const uint8_t* mx_scales = nullptr;
  // kInt4, kInt8Block: BF16 bits [rows, cols / 32]. Unused otherwise.
  const uint16_t* group_scales = nullptr;
  // kFp8Block: float32 [ceil(rows / block), ceil(cols / block)], multiplied into the tile's values.
  const float* block_scales = nullptr;
  int64_t block = 128;
  // kFp8Block: the owner checked that no byte is a NaN code (tensor::AnyE4M3Nan), so the decode
  // kernels skip their per-row check (a second pass over the row, ~10 % of a batch-1 product).
  // A NaN code makes its row's outputs NaN either way; with this set wrongly they may not be (the
  // AVX512-VBMI table decode yields NaN for the code itself, the F16 widening does not).
  bool fp8_nan_free = false;
};

// kBf16Panels: rows in panels of kBf16PanelRows (the last one padded with zero rows), panels in
// groups of kBf16PanelGroup (the last group may hold fewer), each group stored column pair by
// column pair, [cols / 2][panels of the group][16] 32-bit words whose low half is W[r, 2j] and high
// half W[r, 2j + 1]; cols is even. A group's 64 rows are one sequential stream for every token
// count, and each pair of columns is 16 rows' weights in two vectors, so the kernels keep one
// accumulator per (16 rows, token) and reuse each weight vector for every token of a tile (AVX-512:
// 1.5x the row-major BF16 tiles at 8 and 32 tokens, docs/model.md). Every output is the chain
// acc = fma(W[r, c], x[t, c], acc) over c = 0, 1, ..., cols - 1 from acc = 0, on every ISA, token
// count and thread split: MatMul's bits never depend on them, and std::fma in that order gives
// them too.
inline constexpr int64_t kBf16PanelRows = 16, kBf16PanelGroup = 4;
// uint16 elements of kBf16Panels data for a rows x cols matrix (rows rounded up to 16).
int64_t Bf16PanelsElements(int64_t rows, int64_t cols);
// Where W[r, c] of a rows x cols kBf16Panels matrix is stored: an index into its uint16 data.
int64_t Bf16PanelsOffset(int64_t r, int64_t c, int64_t rows, int64_t cols);
// Repacks a kBF16 matrix (cols even) into `data` (Bf16PanelsElements(rows, cols) elements); the
// result views it. The values are the same bits.
WeightMatrix PackBf16Panels(const WeightMatrix& w, uint16_t* data,
                            base::ThreadPool* pool = nullptr);
// Whether MatMul runs kBf16Panels on its AVX-512 tiles here (else on scalar chains: the same bits,
// many times slower, so loaders should keep row-major BF16 there).
bool Bf16PanelsRunFast();

// Bytes of one stored row of w (kMxfp4, kInt4: cols / 2).
constexpr int64_t StoredRowBytes(const WeightMatrix& w) {
  return IsFourBit(w.format) ? w.cols / 2 : w.cols * StoredElementBytes(w.format);
}

// Rows [begin, begin + count) of w as a matrix of their own, viewing w's memory (no copy).
// kFp8Block needs begin % block == 0 (the view's tiles are then w's tiles, with their scales).
WeightMatrix RowRange(const WeightMatrix& w, int64_t begin, int64_t count);

// y[t, r] = sum_c x[t, c] * W[r, c] for t in [0, tokens). x is [tokens, cols] and y is
// [tokens, rows], both contiguous. Splits rows over `pool` when given (nullptr = calling thread).
// Requires cols % 32 == 0 for kMxfp4, kInt4 and kInt8Block. Per-call buffers (packed or permuted x,
// per-task scratch) come from `scratch` when given and are released before returning, so a warm
// arena makes the call allocation-free (GemmPrecision::kBf16 on AMX still allocates); else from the
// heap.
void MatMul(const float* x, int64_t tokens, const WeightMatrix& w, float* y,
            base::ThreadPool* pool = nullptr, base::Arena* scratch = nullptr);

// The scalar definition: dequantises each weight with tensor/numeric.h and accumulates in double.
void MatMulReference(const float* x, int64_t tokens, const WeightMatrix& w, float* y);

// Writes W[row, 0..cols) as float32.
void DequantizeRow(const WeightMatrix& w, int64_t row, float* out);

// MXFP8 activation quantisation (OCP MX v1.0): blocks of 32 share the E8M0 scale
// 2^(floor(log2 amax) - 8); elements are rounded to nearest-even E4M3 and saturated. Rewrites x in
// place with the dequantised values, so any MatMul then computes the quantised product exactly.
// Requires n % 32 == 0.
void QuantizeMxfp8InPlace(float* x, int64_t n);

// kInt8Block: where column c of a row is stored, relative to the row's first byte (cols bytes per
// row). Per 128-column chunk of n <= 4 blocks: the even columns of its blocks (16 per block), then
// the odd ones, the order the integer kernels read 4-bit weights in (matmul_int8.h).
int64_t Int8BlockOffset(int64_t c, int64_t cols);
// Quantises w (any format, cols % 32 == 0) to kInt8Block: per row and 32 columns, scale = BF16 of
// amax / 127 rounded up, u = round(w / scale) + 128. `data` holds rows * cols bytes and `scales`
// rows * cols / 32; the result views them. Each weight's error is at most scale / 2.
WeightMatrix QuantizeInt8Block(const WeightMatrix& w, uint8_t* data, uint16_t* scales,
                               base::ThreadPool* pool = nullptr);

// Which SIMD level MatMul uses on this machine: "avx512", "avx2" or "scalar".
const char* MatMulIsa();
// Every product path this machine runs, for benchmark reports: "matmul avx512 (+vbmi fp8), int8
// dots avx512-vnni, bf16 avx512-bf16" ("none" where a path falls back to FP32 kernels), then
// ", decode tiles widen once per call" where detail::DecodeWidensOnce holds for MatMul's level.
std::string MatMulPaths();

// Arithmetic of MatMul's GEMM regime (calls with more tokens than the decode kernels take: 32 for
// F32/BF16/F16 weights, 12 for MXFP4/FP8), process-wide; default kFp32.
//   kFp32: every product and sum in float32; results do not depend on this setting's history.
//   kBf16: activations and dequantised weights are rounded to BF16 (nearest even; FP32 subnormals
//          flush to zero) and the products accumulate in float32, as GPU engines running BF16 do.
//          Each product then has relative error <= 2^-7 (one 2^-8 rounding per factor), i.e.
//          about 1e-2 of sum_c |x[t, c] * W[r, c]| per output in the worst case. Weights round as
//          follows: BF16 none; MXFP4 (E2M1 x E8M0) none unless the value is below 2^-126 (then
//          zero) or overflows (inf, as in FP32); INT4 ((u - 8) x BF16 scale), FP8, F16, F32 and
//          int8 blocks once, to nearest. Runs on (MatMulBf16Path()):
//            "amx": Intel AMX-BF16 tiles (tdpbf16ps), when the CPU has them and the OS grants
//                   tile data;
//            "avx512-bf16": else vdpbf16ps (AVX512-BF16), about twice the FP32 FMA rate; also
//                   for BF16 weights at 8..64 tokens, through a decode-style kernel that beats
//                   both FP32 and the BF16 GEMM there (matmul_detail.h), with the same bound;
//            "none": elsewhere MatMul stays on its FP32 kernels (so kBf16 is never less exact
//                   than kFp32).
//          Other decode-regime calls (few tokens, memory-bound) always run in FP32, kInt8Block
//          weights keep their W8A8 kernels on any AVX2 core, and kBf16Panels weights
//          always run FP32 (their tiles reach ~0.9 of the FP32 peak from 32 tokens).
// Results of one precision are deterministic and independent of the thread pool. Changing the
// setting while another thread is inside MatMul affects only calls that start afterwards.
enum class GemmPrecision : uint8_t { kFp32, kBf16 };
void SetGemmPrecision(GemmPrecision precision);
GemmPrecision GetGemmPrecision();
// Whether kBf16 GEMMs run on AMX on this machine (CPU support and OS permission; checked once).
bool MatMulHasAmx();
// What kBf16 runs on this machine: "amx", "avx512-bf16" or "none" (FP32 kernels).
const char* MatMulBf16Path();

// Activations of 4-bit weight products (kMxfp4, kInt4) in MatMul's decode regime (calls of up to
// 12 tokens), process-wide; default kFp32.
//   kFp32: exact float32 products, as for every other format.
//   kInt8: x is quantised per 32 columns to int8 (d = amax / 127, q = round(x / d)) and each
//          block's product is an exact integer dot (VNNI or AVX2) times weight scale x d, summed in
//          float32 (matmul_int8.h), as llama.cpp's Q4_0 x Q8_0 and ktransformers' kernels do. The
//          weights stay exact, so for every output
//            |y_int8 - y_exact| <= sum_blocks (d / 2) (1 + 2^-20) sum_{c in block} |W[r, c]|
//                                  + float32 accumulation (~1e-6 sum_c |x[c] W[r, c]|),
//          i.e. at most about 1/254 of sum_c |x| |W| per block, and much less on average
//          (rounding errors of mixed sign). Runs on AVX512-VNNI, AVX-VNNI or plain AVX2
//          integer dots (MatMulHasInt8Dot()); on a scalar-only CPU, and in the GEMM regime,
//          products stay kFp32.
enum class FourBitActivations : uint8_t { kFp32, kInt8 };
void SetFourBitActivations(FourBitActivations activations);
FourBitActivations GetFourBitActivations();
// Whether kInt8 (and kInt8Block's W8A8) runs on this machine: any AVX2 core.
bool MatMulHasInt8Dot();
// Which integer dots it runs on: "avx512-vnni", "avx-vnni", "avx2" or "none".
const char* MatMulInt8DotName();
// Whether MatMul of `tokens` tokens by `w` multiplies through integer dots on this machine under
// the current settings (kInt8Block weights, or 4-bit ones with kInt8 activations in the decode
// regime): which peak bounds the product, for rooflines.
bool MatMulRunsInt8(int64_t tokens, const WeightMatrix& w);

}  // namespace k3::kernels
