#include "text/jinja/operators.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "base/utf8.h"
#include "text/jinja/methods.h"
#include "text/jinja/py_str.h"

namespace k3::text::jinja {
namespace {

base::Status TypeError(std::string message) { return base::InvalidArgument(std::move(message)); }

std::string Quoted(const Value& v) { return Cat({"'", v.TypeName(), "'"}); }

base::Status Unsupported(std::string_view op, const Value& a, const Value& b) {
  return TypeError("unsupported operand type(s) for " + std::string(op) + ": " + Quoted(a) +
                   " and " + Quoted(b));
}

bool IsIntLike(const Value& v) { return v.is_int() || v.is_bool(); }

base::Result<Value> Repeat(const Value& seq, int64_t times, const OpLimits& limits) {
  if (times <= 0) return seq.is_string() ? Value("") : Value(Value::List{});
  size_t count = static_cast<size_t>(times);
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    if (!s.empty() && count > limits.max_string_bytes / s.size()) {
      return base::ResourceExhausted("string repetition exceeds the size limit");
    }
    std::string out;
    out.reserve(s.size() * count);
    for (size_t i = 0; i < count && !s.empty(); ++i) out += s;
    return Value(std::move(out));
  }
  const Value::List& items = seq.as_list();
  if (!items.empty() && count > limits.max_list_items / items.size()) {
    return base::ResourceExhausted("list repetition exceeds the size limit");
  }
  Value::List out;
  for (size_t i = 0; i < count && !items.empty(); ++i)
    out.insert(out.end(), items.begin(), items.end());
  return Value(std::move(out));
}

base::Result<Value> IntOp(Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
    case Op::kAdd:
      overflow = __builtin_add_overflow(a, b, &r);
      break;
    case Op::kSub:
      overflow = __builtin_sub_overflow(a, b, &r);
      break;
    case Op::kMul:
      overflow = __builtin_mul_overflow(a, b, &r);
      break;
    case Op::kFloorDiv:
    case Op::kMod: {
      if (b == 0) return TypeError("integer division or modulo by zero");
      if (a == INT64_MIN && b == -1) {
        if (op == Op::kMod) return Value(int64_t{0});
        return base::InvalidArgument("integer overflow (beyond 64 bits)");
      }
      int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) {  // Python floors toward -infinity
        --q;
        m += b;
      }
      return Value(op == Op::kFloorDiv ? q : m);
    }
    case Op::kPow: {
      if (b < 0) return Value(std::pow(static_cast<double>(a), static_cast<double>(b)));
      r = 1;
      for (int64_t base = a, e = b; e > 0 && !overflow; e >>= 1) {
        if (e & 1) overflow = __builtin_mul_overflow(r, base, &r);
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) overflow = true;
      }
      break;
    }
    default:
      break;
  }
  if (overflow) return base::InvalidArgument("integer overflow (beyond 64 bits)");
  return Value(r);
}

base::Result<Value> FloatOp(Op op, double a, double b) {
  switch (op) {
    case Op::kAdd:
      return Value(a + b);
    case Op::kSub:
      return Value(a - b);
    case Op::kMul:
      return Value(a * b);
    case Op::kDiv:
      if (b == 0) return TypeError("division by zero");
      return Value(a / b);
    case Op::kFloorDiv:
    case Op::kMod: {  // Python's float_divmod
      if (b == 0) return TypeError("float modulo or division by zero");
      double m = std::fmod(a, b);
      double div = (a - m) / b;
      if (m != 0 && ((b < 0) != (m < 0))) {
        m += b;
        div -= 1.0;
      }
      if (op == Op::kMod) return Value(m != 0 ? m : std::copysign(0.0, b));
      if (div == 0) return Value(std::copysign(0.0, a / b));
      double floor_div = std::floor(div);
      return Value(div - floor_div > 0.5 ? floor_div + 1.0 : floor_div);
    }
    case Op::kPow:
      return Value(std::pow(a, b));
    default:
      return TypeError("bad float operator");
  }
}

base::Result<Value> SequenceOp(Op op, const Value& a, const Value& b, const OpLimits& limits) {
  if (op == Op::kAdd && a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
  if (op == Op::kAdd && a.is_list() && b.is_list()) {
    Value::List out = a.as_list();
    out.insert(out.end(), b.as_list().begin(), b.as_list().end());
    return Value(std::move(out));
  }
  if (op == Op::kMul && (a.is_string() || a.is_list()) && IsIntLike(b)) {
    return Repeat(a, b.as_int(), limits);
  }
  if (op == Op::kMul && (b.is_string() || b.is_list()) && IsIntLike(a)) {
    return Repeat(b, a.as_int(), limits);
  }
  static constexpr std::string_view kNames[] = {"+", "-", "*", "/", "//", "%", "**"};
  if (op == Op::kMod && a.is_string()) {
    return base::Unimplemented("'%' string formatting is not supported");
  }
  return Unsupported(kNames[static_cast<int>(op)], a, b);
}

// Index into [0, size) with Python's negative indexing; nullopt when out of range.
std::optional<size_t> NormaliseIndex(int64_t index, size_t size) {
  int64_t n = static_cast<int64_t>(size);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return std::nullopt;
  return static_cast<size_t>(index);
}

}  // namespace

base::Status UndefinedError(const Value& undefined) {
  return base::InvalidArgument(std::string(undefined.undefined_hint()));
}

base::Result<Value> BinaryOp(Op op, const Value& a, const Value& b, const OpLimits& limits) {
  if (a.is_undefined()) return UndefinedError(a);
  if (b.is_undefined()) return UndefinedError(b);
  if (a.is_number() && b.is_number()) {
    if (op == Op::kDiv) return FloatOp(op, a.as_double(), b.as_double());
    if (a.is_float() || b.is_float()) return FloatOp(op, a.as_double(), b.as_double());
    return IntOp(op, a.as_int(), b.as_int());
  }
  return SequenceOp(op, a, b, limits);
}

base::Result<Value> Negate(const Value& v) {
  if (v.is_float()) return Value(-v.as_double());
  if (IsIntLike(v)) return IntOp(Op::kSub, 0, v.as_int());
  if (v.is_undefined()) return UndefinedError(v);
  return TypeError("bad operand type for unary -: " + Quoted(v));
}

base::Result<bool> LessThan(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // = code point order
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list();
    const auto& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (x[i].Equals(y[i])) continue;
      return LessThan(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  if (a.is_undefined()) return UndefinedError(a);
  if (b.is_undefined()) return UndefinedError(b);
  return TypeError("'<' not supported between instances of " + Quoted(a) + " and " + Quoted(b));
}

base::Result<bool> Compare(Op op, const Value& a, const Value& b) {
  switch (op) {
    case Op::kEq:
      return a.Equals(b);
    case Op::kNe:
      return !a.Equals(b);
    case Op::kLt:
      return LessThan(a, b);
    case Op::kGt:
      return LessThan(b, a);
    case Op::kLe: {
      K3_ASSIGN_OR_RETURN(bool greater, LessThan(b, a));
      return !greater;
    }
    case Op::kGe: {
      K3_ASSIGN_OR_RETURN(bool less, LessThan(a, b));
      return !less;
    }
    case Op::kIn:
      return Contains(b, a);
    case Op::kNotIn: {
      K3_ASSIGN_OR_RETURN(bool in, Contains(b, a));
      return !in;
    }
    default:
      return TypeError("bad comparison operator");
  }
}

base::Result<bool> Contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined:
      return false;
    case Value::Kind::kString:
      if (!item.is_string()) {
        return TypeError("'in <string>' requires string as left operand, not " +
                         std::string(item.TypeName()));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      return std::any_of(container.as_list().begin(), container.as_list().end(),
                         [&](const Value& v) { return v.Equals(item); });
    case Value::Kind::kDict:
      return item.is_string() && container.as_dict().Find(item.as_string()) != nullptr;
    default:
      return TypeError("argument of type " + Quoted(container) + " is not iterable");
  }
}

base::Result<Value> GetAttr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) return UndefinedError(obj);
  if (std::optional<Value> method = GetMethod(obj, name)) return *method;
  if (obj.is_dict()) {
    if (const Value* v = obj.as_dict().Find(name)) return *v;
    return Value::MakeUndefined("'dict object' has no attribute '" + name + "'");
  }
  if (obj.is_namespace()) {
    if (const Value* v = obj.as_namespace().attrs.Find(name)) return *v;
  }
  std::string type = obj.is_none() ? "None" : Cat({"'", obj.TypeName(), " object'"});
  return Value::MakeUndefined(Cat({type, " has no attribute '", name, "'"}));
}

base::Result<Value> GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return UndefinedError(obj);
  if (obj.is_dict() && key.is_string()) {
    if (const Value* v = obj.as_dict().Find(key.as_string())) return *v;
  } else if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    if (obj.is_list()) {
      if (auto i = NormaliseIndex(key.as_int(), obj.as_list().size())) return obj.as_list()[*i];
    } else {
      std::vector<std::string_view> chars = SplitCodePoints(obj.as_string());
      if (auto i = NormaliseIndex(key.as_int(), chars.size())) return Value(chars[*i]);
    }
  } else if (obj.is_namespace() && key.is_string()) {
    if (const Value* v = obj.as_namespace().attrs.Find(key.as_string())) return *v;
  }
  if (key.is_string()) {
    if (std::optional<Value> method = GetMethod(obj, key.as_string())) return *method;
  }
  if (!key.is_string()) return Value::MakeUndefined(Cat({Quoted(obj), " has no such item"}));
  return Value::MakeUndefined(
      Cat({"'", obj.TypeName(), " object' has no item '", key.as_string(), "'"}));
}

base::Result<Value> Slice(const Value& obj, const Value* start, const Value* stop,
                          const Value* step) {
  for (const Value* part : {start, stop, step}) {
    if (part && !part->is_none() && !IsIntLike(*part)) {
      return TypeError("slice indices must be integers or None");
    }
  }
  if (obj.is_undefined()) return UndefinedError(obj);
  if (!obj.is_list() && !obj.is_string()) return TypeError(Quoted(obj) + " is not subscriptable");
  std::vector<std::string_view> chars;
  if (obj.is_string()) chars = SplitCodePoints(obj.as_string());
  int64_t n = static_cast<int64_t>(obj.is_list() ? obj.as_list().size() : chars.size());
  int64_t s = (step && !step->is_none()) ? step->as_int() : 1;
  if (s == 0) return TypeError("slice step cannot be zero");
  auto bound = [&](const Value* v, int64_t fallback) {
    if (!v || v->is_none()) return fallback;
    int64_t i = v->as_int();
    if (i < 0) i = std::max<int64_t>(i + n, s < 0 ? -1 : 0);
    return std::min<int64_t>(i, s < 0 ? n - 1 : n);
  };
  int64_t begin = bound(start, s < 0 ? n - 1 : 0);
  int64_t end = bound(stop, s < 0 ? -1 : n);
  Value::List items;
  std::string text;
  for (int64_t i = begin; s > 0 ? i < end : i > end; i += s) {
    if (obj.is_list())
      items.push_back(obj.as_list()[static_cast<size_t>(i)]);
    else
      text += chars[static_cast<size_t>(i)];
  }
  if (obj.is_list()) return Value(std::move(items));
  return Value(std::move(text));
}

base::Result<std::vector<Value>> Iterate(const Value& iterable) {
  std::vector<Value> items;
  switch (iterable.kind()) {
    case Value::Kind::kUndefined:
      break;
    case Value::Kind::kList:
      items = iterable.as_list();
      break;
    case Value::Kind::kDict:
      for (const auto& entry : iterable.as_dict().entries()) items.emplace_back(entry.first);
      break;
    case Value::Kind::kString:
      for (std::string_view c : SplitCodePoints(iterable.as_string())) items.emplace_back(c);
      break;
    default:
      return TypeError(Quoted(iterable) + " object is not iterable");
  }
  return items;
}

base::Result<int64_t> Length(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return 0;
    case Value::Kind::kString:
      return static_cast<int64_t>(base::CountCodePoints(v.as_string()));
    case Value::Kind::kList:
      return static_cast<int64_t>(v.as_list().size());
    case Value::Kind::kDict:
      return static_cast<int64_t>(v.as_dict().size());
    default:
      return TypeError("object of type " + Quoted(v) + " has no len()");
  }
}

std::vector<std::string_view> SplitCodePoints(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp;
    bool valid;
    size_t len = base::DecodeUtf8(text.substr(pos), &cp, &valid);
    out.push_back(text.substr(pos, len));
    pos += len;
  }
  return out;
}

}  // namespace k3::text::jinja
