#include "http/access_log.h"

#include <algorithm>
#include <cstdio>

namespace k3::http {

void RequestStats::NoteFirstToken() {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  int64_t unset = -1;
  first_token_ns.compare_exchange_strong(unset, ns);  // only the first one counts
}

void RequestStats::NoteChoice(int64_t prompt, int64_t completion) {
  prompt_tokens.store(prompt);
  int64_t seen = completion_tokens.load();
  const int64_t base = seen < 0 ? 0 : seen;
  while (!completion_tokens.compare_exchange_weak(seen, base + completion)) {
  }
}

std::string FormatAccessLine(const std::string& method, const std::string& path, int status,
                             const RequestStats& stats, std::chrono::steady_clock::time_point end) {
  auto ms = [](int64_t ns) { return static_cast<double>(ns) / 1e6; };
  const int64_t total_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(end - stats.start).count();
  std::string line = method + " " + path + " " + std::to_string(status);
  char part[96];
  if (const int64_t p = stats.prompt_tokens.load(); p >= 0) {
    std::snprintf(part, sizeof part, " prompt=%lld completion=%lld", static_cast<long long>(p),
                  static_cast<long long>(std::max<int64_t>(0, stats.completion_tokens.load())));
    line += part;
  }
  if (const int64_t t = stats.first_token_ns.load(); t >= 0) {
    std::snprintf(part, sizeof part, " ttft=%.1fms", ms(t));
    line += part;
  }
  std::snprintf(part, sizeof part, " %.1fms", ms(total_ns));
  return line + part;
}

}  // namespace k3::http
