// Result<T>: a T or the Status saying why there is none (std::expected is C++23; GCC 12 in C++20
// mode lacks it). Accessing the value of a failed Result is a programmer error and aborts.
#pragma once

#include <utility>
#include <variant>

#include "base/check.h"
#include "base/status.h"

namespace k3::base {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : data_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    K3_CHECK(!std::get<Status>(data_).ok()) << "Result constructed from an OK status";
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(data_); }

  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->Checked(); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->Checked(); }

 private:
  T& Checked() {
    K3_CHECK(ok()) << "value() of a failed Result: " << std::get<Status>(data_).ToString();
    return std::get<T>(data_);
  }
  std::variant<T, Status> data_;
};

}  // namespace k3::base

#define K3_CONCAT_INNER_(a, b) a##b
#define K3_CONCAT_(a, b) K3_CONCAT_INNER_(a, b)
// K3_ASSIGN_OR_RETURN(auto x, MakeX()): declares x from a Result or returns its Status.
#define K3_ASSIGN_OR_RETURN(lhs, expr) \
  K3_ASSIGN_OR_RETURN_IMPL_(K3_CONCAT_(k3_result_, __LINE__), lhs, expr)
#define K3_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
