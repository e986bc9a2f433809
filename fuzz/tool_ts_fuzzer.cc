// Fuzzes Moonshot's TypeScript tool encoder port (text/chat/tool_ts.h): the input is parsed as
// JSON and encoded as a tools array, sorted and unsorted; a JSON object is also tried as one
// function's parameters schema, which reaches the schema walker directly. The encoder must never
// crash, hang or leak; it is deterministic; a result is "" or a whole `namespace functions {...}`
// block within the size limit; and DeepSortKeys is idempotent.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/check.h"
#include "fuzz_common.h"
#include "text/chat/tool_ts.h"

namespace {

using Json = nlohmann::ordered_json;
using k3::text::chat::DeepSortKeys;
using k3::text::chat::EncodeToolsTypescript;

constexpr std::string_view kHead = "# Tools\n\n## functions\nnamespace functions {\n";

void Check(const Json& tools, std::string_view input) {
  std::optional<std::string> first = EncodeToolsTypescript(tools);
  std::optional<std::string> second = EncodeToolsTypescript(tools);
  K3_CHECK(first == second) << "non-deterministic for " << k3::fuzz::Escaped(input);
  if (!first || first->empty()) return;
  K3_CHECK(first->size() <= k3::text::chat::kMaxToolTsBytes);
  K3_CHECK(first->starts_with(kHead) && first->ends_with("\n}\n"))
      << k3::fuzz::Escaped(*first) << " for " << k3::fuzz::Escaped(input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  Json json = Json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  Json sorted = DeepSortKeys(json);
  K3_CHECK(DeepSortKeys(sorted) == sorted) << k3::fuzz::Escaped(input);
  Check(json, input);
  Check(sorted, input);
  if (json.is_object()) {
    Json tools = Json::array();
    tools.push_back({{"type", "function"}, {"function", {{"name", "f"}, {"parameters", json}}}});
    Check(tools, input);
    Check(DeepSortKeys(tools), input);
  }
  return 0;
}
