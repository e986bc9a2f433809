#include "structured/output_grammar.h"

#include <algorithm>

namespace k3::structured {
namespace {

// Builds a program with forward references: Label() reserves a pc to be bound later.
class ProgramBuilder {
 public:
  int32_t pc() const { return static_cast<int32_t>(ops_.size()); }
  void Special(int32_t id) {
    Push(Op::kSpecial, [&](Op& op) { op.special = id; });
  }
  void Bytes(std::string bytes) {
    Push(Op::kBytes, [&](Op& op) { op.bytes = std::move(bytes); });
  }
  void Json(int32_t node) {
    Push(Op::kJson, [&](Op& op) { op.node = node; });
  }
  void ToolName(int32_t list) {
    Push(Op::kToolName, [&](Op& op) { op.list = list; });
  }
  void ToolArgs(bool k3) {
    Push(Op::kToolArgs, [&](Op& op) { op.k3 = k3; });
  }
  void Digits() {
    Push(Op::kDigits, [](Op& op) { op.min_digits = 1, op.max_digits = 3; });
  }
  void End() {
    Push(Op::kEnd, [](Op&) {});
  }
  // Branch / free text whose targets are labels, resolved by Finish().
  void Branch(Op::Kind kind, std::vector<std::pair<int32_t, int>> event_labels) {
    Push(kind, [](Op&) {});
    pending_.push_back({pc() - 1, std::move(event_labels)});
  }
  void Jump(int label) { Branch(Op::kJump, {{kAnyEvent, label}}); }
  int NewLabel() {
    labels_.push_back(-1);
    return static_cast<int>(labels_.size() - 1);
  }
  void Bind(int label) { labels_[label] = pc(); }

  Program Finish() {
    for (const auto& [op_pc, events] : pending_) {
      for (const auto& [event, label] : events) {
        if (event == kAnyEvent) {
          ops_[op_pc].next = labels_[label];  // kJump
          continue;
        }
        ops_[op_pc].branches.emplace_back(event, labels_[label]);
      }
    }
    return Program{std::move(ops_)};
  }

  static constexpr int32_t kAnyEvent = -3;

 private:
  template <typename Fn>
  void Push(Op::Kind kind, Fn fill) {
    Op op;
    op.kind = kind;
    fill(op);
    ops_.push_back(std::move(op));
  }
  std::vector<Op> ops_;
  std::vector<int32_t> labels_;
  std::vector<std::pair<int32_t, std::vector<std::pair<int32_t, int>>>> pending_;
};

struct Specials {
  int32_t think = -1, think_end = -1;  // K2
  int32_t section_begin = -1, section_end = -1, call_begin = -1, arg_begin = -1, call_end = -1;
  int32_t open = -1, close = -1, sep = -1;  // K3
};

base::Result<int32_t> Need(const Vocabulary& vocab, const char* name) {
  const int32_t id = vocab.SpecialId(name);
  if (id < 0) {
    return base::Unimplemented(std::string("the tokenizer has no special token ") + name);
  }
  return id;
}

base::Result<Specials> FindSpecials(const Vocabulary& vocab, ChatSyntax syntax) {
  Specials s;
  if (syntax == ChatSyntax::kK2) {
    K3_ASSIGN_OR_RETURN(s.think, Need(vocab, "<think>"));
    K3_ASSIGN_OR_RETURN(s.think_end, Need(vocab, "</think>"));
    K3_ASSIGN_OR_RETURN(s.section_begin, Need(vocab, "<|tool_calls_section_begin|>"));
    K3_ASSIGN_OR_RETURN(s.section_end, Need(vocab, "<|tool_calls_section_end|>"));
    K3_ASSIGN_OR_RETURN(s.call_begin, Need(vocab, "<|tool_call_begin|>"));
    K3_ASSIGN_OR_RETURN(s.arg_begin, Need(vocab, "<|tool_call_argument_begin|>"));
    K3_ASSIGN_OR_RETURN(s.call_end, Need(vocab, "<|tool_call_end|>"));
  } else if (syntax == ChatSyntax::kK3) {
    K3_ASSIGN_OR_RETURN(s.open, Need(vocab, "<|open|>"));
    K3_ASSIGN_OR_RETURN(s.close, Need(vocab, "<|close|>"));
    K3_ASSIGN_OR_RETURN(s.sep, Need(vocab, "<|sep|>"));
  }
  return s;
}

// Schema nodes of the content and of each tool's arguments, all in one graph.
struct Nodes {
  int32_t content = -1;
  int32_t any_object = -1;
};

base::Status AddNodes(const OutputGrammarSpec& spec, SchemaGraph* graph, Grammar* grammar,
                      Nodes* nodes) {
  graph->nodes.emplace_back();
  graph->nodes.back().types = kObject;
  nodes->any_object = static_cast<int32_t>(graph->nodes.size() - 1);
  if (spec.content == ContentMode::kJsonObject) nodes->content = nodes->any_object;
  if (spec.content == ContentMode::kJsonSchema) {
    auto node = AddSchema(spec.schema, graph, {.closed_objects = spec.closed_objects});
    if (!node.ok())
      return base::InvalidArgument("response_format.json_schema.schema: " +
                                   node.status().message());
    nodes->content = *node;
  }
  for (size_t i = 0; i < spec.tools.size(); ++i) {
    const ToolSpec& tool = spec.tools[i];
    if (spec.tool_mode == ToolMode::kNamed && tool.name != spec.named_tool) continue;
    ToolSlot slot;
    slot.name = tool.name;
    slot.args_node = nodes->any_object;
    // A forced call (required / named) follows the tool's schema even when the tool is not
    // strict (as vLLM does for required); a non-strict schema we cannot enforce then falls back to
    // any object instead of failing the request. Non-strict tools in auto mode stay unconstrained.
    const bool forced = spec.tool_mode == ToolMode::kRequired || spec.tool_mode == ToolMode::kNamed;
    if ((tool.strict || forced) && !tool.parameters.is_null()) {
      auto node = AddSchema(tool.parameters, graph, {.closed_objects = spec.closed_objects});
      if (!node.ok() && !tool.strict) node = nodes->any_object;
      if (!node.ok()) {
        return base::InvalidArgument("tools[" + std::to_string(i) +
                                     "].function.parameters: " + node.status().message());
      }
      slot.args_node = *node;
    }
    const SchemaNode& args = graph->nodes[slot.args_node];
    // K3 writes object arguments as argument blocks; other roots get the any-object blocks.
    slot.k3_node =
        args.any_of.empty() && args.types == kObject ? slot.args_node : nodes->any_object;
    grammar->tools().push_back(slot);
  }
  return base::Status::Ok();
}

int32_t ToolNameList(Grammar* g) {
  std::vector<std::pair<std::string, int32_t>> names;
  for (size_t i = 0; i < g->tools().size(); ++i) {
    names.emplace_back(g->tools()[i].name, static_cast<int32_t>(i));
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> list;
  for (const auto& [name, index] : names) {
    list.push_back(name);
    g->tool_of_literal().push_back(index);
  }
  return g->AddLiteralList(std::move(list));
}

void BuildK2(const OutputGrammarSpec& spec, const Specials& s, const Nodes& nodes, int32_t names,
             ProgramBuilder& b) {
  const bool tools = spec.tool_mode != ToolMode::kNone;
  const bool forced = spec.tool_mode == ToolMode::kRequired || spec.tool_mode == ToolMode::kNamed;
  const int content = b.NewLabel(), section = b.NewLabel(), end = b.NewLabel();
  const int think_open = b.NewLabel(), think_close = b.NewLabel();
  // Reasoning (never constrained); a tool section also ends it implicitly.
  std::vector<std::pair<int32_t, int>> reasoning_exits = {{SpecialEvent(s.think_end), think_close}};
  if (tools) reasoning_exits.emplace_back(SpecialEvent(s.section_begin), section);
  if (spec.thinking && spec.starts_in_reasoning) {
    b.Branch(Op::kFreeText, reasoning_exits);
  } else if (spec.thinking) {
    std::vector<std::pair<int32_t, int>> first = {{SpecialEvent(s.think), think_open},
                                                  {kAnyOrdinaryByte, content}};
    if (tools) first.emplace_back(SpecialEvent(s.section_begin), section);
    if (!forced && nodes.content < 0) first.emplace_back(kEventEnd, end);
    b.Branch(Op::kBranch, first);
    b.Bind(think_open);
    b.Special(s.think);
    b.Branch(Op::kFreeText, reasoning_exits);
  }
  b.Bind(think_close);
  if (spec.thinking) b.Special(s.think_end);
  b.Bind(content);
  if (forced) {
    b.Jump(section);
  } else if (nodes.content >= 0) {
    const int json = b.NewLabel();
    if (tools)
      b.Branch(Op::kBranch, {{SpecialEvent(s.section_begin), section}, {kAnyOrdinaryByte, json}});
    b.Bind(json);
    b.Json(nodes.content);
    b.Jump(end);
  } else {
    std::vector<std::pair<int32_t, int>> exits = {{kEventEnd, end}};
    if (tools) exits.emplace_back(SpecialEvent(s.section_begin), section);
    b.Branch(Op::kFreeText, exits);
  }
  b.Bind(section);
  if (tools) {
    const int call = b.NewLabel(), section_end = b.NewLabel();
    b.Special(s.section_begin);
    b.Bind(call);
    b.Special(s.call_begin);
    b.Bytes("functions.");
    b.ToolName(names);
    b.Bytes(":");
    b.Digits();
    b.Special(s.arg_begin);
    b.ToolArgs(false);
    b.Special(s.call_end);
    if (spec.parallel_tool_calls && spec.tool_mode != ToolMode::kNamed) {
      b.Branch(Op::kBranch,
               {{SpecialEvent(s.call_begin), call}, {SpecialEvent(s.section_end), section_end}});
    }
    b.Bind(section_end);
    b.Special(s.section_end);
  }
  b.Bind(end);
  b.End();
}

void BuildK3(const OutputGrammarSpec& spec, const Specials& s, const Nodes& nodes, int32_t names,
             ProgramBuilder& b) {
  const bool tools = spec.tool_mode != ToolMode::kNone;
  const bool forced = spec.tool_mode == ToolMode::kRequired || spec.tool_mode == ToolMode::kNamed;
  const int after_response = b.NewLabel(), tools_open = b.NewLabel(), message_close = b.NewLabel();
  if (spec.thinking && spec.starts_in_reasoning) {  // inside <|open|>think<|sep|>
    const int think_close = b.NewLabel();
    b.Branch(Op::kFreeText, {{SpecialEvent(s.close), think_close}});
    b.Bind(think_close);
    b.Special(s.close);
    b.Bytes("think");
    b.Special(s.sep);
    b.Special(s.open);
    b.Bytes("response");
    b.Special(s.sep);
  }
  // Inside the response block.
  if (nodes.content >= 0 && !forced) {
    b.Json(nodes.content);
  } else if (!forced) {
    const int response_close = b.NewLabel();
    b.Branch(Op::kFreeText, {{SpecialEvent(s.close), response_close}});
    b.Bind(response_close);
  }
  b.Special(s.close);
  b.Bytes("response");
  b.Special(s.sep);
  b.Bind(after_response);
  if (forced) {
    b.Jump(tools_open);
  } else if (tools) {
    b.Branch(Op::kBranch,
             {{SpecialEvent(s.open), tools_open}, {SpecialEvent(s.close), message_close}});
  } else {
    b.Jump(message_close);
  }
  b.Bind(tools_open);
  if (tools) {
    const int call = b.NewLabel(), tools_close = b.NewLabel();
    b.Special(s.open);
    b.Bytes("tools");
    b.Special(s.sep);
    b.Bind(call);
    b.Special(s.open);
    b.Bytes("call tool=\"");
    b.ToolName(names);
    b.Bytes("\" index=\"");
    b.Digits();
    b.Bytes("\"");
    b.Special(s.sep);
    b.ToolArgs(true);
    b.Special(s.close);
    b.Bytes("call");
    b.Special(s.sep);
    if (spec.parallel_tool_calls && spec.tool_mode != ToolMode::kNamed) {
      b.Branch(Op::kBranch, {{SpecialEvent(s.open), call}, {SpecialEvent(s.close), tools_close}});
    }
    b.Bind(tools_close);
    b.Special(s.close);
    b.Bytes("tools");
    b.Special(s.sep);
  }
  b.Bind(message_close);
  b.Special(s.close);
  b.Bytes("message");
  b.Special(s.sep);
  b.End();
}

}  // namespace

base::Result<std::shared_ptr<Grammar>> BuildOutputGrammar(std::shared_ptr<const Vocabulary> vocab,
                                                          const OutputGrammarSpec& spec) {
  K3_ASSIGN_OR_RETURN(Specials specials, FindSpecials(*vocab, spec.syntax));
  SchemaGraph graph;
  graph.nodes.emplace_back();
  auto grammar = std::make_shared<Grammar>(vocab, SchemaGraph{});
  Nodes nodes;
  K3_RETURN_IF_ERROR(AddNodes(spec, &graph, grammar.get(), &nodes));
  if (spec.tool_mode == ToolMode::kNamed && grammar->tools().empty()) {
    return base::InvalidArgument("tool_choice names a function that is not in tools");
  }
  if ((spec.tool_mode == ToolMode::kRequired) && grammar->tools().empty()) {
    return base::InvalidArgument("tool_choice \"required\" needs at least one tool");
  }
  grammar->mutable_graph() = std::move(graph);
  const int32_t names = ToolNameList(grammar.get());
  ProgramBuilder b;
  if (spec.syntax == ChatSyntax::kK3) {
    grammar->k3_specials() = {specials.open, specials.close, specials.sep};
    BuildK3(spec, specials, nodes, names, b);
  } else if (spec.syntax == ChatSyntax::kK2) {
    BuildK2(spec, specials, nodes, names, b);
  } else {
    const int end = b.NewLabel();
    if (nodes.content >= 0) {
      b.Json(nodes.content);
    } else {
      b.Branch(Op::kFreeText, {{kEventEnd, end}});
    }
    b.Bind(end);
    b.End();
  }
  grammar->set_main_program(grammar->AddProgram(b.Finish()));
  grammar->end_tokens() = spec.end_tokens;
  grammar->set_unique_additional_keys(spec.closed_objects);
  grammar->Finalize();
  return grammar;
}

}  // namespace k3::structured
