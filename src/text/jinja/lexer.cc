#include "text/jinja/lexer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "base/utf8.h"

namespace k3::text::jinja {
namespace {

// Python str.isspace() over ASCII (what Jinja's rstrip() and \s remove in templates).
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
         (c >= '\x1c' && c <= '\x1f');
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

std::string NormaliseNewlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

enum class TagKind { kVariable, kBlock, kComment };

class Lexer {
 public:
  Lexer(std::string source, const LexOptions& options)
      : src_(std::move(source)), options_(options) {}
  base::Result<std::vector<Token>> Run();

 private:
  base::Status Error(const std::string& message) const {
    return base::InvalidArgument("line " + std::to_string(line_) + ": " + message);
  }
  void AdvanceTo(size_t to) {
    line_ += static_cast<int>(std::count(src_.begin() + pos_, src_.begin() + to, '\n'));
    pos_ = to;
  }
  bool At(std::string_view s) const { return src_.compare(pos_, s.size(), s) == 0; }
  void Emit(TokenKind kind, std::string text) {
    tokens_.push_back({kind, std::move(text), 0, 0, line_});
  }
  void EmitData(std::string_view data, size_t tag_pos, char sign, TagKind tag);
  void StripAfterTag(char sign, TagKind tag);
  base::Status LexComment();
  base::Status LexTag(TagKind tag);
  bool IsRawBegin() const;
  base::Status LexRaw();
  base::Status LexToken();
  base::Status LexString();
  base::Status LexNumber();

  std::string src_;
  LexOptions options_;
  size_t pos_ = 0;
  int line_ = 1;
  int depth_ = 0;  // open ( [ { inside the current tag: closers only count at depth 0
  std::vector<Token> tokens_;
};

// Emits the text before a tag at `tag_pos` after applying `-` and lstrip_blocks to it.
void Lexer::EmitData(std::string_view data, size_t tag_pos, char sign, TagKind tag) {
  if (sign == '-') {
    size_t end = data.size();
    while (end > 0 && IsSpace(data[end - 1])) --end;
    data = data.substr(0, end);
  } else if (sign != '+' && options_.lstrip_blocks && tag != TagKind::kVariable) {
    size_t nl = data.rfind('\n');
    size_t line_pos = nl == std::string_view::npos ? 0 : nl + 1;
    size_t data_begin = tag_pos - data.size();
    bool line_start = line_pos > 0 || data_begin == 0 || src_[data_begin - 1] == '\n';
    bool blank = std::all_of(data.begin() + line_pos, data.end(),
                             [](char c) { return IsSpace(c) && c != '\n'; });
    if (line_start && blank) data = data.substr(0, line_pos);
  }
  if (!data.empty()) Emit(TokenKind::kData, std::string(data));
}

// Applies `-` (strip all whitespace) or trim_blocks (one newline) after a tag's closer.
void Lexer::StripAfterTag(char sign, TagKind tag) {
  size_t end = pos_;
  if (sign == '-') {
    while (end < src_.size() && IsSpace(src_[end])) ++end;
  } else if (sign != '+' && tag != TagKind::kVariable && options_.trim_blocks &&
             end < src_.size() && src_[end] == '\n') {
    ++end;
  }
  AdvanceTo(end);
}

base::Result<std::vector<Token>> Lexer::Run() {
  while (pos_ < src_.size()) {
    size_t open = pos_;
    TagKind tag = TagKind::kVariable;
    for (;; ++open) {
      open = src_.find('{', open);
      if (open == std::string::npos || open + 1 >= src_.size()) break;
      char c = src_[open + 1];
      if (c == '{' || c == '%' || c == '#') {
        tag = c == '{' ? TagKind::kVariable : c == '%' ? TagKind::kBlock : TagKind::kComment;
        break;
      }
    }
    if (open == std::string::npos || open + 1 >= src_.size()) {
      Emit(TokenKind::kData, src_.substr(pos_));
      AdvanceTo(src_.size());
      break;
    }
    char sign = open + 2 < src_.size() ? src_[open + 2] : '\0';
    if (sign != '-' && sign != '+') sign = '\0';
    EmitData(std::string_view(src_).substr(pos_, open - pos_), open, sign, tag);
    AdvanceTo(open + 2 + (sign ? 1 : 0));
    base::Status status = tag == TagKind::kComment                 ? LexComment()
                          : tag == TagKind::kBlock && IsRawBegin() ? LexRaw()
                                                                   : LexTag(tag);
    if (!status.ok()) return status;
  }
  Emit(TokenKind::kEof, "");
  return std::move(tokens_);
}

base::Status Lexer::LexComment() {
  size_t close = src_.find("#}", pos_);
  if (close == std::string::npos) return Error("unterminated comment: missing '#}'");
  char sign =
      close > pos_ && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : '\0';
  AdvanceTo(close + 2);
  StripAfterTag(sign, TagKind::kComment);
  return base::Status::Ok();
}

// After `{%` and its sign: whitespace, `raw`, whitespace, an optional sign, `%}`.
bool Lexer::IsRawBegin() const {
  size_t p = pos_;
  while (p < src_.size() && IsSpace(src_[p])) ++p;
  if (src_.compare(p, 3, "raw") != 0) return false;
  p += 3;
  if (p < src_.size() && IsNameChar(src_[p])) return false;
  while (p < src_.size() && IsSpace(src_[p])) ++p;
  if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
  return src_.compare(p, 2, "%}") == 0;
}

base::Status Lexer::LexRaw() {
  size_t close = src_.find("%}", pos_);  // IsRawBegin() saw it
  char sign = src_[close - 1] == '-' ? '-' : '\0';
  AdvanceTo(close + 2);
  if (sign == '-') StripAfterTag('-', TagKind::kBlock);
  for (size_t open = src_.find("{%", pos_); open != std::string::npos;
       open = src_.find("{%", open + 1)) {
    size_t p = open + 2;
    char open_sign = p < src_.size() && (src_[p] == '-' || src_[p] == '+') ? src_[p++] : '\0';
    while (p < src_.size() && IsSpace(src_[p])) ++p;
    if (src_.compare(p, 6, "endraw") != 0) continue;
    p += 6;
    while (p < src_.size() && IsSpace(src_[p])) ++p;
    char close_sign = p < src_.size() && (src_[p] == '-' || src_[p] == '+') ? src_[p++] : '\0';
    if (src_.compare(p, 2, "%}") != 0) continue;
    EmitData(std::string_view(src_).substr(pos_, open - pos_), open, open_sign, TagKind::kBlock);
    AdvanceTo(p + 2);
    StripAfterTag(close_sign, TagKind::kBlock);
    return base::Status::Ok();
  }
  return Error("missing '{% endraw %}' for '{% raw %}'");
}

base::Status Lexer::LexTag(TagKind tag) {
  bool block = tag == TagKind::kBlock;
  Emit(block ? TokenKind::kBlockBegin : TokenKind::kVariableBegin, block ? "{%" : "{{");
  depth_ = 0;
  std::string_view closer = block ? "%}" : "}}";
  for (;;) {
    size_t p = pos_;
    while (p < src_.size() && IsSpace(src_[p])) ++p;
    AdvanceTo(p);
    if (pos_ >= src_.size())
      return Error(std::string("unexpected end of template, missing '") + std::string(closer) +
                   "'");
    if (depth_ == 0) {
      char sign = src_[pos_] == '-' || (block && src_[pos_] == '+') ? src_[pos_] : '\0';
      if (src_.compare(pos_ + (sign ? 1 : 0), 2, closer) == 0) {
        Emit(block ? TokenKind::kBlockEnd : TokenKind::kVariableEnd, std::string(closer));
        AdvanceTo(pos_ + (sign ? 3 : 2));
        StripAfterTag(sign, tag);
        return base::Status::Ok();
      }
    }
    K3_RETURN_IF_ERROR(LexToken());
  }
}

base::Status Lexer::LexToken() {
  static constexpr std::string_view kTwoCharOps[] = {"//", "**", "==", "!=", "<=", ">="};
  char c = src_[pos_];
  if (IsNameStart(c)) {
    size_t end = pos_;
    while (end < src_.size() && IsNameChar(src_[end])) ++end;
    Emit(TokenKind::kName, src_.substr(pos_, end - pos_));
    AdvanceTo(end);
    return base::Status::Ok();
  }
  if (IsDigit(c)) return LexNumber();
  if (c == '\'' || c == '"') return LexString();
  for (std::string_view op : kTwoCharOps) {
    if (At(op)) {
      Emit(TokenKind::kOperator, std::string(op));
      AdvanceTo(pos_ + 2);
      return base::Status::Ok();
    }
  }
  if (std::string_view("+-*/%~|.,:()[]{}<>=").find(c) == std::string_view::npos) {
    return Error("unexpected character '" + std::string(1, c) + "' in tag");
  }
  if (c == '(' || c == '[' || c == '{') ++depth_;
  if (c == ')' || c == ']' || c == '}') {
    if (depth_ == 0) return Error("unexpected '" + std::string(1, c) + "'");
    --depth_;
  }
  Emit(TokenKind::kOperator, std::string(1, c));
  AdvanceTo(pos_ + 1);
  return base::Status::Ok();
}

// Reads `count` hex digits at src[*p]; false when there are fewer.
bool ReadHex(std::string_view src, size_t* p, int count, uint32_t* out) {
  *out = 0;
  for (int i = 0; i < count; ++i, ++*p) {
    if (*p >= src.size()) return false;
    char c = src[*p];
    int d = IsDigit(c)               ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) return false;
    *out = *out * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

// Python string-literal escapes (what Jinja's unicode-escape decoding accepts); an unknown
// escape keeps its backslash, as Python does.
base::Status Lexer::LexString() {
  char quote = src_[pos_];
  std::string out;
  size_t p = pos_ + 1;
  while (p < src_.size() && src_[p] != quote) {
    if (src_[p] != '\\' || p + 1 >= src_.size()) {
      out.push_back(src_[p++]);
      continue;
    }
    char e = src_[p + 1];
    p += 2;
    static constexpr std::string_view kSimple = "ntrbfva\\'\"\n";
    static constexpr std::string_view kMeaning = "\n\t\r\b\f\v\a\\'\"";
    if (size_t i = kSimple.find(e); i != std::string_view::npos) {
      if (e != '\n') out.push_back(kMeaning[i]);  // backslash-newline is a line continuation
    } else if (e >= '0' && e <= '7') {
      uint32_t v = static_cast<uint32_t>(e - '0');
      for (int k = 0; k < 2 && p < src_.size() && src_[p] >= '0' && src_[p] <= '7'; ++k) {
        v = v * 8 + static_cast<uint32_t>(src_[p++] - '0');
      }
      base::AppendUtf8(v, &out);
    } else if (e == 'x' || e == 'u' || e == 'U') {
      uint32_t v;
      if (!ReadHex(src_, &p,
                   e == 'x'   ? 2
                   : e == 'u' ? 4
                              : 8,
                   &v) ||
          v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        return Error(std::string("invalid \\") + e + " escape in string literal");
      }
      base::AppendUtf8(v, &out);
    } else {
      out.push_back('\\');
      out.push_back(e);
    }
  }
  if (p >= src_.size()) return Error("unterminated string literal");
  Emit(TokenKind::kString, std::move(out));
  AdvanceTo(p + 1);
  return base::Status::Ok();
}

// Digits with single underscores between them; returns the end.
size_t ScanDigits(std::string_view src, size_t p, bool (*is_digit)(char)) {
  while (p < src.size() &&
         (is_digit(src[p]) || (src[p] == '_' && p + 1 < src.size() && is_digit(src[p + 1])))) {
    ++p;
  }
  return p;
}

bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsOctDigit(char c) { return c >= '0' && c <= '7'; }
bool IsBinDigit(char c) { return c == '0' || c == '1'; }

base::Status Lexer::LexNumber() {
  std::string_view src = src_;
  size_t p = pos_;
  int base = 10;
  char prefix = p + 1 < src.size() ? static_cast<char>(src[p + 1] | 0x20) : '\0';
  if (src[p] == '0' && (prefix == 'x' || prefix == 'o' || prefix == 'b')) {
    base = prefix == 'x' ? 16 : prefix == 'o' ? 8 : 2;
    size_t start = p + 2 + (p + 2 < src.size() && src[p + 2] == '_' ? 1 : 0);
    p = ScanDigits(src, start, base == 16 ? IsHexDigit : base == 8 ? IsOctDigit : IsBinDigit);
    if (p == start) return Error("invalid number literal");
  } else {
    p = ScanDigits(src, p, IsDigit);
  }
  bool is_float = false;
  bool after_dot = pos_ > 0 && src[pos_ - 1] == '.';  // `x.0.1` is attribute 0, then 1
  if (base == 10 && !after_dot && p + 1 < src.size() && src[p] == '.' && IsDigit(src[p + 1])) {
    p = ScanDigits(src, p + 1, IsDigit);
    is_float = true;
  }
  if (base == 10 && !after_dot && p < src.size() && (src[p] | 0x20) == 'e') {
    size_t q = p + 1 + (p + 1 < src.size() && (src[p + 1] == '+' || src[p + 1] == '-') ? 1 : 0);
    if (q < src.size() && IsDigit(src[q])) {
      p = ScanDigits(src, q, IsDigit);
      is_float = true;
    }
  }
  std::string text;
  for (size_t i = pos_ + (base == 10 ? 0 : 2); i < p; ++i) {
    if (src[i] != '_') text.push_back(src[i]);
  }
  Token token{is_float ? TokenKind::kFloat : TokenKind::kInteger, src_.substr(pos_, p - pos_), 0, 0,
              line_};
  errno = 0;
  if (is_float) {
    token.float_value = std::strtod(text.c_str(), nullptr);
  } else {
    token.int_value = std::strtoll(text.c_str(), nullptr, base);
    if (errno == ERANGE) return Error("integer literal out of range: " + token.text);
  }
  tokens_.push_back(std::move(token));
  AdvanceTo(p);
  return base::Status::Ok();
}

}  // namespace

base::Result<std::vector<Token>> Lex(std::string_view source, const LexOptions& options) {
  Lexer lexer(NormaliseNewlines(source), options);
  return lexer.Run();
}

}  // namespace k3::text::jinja
