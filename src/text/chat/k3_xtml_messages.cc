#include "text/chat/k3_xtml_messages.h"

#include <algorithm>
#include <map>
#include <utility>

namespace k3::text::chat::k3_xtml {
namespace {

// A call's 1-based position among the assistant's tool_calls and its function name.
struct CallRef {
  size_t position;
  std::optional<std::string> name;
};
using CallIndex = std::map<std::string, CallRef>;

// tool_calls[].id -> CallRef. Every entry advances the position, id-less ones included; the first
// of duplicate ids wins. A non-list gives an empty index (rendering the assistant reports it).
base::Result<CallIndex> IndexCalls(const Json* tool_calls) {
  CallIndex index;
  if (tool_calls == nullptr || !tool_calls->is_array()) return index;
  size_t position = 0;
  for (const Json& call : *tool_calls) {
    ++position;
    if (!call.is_object()) continue;
    const Json* id = Field(call, "id");
    if (id == nullptr || id->is_null()) continue;
    K3_ASSIGN_OR_RETURN(std::string key, PyStr(*id));
    if (index.count(key) != 0) continue;
    const Json* function = Field(call, "function");
    const Json* name = (function != nullptr && function->is_object()) ? Field(*function, "name")
                                                                      : Field(call, "name");
    CallRef ref{position, std::nullopt};
    if (name != nullptr && name->is_string()) ref.name = name->get<std::string>();
    index.emplace(std::move(key), std::move(ref));
  }
  return index;
}

// The call a tool result answers: tool_call_id (or, when that key is absent, id) looked up in
// `calls`; nullopt when there is none or it matches nothing.
base::Result<std::optional<CallRef>> MatchResult(const Json& message, const CallIndex& calls) {
  const Json* id = Field(message, "tool_call_id");
  if (id == nullptr) id = Field(message, "id");
  if (id == nullptr || id->is_null()) return std::optional<CallRef>();
  K3_ASSIGN_OR_RETURN(std::string key, PyStr(*id));
  auto it = calls.find(key);
  if (it == calls.end()) return std::optional<CallRef>();
  return std::optional<CallRef>(it->second);
}

base::Status CheckShape(const Json& messages) {
  if (!messages.is_array()) return base::InvalidArgument("messages must be an array");
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object()) {
      return base::InvalidArgument(FieldPath(i, "") + " must be an object");
    }
    const Json* role = Field(messages[i], "role");
    if (role == nullptr || !role->is_string()) {
      return base::InvalidArgument(FieldPath(i, "role") + " must be a string");
    }
  }
  return base::Status::Ok();
}

bool IsRole(const Json& message, std::string_view role) {
  return message["role"].get_ref<const std::string&>() == role;
}

// Appends the run of tool results starting at `*i`, advancing `*i` past it.
base::Status AppendToolRun(const Json& messages, const CallIndex& calls, size_t* i,
                           std::vector<OrderedMessage>* out) {
  struct Item {
    size_t position;
    OrderedMessage message;
  };
  std::vector<Item> run;
  bool resolved = true;
  for (; *i < messages.size() && IsRole(messages[*i], "tool"); ++*i) {
    K3_ASSIGN_OR_RETURN(std::optional<CallRef> match, MatchResult(messages[*i], calls));
    if (!match) {
      resolved = false;
      run.push_back({0, {*i, std::nullopt}});
    } else {
      run.push_back({match->position, {*i, match->name}});
    }
  }
  if (resolved) {
    std::stable_sort(run.begin(), run.end(),
                     [](const Item& a, const Item& b) { return a.position < b.position; });
  }
  for (Item& item : run) {
    if (!resolved) item.message.bound_tool.reset();
    out->push_back(std::move(item.message));
  }
  return base::Status::Ok();
}

}  // namespace

const Json* Field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

base::Result<std::optional<std::string>> OptionalString(const Json& message, const char* key,
                                                        size_t index) {
  const Json* value = Field(message, key);
  if (value == nullptr || value->is_null()) return std::optional<std::string>();
  if (!value->is_string()) {
    return base::InvalidArgument(FieldPath(index, key) + " must be a string or null");
  }
  return std::optional<std::string>(value->get<std::string>());
}

base::Result<std::vector<OrderedMessage>> OrderMessages(const Json& messages) {
  K3_RETURN_IF_ERROR(CheckShape(messages));
  std::vector<OrderedMessage> out;
  out.reserve(messages.size());
  CallIndex calls;  // of the latest assistant message; kept across user and system messages
  size_t i = 0;
  while (i < messages.size()) {
    const Json& message = messages[i];
    if (IsRole(message, "tool")) {
      K3_RETURN_IF_ERROR(AppendToolRun(messages, calls, &i, &out));
      continue;
    }
    if (IsRole(message, "assistant")) {
      const Json* tool_calls = Field(message, "tool_calls");
      calls.clear();
      if (tool_calls != nullptr && PyTruthy(*tool_calls)) {
        K3_ASSIGN_OR_RETURN(calls, IndexCalls(tool_calls));
      }
    }
    out.push_back({i, std::nullopt});
    ++i;
  }
  return out;
}

base::Status RenderContent(const Json& message, size_t index, XtmlWriter& writer) {
  const Json* content = Field(message, "content");
  if (content == nullptr || content->is_null()) return base::Status::Ok();
  if (content->is_string()) return writer.AppendText(content->get_ref<const std::string&>());
  if (!content->is_array()) {
    return base::InvalidArgument(FieldPath(index, "content") +
                                 " must be a string, a list of content parts or null");
  }
  for (size_t j = 0; j < content->size(); ++j) {
    const Json& part = (*content)[j];
    std::string path = FieldPath(index, "content[" + std::to_string(j) + "]");
    if (!part.is_object()) return base::InvalidArgument(path + " must be an object");
    const Json* type = Field(part, "type");
    if (type == nullptr || !type->is_string()) {
      return base::InvalidArgument(path + ".type must be a string");
    }
    const std::string& kind = type->get_ref<const std::string&>();
    if (kind == "image" || kind == "image_url") {
      K3_RETURN_IF_ERROR(writer.Image());
      continue;
    }
    const Json* text = Field(part, "text");
    if (text == nullptr || !text->is_string()) {
      return base::InvalidArgument(path + ".text must be a string (part type \"" + kind + "\")");
    }
    K3_RETURN_IF_ERROR(writer.AppendText(text->get_ref<const std::string&>()));
  }
  return base::Status::Ok();
}

}  // namespace k3::text::chat::k3_xtml
