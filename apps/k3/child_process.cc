#include "apps/k3/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace k3::app {
namespace {

bool WaitExit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

base::Result<ServeChild> ServeChild::Start(const std::vector<std::string>& args,
                                           const std::string& log_prefix,
                                           std::chrono::seconds timeout) {
  const std::string out_path = log_prefix + ".out", err_path = log_prefix + ".log";
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || err < 0) return base::NotFound("cannot write " + out_path);
  std::vector<char*> argv;
  std::string self = "k3";
  argv.push_back(self.data());
  std::vector<std::string> copies = args;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(out);
  close(err);
  if (pid < 0) return base::Status(base::StatusCode::kUnavailable, "fork failed");
  const std::regex listening("listening on (http://[0-9.]+:[0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(out_path);
    std::stringstream text;
    text << in.rdbuf();
    std::smatch match;
    const std::string s = text.str();
    if (std::regex_search(s, match, listening)) return ServeChild(pid, match[1]);
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return base::Status(base::StatusCode::kUnavailable,
                          "k3 serve exited before listening; see " + err_path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid, SIGKILL);
  WaitExit(pid, std::chrono::seconds(5));
  return base::Status(base::StatusCode::kUnavailable, "k3 serve did not start; see " + err_path);
}

ServeChild::ServeChild(ServeChild&& other) noexcept
    : pid_(other.pid_), url_(std::move(other.url_)) {
  other.pid_ = -1;
}

ServeChild::~ServeChild() { Stop(); }

void ServeChild::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  if (!WaitExit(pid_, std::chrono::seconds(10))) {
    kill(pid_, SIGKILL);
    WaitExit(pid_, std::chrono::seconds(5));
  }
  pid_ = -1;
}

}  // namespace k3::app
