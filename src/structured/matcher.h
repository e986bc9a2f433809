// Matcher: the state of one constrained generation. Accept(token) advances it; FillMask gives
// the tokens allowed next (ordinary ones by the cached top-frame masks, specials and end tokens
// by direct simulation). Keeps the state after every accepted token, so Rollback(n) undoes the
// last n tokens (speculative decoding rejects drafted tokens this way).
//
// Not thread-safe; one per sequence. Grammars are shared and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "structured/frame.h"
#include "structured/grammar.h"
#include "structured/token_set.h"

namespace k3::structured {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> grammar);

  // False (state unchanged) if the grammar does not allow `token` here.
  bool Accept(int32_t token);
  // Bytes as if they came in ordinary tokens; false (state unchanged) if not allowed.
  bool AcceptBytes(std::string_view bytes);
  // True if the output may end here (an end token would be accepted).
  bool CanEnd() const;
  // The end was accepted: nothing more is allowed.
  bool Finished() const { return finished_; }
  // Sets exactly the allowed tokens (mask is resized to the vocabulary).
  void FillMask(TokenSet* mask) const;
  // Undoes the last n accepted tokens (at most the number accepted).
  void Rollback(size_t n);
  size_t accepted_tokens() const { return history_.size() - 1; }
  const Grammar& grammar() const { return *grammar_; }

 private:
  int32_t EventOf(int32_t token) const;  // -1: a special no program mentions
  const std::vector<FrameStack>& state() const { return history_.back(); }

  std::shared_ptr<const Grammar> grammar_;
  std::vector<std::vector<FrameStack>> history_;  // [0] initial, then after each token
  std::vector<char> finished_at_;                 // parallel to history_
  bool finished_ = false;
};

}  // namespace k3::structured
