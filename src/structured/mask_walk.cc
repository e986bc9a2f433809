#include "structured/mask_walk.h"

#include <algorithm>
#include <climits>
#include <string>

#include "structured/frame_internal.h"
#include "structured/grammar.h"

namespace k3::structured {
namespace {

struct Pending {
  int32_t result;
  std::string_view remainder;  // into the vocabulary's bytes
  int32_t token;
};

bool IsShared(const Frame& f) {
  switch (f.kind) {
    case FrameKind::kString:
      return f.node == kPlainStringNode;
    case FrameKind::kNumber:
      return f.node < 0;
    case FrameKind::kLiteral:
      return f.node <= kNullList;
    case FrameKind::kValue:
    case FrameKind::kObject:
    case FrameKind::kArray:
    case FrameKind::kKey:
      return f.node == kAnyNode;
    default:
      return false;
  }
}

template <typename Fn>
void ForEachTokenIn(const std::vector<TrieNode>& trie, size_t begin, size_t end, Fn fn) {
  for (size_t j = begin; j < end; ++j) {
    if (trie[j].token >= 0) fn(trie[j].token, trie[j].depth);
  }
}

std::vector<RemainderTrie> BuildRemainders(std::vector<Pending> pending) {
  auto before = [](const Pending& x, const Pending& y) {
    return x.result != y.result ? x.result < y.result : x.remainder < y.remainder;
  };
  if (!std::is_sorted(pending.begin(), pending.end(), before)) {
    std::sort(pending.begin(), pending.end(), before);
  }
  std::vector<RemainderTrie> out;
  std::vector<uint32_t> open;
  std::string_view previous;
  auto close_to = [&](size_t depth) {
    while (open.size() > depth) {
      out.back().nodes[open.back()].next = static_cast<uint32_t>(out.back().nodes.size());
      open.pop_back();
    }
  };
  for (const Pending& p : pending) {
    if (out.empty() || out.back().result != p.result) {
      if (!out.empty()) close_to(0);
      out.emplace_back();
      out.back().result = p.result;
      previous = {};
    }
    RemainderTrie& t = out.back();
    if (p.remainder.empty()) {
      t.at_root.push_back(p.token);
      continue;
    }
    size_t common = 0;
    while (common < previous.size() && common < p.remainder.size() &&
           previous[common] == p.remainder[common]) {
      ++common;
    }
    close_to(common);
    for (size_t d = common; d < p.remainder.size(); ++d) {
      open.push_back(static_cast<uint32_t>(t.nodes.size()));
      RemainderTrie::Node node;
      node.byte = static_cast<uint8_t>(p.remainder[d]);
      node.depth = static_cast<uint16_t>(d + 1);
      t.nodes.push_back(node);
    }
    // Tokens are sorted by remainder, so equal remainders are adjacent: extend the node's range.
    RemainderTrie::Node& last = t.nodes[open.back()];
    if (last.tokens_end == last.tokens_begin) {
      last.tokens_begin = static_cast<uint32_t>(t.tokens.size());
    }
    t.tokens.push_back(p.token);
    last.tokens_end = static_cast<uint32_t>(t.tokens.size());
    previous = p.remainder;
  }
  if (!out.empty()) close_to(0);
  return out;
}

// A key that may be an additional one (AdditionalKeyLexer): its accepted tokens are the string
// content of the vocabulary's table for its lexer state; only the tokens that close it are run
// through the frame (which key they name, whether it is a duplicate). Gives the entry the trie
// walk would (checked by structured_key_entry_test) at ~1% of its cost.
std::shared_ptr<MaskEntry> ComputeAdditionalKeyEntry(const Grammar& g, const Frame& top,
                                                     StringLexer lexer) {
  auto entry = std::make_shared<MaskEntry>();
  const Vocabulary& vocab = g.vocab();
  const StringContent& table = vocab.key_content(lexer);
  entry->accepted = table.content;
  std::vector<Pending> pending;
  LocalStack s;
  for (const StringContent::Closer& closer : table.closers) {
    const std::string_view bytes = vocab.Bytes(closer.token);
    s.n = 1;
    s.frames[0] = top;
    for (size_t k = 0; k <= closer.close_at; ++k) {
      ++entry->walked_nodes;
      int32_t result = 0;
      const Advance adv = AdvanceStack(g, s, 0, static_cast<uint8_t>(bytes[k]), &result);
      if (adv == Advance::kOk) continue;
      if (adv == Advance::kUnderflowConsumed) {
        pending.push_back({result, bytes.substr(k + 1), closer.token});
      } else if (adv == Advance::kUnderflowRetry) {
        pending.push_back({result, bytes.substr(k), closer.token});
      }
      break;
    }
  }
  // The table lists closers by their remainders, so grouping by result keeps each group sorted.
  std::stable_sort(pending.begin(), pending.end(),
                   [](const Pending& x, const Pending& y) { return x.result < y.result; });
  if (table.quote_node >= 0) {  // every token starting with the closing quote: one root pop
    s.n = 1;
    s.frames[0] = top;
    int32_t result = 0;
    const Advance adv = AdvanceStack(g, s, 0, '"', &result);
    if (adv == Advance::kUnderflowConsumed || adv == Advance::kUnderflowRetry) {
      entry->root_pops.push_back(
          {static_cast<uint32_t>(table.quote_node), result, adv == Advance::kUnderflowConsumed});
    }
  }
  entry->remainders = BuildRemainders(std::move(pending));
  return entry;
}

}  // namespace

std::shared_ptr<MaskEntry> ComputeEntryByWalk(const Grammar& g, const Frame& top) {
  auto entry = std::make_shared<MaskEntry>();
  const Vocabulary& vocab = g.vocab();
  entry->accepted = TokenSet(vocab.size());
  if (top.kind == FrameKind::kProgram && g.program(top.node).ops[top.a].kind == Op::kFreeText) {
    entry->accepted = vocab.ordinary_set();  // free text takes every ordinary byte
    return entry;
  }
  const std::vector<TrieNode>& trie = vocab.trie();
  thread_local std::vector<LocalStack> states;
  if (states.size() < 256) states.resize(256);  // grown below if a token is longer
  states[0].n = 1;
  states[0].frames[0] = top;
  std::vector<Pending> pending;
  for (size_t i = 0; i < trie.size();) {
    const TrieNode& node = trie[i];
    if (node.depth >= states.size()) states.resize(node.depth + 1);
    LocalStack& s = states[node.depth];
    s.CopyFrom(states[node.depth - 1]);
    ++entry->walked_nodes;
    int32_t result = 0;
    const Advance adv = AdvanceStack(g, s, 0, node.byte, &result);
    if (adv == Advance::kOk) {
      if (node.token >= 0) entry->accepted.Set(static_cast<size_t>(node.token));
      ++i;
      continue;
    }
    if ((adv == Advance::kUnderflowRetry || adv == Advance::kUnderflowConsumed) &&
        node.depth == 1) {
      entry->root_pops.push_back(
          {static_cast<uint32_t>(i), result, adv == Advance::kUnderflowConsumed});
    } else if (adv == Advance::kUnderflowRetry || adv == Advance::kUnderflowConsumed) {
      const size_t offset = node.depth - (adv == Advance::kUnderflowRetry ? 1 : 0);
      ForEachTokenIn(trie, i, node.next, [&](int32_t token, uint16_t) {
        pending.push_back({result, vocab.Bytes(token).substr(offset), token});
      });
    } else if (adv == Advance::kFork || s.overflow) {
      ForEachTokenIn(trie, i, node.next,
                     [&](int32_t token, uint16_t) { entry->full_check.push_back(token); });
    }
    i = node.next;
  }
  entry->remainders = BuildRemainders(std::move(pending));
  return entry;
}

std::shared_ptr<MaskEntry> ComputeEntry(const Grammar& g, const Frame& top) {
  StringLexer lexer;
  if (AdditionalKeyLexer(g, top, &lexer)) return ComputeAdditionalKeyEntry(g, top, lexer);
  return ComputeEntryByWalk(g, top);
}

namespace {

// Does `stack` take all of `bytes`, with forks?
bool TakesBytes(const Grammar& g, const FrameStack& stack, std::string_view bytes) {
  std::vector<FrameStack> stacks{stack};
  for (unsigned char c : bytes) {
    if (!AdvanceAll(g, stacks, c)) return false;
  }
  return true;
}

void WalkRemainders(const Grammar& g, const FrameStack& parent, const RemainderTrie& rt,
                    TokenSet* mask) {
  for (int32_t t : rt.at_root) mask->Set(static_cast<size_t>(t));
  if (rt.nodes.empty()) return;
  thread_local std::vector<FrameStack> states;
  if (states.empty()) states.resize(64);
  states[0] = parent;
  for (size_t i = 0; i < rt.nodes.size();) {
    const RemainderTrie::Node& node = rt.nodes[i];
    if (node.depth >= states.size()) states.resize(node.depth + 1);
    FrameStack& s = states[node.depth];
    s.frames.assign(states[node.depth - 1].frames.begin(), states[node.depth - 1].frames.end());
    int32_t unused = 0;
    const Advance adv = AdvanceStack(g, s, 0, node.byte, &unused);
    if (adv == Advance::kOk) {
      for (uint32_t k = node.tokens_begin; k < node.tokens_end; ++k) {
        mask->Set(static_cast<size_t>(rt.tokens[k]));
      }
      ++i;
      continue;
    }
    if (adv == Advance::kFork) {  // rare: check each token of the subtree with forks
      for (size_t j = i; j < node.next; ++j) {
        const RemainderTrie::Node& sub = rt.nodes[j];
        for (uint32_t k = sub.tokens_begin; k < sub.tokens_end; ++k) {
          const int32_t t = rt.tokens[k];
          const std::string_view bytes = g.vocab().Bytes(t);
          const size_t rest = bytes.size() - sub.depth + node.depth - 1;
          if (TakesBytes(g, states[node.depth - 1], bytes.substr(rest))) {
            mask->Set(static_cast<size_t>(t));
          }
        }
      }
    }
    i = node.next;
  }
}

// Walks vocabulary-trie nodes [begin, end) (a subtree, or the children of one) with `parent` as
// the stack before their first byte; `base_depth` is the depth of that first byte minus one.
void WalkVocabSubtree(const Grammar& g, const FrameStack& parent, size_t begin, size_t end,
                      size_t base_depth, TokenSet* mask) {
  const std::vector<TrieNode>& trie = g.vocab().trie();
  thread_local std::vector<FrameStack> states;
  if (states.size() < 64) states.resize(64);
  states[0] = parent;
  for (size_t i = begin; i < end;) {
    const TrieNode& node = trie[i];
    const size_t d = node.depth - base_depth;
    if (d >= states.size()) states.resize(d + 1);
    FrameStack& s = states[d];
    s.frames.assign(states[d - 1].frames.begin(), states[d - 1].frames.end());
    int32_t unused = 0;
    const Advance adv = AdvanceStack(g, s, 0, node.byte, &unused);
    if (adv == Advance::kOk) {
      if (node.token >= 0) mask->Set(static_cast<size_t>(node.token));
      ++i;
      continue;
    }
    if (adv == Advance::kFork) {  // rare: each token of the subtree with forks
      ForEachTokenIn(trie, i, node.next, [&](int32_t t, uint16_t) {
        if (TakesBytes(g, states[d - 1], g.vocab().Bytes(t).substr(d - 1 + base_depth))) {
          mask->Set(static_cast<size_t>(t));
        }
      });
    }
    i = node.next;
  }
}

}  // namespace

std::shared_ptr<const MaskEntry> EntryFor(const Grammar& g, const Frame& top) {
  MaskCache& cache = IsShared(top) ? g.vocab().shared_cache() : g.cache();
  const bool cacheable = IsCacheable(top);
  if (cacheable) {
    if (auto hit = cache.Find(top)) return hit;
  }
  std::shared_ptr<const MaskEntry> entry = ComputeEntry(g, top);
  if (cacheable) cache.Insert(top, entry);
  return entry;
}

bool AdvanceAll(const Grammar& g, std::vector<FrameStack>& stacks, int32_t event) {
  std::vector<FrameStack> work;
  work.swap(stacks);
  while (!work.empty()) {
    FrameStack s = std::move(work.back());
    work.pop_back();
    int32_t unused = 0;
    const Advance adv = AdvanceStack(g, s, 0, event, &unused);
    if (adv == Advance::kOk) {
      if (std::find(stacks.begin(), stacks.end(), s) == stacks.end())
        stacks.push_back(std::move(s));
    } else if (adv == Advance::kFork) {
      for (int32_t alt : ForkAlternatives(g, s.back(), event)) {
        FrameStack copy = s;
        copy.back() = ValueFrame(alt);
        work.push_back(std::move(copy));
      }
    }
  }
  return !stacks.empty();
}

void ExpandAlternatives(const Grammar& g, std::vector<FrameStack>& stacks) {
  std::vector<FrameStack> out;
  std::vector<FrameStack> work;
  work.swap(stacks);
  for (int guard = 0; !work.empty() && guard < 4096; ++guard) {
    FrameStack s = std::move(work.back());
    work.pop_back();
    const Frame& top = s.back();
    // A program about to read a JSON value: push the value frame now (as its delegation would),
    // so an anyOf at the root is expanded too.
    if (top.kind == FrameKind::kProgram && top.state == 0) {
      const Op& op = g.program(top.node).ops[top.a];
      if (op.kind == Op::kJson && !g.node(op.node).any_of.empty()) {
        s.frames.push_back(ValueFrame(op.node));
        work.push_back(std::move(s));
        continue;
      }
    }
    if (top.kind == FrameKind::kValue && !g.node(top.node).any_of.empty()) {
      for (int32_t alt : g.node(top.node).any_of) {
        FrameStack copy = s;
        copy.back() = ValueFrame(alt);
        work.push_back(std::move(copy));
      }
      continue;
    }
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  }
  stacks = std::move(out);
}

namespace {

// A string with minLength / maxLength, between characters: the plain string's mask (same stack,
// cached entry) filtered by the characters each token starts or closes after (StringProfile),
// instead of a trie walk per character count.
void AddBoundedStringAllowed(const Grammar& g, const FrameStack& stack, TokenSet* mask) {
  const Frame& top = stack.back();
  const SchemaNode& n = g.node(top.node);
  const int64_t count = top.a;
  const int64_t need = std::max<int64_t>(0, n.min_length - count);
  const int64_t room = n.max_length < 0 ? INT64_MAX : n.max_length - count;
  FrameStack plain_stack = stack;
  plain_stack.back() = Frame{};
  plain_stack.back().kind = FrameKind::kString;
  plain_stack.back().node = kPlainStringNode;
  thread_local TokenSet plain;
  if (plain.size() != mask->size()) plain = TokenSet(mask->size());
  plain.Clear();
  AddOrdinaryAllowed(g, plain_stack, &plain);
  const StringProfile& profile = g.vocab().string_profile();
  const TokenSet& inside = profile.inside_upto[static_cast<size_t>(
      std::min<int64_t>(room, static_cast<int64_t>(profile.cap)))];
  const auto plain_words = plain.words();
  const auto inside_words = inside.words();
  auto out = mask->words();
  for (size_t w = 0; w < out.size(); ++w) out[w] |= plain_words[w] & inside_words[w];
  for (const StringProfile::Closing& c : profile.closing) {
    if (c.chars > room) break;
    if (c.chars >= need && plain.Test(static_cast<size_t>(c.token))) {
      mask->Set(static_cast<size_t>(c.token));
    }
  }
}

// A string with minLength / maxLength inside a character (escape or UTF-8 sequence) whose
// bounds no single token can reach — minLength met, maxLength further than a token is long —
// reads exactly as a plain string in the same lexer state: that frame's mask is shared by all
// grammars instead of one trie walk per character count.
bool BoundsOutOfReach(const Grammar& g, const Frame& string_frame) {
  const SchemaNode& n = g.node(string_frame.node);
  const int64_t count = string_frame.a;
  return count >= n.min_length &&
         (n.max_length < 0 ||
          count + static_cast<int64_t>(g.vocab().max_token_bytes()) + 1 <= n.max_length);
}

}  // namespace

void AddOrdinaryAllowed(const Grammar& g, const FrameStack& stack, TokenSet* mask) {
  const Frame& top = stack.back();
  const bool bounded_string =
      top.kind == FrameKind::kString && top.node >= 0 && g.node(top.node).string_dfa < 0;
  if (bounded_string && top.c == 0) {
    return AddBoundedStringAllowed(g, stack, mask);
  }
  if (bounded_string && BoundsOutOfReach(g, top)) {
    FrameStack plain = stack;
    plain.back() = Frame{};
    plain.back().kind = FrameKind::kString;
    plain.back().node = kPlainStringNode;
    plain.back().c = top.c;
    return AddOrdinaryAllowed(g, plain, mask);
  }
  const std::shared_ptr<const MaskEntry> entry = EntryFor(g, stack.back());
  mask->UnionWith(entry->accepted);
  if (!entry->remainders.empty() && stack.size() > 1) {
    FrameStack parent;
    for (const RemainderTrie& rt : entry->remainders) {
      parent.frames.assign(stack.frames.begin(), stack.frames.end() - 1);
      OnChildDone(g, parent.back(), rt.result);
      WalkRemainders(g, parent, rt, mask);
    }
  }
  if (!entry->root_pops.empty() && stack.size() > 1) {
    const std::vector<TrieNode>& trie = g.vocab().trie();
    FrameStack parent;
    int32_t prepared = 0;
    bool ready = false;
    for (const RootPop& pop : entry->root_pops) {
      if (!ready || prepared != pop.result) {
        parent.frames.assign(stack.frames.begin(), stack.frames.end() - 1);
        OnChildDone(g, parent.back(), pop.result);
        prepared = pop.result;
        ready = true;
      }
      const TrieNode& node = trie[pop.node];
      if (!pop.consumed) {
        WalkVocabSubtree(g, parent, pop.node, node.next, 0, mask);
      } else {
        if (node.token >= 0) mask->Set(static_cast<size_t>(node.token));
        WalkVocabSubtree(g, parent, pop.node + 1, node.next, 1, mask);
      }
    }
  }
  for (int32_t t : entry->full_check) {
    if (TakesBytes(g, stack, g.vocab().Bytes(t))) mask->Set(static_cast<size_t>(t));
  }
}

}  // namespace k3::structured
