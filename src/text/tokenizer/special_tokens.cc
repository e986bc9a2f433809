#include "text/tokenizer/special_tokens.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace k3::text {

SpecialTokens::SpecialTokens(std::vector<SpecialToken> tokens) : tokens_(std::move(tokens)) {
  trie_.emplace_back();
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const SpecialToken& token = tokens_[i];
    K3_CHECK(!token.name.empty()) << "special token " << token.id << " has no name";
    K3_CHECK(by_id_.emplace(token.id, i).second) << "duplicate special id " << token.id;
    K3_CHECK(by_name_.emplace(token.name, token.id).second) << "duplicate name " << token.name;
    if (!starts_name_[static_cast<uint8_t>(token.name[0])]) first_bytes_.push_back(token.name[0]);
    starts_name_[static_cast<uint8_t>(token.name[0])] = true;
    uint32_t node = 0;
    for (char ch : token.name) {
      auto byte = static_cast<uint8_t>(ch);
      auto& children = trie_[node].children;
      auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(byte, 0u));
      if (it == children.end() || it->first != byte) {
        uint32_t child = static_cast<uint32_t>(trie_.size());
        it = children.insert(it, {byte, child});
        trie_.emplace_back();  // invalidates `children`; `node` indexes stay valid
        node = child;
      } else {
        node = it->second;
      }
    }
    trie_[node].id = token.id;
  }
}

const std::string* SpecialTokens::NameOf(TokenId id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second].name;
}

std::optional<TokenId> SpecialTokens::IdOf(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

bool SpecialTokens::AnyNameContainsAnyOf(std::string_view bytes) const {
  for (const auto& token : tokens_) {
    if (token.name.find_first_of(bytes) != std::string::npos) return true;
  }
  return false;
}

size_t SpecialTokens::MatchAt(std::string_view text, size_t pos, TokenId* id) const {
  uint32_t node = 0;
  size_t best = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto& children = trie_[node].children;
    auto byte = static_cast<uint8_t>(text[i]);
    auto it = std::lower_bound(children.begin(), children.end(), std::make_pair(byte, 0u));
    if (it == children.end() || it->first != byte) break;
    node = it->second;
    if (trie_[node].id != kNoRank) {
      best = i + 1 - pos;
      *id = trie_[node].id;
    }
  }
  return best;
}

std::optional<SpecialMatch> SpecialTokens::FindNext(std::string_view text, size_t from) const {
  if (tokens_.empty()) return std::nullopt;
  const char* data = text.data();
  for (size_t pos = from; pos < text.size(); ++pos) {
    if (first_bytes_.size() <= 2) {  // Kimi: '<' and '['. memchr skips the rest quickly.
      const char* next = nullptr;
      for (char first : first_bytes_) {
        const void* hit = std::memchr(data + pos, first, text.size() - pos);
        if (hit && (!next || hit < next)) next = static_cast<const char*>(hit);
      }
      if (!next) return std::nullopt;
      pos = next - data;
    } else if (!starts_name_[static_cast<uint8_t>(data[pos])]) {
      continue;
    }
    TokenId id;
    if (size_t length = MatchAt(text, pos, &id)) return SpecialMatch{pos, pos + length, id};
  }
  return std::nullopt;
}

}  // namespace k3::text
