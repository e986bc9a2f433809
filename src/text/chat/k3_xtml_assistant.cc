// Assistant messages: the think channel (only with thinking on), the response channel, and the
// tools block with one `call` per tool call, its arguments as typed `argument` elements (or the
// raw text in a `json` element when the arguments string is not JSON).
#include <string>

#include "text/chat/k3_xtml_messages.h"

namespace k3::text::chat::k3_xtml {
namespace {

// The arguments of one call: an object to render as `argument`s, or raw text for a `json` block.
struct CallArguments {
  const Json* object = nullptr;  // null with empty raw: no arguments at all
  Json parsed;                   // owns `object` when it came from a JSON string
  std::string raw;               // non-empty: unparseable arguments text
};

// null -> none; object -> itself; string -> none when blank, else parsed (unparseable -> raw
// block; parsed non-object -> error); anything else is an error.
base::Status NormalizeArguments(const Json* arguments, const std::string& path,
                                CallArguments* out) {
  if (arguments == nullptr || arguments->is_null()) return base::Status::Ok();
  if (arguments->is_object()) {
    out->object = arguments;
    return base::Status::Ok();
  }
  if (!arguments->is_string()) {
    return base::InvalidArgument(path + " must be an object or a JSON object string");
  }
  const std::string& text = arguments->get_ref<const std::string&>();
  if (IsBlank(text)) return base::Status::Ok();
  out->parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out->parsed.is_discarded()) {
    out->raw = text;
    return base::Status::Ok();
  }
  if (!out->parsed.is_object()) {
    return base::InvalidArgument(path + " must encode a JSON object");
  }
  out->object = &out->parsed;
  return base::Status::Ok();
}

const char* XtmlType(const Json& value) {
  if (value.is_boolean()) return "boolean";
  if (value.is_null()) return "null";
  if (value.is_number()) return "number";
  if (value.is_string()) return "string";
  if (value.is_object()) return "object";
  return "array";
}

// One `call` element; `position` is 1-based.
base::Status RenderCall(const Json& call, const std::string& path, size_t position,
                        XtmlWriter& writer) {
  if (!call.is_object()) return base::InvalidArgument(path + " must be an object");
  const Json* function = Field(call, "function");
  const std::string fn_path = function != nullptr ? path + ".function" : path;
  if (function == nullptr) function = &call;
  const Json* name = function->is_object() ? Field(*function, "name") : nullptr;
  if (name == nullptr || !name->is_string() || name->get_ref<const std::string&>().empty()) {
    return base::InvalidArgument(fn_path + ".name must be a non-empty string");
  }
  CallArguments args;
  K3_RETURN_IF_ERROR(
      NormalizeArguments(Field(*function, "arguments"), fn_path + ".arguments", &args));
  writer.OpenTag(
      "call", {{"tool", name->get_ref<const std::string&>()}, {"index", std::to_string(position)}});
  if (!args.raw.empty()) {
    writer.OpenTag("json", {{"type", "object"}});
    K3_RETURN_IF_ERROR(writer.AppendText(args.raw));
    writer.CloseTag("json");
  } else if (args.object != nullptr) {
    for (auto it = args.object->begin(); it != args.object->end(); ++it) {
      const Json& value = it.value();
      writer.OpenTag("argument", {{"key", it.key()}, {"type", XtmlType(value)}});
      if (value.is_string()) {
        K3_RETURN_IF_ERROR(writer.AppendText(value.get_ref<const std::string&>()));
      } else {
        K3_ASSIGN_OR_RETURN(std::string dumped, PyJsonDefault(value));
        K3_RETURN_IF_ERROR(writer.AppendText(dumped));
      }
      writer.CloseTag("argument");
    }
  }
  writer.CloseTag("call");
  return base::Status::Ok();
}

base::Status RenderToolCalls(const Json& message, size_t index, XtmlWriter& writer) {
  const Json* calls = Field(message, "tool_calls");
  if (calls == nullptr || calls->is_null()) return base::Status::Ok();
  const std::string path = FieldPath(index, "tool_calls");
  if (!calls->is_array()) return base::InvalidArgument(path + " must be a list or null");
  if (calls->empty()) return base::Status::Ok();
  writer.OpenTag("tools");
  for (size_t j = 0; j < calls->size(); ++j) {
    std::string call_path = path + "[" + std::to_string(j) + "]";
    K3_RETURN_IF_ERROR(RenderCall((*calls)[j], call_path, j + 1, writer));
  }
  writer.CloseTag("tools");
  return base::Status::Ok();
}

// `reasoning_content or reasoning` (the first that is neither null nor empty).
base::Result<std::optional<std::string>> Reasoning(const Json& message, size_t index) {
  for (const char* key : {"reasoning_content", "reasoning"}) {
    K3_ASSIGN_OR_RETURN(std::optional<std::string> text, OptionalString(message, key, index));
    if (text && !text->empty()) return text;
  }
  return std::optional<std::string>();
}

}  // namespace

base::Status RenderAssistantBody(const Json& message, size_t index, bool thinking,
                                 XtmlWriter& writer) {
  // With thinking on the think channel is always there, empty when the reasoning is blank
  // (written unstripped otherwise); with thinking off it is absent.
  if (thinking) {
    K3_ASSIGN_OR_RETURN(std::optional<std::string> reasoning, Reasoning(message, index));
    writer.OpenTag("think");
    if (reasoning && !IsBlank(*reasoning)) K3_RETURN_IF_ERROR(writer.AppendText(*reasoning));
    writer.CloseTag("think");
  }
  writer.OpenTag("response");
  K3_RETURN_IF_ERROR(RenderContent(message, index, writer));
  writer.CloseTag("response");
  return RenderToolCalls(message, index, writer);
}

}  // namespace k3::text::chat::k3_xtml
