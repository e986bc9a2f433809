// What one step of a model must read and compute, for `k3 bench model`'s roofline: weight bytes
// by stored format and multiply-adds per token, with routed experts counted as the number of
// distinct experts a batch is expected to touch.
#pragma once

#include <cstdint>

#include "model/model.h"

namespace k3::app {

// Stored bytes of one weight matrix (data and scales).
int64_t MatrixBytes(const model::WeightMatrix& w);

// Weight bytes and multiply-adds one decode step reads for `batch` sequences: every dense matrix,
// and per MoE layer the expected number of distinct experts top_k picks out of E for `batch`
// tokens (uniform routing): E (1 - (1 - k/E)^batch).
// With `context` > 0 the bytes also count each sequence's own memory at that context: its latent
// cache entries read by every MLA layer (in `cache_dtype`), and its KDA recurrent and
// short-convolution states read and written back (fp32).
// int8_macs_per_token: the part of macs_per_token in products that run on integer dots
// (kernels::MatMulRunsInt8 at the expected tokens per call), bound by that instruction's peak.
struct StepCost {
  double bytes = 0, macs_per_token = 0, int8_macs_per_token = 0;
  double sequence_bytes = 0;  // the cache and state part of `bytes`
};
StepCost CostOfStep(const model::Model& m, int batch, int64_t context = 0,
                    kernels::LatentDtype cache_dtype = kernels::LatentDtype::kBf16);

}  // namespace k3::app
