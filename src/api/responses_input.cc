#include "api/responses_input.h"

#include <map>

#include "api/fields.h"

namespace k3::api {
namespace {

struct InputConverter {
  Json* messages;
  ApiError* error;
  std::map<std::string, std::string> renamed;  // client call_id -> functions.{name}:{n}
  int calls = 0;                               // tool calls so far in the conversation

  bool Fail(const std::string& where, const std::string& message) {
    *error = BadRequest(where + ": " + message, where);
    return false;
  }

  // The open assistant turn (the last message, when it is an assistant one), else a new one.
  Json& AssistantTurn() {
    if (messages->empty() || messages->back()["role"] != "assistant") {
      messages->push_back({{"role", "assistant"}, {"content", ""}});
    }
    return messages->back();
  }

  // One content part in chat form; input_image keeps its URL (file_id is not resolvable here).
  bool Part(const Json& part, const std::string& where, Json* out) {
    const std::string type = StringOr(part, "type");
    if (type == "input_text" || type == "output_text" || type == "text") {
      if (!part.contains("text") || !part["text"].is_string()) {
        return Fail(where, "a " + type + " part needs a string 'text'");
      }
      *out = {{"type", "text"}, {"text", part["text"]}};
      return true;
    }
    if (type == "refusal") {
      *out = {{"type", "text"}, {"text", StringOr(part, "refusal")}};
      return true;
    }
    if (type == "input_image") {
      const std::string url = StringOr(part, "image_url");
      if (url.empty())
        return Fail(where, "input_image needs an 'image_url' (file_id is not served)");
      *out = {{"type", "image_url"}, {"image_url", {{"url", url}}}};
      return true;
    }
    return Fail(where, "unsupported content part type '" + type + "'");
  }

  bool Content(const Json& content, const std::string& where, Json* out) {
    if (content.is_string()) {
      *out = content;
      return true;
    }
    if (!content.is_array()) return Fail(where, "content must be a string or a list of parts");
    *out = Json::array();
    for (size_t i = 0; i < content.size(); ++i) {
      Json part;
      if (!Part(content[i], where + ".content[" + std::to_string(i) + "]", &part)) return false;
      out->push_back(std::move(part));
    }
    return true;
  }

  bool Message(const Json& item, const std::string& where) {
    const std::string role = StringOr(item, "role");
    if (role != "user" && role != "assistant" && role != "system" && role != "developer") {
      return Fail(where, "a message needs role user, assistant, system or developer");
    }
    if (!item.contains("content")) return Fail(where, "a message needs 'content'");
    Json content;
    if (!Content(item["content"], where, &content)) return false;
    if (role == "assistant") {
      Json& turn = AssistantTurn();
      const bool empty = turn["content"] == "" && !turn.contains("tool_calls");
      if (!empty) messages->push_back({{"role", "assistant"}, {"content", ""}});
      messages->back()["content"] = std::move(content);
      return true;
    }
    messages->push_back({{"role", role}, {"content", std::move(content)}});
    return true;
  }

  // Reasoning starts a new assistant turn: its full text if given, else its summary.
  bool Reasoning(const Json& item, const std::string& where) {
    std::string text;
    for (const char* key : {"content", "summary"}) {
      const Json* parts = Fields(item).Get(key);
      if (parts == nullptr || !text.empty()) continue;
      if (!parts->is_array())
        return Fail(where, std::string("reasoning '") + key + "' must be a list");
      for (const Json& part : *parts) {
        if (!part.contains("text") || !part["text"].is_string()) {
          return Fail(where, std::string("reasoning '") + key + "' parts need a string 'text'");
        }
        if (!text.empty()) text += "\n\n";
        text += part["text"].get<std::string>();
      }
    }
    messages->push_back({{"role", "assistant"}, {"content", ""}, {"reasoning_content", text}});
    return true;
  }

  bool FunctionCall(const Json& item, const std::string& where) {
    const std::string name = StringOr(item, "name");
    const std::string call_id = StringOr(item, "call_id");
    if (name.empty() || call_id.empty()) return Fail(where, "function_call needs call_id and name");
    const Json* arguments = Fields(item).Get("arguments");
    if (arguments != nullptr && !arguments->is_string()) {
      return Fail(where, "function_call.arguments must be a string");
    }
    const std::string id = "functions." + name + ":" + std::to_string(calls++);
    renamed[call_id] = id;
    Json& turn = AssistantTurn();
    if (!turn.contains("tool_calls")) turn["tool_calls"] = Json::array();
    turn["tool_calls"].push_back(
        {{"id", id},
         {"type", "function"},
         {"function", {{"name", name}, {"arguments", arguments ? *arguments : Json("{}")}}}});
    return true;
  }

  bool FunctionOutput(const Json& item, const std::string& where) {
    const std::string call_id = StringOr(item, "call_id");
    if (call_id.empty() || !item.contains("output")) {
      return Fail(where, "function_call_output needs call_id and output");
    }
    Json output;
    if (!Content(item["output"], where, &output)) return false;
    auto it = renamed.find(call_id);
    messages->push_back({{"role", "tool"},
                         {"tool_call_id", it == renamed.end() ? call_id : it->second},
                         {"content", std::move(output)}});
    return true;
  }

  bool Item(const Json& item, const std::string& where) {
    if (!item.is_object()) return Fail(where, "an input item must be an object");
    const std::string type = StringOr(item, "type", item.contains("role") ? "message" : "");
    if (type == "message") return Message(item, where);
    if (type == "reasoning") return Reasoning(item, where);
    if (type == "function_call") return FunctionCall(item, where);
    if (type == "function_call_output") return FunctionOutput(item, where);
    if (type == "item_reference") {
      return Fail(where,
                  "item_reference needs stored responses; this server stores none (send the items "
                  "themselves, as clients do with store: false)");
    }
    return Fail(where, "unsupported input item type '" + type + "'");
  }
};

}  // namespace

bool ResponsesInputToMessages(const Json& body, Json* messages, ApiError* error) {
  *messages = Json::array();
  Fields f(body);
  std::string instructions;
  if (!f.String("instructions", &instructions, error)) return false;
  if (!instructions.empty()) messages->push_back({{"role", "system"}, {"content", instructions}});
  const Json* input = f.Get("input");
  if (input == nullptr) {
    *error = BadRequest("'input' is required", "input");
    return false;
  }
  if (input->is_string()) {
    messages->push_back({{"role", "user"}, {"content", *input}});
    return true;
  }
  if (!input->is_array()) {
    *error = BadRequest("'input' must be a string or a list of items", "input");
    return false;
  }
  InputConverter convert{.messages = messages, .error = error};
  for (size_t i = 0; i < input->size(); ++i) {
    if (!convert.Item((*input)[i], "input[" + std::to_string(i) + "]")) return false;
  }
  if (messages->empty()) {
    *error = BadRequest("'input' must not be empty", "input");
    return false;
  }
  return true;
}

}  // namespace k3::api
