// Specialised mask-entry computations (object keys that may be additional ones: a per-vocabulary
// string-content table plus the closing tokens) give exactly the entry of the reference method,
// a walk of the whole vocabulary trie, at every key state met while reading the corpus.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "structured/corpus_util.h"
#include "structured/frame_internal.h"
#include "structured/grammar.h"
#include "structured/mask_walk.h"
#include "structured/matcher.h"
#include "structured/schema.h"

namespace k3::structured::mask_entry_test {
namespace {

constexpr int32_t kEos = 163586;

using Remainder = std::tuple<int32_t, std::string, int32_t>;  // result, bytes left, token

std::set<Remainder> Flatten(const std::vector<RemainderTrie>& tries) {
  std::set<Remainder> out;
  for (const RemainderTrie& t : tries) {
    for (int32_t token : t.at_root) out.insert({t.result, "", token});
    std::string path;
    for (const RemainderTrie::Node& node : t.nodes) {
      path.resize(node.depth - 1u);
      path.push_back(static_cast<char>(node.byte));
      for (uint32_t k = node.tokens_begin; k < node.tokens_end; ++k) {
        out.insert({t.result, path, t.tokens[k]});
      }
    }
  }
  return out;
}

std::set<std::tuple<uint32_t, int32_t, bool>> PopsOf(const MaskEntry& e) {
  std::set<std::tuple<uint32_t, int32_t, bool>> out;
  for (const RootPop& p : e.root_pops) out.insert({p.node, p.result, p.consumed});
  return out;
}

void ExpectSameEntry(const MaskEntry& fast, const MaskEntry& walk, const std::string& where) {
  EXPECT_TRUE(std::equal(fast.accepted.words().begin(), fast.accepted.words().end(),
                         walk.accepted.words().begin(), walk.accepted.words().end()))
      << where << ": accepted differ (" << fast.accepted.Count() << " vs " << walk.accepted.Count()
      << ")";
  EXPECT_EQ(Flatten(fast.remainders), Flatten(walk.remainders)) << where << ": remainders";
  EXPECT_EQ(PopsOf(fast), PopsOf(walk)) << where << ": root pops";
  EXPECT_EQ(std::set<int32_t>(fast.full_check.begin(), fast.full_check.end()),
            std::set<int32_t>(walk.full_check.begin(), walk.full_check.end()))
      << where << ": full checks";
}

// Reads the schemas' valid instances byte by byte (exact and generation grammars) and
// compares the two methods at every distinct key frame on top of a stack, up to a budget (the
// reference walk costs ~20 ms per frame).
TEST(MaskEntry, AdditionalKeyEntriesEqualTheTrieWalk) {
  auto vocab = testing::KimiVocabulary();
  int compared = 0, diverged = 0, declared_prefix = 0;
  constexpr int kBudget = 80;  // per kind: fresh or declared-prefix keys, additional-key text
  for (const auto& c : testing::LoadCorpus()) {
    for (const std::string& instance : c.valid) {
      if (HasNonCanonicalKey(instance)) continue;
      for (bool generation : {false, true}) {
        auto g = JsonGrammar(vocab, *CompileSchema(c.schema), {kEos});
        if (generation) g->set_unique_additional_keys(true);
        Frame program;
        program.kind = FrameKind::kProgram;
        program.node = g->main_program();
        std::vector<FrameStack> stacks(1);
        stacks[0].frames.push_back(program);
        ExpandAlternatives(*g, stacks);
        std::set<std::string> seen_frames;
        for (unsigned char byte : instance) {
          ASSERT_TRUE(AdvanceAll(*g, stacks, byte)) << c.name;
          ExpandAlternatives(*g, stacks);
          for (const FrameStack& s : stacks) {
            StringLexer lexer;
            if (!AdditionalKeyLexer(*g, s.back(), &lexer)) continue;
            const std::string key(reinterpret_cast<const char*>(&s.back()), sizeof(Frame));
            const bool text = (s.back().state & 1) != 0;
            if ((text ? diverged : compared - diverged) >= kBudget) continue;
            if (!seen_frames.insert(key).second) continue;
            diverged += text;
            declared_prefix += s.back().offset > 0;
            ExpectSameEntry(*ComputeEntry(*g, s.back()), *ComputeEntryByWalk(*g, s.back()),
                            c.name + (generation ? " (generation)" : ""));
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GE(compared, 100);
  EXPECT_GE(diverged, 10);
  EXPECT_GE(declared_prefix, 5);
  std::printf("compared %d key frames (%d additional-key text, %d declared prefixes)\n", compared,
              diverged, declared_prefix);
}

// Strings with minLength / maxLength inside a character: below minLength and near maxLength the
// frame's own walk, in between the shared plain-string mask. Each equals token-by-token Accept.
TEST(MaskEntry, BoundedStringInsideACharacterEqualsAcceptance) {
  auto vocab = testing::KimiVocabulary();
  auto g = JsonGrammar(
      vocab,
      *CompileSchema(nlohmann::json::parse(R"({"type":"string","minLength":3,"maxLength":150})")),
      {kEos});
  std::string text = "\"";
  for (int i = 0; i < 149; ++i) text += "\xd0\xb6";  // 'ж', two bytes
  // Cut after the first byte of character k: k characters read (below the minimum at 1, out of
  // reach of both bounds at 40, near the maximum at 140 and at 149).
  for (int k : {1, 40, 140, 149}) {
    Matcher m(g);
    ASSERT_TRUE(m.AcceptBytes(text.substr(0, 1 + 2 * k + 1))) << k;
    TokenSet mask;
    m.FillMask(&mask);
    size_t allowed = 0;
    for (size_t t = 0; t < vocab->size(); ++t) {
      Matcher copy = m;
      ASSERT_EQ(mask.Test(t), copy.Accept(static_cast<int32_t>(t)))
          << k << " characters, token " << t << " '" << vocab->Bytes(static_cast<int32_t>(t))
          << "'";
      allowed += mask.Test(t);
    }
    EXPECT_GT(allowed, 0u) << k;
  }
}

}  // namespace
}  // namespace k3::structured::mask_entry_test
