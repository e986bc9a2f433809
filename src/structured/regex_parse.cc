// The pattern parser (see regex.cc for the subset and the semantics). Character sets are carried
// as two sets — `sure`, what every engine we follow matches, and `hull`, what some engine may
// match — so that negation stays on the safe side: not(sure, hull) = (¬hull, ¬sure). A pattern's
// automaton uses `sure`.
#include <algorithm>
#include <string>

#include "structured/regex_ast.h"
#include "structured/string_dfa.h"

namespace k3::structured {
namespace {

constexpr uint32_t kMaxCp = kCodePointEnd - 1;
constexpr int64_t kMaxRepeat = 1000;

struct CharSet {
  CodeSet sure, hull;
};

CharSet Exactly(CodeSet s) {
  s = Normalize(std::move(s));
  return {s, s};
}
CharSet Negate(const CharSet& c) { return {Complement(c.hull), Complement(c.sure)}; }

CharSet ClassEscape(char32_t e) {
  const CodeSet non_ascii = {{0x80, kMaxCp}};
  CharSet c;
  switch (e) {
    case 'd':
    case 'D':
      c.sure = {{'0', '9'}};
      c.hull = Union(c.sure, non_ascii);
      break;
    case 'w':
    case 'W':
      c.sure = Normalize({{'0', '9'}, {'A', 'Z'}, {'a', 'z'}, {'_', '_'}});
      c.hull = Union(c.sure, non_ascii);
      break;
    default:  // s, S
      c.sure = Normalize({{9, 13},
                          {' ', ' '},
                          {0xA0, 0xA0},
                          {0x1680, 0x1680},
                          {0x2000, 0x200A},
                          {0x2028, 0x2029},
                          {0x202F, 0x202F},
                          {0x205F, 0x205F},
                          {0x3000, 0x3000}});
      c.hull = Union(c.sure, Normalize({{0x1C, 0x1F}, {0x85, 0x85}, {0xFEFF, 0xFEFF}}));
  }
  return e >= 'A' && e <= 'Z' ? Negate(c) : c;
}

bool IsClassEscape(char32_t e) {
  return e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S';
}

class Parser {
 public:
  explicit Parser(std::u32string text) : p_(std::move(text)) {}

  base::Result<RegexNode> Parse() {
    K3_ASSIGN_OR_RETURN(RegexNode n, Alternation(0));
    if (i_ < p_.size()) return Error("unbalanced ')'");
    return n;
  }

 private:
  base::Status Error(const std::string& what) const {
    return base::InvalidArgument("pattern at character " + std::to_string(i_) + ": " + what);
  }
  base::Status Unsupported(const std::string& what) const {
    return base::InvalidArgument("pattern at character " + std::to_string(i_) + ": " + what +
                                 " is not supported");
  }
  bool AtEnd() const { return i_ >= p_.size(); }
  char32_t Peek(size_t ahead = 0) const { return i_ + ahead < p_.size() ? p_[i_ + ahead] : 0; }

  base::Result<RegexNode> Alternation(int depth) {
    if (depth > 100) return Error("groups nest too deeply");
    RegexNode alt;
    alt.kind = RegexNode::kAlt;
    while (true) {
      K3_ASSIGN_OR_RETURN(RegexNode c, Sequence(depth));
      alt.children.push_back(std::move(c));
      if (AtEnd() || Peek() != '|') break;
      ++i_;
    }
    if (alt.children.size() == 1) return std::move(alt.children[0]);
    return alt;
  }

  base::Result<RegexNode> Sequence(int depth) {
    RegexNode seq;
    seq.kind = RegexNode::kConcat;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      K3_ASSIGN_OR_RETURN(RegexNode atom, Atom(depth));
      K3_ASSIGN_OR_RETURN(atom, Quantified(std::move(atom)));
      seq.children.push_back(std::move(atom));
    }
    return seq;
  }

  // Reads {m}, {m,}, {m,n} at i_ (on '{'); false (i_ unchanged) if it is not one (a literal '{').
  bool Braces(int64_t* min, int64_t* max) {
    size_t j = i_ + 1;
    auto number = [&](int64_t* out) {
      const size_t from = j;
      int64_t v = 0;
      while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') {
        v = std::min<int64_t>(v * 10 + (p_[j] - '0'), 1 << 30);
        ++j;
      }
      *out = v;
      return j > from;
    };
    if (!number(min)) return false;
    *max = *min;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      if (!number(max)) *max = -1;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    i_ = j + 1;
    return true;
  }

  base::Result<RegexNode> Quantified(RegexNode atom) {
    if (AtEnd()) return atom;
    int64_t min = 0, max = -1;
    const char32_t q = Peek();
    if (q == '*') {
      ++i_;
    } else if (q == '+') {
      min = 1;
      ++i_;
    } else if (q == '?') {
      max = 1;
      ++i_;
    } else if (q == '{' && Peek(1) == ',') {
      return Unsupported("'{,n}' (read differently by ECMA-262 and Python)");
    } else if (q != '{' || !Braces(&min, &max)) {
      return atom;
    }
    if (atom.kind == RegexNode::kBol || atom.kind == RegexNode::kEol) {
      return Error("nothing to repeat");
    }
    if (max >= 0 && min > max) return Error("repeat bounds out of order");
    if (min > kMaxRepeat || max > kMaxRepeat) return Unsupported("a repeat count over 1000");
    if (!AtEnd() && Peek() == '?') ++i_;  // lazy: the same language
    int64_t unused_min = 0, unused_max = 0;
    const size_t at = i_;
    if (!AtEnd() && (Peek() == '+' || Peek() == '*' || Peek() == '?' ||
                     (Peek() == '{' && Braces(&unused_min, &unused_max)))) {
      i_ = at;
      return Error("multiple repeat (possessive quantifiers are not supported)");
    }
    RegexNode r;
    r.kind = RegexNode::kRepeat;
    r.min = min;
    r.max = max;
    r.children.push_back(std::move(atom));
    return r;
  }

  base::Result<RegexNode> Atom(int depth) {
    const char32_t c = p_[i_++];
    RegexNode n;
    switch (c) {
      case '^':
        n.kind = RegexNode::kBol;
        return n;
      case '$':
        n.kind = RegexNode::kEol;
        return n;
      case '.':
        n.kind = RegexNode::kSet;
        n.set = Normalize({{0, 9}, {11, 12}, {14, 0x2027}, {0x202A, kMaxCp}});
        return n;
      case '(':
        return Group(depth);
      case '[': {
        K3_ASSIGN_OR_RETURN(const CharSet set, Class());
        n.kind = RegexNode::kSet;
        n.set = set.sure;
        return n;
      }
      case '*':
      case '+':
      case '?':
        --i_;
        return Error("nothing to repeat");
      case ')':
      case ']':
        if (c == ']') return Unsupported("a lone ']'");
        return Error("unbalanced ')'");
      case '\\': {
        K3_ASSIGN_OR_RETURN(const CharSet set, Escape(/*in_class=*/false));
        n.kind = RegexNode::kSet;
        n.set = set.sure;
        return n;
      }
      default:
        n.kind = RegexNode::kSet;
        n.set = {{c, c}};
        return n;
    }
  }

  base::Result<RegexNode> Group(int depth) {
    if (Peek() == '?') {
      if (Peek(1) != ':') {
        const char32_t k = Peek(1);
        if (k == '=' || k == '!') return Unsupported("lookahead");
        if (k == '<' && (Peek(2) == '=' || Peek(2) == '!')) return Unsupported("lookbehind");
        if (k == '<' || k == 'P') return Unsupported("a named group");
        return Unsupported("a '(?' group (flags, atomic, ...)");
      }
      i_ += 2;
    }
    K3_ASSIGN_OR_RETURN(RegexNode inner, Alternation(depth + 1));
    if (AtEnd() || Peek() != ')') return Error("missing ')'");
    ++i_;
    return inner;
  }

  // After '\\'.
  base::Result<CharSet> Escape(bool in_class) {
    if (AtEnd()) return Error("'\\' at the end");
    const char32_t e = p_[i_++];
    if (IsClassEscape(e)) return ClassEscape(e);
    switch (e) {
      case 'n':
        return Exactly({{'\n', '\n'}});
      case 'r':
        return Exactly({{'\r', '\r'}});
      case 't':
        return Exactly({{'\t', '\t'}});
      case 'v':
        return Exactly({{'\v', '\v'}});
      case 'f':
        return Exactly({{'\f', '\f'}});
      case 'b':
        if (in_class) return Exactly({{8, 8}});
        return Unsupported("'\\b' (a word boundary)");
      case 'B':
        return Unsupported("'\\B' (a word boundary)");
      case '0':
        if (Peek() >= '0' && Peek() <= '9') return Unsupported("an octal escape");
        return Exactly({{0, 0}});
      case 'x':
      case 'u': {
        const int digits = e == 'x' ? 2 : 4;
        uint32_t v = 0;
        for (int k = 0; k < digits; ++k) {
          const char32_t h = Peek();
          int d = h >= '0' && h <= '9'   ? int(h - '0')
                  : h >= 'a' && h <= 'f' ? int(h - 'a' + 10)
                  : h >= 'A' && h <= 'F' ? int(h - 'A' + 10)
                                         : -1;
          if (d < 0) return Unsupported(std::string("'\\") + char(e) + "' without hex digits");
          v = v * 16 + static_cast<uint32_t>(d);
          ++i_;
        }
        if (v >= 0xD800 && v <= 0xDFFF) return Unsupported("a surrogate escape");
        return Exactly({{v, v}});
      }
      case 'k':
        return Unsupported("a named backreference");
      case 'p':
      case 'P':
        return Unsupported("a Unicode property escape");
      case 'c':
        return Unsupported("a '\\c' control escape");
      default:
        break;
    }
    if (e >= '1' && e <= '9') return Unsupported("a backreference");
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9')) {
      return Unsupported(std::string("the escape '\\") + char(e) + "'");
    }
    return Exactly({{e, e}});  // an escaped punctuation or other character stands for itself
  }

  // After '['.
  base::Result<CharSet> Class() {
    bool negated = false;
    if (Peek() == '^') {
      negated = true;
      ++i_;
    }
    if (Peek() == ']') return Unsupported("an empty class or ']' first in a class");
    CharSet out;
    while (true) {
      if (AtEnd()) return Error("missing ']'");
      if (Peek() == ']') {
        ++i_;
        break;
      }
      if (Peek() == '[' && (Peek(1) == ':' || Peek(1) == '=' || Peek(1) == '.')) {
        return Unsupported("a POSIX class");
      }
      K3_ASSIGN_OR_RETURN(const auto first, ClassAtom());
      if (Peek() == '-' && Peek(1) != ']' && i_ + 1 < p_.size()) {
        ++i_;
        K3_ASSIGN_OR_RETURN(const auto last, ClassAtom());
        if (first.second || last.second) return Unsupported("a range with a class escape");
        const uint32_t lo = first.first.sure[0].first, hi = last.first.sure[0].first;
        if (lo > hi) return Error("a range out of order");
        out.sure = Union(out.sure, {{lo, hi}});
        out.hull = Union(out.hull, {{lo, hi}});
        continue;
      }
      out.sure = Union(out.sure, first.first.sure);
      out.hull = Union(out.hull, first.first.hull);
    }
    return negated ? Negate(out) : out;
  }

  // One class member: (its set, whether it was a class escape like \d).
  base::Result<std::pair<CharSet, bool>> ClassAtom() {
    const char32_t c = p_[i_++];
    if (c != '\\') return std::make_pair(Exactly({{c, c}}), false);
    const bool is_class = IsClassEscape(Peek());
    K3_ASSIGN_OR_RETURN(CharSet set, Escape(/*in_class=*/true));
    return std::make_pair(std::move(set), is_class);
  }

  std::u32string p_;
  size_t i_ = 0;
};

}  // namespace

CodeSet Normalize(CodeSet s) {
  std::sort(s.begin(), s.end());
  CodeSet out;
  for (const auto& r : s) {
    if (!out.empty() && r.first <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, r.second);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

CodeSet Union(const CodeSet& a, const CodeSet& b) {
  CodeSet all = a;
  all.insert(all.end(), b.begin(), b.end());
  return Normalize(std::move(all));
}

CodeSet Complement(const CodeSet& s) {
  CodeSet out;
  uint32_t at = 0;
  for (const auto& [lo, hi] : s) {
    if (lo > at) out.push_back({at, lo - 1});
    at = hi + 1;
  }
  if (at <= kMaxCp) out.push_back({at, kMaxCp});
  return out;
}

base::Result<RegexNode> ParseRegex(std::string_view pattern) {
  Parser parser(DecodeUtf8(pattern));
  return parser.Parse();
}

}  // namespace k3::structured
