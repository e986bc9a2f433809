// Strings whose decoded characters follow a StringDfa (pattern / format): JSON string frames
// (escapes decoded) and K3 raw text. Frame fields: b = the DFA state (between characters), d = the
// character decoded so far (UTF-8 bits, or a \u high surrogate), a unused (lengths are in the DFA).
// Invariant: after every accepted byte some way to finish the character leads to a live DFA state
// (so no prefix is a dead end); a string closes only in an accepting state.
#include <algorithm>
#include <string>

#include "structured/frame_internal.h"
#include "structured/string_dfa.h"
#include "structured/string_lexer.h"

namespace k3::structured {
namespace {

// Code points a \u escape with `digits` hex digits of value `hex` so far can still spell
// (through a surrogate pair when it is a high surrogate).
bool EscapeCanLive(const StringDfa& dfa, int32_t state, uint32_t hex, int digits) {
  const int rest = 4 - digits;
  const uint32_t lo = hex << (4 * rest), hi = lo | ((1u << (4 * rest)) - 1);
  if (dfa.AnyLive(state, lo, std::min<uint32_t>(hi, 0xD7FF))) return true;
  if (hi >= 0xE000 && dfa.AnyLive(state, std::max<uint32_t>(lo, 0xE000), hi)) return true;
  const uint32_t hs_lo = std::max<uint32_t>(lo, 0xD800), hs_hi = std::min<uint32_t>(hi, 0xDBFF);
  return hs_lo <= hs_hi && dfa.AnyLive(state, 0x10000 + ((hs_lo - 0xD800) << 10),
                                       0x10000 + ((hs_hi - 0xD800) << 10) + 0x3FF);
}

// The low half of a surrogate pair after high surrogate `high`, `digits` digits of value `hex`.
bool LowCanLive(const StringDfa& dfa, int32_t state, uint32_t high, uint32_t hex, int digits) {
  const int rest = 4 - digits;
  uint32_t lo = hex << (4 * rest), hi = lo | ((1u << (4 * rest)) - 1);
  lo = std::max<uint32_t>(lo, 0xDC00);
  hi = std::min<uint32_t>(hi, 0xDFFF);
  const uint32_t base = 0x10000 + ((high - 0xD800) << 10);
  return lo <= hi && dfa.AnyLive(state, base + lo - 0xDC00, base + hi - 0xDC00);
}

// A UTF-8 sequence with `need` continuation bytes to come, bits `bits` so far and the next byte
// in [next_lo, next_hi].
bool Utf8CanLive(const StringDfa& dfa, int32_t state, uint32_t bits, int need, uint8_t next_lo,
                 uint8_t next_hi) {
  const int shift = 6 * (need - 1);
  const uint32_t lo = ((bits << 6) | (next_lo & 0x3F)) << shift;
  const uint32_t hi = (((bits << 6) | (next_hi & 0x3F)) << shift) | ((1u << shift) - 1);
  return dfa.AnyLive(state, lo, hi);
}

uint32_t ShortEscape(uint8_t c) {
  switch (c) {
    case 'b':
      return 8;
    case 'f':
      return 12;
    case 'n':
      return 10;
    case 'r':
      return 13;
    case 't':
      return 9;
    default:
      return c;  // " \ /
  }
}

StepResult Take(const StringDfa& dfa, Frame& f, uint32_t cp) {
  const int32_t next = dfa.Next(static_cast<int32_t>(f.b), cp);
  if (next < 0) return MakeStep(StepKind::kReject);
  f.b = static_cast<uint32_t>(next);
  f.d = 0;
  return MakeStep(StepKind::kConsume);
}

}  // namespace

const StringDfa& FrameDfa(const Grammar& g, const Frame& f) {
  return g.graph().dfas[g.node(f.node).string_dfa];
}

bool HasDfa(const Grammar& g, const Frame& f) {
  return f.node >= 0 && g.node(f.node).string_dfa >= 0;
}

StepResult StepDfaString(const Grammar& g, Frame& f, uint8_t c) {
  const StringDfa& dfa = FrameDfa(g, f);
  const auto state = static_cast<int32_t>(f.b);
  const StringLexer before = StringLexer::Unpack(f.c);
  StringLexer lex = before;
  const auto out = lex.Step(c, /*canonical=*/false);
  if (out == StringLexer::kReject) return MakeStep(StepKind::kReject);
  if (out == StringLexer::kClose) {
    return dfa.accepting[state] ? MakeStep(StepKind::kPopConsume) : MakeStep(StepKind::kReject);
  }
  f.c = lex.Pack();
  switch (before.mode) {
    case StringLexer::kNormal:
      if (out == StringLexer::kChar) return Take(dfa, f, c);
      if (c == '\\') {
        // \u can spell any code point; the short escapes are among them.
        return dfa.AnyLive(state, 0, kCodePointEnd - 1) ? MakeStep(StepKind::kConsume)
                                                        : MakeStep(StepKind::kReject);
      }
      f.d = c >= 0xF0 ? (c & 0x07) : c >= 0xE0 ? (c & 0x0F) : (c & 0x1F);
      return Utf8CanLive(dfa, state, static_cast<uint32_t>(f.d), lex.need, lex.lo, lex.hi)
                 ? MakeStep(StepKind::kConsume)
                 : MakeStep(StepKind::kReject);
    case StringLexer::kUtf8:
      f.d = (f.d << 6) | (c & 0x3F);
      if (out == StringLexer::kChar) return Take(dfa, f, static_cast<uint32_t>(f.d));
      return Utf8CanLive(dfa, state, static_cast<uint32_t>(f.d), lex.need, lex.lo, lex.hi)
                 ? MakeStep(StepKind::kConsume)
                 : MakeStep(StepKind::kReject);
    case StringLexer::kEscape:
      if (out == StringLexer::kChar) return Take(dfa, f, ShortEscape(c));
      return MakeStep(StepKind::kConsume);  // \u: checked as its digits come
    case StringLexer::kHex: {
      const uint32_t v = before.hex * 16u + static_cast<uint32_t>(HexDigitValue(c));
      if (out == StringLexer::kChar) return Take(dfa, f, v);
      if (before.digits == 3) {  // a high surrogate: the pair's low half follows
        f.d = v;
        return LowCanLive(dfa, state, v, 0, 0) ? MakeStep(StepKind::kConsume)
                                               : MakeStep(StepKind::kReject);
      }
      return EscapeCanLive(dfa, state, v, before.digits + 1) ? MakeStep(StepKind::kConsume)
                                                             : MakeStep(StepKind::kReject);
    }
    case StringLexer::kLowBackslash:
    case StringLexer::kLowU:
      return MakeStep(StepKind::kConsume);
    case StringLexer::kLowHex: {
      const uint32_t v = before.hex * 16u + static_cast<uint32_t>(HexDigitValue(c));
      const auto high = static_cast<uint32_t>(f.d);
      if (out == StringLexer::kChar)
        return Take(dfa, f, 0x10000 + ((high - 0xD800) << 10) + v - 0xDC00);
      return LowCanLive(dfa, state, high, v, before.digits + 1) ? MakeStep(StepKind::kConsume)
                                                                : MakeStep(StepKind::kReject);
    }
  }
  return MakeStep(StepKind::kReject);
}

StepResult StepDfaRawText(const Grammar& g, Frame& f, int32_t e) {
  const StringDfa& dfa = FrameDfa(g, f);
  const auto state = static_cast<int32_t>(f.b);
  if (e > 255) {
    if (f.c != 0 || !dfa.accepting[state]) return MakeStep(StepKind::kReject);
    return MakeStep(StepKind::kPopRetry);
  }
  const auto c = static_cast<uint8_t>(e);
  // f.c: continuation bytes still expected; f.d: the next byte's range (lo | hi << 8) and the
  // bits so far (<< 16).
  if (f.c > 0) {
    if (c < (f.d & 0xFF) || c > ((f.d >> 8) & 0xFF)) return MakeStep(StepKind::kReject);
    const uint32_t bits = static_cast<uint32_t>(f.d >> 16) << 6 | (c & 0x3F);
    if (--f.c == 0) return Take(dfa, f, bits);
    f.d = uint64_t{bits} << 16 | 0x80 | 0xBF << 8;
    return Utf8CanLive(dfa, state, bits, static_cast<int>(f.c), 0x80, 0xBF)
               ? MakeStep(StepKind::kConsume)
               : MakeStep(StepKind::kReject);
  }
  if (c < 0x80) return Take(dfa, f, c);
  StringLexer lex;
  if (lex.Step(c, false) != StringLexer::kPartial) return MakeStep(StepKind::kReject);
  const uint32_t bits = c >= 0xF0 ? (c & 0x07) : c >= 0xE0 ? (c & 0x0F) : (c & 0x1F);
  f.c = lex.need;
  f.d = uint64_t{bits} << 16 | lex.lo | uint64_t{lex.hi} << 8;
  return Utf8CanLive(dfa, state, bits, lex.need, lex.lo, lex.hi) ? MakeStep(StepKind::kConsume)
                                                                 : MakeStep(StepKind::kReject);
}

}  // namespace k3::structured

namespace k3::structured {

namespace {

// How a completion writes code point `cp`: in a JSON string (escaped where it must be), or raw.
std::string Spelling(uint32_t cp, bool raw) {
  static const char kHex[] = "0123456789abcdef";
  if (!raw && (cp < 0x20 || cp == '"' || cp == '\\')) {
    switch (cp) {
      case '"':
        return "\\\"";
      case '\\':
        return "\\\\";
      case '\n':
        return "\\n";
      case '\t':
        return "\\t";
      case '\r':
        return "\\r";
      default:
        return std::string("\\u00") + kHex[cp >> 4] + kHex[cp & 15];
    }
  }
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | cp >> 12);
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | cp >> 18);
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// Bytes of the current escape written so far (JSON strings; 0 outside an escape).
size_t BytesIntoEscape(const StringLexer& lex) {
  switch (lex.mode) {
    case StringLexer::kEscape:
      return 1;
    case StringLexer::kHex:
      return 2 + lex.digits;
    default:
      return 0;
  }
}

}  // namespace

void DfaStringPreferences(const Grammar& g, const Frame& f, bool raw, std::vector<int32_t>* out) {
  const StringDfa& dfa = FrameDfa(g, f);
  const auto state = static_cast<int32_t>(f.b);
  const StringLexer lex = StringLexer::Unpack(raw ? 0 : f.c);
  const bool boundary = raw ? f.c == 0 : lex.AtBoundary();
  const std::string spell = Spelling(dfa.toward[state], raw);
  if (boundary) {
    if (!raw && dfa.accepting[state]) out->push_back('"');
    if (dfa.distance[state] > 0) out->push_back(static_cast<uint8_t>(spell[0]));
    return;
  }
  // Inside a character: first the next byte of the one the completion itself started (so it
  // finishes that character, one step nearer acceptance), then whichever byte the frame takes.
  size_t at = 0;
  if (raw || lex.mode == StringLexer::kUtf8) {
    const int need = raw ? static_cast<int>(f.c) : lex.need;
    at = spell.size() > static_cast<size_t>(need) ? spell.size() - need : 0;
  } else {
    at = BytesIntoEscape(lex);
  }
  if (at > 0 && at < spell.size()) out->push_back(static_cast<uint8_t>(spell[at]));
  if (!raw) {
    for (int32_t c : {'"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u', 'D'}) out->push_back(c);
    for (int32_t c = '0'; c <= '9'; ++c) out->push_back(c);
    for (int32_t c = 'a'; c <= 'f'; ++c) out->push_back(c);
    for (int32_t c = 'A'; c <= 'F'; ++c) out->push_back(c);
  }
  for (int32_t c = 0x80; c <= 0xBF; ++c) out->push_back(c);
}

}  // namespace k3::structured
