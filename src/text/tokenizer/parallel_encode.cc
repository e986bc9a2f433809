// Tokenizer::EncodeParallel: long texts are cut into units that encode independently to exactly
// the ids of the whole: Moonshot chunk ends and special tokens are cuts already, and long ordinary
// runs are cut only at positions IsSafeSplitPoint proves to be piece boundaries. Units are encoded
// on the pool, then concatenated in order. Extra memory: one copy of the ids.
#include <algorithm>

#include "text/tokenizer/tokenizer.h"

namespace k3::text {
namespace {

constexpr size_t kMinParallelBytes = 256 * 1024;
constexpr size_t kMinUnitBytes = 32 * 1024;
constexpr size_t kMaxSafePointSearch = 64 * 1024;

// A unit of work: ordinary text [begin, end), or a lone special id.
struct Unit {
  size_t begin;
  size_t end;
  TokenId special;  // kNoRank for ordinary text
};

}  // namespace

void Tokenizer::EncodeParallel(std::string_view text, SpecialMode specials, base::ThreadPool* pool,
                               std::vector<TokenId>* out) const {
  if (text.size() < kMinParallelBytes) {
    EncodeSequential(text, specials, out);
    return;
  }
  const size_t target = std::max(kMinUnitBytes, text.size() / (pool->parallelism() * 8));
  std::vector<Unit> units;
  auto add_ordinary = [&](size_t begin, size_t end) {
    while (end - begin > target) {
      size_t cut = 0;
      size_t limit = std::min(end, begin + target + kMaxSafePointSearch);
      for (size_t pos = begin + target; pos < limit; ++pos) {
        if (IsSafeSplitPoint(options_.pretokenizer, text, pos)) {
          cut = pos;
          break;
        }
      }
      if (!cut) break;
      units.push_back({begin, cut, kNoRank});
      begin = cut;
    }
    if (end > begin) units.push_back({begin, end, kNoRank});
  };
  size_t chunk_begin = 0;
  for (size_t chunk_end : ChunkEnds(text)) {
    std::string_view chunk = text.substr(0, chunk_end);  // offsets stay absolute
    size_t pos = chunk_begin;
    if (specials == SpecialMode::kAll) {
      while (auto match = specials_.FindNext(chunk, pos)) {
        add_ordinary(pos, match->begin);
        units.push_back({match->begin, match->end, match->id});
        pos = match->end;
      }
    }
    add_ordinary(pos, chunk_end);
    chunk_begin = chunk_end;
  }
  std::vector<std::vector<TokenId>> results(units.size());
  pool->ParallelFor(units.size(), [&](size_t i) {
    const Unit& unit = units[i];
    if (unit.special != kNoRank) {
      results[i].push_back(unit.special);
    } else {
      results[i].reserve((unit.end - unit.begin) / 3);
      PieceCache cache(unit.end - unit.begin);
      EncodeOrdinary(text.substr(unit.begin, unit.end - unit.begin), &results[i], &cache);
    }
  });
  size_t total = out->size();
  for (const auto& r : results) total += r.size();
  out->reserve(total);
  for (const auto& r : results) out->insert(out->end(), r.begin(), r.end());
}

}  // namespace k3::text
