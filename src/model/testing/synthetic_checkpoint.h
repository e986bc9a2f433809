// A synthetic checkpoint writer: for a config.json it writes exactly the tensors the schema
// (model/tensor_schema.h) lists for that config, in its names, shapes and storages, with seeded
// values of sensible scale. Outputs of a model loaded from it mean nothing; it exists so that
// speed can be measured and the serving stack run without downloading weights.
#pragma once

#include <filesystem>
#include <string_view>

#include "base/status.h"

namespace k3::model::testing {

// Writes `config_json` verbatim as DIR/config.json, then one safetensors shard of the tensors
// outside the layers and one shard per layer (model-0000I-of-0000N.safetensors, N = layers + 1)
// and model.safetensors.index.json; DIR is created. The config must parse (ParseModelConfig).
//
// Values, by tensor role: projections and Attention Residual pseudo-queries normal with standard
// deviation 1/sqrt(cols) (embeddings 16/sqrt(cols)), RMSNorm weights 1, conv taps 0.5, A_log /
// dt_bias / router bias 0; MXFP4 matrices get uniform random nibbles with scales giving values of
// about 1/sqrt(cols), FP8 block matrices unit scales. Deterministic: the same config gives the same
// bytes (each shard has its own fixed seed: 1 for the outer tensors, 100 + i for layer i).
base::Status WriteSyntheticCheckpoint(std::string_view config_json,
                                      const std::filesystem::path& dir);

}  // namespace k3::model::testing
