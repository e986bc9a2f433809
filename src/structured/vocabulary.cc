#include "structured/vocabulary.h"

#include <algorithm>
#include <numeric>

#include "base/check.h"
#include "text/tokenizer/bpe_ranks.h"

namespace k3::structured {

std::shared_ptr<const Vocabulary> Vocabulary::Build(size_t vocab_size,
                                                    std::vector<std::string> ordinary,
                                                    std::vector<SpecialToken> specials) {
  auto vocab = std::shared_ptr<Vocabulary>(new Vocabulary());
  K3_CHECK(ordinary.size() <= vocab_size) << "more ordinary tokens than the vocabulary size";
  ordinary.resize(vocab_size);
  vocab->ordinary_ = std::move(ordinary);
  std::fill(std::begin(vocab->byte_tokens_), std::end(vocab->byte_tokens_), -1);
  vocab->ordinary_set_ = TokenSet(vocab_size);
  for (size_t id = 0; id < vocab_size; ++id) {
    const std::string& bytes = vocab->ordinary_[id];
    if (bytes.empty()) continue;
    vocab->ordinary_set_.Set(id);
    vocab->max_token_bytes_ = std::max(vocab->max_token_bytes_, bytes.size());
    if (bytes.size() == 1) vocab->byte_tokens_[static_cast<uint8_t>(bytes[0])] = int32_t(id);
  }
  for (const SpecialToken& s : specials) {
    K3_CHECK(s.id >= 0 && static_cast<size_t>(s.id) < vocab_size) << "special id out of range";
    K3_CHECK(vocab->ordinary_[s.id].empty()) << "special id " << s.id << " is also ordinary";
    vocab->special_ids_[s.name] = s.id;
  }
  vocab->specials_ = std::move(specials);
  vocab->BuildTrie();
  return vocab;
}

std::shared_ptr<const Vocabulary> Vocabulary::FromRanks(const text::BpeRanks& ranks,
                                                        size_t vocab_size,
                                                        std::vector<SpecialToken> specials) {
  std::vector<std::string> ordinary(std::min(vocab_size, ranks.size()));
  for (size_t rank = 0; rank < ordinary.size(); ++rank) {
    if (ranks.Has(static_cast<text::TokenId>(rank))) {
      ordinary[rank] = std::string(ranks.Bytes(static_cast<text::TokenId>(rank)));
    }
  }
  return Build(vocab_size, std::move(ordinary), std::move(specials));
}

const StringProfile& Vocabulary::string_profile() const {
  std::call_once(profile_once_, [this] {
    profile_ = std::make_unique<StringProfile>(StringProfile::Build(*this));
  });
  return *profile_;
}

const StringContent& Vocabulary::key_content(StringLexer state) const {
  // Built under the lock: a second caller for the same state waits instead of walking too, and
  // there are only a few states (see string_content.h).
  std::lock_guard<std::mutex> lock(key_content_mu_);
  std::unique_ptr<const StringContent>& slot = key_content_[state.Pack()];
  if (!slot) slot = std::make_unique<const StringContent>(StringContent::Build(*this, state));
  return *slot;
}

int32_t Vocabulary::SpecialId(std::string_view name) const {
  auto it = special_ids_.find(std::string(name));
  return it == special_ids_.end() ? -1 : it->second;
}

// Sorting the tokens by their bytes lists them in depth-first trie order; each token adds the
// nodes for the bytes past its common prefix with the previous one. `next` is filled when a
// node's subtree is known to be complete (the next token no longer shares its prefix).
void Vocabulary::BuildTrie() {
  std::vector<int32_t> ids;
  for (size_t id = 0; id < ordinary_.size(); ++id) {
    if (!ordinary_[id].empty()) ids.push_back(static_cast<int32_t>(id));
  }
  std::sort(ids.begin(), ids.end(),
            [&](int32_t a, int32_t b) { return ordinary_[a] < ordinary_[b]; });
  std::vector<uint32_t> open;  // node index at each depth 1..len of the previous token
  std::string_view previous;
  auto close_to = [&](size_t depth) {
    while (open.size() > depth) {
      trie_[open.back()].next = static_cast<uint32_t>(trie_.size());
      open.pop_back();
    }
  };
  for (int32_t id : ids) {
    std::string_view bytes = ordinary_[id];
    K3_CHECK(bytes.size() < 65535) << "token longer than the trie supports";
    size_t common = 0;
    while (common < previous.size() && common < bytes.size() && previous[common] == bytes[common]) {
      ++common;
    }
    close_to(common);
    for (size_t d = common; d < bytes.size(); ++d) {
      open.push_back(static_cast<uint32_t>(trie_.size()));
      trie_.push_back(
          TrieNode{static_cast<uint8_t>(bytes[d]), static_cast<uint16_t>(d + 1), 0, -1});
    }
    trie_[open.back()].token = id;
    previous = bytes;
  }
  close_to(0);
  std::fill(std::begin(root_child_), std::end(root_child_), static_cast<uint32_t>(trie_.size()));
  for (size_t i = 0; i < trie_.size(); i = trie_[i].next) root_child_[trie_[i].byte] = uint32_t(i);
}

}  // namespace k3::structured
