// K3_CHECK(cond) << "context": aborts with file:line and the message when an invariant is broken.
// For programmer errors only; never reachable from user input (that returns a Status).
// K3_DCHECK compiles to nothing in NDEBUG builds but still type-checks its operands.
#pragma once

#include <sstream>

namespace k3::base {

// Collects the streamed message and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

// Lets `K3_CHECK(x) << y` parse as a statement whose value is void.
struct CheckVoidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace k3::base

#define K3_CHECK(condition) \
  (condition)               \
      ? (void)0             \
      : ::k3::base::CheckVoidify() & ::k3::base::CheckFailure(__FILE__, __LINE__, #condition)

#ifdef NDEBUG
#define K3_DCHECK(condition) \
  true ? (void)0             \
       : ::k3::base::CheckVoidify() & ::k3::base::CheckFailure(__FILE__, __LINE__, #condition)
#else
#define K3_DCHECK(condition) K3_CHECK(condition)
#endif
