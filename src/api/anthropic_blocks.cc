#include "api/anthropic_blocks.h"

#include "api/fields.h"

namespace k3::api {
namespace {

using text::chat::Content;
using text::chat::ContentPart;

// An image block's source as a URL: the url itself, or a data URI for base64 data.
std::string ImageUrl(const Json& block) {
  const Json* source = Fields(block).Get("source");
  if (source == nullptr || !source->is_object()) return {};
  if (StringOr(*source, "type") == "url") return StringOr(*source, "url");
  const std::string data = StringOr(*source, "data");
  if (data.empty()) return {};
  return "data:" + StringOr(*source, "media_type") + ";base64," + data;
}

// A string, or text blocks joined; false for anything else.
bool PlainText(const Json& content, std::string* out) {
  if (content.is_string()) {
    *out = content.get<std::string>();
    return true;
  }
  if (!content.is_array()) return false;
  for (const Json& block : content) {
    if (StringOr(block, "type") != "text" || !block.contains("text") ||
        !block["text"].is_string()) {
      return false;
    }
    *out += block["text"].get<std::string>();
  }
  return true;
}

// "Label: value\n" for a present string member, else "".
std::string Line(const char* label, const Json& block, const char* key) {
  const std::string value = StringOr(block, key);
  return value.empty() ? "" : std::string(label) + ": " + value + "\n";
}

// A document's text: source text (data) or content (string or text blocks).
BlockResult Document(const Json& block, const std::string& where, std::string* out,
                     ApiError* error) {
  const Json* source = Fields(block).Get("source");
  const std::string type = source && source->is_object() ? StringOr(*source, "type") : "";
  std::string body;
  bool ok = false;
  if (type == "text") {
    ok = source->contains("data") && PlainText((*source)["data"], &body);
  } else if (type == "content") {
    ok = source->contains("content") && PlainText((*source)["content"], &body);
  } else {
    const std::string media = source ? StringOr(*source, "media_type") : "";
    *error = BadRequest(where + ": document source type '" + type + "'" +
                            (media.empty() ? "" : " (" + media + ")") +
                            " is not supported; PDF and other binary documents cannot be read "
                            "here, send the document as text (source type 'text' or 'content')",
                        where);
    return BlockResult::kError;
  }
  if (!ok) {
    *error = BadRequest(where +
                            ": a document's text source needs 'data' (text) or 'content' "
                            "(a string or text blocks)",
                        where);
    return BlockResult::kError;
  }
  *out = Line("Document", block, "title") + Line("Context", block, "context") + body;
  return BlockResult::kConverted;
}

BlockResult SearchResult(const Json& block, const std::string& where, std::string* out,
                         ApiError* error) {
  std::string body;
  if (!block.contains("content") || !PlainText(block["content"], &body)) {
    *error = BadRequest(where + ": search_result needs 'content' (text blocks)", where);
    return BlockResult::kError;
  }
  *out = Line("Search result", block, "title") + Line("Source", block, "source") + body;
  return BlockResult::kConverted;
}

}  // namespace

BlockResult ContentBlock(const Json& block, const std::string& where,
                         std::vector<ContentPart>* parts, ApiError* error) {
  const std::string type = StringOr(block, "type");
  if (type == "text" && block.contains("text") && block["text"].is_string()) {
    parts->push_back(ContentPart::Text(block["text"].get<std::string>()));
    return BlockResult::kConverted;
  }
  if (type == "image") {
    parts->push_back(ContentPart::Image(ImageUrl(block)));
    return BlockResult::kConverted;
  }
  if (type != "document" && type != "search_result") return BlockResult::kNotContent;
  std::string text;
  const BlockResult result = type == "document" ? Document(block, where, &text, error)
                                                : SearchResult(block, where, &text, error);
  if (result == BlockResult::kConverted) parts->push_back(ContentPart::Text(std::move(text)));
  return result;
}

bool ToolResultContent(const Json& content, const std::string& where, Content* out,
                       ApiError* error) {
  if (content.is_string()) {
    *out = Content::Of(content.get<std::string>());
    return true;
  }
  if (!content.is_array()) {
    *error =
        BadRequest(where + ": tool_result content must be a string or a list of blocks", where);
    return false;
  }
  std::vector<ContentPart> parts;
  std::string text;  // the parts as one string while they are all text
  bool only_text = true, after_rendered = false;
  for (const Json& block : content) {
    const BlockResult result = ContentBlock(block, where, &parts, error);
    if (result == BlockResult::kError) return false;
    if (result == BlockResult::kNotContent) {
      *error = BadRequest(where +
                              ": tool_result content blocks must be text, image, document or "
                              "search_result, not '" +
                              StringOr(block, "type") + "'",
                          where);
      return false;
    }
    only_text = only_text && parts.back().kind == ContentPart::Kind::kText;
    // Text blocks join as they are; a rendered document or search result stands apart.
    const bool rendered = StringOr(block, "type") != "text";
    if (!text.empty() && (rendered || after_rendered)) text += "\n\n";
    text += parts.back().text;
    after_rendered = rendered;
  }
  *out = only_text ? Content::Of(std::move(text)) : Content::Of(std::move(parts));
  return true;
}

}  // namespace k3::api
