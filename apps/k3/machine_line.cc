#include "apps/k3/machine_line.h"

#include "base/cpu_info.h"
#include "kernels/matmul.h"

namespace k3::app {

std::string MachineLine(size_t threads) {
  return "machine: " + base::DescribeCpu(base::ReadCpuIdentity()) + ", " + std::to_string(threads) +
         " threads; kernels: " + kernels::MatMulPaths();
}

}  // namespace k3::app
