// The sequence filters of filters.h.
#include <algorithm>
#include <string>

#include "text/jinja/call_args.h"
#include "text/jinja/filters.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/operators.h"
#include "text/jinja/predicates.h"
#include "text/jinja/py_format.h"
#include "text/jinja/py_str.h"

namespace k3::text::jinja {
namespace {

// Case-insensitive comparisons (the default of sort/unique/min/max/dictsort) lower-case strings.
Value SortKey(const Value& v, bool case_sensitive) {
  if (case_sensitive || !v.is_string()) return v;
  return Value(AsciiLower(v.as_string()));
}

// Stable sort of `items` by `keys`; comparison errors (mixed types) are returned.
base::Status SortByKeys(std::vector<Value>* items, std::vector<Value> keys, bool reverse) {
  std::vector<size_t> order(items->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  base::Status error;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (!error.ok()) return false;
    auto less = reverse ? LessThan(keys[b], keys[a]) : LessThan(keys[a], keys[b]);
    if (!less.ok()) error = less.status();
    return less.ok() && *less;
  });
  K3_RETURN_IF_ERROR(error);
  std::vector<Value> sorted;
  for (size_t i : order) sorted.push_back((*items)[i]);
  *items = std::move(sorted);
  return base::Status::Ok();
}

base::Result<std::vector<Value>> Keys(const std::vector<Value>& items, const Value& attribute,
                                      bool case_sensitive) {
  std::vector<Value> keys;
  for (const Value& item : items) {
    Value key = item;
    if (!attribute.is_undefined() && !attribute.is_none()) {
      K3_ASSIGN_OR_RETURN(key, GetAttributePath(item, attribute));
    }
    keys.push_back(SortKey(key, case_sensitive));
  }
  return keys;
}

base::Result<Value> Sort(const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("sort", args, {"reverse", "case_sensitive", "attribute"}));
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  K3_ASSIGN_OR_RETURN(std::vector<Value> keys, Keys(items, a[2], a[1].Truthy()));
  K3_RETURN_IF_ERROR(SortByKeys(&items, std::move(keys), a[0].Truthy()));
  return Value(std::move(items));
}

base::Result<Value> DictSort(const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("dictsort", args, {"case_sensitive", "by", "reverse"}));
  if (!input.is_dict()) return base::InvalidArgument("dictsort needs a dict");
  std::string by = a[1].is_string() ? a[1].as_string() : "key";
  if (by != "key" && by != "value")
    return base::InvalidArgument("You can only sort by either 'key' or 'value'");
  std::vector<Value> items, keys;
  for (const auto& [k, v] : input.as_dict().entries()) {
    items.push_back(Value(Value::List{Value(k), v}));
    keys.push_back(SortKey(by == "key" ? Value(k) : v, a[0].Truthy()));
  }
  K3_RETURN_IF_ERROR(SortByKeys(&items, std::move(keys), a[2].Truthy()));
  return Value(std::move(items));
}

base::Result<Value> Unique(const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("unique", args, {"case_sensitive", "attribute"}));
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  K3_ASSIGN_OR_RETURN(std::vector<Value> keys, Keys(items, a[1], a[0].Truthy()));
  Value::List out;
  std::vector<Value> seen;
  for (size_t i = 0; i < items.size(); ++i) {
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return s.Equals(keys[i]); })) {
      continue;
    }
    seen.push_back(keys[i]);
    out.push_back(items[i]);
  }
  return Value(std::move(out));
}

base::Result<Value> MinMax(const Value& input, const CallArgs& args, bool max) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs(max ? "max" : "min", args, {"case_sensitive", "attribute"}));
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  if (items.empty()) return Value::MakeUndefined("No aggregated item, sequence was empty.");
  K3_ASSIGN_OR_RETURN(std::vector<Value> keys, Keys(items, a[1], a[0].Truthy()));
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    K3_ASSIGN_OR_RETURN(bool better,
                        max ? LessThan(keys[best], keys[i]) : LessThan(keys[i], keys[best]));
    if (better) best = i;
  }
  return items[best];
}

base::Result<Value> Sum(Interpreter& interp, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("sum", args, {"attribute", "start"}));
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  Value total = Or(a[1], Value(0));
  OpLimits limits{interp.options().max_output_bytes, interp.options().max_value_nodes};
  for (const Value& item : items) {
    Value v = item;
    if (!a[0].is_undefined() && !a[0].is_none()) {
      K3_ASSIGN_OR_RETURN(v, GetAttributePath(item, a[0]));
    }
    K3_ASSIGN_OR_RETURN(total, BinaryOp(Op::kAdd, total, v, limits));
    K3_RETURN_IF_ERROR(interp.CheckSize(total));
  }
  return total;
}

base::Result<Value> Join(Interpreter& interp, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(auto a, BindArgs("join", args, {"d", "attribute"}));
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  std::string separator;
  K3_RETURN_IF_ERROR(AppendStr(Or(a[0], Value("")), interp.options().max_output_bytes, &separator));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    Value v = items[i];
    if (!a[1].is_undefined() && !a[1].is_none()) {
      K3_ASSIGN_OR_RETURN(v, GetAttributePath(v, a[1]));
    }
    K3_RETURN_IF_ERROR(AppendStr(v, interp.options().max_output_bytes, &out));
  }
  return Value(std::move(out));
}

// map(attribute=..., default=...) or map('filter', args...).
base::Result<Value> Map(Interpreter& interp, const Value& input, const CallArgs& args) {
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  Value::List out;
  bool by_attribute = !args.keyword.empty() && args.positional.empty();
  if (by_attribute) {
    K3_ASSIGN_OR_RETURN(auto a, BindArgs("map", args, {"attribute", "default"}, 1));
    for (const Value& item : items) {
      K3_ASSIGN_OR_RETURN(Value v, GetAttributePath(item, a[0]));
      out.push_back(v.is_undefined() && !a[1].is_undefined() ? a[1] : v);
    }
    return Value(std::move(out));
  }
  if (args.positional.empty() || !args.positional[0].is_string()) {
    return base::InvalidArgument("map needs a filter name or attribute=");
  }
  CallArgs rest{{args.positional.begin() + 1, args.positional.end()}, args.keyword};
  for (const Value& item : items) {
    K3_RETURN_IF_ERROR(interp.Charge(1));
    K3_ASSIGN_OR_RETURN(Value v, RunFilter(interp, args.positional[0].as_string(), item, rest));
    out.push_back(std::move(v));
  }
  return Value(std::move(out));
}

// select/reject(test, args...) and selectattr/rejectattr(attribute, test, args...).
base::Result<Value> Select(Interpreter& interp, const Value& input, const CallArgs& args, bool keep,
                           bool by_attribute) {
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  size_t first_arg = by_attribute ? 1 : 0;
  if (by_attribute && args.positional.empty()) return base::InvalidArgument("missing attribute");
  const Value* test = args.positional.size() > first_arg ? &args.positional[first_arg] : nullptr;
  if (test && !test->is_string()) return base::InvalidArgument("test name must be a string");
  CallArgs rest{
      {args.positional.begin() + static_cast<long>(std::min(args.positional.size(), first_arg + 1)),
       args.positional.end()},
      args.keyword};
  Value::List out;
  for (const Value& item : items) {
    K3_RETURN_IF_ERROR(interp.Charge(1));
    Value subject = item;
    if (by_attribute) {
      K3_ASSIGN_OR_RETURN(subject, GetAttributePath(item, args.positional[0]));
    }
    bool passed = subject.Truthy();
    if (test) {
      K3_ASSIGN_OR_RETURN(passed, RunTest(test->as_string(), subject, rest));
    }
    if (passed == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

base::Result<Value> Items(const Value& input) {
  if (input.is_undefined()) return Value(Value::List{});
  if (!input.is_dict()) return base::InvalidArgument("items filter needs a mapping");
  Value::List out;
  for (const auto& [k, v] : input.as_dict().entries())
    out.push_back(Value(Value::List{Value(k), v}));
  return Value(std::move(out));
}

base::Result<Value> FirstLast(const Value& input, bool first) {
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  if (items.empty())
    return Value::MakeUndefined(first ? "No first item, sequence was empty."
                                      : "No last item, sequence was empty.");
  return first ? items.front() : items.back();
}

base::Result<Value> Reverse(const Value& input) {
  if (input.is_string()) {
    std::vector<std::string_view> chars = SplitCodePoints(input.as_string());
    std::string out;
    for (auto it = chars.rbegin(); it != chars.rend(); ++it) out.append(*it);
    return Value(std::move(out));
  }
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(input));
  std::reverse(items.begin(), items.end());
  return Value(std::move(items));
}

}  // namespace

base::Result<Value> GetAttributePath(const Value& obj, const Value& path) {
  if (path.is_int()) return GetItem(obj, path);
  K3_ASSIGN_OR_RETURN(std::string text, StringArg(path, "attribute"));
  Value current = obj;
  size_t start = 0;
  for (;;) {
    size_t dot = text.find('.', start);
    std::string part =
        text.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                                [](char c) { return c >= '0' && c <= '9'; });
    Value key =
        numeric && part.size() < 18 ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part);
    K3_ASSIGN_OR_RETURN(current, GetItem(current, key));
    if (dot == std::string::npos) return current;
    if (current.is_undefined()) return current;
    start = dot + 1;
  }
}

std::optional<base::Result<Value>> RunSequenceFilter(Interpreter& interp, std::string_view name,
                                                     const Value& input, const CallArgs& args) {
  auto no_args = [&]() -> base::Status {
    if (args.positional.empty() && args.keyword.empty()) return base::Status::Ok();
    return base::InvalidArgument(std::string(name) + " takes no arguments");
  };
  if (name == "sort") return Sort(input, args);
  if (name == "dictsort") return DictSort(input, args);
  if (name == "unique") return Unique(input, args);
  if (name == "min" || name == "max") return MinMax(input, args, name == "max");
  if (name == "sum") return Sum(interp, input, args);
  if (name == "join") return Join(interp, input, args);
  if (name == "map") return Map(interp, input, args);
  if (name == "select" || name == "reject")
    return Select(interp, input, args, name == "select", false);
  if (name == "selectattr" || name == "rejectattr") {
    return Select(interp, input, args, name == "selectattr", true);
  }
  if (name == "attr") {
    if (args.positional.size() != 1 || !args.positional[0].is_string()) {
      return base::Result<Value>(base::InvalidArgument("attr needs one attribute name"));
    }
    return GetAttr(input, args.positional[0].as_string());
  }
  std::optional<base::Result<Value>> result;
  if (name == "items") result = Items(input);
  if (name == "first" || name == "last") result = FirstLast(input, name == "first");
  if (name == "reverse") result = Reverse(input);
  if (name == "list") {
    auto items = Iterate(input);
    result = items.ok() ? base::Result<Value>(Value(std::move(*items))) : items.status();
  }
  if (result) {
    base::Status status = no_args();
    if (!status.ok()) return base::Result<Value>(status);
  }
  return result;
}

}  // namespace k3::text::jinja
