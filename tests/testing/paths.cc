#include "testing/paths.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace k3::testing {

std::string SharedDir() {
  if (const char* env = std::getenv("K3_SHARED_DIR"); env && *env) return env;
  return K3_SHARED_DIR;
}
std::string PeersDir() { return K3_PEERS_DIR; }
std::string SourceDir() { return K3_SOURCE_DIR; }
std::string BinaryDir() { return K3_BINARY_DIR; }

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read test input %s\n", path.c_str());
    std::abort();
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(ReadFileOrDie(path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

}  // namespace k3::testing
