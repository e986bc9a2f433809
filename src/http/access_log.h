// One line per answered request at info level (as nginx's access log or vLLM's uvicorn log):
//   "GET /v1/models 200 0.4ms" or
//   "POST /v1/chat/completions 200 prompt=812 completion=64 ttft=41.2ms 1203.5ms".
// Token counts and the time to the first token come from the handler through Responder's
// NoteFirstToken/NoteUsage; requests that generate nothing print neither.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace k3::http {

// Written from any thread (the engine thread notes tokens), read on the connection's strand when
// the response ends. Counts are -1 until a handler notes them.
struct RequestStats {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::atomic<int64_t> first_token_ns{-1};  // since start
  std::atomic<int64_t> prompt_tokens{-1};
  std::atomic<int64_t> completion_tokens{-1};

  void NoteFirstToken();
  // A choice ended: `prompt` is the request's prompt tokens, `completion` this choice's tokens.
  void NoteChoice(int64_t prompt, int64_t completion);
};

std::string FormatAccessLine(const std::string& method, const std::string& path, int status,
                             const RequestStats& stats, std::chrono::steady_clock::time_point end);

}  // namespace k3::http
