// The greedy completion walk (ShortCompletion): which events finish a frame soonest
// (Preferences), which anyOf alternative to follow, and the walk itself. Costs come from
// completion.cc (ComputeCompletionCosts).
#include <algorithm>
#include <string>

#include "structured/completion.h"
#include "structured/completion_internal.h"
#include "structured/frame_internal.h"
#include "structured/grammar.h"
#include "structured/mask_walk.h"

namespace k3::structured {
namespace {

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
    auto type = [&](uint8_t bits) { return CompletionTypeCost(g_, cost, node, bits); };
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
  int64_t best_cost = kCompletionInf + 1;
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
