// The backend conformance harness (llama.cpp's test-backend-ops idea): a table of op cases, each
// of which draws random operands over several shapes (odd tails included: sizes that are not
// multiples of 8, 16 or 32), runs the op on the backend under test and on the scalar
// ReferenceBackend, and compares the outputs within the case's stated tolerance. Operands travel
// through the backends' own memory API (Allocate, CopyToDevice, CopyToHost), so a device backend
// plugs in by adding a factory to backend_conformance_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.h"

namespace k3::kernels::conformance {

// A host array mirrored into one backend's memory.
template <typename T>
class DeviceArray {
 public:
  DeviceArray(Backend& backend, const std::vector<T>& host)
      : backend_(&backend),
        buffer_(backend.Allocate(std::max<size_t>(host.size(), 1) * sizeof(T))),
        size_(host.size()) {
    if (size_ > 0) backend.CopyToDevice(buffer_.data(), host.data(), size_ * sizeof(T));
  }
  T* get() const { return buffer_.as<T>(); }
  std::vector<T> Download() const {
    std::vector<T> host(size_);
    if (size_ > 0) backend_->CopyToHost(host.data(), buffer_.data(), size_ * sizeof(T));
    return host;
  }

 private:
  Backend* backend_;
  DeviceBuffer buffer_;
  size_t size_;
};

// What a case gets: the backend under test, the oracle, a seeded generator and scratch for each.
struct CaseEnv {
  Backend& backend;
  Backend& oracle;
  Workspace& backend_ws;
  Workspace& oracle_ws;
  std::mt19937& rng;
};

struct OpCase {
  const char* name;
  std::function<void(CaseEnv&)> run;
};

// Every case, in a fixed order (backend_conformance_cases*.cc).
std::vector<OpCase> AllOpCases();
std::vector<OpCase> LayerOpCases();
std::vector<OpCase> MlaOpCases();  // paged MLA, per latent cache dtype

// |got - want| <= atol + rtol * |want| elementwise (and equal infinities); failures name `what`.
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};
void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, Tolerance tol,
                const std::string& what);
template <typename T>
void ExpectEqual(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": element " << i << " differs";
      return;
    }
  }
}

std::vector<float> Normal(std::mt19937& rng, size_t n, float scale = 1.0f);
std::vector<float> Uniform(std::mt19937& rng, size_t n, float lo, float hi);

}  // namespace k3::kernels::conformance
