#include "structured/string_profile.h"

#include <algorithm>

#include "structured/string_lexer.h"
#include "structured/vocabulary.h"

namespace k3::structured {

StringProfile StringProfile::Build(const Vocabulary& vocab) {
  StringProfile p;
  std::vector<std::pair<int32_t, uint32_t>> inside;  // (token, characters started)
  for (size_t id = 0; id < vocab.size(); ++id) {
    const auto token = static_cast<int32_t>(id);
    if (!vocab.IsOrdinary(token)) continue;
    StringLexer lex;
    uint32_t started = 0;
    bool closed = false, rejected = false;
    for (unsigned char c : vocab.Bytes(token)) {
      const bool boundary = lex.AtBoundary();
      const auto out = lex.Step(c, /*canonical=*/false);
      if (out == StringLexer::kReject) {
        rejected = true;
        break;
      }
      if (out == StringLexer::kClose) {
        p.closing.push_back({token, started});
        closed = true;
        break;
      }
      started += boundary;
    }
    if (!closed && !rejected) inside.emplace_back(token, started);
  }
  for (const auto& [token, started] : inside) p.cap = std::max<size_t>(p.cap, started);
  p.inside_upto.assign(p.cap + 1, TokenSet(vocab.size()));
  for (const auto& [token, started] : inside) {
    for (size_t k = started; k <= p.cap; ++k) p.inside_upto[k].Set(static_cast<size_t>(token));
  }
  std::sort(p.closing.begin(), p.closing.end(),
            [](const Closing& a, const Closing& b) { return a.chars < b.chars; });
  return p;
}

}  // namespace k3::structured
