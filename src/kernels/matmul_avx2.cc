// The AVX2 + FMA + F16C MatMul kernels: the shared drivers (matmul_simd.h) over the Avx2 traits
// (matmul_vec_avx2.h). Compiled with those flags (CMakeLists.txt) and reached only through
// Avx2Kernels(), after matmul.cc's CPU check.
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_simd.h"
#include "kernels/matmul_vec_avx2.h"

namespace k3::kernels::detail {
namespace {

constexpr IsaKernels kKernels = MakeIsaKernels<Avx2>();

}  // namespace

const IsaKernels& Avx2Kernels() { return kKernels; }

}  // namespace k3::kernels::detail
