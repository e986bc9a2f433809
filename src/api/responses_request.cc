#include "api/responses_request.h"

#include <set>

#include "api/fields.h"
#include "api/responses_input.h"
#include "serve/effort.h"

namespace k3::api {
namespace {

bool RespFail(ApiError* error, std::string message, std::string param) {
  *error = BadRequest(std::move(message), std::move(param));
  return false;
}

// Hosted tools OpenAI runs itself; this server cannot, so they are ignored (and echoed).
bool IsHostedToolType(const std::string& type) {
  static const std::set<std::string> kHosted = {
      "file_search", "code_interpreter", "computer",    "computer_use", "computer_use_preview",
      "mcp",         "image_generation", "local_shell", "shell",        "apply_patch",
      "custom",      "namespace",        "tool_search"};
  return type.starts_with("web_search") || kHosted.contains(type);
}

// What this server keeps no state for: a clear 400 rather than a silently different answer.
bool ResponsesStateless(const Json& body, ApiError* error) {
  Fields f(body);
  if (f.Get("conversation") != nullptr) {
    return RespFail(error, "'conversation' is not supported: this server does not store responses",
                    "conversation");
  }
  if (f.Get("prompt") != nullptr) {
    return RespFail(error, "'prompt' (stored prompt templates) is not supported", "prompt");
  }
  bool background = false;
  if (!f.Bool("background", &background, error)) return false;
  if (background) return RespFail(error, "'background' responses are not supported", "background");
  return true;
}

// Flat function tools -> chat tools (strict defaults to true, as in the Responses API).
bool ResponsesTools(const Json& body, Json* chat, Json* echo, ApiError* error) {
  const Json* tools = Fields(body).Get("tools");
  (*echo)["tools"] = Json::array();
  if (tools == nullptr) return true;
  if (!tools->is_array()) return RespFail(error, "'tools' must be a list", "tools");
  Json converted = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    const std::string type = StringOr(tool, "type");
    if (IsHostedToolType(type)) {
      (*echo)["tools"].push_back(tool);
      continue;
    }
    if (type != "function") {
      return RespFail(error, where + ": unsupported tool type '" + type + "'", where + ".type");
    }
    Json function = {{"name", tool.contains("name") ? tool["name"] : Json("")}};
    Fields f(tool, where);
    bool strict = true;
    if (!f.Bool("strict", &strict, error)) return false;
    if (const Json* description = f.Get("description")) function["description"] = *description;
    function["parameters"] = f.Get("parameters") ? tool["parameters"] : Json::object();
    function["strict"] = strict;
    Json flat = {{"type", "function"}, {"name", function["name"]}};
    flat["description"] = function.contains("description") ? function["description"] : Json();
    flat["parameters"] = function["parameters"];
    flat["strict"] = strict;
    (*echo)["tools"].push_back(std::move(flat));
    converted.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  if (!converted.empty()) (*chat)["tools"] = std::move(converted);
  return true;
}

bool ResponsesToolChoice(const Json& body, Json* chat, Json* echo, ApiError* error) {
  const Json* choice = Fields(body).Get("tool_choice");
  (*echo)["tool_choice"] = choice ? *choice : Json("auto");
  if (choice == nullptr) return true;
  if (choice->is_string()) {
    (*chat)["tool_choice"] = *choice;  // auto, none, required: the chat validator checks
    return true;
  }
  const std::string type = StringOr(*choice, "type");
  if (type == "function" && choice->contains("name")) {
    (*chat)["tool_choice"] = {{"type", "function"}, {"function", {{"name", (*choice)["name"]}}}};
    return true;
  }
  if (IsHostedToolType(type)) {
    return RespFail(error,
                    "'tool_choice' forces a '" + type + "' tool, which this server cannot run",
                    "tool_choice");
  }
  return RespFail(error,
                  "'tool_choice' must be 'none', 'auto', 'required' or {type: function, name}",
                  "tool_choice");
}

// reasoning.effort -> the chat reasoning_effort (one vocabulary for every protocol,
// serve/effort.h); summary is accepted: the reasoning item always carries the whole reasoning
// text as its summary.
bool ResponsesReasoning(const Json& body, Json* chat, Json* echo, ApiError* error) {
  const Json* reasoning = Fields(body).Get("reasoning");
  (*echo)["reasoning"] = {{"effort", nullptr}, {"summary", nullptr}};
  if (reasoning == nullptr) return true;
  if (!reasoning->is_object()) return RespFail(error, "'reasoning' must be an object", "reasoning");
  Fields f(*reasoning, "reasoning");
  std::string effort, summary;
  if (!f.Enum("effort", serve::EffortNames(), &effort, error) ||
      !f.Enum("summary", {"auto", "concise", "detailed"}, &summary, error)) {
    return false;
  }
  if (!effort.empty()) (*echo)["reasoning"]["effort"] = effort;
  if (!summary.empty()) (*echo)["reasoning"]["summary"] = summary;
  if (!effort.empty()) (*chat)["reasoning_effort"] = effort;
  return true;
}

// text.format (text / json_object / json_schema with name, schema, strict) -> response_format.
bool ResponsesText(const Json& body, Json* chat, Json* echo, ApiError* error) {
  const Json* text = Fields(body).Get("text");
  (*echo)["text"] = {{"format", {{"type", "text"}}}, {"verbosity", "medium"}};
  if (text == nullptr) return true;
  if (!text->is_object()) return RespFail(error, "'text' must be an object", "text");
  std::string verbosity;
  if (!Fields(*text, "text").Enum("verbosity", {"low", "medium", "high"}, &verbosity, error)) {
    return false;
  }
  if (!verbosity.empty()) (*echo)["text"]["verbosity"] = verbosity;
  const Json* format = Fields(*text).Get("format");
  if (format == nullptr) return true;
  (*echo)["text"]["format"] = *format;
  const std::string type = StringOr(*format, "type");
  if (type == "text") return true;
  if (type == "json_object") {
    (*chat)["response_format"] = {{"type", "json_object"}};
    return true;
  }
  if (type != "json_schema") {
    return RespFail(error, "'text.format.type' must be 'text', 'json_object' or 'json_schema'",
                    "text.format.type");
  }
  Json schema = {{"name", format->contains("name") ? (*format)["name"] : Json()},
                 {"schema", format->contains("schema") ? (*format)["schema"] : Json()}};
  for (const char* key : {"strict", "description"}) {
    if (Fields(*format).Get(key)) schema[key] = (*format)[key];
  }
  (*chat)["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
  return true;
}

// include: values about hosted tools are accepted (there are none to include);
// reasoning.encrypted_content is accepted and nothing is added (reasoning round-trips as its
// summary text); output logprobs are not served here.
bool ResponsesInclude(const Json& body, ApiError* error) {
  static const std::set<std::string> kAccepted = {"reasoning.encrypted_content",
                                                  "message.input_image.image_url",
                                                  "file_search_call.results",
                                                  "web_search_call.results",
                                                  "web_search_call.action.sources",
                                                  "code_interpreter_call.outputs",
                                                  "computer_call_output.output.image_url"};
  const Json* include = Fields(body).Get("include");
  if (include == nullptr) return true;
  if (!include->is_array())
    return RespFail(error, "'include' must be a list of strings", "include");
  for (const Json& value : *include) {
    if (value.is_string() && kAccepted.contains(value.get<std::string>())) continue;
    return RespFail(error, "'include' value " + value.dump() + " is not supported", "include");
  }
  return true;
}

// Sampling, limits and what the response echoes unchanged.
bool ResponsesScalars(const Json& body, Json* chat, Json* echo, ApiError* error) {
  Fields f(body);
  for (const char* key : {"temperature", "top_p", "k3_forced_output", "parallel_tool_calls"}) {
    if (f.Get(key)) (*chat)[key] = body[key];
  }
  int64_t top_logprobs = 0;
  if (!f.Integer("top_logprobs", 0, 0, &top_logprobs, error)) {
    error->message = "'top_logprobs' is not supported by this server (only 0)";
    return false;
  }
  if (f.Get("max_output_tokens")) (*chat)["max_tokens"] = body["max_output_tokens"];
  std::string user;
  if (!f.String("user", &user, error)) return false;
  const Json* metadata = f.Get("metadata");
  if (metadata && !metadata->is_object()) {
    return RespFail(error, "'metadata' must be an object", "metadata");
  }
  bool store = true;
  if (!f.Bool("store", &store, error)) return false;
  (*echo)["store"] = store;
  (*echo)["metadata"] = metadata ? *metadata : Json::object();
  for (const char* key : {"instructions", "max_output_tokens", "temperature", "top_p", "user",
                          "max_tool_calls", "safety_identifier", "prompt_cache_key"}) {
    (*echo)[key] = f.Get(key) ? body[key] : Json();
  }
  (*echo)["parallel_tool_calls"] =
      f.Get("parallel_tool_calls") ? body["parallel_tool_calls"] : Json(true);
  (*echo)["truncation"] = StringOr(body, "truncation", "disabled");
  (*echo)["service_tier"] = "default";
  return true;
}

// A chat-parser error about a renamed field names the Responses field (message and param).
void RenameChatField(ApiError* error) {
  static const std::pair<const char*, const char*> kRenamed[] = {
      {"max_tokens", "max_output_tokens"},
      {"response_format.json_schema", "text.format"},
      {"response_format", "text.format"},
      {"reasoning_effort", "reasoning.effort"}};
  for (const auto& [chat, responses] : kRenamed) {
    if (!error->param.starts_with(chat)) continue;
    error->param = responses + error->param.substr(std::string_view(chat).size());
    for (size_t at; (at = error->message.find(chat)) != std::string::npos;) {
      error->message.replace(at, std::string_view(chat).size(), responses);
    }
    return;
  }
}

}  // namespace

bool ParseResponsesRequest(const Json& raw, const ApiOptions& options, ResponsesRequest* out,
                           ApiError* error, const ResponsesStore* store) {
  if (!raw.is_object()) return RespFail(error, "the request body must be a JSON object", "");
  Json body;
  if (!ResolveStored(raw, store, &body, error)) return false;
  Json chat = Json::object();
  Json& echo = out->echo;
  if (!ResponsesStateless(body, error) ||
      !ResponsesInputToMessages(body, &chat["messages"], error) ||
      !ResponsesTools(body, &chat, &echo, error) ||
      !ResponsesToolChoice(body, &chat, &echo, error) ||
      !ResponsesReasoning(body, &chat, &echo, error) || !ResponsesText(body, &chat, &echo, error) ||
      !ResponsesInclude(body, error) || !ResponsesScalars(body, &chat, &echo, error) ||
      !Fields(body).Bool("stream", &out->stream, error)) {
    return false;
  }
  OpenAiRequest parsed;
  if (!ParseChatRequest(chat, options, &parsed, error)) {
    RenameChatField(error);
    return false;
  }
  out->input_items = body["input"].is_array()
                         ? body["input"]
                         : Json::array({{{"role", "user"}, {"content", body["input"]}}});
  out->store = echo["store"].get<bool>();
  out->generate = std::move(parsed.generate);
  return true;
}

}  // namespace k3::api
