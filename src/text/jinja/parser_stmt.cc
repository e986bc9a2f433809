// Statement grammar of Parser, its token helpers, and ParseTemplate.
#include <utility>

#include "text/jinja/parser.h"
#include "text/jinja/parser_impl.h"

namespace k3::text::jinja {

const Token& Parser::Peek(size_t ahead) const {
  size_t index = pos_ + ahead;
  return tokens_[index < tokens_.size() ? index : tokens_.size() - 1];
}

bool Parser::IsOp(std::string_view op, size_t ahead) const {
  const Token& t = Peek(ahead);
  return t.kind == TokenKind::kOperator && t.text == op;
}

bool Parser::IsName(std::string_view name, size_t ahead) const {
  const Token& t = Peek(ahead);
  return t.kind == TokenKind::kName && t.text == name;
}

bool Parser::SkipOp(std::string_view op) {
  if (!IsOp(op)) return false;
  Next();
  return true;
}

bool Parser::SkipName(std::string_view name) {
  if (!IsName(name)) return false;
  Next();
  return true;
}

base::Status Parser::ExpectOp(std::string_view op) {
  if (SkipOp(op)) return base::Status::Ok();
  return Error("expected '" + std::string(op) + "', got " + Describe(Peek()));
}

base::Status Parser::ExpectName(std::string_view name) {
  if (SkipName(name)) return base::Status::Ok();
  return Error("expected '" + std::string(name) + "', got " + Describe(Peek()));
}

base::Result<std::string> Parser::ExpectIdentifier() {
  if (Peek().kind != TokenKind::kName) return Error("expected a name, got " + Describe(Peek()));
  return Next().text;
}

base::Status Parser::Error(const std::string& message) const {
  return base::InvalidArgument("line " + std::to_string(Peek().line) + ": " + message);
}

std::string Parser::Describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kData:
      return "template text";
    case TokenKind::kVariableBegin:
      return "'{{'";
    case TokenKind::kVariableEnd:
      return "'}}'";
    case TokenKind::kBlockBegin:
      return "'{%'";
    case TokenKind::kBlockEnd:
      return "'%}'";
    case TokenKind::kString:
      return "a string";
    case TokenKind::kInteger:
    case TokenKind::kFloat:
      return "number " + token.text;
    case TokenKind::kEof:
      return "end of template";
    default:
      return "'" + token.text + "'";
  }
}

ExprPtr Parser::MakeExpr(ExprKind kind, int line) const {
  auto node = std::make_unique<Expr>();
  node->kind = kind;
  node->line = line;
  return node;
}

base::Status Parser::ExpectBlockEnd() {
  if (Peek().kind == TokenKind::kBlockEnd) {
    Next();
    return base::Status::Ok();
  }
  return Error("expected '%}', got " + Describe(Peek()));
}

base::Status Parser::ParseEndTag(std::string_view end_tag) {
  if (Peek().kind != TokenKind::kBlockBegin || !IsName(end_tag, 1)) {
    return Error("expected '{% " + std::string(end_tag) + " %}'");
  }
  pos_ += 2;
  return ExpectBlockEnd();
}

base::Result<Body> Parser::ParseTemplateBody() {
  K3_ASSIGN_OR_RETURN(Body body, ParseBody({}));
  return body;
}

base::Result<Body> Parser::ParseBody(std::initializer_list<std::string_view> end_tags) {
  DepthGuard guard(this);
  if (guard.too_deep()) return Error("blocks nested too deeply");
  Body body;
  for (;;) {
    const Token& t = Peek();
    auto stmt = std::make_unique<Stmt>();
    stmt->line = t.line;
    if (t.kind == TokenKind::kEof) {
      if (end_tags.size() == 0) return body;
      return Error("unexpected end of template, expected '{% " + std::string(*end_tags.begin()) +
                   " %}'");
    } else if (t.kind == TokenKind::kData) {
      stmt->kind = StmtKind::kData;
      stmt->text = Next().text;
    } else if (t.kind == TokenKind::kVariableBegin) {
      Next();
      stmt->kind = StmtKind::kPrint;
      K3_ASSIGN_OR_RETURN(stmt->expr, ParseTuple());
      if (Peek().kind != TokenKind::kVariableEnd) {
        return Error("expected '}}', got " + Describe(Peek()));
      }
      Next();
    } else if (t.kind == TokenKind::kBlockBegin) {
      for (std::string_view end : end_tags) {
        if (IsName(end, 1)) return body;
      }
      Next();
      K3_ASSIGN_OR_RETURN(stmt, ParseStatement());
    } else {
      return Error("unexpected " + Describe(t));
    }
    body.push_back(std::move(stmt));
  }
}

base::Result<std::unique_ptr<Stmt>> Parser::ParseStatement() {
  const Token& t = Peek();
  if (t.kind != TokenKind::kName) return Error("expected a tag name, got " + Describe(t));
  std::string tag = t.text;
  if (tag == "if") return ParseIf();
  if (tag == "for") return ParseFor();
  if (tag == "set") return ParseSet();
  if (tag == "macro") return ParseMacro();
  if (tag == "call") return ParseCallBlock();
  if (tag == "filter") return ParseFilterBlock();
  if (tag == "with") return ParseWith();
  if (tag == "break" || tag == "continue") {
    if (loop_depth_ == 0) return Error("'" + tag + "' outside of a loop");
    auto stmt = std::make_unique<Stmt>();
    stmt->kind = tag == "break" ? StmtKind::kBreak : StmtKind::kContinue;
    stmt->line = Next().line;
    K3_RETURN_IF_ERROR(ExpectBlockEnd());
    return stmt;
  }
  if (tag.starts_with("end") || tag == "elif" || tag == "else") {
    return Error("unexpected '{% " + tag + " %}'");
  }
  return Error("unknown tag '" + tag + "'");
}

base::Result<std::unique_ptr<Stmt>> Parser::ParseIf() {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kIf;
  stmt->line = Next().line;  // `if` or `elif`
  K3_ASSIGN_OR_RETURN(stmt->expr, ParseTuple(false));
  K3_RETURN_IF_ERROR(ExpectBlockEnd());
  K3_ASSIGN_OR_RETURN(stmt->body, ParseBody({"elif", "else", "endif"}));
  Next();  // `{%`
  if (IsName("elif")) {
    K3_ASSIGN_OR_RETURN(auto nested, ParseIf());  // consumes through `endif`
    stmt->else_body.push_back(std::move(nested));
    return stmt;
  }
  if (SkipName("else")) {
    K3_RETURN_IF_ERROR(ExpectBlockEnd());
    K3_ASSIGN_OR_RETURN(stmt->else_body, ParseBody({"endif"}));
    Next();
  }
  K3_RETURN_IF_ERROR(ExpectName("endif"));
  K3_RETURN_IF_ERROR(ExpectBlockEnd());
  return stmt;
}

base::Result<std::vector<std::string>> Parser::ParseTargets() {
  std::vector<std::string> names;
  bool parens = SkipOp("(");
  do {
    if (parens && IsOp(")")) break;
    K3_ASSIGN_OR_RETURN(std::string name, ExpectIdentifier());
    names.push_back(std::move(name));
  } while (SkipOp(","));
  if (parens) K3_RETURN_IF_ERROR(ExpectOp(")"));
  return names;
}

base::Result<std::unique_ptr<Stmt>> Parser::ParseFor() {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kFor;
  stmt->line = Next().line;
  K3_ASSIGN_OR_RETURN(stmt->targets, ParseTargets());
  K3_RETURN_IF_ERROR(ExpectName("in"));
  K3_ASSIGN_OR_RETURN(stmt->expr, ParseTuple(false));
  if (SkipName("if")) {
    K3_ASSIGN_OR_RETURN(stmt->filter, ParseExpression());
  }
  if (IsName("recursive")) return Error("recursive for loops are not supported");
  K3_RETURN_IF_ERROR(ExpectBlockEnd());
  ++loop_depth_;
  auto body = ParseBody({"else", "endfor"});
  --loop_depth_;
  if (!body.ok()) return body.status();
  stmt->body = std::move(*body);
  Next();
  if (SkipName("else")) {
    K3_RETURN_IF_ERROR(ExpectBlockEnd());
    K3_ASSIGN_OR_RETURN(stmt->else_body, ParseBody({"endfor"}));
    Next();
  }
  K3_RETURN_IF_ERROR(ExpectName("endfor"));
  K3_RETURN_IF_ERROR(ExpectBlockEnd());
  return stmt;
}

base::Result<std::vector<ExprPtr>> Parser::ParseFilterChain() {
  std::vector<ExprPtr> filters;
  do {
    K3_ASSIGN_OR_RETURN(ExprPtr filter, ParseFilter(nullptr));
    filters.push_back(std::move(filter));
  } while (SkipOp("|"));
  return filters;
}

// `set x = v`, `set a, b = v`, `set ns.attr = v`, or a block set `set x | f %}...{% endset`.
base::Result<std::unique_ptr<Stmt>> Parser::ParseSet() {
  auto stmt = std::make_unique<Stmt>();
  stmt->line = Next().line;
  K3_ASSIGN_OR_RETURN(stmt->targets, ParseTargets());
  if (stmt->targets.size() == 1 && SkipOp(".")) {
    K3_ASSIGN_OR_RETURN(stmt->text, ExpectIdentifier());
    stmt->kind = StmtKind::kSetAttr;
  } else {
    stmt->kind = StmtKind::kSet;
  }
  if (SkipOp("=")) {
    K3_ASSIGN_OR_RETURN(stmt->expr, ParseTuple());
    K3_RETURN_IF_ERROR(ExpectBlockEnd());
    return stmt;
  }
  if (stmt->kind != StmtKind::kSet || stmt->targets.size() != 1) {
    return Error("expected '=' in set");
  }
  stmt->kind = StmtKind::kBlockSet;
  if (SkipOp("|")) {
    K3_ASSIGN_OR_RETURN(stmt->filters, ParseFilterChain());
  }
  K3_RETURN_IF_ERROR(ExpectBlockEnd());
  K3_ASSIGN_OR_RETURN(stmt->body, ParseBody({"endset"}));
  K3_RETURN_IF_ERROR(ParseEndTag("endset"));
  return stmt;
}

// `(a, b=default, ...)`, after the opening parenthesis was seen by the caller.
base::Result<std::vector<Param>> Parser::ParseParams() {
  std::vector<Param> params;
  K3_RETURN_IF_ERROR(ExpectOp("("));
  while (!IsOp(")")) {
    if (!params.empty()) K3_RETURN_IF_ERROR(ExpectOp(","));
    if (IsOp(")")) break;
    Param param;
    K3_ASSIGN_OR_RETURN(param.name, ExpectIdentifier());
    if (SkipOp("=")) {
      K3_ASSIGN_OR_RETURN(param.default_value, ParseExpression());
    } else if (!params.empty() && params.back().default_value) {
      return Error("parameter without a default follows one with a default");
    }
    params.push_back(std::move(param));
  }
  Next();
  return params;
}

base::Result<std::unique_ptr<Stmt>> Parser::ParseMacro() {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kMacro;
  stmt->line = Next().line;
  K3_ASSIGN_OR_RETURN(stmt->text, ExpectIdentifier());
  K3_ASSIGN_OR_RETURN(stmt->params, ParseParams());
  K3_RETURN_IF_ERROR(ExpectBlockEnd());
  int outer_loops = loop_depth_;
  loop_depth_ = 0;  // break/continue cannot reach a loop outside the macro
  auto body = ParseBody({"endmacro"});
  loop_depth_ = outer_loops;
  if (!body.ok()) return body.status();
  stmt->body = std::move(*body);
  K3_RETURN_IF_ERROR(ParseEndTag("endmacro"));
  return stmt;
}

base::Result<std::unique_ptr<Stmt>> Parser::ParseCallBlock() {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kCallBlock;
  stmt->line = Next().line;
  if (IsOp("(")) {
    K3_ASSIGN_OR_RETURN(stmt->params, ParseParams());
  }
  K3_ASSIGN_OR_RETURN(stmt->expr, ParseExpression());
  if (stmt->expr->kind != ExprKind::kCall) return Error("expected a macro call in call block");
  K3_RETURN_IF_ERROR(ExpectBlockEnd());
  int outer_loops = loop_depth_;
  loop_depth_ = 0;
  auto body = ParseBody({"endcall"});
  loop_depth_ = outer_loops;
  if (!body.ok()) return body.status();
  stmt->body = std::move(*body);
  K3_RETURN_IF_ERROR(ParseEndTag("endcall"));
  return stmt;
}

base::Result<std::unique_ptr<Stmt>> Parser::ParseFilterBlock() {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kFilterBlock;
  stmt->line = Next().line;
  K3_ASSIGN_OR_RETURN(stmt->filters, ParseFilterChain());
  K3_RETURN_IF_ERROR(ExpectBlockEnd());
  K3_ASSIGN_OR_RETURN(stmt->body, ParseBody({"endfilter"}));
  K3_RETURN_IF_ERROR(ParseEndTag("endfilter"));
  return stmt;
}

// `with a = 1, b = x` (the values see the outer scope, not each other).
base::Result<std::unique_ptr<Stmt>> Parser::ParseWith() {
  auto stmt = std::make_unique<Stmt>();
  stmt->kind = StmtKind::kWith;
  stmt->line = Next().line;
  while (Peek().kind != TokenKind::kBlockEnd) {
    if (!stmt->targets.empty()) K3_RETURN_IF_ERROR(ExpectOp(","));
    K3_ASSIGN_OR_RETURN(std::string name, ExpectIdentifier());
    K3_RETURN_IF_ERROR(ExpectOp("="));
    K3_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
    stmt->targets.push_back(std::move(name));
    stmt->values.push_back(std::move(value));
  }
  Next();
  K3_ASSIGN_OR_RETURN(stmt->body, ParseBody({"endwith"}));
  K3_RETURN_IF_ERROR(ParseEndTag("endwith"));
  return stmt;
}

base::Result<std::unique_ptr<Program>> ParseTemplate(std::string_view source,
                                                     const LexOptions& options) {
  K3_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(source, options));
  Parser parser(std::move(tokens));
  K3_ASSIGN_OR_RETURN(Body body, parser.ParseTemplateBody());
  auto program = std::make_unique<Program>();
  program->body = std::move(body);
  return program;
}

}  // namespace k3::text::jinja
