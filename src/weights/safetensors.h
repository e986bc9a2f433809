// The safetensors file format: an 8-byte little-endian header length N, N bytes of JSON (an
// object: tensor name -> {"dtype", "shape", "data_offsets": [begin, end]} plus an optional
// "__metadata__" string -> string map), then the data section; offsets are relative to its start
// (byte 8 + N). ParseSafetensorsHeader trusts nothing in the file: every entry is checked against
// the file's real size, so a parsed header can be used to slice the mapped bytes directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "tensor/dtype.h"

namespace k3::weights {

// Headers longer than this are rejected before parsing (real ones are at most a few MB).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = uint64_t{100} << 20;

struct SafetensorsEntry {
  std::string name;
  tensor::DType dtype = tensor::DType::kF32;
  std::vector<int64_t> shape;  // every dim >= 0; the product fits in int64
  uint64_t begin = 0;          // absolute byte offsets in the file: [begin, end)
  uint64_t end = 0;            // end - begin == numel * DTypeSize(dtype)
};

struct SafetensorsHeader {
  uint64_t header_bytes = 0;  // N, the JSON length
  uint64_t data_begin = 0;    // 8 + N, where the data section starts
  // Sorted by name; names are unique and non-empty; non-empty byte ranges do not overlap and lie
  // inside [data_begin, file size).
  std::vector<SafetensorsEntry> tensors;
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

// Parses and validates the header of a whole safetensors file held in memory (usually mapped).
// Every failure is DATA_LOSS with a message naming the offending tensor where there is one, e.g.
// "tensor 'w': unknown dtype 'F7'". Bytes after the last tensor are allowed.
base::Result<SafetensorsHeader> ParseSafetensorsHeader(std::span<const std::byte> file);

struct TensorToWrite {
  std::string name;
  tensor::DType dtype = tensor::DType::kF32;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;  // numel * DTypeSize(dtype) bytes, row-major
};

// Writes a standard safetensors file: the JSON header padded with spaces to a multiple of 8 bytes,
// then the tensors back to back, ordered by element size (largest first, then as given) so every
// tensor starts aligned to its element size, as the reference Python writer does. Tensor bytes go
// straight from the caller's spans to the file (no staging copy). INVALID_ARGUMENT for a bad
// tensor (empty, duplicate, reserved or non-UTF-8 name; negative dim; byte count not matching the
// shape), naming it; DATA_LOSS naming PATH for IO errors, after which the partial file is removed.
base::Status WriteSafetensors(const std::filesystem::path& path,
                              std::span<const TensorToWrite> tensors,
                              const std::map<std::string, std::string>& metadata = {});

}  // namespace k3::weights
