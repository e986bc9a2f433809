// Kimi K3 "XTML" chat renderer: a typed conversation (or OpenAI-style messages) to the segment
// list the official Python encoder (`encoding_k3.build_chat_segments`) builds, byte- and
// split-exact. Markup is made of four
// special tokens (<|open|> <|close|> <|sep|> <|end_of_msg|>), emitted as allow_special segments;
// everything else (tag names, attribute pieces, caller text) is ordinary text. Each segment is
// encoded on its own, so the split points matter as much as the bytes.
//
//   <|open|>message role="user"<|sep|>Hi<|close|>message<|sep|><|end_of_msg|>
//
// Order of a prompt: tool declaration, thinking-effort note, the conversation (tool results
// re-sorted into call order), tool-choice and response-format notes, generation opener.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "text/chat/conversation.h"
#include "text/chat/segment.h"

namespace k3::text::chat {

// prompt_tokens excludes the generation opener `<|open|>think<|sep|>` / `<|open|>response<|sep|>`.
inline constexpr int kK3GenerationOpenerTokens = 3;

// The literal an image part renders as when no image prompts are supplied (not a k3 token).
inline constexpr const char kK3ImagePlaceholder[] = "<|kimi_image_placeholder|>";

// The keyword arguments of `build_chat_segments` besides the conversation.
struct K3RenderSettings {
  bool thinking = true;  // request thinking.type != "disabled"
  // thinking.effort, else reasoning_effort, else "max". With thinking on it must be low, high or
  // max (the official encoder rejects anything else, "medium" included); nullopt omits the note.
  std::optional<std::string> thinking_effort = "max";
  ToolChoice tool_choice;          // only required / none render a note
  ResponseFormat response_format;  // json_object / json_schema render a note
  bool add_generation_prompt = true;
  // One media block per image (image part or placeholder in text), in order; nullopt leaves
  // kK3ImagePlaceholder in place. When set, the count must match the images exactly.
  std::optional<std::vector<std::string>> image_prompts;
};

// Renders a typed conversation. What the typed form holds but the encoder rejects (an empty
// function name, arguments text that is not a JSON object, a video part, an unresolvable tool
// result, a bad effort, JSON nested deeper than 128) is INVALID_ARGUMENT naming the field;
// RESOURCE_EXHAUSTED when JSON prints past 256 MiB.
base::Result<ChatSegments> RenderK3(const Conversation& conversation,
                                    const K3RenderSettings& settings);

// --- The JSON form (what the goldens record and what a raw request body holds). ---

// The keyword arguments of `build_chat_segments` as JSON. The pointers are borrowed: they must
// outlive the RenderK3 call (K3OptionsFromRequest points them into the request).
struct K3RenderOptions {
  bool thinking = true;
  std::optional<std::string> thinking_effort = "max";  // as K3RenderSettings
  bool add_generation_prompt = true;
  const nlohmann::ordered_json* tools = nullptr;            // OpenAI tools array (or null)
  const nlohmann::ordered_json* tool_choice = nullptr;      // only "required"/"none" render
  const nlohmann::ordered_json* response_format = nullptr;  // json_object / json_schema render
  std::optional<std::vector<std::string>> image_prompts;    // as K3RenderSettings
};

// Reads `messages` (a JSON array of chat messages, conversation_json.h) and the options into the
// typed form and renders it. Malformed input (unknown role, a field of the wrong type) is
// INVALID_ARGUMENT naming the field, as are the typed renderer's own errors.
base::Result<ChatSegments> RenderK3(const nlohmann::ordered_json& messages,
                                    const K3RenderOptions& options);

// Maps a Kimi/OpenAI chat-completions request body to render options, as the goldens do:
// thinking.type=="disabled" -> thinking=false; effort from thinking.effort, else
// reasoning_effort, else "max"; tools, tool_choice, response_format passed through (pointers into
// `request`); other fields ignored. INVALID_ARGUMENT for fields of the wrong JSON type.
base::Result<K3RenderOptions> K3OptionsFromRequest(const nlohmann::ordered_json& request);

// K3OptionsFromRequest then RenderK3 on request["messages"].
base::Result<ChatSegments> RenderK3Request(const nlohmann::ordered_json& request);

}  // namespace k3::text::chat
