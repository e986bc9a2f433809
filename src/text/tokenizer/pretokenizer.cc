#include "text/tokenizer/pretokenizer.h"

#include "text/tokenizer/char_class.h"

namespace k3::text {
namespace {

constexpr std::string_view kKimiPattern =
    R"([\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*)"
    R"([\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+)"
    R"([\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+)"
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+)"
    R"([\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}|)"
    R"( ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|)"
    R"( ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// A cursor over well-formed UTF-8 that reads one character's class bits at a time.
struct Text {
  const uint8_t* data;
  size_t size;
  // Class bits and byte length of the character at pos (pos < size).
  size_t At(size_t pos, uint8_t* bits) const { return ClassAt(data + pos, size - pos, bits); }
  bool IsCrLf(size_t pos) const { return pos < size && (data[pos] == '\r' || data[pos] == '\n'); }
};

// `[^\r\n\p{L}\p{N}]`: the optional one-character prefix of a word.
inline bool IsWordPrefix(const Text& t, size_t pos, uint8_t bits) {
  return !(bits & (kClassLetter | kClassNumber)) && !t.IsCrLf(pos);
}
// `[^\s\p{L}\p{N}]`: punctuation and symbols.
inline bool IsPunct(uint8_t bits) {
  return !(bits & (kClassWhiteSpace | kClassLetter | kClassNumber));
}

// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at pos: returns its end, or pos when absent. Case-insensitive
// matching in the regex engine uses Unicode simple case folding, so U+017F (long s) matches 's'.
size_t MatchContraction(const Text& t, size_t pos) {
  if (pos + 1 >= t.size || t.data[pos] != '\'') return pos;
  auto lower = [&](size_t i) { return i < t.size ? static_cast<uint8_t>(t.data[i] | 0x20) : 0; };
  uint8_t c = lower(pos + 1);
  if (c == 's' || c == 't' || c == 'm' || c == 'd') return pos + 2;
  if ((c == 'r' || c == 'v') && lower(pos + 2) == 'e') return pos + 3;
  if (c == 'l' && lower(pos + 2) == 'l') return pos + 3;
  if (t.data[pos + 1] == 0xC5 && pos + 2 < t.size && t.data[pos + 2] == 0xBF) return pos + 3;
  return pos;
}

// The two letter sets of the o200k-style patterns, with or without Han excluded.
template <bool kExcludeHan>
struct WordSets {
  static bool Upper(uint8_t b) {
    return (b & (kClassUpperOnly | kClassOtherLetter | kClassMark)) &&
           !(kExcludeHan && (b & kClassHan));
  }
  static bool Lower(uint8_t b) {
    return (b & (kClassLowerOnly | kClassOtherLetter | kClassMark)) &&
           !(kExcludeHan && (b & kClassHan));
  }
};

// `Upper* Lower+` from pos with regex backtracking: Upper* first takes all it can, then gives back
// characters until Lower+ can start. Returns the end, or 0 when there is no match.
template <typename Sets>
size_t MatchUpperStarLowerPlus(const Text& t, size_t pos) {
  uint8_t bits = 0;
  size_t last_lower_end = 0;  // end of the last Upper-run character that is also Lower
  size_t p = pos;
  while (p < t.size) {
    size_t len = t.At(p, &bits);
    if (!Sets::Upper(bits)) break;
    p += len;
    if (Sets::Lower(bits)) last_lower_end = p;
  }
  if (p < t.size && Sets::Lower(bits)) {  // Lower+ starts right after the whole Upper run
    while (p < t.size) {
      size_t len = t.At(p, &bits);
      if (!Sets::Lower(bits)) break;
      p += len;
    }
    return p;
  }
  // Otherwise the last character of the Upper run that is also Lower is Lower+, alone: the
  // characters after it are Upper but not Lower, and the one after the run is not Lower.
  return last_lower_end;
}

// `Upper+ Lower*` from pos; 0 when the character at pos is not Upper.
template <typename Sets>
size_t MatchUpperPlusLowerStar(const Text& t, size_t pos) {
  uint8_t bits;
  size_t p = pos;
  while (p < t.size) {
    size_t len = t.At(p, &bits);
    if (!Sets::Upper(bits)) break;
    p += len;
  }
  if (p == pos) return 0;
  while (p < t.size) {
    size_t len = t.At(p, &bits);
    if (!Sets::Lower(bits)) break;
    p += len;
  }
  return p;
}

// The whitespace alternatives shared by all patterns: `\s*[\r\n]+|\s+(?!\S)|\s+`.
// The character at pos is whitespace.
size_t MatchWhitespace(const Text& t, size_t pos) {
  size_t p = pos;
  size_t last_crlf_end = 0;
  size_t last_char_start = pos;
  uint8_t bits;
  while (p < t.size) {
    size_t len = t.At(p, &bits);
    if (!(bits & kClassWhiteSpace)) break;
    last_char_start = p;
    if (t.IsCrLf(p)) last_crlf_end = p + 1;
    p += len;
  }
  if (last_crlf_end) return last_crlf_end;              // \s*[\r\n]+
  if (p == t.size || last_char_start == pos) return p;  // \s+(?!\S), or \s+ for one char
  return last_char_start;                               // \s+(?!\S) gives back its last character
}

// ` ?[^\s\p{L}\p{N}]+[\r\n]*` (o200k adds '/' to the tail). Returns 0 when it does not match.
template <bool kSlashInTail>
size_t MatchPunct(const Text& t, size_t pos) {
  uint8_t bits;
  size_t p = pos;
  if (t.data[p] == ' ' && p + 1 < t.size) {
    t.At(p + 1, &bits);
    if (IsPunct(bits)) ++p;
  }
  size_t run_start = p;
  while (p < t.size) {
    size_t len = t.At(p, &bits);
    if (!IsPunct(bits)) break;
    p += len;
  }
  if (p == run_start) return 0;
  while (p < t.size && (t.IsCrLf(p) || (kSlashInTail && t.data[p] == '/'))) ++p;
  return p;
}

// `\p{N}{1,3}`.
size_t MatchDigits(const Text& t, size_t pos) {
  uint8_t bits;
  size_t p = pos;
  for (int count = 0; count < 3 && p < t.size; ++count) {
    size_t len = t.At(p, &bits);
    if (!(bits & kClassNumber)) break;
    p += len;
  }
  return p;
}

// ASCII character kinds for the fast path. kPunct is every ASCII byte that is not a letter, a
// digit or White_Space (so 0x1C..0x1F, which Python calls spaces, are punctuation here).
enum AsciiKind : uint8_t { kUpper, kLower, kDigit, kSpace, kPunct, kNonAscii };

constexpr AsciiKind AsciiKindOf(uint8_t c) {
  if (c >= 0x80) return kNonAscii;
  if (c >= 'A' && c <= 'Z') return kUpper;
  if (c >= 'a' && c <= 'z') return kLower;
  if (c >= '0' && c <= '9') return kDigit;
  if (c == ' ' || (c >= '\t' && c <= '\r')) return kSpace;
  return kPunct;
}
struct AsciiKinds {
  AsciiKind kind[256];
  constexpr AsciiKinds() : kind() {
    for (int c = 0; c < 256; ++c) kind[c] = AsciiKindOf(static_cast<uint8_t>(c));
  }
};
constexpr AsciiKinds kAscii;

inline bool IsLetterKind(AsciiKind k) { return k == kUpper || k == kLower; }

// `P? [A-Z]* [a-z]*` from pos where the word starts at `word` (pos or pos + 1 after a prefix):
// ASCII capitals are only in the "upper" set and small letters only in the "lower" set, so
// `Upper* Lower+` needs no backtracking and falls back to `Upper+ Lower*` when there are no small
// letters. Returns 0 when a non-ASCII byte follows (it may be a letter or mark of the word).
size_t MatchAsciiWordFrom(const Text& t, size_t word) {
  const uint8_t* d = t.data;
  size_t p = word;
  while (p < t.size && kAscii.kind[d[p]] == kUpper) ++p;
  size_t upper_end = p;
  while (p < t.size && kAscii.kind[d[p]] == kLower) ++p;
  if (p < t.size && d[p] >= 0x80) return 0;
  return MatchContraction(t, p == upper_end ? upper_end : p);
}

// The regex alternatives for text that is ASCII around pos, in their order: words (with an
// optional prefix), 1-3 digits, punctuation runs (with an optional leading space), whitespace.
// Gives exactly the general matchers' answer, or 0 ("not decidable from ASCII alone") whenever a
// non-ASCII byte could change it: a letter, mark, digit, symbol or space beyond ASCII.
template <bool kSlashInTail>
size_t MatchAscii(const Text& t, size_t pos) {
  const uint8_t* d = t.data;
  AsciiKind k0 = kAscii.kind[d[pos]];
  if (k0 == kNonAscii) return 0;
  if (IsLetterKind(k0)) return MatchAsciiWordFrom(t, pos);
  AsciiKind k1 = pos + 1 < t.size ? kAscii.kind[d[pos + 1]] : kSpace;  // kSpace: nothing follows
  if (k1 == kNonAscii) return 0;
  bool crlf = d[pos] == '\r' || d[pos] == '\n';
  if (k0 != kDigit && !crlf && IsLetterKind(k1) && pos + 1 < t.size)
    return MatchAsciiWordFrom(t, pos + 1);
  size_t p = pos;
  if (k0 == kDigit) {
    while (p < t.size && p < pos + 3 && kAscii.kind[d[p]] == kDigit) ++p;
    return p < pos + 3 && p < t.size && d[p] >= 0x80 ? 0 : p;
  }
  if (k0 == kPunct || (d[pos] == ' ' && k1 == kPunct && pos + 1 < t.size)) {
    p = k0 == kPunct ? pos : pos + 1;
    while (p < t.size && kAscii.kind[d[p]] == kPunct) ++p;
    if (p < t.size && d[p] >= 0x80) return 0;
    while (p < t.size && (d[p] == '\r' || d[p] == '\n' || (kSlashInTail && d[p] == '/'))) ++p;
    return p;
  }
  size_t last_crlf_end = 0;  // whitespace: `\s*[\r\n]+|\s+(?!\S)|\s+`
  for (; p < t.size && kAscii.kind[d[p]] == kSpace; ++p) {
    if (d[p] == '\r' || d[p] == '\n') last_crlf_end = p + 1;
  }
  if (p < t.size && d[p] >= 0x80) return 0;
  if (last_crlf_end) return last_crlf_end;
  return p == t.size || p == pos + 1 ? p : p - 1;
}

// Kimi (kHan = true) and o200k (kHan = false): the alternatives tried in their regex order.
template <bool kHan>
size_t NextO200kStyle(const Text& t, size_t pos, bool ascii_fast_path = true) {
  using Sets = WordSets<kHan>;
  if (ascii_fast_path) {
    if (size_t end = MatchAscii<!kHan>(t, pos)) return end;
  }
  uint8_t bits;
  size_t first_len = t.At(pos, &bits);
  if (kHan && (bits & kClassHan)) {  // [\p{Han}]+
    size_t p = pos + first_len;
    uint8_t next;
    while (p < t.size) {
      size_t len = t.At(p, &next);
      if (!(next & kClassHan)) break;
      p += len;
    }
    return p;
  }
  bool prefix = IsWordPrefix(t, pos, bits);
  size_t end = 0;
  if (prefix && pos + first_len < t.size) end = MatchUpperStarLowerPlus<Sets>(t, pos + first_len);
  if (!end) end = MatchUpperStarLowerPlus<Sets>(t, pos);
  if (!end && prefix && pos + first_len < t.size)
    end = MatchUpperPlusLowerStar<Sets>(t, pos + first_len);
  if (!end) end = MatchUpperPlusLowerStar<Sets>(t, pos);
  if (end) return MatchContraction(t, end);
  if (bits & kClassNumber) return MatchDigits(t, pos);
  if (size_t punct_end = MatchPunct<!kHan>(t, pos)) return punct_end;
  return MatchWhitespace(t, pos);
}

size_t NextCl100k(const Text& t, size_t pos) {
  if (size_t end = MatchContraction(t, pos); end != pos) return end;
  uint8_t bits;
  size_t first_len = t.At(pos, &bits);
  auto letter_run = [&](size_t p) {
    uint8_t b;
    while (p < t.size) {
      size_t len = t.At(p, &b);
      if (!(b & kClassLetter)) break;
      p += len;
    }
    return p;
  };
  if (bits & kClassLetter) return letter_run(pos);
  if (IsWordPrefix(t, pos, bits) && pos + first_len < t.size) {
    uint8_t next;
    t.At(pos + first_len, &next);
    if (next & kClassLetter) return letter_run(pos + first_len);
  }
  if (bits & kClassNumber) return MatchDigits(t, pos);
  if (size_t punct_end = MatchPunct<false>(t, pos)) return punct_end;
  return MatchWhitespace(t, pos);
}

bool IsAsciiLetter(uint8_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

}  // namespace

std::string_view PatternOf(PretokenizerKind kind) {
  switch (kind) {
    case PretokenizerKind::kKimi:
      return kKimiPattern;
    case PretokenizerKind::kO200k:
      return kO200kPattern;
    case PretokenizerKind::kCl100k:
      return kCl100kPattern;
  }
  return {};
}

size_t NextPieceEndWithoutFastPath(PretokenizerKind kind, std::string_view text, size_t pos) {
  Text t{reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  switch (kind) {
    case PretokenizerKind::kKimi:
      return NextO200kStyle<true>(t, pos, false);
    case PretokenizerKind::kO200k:
      return NextO200kStyle<false>(t, pos, false);
    case PretokenizerKind::kCl100k:
      return NextCl100k(t, pos);
  }
  return text.size();
}

bool PretokenizerKindFromName(std::string_view name, PretokenizerKind* kind) {
  for (auto k : {PretokenizerKind::kKimi, PretokenizerKind::kO200k, PretokenizerKind::kCl100k}) {
    if (name == PatternOf(k)) {
      *kind = k;
      return true;
    }
  }
  if (name == "kimi")
    *kind = PretokenizerKind::kKimi;
  else if (name == "o200k_base" || name == "o200k")
    *kind = PretokenizerKind::kO200k;
  else if (name == "cl100k_base" || name == "cl100k")
    *kind = PretokenizerKind::kCl100k;
  else
    return false;
  return true;
}

size_t NextPieceEnd(PretokenizerKind kind, std::string_view text, size_t pos) {
  Text t{reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  switch (kind) {
    case PretokenizerKind::kKimi:
      return NextO200kStyle<true>(t, pos);
    case PretokenizerKind::kO200k:
      return NextO200kStyle<false>(t, pos);
    case PretokenizerKind::kCl100k:
      return NextCl100k(t, pos);
  }
  return text.size();
}

// Why these positions are boundaries in every supported pattern:
// (a) after CR or LF, before a non-whitespace character: no alternative matches CR/LF followed
//     by a non-space inside one piece (word prefixes exclude CR/LF; punctuation runs only end with
//     CR/LF, except o200k's tail which may continue with '/', excluded below; the whitespace
//     alternatives hold only whitespace).
// (b) after an ASCII letter, before a space: the piece holding the letter is a word (or a cl100k
//     contraction), and a space cannot continue a word or start a contraction.
bool IsSafeSplitPoint(PretokenizerKind kind, std::string_view text, size_t pos) {
  if (pos == 0 || pos >= text.size()) return pos == 0 || pos == text.size();
  auto prev = static_cast<uint8_t>(text[pos - 1]);
  auto next = static_cast<uint8_t>(text[pos]);
  if (IsAsciiLetter(prev) && next == ' ') return true;
  if (prev != '\n' && prev != '\r') return false;
  if (kind == PretokenizerKind::kO200k && next == '/') return false;
  uint8_t bits;
  ClassAt(reinterpret_cast<const uint8_t*>(text.data()) + pos, text.size() - pos, &bits);
  return !(bits & kClassWhiteSpace);
}

}  // namespace k3::text
