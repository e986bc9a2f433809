#include "text/jinja/value.h"

#include <algorithm>

#include "base/check.h"

namespace k3::text::jinja {

Value::Value(std::string s) : data_(std::make_shared<const std::string>(std::move(s))) {}
Value::Value(List items) : data_(std::make_shared<const List>(std::move(items))) {
  for (const Value& item : as_list()) AddChild(item);
}

Value::Value(Dict dict) : data_(std::make_shared<const Dict>(std::move(dict))) {
  for (const auto& entry : as_dict().entries()) AddChild(entry.second);
}

Value::Value(std::shared_ptr<const Callable> fn) : data_(std::move(fn)) {
  if (const Value* receiver = as_callable().receiver()) AddChild(*receiver);
}

void Value::AddChild(const Value& child) {
  uint64_t nodes = uint64_t{num_nodes_} + child.num_nodes_;
  num_nodes_ = static_cast<uint32_t>(std::min<uint64_t>(nodes, UINT32_MAX));
  depth_ = std::max(depth_, child.depth_ + 1);
  holds_namespace_ = holds_namespace_ || child.holds_namespace_;
}

bool Value::as_bool() const {
  K3_CHECK(is_bool()) << TypeName();
  return std::get<bool>(data_);
}

int64_t Value::as_int() const {
  if (is_bool()) return std::get<bool>(data_) ? 1 : 0;
  K3_CHECK(is_int()) << TypeName();
  return std::get<int64_t>(data_);
}

double Value::as_double() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

const std::string& Value::as_string() const {
  K3_CHECK(is_string()) << TypeName();
  return *std::get<StrPtr>(data_);
}

const Value::List& Value::as_list() const {
  K3_CHECK(is_list()) << TypeName();
  return *std::get<ListPtr>(data_);
}

const Dict& Value::as_dict() const {
  K3_CHECK(is_dict()) << TypeName();
  return *std::get<DictPtr>(data_);
}

Namespace& Value::as_namespace() const {
  K3_CHECK(is_namespace()) << TypeName();
  return *std::get<std::shared_ptr<Namespace>>(data_);
}

const Callable& Value::as_callable() const {
  K3_CHECK(is_callable()) << TypeName();
  return *std::get<std::shared_ptr<const Callable>>(data_);
}

std::string_view Value::undefined_hint() const {
  K3_CHECK(is_undefined()) << TypeName();
  const auto& hint = std::get<Undefined>(data_).hint;
  return hint ? std::string_view(*hint) : std::string_view("value is undefined");
}

bool Value::Truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return as_bool();
    case Kind::kInt:
      return as_int() != 0;
    case Kind::kFloat:
      return as_double() != 0.0;
    case Kind::kString:
      return !as_string().empty();
    case Kind::kList:
      return !as_list().empty();
    case Kind::kDict:
      return !as_dict().empty();
    case Kind::kNamespace:
    case Kind::kCallable:
      return true;
  }
  return false;
}

namespace {

bool ListsEqual(const Value::List& a, const Value::List& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].Equals(b[i])) return false;
  }
  return true;
}

// Python dict equality ignores insertion order.
bool DictsEqual(const Dict& a, const Dict& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a.entries()) {
    const Value* other = b.Find(key);
    if (other == nullptr || !value.Equals(*other)) return false;
  }
  return true;
}

}  // namespace

bool Value::Equals(const Value& other) const {
  if (is_number() && other.is_number()) {
    if (is_float() || other.is_float()) return as_double() == other.as_double();
    return as_int() == other.as_int();
  }
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return as_string() == other.as_string();
    case Kind::kList:
      return ListsEqual(as_list(), other.as_list());
    case Kind::kDict:
      return DictsEqual(as_dict(), other.as_dict());
    case Kind::kNamespace:
      return &as_namespace() == &other.as_namespace();
    case Kind::kCallable:
      return &as_callable() == &other.as_callable();
    default:
      return false;  // numbers were handled above
  }
}

std::string_view Value::TypeName() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return "Namespace";
    case Kind::kCallable:
      return "function";
  }
  return "?";
}

const Value* Dict::Find(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.first == key) return &e.second;
  }
  return nullptr;
}

void Dict::Set(std::string key, Value value) {
  for (Entry& e : entries_) {
    if (e.first == key) {
      e.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

}  // namespace k3::text::jinja
