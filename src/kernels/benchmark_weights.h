// What the kernel benchmarks time MatMul on: random weight matrices of every stored format, sets
// of copies that stream from memory, activations and a per-call timer. Benchmark binaries only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "base/aligned_buffer.h"
#include "kernels/matmul.h"
#include "kernels/roofline_detail.h"
#include "tensor/numeric.h"

namespace k3::kernels::benchmarking {

inline const char* FormatName(WeightFormat f) {
  switch (f) {
    case WeightFormat::kF32:
      return "F32";
    case WeightFormat::kBF16:
      return "BF16";
    case WeightFormat::kF16:
      return "F16";
    case WeightFormat::kMxfp4:
      return "MXFP4";
    case WeightFormat::kInt4:
      return "INT4";
    case WeightFormat::kInt8Block:
      return "INT8";
    case WeightFormat::kBf16Panels:
      return "BF16PANELS";
    default:
      return "FP8";
  }
}

// `copies` distinct [rows, cols] matrices of random weights in one format, one after another.
class WeightSet {
 public:
  WeightSet(WeightFormat format, int64_t rows, int64_t cols, size_t min_total_bytes)
      : format_(format), rows_(rows), cols_(cols) {
    int64_t bytes = rows * cols;
    if (format == WeightFormat::kF32) bytes *= 4;
    if (StoredElementBytes(format) == 2) bytes *= 2;  // BF16, F16, BF16 panels (rows % 16 == 0)
    if (IsFourBit(format)) bytes /= 2;
    data_bytes_ = static_cast<size_t>(bytes);
    if (format == WeightFormat::kMxfp4) scale_bytes_ = static_cast<size_t>(rows * cols / 32);
    if (format == WeightFormat::kInt4 || format == WeightFormat::kInt8Block) {
      scale_bytes_ = static_cast<size_t>(rows * cols / 32) * 2;
    }
    if (format == WeightFormat::kFp8Block) {
      scale_bytes_ = static_cast<size_t>((rows + 127) / 128 * ((cols + 127) / 128)) * 4;
    }
    stride_ = (data_bytes_ + scale_bytes_ + 63) / 64 * 64;
    copies_ = std::max<size_t>(1, (min_total_bytes + stride_ - 1) / stride_);
    storage_ = base::AlignedBuffer<uint8_t>(copies_ * stride_, 0);
    Fill(storage_.data());
    for (size_t i = 1; i < copies_; ++i) {
      std::memcpy(storage_.data() + i * stride_, storage_.data(), stride_);
    }
  }

  size_t copies() const { return copies_; }
  // Bytes one call reads from the weights (data and scales).
  size_t bytes_per_matrix() const { return data_bytes_ + scale_bytes_; }
  WeightMatrix Get(size_t i) const {
    const uint8_t* base = storage_.data() + (i % copies_) * stride_;
    WeightMatrix w;
    w.format = format_;
    w.rows = rows_;
    w.cols = cols_;
    w.data = base;
    if (format_ == WeightFormat::kMxfp4) w.mx_scales = base + data_bytes_;
    if (format_ == WeightFormat::kInt4 || format_ == WeightFormat::kInt8Block) {
      w.group_scales = reinterpret_cast<const uint16_t*>(base + data_bytes_);
    }
    if (format_ == WeightFormat::kFp8Block) {
      w.block_scales = reinterpret_cast<const float*>(base + data_bytes_);
      w.block = 128;
      w.fp8_nan_free = true;  // Fill writes codes 0 .. 0x7E, as the loader would flag them
    }
    return w;
  }

 private:
  void Fill(uint8_t* p) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    const size_t n = static_cast<size_t>(rows_ * cols_);
    switch (format_) {
      case WeightFormat::kF32:
        for (size_t i = 0; i < n; ++i) reinterpret_cast<float*>(p)[i] = uniform(rng);
        break;
      case WeightFormat::kBF16:
      case WeightFormat::kBf16Panels:  // random values: their order does not matter here
        for (size_t i = 0; i < n; ++i) {
          reinterpret_cast<uint16_t*>(p)[i] = tensor::FloatToBf16(uniform(rng));
        }
        break;
      case WeightFormat::kF16:
        for (size_t i = 0; i < n; ++i) {
          reinterpret_cast<uint16_t*>(p)[i] = tensor::FloatToF16(uniform(rng));
        }
        break;
      case WeightFormat::kMxfp4:
        for (size_t i = 0; i < data_bytes_; ++i) p[i] = static_cast<uint8_t>(rng());
        for (size_t i = 0; i < scale_bytes_; ++i) p[data_bytes_ + i] = 120 + rng() % 8;
        break;
      case WeightFormat::kInt4:
      case WeightFormat::kInt8Block:
        for (size_t i = 0; i < data_bytes_; ++i) p[i] = static_cast<uint8_t>(rng());
        for (size_t i = 0; i < scale_bytes_ / 2; ++i) {
          reinterpret_cast<uint16_t*>(p + data_bytes_)[i] = tensor::FloatToBf16(1e-2f);
        }
        break;
      case WeightFormat::kFp8Block:
        for (size_t i = 0; i < data_bytes_; ++i) p[i] = static_cast<uint8_t>(rng() % 0x7F);
        for (size_t i = 0; i < scale_bytes_ / 4; ++i) {
          reinterpret_cast<float*>(p + data_bytes_)[i] = 1e-3f * (1 + uniform(rng) * 0.5f);
        }
        break;
    }
  }

  WeightFormat format_;
  int64_t rows_, cols_;
  size_t data_bytes_ = 0, scale_bytes_ = 0, stride_ = 0, copies_ = 0;
  base::AlignedBuffer<uint8_t> storage_;
};

// Rows of the cache-resident decode matrix (HotDecode rows): 512 x 2048 one-byte weights are 512
// KiB per thread on two threads, half of a Zen 4/5 core's L2.
inline constexpr int64_t kHotRows = 512;

// The current decode weight set, one format at a time (memory stays bounded). Streamed: 4096 x
// 2048 matrices filling as many bytes as the bandwidth measurement reads, so both see the same
// cache effects. hot: one kHotRows x 2048 matrix that every call reads again, the kernel's
// conversion and FMA rate without the memory.
inline const WeightSet& DecodeWeights(WeightFormat format, bool hot = false) {
  static std::unique_ptr<WeightSet> sets[2];
  static WeightFormat current[2];
  std::unique_ptr<WeightSet>& set = sets[hot ? 1 : 0];
  if (!set || current[hot ? 1 : 0] != format) {
    set.reset();
    set = hot ? std::make_unique<WeightSet>(format, kHotRows, 2048, 0)
              : std::make_unique<WeightSet>(format, 4096, 2048, detail::BandwidthBufferBytes());
    current[hot ? 1 : 0] = format;
  }
  return *set;
}

inline std::vector<float> RandomActivations(int64_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = uniform(rng);
  return x;
}

// Times calls one by one: the fastest is what the machine can do (the roofline is also a best of
// several passes), the mean what it did while shared.
struct CallTimer {
  double best = 1e30, total = 0;
  size_t calls = 0;
  template <typename Fn>
  void Time(const Fn& fn) {
    auto start = std::chrono::steady_clock::now();
    fn();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s);
    total += s;
    ++calls;
  }
  double Mean() const { return total / static_cast<double>(calls); }
};

}  // namespace k3::kernels::benchmarking
