#include "structured/matcher.h"

#include <algorithm>

#include "structured/completion.h"
#include "structured/mask_walk.h"

namespace k3::structured {
namespace {

// Frames that reject every special token and the end without finishing (a special or the end
// can only be taken once they are done): with one of them on top, no special needs checking.
bool MayTakeSpecialOrEnd(const Frame& top) {
  switch (top.kind) {
    case FrameKind::kValue:
    case FrameKind::kObject:
    case FrameKind::kArray:
    case FrameKind::kString:
    case FrameKind::kKey:
      return false;
    default:
      return true;
  }
}

// The longest ordinary token spelling a prefix of the byte events from `from`: (id, length), or
// (-1, 0).
std::pair<int32_t, size_t> LongestToken(const Vocabulary& vocab, const std::vector<int32_t>& events,
                                        size_t from) {
  char run[256];  // no token is longer than max_token_bytes (capped here at 256)
  const size_t cap = std::min<size_t>(sizeof(run), vocab.max_token_bytes());
  size_t n = 0;
  for (size_t i = from; i < events.size() && events[i] <= 255 && n < cap; ++i) {
    run[n++] = static_cast<char>(events[i]);
  }
  std::pair<int32_t, size_t> best{-1, 0};
  vocab.ForEachPrefixToken(std::string_view(run, n), [&](int32_t t) {
    best = {t, vocab.Bytes(t).size()};
  });
  return best;
}

}  // namespace

Matcher::Matcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  Frame program;
  program.kind = FrameKind::kProgram;
  program.node = grammar_->main_program();
  FrameStack stack;
  stack.frames.push_back(program);
  std::vector<FrameStack> initial{stack};
  ExpandAlternatives(*grammar_, initial);
  history_.push_back(std::move(initial));
  finished_at_.push_back(0);
}

int32_t Matcher::EventOf(int32_t token) const {
  const std::vector<int32_t>& ends = grammar_->end_tokens();
  if (std::find(ends.begin(), ends.end(), token) != ends.end()) return kEventEnd;
  return SpecialEvent(token);
}

bool Matcher::Next(int32_t token, std::vector<FrameStack>* next, bool* ends) const {
  *ends = false;
  if (finished_) return false;
  const Vocabulary& vocab = grammar_->vocab();
  if (vocab.IsOrdinary(token)) return NextByBytes(vocab.Bytes(token), next);
  if (token < 0 || static_cast<size_t>(token) >= vocab.size()) return false;
  *next = state();
  const int32_t event = EventOf(token);
  if (!AdvanceAll(*grammar_, *next, event)) return false;
  ExpandAlternatives(*grammar_, *next);
  *ends = event == kEventEnd;
  return true;
}

bool Matcher::NextByBytes(std::string_view bytes, std::vector<FrameStack>* next) const {
  if (finished_) return false;
  *next = state();
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (next->size() == 1) {  // the common case: one stack, stepped in place
      int32_t unused = 0;
      const FrameStack before = (*next)[0];
      const Advance adv = AdvanceStack(*grammar_, (*next)[0], 0, c, &unused);
      if (adv == Advance::kOk) continue;
      if (adv != Advance::kFork) return false;
      (*next)[0] = before;
    }
    if (!AdvanceAll(*grammar_, *next, c)) return false;
  }
  ExpandAlternatives(*grammar_, *next);
  return true;
}

void Matcher::Push(std::vector<FrameStack> next, bool ends) {
  history_.push_back(std::move(next));
  finished_ = ends;
  finished_at_.push_back(ends);
  completion_valid_ = false;
}

bool Matcher::Accept(int32_t token) {
  std::vector<FrameStack> next;
  bool ends = false;
  if (!Next(token, &next, &ends)) return false;
  Push(std::move(next), ends);
  return true;
}

bool Matcher::AcceptBytes(std::string_view bytes) {
  std::vector<FrameStack> next;
  if (!NextByBytes(bytes, &next)) return false;
  Push(std::move(next), false);
  return true;
}

bool Matcher::CanEnd() const {
  if (finished_) return false;
  std::vector<FrameStack> copy = state();
  return AdvanceAll(*grammar_, copy, kEventEnd);
}

void Matcher::FillMask(TokenSet* mask) const {
  const Vocabulary& vocab = grammar_->vocab();
  if (mask->size() != vocab.size()) *mask = TokenSet(vocab.size());
  mask->Clear();
  if (finished_) return;
  bool specials_possible = false;
  for (const FrameStack& stack : state()) {
    AddOrdinaryAllowed(*grammar_, stack, mask);
    specials_possible |= MayTakeSpecialOrEnd(stack.back());
  }
  if (!specials_possible) return;
  for (int32_t special : grammar_->relevant_specials()) {
    std::vector<FrameStack> copy = state();
    if (AdvanceAll(*grammar_, copy, SpecialEvent(special))) mask->Set(static_cast<size_t>(special));
  }
  if (CanEnd()) {
    for (int32_t t : grammar_->end_tokens()) mask->Set(static_cast<size_t>(t));
  }
}

namespace {

// Beyond this many tokens left, no completion is computed.
constexpr size_t kWatchWindow = 2048;

}  // namespace

const std::vector<int32_t>& Matcher::Completion() const {
  if (!completion_valid_) {
    completion_ = finished_ ? std::vector<int32_t>{}
                            : ShortCompletion(*grammar_, state(), 4096, TokenScore());
    completion_tokens_ = TokensToSpell(completion_);
    completion_valid_ = true;
  }
  return completion_;
}

CompletionScore Matcher::TokenScore() const {
  return [this](const std::vector<int32_t>& events) { return TokensToSpell(events); };
}

size_t Matcher::TokensToSpell(const std::vector<int32_t>& events) const {
  size_t tokens = 0;
  for (size_t i = 0; i < events.size(); ++tokens) {
    const size_t bytes = events[i] > 255 ? 0 : LongestToken(grammar_->vocab(), events, i).second;
    i += std::max<size_t>(1, bytes);
  }
  return tokens;
}

bool Matcher::FillBudgetedMask(TokenSet* mask, size_t tokens_left) const {
  if (finished_ || tokens_left > kWatchWindow) {
    FillMask(mask);
    return false;
  }
  const std::vector<int32_t>& completion = Completion();
  // Slack left: any allowed token, checked by FitsBudget once drawn.
  if (completion.empty() || completion_tokens_ < tokens_left) {
    FillMask(mask);
    return false;
  }
  FillCompletionMask(mask);
  if (mask->Empty()) {  // a vocabulary without the bytes needed: the full mask instead
    FillMask(mask);
    return false;
  }
  return true;
}

bool Matcher::BudgetCheckNeeded(size_t tokens_left) const {
  if (finished_ || tokens_left > kWatchWindow || tokens_left == 0) return false;
  if (Completion().empty()) return false;  // no known way to finish: nothing to protect
  // One token lengthens the way to the end by at most about growth_margin events (an object
  // with its required keys, a tool call): far from the end, no need to look.
  const auto margin = static_cast<size_t>(grammar_->completion_costs().growth_margin);
  return completion_tokens_ + margin >= tokens_left;
}

bool Matcher::FitsBudget(int32_t token, size_t tokens_left) const {
  if (!BudgetCheckNeeded(tokens_left)) return true;
  std::vector<FrameStack> next;
  bool ends = false;
  if (!Next(token, &next, &ends)) return true;  // not allowed at all: Accept will say so
  if (ends) return true;
  const size_t room = tokens_left - 1;  // tokens after this one
  const size_t max_bytes = grammar_->vocab().max_token_bytes();
  const std::vector<int32_t> after =
      ShortCompletion(*grammar_, std::move(next), room * max_bytes, TokenScore());
  return !after.empty() && TokensToSpell(after) <= room;
}

void Matcher::FillCompletionMask(TokenSet* mask) const {
  const Vocabulary& vocab = grammar_->vocab();
  if (mask->size() != vocab.size()) *mask = TokenSet(vocab.size());
  mask->Clear();
  const std::vector<int32_t>& completion = Completion();
  if (completion.empty()) return;
  const int32_t head = completion.front();
  if (head == kEventEnd) {
    for (int32_t t : grammar_->end_tokens()) mask->Set(static_cast<size_t>(t));
    return;
  }
  if (IsSpecialEvent(head)) {
    mask->Set(static_cast<size_t>(head - kSpecialBase));
    return;
  }
  // The longest token of the leading bytes only: finishing then takes TokensToSpell tokens.
  const int32_t token = LongestToken(vocab, completion, 0).first;
  if (token >= 0) mask->Set(static_cast<size_t>(token));
}

void Matcher::Rollback(size_t n) {
  n = std::min(n, history_.size() - 1);
  history_.resize(history_.size() - n);
  finished_at_.resize(history_.size());
  finished_ = finished_at_.back();
  completion_valid_ = false;
}

}  // namespace k3::structured
