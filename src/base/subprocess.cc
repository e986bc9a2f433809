#include "base/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace k3::base {
namespace {

// Opens `path` for the child's output (-1 when `path` is empty: inherit), O_CLOEXEC so that only
// the dup2'ed copy reaches the exec'ed program.
Result<int> OpenOutput(const std::string& path) {
  if (path.empty()) return -1;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return NotFound("cannot write " + path);
  return fd;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Result<Subprocess> Subprocess::Start(const SubprocessOptions& options) {
  auto out = OpenOutput(options.stdout_path);
  if (!out.ok()) return out.status();
  auto err = OpenOutput(options.stderr_path);
  if (!err.ok()) {
    if (*out >= 0) close(*out);
    return err.status();
  }
  // argv is built before fork: the child only calls async-signal-safe functions.
  std::vector<std::string> args = options.argv;
  if (args.empty()) args.push_back(options.program);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (*out >= 0) dup2(*out, STDOUT_FILENO);
    if (*err >= 0) dup2(*err, STDERR_FILENO);
    execv(options.program.c_str(), argv.data());
    _exit(127);
  }
  if (*out >= 0) close(*out);
  if (*err >= 0) close(*err);
  if (pid < 0) return Status(StatusCode::kUnavailable, "fork failed");
  return Subprocess(pid, options);
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(other.pid_), options_(std::move(other.options_)), exit_code_(other.exit_code_) {
  other.pid_ = -1;
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = other.pid_;
    options_ = std::move(other.options_);
    exit_code_ = other.exit_code_;
    other.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() { Stop(); }

void Subprocess::Reaped(int wait_status) {
  exit_code_ = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
  pid_ = -1;
}

bool Subprocess::Exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  const pid_t reaped = waitpid(pid_, &status, WNOHANG);
  if (reaped == 0 || (reaped < 0 && errno == EINTR)) return false;
  if (reaped == pid_) {
    Reaped(status);
  } else {
    pid_ = -1;  // ECHILD: reaped elsewhere; the exit code is unknown
  }
  return true;
}

bool Subprocess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Exited()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

Result<std::string> Subprocess::WaitForOutput(const std::regex& pattern,
                                              std::chrono::milliseconds timeout,
                                              std::chrono::milliseconds poll) {
  if (options_.stdout_path.empty()) {
    return Status(StatusCode::kFailedPrecondition, "the process has no stdout file");
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    // Exited() is read before the file, so output written just before the exit is still seen.
    const bool exited = Exited();
    const std::string text = ReadWholeFile(options_.stdout_path);
    std::smatch match;
    if (std::regex_search(text, match, pattern))
      return (match.size() > 1 ? match[1] : match[0]).str();
    if (exited) {
      return Status(StatusCode::kFailedPrecondition, options_.program + " exited (status " +
                                                         std::to_string(exit_code_.value_or(-1)) +
                                                         ") before its output matched");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(StatusCode::kUnavailable, options_.program + ": no matching output after " +
                                                  std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(poll);
  }
}

void Subprocess::Stop(std::chrono::milliseconds grace) {
  if (Exited()) return;
  kill(pid_, SIGTERM);
  if (Wait(grace)) return;
  kill(pid_, SIGKILL);
  // SIGKILL cannot be caught; a child still there after 5 s is stuck in the kernel and is left.
  if (!Wait(std::chrono::seconds(5))) pid_ = -1;
}

}  // namespace k3::base
