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

#include "structured/completion.h"
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
  // Ending within a token budget (an output that may take at most `tokens_left` more tokens,
  // the next one included), so a model that would ramble past max_tokens still ends with a
  // complete, valid output:
  //  - FillBudgetedMask: the full mask while there is slack; once finishing needs all the tokens
  //    left (ShortCompletion), only tokens that follow the shortest way to finish. True when it
  //    restricted the mask so.
  //  - FitsBudget: after sampling from the full mask, whether `token` still leaves a way to
  //    finish in the tokens after it. If not, the caller draws again from FillCompletionMask.
  // Completions are computed only within a window of the budget's end (a few µs each).
  bool FillBudgetedMask(TokenSet* mask, size_t tokens_left) const;
  bool FitsBudget(int32_t token, size_t tokens_left) const;
  // Whether FitsBudget can say no for any token here (false: every allowed token fits). Lets a
  // caller prepare the redraw's mask only when one may be needed.
  bool BudgetCheckNeeded(size_t tokens_left) const;
  // Only the tokens that take the first events of the shortest way to finish from here.
  void FillCompletionMask(TokenSet* mask) const;
  // The events of a short way to finish from here (completion.h); empty if none was found.
  // Cached per state.
  const std::vector<int32_t>& Completion() const;
  // The tokens that spell `events` taking the longest token each time (what FillCompletionMask
  // allows), i.e. how many tokens finishing takes.
  size_t TokensToSpell(const std::vector<int32_t>& events) const;
  // Undoes the last n accepted tokens (at most the number accepted).
  void Rollback(size_t n);
  size_t accepted_tokens() const { return history_.size() - 1; }
  const Grammar& grammar() const { return *grammar_; }

 private:
  int32_t EventOf(int32_t token) const;
  // The state after `token` (false if it is not allowed); `ends`: it was an end token.
  bool Next(int32_t token, std::vector<FrameStack>* next, bool* ends) const;
  bool NextByBytes(std::string_view bytes, std::vector<FrameStack>* next) const;
  void Push(std::vector<FrameStack> next, bool ends);
  // Completions are compared by the tokens they take (TokensToSpell), not their bytes, so the
  // one FillCompletionMask follows gets one token shorter with every token.
  CompletionScore TokenScore() const;  // -1: a special no program mentions
  const std::vector<FrameStack>& state() const { return history_.back(); }

  std::shared_ptr<const Grammar> grammar_;
  std::vector<std::vector<FrameStack>> history_;  // [0] initial, then after each token
  std::vector<char> finished_at_;                 // parallel to history_
  bool finished_ = false;
  mutable std::vector<int32_t> completion_;  // of the current state, when completion_valid_
  mutable size_t completion_tokens_ = 0;     // TokensToSpell(completion_)
  mutable bool completion_valid_ = false;
};

}  // namespace k3::structured
