#include "text/jinja/methods.h"

#include <algorithm>
#include <string>
#include <utility>

#include "text/jinja/call_args.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/operators.h"
#include "text/jinja/py_str.h"

namespace k3::text::jinja {
namespace {

using MethodFn = base::Result<Value> (*)(const Value& self, const CallArgs& args,
                                         const RenderOptions& limits);

class BoundMethod : public Callable {
 public:
  BoundMethod(Value self, std::string_view name, MethodFn fn)
      : self_(std::move(self)), name_(name), fn_(fn) {}
  base::Result<Value> Call(Interpreter& interp, CallArgs args) const override {
    return fn_(self_, args, interp.options());
  }
  std::string_view name() const override { return name_; }
  const Value* receiver() const override { return &self_; }

 private:
  Value self_;
  std::string_view name_;  // a string literal from the method tables
  MethodFn fn_;
};

Value ToList(std::vector<std::string> parts) {
  Value::List items;
  for (std::string& p : parts) items.emplace_back(std::move(p));
  return Value(std::move(items));
}

// startswith/endswith accept a string or a tuple (list) of strings.
base::Result<Value> AffixTest(const Value& self, const CallArgs& args, bool prefix) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs(prefix ? "startswith" : "endswith", args, {"affix"}, 1));
  std::vector<Value> options = a[0].is_list() ? a[0].as_list() : std::vector<Value>{a[0]};
  const std::string& text = self.as_string();
  for (const Value& option : options) {
    K3_ASSIGN_OR_RETURN(std::string affix, StringArg(option, "affix"));
    if (prefix ? text.starts_with(affix) : text.ends_with(affix)) return Value(true);
  }
  return Value(false);
}

base::Result<Value> Split(const Value& self, const CallArgs& args, bool from_right) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("split", args, {"sep", "maxsplit"}));
  std::string sep;
  bool has_sep = !a[0].is_undefined() && !a[0].is_none();
  if (has_sep) {
    K3_ASSIGN_OR_RETURN(sep, StringArg(a[0], "sep"));
  }
  K3_ASSIGN_OR_RETURN(int64_t maxsplit, IntArg(Or(a[1], Value(-1)), "maxsplit"));
  K3_ASSIGN_OR_RETURN(auto parts,
                      PySplit(self.as_string(), has_sep ? &sep : nullptr, maxsplit, from_right));
  return ToList(std::move(parts));
}

base::Result<Value> Strip(const Value& self, const CallArgs& args, bool left, bool right) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("strip", args, {"chars"}));
  if (a[0].is_undefined() || a[0].is_none())
    return Value(PyStrip(self.as_string(), nullptr, left, right));
  K3_ASSIGN_OR_RETURN(std::string chars, StringArg(a[0], "chars"));
  return Value(PyStrip(self.as_string(), &chars, left, right));
}

base::Result<Value> NoArgs(std::string_view name, const CallArgs& args) {
  if (!args.positional.empty() || !args.keyword.empty()) {
    return base::InvalidArgument(std::string(name) + "() takes no arguments");
  }
  return Value();
}

template <bool (*Pred)(char)>
base::Result<Value> AllChars(const Value& self, const CallArgs& args) {
  K3_RETURN_IF_ERROR(NoArgs("is...", args).status());
  const std::string& s = self.as_string();
  return Value(!s.empty() && std::all_of(s.begin(), s.end(), Pred));
}
bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }
bool IsAlphaChar(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
bool IsAlnumChar(char c) { return IsDigitChar(c) || IsAlphaChar(c); }
bool IsSpaceChar(char c) { return IsPySpace(static_cast<unsigned char>(c)); }

base::Result<Value> StrReplace(const Value& self, const CallArgs& args, const RenderOptions& o) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("replace", args, {"old", "new", "count"}, 2));
  K3_ASSIGN_OR_RETURN(std::string old_text, StringArg(a[0], "old"));
  K3_ASSIGN_OR_RETURN(std::string new_text, StringArg(a[1], "new"));
  K3_ASSIGN_OR_RETURN(int64_t count, IntArg(Or(a[2], Value(-1)), "count"));
  K3_ASSIGN_OR_RETURN(std::string out,
                      PyReplace(self.as_string(), old_text, new_text, count, o.max_output_bytes));
  return Value(std::move(out));
}

base::Result<Value> StrFind(const Value& self, const CallArgs& args, bool count) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs(count ? "count" : "find", args, {"sub"}, 1));
  K3_ASSIGN_OR_RETURN(std::string sub, StringArg(a[0], "sub"));
  const std::string& text = self.as_string();
  size_t hit = text.find(sub);
  if (!count) {  // find() returns a code point index
    if (hit == std::string::npos) return Value(-1);
    return Value(
        static_cast<int64_t>(SplitCodePoints(std::string_view(text).substr(0, hit)).size()));
  }
  if (sub.empty()) return Value(static_cast<int64_t>(SplitCodePoints(text).size() + 1));
  int64_t n = 0;
  for (; hit != std::string::npos; hit = text.find(sub, hit + sub.size())) ++n;
  return Value(n);
}

base::Result<Value> StrJoin(const Value& self, const CallArgs& args, const RenderOptions& o) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("join", args, {"iterable"}, 1));
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(a[0]));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += self.as_string();
    K3_ASSIGN_OR_RETURN(std::string item, StringArg(items[i], "join item"));
    out += item;
    if (out.size() > o.max_output_bytes) return base::ResourceExhausted("join() result too large");
  }
  return Value(std::move(out));
}

// Adapters from the method signature to the helpers above.
base::Result<Value> StartsWith(const Value& s, const CallArgs& a, const RenderOptions&) {
  return AffixTest(s, a, true);
}
base::Result<Value> EndsWith(const Value& s, const CallArgs& a, const RenderOptions&) {
  return AffixTest(s, a, false);
}
base::Result<Value> SplitLeft(const Value& s, const CallArgs& a, const RenderOptions&) {
  return Split(s, a, false);
}
base::Result<Value> SplitRight(const Value& s, const CallArgs& a, const RenderOptions&) {
  return Split(s, a, true);
}
base::Result<Value> StripBoth(const Value& s, const CallArgs& a, const RenderOptions&) {
  return Strip(s, a, true, true);
}
base::Result<Value> StripLeft(const Value& s, const CallArgs& a, const RenderOptions&) {
  return Strip(s, a, true, false);
}
base::Result<Value> StripRight(const Value& s, const CallArgs& a, const RenderOptions&) {
  return Strip(s, a, false, true);
}
base::Result<Value> Find(const Value& s, const CallArgs& a, const RenderOptions&) {
  return StrFind(s, a, false);
}
base::Result<Value> Count(const Value& s, const CallArgs& a, const RenderOptions&) {
  return StrFind(s, a, true);
}

template <std::string (*Fn)(std::string_view)>
base::Result<Value> Convert(const Value& self, const CallArgs& args, const RenderOptions&) {
  K3_RETURN_IF_ERROR(NoArgs("str method", args).status());
  return Value(Fn(self.as_string()));
}

template <bool (*Pred)(char)>
base::Result<Value> AllOf(const Value& self, const CallArgs& args, const RenderOptions&) {
  return AllChars<Pred>(self, args);
}

struct MethodEntry {
  std::string_view name;
  MethodFn fn;
};

const MethodEntry kStringMethods[] = {
    {"startswith", StartsWith},
    {"endswith", EndsWith},
    {"split", SplitLeft},
    {"rsplit", SplitRight},
    {"strip", StripBoth},
    {"lstrip", StripLeft},
    {"rstrip", StripRight},
    {"lower", Convert<AsciiLower>},
    {"upper", Convert<AsciiUpper>},
    {"title", Convert<JinjaTitle>},
    {"capitalize", Convert<PyCapitalize>},
    {"replace", StrReplace},
    {"find", Find},
    {"count", Count},
    {"join", StrJoin},
    {"isdigit", AllOf<IsDigitChar>},
    {"isalpha", AllOf<IsAlphaChar>},
    {"isalnum", AllOf<IsAlnumChar>},
    {"isspace", AllOf<IsSpaceChar>},
};

// 0: items() as [key, value] pairs; 1: keys(); 2: values().
template <int kWhich>
base::Result<Value> DictView(const Value& self, const CallArgs& args, const RenderOptions&) {
  K3_RETURN_IF_ERROR(NoArgs("dict method", args).status());
  Value::List out;
  for (const auto& [key, value] : self.as_dict().entries()) {
    if (kWhich == 0) out.emplace_back(Value::List{Value(key), value});
    if (kWhich == 1) out.emplace_back(key);
    if (kWhich == 2) out.push_back(value);
  }
  return Value(std::move(out));
}

base::Result<Value> DictGet(const Value& self, const CallArgs& args, const RenderOptions&) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("get", args, {"key", "default"}, 1));
  const Value* v = a[0].is_string() ? self.as_dict().Find(a[0].as_string()) : nullptr;
  return v ? *v : Or(a[1], Value::None());
}

const MethodEntry kDictMethods[] = {
    {"get", DictGet},
    {"items", DictView<0>},
    {"keys", DictView<1>},
    {"values", DictView<2>},
};

base::Result<Value> ListCount(const Value& self, const CallArgs& args, const RenderOptions&) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("count", args, {"x"}, 1));
  const auto& l = self.as_list();
  return Value(static_cast<int64_t>(
      std::count_if(l.begin(), l.end(), [&](const Value& v) { return v.Equals(a[0]); })));
}

base::Result<Value> ListIndex(const Value& self, const CallArgs& args, const RenderOptions&) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("index", args, {"x"}, 1));
  const auto& l = self.as_list();
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i].Equals(a[0])) return Value(static_cast<int64_t>(i));
  }
  return base::InvalidArgument("list.index(x): x not in list");
}

const MethodEntry kListMethods[] = {
    {"count", ListCount},
    {"index", ListIndex},
};

template <size_t N>
std::optional<Value> Lookup(const MethodEntry (&table)[N], const Value& obj,
                            std::string_view name) {
  for (const MethodEntry& m : table) {
    if (m.name == name) return Value(std::make_shared<const BoundMethod>(obj, m.name, m.fn));
  }
  return std::nullopt;
}

}  // namespace

std::optional<Value> GetMethod(const Value& obj, std::string_view name) {
  if (obj.is_string()) return Lookup(kStringMethods, obj, name);
  if (obj.is_dict()) return Lookup(kDictMethods, obj, name);
  if (obj.is_list()) return Lookup(kListMethods, obj, name);
  return std::nullopt;
}

}  // namespace k3::text::jinja
