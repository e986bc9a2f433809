#include "structured/completion.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "structured/frame_internal.h"
#include "structured/grammar.h"
#include "structured/mask_walk.h"

namespace k3::structured {
namespace {

constexpr int64_t kInf = int64_t{1} << 40;

int64_t Add(int64_t a, int64_t b) { return std::min(kInf, a + b); }

// Bytes of the shortest number within the node's bounds (roughly: numbers never recurse, so only
// their order against other types matters).
int64_t NumberCost(const SchemaNode& n) {
  const bool zero_ok = (!n.has_min || n.minimum < 0 || (n.minimum == 0 && !n.exclusive_min)) &&
                       (!n.has_max || n.maximum > 0 || (n.maximum == 0 && !n.exclusive_max));
  if (zero_ok) return 1;
  const double bound = n.has_min && n.minimum > 0 ? n.minimum : std::fabs(n.maximum);
  return 3 + static_cast<int64_t>(std::log10(std::max(1.0, bound)));
}

int64_t TypeCost(const Grammar& g, const std::vector<int64_t>& cost, int32_t node, uint8_t type) {
  const SchemaNode& n = g.node(node);
  switch (type) {
    case kNull:
    case kBoolean:
      return 4;
    case kInteger:
    case kNumber:
      return NumberCost(n);
    case kString:
      if (n.string_dfa >= 0) {
        const StringDfa& dfa = g.graph().dfas[n.string_dfa];
        return dfa.start < 0 ? kInf : 2 + dfa.distance[dfa.start];
      }
      return 2 + n.min_length;
    case kArray:
      if (!n.prefix_items.empty()) {
        int64_t total = 2;
        const auto prefix = static_cast<int64_t>(n.prefix_items.size());
        for (int64_t i = 0; i < std::min(n.min_items, prefix); ++i) {
          total = Add(total, Add(cost[n.prefix_items[i]], 1));
        }
        if (n.min_items > prefix) {
          total = Add(total, (n.min_items - prefix) * std::min(kInf, cost[n.items] + 1));
        }
        return total;
      }
      return n.min_items == 0 ? 2 : Add(2, n.min_items * std::min(kInf, cost[n.items] + 1));
    case kObject: {
      int64_t total = 1;
      for (const Property& p : n.properties) {
        if (p.required)
          total = Add(total, Add(static_cast<int64_t>(p.key.size()) + 4, cost[p.node]));
      }
      return total;
    }
  }
  return kInf;
}

int64_t NodeCost(const Grammar& g, const std::vector<int64_t>& cost, int32_t node) {
  const SchemaNode& n = g.node(node);
  int64_t best = kInf;
  if (!n.any_of.empty()) {
    for (int32_t alt : n.any_of) best = std::min(best, cost[alt]);
  } else if (n.has_literals) {
    for (const std::string& text : n.literals) best = std::min<int64_t>(best, text.size());
  } else {
    for (uint8_t type : {kNull, kBoolean, kInteger, kNumber, kString, kArray, kObject}) {
      if (n.types & type) best = std::min(best, TypeCost(g, cost, node, type));
    }
  }
  return best;
}

// K3 argument blocks of an object node: per required property
// `<|open|>argument key="K" type="T"<|sep|>VALUE<|close|>argument<|sep|>`, ~36 events + K + VALUE.
int64_t K3ArgsCost(const Grammar& g, const std::vector<int64_t>& cost, int32_t node) {
  const SchemaNode& n = g.node(node);
  if (n.types != kObject) return cost[static_cast<size_t>(node)];
  int64_t total = 1;
  for (const Property& p : n.properties) {
    if (p.required) total = Add(total, Add(36 + static_cast<int64_t>(p.key.size()), cost[p.node]));
  }
  return total;
}

int64_t ShortestLiteral(const Grammar& g, int32_t list) {
  int64_t best = kInf;
  for (const std::string& s : g.literal_list(list)) best = std::min<int64_t>(best, s.size());
  return best;
}

int64_t OpCost(const Grammar& g, const CompletionCosts& c, int32_t program, size_t pc) {
  const Op& op = g.program(program).ops[pc];
  const std::vector<int64_t>& dist = c.program[static_cast<size_t>(program)];
  auto then = [&](int64_t here) {
    const int32_t next = NextPc(op, pc);
    return next < int32_t(dist.size()) ? Add(here, dist[next]) : kInf;
  };
  switch (op.kind) {
    case Op::kSpecial:
      return then(1);
    case Op::kBytes:
      return then(static_cast<int64_t>(op.bytes.size()));
    case Op::kFreeText:
    case Op::kBranch: {
      int64_t best = kInf;
      for (const auto& [event, target] : op.branches) best = std::min(best, dist[target]);
      return best;
    }
    case Op::kJson:
      return then(c.node[op.node]);
    case Op::kToolName:
      return then(ShortestLiteral(g, op.list));
    case Op::kToolArgs: {
      int64_t best = kInf;
      for (const ToolSlot& t : g.tools()) {
        const int32_t node = op.k3 ? t.k3_node : t.args_node;
        if (node < 0) continue;
        best = std::min(best, op.k3 ? K3ArgsCost(g, c.node, node) : c.node[size_t(node)]);
      }
      return then(best);
    }
    case Op::kDigits:
      return then(op.min_digits);
    case Op::kJump:
      return dist[op.next];
    case Op::kEnd:
      return 1;
  }
  return kInf;
}

// Events a frame would take to finish, best first (some may be refused; the caller tries them in
// order).
class Preferences {
 public:
  explicit Preferences(const Grammar& g) : g_(g) {}

  void Of(const FrameStack& stack, std::vector<int32_t>* out, int depth = 0) {
    if (depth > 8 || stack.size() == 0) return;
    const Frame& f = stack.back();
    switch (f.kind) {
      case FrameKind::kValue:
        return ValueStarts(f.node, out);
      case FrameKind::kObject:
        return Object(f, out);
      case FrameKind::kArray:
        if (f.state == kArrAfterItem) return Push(out, {']', ','});
        Push(out, {']'});
        return ValueStarts(g_.node(f.node).ItemNode(f.a), out);
      case FrameKind::kString:
        if (HasDfa(g_, f)) return DfaStringPreferences(g_, f, /*raw=*/false, out);
        return Push(out, {'"', 'a', 'n', '0', 'd', 'c', '\\', 'u', 0x80, 0x90, 0xA0});
      case FrameKind::kKey:
        return Key(f, out);
      case FrameKind::kNumber:
        AfterPop(stack, 0, out, depth);
        return Push(out, {'1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '.'});
      case FrameKind::kLiteral:
        return Literal(stack, out, depth);
      case FrameKind::kRawText:
        if (HasDfa(g_, f)) {
          if (f.c == 0 && FrameDfa(g_, f).accepting[f.b]) AfterPop(stack, 0, out, depth);
          return DfaStringPreferences(g_, f, /*raw=*/true, out);
        }
        if (f.c == 0) AfterPop(stack, 0, out, depth);
        return Push(out, {'a', 0x80, 0x90, 0xA0});
      case FrameKind::kK3Args:
        return K3Args(f, out);
      case FrameKind::kProgram:
        return ProgramAt(f, out, depth);
    }
  }

 private:
  static void Push(std::vector<int32_t>* out, std::initializer_list<int32_t> events) {
    out->insert(out->end(), events);
  }

  // Frames that finish on an event their parent takes (numbers, literals, raw text): the parent's
  // preferences as they will be once the frame has handed it `result`.
  void AfterPop(const FrameStack& stack, int32_t result, std::vector<int32_t>* out, int depth) {
    if (stack.size() < 2) return;
    FrameStack parent;
    parent.frames.assign(stack.frames.begin(), stack.frames.end() - 1);
    OnChildDone(g_, parent.back(), result);
    Of(parent, out, depth + 1);
  }

  void ValueStarts(int32_t node, std::vector<int32_t>* out) {
    std::vector<std::pair<int64_t, int32_t>> starts;
    AddStarts(node, &starts, 0);
    std::stable_sort(starts.begin(), starts.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& s : starts) out->push_back(s.second);
  }

  void AddStarts(int32_t node, std::vector<std::pair<int64_t, int32_t>>* starts, int depth) {
    const SchemaNode& n = g_.node(node);
    const std::vector<int64_t>& cost = g_.completion_costs().node;
    if (!n.any_of.empty()) {
      if (depth < 16) {
        for (int32_t alt : n.any_of) AddStarts(alt, starts, depth + 1);
      }
      return;
    }
    if (n.has_literals) {
      for (const std::string& t : n.literals) starts->push_back({t.size(), uint8_t(t[0])});
      return;
    }
    auto type = [&](uint8_t bits) { return TypeCost(g_, cost, node, bits); };
    if (n.types & (kInteger | kNumber)) {
      const int64_t c = type(kInteger);
      starts->push_back({c, '0'});
      for (int d = '1'; d <= '9'; ++d) starts->push_back({c, d});
      starts->push_back({c + 1, '-'});
    }
    if (n.types & kString) starts->push_back({type(kString), '"'});
    if (n.types & kNull) starts->push_back({4, 'n'});
    if (n.types & kBoolean) starts->push_back({4, 't'});
    if (n.types & kArray) starts->push_back({type(kArray), '['});
    if (n.types & kObject) starts->push_back({type(kObject), '{'});
  }

  void Object(const Frame& f, std::vector<int32_t>* out) {
    switch (f.state) {
      case kObjAfterOpen:
      case kObjExpectKey:
        return Push(out, {'}', '"'});
      case kObjAfterKey:
        return Push(out, {':'});
      case kObjAfterValue:
        return Push(out, {'}', ','});
      default:
        return;  // kObjInValue: the value frame is on top
    }
  }

  // A required key not yet written first, then closing the key, then any declared key.
  void Key(const Frame& f, std::vector<int32_t>* out) {
    const SchemaNode& n = g_.node(f.node);
    const std::vector<std::string>& keys = g_.KeyList(f.node);
    const bool diverged = f.state & 1;
    auto next_byte_of = [&](bool required_only) {
      for (uint32_t i = f.a; !diverged && i < f.b && i < keys.size(); ++i) {
        if ((i < 64 && ((f.c >> i) & 1)) || keys[i].size() <= f.offset) continue;
        if (required_only && !n.properties[i].required) continue;
        out->push_back(uint8_t(keys[i][f.offset]));
        return;
      }
    };
    next_byte_of(true);
    out->push_back('"');
    next_byte_of(false);
    for (int c = 'a'; c <= 'z'; ++c) out->push_back(c);  // another additional key's spelling
    Push(out, {'n', '0', 0x80, 0x90, 0xA0});             // inside an escape or a UTF-8 sequence
  }

  void Literal(const FrameStack& stack, std::vector<int32_t>* out, int depth) {
    const Frame& f = stack.back();
    const std::vector<std::string>& list = g_.literal_list(f.node);
    AfterPop(stack, static_cast<int32_t>(f.a), out, depth);
    for (uint32_t i = f.a; i < f.b; ++i) {
      if (list[i].size() > f.offset) return out->push_back(uint8_t(list[i][f.offset]));
    }
  }

  void K3Args(const Frame& f, std::vector<int32_t>* out) {
    const K3Special& sp = g_.k3_specials();
    switch (f.state) {
      case kK3Boundary:
        return Push(out, {SpecialEvent(sp.close), SpecialEvent(sp.open)});
      case kK3ArgLiteral:
        return out->push_back(uint8_t(kArgOpen[f.offset]));
      case kK3TypeLiteral:
        return out->push_back(uint8_t(kTypeAttr[f.offset]));
      case kK3TypeQuote:
        return out->push_back('"');
      case kK3Sep:
      case kK3CloseSep:
        return out->push_back(SpecialEvent(sp.sep));
      case kK3Close:
        return out->push_back(SpecialEvent(sp.close));
      case kK3CloseLiteral:
        return out->push_back(uint8_t(kArgName[f.offset]));
      default:
        return;  // a child is on top
    }
  }

  void ProgramAt(const Frame& f, std::vector<int32_t>* out, int depth) {
    if (depth > 8) return;
    const Op& op = g_.program(f.node).ops[f.a];
    const std::vector<int64_t>& dist = g_.completion_costs().program[f.node];
    auto at = [&](int32_t pc) {
      Frame jumped = f;
      jumped.a = static_cast<uint32_t>(pc);
      jumped.b = 0;
      jumped.offset = 0;
      ProgramAt(jumped, out, depth + 1);
    };
    switch (op.kind) {
      case Op::kSpecial:
        return out->push_back(SpecialEvent(op.special));
      case Op::kBytes:
        return out->push_back(uint8_t(op.bytes[f.offset]));
      case Op::kFreeText:
      case Op::kBranch: {
        std::vector<std::pair<int32_t, int32_t>> branches = op.branches;
        std::stable_sort(branches.begin(), branches.end(), [&](const auto& x, const auto& y) {
          return dist[x.second] < dist[y.second];
        });
        for (const auto& [event, target] : branches) {
          if (event == kAnyOrdinaryByte) {
            at(target);
          } else {
            out->push_back(event);
          }
        }
        return;
      }
      case Op::kJson:
        return ValueStarts(op.node, out);
      case Op::kToolName: {
        std::vector<std::string> names = g_.literal_list(op.list);
        std::stable_sort(names.begin(), names.end(),
                         [](const auto& x, const auto& y) { return x.size() < y.size(); });
        for (const std::string& name : names) out->push_back(uint8_t(name[0]));
        return;
      }
      case Op::kToolArgs: {
        const ToolSlot& tool = g_.tools()[f.c];
        if (op.k3) {
          const K3Special& sp = g_.k3_specials();
          return Push(out, {SpecialEvent(sp.close), SpecialEvent(sp.open)});
        }
        return ValueStarts(tool.args_node, out);
      }
      case Op::kDigits:
        if (int(f.b) >= op.min_digits) at(NextPc(op, f.a));
        return out->push_back('0');
      case Op::kJump:
        return at(op.next);
      case Op::kEnd:
        return out->push_back(kEventEnd);
    }
  }

  const Grammar& g_;
};

// With several stacks (anyOf alternatives), the one to follow: the cheapest value to finish, so a
// recursive alternative is not chosen over a terminal one.
size_t CheapestStack(const Grammar& g, const std::vector<FrameStack>& stacks) {
  size_t best = 0;
  int64_t best_cost = kInf + 1;
  for (size_t i = 0; i < stacks.size(); ++i) {
    const Frame& top = stacks[i].back();
    const int64_t cost = top.kind == FrameKind::kValue && top.node >= 0
                             ? g.completion_costs().node[static_cast<size_t>(top.node)]
                             : 0;
    if (cost < best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

// The most one choice can add to the way to the end: opening the costliest value (a node's cost,
// K3 argument blocks included), or taking a program branch other than the cheapest (a tool call
// instead of the end).
int64_t LargestJump(const Grammar& g, const CompletionCosts& c) {
  int64_t jump = 0;
  for (size_t i = 0; i < c.node.size(); ++i) {
    if (c.node[i] < kInf) jump = std::max(jump, c.node[i]);
    const int64_t k3 = K3ArgsCost(g, c.node, static_cast<int32_t>(i));
    if (k3 < kInf) jump = std::max(jump, k3);
  }
  for (size_t p = 0; p < c.program.size(); ++p) {
    for (const Op& op : g.program(static_cast<int32_t>(p)).ops) {
      int64_t lo = kInf, hi = 0;
      for (const auto& [event, target] : op.branches) {
        const int64_t d = c.program[p][static_cast<size_t>(target)];
        if (d >= kInf) continue;
        lo = std::min(lo, d);
        hi = std::max(hi, d);
      }
      if (hi >= lo) jump = std::max(jump, hi - lo);
    }
  }
  return jump;
}

}  // namespace

CompletionCosts ComputeCompletionCosts(const Grammar& g) {
  CompletionCosts c;
  const size_t nodes = g.graph().nodes.size();
  c.node.assign(nodes, kInf);
  // Bellman-Ford style: costs only fall, and each round settles at least one more node.
  for (size_t round = 0; round <= nodes + 1; ++round) {
    bool changed = false;
    for (size_t i = 0; i < nodes; ++i) {
      const int64_t v = NodeCost(g, c.node, static_cast<int32_t>(i));
      if (v < c.node[i]) {
        c.node[i] = v;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (size_t p = 0; p < g.program_count(); ++p) {
    const size_t ops = g.program(static_cast<int32_t>(p)).ops.size();
    c.program.emplace_back(ops, kInf);
    for (size_t round = 0; round <= ops + 1; ++round) {
      bool changed = false;
      for (size_t pc = 0; pc < ops; ++pc) {
        const int64_t v = OpCost(g, c, static_cast<int32_t>(p), pc);
        if (v < c.program[p][pc]) {
          c.program[p][pc] = v;
          changed = true;
        }
      }
      if (!changed) break;
    }
  }
  c.growth_margin = std::clamp<int64_t>(2 * LargestJump(g, c) + 16, 24, 1024);
  return c;
}

namespace {

// The greedy walk from one stack, following one stack throughout (at an anyOf, the cheapest
// alternative). Deterministic in `stack`, so after a completion's first events the walk from the
// stack they lead to is the rest of it: following a completion always gets closer to the end.
// Would the matcher split this stack into anyOf alternatives (ExpandAlternatives)?
bool NeedsExpansion(const Grammar& g, const FrameStack& stack) {
  const Frame& top = stack.back();
  if (top.kind == FrameKind::kValue) return !g.node(top.node).any_of.empty();
  if (top.kind != FrameKind::kProgram || top.state != 0) return false;
  const Op& op = g.program(top.node).ops[top.a];
  return op.kind == Op::kJson && !g.node(op.node).any_of.empty();
}

// `stack` takes `event`: the common case stepped in place on `scratch` (no allocation once warm),
// forks and anyOf splits through AdvanceAll / ExpandAlternatives, keeping the cheapest stack.
bool Take(const Grammar& g, FrameStack& stack, int32_t event, FrameStack& scratch) {
  scratch.frames.assign(stack.frames.begin(), stack.frames.end());
  int32_t unused = 0;
  const Advance adv = AdvanceStack(g, scratch, 0, event, &unused);
  if (adv == Advance::kOk && !NeedsExpansion(g, scratch)) {
    std::swap(stack, scratch);
    return true;
  }
  if (adv != Advance::kOk && adv != Advance::kFork) return false;
  std::vector<FrameStack> next{stack};
  if (!AdvanceAll(g, next, event)) return false;
  ExpandAlternatives(g, next);
  stack = std::move(next[CheapestStack(g, next)]);
  return true;
}

std::vector<int32_t> WalkOne(const Grammar& g, FrameStack stack, size_t max_events) {
  std::vector<int32_t> events;
  Preferences preferences(g);
  std::vector<int32_t> candidates;
  FrameStack scratch;
  while (events.size() < max_events) {
    scratch.frames.assign(stack.frames.begin(), stack.frames.end());
    int32_t unused = 0;
    if (AdvanceStack(g, scratch, 0, kEventEnd, &unused) == Advance::kOk) {
      events.push_back(kEventEnd);
      return events;
    }
    candidates.clear();
    preferences.Of(stack, &candidates);
    bool moved = false;
    for (int32_t e : candidates) {
      if (!Take(g, stack, e, scratch)) continue;
      events.push_back(e);
      moved = true;
      break;
    }
    if (!moved) break;
  }
  return {};
}

}  // namespace

std::vector<int32_t> ShortCompletion(const Grammar& g, std::vector<FrameStack> stacks,
                                     size_t max_events, const CompletionScore& score) {
  // The best of the walks from each stack (several only inside anyOf alternatives).
  std::vector<int32_t> best;
  size_t best_score = 0;
  for (FrameStack& stack : stacks) {
    std::vector<int32_t> events = WalkOne(g, std::move(stack), max_events);
    if (events.empty()) continue;
    const size_t v = score ? score(events) : events.size();
    if (best.empty() || v < best_score) {
      best = std::move(events);
      best_score = v;
    }
  }
  return best;
}

}  // namespace k3::structured
