// The matcher's pushdown state: a stack of Frames, each a small POD (32 bytes) that knows how to
// take the next event — a byte of an ordinary token, a special token, or the end of output — in
// its own context only. A frame's behaviour depends on its bytes and the immutable grammar, never
// on the frames below it; that is what lets masks be cached per top frame (mask_cache.h).
//
// Step outcomes (Step may update the frame in place first): consume the event; reject it (the
// frame is then garbage: callers step copies); consume and push a child; push a child that takes
// the event (delegate); take the event again in the updated state (retry); or finish, either
// consuming the event or leaving it to the parent. A finishing frame hands the parent a result
// (e.g. which property a key named), and the parent's OnChildDone never fails.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace k3::structured {

class Grammar;

enum class FrameKind : uint8_t {
  kValue,    // about to read a value of `node`
  kObject,   // inside {...}
  kArray,    // inside [...]
  kString,   // inside "..." (a value)
  kNumber,   // inside a number
  kLiteral,  // matching one of node's enum/const texts, or true/false/null
  kKey,      // inside an object key, after its opening quote
  kProgram,  // a structural program (tool-call syntax, reasoning, end); always at the bottom
  kK3Args,   // K3 argument blocks of one call, by an object node
  kRawText,  // K3 raw string argument text (until <|close|>)
};

struct Frame {
  FrameKind kind = FrameKind::kValue;
  uint8_t state = 0;
  uint16_t offset = 0;  // bytes matched (literals, keys, program literals)
  int32_t node = 0;     // schema node, literal list or program index
  uint32_t a = 0, b = 0;
  uint64_t c = 0, d = 0;

  bool operator==(const Frame& o) const { return std::memcmp(this, &o, sizeof(Frame)) == 0; }
};
static_assert(sizeof(Frame) == 32);

// Events: bytes 0..255, the end of output, and special tokens.
inline constexpr int32_t kEventEnd = 256;
inline constexpr int32_t kSpecialBase = 1 << 20;
inline int32_t SpecialEvent(int32_t token) { return kSpecialBase + token; }
inline bool IsSpecialEvent(int32_t event) { return event >= kSpecialBase; }

enum class StepKind : uint8_t {
  kConsume,
  kReject,
  kPush,        // consume, then push `child`
  kDelegate,    // push `child`, which takes the event
  kRetry,       // the (updated) frame takes the event again
  kPopRetry,    // finished before this event: pop, the parent takes the event
  kPopConsume,  // finished with this event: pop
  kFork,        // an anyOf whose alternatives both fit: the caller splits the stack
};

struct StepResult {
  StepKind kind = StepKind::kReject;
  Frame child;
  int32_t result = 0;  // for pops: handed to the parent's OnChildDone
};

StepResult Step(const Grammar& g, Frame& frame, int32_t event);
void OnChildDone(const Grammar& g, Frame& parent, int32_t result);
// Frames whose mask may be cached: everything except numbers that carry their value for bounds.
bool IsCacheable(const Frame& frame);
// A frame for reading one value of `node`.
Frame ValueFrame(int32_t node);
// For a kFork: the anyOf alternatives of value frame `frame` that can take `event`.
std::vector<int32_t> ForkAlternatives(const Grammar& g, const Frame& frame, int32_t event);

// Outcome of feeding one event to a stack whose frames below `floor` must not be touched (the
// mask cache walks with floor = the top frame's index; the matcher uses floor 0).
enum class Advance : uint8_t { kOk, kReject, kUnderflowRetry, kUnderflowConsumed, kFork };

template <typename Stack>
Advance AdvanceStack(const Grammar& g, Stack& stack, size_t floor, int32_t event,
                     int32_t* underflow_result) {
  for (int guard = 0; guard < 256; ++guard) {
    if (stack.size() <= floor) return Advance::kReject;
    StepResult r = Step(g, stack.back(), event);
    switch (r.kind) {
      case StepKind::kConsume:
        return Advance::kOk;
      case StepKind::kReject:
        return Advance::kReject;
      case StepKind::kFork:
        return Advance::kFork;
      case StepKind::kPush:
        if (!stack.push_back(r.child)) return Advance::kReject;
        return Advance::kOk;
      case StepKind::kDelegate:
        if (!stack.push_back(r.child)) return Advance::kReject;
        continue;
      case StepKind::kRetry:
        continue;
      case StepKind::kPopRetry:
      case StepKind::kPopConsume: {
        const bool consumed = r.kind == StepKind::kPopConsume;
        stack.pop_back();
        if (stack.size() <= floor) {
          *underflow_result = r.result;
          return consumed ? Advance::kUnderflowConsumed : Advance::kUnderflowRetry;
        }
        OnChildDone(g, stack.back(), r.result);
        if (consumed) return Advance::kOk;
        continue;
      }
    }
  }
  return Advance::kReject;
}

// The matcher's stack (grows as needed; push_back reports success for AdvanceStack).
struct FrameStack {
  std::vector<Frame> frames;
  size_t size() const { return frames.size(); }
  Frame& back() { return frames.back(); }
  const Frame& back() const { return frames.back(); }
  bool push_back(const Frame& f) {
    if (frames.size() >= 4096) return false;  // nesting limit
    frames.push_back(f);
    return true;
  }
  void pop_back() { frames.pop_back(); }
  bool operator==(const FrameStack& o) const { return frames == o.frames; }
};

// A fixed-capacity stack for walking the vocabulary trie from one frame (no allocation; a token
// that nests deeper than this is checked on the full stack instead).
struct LocalStack {
  static constexpr size_t kCapacity = 12;
  Frame frames[kCapacity];
  uint8_t n = 0;
  size_t size() const { return n; }
  Frame& back() { return frames[n - 1]; }
  bool push_back(const Frame& f) {
    if (n >= kCapacity) {
      overflow = true;
      return false;
    }
    frames[n++] = f;
    return true;
  }
  void pop_back() { --n; }
  void CopyFrom(const LocalStack& o) {
    n = o.n;
    overflow = false;
    std::memcpy(frames, o.frames, sizeof(Frame) * n);
  }
  bool overflow = false;
};

}  // namespace k3::structured
