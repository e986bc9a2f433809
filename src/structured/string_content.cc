#include "structured/string_content.h"

#include <algorithm>

#include "structured/vocabulary.h"

namespace k3::structured {

StringContent StringContent::Build(const Vocabulary& vocab, StringLexer start) {
  StringContent out;
  out.content = TokenSet(vocab.size());
  const std::vector<TrieNode>& trie = vocab.trie();
  std::vector<StringLexer> states(64);
  states[0] = start;
  for (size_t i = 0; i < trie.size();) {
    const TrieNode& node = trie[i];
    if (node.depth >= states.size()) states.resize(node.depth + 1);
    StringLexer& lexer = states[node.depth];
    lexer = states[node.depth - 1];
    ++out.walked_nodes;
    const StringLexer::Outcome step = lexer.Step(node.byte, /*canonical=*/true);
    if (step == StringLexer::kPartial || step == StringLexer::kChar) {
      if (node.token >= 0) out.content.Set(static_cast<size_t>(node.token));
      ++i;
      continue;
    }
    if (step == StringLexer::kClose && node.depth == 1) {
      out.quote_node = static_cast<int64_t>(i);
    } else if (step == StringLexer::kClose) {
      for (size_t j = i; j < node.next; ++j) {
        if (trie[j].token >= 0) out.closers.push_back({trie[j].token, node.depth - 1u});
      }
    }
    i = node.next;  // rejected, or closed: nothing below continues the string
  }
  // By the bytes after the quote (what the frame below reads), so entries need not sort them.
  auto rest = [&](const Closer& c) { return vocab.Bytes(c.token).substr(c.close_at + 1); };
  std::sort(out.closers.begin(), out.closers.end(),
            [&](const Closer& x, const Closer& y) { return rest(x) < rest(y); });
  return out;
}

}  // namespace k3::structured
