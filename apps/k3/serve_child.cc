#include "apps/k3/serve_child.h"

#include <chrono>
#include <regex>

namespace k3::app {

base::Result<std::pair<base::Subprocess, std::string>> StartServe(std::vector<std::string> args,
                                                                  const std::string& log_prefix) {
  base::SubprocessOptions options;
  options.program = "/proc/self/exe";
  options.argv = {"k3"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.stdout_path = log_prefix + ".out";
  options.stderr_path = log_prefix + ".log";
  auto child = base::Subprocess::Start(options);
  if (!child.ok()) return child.status();
  const std::regex listening("listening on (http://[0-9.]+:[0-9]+)");
  auto url = child->WaitForOutput(listening, std::chrono::seconds(180));
  if (url.ok()) return std::make_pair(std::move(*child), std::move(*url));
  const bool exited = url.status().code() == base::StatusCode::kFailedPrecondition;
  child->Stop(std::chrono::seconds(0));  // SIGTERM then at once SIGKILL, as a hung start deserves
  return base::Status(
      base::StatusCode::kUnavailable,
      std::string(exited ? "k3 serve exited before listening" : "k3 serve did not start") +
          "; see " + options.stderr_path);
}

}  // namespace k3::app
