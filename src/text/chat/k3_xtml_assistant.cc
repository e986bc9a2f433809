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

// none/null -> none; object -> itself; string -> none when blank, else parsed (unparseable -> raw
// block; parsed non-object -> error); anything else is an error.
base::Status NormalizeArguments(const std::optional<Json>& arguments, const std::string& path,
                                CallArguments* out) {
  if (!arguments || arguments->is_null()) return base::Status::Ok();
  if (arguments->is_object()) {
    out->object = &*arguments;
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
base::Status RenderCall(const ToolCall& call, const std::string& path, size_t position,
                        XtmlWriter& writer) {
  const std::string fn_path = path + ".function";
  if (call.name.empty()) return base::InvalidArgument(fn_path + ".name must be a non-empty string");
  CallArguments args;
  K3_RETURN_IF_ERROR(NormalizeArguments(call.arguments, fn_path + ".arguments", &args));
  writer.OpenTag("call", {{"tool", call.name}, {"index", std::to_string(position)}});
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

base::Status RenderToolCalls(const Message& message, size_t index, XtmlWriter& writer) {
  if (message.tool_calls.empty()) return base::Status::Ok();
  const std::string path = FieldPath(index, "tool_calls");
  writer.OpenTag("tools");
  for (size_t j = 0; j < message.tool_calls.size(); ++j) {
    std::string call_path = path + "[" + std::to_string(j) + "]";
    K3_RETURN_IF_ERROR(RenderCall(message.tool_calls[j], call_path, j + 1, writer));
  }
  writer.CloseTag("tools");
  return base::Status::Ok();
}

}  // namespace

base::Status RenderAssistantBody(const Message& message, size_t index, bool thinking,
                                 XtmlWriter& writer) {
  // With thinking on the think channel is always there, empty when the reasoning is blank
  // (written unstripped otherwise); with thinking off it is absent.
  if (thinking) {
    writer.OpenTag("think");
    if (!IsBlank(message.reasoning)) K3_RETURN_IF_ERROR(writer.AppendText(message.reasoning));
    writer.CloseTag("think");
  }
  writer.OpenTag("response");
  K3_RETURN_IF_ERROR(RenderContent(message.content, index, writer));
  writer.CloseTag("response");
  return RenderToolCalls(message, index, writer);
}

}  // namespace k3::text::chat::k3_xtml
