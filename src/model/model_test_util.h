// Helpers for the model tests: the reference outputs the fixture `model_reference_outputs` writes
// (reference/make_parity_refs.py) and error measures between logit rows.
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/paths.h"

namespace k3::model::testing {

inline std::string RefsDir() { return k3::testing::BinaryDir() + "/model_refs"; }
inline std::string FamilyDir(const std::string& family) { return RefsDir() + "/" + family; }

// Raw little-endian float64 file as doubles.
inline std::vector<double> ReadF64(const std::string& path) {
  std::string bytes = k3::testing::ReadFileOrDie(path);
  std::vector<double> out(bytes.size() / sizeof(double));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
  return out;
}

struct Reference {
  nlohmann::json meta;
  std::vector<double> prefill;  // [prompt, vocab]
  std::vector<double> decode;   // [steps, vocab]
  std::vector<int32_t> prompt;
  std::vector<int32_t> generated;
  int64_t vocab = 0;
};

inline Reference LoadReference(const std::string& family, const std::string& variant = "ref") {
  Reference r;
  const std::string prefix = FamilyDir(family) + "/" + variant;
  r.meta = nlohmann::json::parse(k3::testing::ReadFileOrDie(prefix + ".json"));
  r.prefill = ReadF64(prefix + ".prefill.f64");
  r.decode = ReadF64(prefix + ".decode.f64");
  r.prompt = r.meta["prompt_ids"].get<std::vector<int32_t>>();
  r.generated = r.meta["generated_ids"].get<std::vector<int32_t>>();
  r.vocab = r.meta["vocab_size"].get<int64_t>();
  return r;
}

// max |got - want| over a row, and the same divided by max |want| (the row's logit scale).
struct RowError {
  double max_abs = 0.0;
  double relative = 0.0;
};

inline RowError CompareRow(const float* got, const double* want, int64_t n) {
  RowError e;
  double scale = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    e.max_abs = std::max(e.max_abs, std::fabs(got[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  e.relative = e.max_abs / std::max(scale, 1e-30);
  return e;
}

// Index of the largest value of a reference row (the first on ties).
inline int64_t ReferenceArgmax(const double* row, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (row[i] > row[best]) best = i;
  }
  return best;
}

// Gap between the best and second-best logit of a reference row.
inline double TopMargin(const double* row, int64_t n) {
  double best = -INFINITY, second = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    if (row[i] > best) {
      second = best;
      best = row[i];
    } else if (row[i] > second) {
      second = row[i];
    }
  }
  return best - second;
}

}  // namespace k3::model::testing
