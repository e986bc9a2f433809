// StringProfile: how every ordinary token reads inside a JSON string that is between characters
// — entirely string content starting `chars` characters, or closing the string after `chars`
// characters (the rest goes to the frame below), or neither. Computed once per vocabulary
// (~10 ms for Kimi) so masks of strings with minLength / maxLength need no trie walk: they are the
// plain string's mask filtered by these counts.
#pragma once

#include <cstdint>
#include <vector>

#include "structured/token_set.h"

namespace k3::structured {

class Vocabulary;

struct StringProfile {
  // inside_upto[k]: tokens entirely inside the string that start at most k characters
  // (k = 0 .. cap; every inside token starts at most `cap` characters).
  std::vector<TokenSet> inside_upto;
  size_t cap = 0;
  // Tokens whose closing quote comes after `chars` characters, sorted by chars.
  struct Closing {
    int32_t token;
    uint32_t chars;
  };
  std::vector<Closing> closing;

  static StringProfile Build(const Vocabulary& vocab);
};

}  // namespace k3::structured
