// Sampling fields shared by chat and completions, under the configured policy.
#include "api/fields.h"
#include "api/openai_request.h"
#include "api/openai_request_internal.h"

namespace k3::api {
namespace {

bool OneOf(double value, std::initializer_list<double> allowed) {
  for (double a : allowed) {
    if (value == a) return true;
  }
  return false;
}

bool KimiPolicy(const Json& body, ApiError* error) {
  Fields f(body);
  auto check = [&](const char* name, std::initializer_list<double> allowed, const char* text) {
    const Json* v = f.Get(name);
    if (v == nullptr || (v->is_number() && OneOf(v->get<double>(), allowed))) return true;
    *error = BadRequest(std::string("'") + name + "' must be " + text + " for this model", name);
    return false;
  };
  return check("temperature", {0.0, 0.6, 1.0}, "0, 0.6 or 1.0") &&
         check("top_p", {0.95, 1.0}, "0.95 or 1.0") && check("presence_penalty", {0.0}, "0") &&
         check("frequency_penalty", {0.0}, "0") && check("n", {1.0}, "1");
}

}  // namespace

bool ParseSampling(const Json& body, const ApiOptions& options, serve::GenerateRequest* out,
                   ApiError* error) {
  if (options.policy == SamplingPolicy::kKimi && !KimiPolicy(body, error)) return false;
  Fields f(body);
  engine::SamplingParams& s = out->sampling;
  int64_t n = 1, top_k = 0, max_tokens = 0, seed = 0;
  if (!f.Number("temperature", 0, 2, &s.temperature, error) ||
      !f.Number("top_p", 0, 1, &s.top_p, error) ||
      !f.Number("presence_penalty", -2, 2, &s.presence_penalty, error) ||
      !f.Number("frequency_penalty", -2, 2, &s.frequency_penalty, error) ||
      !f.Number("repetition_penalty", 0.01, 2, &s.repetition_penalty, error) ||
      !f.Number("min_p", 0, 1, &s.min_p, error) ||
      !f.Integer("top_k", -1, 1 << 30, &top_k, error) || !f.Integer("n", 1, 128, &n, error) ||
      !f.Integer("seed", INT64_MIN, INT64_MAX, &seed, error) ||
      !f.Bool("ignore_eos", &s.ignore_eos, error) ||
      !f.Bool("skip_special_tokens", &out->skip_special_tokens, error) ||
      !f.StringOrList("stop", 4, &out->stop, error)) {
    return false;
  }
  if (f.Get("top_p") != nullptr && s.top_p <= 0) {
    *error = BadRequest("'top_p' must be greater than 0", "top_p");
    return false;
  }
  s.top_k = top_k < 0 ? 0 : static_cast<int>(top_k);
  s.n = static_cast<int>(n);
  if (f.Get("seed") != nullptr) s.seed = static_cast<uint64_t>(seed);
  for (const char* name : {"max_completion_tokens", "max_tokens"}) {
    if (f.Get(name) == nullptr) continue;
    if (!f.Integer(name, 1, INT64_MAX, &max_tokens, error)) return false;
    s.max_tokens = max_tokens;
    out->max_tokens_given = true;
    break;
  }
  if (const Json* forced = f.Get("k3_forced_output")) {
    if (!options.allow_forced_output || !forced->is_string()) {
      *error = BadRequest(
          "'k3_forced_output' needs a string and a server started with --scripted-output",
          "k3_forced_output");
      return false;
    }
    out->forced_output = forced->get<std::string>();
  }
  return true;
}

}  // namespace k3::api
