// StringContent: how every ordinary token reads when a JSON string (canonical spelling, as object
// keys use) continues from one lexer state — entirely string content, closing the string part-way
// (after `close_at` bytes; the rest goes to the frame below), or neither. Object keys that may be
// additional ones accept any canonical text, so their masks are this table plus a check of the
// few closing tokens (which key they name), instead of a trie walk over the whole vocabulary.
//
// Computed once per vocabulary and lexer state (a walk of the trie with the lexer only, ~3 ms for
// Kimi's 163,840 ids); a handful of states occur in practice (between characters, inside a UTF-8
// sequence or an escape).
#pragma once

#include <cstdint>
#include <vector>

#include "structured/string_lexer.h"
#include "structured/token_set.h"

namespace k3::structured {

class Vocabulary;

struct StringContent {
  struct Closer {
    int32_t token;
    uint32_t close_at;  // index of the closing quote in the token's bytes (>= 1)
  };
  TokenSet content;             // every byte is string content
  std::vector<Closer> closers;  // content, then the closing quote at close_at >= 1
  int64_t quote_node = -1;      // trie node of a first byte that closes the string, or -1
  size_t walked_nodes = 0;

  static StringContent Build(const Vocabulary& vocab, StringLexer start);
};

}  // namespace k3::structured
