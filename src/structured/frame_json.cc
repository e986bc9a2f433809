// Step rules of the JSON frames (value, object, key, array, string, number, literal).
// Compact JSON only: no whitespace between tokens.
#include <algorithm>
#include <cmath>

#include "structured/frame.h"
#include "structured/frame_internal.h"
#include "structured/grammar.h"
#include "structured/string_lexer.h"

namespace k3::structured {
namespace {

StepResult Result(StepKind kind, int32_t result = 0) {
  StepResult r;
  r.kind = kind;
  r.result = result;
  return r;
}

StepResult WithChild(StepKind kind, const Frame& child) {
  StepResult r;
  r.kind = kind;
  r.child = child;
  return r;
}

// Can a value of `node` start with byte c? (Used to pick anyOf alternatives.)
bool CanStartWith(const Grammar& g, int32_t node, uint8_t c, int depth = 0) {
  const SchemaNode& n = g.node(node);
  if (!n.any_of.empty()) {
    if (depth > 32) return true;
    for (int32_t alt : n.any_of) {
      if (CanStartWith(g, alt, c, depth + 1)) return true;
    }
    return false;
  }
  if (n.has_literals) {
    for (const std::string& t : n.literals) {
      if (static_cast<uint8_t>(t[0]) == c) return true;
    }
    return false;
  }
  switch (c) {
    case '{':
      return n.types & kObject;
    case '[':
      return n.types & kArray;
    case '"':
      return n.types & kString;
    case 't':
    case 'f':
      return n.types & kBoolean;
    case 'n':
      return n.types & kNull;
    default:
      return (c == '-' || IsDigit(c)) && (n.types & (kInteger | kNumber));
  }
}

Frame LiteralFrame(const Grammar& g, int32_t list) {
  Frame f;
  f.kind = FrameKind::kLiteral;
  f.node = list;
  f.a = 0;
  f.b = static_cast<uint32_t>(g.literal_list(list).size());
  return f;
}

}  // namespace

Frame KeyFrame(const Grammar& g, int32_t object_node, uint64_t seen, uint64_t filter) {
  Frame f;
  f.kind = FrameKind::kKey;
  f.node = object_node;
  f.a = 0;
  f.b = static_cast<uint32_t>(g.node(object_node).properties.size());
  f.c = seen;
  if (g.unique_additional_keys() && g.node(object_node).additional >= 0) {
    f.state = 0x80;
    f.d = filter;
  }
  return f;
}

namespace {

bool AnyKeyPossible(const SchemaNode& n, uint64_t seen) {
  if (n.additional >= 0) return true;
  const uint64_t all =
      n.properties.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << n.properties.size()) - 1;
  return (all & ~seen) != 0;
}

bool RequiredSeen(const SchemaNode& n, uint64_t seen) {
  for (size_t i = 0; i < n.properties.size(); ++i) {
    if (n.properties[i].required && !((seen >> i) & 1)) return false;
  }
  return true;
}

bool TracksCount(const SchemaNode& n) {
  return n.min_items > 0 || n.max_items >= 0 || !n.prefix_items.empty();
}

StepResult StepValue(const Grammar& g, Frame& f, int32_t e) {
  if (e > 255) return Result(StepKind::kReject);
  const uint8_t c = static_cast<uint8_t>(e);
  const SchemaNode& n = g.node(f.node);
  if (!n.any_of.empty()) {
    int32_t only = -1;
    for (int32_t alt : n.any_of) {
      if (!CanStartWith(g, alt, c)) continue;
      if (only >= 0) return Result(StepKind::kFork);
      only = alt;
    }
    if (only < 0) return Result(StepKind::kReject);
    f = ValueFrame(only);
    return Result(StepKind::kRetry);
  }
  if (n.has_literals) {
    f = LiteralFrame(g, g.NodeLiteralList(f.node));
    return Result(StepKind::kRetry);
  }
  const int32_t node = f.node;
  f = Frame{};
  f.node = node;
  if (c == '{' && (n.types & kObject)) {
    f.kind = FrameKind::kObject;
    return Result(StepKind::kConsume);
  }
  if (c == '[' && (n.types & kArray)) {
    f.kind = FrameKind::kArray;
    return Result(StepKind::kConsume);
  }
  if (c == '"' && (n.types & kString)) {
    f.kind = FrameKind::kString;
    if (n.IsPlainString()) f.node = kPlainStringNode;
    if (n.string_dfa >= 0) f.b = static_cast<uint32_t>(g.graph().dfas[n.string_dfa].start);
    return Result(StepKind::kConsume);
  }
  if ((c == '-' || IsDigit(c)) && (n.types & (kInteger | kNumber))) {
    f.kind = FrameKind::kNumber;
    if (!n.HasBounds()) f.node = (n.types & kNumber) ? kPlainNumberNode : kPlainIntegerNode;
    return Result(StepKind::kRetry);
  }
  if ((c == 't' || c == 'f') && (n.types & kBoolean)) {
    f = LiteralFrame(g, c == 't' ? kTrueList : kFalseList);
    return Result(StepKind::kRetry);
  }
  if (c == 'n' && (n.types & kNull)) {
    f = LiteralFrame(g, kNullList);
    return Result(StepKind::kRetry);
  }
  return Result(StepKind::kReject);
}

// min/maxProperties (f.b counts the keys): room for another key, and the key frame to push —
// once the room left is all needed by required keys, only those (the closed twin, optional keys
// marked seen).
int64_t KeyRoom(const SchemaNode& n, const Frame& f) {
  return n.max_properties < 0 ? INT64_MAX : n.max_properties - static_cast<int64_t>(f.b);
}

Frame NextKeyFrame(const Grammar& g, const SchemaNode& n, const Frame& f) {
  if (n.max_properties >= 0) {
    uint64_t optional = 0;
    int64_t required_left = 0;
    for (size_t i = 0; i < n.properties.size() && i < 64; ++i) {
      if (!n.properties[i].required) optional |= uint64_t{1} << i;
      required_left += n.properties[i].required && !((f.c >> i) & 1);
    }
    if (required_left > 0 && KeyRoom(n, f) <= required_left) {
      return KeyFrame(g, n.closed_twin, f.c | optional, f.d);
    }
  }
  return KeyFrame(g, f.node, f.c, f.d);
}

StepResult StepObject(const Grammar& g, Frame& f, int32_t e) {
  const SchemaNode& n = g.node(f.node);
  const bool enough = static_cast<int64_t>(f.b) >= n.min_properties;
  switch (f.state) {
    case kObjAfterOpen:
    case kObjExpectKey:
      if (e == '"' && AnyKeyPossible(n, f.c) && KeyRoom(n, f) > 0)
        return WithChild(StepKind::kPush, NextKeyFrame(g, n, f));
      if (e == '}' && f.state == kObjAfterOpen && n.required_count == 0 && enough) {
        return Result(StepKind::kPopConsume);
      }
      return Result(StepKind::kReject);
    case kObjAfterKey: {
      if (e != ':') return Result(StepKind::kReject);
      int32_t child = n.additional;
      if (f.a != kAdditionalKey) {
        child = n.properties[f.a].node;
        f.c |= uint64_t{1} << f.a;
      }
      f.state = kObjInValue;
      f.a = 0;
      return WithChild(StepKind::kPush, ValueFrame(child));
    }
    case kObjAfterValue:
      if (e == ',' && AnyKeyPossible(n, f.c) && KeyRoom(n, f) > 0) {
        f.state = kObjExpectKey;
        return Result(StepKind::kConsume);
      }
      if (e == '}' && RequiredSeen(n, f.c) && enough) return Result(StepKind::kPopConsume);
      return Result(StepKind::kReject);
  }
  return Result(StepKind::kReject);
}

// Narrows [lo, hi) of a sorted list whose entries share `offset` bytes to those continuing with c.
bool Narrow(const std::vector<std::string>& list, size_t offset, uint8_t c, uint32_t* lo,
            uint32_t* hi) {
  auto byte_at = [&](const std::string& s) {
    return s.size() > offset ? int(uint8_t(s[offset])) : -1;
  };
  auto first = std::partition_point(list.begin() + *lo, list.begin() + *hi,
                                    [&](const std::string& s) { return byte_at(s) < c; });
  auto last = std::partition_point(first, list.begin() + *hi,
                                   [&](const std::string& s) { return byte_at(s) == c; });
  if (first == last) return false;
  *lo = static_cast<uint32_t>(first - list.begin());
  *hi = static_cast<uint32_t>(last - list.begin());
  return true;
}

// Does a canonical key prefix end between characters (not inside an escape or a UTF-8
// sequence)? Only then can '"' close the key; otherwise it continues it or is refused.
bool AtCharBoundary(std::string_view prefix) {
  StringLexer lex;
  for (unsigned char c : prefix) lex.Step(c, /*canonical=*/true);
  return lex.AtBoundary();
}

// Additional keys in generation mode (Grammar::unique_additional_keys): the object keeps a 64-bit
// filter of the additional keys it has (bit = FNV-1a hash mod 64), and a key whose bit is set may
// not close there (it can still go on, so this is never a dead end). False positives only narrow
// what the model may write; duplicates can never be written.
constexpr uint8_t kKeyDiverged = 1, kKeyUnique = 0x80;

uint64_t Fnv(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;

// The result an additional key hands its parent, or a rejection if its filter bit is taken.
StepResult CloseAdditional(const Frame& f, uint64_t hash, uint64_t filter) {
  if (!(f.state & kKeyUnique)) return Result(StepKind::kPopConsume, kAdditionalKeyResult);
  const int bit = static_cast<int>(hash & 63);
  if ((filter >> bit) & 1) return Result(StepKind::kReject);
  return Result(StepKind::kPopConsume, -2 - bit);
}

StepResult StepKey(const Grammar& g, Frame& f, int32_t e) {
  if (e > 255) return Result(StepKind::kReject);
  const uint8_t c = static_cast<uint8_t>(e);
  const SchemaNode& n = g.node(f.node);
  const bool additional = n.additional >= 0;
  if (f.state & kKeyDiverged) {  // diverged from every declared key: an additional one
    StringLexer lex = StringLexer::Unpack(f.d);
    const auto out = lex.Step(c, /*canonical=*/true);
    if (out == StringLexer::kReject) return Result(StepKind::kReject);
    const uint64_t hash = (uint64_t{f.b} << 32) | f.a;
    if (out == StringLexer::kClose) return CloseAdditional(f, hash, f.c);
    if (f.state & kKeyUnique) {
      const uint64_t next = Fnv(hash, std::string_view(reinterpret_cast<const char*>(&c), 1));
      f.a = static_cast<uint32_t>(next);
      f.b = static_cast<uint32_t>(next >> 32);
    }
    f.d = lex.Pack();
    return Result(StepKind::kConsume);
  }
  const auto& list = g.KeyList(f.node);
  const std::string_view prefix =
      f.offset > 0 ? std::string_view(list[f.a]).substr(0, f.offset) : std::string_view();
  if (c == '"' && AtCharBoundary(prefix)) {
    const bool exact = f.a < f.b && n.properties[f.a].key.size() == f.offset;
    if (exact) {
      if ((f.c >> f.a) & 1) return Result(StepKind::kReject);  // a duplicate key
      return Result(StepKind::kPopConsume, static_cast<int32_t>(f.a));
    }
    if (!additional) return Result(StepKind::kReject);
    return CloseAdditional(f, (f.state & kKeyUnique) ? Fnv(kFnvBasis, prefix) : 0, f.d);
  }
  uint32_t lo = f.a, hi = f.b;
  if (Narrow(list, f.offset, c, &lo, &hi)) {
    bool unseen = additional;
    for (uint32_t i = lo; i < hi && !unseen; ++i) unseen = !((f.c >> i) & 1);
    if (!unseen) return Result(StepKind::kReject);
    f.a = lo;
    f.b = hi;
    ++f.offset;
    return Result(StepKind::kConsume);
  }
  if (!additional) return Result(StepKind::kReject);
  StringLexer lex;
  // Bytes so far were a declared key's prefix: canonical, and ending between characters unless
  // the prefix stops inside an escape or a UTF-8 sequence — re-lex it to find the state.
  for (unsigned char p : prefix) lex.Step(p, true);
  const auto out = lex.Step(c, true);
  if (out == StringLexer::kReject || out == StringLexer::kClose) return Result(StepKind::kReject);
  const uint64_t filter = f.d;
  const uint64_t hash =
      (f.state & kKeyUnique)
          ? Fnv(Fnv(kFnvBasis, prefix), std::string_view(reinterpret_cast<const char*>(&c), 1))
          : 0;
  f.state |= kKeyDiverged;
  f.a = static_cast<uint32_t>(hash);
  f.b = static_cast<uint32_t>(hash >> 32);
  f.offset = 0;
  f.c = (f.state & kKeyUnique) ? filter : 0;  // `seen` is not needed once diverged
  f.d = lex.Pack();
  return Result(StepKind::kConsume);
}

}  // namespace

bool AdditionalKeyLexer(const Grammar& g, const Frame& key, StringLexer* lexer) {
  if (key.kind != FrameKind::kKey || g.node(key.node).additional < 0) return false;
  if (key.state & kKeyDiverged) {
    *lexer = StringLexer::Unpack(key.d);
    return true;
  }
  *lexer = StringLexer{};
  if (key.offset > 0) {  // a declared key's prefix: its canonical spelling, lexed
    for (unsigned char p : std::string_view(g.KeyList(key.node)[key.a]).substr(0, key.offset)) {
      lexer->Step(p, /*canonical=*/true);
    }
  }
  return true;
}

namespace {

StepResult StepArray(const Grammar& g, Frame& f, int32_t e) {
  const SchemaNode& n = g.node(f.node);
  const bool tracked = TracksCount(n);
  const int64_t count = f.a;
  const bool room = n.max_items < 0 || count < n.max_items;
  if (f.state == kArrAfterOpen) {
    if (e == ']' && n.min_items == 0) return Result(StepKind::kPopConsume);
    if (e > 255 || !room) return Result(StepKind::kReject);
    f.state = kArrInItem;
    return WithChild(StepKind::kDelegate, ValueFrame(n.ItemNode(0)));
  }
  if (f.state == kArrAfterItem) {
    if (e == ',' && room) {
      f.state = kArrInItem;
      return WithChild(StepKind::kPush, ValueFrame(n.ItemNode(count)));
    }
    if (e == ']' && (!tracked || count >= n.min_items)) return Result(StepKind::kPopConsume);
  }
  return Result(StepKind::kReject);
}

StepResult StepString(const Grammar& g, Frame& f, int32_t e) {
  if (e > 255) return Result(StepKind::kReject);
  const uint8_t c = static_cast<uint8_t>(e);
  if (HasDfa(g, f)) return StepDfaString(g, f, c);
  StringLexer lex = StringLexer::Unpack(f.c);
  int64_t min_length = 0, max_length = -1;
  if (f.node != kPlainStringNode) {
    min_length = g.node(f.node).min_length;
    max_length = g.node(f.node).max_length;
  }
  if (lex.AtBoundary() && c != '"' && max_length >= 0 && f.a >= max_length) {
    return Result(StepKind::kReject);
  }
  const auto out = lex.Step(c, /*canonical=*/false);
  switch (out) {
    case StringLexer::kReject:
      return Result(StepKind::kReject);
    case StringLexer::kClose:
      return f.a >= min_length ? Result(StepKind::kPopConsume) : Result(StepKind::kReject);
    case StringLexer::kChar:
      if (f.node != kPlainStringNode) ++f.a;
      break;
    case StringLexer::kPartial:
      break;
  }
  f.c = lex.Pack();
  return Result(StepKind::kConsume);
}

StepResult StepLiteral(const Grammar& g, Frame& f, int32_t e) {
  const std::vector<std::string>& list = g.literal_list(f.node);
  const bool exact = f.a < f.b && list[f.a].size() == f.offset;
  if (e <= 255) {
    uint32_t lo = f.a, hi = f.b;
    if (Narrow(list, f.offset, static_cast<uint8_t>(e), &lo, &hi)) {
      f.a = lo;
      f.b = hi;
      ++f.offset;
      return Result(StepKind::kConsume);
    }
  }
  return exact ? Result(StepKind::kPopRetry, static_cast<int32_t>(f.a)) : Result(StepKind::kReject);
}

}  // namespace

Frame ValueFrame(int32_t node) {
  Frame f;
  f.kind = FrameKind::kValue;
  f.node = node;
  return f;
}

bool IsCacheable(const Frame& f) { return !(f.kind == FrameKind::kNumber && f.node >= 0); }

StepResult StepJson(const Grammar& g, Frame& f, int32_t e) {
  switch (f.kind) {
    case FrameKind::kValue:
      return StepValue(g, f, e);
    case FrameKind::kObject:
      return StepObject(g, f, e);
    case FrameKind::kKey:
      return StepKey(g, f, e);
    case FrameKind::kArray:
      return StepArray(g, f, e);
    case FrameKind::kString:
      return StepString(g, f, e);
    case FrameKind::kNumber:
      return StepNumber(g, f, e);
    case FrameKind::kLiteral:
      return StepLiteral(g, f, e);
    default:
      return Result(StepKind::kReject);
  }
}

void OnJsonChildDone(const Grammar& g, Frame& parent, int32_t result) {
  if (parent.kind == FrameKind::kObject) {
    if (parent.state == kObjAfterOpen || parent.state == kObjExpectKey) {
      parent.state = kObjAfterKey;
      parent.a = result < 0 ? kAdditionalKey : static_cast<uint32_t>(result);
      if (g.node(parent.node).CountsProperties()) ++parent.b;
      if (result <= -2) parent.d |= uint64_t{1} << (-2 - result);  // the additional-key filter
    } else {
      parent.state = kObjAfterValue;
    }
  } else if (parent.kind == FrameKind::kArray) {
    parent.state = kArrAfterItem;
    if (TracksCount(g.node(parent.node))) ++parent.a;
  }
}

std::vector<int32_t> ForkAlternatives(const Grammar& g, const Frame& f, int32_t e) {
  std::vector<int32_t> out;
  if (e > 255) return out;
  for (int32_t alt : g.node(f.node).any_of) {
    if (CanStartWith(g, alt, static_cast<uint8_t>(e))) out.push_back(alt);
  }
  return out;
}

}  // namespace k3::structured
