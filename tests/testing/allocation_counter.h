// Counts every heap allocation of the process (all threads) between Start and Stop: global
// operator new (replaced in allocation_counter.cc) and, through the linker's --wrap, the C
// allocation functions our libraries call. Link the object library k3_allocation_counter (which
// carries the --wrap options) into a test binary to use it; one counting window at a time.
#pragma once

#include <cstdint>

namespace k3::testing {

void StartCountingAllocations();
// Allocations since StartCountingAllocations.
int64_t StopCountingAllocations();

}  // namespace k3::testing
