#include "kernels/mla_layout.h"

#include <cstring>

#include "base/check.h"

namespace k3::kernels {
namespace {

bool Fp8TilesAlign(const WeightMatrix& kv_b, const MlaShape& s) {
  return kv_b.format == WeightFormat::kFp8Block && s.latent_dim % kv_b.block == 0 &&
         s.nope_dim % kv_b.block == 0 && s.value_dim % kv_b.block == 0;
}

}  // namespace

AbsorbedKvBStorage::AbsorbedKvBStorage(const WeightMatrix& kv_b, const MlaShape& shape) {
  const int64_t dn = shape.nope_dim, dv = shape.value_dim, r = shape.latent_dim;
  K3_CHECK(kv_b.rows == shape.heads * (dn + dv) && kv_b.cols == r)
      << "kv_b is " << kv_b.rows << " x " << kv_b.cols << ", the MLA shape wants "
      << shape.heads * (dn + dv) << " x " << r;
  layout_.keys_t.rows = shape.heads * r;
  layout_.keys_t.cols = dn;
  switch (kv_b.format) {
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
    case WeightFormat::kF16:
      TransposeKeysInFormat(kv_b, shape);
      layout_.values = kv_b;
      return;
    default:
      if (Fp8TilesAlign(kv_b, shape)) {
        TransposeFp8Keys(kv_b, shape);
        layout_.values = kv_b;
        return;
      }
      DequantiseBoth(kv_b, shape);
  }
}

// keys_t[h r + c, n] = kv_b[h (dn + dv) + n, c], element by element in the stored format.
void AbsorbedKvBStorage::TransposeKeysInFormat(const WeightMatrix& kv_b, const MlaShape& shape) {
  const int64_t dn = shape.nope_dim, dv = shape.value_dim, r = shape.latent_dim;
  const int64_t size = StoredElementBytes(kv_b.format);
  keys_.resize(static_cast<size_t>(shape.heads * r * dn * size));
  const auto* from = static_cast<const uint8_t*>(kv_b.data);
  for (int64_t h = 0; h < shape.heads; ++h) {
    for (int64_t n = 0; n < dn; ++n) {
      const uint8_t* row = from + (h * (dn + dv) + n) * r * size;
      for (int64_t c = 0; c < r; ++c) {
        std::memcpy(&keys_[((h * r + c) * dn + n) * size], row + c * size, size);
      }
    }
  }
  layout_.keys_t.format = kv_b.format;
  layout_.keys_t.data = keys_.data();
}

// The bytes move as in TransposeKeysInFormat; tile (i, j) of head h's keys_t is the transpose of
// kv_b's tile (h (dn + dv) / b + j, i), and takes its scale. Exact: every weight is the same E4M3
// byte times the same scale.
void AbsorbedKvBStorage::TransposeFp8Keys(const WeightMatrix& kv_b, const MlaShape& shape) {
  TransposeKeysInFormat(kv_b, shape);
  const int64_t b = kv_b.block, dn = shape.nope_dim, dv = shape.value_dim, r = shape.latent_dim;
  const int64_t kv_tiles_per_row = r / b, key_tiles_per_row = dn / b;
  key_scales_.resize(static_cast<size_t>(shape.heads * (r / b) * key_tiles_per_row));
  for (int64_t h = 0; h < shape.heads; ++h) {
    for (int64_t i = 0; i < r / b; ++i) {
      for (int64_t j = 0; j < key_tiles_per_row; ++j) {
        key_scales_[(h * (r / b) + i) * key_tiles_per_row + j] =
            kv_b.block_scales[(h * (dn + dv) / b + j) * kv_tiles_per_row + i];
      }
    }
  }
  layout_.keys_t.block = b;
  layout_.keys_t.block_scales = key_scales_.data();
  layout_.keys_t.fp8_nan_free = kv_b.fp8_nan_free;  // the same bytes, moved
}

void AbsorbedKvBStorage::DequantiseBoth(const WeightMatrix& kv_b, const MlaShape& shape) {
  const int64_t dn = shape.nope_dim, dv = shape.value_dim, r = shape.latent_dim;
  values_.resize(static_cast<size_t>(kv_b.rows * r));
  for (int64_t row = 0; row < kv_b.rows; ++row) DequantizeRow(kv_b, row, &values_[row * r]);
  layout_.values = {WeightFormat::kF32, kv_b.rows, r, values_.data()};
  keys_.resize(static_cast<size_t>(shape.heads * r * dn * 4));
  auto* keys = reinterpret_cast<float*>(keys_.data());
  for (int64_t h = 0; h < shape.heads; ++h) {
    for (int64_t n = 0; n < dn; ++n) {
      for (int64_t c = 0; c < r; ++c) {
        keys[(h * r + c) * dn + n] = values_[(h * (dn + dv) + n) * r + c];
      }
    }
  }
  layout_.keys_t.format = WeightFormat::kF32;
  layout_.keys_t.data = keys_.data();
}

size_t AbsorbedKvBStorage::owned_bytes() const {
  return keys_.size() + key_scales_.size() * sizeof(float) + values_.size() * sizeof(float);
}

}  // namespace k3::kernels
