// Kimi K3: KDA layers (lower-bound gate, full-rank output gate) and gated NoPE MLA layers with
// q_lora; a dense first layer, then latent MoE (down-projection, experts in the latent with SiTU,
// RMSNorm, up-projection); Attention Residuals around every sublayer and the final norm.
#include "model/decoder_layer.h"
#include "model/families.h"

namespace k3::model {

const FamilyGraph& KimiK3Graph() {
  static const FamilyGraph graph{RunDecoderStack};
  return graph;
}

}  // namespace k3::model
