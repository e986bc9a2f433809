// Element types of checkpoint tensors and their safetensors names ("BF16", "F8_E4M3", ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace k3::tensor {

enum class DType : uint8_t {
  kBool,
  kU8,
  kI8,
  kU16,
  kI16,
  kU32,
  kI32,
  kU64,
  kI64,
  kF8E4M3,  // OCP E4M3 (bias 7, max 448, NaN = S.1111.111, no inf)
  kF8E5M2,
  kE8M0,  // unsigned power-of-two scale (bias 127); safetensors stores K3's as U8
  kF16,
  kBF16,
  kF32,
  kF64,
};

// Bytes per element.
size_t DTypeSize(DType dtype);
// The safetensors spelling.
std::string_view DTypeName(DType dtype);
// Parses a safetensors dtype string; nullopt for one we do not know.
std::optional<DType> DTypeFromName(std::string_view name);

}  // namespace k3::tensor
