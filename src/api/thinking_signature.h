// Signatures of thinking blocks (Anthropic Messages): the server signs the reasoning text it
// issues, base64(HMAC-SHA256(key, text)), and on input accepts a thinking block only when its
// signature verifies, so a client cannot put words in the model's reasoning. The key is random per
// server start, or read from --signing-key-file (replicas behind `k3 route` must share one).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace k3::api {

class ThinkingSigner {
 public:
  // 32 random bytes from OpenSSL's CSPRNG.
  static std::shared_ptr<const ThinkingSigner> Random();
  // The file's bytes are the key (at least 16).
  static base::Result<std::shared_ptr<const ThinkingSigner>> FromFile(const std::string& path);
  explicit ThinkingSigner(std::string key) : key_(std::move(key)) {}

  std::string Sign(std::string_view text) const;
  // Constant-time comparison against Sign(text).
  bool Verify(std::string_view text, std::string_view signature) const;

 private:
  std::string key_;
};

}  // namespace k3::api
