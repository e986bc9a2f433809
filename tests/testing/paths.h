// Where tests find their inputs: the shared reference data (../shared, or $K3_SHARED_DIR), the npm
// peers (tools/peers), and helpers to read JSONL fixtures.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace k3::testing {

std::string SharedDir();
std::string PeersDir();
std::string SourceDir();
std::string BinaryDir();
// Whole file contents; aborts the test binary (with the path) when unreadable.
std::string ReadFileOrDie(const std::string& path);
// One JSON value per non-empty line.
std::vector<nlohmann::json> ReadJsonLines(const std::string& path);

}  // namespace k3::testing
