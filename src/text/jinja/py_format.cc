#include "text/jinja/py_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/utf8.h"

namespace k3::text::jinja {
namespace {

base::Status TooLarge(size_t max_bytes) {
  return base::ResourceExhausted("rendered value exceeds " + std::to_string(max_bytes) + " bytes");
}

void AppendHexEscape(const char* prefix, uint32_t code, int digits, std::string* out) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%s%0*x", prefix, digits, code);
  *out += buf;
}

// Code points Python's str.isprintable() rejects, beyond C0/DEL/C1 (an approximation covering
// the space separators, line/paragraph separators and common format characters).
bool IsNonPrintable(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) return true;
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F)) return true;
  if ((cp >= 0x205F && cp <= 0x2064) || cp == 0x3000 || cp == 0xFEFF) return true;
  return cp >= 0xD800 && cp <= 0xDFFF;
}

void AppendCodePointRepr(char32_t cp, std::string* out) {
  if (cp < 0x100) {
    AppendHexEscape("\\x", cp, 2, out);
  } else if (cp < 0x10000) {
    AppendHexEscape("\\u", cp, 4, out);
  } else {
    AppendHexEscape("\\U", cp, 8, out);
  }
}

base::Status AppendListRepr(const Value::List& items, size_t max_bytes, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) *out += ", ";
    K3_RETURN_IF_ERROR(AppendRepr(items[i], max_bytes, out));
  }
  out->push_back(']');
  return base::Status::Ok();
}

base::Status AppendDictRepr(const Dict& dict, size_t max_bytes, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const auto& [key, value] : dict.entries()) {
    if (!first) *out += ", ";
    first = false;
    AppendStringRepr(key, out);
    *out += ": ";
    K3_RETURN_IF_ERROR(AppendRepr(value, max_bytes, out));
  }
  out->push_back('}');
  return base::Status::Ok();
}

// Non-ASCII as \uXXXX escapes (UTF-16 surrogate pairs above the BMP), for ensure_ascii=True.
size_t AppendAsciiEscaped(std::string_view text, size_t pos, std::string* out) {
  char32_t cp;
  bool valid;
  size_t len = base::DecodeUtf8(text.substr(pos), &cp, &valid);
  if (cp >= 0x10000) {
    cp -= 0x10000;
    AppendHexEscape("\\u", 0xD800 + (cp >> 10), 4, out);
    AppendHexEscape("\\u", 0xDC00 + (cp & 0x3FF), 4, out);
  } else {
    AppendHexEscape("\\u", cp, 4, out);
  }
  return len;
}

// Python json float: repr, except the non-finite spellings.
std::string JsonFloat(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return FloatRepr(d);
}

struct JsonWriter {
  const JsonDumpsOptions& options;
  size_t max_bytes;
  std::string* out;

  void NewLine(int level) {
    if (!options.indent) return;
    out->push_back('\n');
    for (int i = 0; i < level; ++i) *out += *options.indent;
  }

  base::Status Write(const Value& value, int level);

  base::Status WriteList(const Value::List& items, int level) {
    if (items.empty()) return (*out += "[]", base::Status::Ok());
    out->push_back('[');
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) *out += options.item_separator;
      NewLine(level + 1);
      K3_RETURN_IF_ERROR(Write(items[i], level + 1));
    }
    NewLine(level);
    out->push_back(']');
    return base::Status::Ok();
  }

  base::Status WriteDict(const Dict& dict, int level) {
    if (dict.empty()) return (*out += "{}", base::Status::Ok());
    std::vector<const Dict::Entry*> entries;
    for (const Dict::Entry& e : dict.entries()) entries.push_back(&e);
    if (options.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto* a, const auto* b) { return a->first < b->first; });
    }
    out->push_back('{');
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) *out += options.item_separator;
      NewLine(level + 1);
      AppendJsonString(entries[i]->first, options.ensure_ascii, out);
      *out += options.key_separator;
      K3_RETURN_IF_ERROR(Write(entries[i]->second, level + 1));
    }
    NewLine(level);
    out->push_back('}');
    return base::Status::Ok();
  }
};

base::Status JsonWriter::Write(const Value& value, int level) {
  if (out->size() > max_bytes) return TooLarge(max_bytes);
  switch (value.kind()) {
    case Value::Kind::kNone:
      *out += "null";
      break;
    case Value::Kind::kBool:
      *out += value.as_bool() ? "true" : "false";
      break;
    case Value::Kind::kInt:
      *out += std::to_string(value.as_int());
      break;
    case Value::Kind::kFloat:
      *out += JsonFloat(value.as_double());
      break;
    case Value::Kind::kString:
      AppendJsonString(value.as_string(), options.ensure_ascii, out);
      break;
    case Value::Kind::kList:
      return WriteList(value.as_list(), level);
    case Value::Kind::kDict:
      return WriteDict(value.as_dict(), level);
    default:
      return base::InvalidArgument("Object of type " + std::string(value.TypeName()) +
                                   " is not JSON serializable");
  }
  return base::Status::Ok();
}

}  // namespace

void AppendJsonString(std::string_view text, bool ensure_ascii, std::string* out) {
  out->push_back('"');
  for (size_t pos = 0; pos < text.size(); ++pos) {
    char c = text[pos];
    if (ensure_ascii && static_cast<unsigned char>(c) >= 0x80) {
      pos += AppendAsciiEscaped(text, pos, out) - 1;
      continue;
    }
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          AppendHexEscape("\\u", static_cast<unsigned char>(c), 4, out);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string FloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-d.ddde+XX": shortest round-trip digits
  size_t e_pos = sci.find('e');
  int exponent = std::stoi(sci.substr(e_pos + 1));
  std::string sign = sci[0] == '-' ? "-" : "";
  std::string digits;
  for (size_t i = sign.size(); i < e_pos; ++i) {
    if (sci[i] != '.') digits.push_back(sci[i]);
  }
  std::string out = sign;
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    return out + exp_buf;
  }
  if (exponent < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exponent - 1), '0');
    return out + digits;
  }
  size_t int_len = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_len) {
    out += digits;
    out.append(int_len - digits.size(), '0');
    return out + ".0";
  }
  out.append(digits, 0, int_len);
  out += '.';
  out.append(digits, int_len, std::string::npos);
  return out;
}

void AppendStringRepr(std::string_view text, std::string* out) {
  bool has_single = text.find('\'') != std::string_view::npos;
  bool has_double = text.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  out->push_back(quote);
  size_t pos = 0;
  while (pos < text.size()) {
    char32_t cp;
    bool valid;
    size_t len = base::DecodeUtf8(text.substr(pos), &cp, &valid);
    if (!valid) cp = static_cast<unsigned char>(text[pos]);  // not a Python str; show the byte
    if (cp == '\\' || cp == static_cast<char32_t>(quote)) {
      out->push_back('\\');
      out->push_back(static_cast<char>(cp));
    } else if (cp == '\n') {
      *out += "\\n";
    } else if (cp == '\r') {
      *out += "\\r";
    } else if (cp == '\t') {
      *out += "\\t";
    } else if (!valid || IsNonPrintable(cp)) {
      AppendCodePointRepr(cp, out);
    } else {
      out->append(text.substr(pos, len));
    }
    pos += valid ? len : 1;
  }
  out->push_back(quote);
}

base::Status AppendRepr(const Value& value, size_t max_bytes, std::string* out) {
  if (out->size() > max_bytes) return TooLarge(max_bytes);
  switch (value.kind()) {
    case Value::Kind::kString:
      AppendStringRepr(value.as_string(), out);
      break;
    case Value::Kind::kList:
      return AppendListRepr(value.as_list(), max_bytes, out);
    case Value::Kind::kDict:
      return AppendDictRepr(value.as_dict(), max_bytes, out);
    case Value::Kind::kUndefined:
      break;  // str(Undefined) is ""
    default:
      return AppendStr(value, max_bytes, out);
  }
  return base::Status::Ok();
}

base::Status AppendStr(const Value& value, size_t max_bytes, std::string* out) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      break;
    case Value::Kind::kNone:
      *out += "None";
      break;
    case Value::Kind::kBool:
      *out += value.as_bool() ? "True" : "False";
      break;
    case Value::Kind::kInt:
      *out += std::to_string(value.as_int());
      break;
    case Value::Kind::kFloat:
      *out += FloatRepr(value.as_double());
      break;
    case Value::Kind::kString:
      *out += value.as_string();
      break;
    case Value::Kind::kList:
    case Value::Kind::kDict:
      return AppendRepr(value, max_bytes, out);
    case Value::Kind::kNamespace:
      *out += "<Namespace ";
      K3_RETURN_IF_ERROR(AppendDictRepr(value.as_namespace().attrs, max_bytes, out));
      *out += ">";
      break;
    case Value::Kind::kCallable:
      *out += "<function " + std::string(value.as_callable().name()) + ">";
      break;
  }
  if (out->size() > max_bytes) return TooLarge(max_bytes);
  return base::Status::Ok();
}

base::Status AppendJsonDumps(const Value& value, const JsonDumpsOptions& options, size_t max_bytes,
                             std::string* out) {
  JsonWriter writer{options, max_bytes, out};
  K3_RETURN_IF_ERROR(writer.Write(value, 0));
  if (out->size() > max_bytes) return TooLarge(max_bytes);
  return base::Status::Ok();
}

}  // namespace k3::text::jinja
