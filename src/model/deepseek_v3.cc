// DeepSeek-V3 / Kimi K2: MLA layers only (q_lora, YaRN RoPE on the shared key part), dense first
// layers then grouped sigmoid MoE with shared experts; a plain residual stream. FP8 block weights
// are a storage format (kernels::WeightFormat::kFp8Block), not a composition change.
#include "model/decoder_layer.h"
#include "model/families.h"

namespace k3::model {

const FamilyGraph& DeepseekV3Graph() {
  static const FamilyGraph graph{RunDecoderStack};
  return graph;
}

const FamilyGraph& GraphOf(Family family) {
  switch (family) {
    case Family::kKimiK3:
      return KimiK3Graph();
    case Family::kKimiLinear:
      return KimiLinearGraph();
    case Family::kDeepseekV3:
      return DeepseekV3Graph();
  }
  return KimiLinearGraph();
}

}  // namespace k3::model
