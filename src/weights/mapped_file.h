// MappedFile: a whole file mapped read-only (PROT_READ, MAP_PRIVATE), unmapped on destruction.
// Move-only. An empty file maps to an empty span (mmap cannot map zero bytes). The bytes stay
// valid until the MappedFile is destroyed; moving it keeps the same address. If another process
// truncates the file while it is mapped, touching the lost pages raises SIGBUS: checkpoints are
// expected to be immutable while served.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>

#include "base/result.h"

namespace k3::weights {

class MappedFile {
 public:
  // Access-pattern hints passed to madvise(2); best effort, never an error.
  enum class Advice { kNormal, kSequential, kRandom, kWillNeed };

  // NOT_FOUND "cannot open PATH: <reason>" when the file does not exist or cannot be opened;
  // DATA_LOSS naming PATH when it is not a regular file or cannot be mapped.
  static base::Result<MappedFile> Open(const std::filesystem::path& path);

  MappedFile() = default;  // empty, unmapped
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

  // Tells the kernel how the mapping will be read (e.g. kWillNeed to start read-ahead).
  void Advise(Advice advice) const;

 private:
  MappedFile(std::filesystem::path path, const std::byte* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  void Unmap();

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;  // nullptr for an empty file
  size_t size_ = 0;
};

}  // namespace k3::weights
