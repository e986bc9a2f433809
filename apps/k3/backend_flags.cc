#include "apps/k3/backend_flags.h"

#include "kernels/cpu_backend.h"
#include "kernels/reference/reference_backend.h"

namespace k3::app {

base::Result<std::unique_ptr<kernels::Backend>> MakeBackend(const std::string& name,
                                                            base::ThreadPool* pool) {
  if (name == "cpu") return std::unique_ptr<kernels::Backend>(new kernels::CpuBackend(pool));
  if (name == "reference") {
    return std::unique_ptr<kernels::Backend>(new kernels::reference::ReferenceBackend());
  }
  return base::InvalidArgument("--backend must be cpu or reference, got '" + name + "'");
}

}  // namespace k3::app
