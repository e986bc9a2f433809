#include "text/chat/k3_xtml_messages.h"

#include <algorithm>
#include <map>
#include <utility>

namespace k3::text::chat::k3_xtml {
namespace {

// A call's 1-based position among the assistant's tool_calls and its function name.
struct CallRef {
  size_t position;
  std::string name;
};
using CallIndex = std::map<std::string, CallRef>;

// tool_calls[].id -> CallRef. Every entry advances the position, id-less ones included; the first
// of duplicate ids wins.
CallIndex IndexCalls(const std::vector<ToolCall>& tool_calls) {
  CallIndex index;
  size_t position = 0;
  for (const ToolCall& call : tool_calls) {
    ++position;
    if (call.id) index.emplace(*call.id, CallRef{position, call.name});
  }
  return index;
}

// The call a tool result answers (by tool_call_id); nullopt when there is none or it matches
// nothing.
std::optional<CallRef> MatchResult(const Message& message, const CallIndex& calls) {
  if (!message.tool_call_id) return std::nullopt;
  auto it = calls.find(*message.tool_call_id);
  if (it == calls.end()) return std::nullopt;
  return it->second;
}

// Appends the run of tool results starting at `*i`, advancing `*i` past it.
void AppendToolRun(const std::vector<Message>& messages, const CallIndex& calls, size_t* i,
                   std::vector<OrderedMessage>* out) {
  struct Item {
    size_t position;
    OrderedMessage message;
  };
  std::vector<Item> run;
  bool resolved = true;
  for (; *i < messages.size() && messages[*i].role == Role::kTool; ++*i) {
    std::optional<CallRef> match = MatchResult(messages[*i], calls);
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
}

}  // namespace

const Json* Field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::vector<OrderedMessage> OrderMessages(const std::vector<Message>& messages) {
  std::vector<OrderedMessage> out;
  out.reserve(messages.size());
  CallIndex calls;  // of the latest assistant message; kept across user and system messages
  size_t i = 0;
  while (i < messages.size()) {
    const Message& message = messages[i];
    if (message.role == Role::kTool) {
      AppendToolRun(messages, calls, &i, &out);
      continue;
    }
    if (message.role == Role::kAssistant) calls = IndexCalls(message.tool_calls);
    out.push_back({i, std::nullopt});
    ++i;
  }
  return out;
}

base::Status RenderContent(const Content& content, size_t index, XtmlWriter& writer) {
  if (content.form == Content::Form::kText) return writer.AppendText(content.text);
  for (size_t j = 0; j < content.parts.size(); ++j) {
    const ContentPart& part = content.parts[j];
    switch (part.kind) {
      case ContentPart::Kind::kImage:
        K3_RETURN_IF_ERROR(writer.Image());
        break;
      case ContentPart::Kind::kText:
        K3_RETURN_IF_ERROR(writer.AppendText(part.text));
        break;
      case ContentPart::Kind::kVideo:
        return base::InvalidArgument(FieldPath(index, "content[" + std::to_string(j) + "]") +
                                     ".text must be a string (part type \"video_url\")");
    }
  }
  return base::Status::Ok();
}

}  // namespace k3::text::chat::k3_xtml
