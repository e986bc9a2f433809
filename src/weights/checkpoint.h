// A Hugging Face checkpoint folder: config.json plus safetensors shards (model.safetensors, or the
// shards named by model.safetensors.index.json), memory-mapped and never copied whole into RAM.
// Every lookup failure names the tensor, so a wrong or truncated checkpoint fails at load time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "tensor/dtype.h"
#include "tensor/tensor_view.h"
#include "weights/mapped_file.h"

namespace k3::weights {

class Checkpoint {
 public:
  // Opens DIR: reads DIR/config.json (kept as text; the model parses it), then either the index
  // model.safetensors.index.json (weight_map name -> shard file) or the single model.safetensors,
  // and maps every shard read-only, or with Pages::kHuge reads each into 2 MiB-page memory
  // (mapped_file.h says why). Headers are validated here (see safetensors.h).
  static base::Result<Checkpoint> Open(const std::filesystem::path& dir,
                                       MappedFile::Pages pages = MappedFile::Pages::kFile);

  Checkpoint(Checkpoint&&) noexcept;
  Checkpoint& operator=(Checkpoint&&) noexcept;
  ~Checkpoint();

  const std::filesystem::path& dir() const;
  const std::string& config_json() const;

  bool Contains(std::string_view name) const;
  std::vector<std::string> TensorNames() const;  // sorted

  // NOT_FOUND "tensor 'NAME' is missing from the checkpoint (DIR)".
  // The view's bytes point into the mapping: valid while this Checkpoint (or the one it is moved
  // into) lives. They are aligned to the element size when the file's writer aligned them (the
  // Python safetensors writer and WriteSafetensors do; the format itself does not require it).
  base::Result<tensor::TensorView> Get(std::string_view name) const;
  // Also checks dtype and shape: INVALID_ARGUMENT "tensor 'NAME' has shape [a, b], expected [c, d]"
  // (same for dtype).
  base::Result<tensor::TensorView> Get(std::string_view name, tensor::DType dtype,
                                       std::span<const int64_t> shape) const;

  // Bytes of all mapped shards.
  uint64_t mapped_bytes() const;

  // Gives back the memory of every part of the shards that no `live` byte range lies in (ranges
  // of views from Get; ranges outside every shard are ignored), in whole release units
  // (MappedFile::ReleaseUnit): a model that has converted some matrices into memory of its own
  // (model/weight_quant.h) keeps only what it still reads, where with Pages::kHuge the originals
  // would otherwise stay resident beside their copies. From then on Get refuses every tensor with
  // a byte in released memory (FAILED_PRECONDITION naming it), so the checkpoint never hands out
  // zeroed bytes; views taken before are the caller's to drop. Returns the bytes newly released.
  uint64_t ReleaseExcept(std::span<const std::span<const std::byte>> live);
  uint64_t released_bytes() const;

 private:
  struct Impl;
  explicit Checkpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace k3::weights
