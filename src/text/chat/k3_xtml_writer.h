// Internal to the K3 renderer: the segment builder and the Python text forms it needs. Every
// helper mirrors one building block of the official encoder, one segment per piece it emits;
// empty pieces emit nothing.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "text/chat/segment.h"

namespace k3::text::chat::k3_xtml {

using Json = nlohmann::ordered_json;

// Rendered JSON and text are capped at this many bytes per value.
inline constexpr size_t kMaxJsonBytes = size_t{256} << 20;

// json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).
base::Result<std::string> PyJsonCompactSorted(const Json& value);
// json.dumps(value, ensure_ascii=False): ", " and ": " separators, keys in their given order.
base::Result<std::string> PyJsonDefault(const Json& value);
// Python str(value) (strings as-is, True/False/None, ints, float repr, list/dict repr).
base::Result<std::string> PyStr(const Json& value);
// Python truthiness of a JSON value (null, false, 0, "", [], {} are false).
bool PyTruthy(const Json& value);
// str.strip() with Python's whitespace set is empty.
bool IsBlank(std::string_view text);

// "messages[3].content": field paths for error messages.
std::string FieldPath(size_t index, std::string_view field);

using Attr = std::pair<std::string_view, std::string_view>;

// Appends segments. Caller text goes through AppendText, which splices an image prompt in at each
// placeholder when image prompts were given.
class XtmlWriter {
 public:
  explicit XtmlWriter(const std::vector<std::string>* image_prompts)
      : image_prompts_(image_prompts) {}

  void Control(std::string_view text) { Push(text, true); }
  void Text(std::string_view text) { Push(text, false); }
  // <|open|>tag[ key="value"]...<|sep|>: key, =", escaped value and " are four segments.
  void OpenTag(std::string_view tag, const std::vector<Attr>& attrs = {});
  // <|close|>tag<|sep|>
  void CloseTag(std::string_view tag);
  void EndOfMsg() { Control("<|end_of_msg|>"); }
  // Caller-written text, split at placeholders when image prompts were given.
  base::Status AppendText(std::string_view text);
  // One image: the next image prompt (or the placeholder literal), as markup.
  base::Status Image();
  // A system message the encoder synthesizes: role="system" type=`type`, body stripped.
  void InternalSystemMessage(std::string_view type, std::string_view body);
  // INVALID_ARGUMENT when image prompts were given but not all used.
  base::Status CheckImagesConsumed() const;

  ChatSegments Take() { return std::move(segments_); }

 private:
  void Push(std::string_view text, bool allow_special);

  const std::vector<std::string>* image_prompts_;  // null: placeholders stay as they are
  size_t next_image_ = 0;
  ChatSegments segments_;
};

}  // namespace k3::text::chat::k3_xtml
