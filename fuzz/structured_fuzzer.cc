// Fuzzes the JSON-schema compiler and the matcher (src/structured), which user bytes reach through
// response_format and strict tool schemas. The input is SCHEMA 0x00 INSTANCE: the schema bytes are
// parsed as JSON and compiled (CompileSchema must never crash or hang on any JSON); when that
// succeeds, a JsonGrammar over a small byte-level vocabulary (256 single bytes, a few multi-byte
// JSON runs like `":` and `},{`, an end token, a special no grammar mentions, an unused id) is
// driven by the instance bytes, cut into tokens by choices drawn from the input's hash. Checked:
// - the mask bit of every fed token equals whether Accept takes it (a refused token is skipped);
//   at some steps, for every id of the vocabulary (Accept, then Rollback(1));
// - no dead ends: while not finished, the mask is never empty;
// - Rollback(1) then the same token again gives back the same mask;
// - at the end, the end token is in the mask exactly when CanEnd; accepting it finishes the
//   matcher (empty mask after); a fresh matcher takes the accepted text in one AcceptBytes;
// - a way to finish exists from every state reached (Completion), and following it (the one
//   token FillCompletionMask allows, step by step) ends the output within TokensToSpell tokens;
// - soundness: a text the matcher may end on is valid JSON that matches the compiled graph (lone
//   surrogate escapes and numbers beyond a double excepted: nlohmann refuses those).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/check.h"
#include "fuzz_common.h"
#include "structured/grammar.h"
#include "structured/matcher.h"
#include "structured/schema.h"
#include "structured/string_dfa.h"
#include "structured/token_set.h"
#include "structured/vocabulary.h"

namespace {

namespace st = k3::structured;
using Json = nlohmann::json;
using k3::fuzz::Escaped;

// Multi-byte ordinary tokens (ids 256..): JSON punctuation runs as real vocabularies have them,
// literals, number pieces, escapes and UTF-8 characters.
const std::vector<std::string> kMultiByte = {"\":",
                                             "},{",
                                             "true",
                                             "12",
                                             "\",\"",
                                             "null",
                                             "false",
                                             "\"}",
                                             "[{",
                                             "}]",
                                             "\":\"",
                                             "],",
                                             "0.5",
                                             "-1",
                                             "e+",
                                             "\\u00",
                                             "\\\"",
                                             "\xc3\xa9",
                                             "\xf0\x9f\x98\x80",
                                             "ab",
                                             "\"\"",
                                             "{\"",
                                             "1,",
                                             "[]",
                                             "{}",
                                             "\"]"};

struct FuzzVocab {
  std::shared_ptr<const st::Vocabulary> vocab;
  int32_t end = -1;     // the grammar's end token
  int32_t other = -1;   // a special token no JSON grammar mentions
  int32_t unused = -1;  // neither ordinary nor special
  size_t size = 0;
};

const FuzzVocab& Vocab() {
  static const FuzzVocab* v = [] {
    auto* out = new FuzzVocab;  // deliberately never freed: lives for the whole fuzzing run
    std::vector<std::string> ordinary;
    for (int b = 0; b < 256; ++b) ordinary.push_back(std::string(1, static_cast<char>(b)));
    for (const std::string& t : kMultiByte) ordinary.push_back(t);
    out->end = static_cast<int32_t>(ordinary.size());
    out->other = out->end + 1;
    out->unused = out->end + 2;
    out->size = static_cast<size_t>(out->unused) + 1;
    out->vocab = st::Vocabulary::Build(out->size, std::move(ordinary),
                                       {{out->end, "<|end|>"}, {out->other, "<|other|>"}});
    return out;
  }();
  return *v;
}

// splitmix64 over the input hash: choices that do not consume input bytes.
struct Rng {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  bool OneIn(uint64_t n) { return Next() % n == 0; }
};

// The next token of `rest`: a multi-byte token that matches its start (half the time, when one
// does), else the single byte.
int32_t NextToken(std::string_view rest, Rng& rng) {
  if (rng.OneIn(2)) {
    const size_t first = rng.Next() % kMultiByte.size();
    for (size_t k = 0; k < kMultiByte.size(); ++k) {
      const size_t i = (first + k) % kMultiByte.size();
      if (rest.starts_with(kMultiByte[i])) return static_cast<int32_t>(256 + i);
    }
  }
  return static_cast<uint8_t>(rest[0]);
}

size_t CodePoints(const std::string& utf8) {
  size_t n = 0;
  for (unsigned char c : utf8) n += (c & 0xC0) != 0x80;
  return n;
}

// Whether `value` matches `node` of `graph` (the meaning documented in schema.h: prefix items,
// property counts, string automata included). Only used on texts the matcher accepted, so a false
// here is a matcher (or compiler) bug.
bool Matches(const st::SchemaGraph& graph, int32_t index, const Json& value, int depth = 0) {
  K3_CHECK(depth < 10000) << "runaway recursion";
  const st::SchemaNode& node = graph.nodes[static_cast<size_t>(index)];
  if (!node.any_of.empty()) {
    for (int32_t alt : node.any_of) {
      if (Matches(graph, alt, value, depth + 1)) return true;
    }
    return false;
  }
  if (node.has_literals) {
    for (const std::string& literal : node.literals) {
      const Json parsed = Json::parse(literal, nullptr, false);
      K3_CHECK(!parsed.is_discarded()) << "literal is not JSON: " << Escaped(literal);
      if (parsed == value) return true;
    }
    return false;
  }
  switch (value.type()) {
    case Json::value_t::null:
      return node.types & st::kNull;
    case Json::value_t::boolean:
      return node.types & st::kBoolean;
    case Json::value_t::string: {
      if (!(node.types & st::kString)) return false;
      const std::string& text = value.get_ref<const std::string&>();
      const auto n = static_cast<int64_t>(CodePoints(text));
      if (n < node.min_length || (node.max_length >= 0 && n > node.max_length)) return false;
      return node.string_dfa < 0 ||
             graph.dfas[static_cast<size_t>(node.string_dfa)].Matches(st::DecodeUtf8(text));
    }
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: {
      const bool integral = value.type() != Json::value_t::number_float;
      if (!(node.types & st::kNumber) && !(integral && (node.types & st::kInteger))) return false;
      const double x = value.get<double>();
      if (node.has_min && (node.exclusive_min ? x <= node.minimum : x < node.minimum)) return false;
      if (node.has_max && (node.exclusive_max ? x >= node.maximum : x > node.maximum)) return false;
      return true;
    }
    case Json::value_t::array: {
      if (!(node.types & st::kArray)) return false;
      const auto n = static_cast<int64_t>(value.size());
      if (n < node.min_items || (node.max_items >= 0 && n > node.max_items)) return false;
      for (int64_t i = 0; i < n; ++i) {
        if (!Matches(graph, node.ItemNode(i), value[static_cast<size_t>(i)], depth + 1)) {
          return false;
        }
      }
      return true;
    }
    case Json::value_t::object: {
      if (!(node.types & st::kObject)) return false;
      const auto count = static_cast<int64_t>(value.size());
      if (count < node.min_properties) return false;
      if (node.max_properties >= 0 && count > node.max_properties) return false;
      for (const auto& p : node.properties) {
        const std::string key = Json::parse("\"" + p.key + "\"").get<std::string>();
        if (p.required && !value.contains(key)) return false;
      }
      for (const auto& [key, item] : value.items()) {
        const std::string canonical = st::CanonicalJsonString(key);
        int32_t target = node.additional;
        for (const auto& p : node.properties) {
          if (p.key == canonical) target = p.node;
        }
        if (target < 0 || !Matches(graph, target, item, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// Every id of the vocabulary: its mask bit equals whether Accept takes it.
void CheckWholeMask(st::Matcher& m, const st::TokenSet& mask, const FuzzVocab& v,
                    std::string_view accepted) {
  for (size_t id = 0; id < v.size; ++id) {
    const bool ok = m.Accept(static_cast<int32_t>(id));
    if (ok) m.Rollback(1);
    K3_CHECK(ok == mask.Test(id)) << "mask bit " << mask.Test(id) << " but Accept " << ok
                                  << " for id " << id << " after '" << Escaped(accepted) << "'";
  }
  K3_CHECK(!mask.Test(static_cast<size_t>(v.other)) && !mask.Test(static_cast<size_t>(v.unused)));
}

// Lone surrogate escapes (\ud800) are JSON by RFC 8259's grammar but nlohmann rejects them.
bool HasSurrogateEscape(std::string_view text) {
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    if (text[i] == '\\' && text[i + 1] == 'u' && (text[i + 2] == 'd' || text[i + 2] == 'D')) {
      return true;
    }
  }
  return false;
}

void CheckCompletion(const st::Matcher& m, const std::string& accepted) {
  if (m.Finished()) return;
  st::Matcher walk = m;
  K3_CHECK(!walk.Completion().empty()) << "no way to finish after '" << Escaped(accepted) << "'";
  const size_t tokens = walk.TokensToSpell(walk.Completion());
  st::TokenSet mask;
  std::string followed;
  for (size_t step = 0; step < tokens && !walk.Finished(); ++step) {
    walk.FillCompletionMask(&mask);
    K3_CHECK(mask.Count() == 1) << "completion mask of " << mask.Count() << " tokens after '"
                                << Escaped(accepted) << "' + '" << Escaped(followed) << "'";
    int32_t token = 0;
    while (!mask.Test(static_cast<size_t>(token))) ++token;
    K3_CHECK(walk.Accept(token)) << "completion token refused after '" << Escaped(accepted) << "'";
    if (Vocab().vocab->IsOrdinary(token)) followed += Vocab().vocab->Bytes(token);
  }
  K3_CHECK(walk.Finished()) << "following the completion did not end after '" << Escaped(accepted)
                            << "'";
}

void RunInstance(const std::shared_ptr<const st::Grammar>& grammar, std::string_view instance,
                 Rng& rng) {
  const FuzzVocab& v = Vocab();
  st::Matcher m(grammar);
  st::TokenSet mask(v.size), again(v.size);
  std::string accepted;
  int whole_checks = 0;
  size_t pos = 0;
  for (size_t step = 0; pos < instance.size(); ++step) {
    m.FillMask(&mask);
    K3_CHECK(!mask.Empty()) << "dead end after '" << Escaped(accepted) << "'";
    if ((step < 3 || rng.OneIn(16)) && whole_checks < 24) {
      ++whole_checks;
      CheckWholeMask(m, mask, v, accepted);
    }
    const int32_t token = NextToken(instance.substr(pos), rng);
    const std::string_view bytes = v.vocab->Bytes(token);
    pos += bytes.size();
    const bool ok = m.Accept(token);
    K3_CHECK(ok == mask.Test(static_cast<size_t>(token)))
        << "mask bit " << mask.Test(static_cast<size_t>(token)) << " but Accept " << ok << " for '"
        << Escaped(bytes) << "' after '" << Escaped(accepted) << "'";
    if (!ok) continue;  // skip it, go on with the next bytes
    if (rng.OneIn(4)) CheckCompletion(m, accepted + std::string(bytes));
    if (rng.OneIn(8)) {
      const size_t before = m.accepted_tokens();
      m.Rollback(1);
      K3_CHECK(m.accepted_tokens() + 1 == before);
      m.FillMask(&again);
      K3_CHECK(std::equal(mask.words().begin(), mask.words().end(), again.words().begin()))
          << "mask changed by Rollback(1) after '" << Escaped(accepted) << "'";
      K3_CHECK(m.Accept(token)) << "Accept refused after Rollback(1)";
    }
    accepted += bytes;
  }
  m.FillMask(&mask);
  const bool can_end = m.CanEnd();
  K3_CHECK(can_end == mask.Test(static_cast<size_t>(v.end)))
      << "CanEnd " << can_end << " but end bit " << mask.Test(static_cast<size_t>(v.end))
      << " after '" << Escaped(accepted) << "'";
  K3_CHECK(can_end || !mask.Empty()) << "dead end after '" << Escaped(accepted) << "'";
  CheckWholeMask(m, mask, v, accepted);
  CheckCompletion(m, accepted);

  st::Matcher fresh(grammar);
  K3_CHECK(fresh.AcceptBytes(accepted)) << "AcceptBytes refused '" << Escaped(accepted) << "'";
  K3_CHECK(fresh.CanEnd() == can_end);
  if (!can_end) return;

  K3_CHECK(m.Accept(v.end));
  K3_CHECK(m.Finished() && !m.CanEnd());
  m.FillMask(&mask);
  K3_CHECK(mask.Empty()) << "tokens allowed after the end";
  m.Rollback(1);
  K3_CHECK(!m.Finished() && m.CanEnd());

  Json value;
  try {
    value = Json::parse(accepted);
  } catch (const Json::out_of_range&) {
    return;  // a number beyond a double (1E400): JSON, and allowed (3 exponent digits, unbounded)
  } catch (const Json::parse_error&) {
    if (!HasSurrogateEscape(accepted)) std::fprintf(stderr, "FULL: %s\n", accepted.c_str());
    K3_CHECK(HasSurrogateEscape(accepted)) << "accepted text is not JSON: " << Escaped(accepted);
    return;
  }
  K3_CHECK(Matches(grammar->graph(), grammar->graph().root, value))
      << "accepted text does not match the schema: " << Escaped(accepted);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find('\0');
  const std::string_view schema_text = input.substr(0, cut);
  const std::string_view instance =
      cut == std::string_view::npos ? std::string_view() : input.substr(cut + 1);
  const Json schema = Json::parse(schema_text, nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded()) return 0;
  auto graph = st::CompileSchema(schema);
  if (!graph.ok()) return 0;
  const FuzzVocab& v = Vocab();
  std::shared_ptr<const st::Grammar> grammar = st::JsonGrammar(v.vocab, std::move(*graph), {v.end});
  Rng rng{k3::fuzz::InputHash(data, size)};
  RunInstance(grammar, instance, rng);
  return 0;
}
