// Value: the dynamic value a Jinja template computes with, modelled on the Python objects Jinja2
// sees (None, bool, int, float, str, list, dict, a namespace, a callable) plus Jinja's Undefined.
// Strings, lists and dicts are immutable and shared, so copying a Value is cheap (a refcount);
// only a Namespace is mutable (`{% set ns.x = ... %}`), and it is shared by reference as in
// Python. Not thread-safe to mutate a Namespace concurrently; otherwise thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/result.h"

namespace k3::text::jinja {

class Value;
class Dict;
class Callable;
class Interpreter;

// Python-style call arguments: positional then keyword, as written at the call site.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Jinja's Undefined; `hint` is what an error about using it says ("'x' is undefined").
struct Undefined {
  std::shared_ptr<const std::string> hint;
};

// A `namespace(...)` object: the one mutable value, shared by every copy.
struct Namespace;

class Value {
 public:
  enum class Kind {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kNamespace,
    kCallable
  };
  using List = std::vector<Value>;

  Value() : data_(Undefined{}) {}  // Undefined
  static Value MakeUndefined(std::string hint) {
    return Value(Undefined{std::make_shared<const std::string>(std::move(hint))});
  }
  static Value None() { return Value(nullptr); }
  Value(bool b) : data_(b) {}                           // NOLINT(google-explicit-constructor)
  Value(int64_t i) : data_(i) {}                        // NOLINT(google-explicit-constructor)
  Value(int i) : data_(int64_t{i}) {}                   // NOLINT(google-explicit-constructor)
  Value(double d) : data_(d) {}                         // NOLINT(google-explicit-constructor)
  Value(std::string s);                                 // NOLINT(google-explicit-constructor)
  Value(std::string_view s) : Value(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  Value(const char* s) : Value(std::string(s)) {}       // NOLINT(google-explicit-constructor)
  Value(List items);                                    // NOLINT(google-explicit-constructor)
  Value(Dict dict);                                     // NOLINT(google-explicit-constructor)
  Value(std::shared_ptr<Namespace> ns) : data_(std::move(ns)), holds_namespace_(true) {}  // NOLINT
  Value(std::shared_ptr<const Callable> fn);  // NOLINT(google-explicit-constructor)

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  // Python numbers: bool is a subclass of int.
  bool is_number() const { return is_bool() || is_int() || is_float(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_namespace() const { return kind() == Kind::kNamespace; }
  bool is_callable() const { return kind() == Kind::kCallable; }

  // Accessors; calling one for the wrong kind is a programmer error (K3_CHECK).
  bool as_bool() const;
  int64_t as_int() const;    // also accepts bool (0/1)
  double as_double() const;  // any number
  const std::string& as_string() const;
  const List& as_list() const;
  const Dict& as_dict() const;
  Namespace& as_namespace() const;
  const Callable& as_callable() const;
  std::string_view undefined_hint() const;

  // Shape measures kept so that hostile templates cannot build values whose printing, comparison
  // or destruction is unbounded. num_nodes: 1 + the nodes of every element (a shared element counts
  // each time), saturating at 2^32-1. depth: 0 for a scalar, 1 + the deepest element otherwise.
  // holds_namespace: the value is or contains a Namespace (storing such a value in a Namespace
  // could make a reference cycle, so the interpreter refuses it).
  uint32_t num_nodes() const { return num_nodes_; }
  uint32_t depth() const { return depth_; }
  bool holds_namespace() const { return holds_namespace_; }

  // Python truthiness (Undefined is false).
  bool Truthy() const;
  // Python `==` (1 == 1.0 == True; dicts compare without order; Undefined equals only Undefined).
  bool Equals(const Value& other) const;
  // Python type name used in error messages: "int", "str", "dict", "NoneType", "undefined".
  std::string_view TypeName() const;

 private:
  using StrPtr = std::shared_ptr<const std::string>;
  using ListPtr = std::shared_ptr<const List>;
  using DictPtr = std::shared_ptr<const Dict>;
  explicit Value(Undefined u) : data_(std::move(u)) {}
  explicit Value(std::nullptr_t) : data_(nullptr) {}
  void AddChild(const Value& child);

  // Alternative order matches Kind.
  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, StrPtr, ListPtr, DictPtr,
               std::shared_ptr<Namespace>, std::shared_ptr<const Callable>>
      data_;
  uint32_t num_nodes_ = 1;
  uint32_t depth_ = 0;
  bool holds_namespace_ = false;
};

// An insertion-ordered string-keyed mapping (Python dict with str keys, as JSON gives). Lookup
// is linear: template dicts (messages, tool schemas) are small.
class Dict {
 public:
  using Entry = std::pair<std::string, Value>;
  const Value* Find(std::string_view key) const;
  // Replaces an existing key in place (keeping its position) or appends.
  void Set(std::string key, Value value);
  // Appends without looking for `key`; the caller guarantees it is new (e.g. from a JSON object).
  void AppendNew(std::string key, Value value) {
    entries_.emplace_back(std::move(key), std::move(value));
  }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

struct Namespace {
  Dict attrs;
};

// A function a template can call: a builtin (range, namespace, a bound method) or a macro.
// `interp` is the running render, for macros; builtins ignore it.
class Callable {
 public:
  virtual ~Callable() = default;
  virtual base::Result<Value> Call(Interpreter& interp, CallArgs args) const = 0;
  virtual std::string_view name() const = 0;
  // The object a bound method was taken from ("abc" for "abc".upper), which it keeps alive.
  virtual const Value* receiver() const { return nullptr; }
};

}  // namespace k3::text::jinja
