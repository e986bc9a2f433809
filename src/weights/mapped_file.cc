#include "weights/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

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

}  // namespace

base::Result<MappedFile> MappedFile::Open(const std::filesystem::path& path) {
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
  if (st.st_size == 0) return MappedFile(path, nullptr, 0);
  auto size = static_cast<size_t>(st.st_size);
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) {
    int error = errno;
    return base::DataLoss("cannot map " + path.string() + " (" + std::to_string(size) +
                          " bytes): " + ErrnoText(error));
  }
  return MappedFile(path, static_cast<const std::byte*>(data), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { Unmap(); }

void MappedFile::Unmap() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
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

}  // namespace k3::weights
