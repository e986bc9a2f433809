// OpenAI Chat Completions and Completions request bodies -> serve::GenerateRequest (a chat body
// becomes the typed serve::ChatRequest), with the validation the OpenAI reference and the Kimi
// Vendor Verifier expect (400 naming the field).
#pragma once

#include <memory>
#include <string>

#include "api/api_error.h"
#include "api/thinking_signature.h"
#include "serve/generate_request.h"

namespace k3::api {

// Which sampling values are accepted. kOpen: the OpenAI ranges (temperature [0, 2], top_p
// (0, 1], penalties [-2, 2], n [1, 128]). kKimi: the Kimi Vendor Verifier contract for Moonshot's
// served models: temperature one of 0, 0.6, 1.0; top_p 0.95 or 1; penalties 0; n = 1.
enum class SamplingPolicy { kOpen, kKimi };

struct ApiOptions {
  std::string model_name = "k3-demo";
  SamplingPolicy policy = SamplingPolicy::kOpen;
  // Accept the test-only "k3_forced_output" field (scripted output; `k3 serve --scripted-output`).
  bool allow_forced_output = false;
  // Signs issued thinking blocks and verifies those sent back (Anthropic); null: unsigned.
  std::shared_ptr<const ThinkingSigner> signer;
};

struct OpenAiRequest {
  serve::GenerateRequest generate;
  bool stream = false;
  bool include_usage = false;    // stream_options.include_usage
  int top_logprobs = 0;          // chat: alternatives per token (with logprobs: true)
  int completion_logprobs = -1;  // completions: the integer logprobs field
};

// False with *error (HTTP status, message, param) for a bad body.
bool ParseChatRequest(const Json& body, const ApiOptions& options, OpenAiRequest* out,
                      ApiError* error);
bool ParseCompletionRequest(const Json& body, const ApiOptions& options, OpenAiRequest* out,
                            ApiError* error);

}  // namespace k3::api
