// Fuzzes the chat-template engine: arbitrary bytes are parsed as a template and, when they parse,
// rendered against a small fixed chat context (messages with text and part lists, tool calls,
// tools, flags) under tight limits. Parsing and rendering must never crash, hang or leak; a
// failure must be one of the documented status codes with a message; output must respect the
// byte limit; and rendering is deterministic (a second render gives the same result).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/check.h"
#include "fuzz_common.h"
#include "text/jinja/json_value.h"
#include "text/jinja/template.h"

namespace {

using k3::base::StatusCode;
using k3::text::jinja::RenderOptions;
using k3::text::jinja::Template;
using k3::text::jinja::Value;

const Value& Context() {
  static const Value* context = [] {
    auto json = nlohmann::ordered_json::parse(R"({
      "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image"}]},
        {"role": "assistant", "content": "", "reasoning_content": "think",
         "tool_calls": [{"id": "functions.f:0", "type": "function",
                         "function": {"name": "f", "arguments": {"x": 1.5, "y": [true, null]}}}]},
        {"role": "tool", "tool_call_id": "functions.f:0", "content": "ok é😀"}
      ],
      "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
      "add_generation_prompt": true, "thinking": false, "n": 3, "s": "a\nb"
    })");
    return new Value(*k3::text::jinja::FromJson(json));
  }();
  return *context;
}

RenderOptions Limits() {
  RenderOptions options;
  options.max_output_bytes = 1 << 16;
  options.max_steps = 20000;
  options.max_call_depth = 16;
  options.max_value_nodes = 1 << 14;
  options.max_value_depth = 64;
  return options;
}

bool Expected(StatusCode code) {
  return code == StatusCode::kInvalidArgument || code == StatusCode::kResourceExhausted ||
         code == StatusCode::kUnimplemented;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  auto tmpl = Template::Parse(source);
  if (!tmpl.ok()) {
    K3_CHECK(tmpl.status().code() == StatusCode::kInvalidArgument) << tmpl.status().ToString();
    K3_CHECK(!tmpl.status().message().empty());
    return 0;
  }
  RenderOptions limits = Limits();
  auto first = tmpl->Render(Context(), limits);
  auto second = tmpl->Render(Context(), limits);
  K3_CHECK(first.ok() == second.ok()) << k3::fuzz::Escaped(source);
  if (!first.ok()) {
    K3_CHECK(Expected(first.status().code()))
        << first.status().ToString() << " for " << k3::fuzz::Escaped(source);
    K3_CHECK(!first.status().message().empty());
    return 0;
  }
  K3_CHECK(first->size() <= limits.max_output_bytes);
  K3_CHECK(*first == *second) << "non-deterministic render of " << k3::fuzz::Escaped(source);
  return 0;
}
