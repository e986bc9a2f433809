// The typed conversation (conversation.h) from and to OpenAI-style chat JSON, the shape the
// official K3 encoder and the checkpoints' chat templates are written against.
//
// Reading follows the K3 encoder's reading of a request (and its error messages, which name the
// field: "messages[2].content[0].text must be a string ..."): content is a string, a list of
// parts or null; image/image_url parts are images, video_url parts videos, any other part needs a
// string `text`; a call's name and arguments sit under `function` (or on the call itself); a tool
// result's call id is `tool_call_id` (or `id`); ids that are not strings are read as Python's
// str() of the value. It rejects only values the typed form cannot hold (a field of the wrong
// JSON type); what a renderer does with what it holds (an empty function name, arguments that do
// not encode an object, a video part for K3) stays the renderer's to judge.
//
// Writing gives the template data model: one object per message with role, content (string, list
// of parts, or null as given), name, reasoning_content, tool_calls ({id, type, function: {name,
// arguments}}), tool_call_id, tool and tools, each only when set.
#pragma once

#include <string_view>
#include <vector>

#include "base/result.h"
#include "text/chat/conversation.h"

namespace k3::text::chat {

struct MessageReadOptions {
  bool developer_is_system = false;  // OpenAI's "developer" role reads as "system"
};

// `messages` must be an array of objects with a string role (system, user, assistant, tool).
// INVALID_ARGUMENT naming the field otherwise.
base::Result<std::vector<Message>> MessagesFromJson(const Json& messages,
                                                    const MessageReadOptions& options = {});

// A list of {type: function, function: {name, description, parameters, strict}}; `where` names
// the list in errors ("tools", "messages[0].tools").
base::Result<std::vector<Tool>> ToolsFromJson(const Json& tools, std::string_view where);

// "none", "required", "auto" (any other string reads as auto) or {type: function, function:
// {name}}; null reads as auto. INVALID_ARGUMENT for another JSON type.
base::Result<ToolChoice> ToolChoiceFromJson(const Json& tool_choice);

// {type, json_schema: {name, schema, strict}} or the type alone as a string; null or an unknown
// type read as text. The schema is json_schema.schema, else json_schema.json_schema, else
// json_schema itself. INVALID_ARGUMENT for another JSON type or a type that is not a string.
base::Result<ResponseFormat> ResponseFormatFromJson(const Json& response_format);

Json MessagesToJson(const std::vector<Message>& messages);
Json ToolsToJson(const std::vector<Tool>& tools);
Json ToolToJson(const Tool& tool);

}  // namespace k3::text::chat
