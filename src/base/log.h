// Line-oriented logging to stderr: `K3_LOG(kInfo) << "loaded " << n << " tokens";`
// Output: "I 2026-11-29 15:52:01.123 file.cc:12] message". Each line is written with one call, so
// lines from different threads never interleave. Thread-safe.
#pragma once

#include <sstream>
#include <string_view>

namespace k3::base {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below this level are dropped (default kInfo). Set by apps/ from flags only.
void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();
// Parses "debug", "info", "warning", "error"; false on anything else.
bool ParseLogLevel(std::string_view text, LogLevel* level);

class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  template <typename T>
  LogMessage& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

struct LogVoidify {
  void operator&(const LogMessage&) {}
};

}  // namespace k3::base

#define K3_LOG(level)                                       \
  (::k3::base::LogLevel::level < ::k3::base::MinLogLevel()) \
      ? (void)0                                             \
      : ::k3::base::LogVoidify() &                          \
            ::k3::base::LogMessage(::k3::base::LogLevel::level, __FILE__, __LINE__)
