#include "verify/suite.h"

#include <functional>

#include "verify/checks.h"

namespace k3::verify {

CheckList RunSuite(const SuiteOptions& options) {
  Client client(options.client);
  CheckContext ctx;
  ctx.client = &client;
  ctx.model = options.model;
  ctx.has_api_key = !options.client.api_key.empty();
  ctx.max_tokens = options.max_tokens;
  CheckList out = RunModelChecks(ctx);
  // Nothing answers at all: one failure says so instead of ~80 identical ones.
  if (client.Get("/v1/models").status == 0) {
    out.push_back(Fail("models", "endpoint_reachable", "no HTTP answer from the server"));
    return out;
  }
  if (ctx.model.empty()) ctx.model = "default";  // nothing listed: the checks still run
  const std::pair<const char*, std::function<CheckList(const CheckContext&)>> areas[] = {
      {"errors", RunValidationChecks},     {"tools", RunToolChecks},
      {"structured", RunStructuredChecks}, {"stream", RunStreamChecks},
      {"usage", RunUsageChecks},           {"completions", RunCompletionsChecks},
      {"anthropic", RunAnthropicChecks},   {"reasoning", RunReasoningChecks},
      {"responses", RunResponsesChecks},
  };
  for (const auto& [area, run] : areas) {
    // A server answer of an unexpected JSON type makes nlohmann throw; the checks read answers
    // defensively, and this catch turns whatever slips through into a failure of the area.
    try {
      for (auto& result : run(ctx)) out.push_back(std::move(result));
    } catch (const std::exception& e) {
      out.push_back(
          Fail(area, "area_aborted", std::string("unexpected answer shape: ") + e.what()));
    }
  }
  return out;
}

}  // namespace k3::verify
