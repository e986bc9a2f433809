// The Kimi Delta Attention recurrence for one head (spec/model.md §2.1, §2.4). The state S is
// [K][V] float32 and decays along the key channel: S[k][:] *= exp(g[k]). Inputs: q already
// L2-normalised and multiplied by K^-0.5, k L2-normalised, g the per-key log decay (<= 0),
// beta in (0, 1). Outputs use the state after the token's update.
#pragma once

#include <cstdint>

namespace k3::model {

// One token: S <- diag(exp(g)) S;  S <- S + beta k (v - S^T k)^T;  o = S^T q.
void KdaRecurrentStep(const float* q, const float* k, const float* v, const float* g, float beta,
                      int key_dim, int value_dim, float* state, float* o);

// `tokens` consecutive tokens in the chunked (WY) form, processed `chunk` tokens at a time; gives
// the same outputs and final state as `tokens` recurrent steps. Rows are strided: token t of q
// starts at q + t * row_stride (likewise k, v, g, o); beta[t * beta_stride].
struct KdaChunkInput {
  const float* q;
  const float* k;
  const float* v;
  const float* g;
  const float* beta;
  int64_t row_stride;
  int64_t beta_stride;
  int64_t tokens;
};
void KdaChunked(const KdaChunkInput& in, int key_dim, int value_dim, int chunk, float* state,
                float* o);

}  // namespace k3::model
