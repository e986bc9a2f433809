#include "text/jinja/predicates.h"

#include <string>

#include "text/jinja/call_args.h"
#include "text/jinja/operators.h"
#include "text/jinja/py_str.h"

namespace k3::text::jinja {
namespace {

base::Result<Value> OneArg(std::string_view name, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs(name, args, {"other"}, 1));
  return a[0];
}

base::Status CheckNoArgs(std::string_view name, const CallArgs& args) {
  if (args.positional.empty() && args.keyword.empty()) return base::Status::Ok();
  return base::InvalidArgument("test '" + std::string(name) + "' takes no arguments");
}

std::optional<Op> ComparisonTest(std::string_view name) {
  if (name == "eq" || name == "equalto" || name == "==") return Op::kEq;
  if (name == "ne" || name == "!=") return Op::kNe;
  if (name == "lt" || name == "lessthan" || name == "<") return Op::kLt;
  if (name == "le" || name == "<=") return Op::kLe;
  if (name == "gt" || name == "greaterthan" || name == ">") return Op::kGt;
  if (name == "ge" || name == ">=") return Op::kGe;
  if (name == "in") return Op::kIn;
  return std::nullopt;
}

// Tests of the value alone; nullopt when `name` is not one.
std::optional<bool> TypeTest(std::string_view name, const Value& v) {
  using K = Value::Kind;
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable") {
    return v.kind() == K::kList || v.kind() == K::kDict || v.kind() == K::kString ||
           v.is_undefined();
  }
  if (name == "sequence") return v.is_list() || v.is_dict() || v.is_string();
  if (name == "callable") return v.is_callable();
  if (name == "escaped") return false;  // no Markup values: autoescape is off
  if (name == "lower") return v.is_string() && AsciiLower(v.as_string()) == v.as_string();
  if (name == "upper") return v.is_string() && AsciiUpper(v.as_string()) == v.as_string();
  return std::nullopt;
}

}  // namespace

base::Result<bool> RunTest(std::string_view name, const Value& value, const CallArgs& args) {
  if (std::optional<bool> result = TypeTest(name, value)) {
    K3_RETURN_IF_ERROR(CheckNoArgs(name, args));
    return *result;
  }
  if (std::optional<Op> op = ComparisonTest(name)) {
    K3_ASSIGN_OR_RETURN(Value other, OneArg(name, args));
    return Compare(*op, value, other);
  }
  if (name == "sameas") {
    K3_ASSIGN_OR_RETURN(Value other, OneArg(name, args));
    // Python identity: singletons compare by value, containers by pointer.
    if (value.is_none() || value.is_bool() || value.is_undefined())
      return value.Equals(other) && value.kind() == other.kind();
    return false;
  }
  if (name == "odd" || name == "even") {
    K3_RETURN_IF_ERROR(CheckNoArgs(name, args));
    K3_ASSIGN_OR_RETURN(int64_t n, IntArg(value, name));
    return (n % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    K3_ASSIGN_OR_RETURN(Value other, OneArg(name, args));
    K3_ASSIGN_OR_RETURN(int64_t n, IntArg(value, name));
    K3_ASSIGN_OR_RETURN(int64_t d, IntArg(other, "divisor"));
    if (d == 0) return base::InvalidArgument("integer division or modulo by zero");
    return d == -1 || n % d == 0;
  }
  return base::InvalidArgument("no test named '" + std::string(name) + "'");
}

}  // namespace k3::text::jinja
