// What the router routes by: the prompt's chained block hashes, computed with the server's own
// request parsers, chat renderer and tokenizer (serve/prompt_ids.h), so the router's blocks are
// the blocks the worker's prefix cache will hold. Costs one render + tokenize per request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/openai_request.h"
#include "api/responder.h"
#include "cache/block_hash.h"
#include "serve/chat_format.h"
#include "text/tokenizer/tokenizer.h"

namespace k3::gateway {

struct KeyContext {
  const text::Tokenizer* tokenizer = nullptr;
  const serve::ChatFormat* format = nullptr;
  api::ApiOptions api;  // parse permissively: the worker, not the router, answers bad requests
  int block_size = 16;
  std::string session_header = "x-session-id";
};

struct RoutingKey {
  bool parsed = false;  // false: not a prompt the router understood; routed by load only
  std::vector<cache::BlockHash> chain;  // one per full block of the prompt
  int64_t prompt_tokens = 0;
  std::string session;  // the session header's value, if any
  std::string error;    // why parsing failed (for the log)
};

// `request` is a POST to /v1/chat/completions, /v1/completions, /v1/responses or /v1/messages.
RoutingKey KeyFor(const api::HttpRequest& request, const KeyContext& context);

}  // namespace k3::gateway
