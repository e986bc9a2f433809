// TokenSet: one bit per vocabulary id (bit set = allowed). 163,840 ids take 20 KiB, so a union is
// a few hundred vector instructions and a copy is one memcpy.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace k3::structured {

class TokenSet {
 public:
  TokenSet() = default;
  explicit TokenSet(size_t size) : size_(size), words_((size + 63) / 64, 0) {}

  size_t size() const { return size_; }
  void Set(size_t id) { words_[id >> 6] |= uint64_t{1} << (id & 63); }
  void Reset(size_t id) { words_[id >> 6] &= ~(uint64_t{1} << (id & 63)); }
  bool Test(size_t id) const { return (words_[id >> 6] >> (id & 63)) & 1; }
  void Clear() { std::memset(words_.data(), 0, words_.size() * 8); }
  void UnionWith(const TokenSet& other) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
  }
  size_t Count() const {
    size_t n = 0;
    for (uint64_t w : words_) n += static_cast<size_t>(__builtin_popcountll(w));
    return n;
  }
  bool Empty() const {
    for (uint64_t w : words_) {
      if (w) return false;
    }
    return true;
  }
  std::span<uint64_t> words() { return words_; }
  std::span<const uint64_t> words() const { return words_; }

 private:
  size_t size_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace k3::structured
