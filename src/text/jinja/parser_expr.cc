// Expression grammar of Parser (see parser.h for the precedence ladder).
#include <optional>
#include <utility>

#include "text/jinja/parser_impl.h"

namespace k3::text::jinja {
namespace {

ExprPtr Binary(Op op, ExprPtr left, ExprPtr right, int line) {
  auto node = std::make_unique<Expr>();
  node->kind = ExprKind::kBinary;
  node->line = line;
  node->op = op;
  node->children.push_back(std::move(left));
  node->children.push_back(std::move(right));
  return node;
}

}  // namespace

base::Result<ExprPtr> Parser::ParseExpression(bool with_condexpr) {
  return with_condexpr ? ParseCondExpr() : ParseOr();
}

base::Result<ExprPtr> Parser::ParseTuple(bool with_condexpr) {
  int line = Peek().line;
  K3_ASSIGN_OR_RETURN(ExprPtr first, ParseExpression(with_condexpr));
  if (!IsOp(",")) return first;
  auto tuple = MakeExpr(ExprKind::kTuple, line);
  tuple->children.push_back(std::move(first));
  while (SkipOp(",")) {
    // A trailing comma ends the tuple (`a, b, %}`).
    const Token& t = Peek();
    if (t.kind == TokenKind::kBlockEnd || t.kind == TokenKind::kVariableEnd || IsOp(")") ||
        IsName("in")) {
      break;
    }
    K3_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression(with_condexpr));
    tuple->children.push_back(std::move(item));
  }
  return tuple;
}

// `a if cond else b`; the else part is optional (Undefined when the condition is false).
base::Result<ExprPtr> Parser::ParseCondExpr() {
  K3_ASSIGN_OR_RETURN(ExprPtr value, ParseOr());
  while (IsName("if")) {
    int line = Next().line;
    K3_ASSIGN_OR_RETURN(ExprPtr condition, ParseOr());
    ExprPtr otherwise;
    if (SkipName("else")) {
      K3_ASSIGN_OR_RETURN(otherwise, ParseCondExpr());
    }
    auto node = MakeExpr(ExprKind::kCondition, line);
    node->children.push_back(std::move(value));
    node->children.push_back(std::move(condition));
    node->children.push_back(std::move(otherwise));
    value = std::move(node);
  }
  return value;
}

base::Result<ExprPtr> Parser::ParseOr() {
  K3_ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
  while (IsName("or")) {
    int line = Next().line;
    K3_ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
    left = Binary(Op::kOr, std::move(left), std::move(right), line);
  }
  return left;
}

base::Result<ExprPtr> Parser::ParseAnd() {
  K3_ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
  while (IsName("and")) {
    int line = Next().line;
    K3_ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
    left = Binary(Op::kAnd, std::move(left), std::move(right), line);
  }
  return left;
}

base::Result<ExprPtr> Parser::ParseNot() {
  if (!IsName("not")) return ParseCompare();
  DepthGuard guard(this);
  if (guard.too_deep()) return Error("expression nested too deeply");
  int line = Next().line;
  K3_ASSIGN_OR_RETURN(ExprPtr operand, ParseNot());
  auto node = MakeExpr(ExprKind::kUnary, line);
  node->op = Op::kNot;
  node->children.push_back(std::move(operand));
  return node;
}

base::Result<ExprPtr> Parser::ParseCompare() {
  static constexpr std::pair<std::string_view, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                             {"<", Op::kLt},  {"<=", Op::kLe},
                                                             {">", Op::kGt},  {">=", Op::kGe}};
  int line = Peek().line;
  K3_ASSIGN_OR_RETURN(ExprPtr first, ParseMath1());
  ExprPtr node;
  for (;;) {
    std::optional<Op> op;
    for (const auto& [spelling, candidate] : kOps) {
      if (!op && SkipOp(spelling)) op = candidate;
    }
    if (!op && SkipName("in")) op = Op::kIn;
    if (!op && IsName("not") && IsName("in", 1)) {
      pos_ += 2;
      op = Op::kNotIn;
    }
    if (!op) break;
    if (!node) {
      node = MakeExpr(ExprKind::kCompare, line);
      node->children.push_back(std::move(first));
    }
    K3_ASSIGN_OR_RETURN(ExprPtr operand, ParseMath1());
    node->compare_ops.push_back(*op);
    node->children.push_back(std::move(operand));
  }
  return node ? std::move(node) : std::move(first);
}

base::Result<ExprPtr> Parser::ParseMath1() {
  K3_ASSIGN_OR_RETURN(ExprPtr left, ParseConcat());
  while (IsOp("+") || IsOp("-")) {
    const Token& t = Next();
    Op op = t.text == "+" ? Op::kAdd : Op::kSub;
    K3_ASSIGN_OR_RETURN(ExprPtr right, ParseConcat());
    left = Binary(op, std::move(left), std::move(right), t.line);
  }
  return left;
}

base::Result<ExprPtr> Parser::ParseConcat() {
  K3_ASSIGN_OR_RETURN(ExprPtr left, ParseMath2());
  while (IsOp("~")) {
    int line = Next().line;
    K3_ASSIGN_OR_RETURN(ExprPtr right, ParseMath2());
    left = Binary(Op::kConcat, std::move(left), std::move(right), line);
  }
  return left;
}

base::Result<ExprPtr> Parser::ParseMath2() {
  K3_ASSIGN_OR_RETURN(ExprPtr left, ParsePow());
  while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
    const Token& t = Next();
    Op op = t.text == "*"    ? Op::kMul
            : t.text == "/"  ? Op::kDiv
            : t.text == "//" ? Op::kFloorDiv
                             : Op::kMod;
    K3_ASSIGN_OR_RETURN(ExprPtr right, ParsePow());
    left = Binary(op, std::move(left), std::move(right), t.line);
  }
  return left;
}

// Jinja's ** is left-associative (unlike Python's).
base::Result<ExprPtr> Parser::ParsePow() {
  K3_ASSIGN_OR_RETURN(ExprPtr left, ParseUnary(true));
  while (IsOp("**")) {
    int line = Next().line;
    K3_ASSIGN_OR_RETURN(ExprPtr right, ParseUnary(true));
    left = Binary(Op::kPow, std::move(left), std::move(right), line);
  }
  return left;
}

// `-x|f` is `(-x)|f`: the operand of a sign takes no filters, the signed value does.
base::Result<ExprPtr> Parser::ParseUnary(bool with_filter) {
  DepthGuard guard(this);
  if (guard.too_deep()) return Error("expression nested too deeply");
  ExprPtr node;
  if (IsOp("-") || IsOp("+")) {
    const Token& t = Next();
    K3_ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary(false));
    node = MakeExpr(ExprKind::kUnary, t.line);
    node->op = t.text == "-" ? Op::kNeg : Op::kPos;
    node->children.push_back(std::move(operand));
  } else {
    K3_ASSIGN_OR_RETURN(node, ParsePrimary());
  }
  K3_ASSIGN_OR_RETURN(node, ParsePostfix(std::move(node)));
  if (with_filter) return ParseFilterExpr(std::move(node));
  return node;
}

base::Result<ExprPtr> Parser::ParsePrimary() {
  const Token& t = Peek();
  int line = t.line;
  if (t.kind == TokenKind::kName) {
    Next();
    auto node = MakeExpr(ExprKind::kLiteral, line);
    if (t.text == "true" || t.text == "True") {
      node->literal = Value(true);
    } else if (t.text == "false" || t.text == "False") {
      node->literal = Value(false);
    } else if (t.text == "none" || t.text == "None") {
      node->literal = Value::None();
    } else {
      node->kind = ExprKind::kName;
      node->name = t.text;
    }
    return node;
  }
  if (t.kind == TokenKind::kString) {
    std::string text;
    while (Peek().kind == TokenKind::kString) text += Next().text;  // 'a' 'b' is 'ab'
    auto node = MakeExpr(ExprKind::kLiteral, line);
    node->literal = Value(std::move(text));
    return node;
  }
  if (t.kind == TokenKind::kInteger || t.kind == TokenKind::kFloat) {
    Next();
    auto node = MakeExpr(ExprKind::kLiteral, line);
    node->literal = t.kind == TokenKind::kInteger ? Value(t.int_value) : Value(t.float_value);
    return node;
  }
  if (SkipOp("(")) return ParseParenthesised(line);
  if (SkipOp("[")) return ParseListOrDict(false, line);
  if (SkipOp("{")) return ParseListOrDict(true, line);
  return Error("unexpected " + Describe(t));
}

// After `(`: `()` is an empty tuple, `(x)` is x, `(x,)` and `(x, y)` are tuples.
base::Result<ExprPtr> Parser::ParseParenthesised(int line) {
  if (SkipOp(")")) return MakeExpr(ExprKind::kTuple, line);
  K3_ASSIGN_OR_RETURN(ExprPtr first, ParseExpression());
  if (SkipOp(")")) return first;
  auto tuple = MakeExpr(ExprKind::kTuple, line);
  tuple->children.push_back(std::move(first));
  while (SkipOp(",")) {
    if (IsOp(")")) break;
    K3_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
    tuple->children.push_back(std::move(item));
  }
  K3_RETURN_IF_ERROR(ExpectOp(")"));
  return tuple;
}

base::Result<ExprPtr> Parser::ParseListOrDict(bool is_dict, int line) {
  auto node = MakeExpr(is_dict ? ExprKind::kDict : ExprKind::kList, line);
  std::string_view close = is_dict ? "}" : "]";
  while (!IsOp(close)) {
    if (!node->children.empty()) K3_RETURN_IF_ERROR(ExpectOp(","));
    if (IsOp(close)) break;  // trailing comma
    K3_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
    node->children.push_back(std::move(item));
    if (is_dict) {
      K3_RETURN_IF_ERROR(ExpectOp(":"));
      K3_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
      node->children.push_back(std::move(value));
    }
  }
  Next();
  return node;
}

base::Result<ExprPtr> Parser::ParsePostfix(ExprPtr node) {
  for (;;) {
    int line = Peek().line;
    if (SkipOp(".")) {
      const Token& t = Next();
      ExprPtr access;
      if (t.kind == TokenKind::kName) {
        access = MakeExpr(ExprKind::kGetAttr, line);
        access->name = t.text;
        access->children.push_back(std::move(node));
      } else if (t.kind == TokenKind::kInteger) {  // `x.0` is `x[0]`
        access = MakeExpr(ExprKind::kGetItem, line);
        auto key = MakeExpr(ExprKind::kLiteral, line);
        key->literal = Value(t.int_value);
        access->children.push_back(std::move(node));
        access->children.push_back(std::move(key));
      } else {
        return Error("expected a name after '.', got " + Describe(t));
      }
      node = std::move(access);
    } else if (SkipOp("[")) {
      K3_ASSIGN_OR_RETURN(node, ParseSubscript(std::move(node)));
    } else if (SkipOp("(")) {
      auto call = MakeExpr(ExprKind::kCall, line);
      call->children.push_back(std::move(node));
      K3_RETURN_IF_ERROR(ParseCallArgs(call.get()));
      node = std::move(call);
    } else {
      return node;
    }
  }
}

// After `[`: `x[key]`, or a slice `x[a:b:c]` with every part optional.
base::Result<ExprPtr> Parser::ParseSubscript(ExprPtr node) {
  int line = Peek().line;
  ExprPtr parts[3];
  int colons = 0;
  for (;;) {
    if (IsOp("]")) break;
    if (SkipOp(":")) {
      if (++colons > 2) return Error("too many ':' in a slice");
      continue;
    }
    if (parts[colons]) return Error("expected ':' or ']' in a subscript");
    K3_ASSIGN_OR_RETURN(parts[colons], colons == 0 ? ParseTuple() : ParseExpression());
  }
  Next();
  if (colons == 0 && !parts[0]) return Error("empty subscript");
  auto access = MakeExpr(colons == 0 ? ExprKind::kGetItem : ExprKind::kSlice, line);
  access->children.push_back(std::move(node));
  for (int i = 0; i <= (colons == 0 ? 0 : 2); ++i) access->children.push_back(std::move(parts[i]));
  return access;
}

base::Status Parser::ParseCallArgs(Expr* node) {
  while (!IsOp(")")) {
    if (node->children.size() > 1 || !node->kwargs.empty()) K3_RETURN_IF_ERROR(ExpectOp(","));
    if (IsOp(")")) break;
    if (IsOp("*") || IsOp("**")) return Error("*args and **kwargs in calls are not supported");
    if (Peek().kind == TokenKind::kName && IsOp("=", 1)) {
      std::string name = Next().text;
      Next();
      K3_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
      node->kwargs.emplace_back(std::move(name), std::move(value));
    } else {
      if (!node->kwargs.empty()) return Error("positional argument follows keyword argument");
      K3_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
      node->children.push_back(std::move(value));
    }
  }
  Next();
  return base::Status::Ok();
}

base::Result<ExprPtr> Parser::ParseFilterExpr(ExprPtr node) {
  for (;;) {
    if (SkipOp("|")) {
      K3_ASSIGN_OR_RETURN(node, ParseFilter(std::move(node)));
    } else if (IsName("is")) {
      K3_ASSIGN_OR_RETURN(node, ParseTest(std::move(node)));
    } else if (IsOp("(")) {
      int line = Next().line;
      auto call = MakeExpr(ExprKind::kCall, line);
      call->children.push_back(std::move(node));
      K3_RETURN_IF_ERROR(ParseCallArgs(call.get()));
      node = std::move(call);
    } else {
      return node;
    }
  }
}

base::Result<ExprPtr> Parser::ParseFilter(ExprPtr operand) {
  int line = Peek().line;
  K3_ASSIGN_OR_RETURN(std::string name, ExpectIdentifier());
  auto node = MakeExpr(ExprKind::kFilter, line);
  node->name = std::move(name);
  node->children.push_back(std::move(operand));
  if (SkipOp("(")) K3_RETURN_IF_ERROR(ParseCallArgs(node.get()));
  return node;
}

// After `is`: `[not] name`, then `(args)` or one bare argument (`x is divisibleby 3`).
base::Result<ExprPtr> Parser::ParseTest(ExprPtr operand) {
  int line = Next().line;
  bool negated = SkipName("not");
  K3_ASSIGN_OR_RETURN(std::string name, ExpectIdentifier());
  auto node = MakeExpr(ExprKind::kTest, line);
  node->name = std::move(name);
  node->negated = negated;
  node->children.push_back(std::move(operand));
  const Token& t = Peek();
  bool bare_arg = t.kind == TokenKind::kName || t.kind == TokenKind::kString ||
                  t.kind == TokenKind::kInteger || t.kind == TokenKind::kFloat || IsOp("[") ||
                  IsOp("{");
  if (IsName("else") || IsName("or") || IsName("and")) bare_arg = false;
  if (SkipOp("(")) {
    K3_RETURN_IF_ERROR(ParseCallArgs(node.get()));
  } else if (bare_arg) {
    K3_ASSIGN_OR_RETURN(ExprPtr arg, ParsePrimary());
    K3_ASSIGN_OR_RETURN(arg, ParsePostfix(std::move(arg)));
    node->children.push_back(std::move(arg));
  }
  return node;
}

}  // namespace k3::text::jinja
