// Runs every op case of backend_conformance.h against every backend built here: CpuBackend on
// the calling thread and on a 3-thread pool (the slot-scratch paths). A new backend adds one
// factory to kBackends.
#include "kernels/backend_conformance.h"

#include <gtest/gtest.h>

#include <memory>

#include "base/thread_pool.h"
#include "kernels/cpu_backend.h"
#include "kernels/reference/reference_backend.h"

namespace k3::kernels::conformance {

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, Tolerance tol,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isinf(w) && g == w) continue;
    if (std::isnan(w) && std::isnan(g)) continue;
    if (!(std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w))) {
      ADD_FAILURE() << what << ": element " << i << " got " << g << " want " << w << " (atol "
                    << tol.atol << ", rtol " << tol.rtol << ")";
      if (++reported == 5) return;
    }
  }
}

std::vector<float> Normal(std::mt19937& rng, size_t n, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> out(n);
  for (float& x : out) x = normal(rng);
  return out;
}

std::vector<float> Uniform(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = uniform(rng);
  return out;
}

namespace {

struct BackendFactory {
  const char* name;
  std::function<std::unique_ptr<Backend>()> make;
};

base::ThreadPool& Pool() {
  static base::ThreadPool pool(3);
  return pool;
}

const std::vector<BackendFactory>& Backends() {
  static const std::vector<BackendFactory> backends = {
      {"CpuSerial", [] { return std::make_unique<CpuBackend>(nullptr); }},
      {"CpuPool3", [] { return std::make_unique<CpuBackend>(&Pool()); }},
  };
  return backends;
}

std::vector<OpCase> Cases() {
  std::vector<OpCase> cases = AllOpCases();
  for (OpCase& c : LayerOpCases()) cases.push_back(std::move(c));
  for (OpCase& c : MlaOpCases()) cases.push_back(std::move(c));
  return cases;
}

class BackendConformance : public ::testing::TestWithParam<std::tuple<size_t, size_t>> {};

TEST_P(BackendConformance, MatchesReference) {
  const auto [backend_index, case_index] = GetParam();
  std::unique_ptr<Backend> backend = Backends()[backend_index].make();
  reference::ReferenceBackend oracle;
  Workspace backend_ws = backend->MakeWorkspace();
  Workspace oracle_ws = oracle.MakeWorkspace();
  std::mt19937 rng(1234 + static_cast<uint32_t>(case_index));
  CaseEnv env{*backend, oracle, backend_ws, oracle_ws, rng};
  Cases()[case_index].run(env);
}

INSTANTIATE_TEST_SUITE_P(AllOps, BackendConformance,
                         ::testing::Combine(::testing::Range<size_t>(0, Backends().size()),
                                            ::testing::Range<size_t>(0, Cases().size())),
                         [](const ::testing::TestParamInfo<std::tuple<size_t, size_t>>& info) {
                           return std::string(Backends()[std::get<0>(info.param)].name) + "_" +
                                  Cases()[std::get<1>(info.param)].name;
                         });

// An empty state or cache range may come with null pointers (a model without KDA layers copies 0
// bytes of state); memcpy would be undefined there, UBSan stops the process.
TEST(BackendConformance, EmptyCopiesWithNullPointersAreNoOps) {
  for (const auto& entry : Backends()) {
    std::unique_ptr<Backend> backend = entry.make();
    backend->Copy(nullptr, nullptr, 0);
    backend->CopyToDevice(nullptr, nullptr, 0);
    backend->CopyToHost(nullptr, nullptr, 0);
    backend->Zero(nullptr, 0);
  }
  reference::ReferenceBackend oracle;
  oracle.Copy(nullptr, nullptr, 0);
  oracle.Zero(nullptr, 0);
}

TEST(BackendConformance, EveryCaseHasAUniqueName) {
  std::set<std::string> names;
  for (const OpCase& c : Cases()) EXPECT_TRUE(names.insert(c.name).second) << c.name;
}

}  // namespace
}  // namespace k3::kernels::conformance
