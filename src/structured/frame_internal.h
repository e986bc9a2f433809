// Shared between the frame implementations (not part of the library's interface).
#pragma once

#include <cstdint>
#include <vector>

#include "structured/frame.h"
#include "structured/grammar.h"
#include "structured/string_lexer.h"

namespace k3::structured {

// Pseudo nodes for frames whose behaviour does not depend on the schema (shareable cache keys).
inline constexpr int32_t kPlainStringNode = -1;
inline constexpr int32_t kPlainNumberNode = -2;
inline constexpr int32_t kPlainIntegerNode = -3;

// Literal lists every grammar has.
inline constexpr int32_t kTrueList = 0;
inline constexpr int32_t kFalseList = 1;
inline constexpr int32_t kNullList = 2;

inline constexpr uint32_t kAdditionalKey = 0xFFFFFFFFu;

inline bool IsDigit(int32_t e) { return e >= '0' && e <= '9'; }
// The program counter after `op` at `pc` (its jump target, or the next op).
inline int32_t NextPc(const Op& op, size_t pc) { return op.next >= 0 ? op.next : int32_t(pc) + 1; }
inline constexpr int32_t kAdditionalKeyResult = -1;

enum ObjectState : uint8_t {
  kObjAfterOpen,
  kObjExpectKey,
  kObjAfterKey,
  kObjInValue,
  kObjAfterValue
};
enum ArrayState : uint8_t { kArrAfterOpen, kArrInItem, kArrAfterItem };

// K3 argument blocks (kK3Args frames): where in `<|open|>argument key="K" type="T"<|sep|>VALUE
// <|close|>argument<|sep|>` the frame is.
enum K3State : uint8_t {
  kK3Boundary,    // between argument blocks
  kK3ArgLiteral,  // after <|open|>: `argument key="`
  kK3InKey,
  kK3TypeLiteral,  // ` type="`
  kK3InType,
  kK3TypeQuote,  // `"`
  kK3Sep,        // <|sep|>
  kK3InValue,
  kK3Close,         // <|close|>
  kK3CloseLiteral,  // `argument`
  kK3CloseSep,      // <|sep|>
};

inline constexpr char kArgOpen[] = "argument key=\"";
inline constexpr char kTypeAttr[] = " type=\"";  // the key frame took the closing quote
inline constexpr char kArgName[] = "argument";

// An object key frame (after the opening quote): `seen` declared properties, `filter` of the
// additional keys so far (generation mode).
Frame KeyFrame(const Grammar& g, int32_t object_node, uint64_t seen, uint64_t filter);

// For a key frame of an object that allows additional keys: true and the string lexer state it is
// in, since such a key then accepts exactly the canonical string text from that state until its
// closing quote (declared or not; which key it named matters only at the close). False for keys
// of closed objects.
bool AdditionalKeyLexer(const Grammar& g, const Frame& key, StringLexer* lexer);

StepResult StepJson(const Grammar& g, Frame& f, int32_t event);
// Strings whose characters follow a StringDfa (frame_string_dfa.cc).
struct StringDfa;
bool HasDfa(const Grammar& g, const Frame& string_frame);
const StringDfa& FrameDfa(const Grammar& g, const Frame& string_frame);
StepResult StepDfaString(const Grammar& g, Frame& f, uint8_t byte);
StepResult StepDfaRawText(const Grammar& g, Frame& f, int32_t event);
// Completion preferences of such a frame (JSON string, or raw text when `raw`).
void DfaStringPreferences(const Grammar& g, const Frame& f, bool raw, std::vector<int32_t>* out);
StepResult StepNumber(const Grammar& g, Frame& f, int32_t event);
StepResult StepProgram(const Grammar& g, Frame& f, int32_t event);
StepResult StepK3(const Grammar& g, Frame& f, int32_t event);
void OnJsonChildDone(const Grammar& g, Frame& parent, int32_t result);
void OnProgramChildDone(const Grammar& g, Frame& parent, int32_t result);
void OnK3ChildDone(const Grammar& g, Frame& parent, int32_t result);

inline StepResult MakeStep(StepKind kind, int32_t result = 0) {
  StepResult r;
  r.kind = kind;
  r.result = result;
  return r;
}
inline StepResult MakeStep(StepKind kind, const Frame& child) {
  StepResult r;
  r.kind = kind;
  r.child = child;
  return r;
}

}  // namespace k3::structured
