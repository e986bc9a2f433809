// The allocation counter of allocation_counter.h. The replacement global allocation functions
// are permitted by the standard; out of memory aborts, which is all a test needs.
#include "testing/allocation_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};

void Count() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
}

}  // namespace

extern "C" {
void* __real_malloc(size_t size);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t size);
void* __real_aligned_alloc(size_t alignment, size_t size);
int __real_posix_memalign(void** p, size_t alignment, size_t size);

void* __wrap_malloc(size_t size) {
  Count();
  return __real_malloc(size);
}
void* __wrap_calloc(size_t n, size_t size) {
  Count();
  return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t size) {
  Count();
  return __real_realloc(p, size);
}
void* __wrap_aligned_alloc(size_t alignment, size_t size) {
  Count();
  return __real_aligned_alloc(alignment, size);
}
int __wrap_posix_memalign(void** p, size_t alignment, size_t size) {
  Count();
  return __real_posix_memalign(p, alignment, size);
}
}

namespace {
void* Allocate(size_t size, size_t alignment) {
  Count();
  void* p = alignment <= alignof(std::max_align_t)
                ? __real_malloc(size ? size : 1)
                : __real_aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) std::abort();
  return p;
}
}  // namespace

void* operator new(size_t size) { return Allocate(size, 0); }
void* operator new[](size_t size) { return Allocate(size, 0); }
void* operator new(size_t size, std::align_val_t a) { return Allocate(size, size_t(a)); }
void* operator new[](size_t size, std::align_val_t a) { return Allocate(size, size_t(a)); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return Allocate(size, 0); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return Allocate(size, 0); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace k3::testing {

void StartCountingAllocations() {
  allocations = 0;
  counting = true;
}

int64_t StopCountingAllocations() {
  counting = false;
  return allocations.load();
}

}  // namespace k3::testing
