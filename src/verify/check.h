// One conformance check's outcome, and the context every check runs with. A check is a small
// function that sends a few requests and compares the answers with the public API contracts
// (../shared/spec/frontend.md §4-5); it never throws and never aborts on a bad answer.
#pragma once

#include <string>
#include <vector>

namespace k3::verify {

class Client;

enum class CheckStatus {
  kPass,  // the endpoint did what the contract says
  kFail,  // it did not; detail says what was expected and what came back
  kSkip,  // not applicable here (detail says why); not counted in the score
};
const char* CheckStatusName(CheckStatus status);

struct CheckResult {
  std::string area;  // "errors", "tools", "stream", ... (the report groups by it)
  std::string name;
  CheckStatus status = CheckStatus::kPass;
  std::string detail;  // empty only for a plain PASS
};

// What the checks share. The client is blocking; checks run one at a time.
struct CheckContext {
  Client* client = nullptr;
  std::string model;         // the model name sent in every request
  bool has_api_key = false;  // --api-key given: the auth checks apply
  int max_tokens = 200;      // the budget of generations that must fit a tool call or JSON value
};

// Builders that keep the check functions short.
inline CheckResult Pass(std::string area, std::string name, std::string detail = "") {
  return {std::move(area), std::move(name), CheckStatus::kPass, std::move(detail)};
}
inline CheckResult Fail(std::string area, std::string name, std::string detail) {
  return {std::move(area), std::move(name), CheckStatus::kFail, std::move(detail)};
}
inline CheckResult Skip(std::string area, std::string name, std::string detail) {
  return {std::move(area), std::move(name), CheckStatus::kSkip, std::move(detail)};
}
// PASS when `error` is empty, FAIL with it otherwise.
inline CheckResult PassUnless(std::string area, std::string name, std::string error) {
  return error.empty() ? Pass(std::move(area), std::move(name))
                       : Fail(std::move(area), std::move(name), std::move(error));
}

using CheckList = std::vector<CheckResult>;

}  // namespace k3::verify
