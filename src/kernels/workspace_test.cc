#include "kernels/workspace.h"

#include <gtest/gtest.h>

#include "base/thread_pool.h"

namespace k3::kernels {
namespace {

// Whichever slot runs the big task in a step, every slot is ready for it after Reset.
TEST(WorkspaceTest, SlotsAreSizedToTheLargestPeakOfAnySlot) {
  Workspace ws(3);
  {
    base::ArenaMark mark(ws.slot(1));
    ws.slot(1).Allocate<float>(100000);
  }
  ws.slot(0).Allocate<float>(10);
  ws.Reset();
  const int64_t warm = ws.blocks_allocated();
  for (size_t slot = 0; slot < ws.num_slots(); ++slot) {
    {
      base::ArenaMark mark(ws.slot(slot));
      ws.slot(slot).Allocate<float>(100000);
    }
    ws.Reset();
  }
  EXPECT_EQ(ws.blocks_allocated(), warm);
}

}  // namespace
}  // namespace k3::kernels
