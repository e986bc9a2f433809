#include "text/chat/k3_xtml_writer.h"

#include "text/chat/k3_xtml.h"
#include "text/jinja/json_value.h"
#include "text/jinja/py_format.h"
#include "text/jinja/py_str.h"

namespace k3::text::chat::k3_xtml {
namespace {

constexpr std::string_view kOpen = "<|open|>";
constexpr std::string_view kClose = "<|close|>";
constexpr std::string_view kSep = "<|sep|>";

base::Result<std::string> Dumps(const Json& value, const jinja::JsonDumpsOptions& options) {
  K3_ASSIGN_OR_RETURN(jinja::Value converted, jinja::FromJson(value));
  std::string out;
  K3_RETURN_IF_ERROR(jinja::AppendJsonDumps(converted, options, kMaxJsonBytes, &out));
  return out;
}

// `&` before `"`, so the ampersand of &quot; is not escaped again; < and > stay literal.
std::string EscapeAttrValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

base::Result<std::string> PyJsonCompactSorted(const Json& value) {
  jinja::JsonDumpsOptions options;
  options.item_separator = ",";
  options.key_separator = ":";
  options.sort_keys = true;
  return Dumps(value, options);
}

base::Result<std::string> PyJsonDefault(const Json& value) {
  return Dumps(value, jinja::JsonDumpsOptions{});
}

base::Result<std::string> PyStr(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  K3_ASSIGN_OR_RETURN(jinja::Value converted, jinja::FromJson(value));
  std::string out;
  K3_RETURN_IF_ERROR(jinja::AppendStr(converted, kMaxJsonBytes, &out));
  return out;
}

bool PyTruthy(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return false;
    case Json::value_t::boolean:
      return value.get<bool>();
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return value.get<double>() != 0.0;
    case Json::value_t::string:
      return !value.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object:
      return !value.empty();
    default:
      return false;
  }
}

bool IsBlank(std::string_view text) { return jinja::PyStrip(text, nullptr, true, true).empty(); }

std::string FieldPath(size_t index, std::string_view field) {
  std::string path = "messages[" + std::to_string(index) + "]";
  if (!field.empty()) {
    path += ".";
    path += field;
  }
  return path;
}

void XtmlWriter::Push(std::string_view text, bool allow_special) {
  if (text.empty()) return;
  segments_.push_back(ChatSegment{std::string(text), allow_special});
}

void XtmlWriter::OpenTag(std::string_view tag, const std::vector<Attr>& attrs) {
  Control(kOpen);
  Text(tag);
  for (const auto& [key, value] : attrs) {
    Text(std::string(" ") + std::string(key));
    Text("=\"");
    Text(EscapeAttrValue(value));
    Text("\"");
  }
  Control(kSep);
}

void XtmlWriter::CloseTag(std::string_view tag) {
  Control(kClose);
  Text(tag);
  Control(kSep);
}

base::Status XtmlWriter::AppendText(std::string_view text) {
  constexpr std::string_view kPlaceholder = kK3ImagePlaceholder;
  if (image_prompts_ == nullptr) {
    Text(text);
    return base::Status::Ok();
  }
  size_t start = 0;
  for (size_t at = text.find(kPlaceholder); at != std::string_view::npos;
       at = text.find(kPlaceholder, start)) {
    Text(text.substr(start, at - start));
    K3_RETURN_IF_ERROR(Image());
    start = at + kPlaceholder.size();
  }
  Text(text.substr(start));
  return base::Status::Ok();
}

base::Status XtmlWriter::Image() {
  if (image_prompts_ == nullptr) {
    Control(kK3ImagePlaceholder);
    return base::Status::Ok();
  }
  if (next_image_ >= image_prompts_->size()) {
    return base::InvalidArgument("more images than image prompts (" +
                                 std::to_string(image_prompts_->size()) + ")");
  }
  Control((*image_prompts_)[next_image_++]);
  return base::Status::Ok();
}

void XtmlWriter::InternalSystemMessage(std::string_view type, std::string_view body) {
  OpenTag("message", {{"role", "system"}, {"type", type}});
  Text(jinja::PyStrip(body, nullptr, true, true));
  CloseTag("message");
  EndOfMsg();
}

base::Status XtmlWriter::CheckImagesConsumed() const {
  if (image_prompts_ == nullptr || next_image_ == image_prompts_->size()) {
    return base::Status::Ok();
  }
  return base::InvalidArgument("image prompt count " + std::to_string(image_prompts_->size()) +
                               " != number of images " + std::to_string(next_image_));
}

}  // namespace k3::text::chat::k3_xtml
