#include "kernels/backend.h"

#include "base/check.h"

namespace k3::kernels {

DeviceBuffer::DeviceBuffer(base::BlockAllocator* allocator, size_t bytes)
    : allocator_(allocator), data_(allocator->AllocateBlock(bytes)), bytes_(bytes) {}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) allocator_->FreeBlock(data_, bytes_);
}

}  // namespace k3::kernels
