// Fuzzes the Kimi K3 chat renderer: arbitrary bytes are parsed as a chat-completions request body
// and, when they are JSON, mapped to render options and rendered. Must never crash, hang or leak;
// a failure must be INVALID_ARGUMENT or RESOURCE_EXHAUSTED with a message; rendering is
// deterministic; and no caller-written text can become markup: every allow_special segment is one
// of the four XTML markers or the image placeholder (no image prompts come from a request).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/check.h"
#include "fuzz_common.h"
#include "text/chat/k3_xtml.h"

namespace {

using k3::base::StatusCode;
using k3::text::chat::ChatSegments;

bool IsMarkup(std::string_view text) {
  return text == "<|open|>" || text == "<|close|>" || text == "<|sep|>" ||
         text == "<|end_of_msg|>" || text == k3::text::chat::kK3ImagePlaceholder;
}

void CheckSegments(const ChatSegments& segments, std::string_view input) {
  for (const auto& segment : segments) {
    K3_CHECK(!segment.text.empty()) << "empty segment for " << k3::fuzz::Escaped(input);
    if (segment.allow_special) {
      K3_CHECK(IsMarkup(segment.text))
          << "caller text became markup: " << k3::fuzz::Escaped(segment.text) << " for "
          << k3::fuzz::Escaped(input);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto request = nlohmann::ordered_json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) return 0;
  auto first = k3::text::chat::RenderK3Request(request);
  auto second = k3::text::chat::RenderK3Request(request);
  K3_CHECK(first.ok() == second.ok()) << k3::fuzz::Escaped(input);
  if (!first.ok()) {
    StatusCode code = first.status().code();
    K3_CHECK(code == StatusCode::kInvalidArgument || code == StatusCode::kResourceExhausted)
        << first.status().ToString() << " for " << k3::fuzz::Escaped(input);
    K3_CHECK(!first.status().message().empty());
    K3_CHECK(first.status().ToString() == second.status().ToString());
    return 0;
  }
  CheckSegments(*first, input);
  K3_CHECK(k3::text::chat::JoinSegments(*first) == k3::text::chat::JoinSegments(*second))
      << "non-deterministic render of " << k3::fuzz::Escaped(input);
  return 0;
}
