// POST /v1/completions request bodies.
#include "api/fields.h"
#include "api/openai_request.h"
#include "api/openai_request_internal.h"

namespace k3::api {
namespace {

bool TokenList(const Json& value, std::vector<int32_t>* out) {
  if (!value.is_array() || value.empty()) return false;
  for (const Json& id : value) {
    if (!id.is_number_integer()) return false;
    const int64_t v = id.get<int64_t>();
    if (v < 0 || v > INT32_MAX) return false;
    out->push_back(static_cast<int32_t>(v));
  }
  return true;
}

// prompt: a string, a token list, or a list holding exactly one of those.
bool ParsePrompt(const Json& prompt, serve::GenerateRequest* out, ApiError* error) {
  if (prompt.is_string()) {
    out->prompt = prompt.get<std::string>();
    return true;
  }
  if (TokenList(prompt, &out->prompt_ids)) return true;
  out->prompt_ids.clear();
  if (prompt.is_array() && prompt.size() == 1) {
    if (prompt[0].is_string()) {
      out->prompt = prompt[0].get<std::string>();
      return true;
    }
    if (TokenList(prompt[0], &out->prompt_ids)) return true;
  }
  if (prompt.is_array() && prompt.size() > 1 && (prompt[0].is_string() || prompt[0].is_array())) {
    *error = BadRequest("one prompt per request is supported; send several requests", "prompt");
  } else {
    *error = BadRequest("'prompt' must be a string, a list of token ids, or a list of one of those",
                        "prompt");
  }
  return false;
}

}  // namespace

bool ParseCompletionRequest(const Json& body, const ApiOptions& options, OpenAiRequest* out,
                            ApiError* error) {
  if (!body.is_object()) {
    *error = BadRequest("the request body must be a JSON object");
    return false;
  }
  if (!body.contains("prompt")) {
    *error = BadRequest("'prompt' is required", "prompt");
    return false;
  }
  if (!ParsePrompt(body["prompt"], &out->generate, error)) return false;
  Fields f(body);
  if (const Json* suffix = f.Get("suffix"); suffix != nullptr) {
    *error = BadRequest("'suffix' is not supported by this model", "suffix");
    return false;
  }
  if (!ParseSampling(body, options, &out->generate, error)) return false;
  int64_t logprobs = -1, best_of = 0;
  if (!f.Bool("stream", &out->stream, error) || !f.Bool("echo", &out->generate.echo, error) ||
      !f.Integer("logprobs", 0, 5, &logprobs, error) ||
      !f.Integer("best_of", 1, 128, &best_of, error)) {
    return false;
  }
  if (f.Get("best_of") != nullptr && best_of != out->generate.sampling.n) {
    *error = BadRequest("'best_of' other than n is not supported", "best_of");
    return false;
  }
  if (const Json* so = f.Get("stream_options")) {
    if (!so->is_object() || !Fields(*so).Bool("include_usage", &out->include_usage, error)) {
      if (error->message.empty()) *error = BadRequest("'stream_options' must be an object");
      return false;
    }
  }
  out->completion_logprobs = static_cast<int>(logprobs);
  if (logprobs >= 0) {
    out->generate.want_logprobs = true;
    out->generate.sampling.logprobs = static_cast<int>(logprobs);
  }
  return true;
}

}  // namespace k3::api
