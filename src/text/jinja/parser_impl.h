// Internal to the parser: the recursive-descent Parser shared by parser_stmt.cc (statements) and
// parser_expr.cc (expressions). Not part of the library's interface.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "text/jinja/ast.h"
#include "text/jinja/lexer.h"
#include "text/jinja/parser.h"

namespace k3::text::jinja {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  base::Result<Body> ParseTemplateBody();

  // Expressions (parser_expr.cc).
  base::Result<ExprPtr> ParseExpression(bool with_condexpr = true);
  // A comma-separated list becomes a kTuple; one expression stays itself. `(1, 2)` style
  // parentheses are handled by primaries.
  base::Result<ExprPtr> ParseTuple(bool with_condexpr = true);
  base::Result<ExprPtr> ParseFilter(ExprPtr operand);  // after the `|`

 private:
  // Token access.
  const Token& Peek(size_t ahead = 0) const;
  const Token& Next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool IsOp(std::string_view op, size_t ahead = 0) const;
  bool IsName(std::string_view name, size_t ahead = 0) const;
  bool SkipOp(std::string_view op);
  bool SkipName(std::string_view name);
  base::Status ExpectOp(std::string_view op);
  base::Status ExpectName(std::string_view name);
  base::Result<std::string> ExpectIdentifier();
  base::Status Error(const std::string& message) const;
  static std::string Describe(const Token& token);
  ExprPtr MakeExpr(ExprKind kind, int line) const;

  // Statements (parser_stmt.cc).
  // Parses until a `{% name %}` with name in `end_tags` (left unconsumed) or end of input
  // (an error when end_tags is non-empty).
  base::Result<Body> ParseBody(std::initializer_list<std::string_view> end_tags);
  base::Result<std::unique_ptr<Stmt>> ParseStatement();
  base::Result<std::unique_ptr<Stmt>> ParseIf();
  base::Result<std::unique_ptr<Stmt>> ParseFor();
  base::Result<std::unique_ptr<Stmt>> ParseSet();
  base::Result<std::unique_ptr<Stmt>> ParseMacro();
  base::Result<std::unique_ptr<Stmt>> ParseCallBlock();
  base::Result<std::unique_ptr<Stmt>> ParseFilterBlock();
  base::Result<std::unique_ptr<Stmt>> ParseWith();
  base::Result<std::vector<Param>> ParseParams();
  base::Result<std::vector<std::string>> ParseTargets();
  base::Result<std::vector<ExprPtr>> ParseFilterChain();
  base::Status ExpectBlockEnd();
  // Consumes `{% end_tag %}`.
  base::Status ParseEndTag(std::string_view end_tag);

  // Expression levels (parser_expr.cc).
  base::Result<ExprPtr> ParseCondExpr();
  base::Result<ExprPtr> ParseOr();
  base::Result<ExprPtr> ParseAnd();
  base::Result<ExprPtr> ParseNot();
  base::Result<ExprPtr> ParseCompare();
  base::Result<ExprPtr> ParseMath1();
  base::Result<ExprPtr> ParseConcat();
  base::Result<ExprPtr> ParseMath2();
  base::Result<ExprPtr> ParsePow();
  base::Result<ExprPtr> ParseUnary(bool with_filter);
  base::Result<ExprPtr> ParsePrimary();
  base::Result<ExprPtr> ParseParenthesised(int line);
  base::Result<ExprPtr> ParseListOrDict(bool is_dict, int line);
  base::Result<ExprPtr> ParsePostfix(ExprPtr node);
  base::Result<ExprPtr> ParseSubscript(ExprPtr node);
  base::Result<ExprPtr> ParseFilterExpr(ExprPtr node);
  base::Result<ExprPtr> ParseTest(ExprPtr operand);
  // Parses `(args)` after the `(`, appending positional args to node->children.
  base::Status ParseCallArgs(Expr* node);

  // Limits recursion: every nested expression or statement block passes through one.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) { ++p_->depth_; }
    ~DepthGuard() { --p_->depth_; }
    bool too_deep() const { return p_->depth_ > kMaxParseDepth; }

   private:
    Parser* p_;
  };

  std::vector<Token> tokens_;  // ends with kEof
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // enclosing for loops in the current macro (for break/continue)
};

}  // namespace k3::text::jinja
