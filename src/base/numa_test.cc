// NUMA topology parsing against hand-made sysfs trees, and binding checked through the kernel's
// own view (sched_getaffinity, get_mempolicy) in a child process.
#include "base/numa.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace k3::base {
namespace {

namespace fs = std::filesystem;

TEST(CpuList, ParsesTheKernelFormat) {
  EXPECT_EQ(*ParseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseCpuList("5"), (std::vector<int>{5}));
  EXPECT_TRUE(ParseCpuList("\n")->empty());
  for (const char* bad : {"3-1", "a", "1,", ",1", "1--2", "-1", "1-", "0-99999", "1 2"}) {
    EXPECT_FALSE(ParseCpuList(bad).ok()) << bad;
  }
}

class SysfsTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("numa-" + std::to_string(getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Node(const std::string& name, const std::string& cpulist) {
    fs::create_directories(root_ / name);
    std::ofstream(root_ / name / "cpulist") << cpulist;
  }
  fs::path root_;
};

TEST_F(SysfsTree, TwoSocketsAndAMemoryOnlyNode) {
  Node("node1", "8-15\n");
  Node("node0", "0-7\n");
  Node("node2", "\n");  // memory only (CXL): no CPUs, not a place to run
  fs::create_directories(root_ / "power");
  std::ofstream(root_ / "possible") << "0-2\n";
  auto nodes = ReadNumaNodes(root_);
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].id, 0);
  EXPECT_EQ((*nodes)[0].cpus.size(), 8u);
  EXPECT_EQ((*nodes)[1].id, 1);
  EXPECT_EQ((*nodes)[1].cpus.front(), 8);
}

TEST_F(SysfsTree, MalformedCpuListIsAnError) {
  Node("node0", "0-x\n");
  auto nodes = ReadNumaNodes(root_);
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.status().message().find("0-x"), std::string::npos);
}

TEST_F(SysfsTree, NoNumaFolderIsOneNodeOfTheAllowedCpus) {
  auto nodes = ReadNumaNodes(root_ / "absent");
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].cpus.size(), AvailableCpus());
}

TEST(NumaBind, UnknownNodeNamesTheNodesThereAre) {
  const Status s = BindToNumaNode(7, {{0, {0, 1}}, {1, {2, 3}}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("0, 1"), std::string::npos) << s.ToString();
}

// This machine's first node, bound in a child: the kernel then reports exactly that node's CPUs
// as the affinity, threads started afterwards inherit it, and the memory policy prefers the node.
TEST(NumaBind, BindsCpusAndMemoryPolicyOfTheRealFirstNode) {
  auto nodes = ReadNumaNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_FALSE(nodes->empty());
  const NumaNode node = nodes->front();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!BindToNumaNode(node.id, *nodes).ok()) _exit(10);
    if (AvailableCpus() != node.cpus.size()) _exit(11);
    int mode = -1;
    unsigned long mask[16] = {};
    if (syscall(SYS_get_mempolicy, &mode, mask, 16 * 8 * sizeof(unsigned long), nullptr, 0) != 0) {
      _exit(12);
    }
    if (mode != 1 /* MPOL_PREFERRED */) _exit(13);
    if ((mask[node.id / 64] & (1ul << (node.id % 64))) == 0) _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 bind failed, 11 affinity, 12-14 memory policy";
}

}  // namespace
}  // namespace k3::base
