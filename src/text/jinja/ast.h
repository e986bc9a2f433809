// The template syntax tree the parser builds and the interpreter walks. Nodes are "fat" structs:
// one kind enum, and the fields each kind uses are listed beside it. Immutable after parsing.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/value.h"

namespace k3::text::jinja {

enum class Op {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kConcat,  // arithmetic and `~`
  kAnd,
  kOr,  // short-circuit
  kNot,
  kNeg,
  kPos,  // unary
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kNotIn,  // comparisons
};

enum class ExprKind {
  kLiteral,  // literal
  kName,     // name
  kList,     // children: items
  kTuple,    // children: items (a tuple is a list at run time)
  kDict,     // children: key0, value0, key1, value1, ...
  kGetAttr,  // children[0]: object; name: attribute (`x.name`)
  kGetItem,  // children[0]: object; children[1]: key (`x[key]`, `x.0`)
  kSlice,    // children[0]: object; children[1..3]: start, stop, step (each may be null)
  kCall,     // children[0]: callee; children[1..]: positional args; kwargs
  kFilter,   // children[0]: operand (null inside filter blocks); name; children[1..]: args; kwargs
  kTest,     // children[0]: operand; name; children[1..]: args; kwargs; negated (`is not`)
  kUnary,    // op: kNot, kNeg, kPos; children[0]
  kBinary,   // op: arithmetic, kConcat, kAnd, kOr; children[0], children[1]
  kCompare,  // children: operands (n + 1); compare_ops: n comparison ops (a chain `a < b < c`)
  kCondition,  // children[0]: value if true; children[1]: condition; children[2]: else (or null)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  int line = 0;
  Op op = Op::kAdd;
  Value literal;
  std::string name;
  bool negated = false;
  std::vector<ExprPtr> children;
  std::vector<Op> compare_ops;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

enum class StmtKind {
  kData,         // text: bytes to emit
  kPrint,        // expr: value to print (`{{ expr }}`)
  kIf,           // expr: condition; body; else_body (an `elif` is a nested kIf in else_body)
  kFor,          // targets: loop variables; expr: iterable; filter: `if` condition (or null);
                 // body; else_body (runs when no item was visited)
  kSet,          // targets: names (several = tuple unpacking); expr: value
  kSetAttr,      // targets[0]: namespace variable; text: attribute; expr: value
  kBlockSet,     // targets[0]: name; filters: applied to the rendered body; body
  kMacro,        // text: name; params; body
  kCallBlock,    // expr: the macro call; params: caller's parameters; body: caller's body
  kFilterBlock,  // filters: applied to the rendered body; body
  kWith,         // targets and values: the new names; body
  kBreak,
  kContinue,
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct Param {
  std::string name;
  ExprPtr default_value;  // null when required
};

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;
  std::vector<std::string> targets;
  ExprPtr expr;
  ExprPtr filter;
  std::vector<ExprPtr> filters;
  std::vector<ExprPtr> values;
  std::vector<Param> params;
  Body body;
  Body else_body;
};

// A parsed template.
struct Program {
  Body body;
};

}  // namespace k3::text::jinja
