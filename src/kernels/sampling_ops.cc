// Row operations over vocabulary logits for samplers: grammar bitmasks, max/argmax, tempered
// exponentials, softmax and log-softmax. exp is vector_math.h's FastExp (2 ulp); anything below
// e^-87 of the row's max (masked -inf logits included) counts as exactly 0. Sums are in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu_ops.h"
#include "kernels/vector_math.h"
#include "kernels/vectorize.h"

namespace k3::kernels::cpu {
namespace {

constexpr float kCutoff = -87.0f;

K3_MULTIVERSION float RowMax(const float* x, int64_t n) {
  float lanes[16];
  std::fill(lanes, lanes + 16, x[0]);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  }
  float max = *std::max_element(lanes, lanes + 16);
  for (; i < n; ++i) max = std::max(max, x[i]);
  return max;
}

// exp(x - max) with the cutoff; returns the double sum of the outputs.
K3_MULTIVERSION double ShiftedExp(const float* x, int64_t n, float max, float scale, float* out) {
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) {
      const float shifted = (x[i + l] - max) * scale;
      const float p = FastExp(shifted);  // unconditional, so the select vectorises
      out[i + l] = shifted < kCutoff ? 0.0f : p;
      lanes[l] += out[i + l];
    }
  }
  double sum = 0.0;
  for (; i < n; ++i) {
    const float shifted = (x[i] - max) * scale;
    const float p = FastExp(shifted);
    out[i] = shifted < kCutoff ? 0.0f : p;
    sum += out[i];
  }
  for (double lane : lanes) sum += lane;
  return sum;
}

// The double sum of exp(x - max) with the cutoff, writing nothing (so log-softmax may run in
// place).
K3_MULTIVERSION double ShiftedExpSum(const float* x, int64_t n, float max) {
  double lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) {
      const float shifted = x[i + l] - max;
      const float p = FastExp(shifted);
      lanes[l] += shifted < kCutoff ? 0.0f : p;
    }
  }
  double sum = 0.0;
  for (; i < n; ++i) {
    const float shifted = x[i] - max;
    const float p = FastExp(shifted);
    sum += shifted < kCutoff ? 0.0f : p;
  }
  for (double lane : lanes) sum += lane;
  return sum;
}

}  // namespace

void ApplyTokenBitmask(const VocabRows& s, const uint64_t* bitmask, float* logits) {
  const int64_t words = s.mask_words();
  for (int64_t r = 0; r < s.rows; ++r) {
    const uint64_t* mask = bitmask + r * words;
    float* row = logits + r * s.vocab;
    for (int64_t t = 0; t < s.vocab; ++t) {
      if (((mask[t >> 6] >> (t & 63)) & 1) == 0) row[t] = -std::numeric_limits<float>::infinity();
    }
  }
}

void MaxArgmax(const VocabRows& s, const float* logits, float* max, int32_t* argmax) {
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row = logits + r * s.vocab;
    const float m = RowMax(row, s.vocab);
    int64_t idx = 0;
    while (idx + 1 < s.vocab && row[idx] != m) ++idx;
    max[r] = m;
    argmax[r] = static_cast<int32_t>(idx);
  }
}

void ScaledExp(const VocabRows& s, const float* logits, const float* max, float inv_temperature,
               float* out) {
  for (int64_t r = 0; r < s.rows; ++r) {
    ShiftedExp(logits + r * s.vocab, s.vocab, max[r], inv_temperature, out + r * s.vocab);
  }
}

void Softmax(const VocabRows& s, const float* x, float* out) {
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row = x + r * s.vocab;
    float* o = out + r * s.vocab;
    const double sum = ShiftedExp(row, s.vocab, RowMax(row, s.vocab), 1.0f, o);
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < s.vocab; ++i) o[i] *= inv;
  }
}

void LogSoftmax(const VocabRows& s, const float* x, float* out) {
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row = x + r * s.vocab;
    float* o = out + r * s.vocab;
    const float max = RowMax(row, s.vocab);
    const float log_sum = static_cast<float>(std::log(ShiftedExpSum(row, s.vocab, max)));
    for (int64_t i = 0; i < s.vocab; ++i) o[i] = (row[i] - max) - log_sum;
  }
}

}  // namespace k3::kernels::cpu
