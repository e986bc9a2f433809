// Anthropic content blocks that become typed content parts, in user messages and inside
// tool_result content: text; image (source base64 -> a data URI, or url); document with a text
// source (`text`: plain text data; `content`: a string or text blocks), rendered as text headed by
// its title and context; search_result, rendered as text headed by its title and source. PDF and
// other binary documents (base64, url, file sources) are a 400 naming the block: there is no
// document reader here.
#pragma once

#include <string>
#include <vector>

#include "api/api_error.h"
#include "text/chat/conversation.h"

namespace k3::api {

enum class BlockResult {
  kConverted,   // parts got the block's part
  kNotContent,  // another block type (tool_result, tool_use, ...): the caller decides
  kError,       // *error is set (400)
};

BlockResult ContentBlock(const Json& block, const std::string& where,
                         std::vector<text::chat::ContentPart>* parts, ApiError* error);

// A tool_result's content: a string, or a list of content blocks (as above). Only text: one
// string (the texts joined); with an image: a list of parts.
bool ToolResultContent(const Json& content, const std::string& where, text::chat::Content* out,
                       ApiError* error);

}  // namespace k3::api
