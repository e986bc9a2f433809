// Steady-state decode allocates nothing: for each family's tiny checkpoint, a batch of three
// sequences is prefilled, two decode steps warm the workspace up, and then every heap allocation
// of the whole process is counted over further decode steps of the same batch shape (threads of
// the pool included). Counted: global operator new/delete (replaced below) and, through the
// linker's --wrap, malloc/calloc/realloc/aligned_alloc/posix_memalign calls from our libraries
// (the arenas' and matmul's blocks included). Expected: zero.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <numeric>

#include "model/model.h"
#include "model/model_test_util.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};

void Count() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
}

}  // namespace

extern "C" {
void* __real_malloc(size_t size);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t size);
void* __real_aligned_alloc(size_t alignment, size_t size);
int __real_posix_memalign(void** p, size_t alignment, size_t size);

void* __wrap_malloc(size_t size) {
  Count();
  return __real_malloc(size);
}
void* __wrap_calloc(size_t n, size_t size) {
  Count();
  return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t size) {
  Count();
  return __real_realloc(p, size);
}
void* __wrap_aligned_alloc(size_t alignment, size_t size) {
  Count();
  return __real_aligned_alloc(alignment, size);
}
int __wrap_posix_memalign(void** p, size_t alignment, size_t size) {
  Count();
  return __real_posix_memalign(p, alignment, size);
}
}

// Replacements of the global allocation functions (the standard permits them); out of memory
// aborts, which is all a test needs.
namespace {
void* Allocate(size_t size, size_t alignment) {
  Count();
  void* p = alignment <= alignof(std::max_align_t)
                ? __real_malloc(size ? size : 1)
                : __real_aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) std::abort();
  return p;
}
}  // namespace

void* operator new(size_t size) { return Allocate(size, 0); }
void* operator new[](size_t size) { return Allocate(size, 0); }
void* operator new(size_t size, std::align_val_t a) { return Allocate(size, size_t(a)); }
void* operator new[](size_t size, std::align_val_t a) { return Allocate(size, size_t(a)); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return Allocate(size, 0); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return Allocate(size, 0); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace k3::model {
namespace {

class AllocationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AllocationTest, SteadyStateDecodeStepsAllocateNothing) {
  base::ThreadPool pool(2);
  auto loaded = Model::Load(testing::FamilyDir(GetParam()) + "/model", &pool);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Model& model = **loaded;
  const ModelConfig& c = model.config();
  constexpr int kSeqs = 3, kPageSize = 16, kPagesPerSeq = 4;
  KdaStatePool states(c, kSeqs, &model.backend());
  MlaCache cache(c, kSeqs * kPagesPerSeq, kPageSize, &model.backend());
  Workspace workspace = model.MakeWorkspace();
  ForwardResult result;
  std::vector<std::vector<int32_t>> pages(kSeqs), prompts(kSeqs);
  std::vector<int32_t> next(kSeqs);
  std::vector<int64_t> position(kSeqs);
  std::vector<SequenceInput> batch(kSeqs);
  for (int s = 0; s < kSeqs; ++s) {
    pages[s].resize(kPagesPerSeq);
    std::iota(pages[s].begin(), pages[s].end(), s * kPagesPerSeq);
    for (int t = 0; t < 5 + 7 * s; ++t) prompts[s].push_back((s * 31 + t * 7) % c.vocab);
    batch[s] = {prompts[s], 0, s, pages[s], 1};
    position[s] = static_cast<int64_t>(prompts[s].size());
  }
  ASSERT_TRUE(model.Forward(batch, {}, {states, cache, workspace}, &result).ok());
  auto decode = [&] {
    for (int s = 0; s < kSeqs; ++s) {
      next[s] = (position[s] * 13 + s) % c.vocab;
      batch[s] = {{&next[s], 1}, position[s]++, s, pages[s], 1};
    }
    return model.Forward(batch, {}, {states, cache, workspace}, &result).ok();
  };
  for (int warm = 0; warm < 2; ++warm) ASSERT_TRUE(decode());
  const int64_t blocks = workspace.blocks_allocated();
  allocations = 0;
  counting = true;
  bool ok = true;
  for (int step = 0; step < 8; ++step) ok = decode() && ok;
  counting = false;
  ASSERT_TRUE(ok);
  EXPECT_EQ(allocations.load(), 0) << "heap allocations in 8 steady-state decode steps";
  EXPECT_EQ(workspace.blocks_allocated(), blocks);
  EXPECT_EQ(result.rows, kSeqs);
  // The counter sees allocations: the convenience Forward makes a workspace per call.
  counting = true;
  ok = model.Forward(batch, {}, states, cache, &result).ok();
  counting = false;
  ASSERT_TRUE(ok);
  EXPECT_GT(allocations.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Families, AllocationTest, ::testing::Values("k3", "kimi_linear", "k2"));

}  // namespace
}  // namespace k3::model
