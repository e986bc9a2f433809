// Host-side layouts of MLA weights built once at load.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/op_args.h"

namespace k3::kernels {

// Builds and owns kv_b's absorbed layout (op_args.h AbsorbedKvB) in host memory; kv_b must
// outlive it. Every weight keeps its exact value:
// - F32, BF16 and F16 kv_b: keys_t is W_uk transposed in the same format; values is kv_b itself;
// - FP8 blocks when latent, nope and value are multiples of the block: keys_t is transposed tile
//   by tile (a transposed tile keeps its one scale, so it is exact too); values is kv_b itself;
// - anything else: both halves dequantised to float32 (4 bytes per weight).
// At decode the two products then read kv_b's own bytes (K2's FP8: a quarter of float32's).
class AbsorbedKvBStorage {
 public:
  AbsorbedKvBStorage() = default;
  AbsorbedKvBStorage(const WeightMatrix& kv_b, const MlaShape& shape);
  // Move-only: layout() points into the owned vectors (a move keeps their buffers).
  AbsorbedKvBStorage(AbsorbedKvBStorage&&) = default;
  AbsorbedKvBStorage& operator=(AbsorbedKvBStorage&&) = default;
  AbsorbedKvBStorage(const AbsorbedKvBStorage&) = delete;
  AbsorbedKvBStorage& operator=(const AbsorbedKvBStorage&) = delete;

  const AbsorbedKvB& layout() const { return layout_; }
  // Bytes held beyond kv_b itself.
  size_t owned_bytes() const;

 private:
  void TransposeKeysInFormat(const WeightMatrix& kv_b, const MlaShape& shape);
  void TransposeFp8Keys(const WeightMatrix& kv_b, const MlaShape& shape);
  void DequantiseBoth(const WeightMatrix& kv_b, const MlaShape& shape);

  std::vector<uint8_t> keys_;      // keys_t's elements
  std::vector<float> key_scales_;  // keys_t's FP8 tile scales
  std::vector<float> values_;      // a float32 kv_b, when kv_b's own rows cannot serve
  AbsorbedKvB layout_;
};

}  // namespace k3::kernels
