// Internal: the tree-walking interpreter behind Template::Render. One Interpreter renders one
// template once; it owns the output buffer, the scopes and the limits. Not thread-safe (each
// Render makes its own).
//
// Scopes follow Jinja2: the template's top level is one frame; every for-loop iteration, macro
// call, call-block caller and `with` block gets a fresh frame whose parent is the enclosing one,
// so `set` inside them is not seen outside (hence `namespace()`); `if` makes no frame.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/result.h"
#include "text/jinja/ast.h"
#include "text/jinja/template.h"
#include "text/jinja/value.h"

namespace k3::text::jinja {

struct Frame {
  Dict vars;
  const Dict* base = nullptr;     // the render context, for the top-level frame only
  std::shared_ptr<Frame> parent;  // null for the top level
};
using FramePtr = std::shared_ptr<Frame>;

// What a statement asks the enclosing loop to do.
enum class Flow { kNormal, kBreak, kContinue };

class Interpreter {
 public:
  Interpreter(const RenderOptions& options, std::string* out) : options_(options), out_(out) {}

  // Renders `body` in `frame`, appending to the current output.
  base::Result<Flow> Exec(const Body& body, const FramePtr& frame);
  base::Result<Value> Eval(const Expr& expr, const FramePtr& frame);
  // Renders `body` into a fresh string (macro bodies, block sets, filter blocks).
  base::Result<std::string> Capture(const Body& body, const FramePtr& frame);

  // Calls anything callable with the usual depth limit.
  base::Result<Value> CallValue(const Value& callee, CallArgs args);
  // Applies filter `filter` (a kFilter node whose operand is already evaluated to `input`).
  base::Result<Value> ApplyFilter(const Expr& filter, Value input, const FramePtr& frame);

  // Budget: one step per evaluated node, loop iteration and so on; bulk operations charge
  // proportionally to their size. Fails with RESOURCE_EXHAUSTED once spent.
  base::Status Charge(int64_t steps);
  // Fails when `value` is larger than the limits allow (strings, node counts, nesting).
  base::Status CheckSize(const Value& value) const;
  const RenderOptions& options() const { return options_; }

 private:
  base::Result<Flow> ExecStmt(const Stmt& stmt, const FramePtr& frame);
  base::Result<Flow> ExecFor(const Stmt& stmt, const FramePtr& frame);
  base::Status ExecSet(const Stmt& stmt, const FramePtr& frame);
  base::Status ExecCallBlock(const Stmt& stmt, const FramePtr& frame);
  base::Status Write(const Value& value);
  base::Status WriteText(std::string_view text);

  base::Result<Value> EvalInner(const Expr& expr, const FramePtr& frame);
  base::Result<Value> EvalName(const Expr& expr, const FramePtr& frame);
  base::Result<Value> EvalCollection(const Expr& expr, const FramePtr& frame);
  base::Result<Value> EvalBinary(const Expr& expr, const FramePtr& frame);
  base::Result<Value> EvalCompare(const Expr& expr, const FramePtr& frame);
  base::Result<Value> EvalSlice(const Expr& expr, const FramePtr& frame);
  base::Result<Value> EvalCall(const Expr& expr, const FramePtr& frame);
  base::Result<Value> EvalTest(const Expr& expr, const FramePtr& frame);
  base::Result<CallArgs> EvalArgs(const Expr& expr, size_t first_arg, const FramePtr& frame);

  const RenderOptions& options_;
  std::string* out_;  // the buffer being written (swapped while capturing)
  int64_t steps_ = 0;
  int call_depth_ = 0;
  size_t bytes_written_ = 0;  // over all buffers, captured ones included
};

// Prefixes "line N: " to an error that has no line yet.
base::Status WithLine(const base::Status& status, int line);

}  // namespace k3::text::jinja
