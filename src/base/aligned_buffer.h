// AlignedBuffer<T>: a fixed-size array of trivially copyable T in memory aligned for the hardware.
// Buffers of 2 MB or more are 2 MB aligned and advised to use transparent huge pages, which cuts
// TLB misses on large random-access tables (the tokenizer's hash indexes). Move-only; not
// thread-safe for concurrent writes.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

namespace k3::base {

// Allocates `bytes` zeroed bytes (see AlignedBuffer); frees with FreeAligned.
void* AllocateAligned(size_t bytes);
void FreeAligned(void* data);

template <typename T>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  AlignedBuffer() = default;
  AlignedBuffer(size_t size, const T& fill) : size_(size) {
    data_ = static_cast<T*>(AllocateAligned(size * sizeof(T)));
    for (size_t i = 0; i < size; ++i) data_[i] = fill;
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  ~AlignedBuffer() { FreeAligned(data_); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace k3::base
