// The shapes and operands of the Backend ops (backend.h), one struct per op family. Pointers are
// backend memory (host memory for CpuBackend, device memory for a GPU backend) unless a comment
// says "host". Shapes are written [rows, cols] beside each operand; sizes count elements. Nothing
// here knows a model: the composition in src/model/ turns a ModelConfig into these shapes.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/matmul.h"

namespace k3::kernels {

// ---- norms -------------------------------------------------------------------------------------

// `rows` vectors of `dim` values; row r of x starts at x + r * x_stride (0: dim), likewise out.
struct RmsNormShape {
  int64_t rows = 0;
  int64_t dim = 0;
  float eps = 1e-6f;
  int64_t x_stride = 0;
  int64_t out_stride = 0;
};

// x / sqrt(sum x^2 + eps) * scale, in place, over `vectors` contiguous vectors of `dim`.
struct L2NormShape {
  int64_t vectors = 0;
  int64_t dim = 0;
  float scale = 1.0f;
  double eps = 1e-6;  // FLA's x * rsqrt(sum x^2 + 1e-6)
};

// ---- activations -------------------------------------------------------------------------------

enum class ActivationKind : uint8_t {
  kSilu,     // x sigmoid(x)
  kSitu,     // beta tanh(x / beta) sigmoid(x) (gate side of SiTU)
  kGelu,     // x Phi(x), exact (erf) form
  kSigmoid,  // 1 / (1 + e^-x)
};

struct ActivationShape {
  ActivationKind kind = ActivationKind::kSilu;
  int64_t n = 0;
  float situ_beta = 4.0f;
  float situ_linear_beta = 25.0f;  // GLU only: SiTU's up side is linear_beta tanh(u / linear_beta)
};

// ---- rotary embedding --------------------------------------------------------------------------

// Pair i (channels 2i, 2i+1) turns by position * inv_freq[i]; cos and sin are scaled by
// `amplitude` (YaRN's mscale ratio). Angles are formed in double. inv_freq: host, [pairs].
struct RopeTable {
  const double* inv_freq = nullptr;
  int64_t pairs = 0;
  double amplitude = 1.0;
};

// Rotates, for each row r and head h, the 2 * pairs values at x + r * row_stride + h * head_stride
// by positions[r] (positions: [rows]).
struct RopeArgs {
  RopeTable table;
  int64_t rows = 0;
  int64_t heads = 1;
  int64_t row_stride = 0;
  int64_t head_stride = 0;
  const int64_t* positions = nullptr;
  float* x = nullptr;
};

// ---- paged latent cache and MLA ----------------------------------------------------------------

// The element type of a latent cache entry of `dim` values (Kimi/DeepSeek: dim 576). Stored:
// - kF32: float[dim] (4 dim bytes);
// - kBf16: uint16_t[dim], bfloat16 rounded to nearest even (2 dim bytes; |e - q| <= 2^-8 |e|:
//   half an ulp of an 8-bit significand);
// - kFp8E4m3: float scale, then uint8_t[dim] E4M3 codes of e / scale, scale = amax(|e|) / 448
//   over the whole entry (one scale per token per layer), codes rounded to nearest even and
//   saturating at +-448 (never the NaN code); padded to a multiple of 4 bytes (4 + dim rounded
//   up). Decoded value: scale * E4M3(code); |e - q| <= 2^-4 |e| where e / scale is an E4M3 normal
//   (|e| >= 2^-6 scale), else <= 2^-10 scale (subnormal steps are 2^-9 scale).
enum class LatentDtype : uint8_t { kF32, kBf16, kFp8E4m3 };

inline int64_t LatentEntryBytes(LatentDtype dtype, int64_t dim) {
  switch (dtype) {
    case LatentDtype::kBf16:
      return 2 * dim;
    case LatentDtype::kFp8E4m3:
      return (4 + dim + 3) / 4 * 4;
    case LatentDtype::kF32:
      break;
  }
  return 4 * dim;
}

// "fp32", "bf16", "fp8_e4m3" (the --kv-cache-dtype spelling).
const char* LatentDtypeName(LatentDtype dtype);

// One layer's view of a paged cache: the entry at `offset` of `page` is the entry_bytes() bytes at
// data + page * page_stride + offset * entry_bytes(), holding entry_dim values of `dtype`.
struct LatentCacheView {
  uint8_t* data = nullptr;
  int64_t page_stride = 0;  // bytes
  int64_t page_size = 0;
  int64_t entry_dim = 0;
  LatentDtype dtype = LatentDtype::kF32;
  int64_t entry_bytes() const { return LatentEntryBytes(dtype, entry_dim); }
  uint8_t* entry(int32_t page, int64_t offset) const {
    return data + page * page_stride + offset * entry_bytes();
  }
};

// A sequence of a batch: rows [row_begin, row_begin + rows) of the stacked activations are its
// new tokens at positions [start_position, start_position + rows); pages (host) cover them all.
struct PagedSequence {
  int64_t row_begin = 0;
  int64_t rows = 0;
  int64_t start_position = 0;
  std::span<const int32_t> pages;
};

// naive: keys and values expanded from every cached latent with kv_b (per-pair dot products);
// kNaiveGemm: the same as two matrix products per head (long prefills); absorbed: kv_b folded
// into the query and the output, reading only the cache entries (decode).
enum class MlaForm : uint8_t { kNaive, kNaiveGemm, kAbsorbed };

struct MlaSequence {
  PagedSequence seq;
  MlaForm form = MlaForm::kAbsorbed;
};

// An entry is [latent_dim | rope_dim]: the normalised latent, then the shared key part.
struct MlaShape {
  int64_t heads = 0;
  int64_t nope_dim = 0;
  int64_t rope_dim = 0;
  int64_t value_dim = 0;
  int64_t latent_dim = 0;
  float scale = 1.0f;  // softmax scale
  int64_t qk_dim() const { return nope_dim + rope_dim; }
};

// kv_b as the absorbed form reads it, per head h: W_uk^T ([latent, nope]) at rows
// [h latent, (h + 1) latent) of keys_t, and W_uv ([value, latent]) at rows
// [h (nope + value) + nope, (h + 1) (nope + value)) of values. Transposing W_uk lets the form fold
// every query of a step into the latent space with one matrix product; values is kv_b itself when
// its format allows (AbsorbedKvBStorage).
struct AbsorbedKvB {
  WeightMatrix keys_t;  // [heads latent, nope]
  WeightMatrix values;  // [heads (nope + value), latent]
};

struct MlaAttentionArgs {
  MlaShape shape;
  const float* q = nullptr;            // [rows, heads, nope + rope]
  LatentCacheView cache;               // entries of every position of every sequence
  const WeightMatrix* kv_b = nullptr;  // [heads (nope + value), latent]: naive forms
  AbsorbedKvB absorbed;                // the same kv_b: absorbed form
  float* out = nullptr;                // [rows, heads, value]
};

// ---- Kimi Delta Attention ----------------------------------------------------------------------

enum class KdaGateKind : uint8_t {
  kSoftplus,    // Kimi-Linear: g = -exp(A) softplus(raw + dt_bias)
  kLowerBound,  // K3: g = lower_bound sigmoid(exp(A) (raw + dt_bias))
};

// In place: g from raw gate projections to log decays, beta from logits to sigmoid(beta).
struct KdaGateArgs {
  int64_t rows = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;
  KdaGateKind kind = KdaGateKind::kSoftplus;
  float lower_bound = 0.0f;
  const float* a_log = nullptr;    // [heads]
  const float* dt_bias = nullptr;  // [heads, head_dim]
  float* g = nullptr;              // [rows, heads, head_dim]
  float* beta = nullptr;           // [rows, heads]
};

// Causal depthwise convolution with SiLU: out[t, c] = silu(sum_i w[c, i] x_ext[t + i, c]) where
// x_ext is the sequence's history ([taps - 1, channels], oldest first) followed by its rows.
struct ShortConvArgs {
  int64_t channels = 0;
  int taps = 0;
  const float* weights = nullptr;  // [channels, taps]
  const float* x = nullptr;        // [rows, channels]
  float* out = nullptr;            // [rows, channels]; must not alias x
};

// The sequence's rows; history is advanced to its newest taps - 1 inputs.
struct ConvSequence {
  int64_t row_begin = 0;
  int64_t rows = 0;
  float* history = nullptr;  // [taps - 1, channels]
};

// The delta rule per head: S <- diag(exp(g)) S; S <- S + beta k (v - S^T k)^T; o = S^T q, with
// q already L2-normalised and scaled, k L2-normalised, g <= 0 the per-key log decay.
struct KdaArgs {
  int64_t heads = 0;
  int64_t key_dim = 0;
  int64_t value_dim = 0;
  int chunk = 16;               // tokens per chunk of the chunked (WY) form
  const float* q = nullptr;     // [rows, heads, key_dim]
  const float* k = nullptr;     // [rows, heads, key_dim]
  const float* v = nullptr;     // [rows, heads, value_dim]
  const float* g = nullptr;     // [rows, heads, key_dim]
  const float* beta = nullptr;  // [rows, heads]
  float* o = nullptr;           // [rows, heads, value_dim]
};

struct KdaSequence {
  int64_t row_begin = 0;
  int64_t rows = 0;
  float* state = nullptr;  // [heads, key_dim, value_dim], read and updated
  bool chunked = false;    // chunked (WY) form, else one recurrent step per token
};

// ---- mixture of experts ------------------------------------------------------------------------

// Sigmoid scores; a selection-only bias; groups ranked by the sum of their two best biased scores,
// all but the best topk_groups masked; top_k by biased score; weights = unbiased scores,
// renormalised (sum + 1e-20) if asked, times routed_scaling.
struct MoeRouteArgs {
  int64_t rows = 0;
  int num_experts = 0;
  int top_k = 0;
  int num_groups = 1;
  int topk_groups = 1;
  bool renormalize = true;
  float routed_scaling = 1.0f;
  float* scores = nullptr;      // [rows, experts]: router logits in, sigmoid scores out
  const float* bias = nullptr;  // [experts]
  int32_t* experts = nullptr;   // [rows, top_k]: chosen, best first
  float* weights = nullptr;     // [rows, top_k]
  // [rows], lowered to the k-th minus (k+1)-th biased score among the row's eligible experts.
  float* min_gap = nullptr;
};

// Groups the (row, expert) choices by expert (rows ascending within an expert) and gathers the
// input rows in that order.
struct MoeDispatchArgs {
  int64_t rows = 0;
  int top_k = 0;
  int num_experts = 0;
  int64_t width = 0;
  const int32_t* experts = nullptr;   // [rows, top_k]
  const float* weights = nullptr;     // [rows, top_k]
  const float* x = nullptr;           // [rows, width]
  int64_t* expert_offsets = nullptr;  // [experts + 1]: expert e owns [offsets[e], offsets[e + 1])
  int64_t* source_rows = nullptr;     // [rows * top_k]: the row of each assignment
  float* source_weights = nullptr;    // [rows * top_k]
  float* gathered = nullptr;          // [rows * top_k, width]
};

// y[a] = x[a] W_g^T for the rows a of each group g; each group runs on one thread, groups in
// parallel (a group's matrices are small at decode).
struct GroupedMatMulArgs {
  int64_t num_groups = 0;
  const int64_t* group_offsets = nullptr;  // host, [num_groups + 1]
  const WeightMatrix* weights = nullptr;   // host, [num_groups], all of one shape
  const float* x = nullptr;                // [offsets[num_groups], cols]
  float* y = nullptr;                      // [offsets[num_groups], weight rows]
};

// The routed experts' gated MLPs in one op: for the rows a of each group g,
//   h[a] = act(x[a] G_g^T) * (x[a] U_g^T)   (Glu; rounded through MXFP8 when mxfp8_hidden),
//   y[a] = h[a] D_g^T.
// The same numbers as GroupedMatMul (gate, up) + Glu (+ QuantizeMxfp8) + GroupedMatMul (down),
// but each group's three products run as one task, so a layer costs one dispatch, not three.
// y may alias x when the down rows equal the gate columns (a group reads its own rows of x before
// it writes its own rows of y).
struct GroupedMlpArgs {
  int64_t num_groups = 0;
  const int64_t* group_offsets = nullptr;  // host, [num_groups + 1]
  const WeightMatrix* gate = nullptr;      // host, [num_groups], [inter, width] each
  const WeightMatrix* up = nullptr;        // host, [num_groups], [inter, width] each
  const WeightMatrix* down = nullptr;      // host, [num_groups], [out, inter] each
  ActivationShape act;                     // act.n is ignored (every group's rows x inter)
  bool mxfp8_hidden = false;
  const float* x = nullptr;  // [offsets[num_groups], width]
  float* y = nullptr;        // [offsets[num_groups], out]
};

// out = 0; then for every assignment a in order: out[source_rows[a]] += source_weights[a] y[a].
struct MoeCombineArgs {
  int64_t rows = 0;
  int64_t assignments = 0;
  int64_t width = 0;
  const int64_t* source_rows = nullptr;
  const float* source_weights = nullptr;
  const float* y = nullptr;  // [assignments, width]
  float* out = nullptr;      // [rows, width]
};

// ---- Attention Residuals -----------------------------------------------------------------------

// Per row: p = softmax_i(<v_i, score> / rms(v_i)) over the sources, out = sum_i p_i v_i.
struct AttnResArgs {
  int64_t rows = 0;
  int64_t dim = 0;
  int num_sources = 0;
  const float* const* sources = nullptr;  // host array of [rows, dim] sources
  const float* score = nullptr;           // [dim]
  float eps = 1e-6f;
  float* out = nullptr;  // [rows, dim], not overlapping any source
};

// ---- sampling ----------------------------------------------------------------------------------

// `rows` rows of `vocab` logits, contiguous.
struct VocabRows {
  int64_t rows = 0;
  int64_t vocab = 0;
  int64_t mask_words() const { return (vocab + 63) / 64; }
};

}  // namespace k3::kernels
