#include "structured/string_lexer.h"

namespace k3::structured {

StringLexer::Outcome StringLexer::StartChar(uint8_t c) {
  if (c == '"') return kClose;
  if (c == '\\') {
    mode = kEscape;
    return kPartial;
  }
  if (c < 0x20) return kReject;
  if (c < 0x80) return kChar;
  lo = 0x80;
  hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;  // no overlongs
    if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // <= U+10FFFF
  } else {
    return kReject;
  }
  mode = kUtf8;
  return kPartial;
}

StringLexer::Outcome StringLexer::HexDigit(uint8_t c, bool canonical) {
  const int v = HexDigitValue(c);
  if (v < 0) return kReject;
  const bool low = mode == kLowHex;
  if (canonical) {
    // Only \u00XX for control characters without a short escape, lowercase hex.
    if (c >= 'A' && c <= 'F') return kReject;
    if ((digits < 2 && v != 0) || (digits == 2 && v > 1)) return kReject;
  }
  if (low && digits == 0 && v != 0xD) return kReject;
  if (low && digits == 1 && v < 0xC) return kReject;
  // \uDC00-\uDFFF alone (a low surrogate without a high one) can never be finished: refuse it at
  // its second digit, not its fourth, so no prefix is a dead end.
  if (!low && digits == 1 && ((hex * 16 + v) & 0xFC) == 0xDC) return kReject;
  hex = static_cast<uint16_t>(hex * 16 + v);
  if (++digits < 4) return kPartial;
  if (low) {
    mode = kNormal;
    return kChar;
  }
  if (canonical && (hex == 8 || hex == 9 || hex == 10 || hex == 12 || hex == 13)) return kReject;
  if (hex >= 0xDC00 && hex <= 0xDFFF) return kReject;  // a low surrogate alone
  if (hex >= 0xD800 && hex <= 0xDBFF) {
    mode = kLowBackslash;
    return kPartial;
  }
  mode = kNormal;
  return kChar;
}

StringLexer::Outcome StringLexer::Step(uint8_t c, bool canonical) {
  const Outcome out = StepRaw(c, canonical);
  if (out == kChar) *this = StringLexer{};  // one state between characters (cache keys)
  return out;
}

StringLexer::Outcome StringLexer::StepRaw(uint8_t c, bool canonical) {
  switch (mode) {
    case kNormal:
      return StartChar(c);
    case kUtf8:
      if (c < lo || c > hi) return kReject;
      lo = 0x80;
      hi = 0xBF;
      if (--need > 0) return kPartial;
      mode = kNormal;
      return kChar;
    case kEscape:
      if (c == 'u') {
        mode = kHex;
        hex = 0;
        digits = 0;
        return kPartial;
      }
      if (c == '"' || c == '\\' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't' ||
          (c == '/' && !canonical)) {
        mode = kNormal;
        return kChar;
      }
      return kReject;
    case kHex:
    case kLowHex:
      return HexDigit(c, canonical);
    case kLowBackslash:
      if (c != '\\') return kReject;
      mode = kLowU;
      return kPartial;
    case kLowU:
      if (c != 'u') return kReject;
      mode = kLowHex;
      hex = 0;
      digits = 0;
      return kPartial;
  }
  return kReject;
}

int HexDigitValue(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace k3::structured
