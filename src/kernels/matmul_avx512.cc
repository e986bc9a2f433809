// The AVX-512 (F, BW, VL) MatMul kernels: the shared drivers (matmul_simd.h) over the Avx512
// traits (matmul_vec_avx512.h). Compiled with those flags (CMakeLists.txt) and reached only
// through Avx512Kernels(), after matmul.cc's CPU check.
#include "kernels/matmul_kernels.h"
#include "kernels/matmul_simd.h"
#include "kernels/matmul_vec_avx512.h"

namespace k3::kernels::detail {
namespace {

constexpr IsaKernels kKernels = MakeIsaKernels<Avx512>();

}  // namespace

const IsaKernels& Avx512Kernels() { return kKernels; }

}  // namespace k3::kernels::detail
