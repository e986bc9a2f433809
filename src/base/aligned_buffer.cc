#include "base/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdlib>

#include "base/check.h"

namespace k3::base {

void* AllocateAligned(size_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  size_t alignment = bytes >= kHugePage ? kHugePage : 64;
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  if (rounded == 0) rounded = alignment;
  void* data = std::aligned_alloc(alignment, rounded);
  K3_CHECK(data != nullptr) << "out of memory allocating " << bytes << " bytes";
  if (alignment == kHugePage) madvise(data, rounded, MADV_HUGEPAGE);  // a hint; failure is fine
  std::memset(data, 0, rounded);
  return data;
}

void FreeAligned(void* data) { std::free(data); }

}  // namespace k3::base
