#include "structured/grammar.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "base/check.h"
#include "structured/frame_internal.h"

namespace k3::structured {
namespace {

std::vector<K3Type> K3TypesOf(SchemaGraph* graph, int32_t node) {
  struct Kind {
    const char* name;
    uint8_t bits;
  };
  static const Kind kKinds[] = {{"array", kArray},   {"boolean", kBoolean},
                                {"null", kNull},     {"number", kInteger | kNumber},
                                {"object", kObject}, {"string", kString}};
  std::vector<K3Type> out;
  for (const Kind& kind : kKinds) {  // alphabetical: the literal list's order
    const int32_t restricted = RestrictTypes(graph, node, kind.bits);
    if (restricted < 0) continue;
    K3Type type;
    type.name = kind.name;
    type.node = restricted;
    type.raw_string = kind.bits == kString;
    out.push_back(type);
  }
  return out;
}

}  // namespace

Grammar::Grammar(std::shared_ptr<const Vocabulary> vocab, SchemaGraph graph)
    : vocab_(std::move(vocab)), graph_(std::move(graph)) {
  AddLiteralList({"true"});
  AddLiteralList({"false"});
  AddLiteralList({"null"});
}

int32_t Grammar::AddLiteralList(std::vector<std::string> sorted_unique) {
  literal_lists_.push_back(std::move(sorted_unique));
  return static_cast<int32_t>(literal_lists_.size() - 1);
}

int32_t Grammar::AddProgram(Program program) {
  programs_.push_back(std::move(program));
  return static_cast<int32_t>(programs_.size() - 1);
}

const K3Property& Grammar::k3_property(int32_t node, uint32_t prop) const {
  const std::vector<K3Property>& props = k3_props_[node];
  return prop == kAdditionalKey ? props.back() : props[prop];
}

void Grammar::Finalize() {
  // K3 argument nodes first: they add restricted nodes to the graph.
  std::vector<std::pair<int32_t, std::vector<std::vector<K3Type>>>> k3_nodes;
  for (const ToolSlot& tool : tools_) {
    if (tool.k3_node < 0 || graph_.nodes[tool.k3_node].types != kObject) continue;
    std::vector<std::vector<K3Type>> per_prop;
    const size_t props = graph_.nodes[tool.k3_node].properties.size();
    for (size_t i = 0; i <= props; ++i) {
      const SchemaNode& n = graph_.nodes[tool.k3_node];
      const int32_t child = i < props ? n.properties[i].node : n.additional;
      per_prop.push_back(child >= 0 ? K3TypesOf(&graph_, child) : std::vector<K3Type>{});
    }
    k3_nodes.emplace_back(tool.k3_node, std::move(per_prop));
  }
  node_lists_.assign(graph_.nodes.size(), -1);
  key_lists_.assign(graph_.nodes.size(), {});
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const SchemaNode& n = graph_.nodes[i];
    if (n.has_literals) node_lists_[i] = AddLiteralList(n.literals);
    for (const Property& p : n.properties) key_lists_[i].push_back(p.key);
  }
  k3_props_.assign(graph_.nodes.size(), {});
  for (auto& [node, per_prop] : k3_nodes) {
    for (std::vector<K3Type>& types : per_prop) {
      K3Property prop;
      std::vector<std::string> names;
      for (K3Type& type : types) {
        names.push_back(type.name);
        const SchemaNode& tn = graph_.nodes[type.node];
        if (type.raw_string && tn.has_literals) {
          std::set<std::string> raw;
          for (const std::string& text : tn.literals) {
            raw.insert(nlohmann::json::parse(text).get<std::string>());
          }
          raw.erase("");  // an empty literal cannot be told apart from no text; dropped
          if (!raw.empty()) type.raw_literals = AddLiteralList({raw.begin(), raw.end()});
        }
      }
      prop.type_list = AddLiteralList(std::move(names));
      prop.types = std::move(types);
      k3_props_[node].push_back(std::move(prop));
    }
  }
  std::set<int32_t> specials;
  for (const Program& p : programs_) {
    for (const Op& op : p.ops) {
      if (op.kind == Op::kSpecial) specials.insert(op.special);
      for (const auto& [event, target] : op.branches) {
        if (IsSpecialEvent(event)) specials.insert(event - kSpecialBase);
      }
    }
  }
  for (int32_t s : {k3_specials_.open, k3_specials_.close, k3_specials_.sep}) {
    if (s >= 0) specials.insert(s);
  }
  relevant_specials_.assign(specials.begin(), specials.end());
  completion_costs_ = ComputeCompletionCosts(*this);
}

std::shared_ptr<Grammar> JsonGrammar(std::shared_ptr<const Vocabulary> vocab, SchemaGraph graph,
                                     std::vector<int32_t> end_tokens) {
  const int32_t root = graph.root;
  auto g = std::make_shared<Grammar>(std::move(vocab), std::move(graph));
  Program p;
  Op json;
  json.kind = Op::kJson;
  json.node = root;
  p.ops.push_back(json);
  p.ops.push_back(Op{});  // kEnd
  g->set_main_program(g->AddProgram(std::move(p)));
  g->end_tokens() = std::move(end_tokens);
  g->Finalize();
  return g;
}

}  // namespace k3::structured
