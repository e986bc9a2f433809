// The typed conversation every chat renderer takes: messages with typed content parts, tool
// calls, tool results and reasoning, and the tools declared to the model. Protocol converters
// (src/api: OpenAI Chat, Anthropic Messages) build it; the K3 XTML renderer reads it directly and
// the Jinja renderer turns it into its template's data model (conversation_json.h). JSON Schemas
// and tool-call arguments stay JSON values: they are data the model reads, not structure we
// interpret. Plain values; equality compares every field.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k3::text::chat {

using Json = nlohmann::ordered_json;

enum class Role { kSystem, kUser, kAssistant, kTool };

// "system", "user", "assistant", "tool".
const char* RoleName(Role role);

struct ContentPart {
  enum class Kind { kText, kImage, kVideo };
  Kind kind = Kind::kText;
  std::string text;  // kText
  std::string url;   // kImage, kVideo: the source (URL or data URI; "" when none was given)

  static ContentPart Text(std::string text) { return {Kind::kText, std::move(text), {}}; }
  static ContentPart Image(std::string url = {}) { return {Kind::kImage, {}, std::move(url)}; }
  bool operator==(const ContentPart&) const = default;
};

// A message's content as it was given: absent, null, one string, or a list of parts. The K3
// renderer treats absent and null alike and a string like one text part; chat templates may tell
// all four apart (a list prints differently from a string), so the form is kept.
struct Content {
  enum class Form { kAbsent, kNull, kText, kParts };
  Form form = Form::kAbsent;
  std::string text;                // kText
  std::vector<ContentPart> parts;  // kParts

  static Content Null() { return {Form::kNull, {}, {}}; }
  static Content Of(std::string text) { return {Form::kText, std::move(text), {}}; }
  static Content Of(std::vector<ContentPart> parts) { return {Form::kParts, {}, std::move(parts)}; }
  bool operator==(const Content&) const = default;
};

// One call an assistant made. `arguments` is what the client sent: a JSON text (a string, the
// OpenAI form), an object, or nullopt when absent.
struct ToolCall {
  std::optional<std::string> id;
  std::string name;
  std::optional<Json> arguments;
  bool operator==(const ToolCall&) const = default;
};

// A function the model may call. Declared as {type: function, function: {name, description,
// parameters, strict}}; `parameters` is a JSON Schema object.
struct Tool {
  std::string name;
  std::optional<std::string> description;
  std::optional<Json> parameters;
  std::optional<bool> strict;
  bool operator==(const Tool&) const = default;
};

struct Message {
  Role role = Role::kUser;
  std::optional<std::string> name;  // the speaker's name
  Content content;
  std::string reasoning;             // assistant: what it thought before answering ("" = none)
  std::vector<ToolCall> tool_calls;  // assistant
  std::optional<std::string> tool_call_id;  // tool: the call this result answers
  std::optional<std::string> tool;  // tool: the tool's name, when no call matches by id (K3)
  std::vector<Tool> tools;          // system: tools declared mid-conversation (K3 dynamic tools)
  bool operator==(const Message&) const = default;
};

struct Conversation {
  std::vector<Message> messages;
  std::vector<Tool> tools;  // declared before the conversation
  bool operator==(const Conversation&) const = default;
};

// tool_choice: let the model decide, forbid calls, require one, or require one named function.
struct ToolChoice {
  enum class Mode { kAuto, kNone, kRequired, kFunction };
  Mode mode = Mode::kAuto;
  std::string function;  // kFunction
  bool operator==(const ToolChoice&) const = default;
};

// response_format: free text, any JSON object, or JSON matching a schema.
struct ResponseFormat {
  enum class Type { kText, kJsonObject, kJsonSchema };
  Type type = Type::kText;
  std::string name;    // kJsonSchema: json_schema.name
  Json schema;         // kJsonSchema: the schema (null when none was given)
  bool strict = true;  // kJsonSchema: false asks for valid JSON only, not the schema
  bool operator==(const ResponseFormat&) const = default;
};

}  // namespace k3::text::chat
