// Test helpers for the output parsers: option builders and chunked (streaming) parsing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "text/output/output_parser.h"

namespace k3::text::output {

// Readable gtest failure output.
inline void PrintTo(const ParsedOutput& out, std::ostream* os) {
  nlohmann::json j = {{"reasoning", out.reasoning},
                      {"content", out.content},
                      {"dropped_calls", out.dropped_calls},
                      {"tool_calls", nlohmann::json::array()}};
  for (const ParsedToolCall& c : out.tool_calls) {
    j["tool_calls"].push_back(
        {{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}, {"complete", c.complete}});
  }
  *os << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace k3::text::output

namespace k3::text::output::testing {

inline ParserOptions K2Options(std::vector<std::string> tools = {"get_weather", "search"}) {
  ParserOptions o;
  o.format = OutputFormat::kK2;
  o.tool_names = std::move(tools);
  return o;
}

inline ParserOptions K3Options(bool in_think,
                               std::vector<std::string> tools = {"get_weather", "web_search"}) {
  ParserOptions o;
  o.format = OutputFormat::kK3;
  o.starts_in_reasoning = in_think;
  o.tool_names = std::move(tools);
  return o;
}

// Merges adjacent text events of the same kind and tool index: the canonical event list, which
// must not depend on the chunking.
inline std::vector<OutputEvent> Normalize(const std::vector<OutputEvent>& events) {
  std::vector<OutputEvent> out;
  for (const OutputEvent& e : events) {
    bool text = e.kind == OutputEvent::kReasoning || e.kind == OutputEvent::kContent ||
                e.kind == OutputEvent::kToolCallArguments;
    if (text && !out.empty() && out.back().kind == e.kind &&
        out.back().tool_index == e.tool_index) {
      out.back().text += e.text;
    } else {
      out.push_back(e);
    }
  }
  return out;
}

struct StreamRun {
  std::vector<OutputEvent> events;  // normalized
  ParsedOutput from_events;         // ApplyEvents(events) plus dropped_calls from result()
  ParsedOutput result;              // parser.result()
};

// Feeds `text` cut at the given offsets (ascending, within the text).
inline StreamRun ParseChunked(std::string_view text, const ParserOptions& options,
                              const std::vector<size_t>& cuts, bool truncated = false) {
  OutputParser parser(options);
  std::vector<OutputEvent> events;
  size_t prev = 0;
  for (size_t cut : cuts) {
    parser.Feed(text.substr(prev, cut - prev), &events);
    prev = cut;
  }
  parser.Feed(text.substr(prev), &events);
  parser.Finish(truncated, &events);
  StreamRun run;
  run.events = Normalize(events);
  ApplyEvents(events, &run.from_events);
  run.from_events.dropped_calls = parser.result().dropped_calls;
  run.result = parser.result();
  return run;
}

// Random cut points: sometimes every byte, sometimes few, usually a mix of small chunks.
inline std::vector<size_t> RandomCuts(size_t size, std::mt19937_64& rng) {
  std::vector<size_t> cuts;
  if (size == 0) return cuts;
  int mode = static_cast<int>(rng() % 4);
  if (mode == 0) {
    for (size_t i = 1; i < size; ++i) cuts.push_back(i);
    return cuts;
  }
  size_t max_step = mode == 1 ? 3 : (mode == 2 ? 12 : 64);
  for (size_t pos = 1 + rng() % max_step; pos < size; pos += 1 + rng() % max_step) {
    cuts.push_back(pos);
  }
  return cuts;
}

inline std::vector<size_t> EveryByte(size_t size) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < size; ++i) cuts.push_back(i);
  return cuts;
}

}  // namespace k3::text::output::testing

namespace k3::text::output::testing {

// A hand-written case: the text, how it ends, and the expected parse.
struct OutputCase {
  std::string name;
  ParserOptions options;
  std::string text;
  bool truncated = false;
  ParsedOutput expected;
};

inline ParsedToolCall Call(const std::string& name, int index, const std::string& arguments,
                           bool complete = true) {
  return {"functions." + name + ":" + std::to_string(index), name, arguments, complete};
}

inline ParsedOutput Out(const std::string& reasoning, const std::string& content,
                        std::vector<ParsedToolCall> calls = {}, int dropped = 0) {
  ParsedOutput out;
  out.reasoning = reasoning;
  out.content = content;
  out.tool_calls = std::move(calls);
  out.dropped_calls = dropped;
  return out;
}

std::vector<OutputCase> K2Cases();  // k2_parser_test.cc
std::vector<OutputCase> K3Cases();  // k3_parser_test.cc

// An assistant message of the K3 render goldens, as model output, with its request message.
struct GoldenMessage {
  std::string name;
  ParserOptions options;
  std::string text;
  nlohmann::json request;
};
std::vector<GoldenMessage> K3GoldenMessages();  // k3_parser_test.cc

}  // namespace k3::text::output::testing
