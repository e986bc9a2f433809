// Starting and stopping a `k3 serve` child for `k3 sweep`: the child's stdout and stderr go to
// files in the work folder, and its address is read from the "listening on http://..." line.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"

namespace k3::app {

class ServeChild {
 public:
  // Runs this binary (/proc/self/exe) with `args` (e.g. {"serve", "--port", "0", ...}); waits up
  // to `timeout` for the address. The logs are `log_prefix`.out / .log.
  static base::Result<ServeChild> Start(const std::vector<std::string>& args,
                                        const std::string& log_prefix,
                                        std::chrono::seconds timeout);
  ServeChild(ServeChild&& other) noexcept;
  ServeChild& operator=(ServeChild&&) = delete;
  ~ServeChild();  // Stop()

  const std::string& url() const { return url_; }
  // SIGTERM, then SIGKILL after 10 s; waits for the exit. Idempotent.
  void Stop();

 private:
  ServeChild(pid_t pid, std::string url) : pid_(pid), url_(std::move(url)) {}
  pid_t pid_ = -1;
  std::string url_;
};

}  // namespace k3::app
