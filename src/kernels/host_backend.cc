#include "kernels/host_backend.h"

#include <cstring>

namespace k3::kernels {

// memcpy and friends require valid pointers even for 0 bytes; an empty state or cache range may
// come with null ones.
void HostBackend::Copy(void* dst, const void* src, size_t bytes) {
  if (bytes != 0) std::memmove(dst, src, bytes);
}
void HostBackend::CopyToDevice(void* dst, const void* host, size_t bytes) {
  if (bytes != 0) std::memcpy(dst, host, bytes);
}
void HostBackend::CopyToHost(void* host, const void* src, size_t bytes) {
  if (bytes != 0) std::memcpy(host, src, bytes);
}
void HostBackend::Zero(void* dst, size_t bytes) {
  if (bytes != 0) std::memset(dst, 0, bytes);
}

}  // namespace k3::kernels
