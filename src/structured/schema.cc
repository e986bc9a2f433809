#include "structured/schema.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "structured/schema_compiler.h"
#include "structured/schema_prune.h"

namespace k3::structured {
namespace {

uint8_t LiteralTextType(const std::string& text) {
  switch (text[0]) {
    case '{':
      return kObject;
    case '[':
      return kArray;
    case '"':
      return kString;
    case 't':
    case 'f':
      return kBoolean;
    case 'n':
      return kNull;
    default:
      return text.find_first_of(".eE") == std::string::npos ? kInteger | kNumber : kNumber;
  }
}

}  // namespace

std::string CanonicalJsonString(std::string_view utf8) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(utf8.size());
  for (unsigned char c : utf8) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string CanonicalJson(const nlohmann::json& value) { return value.dump(); }

bool HasNonCanonicalKey(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    size_t j = i + 1;
    bool escaped_u = false;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] != '\\') continue;
      if (j + 5 < text.size() && text[j + 1] == 'u' && text.compare(j + 2, 3, "000") != 0 &&
          text.compare(j + 2, 3, "001") != 0) {
        escaped_u = true;
      }
      ++j;
    }
    if (escaped_u && j + 1 < text.size() && text[j + 1] == ':') return true;
    i = j;
  }
  return false;
}

base::Result<SchemaGraph> CompileSchema(const nlohmann::json& schema,
                                        const SchemaOptions& options) {
  SchemaGraph graph;
  graph.nodes.emplace_back();  // kAnyNode
  K3_ASSIGN_OR_RETURN(graph.root, CompileInto(schema, &graph, options));
  K3_RETURN_IF_ERROR(PruneUnproductive(&graph));
  return graph;
}

SchemaGraph AnyObjectGraph() {
  SchemaGraph graph;
  graph.nodes.emplace_back();
  graph.nodes.emplace_back();
  graph.nodes[1].types = kObject;
  graph.root = 1;
  return graph;
}

base::Result<int32_t> AddSchema(const nlohmann::json& schema, SchemaGraph* graph,
                                const SchemaOptions& options) {
  if (graph->nodes.empty()) graph->nodes.emplace_back();
  K3_ASSIGN_OR_RETURN(int32_t node, CompileInto(schema, graph, options));
  const int32_t saved_root = graph->root;
  graph->root = node;
  base::Status status = PruneUnproductive(graph);
  graph->root = saved_root;
  K3_RETURN_IF_ERROR(status);
  return node;
}

int32_t RestrictTypes(SchemaGraph* graph, int32_t node, uint8_t types) {
  SchemaNode copy = graph->nodes[node];
  if (!copy.any_of.empty()) {
    std::vector<int32_t> alts;
    for (int32_t alt : copy.any_of) {
      const int32_t restricted = RestrictTypes(graph, alt, types);
      if (restricted >= 0) alts.push_back(restricted);
    }
    if (alts.empty()) return -1;
    copy.any_of = std::move(alts);
  } else if (copy.has_literals) {
    std::erase_if(copy.literals,
                  [&](const std::string& t) { return !(LiteralTextType(t) & types); });
    if (copy.literals.empty()) return -1;
  } else {
    copy.types &= types;
    if (copy.types == 0) return -1;
    if (copy.types == graph->nodes[node].types) return node;
  }
  graph->nodes.push_back(std::move(copy));
  return static_cast<int32_t>(graph->nodes.size() - 1);
}

}  // namespace k3::structured
