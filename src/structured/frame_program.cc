// Step rules of the structural frames: programs (tool-call syntax, reasoning, the end), K3
// argument blocks and K3 raw string arguments; and the dispatch over all frame kinds.
#include "structured/frame_internal.h"
#include "structured/grammar.h"

namespace k3::structured {
namespace {

void Jump(Frame& f, int32_t pc) {
  f.a = static_cast<uint32_t>(pc);
  f.b = 0;
  f.offset = 0;
}

Frame LiteralOver(const Grammar& g, int32_t list) {
  Frame f;
  f.kind = FrameKind::kLiteral;
  f.node = list;
  f.b = static_cast<uint32_t>(g.literal_list(list).size());
  return f;
}

Frame K3ArgsFrame(int32_t node) {
  Frame f;
  f.kind = FrameKind::kK3Args;
  f.node = node;
  return f;
}

// Matches op.bytes; returns true when the last byte was taken.
StepResult MatchBytes(Frame& f, const std::string& bytes, int32_t e, bool* done) {
  *done = false;
  if (e > 255 || static_cast<uint8_t>(bytes[f.offset]) != e) return MakeStep(StepKind::kReject);
  if (++f.offset == bytes.size()) *done = true;
  return MakeStep(StepKind::kConsume);
}

}  // namespace

StepResult StepProgram(const Grammar& g, Frame& f, int32_t e) {
  const Program& program = g.program(f.node);
  const Op& op = program.ops[f.a];
  switch (op.kind) {
    case Op::kSpecial:
      if (e != SpecialEvent(op.special)) return MakeStep(StepKind::kReject);
      Jump(f, NextPc(op, f.a));
      return MakeStep(StepKind::kConsume);
    case Op::kBytes: {
      bool done = false;
      StepResult r = MatchBytes(f, op.bytes, e, &done);
      if (done) Jump(f, NextPc(op, f.a));
      return r;
    }
    case Op::kFreeText:
    case Op::kBranch:
      for (const auto& [event, target] : op.branches) {
        if (event == e || (event == kAnyOrdinaryByte && e <= 255)) {
          Jump(f, target);
          return MakeStep(StepKind::kRetry);
        }
      }
      if (op.kind == Op::kFreeText && e <= 255) return MakeStep(StepKind::kConsume);
      return MakeStep(StepKind::kReject);
    case Op::kJson:
      return MakeStep(StepKind::kDelegate, ValueFrame(op.node));
    case Op::kToolName:
      return MakeStep(StepKind::kDelegate, LiteralOver(g, op.list));
    case Op::kToolArgs: {
      const ToolSlot& tool = g.tools()[f.c];
      return MakeStep(StepKind::kDelegate,
                      op.k3 ? K3ArgsFrame(tool.k3_node) : ValueFrame(tool.args_node));
    }
    case Op::kDigits:
      if (IsDigit(e) && int(f.b) < op.max_digits) {
        ++f.b;
        return MakeStep(StepKind::kConsume);
      }
      if (int(f.b) < op.min_digits) return MakeStep(StepKind::kReject);
      Jump(f, NextPc(op, f.a));
      return MakeStep(StepKind::kRetry);
    case Op::kJump:
      Jump(f, op.next);
      return MakeStep(StepKind::kRetry);
    case Op::kEnd:
      if (f.state == 0 && e == kEventEnd) {
        f.state = 1;
        return MakeStep(StepKind::kConsume);
      }
      return MakeStep(StepKind::kReject);
  }
  return MakeStep(StepKind::kReject);
}

void OnProgramChildDone(const Grammar& g, Frame& parent, int32_t result) {
  const Op& op = g.program(parent.node).ops[parent.a];
  if (op.kind == Op::kToolName) parent.c = static_cast<uint64_t>(g.tool_of_literal()[result]);
  Jump(parent, NextPc(op, parent.a));
}

StepResult StepK3(const Grammar& g, Frame& f, int32_t e) {
  const SchemaNode& n = g.node(f.node);
  const K3Special& sp = g.k3_specials();
  bool done = false;
  switch (f.state) {
    case kK3Boundary: {
      if (e == SpecialEvent(sp.open)) {
        bool room = n.additional >= 0;
        for (size_t i = 0; i < n.properties.size() && !room; ++i) room = !((f.c >> i) & 1);
        if (!room) return MakeStep(StepKind::kReject);
        f.state = kK3ArgLiteral;
        f.offset = 0;
        return MakeStep(StepKind::kConsume);
      }
      if (e != SpecialEvent(sp.close)) return MakeStep(StepKind::kReject);
      for (size_t i = 0; i < n.properties.size(); ++i) {
        if (n.properties[i].required && !((f.c >> i) & 1)) return MakeStep(StepKind::kReject);
      }
      return MakeStep(StepKind::kPopRetry);
    }
    case kK3ArgLiteral: {
      StepResult r = MatchBytes(f, kArgOpen, e, &done);
      if (!done) return r;
      f.state = kK3InKey;
      f.offset = 0;
      const Frame key = KeyFrame(g, f.node, f.c, f.d);
      return MakeStep(StepKind::kPush, key);
    }
    case kK3TypeLiteral: {
      StepResult r = MatchBytes(f, kTypeAttr, e, &done);
      if (!done) return r;
      f.state = kK3InType;
      f.offset = 0;
      return MakeStep(StepKind::kPush, LiteralOver(g, g.k3_property(f.node, f.a).type_list));
    }
    case kK3TypeQuote:
      if (e != '"') return MakeStep(StepKind::kReject);
      f.state = kK3Sep;
      return MakeStep(StepKind::kConsume);
    case kK3Sep: {
      if (e != SpecialEvent(sp.sep)) return MakeStep(StepKind::kReject);
      const K3Property& prop = g.k3_property(f.node, f.a);
      const K3Type& type = prop.types[f.b];
      f.state = kK3InValue;
      Frame child;
      if (type.raw_string) {
        if (type.raw_literals >= 0) {
          child = LiteralOver(g, type.raw_literals);
        } else {
          child.kind = FrameKind::kRawText;
          child.node = type.node;
          if (HasDfa(g, child)) child.b = static_cast<uint32_t>(FrameDfa(g, child).start);
        }
      } else {
        child = ValueFrame(type.node);
      }
      return MakeStep(StepKind::kPush, child);
    }
    case kK3Close:
      if (e != SpecialEvent(sp.close)) return MakeStep(StepKind::kReject);
      f.state = kK3CloseLiteral;
      f.offset = 0;
      return MakeStep(StepKind::kConsume);
    case kK3CloseLiteral: {
      StepResult r = MatchBytes(f, kArgName, e, &done);
      if (done) {
        f.state = kK3CloseSep;
        f.offset = 0;
      }
      return r;
    }
    case kK3CloseSep:
      if (e != SpecialEvent(sp.sep)) return MakeStep(StepKind::kReject);
      f.state = kK3Boundary;
      f.a = f.b = 0;
      return MakeStep(StepKind::kConsume);
    default:
      return MakeStep(StepKind::kReject);
  }
}

void OnK3ChildDone(const Grammar& g, Frame& parent, int32_t result) {
  (void)g;
  if (parent.state == kK3InKey) {
    parent.a = result < 0 ? kAdditionalKey : static_cast<uint32_t>(result);
    if (parent.a != kAdditionalKey) parent.c |= uint64_t{1} << parent.a;
    if (result <= -2) parent.d |= uint64_t{1} << (-2 - result);  // the additional-key filter
    parent.state = kK3TypeLiteral;
    parent.offset = 0;
  } else if (parent.state == kK3InType) {
    parent.b = static_cast<uint32_t>(result);
    parent.state = kK3TypeQuote;
  } else if (parent.state == kK3InValue) {
    parent.state = kK3Close;
  }
}

// Raw text of a K3 string argument: ordinary bytes (UTF-8 lead bytes counted as characters for
// min/maxLength) until a special token, which the parent takes.
StepResult StepRawText(const Grammar& g, Frame& f, int32_t e) {
  if (HasDfa(g, f)) return StepDfaRawText(g, f, e);
  int64_t min_length = 0, max_length = -1;
  if (f.node >= 0) {
    min_length = g.node(f.node).min_length;
    max_length = g.node(f.node).max_length;
  }
  if (e > 255) {
    if (f.c != 0 || static_cast<int64_t>(f.a) < min_length) return MakeStep(StepKind::kReject);
    return MakeStep(StepKind::kPopRetry);
  }
  const auto c = static_cast<uint8_t>(e);
  if (f.c > 0) {  // inside a UTF-8 sequence: the next byte must be in [lo, hi] (f.d)
    if (c < (f.d & 0xFF) || c > (f.d >> 8)) return MakeStep(StepKind::kReject);
    --f.c;
    f.d = f.c > 0 ? (0x80 | 0xBF << 8) : 0;
    return MakeStep(StepKind::kConsume);
  }
  if (max_length >= 0 && static_cast<int64_t>(f.a) >= max_length)
    return MakeStep(StepKind::kReject);
  // Well-formed UTF-8 only (no overlongs, surrogates or code points past U+10FFFF): the parser
  // would turn anything else into U+FFFD, changing the text and its length.
  uint64_t lo = 0x80, hi = 0xBF;
  if (c < 0x80) {
    f.c = 0;
  } else if (c >= 0xC2 && c <= 0xDF) {
    f.c = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    f.c = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    f.c = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return MakeStep(StepKind::kReject);
  }
  f.d = f.c > 0 ? (lo | hi << 8) : 0;
  if (max_length >= 0 || min_length > 0) ++f.a;
  return MakeStep(StepKind::kConsume);
}

StepResult Step(const Grammar& g, Frame& frame, int32_t event) {
  switch (frame.kind) {
    case FrameKind::kProgram:
      return StepProgram(g, frame, event);
    case FrameKind::kK3Args:
      return StepK3(g, frame, event);
    case FrameKind::kRawText:
      return StepRawText(g, frame, event);
    default:
      return StepJson(g, frame, event);
  }
}

void OnChildDone(const Grammar& g, Frame& parent, int32_t result) {
  switch (parent.kind) {
    case FrameKind::kProgram:
      return OnProgramChildDone(g, parent, result);
    case FrameKind::kK3Args:
      return OnK3ChildDone(g, parent, result);
    default:
      return OnJsonChildDone(g, parent, result);
  }
}

}  // namespace k3::structured
