// Status: the value form of a recoverable failure (bad input, bad file, IO, exhausted resources).
// Programmer errors use K3_CHECK instead (check.h); our code throws no exceptions.
// Thread-compatible value type.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace k3::base {

enum class StatusCode {
  kOk,                  // success
  kInvalidArgument,     // the caller's input is wrong (HTTP 400)
  kNotFound,            // a named thing does not exist (404)
  kOutOfRange,          // an index or id outside the valid set (400)
  kFailedPrecondition,  // the system is not in a state to do this (400)
  kResourceExhausted,   // out of memory, blocks or queue space (429)
  kUnavailable,         // temporarily cannot serve (503)
  kCancelled,           // the caller went away (499)
  kDataLoss,            // a file is truncated or corrupt
  kUnimplemented,       // a feature we do not support (yet)
  kInternal,            // a bug or an unexpected library failure (500)
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;
  // Prefixes the message with context: "loading vocab: <message>".
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}

}  // namespace k3::base

// Returns early from a function returning Status or Result<T> when `expr` is not OK.
#define K3_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::k3::base::Status k3_status_ = (expr);  \
    if (!k3_status_.ok()) return k3_status_; \
  } while (false)
