// Sampling row ops by definition: libm exp and log in double.
#include <cmath>
#include <limits>

#include "kernels/reference/reference_backend.h"

namespace k3::kernels::reference {

void ReferenceBackend::ApplyTokenBitmask(const VocabRows& s, const uint64_t* bitmask,
                                         float* logits) {
  for (int64_t r = 0; r < s.rows; ++r) {
    for (int64_t t = 0; t < s.vocab; ++t) {
      const uint64_t word = bitmask[r * s.mask_words() + t / 64];
      if ((word & (uint64_t{1} << (t % 64))) == 0) {
        logits[r * s.vocab + t] = -std::numeric_limits<float>::infinity();
      }
    }
  }
}

void ReferenceBackend::MaxArgmax(const VocabRows& s, const float* logits, float* max,
                                 int32_t* argmax) {
  for (int64_t r = 0; r < s.rows; ++r) {
    int64_t best = 0;
    for (int64_t t = 1; t < s.vocab; ++t) {
      if (logits[r * s.vocab + t] > logits[r * s.vocab + best]) best = t;
    }
    max[r] = logits[r * s.vocab + best];
    argmax[r] = static_cast<int32_t>(best);
  }
}

void ReferenceBackend::ScaledExp(const VocabRows& s, const float* logits, const float* max,
                                 float inv_temperature, float* out) {
  for (int64_t r = 0; r < s.rows; ++r) {
    for (int64_t t = 0; t < s.vocab; ++t) {
      const double scaled = (double{logits[r * s.vocab + t]} - max[r]) * inv_temperature;
      out[r * s.vocab + t] = scaled < -87.0 ? 0.0f : static_cast<float>(std::exp(scaled));
    }
  }
}

void ReferenceBackend::Softmax(const VocabRows& s, const float* x, float* out) {
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row = x + r * s.vocab;
    double max = -INFINITY, sum = 0.0;
    for (int64_t t = 0; t < s.vocab; ++t) max = std::max(max, double{row[t]});
    for (int64_t t = 0; t < s.vocab; ++t) sum += std::exp(row[t] - max);
    for (int64_t t = 0; t < s.vocab; ++t) {
      out[r * s.vocab + t] = static_cast<float>(std::exp(row[t] - max) / sum);
    }
  }
}

void ReferenceBackend::LogSoftmax(const VocabRows& s, const float* x, float* out) {
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row = x + r * s.vocab;
    double max = -INFINITY, sum = 0.0;
    for (int64_t t = 0; t < s.vocab; ++t) max = std::max(max, double{row[t]});
    for (int64_t t = 0; t < s.vocab; ++t) sum += std::exp(row[t] - max);
    const double log_sum = std::log(sum);
    for (int64_t t = 0; t < s.vocab; ++t) {
      out[r * s.vocab + t] = static_cast<float>(row[t] - max - log_sum);
    }
  }
}

}  // namespace k3::kernels::reference
