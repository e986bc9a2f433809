// A Jinja chat template's output split into template text and client text, so the client's text
// is encoded with special tokens off (no control-token injection: a user who types <|im_end|>
// gets ordinary tokens) while the template's own markup keeps its control ids.
//
// How: the conversation is rendered twice, once as given and once with every client string
// (message text and text parts, reasoning, tool-call arguments given as text) replaced by a
// marker that cannot occur in real text. The marked render is split at the markers, each marker
// is replaced by its original string, and the result must equal the real render byte for byte;
// then the pieces are the segments. Should a template transform a client string (trim, escape)
// the check fails and the render is one allow_special segment, exactly as before, and
// `client_text_isolated` says so (costs: two renders instead of one).
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "text/chat/conversation.h"
#include "text/chat/jinja_chat.h"
#include "text/chat/segment.h"

namespace k3::text::chat {

struct JinjaSegments {
  ChatSegments segments;
  bool client_text_isolated = false;
};

base::Result<JinjaSegments> RenderJinjaSegments(const JinjaChatTemplate& chat_template,
                                                const Conversation& conversation,
                                                const nlohmann::ordered_json& kwargs);

}  // namespace k3::text::chat
