#include "text/jinja/builtins.h"

#include <string>

#include "text/jinja/call_args.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/py_format.h"

namespace k3::text::jinja {
namespace {

using BuiltinFn = base::Result<Value> (*)(Interpreter& interp, const CallArgs& args);

class Builtin : public Callable {
 public:
  Builtin(std::string_view name, BuiltinFn fn) : name_(name), fn_(fn) {}
  base::Result<Value> Call(Interpreter& interp, CallArgs args) const override {
    return fn_(interp, args);
  }
  std::string_view name() const override { return name_; }

 private:
  std::string_view name_;  // a string literal
  BuiltinFn fn_;
};

// range(stop) or range(start, stop[, step]), as a list (bounded by the value-size limit).
base::Result<Value> Range(Interpreter& interp, const CallArgs& args) {
  if (!args.keyword.empty()) return base::InvalidArgument("range() takes no keyword arguments");
  std::vector<int64_t> n;
  for (const Value& v : args.positional) {
    K3_ASSIGN_OR_RETURN(int64_t i, IntArg(v, "range() argument"));
    n.push_back(i);
  }
  if (n.empty() || n.size() > 3) return base::InvalidArgument("range expected 1 to 3 arguments");
  int64_t start = n.size() == 1 ? 0 : n[0];
  int64_t stop = n.size() == 1 ? n[0] : n[1];
  int64_t step = n.size() == 3 ? n[2] : 1;
  if (step == 0) return base::InvalidArgument("range() arg 3 must not be zero");
  __int128 span = step > 0 ? __int128{stop} - start : __int128{start} - stop;
  __int128 abs_step = step > 0 ? step : -__int128{step};
  __int128 count = span <= 0 ? 0 : (span + abs_step - 1) / abs_step;
  if (count > interp.options().max_value_nodes) {
    return base::ResourceExhausted("range() too large for the value-size limit");
  }
  K3_RETURN_IF_ERROR(interp.Charge(static_cast<int64_t>(count)));
  Value::List items;
  items.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) items.emplace_back(start + i * step);
  return Value(std::move(items));
}

base::Status CheckNoNamespace(const Value& v) {
  if (!v.holds_namespace()) return base::Status::Ok();
  return base::Unimplemented("a namespace cannot hold another namespace");
}

// namespace(mapping?, **attrs): the one mutable object templates have.
base::Result<Value> MakeNamespace(Interpreter&, const CallArgs& args) {
  auto ns = std::make_shared<Namespace>();
  if (args.positional.size() > 1) return base::InvalidArgument("namespace() takes one mapping");
  if (!args.positional.empty()) {
    if (!args.positional[0].is_dict()) return base::InvalidArgument("namespace() needs a mapping");
    K3_RETURN_IF_ERROR(CheckNoNamespace(args.positional[0]));
    ns->attrs = args.positional[0].as_dict();
  }
  for (const auto& [key, value] : args.keyword) {
    K3_RETURN_IF_ERROR(CheckNoNamespace(value));
    ns->attrs.Set(key, value);
  }
  return Value(std::move(ns));
}

base::Result<Value> MakeDict(Interpreter&, const CallArgs& args) {
  Dict dict;
  if (args.positional.size() > 1) return base::InvalidArgument("dict() takes one mapping");
  if (!args.positional.empty()) {
    if (!args.positional[0].is_dict()) return base::InvalidArgument("dict() needs a mapping");
    dict = args.positional[0].as_dict();
  }
  for (const auto& [key, value] : args.keyword) dict.Set(key, value);
  return Value(std::move(dict));
}

base::Result<Value> RaiseException(Interpreter& interp, const CallArgs& args) {
  std::string message;
  if (!args.positional.empty()) {
    K3_RETURN_IF_ERROR(AppendStr(args.positional[0], interp.options().max_output_bytes, &message));
  }
  return base::InvalidArgument("template error: " + message);
}

}  // namespace

std::optional<Value> LookupGlobal(std::string_view name) {
  static constexpr std::pair<std::string_view, BuiltinFn> kGlobals[] = {
      {"range", Range},
      {"namespace", MakeNamespace},
      {"dict", MakeDict},
      {"raise_exception", RaiseException},
  };
  for (const auto& [global, fn] : kGlobals) {
    if (global == name) return Value(std::make_shared<const Builtin>(global, fn));
  }
  return std::nullopt;
}

}  // namespace k3::text::jinja
