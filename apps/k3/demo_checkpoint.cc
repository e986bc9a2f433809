#include "apps/k3/demo_checkpoint.h"

#include <cstdlib>
#include <system_error>

namespace k3::app {

model::testing::DemoDirEnvironment DemoEnvironment() {
  model::testing::DemoDirEnvironment env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME")) env.xdg_cache_home = xdg;
  if (const char* home = std::getenv("HOME")) env.home = home;
  std::error_code ec;
  env.temp = std::filesystem::temp_directory_path(ec);
  if (ec) env.temp = "/tmp";
  return env;
}

std::filesystem::path DefaultDemoDir() { return model::testing::DemoCacheDir(DemoEnvironment()); }

base::Result<std::string> FolderOrDemo(const std::string& folder) {
  if (!folder.empty()) return folder;
  std::string dir = DefaultDemoDir().string();
  K3_RETURN_IF_ERROR(model::testing::WriteDemoCheckpoint(dir));
  return dir;
}

}  // namespace k3::app
