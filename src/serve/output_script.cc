#include "serve/output_script.h"

#include <fstream>
#include <sstream>

namespace k3::serve {
namespace {

using text::chat::Message;
using text::chat::Role;

base::Status RuleError(size_t index, const std::string& what) {
  return base::InvalidArgument("script rule " + std::to_string(index) + ": " + what);
}

base::Result<ScriptedCall> ParseCall(const Json& call, size_t index) {
  if (!call.is_object() || !call.contains("name") || !call["name"].is_string()) {
    return RuleError(index, "each tool_calls entry needs a string \"name\"");
  }
  ScriptedCall out;
  out.name = call["name"].get<std::string>();
  if (call.contains("arguments")) {
    if (!call["arguments"].is_object()) return RuleError(index, "\"arguments\" must be an object");
    out.arguments = call["arguments"];
  }
  return out;
}

base::Result<ScriptRule> ParseRule(const Json& rule, size_t index) {
  if (!rule.is_object()) return RuleError(index, "must be an object");
  ScriptRule out;
  auto string_field = [&](const char* key, std::string* dst) -> base::Status {
    if (!rule.contains(key)) return base::Status::Ok();
    if (!rule[key].is_string())
      return RuleError(index, std::string("\"") + key + "\" must be a string");
    *dst = rule[key].get<std::string>();
    return base::Status::Ok();
  };
  for (const auto& [key, value] : rule.items()) {
    static const char* const kKnown[] = {"tool_results", "has_tool", "last_user_contains",
                                         "reasoning",    "text",     "tool_calls"};
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      return RuleError(index, "unknown field \"" + key + "\"");
    }
  }
  if (rule.contains("tool_results")) {
    if (!rule["tool_results"].is_number_integer()) {
      return RuleError(index, "\"tool_results\" must be an integer");
    }
    out.tool_results = rule["tool_results"].get<int>();
  }
  std::string has_tool, last_user;
  K3_RETURN_IF_ERROR(string_field("has_tool", &has_tool));
  K3_RETURN_IF_ERROR(string_field("last_user_contains", &last_user));
  if (rule.contains("has_tool")) out.has_tool = has_tool;
  if (rule.contains("last_user_contains")) out.last_user_contains = last_user;
  K3_RETURN_IF_ERROR(string_field("reasoning", &out.reasoning));
  K3_RETURN_IF_ERROR(string_field("text", &out.text));
  if (rule.contains("tool_calls")) {
    if (!rule["tool_calls"].is_array()) return RuleError(index, "\"tool_calls\" must be an array");
    for (const Json& call : rule["tool_calls"]) {
      K3_ASSIGN_OR_RETURN(ScriptedCall parsed, ParseCall(call, index));
      out.tool_calls.push_back(std::move(parsed));
    }
  }
  return out;
}

std::string TextOf(const Message& message) {
  if (message.content.form == text::chat::Content::Form::kText) return message.content.text;
  std::string text;
  for (const auto& part : message.content.parts) text += part.text;
  return text;
}

bool Matches(const ScriptRule& rule, const ChatRequest& request) {
  const auto& messages = request.conversation.messages;
  if (rule.tool_results) {
    const auto results = std::count_if(messages.begin(), messages.end(),
                                       [](const Message& m) { return m.role == Role::kTool; });
    if (results != *rule.tool_results) return false;
  }
  if (rule.has_tool) {
    const auto& tools = request.conversation.tools;
    if (std::none_of(tools.begin(), tools.end(),
                     [&](const text::chat::Tool& t) { return t.name == *rule.has_tool; })) {
      return false;
    }
  }
  if (rule.last_user_contains) {
    auto last = std::find_if(messages.rbegin(), messages.rend(),
                             [](const Message& m) { return m.role == Role::kUser; });
    if (last == messages.rend() ||
        TextOf(*last).find(*rule.last_user_contains) == std::string::npos) {
      return false;
    }
  }
  return true;
}

// XTML attribute values escape & and " (the parser unescapes them).
std::string Attribute(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Open(const std::string& tag) { return "<|open|>" + tag + "<|sep|>"; }
std::string Close(const std::string& tag) { return "<|close|>" + tag + "<|sep|>"; }

const char* K3Type(const Json& value) {
  if (value.is_string()) return "string";
  if (value.is_number()) return "number";
  if (value.is_boolean()) return "boolean";
  if (value.is_null()) return "null";
  return value.is_array() ? "array" : "object";
}

// K3: the prompt ends inside the think block (thinking on) or the response block (off).
std::string RenderK3(const ScriptRule& rule, const text::output::ParserOptions& parser) {
  std::string out;
  if (parser.starts_in_reasoning) out += rule.reasoning + Close("think") + Open("response");
  out += rule.text + Close("response");
  if (!rule.tool_calls.empty()) {
    out += Open("tools");
    for (size_t i = 0; i < rule.tool_calls.size(); ++i) {
      const ScriptedCall& call = rule.tool_calls[i];
      out += Open("call tool=\"" + Attribute(call.name) + "\" index=\"" + std::to_string(i + 1) +
                  "\"");
      for (const auto& [key, value] : call.arguments.items()) {
        const std::string body = value.is_string() ? value.get<std::string>() : value.dump();
        out += Open("argument key=\"" + Attribute(key) + "\" type=\"" + K3Type(value) + "\"") +
               body + Close("argument");
      }
      out += Close("call");
    }
    out += Close("tools");
  }
  return out + Close("message");
}

// K2 family: optional reasoning closed by </think>, content, one tool-call section.
std::string RenderK2(const ScriptRule& rule, const text::output::ParserOptions& parser) {
  std::string out;
  if (parser.starts_in_reasoning) out += rule.reasoning + "</think>";
  out += rule.text;
  if (rule.tool_calls.empty()) return out;
  out += "<|tool_calls_section_begin|>";
  for (size_t i = 0; i < rule.tool_calls.size(); ++i) {
    const ScriptedCall& call = rule.tool_calls[i];
    out += "<|tool_call_begin|>functions." + call.name + ":" +
           std::to_string(parser.first_tool_index + static_cast<int>(i)) +
           "<|tool_call_argument_begin|>" + call.arguments.dump() + "<|tool_call_end|>";
  }
  return out + "<|tool_calls_section_end|>";
}

}  // namespace

base::Result<OutputScript> OutputScript::Parse(const std::string& text) {
  std::vector<Json> rules;
  const Json whole = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (whole.is_array()) {
    rules.assign(whole.begin(), whole.end());
  } else {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Json rule = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (rule.is_discarded()) {
        return base::InvalidArgument("script line " + std::to_string(rules.size() + 1) +
                                     ": not JSON (expected a JSON array of rules, or JSONL)");
      }
      rules.push_back(std::move(rule));
    }
  }
  OutputScript script;
  for (size_t i = 0; i < rules.size(); ++i) {
    K3_ASSIGN_OR_RETURN(ScriptRule rule, ParseRule(rules[i], i));
    script.rules_.push_back(std::move(rule));
  }
  return script;
}

base::Result<OutputScript> OutputScript::FromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::NotFound("cannot read the script file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str());
}

const ScriptRule* OutputScript::Select(const ChatRequest& request) const {
  for (const ScriptRule& rule : rules_) {
    if (Matches(rule, request)) return &rule;
  }
  return nullptr;
}

std::string OutputScript::Render(const ScriptRule& rule,
                                 const text::output::ParserOptions& parser) {
  return parser.format == text::output::OutputFormat::kK3 ? RenderK3(rule, parser)
                                                          : RenderK2(rule, parser);
}

}  // namespace k3::serve
