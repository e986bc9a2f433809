// MappedFile: a whole file's bytes in memory, released on destruction. Move-only. Either the file
// mapped read-only (Pages::kFile: PROT_READ, MAP_PRIVATE, 4 KiB page-cache pages), or read once
// into private anonymous memory asked for 2 MiB pages (Pages::kHuge: transparent huge pages, see
// Open). An empty file is an empty span (mmap cannot map zero bytes). The bytes stay valid until
// the MappedFile is destroyed; moving it keeps the same address. If another process truncates a
// file while it is mapped (kFile), touching the lost pages raises SIGBUS: checkpoints are
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

  // Where the bytes live. Streaming multi-gigabyte weights through 4 KiB pages costs a page walk
  // per 4 KiB whose page-table entries the stream itself evicts from the caches: measured on the
  // K3 benchmark model, batch-1 decode runs ~1.3x faster from 2 MiB pages (docs/model.md,
  // "Weight pages"). kHuge costs one read of the file at load and private memory instead of
  // shared page cache.
  enum class Pages { kFile, kHuge };

  // NOT_FOUND "cannot open PATH: <reason>" when the file does not exist or cannot be opened;
  // DATA_LOSS naming PATH when it is not a regular file or cannot be mapped or read;
  // RESOURCE_EXHAUSTED when kHuge cannot get the memory.
  static base::Result<MappedFile> Open(const std::filesystem::path& path,
                                       Pages pages = Pages::kFile);

  // Whether the kernel grants 2 MiB pages to madvise(MADV_HUGEPAGE) regions (transparent huge
  // pages "always" or "madvise"); kHuge without them is plain 4 KiB anonymous memory.
  static bool HugePagesAvailable();

  MappedFile() = default;  // empty, unmapped
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  Pages pages() const { return pages_; }
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

  // Tells the kernel how the mapping will be read (e.g. kWillNeed to start read-ahead).
  void Advise(Advice advice) const;

  // Gives back the memory of the whole release units (ReleaseUnit) inside bytes [begin, end) of
  // the file, keeping the partial ones at either end, with MADV_DONTNEED: kHuge memory is freed,
  // kFile pages leave this process (the page cache may keep them). The released bytes must not be
  // read again: they read as zeros (kHuge) or as the file (kFile). Returns the bytes released; 0
  // for an empty or out-of-file range.
  uint64_t ReleasePages(uint64_t begin, uint64_t end);
  // What ReleasePages frees whole: 2 MiB for kHuge, so that no huge page holding bytes still read
  // is split into 4 KiB pages (measured: splitting them cost ~7 % of K2.5 batch-1 decode); the
  // system page for kFile.
  uint64_t ReleaseUnit() const;
  // Bytes of the pages touching [begin, end) that are resident in this process (mincore(2));
  // for tests and diagnostics.
  uint64_t ResidentBytes(uint64_t begin, uint64_t end) const;
  // The system page size.
  static uint64_t PageBytes();

 private:
  MappedFile(std::filesystem::path path, const std::byte* data, size_t size, void* mapping,
             size_t mapping_size, Pages pages)
      : path_(std::move(path)),
        data_(data),
        size_(size),
        mapping_(mapping),
        mapping_size_(mapping_size),
        pages_(pages) {}
  static base::Result<MappedFile> ReadIntoHugePages(const std::filesystem::path& path, int fd,
                                                    size_t size);
  void Unmap();

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;  // nullptr for an empty file
  size_t size_ = 0;
  void* mapping_ = nullptr;  // what munmap releases: data_ rounded out to whole pages
  size_t mapping_size_ = 0;
  Pages pages_ = Pages::kFile;
};

}  // namespace k3::weights
