// ReadCpuIdentity against Linux's own decoding of the same CPUID leaves in /proc/cpuinfo, an
// independent source: the kernel's vendor_id, model name, cpu family, model and flags lines.
#include "base/cpu_info.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace k3::base {
namespace {

// The first processor's "key : value" lines of /proc/cpuinfo (empty if unreadable).
std::map<std::string, std::string> FirstProcessorFields() {
  std::map<std::string, std::string> fields;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line) && !line.empty()) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    const size_t start = line.find_first_not_of(' ', colon + 1);
    fields[key] = start == std::string::npos ? "" : line.substr(start);
  }
  return fields;
}

std::string CollapsedSpaces(const std::string& text) {
  std::istringstream words(text);
  std::string word, out;
  while (words >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

TEST(CpuInfo, MatchesProcCpuinfo) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "CPUID identity is read on x86-64 only";
#endif
  const auto fields = FirstProcessorFields();
  if (fields.count("vendor_id") == 0) GTEST_SKIP() << "no x86 /proc/cpuinfo to compare with";
  const CpuIdentity cpu = ReadCpuIdentity();
  EXPECT_EQ(cpu.vendor, fields.at("vendor_id"));
  EXPECT_EQ(cpu.brand, CollapsedSpaces(fields.at("model name")));
  EXPECT_EQ(std::to_string(cpu.family), fields.at("cpu family"));
  EXPECT_EQ(std::to_string(cpu.model), fields.at("model"));
  const std::string flags = " " + fields.at("flags") + " ";
  EXPECT_EQ(cpu.hypervisor, flags.find(" hypervisor ") != std::string::npos);
}

TEST(CpuInfo, DescribesWhatItRead) {
  CpuIdentity cpu;
  EXPECT_EQ(DescribeCpu(cpu), "unknown processor");
  cpu.vendor = "GenuineIntel";
  cpu.brand = "Intel(R) Xeon(R) Processor";
  cpu.family = 6;
  cpu.model = 207;
  cpu.hypervisor = true;
  const std::string text = DescribeCpu(cpu);
  EXPECT_EQ(
      text.rfind("Intel(R) Xeon(R) Processor (GenuineIntel family 6 model 207, under a hypervisor)",
                 0),
      0u)
      << text;
  cpu.hypervisor = false;
  cpu.brand.clear();
  EXPECT_EQ(DescribeCpu(cpu).rfind("unnamed processor (GenuineIntel family 6 model 207)", 0), 0u);
}

}  // namespace
}  // namespace k3::base
