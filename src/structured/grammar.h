// Grammar: everything a Matcher needs, compiled once and shared (immutable apart from its mask
// cache, which is internally locked): the schema graph, the structural programs (tool-call
// syntax, reasoning, the end), literal lists (enum texts, tool names), the vocabulary, and the
// per-top-frame mask cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "structured/completion.h"
#include "structured/mask_cache.h"
#include "structured/schema.h"
#include "structured/vocabulary.h"

namespace k3::structured {

inline constexpr int32_t kAnyOrdinaryByte = -2;  // branch target for any ordinary byte

struct Op {
  enum Kind : uint8_t {
    kSpecial,   // exactly `special`
    kBytes,     // exactly `bytes`
    kFreeText,  // any ordinary bytes until an event listed in `branches`
    kJson,      // one JSON value of `node`
    kToolName,  // one of literal list `list` (raw bytes); the register becomes the tool index
    kToolArgs,  // the arguments of the tool in the register (JSON, or K3 blocks if `k3`)
    kDigits,    // min_digits..max_digits ASCII digits
    kBranch,    // look at the event: jump by `branches` (the target takes the event)
    kJump,      // go to `next` (which takes the event)
    kEnd,       // only the end of output
  };
  Kind kind = kEnd;
  int32_t special = -1;
  std::string bytes;
  int32_t node = -1;
  int32_t list = -1;
  bool k3 = false;
  int min_digits = 1, max_digits = 4;
  std::vector<std::pair<int32_t, int32_t>> branches;  // (event, target pc)
  int32_t next = -1;                                  // -1: pc + 1
};

struct Program {
  std::vector<Op> ops;
};

struct ToolSlot {
  std::string name;
  int32_t args_node = kAnyNode;  // JSON arguments
  int32_t k3_node = kAnyNode;    // object node for K3 argument blocks (or a non-object -> json)
};

// K3 argument blocks: per property, the type attribute values its schema allows (a literal list,
// sorted) and, per value, the node the argument's text must match.
struct K3Type {
  std::string name;           // "string", "number", "boolean", "null", "object", "array"
  int32_t node = -1;          // the property's schema restricted to this type
  bool raw_string = false;    // text is the raw string (type="string"), else JSON
  int32_t raw_literals = -1;  // raw_string with enum/const: literal list of the raw strings
};
struct K3Property {
  int32_t type_list = -1;
  std::vector<K3Type> types;  // in type_list order
};
struct K3Special {
  int32_t open = -1, close = -1, sep = -1;
};

class Grammar {
 public:
  Grammar(std::shared_ptr<const Vocabulary> vocab, SchemaGraph graph);

  const Vocabulary& vocab() const { return *vocab_; }
  const std::shared_ptr<const Vocabulary>& vocab_ptr() const { return vocab_; }
  const SchemaGraph& graph() const { return graph_; }
  SchemaGraph& mutable_graph() { return graph_; }
  const SchemaNode& node(int32_t i) const { return graph_.nodes[i]; }

  // Literal lists: sorted byte strings matched by kLiteral frames. Lists 0..2 are true/false/null.
  int32_t AddLiteralList(std::vector<std::string> sorted_unique);
  const std::vector<std::string>& literal_list(int32_t i) const { return literal_lists_[i]; }
  // The literal list of an enum/const node (built on first use by Finalize()).
  int32_t NodeLiteralList(int32_t node) const { return node_lists_[node]; }

  int32_t AddProgram(Program program);
  const Program& program(int32_t i) const { return programs_[i]; }
  size_t program_count() const { return programs_.size(); }
  int32_t main_program() const { return main_program_; }
  void set_main_program(int32_t p) { main_program_ = p; }

  std::vector<ToolSlot>& tools() { return tools_; }
  const std::vector<ToolSlot>& tools() const { return tools_; }
  // Literal index (in the tool-name list) -> tool index.
  std::vector<int32_t>& tool_of_literal() { return tool_of_literal_; }
  const std::vector<int32_t>& tool_of_literal() const { return tool_of_literal_; }

  // Tokens that end the output (the model's EOS and stop ids): allowed where the grammar may end.
  std::vector<int32_t>& end_tokens() { return end_tokens_; }
  const std::vector<int32_t>& end_tokens() const { return end_tokens_; }
  // Special tokens some program may accept (checked one by one per mask).
  const std::vector<int32_t>& relevant_specials() const { return relevant_specials_; }

  // Object keys of a node in property order (canonical spelling), for key frames.
  const std::vector<std::string>& KeyList(int32_t node) const { return key_lists_[node]; }

  K3Special& k3_specials() { return k3_specials_; }
  const K3Special& k3_specials() const { return k3_specials_; }
  // `prop` is a property index, or kAdditionalKey (0xFFFFFFFF) for the additional schema.
  const K3Property& k3_property(int32_t node, uint32_t prop) const;

  // Call after building (may add schema nodes): prepares K3 argument nodes of the tools, then
  // indexes enum nodes, keys and the specials programs mention.
  void Finalize();

  MaskCache& cache() const { return cache_; }
  // Cost bounds that order the choices of ShortCompletion (computed by Finalize).
  const CompletionCosts& completion_costs() const { return completion_costs_; }

  // Generation mode: no additional key twice in one object (see frame_json.cc). Off for exact
  // validation (a 64-bit filter could refuse a valid second key).
  bool unique_additional_keys() const { return unique_additional_keys_; }
  void set_unique_additional_keys(bool on) { unique_additional_keys_ = on; }

 private:
  std::shared_ptr<const Vocabulary> vocab_;
  SchemaGraph graph_;
  std::vector<std::vector<std::string>> literal_lists_;
  std::vector<int32_t> node_lists_;
  std::vector<Program> programs_;
  int32_t main_program_ = 0;
  std::vector<ToolSlot> tools_;
  std::vector<int32_t> tool_of_literal_;
  std::vector<int32_t> end_tokens_;
  std::vector<int32_t> relevant_specials_;
  std::vector<std::vector<std::string>> key_lists_;
  K3Special k3_specials_;
  std::vector<std::vector<K3Property>> k3_props_;  // by node; last entry = additional
  mutable MaskCache cache_;
  CompletionCosts completion_costs_;
  bool unique_additional_keys_ = false;
};

// The grammar of one JSON value of `graph`'s root followed by the end (tests, benchmarks, and
// response_format without any chat syntax around it).
std::shared_ptr<Grammar> JsonGrammar(std::shared_ptr<const Vocabulary> vocab, SchemaGraph graph,
                                     std::vector<int32_t> end_tokens);

}  // namespace k3::structured
