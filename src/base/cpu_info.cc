#include "base/cpu_info.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace k3::base {
namespace {

// `text` with leading and trailing spaces dropped and inner runs of spaces made one (brand
// strings are padded, some with leading spaces).
std::string CollapseSpaces(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\0') break;
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

CpuIdentity ReadCpuIdentity() {
  CpuIdentity cpu;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return cpu;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  cpu.vendor = vendor;
  if (a >= 1 && __get_cpuid(1, &a, &b, &c, &d) != 0) {
    // SDM "CPUID leaf 1": the extended family is added when the base family is 15, the extended
    // model is the high nibble of the model when the base family is 6 or 15.
    const int base_family = (a >> 8) & 0xF, base_model = (a >> 4) & 0xF;
    cpu.family = base_family == 15 ? base_family + static_cast<int>((a >> 20) & 0xFF) : base_family;
    cpu.model = base_family == 6 || base_family == 15
                    ? base_model + (static_cast<int>((a >> 16) & 0xF) << 4)
                    : base_model;
    cpu.hypervisor = (c >> 31) & 1;
  }
  unsigned max_extended = __get_cpuid_max(0x80000000u, nullptr);
  if (max_extended >= 0x80000004u) {
    unsigned words[12] = {};
    for (unsigned leaf = 0; leaf < 3; ++leaf) {
      __get_cpuid(0x80000002u + leaf, &words[4 * leaf], &words[4 * leaf + 1], &words[4 * leaf + 2],
                  &words[4 * leaf + 3]);
    }
    char brand[49] = {};
    std::memcpy(brand, words, 48);
    cpu.brand = CollapseSpaces(brand);
  }
#endif
  return cpu;
}

std::string DescribeCpu(const CpuIdentity& cpu) {
  if (cpu.vendor.empty() && cpu.brand.empty()) return "unknown processor";
  std::string out = cpu.brand.empty() ? "unnamed processor" : cpu.brand;
  out += " (" + cpu.vendor + " family " + std::to_string(cpu.family) + " model " +
         std::to_string(cpu.model);
  if (cpu.hypervisor) out += ", under a hypervisor";
  out += ")";
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) out += ", L3 " + std::to_string(l3 >> 20) + " MiB";
  return out;
}

}  // namespace k3::base
