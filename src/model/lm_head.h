// The ends of the forward pass: the embedding lookup, and the final norm and lm_head over only
// the rows each sequence asks for (SequenceInput::num_logit_rows; a mid-prompt chunk asks for
// none, so a long prompt prefilled in chunks pays for one logit row, not one per chunk).
#pragma once

#include <span>

#include "model/forward_context.h"
#include "model/model.h"

namespace k3::model {

// out: [rows, hidden], row r = embed[ctx.token_ids[r]].
void Embed(const ForwardContext& ctx, const kernels::WeightMatrix& table, float* out);

// hidden: the final norm's input [rows, hidden]. Fills result (logits, router gaps, rows).
void LmHead(const ForwardContext& ctx, const ModelWeights& w, std::span<const SequenceInput> batch,
            const float* hidden, ForwardResult* result);

}  // namespace k3::model
