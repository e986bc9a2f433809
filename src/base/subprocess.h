// A child process (POSIX fork + execv) with its stdout and stderr sent to files, for tools that
// drive other programs (k3 sweep runs k3 serve once per grid point). Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "base/result.h"

namespace k3::base {

struct SubprocessOptions {
  std::string program;            // the executable's path (execv: no PATH search)
  std::vector<std::string> argv;  // argv[0] first; empty: {program}
  std::string stdout_path;        // created or truncated; empty: inherit ours
  std::string stderr_path;        // the same
};

class Subprocess {
 public:
  // Forks and execs. NOT_FOUND when an output file cannot be created; UNAVAILABLE when fork
  // fails. A program that cannot be executed exits with status 127.
  static Result<Subprocess> Start(const SubprocessOptions& options);

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  ~Subprocess();  // Stop()

  pid_t pid() const { return pid_; }
  const SubprocessOptions& options() const { return options_; }

  // Whether the child has exited; reaps it without blocking.
  bool Exited();
  // Waits up to `timeout` for the exit; true when it has exited.
  bool Wait(std::chrono::milliseconds timeout);
  // Once exited: its exit status, or 128 + the signal that ended it.
  std::optional<int> exit_code() const { return exit_code_; }

  // Polls the stdout file every `poll` until `pattern` matches its whole text so far, and returns
  // the first capture group (the whole match when the pattern has none). FAILED_PRECONDITION when
  // the child exits first (or has no stdout file), UNAVAILABLE after `timeout`.
  Result<std::string> WaitForOutput(
      const std::regex& pattern, std::chrono::milliseconds timeout,
      std::chrono::milliseconds poll = std::chrono::milliseconds(100));

  // SIGTERM, then SIGKILL if it has not exited after `grace`; waits for the exit. Idempotent.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

 private:
  Subprocess(pid_t pid, SubprocessOptions options) : pid_(pid), options_(std::move(options)) {}
  void Reaped(int wait_status);

  pid_t pid_ = -1;  // -1: moved from, or exited and reaped
  SubprocessOptions options_;
  std::optional<int> exit_code_;
};

}  // namespace k3::base
