#include "text/tokenizer/tokenizer.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "base/utf8.h"
#include "text/tokenizer/bpe.h"
#include "text/tokenizer/moonshot_chunking.h"

namespace k3::text {
namespace {

using base::Result;
using base::Status;

constexpr size_t kNumKimiReservedSpecials = 256;

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::NotFound("cannot open " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (!in.good() && !in.eof()) return base::DataLoss("cannot read " + path);
  return contents.str();
}

// Names of the 256 ids after the ranks, from tokenizer_config.json's added_tokens_decoder.
Result<std::vector<SpecialToken>> KimiSpecials(std::string_view config_text, TokenId first_id) {
  nlohmann::json config = nlohmann::json::parse(config_text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object())
    return base::DataLoss("tokenizer_config.json is not a JSON object");
  std::vector<SpecialToken> specials;
  const nlohmann::json* added = nullptr;
  if (auto it = config.find("added_tokens_decoder"); it != config.end() && it->is_object())
    added = &*it;
  for (TokenId id = first_id; id < first_id + kNumKimiReservedSpecials; ++id) {
    SpecialToken token{"<|reserved_token_" + std::to_string(id) + "|>", id, true};
    if (added) {
      if (auto entry = added->find(std::to_string(id)); entry != added->end()) {
        auto content = entry->find("content");
        if (content == entry->end() || !content->is_string() || content->get<std::string>().empty())
          return base::DataLoss("tokenizer_config.json: added token " + std::to_string(id) +
                                " has no content string");
        token.name = content->get<std::string>();
        auto special = entry->find("special");
        token.special = special == entry->end() || !special->is_boolean() || special->get<bool>();
      }
    }
    specials.push_back(std::move(token));
  }
  std::unordered_set<std::string_view> names;
  for (const auto& token : specials) {
    if (!names.insert(token.name).second)
      return base::DataLoss("tokenizer_config.json: special token name '" + token.name +
                            "' is used twice");
  }
  return specials;
}

}  // namespace

Tokenizer::Tokenizer(BpeRanks ranks, SpecialTokens specials, TokenizerOptions options)
    : ranks_(std::move(ranks)), specials_(std::move(specials)), options_(options) {
  vocab_size_ = ranks_.size();
  for (const auto& token : specials_.tokens())
    vocab_size_ = std::max<size_t>(vocab_size_, size_t{token.id} + 1);
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromTiktoken(std::string_view ranks_contents,
                                                           std::vector<SpecialToken> specials,
                                                           TokenizerOptions options) {
  K3_ASSIGN_OR_RETURN(BpeRanks ranks, BpeRanks::Parse(ranks_contents));
  std::unordered_set<std::string_view> names;
  std::unordered_set<TokenId> ids;
  for (const auto& token : specials) {
    if (token.name.empty() || !names.insert(token.name).second || !ids.insert(token.id).second)
      return base::InvalidArgument("special token '" + token.name + "' (id " +
                                   std::to_string(token.id) + ") is empty or duplicated");
    if (ranks.Has(token.id))
      return base::InvalidArgument("special token id " + std::to_string(token.id) +
                                   " collides with a BPE rank");
  }
  return std::unique_ptr<Tokenizer>(
      new Tokenizer(std::move(ranks), SpecialTokens(std::move(specials)), options));
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromKimiDirectory(const std::string& dir,
                                                                TokenizerOptions options) {
  K3_ASSIGN_OR_RETURN(std::string ranks_text, ReadFile(dir + "/tiktoken.model"));
  std::string config_text;
  if (auto config = ReadFile(dir + "/tokenizer_config.json"); config.ok()) {
    config_text = std::move(*config);
  }
  return FromKimiFiles(ranks_text, config_text, options);
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::FromKimiFiles(std::string_view ranks_contents,
                                                            std::string_view config_json,
                                                            TokenizerOptions options) {
  K3_ASSIGN_OR_RETURN(BpeRanks ranks, BpeRanks::Parse(ranks_contents));
  // tokenization_kimi.py numbers the specials from len(mergeable_ranks).
  auto first_special = static_cast<TokenId>(ranks.num_tokens());
  if (first_special != ranks.size())
    return base::DataLoss("tiktoken ranks have gaps; Kimi numbers its specials after the ranks");
  K3_ASSIGN_OR_RETURN(auto specials,
                      KimiSpecials(config_json.empty() ? "{}" : config_json, first_special));
  return std::unique_ptr<Tokenizer>(
      new Tokenizer(std::move(ranks), SpecialTokens(std::move(specials)), options));
}

// A software pipeline: each piece is hashed and its index and cache slots are prefetched
// kLookahead pieces before it is encoded, so the memory latencies of consecutive pieces overlap
// instead of adding up (the vocabulary index is megabytes; one miss costs about a piece's work).
void Tokenizer::EncodeOrdinary(std::string_view text, std::vector<TokenId>* out,
                               PieceCache* cache) const {
  constexpr size_t kLookahead = 8;  // a power of two
  struct Pending {
    std::string_view piece;
    PreparedPiece prep;
  };
  Pending ring[kLookahead];
  size_t oldest = 0, queued = 0;
  ForEachPiece(options_.pretokenizer, text, [&](size_t begin, size_t end) {
    if (queued == kLookahead) {
      FinishBytePairEncode(ranks_, ring[oldest].piece, ring[oldest].prep, out, cache);
      oldest = (oldest + 1) % kLookahead;
      --queued;
    }
    const std::string_view piece = text.substr(begin, end - begin);
    ring[(oldest + queued++) % kLookahead] = {piece, PrepareBytePairEncode(ranks_, piece, cache)};
  });
  for (; queued > 0; --queued, oldest = (oldest + 1) % kLookahead)
    FinishBytePairEncode(ranks_, ring[oldest].piece, ring[oldest].prep, out, cache);
}

void Tokenizer::EncodeChunk(std::string_view chunk, SpecialMode specials, std::vector<TokenId>* out,
                            PieceCache* cache) const {
  if (specials == SpecialMode::kNone) {
    EncodeOrdinary(chunk, out, cache);
    return;
  }
  size_t pos = 0;
  while (auto match = specials_.FindNext(chunk, pos)) {
    EncodeOrdinary(chunk.substr(pos, match->begin - pos), out, cache);
    out->push_back(match->id);
    pos = match->end;
  }
  EncodeOrdinary(chunk.substr(pos), out, cache);
}

std::vector<size_t> Tokenizer::ChunkEnds(std::string_view text) const {
  if (options_.moonshot_chunking) return MoonshotChunkEnds(text);
  return {text.size()};
}

Status Tokenizer::Encode(std::string_view text, const EncodeOptions& options,
                         std::vector<TokenId>* out) const {
  if (size_t bad = base::FindInvalidUtf8(text); bad != text.size())
    return base::InvalidArgument("text is not valid UTF-8 (at byte " + std::to_string(bad) + ")");
  if (options.pool && options.pool->parallelism() > 1) {
    EncodeParallel(text, options.specials, options.pool, out);
  } else {
    EncodeSequential(text, options.specials, out);
  }
  return Status::Ok();
}

void Tokenizer::EncodeSequential(std::string_view text, SpecialMode specials,
                                 std::vector<TokenId>* out) const {
  PieceCache cache(text.size(), ranks_);
  out->reserve(out->size() + text.size() / 3);  // ~3.5 bytes per token in mixed text
  size_t begin = 0;
  for (size_t end : ChunkEnds(text)) {
    EncodeChunk(text.substr(begin, end - begin), specials, out, &cache);
    begin = end;
  }
}

Result<std::vector<TokenId>> Tokenizer::Encode(std::string_view text, SpecialMode specials) const {
  std::vector<TokenId> ids;
  K3_RETURN_IF_ERROR(Encode(text, EncodeOptions{specials, nullptr}, &ids));
  return ids;
}

Result<std::vector<TokenId>> Tokenizer::EncodeSegments(std::span<const Segment> segments) const {
  std::vector<TokenId> ids;
  for (const Segment& segment : segments) {
    SpecialMode mode = segment.allow_special ? SpecialMode::kAll : SpecialMode::kNone;
    K3_RETURN_IF_ERROR(Encode(segment.text, EncodeOptions{mode, nullptr}, &ids));
  }
  return ids;
}

Result<std::vector<TokenId>> Tokenizer::EncodeSegmentsJoined(
    std::span<const Segment> segments) const {
  std::vector<TokenId> ids;
  std::string ordinary;  // the run since the last recognised special token
  auto flush = [&]() -> Status {
    K3_RETURN_IF_ERROR(Encode(ordinary, EncodeOptions{SpecialMode::kNone, nullptr}, &ids));
    ordinary.clear();
    return Status::Ok();
  };
  for (const Segment& segment : segments) {
    size_t pos = 0;
    while (segment.allow_special) {
      const std::optional<SpecialMatch> match = specials_.FindNext(segment.text, pos);
      if (!match) break;
      ordinary.append(segment.text.substr(pos, match->begin - pos));
      K3_RETURN_IF_ERROR(flush());
      ids.push_back(match->id);
      pos = match->end;
    }
    ordinary.append(segment.text.substr(pos));
  }
  K3_RETURN_IF_ERROR(flush());
  return ids;
}

Result<std::string_view> Tokenizer::TokenBytes(TokenId id) const {
  if (ranks_.Has(id)) return ranks_.Bytes(id);
  if (const std::string* name = specials_.NameOf(id)) return std::string_view(*name);
  return base::OutOfRange("token id " + std::to_string(id) + " is not in the vocabulary (size " +
                          std::to_string(vocab_size_) + ")");
}

Result<std::string> Tokenizer::DecodeBytes(std::span<const TokenId> ids) const {
  std::string bytes;
  bytes.reserve(ids.size() * 4);
  for (TokenId id : ids) {
    K3_ASSIGN_OR_RETURN(std::string_view token, TokenBytes(id));
    bytes.append(token);
  }
  return bytes;
}

Result<std::string> Tokenizer::Decode(std::span<const TokenId> ids) const {
  K3_ASSIGN_OR_RETURN(std::string bytes, DecodeBytes(ids));
  if (base::IsValidUtf8(bytes)) return bytes;
  return base::Utf8Replace(bytes);
}

}  // namespace k3::text
