// --backend: which kernels::Backend a command runs the model on. "cpu" (CpuBackend over the
// thread pool, the default) or "reference" (the scalar oracle, kernels/reference/: slow, for
// checking a model or a new backend end to end). docs/adding-a-backend.md adds names here.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "base/thread_pool.h"
#include "kernels/backend.h"

namespace k3::app {

inline constexpr const char* kBackendHelp =
    "Compute backend: cpu, or reference (the scalar oracle: slow, for checking)";

// INVALID_ARGUMENT naming the choices for an unknown name.
base::Result<std::unique_ptr<kernels::Backend>> MakeBackend(const std::string& name,
                                                            base::ThreadPool* pool);

}  // namespace k3::app
