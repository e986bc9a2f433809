#include "model/testing/synthetic_checkpoint.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/result.h"
#include "model/config.h"
#include "model/tensor_schema.h"
#include "tensor/numeric.h"
#include "weights/safetensors.h"

namespace k3::model::testing {
namespace {

using nlohmann::json;
using tensor::DType;

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The tensors of one shard, owning their bytes. Random values come from a 4096-entry table of
// normal draws (seeded) indexed by a xorshift32 stream: fast enough to fill gigabytes.
class ShardBuilder {
 public:
  ShardBuilder(uint64_t seed, int fp8_block) : fp8_block_(fp8_block) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    for (float& v : normal_table_) v = normal(rng);
  }

  // Adds the stored tensors of `spec` (one, or two for MXFP4 / FP8 block), values by its role.
  void Add(const TensorSpec& spec) {
    const std::vector<StoredTensor> stored = StoredTensors(spec, fp8_block_);
    switch (spec.storage) {
      case TensorStorage::kDense:
        return RandomBf16(stored[0], spec.role == TensorRole::kEmbedding ? 16.0f : 1.0f);
      case TensorStorage::kMxfp4:
        return Mxfp4(stored[0], stored[1], spec.cols());
      case TensorStorage::kInt4:
        return Int4(stored, spec.rows(), spec.cols());
      case TensorStorage::kFp8Block:
        RandomFp8(stored[0]);
        return Constant(stored[1], 1.0f);
      case TensorStorage::kBf16:
      case TensorStorage::kF32:
        if (spec.role == TensorRole::kResidualQuery) return RandomBf16(stored[0], 1.0f);
        return Constant(stored[0], VectorValue(spec.role));
    }
  }

  base::Status Write(const std::filesystem::path& path, json* weight_map) const {
    std::vector<weights::TensorToWrite> tensors;
    for (const Owned& t : tensors_) {
      tensors.push_back({t.name, t.dtype, t.shape, t.bytes});
      (*weight_map)[t.name] = path.filename().string();
    }
    return weights::WriteSafetensors(path, tensors);
  }

 private:
  struct Owned {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<std::byte> bytes;
  };

  static float VectorValue(TensorRole role) {
    switch (role) {
      case TensorRole::kNorm:
        return 1.0f;
      case TensorRole::kConvTaps:
        return 0.5f;
      default:  // A_log, dt_bias, router bias
        return 0.0f;
    }
  }

  // BF16 with standard deviation scale/sqrt(last dimension).
  void RandomBf16(const StoredTensor& t, float scale) {
    const int64_t n = NumElements(t.shape);
    const float std_dev = scale / std::sqrt(static_cast<float>(t.shape.back()));
    std::vector<std::byte> bytes(n * 2);
    auto* out = reinterpret_cast<uint16_t*>(bytes.data());
    for (int64_t i = 0; i < n; ++i) out[i] = tensor::FloatToBf16(std_dev * Normal());
    Push(t, std::move(bytes));
  }

  // E4M3 with standard deviation 1/sqrt(cols) (its scales are 1).
  void RandomFp8(const StoredTensor& t) {
    const float std_dev = 1.0f / std::sqrt(static_cast<float>(t.shape.back()));
    std::vector<std::byte> bytes(NumElements(t.shape));
    for (std::byte& b : bytes) b = static_cast<std::byte>(tensor::FloatToE4M3(std_dev * Normal()));
    Push(t, std::move(bytes));
  }

  void Constant(const StoredTensor& t, float value) {
    const int64_t n = NumElements(t.shape);
    std::vector<std::byte> bytes(n * tensor::DTypeSize(t.dtype));
    const uint16_t bf16 = tensor::FloatToBf16(value);
    for (int64_t i = 0; i < n; ++i) {
      if (t.dtype == DType::kF32) {
        std::memcpy(&bytes[i * 4], &value, 4);
      } else {
        std::memcpy(&bytes[i * 2], &bf16, 2);
      }
    }
    Push(t, std::move(bytes));
  }

  // Uniform random nibbles; one scale for all blocks giving values of about 1/sqrt(cols).
  void Mxfp4(const StoredTensor& packed, const StoredTensor& scales, int64_t cols) {
    std::vector<std::byte> nibbles(NumElements(packed.shape));
    for (std::byte& b : nibbles) b = static_cast<std::byte>(Next());
    // E2M1 values have RMS ~3.2; 2^(e-127) * 3.2 ~ 1/sqrt(cols).
    const int e = 127 + static_cast<int>(std::lround(std::log2(1.0 / (3.2 * std::sqrt(cols)))));
    std::vector<std::byte> exponents(NumElements(scales.shape), static_cast<std::byte>(e));
    Push(packed, std::move(nibbles));
    Push(scales, std::move(exponents));
  }

  // Uniform random nibbles (values -8..7, RMS ~4.6) under one BF16 scale giving ~1/sqrt(cols);
  // stored[2] is weight_shape.
  void Int4(const std::vector<StoredTensor>& stored, int64_t rows, int64_t cols) {
    std::vector<std::byte> nibbles(NumElements(stored[0].shape) * 4);
    for (std::byte& b : nibbles) b = static_cast<std::byte>(Next());
    Push(stored[0], std::move(nibbles));
    Constant(stored[1], static_cast<float>(1.0 / (4.6 * std::sqrt(cols))));
    const int32_t shape[2] = {static_cast<int32_t>(rows), static_cast<int32_t>(cols)};
    std::vector<std::byte> shape_bytes(sizeof shape);
    std::memcpy(shape_bytes.data(), shape, sizeof shape);
    Push(stored[2], std::move(shape_bytes));
  }

  void Push(const StoredTensor& t, std::vector<std::byte> bytes) {
    tensors_.push_back({t.name, t.dtype, t.shape, std::move(bytes)});
  }
  float Normal() { return normal_table_[Next() & 4095]; }
  uint32_t Next() {  // xorshift32
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_;
  }

  int fp8_block_;
  uint32_t state_ = 2463534242u;
  float normal_table_[4096];
  std::vector<Owned> tensors_;
};

base::Status WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return base::Internal("cannot write " + path.string());
  return base::Status::Ok();
}

}  // namespace

base::Status WriteSyntheticCheckpoint(std::string_view config_json,
                                      const std::filesystem::path& dir) {
  K3_ASSIGN_OR_RETURN(const ModelConfig config, ParseModelConfig(config_json));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return base::Internal("cannot create " + dir.string() + ": " + ec.message());
  // A config nested under text_config (K3, K2.5) names its tensors "language_model.*", as
  // published; flat configs (Kimi-Linear, K2) use no prefix.
  const bool nested = json::parse(config_json).contains("text_config");
  const std::string_view prefix = nested ? CheckpointPrefix(Family::kKimiK3) : "";
  const int shards = config.num_layers + 1;
  auto shard_path = [&](int i) {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", i + 1, shards);
    return dir / name;
  };
  json weight_map = json::object();
  {
    ShardBuilder b(1, config.fp8_block);
    const OuterTensors outer = OuterTensorsOf(config, prefix);
    for (const TensorSpec* spec : Ordered(outer)) b.Add(*spec);
    K3_RETURN_IF_ERROR(b.Write(shard_path(0), &weight_map));
  }
  for (int layer = 0; layer < config.num_layers; ++layer) {
    K3_LOG(kInfo) << "writing layer " << layer + 1 << "/" << config.num_layers << " to "
                  << dir.string();
    ShardBuilder b(100 + layer, config.fp8_block);
    const LayerTensors tensors = LayerTensorsOf(config, prefix, layer);
    for (const TensorSpec* spec : Ordered(tensors)) b.Add(*spec);
    K3_RETURN_IF_ERROR(b.Write(shard_path(layer + 1), &weight_map));
  }
  const json index = {{"metadata", json::object()}, {"weight_map", weight_map}};
  K3_RETURN_IF_ERROR(WriteText(dir / "model.safetensors.index.json", index.dump(1)));
  return WriteText(dir / "config.json", std::string(config_json));
}

}  // namespace k3::model::testing
