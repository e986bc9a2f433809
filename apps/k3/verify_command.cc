// k3 verify URL: the API conformance suite against any OpenAI/Anthropic-compatible endpoint
// (k3 serve, k3 route, another vendor). Prints one line per check grouped by area and the score;
// exits 1 when a check fails, 2 on bad flags.
#include <fstream>
#include <iostream>

#include "apps/k3/commands.h"
#include "verify/report.h"
#include "verify/suite.h"

namespace k3::app {
namespace {

struct VerifyFlags {
  std::string url;
  std::string api_key;
  std::string model;
  std::string json_out;
  int max_tokens = 200;
  int timeout_s = 120;
};

int Verify(const VerifyFlags& f) {
  auto server = gateway::ParseHttpUrl(f.url);
  if (!server.ok()) {
    std::cerr << "k3 verify: " << server.status().ToString() << "\n";
    return 2;
  }
  verify::SuiteOptions options;
  options.client.server = server.value();
  options.client.api_key = f.api_key;
  options.client.timeout = std::chrono::seconds(f.timeout_s);
  options.model = f.model;
  options.max_tokens = f.max_tokens;
  const verify::CheckList results = verify::RunSuite(options);
  std::cout << "k3 verify " << f.url << "\n";
  verify::PrintReport(results, std::cout);
  if (!f.json_out.empty()) {
    std::ofstream out(f.json_out);
    out << verify::ReportJson(results, f.url).dump(2) << "\n";
    if (!out) {
      std::cerr << "k3 verify: cannot write " << f.json_out << "\n";
      return 2;
    }
  }
  return verify::Tally(results).failed == 0 ? 0 : 1;
}

}  // namespace

CommandFn AddVerifyCommand(CLI::App& app) {
  auto f = std::make_shared<VerifyFlags>();
  app.description(
      "API conformance suite against an OpenAI/Anthropic-compatible endpoint (k3 serve, k3 "
      "route, or another vendor's server). Checks, grouped by area: parameter validation "
      "(400 in each API's error shape, 404, 401), tool_choice required/named/none and "
      "parallel_tool_calls (arguments validated against the tools' schemas, Kimi ids "
      "functions.NAME:IDX), response_format json_object/json_schema (valid and compact), "
      "streaming framing and stream/non-stream agreement at temperature 0, usage and "
      "finish_reason length, /v1/completions, Anthropic Messages (shape, event order, "
      "tool_use), the Responses API (/v1/responses: object, event sequence, forced calls, "
      "text.format json_schema, stateless 400s), reasoning round trips and /v1/models. Prints "
      "PASS/FAIL/SKIP per check with "
      "what was expected and what came back, then passed/applicable; exits 1 if any check "
      "fails. Contracts: ../shared/spec/frontend.md sections 4 and 5.");
  app.add_option("url", f->url, "The endpoint, http://HOST:PORT")->required();
  app.add_option("--api-key", f->api_key,
                 "Key sent as 'Authorization: Bearer' and 'x-api-key'; also enables the 401 "
                 "checks (wrong or missing key)");
  app.add_option("--model", f->model, "Model name to send (default: the first /v1/models lists)");
  app.add_option("--json", f->json_out, "Also write the report as JSON to this file");
  app.add_option("--max-tokens", f->max_tokens,
                 "max_tokens of the requests that must fit a tool call or a JSON value")
      ->capture_default_str()
      ->check(CLI::Range(16, 100000));
  app.add_option("--timeout", f->timeout_s, "Seconds each request may take")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  return [f] { return Verify(*f); };
}

}  // namespace k3::app
