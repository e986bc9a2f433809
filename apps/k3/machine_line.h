// The machine a figure or a log came from, in one line (base::DescribeCpu and the product paths
// MatMul runs here).
#pragma once

#include <cstddef>
#include <string>

namespace k3::app {

// "machine: <processor> (vendor family F model M[, under a hypervisor]), L3 N MiB, T threads;
// kernels: matmul avx512 (+vbmi fp8), int8 dots avx512-vnni, bf16 avx512-bf16": the line each
// `k3 bench` table is printed under, so a figure names the machine it came from, and the line
// `k3 serve` logs at start.
std::string MachineLine(size_t threads);

}  // namespace k3::app
