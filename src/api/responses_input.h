// The Responses API's `instructions` and `input` (a string, or a list of items) -> a Chat
// Completions `messages` list, which the chat validator and converter then read (so the two
// protocols share one set of rules). Items:
//   message (role user/system/developer/assistant; content a string or input_text, output_text,
//     refusal, input_image parts)          -> a message of that role
//   reasoning (content reasoning_text, else summary summary_text)
//                                          -> reasoning of the assistant turn it starts
//   function_call {call_id, name, arguments} -> a tool call of the current assistant turn
//   function_call_output {call_id, output} -> a tool message
// Client call_ids are renamed to Kimi's functions.{name}:{n} (n counted over the conversation),
// which the model relies on; outputs follow the rename. Any other item (hosted tool calls,
// input_file, an item_reference left unresolved by responses_store.h, ...) is a 400 naming it.
#pragma once

#include "api/api_error.h"

namespace k3::api {

// Fills *messages (a JSON array in Chat Completions form). False with *error on a bad item.
bool ResponsesInputToMessages(const Json& body, Json* messages, ApiError* error);

}  // namespace k3::api
