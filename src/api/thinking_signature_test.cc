// Thinking signatures: HMAC-SHA256 checked against an independent value (RFC 4231 test case 2),
// and the request converter's round trip / forgery checks.
#include "api/thinking_signature.h"

#include <gtest/gtest.h>

#include <fstream>

#include "api/anthropic_request.h"

namespace k3::api::thinking_signature_test {
namespace {

TEST(ThinkingSignature, IsBase64HmacSha256) {
  // RFC 4231 case 2: key "Jefe", data "what do ya want for nothing?", digest
  // 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843, here in base64.
  const ThinkingSigner signer("Jefe");
  EXPECT_EQ(signer.Sign("what do ya want for nothing?"),
            "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=");
  EXPECT_TRUE(signer.Verify("what do ya want for nothing?",
                            "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="));
  EXPECT_FALSE(signer.Verify("what do ya want for nothing!",
                             "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="));
  EXPECT_FALSE(signer.Verify("what do ya want for nothing?", ""));
}

TEST(ThinkingSignature, RandomKeysDifferAndFileKeysAreRead) {
  const auto a = ThinkingSigner::Random(), b = ThinkingSigner::Random();
  EXPECT_NE(a->Sign("x"), b->Sign("x"));
  EXPECT_EQ(a->Sign("x"), a->Sign("x"));
  const std::string path = ::testing::TempDir() + "/k3_signing_key";
  std::ofstream(path) << "0123456789abcdef0123";
  auto from_file = ThinkingSigner::FromFile(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status().message();
  EXPECT_EQ((*from_file)->Sign("x"), ThinkingSigner("0123456789abcdef0123").Sign("x"));
  std::ofstream(path) << "short";
  EXPECT_FALSE(ThinkingSigner::FromFile(path).ok());
  EXPECT_FALSE(ThinkingSigner::FromFile(path + ".missing").ok());
}

bool ParseWithThinking(const ThinkingSigner& signer, const Json& thinking_block, ApiError* error) {
  Json body = {{"messages",
                {{{"role", "user"}, {"content", "hi"}},
                 {{"role", "assistant"},
                  {"content", {thinking_block, {{"type", "text"}, {"text", "hello"}}}}},
                 {{"role", "user"}, {"content", "again"}}}}};
  serve::ChatRequest chat;
  return ParseCountTokensRequest(body, &chat, error, &signer);
}

TEST(ThinkingSignature, RequestsAcceptIssuedAndRefuseForgedSignatures) {
  const ThinkingSigner signer("a key of sixteen bytes");
  ApiError error;
  Json block = {{"type", "thinking"}, {"thinking", "Greet them."}};
  block["signature"] = signer.Sign("Greet them.");
  EXPECT_TRUE(ParseWithThinking(signer, block, &error)) << error.message;
  for (const Json& forged : {Json("AAAA"), Json(""), Json(5)}) {
    block["signature"] = forged;
    EXPECT_FALSE(ParseWithThinking(signer, block, &error)) << forged;
    EXPECT_EQ(error.http_status, 400);
    EXPECT_NE(error.message.find("signature"), std::string::npos) << error.message;
    EXPECT_EQ(error.param, "messages[1]");
  }
  block.erase("signature");
  EXPECT_FALSE(ParseWithThinking(signer, block, &error));
  block = {{"type", "thinking"}, {"thinking", "Changed."}, {"signature", signer.Sign("Greet.")}};
  EXPECT_FALSE(ParseWithThinking(signer, block, &error));
  // redacted_thinking is never issued here: dropped, whatever its data.
  EXPECT_TRUE(
      ParseWithThinking(signer, {{"type", "redacted_thinking"}, {"data", "opaque"}}, &error))
      << error.message;
}

}  // namespace
}  // namespace k3::api::thinking_signature_test
