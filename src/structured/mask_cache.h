// Token masks per top frame. For a frame F, walking the vocabulary trie with a stack holding only
// F splits the tokens into three groups:
//   accepted   — consumed entirely inside F (or frames F pushes): allowed whatever is below F;
//   remainders — F finishes part-way through the token: whether it is allowed depends on the
//                frames below, so the rest of its bytes (grouped in a small trie per result F
//                hands its parent) is walked on the real stack at mask time;
//   rejected   — everything else, never looked at again.
// Entries are cached by F's 32 bytes (per grammar; frames that do not depend on the schema — any
// value, plain strings and numbers — in one cache per vocabulary, shared by all grammars). After
// warm-up a mask is one 20 KiB union plus a walk over a few remainder bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "structured/frame.h"
#include "structured/token_set.h"

namespace k3::structured {

// Remainders of tokens after their top frame finished, as a depth-first trie (like the
// vocabulary's), each node listing the tokens whose remainder ends there.
struct RemainderTrie {
  struct Node {
    uint8_t byte = 0;
    uint16_t depth = 0;
    uint32_t next = 0;
    uint32_t tokens_begin = 0, tokens_end = 0;
  };
  int32_t result = 0;            // what the finished frame hands its parent
  std::vector<int32_t> at_root;  // tokens with nothing left after the frame finished
  std::vector<Node> nodes;
  std::vector<int32_t> tokens;
};

// The top frame finished at a token's first byte: every token under vocabulary-trie node `node`
// continues on the real stack — from that byte (retry) or after it (consumed). Kept as a trie
// reference instead of one remainder per token: a number that may end here would otherwise list
// most of the vocabulary, while the frame below usually rejects all but a few first bytes.
struct RootPop {
  uint32_t node = 0;
  int32_t result = 0;
  bool consumed = false;
};

struct MaskEntry {
  TokenSet accepted;
  std::vector<RemainderTrie> remainders;
  std::vector<RootPop> root_pops;
  std::vector<int32_t> full_check;  // too deep for the local walk: checked on the real stack
  size_t walked_nodes = 0;          // trie nodes visited to build it (cost, for benchmarks)
};

class MaskCache {
 public:
  static constexpr size_t kMaxEntries = 8192;  // beyond this, masks are computed, not stored

  std::shared_ptr<const MaskEntry> Find(const Frame& frame) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(Key(frame));
    return it == entries_.end() ? nullptr : it->second;
  }
  void Insert(const Frame& frame, std::shared_ptr<const MaskEntry> entry) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() < kMaxEntries) entries_.emplace(Key(frame), std::move(entry));
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

 private:
  static std::string Key(const Frame& frame) {
    return std::string(reinterpret_cast<const char*>(&frame), sizeof(Frame));
  }
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const MaskEntry>> entries_;
};

}  // namespace k3::structured
