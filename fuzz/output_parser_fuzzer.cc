// output_parser_fuzzer: the Kimi output parsers (k3::text::output) on arbitrary model output.
// The first byte picks the options (format, starts_in_reasoning, thinking_enabled, declared
// tools, accept_undeclared_tools, truncated); the rest is the output text, fed in chunks whose
// sizes come from a hash of the input (so the whole input stays the text). Checks:
//  - never crashes or trips an internal K3_CHECK;
//  - streaming equals one-shot: the chunked run's events folded with ApplyEvents equal
//    ParseAll(text), the parser's own result() equals that fold, and the byte-by-byte run's
//    normalized events are identical to the single-chunk run's;
//  - every emitted string is valid UTF-8; ids are "functions.{name}:{first_tool_index + i}".
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"
#include "fuzz_common.h"
#include "text/output/output_parser.h"

namespace {

using k3::text::output::OutputEvent;
using k3::text::output::OutputFormat;
using k3::text::output::OutputParser;
using k3::text::output::ParsedOutput;
using k3::text::output::ParserOptions;

ParserOptions OptionsFrom(uint8_t bits) {
  ParserOptions o;
  o.format = (bits & 1) ? OutputFormat::kK3 : OutputFormat::kK2;
  o.starts_in_reasoning = bits & 2;
  o.thinking_enabled = !(bits & 4);
  if (!(bits & 8)) o.tool_names = {"search", "get_weather", "web_search", "a.b", "x-y"};
  o.accept_undeclared_tools = bits & 16;
  o.first_tool_index = (bits >> 6) & 1;
  return o;
}

// Merges adjacent text events of one kind and tool index (the chunking-independent form).
std::vector<OutputEvent> Normalize(const std::vector<OutputEvent>& events) {
  std::vector<OutputEvent> out;
  for (const OutputEvent& e : events) {
    bool text = e.kind != OutputEvent::kToolCallBegin && e.kind != OutputEvent::kToolCallEnd;
    if (text && !out.empty() && out.back().kind == e.kind &&
        out.back().tool_index == e.tool_index) {
      out.back().text += e.text;
    } else {
      out.push_back(e);
    }
  }
  return out;
}

bool SameEvents(const std::vector<OutputEvent>& a, const std::vector<OutputEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind || a[i].text != b[i].text || a[i].tool_index != b[i].tool_index ||
        a[i].id != b[i].id || a[i].name != b[i].name || a[i].complete != b[i].complete) {
      return false;
    }
  }
  return true;
}

// Feeds `text` in chunks of 1..max_chunk bytes (sizes from `seed`); returns the raw events.
std::vector<OutputEvent> Stream(std::string_view text, const ParserOptions& options, bool truncated,
                                uint64_t seed, size_t max_chunk, ParsedOutput* result) {
  OutputParser parser(options);
  std::vector<OutputEvent> events;
  size_t pos = 0;
  while (pos < text.size()) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    size_t n = 1 + (seed >> 33) % max_chunk;
    parser.Feed(text.substr(pos, n), &events);
    pos += n;
  }
  parser.Finish(truncated, &events);
  *result = parser.result();
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using k3::fuzz::Escaped;
  if (size == 0) return 0;
  const ParserOptions options = OptionsFrom(data[0]);
  const bool truncated = data[0] & 32;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  const ParsedOutput one_shot = k3::text::output::ParseAll(text, options, truncated);
  ParsedOutput result;
  const uint64_t seed = k3::fuzz::InputHash(data, size);
  std::vector<OutputEvent> chunked = Stream(text, options, truncated, seed, 17, &result);
  ParsedOutput folded;
  k3::text::output::ApplyEvents(chunked, &folded);
  folded.dropped_calls = result.dropped_calls;
  K3_CHECK(folded == one_shot) << "stream != one-shot for " << Escaped(text);
  K3_CHECK(result == one_shot) << "result() != one-shot for " << Escaped(text);

  ParsedOutput unused;
  std::vector<OutputEvent> bytewise = Normalize(Stream(text, options, truncated, seed, 1, &unused));
  std::vector<OutputEvent> whole =
      Normalize(Stream(text, options, truncated, seed, ~size_t{0} >> 1, &unused));
  K3_CHECK(SameEvents(bytewise, whole)) << "events depend on chunking for " << Escaped(text);

  K3_CHECK(k3::base::IsValidUtf8(one_shot.reasoning) && k3::base::IsValidUtf8(one_shot.content));
  for (size_t i = 0; i < one_shot.tool_calls.size(); ++i) {
    const auto& call = one_shot.tool_calls[i];
    K3_CHECK(k3::base::IsValidUtf8(call.arguments) && !call.name.empty());
    K3_CHECK(call.id == "functions." + call.name + ":" +
                            std::to_string(options.first_tool_index + static_cast<int>(i)));
  }
  return 0;
}
