#include "base/utf8.h"

namespace k3::base {
namespace {

// Valid range of the second byte for each lead byte (Unicode Table 3-7); later bytes are 80..BF.
struct LeadInfo {
  uint8_t length;  // total sequence length, 0 for a byte that cannot start a sequence
  uint8_t second_lo;
  uint8_t second_hi;
};

LeadInfo Lead(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b < 0xC2) return {0, 0, 0};
  if (b < 0xE0) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b < 0xF0) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b < 0xF4) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Number of bytes of `bytes` (starting at a lead byte) that form a valid prefix of a sequence.
// Sets *complete when that prefix is a whole sequence.
size_t ValidPrefix(std::string_view bytes, bool* complete) {
  auto b0 = static_cast<uint8_t>(bytes[0]);
  LeadInfo info = Lead(b0);
  *complete = false;
  if (info.length == 0) return 0;
  if (info.length == 1) {
    *complete = true;
    return 1;
  }
  size_t n = 1;
  for (; n < info.length && n < bytes.size(); ++n) {
    auto b = static_cast<uint8_t>(bytes[n]);
    uint8_t lo = n == 1 ? info.second_lo : 0x80;
    uint8_t hi = n == 1 ? info.second_hi : 0xBF;
    if (b < lo || b > hi) return n;
  }
  *complete = n == info.length;
  return n;
}

}  // namespace

size_t DecodeUtf8(std::string_view bytes, char32_t* cp, bool* valid) {
  bool complete = false;
  size_t n = ValidPrefix(bytes, &complete);
  if (!complete) {
    *cp = kReplacementChar;
    *valid = false;
    return n == 0 ? 1 : n;
  }
  *valid = true;
  auto b = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  switch (n) {
    case 1:
      *cp = b(0);
      break;
    case 2:
      *cp = (char32_t(b(0) & 0x1F) << 6) | (b(1) & 0x3F);
      break;
    case 3:
      *cp = (char32_t(b(0) & 0x0F) << 12) | (char32_t(b(1) & 0x3F) << 6) | (b(2) & 0x3F);
      break;
    default:
      *cp = (char32_t(b(0) & 0x07) << 18) | (char32_t(b(1) & 0x3F) << 12) |
            (char32_t(b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
  return n;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t FindInvalidUtf8(std::string_view bytes) {
  size_t i = 0;
  const size_t size = bytes.size();
  while (i < size) {
    // ASCII fast path: 8 bytes at a time.
    while (i + 8 <= size) {
      uint64_t word;
      __builtin_memcpy(&word, bytes.data() + i, 8);
      if (word & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= size) break;
    if (static_cast<uint8_t>(bytes[i]) < 0x80) {
      ++i;
      continue;
    }
    bool complete = false;
    size_t n = ValidPrefix(bytes.substr(i), &complete);
    if (!complete) return i;
    i += n;
  }
  return size;
}

std::string Utf8Replace(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    if (static_cast<uint8_t>(bytes[i]) < 0x80) {
      out.push_back(bytes[i++]);
      continue;
    }
    bool complete = false;
    size_t n = ValidPrefix(bytes.substr(i), &complete);
    if (complete) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      AppendUtf8(kReplacementChar, &out);
      i += n == 0 ? 1 : n;
    }
  }
  return out;
}

size_t CompleteUtf8PrefixLength(std::string_view bytes) {
  // Only the last 3 bytes can hold an incomplete sequence; find the last lead byte among them.
  size_t size = bytes.size();
  size_t first = size > 3 ? size - 3 : 0;
  for (size_t i = size; i > first; --i) {
    auto b = static_cast<uint8_t>(bytes[i - 1]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for its lead
    bool complete = false;
    size_t n = ValidPrefix(bytes.substr(i - 1), &complete);
    bool truncated_but_valid = !complete && n == size - (i - 1) && n > 0;
    return truncated_but_valid ? i - 1 : size;
  }
  return size;
}

size_t CountCodePoints(std::string_view bytes) {
  size_t count = 0;
  char32_t cp;
  bool valid;
  for (size_t i = 0; i < bytes.size(); ++count) i += DecodeUtf8(bytes.substr(i), &cp, &valid);
  return count;
}

}  // namespace k3::base
