#include "text/jinja/filters.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "text/jinja/call_args.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/operators.h"
#include "text/jinja/py_format.h"
#include "text/jinja/py_str.h"

namespace k3::text::jinja {
namespace {

using FilterFn = base::Result<Value> (*)(Interpreter& interp, const Value& input,
                                         const CallArgs& args);

base::Result<Value> ToStr(Interpreter& interp, const Value& v) {
  std::string out;
  K3_RETURN_IF_ERROR(AppendStr(v, interp.options().max_output_bytes, &out));
  return Value(std::move(out));
}

base::Result<std::string> StrOf(Interpreter& interp, const Value& v) {
  K3_ASSIGN_OR_RETURN(Value s, ToStr(interp, v));
  return s.as_string();
}

base::Result<JsonDumpsOptions> JsonOptions(const std::vector<Value>& a) {
  JsonDumpsOptions options;
  if (a[0].Truthy()) options.ensure_ascii = true;
  const Value& indent = a[1];
  if (indent.is_int() || indent.is_bool()) {
    int64_t width = std::max<int64_t>(0, std::min<int64_t>(indent.as_int(), 1024));
    options.indent = std::string(static_cast<size_t>(width), ' ');
  } else if (indent.is_string()) {
    options.indent = indent.as_string();
  } else if (!indent.is_undefined() && !indent.is_none()) {
    return base::InvalidArgument("tojson indent must be an int or a string");
  }
  if (options.indent) options.item_separator = std::string(1, ',');  // Python drops the space
  const Value& separators = a[2];
  if (separators.is_list() && separators.as_list().size() == 2) {
    K3_ASSIGN_OR_RETURN(options.item_separator, StringArg(separators.as_list()[0], "separator"));
    K3_ASSIGN_OR_RETURN(options.key_separator, StringArg(separators.as_list()[1], "separator"));
  } else if (!separators.is_undefined() && !separators.is_none()) {
    return base::InvalidArgument("tojson separators must be a pair of strings");
  }
  options.sort_keys = a[3].Truthy();
  return options;
}

base::Result<Value> ToJson(Interpreter& interp, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(
      auto a, BindArgs("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"}));
  K3_ASSIGN_OR_RETURN(JsonDumpsOptions options, JsonOptions(a));
  K3_RETURN_IF_ERROR(interp.Charge(static_cast<int64_t>(input.num_nodes())));
  std::string out;
  K3_RETURN_IF_ERROR(AppendJsonDumps(input, options, interp.options().max_output_bytes, &out));
  return Value(std::move(out));
}

base::Result<Value> Default(Interpreter&, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("default", args, {"default_value", "boolean"}));
  bool use_default = input.is_undefined() || (a[1].Truthy() && !input.Truthy());
  return use_default ? Or(a[0], Value("")) : input;
}

base::Result<Value> Trim(Interpreter&, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("trim", args, {"chars"}));
  K3_ASSIGN_OR_RETURN(std::string text, StringArg(input, "trim input"));
  if (a[0].is_undefined() || a[0].is_none()) return Value(PyStrip(text, nullptr, true, true));
  K3_ASSIGN_OR_RETURN(std::string chars, StringArg(a[0], "chars"));
  return Value(PyStrip(text, &chars, true, true));
}

base::Result<Value> Replace(Interpreter& interp, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("replace", args, {"old", "new", "count"}, 2));
  K3_ASSIGN_OR_RETURN(std::string text, StrOf(interp, input));
  K3_ASSIGN_OR_RETURN(std::string old_text, StrOf(interp, a[0]));
  K3_ASSIGN_OR_RETURN(std::string new_text, StrOf(interp, a[1]));
  int64_t count = -1;
  if (!a[2].is_undefined() && !a[2].is_none()) {
    K3_ASSIGN_OR_RETURN(count, IntArg(a[2], "count"));
  }
  K3_ASSIGN_OR_RETURN(std::string out, PyReplace(text, old_text, new_text, count,
                                                 interp.options().max_output_bytes));
  return Value(std::move(out));
}

// Python int(str): optional sign and surrounding whitespace, digits with single underscores.
std::optional<int64_t> ParseInt(std::string_view text, int base) {
  text = PyStrip(text, nullptr, true, true);
  std::string digits;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '_' && i > 0 && i + 1 < text.size() && text[i - 1] != '_') continue;
    digits.push_back(text[i]);
  }
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(digits.c_str(), &end, base);
  if (errno != 0 || end != digits.c_str() + digits.size()) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> ParseFloat(std::string_view text) {
  std::string s(PyStrip(text, nullptr, true, true));
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

base::Result<Value> Int(Interpreter&, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("int", args, {"default", "base"}));
  Value fallback = Or(a[0], Value(0));
  K3_ASSIGN_OR_RETURN(int64_t base, IntArg(Or(a[1], Value(10)), "base"));
  if (input.is_int() || input.is_bool()) return Value(input.as_int());
  if (input.is_float()) {
    double d = input.as_double();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
    return Value(static_cast<int64_t>(d));
  }
  if (!input.is_string() || base < 2 || base > 36) return fallback;
  if (auto v = ParseInt(input.as_string(), static_cast<int>(base))) return Value(*v);
  auto d = ParseFloat(input.as_string());
  if (!d || !std::isfinite(*d) || std::fabs(*d) >= 9.2e18) return fallback;
  return Value(static_cast<int64_t>(*d));
}

base::Result<Value> Float(Interpreter&, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("float", args, {"default"}));
  if (input.is_number()) return Value(input.as_double());
  if (input.is_string()) {
    if (auto d = ParseFloat(input.as_string())) return Value(*d);
  }
  return Or(a[0], Value(0.0));
}

base::Result<Value> Round(Interpreter&, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("round", args, {"precision", "method"}));
  K3_ASSIGN_OR_RETURN(int64_t precision, IntArg(Or(a[0], Value(0)), "precision"));
  std::string method = a[1].is_string() ? a[1].as_string() : "common";
  if (!input.is_number()) return base::InvalidArgument("round() needs a number");
  if (method != "common" && method != "floor" && method != "ceil") {
    return base::InvalidArgument("method must be common, ceil or floor");
  }
  if (method == "common" && !input.is_float()) return Value(input.as_int());  // round(int) is int
  precision = std::max<int64_t>(-300, std::min<int64_t>(precision, 300));
  double v = input.as_double();
  if (method != "common") {
    double scale = std::pow(10.0, static_cast<double>(precision));
    return Value((method == "floor" ? std::floor(v * scale) : std::ceil(v * scale)) / scale);
  }
  if (!std::isfinite(v) || precision < 0) return Value(std::nearbyint(v));
  char buf[512];  // printf rounds the exact binary value half-to-even, as Python's round()
  std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(std::min<int64_t>(precision, 100)), v);
  return Value(std::strtod(buf, nullptr));
}

base::Result<Value> Escape(Interpreter& interp, const Value& input, const CallArgs&) {
  K3_ASSIGN_OR_RETURN(std::string text, StrOf(interp, input));
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return Value(std::move(out));
}

base::Result<Value> Indent(Interpreter& interp, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("indent", args, {"width", "first", "blank"}));
  std::string indention = a[0].is_string() ? a[0].as_string() : "";
  if (!a[0].is_string()) {
    K3_ASSIGN_OR_RETURN(int64_t width, IntArg(Or(a[0], Value(4)), "width"));
    indention.assign(static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(width, 1024))),
                     ' ');
  }
  K3_ASSIGN_OR_RETURN(std::string text, StrOf(interp, input));
  // Jinja appends "\n" and takes splitlines(): the same as splitting on "\n".
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(std::string_view(text).substr(start, nl - start));
  }
  lines.push_back(std::string_view(text).substr(start));
  std::string out(lines[0]);
  for (size_t i = 1; i < lines.size(); ++i) {
    out += "\n";
    if (!lines[i].empty() || a[2].Truthy()) out += indention;
    out.append(lines[i]);
    if (out.size() > interp.options().max_output_bytes) {
      return base::ResourceExhausted("indent() result too large");
    }
  }
  if (a[1].Truthy()) out = indention + out;
  return Value(std::move(out));
}

base::Result<Value> String(Interpreter& interp, const Value& input, const CallArgs&) {
  return ToStr(interp, input);
}

base::Result<Value> Safe(Interpreter&, const Value& input, const CallArgs&) { return input; }

base::Result<Value> LengthOf(Interpreter&, const Value& input, const CallArgs&) {
  K3_ASSIGN_OR_RETURN(int64_t n, Length(input));
  return Value(n);
}

template <std::string (*Fn)(std::string_view)>
base::Result<Value> ConvertText(Interpreter& interp, const Value& input, const CallArgs&) {
  K3_ASSIGN_OR_RETURN(std::string text, StrOf(interp, input));
  return Value(Fn(text));
}

base::Result<Value> Abs(Interpreter&, const Value& input, const CallArgs&) {
  if (input.is_float()) return Value(std::fabs(input.as_double()));
  if (input.is_number() && input.as_int() < 0) return Negate(input);
  if (input.is_number()) return Value(input.as_int());
  return base::InvalidArgument("bad operand type for abs()");
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

const FilterEntry kFilters[] = {
    {"tojson", ToJson},
    {"default", Default},
    {"d", Default},
    {"trim", Trim},
    {"replace", Replace},
    {"int", Int},
    {"float", Float},
    {"round", Round},
    {"escape", Escape},
    {"e", Escape},
    {"indent", Indent},
    {"string", String},
    {"safe", Safe},
    {"length", LengthOf},
    {"count", LengthOf},
    {"upper", ConvertText<AsciiUpper>},
    {"lower", ConvertText<AsciiLower>},
    {"capitalize", ConvertText<PyCapitalize>},
    {"title", ConvertText<JinjaTitle>},
    {"abs", Abs},
};

}  // namespace

base::Result<Value> RunFilter(Interpreter& interp, std::string_view name, const Value& input,
                              const CallArgs& args) {
  for (const FilterEntry& f : kFilters) {
    if (f.name == name) return f.fn(interp, input, args);
  }
  if (auto result = RunSequenceFilter(interp, name, input, args)) return std::move(*result);
  return base::InvalidArgument("no filter named '" + std::string(name) + "'");
}

}  // namespace k3::text::jinja
