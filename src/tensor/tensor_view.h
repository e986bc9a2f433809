// A typed, shaped, read-only view of bytes owned elsewhere (usually a memory-mapped checkpoint).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tensor/dtype.h"

namespace k3::tensor {

struct TensorView {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

// "[3072, 1792]".
std::string ShapeToString(std::span<const int64_t> shape);

}  // namespace k3::tensor
