// Character classes for pre-tokenization: one byte of bits per Unicode code point, from a table
// generated from Unicode 16.0.0 data (tools/unicode/gen_char_classes.mjs). 16.0 is the version
// tiktoken's Rust regex engine uses, so our splits match it character for character.
// Pure data; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace k3::text {

// Bit layout of the table entries.
enum CharClassBit : uint8_t {
  kClassHan = 1,          // Script=Han (not Script_Extensions)
  kClassUpperOnly = 2,    // Lu, Lt
  kClassLowerOnly = 4,    // Ll
  kClassOtherLetter = 8,  // Lm, Lo: in both the "upper" and the "lower" sets of the pattern
  kClassMark = 16,        // Mn, Mc, Me
  kClassNumber = 32,      // Nd, Nl, No
  kClassWhiteSpace = 64,  // White_Space, the regex \s
  kClassPyIsSpace = 128,  // Python str.isspace(): Zs, or bidi class WS, B, S
};
inline constexpr uint8_t kClassLetter = kClassUpperOnly | kClassLowerOnly | kClassOtherLetter;

extern const char kUnicodeVersion[];
extern const uint16_t kCharClassStage1[0x110000 / 256];
extern const uint8_t kCharClassStage2[];

inline uint8_t CharClassOf(char32_t cp) {
  if (cp >= 0x110000) return 0;
  return kCharClassStage2[size_t{kCharClassStage1[cp >> 8]} * 256 + (cp & 0xFF)];
}

// Decodes the code point at s[0..available) assuming well-formed UTF-8 (callers validate first);
// never reads past `available`. Returns its length in bytes and stores its class bits.
inline size_t ClassAt(const uint8_t* s, size_t available, uint8_t* bits) {
  uint8_t b0 = s[0];
  if (b0 < 0x80) {
    *bits = kCharClassStage2[b0];  // block 0 covers U+0000..U+00FF
    return 1;
  }
  char32_t cp;
  size_t len;
  if (b0 < 0xE0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 < 0xF0) {
    len = 3;
    cp = b0 & 0x0F;
  } else {
    len = 4;
    cp = b0 & 0x07;
  }
  if (len > available) {  // only on malformed input: treat the byte as an unclassified character
    *bits = 0;
    return 1;
  }
  for (size_t i = 1; i < len; ++i) cp = (cp << 6) | (s[i] & 0x3F);
  *bits = CharClassOf(cp);
  return len;
}

}  // namespace k3::text
