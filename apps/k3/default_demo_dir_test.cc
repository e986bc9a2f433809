// DefaultDemoDir reads XDG_CACHE_HOME, then HOME (the folder rules are model::testing's
// DemoCacheDir, tested beside it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "apps/k3/demo_checkpoint.h"

namespace k3::app {
namespace {

namespace fs = std::filesystem;

// Restores one environment variable when it goes out of scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(DefaultDemoDirTest, UsesXdgCacheHomeThenHome) {
  const fs::path root =
      fs::temp_directory_path() / ("k3_demo_dir_test_" + std::to_string(getpid()));
  {
    ScopedEnv home("HOME", (root / "home").string());
    ScopedEnv xdg("XDG_CACHE_HOME", (root / "xdg").string());
    EXPECT_EQ(DefaultDemoDir(), root / "xdg" / "k3serve" / "demo-v3");
    ScopedEnv relative("XDG_CACHE_HOME", "relative");  // the XDG spec ignores relative paths
    EXPECT_EQ(DefaultDemoDir(), root / "home" / ".cache" / "k3serve" / "demo-v3");
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace k3::app
