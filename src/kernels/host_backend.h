// HostBackend: the memory half of a Backend whose buffers are host memory (CpuBackend and the
// scalar ReferenceBackend): blocks from the host block allocator (64-byte aligned), copies are
// memmove/memcpy and accept bytes == 0 with null pointers. A device backend derives from Backend.
#pragma once

#include "kernels/backend.h"

namespace k3::kernels {

class HostBackend : public Backend {
 public:
  bool memory_is_host() const final { return true; }
  base::BlockAllocator& memory() final { return base::HostBlockAllocator(); }
  void Copy(void* dst, const void* src, size_t bytes) final;
  void CopyToDevice(void* dst, const void* host, size_t bytes) final;
  void CopyToHost(void* host, const void* src, size_t bytes) final;
  void Zero(void* dst, size_t bytes) final;
};

}  // namespace k3::kernels
