#include "weights/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace k3::weights {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

// Closes the descriptor on every return path; the mapping outlives it.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

constexpr size_t kHugePage = size_t{2} << 20;

// The least a parallel reader of ReadIntoHugePages gets.
constexpr size_t kReadPieceBytes = size_t{16} << 20;

// Reads bytes [begin, min(begin + length, size)) of fd into data + begin; "" or what failed.
std::string ReadRange(int fd, std::byte* data, size_t begin, size_t length, size_t size) {
  const size_t end = std::min(begin + length, size);
  for (size_t done = begin; done < end;) {
    const ssize_t n = ::pread(fd, data + done, std::min<size_t>(end - done, size_t{1} << 30),
                              static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;  // before anything else can change it
      return "at byte " + std::to_string(done) + " of " + std::to_string(size) + ": " +
             (n == 0 ? std::string("the file shrank") : ErrnoText(error));
    }
    done += static_cast<size_t>(n);
  }
  return "";
}

}  // namespace

bool MappedFile::HugePagesAvailable() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);  // e.g. "always [madvise] never": the bracketed word is the setting
  return line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos;
}

// An anonymous mapping 2 MiB-aligned (over-allocated by one huge page, the slack trimmed), asked
// for huge pages before the first touch so the faults that pread takes allocate them, then filled
// with the file.
base::Result<MappedFile> MappedFile::ReadIntoHugePages(const std::filesystem::path& path, int fd,
                                                       size_t size) {
  const size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* raw = ::mmap(nullptr, rounded + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) {
    int error = errno;
    return base::ResourceExhausted("cannot allocate " + std::to_string(size) + " bytes for " +
                                   path.string() + ": " + ErrnoText(error) +
                                   " (--mmap-weights maps the files instead)");
  }
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) ::munmap(raw, aligned - start);
  const size_t tail = start + rounded + kHugePage - (aligned + rounded);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + rounded), tail);
  auto* data = reinterpret_cast<std::byte*>(aligned);
  (void)::madvise(data, rounded, MADV_HUGEPAGE);  // a hint: without THP the pages stay 4 KiB
  MappedFile file(path, data, size, data, rounded, Pages::kHuge);  // unmaps on every error below
  // One reader per core on ranges of whole huge pages: each huge-page fault zeroes 2 MiB before
  // the copy lands, ~0.5 GB/s per core, so a single reader would take minutes on a large
  // checkpoint that a warm page cache holds already.
  const size_t pieces = std::clamp<size_t>(
      std::min<size_t>(std::thread::hardware_concurrency(), rounded / kReadPieceBytes), 1, 64);
  const size_t piece = (rounded / kHugePage + pieces - 1) / pieces * kHugePage;
  std::vector<std::string> errors(pieces);
  {
    std::vector<std::jthread> readers;
    for (size_t i = 1; i < pieces; ++i) {
      readers.emplace_back([&, i] { errors[i] = ReadRange(fd, data, i * piece, piece, size); });
    }
    errors[0] = ReadRange(fd, data, 0, piece, size);
  }
  for (const std::string& error : errors) {
    if (!error.empty()) return base::DataLoss("cannot read " + path.string() + ": " + error);
  }
  (void)::mprotect(data, rounded, PROT_READ);  // weights are read-only from here on
  return file;
}

base::Result<MappedFile> MappedFile::Open(const std::filesystem::path& path, Pages pages) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return base::NotFound("cannot open " + path.string() + ": " + ErrnoText(error));
  }
  FdCloser closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int error = errno;
    return base::DataLoss("cannot stat " + path.string() + ": " + ErrnoText(error));
  }
  if (!S_ISREG(st.st_mode)) return base::DataLoss(path.string() + " is not a regular file");
  if (st.st_size == 0) return MappedFile(path, nullptr, 0, nullptr, 0, pages);
  auto size = static_cast<size_t>(st.st_size);
  if (pages == Pages::kHuge) return ReadIntoHugePages(path, fd, size);
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) {
    int error = errno;
    return base::DataLoss("cannot map " + path.string() + " (" + std::to_string(size) +
                          " bytes): " + ErrnoText(error));
  }
  return MappedFile(path, static_cast<const std::byte*>(data), size, data, size, Pages::kFile);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)),
      pages_(other.pages_) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
    pages_ = other.pages_;
  }
  return *this;
}

MappedFile::~MappedFile() { Unmap(); }

void MappedFile::Unmap() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
  mapping_ = nullptr;
  mapping_size_ = 0;
  data_ = nullptr;
  size_ = 0;
}

void MappedFile::Advise(Advice advice) const {
  if (data_ == nullptr) return;
  int flag = MADV_NORMAL;
  switch (advice) {
    case Advice::kNormal:
      flag = MADV_NORMAL;
      break;
    case Advice::kSequential:
      flag = MADV_SEQUENTIAL;
      break;
    case Advice::kRandom:
      flag = MADV_RANDOM;
      break;
    case Advice::kWillNeed:
      flag = MADV_WILLNEED;
      break;
  }
  // A hint: failure (e.g. an unsupported flag) changes nothing observable.
  (void)::madvise(const_cast<std::byte*>(data_), size_, flag);
}

uint64_t MappedFile::PageBytes() {
  static const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

uint64_t MappedFile::ReleaseUnit() const {
  return pages_ == Pages::kHuge ? kHugePage : PageBytes();
}

uint64_t MappedFile::ReleasePages(uint64_t begin, uint64_t end) {
  end = std::min<uint64_t>(end, size_);
  const uint64_t unit = ReleaseUnit();
  const auto base = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t first = (base + begin + unit - 1) / unit * unit;  // whole units only
  const uintptr_t last = (base + end) / unit * unit;
  if (data_ == nullptr || begin >= end || first >= last) return 0;
  // Fails only for locked or special mappings, which these are not; then nothing was released.
  if (::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

uint64_t MappedFile::ResidentBytes(uint64_t begin, uint64_t end) const {
  end = std::min<uint64_t>(end, size_);
  if (data_ == nullptr || begin >= end) return 0;
  const uint64_t page = PageBytes();
  const auto base = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t first = (base + begin) / page * page;
  const uintptr_t last = (base + end + page - 1) / page * page;
  std::vector<unsigned char> resident((last - first) / page);
  if (::mincore(reinterpret_cast<void*>(first), last - first, resident.data()) != 0) return 0;
  uint64_t count = 0;
  for (unsigned char r : resident) count += r & 1;
  return count * page;
}

}  // namespace k3::weights
