// StringLexer: the inside of a JSON string, byte by byte — escapes (with \u surrogate pairs that
// must pair up), raw UTF-8 that must be well formed (no overlongs, no surrogates, <= U+10FFFF), no
// raw control characters. Canonical mode accepts only the spelling CanonicalJsonString writes
// (used for object keys, so one key has one spelling). Packed into 8 bytes of a Frame.
#pragma once

#include <cstdint>
#include <cstring>

namespace k3::structured {

struct StringLexer {
  enum Mode : uint8_t { kNormal, kEscape, kHex, kLowBackslash, kLowU, kLowHex, kUtf8 };
  enum Outcome : int8_t { kReject = -1, kPartial = 0, kChar = 1, kClose = 2 };

  uint8_t mode = kNormal;
  uint8_t need = 0;        // UTF-8 continuation bytes still expected
  uint8_t lo = 0, hi = 0;  // allowed range of the next continuation byte
  uint16_t hex = 0;
  uint8_t digits = 0;
  uint8_t unused = 0;

  uint64_t Pack() const {
    uint64_t v;
    std::memcpy(&v, this, 8);
    return v;
  }
  static StringLexer Unpack(uint64_t v) {
    StringLexer s;
    std::memcpy(static_cast<void*>(&s), &v, 8);
    return s;
  }
  // True between characters (a new one may start, or the string may close).
  bool AtBoundary() const { return mode == kNormal; }

  Outcome Step(uint8_t c, bool canonical);

 private:
  Outcome StepRaw(uint8_t c, bool canonical);
  Outcome StartChar(uint8_t c);
  Outcome HexDigit(uint8_t c, bool canonical);
};
static_assert(sizeof(StringLexer) == 8);

// The value of a hex digit (0-9, a-f, A-F), or -1.
int HexDigitValue(uint8_t c);

}  // namespace k3::structured
