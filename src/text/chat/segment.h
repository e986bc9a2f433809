#pragma once

#include <string>
#include <vector>

namespace k3::text::chat {

// One piece of a rendered prompt. Template control text may contain special-token names that
// become control ids (allow_special); user-supplied text never does (encoded with specials off),
// which is the defence against special-token injection.
struct ChatSegment {
  std::string text;
  bool allow_special = false;
};

using ChatSegments = std::vector<ChatSegment>;

// The whole rendered text (segments concatenated), e.g. for logs and golden comparison.
inline std::string JoinSegments(const ChatSegments& segments) {
  std::string text;
  for (const ChatSegment& segment : segments) text += segment.text;
  return text;
}

}  // namespace k3::text::chat
