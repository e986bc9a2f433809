#include "kernels/backend.h"

#include <vector>

#include "base/check.h"

namespace k3::kernels {

void AbsorbedKvB(const WeightMatrix& kv_b, const MlaShape& shape, float* out) {
  const int64_t dn = shape.nope_dim, dv = shape.value_dim, r = shape.latent_dim;
  K3_CHECK(kv_b.rows == shape.heads * (dn + dv) && kv_b.cols == r)
      << "kv_b is " << kv_b.rows << " x " << kv_b.cols << ", the MLA shape wants "
      << shape.heads * (dn + dv) << " x " << r;
  std::vector<float> row(r);
  for (int64_t h = 0; h < shape.heads; ++h) {
    float* head = out + h * (dn + dv) * r;
    for (int64_t n = 0; n < dn; ++n) {  // W_uk row n becomes column n of W_uk^T
      DequantizeRow(kv_b, h * (dn + dv) + n, row.data());
      for (int64_t c = 0; c < r; ++c) head[c * dn + n] = row[c];
    }
    for (int64_t v = 0; v < dv; ++v)
      DequantizeRow(kv_b, h * (dn + dv) + dn + v, head + (dn + v) * r);
  }
}

DeviceBuffer::DeviceBuffer(base::BlockAllocator* allocator, size_t bytes)
    : allocator_(allocator), data_(allocator->AllocateBlock(bytes)), bytes_(bytes) {}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) allocator_->FreeBlock(data_, bytes_);
}

}  // namespace k3::kernels
