// Which processor this process runs on, from CPUID: the line every benchmark prints beside its
// figures. This project's figures come from shared VMs whose processor changes between sessions
// (an AMD Zen 5 and an Intel Xeon so far), and a ratio is only comparable on the same core: the
// two ran the same FP8 kernels at 0.46 and 0.71 of their bandwidth.
#pragma once

#include <string>

namespace k3::base {

struct CpuIdentity {
  std::string vendor;  // CPUID vendor: "GenuineIntel", "AuthenticAMD" (empty off x86-64)
  std::string brand;   // the brand string, runs of spaces collapsed: "Intel(R) Xeon(R) Processor"
  // Display family and model (the extended fields folded in as the vendors define), as Linux's
  // /proc/cpuinfo "cpu family" and "model" print them.
  int family = 0, model = 0;
  bool hypervisor = false;  // CPUID.1:ECX[31]: a hypervisor says it is there
};

// CPUID of the calling core; all fields empty / 0 / false where CPUID does not exist.
CpuIdentity ReadCpuIdentity();

// "Intel(R) Xeon(R) Processor (GenuineIntel family 6 model 207, under a hypervisor)", with
// ", L3 260 MiB" appended where the C library knows the last-level cache; "unknown processor"
// where CPUID gave nothing.
std::string DescribeCpu(const CpuIdentity& cpu);

}  // namespace k3::base
