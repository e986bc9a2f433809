#include "structured/schema_prune.h"

#include <cmath>
#include <vector>

namespace k3::structured {
namespace {

// The closed integer range a node's bounds allow (as long doubles: exact up to 2^64).
bool IntegerRangeNonEmpty(const SchemaNode& n) {
  long double lo = -1e30L, hi = 1e30L;
  if (n.has_min)
    lo = n.exclusive_min ? std::floor((long double)n.minimum) + 1
                         : std::ceil((long double)n.minimum);
  if (n.has_max)
    hi = n.exclusive_max ? std::ceil((long double)n.maximum) - 1
                         : std::floor((long double)n.maximum);
  return lo <= hi;
}

bool NumberRangeNonEmpty(const SchemaNode& n) {
  if (!n.has_min || !n.has_max) return true;
  if (n.minimum < n.maximum) return true;
  return n.minimum == n.maximum && !n.exclusive_min && !n.exclusive_max;
}

// The type bits of `node` that have a finite instance, given which nodes are known productive.
uint8_t ProductiveTypes(const SchemaGraph& g, const SchemaNode& n, const std::vector<char>& prod) {
  uint8_t out = 0;
  if (n.types & kString) {
    const bool dfa_ok = n.string_dfa < 0 || g.dfas[n.string_dfa].start >= 0;
    if ((n.max_length < 0 || n.min_length <= n.max_length) && dfa_ok) out |= kString;
  }
  if (n.types & kNumber) {
    if (NumberRangeNonEmpty(n)) out |= kNumber | kInteger;
  } else if (n.types & kInteger) {
    if (IntegerRangeNonEmpty(n)) out |= kInteger;
  }
  out |= n.types & (kBoolean | kNull);
  if (n.types & kArray) {
    const bool sizes = n.max_items < 0 || n.min_items <= n.max_items;
    bool items_ok = true;  // the first min_items items can be written
    for (int64_t i = 0; items_ok && i < n.min_items; ++i) {
      items_ok = prod[n.ItemNode(i)];
      if (i >= static_cast<int64_t>(n.prefix_items.size())) break;  // the rest share `items`
    }
    if (sizes && items_ok) out |= kArray;
  }
  if (n.types & kObject) {
    bool ok = true;
    int64_t possible = 0;  // declared keys that can be written
    for (const Property& p : n.properties) {
      ok = ok && (!p.required || prod[p.node]);
      possible += p.required || prod[p.node];
    }
    const bool open = n.additional >= 0 && prod[n.additional];
    if (n.max_properties >= 0) {
      ok = ok && n.required_count <= n.max_properties && n.min_properties <= n.max_properties;
    }
    ok = ok && (open || n.min_properties <= possible);
    if (ok) out |= kObject;
  }
  return out;
}

bool NodeProductive(const SchemaGraph& g, const SchemaNode& n, const std::vector<char>& prod) {
  if (n.has_literals) return !n.literals.empty();
  if (!n.any_of.empty() || n.types == 0) {
    for (int32_t alt : n.any_of) {
      if (prod[alt]) return true;
    }
    return false;
  }
  return ProductiveTypes(g, n, prod) != 0;
}

}  // namespace

base::Status PruneUnproductive(SchemaGraph* graph) {
  SchemaGraph& g = *graph;
  std::vector<char> prod(g.nodes.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (!prod[i] && NodeProductive(g, g.nodes[i], prod)) prod[i] = changed = true;
    }
  }
  for (SchemaNode& n : g.nodes) {
    if (n.has_literals) continue;
    std::erase_if(n.any_of, [&](int32_t alt) { return !prod[alt]; });
    if (!n.any_of.empty()) continue;
    n.types = ProductiveTypes(g, n, prod);
    std::erase_if(n.properties, [&](const Property& p) { return !p.required && !prod[p.node]; });
    n.required_count = 0;
    for (const Property& p : n.properties) n.required_count += p.required;
    if (n.additional >= 0 && !prod[n.additional]) n.additional = -1;
    // The first item that cannot be written caps the length.
    for (size_t i = 0; i <= n.prefix_items.size(); ++i) {
      if (prod[n.ItemNode(static_cast<int64_t>(i))]) {
        if (i == n.prefix_items.size()) break;
        continue;
      }
      const auto cap = static_cast<int64_t>(i);
      if (n.max_items < 0 || n.max_items > cap) n.max_items = cap;
      break;
    }
  }
  if (!prod[g.root]) return base::InvalidArgument("schema has no finite instance");
  // maxProperties: a twin without additional keys for when only required keys may follow.
  const size_t count = g.nodes.size();
  for (size_t i = 0; i < count; ++i) {
    SchemaNode& n = g.nodes[i];
    if (n.max_properties < 0 || n.closed_twin >= 0) continue;
    if (n.additional < 0) {
      n.closed_twin = static_cast<int32_t>(i);
      continue;
    }
    SchemaNode twin = n;
    twin.additional = -1;
    twin.closed_twin = static_cast<int32_t>(g.nodes.size());
    g.nodes[i].closed_twin = twin.closed_twin;
    g.nodes.push_back(std::move(twin));
  }
  return base::Status::Ok();
}

}  // namespace k3::structured
