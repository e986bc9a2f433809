// K3 "dynamic tools" (a `tools` list on a system message), Kimi Vendor Verifier
// tests/k3_features/test_dynamic_tools.py: accepted alone or beside global tools; 400 for dynamic
// tools on user or assistant messages, non-empty content beside them, bad items, bad names and
// duplicate names (within a message, across messages, global versus dynamic).
#include <gtest/gtest.h>

#include <string>

#include "api/openai_request.h"

namespace k3::api::dynamic_tools_test {
namespace {

std::string Tool(const std::string& name) {
  return R"({"type": "function", "function": {"name": ")" + name +
         R"(", "parameters": {"type": "object"}}})";
}

// A body whose first message is {"role": role, "content": content, "tools": tools}.
Json Body(const std::string& role, const std::string& content, const std::string& tools,
          const std::string& global_tools = "") {
  std::string body = R"({"messages": [{"role": ")" + role + R"(", "content": )" + content +
                     R"(, "tools": )" + tools + R"(}, {"role": "user", "content": "hi"}])";
  if (!global_tools.empty()) body += R"(, "tools": )" + global_tools;
  return Json::parse(body + "}");
}

struct Outcome {
  bool ok = false;
  ApiError error;
  std::string exception;
};

Outcome Parse(const Json& body) {
  Outcome out;
  OpenAiRequest request;
  try {
    out.ok = ParseChatRequest(body, {}, &request, &out.error);
  } catch (const std::exception& e) {
    out.exception = e.what();
  }
  return out;
}

TEST(DynamicTools, AcceptedAloneOrBesideGlobalTools) {
  for (const Json& body :
       {Body("system", "\"\"", "[" + Tool("a") + "]"),
        Body("system", "null", "[" + Tool("a") + ", " + Tool("b") + "]"),
        Body("system", "\"\"", "[" + Tool("a") + "]", "[" + Tool("g") + "]"),
        Body("system", "\"be brief\"", "[]"), Body("system", "\"\"", "[" + Tool("_a-B9") + "]"),
        Body("system", "\"\"", "[" + Tool(std::string(64, 'z')) + "]")}) {
    const Outcome out = Parse(body);
    EXPECT_TRUE(out.ok) << body.dump() << ": " << out.error.message << out.exception;
  }
}

// SPEC GAP (KVV test_dynamic_tools.py): the API layer does not look at message-level tools.
TEST(DynamicTools, RejectedWith400) {
  const std::string a = "[" + Tool("a") + "]";
  const std::pair<const char*, Json> cases[] = {
      {"on a user message", Body("user", "\"\"", a)},
      {"on an assistant message", Body("assistant", "\"\"", a)},
      {"beside non-empty content", Body("system", "\"rules\"", a)},
      {"not a list", Body("system", "\"\"", Tool("a"))},
      {"item not an object", Body("system", "\"\"", R"(["a"])")},
      {"item without function", Body("system", "\"\"", R"([{"type": "function"}])")},
      {"unsupported type",
       Body("system", "\"\"", R"([{"type": "retrieval", "function": {"name": "a"}}])")},
      {"invalid name", Body("system", "\"\"", "[" + Tool("a b") + "]")},
      {"name starting with a digit", Body("system", "\"\"", "[" + Tool("1tool") + "]")},
      {"name with a dot", Body("system", "\"\"", "[" + Tool("a.b") + "]")},
      {"name over 64 characters", Body("system", "\"\"", "[" + Tool(std::string(65, 'a')) + "]")},
      {"non-ASCII name", Body("system", "\"\"", "[" + Tool("caf\u00e9") + "]")},
      {"entry without type",
       Body("system", "\"\"", R"([{"function": {"name": "a", "parameters": {}}}])")},
      {"function without name",
       Body("system", "\"\"", R"([{"type": "function", "function": {}}])")},
      {"duplicate in one message",
       Body("system", "\"\"", "[" + Tool("a") + ", " + Tool("a") + "]")},
      {"duplicate of a global tool", Body("system", "\"\"", a, a)},
  };
  for (const auto& [what, body] : cases) {
    const Outcome out = Parse(body);
    ASSERT_TRUE(out.exception.empty()) << what << " threw " << out.exception;
    EXPECT_FALSE(out.ok) << what;
    EXPECT_EQ(out.error.http_status, 400) << what;
  }
  // Across two system messages.
  Json body = Body("system", "\"\"", a);
  const Json first = body["messages"][0];
  body["messages"].insert(body["messages"].begin() + 1, first);
  const Outcome out = Parse(body);
  EXPECT_FALSE(out.ok) << "duplicate across messages";
}

}  // namespace
}  // namespace k3::api::dynamic_tools_test
