// tiktoken_ranks_fuzzer: arbitrary bytes as a tiktoken ranks file, then as a special-token table.
// Input: one flags byte, then the ranks body, optionally followed by "\n--\n" and special-token
// names, one per line. Flags: bit 0 prepends lines for the 256 single bytes at ranks 0..255 (random
// bodies almost never contain all 256, which Parse requires); bits 1-2 pick the pretokenizer;
// bit 3 turns Moonshot chunking on; bit 4 derives special ids from the names (so they may collide
// with ranks or each other) instead of numbering them above the ranks.
// Checks:
//  - BpeRanks::Parse never crashes; failures are DATA_LOSS. An OK result is self-consistent:
//    every rank's Bytes() Find()s back to it, all 256 bytes have ranks, num_tokens() counts the
//    ranks, and MergedRank/BytePairRank find exactly the tokens made of two tokens.
//  - Tokenizer::FromTiktoken with those names succeeds exactly when names are non-empty and
//    unique and ids unique and not ranks (tokenizer_config.json is only read from a directory, so
//    its names reach the tokenizer this way instead). Each special round-trips through
//    TokenBytes/IdOf/Encode, and the input (when valid UTF-8) round-trips through Encode/Decode
//    with this small, arbitrary vocabulary.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"
#include "fuzz_common.h"
#include "text/tokenizer/bpe_ranks.h"

namespace k3::fuzz {
namespace {

using text::BpeRanks;
using text::kNoRank;
using text::SpecialMode;
using text::SpecialToken;
using text::TokenId;

// "<base64 of byte b> b\n" for every byte: a minimal valid ranks file.
const std::string& SingleByteRanks() {
  static const std::string lines = [] {
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (int b = 0; b < 256; ++b) {
      out += alphabet[b >> 2];
      out += alphabet[(b & 3) << 4];
      out += "== " + std::to_string(b) + "\n";
    }
    return out;
  }();
  return lines;
}

void CheckRanks(const BpeRanks& ranks) {
  size_t tokens = 0;
  for (TokenId rank = 0; rank < ranks.size(); ++rank) {
    if (!ranks.Has(rank)) continue;
    ++tokens;
    std::string_view bytes = ranks.Bytes(rank);
    K3_CHECK(ranks.Find(bytes) == rank)
        << "rank " << rank << " \"" << Escaped(bytes) << "\" finds " << ranks.Find(bytes);
    K3_CHECK(bytes.size() <= ranks.max_token_bytes());
    // Every split into two tokens must be in the pair table.
    for (size_t split = 1; split < bytes.size(); ++split) {
      TokenId left = ranks.Find(bytes.substr(0, split));
      TokenId right = ranks.Find(bytes.substr(split));
      if (left != kNoRank && right != kNoRank)
        K3_CHECK(ranks.MergedRank(left, right) == rank)
            << "MergedRank(" << left << ", " << right << ") != " << rank;
    }
  }
  K3_CHECK(tokens == ranks.num_tokens())
      << tokens << " ranks but num_tokens " << ranks.num_tokens();
  for (int b = 0; b < 256; ++b) {
    TokenId rank = ranks.ByteRank(static_cast<uint8_t>(b));
    K3_CHECK(ranks.Has(rank) && ranks.Bytes(rank) == std::string(1, static_cast<char>(b)));
  }
  // The 256x256 byte-pair table holds exactly the two-byte tokens: each one at its place (checked
  // here), and as many entries as there are such tokens (so no stray ones).
  size_t two_byte_tokens = 0;
  for (TokenId rank = 0; rank < ranks.size(); ++rank) {
    if (!ranks.Has(rank) || ranks.Bytes(rank).size() != 2) continue;
    ++two_byte_tokens;
    auto bytes = ranks.Bytes(rank);
    K3_CHECK(ranks.BytePairRank(uint8_t(bytes[0]), uint8_t(bytes[1])) == rank)
        << "BytePairRank of \"" << Escaped(bytes) << "\" is not " << rank;
  }
  size_t table_entries = 0;
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) table_entries += ranks.BytePairRank(a, b) != kNoRank;
  }
  K3_CHECK(table_entries == two_byte_tokens)
      << table_entries << " byte-pair entries for " << two_byte_tokens << " two-byte tokens";
}

void CheckRoundTrip(const text::Tokenizer& tok, std::string_view str) {
  if (!base::IsValidUtf8(str)) return;
  for (SpecialMode mode : {SpecialMode::kAll, SpecialMode::kNone}) {
    auto ids = tok.Encode(str, mode);
    K3_CHECK(ids.ok()) << ids.status().ToString();
    if (mode == SpecialMode::kNone) {
      for (TokenId id : *ids) K3_CHECK(tok.ranks().Has(id)) << "kNone produced id " << id;
    }
    auto decoded = tok.Decode(*ids);
    K3_CHECK(decoded.ok() && *decoded == str) << "round trip of \"" << Escaped(str) << "\" gave \""
                                              << Escaped(decoded.ok() ? *decoded : "") << "\"";
  }
}

void CheckSpecials(std::string_view ranks_text, const BpeRanks& ranks, std::string_view names_text,
                   uint8_t flags, std::string_view whole) {
  std::vector<SpecialToken> specials;
  std::set<std::string> names;
  std::set<TokenId> ids;
  bool valid = true;
  size_t pos = 0;
  while (pos < names_text.size() && specials.size() < 64) {
    size_t eol = std::min(names_text.find('\n', pos), names_text.size());
    std::string name(names_text.substr(pos, eol - pos));
    pos = eol + 1;
    TokenId id = static_cast<TokenId>(ranks.size() + specials.size());
    if (flags & 16) id = static_cast<TokenId>(name.size() + (name.empty() ? 0 : uint8_t(name[0])));
    valid = valid && !name.empty() && names.insert(name).second && ids.insert(id).second &&
            !ranks.Has(id);
    specials.push_back(SpecialToken{name, id, (specials.size() & 1) == 0});
  }
  text::TokenizerOptions options;
  switch ((flags >> 1) & 3) {
    case 1:
      options.pretokenizer = text::PretokenizerKind::kO200k;
      break;
    case 2:
      options.pretokenizer = text::PretokenizerKind::kCl100k;
      break;
    default:
      options.pretokenizer = text::PretokenizerKind::kKimi;
      break;
  }
  options.moonshot_chunking = (flags & 8) != 0;
  auto tok = text::Tokenizer::FromTiktoken(ranks_text, specials, options);
  K3_CHECK(tok.ok() == valid) << "FromTiktoken: " << tok.status().ToString() << ", expected "
                              << (valid ? "OK" : "an error");
  if (!tok.ok()) {
    K3_CHECK(tok.status().code() == base::StatusCode::kInvalidArgument) << tok.status().ToString();
    return;
  }
  size_t vocab_size = ranks.size();
  for (const SpecialToken& special : specials)
    vocab_size = std::max(vocab_size, size_t{special.id} + 1);
  K3_CHECK((*tok)->vocab_size() == vocab_size) << (*tok)->vocab_size() << " != " << vocab_size;
  for (const SpecialToken& special : specials) {
    auto bytes = (*tok)->TokenBytes(special.id);
    K3_CHECK(bytes.ok() && *bytes == special.name);
    K3_CHECK((*tok)->specials().IdOf(special.name) == special.id);
    if (!base::IsValidUtf8(special.name)) continue;
    // Alone in the text, a name is its own leftmost-longest match.
    auto encoded = (*tok)->Encode(special.name, SpecialMode::kAll);
    K3_CHECK(encoded.ok() && *encoded == std::vector<TokenId>{special.id})
        << "\"" << Escaped(special.name) << "\" does not encode to its id " << special.id;
  }
  CheckRoundTrip(**tok, names_text);
  CheckRoundTrip(**tok, whole);
}

}  // namespace
}  // namespace k3::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace k3::fuzz;
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string_view names;
  const bool has_names = body.find("\n--\n") != std::string_view::npos;
  if (has_names) {
    size_t marker = body.find("\n--\n");
    names = body.substr(marker + 4);
    body = body.substr(0, marker);
  }
  std::string contents = (flags & 1) ? SingleByteRanks() + std::string(body) : std::string(body);
  auto ranks = BpeRanks::Parse(contents);
  if (!ranks.ok()) {
    K3_CHECK(ranks.status().code() == k3::base::StatusCode::kDataLoss) << ranks.status().ToString();
    return 0;
  }
  CheckRanks(*ranks);
  if (has_names) {
    std::string_view after_flags(reinterpret_cast<const char*>(data + 1), size - 1);
    CheckSpecials(contents, *ranks, names, flags, after_flags);
  }
  return 0;
}
