// Statement execution of the Interpreter: output, control flow, scopes, macros and call blocks.
#include <string>

#include "text/jinja/interpreter.h"
#include "text/jinja/operators.h"
#include "text/jinja/py_format.h"

namespace k3::text::jinja {
namespace {

// A macro, or the `caller` of a call block. It holds its defining frame weakly: frames hold
// the macro, so a strong reference would be a cycle. A macro that outlives its frame (only
// possible by storing it in a namespace) fails when called.
class Macro : public Callable {
 public:
  Macro(const Stmt& stmt, std::string name, const FramePtr& frame)
      : stmt_(stmt), name_(std::move(name)), frame_(frame) {}
  base::Result<Value> Call(Interpreter& interp, CallArgs args) const override;
  std::string_view name() const override { return name_; }

 private:
  base::Status Bind(Interpreter& interp, CallArgs args, const FramePtr& frame) const;

  const Stmt& stmt_;  // params and body; the Program outlives every render
  std::string name_;
  std::weak_ptr<Frame> frame_;
};

base::Status Macro::Bind(Interpreter& interp, CallArgs args, const FramePtr& frame) const {
  const std::vector<Param>& params = stmt_.params;
  if (args.positional.size() > params.size()) {
    return base::InvalidArgument("macro '" + name_ + "' takes not more than " +
                                 std::to_string(params.size()) + " argument(s)");
  }
  std::vector<bool> given(params.size(), false);
  for (size_t i = 0; i < args.positional.size(); ++i) {
    frame->vars.Set(params[i].name, std::move(args.positional[i]));
    given[i] = true;
  }
  for (auto& [key, value] : args.keyword) {
    size_t i = 0;
    while (i < params.size() && params[i].name != key) ++i;
    if (i == params.size() && key != "caller") {
      return base::InvalidArgument("macro '" + name_ + "' takes no keyword argument '" + key + "'");
    }
    if (i < params.size() && given[i]) {
      return base::InvalidArgument("macro '" + name_ + "' got multiple values for '" + key + "'");
    }
    if (i < params.size()) given[i] = true;
    frame->vars.Set(key, std::move(value));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (given[i]) continue;
    Value fallback = Value::MakeUndefined("parameter '" + params[i].name + "' was not provided");
    if (params[i].default_value) {
      K3_ASSIGN_OR_RETURN(fallback, interp.Eval(*params[i].default_value, frame));
    }
    frame->vars.Set(params[i].name, std::move(fallback));
  }
  if (!frame->vars.Find("varargs")) frame->vars.Set("varargs", Value(Value::List{}));
  if (!frame->vars.Find("kwargs")) frame->vars.Set("kwargs", Value(Dict{}));
  return base::Status::Ok();
}

base::Result<Value> Macro::Call(Interpreter& interp, CallArgs args) const {
  FramePtr parent = frame_.lock();
  if (!parent) return base::InvalidArgument("macro '" + name_ + "' called after its scope ended");
  auto frame = std::make_shared<Frame>();
  frame->parent = std::move(parent);
  K3_RETURN_IF_ERROR(Bind(interp, std::move(args), frame));
  K3_ASSIGN_OR_RETURN(std::string text, interp.Capture(stmt_.body, frame));
  return Value(std::move(text));
}

// `loop.cycle(a, b, ...)`: the argument at loop.index0 modulo their count.
class LoopCycle : public Callable {
 public:
  explicit LoopCycle(size_t index0) : index0_(index0) {}
  base::Result<Value> Call(Interpreter&, CallArgs args) const override {
    if (args.positional.empty()) return base::InvalidArgument("no items for cycling given");
    return args.positional[index0_ % args.positional.size()];
  }
  std::string_view name() const override { return "cycle"; }

 private:
  size_t index0_;
};

Value LoopObject(const std::vector<Value>& items, size_t i) {
  int64_t n = static_cast<int64_t>(items.size());
  int64_t index0 = static_cast<int64_t>(i);
  Dict loop;
  loop.AppendNew("index", Value(index0 + 1));
  loop.AppendNew("index0", Value(index0));
  loop.AppendNew("revindex", Value(n - index0));
  loop.AppendNew("revindex0", Value(n - index0 - 1));
  loop.AppendNew("first", Value(i == 0));
  loop.AppendNew("last", Value(index0 == n - 1));
  loop.AppendNew("length", Value(n));
  loop.AppendNew("depth", Value(1));
  loop.AppendNew("depth0", Value(0));
  loop.AppendNew("previtem",
                 i > 0 ? items[i - 1] : Value::MakeUndefined("there is no previous item"));
  loop.AppendNew("nextitem",
                 index0 + 1 < n ? items[i + 1] : Value::MakeUndefined("there is no next item"));
  loop.AppendNew("cycle", Value(std::make_shared<const LoopCycle>(i)));
  return Value(std::move(loop));
}

// Binds loop or set targets: one name takes the value, several unpack it.
base::Status Assign(const std::vector<std::string>& targets, const Value& value, Frame* frame) {
  if (targets.size() == 1) {
    frame->vars.Set(targets[0], value);
    return base::Status::Ok();
  }
  K3_ASSIGN_OR_RETURN(std::vector<Value> parts, Iterate(value));
  if (parts.size() != targets.size()) {
    return base::InvalidArgument("cannot unpack " + std::to_string(parts.size()) + " values into " +
                                 std::to_string(targets.size()) + " names");
  }
  for (size_t i = 0; i < parts.size(); ++i) frame->vars.Set(targets[i], std::move(parts[i]));
  return base::Status::Ok();
}

}  // namespace

base::Status Interpreter::WriteText(std::string_view text) {
  bytes_written_ += text.size();
  if (bytes_written_ > options_.max_output_bytes) {
    return base::ResourceExhausted("output exceeds " + std::to_string(options_.max_output_bytes) +
                                   " bytes");
  }
  out_->append(text);
  return base::Status::Ok();
}

base::Status Interpreter::Write(const Value& value) {
  size_t before = out_->size();
  size_t budget = options_.max_output_bytes - std::min(bytes_written_, options_.max_output_bytes);
  K3_RETURN_IF_ERROR(AppendStr(value, before + budget, out_));
  bytes_written_ += out_->size() - before;
  return base::Status::Ok();
}

base::Result<std::string> Interpreter::Capture(const Body& body, const FramePtr& frame) {
  std::string buffer;
  std::string* saved = out_;
  out_ = &buffer;
  auto flow = Exec(body, frame);
  out_ = saved;
  if (!flow.ok()) return flow.status();
  return buffer;
}

base::Result<Flow> Interpreter::Exec(const Body& body, const FramePtr& frame) {
  for (const auto& stmt : body) {
    base::Status status = Charge(1);
    auto flow = status.ok() ? ExecStmt(*stmt, frame) : base::Result<Flow>(status);
    if (!flow.ok()) return WithLine(flow.status(), stmt->line);
    if (*flow != Flow::kNormal) return *flow;
  }
  return Flow::kNormal;
}

base::Result<Flow> Interpreter::ExecStmt(const Stmt& stmt, const FramePtr& frame) {
  switch (stmt.kind) {
    case StmtKind::kData:
      K3_RETURN_IF_ERROR(WriteText(stmt.text));
      break;
    case StmtKind::kPrint: {
      K3_ASSIGN_OR_RETURN(Value v, Eval(*stmt.expr, frame));
      K3_RETURN_IF_ERROR(Write(v));
      break;
    }
    case StmtKind::kIf: {
      K3_ASSIGN_OR_RETURN(Value condition, Eval(*stmt.expr, frame));
      return Exec(condition.Truthy() ? stmt.body : stmt.else_body, frame);
    }
    case StmtKind::kFor:
      return ExecFor(stmt, frame);
    case StmtKind::kSet:
    case StmtKind::kSetAttr:
    case StmtKind::kBlockSet:
      K3_RETURN_IF_ERROR(ExecSet(stmt, frame));
      break;
    case StmtKind::kMacro:
      frame->vars.Set(stmt.text, Value(std::make_shared<const Macro>(stmt, stmt.text, frame)));
      break;
    case StmtKind::kCallBlock:
      K3_RETURN_IF_ERROR(ExecCallBlock(stmt, frame));
      break;
    case StmtKind::kFilterBlock: {
      K3_ASSIGN_OR_RETURN(std::string text, Capture(stmt.body, frame));
      Value v(std::move(text));
      for (const ExprPtr& filter : stmt.filters) {
        K3_ASSIGN_OR_RETURN(v, ApplyFilter(*filter, v, frame));
      }
      K3_RETURN_IF_ERROR(Write(v));
      break;
    }
    case StmtKind::kWith: {
      auto inner = std::make_shared<Frame>();
      inner->parent = frame;
      for (size_t i = 0; i < stmt.targets.size(); ++i) {
        K3_ASSIGN_OR_RETURN(Value v, Eval(*stmt.values[i], frame));
        inner->vars.Set(stmt.targets[i], std::move(v));
      }
      return Exec(stmt.body, inner);
    }
    case StmtKind::kBreak:
      return Flow::kBreak;
    case StmtKind::kContinue:
      return Flow::kContinue;
  }
  return Flow::kNormal;
}

base::Result<Flow> Interpreter::ExecFor(const Stmt& stmt, const FramePtr& frame) {
  K3_ASSIGN_OR_RETURN(Value iterable, Eval(*stmt.expr, frame));
  K3_ASSIGN_OR_RETURN(std::vector<Value> items, Iterate(iterable));
  if (stmt.filter) {  // `for x in xs if cond`: loop.* counts the kept items only
    std::vector<Value> kept;
    for (Value& item : items) {
      auto scope = std::make_shared<Frame>();
      scope->parent = frame;
      K3_RETURN_IF_ERROR(Assign(stmt.targets, item, scope.get()));
      K3_ASSIGN_OR_RETURN(Value keep, Eval(*stmt.filter, scope));
      if (keep.Truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    K3_RETURN_IF_ERROR(Charge(1));
    auto scope = std::make_shared<Frame>();  // fresh per iteration, as in Jinja
    scope->parent = frame;
    scope->vars.Set("loop", LoopObject(items, i));
    K3_RETURN_IF_ERROR(Assign(stmt.targets, items[i], scope.get()));
    K3_ASSIGN_OR_RETURN(Flow flow, Exec(stmt.body, scope));
    if (flow == Flow::kBreak) break;
  }
  if (items.empty()) return Exec(stmt.else_body, frame);
  return Flow::kNormal;
}

base::Status Interpreter::ExecSet(const Stmt& stmt, const FramePtr& frame) {
  Value value;
  if (stmt.kind == StmtKind::kBlockSet) {
    K3_ASSIGN_OR_RETURN(std::string text, Capture(stmt.body, frame));
    value = Value(std::move(text));
    for (const ExprPtr& filter : stmt.filters) {
      K3_ASSIGN_OR_RETURN(value, ApplyFilter(*filter, value, frame));
    }
  } else {
    K3_ASSIGN_OR_RETURN(value, Eval(*stmt.expr, frame));
  }
  if (stmt.kind != StmtKind::kSetAttr) return Assign(stmt.targets, value, frame.get());
  Expr name_expr{ExprKind::kName, stmt.line};
  name_expr.name = stmt.targets[0];
  K3_ASSIGN_OR_RETURN(Value target, EvalName(name_expr, frame));
  if (!target.is_namespace()) {
    return base::InvalidArgument("cannot assign attribute on non-namespace object '" +
                                 stmt.targets[0] + "'");
  }
  if (value.holds_namespace()) {
    return base::Unimplemented("a namespace cannot hold another namespace");
  }
  target.as_namespace().attrs.Set(stmt.text, std::move(value));
  return base::Status::Ok();
}

// `{% call(params) macro(args) %}body{% endcall %}`: the macro gets `caller`, a macro made
// of the body.
base::Status Interpreter::ExecCallBlock(const Stmt& stmt, const FramePtr& frame) {
  const Expr& call = *stmt.expr;
  K3_ASSIGN_OR_RETURN(Value callee, Eval(*call.children[0], frame));
  K3_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(call, 1, frame));
  args.keyword.emplace_back("caller", Value(std::make_shared<const Macro>(stmt, "caller", frame)));
  K3_ASSIGN_OR_RETURN(Value result, CallValue(callee, std::move(args)));
  return Write(result);
}

}  // namespace k3::text::jinja
