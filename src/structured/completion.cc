#include "structured/completion.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "structured/completion_internal.h"
#include "structured/frame_internal.h"
#include "structured/grammar.h"
#include "structured/mask_walk.h"

namespace k3::structured {
namespace {

constexpr int64_t kInf = kCompletionInf;

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

int64_t CompletionTypeCost(const Grammar& g, const std::vector<int64_t>& cost, int32_t node,
                           uint8_t type) {
  return TypeCost(g, cost, node, type);
}

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

}  // namespace k3::structured
