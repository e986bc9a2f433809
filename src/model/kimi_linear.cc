// Kimi-Linear: KDA layers (softplus gate, low-rank output gate) and NoPE MLA layers with a plain
// q_proj, 3:1; sigmoid MoE with a shared expert and SiLU after the first dense layers; a plain
// residual stream.
#include "model/decoder_layer.h"
#include "model/families.h"

namespace k3::model {

const FamilyGraph& KimiLinearGraph() {
  static const FamilyGraph graph{RunDecoderStack};
  return graph;
}

}  // namespace k3::model
