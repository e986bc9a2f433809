// Expression evaluation of the Interpreter.
#include <string>

#include "text/jinja/builtins.h"
#include "text/jinja/filters.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/operators.h"
#include "text/jinja/predicates.h"
#include "text/jinja/py_format.h"
#include "text/jinja/py_str.h"

namespace k3::text::jinja {

base::Status WithLine(const base::Status& status, int line) {
  if (status.ok() || status.message().starts_with("line ")) return status;
  return base::Status(status.code(), "line " + std::to_string(line) + ": " + status.message());
}

base::Status Interpreter::Charge(int64_t steps) {
  steps_ += steps;
  if (steps_ <= options_.max_steps) return base::Status::Ok();
  return base::ResourceExhausted("template exceeded " + std::to_string(options_.max_steps) +
                                 " evaluation steps");
}

base::Status Interpreter::CheckSize(const Value& value) const {
  if (value.is_string() && value.as_string().size() > options_.max_output_bytes) {
    return base::ResourceExhausted("string value exceeds " +
                                   std::to_string(options_.max_output_bytes) + " bytes");
  }
  if (value.num_nodes() > options_.max_value_nodes || value.depth() > options_.max_value_depth) {
    return base::ResourceExhausted("list/dict value exceeds the size or nesting limit");
  }
  return base::Status::Ok();
}

base::Result<Value> Interpreter::Eval(const Expr& expr, const FramePtr& frame) {
  base::Status status = Charge(1);
  if (!status.ok()) return WithLine(status, expr.line);
  auto result = EvalInner(expr, frame);
  if (result.ok()) status = CheckSize(*result);
  if (!result.ok()) status = result.status();
  if (!status.ok()) return WithLine(status, expr.line);
  return result;
}

base::Result<Value> Interpreter::EvalInner(const Expr& expr, const FramePtr& frame) {
  switch (expr.kind) {
    case ExprKind::kLiteral:
      return expr.literal;
    case ExprKind::kName:
      return EvalName(expr, frame);
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kDict:
      return EvalCollection(expr, frame);
    case ExprKind::kGetAttr: {
      K3_ASSIGN_OR_RETURN(Value obj, Eval(*expr.children[0], frame));
      return GetAttr(obj, expr.name);
    }
    case ExprKind::kGetItem: {
      K3_ASSIGN_OR_RETURN(Value obj, Eval(*expr.children[0], frame));
      K3_ASSIGN_OR_RETURN(Value key, Eval(*expr.children[1], frame));
      return GetItem(obj, key);
    }
    case ExprKind::kSlice:
      return EvalSlice(expr, frame);
    case ExprKind::kCall:
      return EvalCall(expr, frame);
    case ExprKind::kFilter: {
      K3_ASSIGN_OR_RETURN(Value input, Eval(*expr.children[0], frame));
      return ApplyFilter(expr, std::move(input), frame);
    }
    case ExprKind::kTest:
      return EvalTest(expr, frame);
    case ExprKind::kUnary: {
      K3_ASSIGN_OR_RETURN(Value operand, Eval(*expr.children[0], frame));
      if (expr.op == Op::kNot) return Value(!operand.Truthy());
      if (expr.op == Op::kNeg) return Negate(operand);
      if (!operand.is_number()) return base::InvalidArgument("bad operand type for unary +");
      return operand;
    }
    case ExprKind::kBinary:
      return EvalBinary(expr, frame);
    case ExprKind::kCompare:
      return EvalCompare(expr, frame);
    case ExprKind::kCondition: {
      K3_ASSIGN_OR_RETURN(Value condition, Eval(*expr.children[1], frame));
      if (condition.Truthy()) return Eval(*expr.children[0], frame);
      if (expr.children[2]) return Eval(*expr.children[2], frame);
      return Value::MakeUndefined(
          "the inline if-expression evaluated to false and no else "
          "section was defined");
    }
  }
  return base::Internal("unknown expression kind");
}

// Frames innermost first, then the render context, then the globals.
base::Result<Value> Interpreter::EvalName(const Expr& expr, const FramePtr& frame) {
  for (const Frame* f = frame.get(); f != nullptr; f = f->parent.get()) {
    if (const Value* v = f->vars.Find(expr.name)) return *v;
    if (f->base != nullptr) {
      if (const Value* v = f->base->Find(expr.name)) return *v;
    }
  }
  if (std::optional<Value> global = LookupGlobal(expr.name)) return *global;
  return Value::MakeUndefined(Cat({"'", expr.name, "' is undefined"}));
}

base::Result<Value> Interpreter::EvalCollection(const Expr& expr, const FramePtr& frame) {
  if (expr.kind != ExprKind::kDict) {
    Value::List items;
    for (const ExprPtr& child : expr.children) {
      K3_ASSIGN_OR_RETURN(Value v, Eval(*child, frame));
      items.push_back(std::move(v));
    }
    return Value(std::move(items));
  }
  Dict dict;
  for (size_t i = 0; i + 1 < expr.children.size(); i += 2) {
    K3_ASSIGN_OR_RETURN(Value key, Eval(*expr.children[i], frame));
    K3_ASSIGN_OR_RETURN(Value value, Eval(*expr.children[i + 1], frame));
    if (!key.is_string()) return base::Unimplemented("dict keys must be strings");
    dict.Set(key.as_string(), std::move(value));
  }
  return Value(std::move(dict));
}

base::Result<Value> Interpreter::EvalBinary(const Expr& expr, const FramePtr& frame) {
  K3_ASSIGN_OR_RETURN(Value left, Eval(*expr.children[0], frame));
  if (expr.op == Op::kAnd && !left.Truthy()) return left;  // Python returns an operand
  if (expr.op == Op::kOr && left.Truthy()) return left;
  K3_ASSIGN_OR_RETURN(Value right, Eval(*expr.children[1], frame));
  if (expr.op == Op::kAnd || expr.op == Op::kOr) return right;
  if (expr.op == Op::kConcat) {
    std::string out;
    K3_RETURN_IF_ERROR(AppendStr(left, options_.max_output_bytes, &out));
    K3_RETURN_IF_ERROR(AppendStr(right, options_.max_output_bytes, &out));
    return Value(std::move(out));
  }
  return BinaryOp(expr.op, left, right, {options_.max_output_bytes, options_.max_value_nodes});
}

// `a < b < c` is `a < b and b < c`, evaluating b once.
base::Result<Value> Interpreter::EvalCompare(const Expr& expr, const FramePtr& frame) {
  K3_ASSIGN_OR_RETURN(Value left, Eval(*expr.children[0], frame));
  for (size_t i = 0; i < expr.compare_ops.size(); ++i) {
    K3_ASSIGN_OR_RETURN(Value right, Eval(*expr.children[i + 1], frame));
    K3_ASSIGN_OR_RETURN(bool holds, Compare(expr.compare_ops[i], left, right));
    if (!holds) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

base::Result<Value> Interpreter::EvalSlice(const Expr& expr, const FramePtr& frame) {
  K3_ASSIGN_OR_RETURN(Value obj, Eval(*expr.children[0], frame));
  Value parts[3];
  for (int i = 0; i < 3; ++i) {
    if (expr.children[i + 1]) {
      K3_ASSIGN_OR_RETURN(parts[i], Eval(*expr.children[i + 1], frame));
    }
  }
  auto part = [&](int i) { return expr.children[i + 1] ? &parts[i] : nullptr; };
  return Slice(obj, part(0), part(1), part(2));
}

base::Result<CallArgs> Interpreter::EvalArgs(const Expr& expr, size_t first_arg,
                                             const FramePtr& frame) {
  CallArgs args;
  for (size_t i = first_arg; i < expr.children.size(); ++i) {
    K3_ASSIGN_OR_RETURN(Value v, Eval(*expr.children[i], frame));
    args.positional.push_back(std::move(v));
  }
  for (const auto& [name, value_expr] : expr.kwargs) {
    K3_ASSIGN_OR_RETURN(Value v, Eval(*value_expr, frame));
    args.keyword.emplace_back(name, std::move(v));
  }
  return args;
}

base::Result<Value> Interpreter::EvalCall(const Expr& expr, const FramePtr& frame) {
  K3_ASSIGN_OR_RETURN(Value callee, Eval(*expr.children[0], frame));
  K3_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(expr, 1, frame));
  return CallValue(callee, std::move(args));
}

base::Result<Value> Interpreter::CallValue(const Value& callee, CallArgs args) {
  if (callee.is_undefined()) return UndefinedError(callee);
  if (!callee.is_callable()) {
    return base::InvalidArgument(Cat({"'", callee.TypeName(), "' object is not callable"}));
  }
  if (call_depth_ >= options_.max_call_depth) {
    return base::ResourceExhausted("calls nested deeper than " +
                                   std::to_string(options_.max_call_depth));
  }
  ++call_depth_;
  auto result = callee.as_callable().Call(*this, std::move(args));
  --call_depth_;
  return result;
}

base::Result<Value> Interpreter::ApplyFilter(const Expr& filter, Value input,
                                             const FramePtr& frame) {
  K3_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(filter, 1, frame));
  return RunFilter(*this, filter.name, input, args);
}

base::Result<Value> Interpreter::EvalTest(const Expr& expr, const FramePtr& frame) {
  K3_ASSIGN_OR_RETURN(Value subject, Eval(*expr.children[0], frame));
  K3_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(expr, 1, frame));
  K3_ASSIGN_OR_RETURN(bool passed, RunTest(expr.name, subject, args));
  return Value(passed != expr.negated);
}

}  // namespace k3::text::jinja
