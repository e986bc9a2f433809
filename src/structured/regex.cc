// JSON Schema `pattern` -> StringDfa: a recursive-descent parser of the ECMA-262 subset JSON
// Schema recommends (literals, ., classes with ranges and negation, \d \w \s \D \W \S, escapes,
// groups, alternation, the quantifiers ? * + {m} {m,} {m,n} (lazy forms too), ^ and $), a
// Thompson NFA, and the subset construction. Validators run patterns with their own engines
// (Python's `re` for our labels, ECMA-262 for JSON Schema proper); where those disagree the
// automaton takes only what both accept:
//   - `.` excludes \n, \r, U+2028 and U+2029 (ECMA-262 without the s flag);
//   - \d is [0-9], \w [A-Za-z0-9_], \s the whitespace both list; \D \W \S (and negated classes
//     holding such escapes) are their complements over what both engines agree on, so non-ASCII
//     letters and digits match none of \w \d \W \D (a subset, documented);
//   - $ matches only at the very end (Python's $ also before a final \n).
// A pattern is a search (unanchored): the NFA loops over any character before and after it.
#include <algorithm>
#include <map>
#include <set>

#include "structured/regex_ast.h"
#include "structured/string_dfa.h"

namespace k3::structured {
namespace {

constexpr size_t kMaxNfaStates = 200000;
constexpr size_t kMaxDfaStates = 5000;

struct Edge {
  enum Kind : uint8_t { kEps, kSet, kBol, kEol };
  Kind kind;
  int32_t to;
  int32_t set;  // kSet: index into Nfa::sets
};

struct Nfa {
  std::vector<std::vector<Edge>> out;
  std::vector<CodeSet> sets;
  int32_t Add() {
    out.emplace_back();
    return static_cast<int32_t>(out.size() - 1);
  }
};

struct Fragment {
  int32_t begin, end;
};

class Emitter {
 public:
  explicit Emitter(Nfa* nfa) : nfa_(nfa) {}
  base::Result<Fragment> Emit(const RegexNode& n) {
    if (nfa_->out.size() > kMaxNfaStates) {
      return base::InvalidArgument("pattern expands to too many states");
    }
    const int32_t b = nfa_->Add();
    switch (n.kind) {
      case RegexNode::kEmpty:
        return Fragment{b, b};
      case RegexNode::kSet:
      case RegexNode::kBol:
      case RegexNode::kEol: {
        const int32_t e = nfa_->Add();
        Edge edge{n.kind == RegexNode::kSet   ? Edge::kSet
                  : n.kind == RegexNode::kBol ? Edge::kBol
                                              : Edge::kEol,
                  e, -1};
        if (n.kind == RegexNode::kSet) {
          nfa_->sets.push_back(n.set);
          edge.set = static_cast<int32_t>(nfa_->sets.size() - 1);
        }
        nfa_->out[b].push_back(edge);
        return Fragment{b, e};
      }
      case RegexNode::kConcat: {
        int32_t at = b;
        for (const RegexNode& c : n.children) {
          K3_ASSIGN_OR_RETURN(const Fragment f, Emit(c));
          Eps(at, f.begin);
          at = f.end;
        }
        return Fragment{b, at};
      }
      case RegexNode::kAlt: {
        const int32_t e = nfa_->Add();
        for (const RegexNode& c : n.children) {
          K3_ASSIGN_OR_RETURN(const Fragment f, Emit(c));
          Eps(b, f.begin);
          Eps(f.end, e);
        }
        return Fragment{b, e};
      }
      case RegexNode::kRepeat:
        return Repeat(n, b);
    }
    return Fragment{b, b};
  }

 private:
  void Eps(int32_t from, int32_t to) { nfa_->out[from].push_back({Edge::kEps, to, -1}); }

  base::Result<Fragment> Repeat(const RegexNode& n, int32_t b) {
    const RegexNode& body = n.children[0];
    int32_t at = b;
    for (int64_t i = 0; i < n.min; ++i) {
      K3_ASSIGN_OR_RETURN(const Fragment f, Emit(body));
      Eps(at, f.begin);
      at = f.end;
    }
    const int32_t e = nfa_->Add();
    Eps(at, e);
    if (n.max < 0) {
      K3_ASSIGN_OR_RETURN(const Fragment f, Emit(body));
      Eps(at, f.begin);
      Eps(f.end, at);
      return Fragment{b, e};
    }
    for (int64_t i = n.min; i < n.max; ++i) {
      K3_ASSIGN_OR_RETURN(const Fragment f, Emit(body));
      Eps(at, f.begin);
      at = f.end;
      Eps(at, e);
    }
    return Fragment{b, e};
  }

  Nfa* nfa_;
};

// The subset construction over the classes the NFA's sets delimit. A DFA state is a set of NFA
// states closed under epsilon (and ^ at the start only); it accepts if the closure under $ too
// reaches the final state.
class Determinizer {
 public:
  Determinizer(const Nfa& nfa, int32_t final_state) : nfa_(nfa), final_(final_state) {
    std::set<uint32_t> cuts = {0};
    for (const CodeSet& s : nfa.sets) {
      for (const auto& [lo, hi] : s) {
        cuts.insert(lo);
        if (hi + 1 < kCodePointEnd) cuts.insert(hi + 1);
      }
    }
    dfa_.starts.assign(cuts.begin(), cuts.end());
  }

  base::Result<StringDfa> Run(int32_t nfa_start) {
    dfa_.start = IdOf(Closure({nfa_start}, /*at_start=*/true), true);
    for (size_t i = 0; i < sets_.size(); ++i) {
      if (sets_.size() > kMaxDfaStates) {
        return base::InvalidArgument("pattern needs too many automaton states");
      }
      const std::vector<int32_t> current = sets_[i].first;
      for (uint32_t cp : dfa_.starts) {
        std::vector<int32_t> moved;
        for (int32_t s : current) {
          for (const Edge& e : nfa_.out[s]) {
            if (e.kind == Edge::kSet && Contains(nfa_.sets[e.set], cp)) moved.push_back(e.to);
          }
        }
        dfa_.next.push_back(moved.empty() ? -1 : IdOf(Closure(moved, false), false));
      }
    }
    dfa_.Finish();
    return dfa_;
  }

 private:
  static bool Contains(const CodeSet& s, uint32_t cp) {
    auto it = std::upper_bound(s.begin(), s.end(), std::make_pair(cp, kCodePointEnd));
    return it != s.begin() && std::prev(it)->second >= cp;
  }

  std::vector<int32_t> Closure(std::vector<int32_t> seeds, bool at_start, bool eol = false) const {
    std::vector<uint8_t> seen(nfa_.out.size(), 0);
    std::vector<int32_t> stack = seeds, out;
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      if (seen[s]) continue;
      seen[s] = 1;
      out.push_back(s);
      for (const Edge& e : nfa_.out[s]) {
        if (e.kind == Edge::kEps || (e.kind == Edge::kBol && at_start) ||
            (e.kind == Edge::kEol && eol)) {
          stack.push_back(e.to);
        }
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  int32_t IdOf(const std::vector<int32_t>& set, bool at_start) {
    auto [it, fresh] =
        ids_.emplace(std::make_pair(set, at_start), static_cast<int32_t>(sets_.size()));
    if (fresh) {
      sets_.emplace_back(set, at_start);
      const std::vector<int32_t> ended = Closure(set, at_start, /*eol=*/true);
      dfa_.accepting.push_back(std::binary_search(ended.begin(), ended.end(), final_));
    }
    return it->second;
  }

  const Nfa& nfa_;
  int32_t final_;
  StringDfa dfa_;
  std::map<std::pair<std::vector<int32_t>, bool>, int32_t> ids_;
  std::vector<std::pair<std::vector<int32_t>, bool>> sets_;
};

}  // namespace

base::Result<StringDfa> CompilePattern(std::string_view pattern) {
  K3_ASSIGN_OR_RETURN(const RegexNode ast, ParseRegex(pattern));
  Nfa nfa;
  const CodeSet any = {{0, kCodePointEnd - 1}};
  nfa.sets.push_back(any);
  // Search semantics: any prefix, the pattern, any suffix.
  const int32_t start = nfa.Add();
  nfa.out[start].push_back({Edge::kSet, start, 0});
  Emitter emitter(&nfa);
  K3_ASSIGN_OR_RETURN(const Fragment body, emitter.Emit(ast));
  nfa.out[start].push_back({Edge::kEps, body.begin, -1});
  const int32_t final_state = nfa.Add();
  nfa.out[body.end].push_back({Edge::kEps, final_state, -1});
  nfa.out[final_state].push_back({Edge::kSet, final_state, 0});
  Determinizer d(nfa, final_state);
  return d.Run(start);
}

}  // namespace k3::structured
