// Tokenizer::EncodeParallel: long texts are cut into units that encode independently to exactly
// the ids of the whole. Moonshot chunk ends are cuts already; inside a chunk, units end only at
// positions IsSafeSplitPoint proves to be piece boundaries. A special-token string cannot straddle
// such a position when no special name contains ' ', '\r' or '\n' (true for every Kimi and OpenAI
// table), so each unit also finds its own specials; otherwise chunks are not cut further. Units
// are encoded on the pool, then concatenated in order. Extra memory: one copy of the ids.
#include <algorithm>

#include "text/tokenizer/tokenizer.h"

namespace k3::text {
namespace {

constexpr size_t kMinParallelBytes = 256 * 1024;
constexpr size_t kMinUnitBytes = 32 * 1024;
constexpr size_t kMaxSafePointSearch = 64 * 1024;

struct Unit {
  size_t begin;
  size_t end;
};

}  // namespace

void Tokenizer::EncodeParallel(std::string_view text, SpecialMode specials, base::ThreadPool* pool,
                               std::vector<TokenId>* out) const {
  if (text.size() < kMinParallelBytes) {
    EncodeSequential(text, specials, out);
    return;
  }
  const size_t target = std::max(kMinUnitBytes, text.size() / (pool->parallelism() * 8));
  const bool cut_inside_chunks =
      specials == SpecialMode::kNone || !specials_.AnyNameContainsAnyOf(" \r\n");
  std::vector<Unit> units;
  size_t begin = 0;
  for (size_t chunk_end : ChunkEnds(text)) {
    while (cut_inside_chunks && chunk_end - begin > target) {
      size_t cut = 0;
      size_t limit = std::min(chunk_end, begin + target + kMaxSafePointSearch);
      for (size_t pos = begin + target; pos < limit && !cut; ++pos) {
        if (IsSafeSplitPoint(options_.pretokenizer, text, pos)) cut = pos;
      }
      if (!cut) break;
      units.push_back({begin, cut});
      begin = cut;
    }
    units.push_back({begin, chunk_end});
    begin = chunk_end;
  }
  std::vector<std::vector<TokenId>> results(units.size());
  pool->ParallelFor(units.size(), [&](size_t i) {
    std::string_view unit = text.substr(units[i].begin, units[i].end - units[i].begin);
    results[i].reserve(unit.size() / 3);
    PieceCache cache(unit.size(), ranks_);
    EncodeChunk(unit, specials, &results[i], &cache);
  });
  size_t total = out->size();
  for (const auto& r : results) total += r.size();
  out->reserve(total);
  for (const auto& r : results) out->insert(out->end(), r.begin(), r.end());
}

}  // namespace k3::text
