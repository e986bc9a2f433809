// K3Machine: opening and closing blocks (the tag structure and the arguments JSON it builds).
#include <array>

#include "text/output/k3_machine.h"
#include "text/output/text_util.h"

namespace k3::text::output {
namespace {

constexpr std::array<std::string_view, 6> kNames = {"think", "response", "tools",
                                                    "call",  "argument", "json"};

// The K3Machine::Block value (kNames[i] is Block i + 1) of a known tag name, or -1.
int BlockIndexOf(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<int>(i) + 1;
  }
  return -1;
}

}  // namespace

void K3Machine::OpenTag(const XtmlTag& tag) {
  if (tag.name == "message") {
    // A new message header: whatever was open is over; its blocks follow.
    CloseAll();
    return;
  }
  int index = BlockIndexOf(tag.name);
  if (index < 0) {
    Push(Block::kUnknown, tag);
    return;
  }
  Block block = static_cast<Block>(index);
  for (;;) {
    Block parent = stack_.empty() ? Block::kBody : stack_.back().block;
    bool child = (parent == Block::kBody && (block == Block::kThink || block == Block::kResponse ||
                                             block == Block::kTools)) ||
                 (parent == Block::kTools && block == Block::kCall) ||
                 (parent == Block::kCall && (block == Block::kArgument || block == Block::kJson));
    if (child) {
      Push(block, tag);
      return;
    }
    if (parent == Block::kBody) {
      if (block == Block::kCall) {
        Push(Block::kTools, XtmlTag{});  // a call without its tools block
        Push(Block::kCall, tag);
      } else {
        Push(Block::kUnknown, tag);  // argument/json outside a call: ignored
      }
      return;
    }
    Pop();  // not a child here: the open tag implicitly closes the current block
  }
}

void K3Machine::CloseTag(std::string_view name) {
  if (name == "message") {
    CloseAll();
    done_ = true;
    return;
  }
  for (size_t i = stack_.size(); i-- > 0;) {
    if (stack_[i].name == name) {
      while (stack_.size() > i) Pop();
      return;
    }
  }
  // No such block is open: ignored.
}

void K3Machine::Push(Block block, const XtmlTag& tag) {
  Frame frame;
  frame.block = block;
  frame.name =
      block == Block::kUnknown ? tag.name : std::string(kNames[static_cast<int>(block) - 1]);
  if (block == Block::kCall) PushCall(&frame, tag);
  if (block == Block::kArgument) PushArgument(&frame, tag);
  if (block == Block::kJson && call_active_ && args_mode_ == ArgsMode::kNone) {
    frame.active = true;
    args_mode_ = ArgsMode::kRaw;
  }
  stack_.push_back(std::move(frame));
}

void K3Machine::PushCall(Frame* frame, const XtmlTag& tag) {
  const std::string* tool = tag.Find("tool");
  std::optional<std::string> name;
  if (tool != nullptr) name = names_.FromK3Name(*tool);
  if (!name) {
    sink_->DropCall();
    return;
  }
  sink_->BeginCall(*name);
  frame->active = true;
  call_active_ = true;
  args_mode_ = ArgsMode::kNone;
}

// A string argument streams `"KEY":"` now and its escaped text as it arrives; any other type is
// buffered until the close, where it is validated.
void K3Machine::PushArgument(Frame* frame, const XtmlTag& tag) {
  const std::string* key = tag.Find("key");
  if (!call_active_ || args_mode_ == ArgsMode::kRaw || key == nullptr) return;
  const std::string* type = tag.Find("type");
  frame->active = true;
  frame->key = *key;
  frame->is_string = type != nullptr && *type == "string";
  if (frame->is_string) sink_->Arguments(KeyPrefix(*key) + "\"");
}

std::string K3Machine::KeyPrefix(std::string_view key) {
  std::string prefix = args_mode_ == ArgsMode::kObject ? "," : "{";
  args_mode_ = ArgsMode::kObject;
  prefix += JsonQuoted(key);
  prefix += ':';
  return prefix;
}

void K3Machine::Pop() {
  Frame frame = std::move(stack_.back());
  stack_.pop_back();
  if (!frame.active) return;
  if (frame.block == Block::kArgument) {
    if (frame.is_string) {
      sink_->Arguments("\"");
      return;
    }
    std::string_view trimmed = TrimAscii(frame.value);
    std::string text = KeyPrefix(frame.key);
    text += !trimmed.empty() && IsJson(trimmed) ? std::string(trimmed) : JsonQuoted(frame.value);
    sink_->Arguments(text);
  } else if (frame.block == Block::kCall) {
    if (args_mode_ == ArgsMode::kNone) sink_->Arguments("{}");
    if (args_mode_ == ArgsMode::kObject) sink_->Arguments("}");
    sink_->EndCall(true);
    call_active_ = false;
  }
}

}  // namespace k3::text::output
