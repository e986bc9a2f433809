// Subprocess on /bin/sh commands: output files, exit codes, waiting for output, timeouts, stopping
// (SIGTERM, and SIGKILL for a child that ignores it), and cleanup when the object goes away.
#include "base/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace k3::base {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

class SubprocessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("k3_subprocess_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // sh -c SCRIPT with stdout/stderr in the test folder.
  SubprocessOptions Shell(const std::string& script) const {
    SubprocessOptions o;
    o.program = "/bin/sh";
    o.argv = {"sh", "-c", script};
    o.stdout_path = (dir_ / "out").string();
    o.stderr_path = (dir_ / "err").string();
    return o;
  }
  std::string Read(const char* name) const {
    std::ifstream in(dir_ / name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Whether a process with this id still exists (a reaped child does not).
  static bool Alive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

  fs::path dir_;
};

TEST_F(SubprocessTest, RedirectsOutputAndReportsTheExitCode) {
  auto child = Subprocess::Start(Shell("echo hello; echo oops >&2; exit 3"));
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  ASSERT_TRUE(child->Wait(seconds(10)));
  EXPECT_EQ(child->exit_code(), 3);
  EXPECT_EQ(Read("out"), "hello\n");
  EXPECT_EQ(Read("err"), "oops\n");
}

TEST_F(SubprocessTest, ProgramThatCannotRunExitsWith127) {
  SubprocessOptions o = Shell("");
  o.program = (dir_ / "no-such-program").string();
  auto child = Subprocess::Start(o);
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->Wait(seconds(10)));
  EXPECT_EQ(child->exit_code(), 127);
}

TEST_F(SubprocessTest, UnwritableOutputFileFailsToStart) {
  SubprocessOptions o = Shell("true");
  o.stdout_path = (dir_ / "missing-folder" / "out").string();
  auto child = Subprocess::Start(o);
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), StatusCode::kNotFound);
  EXPECT_NE(child.status().message().find("missing-folder"), std::string::npos);
}

TEST_F(SubprocessTest, WaitForOutputReturnsTheCaptureGroup) {
  auto child =
      Subprocess::Start(Shell("sleep 0.2; echo 'listening on http://127.0.0.1:4242'; "
                              "exec sleep 30"));
  ASSERT_TRUE(child.ok());
  auto url = child->WaitForOutput(std::regex("listening on (http://[0-9.]+:[0-9]+)"), seconds(10),
                                  milliseconds(20));
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(*url, "http://127.0.0.1:4242");
  EXPECT_FALSE(child->Exited());
  const pid_t pid = child->pid();
  child->Stop(seconds(10));  // sleep dies of SIGTERM
  EXPECT_TRUE(child->Exited());
  EXPECT_EQ(child->exit_code(), 128 + SIGTERM);
  EXPECT_FALSE(Alive(pid));
}

TEST_F(SubprocessTest, WaitForOutputFailsWhenTheChildExitsFirst) {
  auto child = Subprocess::Start(Shell("echo starting; exit 1"));
  ASSERT_TRUE(child.ok());
  auto url = child->WaitForOutput(std::regex("listening"), seconds(10), milliseconds(20));
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(url.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(child->exit_code(), 1);
}

TEST_F(SubprocessTest, WaitForOutputTimesOut) {
  auto child = Subprocess::Start(Shell("exec sleep 30"));
  ASSERT_TRUE(child.ok());
  const auto start = std::chrono::steady_clock::now();
  auto url = child->WaitForOutput(std::regex("listening"), milliseconds(300), milliseconds(20));
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(url.status().code(), StatusCode::kUnavailable);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(300));
  EXPECT_FALSE(child->Exited());
  EXPECT_FALSE(child->Wait(milliseconds(50)));  // a plain wait times out the same way
}

TEST_F(SubprocessTest, StopEscalatesToSigkillForAChildIgnoringSigterm) {
  auto child = Subprocess::Start(Shell("trap '' TERM; echo armed; while :; do sleep 0.05; done"));
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->WaitForOutput(std::regex("armed"), seconds(10), milliseconds(20)).ok());
  const auto start = std::chrono::steady_clock::now();
  child->Stop(milliseconds(300));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(300));
  EXPECT_EQ(child->exit_code(), 128 + SIGKILL);
  child->Stop();  // idempotent
  EXPECT_EQ(child->exit_code(), 128 + SIGKILL);
}

TEST_F(SubprocessTest, DestructorStopsARunningChild) {
  pid_t pid = -1;
  {
    auto child = Subprocess::Start(Shell("exec sleep 30"));
    ASSERT_TRUE(child.ok());
    pid = child->pid();
    EXPECT_TRUE(Alive(pid));
  }
  EXPECT_FALSE(Alive(pid));
}

TEST_F(SubprocessTest, MovedFromObjectOwnsNothing) {
  auto child = Subprocess::Start(Shell("exec sleep 30"));
  ASSERT_TRUE(child.ok());
  const pid_t pid = child->pid();
  Subprocess moved = std::move(*child);
  EXPECT_EQ(moved.pid(), pid);
  EXPECT_TRUE(child->Exited());  // the moved-from object has no child
  EXPECT_TRUE(Alive(pid));
  moved.Stop();
  EXPECT_FALSE(Alive(pid));
}

}  // namespace
}  // namespace k3::base
