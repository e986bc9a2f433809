// bpe_trainer_fuzzer: `k3 train-vocab`'s trainer on arbitrary text. The input's longest
// well-formed UTF-8 prefix (the command refuses the rest) is the corpus, capped at 4 KiB so each
// run stays fast (the trainer's cost grows with merges x bytes); up to 48 merges. Checks:
//  - ranks 0..255 are the single bytes, tokens are distinct, and each learned token is two
//    earlier tokens joined (so tiktoken-style encoding can reach it);
//  - the same corpus trains the same vocabulary (no dependence on hash order);
//  - the written files load as a K3 tokenizer, which encodes the corpus to no more ids than
//    bytes and decodes them back to the corpus exactly.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"
#include "fuzz_common.h"
#include "text/tokenizer/tokenizer.h"
#include "text/tokenizer/vocab_writer.h"

namespace k3::fuzz {
namespace {

constexpr size_t kMaxCorpusBytes = 4096;
constexpr int kMaxMerges = 48;

void CheckMergesAreReachable(const std::vector<std::string>& tokens) {
  for (int b = 0; b < 256; ++b) K3_CHECK(tokens[b] == std::string(1, static_cast<char>(b)));
  std::set<std::string> earlier(tokens.begin(), tokens.begin() + 256);
  for (size_t rank = 256; rank < tokens.size(); ++rank) {
    const std::string& t = tokens[rank];
    bool split = false;
    for (size_t cut = 1; cut < t.size() && !split; ++cut) {
      split = earlier.count(t.substr(0, cut)) && earlier.count(t.substr(cut));
    }
    K3_CHECK(split) << "token " << rank << " '" << Escaped(t) << "' is not two earlier tokens";
    K3_CHECK(earlier.insert(t).second) << "duplicate token '" << Escaped(t) << "'";
  }
}

}  // namespace
}  // namespace k3::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace k3;
  std::string_view input(reinterpret_cast<const char*>(data),
                         std::min(size, fuzz::kMaxCorpusBytes));
  const std::string corpus(input.substr(0, base::FindInvalidUtf8(input)));
  const int merges = static_cast<int>(fuzz::InputHash(data, size) % (fuzz::kMaxMerges + 1));
  const std::vector<std::string> tokens = text::TrainBpeVocabularyOnText(corpus, merges);
  K3_CHECK(tokens.size() >= 256 && tokens.size() <= 256u + static_cast<size_t>(merges));
  fuzz::CheckMergesAreReachable(tokens);
  K3_CHECK(text::TrainBpeVocabularyOnText(corpus, merges) == tokens) << "not deterministic";
  const auto first = static_cast<int64_t>(tokens.size());
  auto tokenizer = text::Tokenizer::FromKimiFiles(text::TiktokenModelText(tokens),
                                                  text::K3TokenizerConfigJson(first, 4096));
  K3_CHECK(tokenizer.ok()) << tokenizer.status().ToString();
  auto ids = (*tokenizer)->Encode(corpus, text::SpecialMode::kNone);
  K3_CHECK(ids.ok()) << ids.status().ToString();
  K3_CHECK(ids->size() <= corpus.size());
  auto back = (*tokenizer)->Decode(*ids);
  K3_CHECK(back.ok() && *back == corpus) << "round trip of '" << fuzz::Escaped(corpus) << "'";
  return 0;
}
