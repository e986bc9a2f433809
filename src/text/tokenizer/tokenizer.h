// Tokenizer: a tiktoken-format BPE tokenizer (Kimi K2/K2.5/K3/Kimi-Linear, and OpenAI's cl100k_base
// and o200k_base), token-identical to tiktoken. Text in, ids out, and back.
// Immutable after loading; every method is const and thread-safe.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/thread_pool.h"
#include "text/tokenizer/bpe_ranks.h"
#include "text/tokenizer/piece_cache.h"
#include "text/tokenizer/pretokenizer.h"
#include "text/tokenizer/special_tokens.h"

namespace k3::text {

// Whether special-token strings in the text become their control ids.
enum class SpecialMode {
  kAll,   // every special name in the text is its id (Moonshot's default; prompt_tokens parity)
  kNone,  // special names are ordinary text (for untrusted user content)
};

// One piece of a rendered prompt: template control text (allow_special) or user content (not).
struct Segment {
  std::string_view text;
  bool allow_special;
};

struct TokenizerOptions {
  PretokenizerKind pretokenizer = PretokenizerKind::kKimi;
  // Apply tokenization_kimi.py's 400K-char / 25K-run chunking (Kimi only; changes ids at cuts).
  bool moonshot_chunking = true;
};

struct EncodeOptions {
  SpecialMode specials = SpecialMode::kAll;
  // When set, long texts are split at boundaries that cannot change the ids and encoded on all of
  // the pool's threads. Results are identical to the single-threaded path.
  base::ThreadPool* pool = nullptr;
};

class Tokenizer {
 public:
  // Loads a Moonshot checkpoint folder: tiktoken.model plus tokenizer_config.json (whose
  // added_tokens_decoder names the 256 reserved ids above the ranks; unnamed ones are
  // "<|reserved_token_{id}|>", as tokenization_kimi.py does).
  // `options` default to the Kimi pattern with Moonshot's chunking.
  static base::Result<std::unique_ptr<Tokenizer>> FromKimiDirectory(const std::string& dir,
                                                                    TokenizerOptions options = {});
  // The same from the two files' contents (an empty config names no specials).
  static base::Result<std::unique_ptr<Tokenizer>> FromKimiFiles(std::string_view ranks_contents,
                                                                std::string_view config_json,
                                                                TokenizerOptions options = {});
  // Builds from a ranks file's contents and an explicit special-token table.
  static base::Result<std::unique_ptr<Tokenizer>> FromTiktoken(std::string_view ranks_contents,
                                                               std::vector<SpecialToken> specials,
                                                               TokenizerOptions options);

  // Ranks plus special ids (163,840 for Kimi).
  size_t vocab_size() const { return vocab_size_; }
  const BpeRanks& ranks() const { return ranks_; }
  const SpecialTokens& specials() const { return specials_; }
  const TokenizerOptions& options() const { return options_; }

  // Appends the ids of `text` to out. Fails (appending nothing) on malformed UTF-8.
  base::Status Encode(std::string_view text, const EncodeOptions& options,
                      std::vector<TokenId>* out) const;
  base::Result<std::vector<TokenId>> Encode(std::string_view text,
                                            SpecialMode specials = SpecialMode::kAll) const;
  // Encodes each segment on its own with its own special mode, concatenated (K3's chat renderer
  // tokenizes its pieces this way).
  base::Result<std::vector<TokenId>> EncodeSegments(std::span<const Segment> segments) const;
  // Encodes the concatenated segments as Encode(kAll) would, except that special-token strings
  // are recognised only inside allow_special segments: ordinary text runs across segment
  // boundaries are encoded as one (so ids equal the whole text's wherever client text holds no
  // special-token string), and a special-token string in a segment without allow_special is
  // ordinary text (no control-token injection). For renders the reference tokenizes whole.
  base::Result<std::vector<TokenId>> EncodeSegmentsJoined(std::span<const Segment> segments) const;

  // The bytes of one id (a special id gives its name). OUT_OF_RANGE for an id we do not know.
  base::Result<std::string_view> TokenBytes(TokenId id) const;
  // Concatenated token bytes (may end inside a UTF-8 character).
  base::Result<std::string> DecodeBytes(std::span<const TokenId> ids) const;
  // Text with invalid UTF-8 replaced by U+FFFD, exactly as tiktoken's decode(errors="replace").
  base::Result<std::string> Decode(std::span<const TokenId> ids) const;

 private:
  Tokenizer(BpeRanks ranks, SpecialTokens specials, TokenizerOptions options);
  // Encodes text that contains no special tokens to recognise.
  void EncodeOrdinary(std::string_view text, std::vector<TokenId>* out, PieceCache* cache) const;
  // Encodes one chunk (after Moonshot chunking) in the given mode.
  void EncodeChunk(std::string_view chunk, SpecialMode specials, std::vector<TokenId>* out,
                   PieceCache* cache) const;
  // The chunks text is cut into before encoding; each is encoded independently.
  std::vector<size_t> ChunkEnds(std::string_view text) const;
  void EncodeSequential(std::string_view text, SpecialMode specials,
                        std::vector<TokenId>* out) const;
  void EncodeParallel(std::string_view text, SpecialMode specials, base::ThreadPool* pool,
                      std::vector<TokenId>* out) const;

  BpeRanks ranks_;
  SpecialTokens specials_;
  TokenizerOptions options_;
  size_t vocab_size_;
};

}  // namespace k3::text
