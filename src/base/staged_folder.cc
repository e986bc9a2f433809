#include "base/staged_folder.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace k3::base {
namespace {

namespace fs = std::filesystem;

struct RemoveOnExit {
  fs::path path;
  ~RemoveOnExit() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

Status MoveInto(const fs::path& from, const fs::path& dir) {
  std::error_code ec;
  fs::rename(from, dir / from.filename(), ec);
  if (ec) return Internal("cannot move " + from.filename().string() + " into " + dir.string());
  return Status::Ok();
}

}  // namespace

Status WriteFileBytes(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Internal("cannot write " + path.string());
  return Status::Ok();
}

Result<std::string> ReadFileBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status PublishStagedFolder(const fs::path& dir, std::string_view marker,
                           const std::function<Status(const fs::path&)>& write_files) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir.string() + ": " + ec.message());
  const auto nonce = std::chrono::steady_clock::now().time_since_epoch().count();
  RemoveOnExit staging{dir /
                       (".staging-" + std::to_string(getpid()) + "-" + std::to_string(nonce))};
  fs::create_directory(staging.path, ec);
  if (ec) return Internal("cannot create " + staging.path.string() + ": " + ec.message());
  K3_RETURN_IF_ERROR(write_files(staging.path));
  if (!fs::exists(staging.path / marker)) {
    return Internal("staged folder lacks its marker " + std::string(marker));
  }
  for (const auto& entry : fs::directory_iterator(staging.path)) {
    if (entry.path().filename() == marker) continue;
    K3_RETURN_IF_ERROR(MoveInto(entry.path(), dir));
  }
  return MoveInto(staging.path / marker, dir);
}

}  // namespace k3::base
