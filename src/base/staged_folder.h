// Folders written as a unit: a reader either finds every file complete or finds the folder
// incomplete, never a half-written file (the demo checkpoints `k3 serve` writes on first start).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/status.h"

namespace k3::base {

// Writes `bytes` to `path` (created or truncated).
Status WriteFileBytes(const std::filesystem::path& path, std::string_view bytes);

// The whole content of `path`.
Result<std::string> ReadFileBytes(const std::filesystem::path& path);

// Creates `dir`, runs `write_files` on a private staging folder inside it (unique per process and
// call, so concurrent writers never share one), then renames every staged file into `dir` with
// `marker` (a file write_files must create) renamed last: a reader that finds the marker finds the
// other files complete. rename() replaces atomically, so a process that mapped an older copy keeps
// its bytes. The staging folder is removed however this returns.
Status PublishStagedFolder(const std::filesystem::path& dir, std::string_view marker,
                           const std::function<Status(const std::filesystem::path&)>& write_files);

}  // namespace k3::base
