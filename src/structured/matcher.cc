#include "structured/matcher.h"

#include <algorithm>

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

bool Matcher::Accept(int32_t token) {
  if (finished_) return false;
  const Vocabulary& vocab = grammar_->vocab();
  if (vocab.IsOrdinary(token)) return AcceptBytes(vocab.Bytes(token));
  if (token < 0 || static_cast<size_t>(token) >= vocab.size()) return false;
  std::vector<FrameStack> next = state();
  const int32_t event = EventOf(token);
  if (!AdvanceAll(*grammar_, next, event)) return false;
  ExpandAlternatives(*grammar_, next);
  history_.push_back(std::move(next));
  finished_ = event == kEventEnd;
  finished_at_.push_back(finished_);
  return true;
}

bool Matcher::AcceptBytes(std::string_view bytes) {
  if (finished_) return false;
  std::vector<FrameStack> next = state();
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (next.size() == 1) {  // the common case: one stack, stepped in place
      int32_t unused = 0;
      const FrameStack before = next[0];
      const Advance adv = AdvanceStack(*grammar_, next[0], 0, c, &unused);
      if (adv == Advance::kOk) continue;
      if (adv != Advance::kFork) return false;
      next[0] = before;
    }
    if (!AdvanceAll(*grammar_, next, c)) return false;
  }
  ExpandAlternatives(*grammar_, next);
  history_.push_back(std::move(next));
  finished_at_.push_back(0);
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

void Matcher::Rollback(size_t n) {
  n = std::min(n, history_.size() - 1);
  history_.resize(history_.size() - n);
  finished_at_.resize(history_.size());
  finished_ = finished_at_.back();
}

}  // namespace k3::structured
