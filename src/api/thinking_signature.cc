#include "api/thinking_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace k3::api {
namespace {

std::string Base64(const unsigned char* data, size_t size) {
  std::string out(4 * ((size + 2) / 3), '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

std::shared_ptr<const ThinkingSigner> ThinkingSigner::Random() {
  std::string key(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    std::abort();  // no entropy: signing would be forgeable
  }
  return std::make_shared<const ThinkingSigner>(std::move(key));
}

base::Result<std::shared_ptr<const ThinkingSigner>> ThinkingSigner::FromFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::InvalidArgument("cannot read the signing key file " + path);
  std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (key.size() < 16) {
    return base::InvalidArgument("the signing key file " + path + " holds under 16 bytes");
  }
  return std::make_shared<const ThinkingSigner>(std::move(key));
}

std::string ThinkingSigner::Sign(std::string_view text) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &size);
  return Base64(mac, size);
}

bool ThinkingSigner::Verify(std::string_view text, std::string_view signature) const {
  const std::string expected = Sign(text);
  return signature.size() == expected.size() &&
         CRYPTO_memcmp(expected.data(), signature.data(), expected.size()) == 0;
}

}  // namespace k3::api
